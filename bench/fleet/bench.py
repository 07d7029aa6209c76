#!/usr/bin/python3
"""Throughput of torchlint as a fleet's unit of work: files/s/core for the checkpoint
inspector on a model-hub mix, lines/s/core for the linter. See README.md.

usage: /usr/bin/python3 bench/fleet/bench.py TORCHLINT WORKDIR [--units 2000] [--corpus DIR]

The mix (real torch.save / torch.jit.save, safetensors written to the format's spec, a
hostile pickle) is written once into WORKDIR/mix and listed over and over up to --units
(the page cache is warm: this measures the inspector's CPU, not the storage). CPU time is
user + sys of the torchlint process (getrusage of the children), so the rate is per core.
"""
import argparse
import json
import os
import pickle
import resource
import struct
import subprocess
import sys
import time

import torch

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30


def safetensors(path, tensors):
    """Writes a safetensors file: 8-byte header length, JSON header, then the data (zeros,
    turned into holes so a large file takes no disk)."""
    header, offset = {}, 0
    for name, (dtype, shape, size) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    header["__metadata__"] = {"format": "pt"}
    blob = json.dumps(header).encode()
    blob += b" " * (-len(blob) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)) + blob)
        f.truncate(8 + len(blob) + offset)


class Evil:
    def __reduce__(self):
        return os.system, ("echo pwned",)


def make_mix(root):
    """(kind, path, weight): weights are the share of uploads of that kind in the mix."""
    os.makedirs(root, exist_ok=True)
    mix = []

    def add(kind, name, weight, writer):
        path = os.path.join(root, name)
        if not os.path.exists(path):
            writer(path)
        mix.append((kind, path, weight))

    torch.manual_seed(0)
    small = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    add("state dict 1 KB-class", "small_state_dict.pt", 25, lambda p: torch.save(small.state_dict(), p))
    mlp = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(12)])
    add("state dict 3 MB", "mlp_state_dict.pt", 20, lambda p: torch.save(mlp.state_dict(), p))

    def optimizer_ckpt(p):
        opt = torch.optim.AdamW(mlp.parameters(), lr=1e-3)
        mlp(torch.randn(2, 256)).sum().backward()
        opt.step()
        sched = torch.optim.lr_scheduler.StepLR(opt, 10)
        torch.save({"epoch": 3, "model_state_dict": mlp.state_dict(), "optimizer_state_dict": opt.state_dict(),
                    "scheduler": sched.state_dict(), "best_acc": 0.91}, p)
    add("training checkpoint (AdamW) 9 MB", "training.pt", 15, optimizer_ckpt)

    def many(p):
        model = {f"blocks.{i}.{w}": torch.zeros(4) for i in range(1000) for w in ("weight", "bias", "scale")}
        torch.save(model, p)
    add("state dict, 3,000 tensors", "many_tensors.pt", 5, many)
    add("safetensors 500 MB (sparse)", "model.safetensors", 20, lambda p: safetensors(
        p, {f"layer{i}.weight": ("F16", [4096, 4096], 4096 * 4096 * 2) for i in range(15)}))
    add("TorchScript", "scripted.pt", 8, lambda p: torch.jit.save(torch.jit.script(small), p))

    def big(p):
        torch.save({f"block{i}.weight": torch.zeros(16 * 1024 * 1024) for i in range(32)}, p)
        subprocess.run(["fallocate", "--dig-holes", p], check=False)
    add("torch.save 2 GB (holes)", "large_2GB.pt", 2, big)
    add("hostile pickle (os.system)", "evil.pt", 5, lambda p: open(p, "wb").write(pickle.dumps(Evil(), protocol=2)))
    return mix


def cpu_of(argv, stdout=subprocess.DEVNULL):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    run = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return run, wall, cpu


def best_of(n, argv):
    runs = [cpu_of(argv) for _ in range(n)]
    return min(runs, key=lambda r: r[2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("torchlint")
    ap.add_argument("workdir")
    ap.add_argument("--units", type=int, default=2000)
    ap.add_argument("--corpus", default="/usr/lib/python3/dist-packages/torch")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    mix = make_mix(os.path.join(args.workdir, "mix"))
    print(f"torchlint: {subprocess.run([args.torchlint, '--version'], capture_output=True, text=True).stdout.strip()}")
    print(f"machine: {os.cpu_count()} cores; {os.uname().release}")

    # Each kind alone, then the weighted mix, all through --files-from as a fleet worker runs it.
    rates = {}
    print("\n| input | size | units | CPU s | files/s/core |\n|---|---|---|---|---|")
    for kind, path, weight in mix:
        n = 200 if os.path.getsize(path) < GB else 50
        lst = os.path.join(args.workdir, "one.txt")
        with open(lst, "w") as f:
            f.write((path + "\n") * n)
        run, wall, cpu = best_of(args.repeat, [args.torchlint, "ckpt", "--files-from", lst, "--exit-zero"])
        rates[kind] = n / cpu
        print(f"| {kind} | {os.path.getsize(path) / MB:.2f} MB | {n} | {cpu:.3f} | {n / cpu:,.0f} |")
    total_weight = sum(w for _, _, w in mix)
    units = []
    for kind, path, weight in mix:
        units += [path] * round(args.units * weight / total_weight)
    lst = os.path.join(args.workdir, "mix.txt")
    with open(lst, "w") as f:
        f.write("\n".join(units) + "\n")
    run, wall, cpu = best_of(args.repeat, [args.torchlint, "ckpt", "--files-from", lst, "--exit-zero"])
    mix_rate = len(units) / cpu
    print(f"| **the mix** (weights {', '.join(str(w) for _, _, w in mix)}) | – | {len(units)} | {cpu:.3f} | **{mix_rate:,.0f}** |")

    # A hub hook that starts one torchlint per upload pays the process start each time.
    sample = units[:: max(1, len(units) // 200)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for path in sample:
        subprocess.run([args.torchlint, "ckpt", path, "--exit-zero", "--output-format", "concise"], stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu1 = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    hook_rate = len(sample) / cpu1
    print(f"| the mix, one `torchlint ckpt FILE` process per file | – | {len(sample)} | {cpu1:.3f} | {hook_rate:,.0f} |")

    # The linter: one thread, no cache, over a real corpus.
    lines = 0
    for dirpath, _, names in os.walk(args.corpus):
        for name in names:
            if name.endswith(".py"):
                with open(os.path.join(dirpath, name), "rb") as f:
                    lines += f.read().count(b"\n")
    run, wall, cpu = best_of(args.repeat, [args.torchlint, "check", args.corpus, "-j", "1", "--no-cache", "--exit-zero",
                                          "--output-format", "concise"])
    line_rate = lines / cpu
    print(f"\nlinter: {lines:,} lines of {args.corpus} in {cpu:.2f} s CPU (one thread): **{line_rate:,.0f} lines/s/core**")

    # Sizing: 1 million uploads a day.
    per_s = 1_000_000 / 86_400
    print(f"\n1,000,000 uploads/day = {per_s:.2f} uploads/s on average")
    for label, rate in (("batched (--files-from)", mix_rate), ("one process per file", hook_rate)):
        for peak in (1, 3, 10):
            cores = per_s * peak / rate
            print(f"  {label}, peak {peak:>2}x the mean: {cores:.3f} cores at 100 % ({cores / 0.5:.3f} at 50 % utilisation)")
    print(json.dumps({"files_per_s_per_core_mix": mix_rate, "files_per_s_per_core_process_per_file": hook_rate,
                      "lines_per_s_per_core": line_rate,
                      "per_kind_files_per_s_per_core": rates}))


if __name__ == "__main__":
    main()
