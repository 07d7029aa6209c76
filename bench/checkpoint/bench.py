#!/usr/bin/python3
"""Times `torchlint ckpt` against the Python scanner baseline on the benchmark inputs.

usage: bench.py TORCHLINT BENCH_DIR   (run by bench/checkpoint/run.sh)

Every timing is wall-clock of one process, best of N after a warm-up run (page cache
warm); peak memory is the process's maximum RSS (/usr/bin/time). Prints a Markdown table.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(cmd, runs):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm-up
    best, rss, out = None, 0, ""
    for _ in range(runs):
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if p.returncode not in (0, 1):
            sys.exit(f"bench.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
        rss = max(rss, int(p.stderr.strip().splitlines()[-1]))
        best = elapsed if best is None else min(best, elapsed)
        out = p.stdout
    return best, rss * 1024, out


def mb(n):
    return f"{n / 1e6:.1f} MB"


def main():
    torchlint, d = sys.argv[1], sys.argv[2]
    py = "/usr/bin/python3"
    base = os.path.join(HERE, "python_baseline.py")
    rows = []

    many = os.path.join(d, "many_tensors.pt")
    t, rss, _ = measure([torchlint, "ckpt", many, "--output-format", "concise"], 5)
    bt, brss, bout = measure([py, base, many], 1)
    info = json.loads(bout)
    import zipfile
    with zipfile.ZipFile(many) as z:
        pkl = next(i for i in z.infolist() if i.filename.endswith("data.pkl"))
        entries = len(z.infolist())
    rows.append(("50 000 tensors + Adam state, zip", f"{os.path.getsize(many) / 1e6:.1f} MB, data.pkl {mb(pkl.file_size)}, "
                 f"{info['opcodes']:,} opcodes, {entries:,} records", t, rss, bt, brss, pkl.file_size))

    legacy = os.path.join(d, "many_tensors_legacy.pt")
    t, rss, _ = measure([torchlint, "ckpt", legacy, "--output-format", "concise"], 5)
    bt, brss, bout = measure([py, base, legacy], 1)
    rows.append(("same, legacy format", f"{os.path.getsize(legacy) / 1e6:.1f} MB, {json.loads(bout)['opcodes']:,} opcodes",
                 t, rss, bt, brss, os.path.getsize(legacy)))

    large = os.path.join(d, "large.pt")
    t, rss, _ = measure([torchlint, "ckpt", large, "--output-format", "concise"], 7)
    bt, brss, _ = measure([py, base, large], 3)
    st = os.stat(large)
    rows.append(("32 x 64 MiB tensors", f"{st.st_size / 1e9:.2f} GB ({st.st_blocks * 512 / 1e6:.0f} MB on disk)", t, rss, bt, brss, None))

    print("| input | size | `torchlint ckpt` | peak RSS | Python genops walk | peak RSS | speed-up |")
    print("|---|---|---|---|---|---|---|")
    for name, size, t, rss, bt, brss, pickle_bytes in rows:
        mem = f"{mb(rss)}" + (f" ({rss / pickle_bytes:.1f}x the pickle)" if pickle_bytes else "")
        print(f"| {name} | {size} | {t * 1000:.0f} ms | {mem} | {bt * 1000:.0f} ms | {mb(brss)} | {bt / t:.0f}x |")

    print()
    print("| value scan (`--scan-values`, page cache warm) | tensor bytes | time | throughput |")
    print("|---|---|---|---|")
    for name in ("scan_f32.pt", "scan_f16.pt", "scan_bf16.pt"):
        path = os.path.join(d, name)
        t0, _, _ = measure([torchlint, "ckpt", path, "--output-format", "concise"], 3)
        t, _, _ = measure([torchlint, "ckpt", path, "--scan-values", "--output-format", "concise"], 3)
        size = os.path.getsize(path)
        print(f"| {name[5:-3]} | {size / 1e9:.2f} GB | {t * 1000:.0f} ms | {size / (t - t0) / 1e9:.2f} GB/s |")
    bt, _, bout = measure([py, base, os.path.join(d, "scan_f32.pt"), "--values"], 1)
    info = json.loads(bout)
    print(f"| f32, NumPy baseline (isfinite/min/max/mean) | {info['bytes'] / 1e9:.2f} GB | {bt * 1000:.0f} ms | "
          f"{info['bytes'] / info['seconds'] / 1e9:.2f} GB/s |")


if __name__ == "__main__":
    main()
