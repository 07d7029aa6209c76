#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) into build-fuzz/ and runs each
# for SECONDS (default 60) on the seed corpus. Crashes are written to build-fuzz/crashes/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
build=${TORCHLINT_FUZZ_BUILD_DIR:-$root/build-fuzz}
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_make_seeds fuzz_pickle_vm fuzz_zip_reader fuzz_safetensors fuzz_inspector
"$build/tests/fuzz/fuzz_make_seeds" "$build/tests/fuzz/seeds"
mkdir -p "$build/crashes"
for target in pickle_vm zip_reader safetensors inspector; do
  echo "fuzz_$target: ${seconds}s"
  "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$build/crashes/$target-" "$build/tests/fuzz/seeds"
done
