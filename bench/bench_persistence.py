"""``python -m bench.bench_persistence``: RDB snapshots of resplite side by side with Redis.

For each data set, on both servers started fresh (pinned to their own core):

1. ``strings``: N string keys (``key:<i>``) holding 100-byte values (a repeated decimal, so
   LZF finds matches and ``rdbcompression`` does real work), filled with pipelined MSET;
2. ``keys``: N small keys (``key:<i>`` -> an 8-digit value);
3. ``stream``: one stream of N entries of two fields with 8-byte values.

Printed for each: SAVE's wall time, its CPU time in the server process (from /proc: the
steady figure on a busy machine), the file's size, BGSAVE's wall time (from the command to
the moment INFO no longer shows it in progress, so it includes each server's reaping delay:
Redis's cron runs ten times a second), and the time a restart takes to load the file (from
the process's start to its first PONG, interpreter start included; then the load alone, as
each server logs it: "DB loaded from disk: N seconds"), each with the ratio resplite /
Redis. For the stream SAVE is the first of the data set (every node encoded and
compressed); then a second SAVE of the unchanged data set (resplite copies the compressed
node forms the first one kept), and, on the server restarted from the file, DUMP of the
stream key twice (the first after a load encodes and compresses every node, the second
copies). ``--strings``, ``--keys`` and ``--entries`` change N (100,000, 1,000,000 and
1,000,000 by default; ``--quick`` divides them by 20); ``--case`` runs one data set;
``--no-compression`` saves with ``rdbcompression no`` on both servers.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from bench.bench_streams import Conn, fill
from bench.common import cpu_seconds, free_port, start, stop


def _fill_keys(port: int, count: int, width: int, batch: int = 1000) -> None:
    """``count`` keys ``key:<i>``, each holding ``width`` bytes (``<i>`` repeated)."""
    conn = Conn(port)
    try:
        for start_at in range(0, count, batch):
            n = min(batch, count - start_at)
            args: list[bytes | str | int] = ["MSET"]
            for i in range(start_at, start_at + n):
                text = f"{i:08d}"
                if width > 8:
                    text = (f"{i:08d}-" * (width // 9 + 1))[:width]
                args += [f"key:{i}", text]
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


def _folder(port: int) -> str:
    conn = Conn(port)
    try:
        reply = conn.call("CONFIG", "GET", "dir")
        assert isinstance(reply, list) and isinstance(reply[1], bytes)
        return reply[1].decode()
    finally:
        conn.close()


def _save(port: int, pid: int) -> tuple[float, float, int, str]:
    """SAVE's wall seconds, the server's CPU seconds for it, the file's size, its folder."""
    folder = _folder(port)
    cpu = cpu_seconds(pid)
    took = _timed(port, "SAVE")
    cpu = cpu_seconds(pid) - cpu
    return took, cpu, os.path.getsize(os.path.join(folder, "dump.rdb")), folder


def _bgsave(port: int) -> float:
    """Seconds from BGSAVE to INFO showing no save in progress and a good last status."""
    conn = Conn(port)
    try:
        began = time.perf_counter()
        reply = conn.call("BGSAVE")  # an error reply raises
        if not isinstance(reply, bytes) or b"started" not in reply:
            raise SystemExit(f"BGSAVE did not start: {reply!r}")
        deadline = began + 600
        while time.perf_counter() < deadline:
            info = conn.call("INFO", "persistence")
            assert isinstance(info, bytes)
            if b"rdb_bgsave_in_progress:0" in info:
                if b"rdb_last_bgsave_status:ok" not in info:
                    raise SystemExit("BGSAVE failed")
                return time.perf_counter() - began
            time.sleep(0.005)
        raise SystemExit("BGSAVE did not finish in 600 s")
    finally:
        conn.close()


_LOADED = re.compile(rb"DB loaded from disk: ([0-9.]+) seconds")


