#!/usr/bin/env bash
# The audit end to end on the sample project: the JSON scorecard against its golden file,
# the Markdown's table structure, and the HTML report rendered by headless Chromium
# (DOM sections present, no console errors, a screenshot).
# UPDATE_GOLDEN=1 rewrites tests/golden/sample_project_audit.json.
set -euo pipefail
torchlint=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$source_dir"
fail() { echo "FAIL: $1" >&2; exit 1; }

# 1. JSON scorecard (without the timestamp) against the golden file.
"$torchlint" audit fixtures/sample_project --format json --no-cache -o "$work/audit.json" 2>/dev/null || true
/usr/bin/python3 - "$work/audit.json" "$work/scorecard.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "torchlint-audit/1", doc["schema"]
# The golden part: summary and each item's status and evidence locations.
golden = {"summary": doc["summary"],
          "items": [{"id": i["id"], "status": i["status"],
                     "evidence": sorted(f'{e["code"]} {e["path"]}:{e["line"]}' for e in i["evidence"])}
                    for i in doc["items"]]}
for item in doc["items"]:
    assert item["status"] in ("passed", "failed", "not-applicable", "manual", "not-checked"), item
    assert item["status"] != "failed" or item["evidence"], item["id"]
json.dump(golden, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
golden=tests/golden/sample_project_audit.json
if [[ ${UPDATE_GOLDEN:-} == 1 ]]; then
  cp "$work/scorecard.json" "$golden"
  echo "updated $golden"
fi
diff -u "$golden" "$work/scorecard.json" || fail "scorecard differs from $golden (UPDATE_GOLDEN=1 to accept)"
echo "ok   JSON scorecard matches the golden file"

# 2. Markdown: every table row has as many cells as its header.
"$torchlint" audit fixtures/sample_project --format markdown --no-cache -o "$work/audit.md" 2>/dev/null || true
/usr/bin/python3 - "$work/audit.md" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
def cells(row):
    return len(re.split(r"(?<!\\)\|", row.strip().strip("|")))
tables, i = 0, 0
while i < len(lines):
    if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|(\s*-+\s*\|)+$", lines[i + 1]):
        width, tables = cells(lines[i]), tables + 1
        i += 2
        while i < len(lines) and lines[i].startswith("|"):
            assert cells(lines[i]) == width, f"row {i+1} has {cells(lines[i])} cells, header {width}: {lines[i]}"
            i += 1
    else:
        i += 1
assert tables >= 3, f"only {tables} tables"
assert lines[0].startswith("# torchlint audit"), lines[0]
assert any(l.startswith("## What to do next") for l in lines)
print(f"ok   Markdown: {tables} well-formed tables")
PY

# 3. HTML in headless Chromium.
"$torchlint" audit fixtures/sample_project --format html --no-cache -o "$work/audit.html" 2>/dev/null || true
chromium=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chromium ]] || fail "chromium is not installed (scripts/bootstrap.sh installs it)"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$work/profile" --enable-logging=stderr --v=0)
timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$work/audit.html" >"$work/dom.html" 2>"$work/chromium.log" ||
  { cat "$work/chromium.log" >&2; fail "chromium could not render the report"; }
if grep -E "CONSOLE.*(Error|error)|Uncaught" "$work/chromium.log"; then fail "console errors while rendering"; fi
/usr/bin/python3 - "$work/dom.html" "$work/audit.json" <<'PY'
import json, sys
from html.parser import HTMLParser
class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.badges, self.svgs, self.external = set(), 0, 0, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a: self.ids.add(a["id"])
        if "badge" in (a.get("class") or ""): self.badges += 1
        if tag == "svg": self.svgs += 1
        for key in ("src", "href"):
            v = a.get(key) or ""
            if tag in ("link", "script", "img") and v.startswith(("http:", "https:", "//")): self.external.append(v)
dom = Dom()
dom.feed(open(sys.argv[1], encoding="utf-8").read())
for section in ("summary", "next", "charts", "checklist", "checkpoints", "probe"):
    assert section in dom.ids, f"section #{section} missing"
items = json.load(open(sys.argv[2]))["items"]
for item in items:
    assert f"item-{item['id']}" in dom.ids, f"checklist item {item['id']} missing"
assert dom.badges >= len(items), (dom.badges, len(items))
assert dom.svgs >= 3, dom.svgs  # score ring and two charts
assert not dom.external, f"report loads external resources: {dom.external}"
print(f"ok   HTML: {len(items)} items, {dom.badges} badges, {dom.svgs} charts, no external resources")
PY
timeout 120 "$chromium" "${flags[@]}" --window-size=1280,2400 --screenshot="$work/audit.png" "file://$work/audit.html" \
  >/dev/null 2>>"$work/chromium.log" || fail "screenshot failed"
size=$(stat -c %s "$work/audit.png")
((size > 20000)) || fail "screenshot suspiciously small ($size bytes)"
[[ -n ${AUDIT_SCREENSHOT:-} ]] && cp "$work/audit.png" "$AUDIT_SCREENSHOT"
echo "ok   HTML rendered by Chromium without console errors (screenshot $size bytes)"
