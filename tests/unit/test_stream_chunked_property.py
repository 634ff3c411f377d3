"""Large stream reads sent in pieces (Chunked) give the general path's bytes and effects.

XRANGE, XREVRANGE, XREAD and XREADGROUP switch to replies made piece by piece from
:data:`~resplite.commands.streams_common.CHUNKED_ENTRIES` entries on. Here that threshold
is lowered to 2 (and the piece size to a few hundred bytes), so that small random streams
take the piece path with ranges cut at every node edge, and the same history is replayed on
a second server with the threshold out of reach: every reply must be byte for byte the
same, under RESP2 and RESP3, and so must what XREADGROUP did to the group (XINFO STREAM
FULL, XPENDING), both servers' clocks frozen at the same instant.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.commands import command_table, streams_common, streams_read
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.state import ServerState
from resplite.server import connection as connection_module
from resplite.server.connection import Connection
from resplite.store import stream as stream_module
from unit.test_connection_fairness import RecordingTransport, enc

T0 = 1_700_000_000_000

Cmd = tuple[bytes, ...]


def run(commands: list[Cmd], resp: int, threshold: int) -> list[bytes]:
    """Each command's reply bytes from a fresh server whose reads go to pieces from
    ``threshold`` entries."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(streams_common, "CHUNKED_ENTRIES", threshold)
        mp.setattr(streams_read, "CHUNKED_ENTRIES", threshold)
        mp.setattr(stream_module, "PIECE_BYTES", 200)
        mp.setattr(connection_module, "SLICE_NS", 10**18)  # no event loop: never sliced
        clock = Clock()
        clock.freeze()
        clock.set(T0)
        state = ServerState(Config(), clock, table=command_table())
        conn = Connection(state, state.dispatcher)
        transport = RecordingTransport()
        conn.connection_made(transport)  # type: ignore[arg-type]
        conn.data_received(enc(b"HELLO", b"%d" % resp))
        replies = []
        for cmd in commands:
            transport.writes.clear()
            conn.data_received(enc(*cmd))
            replies.append(b"".join(transport.writes))
        return replies


def entry_fields(shape: int, i: int) -> tuple[bytes, ...]:
    if shape == 0:
        return (b"f1", b"%08d" % i, b"f2", b"v%d" % (i % 7))
    if shape == 1:
        return (b"f1", b"x" * 200, b"f2", b"%")  # a value over 127 bytes
    if shape == 2:
        return (b"other", b"%d" % i)
    return (b"f1", b"a", b"f2", b"b", b"f3", b"c%d" % i)


ids = st.integers(0, 70).map(lambda n: b"%d-0" % n)
maybe_count = st.one_of(st.just(()), st.integers(0, 40).map(lambda c: (b"COUNT", b"%d" % c)))


@st.composite
def reads(draw: Any) -> Cmd:
    kind = draw(st.sampled_from(["xrange", "xrevrange", "xread", "xread2", "xreadgroup",
                                 "history"]))
    count: Cmd = draw(maybe_count)
    if kind == "xrange":
        a, b = draw(ids), draw(st.one_of(ids, st.just(b"+")))
        return (b"XRANGE", b"s", a, b, *count)
    if kind == "xrevrange":
        a, b = draw(st.one_of(ids, st.just(b"+"))), draw(ids)
        return (b"XREVRANGE", b"s", a, b, *count)
    if kind == "xread":
        return (b"XREAD", *count, b"STREAMS", b"s", draw(ids))
    if kind == "xread2":
        return (b"XREAD", *count, b"STREAMS", b"t", b"s", b"s", b"0", draw(ids), draw(ids))
    if kind == "xreadgroup":
        noack: Cmd = (b"NOACK",) if draw(st.booleans()) else ()
        consumer = draw(st.sampled_from([b"c1", b"c2"]))
        return (b"XREADGROUP", b"GROUP", b"g", consumer, *count, *noack, b"STREAMS", b"s",
                b"t", b">", b">")
    return (b"XREADGROUP", b"GROUP", b"g", b"c1", *count, b"STREAMS", b"s", b"0")


@st.composite
def histories(draw: Any) -> list[Cmd]:
    n = draw(st.integers(0, 60))
    node = draw(st.integers(2, 12))
    commands: list[Cmd] = [(b"CONFIG", b"SET", b"stream-node-max-entries", b"%d" % node)]
    for i in range(1, n + 1):
        shape = draw(st.integers(0, 3))
        commands.append((b"XADD", b"s", b"%d-0" % i, *entry_fields(shape, i)))
    for key in (b"s", b"t"):
        commands.append((b"XADD", key, b"100-0", b"f1", b"tail", b"f2", b"x"))
        commands.append((b"XGROUP", b"CREATE", key, b"g", draw(ids)))
    deleted = draw(st.lists(st.integers(1, max(n, 1)), max_size=20))
    if deleted:
        commands.append((b"XDEL", b"s", *(b"%d-0" % i for i in deleted)))
    for cmd in draw(st.lists(reads(), min_size=1, max_size=4)):
        commands.append(cmd)
        if cmd[0] == b"XREADGROUP":
            commands.append((b"XINFO", b"STREAM", b"s", b"FULL"))
            commands.append((b"XPENDING", b"s", b"g", b"-", b"+", b"100"))
    return commands


@settings(max_examples=60, deadline=None)
@given(histories(), st.sampled_from([2, 3]))
def test_pieces_and_the_general_path_give_the_same_bytes(commands: list[Cmd],
                                                         resp: int) -> None:
    in_pieces = run(commands, resp, 2)
    whole = run(commands, resp, 10**9)
    for cmd, ours, general in zip(commands, in_pieces, whole, strict=True):
        assert ours == general, cmd


def test_the_piece_path_is_taken() -> None:
    # The property above compares something: with the threshold lowered, these reads are
    # Chunked replies (made on a stream of 30 entries).
    from resplite.protocol.replies import Chunked

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(streams_common, "CHUNKED_ENTRIES", 2)
        mp.setattr(streams_read, "CHUNKED_ENTRIES", 2)
        state = ServerState(Config(), table=command_table())
        conn = Connection(state, state.dispatcher)
        conn.connection_made(RecordingTransport())  # type: ignore[arg-type]
        for i in range(1, 31):
            conn.data_received(enc(b"XADD", b"s", b"%d-0" % i, b"f", b"v"))
        conn.data_received(enc(b"XGROUP", b"CREATE", b"s", b"g", b"0"))
        client = conn.client
        assert client is not None
        for cmd in [(b"XRANGE", b"s", b"-", b"+"), (b"XREVRANGE", b"s", b"+", b"-"),
                    (b"XREAD", b"STREAMS", b"s", b"0"),
                    (b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"s", b">")]:
            reply = state.dispatcher.execute(client, list(cmd))
            assert isinstance(reply, Chunked), cmd
