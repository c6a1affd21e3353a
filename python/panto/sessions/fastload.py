"""Chunked JSONL scanning: session lines -> ``Entries``, fast.

Loading is dominated by two costs: json.loads and building the frozen
dataclasses.  The parser calls the json module's C scanner directly, the
converter (``conversation.fast_message_from_dict``) fills the slots directly,
and the cyclic GC is paused while a file is loaded (it would otherwise rescan
the growing heap over and over).  Anything the fast path does not recognise
goes to a slow path that applies every check and names the line.

The file is read in chunks that end at a line end, and each chunk's entries
are scanned straight out of its text (no string per line).  A whole-file read
would cost fresh memory of twice the file's size; page faults are a large
part of load time.  The database stores feed their rows' JSON through the
same scanner (``parse_lines``).
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..conversation import SHARED_STRINGS, fast_message_from_dict
from ..errors import SessionError
from .context import MESSAGE, Entries
from .repair import read_message, warn_session

__all__ = ["FORMAT_VERSION", "check_header", "dump_line", "gc_paused", "parse_file", "parse_lines"]

#: The session file format this panto writes and the newest it reads.
FORMAT_VERSION = 1


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC; afterwards move what it tracks straight to the
    oldest generation.  A loaded session is long-lived data (about four
    tracked objects per entry): the young collections would walk all of it
    twice, about 0.1 s per 100,000 entries, only to promote it.  Full
    collections still see it.  Skipped when the host has frozen objects
    (gc.freeze), which the move would unfreeze."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was:
            gc.enable()


_scan_once = json.decoder.JSONDecoder().scan_once
_BAD = object()


def _loads(line: str) -> Any:
    """json.loads(line), faster for the common case."""
    try:
        value, end = _scan_once(line, 0)
    except (StopIteration, ValueError):
        return json.loads(line)  # raises a proper ValueError (or skips whitespace)
    if end != len(line):
        return json.loads(line)
    return value


_CHUNK = 1 << 20  # bytes per read (tests shrink it to put chunk ends everywhere)


@dataclass(slots=True, eq=False)
class Parsed(Entries):
    """A parsed session file: its entries, header and what was dropped."""

    header: dict[str, Any] | None = None
    size: int = 0  # bytes in the file
    good_size: int = -1  # bytes up to the end of the last complete batch (-1: all complete lines)
    dropped: list[str] = field(default_factory=list)  # what was ignored, for the warning
    #: messages read as placeholders (``read_message``), for a warning
    repaired: list[str] = field(default_factory=list)
    # the first entry of a batch whose last entry has not been seen yet:
    # (entry index, chunk text, position in it, file offset of the chunk)
    batch: tuple[int, str, int, int] | None = None


def dump_line(entry: dict[str, Any]) -> bytes:
    try:
        return (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    except UnicodeEncodeError:  # lone surrogates: \u-escape them so the line stays UTF-8
        return (json.dumps(entry, separators=(",", ":")) + "\n").encode()


def check_header(h: Any, where: str) -> dict[str, Any]:
    if not isinstance(h, dict) or h.get("type") != "session":
        raise SessionError(f"{where}:1: not a panto session file (no session header)")
    v = h.get("version")
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise SessionError(f"{where}:1: invalid session format version {v!r}")
    if v > FORMAT_VERSION:
        raise SessionError(
            f"{where}: session format version {v} is newer than this panto understands "
            f"(version {FORMAT_VERSION}); upgrade panto to open it"
        )
    if not isinstance(h.get("id"), str) or not h["id"]:
        raise SessionError(f"{where}:1: session header has no id")
    return h


def parse_file(path: Path) -> Parsed:
    where = str(path)
    try:
        f = open(path, "rb", buffering=0)  # noqa: SIM115 (closed below)
    except FileNotFoundError:
        raise SessionError(f"{where}: no such session file") from None
    except OSError as exc:
        raise SessionError(f"{where}: cannot read session file: {exc.strerror}") from None
    p = Parsed()
    with f:
        try:
            read = f.read
            block = read(_CHUNK)
            p.size = len(block)
            carry = b""  # a line not complete yet
            offset = 0  # where carry starts in the file
            lines = 0  # lines before carry
            while block:
                nxt = read(_CHUNK)  # read ahead: the last complete line may be torn
                p.size += len(nxt)
                data = carry + block if carry else block
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    carry, block = data, nxt
                    continue
                carry = data[cut:]
                chunk = data[:cut] if carry else data
                if not _parse_chunk(p, chunk, offset, lines, not nxt, where):
                    break  # stopped at an unparsable last line
                offset += cut
                lines += chunk.count(b"\n")
                block = nxt
        except OSError as exc:
            raise SessionError(f"{where}: cannot read session file: {exc.strerror}") from None
    if len(SHARED_STRINGS) > 4096:  # a pathological file: do not keep its strings forever
        SHARED_STRINGS.clear()
    if carry:
        p.dropped.insert(0, "a torn last line (no newline)")
    if p.good_size < 0:
        p.good_size = p.size - len(carry)
    if p.batch is not None:  # its other entries carry "more": it never committed
        k, text, pos, chunk_offset = p.batch
        p.dropped.append(f"an incomplete batch of {len(p.ids) - k} entries")
        p.good_size = chunk_offset + len(text[:pos].encode("utf-8", "surrogatepass"))
        p.truncate(k)
        p.batch = None
    k = p.check_ids()
    if k is not None:
        raise SessionError(f"{where}:{_entry_lineno(path, k)}: {p.error_for(k)}")
    return p


def _entry_lineno(path: Path, k: int) -> int:
    """The line of entry ``k`` (for an error message: reads the file again)."""
    n = -1
    with open(path, "rb") as f:
        f.readline()  # the header
        for lineno, raw in enumerate(f, 2):
            if raw.decode("utf-8", "replace").strip():
                n += 1
                if n == k:
                    return lineno
    return 0


def _parse_chunk(p: Parsed, chunk: bytes, offset: int, lines: int, final: bool, where: str) -> bool:
    """Parse one chunk of whole lines; False if it ended at an unparsable
    last line of the file (a torn write), which is then dropped."""
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        lineno = lines + chunk.count(b"\n", 0, exc.start) + 1
        if not final or chunk.find(b"\n", exc.start) + 1 != len(chunk):
            raise SessionError(f"{where}:{lineno}: corrupt line (not UTF-8)") from None
        line_start = chunk.rfind(b"\n", 0, exc.start) + 1
        p.dropped.append(f"an unparsable last line (line {lineno})")
        p.good_size = offset + line_start
        if line_start:
            _parse_text(p, chunk[:line_start].decode("utf-8"), offset, lines, False, where)
        return False
    return _parse_text(p, text, offset, lines, final, where)


def _parse_text(p: Parsed, text: str, offset: int, lines: int, final: bool, where: str) -> bool:
    pos = 0
    if p.header is None:  # the first chunk (a torn header ends the parse)
        pos = text.index("\n") + 1
        try:
            header = _loads(text[: pos - 1])
        except ValueError:
            if final and pos == len(text):
                p.dropped.append("a torn header line")
                p.good_size = 0
                return False
            raise SessionError(f"{where}:1: corrupt session header") from None
        p.header = check_header(header, where)
    return scan_entries(p, text, pos, offset, lines, final, where)


def scan_entries(
    p: Parsed, text: str, pos: int, offset: int, lines: int, final: bool, where: str
) -> bool:
    """The hot loop.  The common entry takes the fast path; anything unusual
    (whitespace, a torn or corrupt line, odd types, a value spanning lines)
    goes to _slow_entry, which applies every check and names the line."""
    scan = _scan_once
    convert = fast_message_from_dict
    find = text.find
    kinds, ids, parents, payloads = (
        p.kinds.append,
        p.ids.append,
        p.parents.append,
        p.payloads.append,
    )
    modes = p.modes
    n = len(p.ids)
    n_messages, linear, plain, prev, batch = p.n_messages, p.linear, p.plain, p.leaf, p.batch
    n_chars = len(text)  # text ends with "\n"
    ok = True
    while pos < n_chars:
        try:
            e, stop = scan(text, pos)
            if text[stop] != "\n" or find("\n", pos, stop) != -1:
                raise ValueError
            kind = e["type"]
            eid = e["id"]
            pid = e.get("parent_id")
            if type(eid) is not str or (pid is not None and type(pid) is not str):
                raise TypeError
            payload = convert(e["message"]) if kind == "message" else e
            mode = e.get("system_mode")
            more = e.get("more")
        except (StopIteration, ValueError, KeyError, TypeError, AttributeError, IndexError):
            stop = find("\n", pos)
            lineno = lines + text.count("\n", 0, pos) + 1
            rec = _slow_entry(
                text[pos:stop], lineno, where, final and stop + 1 == n_chars, p.repaired
            )
            if rec is None:  # a blank line
                pos = stop + 1
                continue
            if rec is _BAD:  # an unparsable last line: torn
                p.dropped.append(f"an unparsable last line (line {lineno})")
                p.good_size = offset + len(text[:pos].encode("utf-8", "surrogatepass"))
                ok = False
                break
            kind, eid, pid, payload, mode, more = rec
        # Entries.add, inlined
        if kind == "message":
            kinds(MESSAGE)
            n_messages += 1
            if payload.role == "system":
                plain = False
                if mode is not None:
                    modes[n] = mode
        else:
            kinds(kind)
            if kind != "model_change":
                plain = False
        if pid != prev:
            linear = False
        elif pid is not None:
            pid = prev  # keep one string, not two equal ones
        ids(eid)
        parents(pid)
        payloads(payload)
        prev = eid
        if not more:
            batch = None
        elif batch is None:
            batch = (n, text, pos, offset)
        n += 1
        pos = stop + 1
    p.n_messages, p.linear, p.plain, p.leaf, p.batch = n_messages, linear, plain, prev, batch
    return ok


def _slow_entry(
    line: str, lineno: int, where: str, may_be_torn: bool, repaired: list[str] | None = None
) -> Any:
    """One entry line with every check: (kind, id, parent_id, payload,
    system_mode, more), None for a blank line, _BAD for an unparsable line
    that may be a torn tail; else SessionError."""
    try:
        e = json.loads(line)
    except ValueError:
        if not line.strip():
            return None  # a blank line carries nothing
        if may_be_torn:
            return _BAD
        raise SessionError(f"{where}:{lineno}: corrupt session entry (invalid JSON)") from None
    if type(e) is not dict:
        raise SessionError(f"{where}:{lineno}: corrupt session entry (not an object)")
    eid, kind, pid = e.get("id"), e.get("type"), e.get("parent_id")
    if type(eid) is not str or type(kind) is not str:
        raise SessionError(f"{where}:{lineno}: corrupt session entry (no type or id)")
    if pid is not None and type(pid) is not str:
        raise SessionError(f"{where}:{lineno}: corrupt session entry (bad parent_id)")
    if kind != "message":
        return (kind, eid, pid, e, None, e.get("more"))
    m, problem = read_message(e.get("message"))
    if problem is not None and repaired is not None:
        repaired.append(f"line {lineno}: {problem}")
    return (kind, eid, pid, m, e.get("system_mode"), e.get("more"))


def warn_repaired(where: str, parsed: Parsed) -> None:
    """A ``SessionWarning`` (and a logged warning) naming the messages that
    were read as placeholders."""
    if parsed.repaired:
        warn_session(f"session {where}: " + "; ".join(parsed.repaired[:5]))


def parse_lines(text: str, where: str) -> Entries:
    """The entries of ``text``: entry lines (JSON objects, one per line,
    each ending with a newline) as a database store keeps them.  A bad line is
    a ``SessionError`` naming ``where`` and the line's number."""
    p = Parsed()
    p.header = {}
    if text:
        scan_entries(p, text, 0, 0, 0, False, where)
    if len(SHARED_STRINGS) > 4096:
        SHARED_STRINGS.clear()
    k = p.check_ids()
    if k is not None:
        raise SessionError(f"{where}: {p.error_for(k)}")
    warn_repaired(where, p)
    return p
