"""Split a bash command line into the simple commands it runs, for
permission rules (``Bash(rm *)``).

This is not a bash interpreter.  It finds every command a line can start:

- the commands between ``&& || ; | |& &``, newlines and ``( )``;
- the commands inside ``$( )``, backticks and ``<( )`` / ``>( )``, also
  inside double quotes and assignments;
- the command a wrapper runs (``timeout 5 rm f`` -> ``rm f``): ``timeout
  time nice nohup env xargs sudo doas stdbuf ionice setsid command exec
  builtin``, ``find -exec/-execdir/-ok/-okdir``, and ``watch`` (whose
  arguments are a shell line, parsed in turn);
- redirection targets (``> out``, ``< in``), which are not arguments.

Words are unquoted (``'rm' "f"`` -> ``rm f``); ``$VAR`` and ``$(...)`` stay
as written and mark the word *dynamic*.  A command whose name is dynamic,
or that runs code panto cannot read -- ``sh -c``, ``bash``, ``eval``,
``source``, ``python -c``, ``perl -e``, ``node -e``... -- is *opaque*:
rules cannot vouch for it (the literal string of ``sh -c '...'`` is still
parsed, so a deny rule matches what it would run).  A line that does not
parse (an unterminated quote) is opaque as a whole.

What this cannot see: a variable's value (``V=.env; cat "$V"``), aliases
and functions defined elsewhere, programs that run other programs on their
own (``make``, ``git`` aliases, ``awk``'s ``system()``).  Text rules are not
a boundary; the OS sandbox is (docs/security.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["Command", "ParsedLine", "parse"]

#: How deeply ``$( )``, ``sh -c '...'`` and wrappers may nest before the
#: line counts as opaque (a bound, not a limit anyone meets).
MAX_DEPTH = 12

_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", ";;", ";&", ";;&", "(", ")", "\n"})
# words that start or continue a compound command: skipped in front of a command
_KEYWORDS = frozenset(
    {"!", "if", "then", "elif", "else", "do", "while", "until", "{", "}", "fi", "done", "esac"}
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox", "rbash"})
# interpreter -> the options whose argument is code
_CODE_FLAGS: dict[str, frozenset[str]] = {
    "python": frozenset({"-c"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset({"eval"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
    "luajit": frozenset({"-e"}),
    "rscript": frozenset({"-e"}),
    "osascript": frozenset({"-e"}),
    "pwsh": frozenset({"-c", "-command", "-Command"}),
}
_RUNS_CODE = frozenset({"eval", "source", ".", "exec-shell"})


@dataclass(frozen=True)
class _Wrapper:
    """A command that runs the rest of its arguments as a command."""

    with_arg: frozenset[str] = frozenset()  # options that take the next word
    positional: int = 0  # operands before the command (timeout's duration)
    assignments: bool = False  # NAME=VALUE words before the command (env)
    opaque_opts: frozenset[str] = frozenset()  # options that make it run a string


def _w(
    with_arg: str = "", positional: int = 0, assignments: bool = False, opaque: str = ""
) -> _Wrapper:
    return _Wrapper(frozenset(with_arg.split()), positional, assignments, frozenset(opaque.split()))


_WRAPPERS: dict[str, _Wrapper] = {
    "timeout": _w("-s --signal -k --kill-after", positional=1),
    "time": _w("-f --format -o --output"),
    "nice": _w("-n --adjustment"),
    "nohup": _w(),
    "env": _w("-u --unset -C --chdir", assignments=True, opaque="-S --split-string"),
    "xargs": _w(
        "-I -i -n --max-args -P --max-procs -L --max-lines -d --delimiter -E -e "
        "-s --max-chars -a --arg-file --process-slot-var"
    ),
    "sudo": _w(
        "-u --user -g --group -C --close-from -h --host -p --prompt -D --chdir -U --other-user -r --role -t --type -T --command-timeout"
    ),
    "doas": _w("-u -C"),
    "stdbuf": _w("-i --input -o --output -e --error"),
    "ionice": _w("-c --class -n --classdata -p --pid -P --pgid -u --uid"),
    "setsid": _w(),
    "command": _w(),
    "exec": _w("-a"),
    "builtin": _w(),
    "chronic": _w(),
    "unbuffer": _w(),
}


@dataclass(frozen=True)
class Command:
    """One simple command as it will run.

    ``text``: its words joined by single spaces (what ``Bash(...)`` rules
    match); ``outer``: the wrapper commands around it, outermost first
    (``timeout 5 rm f`` for ``rm f``), which deny and ask rules match too;
    ``opaque``: why rules cannot vouch for it (None: they can);
    ``reads``/``writes``: its redirection targets."""

    words: tuple[str, ...]
    outer: tuple[str, ...] = ()
    opaque: str | None = None
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def name(self) -> str:
        return self.words[0] if self.words else ""

    @property
    def args(self) -> tuple[str, ...]:
        return self.words[1:]


@dataclass
class ParsedLine:
    """Every command of a line; ``error`` when it did not parse (the line
    is then opaque as a whole)."""

    commands: list[Command] = field(default_factory=list)
    error: str | None = None

    @property
    def opaque(self) -> list[Command]:
        return [c for c in self.commands if c.opaque]


def parse(line: str) -> ParsedLine:
    """The commands ``line`` runs (see the module's docstring)."""
    out = ParsedLine()
    try:
        _parse_into(line, out, 0, ())
    except _ParseError as e:
        out.error = str(e)
    return out


class _ParseError(ValueError):
    pass


# --------------------------------------------------------------------------- lexing


@dataclass
class _Word:
    """A word of the line."""

    text: str  # unquoted
    raw: str  # as written
    dynamic: bool = False  # holds $VAR, $( ), `...` or a glob the shell expands


@dataclass
class _Redir:
    """A redirection operator (its target is the next word)."""

    op: str


def _find_close(s: str, i: int, close: str = ")") -> int:
    """The index of the ``)`` (or backtick) closing a group that starts at
    ``i`` (just after the opener), skipping quotes, escapes and nested
    groups; raises when there is none."""
    depth = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if close == "`":
            if c == "`":
                return i
            i += 1
            continue
        if c == "'":
            j = s.find("'", i + 1)
            if j < 0:
                raise _ParseError("unterminated ' quote")
            i = j + 1
            continue
        if c == '"':
            i = _skip_double(s, i + 1)
            continue
        if c == "`":
            i = _find_close(s, i + 1, "`") + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    raise _ParseError("unterminated $( or (")


def _skip_double(s: str, i: int) -> int:
    """The index after the ``"`` closing a double-quoted string whose body
    starts at ``i``."""
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        if c == "$" and s.startswith("$(", i):
            i = _find_close(s, i + 2) + 1
            continue
        if c == "`":
            i = _find_close(s, i + 1, "`") + 1
            continue
        i += 1
    raise _ParseError('unterminated " quote')


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPECIAL_PARAMS = frozenset("@*#?-$!0123456789")


class _Lexer:
    """Words, operators and redirections of one line; the bodies of command
    substitutions go to ``subs`` (parsed by the caller)."""

    def __init__(self, s: str) -> None:
        self.s = s
        self.i = 0
        self.subs: list[str] = []
        self.tokens: list[_Word | _Redir | str] = []
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter, strip tabs)

    def run(self) -> list[_Word | _Redir | str]:
        s, n = self.s, len(self.s)
        text: list[str] = []
        raw_start = -1
        dynamic = False
        in_word = False

        def end_word() -> None:
            nonlocal text, in_word, dynamic, raw_start
            if in_word:
                word = _Word("".join(text), s[raw_start : self.i], dynamic)
                last = self.tokens[-1] if self.tokens else None
                if isinstance(last, _Redir) and last.op in ("<<", "<<-"):
                    self.heredocs.append((word.text, last.op == "<<-"))  # body: next line
                self.tokens.append(word)
            text, in_word, dynamic, raw_start = [], False, False, -1

        def start() -> None:
            nonlocal in_word, raw_start
            if not in_word:
                in_word, raw_start = True, self.i

        while self.i < n:
            c = s[self.i]
            if c in " \t\r":
                end_word()
                self.i += 1
            elif c == "\\":
                if self.i + 1 < n and s[self.i + 1] == "\n":  # a line continuation
                    self.i += 2
                    continue
                start()
                text.append(s[self.i + 1 : self.i + 2])
                self.i += 2
            elif c == "\n":
                end_word()
                self.tokens.append("\n")
                self.i += 1
                self._skip_heredocs()
            elif c == "#" and not in_word:
                j = s.find("\n", self.i)
                self.i = n if j < 0 else j
            elif c in ";&|":
                if c == "&" and s.startswith("&>", self.i):
                    end_word()
                    op = "&>>" if s.startswith("&>>", self.i) else "&>"
                    self.tokens.append(_Redir(op))
                    self.i += len(op)
                    continue
                end_word()
                for op in (";;&", ";;", ";&", "&&", "||", "|&", c):
                    if s.startswith(op, self.i):
                        self.tokens.append(op)
                        self.i += len(op)
                        break
            elif c in "<>":
                if self.i + 1 < n and s[self.i + 1] == "(":  # <( ) process substitution
                    start()
                    j = _find_close(s, self.i + 2)
                    self.subs.append(s[self.i + 2 : j])
                    text.append(s[self.i : j + 1])
                    dynamic = True
                    self.i = j + 1
                    continue
                if in_word and raw_start >= 0 and s[raw_start : self.i].isdigit():
                    text, in_word, dynamic, raw_start = [], False, False, -1  # 2> : an fd
                end_word()
                for op in ("<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", c):
                    if s.startswith(op, self.i):
                        self.tokens.append(_Redir(op))
                        self.i += len(op)
                        break
            elif c in "()":
                end_word()
                self.tokens.append(c)
                self.i += 1
            elif c == "'":
                start()
                j = s.find("'", self.i + 1)
                if j < 0:
                    raise _ParseError("unterminated ' quote")
                text.append(s[self.i + 1 : j])
                self.i = j + 1
            elif c == '"':
                start()
                self.i += 1
                dynamic |= self._double(text)
            elif c == "`":
                start()
                j = _find_close(s, self.i + 1, "`")
                self.subs.append(s[self.i + 1 : j])
                text.append(s[self.i : j + 1])
                dynamic = True
                self.i = j + 1
            elif c == "$":
                start()
                dynamic |= self._dollar(text)
            else:
                start()
                if c in "*?[":
                    dynamic = True  # a glob the shell expands
                text.append(c)
                self.i += 1
        end_word()
        return self.tokens

    def _double(self, text: list[str]) -> bool:
        """A double-quoted string from ``self.i`` (after the quote)."""
        s, n = self.s, len(self.s)
        dynamic = False
        while self.i < n:
            c = s[self.i]
            if c == '"':
                self.i += 1
                return dynamic
            if c == "\\" and self.i + 1 < n:
                nxt = s[self.i + 1]
                if nxt in '$`"\\':
                    text.append(nxt)
                elif nxt != "\n":
                    text.append(c + nxt)
                self.i += 2
            elif c == "$":
                dynamic |= self._dollar(text)
            elif c == "`":
                j = _find_close(s, self.i + 1, "`")
                self.subs.append(s[self.i + 1 : j])
                text.append(s[self.i : j + 1])
                dynamic = True
                self.i = j + 1
            else:
                text.append(c)
                self.i += 1
        raise _ParseError('unterminated " quote')

    def _dollar(self, text: list[str]) -> bool:
        """``$...`` from ``self.i``: appends what was written; True when it
        expands to something only the shell knows."""
        s, i = self.s, self.i
        nxt = s[i + 1 : i + 2]
        if s.startswith("$((", i):
            j = _find_close(s, i + 3)
            k = _find_close(s, j + 1) if s[j + 1 : j + 2] != ")" else j + 1
            text.append(s[i : k + 1])
            self.i = k + 1
            return True
        if nxt == "(":
            j = _find_close(s, i + 2)
            self.subs.append(s[i + 2 : j])
            text.append(s[i : j + 1])
            self.i = j + 1
            return True
        if nxt == "{":
            j = s.find("}", i + 2)
            if j < 0:
                raise _ParseError("unterminated ${")
            text.append(s[i : j + 1])
            self.i = j + 1
            return True
        if nxt == "'":  # $'...' (ANSI-C quoting): kept as written, less the quotes
            j = i + 2
            while j < len(s) and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= len(s):
                raise _ParseError("unterminated $' quote")
            body = s[i + 2 : j]
            text.append(body)
            self.i = j + 1
            return "\\" in body
        if nxt in _SPECIAL_PARAMS and nxt:
            text.append(s[i : i + 2])
            self.i = i + 2
            return True
        j = i + 1
        while j < len(s) and s[j] in _NAME_CHARS:
            j += 1
        if j == i + 1:  # a lone $
            text.append("$")
            self.i = i + 1
            return False
        text.append(s[i:j])
        self.i = j
        return True

    def _skip_heredocs(self) -> None:
        """After a newline: skip the bodies of the here-documents the line
        opened."""
        s = self.s
        for delim, strip in self.heredocs:
            while self.i < len(s):
                j = s.find("\n", self.i)
                line = s[self.i : len(s) if j < 0 else j]
                self.i = len(s) if j < 0 else j + 1
                if (line.lstrip("\t") if strip else line) == delim:
                    break
        self.heredocs = []


