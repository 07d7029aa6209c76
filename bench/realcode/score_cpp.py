#!/usr/bin/env python3
"""The LibTorch (C++) part of the corpus alone, scored the way score.py scores it.

Runs torchlint-cpp on the labelled C++ files of each repository (its own fallback include
path, as a user without compile_commands.json gets) and prints the misses, the false
positives and precision/recall. Usage: score_cpp.py [TORCHLINT_CPP] [SRC]
(defaults: build/torchlint-cpp, build/realcode-src).
"""
import importlib.util
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

here = Path(__file__).resolve().parent
root = here.parents[1]
spec = importlib.util.spec_from_file_location("score", here / "score.py")
score = importlib.util.module_from_spec(spec)
spec.loader.exec_module(score)

binary = sys.argv[1] if len(sys.argv) > 1 else str(root / "build/torchlint-cpp")
src = Path(sys.argv[2] if len(sys.argv) > 2 else root / "build/realcode-src")
CPP = (".cpp", ".h", ".cc", ".hpp", ".cxx")

labels = defaultdict(list)
for f in sorted((here / "labels").glob("*.tsv")):
    for row in score.read_tsv(f):
        if row["path"].endswith(CPP):
            labels[(f.stem, row["path"])].append(row)
by_repo = defaultdict(list)
for slug, path in labels:
    by_repo[slug].append(path)

true_findings = false_findings = found = flags_total = 0
missed, false_positives = [], []
for slug, paths in sorted(by_repo.items()):
    run = subprocess.run([binary, "--output-format=json", "--exit-zero", "--", *sorted(paths)], cwd=src / slug,
                         capture_output=True, text=True)
    findings = [d for d in json.loads(run.stdout or "[]")
                if d["code"] not in score.NOT_LABELLED and d["code"] not in score.NEWER_THAN_LABELS]
    for path in paths:
        flags = [r for r in labels[(slug, path)] if r["verdict"] == "flag" and r["code"] not in score.NOT_LABELLED]
        hit = [False] * len(flags)
        for d in findings:
            if os.path.normpath(d["filename"]) != os.path.normpath(path):
                continue
            line = d["location"]["row"]
            matched = False
            for i, r in enumerate(flags):
                if r["code"] == d["code"] and score.line_matches(r["line"], line):
                    hit[i] = matched = True
            if matched:
                true_findings += 1
            else:
                false_findings += 1
                false_positives.append(f"{slug}/{path}:{line} {d['code']} {d['message'][:100]}")
        for r, h in zip(flags, hit):
            flags_total += 1
            found += h
            if not h:
                missed.append(f"{slug}/{path}:{r['line']} {r['code']}")

print("missed:")
for m in missed:
    print(" ", m)
print("false positives:")
for m in false_positives:
    print(" ", m)
n = true_findings + false_findings
print(f"C++: {len(labels)} files; precision {true_findings}/{n} = {true_findings / max(1, n):.3f}, "
      f"recall {found}/{flags_total} = {found / max(1, flags_total):.3f}")
