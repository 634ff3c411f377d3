"""CONFIG SET takes effect on a running resplite, with time moved by the server's own clock.

The idle ``timeout`` is enforced by the server cron on the clock's monotonic reading, so the
test advances the clock instead of sleeping, then waits (for an event, not a duration) until
the next cron tick has closed the idle connection. The compat tests cover the directives
whose effect Redis shows the same way (proto-max-bulk-len, maxclients, requirepass,
maxmemory); this file covers the ones that need time.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import procs
from support.raw import RawClient
from support.servers import START_TIMEOUT

import resplite
from resplite.testing.embedded import ServerHandle


@pytest.fixture
def handle() -> Iterator[ServerHandle]:
    with resplite.serve() as h:
        yield h


def _conn(h: ServerHandle) -> RawClient:
    conn = RawClient(h.host, h.port)
    assert conn.call("PING") == b"+PONG\r\n"
    return conn


def test_timeout_closes_idle_connections_once_set(handle: ServerHandle) -> None:
    idle = _conn(handle)
    admin = _conn(handle)
    try:
        assert admin.call("CONFIG", "SET", "timeout", "1") == b"+OK\r\n"
        handle.clock.advance(5_000)
        assert idle.is_closed(timeout=3.0)
    finally:
        idle.close()
        admin.close()


def test_timeout_zero_keeps_idle_connections(handle: ServerHandle) -> None:
    admin = _conn(handle)
    try:
        assert admin.call("CONFIG", "SET", "timeout", "1") == b"+OK\r\n"
        assert admin.call("CONFIG", "SET", "timeout", "0") == b"+OK\r\n"
    finally:
        admin.close()
    idle = _conn(handle)
    try:
        handle.clock.advance(60_000)
        assert not idle.is_closed(timeout=0.5)  # several cron ticks
        assert idle.call("PING") == b"+PONG\r\n"
    finally:
        idle.close()


def test_blocked_and_multi_clients_are_not_timed_out(handle: ServerHandle) -> None:
    admin = _conn(handle)
    in_multi = _conn(handle)
    try:
        assert in_multi.call("MULTI") == b"+OK\r\n"
        assert admin.call("CONFIG", "SET", "timeout", "1") == b"+OK\r\n"
        handle.clock.advance(5_000)
        assert not in_multi.is_closed(timeout=0.5)
        assert in_multi.call("EXEC") == b"*0\r\n"
    finally:
        admin.close()
        in_multi.close()


def test_slowlog_threshold_and_length(handle: ServerHandle) -> None:
    conn = _conn(handle)
    try:
        assert conn.call("CONFIG", "SET", "slowlog-log-slower-than", "0",
                         "slowlog-max-len", "2") == b"+OK\r\n"
        for i in range(5):
            conn.call("ECHO", str(i))
        assert conn.call("SLOWLOG", "LEN") == b":2\r\n"
        assert conn.call("CONFIG", "SET", "slowlog-log-slower-than", "-1") == b"+OK\r\n"
        conn.call("SLOWLOG", "RESET")
        conn.call("ECHO", "x")
        assert conn.call("SLOWLOG", "LEN") == b":0\r\n"
    finally:
        conn.close()


def test_client_pause_ends_when_the_clock_passes_it(handle: ServerHandle) -> None:
    admin = _conn(handle)
    writer = _conn(handle)
    try:
        handle.clock.freeze()
        assert admin.call("CLIENT", "PAUSE", "60000", "WRITE") == b"+OK\r\n"
        writer.send("SET", "k", "v")
        writer.sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            writer.read_reply()
        writer.sock.settimeout(5)
        handle.clock.advance(60_000)
        assert writer.read_reply() == b"+OK\r\n"
    finally:
        handle.clock.resume()
        admin.close()
        writer.close()


def test_info_uptime_and_time_follow_the_clock(handle: ServerHandle) -> None:
    conn = _conn(handle)
    try:
        handle.clock.freeze()
        before = conn.call("TIME")
        uptime = _uptime(conn)
        handle.clock.advance(3_600_000)
        after = conn.call("TIME")
        assert int(after.split(b"\r\n")[2]) - int(before.split(b"\r\n")[2]) == 3600
        assert _uptime(conn) - uptime == 3600
    finally:
        handle.clock.resume()
        conn.close()


def _uptime(conn: RawClient) -> int:
    text = conn.call("INFO", "server").decode()
    return int(text.split("uptime_in_seconds:")[1].split("\r\n")[0])


def test_config_rewrite_keeps_comments_and_states_current_values(tmp_path: Path) -> None:
    from support.servers import free_port

    conf = tmp_path / "resplite.conf"
    conf.write_text(
        "# a comment the rewrite must keep\n"
        "maxmemory 10mb\n"
        "timeout 0\n"
        "maxmemory 20mb\n"
        "\n"
        "loglevel warning\n",
        encoding="utf-8",
    )
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "resplite", str(conf), "--port", str(port), "--save", ""],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        conn = _wait_conn(port, proc)
        try:
            assert conn.call("CONFIG", "SET", "timeout", "30", "maxclients", "77") == b"+OK\r\n"
            assert conn.call("CONFIG", "REWRITE") == b"+OK\r\n"
            info = conn.call("INFO", "server").decode()
            assert f"config_file:{conf.resolve()}\r\n" in info
        finally:
            conn.close()
    finally:
        procs.stop(proc)
    lines = conf.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# a comment the rewrite must keep"
    # As Redis: the first line takes the value (in the largest unit that divides it), the
    # repeat is blanked and runs of blank lines collapse.
    assert lines[1:4] == ["maxmemory 20mb", "timeout 30", ""]
    assert lines.count("maxmemory 20mb") == 1
    assert "maxclients 77" in lines
    assert f"port {port}" in lines


def _wait_conn(port: int, proc: subprocess.Popen) -> RawClient:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            return RawClient("127.0.0.1", port)
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_unix_socket_clients_are_listed_like_redis() -> None:
    with resplite.serve(unixsocket=True) as h:
        import socket as socketlib

        sock = socketlib.socket(socketlib.AF_UNIX)
        sock.connect(h.unix_socket)
        try:
            sock.sendall(b"CLIENT INFO\r\n")
            data = b""
            while not data.endswith(b"\n\r\n"):
                data += sock.recv(4096)
        finally:
            sock.close()
        line = data.split(b"\r\n", 1)[1].decode()
        fields = dict(word.partition("=")[::2] for word in line.split())
        assert fields["addr"] == fields["laddr"] == f"{h.unix_socket}:0"
        assert "U" in fields["flags"]


def _info_field(conn: RawClient, name: str) -> int:
    text = conn.call("INFO", "memory").decode()
    return int(text.split(f"{name}:", 1)[1].split("\r\n", 1)[0])


def test_lazy_free_after_unlink_del_and_flush(handle: ServerHandle) -> None:
    conn = _conn(handle)
    try:
        conn.call("CONFIG", "RESETSTAT")
        fields = [str(i) for i in range(200) for _ in (0, 1)]
        conn.call("HSET", "big", *fields)
        conn.call("SET", "small", "v")
        assert conn.call("UNLINK", "big", "small") == b":2\r\n"
        # The big hash is released once the reply is out; the small string at once.
        deadline = time.monotonic() + 5
        while _info_field(conn, "lazyfreed_objects") != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _info_field(conn, "lazyfreed_objects") == 1
        conn.call("HSET", "big", *fields)
        conn.call("DEL", "big")  # lazyfree-lazy-user-del is off: freed in the command
        assert _info_field(conn, "lazyfreed_objects") == 1
        conn.call("CONFIG", "SET", "lazyfree-lazy-user-del", "yes")
        conn.call("HSET", "big", *fields)
        conn.call("DEL", "big")
        for i in range(5):
            conn.call("SET", f"k{i}", "v")
        conn.call("FLUSHALL", "ASYNC")  # a lazily flushed database counts its keys
        deadline = time.monotonic() + 5
        while _info_field(conn, "lazyfreed_objects") != 7 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _info_field(conn, "lazyfreed_objects") == 7
        assert _info_field(conn, "lazyfree_pending_objects") == 0
    finally:
        conn.call("CONFIG", "SET", "lazyfree-lazy-user-del", "no")
        conn.close()


def test_dynamic_hz_scales_with_clients() -> None:
    from resplite.commands import command_table
    from resplite.engine.client import Client
    from resplite.engine.config import Config
    from resplite.engine.state import ServerState

    state = ServerState(Config(), table=command_table())
    assert state.current_hz() == 10
    client = Client(state, 0, None)
    state.clients.update((i, client) for i in range(4_001))
    assert state.current_hz() == 40  # 4001 clients: 10 -> 20 -> 40 (at most 200 a tick)
    state.config.set("dynamic-hz", "no")
    assert state.current_hz() == 10
    state.clients.clear()
