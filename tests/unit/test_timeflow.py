"""Moving the clock fires what became due in real-time order: expirations, then timeouts.

These tests drive :mod:`resplite.engine.timeflow` over a real keyspace and blocking manager
with a frozen clock and clients whose connections record what they are sent, so the order in
which a jump fires things is observable without sockets.
"""

from __future__ import annotations

from typing import Any

import pytest

from resplite.commands import command_table
from resplite.engine import timeflow
from resplite.engine.blocking import BlockRequest
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.state import ServerState

T0 = 1_700_000_000_000


class Recorder:
    """A client's connection that logs deliveries with the clock reading."""

    def __init__(self, name: str, log: list[tuple[str, Any, int]], clock: Clock) -> None:
        self.name, self.log, self.clock = name, log, clock

    def deliver(self, reply: Any) -> None:
        self.log.append((self.name, reply, self.clock.time_ms()))

    def send(self, data: bytes) -> None: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...

    def resume(self) -> None: ...

    def set_authenticated(self, authenticated: bool) -> None: ...

    def set_max_bulk_len(self, limit: int) -> None: ...

    def output_buffer_size(self) -> int:
        return 0

    def query_buffer_size(self) -> int:
        return 0


Log = list[tuple[str, Any, int]]


def make_state(active_expire: bool = True) -> tuple[ServerState, Log]:
    """A server on a frozen clock with the time flow installed, and the log its parked
    clients write what they are sent to."""
    clock = Clock()
    clock.freeze()
    clock.set(T0)
    config = Config()
    config.set("active-expire-enabled", "yes" if active_expire else "no", at_startup=True)
    state = ServerState(config, clock=clock, table=command_table())
    timeflow.install(state)
    return state, []


def park(state: ServerState, log: Log, name: str, key: bytes, timeout_ms: int) -> Client:
    """Block a client on ``key``: it is served "woken" once the key is gone."""
    client = Client(state, state.new_client_id(), Recorder(name, log, state.clock))
    client.last_command = "blpop"
    db = state.keyspace[0]

    def retry() -> Any:
        return BlockRequest([key], timeout_ms, retry, b"timeout") if db.contains(key) else b"woken"

    state.blocking.block(client, BlockRequest([key], timeout_ms, retry, b"timeout"))
    return client


def test_advance_expires_a_key_before_a_later_timeout_and_after_an_earlier_one() -> None:
    state, log = make_state()
    db = state.keyspace[0]
    for key in (b"a", b"b"):
        db.set(key, b"v")
        db.set_expire(key, T0 + 2000)
    park(state, log, "early", b"a", 1000)  # times out at +1 s, before "a" expires at +2 s
    park(state, log, "late", b"b", 3000)  # "b" expires at +2 s, before its timeout at +3 s
    assert timeflow.advance(state, 10_000) == T0 + 10_000
    # A key lives through its own millisecond: "b" is gone (and its waiter woken) at the next.
    assert log == [("early", b"timeout", T0 + 1000), ("late", b"woken", T0 + 2001)]
    assert len(db) == 0


def test_expiry_and_timeout_due_at_the_same_instant_fire_expiry_first() -> None:
    state, log = make_state()
    db = state.keyspace[0]
    db.set(b"k", b"v")
    db.set_expire(b"k", T0 + 499)  # expired from T0 + 500 on
    park(state, log, "waiter", b"k", 500)
    timeflow.advance(state, 500)
    assert log == [("waiter", b"woken", T0 + 500)]


def test_a_key_at_its_exact_time_still_lives_after_an_advance() -> None:
    state, log = make_state()
    db = state.keyspace[0]
    db.set(b"k", b"v")
    db.set_expire(b"k", T0 + 60_000)
    park(state, log, "waiter", b"k", 0)
    timeflow.advance(state, 60_000)
    assert log == [] and db.get(b"k") == b"v"
    timeflow.advance(state, 1)
    assert log == [("waiter", b"woken", T0 + 60_001)] and len(db) == 0


def test_advance_stops_at_each_deadline_in_order() -> None:
    state, log = make_state()
    for name, timeout in (("c", 300), ("a", 100), ("b", 200)):
        park(state, log, name, b"never", timeout)
    timeflow.advance(state, 250)
    assert [(n, t) for n, _, t in log] == [("a", T0 + 100), ("b", T0 + 200)]
    timeflow.advance(state, 50)
    assert [(n, t) for n, _, t in log][-1] == ("c", T0 + 300)


def test_nothing_fires_before_its_time() -> None:
    state, log = make_state()
    db = state.keyspace[0]
    db.set(b"k", b"v")
    db.set_expire(b"k", T0 + 1000)
    park(state, log, "w", b"other", 1000)
    timeflow.advance(state, 999)
    assert log == [] and len(db) == 1


def test_without_active_expiry_keys_wait_for_a_lookup() -> None:
    state, _log = make_state(active_expire=False)
    db = state.keyspace[0]
    db.set(b"k", b"v")
    db.set_expire(b"k", T0 + 10)
    timeflow.advance(state, 20)
    assert b"k" in db.data
    assert db.get(b"k") is None


def test_set_forward_walks_like_advance_and_set_backward_fires_nothing() -> None:
    state, log = make_state()
    db = state.keyspace[0]
    db.set(b"k", b"v")
    db.set_expire(b"k", T0 + 2000)
    park(state, log, "w", b"other", 1000)
    assert timeflow.set_time(state, T0 + 5000) == T0 + 5000
    assert log == [("w", b"timeout", T0 + 1000)]
    assert len(db) == 0
    db.set(b"j", b"v")
    db.set_expire(b"j", T0 + 4000)
    assert timeflow.set_time(state, T0 - 5000) == T0 - 5000
    assert db.get(b"j") == b"v"


def test_bad_requests_change_nothing() -> None:
    state, _log = make_state()
    with pytest.raises(timeflow.ClockDirectionError):
        timeflow.advance(state, -1)
    with pytest.raises(timeflow.ClockRangeError):
        timeflow.advance(state, timeflow.MAX_TIME_MS)
    with pytest.raises(timeflow.ClockRangeError):
        timeflow.set_time(state, -1)
    with pytest.raises(timeflow.ClockRangeError):
        timeflow.set_time(state, timeflow.MAX_TIME_MS + 1)
    assert state.clock.time_ms() == T0
    assert state.clock.frozen


def test_reset_lets_time_run_at_the_system_clock() -> None:
    import time

    state, _log = make_state()
    timeflow.advance(state, 86_400_000)
    timeflow.reset(state)
    assert not state.clock.frozen
    assert abs(state.clock.time_ms() - time.time() * 1000) < 1000
