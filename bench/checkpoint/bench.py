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


CPU = {}  # command -> best user+sys CPU seconds (what wall time would be on an idle core)


def measure(cmd, runs):
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm-up
    best, rss, out, cpu = None, 0, "", None
    for _ in range(runs):
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S"] + cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if p.returncode not in (0, 1):
            sys.exit(f"bench.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
        m, u, s = p.stderr.strip().splitlines()[-1].split()
        rss = max(rss, int(m))
        best = elapsed if best is None else min(best, elapsed)
        cpu = float(u) + float(s) if cpu is None else min(cpu, float(u) + float(s))
        out = p.stdout
    CPU[tuple(cmd)] = cpu
    return best, rss * 1024, out


def cpu_of(cmd):
    return CPU[tuple(cmd)]


def mb(n):
    return f"{n / 1e6:.1f} MB"


LOAD = os.getloadavg()


def main():
    torchlint, d = sys.argv[1], sys.argv[2]
    py = "/usr/bin/python3"
    base = os.path.join(HERE, "python_baseline.py")
    rows = []

    many = os.path.join(d, "many_tensors.pt")
    cmd = [torchlint, "ckpt", many, "--output-format", "concise"]
    t, rss, _ = measure(cmd, 5)
    ct = cpu_of(cmd)
    bt, brss, bout = measure([py, base, many], 1)
    bct = cpu_of([py, base, many])
    info = json.loads(bout)
    import zipfile
    with zipfile.ZipFile(many) as z:
        pkl = next(i for i in z.infolist() if i.filename.endswith("data.pkl"))
        entries = len(z.infolist())
    rows.append(("50 000 tensors + Adam state, zip", f"{os.path.getsize(many) / 1e6:.1f} MB, data.pkl {mb(pkl.file_size)}, "
                 f"{info['opcodes']:,} opcodes, {entries:,} records", t, ct, rss, bt, bct, brss, pkl.file_size))

    legacy = os.path.join(d, "many_tensors_legacy.pt")
    cmd = [torchlint, "ckpt", legacy, "--output-format", "concise"]
    t, rss, _ = measure(cmd, 5)
    ct = cpu_of(cmd)
    bt, brss, bout = measure([py, base, legacy], 1)
    bct = cpu_of([py, base, legacy])
    rows.append(("same, legacy format", f"{os.path.getsize(legacy) / 1e6:.1f} MB, {json.loads(bout)['opcodes']:,} opcodes",
                 t, ct, rss, bt, bct, brss, os.path.getsize(legacy)))

    large = os.path.join(d, "large.pt")
    cmd = [torchlint, "ckpt", large, "--output-format", "concise"]
    t, rss, _ = measure(cmd, 7)
    ct = cpu_of(cmd)
    bt, brss, _ = measure([py, base, large], 3)
    bct = cpu_of([py, base, large])
    st = os.stat(large)
    rows.append(("32 x 64 MiB tensors", f"{st.st_size / 1e9:.2f} GB ({st.st_blocks * 512 / 1e6:.0f} MB on disk)", t, ct, rss, bt, bct, brss, None))

    print(f"load average at start: {LOAD[0]:.1f} (wall times include waiting for a CPU; CPU = user + sys)")
    print()
    print("| input | size | `torchlint ckpt` wall / CPU | peak RSS | Python genops walk wall / CPU | peak RSS | speed-up (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for name, size, t, ct, rss, bt, bct, brss, pickle_bytes in rows:
        mem = f"{mb(rss)}" + (f" ({rss / pickle_bytes:.1f}x the pickle)" if pickle_bytes else "")
        print(f"| {name} | {size} | {t * 1000:.0f} ms / {ct * 1000:.0f} ms | {mem} | {bt * 1000:.0f} ms / {bct * 1000:.0f} ms | "
              f"{mb(brss)} | {bct / max(ct, 0.001):.0f}x |")

    print()
    print("| value scan (`--scan-values`, page cache warm) | tensor bytes | wall / CPU | throughput wall / CPU |")
    print("|---|---|---|---|")
    for name in ("scan_f32.pt", "scan_f16.pt", "scan_bf16.pt"):
        path = os.path.join(d, name)
        c0 = [torchlint, "ckpt", path, "--output-format", "concise"]
        c1 = [torchlint, "ckpt", path, "--scan-values", "--output-format", "concise"]
        t0, _, _ = measure(c0, 3)
        t, _, _ = measure(c1, 5)
        size = os.path.getsize(path)
        ct = cpu_of(c1) - cpu_of(c0)
        print(f"| {name[5:-3]} | {size / 1e9:.2f} GB | {t * 1000:.0f} ms / {cpu_of(c1) * 1000:.0f} ms | "
              f"{size / (t - t0) / 1e9:.2f} GB/s / {size / max(ct, 1e-6) / 1e9:.2f} GB/s |")
    bt, _, bout = measure([py, base, os.path.join(d, "scan_f32.pt"), "--values"], 1)
    info = json.loads(bout)
    print(f"| f32, NumPy baseline (isfinite/min/max/mean) | {info['bytes'] / 1e9:.2f} GB | {bt * 1000:.0f} ms | "
          f"{info['bytes'] / info['seconds'] / 1e9:.2f} GB/s |")


if __name__ == "__main__":
    main()
