"""How long a Host's Lua states live: a state is used by the sessions of
its extension set and closed when the last of them closes, so a process
opening sessions in ever new directories (``panto serve``) keeps only the
states of open sessions; closing one disturbs no other state nor a running
tool; a lazily started session (``panto.lua.lazy``) takes a state only when
its first tool runs."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import lupa.lua54
import pytest

from panto import app
from panto.app import AgentSession, Host
from panto.errors import ConfigError
from panto.lua.lazy import LazyLuaToolSource
from panto.lua.runtime import LuaRuntime, get_runtime
from panto.tools import ToolCall, ToolOutput

pytestmark = pytest.mark.usefixtures("isolated_home")

EXT = """
return {{
  name = "proj.{name}",
  activate = function()
    panto.ext.register_tool{{name = "only_{name}", handler = function()
      return "from {name}"
    end}}
    panto.ext.register_tool{{name = "slow_{name}", handler = function()
      panto.time.sleep(0.4)
      return "slept in {name}"
    end}}
  end,
}}
"""


def project(root: Path, name: str) -> Path:
    d = root / name
    (d / ".git").mkdir(parents=True)
    (d / ".panto" / "extensions").mkdir(parents=True)
    (d / ".panto" / "extensions" / f"{name}.lua").write_text(EXT.format(name=name))
    return d


def open_in(host: Host, d: Path, **options: object) -> AgentSession:
    return host.open_session(cwd=d, session=None, model="mock/anthropic", trust=True, **options)  # type: ignore[arg-type]


def call(s: AgentSession, tool: str) -> ToolOutput:
    assert s.extensions.source is not None
    return s.extensions.source.invoke_batch([ToolCall("c1", tool, {})])[0]


def runtime_of(s: AgentSession) -> LuaRuntime:
    assert s.extensions.source is not None
    return s.extensions.source.runtime


def lupa_states() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is lupa.lua54.LuaRuntime)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    """A host whose first extension set has taken the process runtime
    already (a session kept open), so the states the test makes are states
    of their own, which the registry may close."""
    h = Host()
    first = open_in(h, project(tmp_path, "first"))
    assert runtime_of(first).loop is get_runtime().loop
    yield h
    first.close()
    h.close()


def test_states_of_closed_sessions_close_and_a_reopened_directory_loads_again(
    host: Host, tmp_path: Path
) -> None:
    states, lupas = app._lua_states.count(), lupa_states()  # noqa: SLF001
    dirs = [project(tmp_path / "many", f"p{i}") for i in range(20)]
    for i, d in enumerate(dirs):
        s = open_in(host, d)
        rt = runtime_of(s)
        assert rt is not get_runtime()
        assert app._lua_states.count() == states + 1  # noqa: SLF001
        assert call(s, f"only_p{i}").content == f"from p{i}"
        s.close()
        assert rt.closed
        assert app._lua_states.count() == states  # noqa: SLF001
        s.close()  # twice: nothing more is given back
        assert app._lua_states.count() == states  # noqa: SLF001
    del s, rt
    # the Lua states themselves are freed, not only marked closed
    assert lupa_states() <= lupas
    again = open_in(host, dirs[0])
    try:
        assert "only_p0" in {t.name for t in again.agent.tools}
        assert "only_p1" not in {t.name for t in again.agent.tools}
        assert call(again, "only_p0").content == "from p0"
    finally:
        again.close()
    assert app._lua_states.count() == states  # noqa: SLF001


def test_sessions_of_one_directory_share_a_state_that_outlives_the_first_close(
    host: Host, tmp_path: Path
) -> None:
    d, other = project(tmp_path, "shared"), project(tmp_path, "other")
    s1, s2 = open_in(host, d), open_in(host, d)
    s3 = open_in(host, other)
    rt, rt3 = runtime_of(s1), runtime_of(s3)
    assert runtime_of(s2) is rt and rt3 is not rt
    assert host.lua_runtime(s1.agent.config, str(d), False, ()) is rt
    # a tool of the other state, and one of the shared state, running
    # while sessions close
    outs: dict[str, ToolOutput] = {}
    runs = [
        threading.Thread(target=lambda: outs.update(s3=call(s3, "slow_other"))),
        threading.Thread(target=lambda: outs.update(s2=call(s2, "slow_shared"))),
    ]
    for t in runs:
        t.start()
    s1.close()
    s1.close()  # once only: s2 still holds the state
    assert not rt.closed
    assert call(s2, "only_shared").content == "from shared"
    runs[1].join(5)
    assert outs["s2"] == ToolOutput("slept in shared", False)
    s2.close()  # the last user: closed, while a tool of another state runs
    assert rt.closed and not rt3.closed
    assert host.lua_runtime(s1.agent.config, str(d), False, ()) is None
    runs[0].join(5)
    assert outs["s3"] == ToolOutput("slept in other", False)
    assert call(s3, "only_other").content == "from other"
    s3.close()
    assert rt3.closed


def test_a_lazily_started_session_takes_a_state_at_its_first_tool_call(
    host: Host, tmp_path: Path
) -> None:
    d = tmp_path / "plain"
    d.mkdir()
    states = app._lua_states.count()  # noqa: SLF001
    eager = open_in(host, d, extensions="builtin")  # records the start-up cache
    assert not isinstance(eager.extensions.source, LazyLuaToolSource)
    assert app._lua_states.count() == states + 1  # noqa: SLF001
    eager.close()
    assert app._lua_states.count() == states  # noqa: SLF001

    never = open_in(host, d, extensions="builtin")
    assert isinstance(never.extensions.source, LazyLuaToolSource)
    never.close()  # it took nothing: gives nothing back
    assert app._lua_states.count() == states  # noqa: SLF001

    lazy = open_in(host, d, extensions="builtin")
    src = lazy.extensions.source
    assert isinstance(src, LazyLuaToolSource) and src.started is None
    assert app._lua_states.count() == states  # noqa: SLF001
    out = src.invoke_batch([ToolCall("c1", "ls", {})])[0]
    assert not out.is_error, out.content
    rt = src.runtime
    assert app._lua_states.count() == states + 1  # noqa: SLF001
    lazy.close()
    assert rt.closed and app._lua_states.count() == states  # noqa: SLF001
    # a tool called after the close cannot take a state again
    late = open_in(host, d, extensions="builtin")
    late.close()
    out = late.extensions.source.invoke_batch([ToolCall("c2", "ls", {})])[0]  # type: ignore[union-attr]
    assert out.is_error and "the session is closed" in out.content
    assert app._lua_states.count() == states  # noqa: SLF001


def test_an_open_that_fails_after_loading_extensions_gives_its_state_back(
    host: Host, tmp_path: Path
) -> None:
    d = project(tmp_path, "failing")
    states = app._lua_states.count()  # noqa: SLF001
    with pytest.raises(ConfigError, match="unknown permission mode"):
        open_in(host, d, permission_mode="bogus")
    assert app._lua_states.count() == states  # noqa: SLF001
