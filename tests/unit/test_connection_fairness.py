"""A connection's batch runs in slices and writes large replies as it goes; the loop's
turns are shared among the connections with work left.

The connection runs on a recording transport and a real event loop (``call_soon`` is how a
slice hands over). Time never decides a test: the slice length is set to zero, so every
check point ends a slice (and the turn's budget to zero where a test counts turns, so every
turn serves one waiting connection), and the tests count slices and writes instead of
measuring them.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

# Imported before any test patches a threshold: these modules copy it when first imported.
from resplite.commands import command_table, sorted_sets, streams_groups, streams_read
from resplite.engine.config import Config
from resplite.engine.output import UNAUTH_OUTPUT_LIMIT
from resplite.engine.state import ServerState
from resplite.server import connection as connection_module
from resplite.server import turns as turns_module
from resplite.server.connection import FLUSH_BYTES, Connection
from resplite.server.turns import Waiting


def enc(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


class RecordingTransport:
    """Records writes; reports a write buffer as large as the test says."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.buffered = 0
        self.reading = True
        self.closed = False
        self.protocol: Connection | None = None
        self.high_water = 1 << 62

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.buffered += len(data)
        if self.buffered > self.high_water and self.protocol is not None:
            self.protocol.pause_writing()

    def drain(self) -> None:
        self.buffered = 0
        if self.protocol is not None:
            self.protocol.resume_writing()

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 40000) if name in ("peername", "sockname") else default

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


def connect() -> tuple[ServerState, Connection, RecordingTransport]:
    state = ServerState(Config(), table=command_table())
    conn = Connection(state, state.dispatcher)
    transport = RecordingTransport()
    transport.protocol = conn
    conn.connection_made(transport)  # type: ignore[arg-type]
    return state, conn, transport


def run_callbacks(loop: asyncio.AbstractEventLoop) -> None:
    loop.run_until_complete(asyncio.sleep(0))


def feed(loop: asyncio.AbstractEventLoop, conn: Connection, data: bytes) -> None:
    """Deliver ``data`` from the event loop, as a read does, and let every slice run."""
    loop.call_soon(conn.data_received, data)
    run_callbacks(loop)
    while conn.sliced:
        run_callbacks(loop)


