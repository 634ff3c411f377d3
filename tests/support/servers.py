"""Start a real redis-server or a resplite server on a free port, and stop it cleanly.

Every server started here is stopped by whoever holds it, and by the helper itself when it
never came up; each is also recorded for the end-of-run leftover check (:mod:`support.procs`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from resplite.engine import compat
from support import procs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_server_path() -> str | None:
    """The ``redis-server`` on PATH (the system's Redis), for tests that need a Redis of any
    version; the compat suite's reference is :func:`reference_path`."""
    return shutil.which("redis-server")


#: The compat suite's reference Redis: the path of its ``redis-server`` (a build of Redis
#: 8.6.3, ``tools/build-redis-reference.sh``; ``.ci/run`` builds and exports it).
REFERENCE_ENV = "RESPLITE_REFERENCE_SERVER"
#: The second reference, Redis 7.0, for the tests about 7.x (``@pytest.mark.reference("7.0")``);
#: without it, a ``redis-server`` 7.0 on PATH (Debian bookworm's 7.0.15) is used.
REFERENCE_70_ENV = "RESPLITE_REFERENCE_SERVER_70"
#: What builds the reference, named by the skip and failure messages.
BUILD_SCRIPT = "tools/build-redis-reference.sh"


@functools.cache
def server_version(exe: str) -> str:
    """The version a redis-server binary reports (``redis-server --version``: ``v=8.6.3``)."""
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"v=(\d+\.\d+\.\d+)", out)
    if match is None:
        raise RuntimeError(f"{exe} --version: no version in {out!r}")
    return match[1]


def line(version: str) -> str:
    """``"8.6.3"`` as its release line ``"8.6"``."""
    return ".".join(version.split(".")[:2])


def reference_path(version: str | None = None) -> str | None:
    """The reference ``redis-server``: ``$RESPLITE_REFERENCE_SERVER``, else the one on PATH;
    with ``version="7.0"``, the 7.0 reference (``$RESPLITE_REFERENCE_SERVER_70``, else a
    7.0 ``redis-server`` on PATH). None when there is none."""
    if version is None:
        named = os.environ.get(REFERENCE_ENV)
        if named:
            # A variable naming no runnable binary is no reference (not a silent fallback).
            return named if os.access(named, os.X_OK) else None
        return redis_server_path()
    if version != "7.0":
        raise ValueError(f"no second reference for Redis {version} (only 7.0)")
    exe = os.environ.get(REFERENCE_70_ENV) or redis_server_path()
    if exe is None or not os.access(exe, os.X_OK) or line(server_version(exe)) != "7.0":
        return None
    return exe


def missing_reference(version: str | None = None) -> str:
    """Why there is no reference, and how to get one."""
    if version is None:
        named = os.environ.get(REFERENCE_ENV)
        if named:
            return f"{REFERENCE_ENV}={named} is not a runnable redis-server (see {BUILD_SCRIPT})"
        return (f"no reference redis-server: build Redis 8.6.3 with {BUILD_SCRIPT} and set "
                f"{REFERENCE_ENV} to the path it prints (or put a redis-server on PATH)")
    return (f"no Redis {version} reference: set {REFERENCE_70_ENV} to a redis-server "
            f"{version}, or install one on PATH")


#: How long a server gets to listen: generous, since a busy machine can take many seconds to
#: start a Python process, and nothing waits longer than the server needs.
START_TIMEOUT = 60.0


def _wait_for_port(port: int, proc: subprocess.Popen[bytes],
                   timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1.0):
            return
        time.sleep(0.01)
    raise RuntimeError(f"server did not listen on port {port} within {timeout}s")


