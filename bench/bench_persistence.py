"""``python -m bench.bench_persistence``: RDB snapshots of resplite side by side with Redis.

For each data set, on both servers started fresh (pinned to their own core):

1. ``keys``: N string keys (``key:<i>`` -> an 8-digit value), filled with pipelined MSET;
2. ``stream``: one stream of N entries of two fields with 8-byte values.

Printed: SAVE's wall time (seconds) and the file's size on disk, then the time a restart
takes to load the file (from the server's start to its first PONG), each with the ratio
resplite / Redis. ``--keys`` and ``--entries`` change N (1,000,000 each by default;
``--quick`` for a smoke run of 50,000).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from bench.bench_streams import Conn, fill
from bench.common import free_port, start


def _fill_keys(port: int, count: int, batch: int = 1000) -> None:
    conn = Conn(port)
    try:
        for start_at in range(0, count, batch):
            n = min(batch, count - start_at)
            args: list[bytes | str | int] = ["MSET"]
            for i in range(start_at, start_at + n):
                args += [f"key:{i}", f"{i:08d}"]
            conn.pipeline([args])
    finally:
        conn.close()


def _save(port: int) -> tuple[float, int]:
    conn = Conn(port)
    try:
        folder = conn.call("CONFIG", "GET", "dir")[1].decode()  # type: ignore[index]
        began = time.perf_counter()
        conn.call("SAVE")
        took = time.perf_counter() - began
    finally:
        conn.close()
    return took, os.path.getsize(os.path.join(folder, "dump.rdb")), folder  # type: ignore[return-value]


def _load_time(kind: str, snapshot: str) -> float:
    folder = tempfile.mkdtemp(prefix=f"bench-load-{kind}-")
    shutil.copy(snapshot, os.path.join(folder, "dump.rdb"))
    port = free_port()
    if kind == "redis":
        cmd = [shutil.which("redis-server") or "redis-server", "--port", str(port), "--save", "",
               "--dir", folder]
    else:
        cmd = [sys.executable, "-m", "resplite", "--port", str(port), "--dir", folder,
               "--loglevel", "warning"]
    began = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if proc.poll() is not None:
                raise SystemExit(f"{kind} exited while loading")
            time.sleep(0.01)
        return time.perf_counter() - began
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


def run(name: str, count: int) -> None:
    figures: dict[str, tuple[float, int, float]] = {}
    for kind in ("redis", "resplite"):
        with start(kind) as server:
            if name == "keys":
                _fill_keys(server.port, count)
            else:
                fill(server.port, "s", count)
            took, size, folder = _save(server.port)  # type: ignore[misc]
            keep = tempfile.mkdtemp(prefix="bench-snap-")
            snapshot = os.path.join(keep, "dump.rdb")
            shutil.copy(os.path.join(folder, "dump.rdb"), snapshot)
        load = _load_time(kind, snapshot)
        shutil.rmtree(keep, ignore_errors=True)
        figures[kind] = (took, size, load)
    r, o = figures["redis"], figures["resplite"]
    print(f"\n{name}: {count:,}")
    print(f"  SAVE   redis {r[0]:8.2f} s   resplite {o[0]:8.2f} s   ratio {o[0] / r[0]:6.1f}x")
    print(f"  bytes  redis {r[1]:10,d}   resplite {o[1]:10,d}   ratio {o[1] / r[1]:6.2f}x")
    print(f"  load   redis {r[2]:8.2f} s   resplite {o[2]:8.2f} s   ratio {o[2] / r[2]:6.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.keys = args.entries = 50_000
    run("keys", args.keys)
    run("stream", args.entries)


if __name__ == "__main__":
    main()
