"""An embeddable resplite server for tests: ``resplite.serve(**directives)``.

``serve()`` returns a :class:`ServerHandle`; entering it (``with`` or ``async with``) starts a
server and leaving it stops the server. Directives are Redis's configuration directives,
spelled with dashes or underscores (``requirepass="s3cret"``, ``maxmemory="10mb"``,
``enable_debug_command=True``); booleans become ``yes``/``no`` and lists are joined by
spaces. ``unixsocket=True`` asks for a private socket path in a fresh temporary folder.

Two isolations:

* ``"thread"`` (the default): the server runs in this process, in a background thread with
  its own event loop (uvloop when installed). Starting costs a few milliseconds.
* ``"process"``: the server runs in a child Python process (:mod:`resplite.testing.child`),
  for tests that must not share an interpreter with it. The child stops when its stdin
  closes, so it never outlives the process that started it.

Unless told otherwise the server listens on 127.0.0.1 on an ephemeral port and accepts the
RESPLITE.CLOCK and RESPLITE.FAULT commands (``enable-clock-command yes``,
``enable-fault-command yes``; ``handle.faults``, a :class:`FaultControl`, sets faults). It
works in a temporary folder of its own; ``dir=`` (and ``dbfilename=``) name a folder whose
RDB snapshot it loads at start (a Redis file of version 9 to 12 or one resplite saved), so a
test can begin from a production-like data set. It has no save rules (``save ""``) unless
given ``save=``, so stopping it writes no snapshot, into ``dir=`` or anywhere. The pytest
plugin's ``resplite`` marker takes the same directives. ``handle.clock`` controls the same
clock as the command does; in thread mode its calls are carried over to the server's event
loop and wait for completion, so that timers and blocked clients are only ever touched from
that loop. Leaving the context
stops the server and leaves no thread, process, socket or file behind.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

from resplite.testing.control import ControlConnection, ControlError

if TYPE_CHECKING:
    from resplite.engine.config import Config
    from resplite.server.app import Server
    from resplite.server.cluster import ClusterServer

T = TypeVar("T")

ISOLATIONS = ("thread", "process")

# What an embedded server assumes unless the caller says otherwise.
DEFAULT_DIRECTIVES: Mapping[str, str] = {
    "port": "0",
    "bind": "127.0.0.1",
    "enable-clock-command": "yes",
    "enable-fault-command": "yes",
}

# 9999-12-31T23:59:59.999Z, as in resplite.engine.timeflow (not imported: keep this light).
_MAX_TIME_MS = 253_402_300_799_999


class FaultControl:
    """Faults on demand for one server: each method sends RESPLITE.FAULT on the handle's own
    connection (so it works for both isolations) and returns what the command answers.

    ``command`` is a glob over command names (``"XREADGROUP"``, ``"xgroup|create"``,
    ``"x*"``); ``client`` a glob over CLIENT SETNAME names; ``times`` the number of calls
    affected (None: until cleared). See :mod:`resplite.engine.faults` for each action.
    """

    def __init__(self, execute: Callable[..., Any]) -> None:
        self._execute = execute

    def _add(self, args: list[Any], client: str | None, times: int | None) -> int:
        if client is not None:
            args += ["CLIENT", client]
        if times is not None:
            args += ["TIMES", times]
        return int(self._execute("RESPLITE.FAULT", *args))

    def error(self, command: str, error: str, *, client: str | None = None,
              times: int | None = None) -> int:
        """Fail matching calls with ``error`` (``"-LOADING ..."``) instead of running them."""
        return self._add(["ERROR", command, error], client, times)

    def delay(self, command: str, ms: int | datetime.timedelta, *, client: str | None = None,
              times: int | None = None) -> int:
        """Hold the replies of matching calls for ``ms`` of the server's clock."""
        return self._add(["DELAY", command, _to_ms(ms)], client, times)

    def close(self, command: str, *, after: bool = False, client: str | None = None,
              times: int | None = None) -> int:
        """Close the connection before running matching calls (or after, without reply)."""
        return self._add(["CLOSE", command, "AFTER" if after else "BEFORE"], client, times)

    def drop(self, command: str, *, client: str | None = None, times: int | None = None) -> int:
        """Run matching calls and never send their replies."""
        return self._add(["DROP", command], client, times)

    def list(self) -> list[dict[str, Any]]:
        """The faults in force, as dicts with str keys."""
        reply = self._execute("RESPLITE.FAULT", "LIST")
        out = []
        for item in reply:
            if isinstance(item, list):  # RESP2: a flat array of pairs
                item = dict(zip(item[::2], item[1::2], strict=True))
            out.append({k.decode(): v for k, v in item.items()})
        return out

    def clear(self, *ids: int) -> int:
        """Remove the given faults, or all of them; returns how many went."""
        return int(self._execute("RESPLITE.FAULT", "CLEAR", *ids))


