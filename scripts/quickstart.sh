#!/usr/bin/env bash
# The main job on the built-in default: installs what is missing, builds
# moetrace, then runs it end to end and leaves the outputs in out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build moetrace
mkdir -p out
bin=build/cli/moetrace
set -x
$bin info sample-traces/sample.mtrace
$bin convert sample-traces/sample.mtrace -o out/sample.pftrace
$bin convert sample-traces/sample.mtrace -o out/sample.json
