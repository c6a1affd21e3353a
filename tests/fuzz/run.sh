#!/usr/bin/env bash
# Build the libFuzzer targets of tests/fuzz/ with clang and run each for a
# bounded time from the committed seed corpus.
#
#   bash tests/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to $PANTO_FUZZ_SECONDS or 60.  Targets:
# sse, openai_chat, anthropic, json (default: all).  Builds into
# build-fuzz/ (or $PANTO_FUZZ_BUILD) with -fsanitize=fuzzer,address,undefined
# and no sanitizer recovery; new inputs go to a scratch corpus under the
# build directory, never into the committed one.  Any crash, leak, timeout,
# out-of-memory or sanitizer report makes the script exit non-zero; the
# reproducer is left in build-fuzz/artifacts/ (rerun it with
# `build-fuzz/fuzz_<target> build-fuzz/artifacts/crash-...`).
#
# Exit status 77 means clang or its libFuzzer runtime is missing (skip).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SECONDS_PER_TARGET=${1:-${PANTO_FUZZ_SECONDS:-60}}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(sse openai_chat anthropic openai_responses json)
CC=${PANTO_FUZZ_CC:-clang}
OUT=${PANTO_FUZZ_BUILD:-build-fuzz}

if ! command -v "$CC" >/dev/null 2>&1; then
    echo "fuzz: $CC not found; skipping"
    exit 77
fi
mkdir -p "$OUT/artifacts"
probe="$OUT/probe.c"
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$probe"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$probe" -o "$OUT/probe" >/dev/null 2>&1; then
    echo "fuzz: $CC cannot link -fsanitize=fuzzer (no libFuzzer runtime); skipping"
    exit 77
fi

CFLAGS=(-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
    -fno-sanitize-recover=all -Iinclude -Icsrc -Wall -Wextra -Werror -std=c11)

build() {
    local target=$1
    local src=tests/fuzz/fuzz_stream.c def=()
    case $target in
    sse) def=(-DFUZZ_WIRE=PANTO_WIRE_SSE) ;;
    openai_chat) def=(-DFUZZ_WIRE=PANTO_WIRE_OPENAI_CHAT) ;;
    anthropic) def=(-DFUZZ_WIRE=PANTO_WIRE_ANTHROPIC_MESSAGES) ;;
    openai_responses) def=(-DFUZZ_WIRE=PANTO_WIRE_OPENAI_RESPONSES) ;;
    json) src=tests/fuzz/fuzz_json.c ;;
    *)
        echo "fuzz: unknown target $target"
        return 2
        ;;
    esac
    # The stream targets include the core themselves (white box: they turn
    # the fast paths off for a reference run); fuzz_json links it.
    local core=(csrc/unity/panto_core.c)
    [ "$target" = json ] || core=()
    "$CC" "${CFLAGS[@]}" "${def[@]}" "$src" "${core[@]}" -o "$OUT/fuzz_$target"
}

failed=()
for t in "${TARGETS[@]}"; do
    printf -- '-- fuzz_%s: build\n' "$t"
    if ! build "$t"; then
        failed+=("$t (build)")
        continue
    fi
    scratch="$OUT/corpus-$t"
    mkdir -p "$scratch"
    printf -- '-- fuzz_%s: %ss from %s seeds\n' "$t" "$SECONDS_PER_TARGET" \
        "$(find "tests/fuzz/corpus/$t" -type f | wc -l)"
    log="$OUT/fuzz_$t.log"
    # The first corpus directory receives new inputs; the committed one is
    # only read.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        timeout --kill-after=30 "$((SECONDS_PER_TARGET + 120))" \
        "$OUT/fuzz_$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
        -max_len=16384 -dict=tests/fuzz/panto.dict -artifact_prefix="$OUT/artifacts/$t-" \
        -print_final_stats=1 "$scratch" "tests/fuzz/corpus/$t" >"$log" 2>&1
    rc=$?
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tr '\n' ' '
    echo
    if [ $rc -ne 0 ]; then
        echo "fuzz_$t FAILED (exit $rc); the end of $log:"
        tail -n 60 "$log"
        failed+=("$t")
    fi
done

if [ ${#failed[@]} -ne 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}"
    exit 1
fi
echo "fuzz: ${TARGETS[*]}: no crash, leak or sanitizer report"
