"""Trusting a test's project directory (docs/security.md): a project's
``.panto/`` applies in full only once trusted, so tests that put config or
extensions there trust it first, the way a user runs ``panto trust``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from panto.policy.trust import set_trust


def trust_project(root: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Path:
    """Record ``root`` (the directory holding ``.panto/``) as trusted in the
    trust store of ``env`` (default: this process's ``XDG_CONFIG_HOME``)."""
    return set_trust(root, True, env)
