#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/bootstrap.sh"
bash "$root/scripts/build.sh"
build=${TORCHLINT_BUILD_DIR:-$root/build}
# npm packages the tests use (pinned), installed into the build tree once.
if [[ ! -f "$build/npm/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool" ]]; then
  mkdir -p "$build/npm"
  npm install --prefix "$build/npm" --no-audit --no-fund --silent @microsoft/sarif-multitool@5.7.0 >/dev/null
fi
cd "$build"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
