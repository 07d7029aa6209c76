#!/usr/bin/env python3
"""The Dask fleet driver end to end (scripts/fleet/dask_fleet.py), on a generated fleet.

20 small repositories (a train.py each, with different problems) and 2,000 checkpoint
files in a registry-like tree: one benign torch.save file copied over and over, hostile
pickles written here with the standard library (protocol 0/2/4, calling os.system,
builtins.exec, subprocess.Popen; never loaded) and two truncated files. The driver runs
on a LocalCluster of two worker processes, twice: plainly, and with a worker process
killed while it has a task in flight. Each time every unit must be reported exactly once
in the shards and in the merged report, every hostile file flagged dangerous, the
truncated files listed as errors; the merged HTML is rendered by headless Chromium.

usage: fleet_test.py TORCHLINT SOURCE_DIR
"""

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

TORCHLINT, SOURCE = sys.argv[1], sys.argv[2]
DRIVER = os.path.join(SOURCE, "scripts", "fleet", "dask_fleet.py")
FILES, REPOS = 2000, 20

# Problems a training script can have; each repository takes a different mix.
SNIPPETS = [
    "model = torch.nn.DataParallel(model)\n",
    "state = torch.load('ckpt.pt')\n",
    "torch.save(model, 'model.pt')\n",
    "loader = torch.utils.data.DataLoader(ds, batch_size=32)\n",
    "for x, y in loader:\n    loss = model(x).sum()\n    loss.backward()\n    opt.step()\n",
    "torch.backends.cudnn.benchmark = True\n",
]


class Hostile:
    """Pickles to a call of `func(*args)`; pickling it runs nothing, loading it would."""

    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def fail(message):
    print(f"FAIL {message}", file=sys.stderr)
    sys.exit(1)


def make_fleet(root):
    import torch

    repos = []
    for i in range(REPOS):
        repo = os.path.join(root, "repos", f"team{i % 4}", f"project{i:02d}")
        os.makedirs(repo)
        body = "import torch\n\nmodel = torch.nn.Linear(4, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        body += "".join(s for k, s in enumerate(SNIPPETS) if (i >> (k % 5)) & 1 or k == i % len(SNIPPETS))
        with open(os.path.join(repo, "train.py"), "w") as f:
            f.write(body)
        repos.append(repo)
    benign = os.path.join(root, "benign.pt")
    torch.save({"fc.weight": torch.zeros(2, 4), "fc.bias": torch.zeros(2)}, benign)
    hostile_calls = [(os.system, ("echo pwned",), 2), (exec, ("import os",), 0), (subprocess.Popen, (["id"],), 4)]
    files, hostile, broken = [], [], []
    for n in range(FILES):
        d = os.path.join(root, "hub", f"org{n % 8}", f"model{n % 50:02d}")
        os.makedirs(d, exist_ok=True)
        if n % 80 == 7:  # 25 hostile files, named like any upload
            func, fargs, protocol = hostile_calls[len(hostile) % 3]
            path = os.path.join(d, f"upload{n:04d}.pt")
            with open(path, "wb") as f:
                f.write(pickle.dumps(Hostile(func, fargs), protocol=protocol))
            hostile.append(path)
        elif n in (500, 1500):
            path = os.path.join(d, f"upload{n:04d}.pt")
            with open(benign, "rb") as src, open(path, "wb") as f:
                f.write(src.read()[:100])
            broken.append(path)
        else:
            path = os.path.join(d, f"upload{n:04d}.pt")
            shutil.copyfile(benign, path)
        files.append(path)
    os.remove(benign)
    return repos, files, hostile, broken


def shard_records(out):
    records = []
    for name in sorted(os.listdir(out)):
        if name.endswith(".jsonl"):
            with open(os.path.join(out, name)) as f:
                records += [json.loads(line) for line in f if line.strip()]
    return records


