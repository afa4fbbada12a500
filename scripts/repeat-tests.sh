#!/usr/bin/env bash
# The whole suite N times in a row on a fresh clone of this checkout's HEAD, with H CPU hogs running at
# normal priority beside it: how "the tests pass every time" is shown (issue 16). Usage:
#   scripts/repeat-tests.sh [N=5] [H=2]
# Prints one line per run (exit code, seconds, the test counts, the load average); each run's output is
# kept in $DIR/run<i>.log. Exits 1 if any run failed.
set -u
runs=${1:-5}
hogs=${2:-2}
dir=$(mktemp -d /tmp/softdpu-repeat-XXXXXX)
git clone -q "$(git rev-parse --show-toplevel)" "$dir/clone" && cd "$dir/clone" || exit 1
echo "HEAD $(git rev-parse --short HEAD), logs in $dir"
npm ci > "$dir/npm-ci.log" 2>&1 || { echo "npm ci failed: $dir/npm-ci.log"; exit 1; }
pids=()
for _ in $(seq 1 "$hogs"); do (while :; do :; done) & pids+=($!); done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
failed=0
for run in $(seq 1 "$runs"); do
  start=$(date +%s)
  npm test > "$dir/run$run.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || failed=1
  echo "run $run: exit $rc, $(( $(date +%s) - start )) s, $(grep -E '^# (pass|fail)' "$dir/run$run.log" | tr '\n' ' ')load $(cut -d' ' -f1-3 /proc/loadavg)"
done
exit $failed
