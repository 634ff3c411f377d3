"""Processes the suite starts: stopped whatever happens, and found again if one is left behind.

``python tests/support/procs.py [--grace SECONDS] CMD...`` (what ``make test`` runs) runs CMD
(pytest) as one test run: it gives CMD a run id in ``RESPLITE_TEST_RUN`` and a folder in
``RESPLITE_TEST_RUN_DIR``, both inherited by every process the run starts. When CMD ends, any
process still alive that belongs to the run is a leftover: the check waits a little for
processes that are shutting down, then names each leftover on stderr, kills it and fails.

A process belongs to the run when

* its environment holds ``RESPLITE_TEST_RUN=<this run's id>`` (every descendant that keeps
  the environment it started with: Python servers, Spark's JVM and workers, clients), or
* :func:`record` noted it in the run's folder and it is still the same process (same start
  time): redis-server rewrites the memory ``/proc/<pid>/environ`` shows to lengthen its
  process title, so the servers the helpers start are recorded by pid as well.

Nothing else is ever touched: a process of another run, or one nobody started from this run
(another engineer's redis-server on the same machine), carries neither mark.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

RUN_ENV = "RESPLITE_TEST_RUN"
RUN_DIR_ENV = "RESPLITE_TEST_RUN_DIR"

#: How long processes that are already shutting down get before they count as left behind.
GRACE_SECONDS = 20.0


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (clock ticks since boot): with the pid, it names one
    process even after the pid is reused. None when the process is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    return fields[19]


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip() or "?"


def record(proc: subprocess.Popen[bytes] | subprocess.Popen[str] | int) -> None:
    """Note a process the suite started (a Popen, or the pid of a daemon it made), so that the
    run's end check finds it even if its environment is unreadable. Does nothing outside a
    checked run."""
    pid = proc if isinstance(proc, int) else proc.pid
    folder = os.environ.get(RUN_DIR_ENV)
    started = _start_time(pid)
    if not folder or started is None:
        return
    with contextlib.suppress(OSError):
        Path(folder, str(pid)).write_text(f"{started}\n{_cmdline(pid)}\n")


def stop(proc: subprocess.Popen[bytes] | subprocess.Popen[str], timeout: float = 10.0) -> None:
    """Stop ``proc`` and reap it: SIGTERM, then SIGKILL if it has not exited in ``timeout``."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()


@dataclass(frozen=True)
class Leftover:
    pid: int
    started: str
    cmdline: str


def _marked(pid: int, mark: bytes) -> bool:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # gone, or another user's
        return False
    return mark in environ.split(b"\0")


def leftovers(run_id: str, run_dir: str | None) -> list[Leftover]:
    """The processes of run ``run_id`` still alive (never this process itself)."""
    found: dict[int, Leftover] = {}
    mark = f"{RUN_ENV}={run_id}".encode()
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        pid = int(entry.name)
        if _marked(pid, mark):
            started = _start_time(pid)
            if started is not None:
                found[pid] = Leftover(pid, started, _cmdline(pid))
    if run_dir:
        for note in Path(run_dir).iterdir():
            if not note.name.isdigit() or int(note.name) in found:
                continue
            with contextlib.suppress(OSError, ValueError):
                started = note.read_text().split("\n", 1)[0]
                pid = int(note.name)
                if pid != me and _start_time(pid) == started:
                    found[pid] = Leftover(pid, started, _cmdline(pid))
    return sorted(found.values(), key=lambda p: p.pid)


def kill(processes: list[Leftover]) -> None:
    """SIGKILL each process that is still the one found (same pid and start time)."""
    for proc in processes:
        if _start_time(proc.pid) == proc.started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGKILL)


def check(run_id: str, run_dir: str | None, grace: float = GRACE_SECONDS) -> list[Leftover]:
    """Wait up to ``grace`` seconds for the run's processes to end; kill and return the rest."""
    deadline = time.monotonic() + grace
    while True:
        left = leftovers(run_id, run_dir)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    kill(left)
    return left


def main(argv: list[str]) -> int:
    grace = GRACE_SECONDS
    if argv[:1] == ["--grace"] and len(argv) > 1:
        grace, argv = float(argv[1]), argv[2:]
    if not argv:
        print("usage: procs.py [--grace SECONDS] COMMAND [ARG...]", file=sys.stderr)
        return 2
    run_id = uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="resplite-test-run-") as run_dir:
        env = {**os.environ, RUN_ENV: run_id, RUN_DIR_ENV: run_dir}
        proc = subprocess.Popen(argv, env=env)
        while True:
            try:
                code = proc.wait()
                break
            except KeyboardInterrupt:
                continue  # Ctrl-C reached the command too: let it finish its teardown
        left = check(run_id, run_dir, grace)
    if left:
        print(f"\nFAILED: {len(left)} process(es) started by the test run were still running "
              "after it ended (now killed):", file=sys.stderr)
        for p in left:
            print(f"  pid {p.pid}: {p.cmdline}", file=sys.stderr)
        return code or 1
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
