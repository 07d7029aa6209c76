#!/usr/bin/env bash
# Sets up, builds and runs torchlint on the bundled sample project.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/bootstrap.sh" || exit 2
bash "$root/scripts/build.sh" || exit 2
cd "$root"
exec "$root/build/torchlint" check fixtures/sample_project "$@"
