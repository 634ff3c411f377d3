"""Consumer groups: one pending record shared by the group and consumer PELs, kept consistent
through deliveries, claims, acknowledgements and consumer deletion; the delivery-time index
used by XREADGROUP CLAIM. Times come from a frozen clock that the tests advance.
"""

from __future__ import annotations

import pytest

from resplite.engine.clock import Clock
from resplite.store.consumer_group import ConsumerGroup
from resplite.store.stream_ids import MAX_ID, make_id


@pytest.fixture
def clock() -> Clock:
    c = Clock()
    c.set(1_700_000_000_000)
    c.freeze()
    return c


def check_invariants(group: ConsumerGroup) -> None:
    owned = {}
    for consumer in group.consumers.values():
        assert list(consumer.pel) == sorted(consumer.pel)
        for sid in consumer.pel:
            assert group.pel[sid].consumer is consumer
            owned[sid] = consumer
    assert set(owned) == set(group.pel)
    assert list(group.pel_ids) == sorted(group.pel)
    by_time = group.by_time()
    assert sorted(by_time) == list(by_time)
    assert {key & MAX_ID for key in by_time} == set(group.pel)
    for key in by_time:
        assert group.pel[key & MAX_ID].delivery_time == key >> 128


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


def test_forced_entries_are_adopted(clock: Clock) -> None:
    g = ConsumerGroup(b"g", 0, -1)
    c = g.get_or_create_consumer(b"c", clock.time_ms())
    nack = g.force_pending(make_id(9, 9), clock.time_ms())
    assert nack.consumer is None
    g.adopt(make_id(9, 9), nack, c)
    check_invariants(g)


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
