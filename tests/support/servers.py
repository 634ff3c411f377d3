"""Start a real redis-server or a resplite server on a free port, and stop it cleanly."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_server_path() -> str | None:
    return shutil.which("redis-server")


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.01)
    raise RuntimeError(f"server did not listen on port {port} within {timeout}s")


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
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _wait_or_stop(server: ServerProcess) -> None:
    """Wait until ``server`` listens; one that does not in time is stopped, not left behind."""
    try:
        _wait_for_port(server.port, server.proc)
    except BaseException:
        server.stop()
        raise


class ServerPairFactory(Protocol):
    """Starts a dedicated redis-server and resplite, both with the extra directives given."""

    def __call__(self, *extra: str) -> tuple[ServerProcess, ServerProcess]: ...


def _save_args(save: str | None) -> list[str]:
    """``--save <rules>``; None leaves the server's built-in rules (Redis's, in both)."""
    return [] if save is None else ["--save", save]


def start_redis(*extra: str, save: str | None = "") -> ServerProcess:
    exe = redis_server_path()
    if exe is None:
        raise RuntimeError("redis-server is not installed")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="redis-ref-")
    args = [exe, "--port", str(port), "--bind", "127.0.0.1", *_save_args(save),
            "--appendonly", "no", "--dir", workdir, "--enable-debug-command", "yes", *extra]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = ServerProcess("redis", "127.0.0.1", port, proc, workdir)
    _wait_or_stop(server)
    return server


def start_resplite(*extra: str, save: str | None = "") -> ServerProcess:
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="resplite-")
    # No save rules by default, as the reference above: a stop writes no snapshot (into a
    # test's --dir either); a later --save in ``extra`` still sets rules.
    args = [sys.executable, "-m", "resplite", "--port", str(port), "--bind", "127.0.0.1",
            *_save_args(save), "--enable-debug-command", "yes", "--loglevel", "warning",
            *extra]
    env = dict(os.environ)
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=None, cwd=workdir, env=env)
    server = ServerProcess("resplite", "127.0.0.1", port, proc, workdir)
    _wait_or_stop(server)
    return server


@contextlib.contextmanager
def running(kind: str, *extra: str, save: str | None = "") -> Iterator[ServerProcess]:
    server = (start_redis(*extra, save=save) if kind == "redis"
              else start_resplite(*extra, save=save))
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
