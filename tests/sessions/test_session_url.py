"""A session URL that does not parse is an error (one line, exit 2), never a
folder of that name in the project (``postgresql:/db/panto``: a slash
missing)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.sessions import panto
from support.trust import trust_project

from panto.errors import ConfigError, SessionError
from panto.sessions import SessionURLError, open_backend

BAD = ["postgresql:/db/panto", "postgres:db", "mysql://ada:s3cret@db/panto", "/just/a/dir"]


@pytest.mark.parametrize("url", BAD)
def test_a_configured_url_that_does_not_parse_is_refused(url: str, tmp_path: Path) -> None:
    from panto.config import Config

    work = tmp_path / "work"
    work.mkdir()
    cfg = Config.load(env={"PANTO_SESSION_URL": url, "HOME": str(tmp_path)}, cwd=work)
    with pytest.raises(SessionURLError) as exc:
        open_backend(cfg)
    assert isinstance(exc.value, SessionError) and isinstance(exc.value, ConfigError)
    assert "s3cret" not in str(exc.value)
    assert list(work.iterdir()) == []


def test_a_string_argument_may_still_name_a_directory(tmp_path: Path) -> None:
    assert open_backend(str(tmp_path / "d")).kind == "jsonl"
    with pytest.raises(SessionURLError, match="two slashes"):
        open_backend("postgresql:/db/panto")


@pytest.mark.parametrize("where", ["env", "project"])
def test_the_cli_exits_2_and_writes_nothing(where: str, tmp_path: Path) -> None:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    (work / ".git").mkdir()
    env = dict(os.environ)
    if where == "env":
        os.environ["PANTO_SESSION_URL"] = "postgresql:/db/panto"
    else:
        (work / ".panto").mkdir()
        (work / ".panto" / "config.toml").write_text('[session]\nurl = "postgresql:/db/panto"\n')
        # a project's session.url applies once trusted (panto() uses this config dir)
        trust_project(work, {"XDG_CONFIG_HOME": str(data / "config")})
    try:
        r = panto("-p", "hello", cwd=work, data=data)
        s = panto("sessions", cwd=work, data=data, agent=False)
    finally:
        os.environ.clear()
        os.environ.update(env)
    assert r.returncode == 2, r.stderr
    assert "postgresql:/db/panto" in r.stderr and "two slashes" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert r.stdout == ""
    assert s.returncode == 2, s.stderr
    assert "two slashes" in s.stderr and "Traceback" not in s.stderr
    assert sorted(p.name for p in work.iterdir()) == [".git"] + (
        [".panto"] if where == "project" else []
    )
    assert not list(tmp_path.rglob("*.jsonl"))