def check_run(label, root, repos, files, hostile, broken, extra):
    out = os.path.join(root, f"shards-{label}")
    merged_json, merged_html = os.path.join(root, f"{label}.json"), os.path.join(root, f"{label}.html")
    argv = [sys.executable, DRIVER, "--torchlint", TORCHLINT, "--local", "2", "--files", os.path.join(root, "files.txt"),
            "--repos", os.path.join(root, "repos.txt"), "--out", out, "--chunk-files", "50", "--chunk-repos", "2",
            "--report", merged_json, "--report", merged_html, *extra]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    print(run.stdout, end="")
    if run.returncode != 2:  # the truncated files are unit errors
        print(run.stderr[-4000:], file=sys.stderr)
        fail(f"{label}: the driver exited {run.returncode}, expected 2 (two unreadable files)")

    # Every unit exactly once in the shards.
    records = shard_records(out)
    seen = {}
    for r in records:
        seen[(r["kind"], r["path"])] = seen.get((r["kind"], r["path"]), 0) + 1
    expected = {("checkpoint", p) for p in files} | {("repository", p) for p in repos}
    twice = [k for k, n in seen.items() if n > 1]
    missing = expected - set(seen)
    extra_units = set(seen) - expected
    if twice or missing or extra_units or len(records) != FILES + REPOS:
        fail(f"{label}: {len(records)} records; reported twice {twice[:3]}, missing {sorted(missing)[:3]}, unknown "
             f"{sorted(extra_units)[:3]}")

    # The merged report: the same units once each, hostile files flagged, broken ones errors.
    with open(merged_json) as f:
        fleet = json.load(f)
    s = fleet["summary"]
    if (s["repositories"], s["checkpoints"], s["duplicates"], s["records"]) != (REPOS, FILES, 0, FILES + REPOS):
        fail(f"{label}: merged summary {s}")
    flagged = {c["path"]: c for c in fleet["checkpoints"]["flagged"]}
    not_flagged = [p for p in hostile if flagged.get(p, {}).get("safety") != "dangerous"]
    if not_flagged:
        fail(f"{label}: hostile files not flagged dangerous: {not_flagged[:3]}")
    if fleet["checkpoints"]["verdicts"]["dangerous"] != len(hostile):
        fail(f"{label}: {fleet['checkpoints']['verdicts']['dangerous']} dangerous, expected {len(hostile)}")
    errors = sorted(e["path"] for e in fleet["errors"])
    if errors != sorted(broken):
        fail(f"{label}: errors {errors}, expected the truncated files {sorted(broken)}")
    scored = [r for r in fleet["repositories"] if r["score"] is not None]
    if len(scored) != REPOS or len({r["score"] for r in scored}) < 2:
        fail(f"{label}: repositories not all scored, or all alike: {[r['score'] for r in fleet['repositories']]}")
    if not fleet["worst_items"]:
        fail(f"{label}: no failing checklist item across the fleet")
    print(f"ok   {label}: {len(records)} units once each, {len(hostile)} hostile files flagged, "
          f"{len(broken)} errors listed, scores {min(r['score'] for r in scored)}-{max(r['score'] for r in scored)}")
    return run.stdout, merged_html


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.rows, self.external = set(), {}, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "tr" and a.get("class"):
            self.rows[a["class"]] = self.rows.get(a["class"], 0) + 1
        if tag in ("script", "link", "img") or (a.get("src") or "").startswith("http"):
            self.external.append(tag)


def check_html(root, html, hostile):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        fail("chromium is not installed (scripts/bootstrap.sh installs it)")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={root}/profile", "--enable-logging=stderr",
             "--v=0"]
    dom_run = subprocess.run([chromium, *flags, "--dump-dom", f"file://{html}"], capture_output=True, text=True, timeout=120)
    if dom_run.returncode != 0:
        fail(f"chromium could not render the fleet report: {dom_run.stderr[-2000:]}")
    if any("CONSOLE" in line and "rror" in line or "Uncaught" in line for line in dom_run.stderr.splitlines()):
        fail("console errors while rendering the fleet report")
    dom = Dom()
    dom.feed(dom_run.stdout)
    for section in ("summary", "repositories", "worst-items", "checkpoints", "errors", "flagged"):
        if section not in dom.ids:
            fail(f"fleet HTML: no #{section}")
    if dom.rows.get("repo") != REPOS or dom.rows.get("flagged", 0) < len(hostile) or dom.external:
        fail(f"fleet HTML: rows {dom.rows}, external resources {dom.external}")
    png = os.path.join(root, "fleet.png")
    subprocess.run([chromium, *flags, "--window-size=1280,2400", f"--screenshot={png}", f"file://{html}"],
                   capture_output=True, timeout=120)
    size = os.path.getsize(png) if os.path.exists(png) else 0
    if size < 20000:
        fail(f"fleet HTML screenshot suspiciously small ({size} bytes)")
    if os.environ.get("FLEET_SCREENSHOT"):
        shutil.copyfile(png, os.environ["FLEET_SCREENSHOT"])
    print(f"ok   fleet HTML rendered by Chromium: {dom.rows.get('repo')} repositories, {dom.rows.get('flagged')} flagged "
          f"checkpoints, no external resources (screenshot {size} bytes)")


