#!/usr/bin/env bash
# Checkpoint inspector benchmark: generates the inputs (once) into $TORCHLINT_CKPT_BENCH_DIR
# (default /tmp/torchlint-ckpt-bench; about 1.7 GB on disk, the 2 GB file is sparse), times
# `torchlint ckpt` against the Python genops baseline, and prints Markdown tables.
# The large inputs are deleted afterwards unless KEEP=1.
# usage: bash bench/checkpoint/run.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${TORCHLINT_BUILD_DIR:-$root/build}}
torchlint=$build/torchlint
[[ -x $torchlint ]] || { echo "run.sh: $torchlint is missing; build first (bash scripts/build.sh)" >&2; exit 2; }
dir=${TORCHLINT_CKPT_BENCH_DIR:-/tmp/torchlint-ckpt-bench}
/usr/bin/python3 "$root/bench/checkpoint/make_bench.py" "$dir"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
/usr/bin/python3 "$root/bench/checkpoint/bench.py" "$torchlint" "$dir"
if [[ "${KEEP:-0}" != 1 ]]; then
  rm -f "$dir/large.pt" "$dir"/scan_*.pt
fi
