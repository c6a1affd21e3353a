"""The model table (panto.models) and its config override."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.config import write

from panto.config import Config
from panto.conversation import Usage
from panto.models import BUILTIN_MODELS, model_info


def test_builtin_lookup_exact_dated_and_other_provider() -> None:
    assert model_info(spec="anthropic/claude-sonnet-4-5").context_window == 200_000
    dated = model_info(spec="anthropic/claude-sonnet-4-5-20250929")
    assert dated.source == "anthropic/claude-sonnet-4-5" and dated.input_price == 3.0
    assert model_info(spec="openai/gpt-4.1-mini-2025-04-14").source == "openai/gpt-4.1-mini"
    assert model_info(spec="myproxy/gpt-4.1").source == "openai/gpt-4.1"
    unknown = model_info(spec="ollama/qwen3")
    assert unknown.context_window is None and unknown.cost(Usage(10)) is None
    assert unknown.source is None


def test_cost_counts_cache_reads_and_writes() -> None:
    info = model_info(spec="anthropic/claude-sonnet-4-5")
    usage = Usage(input_tokens=1_000_000, cache_read_tokens=1_000_000, output_tokens=100_000)
    assert info.cost(usage) == pytest.approx(3.0 + 0.3 + 1.5)
    assert info.cost(Usage(cache_write_tokens=1_000_000)) == pytest.approx(3.75)
    # no cache prices: cache tokens cost the input price
    assert model_info(spec="openai/gpt-4.1").cost(Usage(cache_write_tokens=10**6)) == 2.0


def test_config_overrides_and_adds_models(project: Path) -> None:
    write(
        project / ".panto" / "config.toml",
        """
        [models."anthropic/claude-sonnet-4-5"]
        context_window = 1000000
        [models."local/qwen3-coder"]
        context_window = 32768
        input_price = 0
        output_price = 0
        """,
    )
    c = Config.load(env={}, cwd=project, model="anthropic/claude-sonnet-4-5")
    info = model_info(c)
    assert info.context_window == 1_000_000 and info.output_price == 15.0
    q = model_info(c, "local/qwen3-coder")
    assert (q.context_window, q.cost(Usage(5, output_tokens=5))) == (32768, 0.0)
    assert "anthropic/claude-sonnet-4-5" in BUILTIN_MODELS  # the table itself is unchanged
    assert BUILTIN_MODELS["anthropic/claude-sonnet-4-5"]["context_window"] == 200_000


def test_the_builtin_table_is_searched_once_per_model() -> None:
    """Every turn asks twice (its provider, its context window): the table
    search, most of a turn start's cost before the request, is cached, and
    so is the answer when the config has no ``[models]`` table of its own."""
    from panto import models

    models._builtin_match.cache_clear()  # noqa: SLF001 - the search count is the point
    models._builtin_info.cache_clear()  # noqa: SLF001
    infos = [model_info(spec="openai/gpt-4.1-mini-2025-04-14") for _ in range(3)]
    assert {i.source for i in infos} == {"openai/gpt-4.1-mini"}
    assert models._builtin_match.cache_info().misses == 1  # noqa: SLF001
    assert infos[0] is infos[1] is infos[2]
    own = Config(models={"openai/gpt-4.1-mini": {"context_window": 7}})
    assert model_info(own, "openai/gpt-4.1-mini-2025-04-14").context_window == 7
    assert model_info(spec="openai/gpt-4.1-mini-2025-04-14") is infos[0]  # (unchanged)
