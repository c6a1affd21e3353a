"""Load the compiled core (``panto._panto_cffi``) and check it matches.

``ffi`` and ``lib`` are the cffi API-mode objects.  Importing this module
verifies that the library's ABI version equals the header's and that the
struct layout is the one the rest of the binding was written for; a mismatch
raises ImportError with a message that says how to fix it.
"""

from __future__ import annotations

try:
    from ._panto_cffi import ffi, lib
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError(
        "panto's compiled core (panto._panto_cffi) is missing or cannot be loaded: "
        f"{e}.  Reinstall panto with `pip install .` from the repository (a C compiler "
        "and CMake are needed), or, for an editable install, "
        "`pip install --no-build-isolation -Ceditable.rebuild=true -e .`."
    ) from e

__all__ = ["ffi", "lib", "version"]

_lib_abi = lib.panto_abi_version()
if _lib_abi != lib.PANTO_ABI_VERSION:  # pragma: no cover - stale build
    raise ImportError(
        f"panto's compiled core has ABI version {_lib_abi} but the binding was built "
        f"for version {lib.PANTO_ABI_VERSION}: the extension is stale.  Reinstall panto "
        "(`pip install --force-reinstall .`)."
    )

# Cheap layout checks (LP64); tests/test_abi.py checks every field offset.
if (
    ffi.sizeof("panto_str") != 2 * ffi.sizeof("void *")
    or ffi.sizeof("panto_usage") != 40
    or ffi.offsetof("panto_event", "u") != 8
):  # pragma: no cover - exotic platform or stale build
    raise ImportError(
        "panto's compiled core has an unexpected struct layout "
        f"(sizeof(panto_str)={ffi.sizeof('panto_str')}, "
        f"sizeof(panto_usage)={ffi.sizeof('panto_usage')}, "
        f"offsetof(panto_event, u)={ffi.offsetof('panto_event', 'u')})"
    )


def version() -> str:
    """The C core's version string (``panto_version()``)."""
    return ffi.string(lib.panto_version()).decode("ascii")
