"""Keystroke-to-diagnostics latency of `torchlint server` (bench/server/README.md).
Usage: latency.py TORCHLINT_BINARY [EDITS]
Opens a file in a temporary project, then types into it: each edit is one incremental
didChange (one character inserted, or removed again), sent only after the diagnostics of
the previous one came back. Latency: from writing the didChange to reading the
publishDiagnostics for that version. The server runs with --debounce-ms 0, so the figures
are the server's own work (an editor adds its debounce on top)."""
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lsp"))
from lsp_client import Client  # noqa: E402

CORPUS_FILE = "/usr/lib/python3/dist-packages/torch/nn/modules/module.py"


def training_script(lines=2000):
    """The sample project's train.py, followed by as many numbered training helpers as
    it takes to reach `lines` lines."""
    with open(os.path.join(ROOT, "fixtures/sample_project/train.py"), encoding="utf-8") as f:
        text = f.read()
    helper = '''

def train_variant_{n}(model, loader, epochs: int = 1):
    """Variant {n} of the training loop."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        scheduler.step()
    return model
'''
    n = 0
    while text.count("\n") < lines:
        text += helper.format(n=n)
        n += 1
    return text


def percentile(values, p):
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1)))))
    return ordered[k]


def measure(binary, project, name, text, edits, parse_flags):
    path = os.path.join(project, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    c = Client(binary, "--debounce-ms", "0", *parse_flags, cwd=project)
    try:
        c.initialize(project)
        started = time.monotonic()
        c.open(path, text)
        arrived, _ = c.diagnostics(path, timeout=120, version=1)
        first = (arrived - started) * 1000
        line = text.count("\n") // 2  # type in the middle of the file
        latencies, lint_ms, cpu_ms = [], [], []
        for i in range(edits):
            version = i + 2
            if i % 2 == 0:
                change = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                          "text": "#"}
            else:
                change = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}},
                          "text": ""}
            sent = time.monotonic()
            c.change(path, version, [change])
            arrived, _ = c.diagnostics(path, timeout=120, version=version)
            latencies.append((arrived - sent) * 1000)
            # The server's own account of the lint (run_check on the editor's text).
            _, log = c.wait(lambda m: m.get("method") == "window/logMessage"
                            and m["params"]["message"].startswith("linted "), what="the lint's log line")
            timing = log["params"]["message"].rsplit(" in ", 1)[1]
            lint_ms.append(float(timing.split()[0]))
            # The process's CPU time over the lint (older servers do not report it): on a
            # shared machine the wall times include waiting for a core, this does not.
            if "(cpu " in timing:
                cpu_ms.append(float(timing.split("(cpu ", 1)[1].split()[0]))
        c.close()
    finally:
        c.kill()
    return {"file": name, "lines": text.count("\n"), "first_ms": first, "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95), "max": max(latencies), "mean": statistics.mean(latencies),
            "lint_p50": percentile(lint_ms, 50), "lint_p95": percentile(lint_ms, 95),
            "cpu_p50": percentile(cpu_ms, 50) if cpu_ms else float("nan"),
            "cpu_p95": percentile(cpu_ms, 95) if cpu_ms else float("nan")}


def main():
    binary = os.path.abspath(sys.argv[1])
    edits = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    tmp = tempfile.mkdtemp(prefix="torchlint-server-bench-")
    try:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        with open(os.path.join(project, "pyproject.toml"), "w", encoding="utf-8") as f:
            f.write('[project]\nname = "bench"\nversion = "0"\n')
        # The sample project's helpers, so that train.py's imports resolve as in a real project.
        for helper in ("utils.py", "model.py", "dataset.py"):
            shutil.copy(os.path.join(ROOT, "fixtures/sample_project", helper), project)
        cases = [("train_2000.py", training_script())]
        if os.path.exists(CORPUS_FILE):
            with open(CORPUS_FILE, encoding="utf-8") as f:
                cases.append(("module.py", f.read()))
        print(f"{'file':<16}{'parse':<13}{'lines':>7}{'open ms':>9}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}"
              f"{'lint p50':>10}{'lint p95':>10}{'cpu p50':>9}{'cpu p95':>9}  ({edits} edits)")
        for name, text in cases:
            # Side by side: re-parsing from the previous tree (the default) and from scratch.
            for mode, flags in (("incremental", []), ("full", ["--full-reparse"])):
                r = measure(binary, project, name, text, edits, flags)
                print(f"{r['file']:<16}{mode:<13}{r['lines']:>7}{r['first_ms']:>9.1f}{r['p50']:>8.1f}{r['p95']:>8.1f}"
                      f"{r['max']:>8.1f}{r['lint_p50']:>10.1f}{r['lint_p95']:>10.1f}{r['cpu_p50']:>9.1f}{r['cpu_p95']:>9.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
