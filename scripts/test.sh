#!/usr/bin/env bash
# Installs what is missing, builds moetrace twice and runs every test:
#   1. build/       optimised build: unit, end-to-end and real-trace tests, and
#                   the mpirun tests (label mpi, when MPI is installed: they
#                   pass --allow-run-as-root, CI runs as root);
#   2. build-asan/  clang with AddressSanitizer + UndefinedBehaviorSanitizer:
#                   the same tests, plus the libFuzzer smoke runs (label fuzz).
#                   Built without MPI (-DMOETRACE_MPI=OFF): Open MPI's runtime
#                   trips LeakSanitizer; the multi-process logic is still
#                   tested there over threads (analyzer/distributed_test.cc).
# Exits non-zero when any test fails. Real traces are read from
# $MOETRACE_REAL_TRACES (default ../shared/traces); tests that need them are
# reported as skipped when they are absent.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${MOETRACE_JOBS:-$(nproc)}"

# chromium: the browser test (ctest label `browser`) renders a report headless.
scripts/install-deps.sh chromium

# Debug information is the build's largest cost after the optimiser (-g took
# 38% of a test file's compile time): the test build has none, the sanitizer
# build only line tables, which is what its stack traces print.
# Unity builds: CMake compiles 16 .cc files as one translation unit, so the
# headers every file includes (gtest, fmt, CLI11, protobuf, the data model) are
# parsed, and their inline code generated, once per 16 files instead of once
# per file (a batch of 8 compiled in ~57% of its files' separate time; 16
# instead of 8 took the sanitizer build from 917 to 848 s here). So file-local
# names must be unique within a library or test binary.
unity="-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16"

echo "== optimised build"
# build type Release with RelWithDebInfo's -O2: a later quickstart.sh (RelWithDebInfo) gets its
# -g back instead of flags that stuck in the cache.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" $unity >/dev/null
ninja -C build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" -LE fuzz

if [ "${MOETRACE_SKIP_ASAN:-0}" != "1" ]; then
  echo "== sanitizer build (clang, ASan + UBSan, fuzzers)"
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_DEBUG="" \
    -DMOETRACE_SANITIZE=ON -DMOETRACE_FUZZ=ON -DMOETRACE_BENCH=OFF -DMOETRACE_MPI=OFF $unity >/dev/null
  ninja -C build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE browser
fi