def _wait_until_loaded(port: int, proc: subprocess.Popen[bytes],
                       timeout: float = START_TIMEOUT) -> None:
    """Wait until the server has loaded its data: both servers listen while they load and
    answer -LOADING meanwhile; any other answer to PING (+PONG, -NOAUTH...) means loaded."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port),
                                                                    5.0) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            reply = sock.recv(256)
            if reply and not reply.startswith(b"-LOADING"):
                return
        time.sleep(0.02)
    raise RuntimeError(f"server on port {port} was still loading after {timeout}s")


def _launch(args: list[str], workdir: str, *, loaded: bool = True,
            **popen: Any) -> subprocess.Popen[bytes]:
    """Start a server and wait until it listens (and, ``loaded``, has loaded its data). If
    it does not, for any reason (it exited, it never listened, the wait was interrupted), it
    is stopped and its folder removed before the error propagates: no caller is left holding
    a process it never received."""
    port = int(args[args.index("--port") + 1])
    try:
        proc = subprocess.Popen(args, **popen)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    try:
        procs.record(proc)
        _wait_for_port(port, proc)
        if loaded:
            _wait_until_loaded(port, proc)
    except BaseException:
        procs.stop(proc)
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    return proc


@dataclass
class ServerProcess:
    name: str
    host: str
    port: int
    proc: subprocess.Popen[bytes]
    workdir: str

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}"

    def stop(self) -> None:
        try:
            procs.stop(self.proc)
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)


class ServerPairFactory(Protocol):
    """Starts a dedicated redis-server and resplite, both with the extra directives given."""

    def __call__(self, *extra: str) -> tuple[ServerProcess, ServerProcess]: ...


def _save_args(save: str | None) -> list[str]:
    """``--save <rules>``; None leaves the server's built-in rules (Redis's, in both)."""
    return [] if save is None else ["--save", save]


def start_redis(*extra: str, save: str | None = "", loaded: bool = True,
                exe: str | None = None) -> ServerProcess:
    """A redis-server: ``exe``, else the compat suite's reference (:func:`reference_path`)."""
    exe = exe or reference_path()
    if exe is None:
        raise RuntimeError(missing_reference())
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="redis-ref-")
    args = [exe, "--port", str(port), "--bind", "127.0.0.1", *_save_args(save),
            "--appendonly", "no", "--dir", workdir, "--enable-debug-command", "yes", *extra]
    proc = _launch(args, workdir, loaded=loaded, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return ServerProcess("redis", "127.0.0.1", port, proc, workdir)


def start_resplite(*extra: str, save: str | None = "", loaded: bool = True,
                   redis_version: str | None = None) -> ServerProcess:
    """A resplite server; ``redis_version`` (``"8.6"``) is its ``redis-compat-version``."""
    if redis_version is not None:
        extra = ("--redis-compat-version", redis_version, *extra)
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="resplite-")
    # No save rules by default, as the reference above: a stop writes no snapshot (into a
    # test's --dir either); a later --save in ``extra`` still sets rules.
    args = [sys.executable, "-m", "resplite", "--port", str(port), "--bind", "127.0.0.1",
            *_save_args(save), "--enable-debug-command", "yes", "--loglevel", "warning",
            *extra]
    env = dict(os.environ)
    proc = _launch(args, workdir, loaded=loaded, stdout=subprocess.DEVNULL, stderr=None,
                   cwd=workdir, env=env)
    return ServerProcess("resplite", "127.0.0.1", port, proc, workdir)


@dataclass(frozen=True)
class Reference:
    """A reference redis-server binary, its version, and the ``redis-compat-version`` resplite
    answers as beside it (the reference's release line, when resplite can answer as it)."""

    exe: str
    version: str  # "8.6.3"

    @property
    def line(self) -> str:
        return line(self.version)

    @property
    def compat_version(self) -> str | None:
        return self.line if self.line in compat.VERSIONS else None

    def start_redis(self, *extra: str, save: str | None = "") -> ServerProcess:
        return start_redis(*extra, save=save, exe=self.exe)

    def start_resplite(self, *extra: str, save: str | None = "",
                       loaded: bool = True) -> ServerProcess:
        return start_resplite(*extra, save=save, loaded=loaded,
                              redis_version=self.compat_version)


def reference(version: str | None = None) -> Reference:
    """The suite's reference (None), or the 7.0 one; RuntimeError naming what provides it
    when there is none (the compat fixtures skip instead)."""
    exe = reference_path(version)
    if exe is None:
        raise RuntimeError(missing_reference(version))
    return Reference(exe, server_version(exe))


def require_reference(version: str | None = None) -> Reference:
    """:func:`reference` for a test: without one, the test skips naming what provides it,
    except under CI, where it fails."""
    import pytest

    if reference_path(version) is None:
        if os.environ.get("CI"):
            pytest.fail(missing_reference(version))
        pytest.skip(missing_reference(version))
    return reference(version)


@contextlib.contextmanager
def running(kind: str, *extra: str, save: str | None = "",
            loaded: bool = True) -> Iterator[ServerProcess]:
    """A server for the block; ``loaded=False`` hands it over as soon as it listens, while it
    may still be loading its data."""
    server = (start_redis(*extra, save=save, loaded=loaded, exe=redis_server_path())
              if kind == "redis"
              else start_resplite(*extra, save=save, loaded=loaded))
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def paused(server: ServerProcess) -> Iterator[None]:
    """The server stopped (SIGSTOP) for the block, continued after it.

    What clients do meanwhile (connect, send) is done by the kernel and waits for the server,
    which then sees it all in one poll of its event loop, in the order it happened: a
    connection made before a request arrives is accepted first. (The socket the server
    served last may be reported first again: let another connection be the last served.)
    """
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)
