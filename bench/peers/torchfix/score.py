#!/usr/bin/env python3
"""TorchFix parity score: how many of the lines TorchFix's checker fixtures expect does
torchlint report?

TorchFix keeps, for each fixture `tests/fixtures/<family>/checker/<name>.py`, a file
`<name>.txt` of expected findings, one `LINE:COL TORxxx message` per line. This script
extracts both from a git directory of TorchFix into a scratch folder, lints the folder
with torchlint twice (default rules, then `--select ALL`), translates torchlint's codes
to TOR codes through mapping.tsv and matches each expected line to at most one
torchlint finding of a mapped code in the same file and on the same line (columns are
not compared: the two tools anchor findings differently). It prints, per TOR code, the
expected count and how many were reported, the misses, and the mapped findings on lines
TorchFix expects nothing on (to be read: some are deliberate, see the README).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>TL\d{3}) ")
EXPECTED = re.compile(r"^(?P<line>\d+):(?P<col>\d+) (?P<code>TOR\d{3}) ")


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


def extract(git_dir, work):
    """Writes the checker fixtures to `work`; returns {relative .py path: [(line, TOR)]}."""
    if os.path.isdir(work):
        shutil.rmtree(work)
    names = git(git_dir, "ls-tree", "-r", "--name-only", "HEAD", "tests/fixtures").split("\n")
    fixtures = [n for n in names if re.match(r"tests/fixtures/[^/]+/checker/[^/]+\.py$", n)]
    expected = {}
    for name in sorted(fixtures):
        rel = os.path.relpath(name, "tests/fixtures")
        dest = os.path.join(work, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as out:
            out.write(git(git_dir, "show", "HEAD:" + name))
        txt = name[:-3] + ".txt"
        rows = []
        if txt in names:
            for line in git(git_dir, "show", "HEAD:" + txt).splitlines():
                m = EXPECTED.match(line.strip())
                if m:
                    rows.append((int(m["line"]), m["code"]))
        expected[rel] = rows
    return expected


def lint(torchlint, work, select_all):
    cmd = [torchlint, "check", ".", "--output-format", "concise", "--exit-zero", "--no-cache"]
    if select_all:
        cmd += ["--select", "ALL"]
    out = subprocess.run(cmd, cwd=work, check=True, capture_output=True, text=True).stdout
    findings = collections.defaultdict(list)  # (path, line) -> [TL code]
    for line in out.splitlines():
        m = FINDING.match(line)
        if m:
            findings[(os.path.normpath(m["path"]), int(m["line"]))].append(m["code"])
    return findings


def load_mapping(path):
    mapping = {}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            tl, tor = line.split()[:2]
            mapping[tl] = set(tor.split(","))
    return mapping


def match(expected, findings, mapping):
    """Returns ({(path, line, TOR): reported?} per expected row in order, unexpected findings)."""
    results = []
    used = collections.Counter()
    for path, rows in expected.items():
        for line, tor in rows:
            codes = findings.get((path, line), [])
            hit = None
            for i, tl in enumerate(codes):
                if tor in mapping.get(tl, ()) and used[(path, line, i)] == 0:
                    hit = tl
                    used[(path, line, i)] = 1
                    break
            results.append((path, line, tor, hit))
    extra = []
    for (path, line), codes in sorted(findings.items()):
        if path not in expected:
            continue
        for i, tl in enumerate(codes):
            if tl in mapping and used[(path, line, i)] == 0:
                extra.append((path, line, tl))
    return results, extra


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git-dir", required=True)
    ap.add_argument("--torchlint", required=True)
    ap.add_argument("--mapping", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    commit = git(args.git_dir, "rev-parse", "--short", "HEAD").strip()
    expected = extract(args.git_dir, args.work)
    mapping = load_mapping(args.mapping)
    default, everything = (match(expected, lint(args.torchlint, args.work, a), mapping) for a in (False, True))
    total = len(default[0])

    per_code = collections.OrderedDict()
    for (path, line, tor, hit_d), (_, _, _, hit_a) in zip(default[0], everything[0]):
        row = per_code.setdefault(tor, [0, 0, 0])
        row[0] += 1
        row[1] += hit_d is not None
        row[2] += hit_a is not None
    print(f"TorchFix {commit}: {len(expected)} checker fixtures, {total} expected lines")
    print()
    print("| TOR code | expected | default rules | --select ALL | torchlint codes |")
    print("|---|---|---|---|---|")
    for tor in sorted(per_code):
        e, d, a = per_code[tor]
        tls = ", ".join(sorted(tl for tl, tors in mapping.items() if tor in tors)) or "—"
        print(f"| {tor} | {e} | {d} | {a} | {tls} |")
    found_d = sum(r[1] for r in per_code.values())
    found_a = sum(r[2] for r in per_code.values())
    print(f"| total | {total} | {found_d} | {found_a} | |")
    print()
    print(f"{found_a} of {total} expected lines reported with --select ALL ({100.0 * found_a / max(total, 1):.0f} %); "
          f"{found_d} of {total} with the default rules")
    misses = [(p, l, t) for p, l, t, hit in everything[0] if hit is None]
    if misses:
        print()
        print("Not reported (--select ALL):")
        for p, l, t in misses:
            print(f"  {p}:{l} {t}")
    if everything[1]:
        print()
        print("Mapped findings on lines TorchFix expects nothing on (--select ALL):")
        for p, l, tl in everything[1]:
            print(f"  {p}:{l} {tl}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
