"""The store's claims and positions: ConsumerGroup.claim (XCLAIM), .autoclaim (XAUTOCLAIM),
.claimable / .redeliver / .redeliver_own (XREADGROUP CLAIM and history reads),
.set_position (XGROUP SETID) and Stream.set_last_id (XSETID).

Each claim is checked against a model: a plain dict of the pending entries, changed as
Redis's code says, over random streams (some entries deleted), random PELs (entries
delivered at different times to two consumers, some released by XNACK) and random
arguments; the group's invariants (tests/unit/test_consumer_groups.py) hold after each.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.store.consumer_group import (
    INVALID_ENTRIES_READ,
    ConsumerGroup,
    bounded_entries_read,
)
from resplite.store.stream import SetIdRefused, Stream
from resplite.store.stream_ids import U64, make_id
from unit.test_consumer_groups import check_invariants

NOW = 1_700_000_000_000


@dataclass
class Pending:
    owner: bytes | None
    time: int
    count: int


Model = dict[int, Pending]


@st.composite
def scenes(draw: st.DrawFn) -> tuple[Stream, ConsumerGroup, Model]:
    """A stream of up to 30 entries (some deleted), a group whose PEL holds some or all of
    them (deleted ones too), and the PEL as a model."""
    stream = Stream()
    n = draw(st.integers(1, 30))
    for ms in range(1, n + 1):
        stream.append(make_id(ms, 0), [b"XADD", b"k", b"id", b"f", b"%d" % ms], 3, 100, 4096)
    group = stream.create_group(b"g", make_id(n, 0), n)
    assert group is not None
    if draw(st.booleans()):
        group.by_time()  # the time index, once built, must follow every change
    consumers = [group.get_or_create_consumer(name, NOW - 1000) for name in (b"a", b"b")]
    model: Model = {}
    delivered = range(1, n + 1) if draw(st.booleans()) else draw(st.sets(st.integers(1, n)))
    for ms in delivered:
        sid = make_id(ms, 0)
        owner = draw(st.sampled_from(consumers))
        # Some in the future: the clock went back since (XREADGROUP CLAIM then counts the
        # idle time as Redis's unsigned difference).
        when = NOW - draw(st.integers(-50, 500))
        group.deliver(sid, owner, when)
        count = draw(st.integers(1, 4))
        group.pel[sid].delivery_count = count
        model[sid] = Pending(owner.name, when, count)
    for sid in draw(st.lists(st.sampled_from(sorted(model)), unique=True)) if model else []:
        count = draw(st.integers(0, 3))
        group.release(sid, group.pel[sid], count)
        model[sid] = Pending(None, 0, count)
    for ms in draw(st.sets(st.integers(1, n))):
        stream.delete(make_id(ms, 0))
    check_invariants(group)
    return stream, group, model


def state(group: ConsumerGroup) -> Model:
    return {
        sid: Pending(None if nack.consumer is None else nack.consumer.name,
                     nack.delivery_time, nack.delivery_count)
        for sid, nack in group.pel.items()
    }


@settings(max_examples=150, deadline=None)
@given(scene=scenes(), start_ms=st.integers(0, 32), count=st.integers(1, 4),
       min_idle=st.sampled_from([0, 100, 300, 600]), justid=st.booleans())
def test_autoclaim_is_redis_walk(scene: tuple[Stream, ConsumerGroup, Model], start_ms: int,
                                 count: int, min_idle: int, justid: bool) -> None:
    stream, group, model = scene
    # The model: Redis's loop over the PEL from start, at most count * 10 records looked at.
    want_claimed: list[int] = []
    want_deleted: list[int] = []
    ids = sorted(sid for sid in model if sid >= make_id(start_ms, 0))
    left, attempts, looked = count, count * 10, 0
    for sid in ids:
        if not attempts or not left:
            break
        attempts -= 1
        looked += 1
        if not stream.exists(sid):
            want_deleted.append(sid)
            left -= 1
            continue
        if min_idle and NOW - model[sid].time < min_idle:
            continue
        want_claimed.append(sid)
        model[sid] = Pending(b"a", NOW, model[sid].count + (0 if justid else 1))
        left -= 1
    want_cursor = ids[looked] if looked < len(ids) else 0
    for sid in want_deleted:
        del model[sid]

    consumer = group.consumers[b"a"]
    active = consumer.active_time
    claimed, entries, deleted, cursor = group.autoclaim(
        stream, make_id(start_ms, 0), count, min_idle, consumer, NOW, justid)

    assert (claimed, deleted, cursor) == (want_claimed, want_deleted, want_cursor)
    assert entries == ([] if justid else [stream.get(sid) for sid in claimed])
    assert state(group) == model
    assert consumer.active_time == (NOW if claimed else active)
    check_invariants(group)


def test_autoclaim_looks_at_ten_records_per_entry_asked() -> None:
    stream = _stream(*range(1, 26))
    group = stream.create_group(b"g", make_id(25, 0), 25)
    assert group is not None
    a = group.get_or_create_consumer(b"a", NOW)
    for ms in range(1, 26):
        group.deliver(make_id(ms, 0), a, NOW)
    # Nothing idle long enough: two entries asked, twenty records looked at.
    claimed, _, deleted, cursor = group.autoclaim(stream, 0, 2, 1000, a, NOW, False)
    assert (claimed, deleted, cursor) == ([], [], make_id(21, 0))
    claimed, _, _, cursor = group.autoclaim(stream, make_id(21, 0), 2, 0, a, NOW + 1, True)
    assert (claimed, cursor) == ([make_id(21, 0), make_id(22, 0)], make_id(23, 0))


@settings(max_examples=150, deadline=None)
@given(scene=scenes(), picks=st.lists(st.integers(1, 32), max_size=8),
       min_idle=st.sampled_from([0, 100, 300, 600]), when=st.sampled_from([-1, 5, NOW + 9]),
       retrycount=st.sampled_from([-1, 0, 7]), force=st.booleans(), justid=st.booleans(),
       last_ms=st.integers(0, 40))
def test_claim_is_redis_xclaim(scene: tuple[Stream, ConsumerGroup, Model], picks: list[int],
                               min_idle: int, when: int, retrycount: int, force: bool,
                               justid: bool, last_ms: int) -> None:
    stream, group, model = scene
    before_last = group.last_id
    at = NOW if when < 0 or when > NOW else when
    want_changed: list[int] = []
    want_entries: list[list[bytes] | None] = []
    for ms in picks:
        sid = make_id(ms, 0)
        fields = stream.get(sid)
        if fields is None:
            if sid in model:
                del model[sid]
                want_changed.append(sid)
                want_entries.append(None)
            continue
        pending = model.get(sid)
        forced = force and pending is None
        if forced:
            pending = Pending(b"b", NOW, 1)
        if pending is None:
            continue
        if (not forced and pending.owner is not None and min_idle
                and NOW - pending.time < min_idle):
            continue
        count = retrycount if retrycount >= 0 else pending.count + (0 if justid else 1)
        model[sid] = Pending(b"b", at, count)
        want_changed.append(sid)
        want_entries.append(fields)

    consumer = group.consumers[b"b"]
    active = consumer.active_time
    changed = group.claim(stream, [make_id(ms, 0) for ms in picks], consumer, NOW, when,
                          min_idle, retrycount, force, justid, make_id(last_ms, 0))

    assert changed == list(zip(want_changed, want_entries, strict=True))
    assert state(group) == model
    assert group.last_id == max(before_last, make_id(last_ms, 0))
    assert consumer.active_time == (NOW if any(e is not None for e in want_entries) else active)
    check_invariants(group)


@settings(max_examples=100, deadline=None)
@given(scene=scenes(), min_idle=st.sampled_from([0, 100, 300, 600]),
       count=st.integers(0, 5))
def test_readgroup_claim_takes_released_then_most_idle(
        scene: tuple[Stream, ConsumerGroup, Model], min_idle: int, count: int) -> None:
    _, group, model = scene
    # Released entries first (idle since 0), then by delivery time; the walk stops at the
    # first one not idle long enough (a delivery time in the future is, as in Redis).
    released = [(0, sid) for sid in group.nacked]
    owned = sorted((p.time, sid) for sid, p in model.items() if p.owner is not None)
    order = list(itertools.takewhile(lambda pair: (NOW - pair[0]) & U64 >= min_idle,
                                     released + owned))
    want = [sid for _, sid in (order[:count] if count else order)]
    assert group.claimable(min_idle, count, NOW) == want
    assert state(group) == model  # a read only

    consumer = group.consumers[b"a"]
    active = consumer.active_time
    group.redeliver(want, consumer, NOW)
    for sid in want:
        model[sid] = Pending(b"a", NOW, model[sid].count + 1)
    assert state(group) == model
    assert consumer.active_time == (NOW if want else active)
    check_invariants(group)


@settings(max_examples=100, deadline=None)
@given(scene=scenes())
def test_history_reads_keep_owner_and_activity(
        scene: tuple[Stream, ConsumerGroup, Model]) -> None:
    _, group, model = scene
    consumer = group.consumers[b"b"]
    active = consumer.active_time
    mine = list(consumer.pel)
    group.redeliver_own(mine, NOW + 5)
    for sid in mine:
        model[sid] = Pending(b"b", NOW + 5, model[sid].count + 1)
    assert state(group) == model
    assert consumer.active_time == active
    check_invariants(group)


def test_set_position_cuts_the_read_counter_to_what_was_added() -> None:
    group = ConsumerGroup(b"g", make_id(5, 0), 5)
    group.set_position(make_id(2, 0), 40, 10)
    assert (group.last_id, group.entries_read) == (make_id(2, 0), 10)
    group.set_position(make_id(9, 0), 3, 10)
    assert (group.last_id, group.entries_read) == (make_id(9, 0), 3)
    group.set_position(0, INVALID_ENTRIES_READ, 10)
    assert (group.last_id, group.entries_read) == (0, INVALID_ENTRIES_READ)
    assert bounded_entries_read(INVALID_ENTRIES_READ, 0) == INVALID_ENTRIES_READ


def _stream(*ms: int) -> Stream:
    stream = Stream()
    for m in ms:
        stream.append(make_id(m, 0), [b"XADD", b"k", b"id", b"f", b"v"], 3, 100, 4096)
    return stream


@pytest.mark.parametrize(("args", "refusal"), [
    # Checked in Redis's order: each case also breaks every rule after its own.
    ((make_id(4, 0), 1, make_id(6, 0)), SetIdRefused.MAX_DELETED_ABOVE),
    ((make_id(2, 0), 1, 0), SetIdRefused.BELOW_MAX_DELETED),
    ((make_id(4, 0), 1, 0), SetIdRefused.BELOW_TOP),
    ((make_id(9, 0), 1, 0), SetIdRefused.ENTRIES_ADDED_SMALL),
])
def test_set_last_id_refuses_what_would_break_the_history(
        args: tuple[int, int, int], refusal: SetIdRefused) -> None:
    stream = _stream(1, 2, 3, 5, 6)
    stream.delete(make_id(3, 0))
    before = (stream.last_id, stream.entries_added, stream.max_deleted_id)
    assert stream.set_last_id(*args) is refusal
    assert (stream.last_id, stream.entries_added, stream.max_deleted_id) == before


def test_set_last_id_moves_the_history_and_cuts_read_counters() -> None:
    stream = _stream(1, 2, 3)
    ahead = stream.create_group(b"ahead", make_id(3, 0), 3)
    behind = stream.create_group(b"behind", make_id(1, 0), 1)
    unknown = stream.create_group(b"unknown", 0, INVALID_ENTRIES_READ)
    assert ahead is not None and behind is not None and unknown is not None
    assert stream.set_last_id(make_id(7, 0)) is None
    assert (stream.last_id, stream.entries_added, stream.max_deleted_id) == (make_id(7, 0), 3, 0)
    assert stream.set_last_id(make_id(8, 0), 2, make_id(8, 0)) \
        is SetIdRefused.ENTRIES_ADDED_SMALL
    stream.delete(make_id(3, 0))
    assert stream.set_last_id(make_id(8, 0), 2, make_id(8, 0)) is None
    assert (stream.last_id, stream.entries_added, stream.max_deleted_id) \
        == (make_id(8, 0), 2, make_id(8, 0))
    assert (ahead.entries_read, behind.entries_read, unknown.entries_read) \
        == (2, 1, INVALID_ENTRIES_READ)
