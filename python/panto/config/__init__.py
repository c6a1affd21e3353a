"""Configuration: layered TOML files, the environment and command-line flags.

Layers, low to high precedence:

1. ``base`` -- ``panto/base_config.toml``, shipped in the package (the defaults);
2. ``user`` -- ``$XDG_CONFIG_HOME/panto/config.toml`` (``~/.config/panto/config.toml``);
3. ``project`` -- ``.panto/config.toml`` in the nearest ``.panto`` directory
   walking up from the working directory, stopping at the repository root
   (the directory holding ``.git``), the home directory or ``/``;
4. ``env`` -- ``PANTO_MODEL``, ``PANTO_BASE_URL``, ... (see :data:`ENV_VARS`);
5. ``cli`` -- overrides the command line passes to :meth:`Config.load`.

Tables merge key by key; a scalar or list set by a higher layer replaces the
lower one -- except ``extensions.allow/deny/rocks/paths/rock_servers``, which
every layer keeps (seed 002: the policy is built from all layers' rules; rocks
and paths load at the precedence of the layer listing them).  Every key is
validated: an unknown key or a value of the wrong type is a
:class:`~panto.errors.ConfigError` naming the file, the dotted key and what
was expected.  Every effective value remembers the layer it came from
(:meth:`Config.origin`); ``panto config`` prints them.

Models are named ``provider/model`` (``anthropic/claude-sonnet-4-5``,
``openai/gpt-4.1``, ``ollama/qwen3``, ``mock/anthropic``).  A provider is an
entry of ``Config.providers``: a wire, a base URL, where its key comes from,
extra headers and a default model.  API keys are never part of ``repr()``
and never printed.

``Config(provider=..., model=...)`` still builds a config directly (no
files); ``Config.load()`` is the layered one.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..paths import user_config_dir
from .layers import (
    BASE_CONFIG,
    DEFAULT_ORIGIN,
    LAYERS,
    ConfigLayer,
    ExtensionLayer,
    Origin,
    ProjectTrust,
    base_layer,
    cli_layer,
    env_layer,
    find_project_dir,
    find_repo_root,
    get_key,
    merge,
    project_config_file,
    project_trust,
    read_layer,
    resolve_dir,
    user_config_file,
)
from .schema import (
    ENV_VARS,
    EXT_LISTS,
    FIELD_KEYS,
    PROVIDER_WIRES,
    SCHEMA,
    URL_EXPECTED,
    dotted,
    split_key,
    url_problem,
)

if TYPE_CHECKING:
    from ..extensions.policy import Policy

__all__ = [
    "BASE_CONFIG",
    "BUILTIN_PROVIDERS",
    "ENV_VARS",
    "FIELD_KEYS",
    "LAYERS",
    "SCHEMA",
    "PROVIDER_WIRES",
    "Config",
    "ConfigLayer",
    "ExtensionLayer",
    "Origin",
    "ProjectTrust",
    "ProviderConfig",
    "dotted",
    "find_project_dir",
    "mock_wire",
    "project_config_file",
    "read_layer",
    "split_key",
    "split_model",
    "trusted_project_dir",
    "user_config_dir",
    "user_config_file",
]


@dataclass(frozen=True)
class ProviderConfig:
    """One provider.  ``wire`` is ``openai-chat``, ``anthropic-messages`` or
    ``openai-responses``; OpenAI-style base URLs include ``/v1``, Anthropic's
    do not.

    ``compat_wire``: the wire for a base URL other than ``base_url`` as
    built in (the ``openai`` provider speaks the Responses API to OpenAI and
    chat completions to the OpenAI-compatible servers its base URL may be
    pointed at); setting ``wire`` in a config clears it.

    ``max_tokens_field`` is the request key that carries the output limit for
    ``openai-chat``: ``max_completion_tokens`` for api.openai.com (its newer
    models reject ``max_tokens``), ``max_tokens`` for compatible servers (vLLM,
    Ollama, llama.cpp, DeepSeek) which all accept it.
    """

    name: str
    wire: str
    base_url: str
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict)
    default_model: str = ""
    requires_key: bool = True
    max_tokens_field: str = "max_tokens"
    mock: bool = False  # served by panto.testing in-process (offline)
    compat_wire: str = ""
    home_base_url: str = ""  # the built-in base_url compat_wire is measured against
    #: registered by an extension (``panto.provider.register``; panto.config.ext_providers)
    extension: bool = False


#: The second half of an unknown provider's error.
NOT_REGISTERED = "provider {name!r} is not registered by any loaded extension either"


def extension_provider_config(name: str) -> ProviderConfig | None:
    """The ``ProviderConfig`` of a provider an extension registered
    (``panto.provider.register``), or None."""
    from .ext_providers import get

    p = get(name)
    if p is None:
        return None
    return ProviderConfig(
        p.name,
        p.wire,
        p.base_url,
        requires_key=False,
        default_model=p.default_model,
        extension=True,
    )


BUILTIN_PROVIDERS: dict[str, ProviderConfig] = {
    "openai": ProviderConfig(
        "openai",
        "openai-responses",
        "https://api.openai.com/v1",
        api_key_env="OPENAI_API_KEY",
        default_model="gpt-4.1",
        max_tokens_field="max_completion_tokens",
        compat_wire="openai-chat",
        home_base_url="https://api.openai.com/v1",
    ),
    "anthropic": ProviderConfig(
        "anthropic",
        "anthropic-messages",
        "https://api.anthropic.com",
        api_key_env="ANTHROPIC_API_KEY",
        default_model="claude-sonnet-4-5",
    ),
    "ollama": ProviderConfig(
        "ollama",
        "openai-chat",
        "http://127.0.0.1:11434/v1",
        requires_key=False,
        default_model="qwen3",
    ),
    "mock": ProviderConfig(
        "mock",
        "anthropic-messages",
        "",
        requires_key=False,
        default_model="anthropic",
        mock=True,
    ),
}


def split_model(spec: str) -> tuple[str, str]:
    """``"anthropic/claude-x"`` -> ``("anthropic", "claude-x")``; a bare
    ``"openai"`` (a provider name) -> ``("openai", "")``."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("empty model name: expected provider/model")
    provider, sep, model = spec.partition("/")
    if not sep:
        return provider, ""
    return provider, model