def _load_time(kind: str, snapshot: str, dump_key: str | None = None) -> list[float]:
    """Seconds from start to the first PONG, and the load's own seconds as the server logs
    them ("DB loaded from disk"); then, given ``dump_key``, two DUMPs of it."""
    folder = tempfile.mkdtemp(prefix=f"bench-load-{kind}-")
    shutil.copy(snapshot, os.path.join(folder, "dump.rdb"))
    port = free_port()
    logfile = os.path.join(folder, "server.log")
    if kind == "redis":
        cmd = [shutil.which("redis-server") or "redis-server", "--port", str(port), "--save", "",
               "--dir", folder, "--logfile", logfile]
    else:
        cmd = [sys.executable, "-m", "resplite", "--port", str(port), "--save", "",
               "--dir", folder, "--logfile", logfile]
    began = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = began + 600
        while time.perf_counter() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    # -LOADING while the file is read: keep asking.
                    if s.recv(64).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if proc.poll() is not None:
                raise SystemExit(f"{kind} exited while loading")
            time.sleep(0.01)
        else:
            raise SystemExit(f"{kind} did not load in 600 s")
        figures = [time.perf_counter() - began]
        with open(logfile, "rb") as log:
            logged = _LOADED.search(log.read())
        figures.append(float(logged.group(1)) if logged else float("nan"))
        if dump_key is not None:
            figures += [_timed(port, "DUMP", dump_key) for _ in range(2)]
        return figures
    finally:
        stop(proc)
        shutil.rmtree(folder, ignore_errors=True)


def run(name: str, count: int, compression: bool) -> None:
    figures: dict[str, dict[str, float]] = {}
    extra = () if compression else ("--rdbcompression", "no")
    for kind in ("redis", "resplite"):
        row = figures[kind] = {}
        with start(kind, *extra) as server:
            if name == "strings":
                _fill_keys(server.port, count, 100)
            elif name == "keys":
                _fill_keys(server.port, count, 8)
            else:
                fill(server.port, "s", count)
            row["SAVE"], row["SAVE cpu"], size, folder = _save(server.port, server.pid)
            keep = tempfile.mkdtemp(prefix="bench-snap-")
            snapshot = os.path.join(keep, "dump.rdb")
            shutil.copy(os.path.join(folder, "dump.rdb"), snapshot)
            if name == "stream":
                row["SAVE again"] = _save(server.port, server.pid)[0]
            row["BGSAVE"] = _bgsave(server.port)
        loaded = _load_time(kind, snapshot, "s" if name == "stream" else None)
        shutil.rmtree(keep, ignore_errors=True)
        row["bytes"] = size
        row["load"], row["load (logged)"] = loaded[:2]
        if len(loaded) > 2:
            row["DUMP after load"], row["DUMP again"] = loaded[2:]
    r, o = figures["redis"], figures["resplite"]
    print(f"\n{name}: {count:,}" + ("" if compression else " (rdbcompression no)"))
    for label in r:
        if label == "bytes":
            print(f"  {'bytes':16} redis {r[label]:10,.0f}   resplite {o[label]:10,.0f}   "
                  f"ratio {o[label] / r[label]:6.2f}x")
        else:
            ratio = o[label] / r[label] if r[label] else float("nan")
            print(f"  {label:16} redis {r[label]:8.3f} s   resplite {o[label]:8.3f} s   "
                  f"ratio {ratio:6.1f}x")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--strings", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-compression", action="store_true")
    parser.add_argument("--case", choices=("strings", "keys", "stream", "all"), default="all")
    args = parser.parse_args()
    if args.quick:
        args.strings //= 20
        args.keys //= 20
        args.entries //= 20
    compression = not args.no_compression
    if args.case in ("strings", "all"):
        run("strings", args.strings, compression)
    if args.case in ("keys", "all"):
        run("keys", args.keys, compression)
    if args.case in ("stream", "all"):
        run("stream", args.entries, compression)


if __name__ == "__main__":
    main()
