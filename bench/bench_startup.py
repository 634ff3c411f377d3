"""``python -m bench.bench_startup``: how long from "start a server" to its first PONG.

Three ways to start, each measured from the call that starts it to a PONG read on a fresh
connection:

* ``thread``: ``resplite.serve()`` in this process (a background thread with its own loop).
  The first start pays for importing the server; later starts in the same process do not,
  and that is what a test suite sees after its first server.
* ``process``: ``resplite.serve(isolation="process")``, a child Python process.
* ``cli``: the ``resplite-server`` command line (the container's CMD), polled until it
  answers, as a script or a CI step would.

A last line measures a real ``redis-server`` started the same way as ``cli``, when one is
installed. Figures are milliseconds of wall-clock time (min, median, max over ``--runs``)
and the median CPU time the start cost (this process for ``thread``, the child for the
others), which stays meaningful on a machine busy with other work.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

PING = b"*1\r\n$4\r\nPING\r\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ping(port: int, host: str = "127.0.0.1") -> None:
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(PING)
        reply = sock.recv(64)
    if reply != b"+PONG\r\n":
        raise RuntimeError(f"unexpected reply {reply!r}")


def poll_ping(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.perf_counter() + timeout
    while True:
        try:
            ping(port)
            return
        except OSError:
            if proc.poll() is not None or time.perf_counter() > deadline:
                raise RuntimeError("the server did not answer") from None
            time.sleep(0.002)


Sample = tuple[float, float]  # (wall seconds, CPU seconds)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def embedded_start(isolation: str) -> Sample:
    import resplite

    cpu = time.process_time() if isolation == "thread" else children_cpu()
    started = time.perf_counter()
    handle = resplite.serve(isolation=isolation)
    handle.start()
    try:
        ping(handle.port)
        wall = time.perf_counter() - started
        if isolation == "thread":
            return wall, time.process_time() - cpu
    finally:
        handle.stop()
    # A child's CPU time is known once it has been reaped; its shutdown is a small part.
    return wall, children_cpu() - cpu


def command_line_start(argv: list[str]) -> Sample:
    port = free_port()
    cpu = children_cpu()
    started = time.perf_counter()
    proc = subprocess.Popen([*argv, "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        poll_ping(port, proc)
        wall = time.perf_counter() - started
    finally:
        proc.terminate()
        proc.wait()
    return wall, children_cpu() - cpu


def resplite_server_argv() -> list[str]:
    beside = Path(sys.executable).parent / "resplite-server"
    if beside.exists():
        return [str(beside)]
    return [sys.executable, "-m", "resplite"]


def summarize(name: str, samples: list[Sample]) -> str:
    ms = [wall * 1000 for wall, _ in samples]
    cpu = statistics.median(c * 1000 for _, c in samples)
    return (f"{name:<28} {min(ms):8.1f} {statistics.median(ms):8.1f} {max(ms):8.1f}"
            f" {cpu:8.1f}   ({len(ms)} runs)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="starts measured per mode")
    args = parser.parse_args(argv)

    rows: list[tuple[str, Callable[[], Sample], int]] = [
        ("thread, first in process", lambda: embedded_start("thread"), 1),
        ("thread, later starts", lambda: embedded_start("thread"), args.runs),
        ("process", lambda: embedded_start("process"), args.runs),
        ("cli (Dockerfile CMD)", lambda: command_line_start(resplite_server_argv()), args.runs),
    ]
    redis = shutil.which("redis-server")
    if redis:
        reference = [redis, "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"]
        rows.append(("redis-server (reference)", lambda: command_line_start(reference),
                     args.runs))

    print(f"start to first PONG, ms        min   median      max  cpu med"
          f"   (load average {os.getloadavg()[0]:.1f})")
    for name, measure, runs in rows:
        print(summarize(name, [measure() for _ in range(runs)]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