#: Seconds a server gets to start listening. Generous: on a busy machine (a CI runner, pytest
#: -n N on two cores) starting a Python process alone can take many seconds, and a server that
#: comes up sooner is never waited for longer.
DEFAULT_STARTUP_TIMEOUT = 60.0


class ServerStartError(RuntimeError):
    """The server could not start (bad directive, address in use, child process died)."""


def directive_text(name: str, value: Any) -> tuple[str, str]:
    """``(directive-name, text)`` for a keyword argument as :func:`serve` accepts it
    (``redis_version`` stands for ``redis-compat-version``)."""
    key = name.replace("_", "-").lower()
    if key == "redis-version":
        key = "redis-compat-version"
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (list, tuple)):
        text = " ".join(str(v) for v in value)
    else:
        text = str(value)
    return key, text


def _to_ms(value: int | datetime.timedelta) -> int:
    if isinstance(value, datetime.timedelta):
        return value // datetime.timedelta(milliseconds=1)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"milliseconds must be an int or a timedelta, not {type(value).__name__}")
    return value


def _to_unix_ms(value: int | datetime.datetime) -> int:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise ValueError("use an aware datetime (with a tzinfo) to set the clock")
        return int(value.timestamp() * 1000)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"unix time must be an int (ms) or a datetime, not {type(value).__name__}")
    return value


# ------------------------------------------------------------------------------------------
# Clock control


class ClockControl:
    """The server's clock, as the RESPLITE.CLOCK command offers it.

    ``get()`` reads Unix milliseconds; ``freeze()`` stops time; ``resume()`` lets it run
    again; ``advance(ms)`` moves it forward, firing due expirations before blocked-client
    timeouts, and returns the new reading; ``set(unix_ms)`` puts it anywhere, earlier times
    included; ``reset()`` lets it run again at the system's time.
    """

    def get(self) -> int:
        raise NotImplementedError

    def freeze(self) -> None:
        raise NotImplementedError

    def resume(self) -> None:
        raise NotImplementedError

    def advance(self, ms: int | datetime.timedelta) -> int:
        raise NotImplementedError

    def set(self, unix_ms: int | datetime.datetime) -> int:
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError

    @contextlib.contextmanager
    def frozen(self) -> Any:
        """``with handle.clock.frozen():`` time stands still inside, and runs again after."""
        self.freeze()
        try:
            yield self
        finally:
            self.resume()


def _check_advance(ms: int) -> None:
    if ms < 0:
        raise ValueError("the clock only advances forwards; use set() to go back in time")


def _check_time(unix_ms: int) -> None:
    if not 0 <= unix_ms <= _MAX_TIME_MS:
        raise ValueError(f"clock time out of range: {unix_ms} (0 .. {_MAX_TIME_MS} ms)")


