#!/usr/bin/env bash
# Sets up, builds, lints the bundled sample project and writes its checklist audit as an
# HTML report (build/sample-project-audit.html). The audit also covers the files a run of
# the sample project leaves behind (a training checkpoint, a fine-tuning snapshot, the
# exported TorchScript model), which fixtures/checkpoints/make_sample_project.py writes
# with the real torch into build/sample-project-artifacts (never into the source tree),
# and runs the runtime probe on the exported model when torchlint-probe was built.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/bootstrap.sh" || exit 2
bash "$root/scripts/build.sh" || exit 2
cd "$root"
"$root/build/torchlint" check fixtures/sample_project "$@"
status=$?
# The sample project is meant to have findings (exit 1): that is a successful demo.
[[ $status == 1 ]] && status=0
artifacts=build/sample-project-artifacts
audit_args=()
if [[ -f $artifacts/exports/resnet10.ts ]] ||
   /usr/bin/python3 fixtures/checkpoints/make_sample_project.py "$artifacts" >/dev/null; then
  audit_args+=(--checkpoints "$artifacts")
else
  echo "demo: python3-torch is missing: the audit covers the sources only" >&2
fi
[[ -x $root/build/torchlint-probe ]] && audit_args+=(--probe)
"$root/build/torchlint" audit fixtures/sample_project "${audit_args[@]}" --format html \
  -o "$root/build/sample-project-audit.html" || true
[[ $status == 0 ]] && echo "demo: findings above are the sample project's deliberate mistakes; the audit is build/sample-project-audit.html"
exit $status
