"""Limits a client cannot get around, next to a real Redis 7.0 where Redis has them too.

The query buffer limit, proto-max-bulk-len, the inline-line cap however the bytes arrive,
protected mode with Redis's DENIED text, CONFIG SET bind / port listening again; and the
limits resplite adds or takes from newer Redis: the bound on a MULTI queue and the 1 KB of
unsent replies a never-authenticated client may hold (Redis 7.4.3 / 8.0). After every limit
the server still answers everyone else.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator

import pytest
from support.raw import RawClient
from support.servers import ServerProcess, free_port, redis_server_path, start_redis, start_resplite

MB = 1 << 20


def _closed(sock: socket.socket, timeout: float = 5.0) -> bytes | None:
    """What the server sent before closing the connection, or None if it stayed open."""
    sock.settimeout(timeout)
    got = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return got
            got += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        return got


# servers(*directives, redis=True): a redis-server (unless told not to) and a resplite.
StartServers = Callable[..., list[ServerProcess]]


@pytest.fixture
def servers() -> Iterator[StartServers]:
    started: list[ServerProcess] = []

    def make(*extra: str, redis: bool = True) -> list[ServerProcess]:
        if redis and redis_server_path() is None:
            pytest.skip("redis-server is not installed")
        made = [start_redis(*extra)] if redis else []
        made.append(start_resplite(*extra))
        started.extend(made)
        return made

    yield make
    for server in started:
        server.stop()


def _alive(server: ServerProcess) -> None:
    conn = RawClient(server.host, server.port)
    try:
        assert conn.call("PING") == b"+PONG\r\n"
    finally:
        conn.close()


def test_query_buffer_limit_closes_the_client_as_redis(servers: StartServers) -> None:
    for server in servers("--client-query-buffer-limit", "1mb"):
        conn = RawClient(server.host, server.port)
        # One unfinished 3 MB bulk: Redis closes the client once its query buffer passes
        # the limit, with no reply.
        conn.send_raw(b"*2\r\n$3\r\nSET\r\n$3000000\r\n")
        with contextlib.suppress(ConnectionError):
            for _ in range(24):
                conn.send_raw(b"x" * 65536)
        assert _closed(conn.sock) == b"", server.name
        conn.close()
        _alive(server)


def test_a_large_value_under_the_limit_passes(servers: StartServers) -> None:
    for server in servers("--client-query-buffer-limit", "1mb"):
        conn = RawClient(server.host, server.port)
        assert conn.call("SET", "k", b"x" * (MB - 1000)) == b"+OK\r\n", server.name
        assert conn.call("STRLEN", "k") == b":%d\r\n" % (MB - 1000)
        conn.close()


def test_proto_max_bulk_len_refuses_the_header(servers: StartServers) -> None:
    replies = []
    for server in servers():
        conn = RawClient(server.host, server.port)
        assert conn.call("CONFIG", "SET", "proto-max-bulk-len", "1mb") == b"+OK\r\n"
        conn.send_raw(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % (MB + 1))
        replies.append(_closed(conn.sock))
        conn.close()
        _alive(server)
    assert replies[0] == replies[1] == b"-ERR Protocol error: invalid bulk length\r\n"


@pytest.mark.parametrize("size", [100_000, 1_000_000])
def test_inline_lines_past_the_cap_are_refused(servers: StartServers, size: int) -> None:
    replies = []
    for server in servers():
        conn = RawClient(server.host, server.port)
        conn.send_raw(b"ECHO " + b"a" * size + b"\r\n")
        replies.append(_closed(conn.sock))
        conn.close()
    assert replies[0] == replies[1] == b"-ERR Protocol error: too big inline request\r\n"


def test_inline_cap_does_not_depend_on_how_the_bytes_arrive(servers: StartServers) -> None:
    """Redis reads 16 KB at a time and so lets a line of up to ~80 KB through when it is sent
    at once; resplite refuses every line over 64 KB, in one read or many."""
    (ours,) = servers(redis=False)
    for chunks in ([b"ECHO " + b"a" * 70_000 + b"\r\n"],
                   [b"ECHO " + b"a" * 40_000, b"a" * 30_000 + b"\r\n"]):
        conn = RawClient(ours.host, ours.port)
        for chunk in chunks:
            conn.send_raw(chunk)
        assert _closed(conn.sock) == b"-ERR Protocol error: too big inline request\r\n"
        conn.close()
    conn = RawClient(ours.host, ours.port)
    conn.send_raw(b"ECHO " + b"a" * 60_000 + b"\r\n")
    assert conn.read_reply() == b"$60000\r\n" + b"a" * 60_000 + b"\r\n"
    conn.close()


def test_multi_queue_is_bounded_by_the_query_buffer_limit(servers: StartServers) -> None:
    (ours,) = servers("--client-query-buffer-limit", "1mb", redis=False)
    conn = RawClient(ours.host, ours.port)
    assert conn.call("MULTI") == b"+OK\r\n"
    for _ in range(3):
        assert conn.call("SET", "k", b"v" * 300_000) == b"+QUEUED\r\n"
    conn.send("SET", "k", b"v" * 300_000)
    assert _closed(conn.sock) == (b"-ERR Transaction discarded: the queued commands exceed "
                                  b"client-query-buffer-limit\r\n")
    conn.close()
    _alive(ours)


@pytest.mark.redis_version("7.4")
def test_query_buffer_disconnections_are_counted(servers: StartServers) -> None:
    """INFO's client_query_buffer_limit_disconnections counts both ways past the limit: a
    query buffer, and a MULTI queue (which Redis counts as part of it); CONFIG RESETSTAT
    zeroes it. Redis 8.6.3 counts these same two closings."""
    (ours,) = servers("--client-query-buffer-limit", "1mb", redis=False)
    admin = RawClient(ours.host, ours.port)

    def counted() -> bytes:
        info = admin.call("INFO", "stats")
        return info.split(b"client_query_buffer_limit_disconnections:")[1].split(b"\r\n")[0]

    assert counted() == b"0"
    conn = RawClient(ours.host, ours.port)
    conn.send_raw(b"*2\r\n$3\r\nSET\r\n$3000000\r\n")
    with contextlib.suppress(ConnectionError):
        for _ in range(24):
            conn.send_raw(b"x" * 65536)
    assert _closed(conn.sock) == b""
    conn.close()
    assert counted() == b"1"
    conn = RawClient(ours.host, ours.port)
    assert conn.call("MULTI") == b"+OK\r\n"
    for _ in range(3):
        assert conn.call("SET", "k", b"v" * 300_000) == b"+QUEUED\r\n"
    conn.send("SET", "k", b"v" * 300_000)
    assert _closed(conn.sock) is not None
    conn.close()
    assert counted() == b"2"
    assert admin.call("CONFIG", "RESETSTAT") == b"+OK\r\n"
    assert counted() == b"0"
    admin.close()


def test_a_failed_transaction_keeps_nothing_queued(servers: StartServers) -> None:
    (ours,) = servers("--client-query-buffer-limit", "1mb", redis=False)
    conn = RawClient(ours.host, ours.port)
    assert conn.call("MULTI") == b"+OK\r\n"
    assert conn.call("NOSUCH").startswith(b"-ERR unknown command")
    for _ in range(10):  # ten times the limit: EXEC will not run them, so none is kept
        assert conn.call("SET", "k", b"v" * 300_000) == b"+QUEUED\r\n"
    assert conn.call("EXEC").startswith(b"-EXECABORT")
    conn.close()


@pytest.mark.redis_version("7.4")
def test_a_never_authenticated_client_cannot_pile_up_replies(servers: StartServers) -> None:
    (ours,) = servers("--requirepass", "secret", redis=False)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((ours.host, ours.port))
    sock.settimeout(0.5)
    # Never reads its -NOAUTH replies: once they no longer fit in the socket buffers and
    # more than 1 KB waits in the server, the server drops the connection (sending fails).
    closed = False
    deadline = time.monotonic() + 20
    while not closed and time.monotonic() < deadline:
        try:
            sock.sendall(b"PING\r\n" * 10_000)
        except TimeoutError:
            continue
        except OSError:
            closed = True
    assert closed
    sock.close()
    authed = RawClient(ours.host, ours.port)
    assert authed.call("AUTH", "secret") == b"+OK\r\n"
    assert authed.call("PING") == b"+PONG\r\n"
    authed.close()


# -- protected mode -----------------------------------------------------------------------------


def _local_non_loopback_address() -> str | None:
    """An address of this machine that is not loopback (no packet leaves: UDP connect only)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("198.51.100.1", 9))
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def _connect_from(source: str, server: ServerProcess, target: str | None = None) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect((target or server.host, server.port))
    return sock


