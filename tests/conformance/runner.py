"""Redis's own test suite (its TCL units, in external mode) against resplite and redis-server.

``python tests/conformance/runner.py`` (``make conformance``) runs each unit of the reference
Redis's ``tests/unit`` and ``tests/unit/type`` with ``runtest --host H --port P --single UNIT``
against a fresh resplite and a fresh redis-server of that release, and prints per unit the
tests that pass on each::

    unit/type/list            resplite 120/130        redis 130/130

The reference is a built Redis source tree (its ``src/redis-server`` and ``tests/``), found in
``$RESPLITE_REFERENCE_DIR``, else as the tree of the ``$RESPLITE_REFERENCE_SERVER`` binary,
else in ``~/.cache/redis-reference/redis-8.6.3``. What is left out of the suite, and why, is
in ``suite.toml`` beside this file, and nowhere else.

Invariants:

* Every unit runs against a server of its own, started for it and stopped after it, so a unit
  that leaves the server paused, blocked or full does not change the next unit's result.
* A unit that stops making progress does not stop the run: runtest gets ``--timeout`` (seconds
  without a test finishing), and past :data:`UNIT_TIMEOUT` of wall time its whole process
  group (the test server, its client, any redis-cli it started) is killed; either way the
  unit's status is ``hung``.
* The reference tree is only read: each run works in a temporary copy of ``tests/`` (runtest
  writes and cleans ``tests/tmp``), so runs in parallel do not disturb each other.
* The counts are the ``[ok]`` and ``[err]`` lines runtest prints (``--durable``: an error
  raised inside a test fails that test instead of ending the unit); a test that never ran
  because the unit ended early is counted in neither.

Only the standard library is used here, so the script runs from any Python that can start
resplite (``python -m resplite``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

SUITE_FILE = Path(__file__).with_name("suite.toml")
REFERENCE_ENV = "RESPLITE_REFERENCE_DIR"
SERVER_ENV = "RESPLITE_REFERENCE_SERVER"
DEFAULT_REFERENCE = Path.home() / ".cache" / "redis-reference" / "redis-8.6.3"

#: Wall-clock seconds one unit may take against one server before it counts as hung.
UNIT_TIMEOUT = 900.0
#: Seconds without a test finishing after which runtest itself gives up (its --timeout).
PROGRESS_TIMEOUT = 180
#: Seconds a server gets to answer PING after it starts (a busy machine is slow to start Python).
START_TIMEOUT = 60.0

SERVERS = ("resplite", "redis")

#: Directives both servers start with: the suite uses DEBUG and CONFIG SET on protected
#: directives (dir, ...); everything else is each server's default.
COMMON_DIRECTIVES = ("--enable-debug-command", "yes", "--enable-protected-configs", "yes",
                     "--save", "", "--appendonly", "no")

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LINE = re.compile(r"^\[(ok|err|exception|skip|ignore|TIMEOUT)\]:? ?(.*)$")
_ELAPSED = re.compile(r"( \(\d+ ms\))?( in tests/\S+\.tcl)?$")
_DONE = re.compile(r"^\[\d+/\d+ done\]: (\S+)")


@dataclass
class Suite:
    """What ``suite.toml`` says: tags and tests left out (each with its reason), and the
    fast subset's expected passes on resplite."""

    excluded_tags: dict[str, str]
    excluded_tests: dict[str, str]
    ci: dict[str, int]

    @classmethod
    def load(cls, path: Path = SUITE_FILE) -> Suite:
        data = tomllib.loads(path.read_text())
        return cls(excluded_tags=dict(data.get("excluded_tags", {})),
                   excluded_tests=dict(data.get("excluded_tests", {})),
                   ci={unit: int(n) for unit, n in data.get("ci", {}).items()})


