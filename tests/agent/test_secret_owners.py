"""Secrets are scrubbed per provider: a key is in the redaction set while a
provider built with it lives, and leaves it with the provider, so a process
serving many tenants neither keeps every key it ever saw nor scans them all
on every log record."""

from __future__ import annotations

import gc

from panto.config import Config
from panto.providers import make_provider
from panto.providers.transport import redact, register_secrets


def provider(key: str) -> object:
    return make_provider(
        Config(provider="anthropic", model="m", base_url="http://127.0.0.1:9", api_key=key)
    )


def test_a_providers_key_is_scrubbed_while_it_lives() -> None:
    a, b = provider("alpha-key-0123456789"), provider("bravo-key-9876543210")
    line = "a alpha-key-0123456789 b bravo-key-9876543210"
    assert redact(line) == "a *** b ***"
    del a
    gc.collect()
    assert redact(line) == "a alpha-key-0123456789 b ***"
    assert b is not None


def test_two_keys_with_one_prefix_are_both_scrubbed_whole() -> None:
    """(Scrubbing one key's prefix first used to cut the other short and
    leave its tail in the text.)"""
    a, b = provider("sk-tenant-a-0123456789"), provider("sk-tenant-b-9876543210")
    assert redact("a sk-tenant-a-0123456789 b sk-tenant-b-9876543210") == "a *** b ***"
    assert a is not None and b is not None


def test_the_set_does_not_grow_with_every_key_seen() -> None:
    from panto.providers import transport

    before = len(transport._secrets_snapshot)  # noqa: SLF001 - the size is the point
    for i in range(200):
        p = provider(f"sk-short-lived-{i:06d}-abcdef")
        assert redact(f"x sk-short-lived-{i:06d}-abcdef") == "x ***"
        del p
    gc.collect()
    assert len(transport._secrets_snapshot) <= before + 1  # noqa: SLF001


def test_a_secret_without_owner_stays() -> None:
    register_secrets(["sk-forever-0123456789"])
    gc.collect()
    assert redact("sk-forever-0123456789") == "***"


def test_an_owner_that_registers_again_keeps_its_first_secrets() -> None:
    """(An extension's provider registers the key its ``prepare`` returned
    on top of its own.)"""

    class Owner:
        pass

    owner = Owner()
    register_secrets(["first-secret-0123456789"], owner=owner)
    register_secrets(["second-secret-0123456789"], owner=owner)
    assert redact("first-secret-0123456789 second-secret-0123456789") == "*** ***"
    del owner
    gc.collect()
    assert redact("first-secret-0123456789") == "first-secret-0123456789"


def test_a_key_shared_by_providers_stays_until_the_last_one_goes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Sessions of one tenant share a key: the providers after the first
    cost no rebuild of the redaction set (one per turn grew with the
    providers alive), and the key is scrubbed until the last one goes."""
    from panto.providers import transport

    key = "sk-shared-tenant-0123456789"
    first = provider(key)
    rebuilds = []
    real = transport._rebuild_snapshot  # noqa: SLF001 - the rebuild count is the point
    monkeypatch.setattr(transport, "_rebuild_snapshot", lambda: rebuilds.append(1) or real())
    others = [provider(key) for _ in range(50)]
    assert rebuilds == []
    del first
    gc.collect()
    assert redact(f"x {key}") == "x ***"
    del others
    gc.collect()
    assert redact(f"x {key}") == f"x {key}"
    assert len(rebuilds) == 1
