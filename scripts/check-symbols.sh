#!/usr/bin/env bash
# The global-symbol check: every global symbol that libpanto.a defines, and
# every dynamic symbol libpanto.so exports, starts with panto_, and the
# exported set is exactly the functions declared PANTO_EXTERN in
# include/panto.h.  (An unprefixed global such as json_parse makes a Go or C
# program that links another library with the same name fail to link.)
#
#   bash scripts/check-symbols.sh [BUILD_DIR]     # default: build
#
# BUILD_DIR is a CMake build directory of this repository (libpanto.a and,
# outside scikit-build, libpanto.so).  Exit 0 when clean, 1 with the
# offending symbols listed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${1:-build}
NM=${NM:-nm}

declared=$(grep -oE '^PANTO_EXTERN\([^)]*\) *\**[a-z_0-9]+\(' include/panto.h |
    sed -E 's/^PANTO_EXTERN\([^)]*\) *\**//; s/\($//' | sort -u)
if [ -z "$declared" ]; then
    echo "check-symbols: no PANTO_EXTERN declarations found in include/panto.h"
    exit 1
fi

rc=0
check() {
    local lib=$1
    shift
    if [ ! -f "$lib" ]; then
        echo "check-symbols: $lib not found (build first: cmake -S . -B $BUILD && cmake --build $BUILD)"
        rc=1
        return
    fi
    local syms bad missing extra
    # "ADDRESS TYPE NAME" lines; archive member headers and blanks dropped.
    syms=$("$NM" "$@" "$lib" | awk 'NF == 3 { print $3 }' | sort -u)
    bad=$(grep -v '^panto_' <<<"$syms")
    missing=$(comm -23 <(echo "$declared") <(echo "$syms"))
    extra=$(comm -13 <(echo "$declared") <(echo "$syms") | grep '^panto_')
    if [ -n "$bad" ]; then
        echo "check-symbols: $lib defines global symbols without the panto_ prefix:"
        sed 's/^/  /' <<<"$bad"
        rc=1
    fi
    if [ -n "$missing" ]; then
        echo "check-symbols: $lib lacks functions declared in include/panto.h:"
        sed 's/^/  /' <<<"$missing"
        rc=1
    fi
    if [ -n "$extra" ]; then
        echo "check-symbols: $lib exports panto_ symbols that include/panto.h does not declare:"
        sed 's/^/  /' <<<"$extra"
        rc=1
    fi
    [ -z "$bad$missing$extra" ] &&
        echo "check-symbols: $lib: $(wc -l <<<"$syms") global symbols, all panto_, all declared"
}

check "$BUILD/libpanto.a" -g --defined-only
if [ -f "$BUILD/libpanto.so" ]; then
    check "$BUILD/libpanto.so" -D --defined-only
fi
exit $rc
