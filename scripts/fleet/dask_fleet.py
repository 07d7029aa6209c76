#!/usr/bin/env python3
"""Scan a fleet of checkpoint files and repositories with torchlint on Dask distributed.

torchlint is the unit of work: each Dask task runs the `torchlint` binary (an argument
vector, no shell) on a chunk of the list with `ckpt --files-from -` or `audit
--repos-from -` and returns its torchlint-unit/1 JSON lines; the driver writes one shard
per chunk and merges them with `torchlint report merge`. Nothing is shared between tasks
but the file system the paths are on, so any Dask cluster whose workers see those paths
and have the binary will do (`--scheduler tcp://host:8786`), or a LocalCluster
(`--local N` worker processes).

Every listed unit gets exactly one record: a task that raises is retried (`--retries`,
Dask's `retries=`), a task whose worker dies is rescheduled by the scheduler, and when
torchlint itself dies or hangs on a unit (a crash, `--unit-timeout`), the unit it was on
gets an error record and the rest of the chunk is run again without it.

    python3 scripts/fleet/dask_fleet.py --files registry.txt --repos repos.txt \\
        --local 8 --out shards/ --report fleet.html --report fleet.json

Exit status: 2 when a unit failed (its error is in the report), 1 when a unit had
findings, 0 otherwise, as torchlint's own; 3 when the driver itself could not run.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

UNIT_SCHEMA = "torchlint-unit/1"
KINDS = {"checkpoint": ("ckpt", "--files-from"), "repository": ("audit", "--repos-from")}


def error_record(kind, path, message):
    return json.dumps({"schema": UNIT_SCHEMA, "tool": "dask_fleet.py", "kind": kind, "path": path,
                       "status": "error", "error": message})


def run_chunk(torchlint, kind, paths, extra_args, unit_timeout):
    """Runs torchlint on `paths` (one kind); returns one JSON line per path, in order.

    Runs on a Dask worker. torchlint writes and flushes one line per unit as it finishes,
    so when it dies or hangs, the lines already written stand and the unit after them is
    the one it was on: that unit gets an error record and the rest is run again.
    """
    command, option = KINDS[kind]
    lines = []
    remaining = list(paths)
    while remaining:
        argv = [torchlint, command, option, "-", *extra_args]
        timeout = unit_timeout * len(remaining) if unit_timeout else None
        failure = None
        try:
            done = subprocess.run(argv, input="\n".join(remaining) + "\n", capture_output=True, text=True,
                                  timeout=timeout, errors="replace")
            out, err, code = done.stdout, done.stderr, done.returncode
            if code < 0:
                failure = f"torchlint died (signal {-code}) on this unit"
            elif code not in (0, 1, 2):
                failure = f"torchlint exited {code} on this unit"
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err, code = "", None
            failure = f"torchlint stopped on this unit: past the time limit ({unit_timeout:g} s a unit)"
        got = [line for line in out.splitlines() if line.strip()]
        # Records come in list order; anything else means this chunk's output cannot be trusted.
        for line, path in zip(got, remaining):
            if json.loads(line).get("path") != path:
                raise RuntimeError(f"torchlint's record for {path!r} is missing or out of order")
        if len(got) > len(remaining):
            raise RuntimeError("torchlint wrote more records than units")
        lines.extend(got)
        remaining = remaining[len(got):]
        if not remaining:
            break
        if failure is None:
            # A clean exit that left units out: a usage error (exit 2 and a message) applies to them all.
            message = (err.strip().splitlines() or ["torchlint wrote no record"])[-1]
            lines.extend(error_record(kind, p, message) for p in remaining)
            break
        lines.append(error_record(kind, remaining[0], failure))
        remaining = remaining[1:]
    return lines


def read_list(path):
    with (sys.stdin if path == "-" else open(path, encoding="utf-8", errors="surrogateescape")) as f:
        return [line.rstrip("\r\n") for line in f if line.strip()]


def chunks(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)]


def kill_a_busy_worker(client):
    """Test mode: SIGKILL one worker process that has a task in flight; returns its pid."""
    for _ in range(200):
        busy = [addr for addr, keys in client.processing().items() if keys]
        if busy:
            pids = client.run(os.getpid, workers=[busy[0]])
            pid = pids[busy[0]]
            os.kill(pid, signal.SIGKILL)
            print(f"dask_fleet: test mode: killed worker {busy[0]} (pid {pid}) with "
                  f"{len(client.processing()[busy[0]])} task(s) in flight", flush=True)
            return pid
        time.sleep(0.05)
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", action="append", default=[], help="list of checkpoint files, one a line (- for stdin)")
    parser.add_argument("--repos", action="append", default=[], help="list of repositories, one a line")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://host:8786)")
    where.add_argument("--local", type=int, metavar="N", help="start a LocalCluster of N worker processes")
    parser.add_argument("--torchlint", default=shutil.which("torchlint") or "torchlint",
                        help="the torchlint binary, as the workers see it (default: torchlint on PATH)")
    parser.add_argument("--out", required=True, help="directory for the shards (torchlint-unit/1 JSON lines)")
    parser.add_argument("--chunk-files", type=int, default=200, help="checkpoint files per task (default 200)")
    parser.add_argument("--chunk-repos", type=int, default=4, help="repositories per task (default 4)")
    parser.add_argument("--retries", type=int, default=3, help="times a failed task is run again (default 3)")
    parser.add_argument("--unit-timeout", type=float, default=300, help="seconds a unit may take on average (default 300)")
    parser.add_argument("--report", action="append", default=[],
                        help="merged report to write: .html, .md or .json by its extension (repeatable)")
    parser.add_argument("--baseline", action="append", default=[], help="shards of an earlier run, for trends")
    parser.add_argument("--ckpt-arg", action="append", default=[], help="extra argument for torchlint ckpt (repeatable)")
    parser.add_argument("--audit-arg", action="append", default=[], help="extra argument for torchlint audit (repeatable)")
    parser.add_argument("--test-kill-worker-after", type=int, metavar="N",
                        help="test mode: after N chunks are back, kill a worker process that has a task in flight")
    args = parser.parse_args(argv)

    units = {"checkpoint": [], "repository": []}
    for path in args.files:
        units["checkpoint"] += read_list(path)
    for path in args.repos:
        units["repository"] += read_list(path)
    if not any(units.values()):
        parser.error("nothing to scan: give --files and/or --repos")
    for kind, items in units.items():
        # One record per unit: the list is what the report counts, so repeats are dropped here.
        units[kind] = list(dict.fromkeys(items))
    os.makedirs(args.out, exist_ok=True)

    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if args.local:
        # One thread per worker process: each task is one torchlint process, CPU-bound.
        cluster = LocalCluster(n_workers=args.local, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(args.scheduler)

    extra = {"checkpoint": args.ckpt_arg, "repository": args.audit_arg}
    size = {"checkpoint": args.chunk_files, "repository": args.chunk_repos}
    jobs = []  # (kind, index, paths)
    for kind in ("repository", "checkpoint"):
        jobs += [(kind, i, c) for i, c in enumerate(chunks(units[kind], size[kind]))]
    futures = {}
    for kind, index, paths in jobs:
        future = client.submit(run_chunk, args.torchlint, kind, paths, extra[kind], args.unit_timeout,
                               retries=args.retries, pure=False, key=f"torchlint-{kind}-{index:05d}")
        futures[future] = (kind, index, paths)

    started = time.monotonic()
    shards, killed, finished = [], None, 0
    for future in as_completed(list(futures)):
        kind, index, paths = futures[future]
        try:
            lines = future.result()
        except Exception as e:  # retries spent (or KilledWorker): the units are errors, not lost
            lines = [error_record(kind, p, f"task failed after {args.retries} retries: {e!r}") for p in paths]
        shard = os.path.join(args.out, f"{kind}-{index:05d}.jsonl")
        with open(shard + ".tmp", "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(shard + ".tmp", shard)  # a shard is there whole or not at all
        shards.append(shard)
        finished += 1
        if args.test_kill_worker_after is not None and killed is None and finished >= args.test_kill_worker_after:
            killed = kill_a_busy_worker(client) or -1
    elapsed = time.monotonic() - started
    client.close()
    if cluster:
        cluster.close()
    if args.test_kill_worker_after is not None and killed in (None, -1):
        print("dask_fleet: error: test mode: no worker had a task in flight to kill", file=sys.stderr)
        return 3

    status = {"error": 0, "findings": 0, "units": 0}
    for shard in shards:
        with open(shard, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                record = json.loads(line)
                status["units"] += 1
                status["error"] += record.get("status") == "error"
                # As torchlint decides its exit code: a checkpoint's findings, a repository's failed items.
                if record.get("kind") == "repository":
                    status["findings"] += bool(record.get("failed"))
                else:
                    status["findings"] += bool(record.get("findings"))
    print(f"dask_fleet: {status['units']} units ({len(units['repository'])} repositories, "
          f"{len(units['checkpoint'])} checkpoint files) in {len(shards)} shards, {elapsed:.1f} s; "
          f"{status['error']} failed, {status['findings']} with findings", flush=True)

    shards.sort()
    formats = {".html": "html", ".md": "markdown", ".json": "json"}
    for report in args.report:
        fmt = formats.get(os.path.splitext(report)[1])
        if not fmt:
            print(f"dask_fleet: error: --report {report}: the extension must be .html, .md or .json", file=sys.stderr)
            return 3
        argv = [args.torchlint, "report", "merge", *shards, "--output-format", fmt, "-o", report]
        for baseline in args.baseline:
            argv += ["--baseline", baseline]
        merged = subprocess.run(argv)
        if merged.returncode != 0:
            print(f"dask_fleet: error: torchlint report merge exited {merged.returncode}", file=sys.stderr)
            return 3
    return 2 if status["error"] else 1 if status["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
