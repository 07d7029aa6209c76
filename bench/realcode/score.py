#!/usr/bin/env python3
"""Scores torchlint on the labelled real-code corpus (see LABELLING.md).

Lints each repository's labelled files (the rest of the repository gives them context, as
in a user's checkout), matches the findings with the labels and prints precision and
recall per rule and overall. A finding in a labelled file that matches no `flag` row is a
false positive (labels are exhaustive per file); a `flag` row no finding matches is a
false negative.

    bench/realcode/materialize.sh          # the sources, once
    bench/realcode/score.py [--torchlint build/torchlint] [--json out.json] [--markdown]
    bench/realcode/score.py --whole OUT.jsonl   # every finding over the whole repositories
"""
import argparse
import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NOT_LABELLED = {"TL000", "TL001", "TL110", "TL504", "TL601"}
# Rules added after the labels were written (TorchFix parity, issue 23): the labels say
# nothing about them, so their findings are listed apart (`--json`: "newer_rules") and judged
# by hand (bench/peers/torchfix/README.md), never counted as false positives here.
NEWER_THAN_LABELS = {"TL210", "TL211", "TL212", "TL213", "TL214", "TL215", "TL216", "TL603", "TL604"}


def read_tsv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    header, body = rows[0], rows[1:]
    return [dict(zip(header, r)) for r in body if r and any(c.strip() for c in r)]


def line_matches(spec, line):
    spec = spec.strip()
    if spec == "*":
        return True
    if "-" in spec:
        a, b = spec.split("-", 1)
        return int(a) <= line <= int(b)
    return int(spec) == line


def run_torchlint(binary, repo_dir, paths):
    cmd = [binary, "check", "--output-format", "json", "--no-cache", "--exit-zero", *paths]
    p = subprocess.run(cmd, cwd=repo_dir, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        print(f"score: torchlint failed in {repo_dir}: {p.stderr.strip()[:500]}", file=sys.stderr)
    try:
        return json.loads(p.stdout or "[]")
    except json.JSONDecodeError:
        print(f"score: unreadable output in {repo_dir}", file=sys.stderr)
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--torchlint", default=str(ROOT / "build" / "torchlint"))
    ap.add_argument("--src", default=os.environ.get("TORCHLINT_REALCODE_SRC", str(ROOT / "build" / "realcode-src")))
    ap.add_argument("--json", help="write matches, misses and false positives here")
    ap.add_argument("--markdown", action="store_true", help="print the per-rule table as Markdown")
    ap.add_argument("--whole", help="lint each whole repository and write every finding here (JSON lines)")
    args = ap.parse_args()
    binary = os.path.abspath(args.torchlint)
    src = Path(args.src)

    labels = defaultdict(list)  # (slug, path) -> rows
    for f in sorted((HERE / "labels").glob("*.tsv")):
        for row in read_tsv(f):
            labels[(f.stem, row["path"])].append(row)

    if args.whole:
        with open(args.whole, "w") as out:
            for slug in sorted({s for s, _ in labels}):
                for d in run_torchlint(binary, src / slug, ["."]):
                    d["repo"] = slug
                    out.write(json.dumps(d) + "\n")
        return 0

    by_repo = defaultdict(list)
    for slug, path in labels:
        by_repo[slug].append(path)

    tally = defaultdict(lambda: {"labels": 0, "found": 0, "findings": 0, "tp": 0})
    details = {"missed": [], "false_positives": [], "found": [], "newer_rules": []}
    for slug, paths in sorted(by_repo.items()):
        repo_dir = src / slug
        missing = [p for p in paths if not (repo_dir / p).is_file()]
        if missing:
            print(f"score: {slug}: {len(missing)} labelled files missing (run materialize.sh)", file=sys.stderr)
            return 2
        findings = [d for d in run_torchlint(binary, repo_dir, sorted(paths)) if d["code"] not in NOT_LABELLED]
        for d in findings:
            if d["code"] in NEWER_THAN_LABELS:
                details["newer_rules"].append(f"{slug}/{d['filename']}:{d['location']['row']} {d['code']} {d['message'][:120]}")
        findings = [d for d in findings if d["code"] not in NEWER_THAN_LABELS]
        for path in paths:
            rows = labels[(slug, path)]
            flags = [r for r in rows if r["verdict"] == "flag" and r["code"] not in NOT_LABELLED]
            mine = [d for d in findings if os.path.normpath(d["filename"]) == os.path.normpath(path)]
            hit = [False] * len(flags)
            for d in mine:
                line = d["location"]["row"]
                tally[d["code"]]["findings"] += 1
                matched = False
                for i, r in enumerate(flags):
                    if r["code"] == d["code"] and line_matches(r["line"], line):
                        hit[i] = True
                        matched = True
                if matched:
                    tally[d["code"]]["tp"] += 1
                    details["found"].append(f"{slug}/{path}:{line} {d['code']}")
                else:
                    details["false_positives"].append(f"{slug}/{path}:{line} {d['code']} {d['message'][:120]}")
            for r, h in zip(flags, hit):
                tally[r["code"]]["labels"] += 1
                if h:
                    tally[r["code"]]["found"] += 1
                else:
                    details["missed"].append(f"{slug}/{path}:{r['line']} {r['code']} {r['reason']}")

    total = {k: sum(t[k] for t in tally.values()) for k in ("labels", "found", "findings", "tp")}

    def ratio(a, b):
        return f"{a / b:.2f}" if b else "-"

    if args.markdown:
        print("| rule | flag labels | found | findings | true | precision | recall |")
        print("|---|---|---|---|---|---|---|")
    else:
        print(f"{'rule':6} {'labels':>6} {'found':>6} {'findings':>8} {'true':>5} {'prec':>5} {'recall':>6}")
    for code in sorted(tally):
        t = tally[code]
        cells = [code, t["labels"], t["found"], t["findings"], t["tp"], ratio(t["tp"], t["findings"]), ratio(t["found"], t["labels"])]
        if args.markdown:
            print("| " + " | ".join(str(c) for c in cells) + " |")
        else:
            print(f"{cells[0]:6} {cells[1]:>6} {cells[2]:>6} {cells[3]:>8} {cells[4]:>5} {cells[5]:>5} {cells[6]:>6}")
    cells = ["all", total["labels"], total["found"], total["findings"], total["tp"],
             ratio(total["tp"], total["findings"]), ratio(total["found"], total["labels"])]
    if args.markdown:
        print("| **" + "** | **".join(str(c) for c in cells) + "** |")
    else:
        print(f"{cells[0]:6} {cells[1]:>6} {cells[2]:>6} {cells[3]:>8} {cells[4]:>5} {cells[5]:>5} {cells[6]:>6}")
    files = len(labels)
    repos = len(by_repo)
    print(f"\n{files} files from {repos} repositories; precision {cells[5]}, recall {cells[6]}")
    if details["newer_rules"]:
        print(f"({len(details['newer_rules'])} findings of rules newer than the labels left out; --json lists them)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"total": total, "rules": tally, **details}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
