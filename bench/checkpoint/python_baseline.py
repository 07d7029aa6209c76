#!/usr/bin/python3
"""The Python scanner baseline: what picklescan-style tools do for a torch checkpoint.

For a zip checkpoint it opens the archive with zipfile and walks every pickle member
with pickletools.genops, collecting GLOBAL/STACK_GLOBAL names (picklescan's algorithm,
without its policy); for other files it walks the stacked pickles from the start.
`--values` instead reads every float tensor record of a zip with NumPy (isfinite, min,
max, mean), the fastest a Python value scan gets. Prints one JSON line.
"""
import json
import pickletools
import sys
import time
import zipfile

import numpy as np


def walk(data):
    opcodes, globals_ = 0, set()
    strings = []
    import io
    f = io.BytesIO(data)
    while f.tell() < len(data):
        try:
            for op, arg, _ in pickletools.genops(f):
                opcodes += 1
                if op.name in ("GLOBAL", "INST"):
                    globals_.add(arg)
                elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
                    strings.append(arg)
                elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                    globals_.add(f"{strings[-2]} {strings[-1]}")
        except Exception:
            break
    return opcodes, globals_


def main():
    path = sys.argv[1]
    start = time.perf_counter()
    if "--values" in sys.argv:
        count = 0
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if "/data/" not in info.filename:
                    continue
                a = np.frombuffer(z.read(info), dtype=np.float32)
                np.isfinite(a).all(), a.min(), a.max(), a.mean()
                count += a.nbytes
        print(json.dumps({"seconds": time.perf_counter() - start, "bytes": count}))
        return
    opcodes, globals_ = 0, set()
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if info.filename.endswith(".pkl"):
                    n, g = walk(z.read(info))
                    opcodes += n
                    globals_ |= g
    else:
        with open(path, "rb") as f:
            opcodes, globals_ = walk(f.read())
    print(json.dumps({"seconds": time.perf_counter() - start, "opcodes": opcodes, "globals": len(globals_)}))


if __name__ == "__main__":
    main()
