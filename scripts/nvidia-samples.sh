#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# NVIDIA's own DOCA 3.0 samples, built unchanged against softdpu's C library and run against softdpu's
# samples (docs/c.md, "NVIDIA's samples"). Run by hand, from a checkout of this repository after
# `npm run build`, with a checkout that holds NVIDIA's samples/ and applications/common/ as DOCA ships
# them under /opt/mellanox/doca (for example github.com/stolyarchuk/doca-docs, DOCA 3.0.0058):
#
#   scripts/nvidia-samples.sh SAMPLES_DIR [WORK_DIR]
#
# It writes both install trees with `softdpu sdk` into WORK_DIR (a new temporary directory by default,
# kept for its logs), copies the six samples' files into each tree where DOCA's own install has them
# (so that their meson.build finds ../../../VERSION and ../../../applications/common as it does on a
# BlueField), builds each sample with its own meson.build against each side, and runs the pairs on a
# private fabric each: NVIDIA's, softdpu's C samples (capi/samples) and softdpu's TypeScript samples
# (`softdpu sample`), every server with every client. It prints one line per build and per pair and
# exits 0 when every pair passed. Nothing of NVIDIA's is copied into this repository.
set -u

usage() { echo "usage: $0 SAMPLES_DIR [WORK_DIR]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
SRC=$(cd "$1" && pwd) || usage
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLI=(node "$ROOT/dist/src/cli/main.js")
WORK=${2:-$(mktemp -d "${TMPDIR:-/tmp}/softdpu-nvidia.XXXXXX")}
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd)
TIMEOUT=${NVIDIA_SAMPLES_TIMEOUT:-90} # seconds for each program of a pair
ONLY=${NVIDIA_SAMPLES_ONLY:-} # run only the pairs of this sample family (comch_ctrl_path, sync_event, comch_data_path)
case $ONLY in "" | comch_ctrl_path | sync_event | comch_data_path) ;; *) echo "$0: NVIDIA_SAMPLES_ONLY=$ONLY is not comch_ctrl_path, sync_event or comch_data_path" >&2; exit 2 ;; esac
runs() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

[ -f "$ROOT/dist/src/cli/main.js" ] || { echo "$0: run npm run build first" >&2; exit 2; }
for tool in meson ninja pkg-config cc c++ timeout; do
	command -v $tool >/dev/null || { echo "$0: $tool is not installed (NVIDIA's meson projects name C and C++)" >&2; exit 2; }
done

COMCH=samples/doca_comch
COMMON=samples/doca_common
SAMPLES=("$COMCH/comch_ctrl_path_server" "$COMCH/comch_ctrl_path_client"
	"$COMCH/comch_data_path_high_speed_server" "$COMCH/comch_data_path_high_speed_client"
	"$COMMON/sync_event_local_pci" "$COMMON/sync_event_remote_pci")
FILES=(samples/common.c samples/common.h "$COMCH"/comch_ctrl_path_common.{c,h} "$COMCH"/comch_data_path_high_speed_common.{c,h}
	"$COMMON"/common_common.{c,h} applications/common/utils.{c,h} "${SAMPLES[@]}")
for f in "${FILES[@]}"; do
	[ -e "$SRC/$f" ] || { echo "$0: $SRC has no $f (a DOCA 3.0 samples checkout has samples/ and applications/)" >&2; exit 2; }
done

echo "softdpu: NVIDIA's samples from $SRC, work directory $WORK"
"${CLI[@]}" sdk --prefix "$WORK/sdk" > "$WORK/sdk.log" 2>&1 || { cat "$WORK/sdk.log" >&2; exit 1; }
TRIPLET=$(sed -n 's/^softdpu sdk: DOCA [^ ]* for \([^ ]*\) in .*/\1/p' "$WORK/sdk.log")
pc() { echo "$WORK/sdk/$1/lib/$TRIPLET/pkgconfig"; }

# Where DOCA's install has them: <prefix>/samples/..., <prefix>/applications/common/...
for side in host dpu; do
	(cd "$SRC" && cp -r --parents "${FILES[@]}" "$WORK/sdk/$side/")
done

# build SIDE SOURCE_DIR NAME: meson setup and ninja; prints one line.
build() {
	local side=$1 source=$2 name=$3 out="$WORK/build/$1/$3" log="$WORK/build/$1/$3.log"
	mkdir -p "$(dirname "$log")"
	if PKG_CONFIG_PATH=$(pc "$side") meson setup "$out" "$source" > "$log" 2>&1 && ninja -C "$out" >> "$log" 2>&1; then
		printf 'BUILT  %-5s %-42s (%s compiler warnings)\n' "$side" "$name" "$(grep -c 'warning:' "$log")"
	else
		printf 'FAILED %-5s %-42s see %s\n' "$side" "$name" "$log"
		BUILD_FAILED=1
	fi
}