def test_protected_mode_denies_non_local_clients_as_redis(servers: StartServers) -> None:
    # 127.0.0.2 is a loopback address but not "local" to Redis (only 127.0.0.1 and ::1 are).
    sources = ["127.0.0.2"]
    outside = _local_non_loopback_address()
    bind = ["127.0.0.1"]
    if outside is not None:
        sources.append(outside)
        bind.append(outside)
    for server in servers("--protected-mode", "yes", "--bind", *bind):
        for source in sources:
            sock = _connect_from(source, server, target=source if source != "127.0.0.2" else None)
            got = _closed(sock)
            sock.close()
            assert got is not None and got.startswith(b"-DENIED Redis is running in protected "
                                                      b"mode"), (server.name, source, got)
            assert got.endswith(b"the server to start accepting connections from the "
                                b"outside.\r\n")
        _alive(server)


def test_protected_mode_denied_text_is_redis_byte_for_byte(servers: StartServers) -> None:
    texts = []
    for server in servers("--protected-mode", "yes"):
        sock = _connect_from("127.0.0.2", server)
        texts.append(_closed(sock))
        sock.close()
    assert texts[0] == texts[1]


def test_protected_mode_lets_clients_in_with_a_password_or_when_off(servers: StartServers) -> None:
    for server in servers("--protected-mode", "yes", "--requirepass", "pw"):
        sock = _connect_from("127.0.0.2", server)
        sock.sendall(b"AUTH pw\r\nPING\r\n")
        sock.settimeout(5)
        got = b""
        while got.count(b"\r\n") < 2:
            got += sock.recv(1024)
        assert got == b"+OK\r\n+PONG\r\n", server.name
        sock.close()
        admin = RawClient(server.host, server.port)
        assert admin.call("AUTH", "pw") == b"+OK\r\n"
        assert admin.call("CONFIG", "SET", "requirepass", "") == b"+OK\r\n"
        denied = _connect_from("127.0.0.2", server)
        assert (_closed(denied) or b"").startswith(b"-DENIED")
        denied.close()
        assert admin.call("CONFIG", "SET", "protected-mode", "no") == b"+OK\r\n"
        allowed = _connect_from("127.0.0.2", server)
        allowed.sendall(b"PING\r\n")
        allowed.settimeout(5)
        assert allowed.recv(100) == b"+PONG\r\n"
        allowed.close()
        admin.close()


