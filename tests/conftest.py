"""Shared pytest setup.

- ``bench/`` is put on ``sys.path`` so tests can use the stream generator
  (``import streamgen``).
- the installed ``panto`` is imported first (see below).
- ``repo_root``: the repository checkout.
- ``fixtures_dir``: ``tests/fixtures`` (the shared ``.sse`` + ``.json`` pairs).
- ``decoder_path``: a module that uses it runs every test twice, on
  StreamDecoder's C path and on its cffi fallback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO_ROOT / "bench"

if BENCH_DIR.is_dir() and str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

# Import the installed panto (with its compiled core) before any test module
# or nested conftest can put the source tree (python/, which has no compiled
# extension) on sys.path: once the package is imported, every panto.*
# submodule comes from the same place.
try:
    import panto
    import panto._ffi  # noqa: F401  (fails early and clearly if the core is missing)
except ImportError as e:  # pragma: no cover - environment problem
    pytest.exit(
        f"cannot import panto with its compiled core ({e}).  Install it first: "
        "`bash tests/run_all.sh` does, or `pip install '.[test]'` in a venv.",
        returncode=4,
    )


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return REPO_ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module", params=["c-path", "cffi-path"])
def decoder_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """StreamDecoder on the C path (panto._fastevents builds the events) or
    on the cffi fallback (used when the extension is missing), for a whole
    module: ``pytestmark = pytest.mark.usefixtures("decoder_path")``."""
    import panto.decoder as decoder

    on = request.param == "c-path"
    assert decoder._set_fast(on) is on, "panto._fastevents is not built"
    yield request.param
    decoder._set_fast(True)


@pytest.fixture(autouse=True, scope="session")
def _private_data_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Sessions that CLI runs save go to a temporary XDG_DATA_HOME, never the
    real one (subprocesses inherit it)."""
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("xdg-data"))


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME with its own XDG dirs, and no ``PANTO_*`` variables,
    API keys, ``CC`` or ``LUAROCKS_CONFIG`` from the caller's environment:
    nothing of the real user's config, data or rocks is read or written.
    Suites that need it everywhere make it autouse in their conftest."""
    home = tmp_path / "home"
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        d = home / name.lower()
        d.mkdir(parents=True)
        monkeypatch.setenv(name, str(d))
    monkeypatch.setenv("HOME", str(home))
    for var in list(os.environ):
        if var.startswith("PANTO_") or var in (
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "LUAROCKS_CONFIG",
            "CC",
        ):
            monkeypatch.delenv(var, raising=False)
    return home
