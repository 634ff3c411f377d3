"""``python -m bench.bench_startup``: how long from "start a server" to its first PONG.

Three ways to start, each measured from the call that starts it to a PONG read on a fresh
connection:

* ``thread``: ``resplite.serve()`` in this process (a background thread with its own loop).
  The first start pays for importing the server; later starts in the same process do not,
  and that is what a test suite sees after its first server.
* ``process``: ``resplite.serve(isolation="process")``, a child Python process.
* ``cli``: ``resplite-server --port N --save "" --appendonly no`` in an empty folder (the
  container's CMD), polled with a PING on a fresh connection every 2 ms until ``+PONG``, as a
  script or a CI step would.
* ``--version``: ``resplite-server --version`` run to its end.

The last two are measured side by side with a real ``redis-server`` (when one is
installed), started the same way, one of each in turn, so that both see the same load; the
ratio of the medians is printed. Figures are milliseconds of wall-clock time (min, median,
max over ``--runs``) and the median CPU time the start cost (this process for ``thread``,
the child for the others), which stays meaningful on a machine busy with other work. Every
process started is stopped (and waited for) before the next is started.
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
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import free_port, stop

PING = b"*1\r\n$4\r\nPING\r\n"


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
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as folder:
        cpu = children_cpu()
        started = time.perf_counter()
        proc = subprocess.Popen([*argv, "--port", str(port), "--dir", folder],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            poll_ping(port, proc)
            wall = time.perf_counter() - started
        finally:
            stop(proc)
    return wall, children_cpu() - cpu


def run_to_end(argv: list[str]) -> Sample:
    cpu = children_cpu()
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started, children_cpu() - cpu


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


def side_by_side(runs: int, ours: Callable[[], Sample], theirs: Callable[[], Sample] | None
                 ) -> tuple[list[Sample], list[Sample]]:
    """``runs`` samples of each, taken in turn (which goes first alternates)."""
    mine: list[Sample] = []
    reference: list[Sample] = []
    for i in range(runs):
        if theirs is not None and i % 2:
            reference.append(theirs())
        mine.append(ours())
        if theirs is not None and not i % 2:
            reference.append(theirs())
    return mine, reference


def ratio(name: str, mine: list[Sample], reference: list[Sample]) -> str:
    ours = statistics.median(w for w, _ in mine)
    theirs = statistics.median(w for w, _ in reference)
    cpu_ours = statistics.median(c for _, c in mine)
    cpu_theirs = statistics.median(c for _, c in reference)
    return (f"{name:<28} wall x{ours / theirs:.1f} ({ours * 1000:.1f} / {theirs * 1000:.1f} ms),"
            f" cpu x{cpu_ours / max(cpu_theirs, 1e-6):.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="starts measured per mode")
    parser.add_argument("--only-cli", action="store_true",
                        help="only the command-line rows (no in-process or child starts)")
    args = parser.parse_args(argv)

    rows: list[tuple[str, Callable[[], Sample], int]] = [] if args.only_cli else [
        ("thread, first in process", lambda: embedded_start("thread"), 1),
        ("thread, later starts", lambda: embedded_start("thread"), args.runs),
        ("process", lambda: embedded_start("process"), args.runs),
    ]
    print(f"start to first PONG, ms        min   median      max  cpu med"
          f"   (load average {os.getloadavg()[0]:.1f})")
    for name, measure, runs in rows:
        print(summarize(name, [measure() for _ in range(runs)]), flush=True)

    ours = resplite_server_argv()
    redis = shutil.which("redis-server")
    reference = [redis] if redis else None
    quiet = ["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"]
    pairs = [
        ("cli (Dockerfile CMD)", "redis-server (reference)",
         lambda: command_line_start([*ours, *quiet]),
         (lambda: command_line_start([*reference, *quiet])) if reference else None),
        ("resplite-server --version", "redis-server --version",
         lambda: run_to_end([*ours, "--version"]),
         (lambda: run_to_end([*reference, "--version"])) if reference else None),
    ]
    ratios = []
    for name, reference_name, measure, measure_reference in pairs:
        mine, theirs = side_by_side(args.runs, measure, measure_reference)
        print(summarize(name, mine), flush=True)
        if theirs:
            print(summarize(reference_name, theirs), flush=True)
            ratios.append(ratio(name, mine, theirs))
    if ratios:
        print("resplite / redis-server, medians:")
        for line in ratios:
            print("  " + line)
    print(f"(load average {os.getloadavg()[0]:.1f} at the end)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
