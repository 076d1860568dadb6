#!/usr/bin/env bash
# Installs what is missing, builds moetrace twice and runs every test:
#   1. build/       optimised build: unit, end-to-end and real-trace tests;
#   2. build-asan/  clang with AddressSanitizer + UndefinedBehaviorSanitizer:
#                   the same tests, plus the libFuzzer smoke runs (label fuzz).
# Exits non-zero when any test fails. Real traces are read from
# $MOETRACE_REAL_TRACES (default ../shared/traces); tests that need them are
# reported as skipped when they are absent.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${MOETRACE_JOBS:-$(nproc)}"

scripts/install-deps.sh

echo "== optimised build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" -LE fuzz

if [ "${MOETRACE_SKIP_ASAN:-0}" != "1" ]; then
  echo "== sanitizer build (clang, ASan + UBSan, fuzzers)"
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-O1" \
    -DMOETRACE_SANITIZE=ON -DMOETRACE_FUZZ=ON -DMOETRACE_BENCH=OFF >/dev/null
  ninja -C build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
