#!/usr/bin/env bash
# Times `moetrace analyze` against Holistic Trace Analysis on the same Kineto
# trace sets. HTA is run when `import hta` works (pip install HolisticTraceAnalysis);
# otherwise its times recorded in hta-reference.json (load_s, total_s, taken
# on the machine that produced the reference) are shown instead.
# Usage: bench/hta_compare.sh [BUILD_DIR] [KINETO_DIR]
set -euo pipefail
build=${1:-build}
dir=${2:-${MOETRACE_REAL_TRACES:-$(dirname "$0")/../../shared/traces}/kineto}
bin=$build/cli/moetrace
have_hta=0
python3 -c "import hta" 2>/dev/null && have_hta=1
printf "%-20s %12s %12s %12s %8s\n" set moetrace_s moetrace_cpu hta_s speedup
for set in "$dir"/*/; do
  name=$(basename "$set")
  t=$( { /usr/bin/time -f "%e %U %S" "$bin" analyze "$set" --json /tmp/hta_compare_$$.json >/dev/null; } 2>&1 | tail -1)
  wall=$(echo "$t" | awk '{print $1}')
  cpu=$(echo "$t" | awk '{printf "%.3f", $2 + $3}')
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
  speed=$(python3 -c "import sys; c=max(float(sys.argv[1]),0.001); print(f'{float(sys.argv[2])/c:.1f}x')" "$cpu" "$hta")
  printf "%-20s %12s %12s %12s %8s\n" "$name" "$wall" "$cpu" "$hta" "$speed"
done
rm -f /tmp/hta_compare_$$.json
[ $have_hta = 1 ] || echo "(HTA not installed: hta_s = HTA's total_s from hta-reference.json; speedup = hta_s / moetrace CPU s)"
