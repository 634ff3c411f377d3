"""``python -m bench.bench_loading``: what a client sees while a server loads a large snapshot.

A snapshot of ``--keys`` keys (default 1,000,000; ``--quick`` makes it 100,000) is made by
``redis-server`` (``DEBUG POPULATE``, then ``SAVE``: the 7.0 on PATH writes a file both
servers read). Each server is then started on a copy of it, pinned to the server core (see
:mod:`bench.common`), while this process tries to connect every 10 ms and, once connected,
sends ``PING`` every 10 ms until one is answered ``PONG``. Reported per server: when the
first connection was accepted and when the first ``PONG`` came (seconds from the start of
the process), how many ``-LOADING`` replies came before it, and the worst round trip of a
``PING`` answered ``-LOADING`` (how long a client waits to hear that the server is
loading).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import SERVER_CPU, free_port, pinned, stop

PROBE_INTERVAL_S = 0.01


def make_snapshot(folder: Path, keys: int, exe: str) -> Path:
    port = free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--save", "", "--appendonly", "no",
                             "--dir", str(folder), "--enable-debug-command", "yes"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        sock = _connect(port, proc, 30)
        with sock:
            for command in (b"DEBUG POPULATE %d\r\n" % keys, b"SAVE\r\n"):
                sock.sendall(command)
                if not sock.recv(100).startswith(b"+OK"):
                    raise RuntimeError(f"{command!r} failed")
    finally:
        stop(proc)
    return folder / "dump.rdb"


def _connect(port: int, proc: subprocess.Popen[bytes], limit_s: float) -> socket.socket:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        with contextlib.suppress(OSError):
            sock = socket.create_connection(("127.0.0.1", port), 0.5)
            sock.settimeout(300)
            return sock
        time.sleep(PROBE_INTERVAL_S)
    raise RuntimeError("the server did not listen")


def run_case(kind: str, snapshot: Path, redis_exe: str) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix=f"bench-loading-{kind}-"))
    shutil.copy(snapshot, folder / "dump.rdb")
    port = free_port()
    if kind == "redis":
        cmd = [redis_exe, "--port", str(port), "--save", "", "--appendonly", "no"]
    else:
        cmd = [sys.executable, "-m", "resplite", "--port", str(port), "--save", "",
               "--loglevel", "warning"]
    started = time.monotonic()
    proc = subprocess.Popen(pinned([*cmd, "--dir", str(folder)], SERVER_CPU), cwd=folder,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        sock = _connect(port, proc, 600)
        accepted = time.monotonic() - started
        loading = 0
        worst = 0.0
        with sock:
            while True:
                sent = time.monotonic()
                sock.sendall(b"PING\r\n")
                reply = sock.recv(200)
                took = time.monotonic() - sent
                if not reply.startswith(b"-LOADING"):
                    break
                loading += 1
                worst = max(worst, took)
                time.sleep(PROBE_INTERVAL_S)
        if reply != b"+PONG\r\n":
            raise RuntimeError(reply.decode(errors="replace"))
        return {"accepted": accepted, "pong": time.monotonic() - started,
                "loading": loading, "worst_ms": worst * 1e3}
    finally:
        stop(proc)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 keys")
    parser.add_argument("--redis-server", default=shutil.which("redis-server"),
                        help="the Redis binary (default: redis-server on PATH)")
    args = parser.parse_args()
    if args.redis_server is None:
        raise SystemExit("redis-server is not installed: it makes the snapshot")
    keys = 100_000 if args.quick else args.keys
    work = Path(tempfile.mkdtemp(prefix="bench-loading-"))
    try:
        snapshot = make_snapshot(work, keys, args.redis_server)
        rows = [(kind, run_case(kind, snapshot, args.redis_server))
                for kind in ("redis", "resplite")]
        size = snapshot.stat().st_size
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nA snapshot of {keys:,} keys ({size / 2**20:.1f} MB) loaded at start; a client "
          f"connects and PINGs every {PROBE_INTERVAL_S * 1e3:.0f} ms")
    print(f"{'server':9} {'accepted s':>10} {'PONG s':>8} {'LOADING':>8} {'worst ms':>9}")
    for kind, r in rows:
        print(f"{kind:9} {r['accepted']:>10.2f} {r['pong']:>8.2f} {r['loading']:>8.0f} "
              f"{r['worst_ms']:>9.1f}")
    print("accepted s / PONG s: from the start of the process; worst ms: the longest wait "
          "for a -LOADING reply")


if __name__ == "__main__":
    main()
