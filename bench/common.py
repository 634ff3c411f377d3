"""Shared benchmark plumbing: servers pinned to a core, redis-benchmark runs, ratio tables.

On a 2-core machine the client gets core 0 and the server under test core 1, so client and
server never compete for a core, and both servers are measured under the same conditions in
alternating rounds.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass

CLIENT_CPU = "0"
SERVER_CPU = "1" if (os.cpu_count() or 1) > 1 else "0"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pinned(cmd: list[str], cpu: str) -> list[str]:
    return ["taskset", "-c", cpu, *cmd] if shutil.which("taskset") else cmd


@dataclass
class Server:
    name: str
    port: int
    proc: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        return self.proc.pid


def stop(proc: subprocess.Popen[bytes], timeout: float = 10) -> None:
    """Stop a server and reap it: SIGTERM, then SIGKILL for one that ignores it for
    ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """Return once ``port`` accepts a connection; fail if ``proc`` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.02)
    raise RuntimeError("server did not start")


def server_argv(kind: str, port: int, workdir: str, exe: str | None = None) -> list[str]:
    """The command line that starts ``redis`` (``exe``, or redis-server on PATH) or
    ``resplite`` on ``port``, saving nothing (run it in ``workdir``)."""
    if kind == "redis":
        exe = exe or shutil.which("redis-server")
        if exe is None:
            raise SystemExit("redis-server is not installed: it is the reference to compare with")
        return [exe, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", workdir]
    return [sys.executable, "-m", "resplite", "--port", str(port), "--save", "",
            "--loglevel", "warning"]


@contextlib.contextmanager
def start(kind: str, *extra: str, exe: str | None = None) -> Iterator[Server]:
    """Start ``redis`` (``exe``, or redis-server on PATH) or ``resplite`` on a free port,
    pinned to the server core."""
    port = free_port()
    workdir = tempfile.mkdtemp(prefix=f"bench-{kind}-")
    cmd = server_argv(kind, port, workdir, exe=exe)
    proc = subprocess.Popen(pinned([*cmd, *extra], SERVER_CPU), cwd=workdir,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        yield Server(kind, port, proc)
    finally:
        stop(proc)
        shutil.rmtree(workdir, ignore_errors=True)


def redis_benchmark(port: int, tests: str, *, requests: int, clients: int = 50,
                    pipeline: int = 1, extra: tuple[str, ...] = ()) -> dict[str, float]:
    """Run redis-benchmark pinned to the client core; returns requests/s per test name."""
    rows = redis_benchmark_csv(port, tests, requests=requests, clients=clients,
                               pipeline=pipeline, extra=extra)
    return {name: figures["rps"] for name, figures in rows.items()}


def redis_benchmark_csv(port: int, tests: str, *, requests: int, clients: int = 50,
                        pipeline: int = 1, extra: tuple[str, ...] = (),
                        command: tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    """Run redis-benchmark pinned to the client core, either the ``-t`` tests ``tests`` or
    the command line ``command`` (given after the options, as redis-benchmark takes it).

    Returns every figure of its CSV output per test name: ``rps`` and the latencies in
    milliseconds (``avg_latency_ms``, ``p50_latency_ms``, ``p99_latency_ms``, ...). An error
    reply from the server fails the run: redis-benchmark itself carries on and reports
    requests per second for a run of errors.
    """
    exe = shutil.which("redis-benchmark")
    if exe is None:
        raise SystemExit("redis-benchmark is not installed (Debian package redis-tools)")
    cmd = [exe, "-p", str(port), "-c", str(clients), "-n", str(requests), "-P", str(pipeline),
           "--csv", *(("-t", tests) if tests else ()), *extra, *command]
    out = subprocess.run(pinned(cmd, CLIENT_CPU), capture_output=True, text=True, check=True)
    if "Error from server" in out.stdout + out.stderr:
        raise RuntimeError(f"{' '.join(command) or tests}: {out.stdout + out.stderr}"[:2000])
    result: dict[str, dict[str, float]] = {}
    header: list[str] = []
    for row in csv.reader(io.StringIO(out.stdout)):
        if row and row[0] == "test":
            header = row
        elif len(row) >= 2:
            figures: dict[str, float] = {}
            for name, value in zip(header or ["test", "rps"], row, strict=False):
                with contextlib.suppress(ValueError):
                    figures[name] = float(value)
            if "rps" in figures:
                result[row[0]] = figures
    return result


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process (all its threads) has used so far.

    Read through the process's CPU-time clock (Linux's clock id for another process,
    nanosecond resolution) where that works; the ``/proc/<pid>/stat`` tick counts, 10 ms
    apart, are too coarse to compare runs of a second.
    """
    try:
        return time.clock_gettime(((~pid) << 3) | 2)  # CPUCLOCK_SCHED of process ``pid``
    except OSError:
        pass
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def print_table(title: str, rows: list[tuple[str, float, float]], unit: str = "req/s",
                digits: int = 0) -> None:
    """Rows of (label, resplite figure, redis figure), printed with the ratio."""
    print(f"\n{title}")
    print(f"{'':24} {'resplite':>14} {'redis':>14} {'ratio':>7}")
    for label, ours, ref in rows:
        ratio = ours / ref if ref else float("nan")
        print(f"{label:24} {ours:>14,.{digits}f} {ref:>14,.{digits}f} {ratio:>7.2f}   {unit}")
