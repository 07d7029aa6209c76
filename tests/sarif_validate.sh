#!/usr/bin/env bash
# Validates torchlint's SARIF with Microsoft's SARIF multitool, GitHub rules included:
# every fixture set must give zero errors and zero warnings (read from the tool's output log).
# usage: sarif_validate.sh TORCHLINT NPM_PREFIX [CHECKPOINT_FIXTURES_DIR]
set -euo pipefail
torchlint=$1
npm_prefix=$2
multitool=$npm_prefix/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
if [[ ! -f $multitool ]]; then
  echo "sarif-multitool not installed under $npm_prefix (scripts/test.sh installs it)" >&2
  exit 1
fi
chmod +x "$multitool"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

failures=0
validate() {
  local name=$1
  shift
  # Exit code 1 (findings) is expected; 2 only for the case with a missing file.
  "$torchlint" "${SUBCOMMAND:-check}" "$@" --output-format sarif >"$work/$name.sarif" || true
  "$multitool" validate "$work/$name.sarif" -o "$work/$name.out.sarif" --rule-kind "Sarif;Ghas" >"$work/$name.log" 2>&1 || true
  local count
  count=$(/usr/bin/python3 - "$work/$name.out.sarif" <<'PY'
import json, sys
try:
    log = json.load(open(sys.argv[1]))
except Exception as e:  # no output log means the validator failed
    print(-1); sys.exit(0)
problems = [r for run in log.get("runs", []) for r in run.get("results", [])
            if r.get("level", "warning") in ("error", "warning")]
for p in problems:
    msg = p.get("message", {})
    print(p.get("ruleId"), msg.get("text") or msg.get("id"), msg.get("arguments"), file=sys.stderr)
print(len(problems))
PY
  )
  if [[ $count != 0 ]]; then
    echo "FAIL $name: $count validator errors/warnings" >&2
    cat "$work/$name.log" >&2
    failures=$((failures + 1))
  else
    echo "ok   $name: 0 errors, 0 warnings ($(grep -c '"ruleId"' "$work/$name.sarif") results)"
  fi
}

validate sample_project fixtures/sample_project
validate python_fixtures fixtures/python --select ALL
[[ -d fixtures/projects ]] && validate projects fixtures/projects --select ALL
validate with_file_error fixtures/python/TL000-parse-error does-not-exist.py --select ALL
# `torchlint ckpt` on the generated checkpoint fixtures (argument 3, when they exist).
if [[ -n ${3:-} && -d $3 ]]; then
  SUBCOMMAND=ckpt validate checkpoints "$3"
  SUBCOMMAND=ckpt validate checkpoints_scan_values "$3" --scan-values
fi
if ((failures)); then
  echo "$failures SARIF validation(s) failed" >&2
  exit 1
fi
