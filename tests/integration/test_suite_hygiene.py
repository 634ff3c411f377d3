"""The suite's own hygiene. The end-of-run check `make test` runs (tests/support/procs.py): a
process the run started and left behind fails the run and is killed; a process the run did
not start is never touched, even one of the same kind. And no Hypothesis example database."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import procs
from support.servers import redis_server_path

TESTS = Path(__file__).resolve().parents[1]
CHECKER = TESTS / "support" / "procs.py"

# Starts a process in a session of its own, so that it outlives the command, and prints its
# pid. With RECORD the pid is also recorded (as the suite's server helpers record theirs).
_ORPHAN = textwrap.dedent(
    """
    import os, subprocess, sys
    sys.path.insert(0, {tests!r})
    from support import procs
    argv = sys.argv[2:]
    proc = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    if sys.argv[1] == "record":
        procs.record(proc)
    print(proc.pid, flush=True)
    """
)


def _alive(pid: int) -> bool:
    return procs._start_time(pid) is not None


def _checked_run(*command: str, grace: float = 1.0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (procs.RUN_ENV, procs.RUN_DIR_ENV)}
    return subprocess.run(
        [sys.executable, str(CHECKER), "--grace", str(grace), *command],
        env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A process nobody in the checked run started (another engineer's, say)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        yield proc
    finally:
        procs.stop(proc)


def _orphan(mode: str, *argv: str) -> tuple[subprocess.CompletedProcess[str], int]:
    done = _checked_run(sys.executable, "-c", _ORPHAN.format(tests=str(TESTS)), mode, *argv)
    pid = int(done.stdout.split()[0])
    return done, pid


def test_a_process_left_running_fails_the_run_and_is_killed(
    bystander: subprocess.Popen[bytes],
) -> None:
    done, pid = _orphan("plain", sys.executable, "-c", "import time; time.sleep(600)")
    try:
        assert done.returncode == 1, done.stderr
        assert "still running after it ended" in done.stderr
        assert f"pid {pid}: " in done.stderr and "time.sleep(600)" in done.stderr
        assert not _alive(pid)
        assert bystander.poll() is None  # the same program, not started by the run: untouched
        assert f"pid {bystander.pid}:" not in done.stderr
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(redis_server_path() is None, reason="needs redis-server")
def test_a_recorded_redis_server_is_found_though_it_rewrites_its_environment(
    tmp_path: Path,
) -> None:
    # A Unix socket of its own: a TCP port picked free could be taken meanwhile by a
    # parallel test, and a server that exits at once leaves nothing to find.
    args = [str(redis_server_path()), "--port", "0", "--unixsocket", str(tmp_path / "s"),
            "--save", "", "--appendonly", "no", "--dir", str(tmp_path)]
    done, pid = _orphan("record", *args)
    try:
        assert done.returncode == 1, done.stderr
        assert f"pid {pid}: " in done.stderr and "redis-server" in done.stderr
        assert not _alive(pid)
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_clean_run_passes_and_keeps_the_commands_exit_code(
    bystander: subprocess.Popen[bytes],
) -> None:
    assert _checked_run(sys.executable, "-c", "pass").returncode == 0
    failed = _checked_run(sys.executable, "-c", "raise SystemExit(3)")
    assert failed.returncode == 3 and "still running" not in failed.stderr
    assert bystander.poll() is None


def test_hypothesis_keeps_no_example_database() -> None:
    """A counterexample saved by an earlier run (tests/conftest.py's profile) is never
    replayed: the suite's outcome depends on the checkout alone."""
    from hypothesis import settings

    assert settings().database is None
    assert settings().derandomize == bool(os.environ.get("CI"))


def test_the_ci_entry_point_parses_and_runs_make_test() -> None:
    """CI runs `.ci/run` on a fresh machine: a script bash cannot parse fails there only."""
    script = TESTS.parent / ".ci" / "run"
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [line.strip() for line in script.read_text().splitlines()]
    assert lines[-1] == "make test"


BUILD_REFERENCE = TESTS.parent / "tools" / "build-redis-reference.sh"


def test_the_reference_build_prints_a_cached_binary_at_once(tmp_path: Path) -> None:
    """A second run (the binary already built in the cache) builds nothing: it prints the
    path, which `make test` and `.ci/run` put in RESPLITE_REFERENCE_SERVER."""
    exe = tmp_path / "redis-8.6.3" / "src" / "redis-server"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    done = subprocess.run(["bash", str(BUILD_REFERENCE)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "REDIS_REFERENCE_CACHE": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{exe}\n"


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_reference_build_refuses_a_tarball_that_is_not_debian_s(tmp_path: Path) -> None:
    """The source is checked against the SHA-256 Debian's .dsc lists before anything is
    unpacked or built."""
    fake = tmp_path / "fake.tar.gz"
    fake.write_bytes(b"not redis")
    cache = tmp_path / "cache"
    done = subprocess.run(["bash", str(BUILD_REFERENCE)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "REDIS_REFERENCE_CACHE": str(cache),
                                           "REDIS_REFERENCE_URL": fake.as_uri()})
    assert done.returncode == 1
    assert "SHA-256 differs" in done.stderr
    assert not (cache / "redis-8.6.3").exists()