# --------------------------------------------------------------------------- commands


def _is_assignment(w: _Word) -> bool:
    raw = w.raw
    eq = raw.find("=")
    if eq <= 0:
        return False
    name = raw[:eq].rstrip("+")
    if "[" in name:
        name = name[: name.find("[")]
    return bool(name) and not name[0].isdigit() and all(c in _NAME_CHARS for c in name)


def _parse_into(line: str, out: ParsedLine, depth: int, outer: tuple[str, ...]) -> None:
    if depth > MAX_DEPTH:
        raise _ParseError("nested too deeply")
    lex = _Lexer(line)
    tokens = lex.run()
    for sub in lex.subs:
        _parse_into(sub, out, depth + 1, outer)
    segment: list[_Word | _Redir] = []
    for tok in [*tokens, ";"]:
        if isinstance(tok, str):
            if tok in _SEPARATORS:
                _segment(segment, out, depth, outer)
                segment = []
            continue
        segment.append(tok)


def _segment(
    seg: list[_Word | _Redir], out: ParsedLine, depth: int, outer: tuple[str, ...]
) -> None:
    words: list[_Word] = []
    reads: list[str] = []
    writes: list[str] = []
    k = 0
    while k < len(seg):
        t = seg[k]
        if isinstance(t, _Redir):
            target = seg[k + 1] if k + 1 < len(seg) else None
            k += 2
            if not isinstance(target, _Word):
                continue
            if (
                t.op in ("<<", "<<-", "<<<")
                or t.op in ("<&", ">&")
                and (target.text.isdigit() or target.text == "-")
            ):
                continue  # here-documents, here-strings and fd duplication
            (reads if t.op in ("<", "<>") else writes).append(target.text)
            if t.op == "<>":
                writes.append(target.text)
            continue
        words.append(t)
        k += 1
    while words and words[0].raw in _KEYWORDS:
        words.pop(0)
    if words and words[0].raw in ("for", "select", "case", "function"):
        return  # the loop's or case's words are not a command
    while words and _is_assignment(words[0]):
        words.pop(0)
    if not words:
        if reads or writes:
            out.commands.append(Command((), outer, None, tuple(reads), tuple(writes)))
        return
    if words[0].dynamic:
        out.commands.append(
            Command(
                tuple(w.text for w in words),
                outer,
                f"its command name {words[0].raw} is only known when it runs",
                tuple(reads),
                tuple(writes),
            )
        )
        return
    _command([w.text for w in words], out, depth, outer, tuple(reads), tuple(writes))