BUILD_FAILED=0
for side in dpu host; do
	for s in "${SAMPLES[@]}"; do build $side "$WORK/sdk/$side/$s" "nvidia/$(basename "$s")"; done
	for s in comch_ctrl_path comch_data_path_high_speed sync_event_local_pci sync_event_remote_pci; do build $side "$ROOT/capi/samples/$s" "softdpu/$s"; done
done

# The command of IMPL (nvidia, c, ts) for program NAME on SIDE; the C samples' programs are doca_NAME.
# Commands are split on spaces when run: the checkout and WORK_DIR must have none in their paths.
cmd() {
	local impl=$1 side=$2 name=$3
	case $impl in
	nvidia) echo "$WORK/build/$side/nvidia/$name/doca_$name" ;;
	c) case $name in
		comch_ctrl_path_*) echo "$WORK/build/$side/softdpu/comch_ctrl_path/doca_$name" ;;
		comch_data_path_high_speed_*) echo "$WORK/build/$side/softdpu/comch_data_path_high_speed/doca_$name" ;;
		*) echo "$WORK/build/$side/softdpu/$name/doca_$name" ;;
		esac ;;
	ts) echo "${CLI[*]} sample $name" ;;
	esac
}

PAIRS=0 PASSED=0 N=0
# pair LABEL SERVER_COMMAND CLIENT_COMMAND: both on a new fabric, the DPU's server first; PASS when both exit 0.
pair() {
	local label=$1 fabric log="$WORK/runs/$((++N))" s c
	mkdir -p "$WORK/runs"
	fabric=$(mktemp -d "$WORK/runs/fabric.XXXXXX")
	SOFTDPU_FABRIC=$fabric timeout -k 5 "$TIMEOUT" $2 > "$log.server" 2>&1 &
	local server=$!
	SOFTDPU_FABRIC=$fabric timeout -k 5 "$TIMEOUT" $3 > "$log.client" 2>&1
	c=$?
	wait $server
	s=$?
	rm -rf "$fabric"
	PAIRS=$((PAIRS + 1))
	if [ $s -eq 0 ] && [ $c -eq 0 ]; then
		PASSED=$((PASSED + 1))
		printf 'PASS   %s\n' "$label"
	else
		printf 'FAIL   %s (server exit %s, client exit %s: %s.{server,client})\n' "$label" $s $c "$log"
	fi
}

IMPLS=(nvidia c ts)
# every_pair SAMPLE: SAMPLE_server of each implementation on the DPU with SAMPLE_client of each on the host.
every_pair() {
	echo "--- $1: server on the DPU (03:00.0, representor b1:00.0), client on the host (b1:00.0)"
	for si in "${IMPLS[@]}"; do
		for ci in "${IMPLS[@]}"; do
			pair "$(printf '%-16s server=%-6s client=%-6s' "${1%_high_speed}" $si $ci)" "$(cmd $si dpu "$1_server")" "$(cmd $ci host "$1_client")"
		done
	done
}
runs comch_ctrl_path && every_pair comch_ctrl_path

# Every implementation takes --async-num-tasks; NVIDIA's default, 0, is no pool at all (softdpu's is 1).
se_flags() {
	local impl=$1 side=$2 mode=$3 f
	[ "$side" = dpu ] && f="-d 03:00.0 -r b1:00.0" || f="-d b1:00.0"
	case $mode in *async*) f="$f --async-num-tasks 1" ;; esac
	echo "$f $mode"
}
runs sync_event && for mode in "" "--atomic" "--async" "--async --atomic"; do
	echo "--- sync_event_local_pci / sync_event_remote_pci ${mode:-(synchronous, set)}"
	for local_side in host dpu; do
		[ $local_side = host ] && remote_side=dpu || remote_side=host
		for li in "${IMPLS[@]}"; do
			for ri in "${IMPLS[@]}"; do
				l="$(cmd $li $local_side sync_event_local_pci) $(se_flags $li $local_side "$mode")"
				r="$(cmd $ri $remote_side sync_event_remote_pci) $(se_flags $ri $remote_side "$mode")"
				label=$(printf 'sync_event %-16s local=%-6s(%-4s) remote=%-6s(%-4s)' "${mode:-plain}" $li $local_side $ri $remote_side)
				if [ $local_side = dpu ]; then pair "$label" "$l" "$r"; else pair "$label" "$r" "$l"; fi
			done
		done
	done
done

runs comch_data_path && every_pair comch_data_path_high_speed

echo "softdpu: $PASSED of $PAIRS pairs passed; logs in $WORK"
[ $PASSED -eq $PAIRS ] && [ $BUILD_FAILED -eq 0 ]
