#!/usr/bin/python3
"""Writes the checkpoint benchmark inputs with the real torch.save into OUTDIR.

  many_tensors.pt   50 000 parameter tensors plus their Adam state (200 000 storages,
                    ~6 M pickle opcodes, ~200 000 zip records)
  many_tensors_legacy.pt   the same, in the legacy (non-zip) format
  large.pt          32 tensors of 64 MiB (2 GiB of tensor data); zero-filled blocks are
                    turned into holes (fallocate --dig-holes) so it takes little disk
  scan_f32.pt / scan_f16.pt / scan_bf16.pt   random values for the value-scan throughput

Run with Debian's interpreter (python3-torch): /usr/bin/python3 make_bench.py OUTDIR [--only NAME].
Existing files are kept, so a second run costs nothing.
"""
import argparse
import collections
import os
import subprocess
import sys

import torch


def many_tensors(path, legacy=False):
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(8)) for _ in range(50_000)]
    opt = torch.optim.Adam(params, lr=1e-3)
    loss = torch.stack([p.sum() for p in params]).sum()
    loss.backward()
    opt.step()
    model = collections.OrderedDict((f"layers.{i}.weight", p.detach()) for i, p in enumerate(params))
    torch.save({"epoch": 1, "model": model, "optimizer": opt.state_dict()}, path,
               _use_new_zipfile_serialization=not legacy)


def large(path):
    tensors = {f"block{i}.weight": torch.zeros(16 * 1024 * 1024) for i in range(32)}
    torch.save(tensors, path)
    subprocess.run(["fallocate", "--dig-holes", path], check=False)


def scan(path, dtype):
    torch.manual_seed(1)
    n = 4 if dtype == torch.float32 else 2  # 256 MiB of float32 / 128 MiB of 16-bit values per tensor pair
    tensors = {f"w{i}": torch.randn(32 * 1024 * 1024).to(dtype) for i in range(n)}
    torch.save(tensors, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--only", action="append")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    jobs = {
        "many_tensors.pt": lambda p: many_tensors(p),
        "many_tensors_legacy.pt": lambda p: many_tensors(p, legacy=True),
        "large.pt": large,
        "scan_f32.pt": lambda p: scan(p, torch.float32),
        "scan_f16.pt": lambda p: scan(p, torch.float16),
        "scan_bf16.pt": lambda p: scan(p, torch.bfloat16),
    }
    for name, make in jobs.items():
        if args.only and name not in args.only:
            continue
        path = os.path.join(args.outdir, name)
        if os.path.exists(path):
            continue
        print(f"make_bench.py: writing {name}", file=sys.stderr)
        make(path + ".tmp")
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
