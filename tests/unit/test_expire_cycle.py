"""The active expire cycle (resplite/engine/expire.py) on a frozen clock and a fake timer.

The server clock decides which keys are due; the cycle's time limits read a separate timer,
faked here so that every look at it moves it on by a fixed step: how much work a cycle does
before it stops is then exact, whatever the machine is doing. Fast cycles are scheduled on a
:class:`~resplite.engine.scheduler.ManualScheduler` and run by hand.
"""

from __future__ import annotations

import pytest

from resplite.commands import command_table
from resplite.engine.client import Client
from resplite.engine.config import Config
from resplite.engine.expire import ActiveExpire, Effort
from resplite.engine.scheduler import ManualScheduler
from resplite.engine.state import ServerState
from resplite.store.keyspace import Database

T0 = 1_700_000_000_000


class FakeTimer:
    """A nanosecond timer that moves ``step_ns`` on at every reading."""

    def __init__(self, step_ns: int) -> None:
        self.now_ns = 0
        self.step_ns = step_ns
        self.readings = 0

    def __call__(self) -> int:
        self.now_ns += self.step_ns
        self.readings += 1
        return self.now_ns


def make_state(step_ns: int = 1_000, **directives: str) -> tuple[ServerState, ActiveExpire,
                                                                  ManualScheduler, FakeTimer]:
    config = Config()
    for name, value in directives.items():
        config.set(name.replace("_", "-"), value, at_startup=True)
    scheduler = ManualScheduler()
    state = ServerState(config, table=command_table(), scheduler=scheduler)
    state.clock.freeze()
    state.clock.set(T0)
    timer = FakeTimer(step_ns)
    expiry = state.expiry = ActiveExpire(state, timer)
    return state, expiry, scheduler, timer


def fill(db: Database, count: int, when: int, prefix: bytes = b"k") -> None:
    for i in range(count):
        key = b"%s%d" % (prefix, i)
        db.set(key, b"v")
        db.set_expire(key, when)


def test_effort_scales_the_parameters_as_redis() -> None:
    # expire.c: keys per loop 20 + 20/4 per step, fast cycle 1000 us + 1000/4 per step,
    # slow cycle 25 % of CPU + 2 per step, acceptable stale 10 % - 1 per step.
    low, high = Effort(1), Effort(10)
    assert (low.keys_per_loop, low.fast_duration_us, low.slow_time_perc,
            low.acceptable_stale) == (20, 1000, 25, 10)
    assert (high.keys_per_loop, high.fast_duration_us, high.slow_time_perc,
            high.acceptable_stale) == (65, 3250, 43, 1)


@pytest.mark.parametrize(("effort", "hz"), [(1, 10), (10, 10), (1, 100)])
def test_a_slow_cycle_stops_at_its_time_limit(effort: int, hz: int) -> None:
    # 1 ms per look at the timer: one loop of keys per millisecond of the fake timer.
    state, expiry, _, timer = make_state(1_000_000, active_expire_effort=str(effort),
                                         hz=str(hz))
    db = state.keyspace[0]
    fill(db, 20_000, T0 - 1)
    params = Effort(effort)
    limit_ms = params.slow_time_perc * 1000 // hz // 100
    deleted = expiry.slow_cycle()
    # Stopped once the limit was passed, having done at most one loop beyond it.
    assert expiry.timelimit_exit
    assert expiry.time_cap_reached == 1
    assert 0 < deleted <= (limit_ms + 1) * params.keys_per_loop
    assert timer.now_ns <= (limit_ms + 3) * 1_000_000
    assert len(db) == 20_000 - deleted
    assert db.expired_keys == deleted


def test_a_capped_cycle_asks_for_fast_cycles_each_bounded_and_spaced() -> None:
    state, expiry, scheduler, _ = make_state(100_000)  # 0.1 ms per look
    db = state.keyspace[0]
    fill(db, 20_000, T0 - 1)
    expiry.slow_cycle()
    assert expiry.timelimit_exit
    assert scheduler.armed == 1
    left = len(db)
    assert scheduler.run_due(0) == 1  # the first fast cycle may run at once
    # 1000 us at 0.1 ms per look: at most 11 loops of 20 keys.
    taken = left - len(db)
    assert 0 < taken <= 11 * 20
    assert expiry.time_cap_reached == 2
    # The next one waits until twice the fast duration after this one's start.
    (when_s, _, _), = scheduler.pending
    assert 0 < when_s - scheduler.now_s <= 0.002
    before = len(db)
    assert expiry.fast_cycle() == 0  # too soon: nothing done
    assert len(db) == before
    # Fast cycles repeat until the keys are gone, then stop asking.
    rounds = 0
    while scheduler.armed and rounds < 10_000:
        scheduler.run_due(0.002)
        rounds += 1
    assert len(db) == 0
    assert not expiry.timelimit_exit