def _base(name: str) -> str:
    return os.path.basename(name)


def _interpreter(name: str) -> str | None:
    """``python3.12`` -> ``python``; None when not an interpreter we know."""
    b = _base(name).lower()
    if b in _CODE_FLAGS:
        return b
    for prefix in ("python", "perl", "ruby", "lua", "node", "php"):
        if b.startswith(prefix) and all(ch.isdigit() or ch == "." for ch in b[len(prefix) :]):
            return prefix
    return None


def _command(
    words: list[str],
    out: ParsedLine,
    depth: int,
    outer: tuple[str, ...],
    reads: tuple[str, ...],
    writes: tuple[str, ...],
) -> None:
    """Record ``words`` (one simple command), unwrapping wrappers."""
    if depth > MAX_DEPTH:
        raise _ParseError("nested too deeply")
    text = " ".join(words)
    name = _base(words[0])
    wrapper = _WRAPPERS.get(name)
    if wrapper is not None:
        inner, why = _unwrap(wrapper, name, words[1:])
        if why:
            out.commands.append(Command(tuple(words), outer, why, reads, writes))
            return
        if name == "xargs" and not inner:
            inner = ["echo"]
        if inner:
            _command(inner, out, depth + 1, (*outer, text), reads, writes)
            return
        out.commands.append(Command(tuple(words), outer, None, reads, writes))
        return
    if name == "watch":
        rest = _skip_options(words[1:], frozenset({"-n", "--interval", "-d", "-q", "--equexit"}))
        out.commands.append(Command(tuple(words), outer, None, reads, writes))
        if rest:
            _parse_into(" ".join(rest), out, depth + 1, (*outer, text))
        return
    if name == "find":
        _find(words, out, depth, outer, reads, writes)
        return
    why = _opaque_reason(words)
    out.commands.append(Command(tuple(words), outer, why, reads, writes))
    if why and name in _SHELLS | {"eval"}:
        code = _shell_code(words)
        if code is not None:  # a literal script: deny rules see what it would run
            try:
                _parse_into(code, out, depth + 1, (*outer, text))
            except _ParseError:
                pass


