#!/usr/bin/env bash
# Build panto's abi3 wheel into dist/ so that PyPI accepts it: tagged
# manylinux_2_17 / manylinux2014 (glibc 2.17), checked by auditwheel.
#
#   bash scripts/build-wheel.sh            # -> dist/panto-<version>-cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#
# The C code (core + cffi extension) is compiled with ziglang's `zig cc
# -target <arch>-linux-gnu.2.17`, which links against glibc 2.17 symbol
# versions whatever the build machine's glibc is; ziglang, auditwheel and
# wheel come from PyPI into a tools venv (build-wheel/tools, reused).  The
# wheel's only NEEDED is libc, so no library is grafted: after `auditwheel
# show` confirms the manylinux2014 policy, `wheel tags` retags it (auditwheel
# repair would need patchelf for nothing).  Other platforms (macOS, aarch64):
# cibuildwheel, configured in pyproject.toml, not exercised here.
#
# Environment: PYTHON (python3) runs the build; PANTO_WHEEL_TOOLS (a
# directory) overrides the tools venv.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
PYTHON=${PYTHON:-python3}
ARCH=$(uname -m)
TARGET_GLIBC=2.17
PLAT=manylinux_2_17_${ARCH}
TOOLS=${PANTO_WHEEL_TOOLS:-$ROOT/build-wheel/tools}
WORK=$ROOT/build-wheel

if [ "$(uname -s)" != Linux ]; then
    echo "build-wheel: Linux only (use cibuildwheel elsewhere)" >&2
    exit 2
fi
if [ ! -x "$TOOLS/bin/python" ]; then
    "$PYTHON" -m venv "$TOOLS"
fi
"$TOOLS/bin/python" -m pip install --quiet --disable-pip-version-check ziglang auditwheel wheel

# The C compiler CMake gets: zig cc for the old glibc.
mkdir -p "$WORK" dist
cc="$WORK/zigcc"
cat >"$cc" <<EOS
#!/bin/sh
exec "$TOOLS/bin/python" -m ziglang cc -target ${ARCH}-linux-gnu.${TARGET_GLIBC} "\$@"
EOS
chmod +x "$cc"

raw="$WORK/raw"
rm -rf "$raw"
# build-wheel/cmake is reused between runs (always configured with zigcc).
"$PYTHON" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$raw" \
    -Cbuild-dir="$WORK/cmake" -Ccmake.define.CMAKE_C_COMPILER="$cc" .
whl=$(ls "$raw"/panto-*.whl)
echo "build-wheel: built $(basename "$whl")"

# Check the policy: only glibc <= 2.17 symbols, only allowed libraries.
show=$("$TOOLS/bin/auditwheel" show "$whl")
echo "$show"
if ! grep -q "consistent with the following platform tag: \"${PLAT}\"" <<<"$(tr -s '\n ' '  ' <<<"$show")"; then
    echo "build-wheel: auditwheel does not accept $(basename "$whl") as ${PLAT}" >&2
    exit 1
fi
rm -f dist/panto-*-abi3-*.whl
"$TOOLS/bin/python" -m wheel tags --remove --platform-tag "${PLAT}.manylinux2014_${ARCH}" "$whl" >/dev/null
mv "$raw"/panto-*.whl dist/
out=$(ls dist/panto-*"${PLAT}"*.whl)
"$TOOLS/bin/auditwheel" show "$out" | tr -s '\n ' '  ' |
    grep -q "is consistent with the following platform tag: \"${PLAT}\"" || {
    echo "build-wheel: the retagged wheel fails auditwheel show" >&2
    exit 1
}
echo "build-wheel: $out"
