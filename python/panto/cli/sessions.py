"""``panto sessions``: list, inspect, export and import saved sessions.

    panto sessions [--all] [-n N] [--json] [--dir DIR | --url URL] [-C CWD]
    panto sessions tree ID [--json]           the session's tree, current leaf marked
    panto sessions export ID [--at ENTRY]     the session as JSONL on stdout
    panto sessions import FILE                a session exported from any backend

One line per session, newest first: id (a prefix ``--resume`` accepts), when
it was last written, message count, model and first prompt.  Only the
sessions of the current directory unless ``--all``.  The sessions are those
of the configured store (``[session] store/url/path/dir``,
``PANTO_SESSION_URL``, ``PANTO_SESSION_DIR``) unless ``--dir``/``--url``
names another.

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
from typing import Any, TextIO

from ..errors import PantoError
from ..sessions import SessionInfo, TreeNode, resolve_session_id

__all__ = ["format_sessions", "format_tree", "tree_rows", "main", "pick_session", "short_ids"]

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
) -> Path | str | None:
    """Show the sessions numbered and read a choice: a number, or an id
    prefix.  Returns the session's file, or its id in a database; None on an
    empty answer or EOF."""
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
            info = infos[int(answer) - 1]
            return info.path if info.path is not None else info.id
        matches = [i for i in infos if i.id.startswith(answer.lower())]
        if len(matches) == 1:
            return matches[0].path if matches[0].path is not None else matches[0].id
        if not matches:
            try:
                return resolve_session_id(answer, dir)
            except PantoError as exc:
                print(f"panto: {exc}", file=stdout)
                continue
        print(
            f"panto: {answer!r} matches {len(matches)} sessions; type more of the id", file=stdout
        )


def format_tree(nodes: Sequence[TreeNode], *, width: int = 200) -> list[str]:
    """One line per user prompt: its entry id, the prompt and a short summary
    of the reply, indented at each branch point; ``*`` marks the prompts on
    the current path, ``>`` the one whose turn holds the current leaf;
    labels in brackets.  ``panto --resume ID --at ENTRY`` continues after an
    entry; ``/tree`` in the REPL shows the same."""
    out = [line for _, line in tree_rows(nodes, width=width)]
    if not out and nodes:
        out.append("(no prompts yet)")
    return out


def tree_rows(nodes: Sequence[TreeNode], *, width: int = 200) -> list[tuple[list[TreeNode], str]]:
    """``format_tree``'s lines with the entries each stands for: the turn
    (its prompt, then what follows it up to a fork or the next prompt)."""
    children: dict[str | None, list[TreeNode]] = {}
    for n in nodes:
        children.setdefault(n.parent_id, []).append(n)
    out = []
    for n in nodes:
        if not n.is_prompt:
            continue
        turn = [n]  # the prompt and what follows it up to a fork or the next prompt
        node = n
        while len(kids := children.get(node.id, [])) == 1 and not kids[0].is_prompt:
            node = kids[0]
            turn.append(node)
        answer = next((t.text for t in reversed(turn) if t.role == "assistant" and t.text), "")
        labels = [t.label for t in turn if t.label]
        mark = ">" if any(t.current for t in turn) else "*" if n.on_path else " "
        end = turn[-1].id
        head = f"{'  ' * n.depth}{mark} {n.id}"
        if end != n.id:
            head += f"..{end}"
        text = _one_line(n.text) or "(empty prompt)"
        if labels:
            text = f"[{', '.join(labels)}] {text}"
        if answer:
            text += f"  -> {_one_line(answer)}"
        out.append((turn, _cut(f"{head}  {text}", width)))
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="panto sessions",
        description="List saved sessions, newest first.  Resume one with "
        "`panto --resume ID` (any unique prefix of the id).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n"
        "  panto sessions tree ID [--json]        the session's tree, current leaf marked\n"
        "  panto sessions export ID [--at ENTRY]  the session as JSONL on stdout\n"
        "  panto sessions import FILE             a session exported from any backend\n"
        "\n"
        "Run `panto sessions COMMAND --help` for a command's options.",
    )
    p.add_argument(
        "-a", "--all", action="store_true", help="sessions of every directory, not only this one"
    )
    p.add_argument(
        "-n", "--limit", type=int, default=None, metavar="N", help="show at most N sessions"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    _where_args(p)
    p.add_argument(
        "-C", "--cwd", default=None, help="list the sessions of this directory instead of ."
    )
    return p


def _where_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dir", default=None, help="a directory of JSONL sessions (default: the configured store)"
    )
    p.add_argument(
        "--url", default=None, help="a session database: sqlite:///path or postgresql://..."
    )


def _backend(args: argparse.Namespace) -> Any:
    from ..sessions import open_backend
    from .common import load_config

    if args.url or args.dir:
        return open_backend(args.url or args.dir)
    return open_backend(load_config("panto sessions"))


def _fail(exc: BaseException) -> int:
    """One line on stderr; status 2 for a configuration mistake (a session
    URL that does not parse), else 1."""
    from ..errors import ConfigError

    print(f"panto sessions: {exc}", file=sys.stderr)
    return 2 if isinstance(exc, ConfigError) else 1


def _tree_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="panto sessions tree",
        description="Show a session's tree: one line per prompt, branches indented, "
        "'*' on the current path, '>' at the current leaf.  Continue from an entry "
        "with `panto --resume ID --at ENTRY`.",
    )
    p.add_argument("id", help="a session id (any unique prefix)")
    p.add_argument("--json", action="store_true", help="every node as one JSON object per line")
    _where_args(p)
    args = p.parse_args(argv)
    try:
        nodes = _backend(args).tree(args.id)
    except PantoError as exc:
        return _fail(exc)
    if args.json:
        for n in nodes:
            record = {
                "id": n.id,
                "parent_id": n.parent_id,
                "type": n.type,
                "role": n.role,
                "text": n.text,
                "label": n.label,
                "children": n.children,
                "on_path": n.on_path,
                "current": n.current,
            }
            print(json.dumps(record, ensure_ascii=False))
        return 0
    width = shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 200
    for line in format_tree(nodes, width=width):
        print(line)
    return 0


def _export_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="panto sessions export",
        description="Write a session (header, then every entry, the whole tree) as JSONL "
        "to stdout: the format of a session file, whatever the store.  "
        "`panto sessions import FILE` reads it into any store.",
    )
    p.add_argument("id", help="a session id (any unique prefix)")
    p.add_argument("-o", "--output", default=None, help="write to this file instead of stdout")
    _where_args(p)
    args = p.parse_args(argv)
    try:
        records = list(_backend(args).export(args.id))
    except PantoError as exc:
        return _fail(exc)
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    if args.output:
        from ..paths import open_private

        try:  # 0600: a conversation
            with os.fdopen(
                open_private(args.output, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8"
            ) as f:
                f.write(text)
        except OSError as exc:
            print(f"panto sessions export: {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return 0


def _import_main(argv: list[str]) -> int:
    from ..sessions import parse_entries

    p = argparse.ArgumentParser(
        prog="panto sessions import",
        description="Read a session exported by `panto sessions export` (or a session "
        "file) into the configured store; it keeps its id.",
    )
    p.add_argument("file", help="a JSONL session ('-': stdin)")
    _where_args(p)
    args = p.parse_args(argv)
    try:
        if args.file == "-":
            header, entries = parse_entries(sys.stdin.buffer, "<stdin>")
        else:
            with open(args.file, "rb") as f:
                header, entries = parse_entries(f, args.file)
        sid = _backend(args).import_session(header, entries)
    except OSError as exc:
        return _fail(f"{args.file}: {exc.strerror}")
    except PantoError as exc:
        return _fail(exc)
    print(sid)
    return 0


_SUBCOMMANDS = {"tree": _tree_main, "export": _export_main, "import": _import_main}


def main(argv: Sequence[str] | None = None) -> int:
    from .common import one_line_warnings

    one_line_warnings()
    argv = list(argv) if argv is not None else sys.argv[1:]
    if argv and argv[0] in _SUBCOMMANDS:
        return _SUBCOMMANDS[argv[0]](argv[1:])
    if argv and argv[0] == "list":
        argv = argv[1:]
    args = _parser().parse_args(argv)
    cwd = None if args.all else os.path.abspath(args.cwd or os.getcwd())
    try:
        backend = _backend(args)
        infos = backend.list(cwd)
    except PantoError as exc:
        return _fail(exc)
    if args.limit is not None:
        infos = infos[: max(args.limit, 0)]
    if args.json:
        for i in infos:
            record = {
                "id": i.id,
                "path": str(i.path) if i.path is not None else None,
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
        print(f"no sessions {where} in {backend.describe()}", file=sys.stderr)
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
