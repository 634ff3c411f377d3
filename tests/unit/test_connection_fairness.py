"""A connection's batch runs in slices and writes large replies as it goes.

The connection runs on a recording transport and a real event loop (``call_soon`` is how a
slice hands over). Time never decides a test: the slice length is set to zero, so every
check point ends a slice, and the tests count slices and writes instead of measuring them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from resplite.commands import command_table
from resplite.engine.config import Config
from resplite.engine.state import ServerState
from resplite.server import connection as connection_module
from resplite.server.connection import FLUSH_BYTES, Connection


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