# -- CONFIG SET bind / port ---------------------------------------------------------------------


def test_config_set_port_listens_on_the_new_port(servers: StartServers) -> None:
    for server in servers():
        admin = RawClient(server.host, server.port)
        new_port = free_port()
        assert admin.call("CONFIG", "SET", "port", str(new_port)) == b"+OK\r\n", server.name
        fresh = RawClient(server.host, new_port)
        assert fresh.call("PING") == b"+PONG\r\n"
        assert fresh.call("CONFIG", "GET", "port").endswith(b"%d\r\n" % new_port)
        # Established connections survive; the old port no longer accepts.
        assert admin.call("PING") == b"+PONG\r\n"
        with pytest.raises(OSError):
            socket.create_connection((server.host, server.port), timeout=1).close()
        # Back, so the fixture can stop it where it expects it.
        assert fresh.call("CONFIG", "SET", "port", str(server.port)) == b"+OK\r\n"
        fresh.close()
        admin.close()
        _alive(server)


def test_config_set_bind_refuses_addresses_it_cannot_bind_as_redis(servers: StartServers) -> None:
    replies = []
    for server in servers():
        admin = RawClient(server.host, server.port)
        replies.append([
            admin.call("CONFIG", "SET", "bind", "127.0.0.1 192.0.2.254"),
            admin.call("CONFIG", "GET", "bind"),
            admin.call("CONFIG", "SET", "bind", "127.0.0.1 -192.0.2.254"),
            admin.call("CONFIG", "GET", "bind"),
            admin.call("CONFIG", "SET", "bind", "127.0.0.1"),
        ])
        admin.close()
        _alive(server)
    assert replies[0] == replies[1]
    assert replies[1][0] == (b"-ERR CONFIG SET failed (possibly related to argument 'bind') - "
                             b"Failed to bind to specified addresses.\r\n")


def test_config_set_port_in_use_is_refused_as_redis(servers: StartServers) -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    replies = []
    try:
        for server in servers():
            admin = RawClient(server.host, server.port)
            replies.append(admin.call("CONFIG", "SET", "port", str(busy.getsockname()[1])))
            assert admin.call("CONFIG", "GET", "port").endswith(b"%d\r\n" % server.port)
            admin.close()
            _alive(server)
    finally:
        busy.close()
    assert replies[0] == replies[1]
    assert b"Unable to listen on this port" in replies[1]
