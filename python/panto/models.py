"""What panto knows about models: context window, largest answer, prices and
whether they take images.

A small built-in table (:data:`BUILTIN_MODELS`) plus the config's
``[models."provider/model"]`` tables, which add models or override single
fields.  Auto-compaction uses ``context_window``; the usage line and
``/cost`` use the prices (USD per million tokens).

    info = model_info(config)                 # the config's model
    info.context_window                       # 200000, or None when unknown
    info.cost(usage)                          # USD, or None without prices

Names match exactly first; then a dated or suffixed variant matches its base
(``claude-sonnet-4-5-20250929`` is ``claude-sonnet-4-5``); then the same
model name under another provider (an OpenAI-compatible proxy serving
``gpt-4.1``).  Prices change: override them in the config when they do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Config
    from .conversation import Usage

__all__ = ["BUILTIN_MODELS", "ModelInfo", "model_info"]


def _m(
    window: int,
    out: int,
    inp: float | None = None,
    outp: float | None = None,
    read: float | None = None,
    write: float | None = None,
) -> dict[str, Any]:
    d: dict[str, Any] = {"context_window": window, "max_output": out}
    for k, v in (
        ("input_price", inp),
        ("output_price", outp),
        ("cache_read_price", read),
        ("cache_write_price", write),
    ):
        if v is not None:
            d[k] = v
    return d


#: ``provider/model`` -> fields (prices in USD per million tokens; the
#: Anthropic cache write price is the 5-minute one).
BUILTIN_MODELS: dict[str, dict[str, Any]] = {
    "anthropic/claude-opus-4-1": _m(200_000, 32_000, 15.0, 75.0, 1.5, 18.75),
    "anthropic/claude-opus-4": _m(200_000, 32_000, 15.0, 75.0, 1.5, 18.75),
    "anthropic/claude-sonnet-4-5": _m(200_000, 64_000, 3.0, 15.0, 0.3, 3.75),
    "anthropic/claude-sonnet-4": _m(200_000, 64_000, 3.0, 15.0, 0.3, 3.75),
    "anthropic/claude-3-7-sonnet": _m(200_000, 64_000, 3.0, 15.0, 0.3, 3.75),
    "anthropic/claude-haiku-4-5": _m(200_000, 64_000, 1.0, 5.0, 0.1, 1.25),
    "anthropic/claude-3-5-haiku": _m(200_000, 8_192, 0.8, 4.0, 0.08, 1.0),
    "openai/gpt-5": _m(400_000, 128_000, 1.25, 10.0, 0.125),
    "openai/gpt-5-mini": _m(400_000, 128_000, 0.25, 2.0, 0.025),
    "openai/gpt-5-nano": _m(400_000, 128_000, 0.05, 0.4, 0.005),
    "openai/gpt-4.1": _m(1_047_576, 32_768, 2.0, 8.0, 0.5),
    "openai/gpt-4.1-mini": _m(1_047_576, 32_768, 0.4, 1.6, 0.1),
    "openai/gpt-4.1-nano": _m(1_047_576, 32_768, 0.1, 0.4, 0.025),
    "openai/gpt-4o": _m(128_000, 16_384, 2.5, 10.0, 1.25),
    "openai/gpt-4o-mini": _m(128_000, 16_384, 0.15, 0.6, 0.075),
    "openai/o3": _m(200_000, 100_000, 2.0, 8.0, 0.5),
    "openai/o4-mini": _m(200_000, 100_000, 1.1, 4.4, 0.275),
    # the offline mock: a window, no prices
    "mock/anthropic": _m(200_000, 64_000),
    "mock/openai": _m(200_000, 64_000),
}


@dataclass(frozen=True)
class ModelInfo:
    """One model's facts; a field is None when unknown."""

    provider: str
    model: str
    context_window: int | None = None
    max_output: int | None = None
    input_price: float | None = None
    output_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None
    #: whether the model takes images (None: unknown, they are sent); with
    #: ``False`` both wires send a note naming each image instead
    images: bool | None = None
    #: the table entry that matched (``provider/model``), None when none did
    source: str | None = None

    @property
    def priced(self) -> bool:
        return self.input_price is not None and self.output_price is not None

    def cost(self, usage: Usage) -> float | None:
        """USD for ``usage`` (None without prices).  Cache reads and writes
        cost the input price when the model has no cache prices."""
        if self.input_price is None or self.output_price is None:
            return None
        read = self.cache_read_price if self.cache_read_price is not None else self.input_price
        write = self.cache_write_price if self.cache_write_price is not None else self.input_price
        return (
            usage.input_tokens * self.input_price
            + usage.cache_read_tokens * read
            + usage.cache_write_tokens * write
            + usage.output_tokens * self.output_price
        ) / 1_000_000


_FIELDS = tuple(f.name for f in fields(ModelInfo) if f.name not in ("provider", "model", "source"))


def _match(table: Mapping[str, Mapping[str, Any]], provider: str, model: str) -> str | None:
    """The table key for ``provider/model``: exact; else the longest base
    name of a dated/suffixed variant under the same provider; else the same
    model name under another provider; else a base name under another."""
    if f"{provider}/{model}" in table:
        return f"{provider}/{model}"

    def base_len(key: str, same_provider: bool) -> int:
        kp, _, km = key.partition("/")
        if same_provider and kp != provider:
            return 0
        return len(km) if model.startswith((km + "-", km + "@")) else 0

    for same in (True, False):
        if not same:
            exact = [k for k in table if k.partition("/")[2] == model]
            if exact:
                return exact[0]
        best = max(table, key=lambda k: base_len(k, same), default=None)
        if best is not None and base_len(best, same):
            return best
    return None


@lru_cache(maxsize=256)
def _builtin_match(provider: str, model: str) -> str | None:
    """``_match`` in the built-in table (fixed: cached, as every turn asks
    twice, when it builds the provider and for its context window)."""
    return _match(BUILTIN_MODELS, provider, model)


@lru_cache(maxsize=256)
def _builtin_info(provider: str, model: str) -> ModelInfo:
    """``model_info`` without ``[models]`` tables of the config's own (the
    usual case; every turn asks twice): the built-in table's, made once."""
    source = _builtin_match(provider, model)
    values = BUILTIN_MODELS[source] if source is not None else {}
    return ModelInfo(provider, model, source=source, **{k: values.get(k) for k in _FIELDS})


def model_info(config: Config | None = None, spec: str | None = None) -> ModelInfo:
    """What is known about ``spec`` (``provider/model``; default the
    config's model), the config's ``[models]`` tables over the built-in
    table."""
    if spec is None:
        if config is None:
            raise ValueError("model_info needs a config or a provider/model")
        spec = config.model_spec
    provider, _, model = spec.partition("/")
    overrides: Mapping[str, Mapping[str, Any]] = config.models if config is not None else {}
    builtin = _builtin_info(provider, model)
    own = _match(overrides, provider, model) if overrides else None
    if own is None:
        return builtin
    mine = overrides[own]
    return replace(builtin, source=own, **{k: mine[k] for k in _FIELDS if k in mine})
