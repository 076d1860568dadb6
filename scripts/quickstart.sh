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
$bin analyze sample-traces/sample.mtrace --json out/sample.analysis.json
$bin gate sample-traces/sample.mtrace --baseline out/sample.analysis.json --junit out/gate.xml --md out/gate.md
$bin report sample-traces/sample.mtrace --html out/report.html --md out/report.md
