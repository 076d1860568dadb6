#!/usr/bin/env bash
# End-to-end throughput of moetrace: builds an optimised binary, runs the
# Google Benchmark programs, then times whole commands on real and
# synthetic inputs, printing events/s, MB/s and peak memory.
#   bench/run.sh            # everything
#   bench/run.sh e2e        # only the end-to-end command timings
set -euo pipefail
cd "$(dirname "$0")/.."
traces="${MOETRACE_REAL_TRACES:-../shared/traces}"
scripts/install-deps.sh time
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build-bench
bin=build-bench/cli/moetrace
out=bench/out
mkdir -p "$out"

if [ "${1:-all}" != "e2e" ]; then
  for b in build-bench/bench/*_bench; do
    echo "== $(basename "$b")"
    "$b" --benchmark_min_time=0.5 2>/dev/null
  done
fi

# Wall time, CPU time and peak RSS of one command.
measure() {
  local label="$1"; shift
  /usr/bin/time -f "$label: %e s wall, %U s user, %M KB peak RSS" "$@" >/dev/null
}

echo "== end to end"
if [ -d "$traces/kineto/allreduce-v100" ]; then
  in="$traces/kineto/allreduce-v100"
  size=$(zcat "$in"/*.gz | wc -c)
  echo "allreduce-v100: $size bytes of JSON"
  measure "info allreduce-v100" "$bin" info "$in"
  measure "convert allreduce-v100 -> .mtrace" "$bin" convert "$in" -o "$out/allreduce.mtrace"
  measure "info allreduce.mtrace" "$bin" info "$out/allreduce.mtrace"
  ls -l "$out/allreduce.mtrace"
fi
