#!/usr/bin/env bash
# The whole test suite, from a fresh clone:   bash tests/run_all.sh
#
#   1. C core: CMake build with -Werror, ctest
#   2. C core under AddressSanitizer + UBSan, ctest (any report fails)
#   2a. global symbols all panto_; cmake --install + examples/c built against it
#   2b. libFuzzer targets (tests/fuzz/run.sh), PANTO_FUZZ_SECONDS (30) each
#   2c. the manylinux2014 abi3 wheel (scripts/check-wheel.sh; PANTO_SKIP_WHEEL=1 skips)
#   3. Python: a venv at .venv, `pip install '.[test,lua]'` (builds the cffi extension)
#   4. ruff check + ruff format --check on python/ tests/ bench/; the
#      generated sync driver matches its source (scripts/unasync.py --check)
#   5. Go binding (when bindings-go/ exists and `go` is installed): gofmt, vet, test -race
#   6. pytest; tests marked slow (the long crash-point sweeps, the full secrets
#      matrix) run only with PANTO_SLOW=1
#   7. the oldest and newest supported Pythons (3.10, 3.13): a venv each
#      (.venv-3.10, .venv-3.13) and a smoke of the async and CLI tests; the
#      interpreters are found as python3.10 / python3.13 on PATH or under
#      pyenv (PANTO_PY310 / PANTO_PY313 name them; PANTO_SKIP_PYVERS=1 skips)
#
# Every stage runs even if an earlier one failed (except those that need the
# venv when it could not be built); the exit status is non-zero if any failed.
# Environment: PYTHON (default python3) creates the venv; JOBS (default: all
# cores) sets build parallelism; PANTO_SKIP_ASAN=1 / PANTO_SKIP_GO=1 skip those.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
VENV="$ROOT/.venv"

failed=()
start_all=$SECONDS

stage() {
    local name=$1
    shift
    printf '\n==== %s ====\n' "$name"
    local t0=$SECONDS
    if "$@"; then
        printf -- '---- %s: ok (%ss)\n' "$name" "$((SECONDS - t0))"
    else
        local rc=$?
        printf -- '---- %s: FAILED (exit %s, %ss)\n' "$name" "$rc" "$((SECONDS - t0))"
        failed+=("$name")
    fi
}

c_build() {
    cmake -S . -B build -DPANTO_WERROR=ON &&
        cmake --build build -j "$JOBS" &&
        ctest --test-dir build --output-on-failure -j "$JOBS"
}

c_asan() {
    cmake -S . -B build-asan -DPANTO_WERROR=ON -DPANTO_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
        cmake --build build-asan -j "$JOBS" &&
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            ctest --test-dir build-asan --output-on-failure -j "$JOBS"
}

c_dist() {
    # Global symbols of libpanto.a/.so all panto_; cmake --install + the C
    # example built with pkg-config and find_package (scripts/).
    bash scripts/check-symbols.sh build && bash scripts/check-c-install.sh build
}

fuzz() {
    # libFuzzer targets of tests/fuzz/ (clang); exit 77 = no libFuzzer here.
    local rc=0
    bash tests/fuzz/run.sh "${PANTO_FUZZ_SECONDS:-30}" || rc=$?
    if [ $rc = 77 ]; then
        echo "fuzz: skipped: clang with the libFuzzer runtime is not installed"
        return 0
    fi
    return $rc
}

wheel() {
    # scripts/build-wheel.sh (zig cc, glibc 2.17) + auditwheel + a fresh venv
    # running `panto -p hello --model mock/anthropic`.
    bash scripts/check-wheel.sh
}

py_env() {
    if ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
        rm -rf "$VENV"
        "$PYTHON" -m venv "$VENV" || return 1
    fi
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check '.[test,lua]'
}

lint() {
    local rc=0
    "$VENV/bin/ruff" check --output-format concise python tests bench || rc=1
    "$VENV/bin/ruff" format --check --output-format concise python tests bench || rc=1
    # the sync turn driver is generated from the async one (also a pytest test)
    "$VENV/bin/python" scripts/unasync.py --check || rc=1
    return $rc
}

go_checks() {
    (
        cd bindings-go || exit 1
        local unformatted
        unformatted=$(gofmt -l .) || exit 1
        if [ -n "$unformatted" ]; then
            echo "gofmt: these files need formatting:"
            echo "$unformatted"
            exit 1
        fi
        go vet ./... && go vet -tags pantotest ./... && go test -tags pantotest -race -count=1 ./...
    )
}

postgres() {
    # A throwaway PostgreSQL for the session store tests (PANTO_TEST_POSTGRES_URL),
    # stopped on exit, also after a failure; without one those tests skip, saying why.
    local out
    export PANTO_PG_STATE
    PANTO_PG_STATE=$(mktemp /tmp/panto-ci-postgres.XXXXXX)
    trap 'bash scripts/ci-postgres.sh stop' EXIT
    out=$(bash scripts/ci-postgres.sh start) || { echo "no PostgreSQL: its tests will skip"; return 0; }
    eval "$out" && echo "$out"
}

