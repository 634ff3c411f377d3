"""Limits a client cannot get around, next to a real Redis 7.0 where Redis has them too.

The query buffer limit, proto-max-bulk-len, the inline-line cap however the bytes arrive,
protected mode with Redis's DENIED text, CONFIG SET bind / port listening again; clients that
pipeline and never read: closed when they have not authenticated (Redis 7.4.3 / 8.0, and
Debian's 7.0.15), served along with a newcomer when they have; and the limits resplite adds:
the bound on a MULTI queue. After every limit the server still answers everyone else.
"""

from __future__ import annotations

import contextlib
import re
import select
import socket
import time
from collections.abc import Callable, Iterator

import pytest
from support.raw import RawClient, encode_command
from support.servers import ServerProcess, free_port, require_reference, start_resplite

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
        if not redis:
            made = [start_resplite(*extra)]
        else:
            # resplite answers as the reference's version beside it.
            reference = require_reference()
            made = [reference.start_redis(*extra)]
            made.append(reference.start_resplite(*extra))
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


# -- clients that pipeline and never read ------------------------------------------------------

NON_READERS = 100
PIPELINE = encode_command(["GET", "k"]) * 2000  # 40 KB of requests, 66 KB of -NOAUTH
PASSWORD = "secret"


@contextlib.contextmanager
def _non_readers(server: ServerProcess, count: int, *, authenticate: bool = False,
                 first: tuple[tuple[str, ...], ...] = ()) -> Iterator[list[socket.socket]]:
    """``count`` connections (authenticated, or having sent the commands ``first``, their
    replies read), non-blocking, that the test never reads from; all closed on the way
    out."""
    with contextlib.ExitStack() as stack:
        socks = []
        for _ in range(count):
            conn = RawClient(server.host, server.port, timeout=30)
            stack.callback(conn.close)
            if authenticate:
                assert conn.call("AUTH", PASSWORD) == b"+OK\r\n"
            for command in first:
                conn.call(*command)
            conn.sock.setblocking(False)
            socks.append(conn.sock)
        yield socks


def _pipeline_until_closed(socks: list[socket.socket], seconds: float = 30.0) -> int:
    """Send :data:`PIPELINE` on each connection whenever it takes more, never reading, until
    the server has closed every one (sending fails) or ``seconds`` pass; how many it closed."""
    open_socks = set(socks)
    deadline = time.monotonic() + seconds
    while open_socks and time.monotonic() < deadline:
        _, writable, _ = select.select([], list(open_socks), [], 0.2)
        for sock in writable:
            try:
                sock.send(PIPELINE)
            except BlockingIOError:
                continue
            except OSError:  # reset or broken pipe: the server closed it
                open_socks.discard(sock)
    return len(socks) - len(open_socks)


def _info_field(conn: RawClient, field: str) -> int | None:
    found = re.search(rb"\r\n" + field.encode() + rb":(\d+)\r\n", conn.call("INFO", "everything"))
    return int(found[1]) if found else None


def _admin(server: ServerProcess) -> RawClient:
    conn = RawClient(server.host, server.port, timeout=30)
    assert conn.call("AUTH", PASSWORD) == b"+OK\r\n"
    return conn


@pytest.mark.redis_version("7.4")
def test_unauthenticated_clients_that_pipeline_without_reading_are_all_closed(
        servers: StartServers) -> None:
    """Redis (7.4.3, 8; Debian's 7.0.15 too) drops a client that has not authenticated once
    its unsent replies pass its reply buffer: 100 of them pipelining -NOAUTH requests are
    all closed at once, having made the server read little, and everyone else is served."""
    for server in servers("--requirepass", PASSWORD):
        admin = _admin(server)
        try:
            read_before = _info_field(admin, "total_net_input_bytes") or 0
            dropped_before = _info_field(admin, "client_output_buffer_limit_disconnections")
            with _non_readers(server, NON_READERS) as socks:
                assert _pipeline_until_closed(socks) == NON_READERS, server.name
            read = (_info_field(admin, "total_net_input_bytes") or 0) - read_before
            # Each was read once or twice at most (a read is 16 KB in Redis, up to 256 KB
            # in resplite), not for as long as it kept sending.
            assert read < NON_READERS * 512 * 1024, (server.name, read)
            dropped = _info_field(admin, "client_output_buffer_limit_disconnections")
            if dropped_before is not None:  # Redis 7.0 has no such field
                assert dropped == dropped_before + NON_READERS, server.name
            assert admin.call("PING") == b"+PONG\r\n"
            _alive_with_password(server)
        finally:
            admin.close()


@pytest.mark.redis_version("7.4")
def test_reset_puts_a_client_back_under_the_unauthenticated_cap(
        servers: StartServers) -> None:
    """The cap is on clients not authenticated now: RESET logs a client out (the default
    user needs a password), and a failed AUTH does not log one in."""
    for server in servers("--requirepass", PASSWORD):
        with _non_readers(server, 1, first=(("AUTH", PASSWORD), ("RESET",))) as socks:
            assert _pipeline_until_closed(socks) == 1, server.name
        with _non_readers(server, 1, first=(("AUTH", "wrong"),)) as socks:
            assert _pipeline_until_closed(socks) == 1, server.name
        _alive_with_password(server)


