#!/usr/bin/env bash
# Sets up, builds, lints the bundled sample project and writes its checklist audit as an
# HTML report (build/sample-project-audit.html).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/bootstrap.sh" || exit 2
bash "$root/scripts/build.sh" || exit 2
cd "$root"
"$root/build/torchlint" check fixtures/sample_project "$@"
status=$?
"$root/build/torchlint" audit fixtures/sample_project --format html -o "$root/build/sample-project-audit.html" || true
exit $status