# --------------------------------------------------------------------------
# the config


def _default(attr: str) -> Any:
    """A field whose default is the base layer's value for ``attr``'s key."""
    parts = FIELD_KEYS[attr]

    def factory() -> Any:
        v = get_key(base_layer().data, parts)
        return dict(v) if isinstance(v, dict) else v

    return field(default_factory=factory)


@dataclass
class Config:
    """Everything an ``Agent`` needs.  Construct directly, e.g.
    ``Config(provider="anthropic", model="claude-sonnet-4-5")`` or
    ``Config(model="openai/gpt-4.1")``, or use ``Config.load()``.

    Defaults are those of the shipped base layer (``base_config.toml``), also
    when constructed directly: that file is the one place they are written.
    The dotted key of each attribute is :data:`FIELD_KEYS`; docs/config.md
    says what each does.
    """

    provider: str = "mock"
    model: str = ""
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    headers: dict[str, str] = field(default_factory=dict)
    max_tokens: int = _default("max_tokens")
    #: Anthropic extended thinking: ``thinking: {type: enabled, budget_tokens}``.
    thinking_budget: int | None = None
    #: OpenAI-chat ``reasoning_effort`` (``minimal``/``low``/``medium``/``high``).
    reasoning_effort: str | None = None
    connect_timeout: float = _default("connect_timeout")
    read_timeout: float = _default("read_timeout")
    #: Seconds from sending a request to the first byte of the response.
    first_byte_timeout: float | None = _default("first_byte_timeout")
    #: Seconds without progress (pings and comments are not) in a response.
    idle_timeout: float | None = _default("idle_timeout")
    #: The longest wait before a retry (``Retry-After`` included).
    retry_wait_max: float | None = _default("retry_wait_max")
    max_retries: int = _default("max_retries")
    retry_base_delay: float = _default("retry_base_delay")
    retry_max_delay: float = _default("retry_max_delay")
    #: Tool rounds (tool dispatches) per turn before the turn stops.
    max_tool_rounds: int = _default("max_tool_rounds")
    #: Seconds a tool may run when its decl does not say; None = no limit.
    tool_timeout: float | None = None
    #: Per-tool timeouts (``[tools.timeouts]``), tool name -> seconds.
    tool_timeouts: dict[str, float] = field(default_factory=dict)
    #: Replaces the built-in base of the system prompt (panto.system_prompt).
    system_prompt: str | None = None
    #: Appended to the system prompt.
    append_system_prompt: str | None = None
    #: Session files: ``fsync`` (default), ``flush`` or ``none``.
    session_durability: str = _default("session_durability")
    #: Where sessions are stored (None: ``$PANTO_HOME/sessions``).
    session_dir: str | None = None
    #: The session backend: ``jsonl``, ``sqlite`` or ``postgres``.
    session_store: str = _default("session_store")
    #: The database of the ``sqlite``/``postgres`` backends (a URL).
    session_url: str | None = field(default=None, repr=False)  # may hold a password
    #: The SQLite database file.
    session_path: str | None = None
    #: ``[permissions] mode``: default, accept-edits, plan, dont-ask or bypass.
    permission_mode: str = _default("permission_mode")
    #: Prompt caching (Anthropic ``cache_control``, OpenAI ``prompt_cache_key``).
    cache_enabled: bool = _default("cache_enabled")
    #: Anthropic cache lifetime: ``5m`` or ``1h``.
    cache_ttl: str = _default("cache_ttl")
    #: Compact the conversation when it fills ``compaction_threshold`` of the
    #: model's context window (keeping ``compaction_reserve_tokens`` free).
    compaction_auto: bool = _default("compaction_auto")
    compaction_threshold: float = _default("compaction_threshold")
    compaction_reserve_tokens: int = _default("compaction_reserve_tokens")
    #: ``[mcp.servers.NAME]``: MCP servers whose tools the agent offers (panto.mcp).
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Agent Skills (panto.skills): list them in the system prompt, and
    #: more directories to search.
    skills_enabled: bool = _default("skills_enabled")
    skill_paths: list[str] = field(default_factory=list)
    #: ``[sandbox]``: the OS sandbox of the processes tools start (panto.policy.sandbox)
    sandbox_mode: str = _default("sandbox_mode")
    sandbox_writable_roots: list[str] = _default("sandbox_writable_roots")
    sandbox_network: bool = _default("sandbox_network")
    sandbox_allow_git_writes: bool = _default("sandbox_allow_git_writes")
    sandbox_backend: str = _default("sandbox_backend")
    #: ``[models."provider/model"]`` overrides of the model table (panto.models).
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    providers: dict[str, ProviderConfig] = field(
        default_factory=lambda: dict(BUILTIN_PROVIDERS), repr=False
    )
    #: The layers this config was loaded from, low to high (empty when built
    #: directly), the directory it was loaded for, and where each effective
    #: value came from (dotted key -> origin).
    layers: tuple[ConfigLayer, ...] = field(default=(), repr=False, compare=False)
    cwd: str | None = field(default=None, repr=False, compare=False)
    origins: dict[str, Origin] = field(default_factory=dict, repr=False, compare=False)
    #: The merged TOML tables (what ``panto.config`` shows Lua, minus secrets).
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: The project (``.panto/``) this config was loaded for, whether it is
    #: trusted and what of it was ignored; None: no project, or built directly.
    project: ProjectTrust | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Accept ``model="provider/model"`` with the default provider.
        if "/" in self.model:
            provider, model = split_model(self.model)
            if provider in self.providers:
                self.provider, self.model = provider, model
        if self.provider not in self.providers:
            ext = extension_provider_config(self.provider)
            if ext is None:
                known = ", ".join(sorted(self.providers))
                raise ConfigError(
                    f"unknown provider {self.provider!r} (known: {known}); "
                    f"{NOT_REGISTERED.format(name=self.provider)}"
                )
            self.providers = {**self.providers, ext.name: ext}
        if not self.model:
            self.model = self.providers[self.provider].default_model

    # -- construction -----------------------------------------------------

    @classmethod
    def load(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        overrides: Mapping[str, Any] | None = None,
        base_file: Path | None = None,
        user_file: Path | None = None,
        project_file: Path | None = None,
        trust: bool | None = None,
        **kwargs: Any,
    ) -> Config:
        """The layered config for ``cwd`` (default: the working directory).

        Layers, low to high: base (shipped), user
        (``$XDG_CONFIG_HOME/panto/config.toml``), project
        (``.panto/config.toml``, see :func:`find_project_dir`), the
        environment (:data:`ENV_VARS`; ``env`` defaults to ``os.environ``
        and also supplies ``XDG_CONFIG_HOME``/``HOME`` for the user layer),
        then ``overrides`` -- dotted keys such as ``{"model": "openai/gpt-4.1",
        "tools.timeout": 30, "extensions.deny": ["std.bash"]}``, validated
        like the files.  ``kwargs`` are overrides by ``Config`` attribute name
        (``max_tokens=``, ``connect_timeout=``, ``provider=``, ``api_key=``...).

        An untrusted project's layer applies without the keys of
        :data:`~panto.config.schema.TRUST_KEYS` (``config.project`` says what
        was ignored).  ``trust`` decides instead of the trust store
        (:mod:`panto.policy.trust`): True applies the whole project layer,
        False treats the project as untrusted.

        Without ``model`` in any layer the default is Anthropic when
        ``ANTHROPIC_API_KEY`` is set, else OpenAI when ``OPENAI_API_KEY`` is
        set, else the offline ``mock`` provider.  Raises ``ConfigError``
        naming the file (or variable), the key and what was expected.
        """
        env = os.environ if env is None else env
        cwd_s = os.fspath(cwd) if cwd is not None else os.getcwd()
        layers: list[ConfigLayer] = []
        base = base_layer() if base_file is None else read_layer("base", base_file)
        if base is not None:
            layers.append(base)
        user = read_layer("user", user_file or user_config_file(env))
        if user is not None:
            layers.append(user)
        pfile = project_file or project_config_file(cwd_s, env)
        project: ProjectTrust | None = None
        if pfile is not None:
            proj = read_layer("project", pfile)
            project, proj = project_trust(pfile.parent, proj, env, trust)
            if proj is not None:
                if not project.trusted:
                    project, proj = _drop_orphan_model(project, proj, layers)
                layers.append(proj)
        else:  # no .panto/: a repository's .mcp.json makes it a project too
            root = find_repo_root(cwd_s, env)
            if root is not None and (root / ".mcp.json").is_file():
                project, _ = project_trust(root / ".panto", None, env, trust)
        env_l = env_layer(env)
        if env_l is not None:
            layers.append(env_l)
        ov: dict[str, Any] = dict(overrides or {})
        extra: dict[str, Any] = {}
        provider_kw = kwargs.pop("provider", None)
        for name, value in kwargs.items():
            if name in FIELD_KEYS:
                if value is not None:
                    ov[dotted(*FIELD_KEYS[name])] = value
            elif name == "model":
                if value:
                    ov["model"] = value
            elif name in _FIELD_NAMES:
                extra[name] = value
            else:
                raise ConfigError(f"Config.load: unknown setting {name!r}")
        if provider_kw:
            model = ov.get("model") or ""
            if not model:
                ov["model"] = provider_kw
            elif "/" not in model or split_model(model)[0] != provider_kw:
                ov["model"] = f"{provider_kw}/{model}"
        cli = cli_layer(ov)
        if cli is not None:
            layers.append(cli)
        config = cls._from_layers(layers, env, cwd_s, extra)
        config.project = project
        return config

    @classmethod
    def _from_layers(
        cls,
        layers: Sequence[ConfigLayer],
        env: Mapping[str, str],
        cwd: str,
        extra: Mapping[str, Any] | None = None,
    ) -> Config:
        merged: dict[str, Any] = {}
        origins: dict[str, Origin] = {}
        for layer in layers:
            merge(merged, layer.data, origins, layer.origin, (), layer.sources)
        kw: dict[str, Any] = {}
        for attr, parts in FIELD_KEYS.items():
            v = get_key(merged, parts)
            if v is None:
                continue
            if attr in ("session_dir", "session_path"):
                v = resolve_dir(v, origins.get(dotted(*parts)), cwd)
            kw[attr] = dict(v) if isinstance(v, dict) else v
        providers = _build_providers(merged.get("providers") or {}, origins)
        kw["providers"] = providers
        spec = merged.get("model")
        if spec:
            provider, model = split_model(spec)
            if provider not in providers:
                o = origins.get("model", DEFAULT_ORIGIN)
                where = o.source or o.layer
                known = ", ".join(sorted(providers))
                raise ConfigError(
                    f"{where}: model: unknown provider {provider!r} in {spec!r} "
                    f"(expected provider/model with a provider of: {known})"
                )
            kw["provider"], kw["model"] = provider, model
        else:
            if env.get("ANTHROPIC_API_KEY"):
                kw["provider"], why = "anthropic", "ANTHROPIC_API_KEY is set"
            elif env.get("OPENAI_API_KEY"):
                kw["provider"], why = "openai", "OPENAI_API_KEY is set"
            else:
                kw["provider"], why = "mock", "no model configured and no API key set"
            origins["model"] = Origin("default", why)
        kw.update(extra or {})
        return cls(layers=tuple(layers), cwd=cwd, origins=origins, data=merged, **kw)

    def with_model(self, spec: str) -> Config:
        """A copy using ``provider/model`` (or a bare provider name, with its
        default model).  A base URL / key override set for another provider
        is dropped when the provider changes."""
        provider, model = split_model(spec)
        if provider not in self.providers and extension_provider_config(provider) is None:
            known = ", ".join(sorted(self.providers))
            raise ConfigError(
                f"unknown provider {provider!r} in {spec!r} (known: {known}); "
                f"{NOT_REGISTERED.format(name=provider)}"
            )
        changes: dict[str, Any] = {"provider": provider, "model": model}
        if provider != self.provider:
            changes.update(base_url=None, api_key=None)
        return dataclasses.replace(self, **changes)

    # -- resolution ---------------------------------------------------------

    @property
    def model_spec(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def provider_config(self) -> ProviderConfig:
        return self.providers[self.provider]

    @property
    def wire(self) -> str:
        p = self.provider_config
        if p.mock:
            return mock_wire(self.model)
        if p.compat_wire and self.resolve_base_url() != p.home_base_url.rstrip("/"):
            return p.compat_wire
        return p.wire

    def resolve_base_url(self) -> str:
        """The base URL; ConfigError when it is not an http(s) URL (a typo
        must not become seconds of connection retries)."""
        url = (self.base_url or self.provider_config.base_url).rstrip("/")
        p = self.provider_config
        # (mock and event-producing extension providers get theirs at make_provider)
        problem = None if p.mock or (p.extension and not url) else url_problem(url)
        if problem:
            raise ConfigError(f"base_url: expected {URL_EXPECTED}, got {url!r} ({problem})")
        return url

    def resolve_api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key from the config, else the provider's env variable.  Raises
        ``ConfigError`` (naming the variable, never a value) when required and
        missing."""
        p = self.provider_config
        key = self.api_key or p.api_key
        if not key and p.api_key_env:
            key = (os.environ if env is None else env).get(p.api_key_env) or None
        if not key and p.requires_key:
            where = f" (set {p.api_key_env})" if p.api_key_env else ""
            raise ConfigError(f"no API key for provider {p.name!r}{where}")
        return key

    def resolve_headers(self) -> dict[str, str]:
        return {**self.provider_config.headers, **self.headers}

    # -- where values came from -------------------------------------------

    def origin(self, key: str) -> Origin:
        """The layer a dotted key's effective value came from (``default``
        when no layer set it)."""
        return self.origins.get(key, DEFAULT_ORIGIN)

    def layer(self, name: str) -> ConfigLayer | None:
        for layer in self.layers:
            if layer.name == name:
                return layer
        return None

    # -- extensions ---------------------------------------------------------

    def extension_layers(self) -> list[ExtensionLayer]:
        """Each layer's ``[extensions]`` lists, low to high."""
        out: list[ExtensionLayer] = []
        for layer in self.layers:
            ext = layer.data.get("extensions")
            if not isinstance(ext, Mapping):
                continue
            out.append(
                ExtensionLayer(
                    layer.name,
                    layer.origin,
                    **{k: tuple(ext.get(k, ())) for k in EXT_LISTS},
                )
            )
        return out

    def extension_policy(self, deny: Sequence[str] = (), allow: Sequence[str] = ()) -> Policy:
        """The layered allow/deny policy; ``deny``/``allow`` (e.g. ``--deny``
        flags) form one more layer on top, ``cli``."""
        from ..extensions.policy import LayerPolicy, Policy

        lps = [
            LayerPolicy(el.layer, list(el.allow), list(el.deny), origin=str(el.origin.source))
            for el in self.extension_layers()
            if el.allow or el.deny
        ]
        if deny or allow:
            lps.append(LayerPolicy("cli", list(allow), list(deny), origin="command line"))
        return Policy(lps)

    def extension_rocks(self) -> list[tuple[str, str]]:
        """``(layer, dependency string)`` for every ``extensions.rocks`` entry."""
        return [(el.layer, spec) for el in self.extension_layers() for spec in el.rocks]

    def extension_paths(self, cwd: str | os.PathLike[str] | None = None) -> list[tuple[str, Path]]:
        """``(layer, directory)`` for every ``extensions.paths`` entry; a
        relative path resolves against ``cwd`` (default: the directory the
        config was loaded for)."""
        base = Path(cwd if cwd is not None else (self.cwd or os.getcwd()))
        out: list[tuple[str, Path]] = []
        for el in self.extension_layers():
            for p in el.paths:
                q = Path(os.path.expanduser(p))
                out.append((el.layer, q if q.is_absolute() else base / q))
        return out

    @property
    def rock_servers(self) -> list[str]:
        """``extensions.rock_servers`` of all layers (low to high, duplicates
        dropped); a relative directory resolves against the file listing it."""
        out: list[str] = []
        for el in self.extension_layers():
            for s in el.rock_servers:
                if "://" not in s:
                    s = resolve_dir(s, el.origin, self.cwd or os.getcwd())
                if s not in out:
                    out.append(s)
        return out

    def permission_layers(self) -> list[tuple[str, dict[str, Any]]]:
        """Each layer's ``[permissions]`` table, low to high, with where it
        came from (``user (PATH)``): every layer's allow/ask/deny rules are
        kept (panto.policy.permissions)."""
        out: list[tuple[str, dict[str, Any]]] = []
        for layer in self.layers:
            t = layer.data.get("permissions")
            if isinstance(t, Mapping) and any(t.get(k) for k in ("allow", "ask", "deny")):
                out.append((str(layer.origin), dict(t)))
        return out

    def permission_directories(self) -> list[str]:
        """``additional_directories`` of every layer, resolved against the
        file listing them."""
        out: list[str] = []
        for layer in self.layers:
            t = layer.data.get("permissions")
            for d in (t.get("additional_directories") or ()) if isinstance(t, Mapping) else ():
                p = resolve_dir(d, layer.origin, self.cwd or os.getcwd())
                if p not in out:
                    out.append(p)
        return out

    def extension_settings(self, name: str) -> dict[str, Any]:
        """``[extensions."NAME"]``, merged over the layers (what ``activate``
        receives)."""
        ext = self.data.get("extensions")
        v = ext.get(name) if isinstance(ext, Mapping) else None
        return dict(v) if isinstance(v, Mapping) else {}

    def lua_view(self) -> dict[str, Any]:
        """What extensions see as ``panto.config``: the merged tables with the
        effective model, without API keys, provider headers or the session
        database URL (it may hold a password)."""
        out: dict[str, Any] = {k: v for k, v in self.data.items() if k != "providers"}
        if isinstance(out.get("session"), dict) and "url" in out["session"]:
            out["session"] = {k: v for k, v in out["session"].items() if k != "url"}
        out["model"] = self.model_spec
        out["provider"] = self.provider
        tools = dict(out.get("tools") or {})
        if self.tool_timeout is not None:
            tools["timeout"] = self.tool_timeout
        if self.tool_timeouts:
            tools["timeouts"] = dict(self.tool_timeouts)
        out["tools"] = tools
        return out

    # -- `panto config` ------------------------------------------------------

    def explain(self, env: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
        """``(dotted key, TOML value, origin)`` for every effective value, in
        documentation order (:func:`panto.config.explain.explain`)."""
        from .explain import explain

        return explain(self, env)


_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(Config))


