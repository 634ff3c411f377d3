"""Replication inside the engine, without sockets: the stream a replica is sent (one
propagation path with the append-only file), the offset in bytes, the backlog and its
bounds, PSYNC's continuation, acknowledgements and WAIT, the parser of a primary's stream."""

from __future__ import annotations

from typing import Any

import pytest

from resplite.commands import command_table
from resplite.engine.aof import encode_command, parse_commands
from resplite.engine.blocking import BlockRequest
from resplite.engine.client import Client
from resplite.engine.config import Config
from resplite.engine.replication import REPLICA, StreamParser
from resplite.engine.scheduler import ManualScheduler
from resplite.engine.state import ServerState


class _Wire:
    """A connection that keeps what is sent to it."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.delivered: list[Any] = []
        self.closed = False

    def deliver(self, reply: Any) -> None:
        self.delivered.append(reply)

    def send(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def resume(self) -> None:
        pass

    def set_authenticated(self, authenticated: bool) -> None:
        pass

    def set_max_bulk_len(self, limit: int) -> None:
        pass

    def output_buffer_size(self) -> int:
        return 0

    def query_buffer_size(self) -> int:
        return 0


Setup = tuple[ServerState, Client, ManualScheduler]


@pytest.fixture
def setup() -> Setup:
    scheduler = ManualScheduler()
    state = ServerState(Config(), table=command_table(), scheduler=scheduler)
    return state, Client(state, 1, None), scheduler


def _online_replica(state: ServerState, client_id: int = 2) -> tuple[Client, _Wire]:
    """A replica that continued from the backlog (no snapshot, so no fork)."""
    wire = _Wire()
    replica = Client(state, client_id, wire)
    state.clients[replica.id] = replica
    repl = state.replication
    repl.create_backlog()
    repl.replica_of(replica).capa_psync2 = True
    reply = state.dispatcher.execute(
        replica, [b"PSYNC", repl.replid.encode(), b"%d" % (repl.offset + 1)])
    assert reply == b"+CONTINUE %s\r\n" % repl.replid.encode()
    assert replica.repl_kind == REPLICA
    return replica, wire


def _stream(scheduler: ManualScheduler, wire: _Wire) -> list[list[bytes]]:
    scheduler.run_due(0.0)
    return parse_commands(b"".join(wire.sent))


def test_no_stream_and_one_per_write_without_replicas(setup: Setup) -> None:
    state, client, _ = setup
    state.dispatcher.execute(client, [b"SET", b"k", b"v"])
    assert state.replication.backlog is None
    assert not state.propagating
    assert state.aof.offset == 0  # neither a log nor a backlog: nothing counts


def test_writes_reach_a_replica_as_propagated(setup: Setup) -> None:
    state, client, scheduler = setup
    _, wire = _online_replica(state)
    run = state.dispatcher.execute
    run(client, [b"SET", b"k", b"v"])
    run(client, [b"GET", b"k"])  # a read: not sent
    run(client, [b"SET", b"t", b"v", b"EX", b"100"])  # relative: sent as absolute
    run(client, [b"SELECT", b"2"])
    client.select(2)
    run(client, [b"SET", b"s", b"v"])
    run(client, [b"LPUSH", b"s", b"x"])  # failed (WRONGTYPE): not sent
    run(client, [b"LPUSH", b"l", b"a"])
    stream = _stream(scheduler, wire)
    assert stream[0] == [b"SELECT", b"0"]
    assert stream[1] == [b"SET", b"k", b"v"]
    assert stream[2][:4] == [b"SET", b"t", b"v", b"PXAT"]
    assert stream[3:] == [[b"SELECT", b"2"], [b"SET", b"s", b"v"], [b"LPUSH", b"l", b"a"]]
    repl = state.replication
    # The offset counts the stream's bytes; the backlog holds all of them.
    assert repl.offset == len(b"".join(wire.sent))
    assert repl.backlog is not None and bytes(repl.backlog) == b"".join(wire.sent)
    assert repl.backlog_first == 1


def test_a_transaction_is_wrapped(setup: Setup) -> None:
    state, client, scheduler = setup
    _, wire = _online_replica(state)
    run = state.dispatcher.execute
    for argv in ([b"MULTI"], [b"SET", b"a", b"1"], [b"INCR", b"a"], [b"EXEC"]):
        run(client, argv)
    stream = _stream(scheduler, wire)
    assert stream == [[b"MULTI"], [b"SELECT", b"0"], [b"SET", b"a", b"1"],
                      [b"INCR", b"a"], [b"EXEC"]]


def test_psync_continues_within_the_backlog_only(setup: Setup) -> None:
    state, client, _ = setup
    state.config.set("repl-backlog-size", "200")
    _online_replica(state)
    repl = state.replication
    for i in range(20):
        state.dispatcher.execute(client, [b"SET", b"key%d" % i, b"value"])
    assert repl.backlog is not None
    assert len(repl.backlog) == 200
    assert repl.backlog_first == repl.offset + 1 - 200
    late = Client(state, 3, _Wire())
    replid = repl.replid
    # Older than the backlog's first byte, or another history: a full sync is needed.
    assert repl.try_partial(late, replid, repl.backlog_first - 1) is None
    assert repl.try_partial(late, "f" * 40, repl.offset + 1) is None
    errors_before = repl.sync_partial_err
    assert repl.try_partial(late, "?", -1) is None
    assert repl.sync_partial_err == errors_before  # "?" asks for a full sync: no error
    reply = repl.try_partial(late, replid, repl.offset - 30)
    assert reply == b"+CONTINUE\r\n" + bytes(repl.backlog[-31:])


def test_psync2_continues_under_the_previous_id_up_to_the_switch(setup: Setup) -> None:
    state, client, _ = setup
    _online_replica(state)
    repl = state.replication
    state.dispatcher.execute(client, [b"SET", b"k", b"v"])
    old_id, switch = repl.replid, repl.offset + 1
    # What REPLICAOF NO ONE does on a replica: a new id, the old one valid up to here.
    repl.master_host = "elsewhere"
    repl.unset_master()
    assert repl.replid != old_id and repl.replid2 == old_id and repl.second_offset == switch
    state.dispatcher.execute(client, [b"SET", b"k", b"w"])
    other = Client(state, 4, _Wire())
    assert repl.try_partial(other, old_id, switch) is not None
    assert repl.try_partial(Client(state, 5, _Wire()), old_id, switch + 1) is None


def test_wait_blocks_until_enough_replicas_acknowledge(setup: Setup) -> None:
    state, client, scheduler = setup
    replica, wire = _online_replica(state)
    client.conn = _Wire()
    state.clients[client.id] = client
    run = state.dispatcher.execute
    run(client, [b"SET", b"k", b"v"])
    assert run(client, [b"WAIT", b"0", b"0"]) == 0
    request = run(client, [b"WAIT", b"1", b"0"])
    assert isinstance(request, BlockRequest)
    state.blocking.block(client, request)
    stream = _stream(scheduler, wire)
    assert stream[-1] == [b"REPLCONF", b"GETACK", b"*"]  # asked at the end of the batch
    run(replica, [b"REPLCONF", b"ACK", b"%d" % (client.woff - 1)])
    assert client.blocked is not None  # not there yet
    assert run(replica, [b"REPLCONF", b"ACK", b"%d" % client.woff]) == b""  # no reply
    assert client.blocked is None
    assert client.conn.delivered == [1]
    assert state.replication.role_reply()[2] == [
        [b"", b"0", b"%d" % client.woff]]  # no address: an in-process client


def test_min_replicas_to_write_refuses_and_then_accepts(setup: Setup) -> None:
    state, client, _ = setup
    state.config.set("min-replicas-to-write", "1")
    run = state.dispatcher.execute
    reply = run(client, [b"SET", b"k", b"v"])
    assert getattr(reply, "message", None) == "NOREPLICAS Not enough good replicas to write."
    assert run(client, [b"GET", b"k"]) is None
    _online_replica(state)
    assert state.replication.good_replicas == 1
    assert run(client, [b"SET", b"k", b"v"]) == "OK"


def test_stream_parser_frames_commands_across_reads() -> None:
    commands = [[b"SELECT", b"0"], [b"SET", b"k", b"v" * 100], [b"PING"]]
    data = b"\n" + b"".join(encode_command(c) for c in commands)
    parser = StreamParser()
    got: list[tuple[list[bytes], bytes]] = []
    for i in range(0, len(data), 7):
        parser.feed(data[i:i + 7])
        while (item := parser.next()) is not None:
            got.append(item)
    assert [argv for argv, _ in got] == commands
    # Each command's bytes, which the offset counts (the newline is a keep-alive).
    assert b"".join(raw for _, raw in got) == data[1:]


def test_a_transaction_with_one_write_is_not_wrapped(setup: Setup) -> None:
    """As Redis 7: MULTI/EXEC only around two writes or more; a transaction whose writes
    changed nothing sends nothing."""
    state, client, scheduler = setup
    _, wire = _online_replica(state)
    run = state.dispatcher.execute
    for argv in ([b"MULTI"], [b"SET", b"a", b"1"], [b"GET", b"a"], [b"EXEC"],
                 [b"MULTI"], [b"DEL", b"nothing"], [b"EXEC"]):
        run(client, argv)
    stream = _stream(scheduler, wire)
    assert [b"MULTI"] not in stream
    assert stream[:2] == [[b"SELECT", b"0"], [b"SET", b"a", b"1"]]


def test_exec_with_a_queued_write_is_refused_without_enough_replicas(setup: Setup) -> None:
    state, client, _ = setup
    run = state.dispatcher.execute
    run(client, [b"MULTI"])
    run(client, [b"SET", b"k", b"v"])
    state.config.set("min-replicas-to-write", "1")
    reply = run(client, [b"EXEC"])
    assert getattr(reply, "message", None) == (
        "EXECABORT Transaction discarded because of: NOREPLICAS Not enough good replicas to "
        "write.")
    run(client, [b"MULTI"])
    run(client, [b"GET", b"k"])
    assert run(client, [b"EXEC"]) == [None]  # reads only: it runs


def test_expired_and_evicted_keys_are_deleted_on_replicas(setup: Setup) -> None:
    """As Redis's propagateDeletion: DEL, or UNLINK when that kind of deletion is lazy."""
    state, client, scheduler = setup
    _, wire = _online_replica(state)
    run = state.dispatcher.execute
    state.clock.freeze()
    run(client, [b"SET", b"gone", b"v", b"PX", b"5"])
    run(client, [b"SET", b"gone2", b"v", b"PX", b"5"])
    run(client, [b"SET", b"big", b"v"])
    state.clock.advance(10)
    assert run(client, [b"GET", b"gone"]) is None
    state.config.set("lazyfree-lazy-expire", "yes")
    assert run(client, [b"GET", b"gone2"]) is None
    assert state.evict(0, b"big")
    state.config.set("lazyfree-lazy-eviction", "yes")
    run(client, [b"SET", b"big", b"v"])
    assert state.evict(0, b"big")
    assert _stream(scheduler, wire)[-5:] == [
        [b"DEL", b"gone"], [b"UNLINK", b"gone2"], [b"DEL", b"big"], [b"SET", b"big", b"v"],
        [b"UNLINK", b"big"]]


def test_hgetdel_and_a_whole_spop_go_out_as_deletions(setup: Setup) -> None:
    state, client, scheduler = setup
    _, wire = _online_replica(state)
    run = state.dispatcher.execute
    run(client, [b"HSET", b"h", b"f1", b"v", b"f2", b"v"])
    run(client, [b"HGETDEL", b"h", b"FIELDS", b"2", b"f8", b"f9"])  # none: not sent
    run(client, [b"HGETDEL", b"h", b"FIELDS", b"2", b"f1", b"f9"])
    run(client, [b"SADD", b"s1", b"a", b"b"])
    run(client, [b"SADD", b"s2", b"a"])
    run(client, [b"SPOP", b"s1", b"5"])
    state.config.set("lazyfree-lazy-server-del", "yes")
    run(client, [b"SPOP", b"s2", b"1"])
    stream = _stream(scheduler, wire)
    assert [b"HGETDEL", b"h", b"FIELDS", b"2", b"f8", b"f9"] not in stream
    assert [b"HDEL", b"h", b"f1", b"f9"] in stream
    assert stream[-2:] == [[b"DEL", b"s1"], [b"UNLINK", b"s2"]]
