#!/usr/bin/env bash
# Configures (once) and builds torchlint into build/. Incremental on a second run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TORCHLINT_BUILD_DIR:-$root/build}
jobs=$(nproc 2>/dev/null || echo 2)
# Configure when there is no complete configuration: a configure that failed half-way (a
# network hiccup while fetching the grammar) leaves a CMakeCache.txt but no Makefile.
if [[ ! -f "$build/CMakeCache.txt" || ! -f "$build/Makefile" ]]; then
  log=$(mktemp)
  if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log" "$build/CMakeCache.txt"
    echo "build.sh: error: configuring failed (above); the next run configures again" >&2
    exit 1
  fi
  rm -f "$log"
fi
cmake --build "$build" -j "$jobs" -- --no-print-directory | grep -vE '^\[ *[0-9]+%\] (Built target|Building|Linking)' || true
test "${PIPESTATUS[0]}" -eq 0
