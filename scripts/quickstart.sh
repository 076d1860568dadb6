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
$bin generate --preset tiny-moe -o out/tiny-moe.mtrace
$bin info out/tiny-moe.mtrace
$bin analyze out/tiny-moe.mtrace --json out/tiny-moe.analysis.json
$bin convert out/tiny-moe.mtrace -o out/tiny-moe.pftrace
$bin gate out/tiny-moe.mtrace --baseline out/tiny-moe.analysis.json --junit out/gate.xml --md out/gate.md
$bin report out/tiny-moe.mtrace --html out/report.html --md out/report.md