def _build_providers(
    tables: Mapping[str, Mapping[str, Any]], origins: Mapping[str, Origin]
) -> dict[str, ProviderConfig]:
    providers = dict(BUILTIN_PROVIDERS)
    for name, t in tables.items():
        base = providers.get(name)
        if base is None:
            missing = [k for k in ("wire", "base_url") if k not in t]
            if missing:
                o = next(
                    (
                        o
                        for k, o in origins.items()
                        if k.startswith(dotted("providers", name) + ".")
                    ),
                    DEFAULT_ORIGIN,
                )
                need = " and ".join(missing)
                raise ConfigError(
                    f"{o.source or o.layer}: {dotted('providers', name)}: a new provider needs "
                    f'{need} (expected wire = "openai-chat", "anthropic-messages" or "openai-responses" and '
                    f"base_url = a URL)"
                )
            base = ProviderConfig(name, t["wire"], t["base_url"], requires_key=False)
            if "api_key_env" in t or "api_key" in t:
                base = dataclasses.replace(base, requires_key=True)
        changes = {k: v for k, v in t.items() if k != "headers"}
        if "wire" in t:
            changes["compat_wire"] = ""  # the wire asked for, whatever the URL
        if "headers" in t:
            changes["headers"] = {**base.headers, **t["headers"]}
        providers[name] = dataclasses.replace(base, **changes)
    return providers


