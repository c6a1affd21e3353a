#!/usr/bin/env bash
# The wheel as a user gets it: build it (scripts/build-wheel.sh), confirm the
# manylinux2014 abi3 tag, install it into a fresh venv and run the README's
# offline one-shot prompt against the built-in mock provider.
#
#   bash scripts/check-wheel.sh         # PYTHON (python3) makes the venv
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
bash scripts/build-wheel.sh
whl=$(ls dist/panto-*-cp310-abi3-manylinux_2_17_*.manylinux2014_*.whl 2>/dev/null ||
    ls dist/panto-*-cp310-abi3-manylinux2014_*.manylinux_2_17_*.whl)
echo "check-wheel: $(basename "$whl")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$whl"
# No source tree on the path, no keys, an empty home: only the wheel speaks.
mkdir -p "$tmp/home" "$tmp/cwd"
out=$(cd "$tmp/cwd" && env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u PANTO_HOME \
    -u XDG_CONFIG_HOME -u XDG_DATA_HOME HOME="$tmp/home" PYTHONPATH= \
    timeout 60 "$tmp/venv/bin/panto" -p hello --model mock/anthropic)
echo "panto -p hello --model mock/anthropic: $out"
[ -n "$out" ] || { echo "check-wheel: no output"; exit 1; }
"$tmp/venv/bin/python" - <<'PY'
import pathlib, panto, panto._ffi as f
so = pathlib.Path(f.__file__).with_name("_panto_cffi.abi3.so")
assert so.exists(), so
import panto.decoder as d, panto._fastevents as fe
assert pathlib.Path(fe.__file__).name == "_fastevents.abi3.so", fe.__file__
events = list(panto.decode("openai-chat", [b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: [DONE]\n\n']))
assert d._fast is True, "the wheel's StreamDecoder does not take the C path"
assert [type(e).__name__ for e in events][2] == "ContentDelta", events
assert "site-packages" in panto.__file__, panto.__file__
print("check-wheel: panto", panto.__version__, "from", panto.__file__)
PY
