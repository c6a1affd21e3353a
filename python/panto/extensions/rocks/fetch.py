"""A ``curl`` stand-in for luarocks on machines with neither curl nor wget.

luarocks downloads by shelling out to ``curl`` (``fs/tools.lua``); when
neither curl nor wget is on PATH, panto's luarocks config points
``variables.CURL`` at ``python -m panto.extensions.rocks.fetch``, which
understands the arguments luarocks passes::

    --version
    [-k] -f -L --user-agent UA [--connect-timeout N] [-R -z FILE] URL --output FILE

Exit status as curl's: 0 on success, 22 for an HTTP error (``-f``), 6/7/28
for name resolution, connection and timeout failures, 23 for a write error.
Standard library only (urllib): it runs in a fresh interpreter per download.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    import socket
    import urllib.error
    import urllib.request

    args = list(sys.argv[1:] if argv is None else argv)
    if "--version" in args:
        print("curl 8.0.0 (panto.extensions.rocks.fetch: a urllib stand-in)")
        return 0
    url = output = None
    agent = "panto"
    timeout = 60.0
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--output", "-o"):
            i += 1
            output = args[i]
        elif a in ("--user-agent", "-A"):
            i += 1
            agent = args[i]
        elif a == "--connect-timeout":
            i += 1
            timeout = float(args[i])
        elif a == "-z":
            i += 1  # a time condition: always fetch (luarocks only uses it as a cache hint)
        elif a.startswith("-"):
            pass  # -f -L -k -R -s: failing on HTTP errors and following redirects is the default
        else:
            url = a
        i += 1
    if not url or not output:
        sys.stderr.write("fetch: usage: fetch [-f -L] URL --output FILE\n")
        return 2
    req = urllib.request.Request(url, headers={"User-Agent": agent})
    tmp = f"{output}.{os.getpid()}.part"
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp, open(tmp, "wb") as f:
            while chunk := resp.read(65536):
                f.write(chunk)
        os.replace(tmp, output)
        return 0
    except urllib.error.HTTPError as e:
        sys.stderr.write(f"fetch: {url}: HTTP {e.code}\n")
        return 22
    except urllib.error.URLError as e:
        sys.stderr.write(f"fetch: {url}: {e.reason}\n")
        if isinstance(e.reason, socket.gaierror):
            return 6
        return 28 if isinstance(e.reason, TimeoutError) else 7
    except TimeoutError:
        sys.stderr.write(f"fetch: {url}: timed out\n")
        return 28
    except OSError as e:
        sys.stderr.write(f"fetch: {output}: {e}\n")
        return 23
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