class LocalClock(ClockControl):
    """The clock of a server in this process; every call runs on the server's loop."""

    def __init__(self, runner: ThreadRunner) -> None:
        self._runner = runner

    def get(self) -> int:
        return self._runner.state.clock.time_ms()

    def freeze(self) -> None:
        from resplite.engine import timeflow

        self._runner.call(timeflow.freeze, self._runner.state)

    def resume(self) -> None:
        from resplite.engine import timeflow

        self._runner.call(timeflow.resume, self._runner.state)

    def advance(self, ms: int | datetime.timedelta) -> int:
        from resplite.engine import timeflow

        amount = _to_ms(ms)
        _check_advance(amount)
        return self._runner.call(timeflow.advance, self._runner.state, amount)

    def set(self, unix_ms: int | datetime.datetime) -> int:
        from resplite.engine import timeflow

        when = _to_unix_ms(unix_ms)
        _check_time(when)
        return self._runner.call(timeflow.set_time, self._runner.state, when)

    def reset(self) -> None:
        from resplite.engine import timeflow

        self._runner.call(timeflow.reset, self._runner.state)


class RemoteClock(ClockControl):
    """The clock of a server in another process, driven with RESPLITE.CLOCK."""

    def __init__(self, control: ControlConnection) -> None:
        self._control = control

    def get(self) -> int:
        return int(self._control.call("RESPLITE.CLOCK", "GET"))

    def freeze(self) -> None:
        self._control.call("RESPLITE.CLOCK", "FREEZE")

    def resume(self) -> None:
        self._control.call("RESPLITE.CLOCK", "RESUME")

    def advance(self, ms: int | datetime.timedelta) -> int:
        amount = _to_ms(ms)
        _check_advance(amount)
        return int(self._control.call("RESPLITE.CLOCK", "ADVANCE", amount))

    def set(self, unix_ms: int | datetime.datetime) -> int:
        when = _to_unix_ms(unix_ms)
        _check_time(when)
        return int(self._control.call("RESPLITE.CLOCK", "SET", when))

    def reset(self) -> None:
        replies = self._control.pipeline(
            ("RESPLITE.CLOCK", "RESUME"),
            ("RESPLITE.CLOCK", "SET", time.time_ns() // 1_000_000),
        )
        for reply in replies:
            if isinstance(reply, ControlError):
                raise reply


# ------------------------------------------------------------------------------------------
# Runners: where the server lives


def _new_event_loop(use_uvloop: bool) -> asyncio.AbstractEventLoop:
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def _parse_directives(directives: Mapping[str, str]) -> Config:
    from resplite.engine.config import Config, ConfigError

    config = Config()
    for name, text in directives.items():
        try:
            config.set(name, text, at_startup=True)
        except ConfigError as exc:
            raise ServerStartError(f"directive {name} {text!r}: {exc}") from None
    return config


class ThreadRunner:
    """A server on its own event loop in a background thread of this process."""

    def __init__(self, directives: Mapping[str, str]) -> None:
        self.config = _parse_directives(directives)
        self.server: Server | ClusterServer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.done: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.thread = threading.Thread(target=self._main, name="resplite-server", daemon=True)

    @property
    def state(self) -> Any:
        assert self.server is not None, "the server is not running"
        return self.server.state

    def launch(self) -> None:
        self.thread.start()

    def _main(self) -> None:
        loop = _new_event_loop(self.config["uvloop"])
        self.loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            else:
                import logging

                logging.getLogger("resplite.testing").exception("embedded server failed")
        finally:
            try:
                pending = asyncio.all_tasks(loop)
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
                if not self.ready.done():
                    self.ready.set_exception(ServerStartError("the server thread ended"))
                self.done.set_result(None)

    async def _serve(self) -> None:
        from resplite.server.app import Server

        server: Server | ClusterServer
        if self.config["cluster-enabled"]:
            from resplite.server.cluster import ClusterServer

            server = ClusterServer(self.config, embedded=True)
        else:
            server = Server(self.config, embedded=True)
        self.server = server
        await server.serve_forever(on_ready=lambda: self.ready.set_result(None))
        # Let the transports closed by stop() finish closing their sockets.
        for _ in range(3):
            await asyncio.sleep(0)

    @property
    def address(self) -> tuple[int, str | None]:
        assert self.server is not None
        return self.server.port, self.server.unix_socket or None

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the server's loop and return its result (or raise)."""
        loop = self.loop
        if loop is None or self.done.done():
            raise RuntimeError("the server is not running")
        if threading.current_thread() is self.thread:
            return fn(*args)
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args))
            except BaseException as exc:
                future.set_exception(exc)

        loop.call_soon_threadsafe(run)
        return future.result(timeout=30)

    def request_stop(self) -> None:
        loop, server = self.loop, self.server
        if loop is None or server is None or self.done.done():
            return
        with contextlib.suppress(RuntimeError):  # the loop already closed (SHUTDOWN)
            loop.call_soon_threadsafe(server.request_shutdown)

    def join(self, timeout: float) -> None:
        if self.thread.is_alive():
            self.thread.join(timeout)


