"""Permission modes and rules: may this tool call run, must panto ask, or
is it denied?

Order: deny rules, then ask rules, then allow rules, then the mode's
default.  A deny always wins (in every mode, ``bypass`` included); an ask
beats an allow; a project's rules add to the user's, so a project can deny
or ask but never allow what the user asks about or denies.

Modes (``[permissions] mode``, ``--permission-mode``, ``/mode``):

- ``default``: reads are free; bash commands, file changes and every other
  tool (MCP servers, extension tools) ask.
- ``accept-edits``: as ``default``, and ``write``/``edit`` inside the
  workspace (the working directory, ``additional_directories``) are free.
- ``plan``: read-only.  ``write``/``edit`` are denied; bash commands and
  other tools are denied unless an allow rule names them (so
  ``allow = ["Bash(git log *)"]`` keeps ``git log`` usable while planning;
  a catch-all ``Bash(*)`` does not count here).
- ``dont-ask``: what would ask is denied, with a result naming the rule to
  add.  For CI.
- ``bypass``: everything runs (deny rules still apply).

Bash commands are split into the simple commands they run
(:mod:`panto.policy.bashparse`): every one must be allowed, and a deny or
ask rule that matches any one of them -- or any wrapper around it -- decides
for the whole line.  A command rules cannot read (``sh -c``, ``eval``,
``python -c``) is never allowed by a catch-all ``Bash(*)``.  Arguments of a
bash command are also checked against the ``Read`` deny/ask rules, and
redirection targets against ``Read``/``Edit`` ones, so ``cat .env`` meets
the same rule as ``read .env`` -- best effort: ``V=.env; cat "$V"`` is not
seen.  Text rules are not a boundary; the OS sandbox is.

Without a way to ask (``panto -p``, no terminal): ``default`` and
``accept-edits`` run what they would ask about (inside the sandbox), an
``ask`` rule denies, ``dont-ask`` denies what no allow rule covers.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..hooks import ToolCallDecision
from ..tools import ToolCall, ToolOutput
from .rules import BASH, EDIT, READ, Rule, family, parse_rule, path_candidates

if TYPE_CHECKING:
    from .bashparse import Command, ParsedLine

__all__ = [
    "MODES",
    "MODE_CYCLE",
    "ApprovalRequest",
    "Decision",
    "Permissions",
    "RuleSet",
    "builtin_rules",
]

MODES = ("default", "accept-edits", "plan", "dont-ask", "bypass")
#: What Shift-Tab (and ``/mode`` without an argument) steps through.
MODE_CYCLE = ("default", "accept-edits", "plan")

ALLOW, ASK, DENY = "allow", "ask", "deny"

#: ``.env`` files hold secrets: reading them is denied unless they are examples.
ENV_EXAMPLES = frozenset({".env.example", ".env.sample", ".env.template"})


def builtin_rules(cwd: str, root: str, home: str) -> list[Rule]:
    """The deny rules every configuration starts with."""
    return [
        Rule(t, "built-in", cwd, root, home, ENV_EXAMPLES) for t in ("Read(.env)", "Read(.env.*)")
    ]


@dataclass(frozen=True)
class Decision:
    """What the rules and the mode say about one call.

    ``action``: ``allow``, ``ask`` or ``deny``; ``reason``: one sentence for
    the user and the model; ``rule``: the rule that decided (None: the
    mode); ``suggest``: rules that would allow the call (for "allow always"
    and for the message of a denial)."""

    action: str
    reason: str
    rule: Rule | None = None
    suggest: tuple[str, ...] = ()
    #: what the call does, for prompts and the session record (a command, a path)
    subject: str = ""

    #: an ask from an ``ask`` rule or a hook (not the mode's): where nobody
    #: can answer, it is a denial
    explicit: bool = False

    @property
    def explicit_ask(self) -> bool:
        return self.action == ASK and (self.rule is not None or self.explicit)

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.action,
            "rule": self.rule.text if self.rule else None,
            "origin": self.rule.origin if self.rule else None,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ApprovalRequest:
    """What the approval prompt shows: the tool, what it would do (the full
    command, or the diff of a file change) and why panto asks."""

    call: ToolCall
    decision: Decision
    mode: str
    detail: str  # the command or the diff


#: The prompt's answers.
ONCE, ALWAYS, REFUSE = "once", "always", "deny"


class RuleSet:
    """Every rule in force, by kind, in the order they were added."""

    def __init__(self) -> None:
        self.allow: list[Rule] = []
        self.ask: list[Rule] = []
        self.deny: list[Rule] = []

    def add(self, kind: str, rule: Rule) -> None:
        getattr(self, kind).append(rule)

    @classmethod
    def from_layers(
        cls,
        layers: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        cwd: str,
        root: str,
        home: str,
    ) -> RuleSet:
        """The rules of every config layer (``(origin, [permissions]
        table)``, low to high), after the built-in ones."""
        rs = cls()
        for r in builtin_rules(cwd, root, home):
            rs.add(DENY, r)
        for origin, table in layers:
            for kind in (ALLOW, ASK, DENY):
                for text in table.get(kind) or ():
                    parse_rule(text)  # validated by the config schema; fail loudly if not
                    rs.add(kind, Rule(text, origin, cwd, root, home))
        return rs


class Permissions:
    """The permission gate of one agent: decides each tool call, asks the
    user through ``approver`` when it can, records each decision through
    ``record``.

    ``approver(request) -> "once" | "always" | "deny"`` is set by an
    interactive front end (the REPL); without one, nothing waits.  The agent
    calls :meth:`decide` from its tool threads; prompts are serialized."""

    def __init__(
        self,
        rules: RuleSet,
        mode: str = "default",
        *,
        cwd: str,
        workspace: Sequence[str] = (),
        config_file: str = "",
    ) -> None:
        if mode not in MODES:
            raise ValueError(
                f"unknown permission mode {mode!r} (expected one of {', '.join(MODES)})"
            )
        self.rules = rules
        self.mode = mode
        self.cwd = cwd
        #: where accept-edits lets file changes through without asking
        self.workspace = [os.path.realpath(p) for p in (cwd, *workspace)]
        #: the user's config file, named in messages on how to allow something
        self.config_file = config_file or "~/.config/panto/config.toml"
        self.approver: Callable[[ApprovalRequest], str] | None = None
        self.record: Callable[[dict[str, Any]], Any] | None = None
        self._ask_lock = threading.Lock()

    # -- the rules ------------------------------------------------------------

    def check(self, call: ToolCall) -> Decision:
        """What the rules and the mode say about ``call`` (no prompt)."""
        fam = family(call.name)
        if fam == BASH:
            return self._bash(call)
        if fam in (READ, EDIT):
            return self._path_tool(call, fam)
        return self._other(call)

    def _first(self, kind: str, pred: Callable[[Rule], bool]) -> Rule | None:
        for r in getattr(self.rules, kind):
            if pred(r):
                return r
        return None

    def _other(self, call: ToolCall) -> Decision:
        name = call.name
        subject = name
        r = self._first(DENY, lambda r: r.covers_tool(name))
        if r is not None:
            return Decision(
                DENY, f"the tool {name} matches the deny rule {r} in {r.origin}", r, subject=subject
            )
        r = self._first(ASK, lambda r: r.covers_tool(name))
        if r is not None:
            return Decision(
                ASK, f"the tool {name} matches the ask rule {r} in {r.origin}", r, (name,), subject
            )
        r = self._first(ALLOW, lambda r: r.covers_tool(name) and r.spec is None)
        if r is not None:
            return Decision(ALLOW, f"allowed by {r} ({r.origin})", r, subject=subject)
        return self._by_mode(call, "other", f"the tool {name}", (name,), subject)

    def _path_tool(self, call: ToolCall, fam: str) -> Decision:
        raw = call.input.get("path")
        path = raw if isinstance(raw, str) and raw else "."
        cands = path_candidates(path, self.cwd)
        what = f"{call.name} {path}"
        tool = call.name

        def hit(r: Rule) -> bool:
            return r.covers_tool(tool) and r.matches_path(cands)

        r = self._first(DENY, hit)
        if r is not None:
            return Decision(
                DENY, f"{what} matches the deny rule {r} in {r.origin}", r, subject=what
            )
        r = self._first(ASK, hit)
        suggest = (f"{'Edit' if fam == EDIT else 'Read'}({_rule_path(cands[0], self.cwd)})",)
        if r is not None:
            return Decision(ASK, f"{what} matches the ask rule {r} in {r.origin}", r, suggest, what)
        r = self._first(ALLOW, hit)
        if fam == READ:
            if r is None and self.mode == "plan":
                return Decision(ALLOW, "reading is free in plan mode", subject=what)
            return Decision(
                ALLOW, f"allowed by {r} ({r.origin})" if r else "reads are free", r, subject=what
            )
        if r is not None and self.mode != "plan":
            return Decision(ALLOW, f"allowed by {r} ({r.origin})", r, subject=what)
        if self.mode == "accept-edits" and self._in_workspace(cands):
            return Decision(ALLOW, "accept-edits: a file change inside the workspace", subject=what)
        return self._by_mode(call, "edit", what, suggest, what)

    def _in_workspace(self, cands: tuple[str, ...]) -> bool:
        real = cands[-1]
        return any(real == w or real.startswith(w.rstrip("/") + "/") for w in self.workspace)

    def _bash(self, call: ToolCall) -> Decision:
        from .bashparse import parse  # here: a session without bash never needs it

        command = call.input.get("command")
        line = command if isinstance(command, str) else ""
        parsed = parse(line)
        subject = line
        if parsed.error:
            reason = f"the command does not parse ({parsed.error}), so no rule can vouch for it"
            r = self._first(DENY, lambda r: r.covers_tool("bash") and r.catch_all)
            if r is not None:
                return Decision(DENY, f"denied by {r} ({r.origin})", r, subject=subject)
            return self._by_mode(call, "bash", reason, (), subject, opaque=True)
        # deny, then ask: any command, any wrapper around it, any path it names
        for kind in (DENY, ASK):
            found = self._bash_match(kind, parsed)
            if found is not None:
                rule, what = found
                if kind == DENY:
                    return Decision(
                        DENY,
                        f"{what} matches the deny rule {rule} in {rule.origin}",
                        rule,
                        subject=subject,
                    )
                return Decision(
                    ASK,
                    f"{what} matches the ask rule {rule} in {rule.origin}",
                    rule,
                    _bash_suggest(parsed),
                    subject,
                )
        # allow: every command, by its own text (wrappers are harmless)
        missing: list[Command] = []
        opaque: list[Command] = []
        used: list[Rule] = []
        for c in parsed.commands:
            if not c.words:
                continue
            ok = self._first(
                ALLOW,
                lambda r, c=c: (
                    r.covers_tool("bash")
                    and r.matches_command(c.text)
                    and not (c.opaque and r.catch_all)
                    and not (self.mode == "plan" and r.catch_all)
                ),
            )
            if ok is None:
                (opaque if c.opaque else missing).append(c)
            elif ok not in used:
                used.append(ok)
        if not missing and not opaque:
            if not used:
                return Decision(ALLOW, "an empty command", subject=subject)
            names = ", ".join(f"{r} ({r.origin})" for r in used[:3])
            return Decision(ALLOW, f"allowed by {names}", used[0], subject=subject)
        suggest = _bash_suggest(parsed, missing + opaque)
        if opaque:
            c = opaque[0]
            reason = f"`{_short(c.text)}` cannot be checked by rules: {c.opaque}"
        else:
            names = ", ".join(f"`{_short(c.text)}`" for c in missing[:3])
            reason = f"{names} {'is' if len(missing) == 1 else 'are'} not covered by an allow rule"
        return self._by_mode(call, "bash", reason, suggest, subject, opaque=bool(opaque))

    def _bash_match(self, kind: str, parsed: ParsedLine) -> tuple[Rule, str] | None:
        rules = list(getattr(self.rules, kind))
        for c in parsed.commands:
            texts = [c.text, *c.outer]
            if c.words and "/" in c.words[0]:  # /bin/rm f is rm f to a deny rule
                texts.append(" ".join((os.path.basename(c.words[0]), *c.args)))
            for r in rules:
                if r.covers_tool("bash") and c.words and any(r.matches_command(t) for t in texts):
                    return r, f"`{_short(c.text)}`"
            # paths it names, against Read rules; what it writes, against Edit rules
            for arg in (*(a for a in c.args if not a.startswith("-")), *c.reads):
                cands = path_candidates(arg, self.cwd)
                for r in rules:
                    if r.family == READ and r.spec is not None and r.matches_path(cands):
                        return r, f"`{_short(c.text)}` reads {arg}"
            for target in c.writes:
                cands = path_candidates(target, self.cwd)
                for r in rules:
                    if r.family == EDIT and r.spec is not None and r.matches_path(cands):
                        return r, f"`{_short(c.text)}` writes {target}"
        return None

    def _by_mode(
        self,
        call: ToolCall,
        kind: str,
        what: str,
        suggest: tuple[str, ...],
        subject: str,
        *,
        opaque: bool = False,
    ) -> Decision:
        """No rule decided: the mode does.  ``kind``: ``bash``, ``edit`` or
        ``other``."""
        mode = self.mode
        if mode == "bypass":
            return Decision(ALLOW, "bypass mode", subject=subject)
        if mode == "plan":
            if kind == "edit":
                why = f"plan mode is read-only: {what} would change files"
            elif kind == "bash":
                why = f"plan mode is read-only: bash commands run only when an allow rule names them ({what})"
            else:
                why = f"plan mode is read-only: {what} runs only when an allow rule names it"
            return Decision(DENY, why, None, suggest, subject)
        if mode == "dont-ask":
            return Decision(DENY, f"dont-ask mode: {what}", None, suggest, subject)
        return Decision(
            ASK,
            f"{mode} mode asks before {_kind_text(kind, opaque)}: {what}",
            None,
            suggest,
            subject,
        )

    # -- the gate -------------------------------------------------------------

    def decide(self, call: ToolCall, hook: ToolCallDecision | None = None) -> ToolOutput | None:
        """The full decision on ``call``: None to run it, else the result
        the model gets instead.  ``hook``: what ``before_tool_call`` hooks
        said (``permission`` ``allow`` skips a prompt, ``ask`` forces one,
        ``deny`` blocks; no hook can allow what a deny rule denies)."""
        d = self.check(call)
        said = getattr(hook, "permission", None) if hook is not None else None
        if said == DENY:
            why = getattr(hook, "reason", "") or "a hook denied it"
            d = Decision(DENY, why, subject=d.subject)
            by = "hook"
        elif said == ASK and d.action == ALLOW:
            why = getattr(hook, "reason", "") or "a hook asks"
            d = Decision(ASK, why, None, d.suggest, d.subject, explicit=True)
            by = "hook"
        elif said == ALLOW and d.action == ASK:
            d = Decision(
                ALLOW, getattr(hook, "reason", "") or "a hook allowed it", subject=d.subject
            )
            by = "hook"
        else:
            by = "rule" if d.rule is not None else "mode"
        if d.action == ASK:
            return self._ask(call, d)
        self._record(call, d, by)
        if d.action == DENY:
            return ToolOutput(self._denial(call, d), True)
        return None

    def _ask(self, call: ToolCall, d: Decision) -> ToolOutput | None:
        approver = self.approver
        if approver is None or self.mode == "dont-ask":  # nothing waits: -p, no terminal
            if d.explicit_ask or self.mode == "dont-ask":
                why = f"{d.reason}, and nobody can answer a prompt here (panto -p, no terminal)"
                denied = Decision(DENY, why, d.rule, d.suggest, d.subject)
                self._record(call, denied, "rule")
                return ToolOutput(self._denial(call, denied), True)
            self._record(
                call,
                Decision(ALLOW, "no terminal to ask: run (sandboxed)", subject=d.subject),
                "mode",
            )
            return None
        with self._ask_lock:
            req = ApprovalRequest(call, d, self.mode, self.detail(call, d))
            try:
                answer = approver(req)
            except KeyboardInterrupt:
                answer = REFUSE
            except Exception as e:  # noqa: BLE001 - a broken prompt must not run the tool
                answer = REFUSE
                d = Decision(DENY, f"the approval prompt failed: {e}", d.rule, d.suggest, d.subject)
        if answer == ALWAYS:
            added = self.allow_for_session(d.suggest)
            self._record(
                call,
                Decision(ALLOW, "allowed for this session", subject=d.subject),
                "user",
                always=added,
            )
            return None
        if answer == ONCE:
            self._record(call, Decision(ALLOW, "allowed once", subject=d.subject), "user")
            return None
        denied = Decision(DENY, "the user denied it", d.rule, (), d.subject)
        self._record(call, denied, "user")
        return ToolOutput(
            f"permission denied: the user declined this {call.name} call. Do not retry it; "
            "ask the user what to do instead.",
            True,
        )

    def approve_unsandboxed(self, call: ToolCall, output: ToolOutput) -> bool:
        """The OS sandbox blocked ``call`` (its result ``output`` says so):
        in ``default`` mode, with someone to ask, ask whether to run it again
        outside the sandbox (allow once or deny; never "always").  The answer
        is recorded.  The Lua tool source calls this as its ``escalate``."""
        if self.mode != "default" or self.approver is None:
            return False
        what = _command_of(call)
        d = Decision(
            ASK,
            "the OS sandbox blocked it: run it again outside the sandbox, with your access?",
            subject=what,
            explicit=True,
        )
        tail = "\n".join(output.content.rstrip("\n").split("\n")[-6:])
        with self._ask_lock:
            req = ApprovalRequest(call, d, self.mode, f"{what}\n\n{tail}")
            try:
                answer = self.approver(req)
            except Exception:  # noqa: BLE001 - a broken prompt must not run the tool
                answer = REFUSE
        ok = answer in (ONCE, ALWAYS)
        reason = "rerun outside the sandbox: " + ("allowed once" if ok else "the user declined")
        self._record(call, Decision(ALLOW if ok else DENY, reason, subject=what), "user")
        return ok

    def allow_for_session(self, rules: Iterable[str]) -> list[str]:
        """Add allow rules for the rest of the session (``allow always``, or
        restored from a resumed session's record)."""
        added = []
        for text in rules:
            parse_rule(text)
            if not any(r.text == text and r.origin == "session" for r in self.rules.allow):
                self.rules.allow.append(Rule(text, "session", self.cwd, self.cwd))
                added.append(text)
        return added

    def _denial(self, call: ToolCall, d: Decision) -> str:
        """The tool result of a denied call: what, which rule, how to allow it."""
        msg = f"permission denied: {d.reason}."
        if d.rule is not None and d.rule.origin != "session":
            if d.action == DENY and d.rule.origin == "built-in":
                msg += " .env files hold secrets; panto never reads them (.env.example is fine)."
            elif d.rule in self.rules.deny:
                msg += " A deny rule always wins: to allow this, remove the rule from [permissions] deny there."
            else:
                msg += (
                    " To allow this, remove the rule from [permissions] ask there (an allow "
                    "rule cannot override it), or run panto interactively and approve it."
                )
        elif self.mode == "plan":
            msg += " Leave plan mode to make changes (/mode default, or --permission-mode)."
        elif d.suggest:
            rules = ", ".join(f'"{s}"' for s in d.suggest[:3])
            msg += f" To allow it, add to [permissions] allow in {self.config_file}: {rules}."
        return msg + " Do not retry the same call."

    def _record(self, call: ToolCall, d: Decision, by: str, always: Sequence[str] = ()) -> None:
        rec = self.record
        if rec is None:
            return
        entry: dict[str, Any] = {
            "tool": call.name,
            "tool_use_id": call.id,
            "decision": d.action,
            "by": by,
            "mode": self.mode,
            "rule": d.rule.text if d.rule is not None else None,
            "reason": d.reason,
            "subject": d.subject[:1000],
        }
        if always:
            entry["always"] = list(always)
        try:
            rec(entry)
        except Exception as e:  # noqa: BLE001 - recording never blocks a decision
            # (the usual cause: the session closed while a cancelled turn's
            # tool thread was still deciding)
            from ..logs import get_logger

            get_logger("panto.policy").debug("permission decision not recorded: %s", e)

    # -- what a prompt shows -----------------------------------------------------

    def detail(self, call: ToolCall, d: Decision) -> str:
        """The full command, the diff of a file change, or the input."""
        fam = family(call.name)
        if fam == BASH:
            return str(call.input.get("command", ""))
        if call.name in ("write", "edit"):
            return file_change_diff(call, self.cwd)
        import json

        return json.dumps(call.input, ensure_ascii=False, indent=2)[:4000]


def file_change_diff(call: ToolCall, cwd: str, max_lines: int = 400) -> str:
    """The unified diff ``write``/``edit`` would make (or why there is none)."""
    import difflib

    path = str(call.input.get("path") or "")
    full = os.path.join(cwd, os.path.expanduser(path))
    try:
        with open(full, encoding="utf-8", errors="replace", newline="") as f:
            old = f.read(4_000_000)
        exists = True
    except OSError:
        old, exists = "", False
    if call.name == "write":
        new = str(call.input.get("content", ""))
    else:
        a = str(call.input.get("old_string", ""))
        b = str(call.input.get("new_string", ""))
        if not a:
            new = b if not old else old
        elif a not in old:
            return f"{path}: old_string not found (the edit will fail)"
        else:
            new = old.replace(a, b) if call.input.get("replace_all") else old.replace(a, b, 1)
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{path}" if exists else "/dev/null",
            f"b/{path}",
        )
    )
    if not lines:
        return f"{path}: no change"
    out = [ln if ln.endswith("\n") else ln + "\n" for ln in lines[:max_lines]]
    if len(lines) > max_lines:
        out.append(f"… {len(lines) - max_lines} more diff lines\n")
    return "".join(out).rstrip("\n")


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _kind_text(kind: str, opaque: bool) -> str:
    if kind == "bash":
        return "commands it cannot check" if opaque else "bash commands"
    if kind == "edit":
        return "file changes"
    return "this tool"


def _rule_path(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    if rel == "." or rel.startswith(".."):
        return "/" + path  # //abs/path
    return "./" + rel


def _bash_suggest(parsed: ParsedLine, commands: Sequence[Command] | None = None) -> tuple[str, ...]:
    """``Bash(...)`` rules that would allow ``commands`` (the exact texts)."""
    out: list[str] = []
    for c in commands if commands is not None else parsed.commands:
        if c.words:
            text = f"Bash({c.text})"
            if text not in out:
                out.append(text)
    return tuple(out)


def _command_of(call: ToolCall) -> str:
    """What a call runs, for a prompt: bash's command, else its input."""
    cmd = call.input.get("command")
    if isinstance(cmd, str):
        return cmd
    import json

    return json.dumps(call.input, ensure_ascii=False)[:2000]