@dataclass
class UnitResult:
    """One unit against one server. ``status``: ``done`` (ran to its end), ``hung`` (killed
    for making no progress), ``aborted`` (an error outside any test ended it early),
    ``crashed`` (the server exited), or ``error`` (runtest could not run it)."""

    unit: str
    server: str
    passed: int = 0
    failed: int = 0
    status: str = "done"
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    detail: str = ""

    @property
    def ran(self) -> int:
        return self.passed + self.failed

    def cell(self) -> str:
        text = f"{self.passed}/{self.ran}"
        return text if self.status == "done" else f"{text} {self.status}"


def reference_dir() -> Path:
    """The reference Redis tree: $RESPLITE_REFERENCE_DIR; else the source tree of the
    redis-server that $RESPLITE_REFERENCE_SERVER names (the compat suite's reference, built
    in its source tree), when that tree has the test suite; else the default cache folder."""
    configured = os.environ.get(REFERENCE_ENV)
    if configured:
        return Path(configured).expanduser()
    server = os.environ.get(SERVER_ENV)
    if server:
        tree = Path(server).expanduser().resolve().parent.parent
        if (tree / "tests" / "test_helper.tcl").is_file():
            return tree
    return DEFAULT_REFERENCE


def reference_line(reference: Path) -> str | None:
    """The release line of the reference tree (``"8.6"`` for 8.6.3, from its
    ``src/version.h``), which resplite is started answering as (``redis-compat-version``),
    as the compat suite does: the suite asserts that release's replies (SLOWLOG GET's six
    fields, CLIENT LIST's), not those of a newer Redis resplite also follows. None when the
    tree does not say."""
    try:
        text = (reference / "src" / "version.h").read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(r'REDIS_VERSION "(\d+)\.(\d+)\.', text)
    return f"{match[1]}.{match[2]}" if match else None


def missing_prerequisite(reference: Path) -> str | None:
    """Why the suite cannot run here, or None when it can."""
    if not (reference / "src" / "redis-server").is_file():
        return (f"no reference Redis build at {reference} (set {REFERENCE_ENV} to a built "
                f"Redis 8.6.3 source tree, src/redis-server and tests/, or {SERVER_ENV} to "
                "the src/redis-server of one)")
    if not (reference / "tests" / "test_helper.tcl").is_file():
        return f"{reference} has no tests/test_helper.tcl (Redis's test suite)"
    if tclsh() is None:
        return "tclsh 8.5 or newer is not installed (Debian: apt-get install tcl)"
    return None


def tclsh() -> str | None:
    for name in ("tclsh8.6", "tclsh8.7", "tclsh8.5", "tclsh"):
        found = shutil.which(name)
        if found:
            return found
    return None


def all_units(reference: Path) -> list[str]:
    """The units runtest knows under unit/ and unit/type/, in its order."""
    units: list[str] = []
    for folder in ("unit", "unit/type"):
        for path in sorted((reference / "tests" / folder).glob("*.tcl")):
            units.append(f"{folder}/{path.stem}")
    return units


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers_ping(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 2.0) as sock:
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        reply = sock.recv(64)
        return bool(reply) and not reply.startswith(b"-LOADING")
    return False