def _drop_orphan_model(
    project: ProjectTrust, proj: ConfigLayer, lower: Sequence[ConfigLayer]
) -> tuple[ProjectTrust, ConfigLayer]:
    """An untrusted project's ``model`` naming a provider only its own
    (ignored) ``[providers]`` define is ignored too: the model would not
    resolve."""
    spec = proj.data.get("model")
    if not isinstance(spec, str):
        return project, proj
    name = split_model(spec)[0]
    known = set(BUILTIN_PROVIDERS)
    for layer in lower:
        known.update(layer.data.get("providers") or {})
    if name in known:
        return project, proj
    data = {k: v for k, v in proj.data.items() if k != "model"}
    why = f"uses provider {name!r}, which the project defines"
    project = dataclasses.replace(project, ignored=(("model", why), *project.ignored))
    return project, ConfigLayer(proj.name, proj.origin, data, proj.sources)


def trusted_project_dir(
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    config: Config | None = None,
) -> Path | None:
    """The ``.panto`` directory of ``cwd`` when its extensions and tools may
    load: None when there is none or it is not trusted.  ``config`` (loaded
    for that project) answers when it can, else the trust store does."""
    d = find_project_dir(cwd, env)
    if d is None:
        return None
    if config is not None and config.project is not None and config.project.dir == d:
        return d if config.project.trusted else None
    from ..policy.trust import is_trusted

    return d if is_trusted(d.parent, env) else None


def mock_wire(model: str) -> str:
    """The wire of a ``mock/...`` model: names containing ``openai`` use the
    OpenAI chat wire, everything else the Anthropic messages wire."""
    return "openai-chat" if "openai" in model.lower() else "anthropic-messages"
