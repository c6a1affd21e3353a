"""Tab completion in the REPL: slash commands (extension commands
included), ``@paths`` and ``/model`` names.

readline calls the completer with the word under the cursor (words are split
at whitespace only, so ``/ex``, ``@src/ca`` and ``mock/ant`` are one word);
:func:`completions` gives every candidate for it, each ending where typing
goes on: a space after a command, a model or a file, a ``/`` after a
directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["completions", "model_names", "path_completions"]

#: the most candidates a path completion lists (a huge directory stays quick)
MAX_PATHS = 500


def completions(
    line: str,
    begidx: int,
    word: str,
    *,
    commands: Iterable[str],
    models: Iterable[str] = (),
    cwd: str | None = None,
) -> list[str]:
    """The candidates for ``word``, which starts at ``begidx`` of ``line``:
    a command name at the start of the line (else an absolute path there: a
    dragged file), a model after ``/model``, a path after ``@``."""
    before = line[:begidx].strip()
    if not before and word.startswith("/") and not word.startswith("//"):
        names = sorted({"/" + c + " " for c in commands if ("/" + c).startswith(word)})
        return names or path_completions(word, cwd)
    if before == "/model":
        return sorted({m + " " for m in models if m.startswith(word)})
    if word.startswith("@"):
        return ["@" + p for p in path_completions(word[1:], cwd)]
    return []


def path_completions(prefix: str, cwd: str | None = None) -> list[str]:
    """Paths that start with ``prefix`` (relative to ``cwd``; ``~`` is
    expanded for the look-up and kept as typed): files end with a space,
    directories with ``/``; names starting with ``.`` only when the prefix
    does."""
    head, _, tail = prefix.rpartition("/")
    folder = os.path.expanduser(head + "/" if head or prefix.startswith("/") else ".")
    if not os.path.isabs(folder):
        folder = os.path.join(cwd or os.getcwd(), folder)
    out: list[str] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                name = entry.name
                if not name.startswith(tail) or (name.startswith(".") and not tail.startswith(".")):
                    continue
                shown = (head + "/" if head or prefix.startswith("/") else "") + name
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                out.append(shown.replace(" ", "\\ ") + ("/" if is_dir else " "))
                if len(out) >= MAX_PATHS:
                    break
    except OSError:
        return []
    return sorted(out)


def model_names(config: Config) -> list[str]:
    """``provider/model`` names to offer after ``/model``: the model table,
    the config's ``[models]``, each provider's default model and the
    providers themselves (``/model openai`` takes its default model)."""
    from ..models import BUILTIN_MODELS

    names = {n for n in (*BUILTIN_MODELS, *config.models) if "*" not in n and "/" in n}
    for name, p in config.providers.items():
        names.add(name)
        if p.default_model:
            names.add(f"{name}/{p.default_model}")
    names.add(config.model_spec)
    return sorted(names)
