"""Consumer groups: one pending record shared by the group and consumer PELs, kept consistent
through deliveries, claims, acknowledgements, releases (XNACK) and consumer deletion; the
delivery-time index used by XREADGROUP CLAIM, with the released entries in front; the
reference counts the stream's groups share. Times come from a frozen clock that the tests
advance.
"""

from __future__ import annotations

import pytest

from resplite.engine.clock import Clock
from resplite.store.consumer_group import MAX_DELIVERY_COUNT, ConsumerGroup
from resplite.store.stream_ids import MAX_ID, make_id


@pytest.fixture
def clock() -> Clock:
    c = Clock()
    c.set(1_700_000_000_000)
    c.freeze()
    return c


def check_invariants(group: ConsumerGroup, *others: ConsumerGroup) -> None:
    """The module's invariants; ``others`` are the groups sharing ``group``'s refs."""
    owned = {}
    for consumer in group.consumers.values():
        assert list(consumer.pel) == sorted(consumer.pel)
        for sid in consumer.pel:
            assert group.pel[sid].consumer is consumer
            owned[sid] = consumer
    released = {sid for sid, nack in group.pel.items() if nack.consumer is None}
    assert released == set(group.nacked)
    assert set(owned) | released == set(group.pel)
    assert list(group.pel_ids) == sorted(group.pel)
    by_time = group.by_time()
    assert sorted(by_time) == list(by_time)
    assert {key & MAX_ID for key in by_time} == set(owned)
    for key in by_time:
        assert group.pel[key & MAX_ID].delivery_time == key >> 128
    counts: dict[int, int] = {}
    for g in (group, *others):
        for sid in g.pel:
            counts[sid] = counts.get(sid, 0) + 1
    assert group.refs == counts


def test_deliveries_share_one_record(clock: Clock) -> None:
    g = ConsumerGroup(b"g", 0, -1)
    alice = g.get_or_create_consumer(b"alice", clock.time_ms())
    nack = g.deliver(make_id(1, 0), alice, clock.time_ms())
    assert g.pel[make_id(1, 0)] is nack
    assert list(alice.pel) == [make_id(1, 0)]
    assert (nack.delivery_count, nack.delivery_time) == (1, clock.time_ms())
    check_invariants(g)


def test_redelivery_moves_the_record_and_resets_its_count(clock: Clock) -> None:
    g = ConsumerGroup(b"g", 0, -1)
    a = g.get_or_create_consumer(b"a", clock.time_ms())
    b = g.get_or_create_consumer(b"b", clock.time_ms())
    g.by_time()  # the time index, once built, must follow every change
    first = g.deliver(make_id(1, 0), a, clock.time_ms())
    first.delivery_count = 5
    clock.advance(10)
    again = g.deliver(make_id(1, 0), b, clock.time_ms())
    assert again is first
    assert (again.consumer, again.delivery_count) == (b, 1)
    assert list(a.pel) == [] and list(b.pel) == [make_id(1, 0)]
    check_invariants(g)


def test_transfer_retime_and_ack(clock: Clock) -> None:
    g = ConsumerGroup(b"g", 0, -1)
    a = g.get_or_create_consumer(b"a", clock.time_ms())
    b = g.get_or_create_consumer(b"b", clock.time_ms())
    for ms in range(1, 6):
        g.deliver(make_id(ms, 0), a, clock.time_ms())
        clock.advance(1)
    g.by_time()
    nack = g.pel[make_id(3, 0)]
    g.transfer(make_id(3, 0), nack, b)
    g.retime(make_id(3, 0), nack, clock.time_ms() + 100)
    check_invariants(g)
    assert [key & MAX_ID for key in g.by_time()][-1] == make_id(3, 0)
    assert g.ack(make_id(3, 0))
    assert not g.ack(make_id(3, 0))
    check_invariants(g)


def test_forced_entries_belong_to_their_consumer(clock: Clock) -> None:
    g = ConsumerGroup(b"g", 0, -1)
    c = g.get_or_create_consumer(b"c", clock.time_ms())
    g.by_time()
    nack = g.force_pending(make_id(9, 9), c, clock.time_ms())
    assert nack.consumer is c
    assert (nack.delivery_count, list(c.pel)) == (1, [make_id(9, 9)])
    check_invariants(g)


def test_released_entries_lose_their_owner_and_are_claimed_first(clock: Clock) -> None:
    g = ConsumerGroup(b"g", 0, -1)
    a = g.get_or_create_consumer(b"a", clock.time_ms())
    b = g.get_or_create_consumer(b"b", clock.time_ms())
    g.by_time()
    for ms in range(1, 5):
        g.deliver(make_id(ms, 0), a, clock.time_ms())
        clock.advance(10)
    g.release(make_id(3, 0), g.pel[make_id(3, 0)], 7)
    g.release(make_id(1, 0), g.pel[make_id(1, 0)], 0)
    g.force_release(make_id(9, 0), MAX_DELIVERY_COUNT)
    check_invariants(g)
    assert list(a.pel) == [make_id(2, 0), make_id(4, 0)]
    # Released entries first, in the order they were released, then the most idle.
    assert [sid for _, sid in g.by_idle()] == [
        make_id(3, 0), make_id(1, 0), make_id(9, 0), make_id(2, 0), make_id(4, 0)]
    assert g.pel[make_id(3, 0)].delivery_time == 0
    # Releasing again moves the entry to the end of the released ones.
    g.release(make_id(3, 0), g.pel[make_id(3, 0)], 8)
    assert list(g.nacked) == [make_id(1, 0), make_id(9, 0), make_id(3, 0)]
    # A claim gives it an owner again; an acknowledgement or a redelivery removes it.
    nack = g.pel[make_id(1, 0)]
    g.transfer(make_id(1, 0), nack, b)
    g.retime(make_id(1, 0), nack, clock.time_ms())
    assert g.ack(make_id(9, 0))
    g.deliver(make_id(3, 0), b, clock.time_ms())
    check_invariants(g)
    assert g.nacked == {}
    assert list(b.pel) == [make_id(1, 0), make_id(3, 0)]


