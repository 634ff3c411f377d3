"""The push half of the engine without a socket: the channel registry, per-client outboxes
and their one write per batch, output buffer limits, notification flags and hooks, client
tracking, MONITOR lines, and the keyspace's write paths with and without the hooks.
"""

from __future__ import annotations

from typing import Any

import pytest

from resplite.commands import command_table
from resplite.engine import gates, notify
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config, ConfigError, format_limits, parse_limits
from resplite.engine.monitor import monitor_line, redact, repr_arg
from resplite.engine.state import ServerState
from resplite.store.keyspace import Database


class FakeConn:
    """A connection that records what is sent and can pretend to hold unsent bytes."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.unsent = 0
        self.aborted = False

    def deliver(self, reply: Any) -> None:
        raise AssertionError("not used here")

    def send(self, data: bytes) -> None:
        self.sent.append(data)

    def query_buffer_size(self) -> int:
        return 0

    def output_buffer_size(self) -> int:
        return self.unsent

    def set_authenticated(self, authenticated: bool) -> None:
        return None

    def set_max_bulk_len(self, limit: int) -> None:
        return None

    def close(self) -> None:
        self.aborted = True

    def abort(self) -> None:
        self.aborted = True

    def resume(self) -> None:
        return None


@pytest.fixture
def state() -> ServerState:
    return ServerState(Config(), table=command_table())


def _client(state: ServerState, cid: int, resp: int = 2) -> tuple[Client, FakeConn]:
    conn = FakeConn()
    client = Client(state, cid, conn)
    client.set_resp(resp)
    state.clients[cid] = client
    return client, conn


def _run(state: ServerState, client: Client, *argv: bytes) -> Any:
    state.current_client = client
    try:
        return state.dispatcher.execute(client, list(argv))
    finally:
        state.current_client = None


# -- registry and delivery ------------------------------------------------------------------------


def test_publish_is_one_send_per_subscriber_per_batch(state: ServerState) -> None:
    a, conn_a = _client(state, 1, resp=2)
    b, conn_b = _client(state, 2, resp=3)
    publisher, _ = _client(state, 3)
    _run(state, a, b"SUBSCRIBE", b"ch")
    _run(state, b, b"PSUBSCRIBE", b"c*")
    for i in range(100):
        assert _run(state, publisher, b"PUBLISH", b"ch", b"%d" % i) == 2
    assert conn_a.sent == [] and conn_b.sent == []  # nothing written until the flush
    state.output.flush()
    assert len(conn_a.sent) == 1 and len(conn_b.sent) == 1
    assert conn_a.sent[0].startswith(b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\n0\r\n")
    assert conn_a.sent[0].count(b"*3\r\n") == 100
    assert conn_b.sent[0].startswith(b">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n")
    assert conn_b.sent[0].count(b">4\r\n") == 100
    assert not state.output.pending


def test_registry_drops_empty_entries(state: ServerState) -> None:
    a, _ = _client(state, 1)
    _run(state, a, b"SUBSCRIBE", b"x", b"y")
    _run(state, a, b"PSUBSCRIBE", b"p*")
    _run(state, a, b"SSUBSCRIBE", b"s")
    assert set(state.pubsub.channels) == {b"x", b"y"}
    _run(state, a, b"UNSUBSCRIBE", b"x")
    assert set(state.pubsub.channels) == {b"y"} and a.pubsub
    state.forget_client(a)
    assert not state.pubsub.channels and not state.pubsub.patterns
    assert not state.pubsub.shard_channels and state.pubsub.subscription_total == 0


def test_subscribed_resp2_client_is_gated_and_resp3_is_not(state: ServerState) -> None:
    a, _ = _client(state, 1, resp=2)
    b, _ = _client(state, 2, resp=3)
    for client in (a, b):
        _run(state, client, b"SUBSCRIBE", b"x")
    assert a.gates & gates.CONTEXT and not b.gates & gates.CONTEXT
    assert _run(state, b, b"SET", b"k", b"v") == "OK"
    _run(state, a, b"UNSUBSCRIBE")
    assert not a.gates & gates.CONTEXT and not a.pubsub


def test_output_limits_drop_a_client_past_the_hard_limit(state: ServerState) -> None:
    state.config.set("client-output-buffer-limit", "pubsub 1000 500 60")
    a, conn = _client(state, 1)
    _run(state, a, b"SUBSCRIBE", b"ch")
    conn.unsent = 999
    state.output.push(a, b"x")
    state.output.flush()
    assert not conn.aborted
    conn.unsent = 1000
    state.output.push(a, b"x")
    state.output.flush()
    assert conn.aborted


def test_output_limits_soft_limit_needs_its_seconds(state: ServerState) -> None:
    clock = Clock()
    clock.freeze()
    state = ServerState(Config(), clock, table=command_table())
    state.config.set("client-output-buffer-limit", "pubsub 0 500 10")
    a, conn = _client(state, 1)
    _run(state, a, b"SUBSCRIBE", b"ch")
    conn.unsent = 600
    for step in (0, 5_000, 5_000):  # 10 s over the soft limit: still within its seconds
        clock.advance(step)
        state.output.push(a, b"x")
        state.output.flush()
        assert not conn.aborted
    clock.advance(1)
    state.output.push(a, b"x")
    state.output.flush()
    assert conn.aborted


def test_output_limits_parse_and_format() -> None:
    limits = parse_limits("pubsub 1mb 2kb 3 replica 1 2 3")
    assert limits["pubsub"].hard == 1024 * 1024 and limits["slave"].soft_seconds == 3
    config = Config()
    config.set("client-output-buffer-limit", "pubsub 1 2 3")
    assert format_limits(config["client-output-buffer-limit"]) == (
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 1 2 3")
    for bad in ("pubsub 1 2", "master 1 2 3", "x 1 2 3", "pubsub 1 2 -3", "pubsub a 2 3"):
        with pytest.raises(ConfigError):
            parse_limits(bad)


# -- notifications --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "shown"), [
    ("", ""), ("KEA", "AKE"), ("g$lshzxetd", "A"), ("Kg", "gK"), ("Ekm", None), ("mEK", "KEm"),
    ("nK", "nK"), ("AEn", "AE"),
])
def test_notify_flags_round_trip(text: str, shown: str | None) -> None:
    if shown is None:
        with pytest.raises(ValueError):
            notify.parse_flags(text)
        return
    flags = notify.parse_flags(text)
    # n is outside A: printed only when A is not complete, as Redis does.
    assert notify.format_flags(flags) == shown


def test_hooks_are_installed_only_when_wanted(state: ServerState) -> None:
    db = state.keyspace[0]
    assert db.on_new is None and db.on_expired is None
    state.config.set("notify-keyspace-events", "Exn")
    state._set_notify_flags("notify-keyspace-events", state.config["notify-keyspace-events"])
    assert db.on_new is not None and db.on_expired is not None
    state._set_notify_flags("notify-keyspace-events", notify.parse_flags("xn"))
    assert db.on_new is None and db.on_expired is None  # neither K nor E: nothing to publish


def test_evict_reports_evicted_and_invalidates(state: ServerState) -> None:
    watcher, conn = _client(state, 1)
    state._set_notify_flags("", notify.parse_flags("Ee"))
    _run(state, watcher, b"SUBSCRIBE", b"__keyevent@0__:evicted")
    state.output.flush()
    writer, _ = _client(state, 2)
    _run(state, writer, b"SET", b"k", b"v")
    assert state.evict(0, b"k") and not state.evict(0, b"k")
    state.output.flush()
    assert conn.sent[-1] == (b"*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:evicted\r\n"
                             b"$1\r\nk\r\n")


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def time_ms(self) -> int:
        return self.now


@pytest.mark.parametrize("hooks", [False, True])
def test_database_writes_agree_with_and_without_hooks(hooks: bool) -> None:
    """The write path taken with notification hooks installed keeps the same data, expiry
    and access bookkeeping as the fast path."""
    clock = _Clock()
    db = Database(0, clock)
    seen: list[tuple[str, bytes]] = []
    if hooks:
        db.on_new = lambda i, k: seen.append(("new", k))
        db.on_expired = lambda i, k: seen.append(("expired", k))
        db._update_slow_writes()
    db.set(b"a", b"1")
    db.set(b"a", b"2")
    db.set_expire(b"a", 1_500)
    db.set(b"a", b"3", keep_ttl=True)
    db.add(b"b", b"x")
    db.set(b"c", b"y")
    db.set_expire(b"c", 1_100)
    clock.now = 1_200
    db.set(b"c", b"z")  # written over after its time: expired, then new
    assert db.data == {b"a": b"3", b"b": b"x", b"c": b"z"}
    assert db.expires == {b"a": 1_500}
    assert set(db.access) == set(db.data)
    if hooks:
        assert seen == [("new", b"a"), ("new", b"b"), ("new", b"c"), ("expired", b"c"),
                        ("new", b"c")]


# -- tracking -------------------------------------------------------------------------------------


def test_tracking_remembers_reads_and_invalidates_once(state: ServerState) -> None:
    reader, conn = _client(state, 1, resp=3)
    writer, _ = _client(state, 2)
    _run(state, reader, b"CLIENT", b"TRACKING", b"on")
    _run(state, reader, b"MGET", b"a", b"b")
    assert state.tracking.total_keys == 2 and state.tracking.total_items == 2
    _run(state, writer, b"SET", b"a", b"1")
    _run(state, writer, b"SET", b"a", b"2")
    state.output.flush()
    assert conn.sent == [b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n"]
    assert state.tracking.total_keys == 1
    _run(state, writer, b"FLUSHALL")
    state.output.flush()
    assert conn.sent[-1] == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    assert state.tracking.total_keys == 0


def test_tracking_bcast_groups_keys_per_flush(state: ServerState) -> None:
    reader, conn = _client(state, 1, resp=3)
    writer, _ = _client(state, 2)
    _run(state, reader, b"CLIENT", b"TRACKING", b"on", b"BCAST", b"PREFIX", b"u:")
    for key in (b"u:2", b"x", b"u:1", b"u:2"):
        _run(state, writer, b"SET", key, b"v")
    state.output.flush()
    assert conn.sent == [b">2\r\n$10\r\ninvalidate\r\n*2\r\n$3\r\nu:1\r\n$3\r\nu:2\r\n"]


# -- MONITOR --------------------------------------------------------------------------------------


def test_monitor_escaping_and_redaction() -> None:
    assert repr_arg(b'a "b"\\\n\r\t\x07\x08\x00\xff~') == (
        b'"a \\"b\\"\\\\\\n\\r\\t\\a\\b\\x00\\xff~"')
    assert redact("auth", [b"AUTH", b"u", b"p"]) == [b"AUTH", b"(redacted)", b"(redacted)"]
    assert redact("hello", [b"HELLO", b"3", b"SETNAME", b"n", b"AUTH", b"u", b"p"]) == [
        b"HELLO", b"3", b"SETNAME", b"n", b"AUTH", b"(redacted)", b"(redacted)"]
    assert monitor_line(1_700_000_000_000_042, 3, "1.2.3.4:5", [b"GET", b"k"]) == (
        b'+1700000000.000042 [3 1.2.3.4:5] "GET" "k"\r\n')


def test_monitor_sees_commands_of_every_client(state: ServerState) -> None:
    mon, conn = _client(state, 1)
    other, _ = _client(state, 2)
    other.addr = "10.0.0.1:1234"
    assert _run(state, mon, b"MONITOR") == "OK"
    _run(state, other, b"SET", b"k", b"v")
    _run(state, other, b"CONFIG", b"GET", b"hz")  # admin: not shown
    _run(state, other, b"NOSUCH")  # refused before it ran: not shown
    state.output.flush()
    assert len(conn.sent) == 1
    assert conn.sent[0].endswith(b' [0 10.0.0.1:1234] "SET" "k" "v"\r\n')
    assert _run(state, mon, b"GET", b"k").message == (
        "ERR Replica can't interact with the keyspace")
