"""Process-table helpers for the tests that kill process groups."""

from __future__ import annotations

import os
from pathlib import Path


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes whose process group is ``pgid`` (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(d))
    return out