def test_delivery_counts_stop_at_the_fatal_count(clock: Clock) -> None:
    g = ConsumerGroup(b"g", 0, -1)
    g.force_release(make_id(1, 0), MAX_DELIVERY_COUNT)
    nack = g.pel[make_id(1, 0)]
    nack.count_delivery()
    assert nack.delivery_count == MAX_DELIVERY_COUNT


def test_groups_sharing_refs_count_each_pending_entry(clock: Clock) -> None:
    refs: dict[int, int] = {}
    g1 = ConsumerGroup(b"g1", 0, -1, refs)
    g2 = ConsumerGroup(b"g2", 0, -1, refs)
    c1 = g1.get_or_create_consumer(b"c", clock.time_ms())
    c2 = g2.get_or_create_consumer(b"c", clock.time_ms())
    for ms in (1, 2, 3):
        g1.deliver(make_id(ms, 0), c1, clock.time_ms())
    g2.deliver(make_id(2, 0), c2, clock.time_ms())
    g2.force_release(make_id(5, 0), 0)
    assert refs == {make_id(1, 0): 1, make_id(2, 0): 2, make_id(3, 0): 1, make_id(5, 0): 1}
    g1.ack(make_id(2, 0))
    g1.delete_consumer(c1)
    check_invariants(g1, g2)
    assert refs == {make_id(2, 0): 1, make_id(5, 0): 1}
    g2.drop_all()
    assert refs == {}


def test_deleting_a_consumer_drops_its_pending_entries(clock: Clock) -> None:
    g = ConsumerGroup(b"g", 0, -1)
    a = g.get_or_create_consumer(b"a", clock.time_ms())
    b = g.get_or_create_consumer(b"b", clock.time_ms())
    g.by_time()
    for ms in range(1, 7):
        g.deliver(make_id(ms, 0), a if ms % 2 else b, clock.time_ms())
    assert g.delete_consumer(a) == 3
    assert b"a" not in g.consumers
    assert sorted(g.pel) == [make_id(2, 0), make_id(4, 0), make_id(6, 0)]
    check_invariants(g)


def test_consumers_are_listed_by_name_and_created_once(clock: Clock) -> None:
    g = ConsumerGroup(b"g", 0, -1)
    for name in (b"zed", b"Alice", b"bob", b"alice"):
        assert g.create_consumer(name, clock.time_ms()) is not None
    assert g.create_consumer(b"bob", clock.time_ms()) is None
    assert [c.name for c in g.sorted_consumers()] == [b"Alice", b"alice", b"bob", b"zed"]
    created = g.consumers[b"zed"]
    assert (created.seen_time, created.active_time) == (clock.time_ms(), -1)


def test_copy_is_independent(clock: Clock) -> None:
    g = ConsumerGroup(b"g", make_id(5, 0), 5)
    a = g.get_or_create_consumer(b"a", clock.time_ms())
    g.deliver(make_id(1, 0), a, clock.time_ms())
    twin = g.copy()
    g.ack(make_id(1, 0))
    g.delete_consumer(a)
    assert (twin.last_id, twin.entries_read) == (make_id(5, 0), 5)
    assert list(twin.pel) == [make_id(1, 0)]
    check_invariants(twin)


@pytest.mark.parametrize("indexed", [False, True], ids=["plain", "time-indexed"])
def test_a_bulk_delivery_is_the_deliveries_one_by_one(clock: Clock, indexed: bool) -> None:
    refs: dict[int, int] = {}
    bulk, single = ConsumerGroup(b"g", 0, 0, refs), ConsumerGroup(b"h", 0, 0, {})
    other = ConsumerGroup(b"o", 0, 0, refs)  # another group sharing the stream's counts
    for group in (bulk, single, other):
        a = group.get_or_create_consumer(b"a", clock.time_ms())
        for ms in (1, 2):
            group.deliver(make_id(ms, 0), a, clock.time_ms())
        if indexed:
            group.by_time()
    other.deliver(make_id(5, 0), other.consumers[b"a"], clock.time_ms())
    clock.advance(100)
    sids = [make_id(ms, seq) for ms in range(3, 1500) for seq in (0, 1)]
    for group in (bulk, single):
        b = group.get_or_create_consumer(b"b", clock.time_ms())
        if group is bulk:
            group.deliver_above(sids, b, clock.time_ms())
        else:
            for sid in sids:
                group.deliver(sid, b, clock.time_ms())
    check_invariants(bulk, other)
    check_invariants(single)
    assert list(bulk.pel_ids) == list(single.pel_ids)
    for name in (b"a", b"b"):
        assert list(bulk.consumers[name].pel) == list(single.consumers[name].pel)
    assert [(n.consumer.name if n.consumer else None, n.delivery_time, n.delivery_count)
            for n in bulk.pel.values()] == [
        (n.consumer.name if n.consumer else None, n.delivery_time, n.delivery_count)
        for n in single.pel.values()]
    assert list(bulk.by_idle()) == list(single.by_idle())
    assert refs[make_id(5, 0)] == 2 and refs[make_id(6, 1)] == 1
