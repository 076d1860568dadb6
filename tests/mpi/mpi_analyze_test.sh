#!/usr/bin/env bash
# ctest (label mpi): `mpirun -n 3 moetrace analyze` (and report, gate,
# advise, generate) writes the same outputs as one process, byte for byte; a
# corrupt rank ends every process with exit 2 and its name, within seconds.
#   mpi_analyze_test.sh MOETRACE CASE WORKDIR
# CASE: tracegen | kineto | ascend-cluster | ascend-ranks | corrupt | corrupt-kineto | skip
#       | report | gate | diff | advise | generate | corrupt-report | fault
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

# 64 ranks (PP 2 x DP 32), two steps, extra --set KEY=VALUE from the args.
tiny64() {
  local out=$1; shift
  "$bin" generate --preset tiny-moe --set steps=2 --set parallel.dp=32 \
    --set parallel.world_size=64 --set parallel.global_batch_size=128 "$@" -o "$out" >/dev/null
}

# Runs `moetrace ARGS` alone and under mpirun: same exit code, same stdout.
# Each run's outputs go to $work/one/ and $work/mpi/ (ARGS name them @/).
same_command() {
  mkdir -p "$work/one" "$work/mpi"
  set +e
  "$bin" "${@//@\//$work/one/}" >"$work/one/stdout"
  rc1=$?
  "${mpi[@]}" "$bin" "${@//@\//$work/mpi/}" >"$work/mpi/stdout"
  rc3=$?
  set -e
  [ "$rc1" = "$rc3" ] || { echo "exit $rc1 alone, $rc3 under mpirun"; exit 1; }
  for f in "$work/one"/*; do
    cmp "$f" "$work/mpi/$(basename "$f")"
    echo "identical: $(basename "$f") ($(wc -c <"$f") bytes)"
  done
  return "$rc1"
}

# Exit 2, one message naming the corrupt file and its byte, within seconds,
# no output written: `moetrace CMD t.mtrace ARGS...` under mpirun.
corrupt_fails() {
  set +e
  start=$(date +%s)
  "${mpi[@]}" "$bin" "$@" >"$work/out.txt" 2>"$work/err.txt"
  rc=$?
  set -e
  cat "$work/err.txt"
  [ "$rc" = 2 ] || { echo "exit $rc, expected 2"; exit 1; }
  [ $(( $(date +%s) - start )) -lt 30 ] || { echo "too slow: a hang?"; exit 1; }
  [ "$(grep -c "moetrace: error: .*t.mtrace: byte [0-9]" "$work/err.txt")" = 1 ] ||
    { echo "expected one message naming the file and byte"; exit 1; }
}

corrupt_trace() {
  # Ranks spread over the 3 processes; one of them corrupt (in the middle
  # of the file: its rank is read by some process, not necessarily 0).
  "$bin" generate --preset tiny-moe --set steps=1 --set parallel.dp=16 \
    --set parallel.world_size=32 --set parallel.global_batch_size=64 -o "$work/t.mtrace" >/dev/null
  size=$(stat -c %s "$work/t.mtrace")
  printf '\xff\xff\xff\xff\xff\xff\xff\xff' |
    dd of="$work/t.mtrace" bs=1 seek=$((size / 2)) conv=notrunc status=none
}

case $case in
  report)
    tiny64 "$work/t.mtrace"
    same_command report "$work/t.mtrace" --html @/r.html --md @/r.md
    grep -q "<html" "$work/mpi/r.html"
    # Markdown to the terminal (no output file), and from a saved analysis.
    rm -rf "$work/one" "$work/mpi"
    same_command report "$work/t.mtrace"
    "$bin" analyze "$work/t.mtrace" --json "$work/a.json" >/dev/null
    rm -rf "$work/one" "$work/mpi"
    same_command report "$work/a.json" --md @/r.md
    ;;
  gate)
    tiny64 "$work/base.mtrace"
    "$bin" analyze "$work/base.mtrace" --json "$work/base.json" >/dev/null
    same_command gate "$work/base.mtrace" --baseline "$work/base.json" --junit @/g.xml --md @/g.md
    # A regression (full recompute: longer steps): exit 1 from both, same verdicts.
    tiny64 "$work/slow.mtrace" --set memory.recompute=full
    rm -rf "$work/one" "$work/mpi"
    rc=0
    same_command gate "$work/slow.mtrace" --baseline "$work/base.json" --junit @/g.xml --md @/g.md || rc=$?
    [ "$rc" = 1 ] || { echo "gate exit $rc on a regression, expected 1"; exit 1; }
    grep -q "^gate: FAIL" "$work/mpi/stdout"
    ;;
  diff)
    # Every kind of pair (reports/input_pair.h: two saved analyses parsed side
    # by side on process 0, a saved B parsed while trace A is analysed).
    tiny64 "$work/a.mtrace"
    tiny64 "$work/b.mtrace" --set host.task_queue=false
    "$bin" analyze "$work/a.mtrace" --json "$work/a.json" >/dev/null
    "$bin" analyze "$work/b.mtrace" --json "$work/b.json" >/dev/null
    for pair in "a.mtrace b.mtrace" "a.json b.json" "a.mtrace b.json" "a.json b.mtrace"; do
      read -r x y <<<"$pair"
      rm -rf "$work/one" "$work/mpi"
      same_command diff "$work/$x" "$work/$y" --json @/d.json --md @/d.md --html @/d.html
      grep -q '"step_change_ns": [1-9]' "$work/mpi/d.json"
    done
    # A truncated saved side (still an analysis by its first key): exit 2,
    # one message naming it, no output, no hang -- as A, and as B while
    # trace A is analysed.
    head -c 1000 "$work/a.json" >"$work/bad.json"
    for pair in "bad.json b.mtrace" "a.mtrace bad.json" "a.json bad.json"; do
      read -r x y <<<"$pair"
      set +e
      start=$(date +%s)
      "${mpi[@]}" "$bin" diff "$work/$x" "$work/$y" --json "$work/bad-diff.json" \
        >"$work/out.txt" 2>"$work/err.txt"
      rc=$?
      set -e
      cat "$work/err.txt"
      [ "$rc" = 2 ] || { echo "$pair: exit $rc, expected 2"; exit 1; }
      [ $(( $(date +%s) - start )) -lt 30 ] || { echo "$pair: too slow: a hang?"; exit 1; }
      [ "$(grep -c "moetrace: error: .*bad.json: byte [0-9]*: malformed JSON" "$work/err.txt")" = 1 ] ||
        { echo "$pair: expected one message naming bad.json"; exit 1; }
      [ ! -e "$work/bad-diff.json" ] || { echo "$pair: a diff was written"; exit 1; }
    done
    ;;
  advise)
    # 16 ranks keep the replays short.
    "$bin" generate --preset tiny-moe --set steps=1 --set host.task_queue=false \
      -o "$work/t.mtrace" >/dev/null
    same_command advise "$work/t.mtrace" --json @/p.json
    grep -q '"proposals": \[$' "$work/mpi/p.json"
    # replay: the same shared analysis, the replay on process 0.
    rm -rf "$work/one" "$work/mpi"
    same_command replay "$work/t.mtrace" --set speed.grouped_matmul=2 --json @/r.json -o @/r.mtrace
    # reduced to one representative per role (process 0 signs every rank
    # again for the roles' envelopes): still the one-process output.
    rm -rf "$work/one" "$work/mpi"
    same_command replay "$work/t.mtrace" --reduce roles --set speed.grouped_matmul=2 --json @/rr.json
    grep -q '"reduction": "[0-9]* representatives of 16 ranks' "$work/mpi/rr.json"
    ;;
  generate)
    # One shard per process, read back as one trace: the same analysis as the
    # one-file trace of the same config (labels once: the same label checks).
    tiny64 "$work/one.mtrace"
    "${mpi[@]}" "$bin" generate --preset tiny-moe --set steps=2 --set parallel.dp=32 \
      --set parallel.world_size=64 --set parallel.global_batch_size=128 -o "$work/dir" >/dev/null
    [ "$(ls "$work/dir")" = "$(printf 'shard-00000.mtrace\nshard-00001.mtrace\nshard-00002.mtrace')" ]
    "$bin" analyze "$work/one.mtrace" --json "$work/one.json" >"$work/one.txt"
    "$bin" analyze "$work/dir" --json "$work/dir.json" >"$work/dir.txt"
    cmp "$work/one.json" "$work/dir.json"
    cmp "$work/one.txt" "$work/dir.txt"
    grep -q '"rank_count": 64' "$work/dir.json"
    grep -q '"label_checks": \[$' "$work/dir.json"
    "${mpi[@]}" "$bin" analyze "$work/dir" --json "$work/mpi.json" >/dev/null
    cmp "$work/one.json" "$work/mpi.json"
    echo "identical: $(wc -c <"$work/one.json") bytes"
    # Alone, -o an existing directory: one shard, the same analysis.
    mkdir -p "$work/alone"
    tiny64 "$work/alone"
    [ "$(ls "$work/alone")" = shard-00000.mtrace ]
    "$bin" analyze "$work/alone" --json "$work/alone.json" >/dev/null
    cmp "$work/one.json" "$work/alone.json"
    # Another run's .mtrace in the directory is refused, naming it.
    cp "$work/one.mtrace" "$work/dir/old.mtrace"
    set +e
    "${mpi[@]}" "$bin" generate --preset tiny-moe -o "$work/dir" 2>"$work/err.txt"
    rc=$?
    set -e
    [ "$rc" = 2 ] && [ "$(grep -c "moetrace: error: .*old.mtrace: a .mtrace file of another run" "$work/err.txt")" = 1 ] ||
      { cat "$work/err.txt"; echo "exit $rc, expected 2 and one message"; exit 1; }
    # A file name under mpirun is refused (every process would write it).
    set +e
    "${mpi[@]}" "$bin" generate --preset tiny-moe -o "$work/x.mtrace" 2>"$work/err.txt"
    rc=$?
    set -e
    cat "$work/err.txt"
    [ "$rc" = 2 ] && [ "$(grep -c "names a directory" "$work/err.txt")" = 1 ] ||
      { echo "exit $rc, expected 2 and one message"; exit 1; }
    # An RL config is one process, one file: refused under mpirun, once,
    # without a hang (tracegen/rl/README.md).
    set +e
    "${mpi[@]}" "$bin" generate --preset tiny-rl -o "$work/rl/" 2>"$work/err.txt"
    rc=$?
    set -e
    [ "$rc" = 2 ] && [ "$(grep -c "an RL config (rl.algorithm) is generated by one process" "$work/err.txt")" = 1 ] ||
      { cat "$work/err.txt"; echo "exit $rc, expected 2 and one message"; exit 1; }
    ;;
  corrupt-report)
    corrupt_trace
    corrupt_fails report "$work/t.mtrace" --html "$work/r.html"
    [ ! -e "$work/r.html" ] || { echo "a report was written"; exit 1; }
    corrupt_fails advise "$work/t.mtrace" --json "$work/p.json"
    [ ! -e "$work/p.json" ] || { echo "advice was written"; exit 1; }
    ;;
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
    corrupt_trace
    if [ "$case" = corrupt ]; then
      corrupt_fails analyze "$work/t.mtrace" --json "$work/mpi.json"
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
  fault)
    # An InputError on one process alone, after the agreement on the ranks'
    # analysis, where the others go on to the gather of the parts
    # (MOETRACE_MPI_FAULT, analyzer/distributed.cc): exit 2 and that
    # process's message, never a hang -- on process 1, then on process 0
    # (which used to wait for the others in an agreement they never reached).
    tiny64 "$work/t.mtrace"
    for p in 1 0; do
      set +e
      start=$(date +%s)
      MOETRACE_MPI_FAULT=$p "${mpi[@]}" -x MOETRACE_MPI_FAULT "$bin" analyze "$work/t.mtrace" \
        --json "$work/mpi.json" >"$work/out.txt" 2>"$work/err.txt"
      rc=$?
      set -e
      cat "$work/err.txt"
      [ "$rc" = 2 ] || { echo "process $p: exit $rc, expected 2"; exit 1; }
      [ $(( $(date +%s) - start )) -lt 30 ] || { echo "too slow: a hang?"; exit 1; }
      [ "$(grep -c "moetrace: error: MOETRACE_MPI_FAULT: process $p failed on its own" "$work/err.txt")" = 1 ] ||
        { echo "expected the message of process $p once"; exit 1; }
      [ ! -e "$work/mpi.json" ] || { echo "a JSON was written"; exit 1; }
    done
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
