#!/usr/bin/env bash
# Issue #14's scale table: `moetrace analyze` of native, Kineto and Ascend
# inputs at 1, 64, 1,024 and 6,144 ranks, as ranks/s and events/s per core
# (CPU seconds: user + system of all threads, so the figures do not depend on
# what else the machine runs), MB/s per core and peak RSS; then `mpirun -n P`
# on the 1,024-rank native trace (bytes each process sends and receives, peak
# RSS of every process).
#
# Inputs, all cut from one pangu-ultra-moe-718b trace (BASE, 6,144 ranks, one
# step; generated into $OUT when absent):
# - native N:  `convert BASE --ranks 0-(N-1)`: whole ranks (~35 k events each);
# - kineto N:  `convert BASE --ranks 0-(N-1) -o DIR/`: a Kineto JSON file per
#   rank (~24 k events, 8 MB each), up to KINETO_MAX_RANKS ranks (default
#   1,024: 6,144 such files are 49 GB, more than this machine's free disk);
#   above it, with KINETO_GZ=1, the same files `gzip -1`ed one by one
#   (row `kineto.gz`, ~1.3 MB a rank: how users keep them), converted 256
#   ranks at a time so that only one chunk of plain files exists at once;
# - ascend N:  N rank folders `rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/` whose
#   trace_view.json is one synthetic torch_npu file (TASKS tasks, the shape of
#   bench/ascend_import_bench.cc) hard-linked N times: Ascend has no writer
#   here, and rank ids come from the folder order.
# Usage: bench/scale_table.sh [BUILD_DIR]   env: BASE, OUT (default
#   bench/out/scale), RANKS ("1 64 1024 6144"), KINETO_MAX_RANKS, KINETO_GZ, TASKS (3000),
#   MPI_PROCS ("1 2 4 8 16"; empty: no MPI runs), MPI_INPUT (native-1024)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/cli/moetrace
out=${OUT:-bench/out/scale}
base=${BASE:-$out/pangu.mtrace}
ranks_list=${RANKS:-1 64 1024 6144}
kineto_max=${KINETO_MAX_RANKS:-1024}
tasks=${TASKS:-3000}
procs=${MPI_PROCS-1 2 4 8 16}
mkdir -p "$out"
[ -f "$base" ] || "$bin" generate --preset pangu-ultra-moe-718b --steps 1 -o "$base"

# CPU seconds (user + sys, from getrusage: microseconds, where time(1)
# counts hundredths), wall seconds and peak RSS (MB) of one command, the
# mean of $reps runs.
measure() {
  read -r cpu wall rss < <(python3 - "$reps" "$out/stderr.txt" "$@" <<'PY'
import resource, subprocess, sys, time
reps, err, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
cpu = wall = 0.0
for _ in range(reps):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with open(err, "w") as e:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=e, check=True)
    wall += time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu += after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
print(f"{cpu / reps:.4f} {wall / reps:.4f} {after.ru_maxrss // 1024}")
PY
) || { cat "$out/stderr.txt"; exit 1; }
}

events_of() { "$bin" info "$1" 2>/dev/null | awk '$1 == "events" {print $2}'; }
# Bytes read: every file counted, hard links too (the Ascend rows).
bytes_of() { find -L "$1" -type f -printf '%s\n' | awk '{s += $1} END {printf "%.0f\n", s}'; }

row() {  # format ranks input
  local fmt=$1 n=$2 in=$3
  local ev by
  ev=$(events_of "$in")
  reps=$((n < 64 ? 20 : 1))
  by=$(bytes_of "$in")
  measure "$bin" analyze "$in" --json "$out/analysis.json"
  printf "| %s | %s | %s | %.1f | %.2f | %.2f | %.0f | %.1f M | %.0f | %s |\n" \
    "$fmt" "$n" "$ev" "$(echo "$by / 1000000" | bc -l)" "$wall" "$cpu" \
    "$(echo "$n / $cpu" | bc -l)" "$(echo "$ev / $cpu / 1000000" | bc -l)" \
    "$(echo "$by / $cpu / 1000000" | bc -l)" "$rss"
}

