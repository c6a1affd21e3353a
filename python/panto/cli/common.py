"""What the ``panto`` commands share: loading the configuration or exiting
with status 2, usage errors, warnings."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["load_config", "usage_error", "valid_text", "warn", "EXIT_USAGE"]

#: exit status of a usage or configuration error
EXIT_USAGE = 2


def usage_error(message: str, prog: str = "panto") -> NoReturn:
    """Print ``prog: message`` to stderr and exit with status 2."""
    print(f"{prog}: {message}", file=sys.stderr)
    raise SystemExit(EXIT_USAGE)


def warn(msg: str) -> None:
    print(f"panto: warning: {msg}", file=sys.stderr, flush=True)


def valid_text(text: str, what: str = "the prompt") -> str:
    """``text`` as valid Unicode, with a warning when it was not.

    Python decodes argv and stdin with ``surrogateescape``: bytes that are
    not UTF-8 (a Latin-1 file piped in, a Latin-1 terminal) become lone
    surrogates, which no request body, session file or terminal can encode.
    They are replaced by U+FFFD, visibly: the user is told how many bytes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    raw = text.encode("utf-8", "surrogateescape")
    fixed = raw.decode("utf-8", "replace")
    bad = sum(1 for c in text if "\udc80" <= c <= "\udcff")
    warn(
        f"{what} is not valid UTF-8: {bad} byte(s) replaced by \N{REPLACEMENT CHARACTER} "
        "(U+FFFD); send UTF-8 (e.g. iconv -f latin1 -t utf-8)"
    )
    return fixed


def load_config(prog: str = "panto", **overrides: Any) -> Config:
    """``Config.load(**overrides)``, or one line on stderr and exit 2 when
    the configuration is invalid (a bad key, a TOML syntax error, a file
    nested too deeply to parse)."""
    from ..config import Config
    from ..errors import ConfigError

    try:
        return Config.load(**overrides)
    except ConfigError as e:
        usage_error(str(e), prog)
    except RecursionError:
        usage_error("config: a TOML file is nested too deeply to read", prog)
