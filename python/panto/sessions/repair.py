"""Reading what a session holds that this panto cannot read as it is: a
message with an unknown role or block type becomes a visible placeholder
(``panto.storable.lenient_message_from_dict``) and one warning, so such an
entry never makes a session fail on every resume."""

from __future__ import annotations

from typing import Any

from ..conversation import Message

__all__ = ["KNOWN_ROLES", "read_message", "warn_session"]

KNOWN_ROLES = ("system", "user", "assistant", "tool")


def read_message(d: Any) -> tuple[Message, str | None]:
    """A stored message, and None; or, for one this panto cannot read (an
    unknown role or block type, a bad shape), a placeholder that shows what
    was left out (``storable.lenient_message_from_dict``) and what was
    wrong: a session with such an entry still loads (with a warning)."""
    try:
        m = Message.from_dict(d)
        if m.role in KNOWN_ROLES:
            return m, None
    except (KeyError, TypeError, ValueError, AttributeError):
        pass
    from ..storable import lenient_message_from_dict

    m, problem = lenient_message_from_dict(d)
    return m, f"a message this panto cannot read ({problem}) is shown as a placeholder"


def warn_session(msg: str) -> None:
    import warnings

    from ..logs import get_logger
    from .base import SessionWarning

    get_logger("panto.sessions").warning("%s", msg)
    warnings.warn(msg, SessionWarning, stacklevel=3)
