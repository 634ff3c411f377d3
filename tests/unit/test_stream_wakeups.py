"""Serving blocked stream readers re-runs only the readers a change can serve.

Redis re-runs every client blocked on a key when the key changes; a blocked XREADGROUP or
XREAD that finds nothing blocks again, having made two lookups of each of its streams and
(XREADGROUP) refreshed its consumer's seen time. resplite skips that re-run with a test of
the stream and group, doing those two things itself, so these tests check both halves on an
in-process server with a frozen clock: which readers are re-run (counted through the
blocking manager's ``run_retry`` hook), and that the readers left waiting look as if they
had been re-run.
"""

from __future__ import annotations

from typing import Any

import pytest

from resplite.commands import command_table
from resplite.engine.blocking import BlockRequest
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.state import ServerState

T0 = 1_700_000_000_000


class Engine:
    """An in-process server state, its clients driven without sockets."""

    def __init__(self) -> None:
        clock = Clock()
        clock.freeze()
        clock.set(T0)
        self.clock = clock
        self.state = ServerState(Config(), clock, table=command_table())
        self.admin = self.client()
        self.reruns: list[Client] = []
        run = self.state.blocking.run_retry
        assert run is not None

        def counting(client: Client, blocked: Any, key: bytes | None) -> Any:
            self.reruns.append(client)
            return run(client, blocked, key)

        self.state.blocking.run_retry = counting

    def client(self) -> Client:
        state = self.state
        client = Client(state, state.next_client_id, None)
        state.next_client_id += 1
        return client

    def call(self, client: Client, *args: str | int) -> Any:
        reply = self.state.dispatcher.execute(client, [str(a).encode() for a in args])
        if isinstance(reply, BlockRequest):
            self.state.blocking.block(client, reply)
        blocking = self.state.blocking
        if blocking.ready:
            blocking.serve_ready()
        return reply

    def park(self, *args: str | int) -> Client:
        client = self.client()
        assert isinstance(self.call(client, *args), BlockRequest)
        return client

    def hits(self) -> int:
        return sum(db.hits for db in self.state.keyspace.dbs)


@pytest.fixture
def engine() -> Engine:
    return Engine()


def group_readers(engine: Engine, n: int, *keys: str) -> list[Client]:
    for key in keys:
        engine.call(engine.admin, "XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
    return [engine.park("XREADGROUP", "GROUP", "g", f"c{i}", "BLOCK", 0, "STREAMS", *keys,
                        *([">"] * len(keys))) for i in range(n)]


def test_each_entry_reruns_only_the_reader_it_serves_in_blocking_order(engine: Engine) -> None:
    readers = group_readers(engine, 50, "s")
    for n in range(3):
        engine.call(engine.admin, "XADD", "s", "*", "f", n)
        assert engine.reruns == [readers[n]]
        engine.reruns.clear()
        assert [r.blocked is None for r in readers[: n + 2]] == [True] * (n + 1) + [False]
    assert engine.state.blocking.count == 47


def test_readers_left_waiting_are_seen_and_counted_as_if_rerun(engine: Engine) -> None:
    readers = group_readers(engine, 4, "a", "b")
    engine.clock.advance(500)
    before = engine.hits()
    engine.call(engine.admin, "XADD", "b", "7-1", "f", "v")
    assert engine.reruns == [readers[0]]
    # Every reader looked each of its two streams up twice: the one served and the three
    # that blocked again.
    assert engine.hits() - before == 4 * 2 * 2
    # And each one's consumer on the stream not written to was seen then too.
    info = engine.call(engine.admin, "XINFO", "CONSUMERS", "a", "g")
    idle = {entry[b"name"]: entry[b"idle"] for entry in info}
    assert idle == {b"c0": 0, b"c1": 0, b"c2": 0, b"c3": 0}
    engine.clock.advance(300)
    engine.call(engine.admin, "XDEL", "b", "7-1")  # a change with nothing new for anyone
    info = engine.call(engine.admin, "XINFO", "CONSUMERS", "a", "g")
    idle = {entry[b"name"]: entry[b"idle"] for entry in info}
    assert idle == {b"c0": 300, b"c1": 0, b"c2": 0, b"c3": 0}


def test_a_reader_whose_group_went_is_rerun_and_answers(engine: Engine) -> None:
    readers = group_readers(engine, 3, "s")
    engine.call(engine.admin, "XGROUP", "DESTROY", "s", "g")
    assert engine.reruns == readers
    assert engine.state.blocking.count == 0


def test_a_reader_whose_consumer_was_deleted_is_rerun(engine: Engine) -> None:
    readers = group_readers(engine, 3, "s")
    engine.call(engine.admin, "XGROUP", "DELCONSUMER", "s", "g", "c1")
    engine.call(engine.admin, "XADD", "s", "*", "f", "v")
    # The first reader takes the entry; the second is re-run (it creates its consumer
    # again) and blocks again; the third is not.
    assert engine.reruns == readers[:2]
    consumers = engine.call(engine.admin, "XINFO", "CONSUMERS", "s", "g")
    assert sorted(entry[b"name"] for entry in consumers) == [b"c0", b"c1", b"c2"]


def test_every_xread_reader_past_its_id_gets_the_entry(engine: Engine) -> None:
    engine.call(engine.admin, "XADD", "s", "5-1", "f", "v")
    dollar = [engine.park("XREAD", "BLOCK", 0, "STREAMS", "s", "$") for _ in range(5)]
    later = engine.park("XREAD", "BLOCK", 0, "STREAMS", "s", "9-1")
    before = engine.hits()
    engine.call(engine.admin, "XADD", "s", "6-1", "f", "w")
    assert engine.reruns == dollar
    assert engine.hits() - before == 6 * 2
    assert later.blocked is not None
    engine.reruns.clear()
    engine.call(engine.admin, "XADD", "s", "10-1", "f", "x")
    assert engine.reruns == [later]


def test_an_xread_reader_is_not_rerun_while_its_key_holds_no_stream(engine: Engine) -> None:
    reader = engine.park("XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    before = engine.hits()
    engine.call(engine.admin, "SET", "s", "x")
    engine.call(engine.admin, "DEL", "s")
    assert engine.reruns == []
    assert engine.hits() == before
    engine.call(engine.admin, "XADD", "s", "1-1", "f", "v")
    assert engine.reruns == [reader]
    assert reader.blocked is None


def test_readers_left_waiting_touch_their_streams_as_a_rerun_would(engine: Engine) -> None:
    group_readers(engine, 2, "a", "b")
    engine.call(engine.admin, "XADD", "b", "7-1", "f", "v")  # the first reader is served
    engine.clock.advance(10_000)
    assert engine.call(engine.admin, "OBJECT", "IDLETIME", "a") == 10
    engine.reruns.clear()
    engine.call(engine.admin, "XDEL", "b", "7-1")
    assert engine.reruns == []
    # The reader left waiting looked both streams up: neither is idle any more.
    assert engine.call(engine.admin, "OBJECT", "IDLETIME", "a") == 0
    assert engine.call(engine.admin, "OBJECT", "IDLETIME", "b") == 0