def _stop(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Stop a process group leader and everything in its group; wait for the leader."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


Recorder = Callable[[subprocess.Popen[bytes]], None]


@contextlib.contextmanager
def server(kind: str, reference: Path, record: Recorder | None = None) -> Iterator[
        tuple[int, subprocess.Popen[bytes]]]:
    """A fresh ``kind`` server (``resplite`` or ``redis``) on a free port, in a folder of its
    own, stopped (with its folder removed) when the block ends."""
    port = free_port()
    workdir = tempfile.mkdtemp(prefix=f"conformance-{kind}-")
    if kind == "redis":
        args = [str(reference / "src" / "redis-server"), "--port", str(port), "--bind",
                "127.0.0.1", "--dir", workdir, *COMMON_DIRECTIVES]
    else:
        args = [sys.executable, "-m", "resplite", "--port", str(port), "--bind", "127.0.0.1",
                "--dir", workdir, "--loglevel", "warning", *COMMON_DIRECTIVES]
        line = reference_line(reference)
        if line is not None:
            args += ["--redis-compat-version", line]
    log = open(os.path.join(workdir, "server.log"), "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(args, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        if record is not None:
            record(proc)
        deadline = time.monotonic() + START_TIMEOUT
        while not _answers_ping(port):
            if proc.poll() is not None:
                raise RuntimeError(f"{kind} exited with code {proc.returncode} at start")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{kind} did not answer PING within {START_TIMEOUT}s")
            time.sleep(0.05)
        yield port, proc
    finally:
        _stop(proc)
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def suite_copy(reference: Path) -> Iterator[Path]:
    """A private working copy of the reference's test suite (``tests/`` copied, ``src/``
    linked, for the redis-cli and redis-benchmark some units run)."""
    root = Path(tempfile.mkdtemp(prefix="conformance-suite-"))
    try:
        shutil.copytree(reference / "tests", root / "tests", symlinks=True,
                        ignore=shutil.ignore_patterns("tmp"))
        (root / "tests" / "tmp").mkdir()
        (root / "src").symlink_to(reference / "src")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def parse(output: str, unit: str, server_name: str) -> UnitResult:
    """The result of one runtest run from what it printed."""
    result = UnitResult(unit, server_name)
    finished = False
    explaining = False  # the line after an [err] line says why the test failed
    for raw in output.splitlines():
        line = _ANSI.sub("", raw).rstrip()
        if explaining and line:
            result.failures[-1] += f" -- {line.strip()[:200]}"
        explaining = False
        if _DONE.match(line):
            finished = True
            continue
        match = _LINE.match(line)
        if match is None:
            continue
        status, text = match.groups()
        if status == "ok":
            result.passed += 1
        elif status == "err":
            result.failed += 1
            result.failures.append(_ELAPSED.sub("", text))
            explaining = True
        elif status == "exception":
            result.status = "aborted"
            result.detail = text[:500]
        elif status == "TIMEOUT":
            result.status = "hung"
    if result.status == "done" and not finished:
        result.status = "aborted"
    return result


def run_unit(unit: str, kind: str, *, reference: Path, workdir: Path, suite: Suite,
             unit_timeout: float = UNIT_TIMEOUT, progress_timeout: int = PROGRESS_TIMEOUT,
             record: Recorder | None = None) -> UnitResult:
    """Run one unit against a fresh server of ``kind``."""
    started = time.monotonic()
    tcl = tclsh()
    assert tcl is not None, "missing_prerequisite() is checked first"
    with server(kind, reference, record) as (port, proc):
        args = [tcl, "tests/test_helper.tcl", "--host", "127.0.0.1", "--port", str(port),
                "--single", unit, "--clients", "1", "--durable",
                "--timeout", str(progress_timeout)]
        tags = " ".join(f"-{tag}" for tag in suite.excluded_tags)
        if tags:
            args += ["--tags", tags]
        for name in suite.excluded_tests:
            args += ["--skiptest", name]
        # A session of its own: the test server, the client it starts and whatever that runs
        # are one process group, killed together.
        runner = subprocess.Popen(args, cwd=workdir, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  start_new_session=True)
        if record is not None:
            record(runner)
        hung = False
        try:
            out, _ = runner.communicate(timeout=unit_timeout)
        except subprocess.TimeoutExpired:
            hung = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(runner.pid, signal.SIGKILL)
            out, _ = runner.communicate()
        finally:
            if runner.poll() is None:
                _stop(runner)
        # The test client may outlive the test server that started it (it is orphaned when
        # runtest exits on an exception): its group goes too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(runner.pid, signal.SIGKILL)
        crashed = proc.poll() is not None
    result = parse(out.decode(errors="replace"), unit, kind)
    if hung:
        result.status = "hung"
    elif crashed and result.status != "hung":
        result.status = "crashed"
    result.seconds = round(time.monotonic() - started, 1)
    return result


def table_row(unit: str, results: dict[str, UnitResult]) -> str:
    cells = "  ".join(f"{kind} {results[kind].cell():<16}" for kind in SERVERS
                      if kind in results)
    return f"{unit:<28} {cells}".rstrip()


def run(units: Sequence[str], kinds: Sequence[str], *, reference: Path, suite: Suite,
        unit_timeout: float = UNIT_TIMEOUT, progress_timeout: int = PROGRESS_TIMEOUT,
        record: Recorder | None = None,
        report: Callable[[str, dict[str, UnitResult]], None] | None = None,
        ) -> dict[str, dict[str, UnitResult]]:
    """Every unit against every server kind, one after the other; ``report`` is called
    with each unit's results as they come."""
    results: dict[str, dict[str, UnitResult]] = {}
    with suite_copy(reference) as workdir:
        for unit in units:
            row: dict[str, UnitResult] = {}
            for kind in kinds:
                try:
                    row[kind] = run_unit(unit, kind, reference=reference, workdir=workdir,
                                         suite=suite, unit_timeout=unit_timeout,
                                         progress_timeout=progress_timeout, record=record)
                except RuntimeError as exc:
                    row[kind] = UnitResult(unit, kind, status="error", detail=str(exc))
            results[unit] = row
            if report is not None:
                report(unit, row)
    return results


def summary(results: dict[str, dict[str, UnitResult]]) -> dict[str, object]:
    """The JSON summary: per unit and server, the counts, status and failing tests."""
    return {unit: {kind: asdict(result) for kind, result in row.items()}
            for unit, row in results.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("units", nargs="*",
                        help="units to run, e.g. unit/type/list (default: every unit under "
                             "unit/ and unit/type/; 'ci' for the fast subset)")
    parser.add_argument("--servers", default=",".join(SERVERS),
                        help="which servers, comma-separated (default: resplite,redis)")
    parser.add_argument("--json", type=Path, default=None,
                        help="write the summary (counts, status, failing tests) here")
    parser.add_argument("--unit-timeout", type=float, default=UNIT_TIMEOUT,
                        help=f"wall seconds per unit and server (default {UNIT_TIMEOUT:g})")
    parser.add_argument("--progress-timeout", type=int, default=PROGRESS_TIMEOUT,
                        help="seconds without a test finishing before runtest gives up "
                             f"(default {PROGRESS_TIMEOUT})")
    parser.add_argument("--failures", action="store_true",
                        help="list each failing test under its unit")
    args = parser.parse_args(argv)

    reference = reference_dir()
    why = missing_prerequisite(reference)
    if why is not None:
        print(f"conformance: skipped: {why}", file=sys.stderr)
        return 2
    suite = Suite.load()
    kinds = [kind for kind in args.servers.split(",") if kind]
    unknown = set(kinds) - set(SERVERS)
    if unknown:
        parser.error(f"unknown server {', '.join(sorted(unknown))} (resplite, redis)")
    units: list[str] = []
    for unit in args.units or all_units(reference):
        units.extend(suite.ci if unit == "ci" else [unit])

    print(f"Redis's test suite from {reference}; left out: "
          + ", ".join(f"tag {tag} ({why})" for tag, why in suite.excluded_tags.items()),
          flush=True)

    done: dict[str, dict[str, UnitResult]] = {}

    def report(unit: str, row: dict[str, UnitResult]) -> None:
        print(table_row(unit, row), flush=True)
        done[unit] = row
        if args.json is not None:  # after each unit: a long run can be read while it goes
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(summary(done), indent=2) + "\n")
        if args.failures:
            for kind, result in row.items():
                for name in result.failures:
                    print(f"    {kind} failed: {name}")
                if result.detail:
                    print(f"    {kind}: {result.detail.splitlines()[0]}")

    results = run(units, kinds, reference=reference, suite=suite,
                  unit_timeout=args.unit_timeout, progress_timeout=args.progress_timeout,
                  report=report)
    totals = {kind: (sum(row[kind].passed for row in results.values() if kind in row),
                     sum(row[kind].ran for row in results.values() if kind in row))
              for kind in kinds}
    print("total".ljust(28) + " " + "  ".join(f"{kind} {p}/{n}".ljust(len(kind) + 17)
                                              for kind, (p, n) in totals.items()).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
