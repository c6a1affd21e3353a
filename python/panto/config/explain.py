"""Rows for ``panto config``: every effective value, its TOML form and where
it came from.  No secret is ever included."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .layers import Origin, flatten
from .schema import EXT_LISTS, FIELD_KEYS, KEYS, dotted

if TYPE_CHECKING:
    from . import Config

__all__ = ["Raw", "explain", "toml_value"]

_SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|password", re.I)
#: ``scheme://user:PASSWORD@`` in a URL: the password is shown as ``<set>``.
_URL_PASSWORD = re.compile(r"(://[^/:@]*:)[^/@]*@")

#: Attributes whose rows are written out per entry (tables), not as one value.
_TABLES = ("tool_timeouts", "models")


class Raw(str):
    """A value printed as is (``<set>``)."""


def toml_value(v: Any) -> str:
    """``v`` as a TOML value (inline tables for mappings)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{dotted(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    return toml_value(str(v))


def explain(config: Config, env: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
    """``(dotted key, TOML value, origin)`` for every effective value, in
    documentation order.  API keys appear as ``<set>``/``<unset>``,
    secret-looking headers as ``<set>``."""
    env = os.environ if env is None else env
    rows: list[tuple[str, str, str]] = []

    def row(key: str, value: Any, origin: Origin | str | None = None) -> None:
        o = origin if origin is not None else config.origin(key)
        rows.append((key, value if isinstance(value, Raw) else toml_value(value), str(o)))

    row("model", config.model_spec)
    for k in KEYS:
        if k.attr is None or k.attr in _TABLES:
            continue
        v = getattr(config, k.attr)
        if v is not None:
            if k.attr == "session_url":
                v = Raw(toml_value(_URL_PASSWORD.sub(r"\1<set>@", v)))
            row(dotted(*k.parts), v)
    for name, t in sorted(config.tool_timeouts.items()):
        row(dotted(*FIELD_KEYS["tool_timeouts"], name), t)
    for name, table in sorted(config.models.items()):
        for field, v in table.items():
            row(dotted("models", name, field), v)
    _provider_rows(config, env, row)
    for el in config.extension_layers():
        for kind in EXT_LISTS:
            items = getattr(el, kind)
            if items:
                rows.append((dotted("extensions", kind), toml_value(list(items)), str(el.origin)))
    for origin, table in config.permission_layers():  # every layer's rules apply
        for kind in ("allow", "ask", "deny"):
            if table.get(kind):
                rows.append((dotted("permissions", kind), toml_value(list(table[kind])), origin))
    ext = config.data.get("extensions")
    if isinstance(ext, Mapping):
        for name, table in sorted(ext.items()):
            if name in EXT_LISTS or not isinstance(table, Mapping):
                continue
            for k2, v in flatten(table, ("extensions", name)):
                row(dotted(*k2), v)
    return rows


def _provider_rows(config: Config, env: Mapping[str, str], row: Any) -> None:
    for name in sorted(config.providers, key=lambda n: (n != config.provider, n)):
        p = config.providers[name]
        if p.mock:
            continue
        for attr in ("wire", "base_url", "api_key_env", "default_model"):
            v = getattr(p, attr)
            if v:
                k = dotted("providers", name, attr)
                row(k, v, config.origins.get(k, "built in"))
        key_k = dotted("providers", name, "api_key")
        if p.api_key:
            row(key_k, Raw("<set>"), config.origins.get(key_k))
        elif p.api_key_env and env.get(p.api_key_env):
            row(key_k, Raw("<set>"), f"env ({p.api_key_env})")
        elif p.requires_key:
            hint = f"set {p.api_key_env}" if p.api_key_env else "needs api_key_env"
            row(key_k, Raw("<unset>"), hint)
        for h, v in sorted(p.headers.items()):
            k = dotted("providers", name, "headers", h)
            shown: Any = Raw("<set>") if _SECRET_HEADER.search(h) else v
            row(k, shown, config.origins.get(k, "built in"))
