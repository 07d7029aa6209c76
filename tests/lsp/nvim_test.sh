#!/usr/bin/env bash
# The editor end-to-end test: Debian's Neovim, headless, with tests/lsp/init.lua as its
# only configuration, uses `torchlint server` on a copy of tests/lsp/project and records
# the diagnostics it received; this script checks them.
# Usage: nvim_test.sh TORCHLINT_BINARY SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
if ! command -v nvim >/dev/null 2>&1; then
  echo "FAIL: nvim is not installed (scripts/bootstrap.sh installs Debian's neovim)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/tests/lsp/project" "$tmp/project"
# Neovim's state (LSP log, shada, swap) stays in the temporary directory.
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
export TORCHLINT_BIN="$bin" TORCHLINT_PROJECT="$tmp/project" TORCHLINT_NVIM_OUT="$tmp/result.json"
status=0
# A hang fails the test instead of blocking the suite.
timeout 120 nvim --headless -n -i NONE -u "$src/tests/lsp/init.lua" >"$tmp/nvim.log" 2>&1 || status=$?
if [[ ! -s "$tmp/result.json" ]]; then
  echo "FAIL: Neovim wrote no result (exit $status)" >&2
  cat "$tmp/nvim.log" >&2
  exit 1
fi
cat "$tmp/result.json"
echo
/usr/bin/python3 - "$tmp/result.json" "$status" <<'PY'
import json, sys

result = json.load(open(sys.argv[1]))
nvim_status = int(sys.argv[2])
failures = []

def check(condition, message):
    if not condition:
        failures.append(message)

check("error" not in result, f"the Lua scenario failed: {result.get('error')}")
check(result.get("done") is True, "the scenario did not finish")
check(nvim_status == 0, f"nvim exited with {nvim_status}")
steps = {s["name"]: s for s in result.get("steps", [])}

def codes(name):
    return [d["code"] for d in steps.get(name, {}).get("diagnostics", [])]

for name in ("open", "edit", "code_action", "helper_edit"):
    check(name in steps, f"step {name} missing")
    if name in steps:
        check(steps[name]["in_time"], f"step {name}: the expected diagnostics never came")

opened = steps.get("open", {}).get("diagnostics", [])
check(codes("open") == ["TL304"], f"open: expected exactly TL304, got {codes('open')}")
for d in opened:
    check(d["source"] == "torchlint", f"open: source {d['source']!r}")
    check(d["line"] == 19, f"open: TL304 on line {d['line']}, expected 19")
    check(str(d["href"]).endswith("/rules/unsafe-torch-load"), f"open: codeDescription {d['href']!r}")
check(sorted(codes("edit")) == ["TL304", "TL401"], f"edit: expected TL304 and TL401, got {codes('edit')}")
check("TL401" in result.get("hover", ""), f"hover: no TL401 doc in {result.get('hover')!r}")
check(any("weights_only" in t for t in result.get("code_actions", [])),
      f"code actions offered: {result.get('code_actions')}")
check(any(t.startswith("Suppress TL304") for t in result.get("code_actions", [])),
      "no suppression action offered")
fixed = steps.get("code_action", {})
check(codes("code_action") == ["TL401"], f"after the code action: expected TL401 only, got {codes('code_action')}")
check("weights_only=True" in str(fixed.get("line")), f"the fixed line: {fixed.get('line')!r}")
check(sorted(codes("helper_edit")) == ["TL101", "TL401"],
      f"after utils.set_seed stopped seeding: expected TL101 and TL401 in train.py, got {codes('helper_edit')}")

for name in ("open", "edit", "code_action", "helper_edit"):
    if name in steps:
        print(f"{name}: {steps[name]['ms']} ms to the expected diagnostics")
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("PASS: Neovim received the expected diagnostics at every step")
PY
