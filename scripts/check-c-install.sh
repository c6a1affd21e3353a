#!/usr/bin/env bash
# The C distribution, as a C user meets it: `cmake --install` a build into a
# temporary prefix, then build examples/c/decode.c against it three ways
# (pkg-config with libpanto.so, pkg-config with libpanto.a, the CMake package)
# and decode a fixture with each.
#
#   bash scripts/check-c-install.sh [BUILD_DIR]    # default: build
#
# With go installed it also builds and runs the Go binding with the
# `libpanto` tag against the installed library (PANTO_SKIP_GO=1 skips that).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${1:-build}
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$BUILD" --prefix "$prefix" >/dev/null
# (GNUInstallDirs may pick lib, lib64 or lib/<multiarch>: look by name.)
for f in panto.h libpanto.a libpanto.so panto.pc pantoConfig.cmake pantoConfigVersion.cmake pantoTargets.cmake; do
    if [ -z "$(find "$prefix" -name "$f" | head -1)" ]; then
        echo "check-c-install: $f not installed"
        exit 1
    fi
done
pcdir=$(dirname "$(find "$prefix" -name panto.pc | head -1)")
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir panto)
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"
echo "pkg-config --modversion panto: $(PKG_CONFIG_PATH=$pcdir pkg-config --modversion panto)"

fixture=tests/fixtures/anthropic_tool_use.sse
expect() { # binary: decode the fixture, check the output
    local out
    out=$("$@" anthropic-messages <"$fixture")
    grep -q '^block 1 tool_use get_weather(' <<<"$out" &&
        grep -q '^stop tool_use (tool_use), 384 input + 91 output tokens$' <<<"$out" || {
        echo "check-c-install: unexpected output of $*:"
        echo "$out"
        return 1
    }
    # An error exits 1 and names the code.
    if "$@" openai-chat <tests/fixtures/openai_error_in_200.sse >/dev/null 2>"$tmp/err"; then
        echo "check-c-install: $* accepted an error stream"
        return 1
    fi
    grep -q '^error provider server_error: ' "$tmp/err"
}

# 1. pkg-config, shared library (rpath so it runs without LD_LIBRARY_PATH)
# shellcheck disable=SC2046
"$CC" -std=c11 -Wall -Wextra -Werror examples/c/decode.c \
    $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs panto) -Wl,-rpath,"$libdir" -o "$tmp/decode"
expect "$tmp/decode"
# (ldd's output is read whole first: `ldd | grep -q` under pipefail fails
# when grep exits at its match before ldd has written everything, SIGPIPE)
grep -q "libpanto\.so.* => $prefix/" <<<"$(ldd "$tmp/decode")" || { echo "check-c-install: not linked to the installed libpanto.so"; exit 1; }
echo "pkg-config + libpanto.so: ok"

# 2. pkg-config, static library
# shellcheck disable=SC2046
"$CC" -std=c11 -Wall -Wextra -Werror examples/c/decode.c \
    $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags panto) "$libdir/libpanto.a" -o "$tmp/decode_static"
expect "$tmp/decode_static"
if grep -q libpanto <<<"$(ldd "$tmp/decode_static")"; then
    echo "check-c-install: the static build needs libpanto.so"
    exit 1
fi
echo "pkg-config + libpanto.a: ok"

# 3. CMake package (find_package(panto) -> panto::panto, panto::panto_static)
cmake -S examples/c -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
expect "$tmp/cmake/decode"
expect "$tmp/cmake/decode_static"
echo "find_package(panto): ok"

# 4. The Go binding's libpanto build tag links the installed library through
#    pkg-config instead of its own copy of the core.
if command -v go >/dev/null 2>&1 && [ "${PANTO_SKIP_GO:-0}" != 1 ]; then
    (cd bindings-go &&
        PKG_CONFIG_PATH=$pcdir CGO_LDFLAGS="-Wl,-rpath,$libdir" \
            go test -tags 'libpanto pantotest' \
            -o "$tmp/go.test" -c . >/dev/null &&
        grep -q "libpanto\.so.* => $prefix/" <<<"$(ldd "$tmp/go.test")" &&
        "$tmp/go.test" -test.count=1 -test.run 'TestABIVersion|TestLayoutAndNames|TestLinksBesideOtherCgoCode|TestConformance' >/dev/null) || {
        echo "check-c-install: go test -tags libpanto against the installed library failed"
        exit 1
    }
    echo "go test -tags libpanto (linked to the installed libpanto.so): ok"
fi
