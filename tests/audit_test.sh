#!/usr/bin/env bash
# The audit end to end on the sample project, with the files a run of it leaves behind
# (fixtures/checkpoints/make_sample_project.py writes a training checkpoint, a fine-tuning
# snapshot with a misleading extension and an exported TorchScript model into a copy of
# it): the JSON scorecard and checkpoint table against the golden file, checkpoint
# discovery (by content; virtualenv, VCS, build and node_modules folders skipped;
# --checkpoints; the size limit), the Markdown's table structure, and the HTML report
# rendered by headless Chromium (DOM sections present, no console errors, a screenshot),
# with the runtime probe when torchlint-probe is built and with its absence as a note.
# UPDATE_GOLDEN=1 rewrites tests/golden/sample_project_audit.json.
# usage: audit_test.sh TORCHLINT SOURCE_DIR [TORCHLINT_PROBE]
set -euo pipefail
torchlint=$(realpath "$1")
source_dir=$(realpath "$2")
probe=${3:+$(realpath -m "$3")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$source_dir"
fail() { echo "FAIL: $1" >&2; exit 1; }

# 0. A copy of the sample project with its artifacts, and decoys the discovery must skip.
/usr/bin/python3 fixtures/checkpoints/make_sample_project.py "$work/artifacts" >/dev/null ||
  fail "fixtures/checkpoints/make_sample_project.py failed (python3-torch is needed: scripts/bootstrap.sh)"
project=$work/sample_project
cp -r fixtures/sample_project "$project"
cp -r "$work/artifacts/." "$project/"
for decoy in .venv/lib/python3.11/site-packages/pkg/weights.pt node_modules/m/model.pt build/last.pt .git/objects/x.pt \
             build-cuda/model.ts venv2/lib/w.pt; do
  mkdir -p "$project/$(dirname "$decoy")"
  cp "$work/artifacts/runs/resnet10/last.pt" "$project/$decoy"
done
touch "$project/venv2/pyvenv.cfg"
head -c 4096 /dev/urandom >"$project/runs/resnet10/events.bin"  # no checkpoint: left out silently
printf 'PK\x03\x04not a zip' >"$project/data.zip"                # a zip's magic, not a checkpoint

# 1. JSON scorecard and checkpoint table (without the timestamp) against the golden file.
"$torchlint" audit "$project" --format json --no-cache -o "$work/audit.json" 2>"$work/stderr.txt" || true
/usr/bin/python3 - "$work/audit.json" "$work/scorecard.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "torchlint-audit/2", doc["schema"]
# The golden part: summary, each item's status and evidence locations, the checkpoints.
golden = {"summary": doc["summary"],
          "items": [{"id": i["id"], "status": i["status"],
                     "evidence": sorted(f'{e["code"]} {e["path"]}:{e["line"]}' for e in i["evidence"])}
                    for i in doc["items"]],
          "checkpoints": [{k: c[k] for k in ("path", "format", "training_state", "safety", "findings")}
                          for c in doc["checkpoints"]]}
for item in doc["items"]:
    assert item["status"] in ("passed", "failed", "not-applicable", "manual", "not-checked"), item
    assert item["status"] != "failed" or item["evidence"], item["id"]
    assert item["status"] in ("passed", "failed") or item.get("reason"), item["id"]
paths = [c["path"] for c in doc["checkpoints"]]
assert paths == ["exports/resnet10.ts", "finetuned.pt.epoch4", "runs/resnet10/last.pt"], paths
assert doc["probe"]["requested"] is False and doc["probe"]["models"] == [], doc["probe"]
json.dump(golden, open(sys.argv[2], "w"), indent=2, sort_keys=True)
PY
golden=tests/golden/sample_project_audit.json
if [[ ${UPDATE_GOLDEN:-} == 1 ]]; then
  cp "$work/scorecard.json" "$golden"
  echo "updated $golden"
fi
diff -u "$golden" "$work/scorecard.json" || fail "scorecard differs from $golden (UPDATE_GOLDEN=1 to accept)"
echo "ok   JSON scorecard and checkpoint table match the golden file"

# 1b. --checkpoints adds a directory from elsewhere (shown as given); the size limit leaves
# files out with a note; --no-checkpoints turns the pass off.
(cd "$work" && "$torchlint" audit "$source_dir/fixtures/sample_project" --format json --no-cache --checkpoints artifacts \
   --max-checkpoint-size 500KiB -o "$work/extra.json" 2>/dev/null) || true
"$torchlint" audit fixtures/sample_project --format json --no-cache --no-checkpoints -o "$work/none.json" 2>/dev/null || true
/usr/bin/python3 - "$work/extra.json" "$work/none.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
paths = [c["path"] for c in doc["checkpoints"]]
assert paths == ["artifacts/exports/resnet10.ts", "artifacts/finetuned.pt.epoch4"], paths
notes = doc["checkpoint_notes"]
assert len(notes) == 1 and notes[0].startswith("artifacts/runs/resnet10/last.pt: not inspected"), notes
codes = {e["code"] for i in doc["items"] for e in i["evidence"]}
assert {"TL803", "TL810"} <= codes, codes  # the exported TorchScript model is TL810
assert json.load(open(sys.argv[2]))["checkpoints"] == []
print("ok   --checkpoints, --max-checkpoint-size and --no-checkpoints")
PY

# 2. Markdown: every table row has as many cells as its header.
"$torchlint" audit "$project" --format markdown --no-cache -o "$work/audit.md" 2>/dev/null || true
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
assert tables >= 5, f"only {tables} tables"  # four phases and the checkpoints
assert lines[0].startswith("# torchlint audit"), lines[0]
for heading in ("## What to do next", "## Checklist", "## Checkpoints", "## Runtime probe"):
    assert any(l.startswith(heading) for l in lines), heading
rows = [l for l in lines if l.startswith("| `") and ("finetuned.pt.epoch4" in l or "resnet10" in l)]
assert len(rows) == 3, rows
assert any("TL803" in r for r in rows), rows
print(f"ok   Markdown: {tables} well-formed tables")
PY

# 3. HTML in headless Chromium: with the runtime probe when it is built (its figures as
# charts), and in any case the note a missing probe leaves.
"$torchlint" audit "$project" --format html --no-cache --probe --probe-binary "$work/no-such-probe" \
  -o "$work/noprobe.html" 2>"$work/noprobe.err" || true
grep -q "torchlint-probe was not found" "$work/noprobe.html" || fail "no note for the missing probe binary"
grep -q "torchlint-probe was not found" "$work/noprobe.err" || fail "no note on stderr for the missing probe binary"
probed=0
if [[ -n $probe && -x $probe ]]; then
  "$torchlint" audit "$project" --format html --no-cache --probe --probe-binary "$probe" -o "$work/audit.html" \
    2>"$work/probe.err" || true
  probed=1
else
  echo "note torchlint-probe is not built: the HTML is checked without probe figures"
  cp "$work/noprobe.html" "$work/audit.html"
fi
chromium=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chromium ]] || fail "chromium is not installed (scripts/bootstrap.sh installs it)"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$work/profile" --enable-logging=stderr --v=0)
timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$work/audit.html" >"$work/dom.html" 2>"$work/chromium.log" ||
  { cat "$work/chromium.log" >&2; fail "chromium could not render the report"; }