def _skip_options(args: list[str], with_arg: frozenset[str]) -> list[str]:
    k = 0
    while k < len(args) and args[k].startswith("-") and args[k] != "-":
        if args[k] == "--":
            return args[k + 1 :]
        k += 2 if args[k] in with_arg else 1
    return args[k:]


def _unwrap(w: _Wrapper, name: str, args: list[str]) -> tuple[list[str], str | None]:
    """The command a wrapper runs, or why it is opaque."""
    k = 0
    while k < len(args):
        a = args[k]
        if a == "--":
            k += 1
            break
        if not a.startswith("-") or a == "-":
            if w.assignments and "=" in a and not a.startswith("="):
                k += 1
                continue
            break
        opt = a.split("=", 1)[0]
        if opt in w.opaque_opts or any(
            a.startswith(o) and not o.startswith("--") for o in w.opaque_opts
        ):
            return [], f"{name} {opt} runs a string as a command"
        if name in ("sudo", "doas") and opt in ("-s", "-i", "--shell", "--login"):
            if k + 1 >= len(args):
                return [], f"{name} {opt} starts a shell"
        k += 2 if a in w.with_arg else 1
    while k < len(args) and w.assignments and "=" in args[k] and not args[k].startswith("="):
        k += 1
    k += w.positional
    return args[k:], None