def test_no_fast_cycle_without_a_capped_cycle() -> None:
    state, expiry, scheduler, _ = make_state()
    fill(state.keyspace[0], 10, T0 - 1)
    assert expiry.fast_cycle() == 0
    assert len(state.keyspace[0]) == 10
    assert expiry.slow_cycle() == 10
    assert scheduler.armed == 0


def test_keys_whose_time_has_not_passed_are_never_taken() -> None:
    state, expiry, _, _ = make_state()
    db = state.keyspace[0]
    fill(db, 500, T0 - 1, b"past")
    fill(db, 500, T0, b"now")  # lives through its own millisecond
    fill(db, 500, T0 + 1, b"later")
    db.set(b"forever", b"v")
    for _ in range(50):
        expiry.slow_cycle()
    assert len(db) == 1001
    assert not any(key.startswith(b"past") for key in db.data)
    state.clock.advance(1)
    expiry.slow_cycle()
    assert sorted(db.data) == sorted([b"forever"] + [b"later%d" % i for i in range(500)])


def test_a_changed_or_removed_expiry_is_honoured() -> None:
    state, expiry, _, _ = make_state()
    db = state.keyspace[0]
    fill(db, 3, T0 - 1)
    db.set_expire(b"k0", T0 + 1000)  # a later EXPIRE
    db.persist(b"k1")  # PERSIST
    expiry.slow_cycle()
    assert sorted(db.data) == [b"k0", b"k1"]
    assert db.expired_keys == 1


def test_no_cycle_runs_while_clients_are_paused() -> None:
    # Redis pauses expiry with writes (PAUSE_ACTION_EXPIRE is in both pause sets): keys are
    # reclaimed after the pause.
    for pause_all in (False, True):
        state, expiry, _, _ = make_state()
        db = state.keyspace[0]
        fill(db, 100, T0 - 1)
        state.pause.pause(T0 + 10_000, pause_all)
        assert expiry.slow_cycle() == 0
        assert expiry.fast_cycle() == 0
        assert len(db) == 100
        state.pause.unpause()
        assert expiry.slow_cycle() == 100


def test_active_expire_enabled_no_stops_the_cycle() -> None:
    state, expiry, _, _ = make_state(active_expire_enabled="no")
    fill(state.keyspace[0], 10, T0 - 1)
    assert expiry.slow_cycle() == 0
    assert len(state.keyspace[0]) == 10


def test_the_database_cursor_carries_on_across_cycles() -> None:
    # One loop per millisecond and a 1 ms limit (hz 250: 25 % of 4 ms): a cycle stops in
    # the first database it works in, and the next cycle starts at the database after it.
    state, expiry, _, _ = make_state(1_000_000, hz="250")
    fill(state.keyspace[0], 10_000, T0 - 1)
    fill(state.keyspace[1], 10_000, T0 - 1)
    expiry.slow_cycle()
    assert len(state.keyspace[0]) < 10_000 and len(state.keyspace[1]) == 10_000
    expiry.slow_cycle()
    assert len(state.keyspace[1]) < 10_000


def test_stale_share_is_a_running_average_of_what_cycles_find_due() -> None:
    state, expiry, _, _ = make_state(1_000_000)
    db = state.keyspace[0]
    fill(db, 20_000, T0 - 1)
    expiry.slow_cycle()
    # All sampled times were due: 5 % of 100 % folded into 0.
    assert expiry.stale_perc == pytest.approx(0.05)
    lines = dict(expiry.info_lines())
    assert lines["expired_stale_perc"] == "5.00"
    assert lines["expired_time_cap_reached_count"] == 1
    while len(db):
        expiry.slow_cycle()
    peak = expiry.stale_perc
    expiry.slow_cycle()  # nothing due any more: the estimate decays
    assert expiry.stale_perc == pytest.approx(peak * 0.95)


def test_keys_due_in_the_future_are_never_sampled_as_stale() -> None:
    state, expiry, _, _ = make_state()
    fill(state.keyspace[0], 1000, T0 + 60_000)
    expiry.slow_cycle()
    assert expiry.stale_perc == 0.0
    assert len(state.keyspace[0]) == 1000


def test_hash_fields_expire_through_the_cycle() -> None:
    state, expiry, _, _ = make_state()
    client = Client(state, 1, None)
    dispatcher = state.dispatcher
    dispatcher.execute(client, [b"HSET", b"h", b"a", b"1", b"b", b"2", b"c", b"3"])
    dispatcher.execute(client, [b"HPEXPIREAT", b"h", b"%d" % (T0 + 5), b"FIELDS", b"2",
                                b"a", b"b"])
    expiry.slow_cycle()
    assert sorted(state.keyspace[0].data[b"h"].fields) == [b"a", b"b", b"c"]
    state.clock.advance(6)
    assert expiry.slow_cycle() == 2
    assert sorted(state.keyspace[0].data[b"h"].fields) == [b"c"]
    assert state.keyspace[0].expired_fields == 2