if grep -E "CONSOLE.*(Error|error)|Uncaught" "$work/chromium.log"; then fail "console errors while rendering"; fi
/usr/bin/python3 - "$work/dom.html" "$work/audit.json" "$probed" <<'PY'
import json, sys
from html.parser import HTMLParser
class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.badges, self.svgs, self.external, self.classes = set(), 0, 0, [], {}
        self.cells, self.in_td = [], False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a: self.ids.add(a["id"])
        for c in (a.get("class") or "").split():
            self.classes[c] = self.classes.get(c, 0) + 1
        if "badge" in (a.get("class") or ""): self.badges += 1
        if tag == "svg": self.svgs += 1
        for key in ("src", "href"):
            v = a.get(key) or ""
            if tag in ("link", "script", "img") and v.startswith(("http:", "https:", "//")): self.external.append(v)
        if tag == "td": self.in_td = True
    def handle_endtag(self, tag):
        if tag == "td": self.in_td = False
    def handle_data(self, data):
        if self.in_td: self.cells.append(data)
dom = Dom()
dom.feed(open(sys.argv[1], encoding="utf-8").read())
for section in ("summary", "next", "charts", "checklist", "checkpoints", "probe"):
    assert section in dom.ids, f"section #{section} missing"
doc = json.load(open(sys.argv[2]))
items = doc["items"]
for item in items:
    assert f"item-{item['id']}" in dom.ids, f"checklist item {item['id']} missing"
assert dom.badges >= len(items), (dom.badges, len(items))
assert not dom.external, f"report loads external resources: {dom.external}"
# The checkpoint table: one row per checkpoint, with its safety verdict as a badge.
assert dom.classes.get("checkpoint") == len(doc["checkpoints"]) == 3, dom.classes.get("checkpoint")
assert dom.classes.get("safe", 0) >= 2 and dom.classes.get("danger", 0) >= 1, dom.classes  # the TorchScript export
text = " ".join(dom.cells)
for expected in ("resumable training checkpoint", "TorchScript model", "training checkpoint, cannot resume"):
    assert expected in text, expected
if sys.argv[3] == "1":
    # Probe figures: memory per batch size, latency and AMP error as inline SVG charts.
    assert dom.classes.get("probe-model") == 1, dom.classes.get("probe-model")
    assert dom.classes.get("probe-chart", 0) >= 3, dom.classes.get("probe-chart")
    assert dom.svgs >= 6, dom.svgs  # score ring, two finding charts, three probe charts
    assert "probe-note" not in dom.ids
    what = "with probe charts"
else:
    assert "probe-note" in dom.ids
    assert dom.svgs >= 3, dom.svgs
    what = "probe not built: note shown"
print(f"ok   HTML: {len(items)} items, {dom.badges} badges, {dom.svgs} charts, 3 checkpoints, {what}, no external resources")
PY
timeout 120 "$chromium" "${flags[@]}" --window-size=1280,2400 --screenshot="$work/audit.png" "file://$work/audit.html" \
  >/dev/null 2>>"$work/chromium.log" || fail "screenshot failed"
size=$(stat -c %s "$work/audit.png")
((size > 20000)) || fail "screenshot suspiciously small ($size bytes)"
[[ -n ${AUDIT_SCREENSHOT:-} ]] && cp "$work/audit.png" "$AUDIT_SCREENSHOT"
echo "ok   HTML rendered by Chromium without console errors (screenshot $size bytes)"