def _find(
    words: list[str],
    out: ParsedLine,
    depth: int,
    outer: tuple[str, ...],
    reads: tuple[str, ...],
    writes: tuple[str, ...],
) -> None:
    out.commands.append(Command(tuple(words), outer, None, reads, writes))
    text = " ".join(words)
    k = 1
    while k < len(words):
        if words[k] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = k + 1
            while j < len(words) and words[j] not in (";", "+"):
                j += 1
            inner = words[k + 1 : j]
            if inner:
                _command(inner, out, depth + 1, (*outer, text), (), ())
            k = j + 1
        else:
            k += 1


def _opaque_reason(words: list[str]) -> str | None:
    name = _base(words[0])
    if name in _SHELLS:
        return f"{name} runs a script panto cannot check"
    if name in _RUNS_CODE:
        return f"{name} runs code panto cannot check"
    interp = _interpreter(words[0])
    if interp is not None:
        flags = _CODE_FLAGS.get(interp, frozenset())
        for a in words[1:]:
            if a == "--":
                break
            if a in flags or any(
                a.startswith(f) and len(f) == 2 and not a.startswith("--") for f in flags
            ):
                return (
                    f"{name} {a[:2] if not a.startswith('--') else a} runs code panto cannot check"
                )
            if a.startswith("-") and len(a) > 2 and not a.startswith("--"):
                if any(f"-{ch}" in flags for ch in a[1:]):
                    return f"{name} {a} runs code panto cannot check"
    return None


def _shell_code(words: list[str]) -> str | None:
    """The script of ``sh -c 'SCRIPT'`` (or ``eval WORDS``), if given."""
    if _base(words[0]) == "eval":
        return " ".join(words[1:]) or None
    for k, a in enumerate(words[1:], 1):
        if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            return words[k + 1] if k + 1 < len(words) else None
        if not a.startswith("-"):
            return None
    return None