def test_a_long_pipeline_runs_in_slices_and_answers_everything(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    _, conn, transport = connect()
    requests = 1000
    loop.call_soon(conn.data_received, enc(b"INCR", b"n") * requests)
    run_callbacks(loop)
    # The first slice ended at a check point and left the rest for a later turn.
    assert conn.sliced
    answered = b"".join(transport.writes).count(b"\r\n")
    assert 0 < answered < requests
    slices = 1
    while conn.sliced:
        run_callbacks(loop)
        slices += 1
    replies = b"".join(transport.writes)
    assert replies == b"".join(b":%d\r\n" % i for i in range(1, requests + 1))
    assert slices >= 2
    assert transport.reading


def test_short_batches_are_not_sliced(loop: asyncio.AbstractEventLoop,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    _, conn, transport = connect()
    feed(loop, conn, enc(b"SET", b"k", b"v") * 16)
    assert not conn.sliced
    assert transport.writes == [b"+OK\r\n" * 16]


def test_large_replies_are_written_as_they_come(loop: asyncio.AbstractEventLoop) -> None:
    _, conn, transport = connect()
    value = b"x" * (FLUSH_BYTES * 2)
    feed(loop, conn, enc(b"SET", b"big", value))
    transport.writes.clear()
    feed(loop, conn, enc(b"GET", b"big") * 40)
    # Written as they come, 16 values at most at a time: never the 40 joined at once.
    assert len(transport.writes) >= 3
    assert max(map(len, transport.writes)) <= 16 * (len(value) + 20)
    assert b"".join(transport.writes) == (b"$%d\r\n%b\r\n" % (len(value), value)) * 40


def test_a_client_that_does_not_read_stops_its_batch(loop: asyncio.AbstractEventLoop) -> None:
    _, conn, transport = connect()
    value = b"x" * FLUSH_BYTES
    feed(loop, conn, enc(b"SET", b"big", value))
    transport.writes.clear()
    transport.high_water = 4 * FLUSH_BYTES
    feed(loop, conn, enc(b"GET", b"big") * 100)
    # Writing paused: the rest waits in the reader, unparsed and unanswered.
    held = b"".join(transport.writes).count(b"$%d\r\n" % len(value))
    assert conn.writing_paused and not transport.reading
    assert held < 40
    loop.call_soon(transport.drain)
    run_callbacks(loop)
    while conn.writing_paused or conn.sliced:
        loop.call_soon(transport.drain)
        run_callbacks(loop)
    assert b"".join(transport.writes).count(b"$%d\r\n" % len(value)) == 100


def test_the_normal_output_limit_drops_a_client_whose_replies_pile_up(
        loop: asyncio.AbstractEventLoop) -> None:
    _, conn, transport = connect()
    feed(loop, conn, enc(b"CONFIG", b"SET", b"client-output-buffer-limit",
                         b"normal 1mb 0 0"))
    feed(loop, conn, enc(b"SET", b"big", b"x" * FLUSH_BYTES))
    feed(loop, conn, enc(b"GET", b"big") * 100)
    assert transport.closed
    assert sum(map(len, transport.writes)) < 2 << 20


# -- requests with many arguments, replies made in pieces, other clients in between -------


def turn(loop: asyncio.AbstractEventLoop) -> None:
    """One turn of the event loop: the callbacks scheduled so far run, no more."""
    run_callbacks(loop)


def connect_to(state: ServerState) -> tuple[Connection, RecordingTransport]:
    conn = Connection(state, state.dispatcher)
    transport = RecordingTransport()
    transport.protocol = conn
    conn.connection_made(transport)  # type: ignore[arg-type]
    return conn, transport


def fill_stream(loop: asyncio.AbstractEventLoop, conn: Connection, key: bytes,
                n: int) -> None:
    for first in range(1, n + 1, 1000):
        feed(loop, conn, b"".join(
            enc(b"XADD", key, b"%d-0" % i, b"f1", b"%08d" % i, b"f2", b"v%d" % (i % 7))
            for i in range(first, min(first + 1000, n + 1))))


def expected_range(state: ServerState, key: bytes) -> bytes:
    from resplite.commands.streams_common import entries_raw

    stream = state.keyspace[0].peek(key)
    return bytes(entries_raw(stream, 0, (1 << 128) - 1))


def test_a_canary_is_answered_between_slices_of_a_pipeline(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    state, conn, transport = connect()
    canary, canary_transport = connect_to(state)
    loop.call_soon(conn.data_received, enc(b"INCR", b"n") * 2000)
    turn(loop)
    assert conn.sliced
    loop.call_soon(canary.data_received, enc(b"PING"))
    turn(loop)
    # The canary was answered while the batch still had requests left.
    assert canary_transport.writes == [b"+PONG\r\n"]
    assert conn.sliced
    while conn.sliced:
        turn(loop)
    assert b"".join(transport.writes) == b"".join(b":%d\r\n" % i for i in range(1, 2001))


def test_a_pipeline_of_writes_that_wake_readers_still_runs_in_slices(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    monkeypatch.setattr(turns_module, "TURN_NS", 0)
    state, conn, transport = connect()
    feed(loop, conn, enc(b"XGROUP", b"CREATE", b"s", b"g", b"$", b"MKSTREAM"))
    transport.writes.clear()
    readers = []
    for i in range(60):
        reader, reader_transport = connect_to(state)
        feed(loop, reader, enc(b"XREADGROUP", b"GROUP", b"g", b"c%d" % i, b"BLOCK", b"0",
                               b"STREAMS", b"s", b">"))
        readers.append(reader_transport)
    assert state.blocking.count == 60
    canary, canary_transport = connect_to(state)
    # Every XADD wakes a reader: serving it is work of the batch, which still yields.
    loop.call_soon(conn.data_received, b"".join(
        enc(b"XADD", b"s", b"%d-1" % i, b"f", b"v") for i in range(1, 51)))
    turn(loop)
    assert conn.sliced
    loop.call_soon(canary.data_received, enc(b"PING"))
    turn(loop)
    # The canary was answered while the batch still had requests left.
    assert canary_transport.writes == [b"+PONG\r\n"]
    assert b"".join(transport.writes).count(b"-1\r\n") < 50
    while conn.sliced:
        turn(loop)
    assert b"".join(transport.writes) == b"".join(
        b"$%d\r\n%d-1\r\n" % (len(b"%d-1" % i), i) for i in range(1, 51))
    assert state.blocking.count == 10
    assert [bool(t.writes) for t in readers] == [True] * 50 + [False] * 10


def test_a_request_with_many_arguments_is_framed_over_several_turns(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    state, conn, transport = connect()
    conn.reader.element_quota = 5000
    canary, canary_transport = connect_to(state)
    feed(loop, conn, enc(b"MSET", b"k10", b"a", b"k119999", b"b"))
    transport.writes.clear()
    # Six digits of count: framed by the element mode, the quota at a time.
    keys = [b"k%d" % i for i in range(120000)]
    # One read delivers the whole request, as a large read of a fast client does.
    loop.call_soon(conn.data_received, enc(b"DEL", *keys) + enc(b"EXISTS", b"k10"))
    turn(loop)
    assert conn.sliced and not transport.writes
    order = count_slices(loop, monkeypatch)
    loop.call_soon(canary.data_received, enc(b"PING"))
    while conn.sliced:
        turn(loop)
    assert canary_transport.writes == [b"+PONG\r\n"]
    # A few quotas a slice at most: many slices for 24 quotas.
    assert sum(c is conn for c in order) >= 5
    assert b"".join(transport.writes) == b":2\r\n:0\r\n"


@pytest.mark.parametrize("resp", [2, 3])
def test_a_large_range_is_written_in_parts_made_as_it_goes(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch, resp: int) -> None:
    state, conn, transport = connect()
    feed(loop, conn, enc(b"HELLO", b"%d" % resp))
    fill_stream(loop, conn, b"s", 20000)
    expected = expected_range(state, b"s")
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    canary, canary_transport = connect_to(state)
    transport.writes.clear()
    loop.call_soon(conn.data_received, enc(b"XRANGE", b"s", b"-", b"+") + enc(b"XLEN", b"s"))
    turn(loop)
    assert conn.sliced and conn.producing is not None
    loop.call_soon(canary.data_received, enc(b"PING"))
    turns = 1
    while conn.sliced:
        turn(loop)
        turns += 1
    assert canary_transport.writes == [b"+PONG\r\n"]
    assert turns > 3
    # Many writes, none anywhere near the whole reply; together exactly the general path's
    # bytes (the same in RESP2 and RESP3), then the next reply.
    assert len(transport.writes) > 10
    assert max(map(len, transport.writes)) < len(expected) // 4
    assert b"".join(transport.writes) == expected + b":20000\r\n"


def test_a_range_being_sent_is_the_range_when_it_was_asked(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    state, conn, transport = connect()
    fill_stream(loop, conn, b"s", 10000)
    expected = expected_range(state, b"s")
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    other, other_transport = connect_to(state)
    transport.writes.clear()
    loop.call_soon(conn.data_received, enc(b"XRANGE", b"s", b"-", b"+") + enc(b"XLEN", b"s"))
    turn(loop)
    assert conn.producing is not None
    # Another client deletes, trims and adds in between.
    feed(loop, other, enc(b"XDEL", b"s", b"5000-0", b"9999-0") + enc(b"XTRIM", b"s", b"MAXLEN",
                                                                      b"100")
         + enc(b"XADD", b"s", b"20000-0", b"f", b"v"))
    assert other_transport.writes == [b":2\r\n:9898\r\n$7\r\n20000-0\r\n"]
    while conn.sliced:
        turn(loop)
    assert b"".join(transport.writes) == expected + b":101\r\n"


def test_pushes_wait_for_the_reply_being_sent(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    state, conn, transport = connect()
    fill_stream(loop, conn, b"s", 10000)
    expected = expected_range(state, b"s")
    feed(loop, conn, enc(b"HELLO", b"3") + enc(b"SUBSCRIBE", b"ch"))
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    publisher, _ = connect_to(state)
    transport.writes.clear()
    loop.call_soon(conn.data_received, enc(b"XRANGE", b"s", b"-", b"+") + enc(b"PING"))
    turn(loop)
    assert conn.producing is not None
    feed(loop, publisher, enc(b"PUBLISH", b"ch", b"hello"))
    while conn.sliced:
        turn(loop)
    message = b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n"
    assert b"".join(transport.writes) == expected + message + b"+PONG\r\n"


def test_the_output_limit_closes_a_client_that_does_not_read_a_large_range(
        loop: asyncio.AbstractEventLoop) -> None:
    _, conn, transport = connect()
    fill_stream(loop, conn, b"s", 20000)
    feed(loop, conn, enc(b"CONFIG", b"SET", b"client-output-buffer-limit", b"normal 256kb 0 0"))
    transport.writes.clear()
    feed(loop, conn, enc(b"XRANGE", b"s", b"-", b"+"))
    assert transport.closed
    # Dropped as soon as a piece took it past the limit: the rest was never made.
    assert sum(map(len, transport.writes)) < (256 << 10) + 128 * 1024
    assert conn.producing is None


def test_a_client_that_does_not_read_stops_a_large_range(
        loop: asyncio.AbstractEventLoop) -> None:
    state, conn, transport = connect()
    fill_stream(loop, conn, b"s", 20000)
    expected = expected_range(state, b"s")
    transport.writes.clear()
    transport.high_water = 2 * FLUSH_BYTES
    feed(loop, conn, enc(b"XRANGE", b"s", b"-", b"+") + enc(b"PING"))
    assert conn.writing_paused and conn.producing is not None
    assert sum(map(len, transport.writes)) < 4 * FLUSH_BYTES
    while conn.writing_paused or conn.sliced:
        loop.call_soon(transport.drain)
        run_callbacks(loop)
    assert b"".join(transport.writes) == expected + b"+PONG\r\n"


def test_replies_held_for_the_append_only_file_count_against_the_output_limit(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    state, conn, transport = connect()
    feed(loop, conn, enc(b"CONFIG", b"SET", b"client-output-buffer-limit", b"normal 1mb 0 0"))
    feed(loop, conn, enc(b"SET", b"big", b"x" * FLUSH_BYTES))
    # The log always has something not yet written (a transaction being logged, of which
    # before_reply never writes a part): every reply is held for a turn.
    state.aof.buffer.append(b"*1\r\n$4\r\nPING\r\n")
    state.aof.multi_open = True
    most = 0
    call_soon = loop.call_soon

    def watched_call_soon(callback: Callable[..., object], *args: Any,
                          **kwargs: Any) -> asyncio.Handle:
        # What the held replies are when the connection's release runs.
        if callback == conn.release:
            def release() -> None:
                nonlocal most
                most = max(most, sum(map(len, conn.held)))
                conn.release()

            return call_soon(release, *args, **kwargs)
        return call_soon(callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_soon", watched_call_soon)
    transport.writes.clear()
    feed(loop, conn, enc(b"GET", b"big") * 100)
    # Held at most a slice's replies at a time, and the client that does not read is
    # dropped at its limit although nothing it was sent reached the transport yet.
    assert 0 < most <= 2 * FLUSH_BYTES + 17 * (FLUSH_BYTES + 16)
    assert transport.closed
    assert sum(map(len, transport.writes)) < 1 << 20


def test_a_large_range_inside_multi_or_a_script_is_the_range_when_it_ran(
        loop: asyncio.AbstractEventLoop) -> None:
    state, conn, transport = connect()
    fill_stream(loop, conn, b"s", 6000)
    expected = expected_range(state, b"s")
    transport.writes.clear()
    feed(loop, conn, enc(b"MULTI") + enc(b"XRANGE", b"s", b"-", b"+")
         + enc(b"XDEL", b"s", b"1-0", b"3000-0") + enc(b"EXEC"))
    assert b"".join(transport.writes) == (b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n" + expected
                                          + b":2\r\n")
    transport.writes.clear()
    after_xdel = expected_range(state, b"s")
    feed(loop, conn, enc(b"EVAL", b"local r = redis.call('XRANGE', KEYS[1], '-', '+') "
                                  b"redis.call('XDEL', KEYS[1], '2-0') return r", b"1", b"s"))
    assert b"".join(transport.writes) == after_xdel


@pytest.mark.parametrize("resp", [2, 3])
def test_a_large_range_with_a_count_in_parts(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch, resp: int) -> None:
    from resplite.commands.streams_common import entries_raw

    state, conn, transport = connect()
    feed(loop, conn, enc(b"HELLO", b"%d" % resp))
    fill_stream(loop, conn, b"s", 12000)
    feed(loop, conn, enc(b"XDEL", b"s", b"150-0", b"151-0", b"5000-0"))
    stream = state.keyspace[0].peek(b"s")
    expected = bytes(entries_raw(stream, (100 << 64) + 1, (11000 << 64), 9000))
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    transport.writes.clear()
    feed(loop, conn, enc(b"XRANGE", b"s", b"(100-0", b"11000", b"COUNT", b"9000"))
    assert len(transport.writes) > 3
    assert b"".join(transport.writes) == expected
    assert expected.startswith(b"*9000\r\n")


# -- the other large stream reads: XREVRANGE, XREAD, XREADGROUP --------------------------

LARGE_READS = {
    "xrevrange": enc(b"XREVRANGE", b"s", b"+", b"-"),
    "xrevrange-count": enc(b"XREVRANGE", b"s", b"9000", b"(20", b"COUNT", b"8000"),
    "xread": enc(b"XREAD", b"COUNT", b"1000000", b"STREAMS", b"s", b"0"),
    "xread-streams": enc(b"XREAD", b"STREAMS", b"t", b"s", b"s", b"0", b"0", b"5000"),
    "xreadgroup": enc(b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b">"),
    "xreadgroup-noack": enc(b"XREADGROUP", b"GROUP", b"g", b"c", b"NOACK", b"STREAMS", b"t",
                            b"s", b">", b">"),
}
CHANGES = {
    "xdel": enc(b"XDEL", b"s", b"1-0", b"5000-0", b"9999-0"),
    # Whole nodes and part of one: the oldest entries, then all but the newest.
    "xtrim": enc(b"XTRIM", b"s", b"MAXLEN", b"9950"),
    "xtrim-most": enc(b"XTRIM", b"s", b"MAXLEN", b"150"),
    "xadd": enc(b"XADD", b"s", b"20000-0", b"f", b"v"),
    "del": enc(b"DEL", b"s"),
}
GROUP_STATE_ARGV = [[b"XPENDING", b"s", b"g"], [b"XINFO", b"GROUPS", b"s"],
                    [b"XINFO", b"CONSUMERS", b"s", b"g"]]
GROUP_STATE = b"".join(enc(*argv) for argv in GROUP_STATE_ARGV)


def stream_setup(loop: asyncio.AbstractEventLoop, conn: Connection, resp: int) -> None:
    feed(loop, conn, enc(b"HELLO", b"%d" % resp))
    fill_stream(loop, conn, b"s", 10000)
    feed(loop, conn, enc(b"XADD", b"t", b"1-0", b"f", b"v") + enc(b"XGROUP", b"CREATE", b"s",
                                                                   b"g", b"0")
         + enc(b"XGROUP", b"CREATE", b"t", b"g", b"0"))


def whole(loop: asyncio.AbstractEventLoop, resp: int, requests: bytes) -> tuple[bytes, bytes]:
    """The replies to ``requests`` after :func:`stream_setup`, every read answered whole (the
    general path), and the group state then (idle times aside: the clock runs)."""
    from resplite.commands import streams_common, streams_read

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(streams_common, "CHUNKED_ENTRIES", 1 << 62)
        mp.setattr(streams_read, "CHUNKED_ENTRIES", 1 << 62)
        _, conn, transport = connect()
        stream_setup(loop, conn, resp)
        transport.writes.clear()
        feed(loop, conn, requests)
        replies = b"".join(transport.writes)
        transport.writes.clear()
        feed(loop, conn, GROUP_STATE)
        return replies, strip_idle(b"".join(transport.writes))


def strip_idle(data: bytes) -> bytes:
    """XINFO CONSUMERS without its idle and inactive times."""
    import re

    return re.sub(rb"(idle|inactive)\r\n:\d+", rb"\1\r\n:0", data)


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("read", list(LARGE_READS))
def test_a_large_read_is_sent_in_parts_as_it_was_when_asked(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch, read: str,
        change: str) -> None:
    resp = 3 if change in ("xdel", "del") else 2
    expected, group_state = whole(loop, resp, LARGE_READS[read] + enc(b"PING"))
    state, conn, transport = connect()
    stream_setup(loop, conn, resp)
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    other, other_transport = connect_to(state)
    feed(loop, other, enc(b"HELLO", b"%d" % resp))
    other_transport.writes.clear()
    transport.writes.clear()
    loop.call_soon(conn.data_received, LARGE_READS[read] + enc(b"PING"))
    turn(loop)
    assert conn.producing is not None
    assert sum(map(len, transport.writes)) < len(expected) // 2
    # What XREADGROUP does to the group is done when it runs, before its reply is sent
    # (asked without letting the loop turn).
    assert other.client is not None
    from resplite.protocol.encoder import encode

    asked = b"".join(encode(state.dispatcher.execute(other.client, argv), resp)
                     for argv in GROUP_STATE_ARGV)
    assert strip_idle(asked) == group_state
    # Another client changes the stream while the reply is being sent.
    feed(loop, other, CHANGES[change])
    assert conn.producing is not None
    while conn.sliced:
        turn(loop)
    assert len(transport.writes) > 5
    assert b"".join(transport.writes) == expected


def test_large_reads_inside_multi_or_a_script_are_the_data_when_they_ran(
        loop: asyncio.AbstractEventLoop) -> None:
    reads = [LARGE_READS[name] for name in ("xrevrange", "xread-streams", "xreadgroup")]
    multi = (enc(b"MULTI") + b"".join(reads) + enc(b"XDEL", b"s", b"1-0", b"3000-0")
             + enc(b"XTRIM", b"s", b"MAXLEN", b"10") + enc(b"EXEC"))
    script = enc(b"EVAL", b"local a = redis.call('XREVRANGE', KEYS[1], '+', '-') "
                          b"local b = redis.call('XREAD', 'STREAMS', KEYS[1], '0') "
                          b"redis.call('XDEL', KEYS[1], '2-0') "
                          b"local c = redis.call('XREADGROUP', 'GROUP', 'g', 'd', 'STREAMS', "
                          b"KEYS[1], '>') redis.call('XTRIM', KEYS[1], 'MAXLEN', '5') "
                          b"return {a, b, c}", b"1", b"s")
    for resp in (2, 3):
        for requests in (multi, script):
            expected, group_state = whole(loop, resp, requests)
            _, conn, transport = connect()
            stream_setup(loop, conn, resp)
            transport.writes.clear()
            feed(loop, conn, requests)
            assert b"".join(transport.writes) == expected
            assert expected.count(b"10000-0") >= 3
            transport.writes.clear()
            feed(loop, conn, GROUP_STATE)
            assert strip_idle(b"".join(transport.writes)) == group_state


# -- the loop's turns shared among busy connections; what a client that does not read costs --


class RecordingQueue(deque[Waiting]):
    """The loop's queue of waiting connections, recording each taken for a slice."""

    def __init__(self, waiting: Iterable[Waiting], order: list[Waiting]) -> None:
        super().__init__(waiting)
        self.order = order

    def popleft(self) -> Waiting:
        conn = super().popleft()
        self.order.append(conn)
        return conn


def count_slices(loop: asyncio.AbstractEventLoop,
                 monkeypatch: pytest.MonkeyPatch) -> list[Waiting]:
    """Record every slice run from the loop's queue, in order (the connection that ran
    it): a slice is a connection taken from the queue (turns.py, ``next_turn``)."""
    order: list[Waiting] = []
    turns = turns_module.turns_of(loop)
    monkeypatch.setattr(turns, "queue", RecordingQueue(turns.queue, order))
    return order


def test_a_newcomer_is_served_before_every_busy_connection_has_had_a_slice(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    state, _, _ = connect()
    busy = [connect_to(state) for _ in range(100)]
    for conn, _ in busy:
        loop.call_soon(conn.data_received, enc(b"INCR", b"n") * 500)
    turn(loop)
    assert all(conn.sliced for conn, _ in busy)
    # Waiting for their turn, they read nothing more: the rest waits in the kernel.
    assert not any(transport.reading for _, transport in busy)
    # From now on every turn of the loop does one slice of work.
    monkeypatch.setattr(turns_module, "TURN_NS", 0)
    order = count_slices(loop, monkeypatch)
    # A request or a few run at once, whatever the turn has done.
    canary, canary_transport = connect_to(state)
    loop.call_soon(canary.data_received, enc(b"PING"))
    turn(loop)
    assert canary_transport.writes == [b"+PONG\r\n"]
    # More than that waits for the next turn, at the head of the queue: one slice per turn
    # (a turn of the old scheme gave each of the 100 one), and the newcomer's goes first.
    canary_transport.writes.clear()
    order.clear()
    loop.call_soon(canary.data_received, enc(b"PING") * 100)
    while not canary_transport.writes:
        turn(loop)
    # (The turn already scheduled when it arrived may have served one busy connection.)
    assert canary in order[:2]
    assert len(order) <= 3
    assert any(conn.sliced for conn, _ in busy)
    while canary.sliced or any(conn.sliced for conn, _ in busy):
        turn(loop)
    assert b"".join(canary_transport.writes) == b"+PONG\r\n" * 100
    answered = sorted(int(line[1:]) for _, transport in busy
                      for line in b"".join(transport.writes).split(b"\r\n") if line)
    assert answered == list(range(1, 100 * 500 + 1))
    assert all(transport.reading for _, transport in busy)


def test_waiting_connections_get_their_slices_in_turn(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    state, _, _ = connect()
    conns = [connect_to(state)[0] for _ in range(3)]
    for conn in conns:
        loop.call_soon(conn.data_received, enc(b"INCR", b"n") * 3000)
    turn(loop)
    monkeypatch.setattr(turns_module, "TURN_NS", 0)
    order = count_slices(loop, monkeypatch)
    for _ in range(9):
        turn(loop)
    # Round robin: each goes once before any goes again.
    served = order[:9]
    assert len(served) == 9
    for i in range(0, 9, 3):
        assert set(map(id, served[i:i + 3])) == set(map(id, conns))


def test_a_turn_gives_each_waiting_connection_at_most_one_slice(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    monkeypatch.setattr(turns_module, "TURN_NS", 1 << 62)
    state, _, _ = connect()
    conns = [connect_to(state)[0] for _ in range(5)]
    for conn in conns:
        loop.call_soon(conn.data_received, enc(b"INCR", b"n") * 1000)
    turn(loop)
    assert all(conn.sliced for conn in conns)
    order = count_slices(loop, monkeypatch)
    # One turn's work, run here rather than from the loop: each once, however large the
    # budget, and those with work left wait for the next turn.
    turns_module.turns_of(loop).next_turn()
    assert sorted(map(id, order)) == sorted(map(id, conns))
    assert all(conn.sliced for conn in conns)


def unauthenticated(loop: asyncio.AbstractEventLoop) -> tuple[ServerState, Connection,
                                                               RecordingTransport]:
    """A server with a password, and a connection that has not authenticated."""
    state, admin, _ = connect()
    feed(loop, admin, enc(b"CONFIG", b"SET", b"requirepass", b"secret"))
    conn, transport = connect_to(state)
    return state, conn, transport


def test_an_unauthenticated_pipeline_of_too_many_replies_is_dropped_at_once(
        loop: asyncio.AbstractEventLoop) -> None:
    state, conn, transport = unauthenticated(loop)
    feed(loop, conn, enc(b"GET", b"k") * 2000)
    # 2000 -NOAUTH replies are 66 KB: dropped once 16 KB of them waited, none written.
    assert transport.closed
    assert sum(map(len, transport.writes)) <= UNAUTH_OUTPUT_LIMIT
    assert state.output.disconnections == 1
    assert conn.client is not None and conn.client.commands_processed < 1000


def test_an_unauthenticated_client_within_the_cap_is_answered(
        loop: asyncio.AbstractEventLoop) -> None:
    state, conn, transport = unauthenticated(loop)
    feed(loop, conn, enc(b"GET", b"k") * 100)
    assert not transport.closed
    assert b"".join(transport.writes).count(b"-NOAUTH") == 100
    transport.writes.clear()
    feed(loop, conn, enc(b"AUTH", b"secret") + enc(b"GET", b"k") * 2000)
    assert not transport.closed
    assert b"".join(transport.writes) == b"+OK\r\n" + b"$-1\r\n" * 2000
    assert state.output.disconnections == 0


def test_reset_puts_a_client_back_under_the_unauthenticated_cap(
        loop: asyncio.AbstractEventLoop) -> None:
    state, conn, transport = unauthenticated(loop)
    feed(loop, conn, enc(b"AUTH", b"secret") + enc(b"RESET"))
    assert b"".join(transport.writes) == b"+OK\r\n+RESET\r\n"
    feed(loop, conn, enc(b"GET", b"k") * 2000)
    assert transport.closed
    assert state.output.disconnections == 1


def test_an_unauthenticated_client_that_does_not_read_is_dropped_past_the_cap(
        loop: asyncio.AbstractEventLoop) -> None:
    state, conn, transport = unauthenticated(loop)
    # The kernel holds no more: what is written stays in the transport.
    transport.buffered = UNAUTH_OUTPUT_LIMIT - 100
    feed(loop, conn, enc(b"GET", b"k") * 10)
    assert transport.closed
    assert state.output.disconnections == 1


def test_output_limit_disconnections_are_counted_in_info(
        loop: asyncio.AbstractEventLoop) -> None:
    state, conn, transport = connect()
    feed(loop, conn, enc(b"CONFIG", b"SET", b"client-output-buffer-limit", b"normal 1mb 0 0"))
    feed(loop, conn, enc(b"SET", b"big", b"x" * FLUSH_BYTES))
    other, other_transport = connect_to(state)
    feed(loop, other, enc(b"GET", b"big") * 100)
    assert other_transport.closed
    transport.writes.clear()
    feed(loop, conn, enc(b"INFO", b"stats"))
    info = b"".join(transport.writes)
    assert b"\r\nclient_output_buffer_limit_disconnections:1\r\n" in info
    assert b"\r\nclient_query_buffer_limit_disconnections:0\r\n" in info
    feed(loop, conn, enc(b"CONFIG", b"RESETSTAT"))
    assert state.output.disconnections == 0


def test_query_buffer_disconnections_are_counted(loop: asyncio.AbstractEventLoop) -> None:
    state, conn, _ = connect()
    feed(loop, conn, enc(b"CONFIG", b"SET", b"client-query-buffer-limit", b"1mb"))
    other, other_transport = connect_to(state)
    feed(loop, other, b"*2\r\n$3\r\nSET\r\n$3000000\r\n" + b"x" * (1100 * 1024))
    assert other_transport.closed
    multi, multi_transport = connect_to(state)
    feed(loop, multi, enc(b"MULTI") + enc(b"SET", b"k", b"v" * 600_000) * 2)
    assert multi_transport.closed
    assert state.qbuf_limit_disconnections == 2


def test_the_cron_drops_a_client_over_its_soft_limit_for_too_long(
        loop: asyncio.AbstractEventLoop) -> None:
    state, conn, _ = connect()
    feed(loop, conn, enc(b"CONFIG", b"SET", b"client-output-buffer-limit", b"normal 0 64kb 1"))
    feed(loop, conn, enc(b"SET", b"big", b"x" * 100))
    other, other_transport = connect_to(state)
    other_transport.buffered = 100 * 1024  # it reads nothing: its replies stay here
    feed(loop, other, enc(b"GET", b"big"))
    assert not other_transport.closed and other.client is not None
    assert other.client.obuf_soft_since
    # Nothing more is written to it; only the cron sees that the seconds have passed.
    other.client.obuf_soft_since -= 2000
    state.output.check_soft_limits(state.clients.values())
    assert other_transport.closed
    assert state.output.disconnections == 1


def test_reads_and_writes_are_counted_in_info(loop: asyncio.AbstractEventLoop) -> None:
    state, conn, transport = connect()
    for _ in range(5):
        feed(loop, conn, enc(b"PING"))
    assert (state.reads_processed, state.writes_processed) == (5, 5)
    transport.writes.clear()
    feed(loop, conn, enc(b"INFO", b"stats"))
    info = b"".join(transport.writes)
    assert b"\r\ntotal_reads_processed:6\r\n" in info
    assert b"\r\ntotal_writes_processed:5\r\n" in info


# -- XPENDING of many entries ------------------------------------------------------------

PENDING_T0 = 1_700_000_000_000
PENDING_READS = {
    "all": enc(b"XPENDING", b"s", b"g", b"-", b"+", b"100000"),
    "consumer": enc(b"XPENDING", b"s", b"g", b"-", b"+", b"100000", b"c"),
    "idle-range": enc(b"XPENDING", b"s", b"g", b"IDLE", b"500", b"(10-0", b"+", b"9000"),
}
PENDING_CHANGES = {
    "xack": enc(b"XACK", b"s", b"g", b"1-0", b"5000-0", b"9999-0"),
    # A new owner, delivery time and count, in the records the reply is made from.
    "xclaim": enc(b"XCLAIM", b"s", b"g", b"d", b"0", b"2-0", b"6000-0", b"9998-0"),
    "delconsumer": enc(b"XGROUP", b"DELCONSUMER", b"s", b"g", b"c"),
    "destroy": enc(b"XGROUP", b"DESTROY", b"s", b"g"),
}


def pending_setup(loop: asyncio.AbstractEventLoop, resp: int,
                  ) -> tuple[ServerState, Connection, RecordingTransport]:
    """10,000 entries, all delivered to consumer ``c`` at PENDING_T0, the clock then frozen
    a second later (every entry idle 1000 ms)."""
    from resplite.engine.clock import Clock

    clock = Clock()
    clock.freeze()
    clock.set(PENDING_T0)
    state = ServerState(Config(), clock, table=command_table())
    conn, transport = connect_to(state)
    feed(loop, conn, enc(b"HELLO", b"%d" % resp))
    fill_stream(loop, conn, b"s", 10000)
    feed(loop, conn, enc(b"XGROUP", b"CREATE", b"s", b"g", b"0")
         + enc(b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b">"))
    clock.set(PENDING_T0 + 1000)
    transport.writes.clear()
    return state, conn, transport


@pytest.mark.parametrize("change", list(PENDING_CHANGES))
@pytest.mark.parametrize("read", list(PENDING_READS))
def test_a_large_xpending_is_sent_in_parts_as_the_pel_was_when_asked(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch, read: str,
        change: str) -> None:
    resp = 3 if change == "xclaim" else 2
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(streams_groups, "CHUNKED_ENTRIES", 1 << 62)
        _, whole_conn, whole_transport = pending_setup(loop, resp)
        feed(loop, whole_conn, PENDING_READS[read] + enc(b"PING"))
        expected = b"".join(whole_transport.writes)
    assert expected.startswith((b"*10000\r\n", b"*9000\r\n"))
    state, conn, transport = pending_setup(loop, resp)
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    other, other_transport = connect_to(state)
    loop.call_soon(conn.data_received, PENDING_READS[read] + enc(b"PING"))
    turn(loop)
    assert conn.producing is not None
    assert sum(map(len, transport.writes)) < len(expected) // 2
    # Another client changes the PEL, and later idle times, while the reply is being sent;
    # it is answered meanwhile.
    state.clock.set(PENDING_T0 + 5000)
    feed(loop, other, PENDING_CHANGES[change] + enc(b"PING"))
    assert other_transport.writes[-1].endswith(b"+PONG\r\n")
    assert conn.producing is not None
    while conn.sliced:
        turn(loop)
    assert len(transport.writes) > 5
    assert b"".join(transport.writes) == expected


# -- XREADGROUP of a consumer's own pending entries (an id, not ">") -----------------------

HISTORY_READS = {
    "all": enc(b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b"0"),
    "count-from": enc(b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"7000", b"STREAMS",
                      b"s", b"100-0"),
}
HISTORY_CHANGES = {
    "xdel": enc(b"XDEL", b"s", b"1-0", b"5000-0", b"9999-0"),
    "xtrim": enc(b"XTRIM", b"s", b"MAXLEN", b"150"),
    "xack": enc(b"XACK", b"s", b"g", b"2-0", b"6000-0"),
    "xadd": enc(b"XADD", b"s", b"20000-0", b"f", b"v"),
    "del": enc(b"DEL", b"s"),
}
PEL_STATE = enc(b"XPENDING", b"s", b"g", b"-", b"+", b"100000")


@pytest.mark.parametrize("change", list(HISTORY_CHANGES))
@pytest.mark.parametrize("read", list(HISTORY_READS))
def test_a_large_history_read_is_sent_in_parts_as_it_was_when_asked(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch, read: str,
        change: str) -> None:
    resp = 3 if change in ("xdel", "xadd") else 2
    # Some pending entries are deleted before the read: [id, nil] in the reply.
    before = enc(b"XDEL", b"s", b"3-0", b"4000-0")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(streams_read, "CHUNKED_ENTRIES", 1 << 62)
        _, whole_conn, whole_transport = pending_setup(loop, resp)
        feed(loop, whole_conn, before)
        whole_transport.writes.clear()
        feed(loop, whole_conn, HISTORY_READS[read] + enc(b"PING"))
        expected = b"".join(whole_transport.writes)
        whole_transport.writes.clear()
        feed(loop, whole_conn, PEL_STATE)
        pel_after = b"".join(whole_transport.writes)
    assert b"4000-0\r\n" + (b"_\r\n" if resp == 3 else b"*-1\r\n") in expected
    state, conn, transport = pending_setup(loop, resp)
    feed(loop, conn, before)
    transport.writes.clear()
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    other, other_transport = connect_to(state)
    loop.call_soon(conn.data_received, HISTORY_READS[read] + enc(b"PING"))
    turn(loop)
    assert conn.producing is not None
    assert sum(map(len, transport.writes)) < len(expected) // 2
    # The read's changes to the group (delivery counts and times) are made already.
    assert other.client is not None
    from resplite.protocol.encoder import encode

    assert encode(state.dispatcher.execute(other.client, [b"XPENDING", b"s", b"g", b"-", b"+",
                                                          b"100000"]), 2) == pel_after
    feed(loop, other, HISTORY_CHANGES[change] + enc(b"PING"))
    assert other_transport.writes[-1].endswith(b"+PONG\r\n")
    assert conn.producing is not None
    while conn.sliced:
        turn(loop)
    assert len(transport.writes) > 5
    assert b"".join(transport.writes) == expected


# -- large replies of the other types: lists, sorted sets, sets, hashes ---------------------

BIG_VALUES = {
    "lrange": (enc(b"RPUSH", b"k", *(b"v%d" % i for i in range(10000))),
               enc(b"LRANGE", b"k", b"0", b"-1"),
               enc(b"LSET", b"k", b"5000", b"changed") + enc(b"RPUSH", b"k", b"more")),
    "zrange": (enc(b"ZADD", b"k", *(x for i in range(10000) for x in (b"%d.5" % i, b"m%d" % i))),
               enc(b"ZRANGE", b"k", b"0", b"-1", b"WITHSCORES"),
               enc(b"ZADD", b"k", b"-1", b"m5000") + enc(b"ZREM", b"k", b"m9999")),
    "smembers": (enc(b"SADD", b"k", *(b"m%d" % i for i in range(10000))),
                 enc(b"SMEMBERS", b"k"),
                 enc(b"SREM", b"k", b"m1", b"m5000") + enc(b"SADD", b"k", b"new")),
    "hgetall": (enc(b"HSET", b"k", *(x for i in range(10000) for x in (b"f%d" % i, b"v%d" % i))),
                enc(b"HGETALL", b"k"),
                enc(b"HSET", b"k", b"f5000", b"changed") + enc(b"DEL", b"k")),
}


@pytest.mark.parametrize("resp", [2, 3])
@pytest.mark.parametrize("kind", list(BIG_VALUES))
def test_a_large_reply_is_sent_in_parts_as_the_value_was_when_asked(
        loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch, kind: str,
        resp: int) -> None:
    from resplite.protocol import encoder

    fill, read, change = BIG_VALUES[kind]
    state, conn, transport = connect()
    feed(loop, conn, enc(b"HELLO", b"%d" % resp) + fill)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(encoder, "PIECES_FROM", 1 << 62)
        mp.setattr(sorted_sets, "PIECES_FROM", 1 << 62)
        transport.writes.clear()
        feed(loop, conn, read)
        expected = b"".join(transport.writes)
    assert expected.startswith((b"*", b"~", b"%")) and len(expected) > 100000
    monkeypatch.setattr(connection_module, "SLICE_NS", 0)
    other, other_transport = connect_to(state)
    transport.writes.clear()
    loop.call_soon(conn.data_received, read + enc(b"PING"))
    turn(loop)
    assert conn.producing is not None
    assert sum(map(len, transport.writes)) < len(expected) // 2
    # Another client writes to the value, and is answered, while the reply is being sent.
    feed(loop, other, change + enc(b"PING"))
    assert other_transport.writes[-1].endswith(b"+PONG\r\n")
    assert conn.producing is not None
    while conn.sliced:
        turn(loop)
    assert len(transport.writes) > 5
    assert b"".join(transport.writes) == expected + b"+PONG\r\n"
