#!/usr/bin/env bash
# Regenerates sample-traces/ from the code (see tests/sample_traces_test.cc).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja >/dev/null
ninja -C build e2e_tests
MOETRACE_REGENERATE_SAMPLES=1 build/tests/e2e_tests --gtest_filter='SampleTraces.*'
ls -l sample-traces/
