"""resplite.serve(): servers in a thread or a child process, their handles, and a clean stop.

Every test here runs under both isolations. A stopped server must leave nothing behind: no
thread, no child process, no open file descriptor, no socket file or temporary folder.
"""

from __future__ import annotations

import datetime
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio

import resplite
from resplite.testing.control import ControlError
from resplite.testing.embedded import ClockControl, ServerHandle, ServerStartError

ISOLATIONS = ["thread", "process"]


@pytest.fixture(params=ISOLATIONS)
def isolation(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def raw_ping(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        return sock.recv(64)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def os_threads() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def resplite_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("resplite")]


@pytest.fixture(scope="module")
def warmed_up() -> None:
    # uvloop opens one pipe and libuv starts its worker threads for the whole process the
    # first time they are needed; they are not a server's to close, so one server runs
    # before descriptors and threads are counted.
    with resplite.serve():
        pass


@pytest.fixture
def no_leftovers(warmed_up: None) -> Iterator[None]:
    """Fails the test if it leaves a thread, a descriptor or a child process behind."""
    fds, threads, tasks = open_fds(), resplite_threads(), os_threads()
    yield
    assert resplite_threads() == threads
    assert open_fds() <= fds
    # A joined thread's OS task may linger for a moment after join() returns.
    deadline = time.monotonic() + 2
    while not os_threads() <= tasks and time.monotonic() < deadline:
        time.sleep(0.001)
    assert os_threads() <= tasks


def test_serve_starts_on_an_ephemeral_port_and_stops_without_leftovers(
    isolation: str, no_leftovers: None
) -> None:
    with resplite.serve(isolation=isolation) as server:
        assert server.host == "127.0.0.1"
        assert server.port > 0
        assert server.unix_socket is None
        assert server.url == f"redis://127.0.0.1:{server.port}"
        assert raw_ping(server.port) == b"+PONG\r\n"
        assert server.running
        if isolation == "thread":
            assert server.pid == os.getpid()
        else:
            assert server.pid != os.getpid()
            child = server.pid
    assert not server.running
    with pytest.raises(OSError):
        raw_ping(server.port)
    if isolation == "process":
        assert not Path(f"/proc/{child}").exists()


def test_directives_take_underscores_or_dashes_and_python_values(isolation: str) -> None:
    directives = {"requirepass": "s3 cret", "maxmemory": "10mb", "maxmemory-policy": "allkeys-lru",
                  "enable_debug_command": True, "databases": 4}
    with resplite.serve(isolation=isolation, **directives) as server:
        assert server.url == f"redis://:s3%20cret@127.0.0.1:{server.port}"
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            assert sock.recv(64).startswith(b"-NOAUTH")
        client = redis.Redis.from_url(server.url, decode_responses=True)
        try:
            assert client.config_get("maxmemory") == {"maxmemory": "10485760"}
            assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
            assert client.config_get("enable-debug-command") == {"enable-debug-command": "yes"}
            assert client.config_get("databases") == {"databases": "4"}
            assert client.config_get("enable-clock-command") == {"enable-clock-command": "yes"}
        finally:
            client.close()


def test_a_private_unix_socket_is_removed_with_its_folder(
    isolation: str, no_leftovers: None
) -> None:
    with resplite.serve(isolation=isolation, unixsocket=True) as server:
        path = Path(server.unix_socket or "")
        assert path.is_socket()
        assert server.port == 0
        assert server.url == f"unix://{path}"
        client = redis.Redis.from_url(server.url)
        try:
            assert client.ping() is True
        finally:
            client.close()
    assert not path.parent.exists()


def test_a_bad_directive_is_refused_before_anything_starts(
    isolation: str, no_leftovers: None
) -> None:
    with pytest.raises(ServerStartError, match="no-such-directive"):
        resplite.serve(isolation=isolation, no_such_directive="1").start()
    with pytest.raises(ServerStartError, match="maxmemory"):
        resplite.serve(isolation=isolation, maxmemory="lots").start()


def test_a_port_in_use_is_reported_and_leaves_nothing_behind(
    isolation: str, no_leftovers: None
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ServerStartError):
            resplite.serve(isolation=isolation, port=port).start()


async def test_astart_reports_a_port_in_use_as_start_does(
    isolation: str, no_leftovers: None
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for begin in ("start", "astart"):
            server = resplite.serve(isolation=isolation, port=port)
            with pytest.raises(ServerStartError) as caught:
                if begin == "start":
                    server.start()
                else:
                    await server.astart()
            if isolation == "thread":
                assert str(caught.value).startswith("could not start: "), begin


async def test_async_with_starts_and_stops_without_blocking_the_loop(
    isolation: str, no_leftovers: None
) -> None:
    async with resplite.serve(isolation=isolation) as server:
        client = redis.asyncio.Redis.from_url(server.url)
        try:
            assert await client.ping() is True
            await client.set("k", "v")
            assert await client.get("k") == b"v"
        finally:
            await client.aclose()
    assert not server.running


def test_clock_methods_move_the_server_clock(isolation: str) -> None:
    with resplite.serve(isolation=isolation) as server:
        clock: ClockControl = server.clock
        clock.freeze()
        start = clock.get()
        assert server.execute("RESPLITE.CLOCK", "GET") == start
        assert clock.advance(1500) == start + 1500
        assert clock.advance(datetime.timedelta(seconds=2)) == start + 3500
        assert clock.set(start - 10_000) == start - 10_000
        when = datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)
        assert clock.set(when) == int(when.timestamp() * 1000)
        seconds, micros = server.execute("TIME")
        assert int(seconds) * 1000 + int(micros) // 1000 == int(when.timestamp() * 1000)
        with pytest.raises(ValueError):
            clock.advance(-1)
        with pytest.raises(ValueError):
            clock.set(-1)
        with pytest.raises(TypeError):
            clock.advance(1.5)  # type: ignore[arg-type]
        assert clock.get() == int(when.timestamp() * 1000)
        clock.reset()
        assert abs(clock.get() - time.time() * 1000) < 1000


def test_clock_advance_expires_keys_from_the_tests_thread(isolation: str) -> None:
    with resplite.serve(isolation=isolation) as server:
        server.clock.freeze()
        client = server.client()
        try:
            client.set("session", "x", px=60_000)
            server.clock.advance(59_999)
            assert client.dbsize() == 1
            server.clock.advance(1)
            assert client.dbsize() == 1 and client.pttl("session") == 0  # now == its time
            server.clock.advance(1)
            # The advance itself expired the key: it is gone without anybody reading it.
            assert client.dbsize() == 0
        finally:
            client.close()


def wait_until_blocked(server: ServerHandle, count: int = 1) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if f"blocked_clients:{count}" in server.execute("INFO", "clients").decode():
            return
        time.sleep(0.002)
    raise AssertionError("the client never blocked")


def test_clock_advance_times_out_a_blocked_client(isolation: str) -> None:
    with resplite.serve(isolation=isolation) as server:
        server.clock.freeze()
        client = server.client()
        replies: list[object] = []
        reader = threading.Thread(
            target=lambda: replies.append(client.xread({"quiet": "$"}, block=600_000))
        )
        try:
            reader.start()
            wait_until_blocked(server)
            server.clock.advance(599_999)
            reader.join(0.05)
            assert reader.is_alive()
            server.clock.advance(1)
            reader.join(5)
            assert not reader.is_alive()
            assert replies in ([None], [{}], [[]])
        finally:
            reader.join(5)
            client.close()


def test_the_clock_command_can_be_switched_off_but_the_handle_keeps_its_clock() -> None:
    with resplite.serve(enable_clock_command=False) as server:
        client = server.client()
        try:
            with pytest.raises(redis.ResponseError, match="enable-clock-command"):
                client.execute_command("RESPLITE.CLOCK", "GET")
        finally:
            client.close()
        server.clock.freeze()
        start = server.clock.get()
        assert server.clock.advance(10) == start + 10


def test_a_child_without_the_clock_command_still_resets_between_tests() -> None:
    with resplite.serve(isolation="process", enable_clock_command="no") as server:
        server.execute("SET", "k", "v")
        server.reset()
        assert server.execute("DBSIZE") == 0
        with pytest.raises(ControlError, match="enable-clock-command"):
            server.clock.freeze()


def test_shutdown_from_a_client_stops_the_embedded_server(isolation: str) -> None:
    server = resplite.serve(isolation=isolation).start()
    try:
        client = server.client()
        client.shutdown(nosave=True)  # redis-py expects the connection to drop, and checks
        client.close()
        deadline = time.monotonic() + 5
        while server.running and time.monotonic() < deadline:
            time.sleep(0.005)
        assert not server.running
    finally:
        server.stop()


# Start times are measured by bench/bench_startup.py, side by side with redis-server;
# a wall-clock assertion here would only measure how busy the test machine is.
@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_each_start_answers_pong_and_stops_cleanly(isolation: str) -> None:
    for _ in range(2):
        with resplite.serve(isolation=isolation) as server:
            assert raw_ping(server.port) == b"+PONG\r\n"
