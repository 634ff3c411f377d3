"""The dispatcher's one fast path and the gates that leave it (resplite.engine.gates).

Each gate is engaged the way a client or the server engages it (a command where there is
one), one at a time: its bit, and only the bits it stands for, must show in
``client.gates | server.gates``, the request must take the general path and the gate's
behaviour must happen; once released the figure is 0 again and the same request takes the
fast path. Which path ran is read from the interpreter's profile hook (a compiled build has
no frames to show, and then only the figures and the behaviours are checked).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from resplite.algorithms.keyslot import key_slot
from resplite.commands import command_table
from resplite.engine import gates
from resplite.engine.aof import parse_commands
from resplite.engine.blocking import BlockRequest
from resplite.engine.client import Client
from resplite.engine.cluster import Cluster, ClusterNode
from resplite.engine.config import Config
from resplite.engine.dispatch import Dispatcher
from resplite.engine.state import ServerState
from resplite.protocol.replies import OK, QUEUED, ErrorReply

# Python frames to look at: absent when the dispatcher is compiled.
INTERPRETED = hasattr(Dispatcher.execute, "__code__")
GENERAL = "Dispatcher._checks"
AFTER = "Dispatcher._after_call"
EXECUTE = "Dispatcher.execute"
# What the fast path may run: execute alone, and the slow log's bookkeeping should a call
# take longer than its threshold on a busy machine.
FAST = {EXECUTE, "Dispatcher._slow"}


class Harness:
    """A server (appendonly on only when asked), the client under test and another."""

    def __init__(self, tmp_path: Path | None, appendonly: bool = False) -> None:
        config = Config()
        if tmp_path is not None:
            config.set("dir", str(tmp_path), at_startup=True)
        config.set("enable-fault-command", "yes", at_startup=True)
        if appendonly:
            config.set("appendonly", "yes", at_startup=True)
        self.state = state = ServerState(config, table=command_table())
        if appendonly:
            state.persistence.load_at_start()
            state.start_aof()
        self.client = self.add_client()
        self.other = self.add_client()

    def add_client(self) -> Client:
        state = self.state
        client = Client(state, state.new_client_id(), None)
        state.clients[client.id] = client
        return client

    def figure(self) -> int:
        return self.client.gates | self.state.gates

    def run(self, *argv: bytes, client: Client | None = None) -> Any:
        return self.state.dispatcher.execute(client or self.client, list(argv))

    def traced(self, *argv: bytes) -> tuple[Any, set[str]]:
        """The reply to ``argv`` and the dispatcher functions that ran for it."""
        seen: set[str] = set()

        def hook(frame: FrameType, event: str, arg: object) -> None:
            if event == "call" and frame.f_code.co_filename.endswith("dispatch.py"):
                seen.add(frame.f_code.co_qualname)

        sys.setprofile(hook)
        try:
            reply = self.run(*argv)
        finally:
            sys.setprofile(None)
        return reply, seen


def _aof_logged(h: Harness) -> list[list[bytes]]:
    h.state.aof.before_reply()
    folder = Path(h.state.aof.folder)
    return [argv for path in sorted(folder.glob("*.incr.aof"))
            for argv in parse_commands(path.read_bytes())]


def _join_other_node(h: Harness) -> None:
    # A two-node cluster in which this server is the node that does not serve b"k".
    cluster = Cluster.create(2)
    h.state.join_cluster(ClusterNode(cluster, 1 - cluster.owner[key_slot(b"k")]))


def _error(start: str) -> Callable[[Harness, Any], bool]:
    """The reply is an error whose text starts with ``start``."""
    return lambda h, r: isinstance(r, ErrorReply) and r.message.startswith(start)


@dataclass
class Gate:
    name: str
    figure: int  # what client.gates | server.gates reads while it is engaged
    engage: Callable[[Harness], object]
    request: tuple[bytes, ...]
    happened: Callable[[Harness, Any], bool]  # the gate's behaviour, seen in the reply or after
    release: Callable[[Harness], object] | None  # None: engaged for good
    calls: bool = True  # the request reaches the handler (and what a call owes after it)
    appendonly: bool = False


GATES = [
    Gate("noauth", gates.NOAUTH,
         lambda h: h.client.set_authenticated(False),
         (b"GET", b"k"), lambda h, r: r == ErrorReply("NOAUTH Authentication required."),
         lambda h: h.run(b"AUTH", b"default", b"anything"), calls=False),
    Gate("acl", gates.ACL,
         lambda h: h.run(b"ACL", b"SETUSER", b"default", b"-get"),
         (b"GET", b"k"), _error("NOPERM"),
         lambda h: h.run(b"ACL", b"SETUSER", b"default", b"+@all"), calls=False),
    Gate("multi", gates.MULTI,
         lambda h: h.run(b"MULTI"),
         (b"SET", b"k", b"v"), lambda h, r: r is QUEUED and h.run(b"GET", b"k") is QUEUED,
         lambda h: h.run(b"DISCARD"), calls=False),
    Gate("subscribed", gates.CONTEXT,
         lambda h: h.run(b"SUBSCRIBE", b"ch"),
         (b"GET", b"k"), _error("ERR Can't execute 'get': only (P|S)SUBSCRIBE"),
         lambda h: h.run(b"UNSUBSCRIBE"), calls=False),
    Gate("monitor", gates.CONTEXT | gates.MONITORS,
         lambda h: h.run(b"MONITOR"),
         (b"GET", b"k"),
         lambda h, r: r == ErrorReply("ERR Replica can't interact with the keyspace"),
         lambda h: h.run(b"RESET"), calls=False),
    Gate("tracking", gates.TRACKING,
         lambda h: (h.run(b"HELLO", b"3"), h.run(b"CLIENT", b"TRACKING", b"ON")),
         (b"GET", b"k"),
         lambda h, r: (h.run(b"SET", b"k", b"x", client=h.other) is OK
                       and any(b"invalidate" in push for push in h.client.outbox)),
         lambda h: h.run(b"CLIENT", b"TRACKING", b"OFF")),
    Gate("pause", gates.PAUSE,
         lambda h: h.run(b"CLIENT", b"PAUSE", b"100000", b"WRITE", client=h.other),
         (b"SET", b"k", b"v"), lambda h, r: isinstance(r, BlockRequest),
         lambda h: h.run(b"CLIENT", b"UNPAUSE", client=h.other), calls=False),
    # (A real reason: the flag is recomputed from the reasons whenever one changes.)
    Gate("writes-refused", gates.WRITES_REFUSED,
         lambda h: h.run(b"CONFIG", b"SET", b"min-replicas-to-write", b"1"),
         (b"SET", b"k", b"v"), _error("NOREPLICAS"),
         lambda h: h.run(b"CONFIG", b"SET", b"min-replicas-to-write", b"0"), calls=False),
    Gate("memory", gates.MEMORY,
         lambda h: h.run(b"CONFIG", b"SET", b"maxmemory", b"1"),
         (b"SET", b"k", b"v"), lambda h, r: r == ErrorReply(
             "OOM command not allowed when used memory > 'maxmemory'."),
         lambda h: h.run(b"CONFIG", b"SET", b"maxmemory", b"0"), calls=False),
    Gate("faults", gates.FAULTS,
         lambda h: h.run(b"RESPLITE.FAULT", b"ERROR", b"get", b"ERR boom"),
         (b"GET", b"k"), lambda h, r: r == ErrorReply("ERR boom"),
         lambda h: h.run(b"RESPLITE.FAULT", b"CLEAR"), calls=False),
    Gate("cluster", gates.CLUSTER,
         _join_other_node,
         (b"GET", b"k"), _error("MOVED "),
         None, calls=False),
    Gate("monitors", gates.MONITORS,
         lambda h: h.run(b"MONITOR", client=h.other),
         (b"GET", b"k"), lambda h, r: any(b'"GET" "k"' in line for line in h.other.outbox),
         lambda h: h.run(b"RESET", client=h.other)),
    Gate("aof", gates.AOF,
         lambda h: None,  # opened at the start (see Harness)
         (b"SET", b"k", b"v"), lambda h, r: [b"SET", b"k", b"v"] in _aof_logged(h),
         lambda h: h.run(b"CONFIG", b"SET", b"appendonly", b"no"), appendonly=True),
]


def test_every_gate_is_in_the_table() -> None:
    tested = 0
    for gate in GATES:
        tested |= gate.figure
    assert tested == sum(gates.NAMES)


@pytest.mark.parametrize("gate", GATES, ids=[g.name for g in GATES])
def test_each_gate_leaves_the_fast_path_and_does_its_work(tmp_path: Path, gate: Gate) -> None:
    h = Harness(tmp_path, appendonly=gate.appendonly)
    assert h.figure() == (gates.AOF if gate.appendonly else 0)
    gate.engage(h)
    assert h.figure() == gate.figure, gates.NAMES
    reply, ran = h.traced(*gate.request)
    if INTERPRETED:
        assert GENERAL in ran
        # What a call owes after its handler is looked at only on the way out of a call.
        assert (AFTER in ran) == gate.calls
    assert gate.happened(h, reply)
    if gate.release is None:
        return
    gate.release(h)
    assert h.figure() == 0
    reply, ran = h.traced(*gate.request)
    if INTERPRETED:
        assert EXECUTE in ran and ran <= FAST
    assert not isinstance(reply, (ErrorReply, BlockRequest)) and reply is not QUEUED


def test_with_every_gate_clear_the_fast_path_runs(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    assert h.figure() == 0
    for argv in ((b"SET", b"k", b"v"), (b"GET", b"k"), (b"PING",), (b"INCR", b"n")):
        reply, ran = h.traced(*argv)
        assert not isinstance(reply, ErrorReply)
        if INTERPRETED:
            assert EXECUTE in ran and ran <= FAST, argv
    assert h.run(b"GET", b"k") == b"v"


def test_other_spellings_and_containers_take_the_general_path_with_gates_clear(
        tmp_path: Path) -> None:
    h = Harness(tmp_path)
    for argv in ((b"gEt", b"k"), (b"CONFIG", b"GET", b"hz")):
        reply, ran = h.traced(*argv)
        assert not isinstance(reply, ErrorReply)
        if INTERPRETED:
            assert "Dispatcher._execute_general" in ran and AFTER not in ran


def test_a_gate_set_by_the_command_itself_is_honoured_after_it(tmp_path: Path) -> None:
    # MONITOR and CLIENT TRACKING run on the fast path and set a gate: the call that set
    # it already sees it on its way out (a monitor is not shown MONITOR itself, as Redis).
    h = Harness(tmp_path)
    reply, ran = h.traced(b"MONITOR")
    assert reply is OK and h.figure() == gates.CONTEXT | gates.MONITORS
    if INTERPRETED:
        assert AFTER in ran
    assert h.client.outbox == []


def _expected(h: Harness) -> int:
    """The figure as the attributes behind the gates say it should read."""
    client, state = h.client, h.state
    conditions = {
        gates.NOAUTH: not client.authenticated,
        gates.ACL: client.acl is not None,
        gates.MULTI: client.multi is not None,
        gates.CONTEXT: client.monitor or (client.pubsub and client.resp == 2),
        gates.TRACKING: client.tracking is not None,
        gates.PAUSE: state.pause.active,
        gates.WRITES_REFUSED: state.writes_refused,
        gates.MEMORY: bool(state.maxmemory or state.client_eviction_limit),
        gates.FAULTS: bool(state.faults.rules),
        gates.CLUSTER: state.cluster is not None,
        gates.MONITORS: bool(state.monitors),
        gates.AOF: state.propagating,
    }
    return sum(bit for bit, held in conditions.items() if held)


# Requests that engage or release gates, sent by the client under test unless marked.
STEPS: list[tuple[bytes, ...]] = [
    (b"MULTI",), (b"EXEC",), (b"DISCARD",), (b"SET", b"k", b"v"),
    (b"SUBSCRIBE", b"a"), (b"SSUBSCRIBE", b"s"), (b"PSUBSCRIBE", b"p*"), (b"UNSUBSCRIBE",),
    (b"SUNSUBSCRIBE",), (b"PUNSUBSCRIBE",), (b"HELLO", b"3"), (b"HELLO", b"2"),
    (b"MONITOR",), (b"RESET",), (b"CLIENT", b"TRACKING", b"ON", b"BCAST"),
    (b"CLIENT", b"TRACKING", b"OFF"), (b"AUTH", b"default", b"x"),
    (b"ACL", b"SETUSER", b"default", b"-debug"), (b"ACL", b"SETUSER", b"default", b"+@all"),
    (b"CLIENT", b"PAUSE", b"100000", b"WRITE"), (b"CLIENT", b"UNPAUSE"),
    (b"CONFIG", b"SET", b"maxmemory", b"1000000000"), (b"CONFIG", b"SET", b"maxmemory", b"0"),
    (b"CONFIG", b"SET", b"maxmemory-clients", b"1000000000"),
    (b"CONFIG", b"SET", b"maxmemory-clients", b"0"),
    (b"RESPLITE.FAULT", b"DROP", b"nosuchcommand"), (b"RESPLITE.FAULT", b"CLEAR"),
    (b"OTHER", b"MONITOR"), (b"OTHER", b"RESET"), (b"OTHER", b"QUIT"),
]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(STEPS), max_size=25))
# The protocol decides whether a subscribed client is gated: switched after subscribing.
@example([(b"HELLO", b"3"), (b"SUBSCRIBE", b"a"), (b"HELLO", b"2"), (b"RESET",)])
# MONITORs that go away, by disconnecting or by RESET.
@example([(b"OTHER", b"MONITOR"), (b"OTHER", b"QUIT"), (b"MONITOR",), (b"RESET",)])
def test_the_figures_always_say_what_the_attributes_say(steps: list[tuple[bytes, ...]]) -> None:
    # Gates engaged and released in any order by the commands that do it in real use.
    h = Harness(None)
    for step in steps:
        if step[0] == b"OTHER":
            if step[1] == b"QUIT":
                h.state.forget_client(h.other)  # its connection went away
                h.other = h.add_client()
            else:
                h.run(*step[1:], client=h.other)
        else:
            h.run(*step)
        assert h.figure() == _expected(h), step