py_tests() {
    # Run from the repository root: `panto` is imported from the venv (the
    # package lives under python/, so the source tree does not shadow it).
    local select=(-m "not slow")
    [ "${PANTO_SLOW:-0}" = 1 ] && select=()
    "$VENV/bin/python" -m pytest -q --durations=15 "${select[@]}" tests
}

# The async and CLI tests that run on every supported Python (the async
# driver must not use 3.11+ APIs such as asyncio.timeout without a fallback).
PYVERS_SMOKE=(
    tests/agent/test_session.py
    tests/agent/test_many_sessions.py
    tests/agent/test_cancel.py
    tests/agent/test_retries.py
    tests/integration/test_cli.py
)

find_python() {
    # $1: 3.10 or 3.13; $2: an explicit interpreter (may be empty)
    local want=$1 given=$2 p
    if [ -n "$given" ]; then echo "$given"; return 0; fi
    # (a pyenv shim answers to python3.10 even when that version is not
    # active, and then fails: each candidate must run)
    for p in $(command -v "python$want" 2>/dev/null) "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want".*/bin/python; do
        [ -x "$p" ] && "$p" -c 'import sys' >/dev/null 2>&1 && { echo "$p"; return 0; }
    done
    return 1
}

py_version_smoke() {
    # $1: 3.10 or 3.13; $2: PANTO_PY310 / PANTO_PY313; the rest: pytest options
    local want=$1 py venv="$ROOT/.venv-$1"
    local extra=("${@:3}")
    py=$(find_python "$want" "$2") || {
        echo "no Python $want found (install it, or name it with PANTO_PY${want/./})"
        return 1
    }
    if ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
        rm -rf "$venv"
        "$py" -m venv "$venv" || return 1
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check '.[test,lua]' &&
        "$venv/bin/python" -m pytest -q -p no:cacheprovider "${extra[@]}" "${PYVERS_SMOKE[@]}"
}

stage "C core: build (-Werror) + ctest" c_build

if [ "${PANTO_SKIP_ASAN:-0}" = 1 ]; then
    printf '\n==== C core: ASan/UBSan ==== skipped (PANTO_SKIP_ASAN=1)\n'
else
    stage "C core: ASan/UBSan build + ctest" c_asan
fi

stage "C core: global symbols, install, C example" c_dist

stage "C core: libFuzzer targets, ${PANTO_FUZZ_SECONDS:-30}s each" fuzz

stage "Python: venv + pip install '.[test,lua]'" py_env
venv_ok=1
[ -x "$VENV/bin/ruff" ] || venv_ok=0

if [ "${PANTO_SKIP_WHEEL:-0}" = 1 ]; then
    printf '\n==== manylinux wheel ==== skipped (PANTO_SKIP_WHEEL=1)\n'
else
    stage "manylinux2014 abi3 wheel: build, auditwheel, fresh-venv panto -p" wheel
fi

if [ $venv_ok = 1 ]; then
    stage "ruff check + format --check" lint
fi

if [ -d bindings-go ] && [ "${PANTO_SKIP_GO:-0}" != 1 ]; then
    if command -v go >/dev/null 2>&1; then
        stage "Go binding: gofmt, vet, test -race" go_checks
    else
        printf '\n==== Go binding ==== skipped: go is not installed\n'
    fi
fi

if [ $venv_ok = 1 ]; then
    stage "PostgreSQL for the session tests" postgres
    stage "pytest" py_tests
    if [ "${PANTO_SKIP_PYVERS:-0}" = 1 ]; then
        printf '\n==== Python 3.10 / 3.13 ==== skipped (PANTO_SKIP_PYVERS=1)\n'
    else
        stage "Python 3.10: async + CLI smoke" py_version_smoke 3.10 "${PANTO_PY310:-}"
        # (3.13's pathlib imports glob itself: the start-up import check is 3.10-3.12's)
        stage "Python 3.13: async + CLI smoke" py_version_smoke 3.13 "${PANTO_PY313:-}" \
            --deselect tests/integration/test_cli.py::test_print_mode_start_up_imports_stay_lean
    fi
else
    printf '\n==== pytest ==== not run: the venv could not be built\n'
    failed+=("pytest (not run)")
fi

printf '\n==== summary (%ss) ====\n' "$((SECONDS - start_all))"
if [ ${#failed[@]} -eq 0 ]; then
    echo "run_all: every stage succeeded"
    exit 0
fi
echo "run_all: FAILED stages:"
printf '  - %s\n' "${failed[@]}"
exit 1