class ProcessRunner:
    """A server in a child Python process (:mod:`resplite.testing.child`)."""

    def __init__(self, directives: Mapping[str, str]) -> None:
        _parse_directives(directives)  # a bad directive is refused before spawning anything
        self.directives = dict(directives)
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.ports: list[int] = []
        self.unix_socket: str | None = None
        self.pid = 0

    def launch(self) -> None:
        package_root = str(Path(__file__).resolve().parent.parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH", "")) if p
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "resplite.testing.child", json.dumps(self.directives)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def wait_ready(self, timeout: float) -> None:
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        line = b""
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while not line.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise ServerStartError(f"the server process did not start in {timeout}s")
                chunk = os.read(proc.stdout.fileno(), 4096)
                if not chunk:
                    code = proc.wait()
                    raise ServerStartError(f"the server process exited with code {code}")
                line += chunk
        info = json.loads(line)
        if "error" in info:
            proc.wait()
            raise ServerStartError(info["error"])
        self.port = int(info["port"])
        self.ports = [int(p) for p in info.get("ports", [self.port])]
        self.unix_socket = info["unix_socket"]
        self.pid = int(info["pid"])

    @property
    def address(self) -> tuple[int, str | None]:
        return self.port, self.unix_socket

    def stop(self, timeout: float) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


# ------------------------------------------------------------------------------------------
# The handle


class ServerHandle:
    """A resplite server started by :func:`serve`: where it listens and how to control it.

    Attributes once started: ``host``, ``port`` (0 when it only listens on a Unix socket),
    ``unix_socket`` (or None), ``url`` (with the password, for ``redis.from_url``),
    ``clock`` (:class:`ClockControl`), ``pid`` (the server's process) and ``isolation``.
    """

    def __init__(
        self,
        directives: Mapping[str, str],
        *,
        isolation: str = "thread",
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        private_socket: bool = False,
    ) -> None:
        if isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {ISOLATIONS}, not {isolation!r}")
        self.directives: dict[str, str] = dict(directives)
        self.isolation = isolation
        self.startup_timeout = startup_timeout
        self._private_socket = private_socket
        self._tempdir: str | None = None
        self._runner: ThreadRunner | ProcessRunner | None = None
        self._control: ControlConnection | None = None
        self._clock: ClockControl | None = None
        self._stopped = False
        self.port = 0
        self.unix_socket: str | None = None
        self.pid = 0
        bind = self.directives.get("bind", "127.0.0.1").split()[0].lstrip("-")
        self.host = {"0.0.0.0": "127.0.0.1", "*": "127.0.0.1", "::": "::1", "::*": "::1"}.get(
            bind, bind
        )
        self.password: str | None = self.directives.get("requirepass") or None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        runner = self._runner
        if runner is None or self._stopped:
            return False
        if isinstance(runner, ThreadRunner):
            return not runner.done.done()
        return runner.proc is not None and runner.proc.poll() is None

    def _make_runner(self) -> ThreadRunner | ProcessRunner:
        if self._runner is not None:
            raise RuntimeError("this handle has already been started")
        if self._private_socket or "dir" not in self.directives:
            self._tempdir = tempfile.mkdtemp(prefix="resplite-")
        if self._private_socket and self._tempdir is not None:
            self.directives["unixsocket"] = os.path.join(self._tempdir, "resplite.sock")
        if "dir" not in self.directives and self._tempdir is not None:
            # A snapshot a test saves stays out of the current directory, and nothing there
            # is loaded: without dir= the server starts empty in a folder of its own.
            self.directives["dir"] = self._tempdir
        # No save rules unless the test asks for them (Redis's built-in ones would write a
        # dump.rdb into a dir= folder at every stop).
        self.directives.setdefault("save", "")
        runner: ThreadRunner | ProcessRunner
        if self.isolation == "thread":
            runner = ThreadRunner(self.directives)
        else:
            runner = ProcessRunner(self.directives)
        self._runner = runner
        return runner

    def _started(self) -> None:
        runner = self._runner
        assert runner is not None
        self.port, self.unix_socket = runner.address
        if isinstance(runner, ThreadRunner):
            self.pid = os.getpid()
        else:
            self.pid = runner.pid
        self._control = ControlConnection(
            host=self.host, port=self.port, unix_socket=self.unix_socket, password=self.password
        )
        if isinstance(runner, ThreadRunner):
            self._clock = LocalClock(runner)
        else:
            self._clock = RemoteClock(self._control)

    @contextlib.contextmanager
    def _thread_start_errors(self) -> Iterator[None]:
        """Report a server thread that did not come up as :class:`ServerStartError`."""
        try:
            yield
        except TimeoutError:
            raise ServerStartError(f"the server did not start in {self.startup_timeout}s") from None
        except OSError as exc:
            raise ServerStartError(f"could not start: {exc}") from exc

    def start(self) -> ServerHandle:
        """Start the server and wait until it accepts connections."""
        runner = self._make_runner()
        try:
            runner.launch()
            if isinstance(runner, ThreadRunner):
                with self._thread_start_errors():
                    runner.ready.result(self.startup_timeout)
            else:
                runner.wait_ready(self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self._started()
        return self

    async def astart(self) -> ServerHandle:
        """Start the server without blocking the running event loop."""
        runner = self._make_runner()
        try:
            if isinstance(runner, ThreadRunner):
                runner.launch()
                with self._thread_start_errors():
                    await asyncio.wait_for(
                        asyncio.wrap_future(runner.ready), self.startup_timeout
                    )
            else:
                runner.launch()
                await asyncio.get_running_loop().run_in_executor(
                    None, runner.wait_ready, self.startup_timeout
                )
        except BaseException:
            await self.astop()
            raise
        self._started()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server; closes its listeners and clients, removes its socket files."""
        if self._stopped:
            return
        self._stopped = True
        if self._control is not None:
            self._control.close()
        runner = self._runner
        if isinstance(runner, ThreadRunner):
            runner.request_stop()
            runner.join(timeout)
        elif isinstance(runner, ProcessRunner):
            runner.stop(timeout)
        self._remove_tempdir()

    async def astop(self, timeout: float = 10.0) -> None:
        """Stop the server without blocking the running event loop."""
        if self._stopped:
            return
        runner = self._runner
        if isinstance(runner, ThreadRunner) and runner.thread.is_alive():
            if self._control is not None:
                self._control.close()
            runner.request_stop()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.wrap_future(runner.done), timeout)
            self.stop(timeout)
        else:
            await asyncio.get_running_loop().run_in_executor(None, self.stop, timeout)

    close = stop

    def _remove_tempdir(self) -> None:
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    def __enter__(self) -> ServerHandle:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> ServerHandle:
        return await self.astart()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()

    def __repr__(self) -> str:
        where = self.url if self._control is not None else "not started"
        return f"<resplite server {where} ({self.isolation})>"

    # -- where it listens ------------------------------------------------------------------

    @property
    def url(self) -> str:
        """A redis-py URL: ``redis://[:password@]host:port`` or ``unix://[:password@]/path``."""
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        if self.unix_socket and not self.port:
            return f"unix://{auth}{self.unix_socket}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"redis://{auth}{host}:{self.port}"

    @property
    def clock(self) -> ClockControl:
        if self._clock is None:
            raise RuntimeError("the server is not running")
        return self._clock

    @property
    def cluster_nodes(self) -> list[tuple[str, int]]:
        """(host, port) of every node of an in-process cluster (one entry when standalone)."""
        runner = self._runner
        if runner is None or self._control is None:
            raise RuntimeError("the server is not running")
        if isinstance(runner, ThreadRunner) and runner.server is not None:
            from resplite.server.cluster import ClusterServer

            if isinstance(runner.server, ClusterServer):
                return [(self.host, port) for port in runner.server.ports]
        if isinstance(runner, ProcessRunner) and runner.ports:
            return [(self.host, port) for port in runner.ports]
        return [(self.host, self.port)]

    @property
    def cluster_url(self) -> str:
        """A ``redis://`` URL of the first node, for a cluster client's ``from_url``."""
        return self.url

    @property
    def faults(self) -> FaultControl:
        """Faults on demand (RESPLITE.FAULT), e.g. ``faults.error("XREADGROUP", "-LOADING
        ...", times=2)``; needs ``enable-fault-command`` (on unless turned off)."""
        if self._control is None:
            raise RuntimeError("the server is not running")
        return FaultControl(self.execute)

    # -- housekeeping ----------------------------------------------------------------------

    def execute(self, *args: str | bytes | int) -> Any:
        """Send one command on the handle's own connection; returns the decoded reply."""
        if self._control is None:
            raise RuntimeError("the server is not running")
        return self._control.call(*args)

    def ping(self) -> bool:
        return self.execute("PING") == b"PONG"

    def flushall(self) -> None:
        self.execute("FLUSHALL")

    def reset(self) -> None:
        """Empty every database and let the clock run again at the system's time."""
        # A server in another process is reached through RESPLITE.CLOCK, which its owner
        # may have switched off; then its clock was never moved from here either.
        if isinstance(self._clock, LocalClock) or self.directives.get(
            "enable-clock-command", "no"
        ) != "no":
            self.clock.reset()
        if self.directives.get("enable-fault-command", "no") != "no":
            self.faults.clear()
        self.flushall()

    def client(self, **kwargs: Any) -> Any:
        """A redis-py client for this server (``redis`` must be installed)."""
        import redis

        return redis.Redis.from_url(self.url, **kwargs)

    def async_client(self, **kwargs: Any) -> Any:
        """A redis-py asyncio client for this server (``redis`` must be installed)."""
        import redis.asyncio

        return redis.asyncio.Redis.from_url(self.url, **kwargs)


def serve(
    *, isolation: str = "thread", startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    cluster: int = 0,
    **directives: Any,
) -> ServerHandle:
    """A handle on a server with ``directives``; enter it (``with``/``async with``) to start.

    ``isolation="process"`` runs the server in a child process instead of a thread.
    ``redis_version="7.2"`` makes it answer as that Redis (the ``redis-compat-version``
    directive: its commands, reply shapes and reported version).
    ``cluster=N`` starts a Redis Cluster of N nodes in one server instead (in the thread or
    the child process): ``handle.url`` is its first node, ``handle.cluster_nodes`` every
    node's (host, port), ``handle.cluster_url`` what ``redis.RedisCluster.from_url`` takes.
    """
    settings = dict(DEFAULT_DIRECTIVES)
    if cluster:
        settings["cluster-enabled"] = "yes"
        settings["cluster-nodes"] = str(cluster)
    private_socket = False
    for name, value in directives.items():
        if value is None:
            continue
        key, text = directive_text(name, value)
        if key == "unixsocket" and value is True:
            private_socket = True  # a fresh temporary folder, made when the server starts
            continue
        settings[key] = text
    return ServerHandle(
        settings, isolation=isolation, startup_timeout=startup_timeout,
        private_socket=private_socket,
    )
