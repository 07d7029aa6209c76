#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/bootstrap.sh"
bash "$root/scripts/build.sh"
cd "${TORCHLINT_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)"
