"""Building the agent for ``panto`` and ``panto -p`` until ``panto.app.open_agent``
takes over: the session store (new, ``--continue``, ``--resume``,
``--no-session``) and the Lua runtime as the ``panto-lua`` tool source."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, PantoError, SessionError
from .common import usage_error, warn

if TYPE_CHECKING:
    from ..agent import Agent
    from ..config import Config
    from ..lua import LoadReport, LuaToolSource
    from ..sessions import LoadedSession, SessionStore

__all__ = ["open_session", "Extensions", "load_extensions", "lua_config"]


def open_session(
    args: argparse.Namespace, config: Config
) -> tuple[SessionStore, LoadedSession | None] | None:
    """The store for this run: a new session, the one ``--continue`` or
    ``--resume`` names, or a NullStore with ``--no-session``.  Returns None
    when the user cancelled the pick; raises SessionError (e.g. the session
    is locked by another process, naming its pid)."""
    from ..sessions import (
        FSJSONLStore,
        NullStore,
        find_most_recent_session,
        list_sessions,
        resolve_session_id,
    )

    cwd = os.getcwd()
    durability = config.session_durability
    sdir = config.session_dir
    if args.no_session:
        if args.continue_ or args.resume is not None:
            raise ConfigError("--no-session cannot be combined with --continue or --resume")
        return NullStore(), None
    path = None
    if args.continue_:
        path = find_most_recent_session(cwd, dir=sdir)
        if path is None:
            print(
                "panto: no earlier session in this directory; starting a new one", file=sys.stderr
            )
    elif args.resume is not None:
        if args.resume:
            try:
                path = resolve_session_id(args.resume, dir=sdir)
            except SessionError as e:  # no such id, or an ambiguous prefix
                usage_error(str(e))
        else:
            from .sessions import pick_session

            path = pick_session(list_sessions(dir=sdir, cwd=cwd)[:20], dir=sdir)
            if path is None:
                print("panto: no session chosen", file=sys.stderr)
                return None
    if path is None:
        return FSJSONLStore(sdir, cwd, durability=durability), None  # type: ignore[arg-type]
    store = FSJSONLStore.open(path, durability=durability)  # type: ignore[arg-type]
    loaded = store.load_conversation()
    print(
        f"panto: resumed session {store.session_id[:8]} ({len(loaded.conversation)} messages)",
        file=sys.stderr,
    )
    if loaded.dangling_user is not None:
        short = loaded.dangling_user.strip().replace("\n", " ")[:80]
        print(
            f"panto: your last prompt had no reply and was not resent: {short!r}", file=sys.stderr
        )
    return store, loaded


class Extensions:
    """What start-up loaded: the ``panto-lua`` source and its load report
    (both None when Lua is unavailable), and why not (``error``)."""

    def __init__(
        self,
        source: LuaToolSource | None = None,
        report: LoadReport | None = None,
        error: str | None = None,
    ) -> None:
        self.source = source
        self.report = report
        self.error = error

    def commands(self) -> dict[str, str]:
        """Lua-registered slash commands: name (without ``/``) -> description."""
        return self.source.commands() if self.source is not None else {}

    def run_command(self, name: str, args: str) -> str:
        assert self.source is not None
        return self.source.run_command(name, args)


def lua_config(config: Config) -> dict[str, Any]:
    """The mapping extensions see as ``panto.config`` (never an API key):
    ``Config.lua_view()`` when the config has one (TOML layering), else the
    model and the tool timeout."""
    view = getattr(config, "lua_view", None)
    if callable(view):
        return dict(view())
    tools: dict[str, Any] = {}
    if config.tool_timeout is not None:
        tools["timeout"] = config.tool_timeout
    return {"model": config.model_spec, "provider": config.provider, "tools": tools}


def load_extensions(
    agent: Agent,
    *,
    no_extensions: bool = False,
    deny: Sequence[str] = (),
    cwd: str | None = None,
) -> Extensions:
    """Start the Lua runtime, load extensions and register the ``panto-lua``
    source and its hooks with ``agent``.  Never fatal: problems are warnings
    on stderr and panto carries on with what loaded (or without Lua)."""
    try:
        import panto.lua as plua  # cheap: lupa loads when the runtime starts

        src, report = plua.create_source(
            cwd=cwd or os.getcwd(),
            no_extensions=no_extensions,
            deny=list(deny),
            config=agent.config,
        )
    except ImportError as e:
        return _no_lua(f"Lua extensions are unavailable ({e}); install panto[lua] for them")
    except Exception as e:  # noqa: BLE001 - lupa missing or broken, a bad runtime
        cause = e.__cause__ if isinstance(e.__cause__, ImportError) else None
        if cause is not None:
            return _no_lua(f"Lua extensions are unavailable ({cause}); install panto[lua] for them")
        return _no_lua(f"Lua extensions are unavailable: {e}")
    for err in report.errors:
        warn(f"extension: {err}")
    try:
        agent.register_tool_source(src)
    except PantoError as e:
        warn(f"Lua tools not registered: {e}")
        return Extensions(None, report, str(e))
    agent.add_hooks(src.hooks)
    return Extensions(src, report)


def _no_lua(msg: str) -> Extensions:
    warn(msg + "; continuing without Lua tools")
    return Extensions(None, None, msg)
