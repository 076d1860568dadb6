#!/usr/bin/env bash
# ctest (label mpi): `mpirun -n 3 moetrace analyze` writes the same JSON as
# one process, byte for byte; a corrupt rank ends every process with exit 2
# and its name, within seconds.
#   mpi_analyze_test.sh MOETRACE CASE WORKDIR
# CASE: tracegen | kineto | ascend-cluster | ascend-ranks | corrupt | corrupt-kineto | skip
# Real traces come from $MOETRACE_REAL_TRACES (default ../shared/traces next
# to the source tree, passed by CMake); cases needing them exit 77 (skipped)
# when absent.
set -euo pipefail
bin=$1 case=$2 work=$3
traces=${MOETRACE_REAL_TRACES:-$4}
rm -rf "$work" && mkdir -p "$work"
# CI runs as root; oversubscribe: 3 processes on any number of cores.
mpi=(timeout 60 mpirun --allow-run-as-root --oversubscribe -n 3)

need_traces() {
  [ -d "$traces/$1" ] || { echo "no $traces/$1: skipped"; exit 77; }
}

same_as_one_process() {
  "$bin" analyze "$@" --json "$work/one.json" >"$work/one.txt"
  "${mpi[@]}" "$bin" analyze "$@" --json "$work/mpi.json" >"$work/mpi.txt"
  cmp "$work/one.json" "$work/mpi.json"
  cmp "$work/one.txt" "$work/mpi.txt"  # the summary, printed by process 0 only
  echo "identical: $(wc -c <"$work/one.json") bytes"
}

case $case in
  tracegen)
    "$bin" generate --preset tiny-moe --set steps=2 --set parallel.dp=32 \
      --set parallel.world_size=64 --set parallel.global_batch_size=128 -o "$work/t.mtrace" >/dev/null
    same_as_one_process "$work/t.mtrace"
    grep -q '"rank_count": 64' "$work/mpi.json"
    # A selection of ranks and steps gives the same cut on every process.
    same_as_one_process "$work/t.mtrace" --ranks 3-40,63 --steps 1
    grep -q '"rank_count": 39' "$work/mpi.json"
    ;;
  kineto)
    need_traces kineto/a2a-2rank
    same_as_one_process "$traces/kineto/a2a-2rank"
    ;;
  ascend-cluster)
    need_traces ascend/cluster-output
    same_as_one_process "$traces/ascend/cluster-output"
    ;;
  ascend-ranks)
    # Several Ascend rank folders (copies of one), one parent directory.
    need_traces ascend/advisor-timeline
    for r in 0 1 2 3; do
      mkdir -p "$work/cluster/node${r}_ascend_pt"
      cp -r "$traces/ascend/advisor-timeline/ASCEND_PROFILER_OUTPUT" "$work/cluster/node${r}_ascend_pt/"
    done
    same_as_one_process "$work/cluster"
    ;;
  corrupt|skip)
    # Ranks spread over the 3 processes; one of them corrupt (in the middle
    # of the file: its rank is read by some process, not necessarily 0).
    "$bin" generate --preset tiny-moe --set steps=1 --set parallel.dp=16 \
      --set parallel.world_size=32 --set parallel.global_batch_size=64 -o "$work/t.mtrace" >/dev/null
    size=$(stat -c %s "$work/t.mtrace")
    printf '\xff\xff\xff\xff\xff\xff\xff\xff' |
      dd of="$work/t.mtrace" bs=1 seek=$((size / 2)) conv=notrunc status=none
    if [ "$case" = corrupt ]; then
      set +e
      start=$(date +%s)
      "${mpi[@]}" "$bin" analyze "$work/t.mtrace" --json "$work/mpi.json" >"$work/out.txt" 2>"$work/err.txt"
      rc=$?
      set -e
      cat "$work/err.txt"
      [ "$rc" = 2 ] || { echo "exit $rc, expected 2"; exit 1; }
      [ $(( $(date +%s) - start )) -lt 30 ] || { echo "too slow: a hang?"; exit 1; }
      [ "$(grep -c "moetrace: error: .*t.mtrace: byte [0-9]" "$work/err.txt")" = 1 ] ||
        { echo "expected one message naming the file and byte"; exit 1; }
      [ ! -e "$work/mpi.json" ] || { echo "a JSON was written"; exit 1; }
    else
      set +e
      "$bin" analyze "$work/t.mtrace" --skip-bad-ranks --json "$work/one.json" >"$work/one.txt"
      rc1=$?
      "${mpi[@]}" "$bin" analyze "$work/t.mtrace" --skip-bad-ranks --json "$work/mpi.json" >"$work/mpi.txt"
      rc3=$?
      set -e
      [ "$rc1" = 3 ] && [ "$rc3" = 3 ] || { echo "exits $rc1 / $rc3, expected 3"; exit 1; }
      cmp "$work/one.json" "$work/mpi.json"
      grep -q '"skipped_ranks": \[$' "$work/mpi.json"
      grep -q "^skipped " "$work/mpi.txt"
    fi
    ;;
  corrupt-kineto)
    # A Kineto set with one truncated rank file: exit 2 naming that file.
    need_traces kineto/a2a-2rank
    mkdir -p "$work/set"
    cp "$traces"/kineto/a2a-2rank/* "$work/set/"
    printf '{"traceEvents": [ {"ph": "X", oops' >"$work/set/rank9.json"
    set +e
    "${mpi[@]}" "$bin" analyze "$work/set" --json "$work/mpi.json" >"$work/out.txt" 2>"$work/err.txt"
    rc=$?
    set -e
    cat "$work/err.txt"
    [ "$rc" = 2 ] || { echo "exit $rc, expected 2"; exit 1; }
    [ "$(grep -c "moetrace: error: .*rank9.json" "$work/err.txt")" = 1 ] ||
      { echo "expected one message naming rank9.json"; exit 1; }
    ;;
  *) echo "unknown case $case"; exit 1 ;;
esac