# One synthetic torch_npu trace_view.json of $tasks tasks.
ascend_trace_view() {
  local f=$1 t=1704161511422904204
  {
    printf '{"traceEvents": [\n{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"Python"}},\n'
    printf '{"ph":"M","name":"process_name","pid":2,"tid":0,"args":{"name":"CANN"}},\n'
    printf '{"ph":"M","name":"process_name","pid":3,"tid":0,"args":{"name":"Ascend Hardware"}}'
    # awk numbers are doubles and mawk's %d stops at 2^31 - 1: times are
    # printed as whole µs (exact below 2^53) and the ns offset from t0, whose
    # µs and ns parts are passed apart (t0 itself does not fit a double).
    awk -v n="$tasks" -v t0us="${t%???}" -v t0ns="${t: -3}" 'function us(ns) {
        ns += t0ns; return sprintf("%.0f.%03d", t0us + int(ns / 1000), ns % 1000) }
      BEGIN { for (i = 0; i < n; ++i) { t = i * 25000;
        printf ",\n{\"ph\":\"X\",\"name\":\"aten::add_\",\"pid\":1,\"tid\":1,\"ts\":\"%s\",\"dur\":20.5,\"cat\":\"cpu_op\",\"args\":{\"Sequence number\":-1}}", us(t);
        printf ",\n{\"ph\":\"X\",\"name\":\"Enqueue\",\"pid\":1,\"tid\":1,\"ts\":\"%s\",\"dur\":3.33,\"cat\":\"enqueue\",\"args\":{\"correlation_id\":%d}}", us(t + 2000), i;
        printf ",\n{\"ph\":\"s\",\"bp\":\"e\",\"name\":\"enqueue_to_dequeue\",\"id\":%d,\"pid\":1,\"tid\":1,\"ts\":\"%s\",\"cat\":\"async_task_queue\"}", i, us(t + 2000);
        printf ",\n{\"ph\":\"X\",\"name\":\"Dequeue@aclnnInplaceAdd\",\"pid\":1,\"tid\":2,\"ts\":\"%s\",\"dur\":10.27,\"cat\":\"dequeue\",\"args\":{\"correlation_id\":%d}}", us(t + 6000), i;
        printf ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"enqueue_to_dequeue\",\"id\":%d,\"pid\":1,\"tid\":2,\"ts\":\"%s\",\"cat\":\"async_task_queue\"}", i, us(t + 6000);
        printf ",\n{\"name\":\"AscendCL@aclnnInplaceAdd\",\"pid\":2,\"tid\":2,\"ts\":\"%s\",\"dur\":8.77,\"args\":{\"Thread Id\":2,\"Mode\":\"ACL_RTS\",\"level\":\"acl\"},\"ph\":\"X\"}", us(t + 7000);
        printf ",\n{\"name\":\"HostToDevice%d\",\"ph\":\"s\",\"cat\":\"HostToDevice\",\"id\":\"%d\",\"pid\":2,\"tid\":2,\"ts\":\"%s\"}", i, i, us(t + 8000);
        printf ",\n{\"name\":\"aclnnAdd_AddAiCore_Add\",\"pid\":3,\"tid\":3,\"ts\":\"%s\",\"dur\":1.2695,\"args\":{\"Model Id\":4294967295,\"Task Type\":\"AI_CORE\",\"Stream Id\":3,\"Task Id\":%d},\"ph\":\"X\"}", us(t + 20000), i;
        printf ",\n{\"name\":\"HostToDevice%d\",\"ph\":\"f\",\"id\":\"%d\",\"ts\":\"%s\",\"cat\":\"HostToDevice\",\"pid\":3,\"tid\":3,\"bp\":\"e\"}", i, i, us(t + 20000);
      } }'
    printf '\n]}\n'
  } >"$f"
}

echo "| input | ranks | events | MB | wall s | CPU s | ranks/s per core | events/s per core | MB/s per core | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in $ranks_list; do
  last=$((n - 1))
  nat=$out/native-$n.mtrace
  [ -f "$nat" ] || "$bin" convert "$base" --ranks "0-$last" -o "$nat" 2>/dev/null
  row native "$n" "$nat"
  if [ "$n" -le "$kineto_max" ]; then
    kin=$out/kineto-$n
    [ -d "$kin" ] || "$bin" convert "$base" --ranks "0-$last" -o "$kin/" 2>/dev/null
    row kineto "$n" "$kin"
  elif [ -n "${KINETO_GZ:-}" ]; then
    kin=$out/kineto-$n-gz
    for ((a = 0; a < n; a += 256)); do
      b=$((a + 255 < last ? a + 255 : last))
      [ -f "$kin/rank-$b.json.gz" ] && continue
      rm -rf "$out/kineto-chunk" && mkdir -p "$kin"
      "$bin" convert "$base" --ranks "$a-$b" -o "$out/kineto-chunk/" 2>/dev/null
      for f in "$out"/kineto-chunk/*.json; do
        gzip -1 -c "$f" >"$kin/$(basename "$f").gz.part" && mv "$kin/$(basename "$f").gz.part" "$kin/$(basename "$f").gz"
      done
    done
    rm -rf "$out/kineto-chunk"
    row kineto.gz "$n" "$kin"
  fi
  asc=$out/ascend-$n
  if [ ! -d "$asc" ]; then
    [ -f "$out/trace_view.json" ] || ascend_trace_view "$out/trace_view.json"
    for ((r = 0; r < n; ++r)); do
      mkdir -p "$asc/rank${r}_ascend_pt/ASCEND_PROFILER_OUTPUT"
      ln "$out/trace_view.json" "$asc/rank${r}_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    done
  fi
  row ascend "$n" "$asc"
done

[ -n "$procs" ] || exit 0
command -v mpirun >/dev/null || { echo "no mpirun: MPI runs skipped"; exit 0; }
in=${MPI_INPUT:-$out/native-1024.mtrace}
[ -f "$in" ] || exit 0
echo
echo "mpirun -n P analyze $in; per process: CPU s, peak RSS MB, bytes sent / received"
"$bin" analyze "$in" --json "$out/one.json" >/dev/null
for p in $procs; do
  rm -f "$out"/mpi-time.* "$out/mpi.json"
  start=$(date +%s.%N)
  MOETRACE_MPI_STATS=1 mpirun --allow-run-as-root --oversubscribe -n "$p" \
    sh -c '/usr/bin/time -f "%U %S %M" -o "$0/mpi-time.$OMPI_COMM_WORLD_RANK" "$@"' "$out" \
    "$bin" analyze "$in" --json "$out/mpi.json" >/dev/null 2>"$out/mpi-stderr.txt"
  end=$(date +%s.%N)
  cmp -s "$out/mpi.json" "$out/one.json" && same="identical to one process" || same="DIFFERS from one process"
  per=$(for f in $(ls "$out"/mpi-time.* | sort -t. -k2 -n); do
    tail -1 "$f" | awk -v p="${f##*.}" '{printf "%s: %.2f s CPU %d MB; ", p, $1 + $2, $3 / 1024}'
  done)
  printf "P=%-3s wall %.2f s, JSON %s\n  per process: %s\n" "$p" "$(echo "$end - $start" | bc -l)" "$same" "$per"
  grep -i "bytes" "$out/mpi-stderr.txt" | sort | head -n 20
done
