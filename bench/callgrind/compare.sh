#!/usr/bin/env bash
# compare.sh BASE [HEAD]: instructions per operation of the busy paths (the workloads beside this file),
# counted by valgrind's callgrind, for git revision BASE and for HEAD (default: this working tree, as
# it is). Instruction counts do not move with the machine's load, so a loaded machine can compare.
#
# Each revision other than the working tree gets a temporary git worktree (node_modules symlinked from
# this checkout when package-lock.json is the same, else npm ci) and is built (npm run build). Every
# workload then runs under callgrind at N and 2N operations, both after the same warm-up. Callgrind
# dumps its counts whenever uv_loadavg is entered, which a workload calls just before and just after
# its N operations (common.mjs): I is the second part alone, every thread of the process summed, so
# start-up, warm-up and teardown (whose counts follow the wall clock: timers, lingering) stay out, and
# (I(2N) - I(N)) / N also cancels what the loop costs once. Each build is measured CG_REPEAT times; the
# spread is the largest difference between its repeats, over their mean.
#
# Environment: CG_N (default 20000), CG_WARMUP (default 5000), CG_REPEAT (default 2), CG_JOBS
# (callgrind runs at a time, default 2), CG_WORKLOADS (space- or comma-separated; default: all four), CG_NODE_FLAGS (default
# --single-threaded --predictable: no concurrent compiler or GC threads, and V8's tiering made deterministic;
# without --predictable one build's repeats differed by 6-9 % on comch-ctrl and sync-event, with it by 0.5 %),
# CG_KEEP=1 keeps the scratch directory (worktrees, callgrind.out files, logs) for callgrind_annotate.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
base=${1:?usage: compare.sh BASE [HEAD]}
head=${2:-}
N=${CG_N:-20000}
WARMUP=${CG_WARMUP:-5000}
REPEAT=${CG_REPEAT:-2}
JOBS=${CG_JOBS:-2}
WORKLOADS=${CG_WORKLOADS:-comch-fastpath comch-ctrl sync-event dpa-msgq}
WORKLOADS=${WORKLOADS//,/ }
NODE_FLAGS=${CG_NODE_FLAGS:---single-threaded --predictable}
scratch=$(mktemp -d /tmp/sdpu-cgcmp-XXXXXX)

cleanup() {
  for wt in "$scratch"/wt-*; do [ -d "$wt" ] && git -C "$repo" worktree remove --force "$wt" >/dev/null 2>&1 || true; done
  if [ "${CG_KEEP:-}" = 1 ]; then echo "kept $scratch" >&2; else rm -rf "$scratch"; fi
}
trap cleanup EXIT

# checkout LABEL REV: prints the directory of a built checkout of REV (empty REV: this working tree).
checkout() {
  local label=$1 rev=$2 dir=$repo
  if [ -n "$rev" ]; then
    dir=$scratch/wt-$label
    git -C "$repo" worktree add --detach "$dir" "$rev" >/dev/null 2>&1
    if cmp -s "$dir/package-lock.json" "$repo/package-lock.json"; then ln -s "$repo/node_modules" "$dir/node_modules"
    else (cd "$dir" && npm ci --no-audit --no-fund) >"$scratch/$label.npm.log" 2>&1; fi
  fi
  (cd "$dir" && npm run build) >"$scratch/$label.build.log" 2>&1 || { echo "build of ${rev:-the working tree} failed: $scratch/$label.build.log" >&2; exit 1; }
  echo "$dir"
}

# measure DIR LABEL WORKLOAD OPS REPEAT: runs one workload under callgrind, prints the instructions of
# its measured operations (the second dump of each process it made, summed). A run that fails (or
# leaves no second dump) is run once more; failing again, it prints nothing and returns 1, and the
# table reports its workload as failed. The DPA's execution units get 10 minutes to start (a loaded
# machine under valgrind can take longer than the library's 30 s; a base without
# $SOFTDPU_DPA_START_MS keeps its 30 s, which the retry covers).
measure() {
  local dir=$1 out=$scratch/cg/$2.$3.$4.$5 try v
  for try in 1 2; do
    rm -f "$out".*.out*
    if SOFTDPU_CHECKOUT=$dir SOFTDPU_DPA_START_MS=600000 valgrind --tool=callgrind --trace-children=yes --dump-before=uv_loadavg \
         --callgrind-out-file="$out.%p.out" node $NODE_FLAGS "$here/$3.mjs" "$4" "$WARMUP" >"$out.try$try.log" 2>&1; then
      v=$(awk '/^part:/ { part = $2 } /^summary:/ && part == 2 { s += $2; n++ } END { if (n) printf "%.0f\n", s }' "$out".*.out* 2>/dev/null || true)
      if [ -n "$v" ]; then echo "$v"; return 0; fi
    fi
    echo "$3 ($2, $4 ops, repeat $5) failed (try $try of 2): $out.try$try.log" >&2
  done
  return 1
}
export -f measure
export scratch here WARMUP NODE_FLAGS

mkdir -p "$scratch/cg"
echo "building ${base} and ${head:-the working tree} in $scratch ..." >&2
base_dir=$(checkout base "$base")
head_dir=$(checkout head "$head")

# Every run: build label, workload, ops, repeat -> "label workload ops repeat instructions". A workload's
# runs of both builds are queued together, so that runs.txt (CG_KEEP=1) holds whole workloads early.
for w in $WORKLOADS; do
  for label in base head; do
    dir=$base_dir; [ $label = head ] && dir=$head_dir
    for ops in "$N" $((2 * N)); do for r in $(seq 1 "$REPEAT"); do
      echo "$dir $label $w $ops $r"
    done; done
  done
done | xargs -P "$JOBS" -L 1 bash -c 'echo "$1 $2 $3 $4 $(measure "$0" "$1" "$2" "$3" "$4" || echo failed)"' >"$scratch/runs.txt" || true

awk -v n="$N" -v base="$base" -v head="${head:-working tree}" '
  { I[$1, $2, $3, $4] = $5; R[$4] = 1; if (!($2 in order)) order[$2] = ++k; if (NF < 5 || $5 == "failed") bad[$2] = bad[$2] (bad[$2] == "" ? "" : ", ") $1 " " $3 " ops #" $4 }
  END {
    printf "instructions per operation, (I(2N) - I(N)) / N, N = %d; spread: largest repeat difference / mean\n", n
    printf "%-16s %14s %14s %8s %12s %12s\n", "workload", "base", "head", "ratio", "base spread", "head spread"
    for (i = 1; i <= k; i++) for (w in order) if (order[w] == i) {
      if (w in bad) { printf "%-16s failed (twice) on %s: see the logs named above (CG_KEEP=1 keeps them)\n", w, bad[w]; failed = 1; continue }
      for (b = 0; b < 2; b++) {
        label = b ? "head" : "base"; sum = 0; m = 0; lo = ""; hi = ""
        for (r in R) { v = (I[label, w, 2 * n, r] - I[label, w, n, r]) / n; sum += v; m++
                       if (lo == "" || v < lo) lo = v; if (hi == "" || v > hi) hi = v }
        mean[b] = sum / m; spread[b] = (hi - lo) / mean[b] * 100
      }
      printf "%-16s %14.1f %14.1f %8.4f %11.2f%% %11.2f%%\n", w, mean[0], mean[1], mean[1] / mean[0], spread[0], spread[1]
    }
    printf "base = %s, head = %s\n", base, head
    exit failed
  }' "$scratch/runs.txt"