def test_a_new_client_is_served_while_clients_pipeline_without_reading(
        servers: StartServers) -> None:
    """100 logged-in clients pipeline GETs and read nothing: neither server closes them
    (no output limit for normal clients by default), and a new client is answered while
    they are all still there. resplite stops reading from a client whose replies it
    cannot send, and shares each turn of its loop among the clients with work, so the
    pipelines neither fill its memory nor keep the newcomer waiting."""
    for server in servers("--requirepass", PASSWORD):
        admin = _admin(server)
        try:
            assert admin.call("SET", "k", "v" * 100) == b"+OK\r\n"
            with _non_readers(server, NON_READERS, authenticate=True) as socks:
                sent = dict.fromkeys(socks, 0)
                while min(sent.values()) < 256 * 1024:  # 13,000 GETs each
                    _, writable, _ = select.select([], socks, [], 10)
                    assert writable, server.name
                    for sock in writable:
                        with contextlib.suppress(BlockingIOError):
                            sent[sock] += sock.send(PIPELINE)
                canary = RawClient(server.host, server.port, timeout=30)
                try:
                    canary.send("AUTH", PASSWORD)
                    canary.send("PING")
                    assert canary.read_reply() == b"+OK\r\n"
                    assert canary.read_reply() == b"+PONG\r\n"
                finally:
                    canary.close()
                listing = admin.call("CLIENT", "LIST").decode()
                assert listing.count("\n") >= NON_READERS + 1, server.name
                if server.name == "resplite":
                    # What each holds: one read of requests, a transport's worth of replies.
                    for line in listing.splitlines():
                        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
                        if fields.get("cmd") == "get":
                            assert int(fields["qbuf"]) <= 512 * 1024, line
                            assert int(fields["omem"]) <= 512 * 1024, line
        finally:
            admin.close()


def _alive_with_password(server: ServerProcess) -> None:
    conn = RawClient(server.host, server.port)
    try:
        assert conn.call("AUTH", PASSWORD) == b"+OK\r\n"
        assert conn.call("PING") == b"+PONG\r\n"
    finally:
        conn.close()


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


def _loopback_is_local() -> bool:
    """Whether the reference takes every 127.x.x.x client as local (Redis 7.2 on; 7.0 only
    127.0.0.1)."""
    major, minor = (int(part) for part in require_reference().line.split("."))
    return (major, minor) >= (7, 2)


def _outsider() -> tuple[str, str | None]:
    """An address the reference does not take as local, and the one to connect to: 127.0.0.2
    for Redis 7.0, else an address of this machine that is not loopback (the test skips
    without one; the servers must then bind it too)."""
    if not _loopback_is_local():
        return "127.0.0.2", None
    outside = _local_non_loopback_address()
    if outside is None:
        pytest.skip("no address of this machine that Redis 7.2+ takes as not local")
    return outside, outside


def _connect_from(source: str, server: ServerProcess, target: str | None = None) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect((target or server.host, server.port))
    return sock


def test_protected_mode_denies_non_local_clients_as_redis(servers: StartServers) -> None:
    # 127.0.0.2 is a loopback address but not "local" to Redis 7.0 (only 127.0.0.1 and ::1
    # are); 7.2 takes every 127.x.x.x as local.
    sources = [] if _loopback_is_local() else ["127.0.0.2"]
    outside = _local_non_loopback_address()
    if outside is None and not sources:
        pytest.skip("no address of this machine that Redis 7.2+ takes as not local")
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
        if _loopback_is_local():
            sock = _connect_from("127.0.0.2", server)
            sock.sendall(b"PING\r\n")
            sock.settimeout(5)
            assert sock.recv(100) == b"+PONG\r\n", server.name
            sock.close()
        _alive(server)


def test_protected_mode_denied_text_is_redis_byte_for_byte(servers: StartServers) -> None:
    texts = []
    source, target = _outsider()
    bind = ("--bind", "127.0.0.1", target) if target else ()
    for server in servers("--protected-mode", "yes", *bind):
        sock = _connect_from(source, server, target)
        texts.append(_closed(sock))
        sock.close()
    assert texts[0] == texts[1]


def test_protected_mode_lets_clients_in_with_a_password_or_when_off(servers: StartServers) -> None:
    source, target = _outsider()
    bind = ("--bind", "127.0.0.1", target) if target else ()
    for server in servers("--protected-mode", "yes", "--requirepass", "pw", *bind):
        sock = _connect_from(source, server, target)
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
        denied = _connect_from(source, server, target)
        assert (_closed(denied) or b"").startswith(b"-DENIED")
        denied.close()
        assert admin.call("CONFIG", "SET", "protected-mode", "no") == b"+OK\r\n"
        allowed = _connect_from(source, server, target)
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
