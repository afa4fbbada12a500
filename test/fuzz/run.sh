#!/usr/bin/env bash
# Builds softdpu's C library and the libFuzzer targets of test/fuzz/ with clang (-fsanitize=fuzzer,
# address,undefined), then fuzzes one target for a bounded time, its corpus seeded by the target itself
# (seed mode, seeds.h). docs/c.md, "Fuzzing"; test/capi-fuzz.test.ts runs every target this way.
#
#   test/fuzz/run.sh TARGET SECONDS [OUT]   build into OUT (default build/fuzz; the library's objects are
#                                           kept and rebuilt when a source changes), seed OUT/TARGET/corpus,
#                                           fuzz. Targets: test/fuzz/*.c (blob handshake server
#                                           client conn topology). More libFuzzer flags in $FUZZ_FLAGS
#                                           (-jobs=2, -max_len=...). The fabric is $SOFTDPU_FABRIC, else
#                                           a private directory made and removed here.
#
# A crash leaves its input in OUT/TARGET/crash-* and exits non-zero; replay it with
# `OUT/TARGET-fuzzer FILE` (SOFTDPU_FUZZ_LOG=1 shows the library's log lines).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CC=${CC:-clang}
SANITIZE=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)

build() {
  local out=$1 target=$2 obj source
  mkdir -p "$out/obj" "$out/include"
  # The doca_build_config.h of softdpu sdk's host tree (src/cli/sdk-build.ts, buildConfig).
  printf '%s\n' '#define SOFTDPU 1' '#define SOFTDPU_SDK_VERSION "fuzz"' '#define DOCA_ARCH_HOST' '#define DOCA_ARCH_X86' \
    >"$out/include/doca_build_config.h"
  local flags=(-std=gnu11 -O1 -g -pthread -Wall -Wextra -Werror "${SANITIZE[@]}"
    -DDOCA_ALLOW_EXPERIMENTAL_API -DDOCA_ALLOW_DEPRECATED_API -DSOFTDPU_VERSION='"fuzz"'
    "-I$out/include" "-I$root/capi/include" "-I$root/capi")
  local objects=() pids=() pid
  for source in "$root"/capi/{core,log,argp,fabric,comch,syncevent}/*.c; do
    obj="$out/obj/$(basename "$(dirname "$source")")-$(basename "$source" .c).o"
    objects+=("$obj")
    # Rebuilt when it, any header of capi/ or this script changed since.
    if [ ! -e "$obj" ] || [ "$source" -nt "$obj" ] || [ "$0" -nt "$obj" ] || [ -n "$(find "$root/capi" -name '*.h' -newer "$obj" -print -quit)" ]; then
      echo "$CC -fsanitize=fuzzer-no-link ... -c ${source#"$root"/}" >&2
      "$CC" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$source" -o "$obj" &
      pids+=($!)
      # two at once: the machines this runs on have two processors
      if [ ${#pids[@]} -ge 2 ]; then
        wait "${pids[0]}"
        pids=("${pids[@]:1}")
      fi
    fi
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  rm -f "$out/libdoca-fuzz.a"
  ar rcs "$out/libdoca-fuzz.a" "${objects[@]}"
  "$CC" "${flags[@]}" -fsanitize=fuzzer "$here/$target.c" "$out/libdoca-fuzz.a" -lm -o "$out/$target-fuzzer"
}

usage='usage: test/fuzz/run.sh TARGET SECONDS [OUT]'
target=${1:?$usage}
seconds=${2:?$usage}
out=${3:-$root/build/fuzz}
[ -f "$here/$target.c" ] || { echo "no fuzz target $target (test/fuzz/$target.c); $usage" >&2; exit 2; }
build "$out" "$target"
if [ -z "${SOFTDPU_FABRIC:-}" ]; then
  SOFTDPU_FABRIC=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-fuzz.XXXXXX")
  trap 'rm -rf "$SOFTDPU_FABRIC"' EXIT
fi
export SOFTDPU_FABRIC
mkdir -p "$out/$target/corpus"
SOFTDPU_FUZZ_SEEDS="$out/$target/corpus" "$out/$target-fuzzer"
cd "$out/$target"
# shellcheck disable=SC2086
"$out/$target-fuzzer" -max_total_time="$seconds" -print_final_stats=1 ${FUZZ_FLAGS:-} corpus
