"""What the ``panto`` commands share: loading the configuration or exiting
with status 2, usage errors, warnings."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["load_config", "one_line_warnings", "usage_error", "valid_text", "warn", "EXIT_USAGE"]

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


def one_line_warnings(debug: bool = False) -> None:
    """Warnings from the library as one ``panto: warning: ...`` line each,
    each shown once.  A ``SessionWarning`` (a torn session file, a message
    read as a placeholder) is also logged by ``panto.sessions``: only the log
    record is shown, never also a raw Python warning with its source line.
    panto's logged warnings get the ``panto: warning:`` prefix (with
    ``--debug`` its own handler shows them).  ``logging`` stays unimported
    until something is logged (start-up)."""
    import warnings

    default = warnings.showwarning

    def show(message: Any, category: Any, filename: str, lineno: int, *rest: Any) -> None:
        if getattr(category, "__name__", "") == "SessionWarning":
            return  # logged as well: printed by the handler below
        default(message, category, filename, lineno, *rest)

    warnings.showwarning = show
    if debug:
        return
    from ..logs import on_logging_import

    def install() -> None:
        import logging

        seen: set[str] = set()

        def once(record: logging.LogRecord) -> bool:
            msg = record.getMessage()
            if msg in seen:
                return False
            seen.add(msg)
            return True

        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(logging.Formatter("panto: warning: %(message)s"))
        handler.addFilter(once)
        logging.getLogger("panto").addHandler(handler)

    on_logging_import(install)
