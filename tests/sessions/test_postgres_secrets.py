"""The database password never reaches an error message or a log record."""

from __future__ import annotations

import logging

import pytest

from panto.errors import SessionError
from panto.sessions import open_backend
from panto.sessions.postgres import safe_url

SECRET = "pw-Sup3rSecret-4242"


def test_safe_url_hides_the_password() -> None:
    assert safe_url(f"postgresql://ada:{SECRET}@db.example:5433/panto?sslmode=require") == (
        "postgresql://ada:***@db.example:5433/panto?sslmode=require"
    )
    assert safe_url("postgresql://ada@db/panto") == "postgresql://ada@db/panto"


def test_a_failed_connection_names_no_password(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("psycopg", reason="needs the postgres extra (psycopg)")
    url = f"postgresql://ada:{SECRET}@127.0.0.1:1/panto?connect_timeout=3"
    with caplog.at_level(logging.DEBUG), pytest.raises(SessionError) as exc:
        open_backend(url)
    text = str(exc.value)
    assert SECRET not in text and "ada:***@127.0.0.1:1" in text
    assert all(SECRET not in r.getMessage() for r in caplog.records)


def test_a_bad_password_names_no_password(postgres_url: str) -> None:
    """A real server that refuses the login (the role does not exist)."""
    url = postgres_url.replace("postgresql://postgres@", f"postgresql://nobody:{SECRET}@")
    with pytest.raises(SessionError) as exc:
        open_backend(url)
    assert SECRET not in str(exc.value)
    assert "nobody" in str(exc.value)


def test_an_unknown_store_url_names_no_password() -> None:
    with pytest.raises(SessionError) as exc:
        open_backend(f"mysql://ada:{SECRET}@db/panto")
    assert SECRET not in str(exc.value) and "sqlite:///path or postgresql://" in str(exc.value)
