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

# The issue's "1,024-rank tracegen trace analyzed end-to-end using both
# cores": tiny-moe widened to DP 512 (1,024 ranks, 4 micro-batches per
# pipeline), read from the native file and analyzed with 2 worker threads.
gen="$out/tiny-1024.mtrace"
measure "generate tiny-moe x1024 ranks" "$bin" generate --preset tiny-moe --steps 2 \
  --set parallel.dp=512 --set parallel.world_size=1024 --set parallel.global_batch_size=2048 -o "$gen"
ls -l "$gen"
"$bin" info "$gen" | grep -i -E "ranks|events" | head -3
measure "analyze tiny-moe x1024 ranks (2 threads)" "$bin" analyze "$gen" --threads 2 --json "$out/tiny-1024.json"
measure "analyze tiny-moe x1024 ranks (1 thread)" "$bin" analyze "$gen" --threads 1 --json "$out/tiny-1024-1t.json"

# The RL preset (issue #16): 384 cards of one CloudMatrix 384, one
# iteration, on every core (the file is the same for any --threads); then
# analyze, which recovers its RL labels.
rl="$out/pangu-rl.mtrace"
measure "generate pangu-ultra-moe-718b-rl (384 cards, 1 iteration)" "$bin" generate --preset pangu-ultra-moe-718b-rl -o "$rl"
ls -l "$rl"
"$bin" info "$rl" | grep -i -E "ranks|events" | head -3
measure "analyze pangu-ultra-moe-718b-rl" "$bin" analyze "$rl" --json "$out/pangu-rl.json"
