"""``python -m bench.bench_persistence``: RDB snapshots of resplite side by side with Redis.

For each data set, on both servers started fresh (pinned to their own core):

1. ``keys``: N string keys (``key:<i>`` -> an 8-digit value), filled with pipelined MSET;
2. ``stream``: one stream of N entries of two fields with 8-byte values.

Printed: SAVE's wall time (seconds) and the file's size on disk, then the time a restart
takes to load the file (from the server's start to its first PONG), each with the ratio
resplite / Redis. For the stream also a second SAVE of the unchanged data set (resplite
copies the compressed node forms the first one kept), and, on the server restarted from
the file, DUMP of the stream key twice (the first after a load encodes and compresses
every node, the second copies). ``--keys`` and ``--entries`` change N (1,000,000 each by
default; ``--quick`` for a smoke run of 50,000); ``--case`` runs one data set.
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
from bench.common import free_port, start, stop


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


def _timed(port: int, *command: str) -> float:
    conn = Conn(port)
    try:
        began = time.perf_counter()
        conn.call(*command)
        return time.perf_counter() - began
    finally:
        conn.close()


def _save(port: int) -> tuple[float, int, str]:
    conn = Conn(port)
    try:
        folder = conn.call("CONFIG", "GET", "dir")[1].decode()  # type: ignore[index]
    finally:
        conn.close()
    took = _timed(port, "SAVE")
    return took, os.path.getsize(os.path.join(folder, "dump.rdb")), folder


def _load_time(kind: str, snapshot: str, dump_key: str | None = None) -> list[float]:
    """Seconds from start to the first PONG; then, given ``dump_key``, two DUMPs of it."""
    folder = tempfile.mkdtemp(prefix=f"bench-load-{kind}-")
    shutil.copy(snapshot, os.path.join(folder, "dump.rdb"))
    port = free_port()
    if kind == "redis":
        cmd = [shutil.which("redis-server") or "redis-server", "--port", str(port), "--save", "",
               "--dir", folder]
    else:
        cmd = [sys.executable, "-m", "resplite", "--port", str(port), "--save", "",
               "--dir", folder, "--loglevel", "warning"]
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
        figures = [time.perf_counter() - began]
        if dump_key is not None:
            figures += [_timed(port, "DUMP", dump_key) for _ in range(2)]
        return figures
    finally:
        stop(proc)
        proc.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


def run(name: str, count: int) -> None:
    figures: dict[str, dict[str, float]] = {}
    for kind in ("redis", "resplite"):
        row = figures[kind] = {}
        with start(kind) as server:
            if name == "keys":
                _fill_keys(server.port, count)
            else:
                fill(server.port, "s", count)
            row["SAVE"], size, folder = _save(server.port)
            if name == "stream":
                row["SAVE again"] = _save(server.port)[0]
            keep = tempfile.mkdtemp(prefix="bench-snap-")
            snapshot = os.path.join(keep, "dump.rdb")
            shutil.copy(os.path.join(folder, "dump.rdb"), snapshot)
        loaded = _load_time(kind, snapshot, "s" if name == "stream" else None)
        shutil.rmtree(keep, ignore_errors=True)
        row["bytes"] = size
        row["load"] = loaded[0]
        if len(loaded) > 1:
            row["DUMP after load"], row["DUMP again"] = loaded[1:]
    r, o = figures["redis"], figures["resplite"]
    print(f"\n{name}: {count:,}")
    for label in r:
        if label == "bytes":
            print(f"  {'bytes':16} redis {r[label]:10,.0f}   resplite {o[label]:10,.0f}   "
                  f"ratio {o[label] / r[label]:6.2f}x")
        else:
            print(f"  {label:16} redis {r[label]:8.3f} s   resplite {o[label]:8.3f} s   "
                  f"ratio {o[label] / r[label]:6.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--case", choices=("keys", "stream", "all"), default="all")
    args = parser.parse_args()
    if args.quick:
        args.keys = args.entries = 50_000
    if args.case in ("keys", "all"):
        run("keys", args.keys)
    if args.case in ("stream", "all"):
        run("stream", args.entries)


if __name__ == "__main__":
    main()
