"""``panto sessions``: list saved sessions.

    panto sessions [--all] [-n N] [--json] [--dir DIR] [-C CWD]

One line per session, newest first: id (a prefix ``--resume`` accepts), when
it was last written, message count, model and first prompt.  Only the
sessions of the current directory unless ``--all``.

``format_sessions`` and ``pick_session`` are reused by ``panto --resume``
without an id.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO

from ..errors import PantoError
from ..sessions import SessionInfo, list_sessions, resolve_session_id

__all__ = ["format_sessions", "main", "pick_session", "short_ids"]

MIN_ID = 8


def short_ids(infos: Sequence[SessionInfo], min_len: int = MIN_ID) -> list[str]:
    """The shortest prefixes (at least ``min_len``) that tell the listed ids apart."""
    ids = [i.id for i in infos]
    n = min_len
    while n < max((len(i) for i in ids), default=0) and len({i[:n] for i in ids}) < len(set(ids)):
        n += 1
    return [i[:n] for i in ids]


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _home(p: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/") and (p == home or p.startswith(home + os.sep)):
        return "~" + p[len(home) :]
    return p


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, width: int) -> str:
    if width <= 1:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


def format_sessions(
    infos: Sequence[SessionInfo],
    *,
    show_cwd: bool = False,
    width: int | None = None,
    numbered: bool = False,
) -> list[str]:
    """Aligned table lines (a header, then one line per session)."""
    if width is None:
        width = shutil.get_terminal_size((120, 24)).columns
    heads = ["ID", "UPDATED", "MSGS", "MODEL"]
    if show_cwd:
        heads.append("DIRECTORY")
    rows = []
    for sid, info in zip(short_ids(infos), infos):
        row = [sid, _when(info.modified), str(info.message_count), str(info.model or "-")]
        if show_cwd:
            row.append(_home(info.cwd))
        rows.append(row)
    if numbered:
        heads.insert(0, "#")
        for n, row in enumerate(rows, 1):
            row.insert(0, str(n))
    widths = [max(len(h), *(len(r[c]) for r in rows)) for c, h in enumerate(heads)]
    right = {heads.index("MSGS")} | ({0} if numbered else set())

    def line(cells: list[str], last: str) -> str:
        parts = [
            c.rjust(widths[k]) if k in right else c.ljust(widths[k]) for k, c in enumerate(cells)
        ]
        left = "  ".join(parts)
        return (left + "  " + _cut(last, width - len(left) - 2)).rstrip()

    out = [line(heads, "FIRST PROMPT")]
    for row, info in zip(rows, infos):
        out.append(line(row, _one_line(info.first_prompt) or "(no prompt)"))
    return out


def pick_session(
    infos: Sequence[SessionInfo],
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    dir: str | os.PathLike[str] | None = None,
) -> Path | None:
    """Show the sessions numbered and read a choice: a number, or an id
    prefix.  Returns None on an empty answer or EOF."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if not infos:
        return None
    show_cwd = len({i.cwd for i in infos}) > 1
    for line in format_sessions(infos, show_cwd=show_cwd, numbered=True):
        print(line, file=stdout)
    while True:
        print("resume which session? [number or id, empty to cancel] ", end="", file=stdout)
        stdout.flush()
        answer = stdin.readline()
        if not answer or not answer.strip():
            return None
        answer = answer.strip()
        if answer.isdigit() and 1 <= int(answer) <= len(infos):
            return infos[int(answer) - 1].path
        matches = [i for i in infos if i.id.startswith(answer.lower())]
        if len(matches) == 1:
            return matches[0].path
        if not matches:
            try:
                return resolve_session_id(answer, dir)
            except PantoError as exc:
                print(f"panto: {exc}", file=stdout)
                continue
        print(
            f"panto: {answer!r} matches {len(matches)} sessions; type more of the id", file=stdout
        )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="panto sessions",
        description="List saved sessions, newest first.  Resume one with "
        "`panto --resume ID` (any unique prefix of the id).",
    )
    p.add_argument(
        "-a", "--all", action="store_true", help="sessions of every directory, not only this one"
    )
    p.add_argument(
        "-n", "--limit", type=int, default=None, metavar="N", help="show at most N sessions"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--dir", default=None, help="the sessions directory (default: panto's)")
    p.add_argument(
        "-C", "--cwd", default=None, help="list the sessions of this directory instead of ."
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(argv) if argv is not None else None)
    cwd = None if args.all else os.path.abspath(args.cwd or os.getcwd())
    try:
        infos = list_sessions(args.dir, cwd)
    except PantoError as exc:
        print(f"panto: {exc}", file=sys.stderr)
        return 1
    if args.limit is not None:
        infos = infos[: max(args.limit, 0)]
    if args.json:
        for i in infos:
            record = {
                "id": i.id,
                "path": str(i.path),
                "cwd": i.cwd,
                "created": i.created,
                "modified": datetime.fromtimestamp(i.modified).astimezone().isoformat(),
                "message_count": i.message_count,
                "first_prompt": i.first_prompt,
                "model": str(i.model) if i.model else None,
            }
            print(json.dumps(record, ensure_ascii=False))
        return 0
    if not infos:
        where = "anywhere" if cwd is None else f"for {_home(cwd)} (--all lists every directory)"
        print(f"no sessions {where}", file=sys.stderr)
        return 0
    show_cwd = cwd is None
    width = shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 200
    try:
        for line in format_sessions(infos, show_cwd=show_cwd, width=width):
            print(line)
    except BrokenPipeError:  # `panto sessions | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