def check_crash_isolation(root, files):
    """A torchlint that dies on one unit costs that unit only: the driver's task gives it an
    error record and runs the rest of the chunk again (no Dask needed to show it)."""
    sys.path.insert(0, os.path.dirname(DRIVER))
    import dask_fleet

    crashy = os.path.join(root, "crashy.sh")
    with open(crashy, "w") as f:
        f.write(f"""#!/bin/bash
# torchlint, except that it dies by SIGSEGV on reaching a unit named *poison* and hangs
# on one named *hang* (exec: no child left holding the output pipe).
input=$(cat)
if grep -q poison <<<"$input"; then
  sed '/poison/,$d' <<<"$input" | {TORCHLINT} "$@"
  kill -SEGV $$
fi
if grep -q hang <<<"$input"; then
  sed '/hang/,$d' <<<"$input" | {TORCHLINT} "$@"
  exec sleep 600
fi
exec {TORCHLINT} "$@" <<<"$input"
""")
    os.chmod(crashy, 0o755)
    poison = os.path.join(root, "poison.pt")
    shutil.copyfile(files[0], poison)
    chunk = [files[0], files[1], poison, files[3], files[4]]
    lines = [json.loads(line) for line in dask_fleet.run_chunk(crashy, "checkpoint", chunk, [], 60)]
    if [r["path"] for r in lines] != chunk:
        fail(f"crash isolation: records for {[r['path'] for r in lines]}, expected {chunk}")
    if [r["status"] for r in lines] != ["ok", "ok", "error", "ok", "ok"] or "signal 11" not in lines[2]["error"]:
        fail(f"crash isolation: {[(r['status'], r['error']) for r in lines]}")
    hang = os.path.join(root, "hang.pt")
    shutil.copyfile(files[0], hang)
    chunk = [files[0], hang, files[3]]
    lines = [json.loads(line) for line in dask_fleet.run_chunk(crashy, "checkpoint", chunk, [], 1)]
    if [r["path"] for r in lines] != chunk or [r["status"] for r in lines] != ["ok", "error", "ok"] \
            or "time limit" not in lines[1]["error"]:
        fail(f"hang isolation: {[(r['path'], r['status'], r.get('error')) for r in lines]}")
    print("ok   a torchlint crash or hang on one unit: that unit an error record, the rest of its chunk still judged")


def main():
    root = tempfile.mkdtemp(prefix="torchlint-fleet-")
    try:
        repos, files, hostile, broken = make_fleet(root)
        with open(os.path.join(root, "files.txt"), "w") as f:
            f.write("\n".join(files) + "\n")
        with open(os.path.join(root, "repos.txt"), "w") as f:
            f.write("\n".join(repos) + "\n")
        print(f"ok   generated {REPOS} repositories and {FILES} checkpoint files ({len(hostile)} hostile, {len(broken)} truncated)")
        check_crash_isolation(root, files)
        _, html = check_run("plain", root, repos, files, hostile, broken, [])
        check_html(root, html, hostile)
        stdout, _ = check_run("killed", root, repos, files, hostile, broken, ["--test-kill-worker-after", "3"])
        if "killed worker" not in stdout:
            fail("killed: the driver did not kill a worker")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
