"""MIGRATE inside the engine, through a scripted transport instead of sockets: the bytes it
sends (AUTH, SELECT only when the database changes, RESTORE with the TTL and REPLACE), how it
reads the replies, the one retry on a dropped link and none after a timeout, the cache's
limits and idle close, partial success, and the portable payloads."""

from __future__ import annotations

from collections import deque

import pytest

from resplite.commands import command_table
from resplite.engine.aof import parse_commands
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.migrate import CACHE_ITEMS, LinkError, MigrateLink, atoi
from resplite.engine.state import ServerState
from resplite.formats import rdb_format, rdb_values
from resplite.protocol.replies import ErrorReply, Status
from resplite.store.set import Limits, Set


class FakeLink:
    """Records what is sent; answers each read from a script (bytes, or a LinkError)."""

    def __init__(self, replies: list[bytes | LinkError]) -> None:
        self.sent = b""
        self.replies = deque(replies)
        self.closed = False

    def send(self, data: bytes, timeout_ms: int) -> None:
        self.sent += data

    def read_line(self, timeout_ms: int) -> bytes:
        if not self.replies:
            raise LinkError(False, "closed")
        reply = self.replies.popleft()
        if isinstance(reply, LinkError):
            raise reply
        return reply

    def close(self) -> None:
        self.closed = True


class FakeTransport:
    def __init__(self, *links: FakeLink) -> None:
        self.links = deque(links)
        self.opened: list[tuple[str, int, int]] = []

    def connect(self, host: str, port: int, timeout_ms: int) -> MigrateLink:
        self.opened.append((host, port, timeout_ms))
        if not self.links:
            raise LinkError(False, "refused")
        return self.links.popleft()


def _state(transport: FakeTransport, clock: Clock | None = None) -> tuple[ServerState, Client]:
    state = ServerState(Config(), clock, table=command_table(), migrate_transport=transport)
    return state, Client(state, 1, None)


def _error(reply: object) -> str:
    assert isinstance(reply, ErrorReply), reply
    return reply.message


def _run(state: ServerState, client: Client, *args: bytes | str | int) -> object:
    argv = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return state.dispatcher.execute(client, argv)


def test_one_write_with_auth_select_and_restores() -> None:
    link = FakeLink([b"+OK", b"+OK", b"+OK", b"+OK"])
    transport = FakeTransport(link)
    state, client = _state(transport)
    _run(state, client, "SET", "a", "1")
    _run(state, client, "SET", "b", "2")
    reply = _run(state, client, "MIGRATE", "localhost", "7001", "", "3", "0", "REPLACE",
                 "AUTH2", "u", "p", "KEYS", "a", "b", "nokey")
    assert reply is not None and not isinstance(reply, ErrorReply)
    assert transport.opened == [("localhost", 7001, 1000)]  # timeout 0 means 1000 ms
    sent = parse_commands(link.sent)
    assert sent[0] == [b"AUTH", b"u", b"p"]
    assert sent[1] == [b"SELECT", b"3"]
    assert [c[0] for c in sent[2:]] == [b"RESTORE", b"RESTORE"]
    assert [c[1:3] for c in sent[2:]] == [[b"a", b"0"], [b"b", b"0"]]
    assert all(c[4] == b"REPLACE" for c in sent[2:])
    assert _run(state, client, "EXISTS", "a", "b") == 0
    # The link is cached with its database: the next MIGRATE there sends no SELECT.
    link.sent = b""
    link.replies.extend([b"+OK"])
    _run(state, client, "SET", "c", "3", "PX", "5000")
    assert _run(state, client, "MIGRATE", "localhost", "7001", "c", "3", "100") is not None
    sent = parse_commands(link.sent)
    assert [c[0] for c in sent] == [b"RESTORE"]
    assert 0 < int(sent[0][2]) <= 5000
    assert len(state.migrate) == 1 and transport.opened == [("localhost", 7001, 1000)]


def test_a_dropped_link_is_retried_once_a_timeout_never() -> None:
    dropped = FakeLink([LinkError(False, "closed")])
    fresh = FakeLink([b"+OK", b"+OK"])
    transport = FakeTransport(dropped, fresh)
    state, client = _state(transport)
    _run(state, client, "SET", "a", "1")
    assert _run(state, client, "MIGRATE", "h", "1", "a", "0", "100") is not None
    assert dropped.closed and len(transport.opened) == 2
    assert _run(state, client, "EXISTS", "a") == 0

    slow = FakeLink([LinkError(True)])
    transport = FakeTransport(slow, FakeLink([b"+OK", b"+OK"]))
    state, client = _state(transport)
    _run(state, client, "SET", "a", "1")
    reply = _run(state, client, "MIGRATE", "h", "1", "a", "0", "100")
    assert _error(reply) == "IOERR error or timeout reading to target instance"
    assert len(transport.opened) == 1 and slow.closed and len(state.migrate) == 0
    assert _run(state, client, "EXISTS", "a") == 1


