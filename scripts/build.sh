#!/usr/bin/env bash
# Configures (once) and builds torchlint into build/. Incremental on a second run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TORCHLINT_BUILD_DIR:-$root/build}
jobs=$(nproc 2>/dev/null || echo 2)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j "$jobs" -- --no-print-directory | grep -vE '^\[ *[0-9]+%\] (Built target|Building|Linking)' || true
test "${PIPESTATUS[0]}" -eq 0
