#!/usr/bin/env bash
# Times `moetrace analyze DIR --json OUT` against Holistic Trace Analysis on
# the same Kineto trace sets. HTA is run when `import hta` works (pip install
# HolisticTraceAnalysis); otherwise its times recorded in hta-reference.json
# (total_s: load + the four figures, on the machine that produced the
# reference) are shown instead.
#
# Each moetrace figure is the median of RUNS runs (default 3) of wall time
# and of CPU time (user + system, all threads). speedup(wall) = hta_s /
# moetrace wall: what a user waits for, and what HTA's total_s measures (HTA
# runs on one core). speedup(cpu) = hta_s / moetrace CPU.
# Usage: bench/hta_compare.sh [BUILD_DIR] [KINETO_DIR]   (env RUNS=N)
set -euo pipefail
build=${1:-build}
dir=${2:-${MOETRACE_REAL_TRACES:-$(dirname "$0")/../../shared/traces}/kineto}
bin=$build/cli/moetrace
runs=${RUNS:-3}
have_hta=0
python3 -c "import hta" 2>/dev/null && have_hta=1
out=$(mktemp /tmp/hta_compare.XXXXXX.json)
trap 'rm -f "$out"' EXIT
printf "%-20s %10s %10s %9s %13s %12s\n" set wall_s cpu_s hta_s "speedup(wall)" "speedup(cpu)"
for set in "$dir"/*/; do
  name=$(basename "$set")
  # Median wall and CPU seconds of $runs runs, measured by the kernel's
  # accounting of the child (resource.getrusage), not by a shell builtin.
  read -r wall cpu < <(python3 - "$runs" "$bin" analyze "$set" --json "$out" <<'PY'
import resource, statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
walls, cpus = [], []
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    walls.append(time.perf_counter() - t)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
print(f"{statistics.median(walls):.4f} {statistics.median(cpus):.4f}")
PY
)
  if [ $have_hta = 1 ]; then
    hta=$(python3 - "$set" <<'PY'
import sys, time
from hta.trace_analysis import TraceAnalysis
t = time.time()
a = TraceAnalysis(trace_dir=sys.argv[1])
a.get_temporal_breakdown(visualize=False)
a.get_comm_comp_overlap(visualize=False)
a.get_idle_time_breakdown(visualize=False, ranks=list(a.t.traces.keys()))
a.get_cuda_kernel_launch_stats(ranks=list(a.t.traces.keys()), visualize=False)
print(f"{time.time() - t:.3f}")
PY
)
  else
    hta=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]['total_s'])" \
          "$dir/hta-reference.json" "$name" 2>/dev/null || echo nan)
  fi
  read -r sw sc < <(python3 -c "
import sys
w, c, h = (float(x) for x in sys.argv[1:])
print(f'{h / max(w, 1e-4):.1f}x', f'{h / max(c, 1e-4):.1f}x')" "$wall" "$cpu" "$hta")
  printf "%-20s %10s %10s %9s %13s %12s\n" "$name" "$wall" "$cpu" "$hta" "$sw" "$sc"
done
[ $have_hta = 1 ] || echo "(HTA not installed: hta_s = HTA's total_s from hta-reference.json)"