def test_keys_acknowledged_before_a_read_error_are_gone() -> None:
    link = FakeLink([b"+OK", b"+OK", b"+OK", LinkError(False, "closed")])  # SELECT first
    state, client = _state(FakeTransport(link))
    for key in ("a", "b", "c"):
        _run(state, client, "SET", key, key)
    reply = _run(state, client, "MIGRATE", "h", "1", "", "0", "100", "KEYS", "a", "b", "c")
    assert _error(reply) == "IOERR error or timeout reading to target instance"
    assert _run(state, client, "EXISTS", "a", "b", "c") == 1  # only c, unacknowledged


def test_the_first_target_error_is_reported_and_the_rest_moves() -> None:
    link = FakeLink([b"+OK", b"+OK", b"-BUSYKEY Target key name already exists.", b"+OK",
                     b"-ERR other"])
    state, client = _state(FakeTransport(link))
    for key in ("a", "b", "c", "d"):
        _run(state, client, "SET", key, key)
    reply = _run(state, client, "MIGRATE", "h", "1", "", "0", "100", "KEYS", "a", "b", "c",
                 "d")
    assert _error(reply) == ("ERR Target instance replied with error: BUSYKEY Target key "
                             "name already exists.")
    assert _run(state, client, "EXISTS", "a", "b", "c", "d") == 2  # b and d stay
    # The link's database is forgotten after an error: SELECT goes out again.
    link.sent = b""
    link.replies.extend([b"+OK", b"+OK"])
    _run(state, client, "MIGRATE", "h", "1", "b", "0", "100", "REPLACE")
    assert parse_commands(link.sent)[0] == [b"SELECT", b"0"]


def test_a_failed_auth_moves_nothing_even_if_restores_succeed() -> None:
    link = FakeLink([b"-ERR AUTH <password> called without any password configured", b"+OK",
                     b"+OK"])
    state, client = _state(FakeTransport(link))
    _run(state, client, "SET", "a", "1")
    reply = _run(state, client, "MIGRATE", "h", "1", "a", "0", "100", "AUTH", "pw")
    assert _error(reply) == ("ERR Target instance replied with error: ERR AUTH <password> "
                             "called without any password configured")
    assert _run(state, client, "EXISTS", "a") == 1


def test_unreachable_and_nokey() -> None:
    state, client = _state(FakeTransport())
    assert _run(state, client, "MIGRATE", "h", "1", "a", "0", "100") == Status("NOKEY")
    _run(state, client, "SET", "a", "1")
    assert _error(_run(state, client, "MIGRATE", "h", "1", "a", "0", "100")) == (
        "IOERR error or timeout connecting to the client")


def test_the_cache_is_bounded_and_idle_links_close() -> None:
    clock = Clock()
    clock.freeze()
    links = [FakeLink([b"+OK"] * 2) for _ in range(CACHE_ITEMS + 1)]
    state, client = _state(FakeTransport(*links), clock)
    for port in range(CACHE_ITEMS + 1):
        _run(state, client, "SET", "k", "v")
        assert _run(state, client, "MIGRATE", "h", port, "k", "0", "100") is not None
    assert len(state.migrate) == CACHE_ITEMS
    assert sum(link.closed for link in links) == 1
    clock.advance(10_000)
    state.migrate.close_idle()
    assert len(state.migrate) == CACHE_ITEMS  # 10 s idle is not more than 10 s
    clock.advance(1_000)
    state.migrate.close_idle()
    assert len(state.migrate) == 0 and all(link.closed for link in links)


def test_atoi_reads_ports_as_c_does() -> None:
    assert [atoi(t) for t in (b"6379", b" 12x", b"-5", b"+7", b"x", b"")] == [
        6379, 12, -5, 7, 0, 0]


def test_portable_payloads_hold_the_same_values() -> None:
    limits = Limits(512, 128, 64)
    listpack_set = Set.from_members([b"a", b"b", b"c"], limits, kind=1)
    payload = rdb_values.portable_payload(listpack_set)
    assert payload[0] == rdb_format.TYPE_SET
    assert payload[-10:-8] == (9).to_bytes(2, "little")
    assert rdb_values.payload_valid(payload)
    restored = rdb_values.parse_payload(payload, b"k")
    assert sorted(restored) == [b"a", b"b", b"c"]
    for value in (b"plain", Set.from_members([b"1", b"2"], limits)):
        assert rdb_values.portable_payload(value) == rdb_values.dump_payload(value)


@pytest.mark.parametrize("active_differs", [False, True])
def test_streams_go_in_the_oldest_form_that_holds_them(active_differs: bool) -> None:
    state, client = _state(FakeTransport())
    _run(state, client, "XADD", "s", "1-1", "a", "b")
    _run(state, client, "XGROUP", "CREATE", "s", "g", "0")
    _run(state, client, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    if active_differs:
        _run(state, client, "XGROUP", "CREATECONSUMER", "s", "g", "idle")
    value = client.db.peek(b"s")
    payload = rdb_values.portable_payload(value)
    kind = rdb_format.TYPE_STREAM_LISTPACKS_3 if active_differs \
        else rdb_format.TYPE_STREAM_LISTPACKS_2
    assert payload[0] == kind
    assert rdb_values.payload_valid(payload)
    restored = rdb_values.parse_payload(payload, b"s")
    assert rdb_values.dump_payload(restored) == rdb_values.dump_payload(value)
