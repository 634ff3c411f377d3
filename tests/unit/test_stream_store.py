"""The stream store: node layout as Redis's listpacks, trimming, tombstones, lag, copies.

Times come from a frozen :class:`~resplite.engine.clock.Clock` that the tests advance.
"""

from __future__ import annotations

import tracemalloc

import pytest

from resplite.engine.clock import Clock
from resplite.store.consumer_group import INVALID_ENTRIES_READ
from resplite.store.listpack_size import int_size, str_size
from resplite.store.radix_shape import radix_node_count
from resplite.store.stream import RefPolicy, Stream, TrimStrategy
from resplite.store.stream_ids import MAX_ID, make_id

NODE_ENTRIES = 100
NODE_BYTES = 4096


@pytest.fixture
def clock() -> Clock:
    c = Clock()
    c.freeze()
    return c


def add(stream: Stream, ms: int, *pairs: bytes, seq: int = 0,
        max_entries: int = NODE_ENTRIES, max_bytes: int = NODE_BYTES) -> int:
    sid = make_id(ms, seq)
    argv = [b"XADD", b"key", b"id", *pairs]
    stream.append(sid, argv, 3, max_entries, max_bytes)
    return sid


def filled(n: int, **kw: int) -> Stream:
    s = Stream()
    for i in range(1, n + 1):
        add(s, i, b"f", b"v%d" % i, **kw)
    return s


# -- listpack accounting ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "size"),
    [(0, 2), (127, 2), (128, 3), (-1, 3), (4095, 3), (-4097, 4), (32767, 4), (40000, 5),
     (8388608, 6), (2147483648, 10)],
)
def test_integer_element_sizes(value: int, size: int) -> None:
    assert int_size(value) == size


@pytest.mark.parametrize(
    ("text", "size"),
    [(b"hello", 7), (b"x" * 63, 65), (b"x" * 64, 67), (b"x" * 125, 128), (b"x" * 126, 130),
     (b"12", 2), (b"-5", 3), (b"007", 5), (b"99999999999999999999", 22)],
)
def test_string_element_sizes(text: bytes, size: int) -> None:
    assert str_size(text) == size


# -- node layout --------------------------------------------------------------------------------


def test_nodes_hold_stream_node_max_entries() -> None:
    s = filled(250)
    assert [node.count for node in s.nodes] == [100, 100, 50]
    assert s.node_count == 3


def test_large_values_split_nodes_by_bytes() -> None:
    # 200-byte values: Redis opens a new node after 19 entries (measured on Redis 7.0).
    s = Stream()
    for i in range(1, 41):
        add(s, i, b"field", b"x" * 200)
    assert [node.count for node in s.nodes] == [19, 19, 2]


def test_tombstones_count_towards_the_entry_limit() -> None:
    s = filled(10, max_entries=10)
    for ms in range(1, 10):
        assert s.delete(make_id(ms, 0))
    add(s, 11, b"f", b"v", max_entries=10)
    assert [(n.count, n.deleted) for n in s.nodes] == [(1, 9), (1, 0)]


def test_entries_with_other_fields_are_kept_whole() -> None:
    s = Stream()
    add(s, 1, b"a", b"1", b"b", b"2")
    add(s, 2, b"b", b"2", b"a", b"1")
    add(s, 3, b"a", b"x", b"b", b"y")
    add(s, 4, b"a", b"only")
    assert s.range(0, MAX_ID) == [
        (make_id(1, 0), [b"a", b"1", b"b", b"2"]),
        (make_id(2, 0), [b"b", b"2", b"a", b"1"]),
        (make_id(3, 0), [b"a", b"x", b"b", b"y"]),
        (make_id(4, 0), [b"a", b"only"]),
    ]


def test_long_values_round_trip() -> None:
    s = Stream()
    big = bytes(range(256)) * 100
    add(s, 1, b"k" * 300, big, b"", b"")
    assert s.get(make_id(1, 0)) == [b"k" * 300, big, b"", b""]


def test_memory_per_entry_stays_compact() -> None:
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    s = Stream()
    for i in range(1, 20001):
        s.append(make_id(1700000000000 + i, 0), [b"f1", b"%08d" % i, b"f2", b"v%07d" % i],
                 0, NODE_ENTRIES, NODE_BYTES)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    per_entry = (after - before) / 20000
    assert per_entry < 48, per_entry


# -- reading ------------------------------------------------------------------------------------


def test_range_seeks_and_honours_count_and_direction() -> None:
    s = filled(300)
    got = s.range(make_id(150, 0), make_id(155, 0))
    assert [sid >> 64 for sid, _ in got] == [150, 151, 152, 153, 154, 155]
    got = s.range(make_id(150, 0), MAX_ID, count=2, rev=True)
    assert [sid >> 64 for sid, _ in got] == [300, 299]
    assert s.range(make_id(5, 0), make_id(4, 0)) == []
    assert s.range(0, make_id(0, 5)) == []


def test_iteration_skips_tombstones_both_ways() -> None:
    s = filled(5)
    s.delete(make_id(2, 0))
    s.delete(make_id(4, 0))
    assert [sid >> 64 for sid, _ in s.range(0, MAX_ID)] == [1, 3, 5]
    assert [sid >> 64 for sid, _ in s.range(0, MAX_ID, rev=True)] == [5, 3, 1]


# -- deleting -----------------------------------------------------------------------------------


def test_delete_updates_first_id_and_max_deleted() -> None:
    s = filled(3)
    assert s.delete(make_id(1, 0))
    assert s.first_id == make_id(2, 0)
    assert s.max_deleted_id == make_id(1, 0)
    assert not s.delete(make_id(1, 0))
    assert s.delete(make_id(3, 0))
    assert s.max_deleted_id == make_id(3, 0)
    assert s.delete(make_id(2, 0))
    assert (s.length, s.first_id, s.node_count) == (0, 0, 0)
    assert s.entries_added == 3


def test_deleting_a_nodes_last_live_entry_frees_the_node() -> None:
    s = filled(150)
    for ms in range(101, 151):
        s.delete(make_id(ms, 0))
    assert s.node_count == 1


# -- trimming -----------------------------------------------------------------------------------


def test_exact_maxlen_leaves_tombstones_in_the_head_node() -> None:
    s = filled(250)
    assert s.trim(TrimStrategy.MAXLEN, 120) == 130
    assert s.length == 120
    assert [(n.count, n.deleted) for n in s.nodes] == [(70, 30), (50, 0)]
    assert s.first_id == make_id(131, 0)


def test_approximate_maxlen_removes_whole_nodes_only() -> None:
    s = filled(250)
    assert s.trim(TrimStrategy.MAXLEN, 120, approx=True, limit=10000) == 100
    assert s.length == 150
    assert s.trim(TrimStrategy.MAXLEN, 120, approx=True, limit=10000) == 0


def test_limit_bounds_an_approximate_trim() -> None:
    s = filled(500)
    assert s.trim(TrimStrategy.MAXLEN, 0, approx=True, limit=250) == 200
    assert s.trim(TrimStrategy.MAXLEN, 0, approx=True, limit=50) == 0


def test_minid_compares_against_each_nodes_last_id() -> None:
    s = filled(250)
    assert s.trim(TrimStrategy.MINID, make_id(101, 0), approx=True, limit=10000) == 100
    assert s.trim(TrimStrategy.MINID, make_id(150, 0)) == 49
    assert s.first_id == make_id(150, 0)


def test_exact_minid_can_leave_an_empty_node_like_redis() -> None:
    s = filled(3)
    s.delete(make_id(3, 0))
    # The node's last listpack entry (a tombstone) is not below the threshold: the node stays.
    assert s.trim(TrimStrategy.MINID, make_id(3, 0)) == 2
    assert (s.length, s.node_count, s.nodes[0].count) == (0, 1, 0)
    assert s.first_id == 0


def test_acked_trim_keeps_what_a_group_still_needs(clock: Clock) -> None:
    s = filled(5)
    group = s.create_group(b"g", make_id(3, 0), 3)
    assert group is not None
    consumer = group.get_or_create_consumer(b"c", clock.time_ms())
    group.deliver(make_id(2, 0), consumer, clock.time_ms())
    removed = s.trim(TrimStrategy.MAXLEN, 0, policy=RefPolicy.ACKED)
    assert removed == 2  # 1 and 3: 2 is pending, 4 and 5 are unread
    assert [sid >> 64 for sid, _ in s.range(0, MAX_ID)] == [2, 4, 5]


def test_delref_trim_drops_pending_entries(clock: Clock) -> None:
    s = filled(5)
    group = s.create_group(b"g", MAX_ID, INVALID_ENTRIES_READ)
    assert group is not None
    consumer = group.get_or_create_consumer(b"c", clock.time_ms())
    for ms in (1, 2, 5):
        group.deliver(make_id(ms, 0), consumer, clock.time_ms())
    assert s.trim(TrimStrategy.MAXLEN, 3, policy=RefPolicy.DELREF) == 2
    assert list(group.pel) == [make_id(5, 0)]
    assert list(consumer.pel) == [make_id(5, 0)]


# -- read counters and lag ------------------------------------------------------------------


def test_lag_of_a_group_that_read_everything_is_zero() -> None:
    s = filled(5)
    g = s.create_group(b"g", 0, INVALID_ENTRIES_READ)
    assert g is not None
    assert s.group_lag(g) == 5  # last id before the first entry, no tombstones
    for ms in range(1, 6):
        s.advance_group(g, make_id(ms, 0))
    assert (g.entries_read, s.group_lag(g)) == (5, 0)


def test_lag_is_unknown_with_a_tombstone_after_the_group() -> None:
    s = filled(5)
    g = s.create_group(b"g", make_id(2, 0), INVALID_ENTRIES_READ)
    assert g is not None
    s.delete(make_id(4, 0))
    assert s.group_lag(g) is None
    g.entries_read = 2
    assert s.group_lag(g) is None  # the tombstone after 2-0 invalidates the counter


def test_lag_counts_from_entries_added_when_valid() -> None:
    s = filled(5)
    s.delete(make_id(1, 0))  # tombstone before the group's last id
    g = s.create_group(b"g", make_id(3, 0), 3)
    assert g is not None
    assert s.group_lag(g) == 2


def test_estimates_follow_redis_rules() -> None:
    s = filled(5)
    assert s.estimate_entries_read(make_id(5, 0)) == 5  # the last id
    assert s.estimate_entries_read(make_id(9, 0)) == INVALID_ENTRIES_READ  # the future
    assert s.estimate_entries_read(make_id(1, 0)) == 1  # the first entry
    assert s.estimate_entries_read(0) == 0  # before the first entry
    assert s.estimate_entries_read(make_id(3, 0)) == INVALID_ENTRIES_READ  # in between
    empty = Stream()
    assert empty.estimate_entries_read(make_id(3, 0)) == 0


# -- radix tree shape -----------------------------------------------------------------------


def test_radix_node_counts() -> None:
    assert radix_node_count([]) == 1
    assert radix_node_count([make_id(1, 0)]) == 2
    # Keys differing only in the last byte: shared prefix, a branch, two leaves.
    assert radix_node_count([make_id(1, 0), make_id(1, 1)]) == 4
    # Three keys branching on the last millisecond byte (Redis reports 8 for 1, 101, 201).
    assert radix_node_count([make_id(1, 0), make_id(101, 0), make_id(201, 0)]) == 8


# -- copies ---------------------------------------------------------------------------------


def test_copy_is_deep(clock: Clock) -> None:
    s = filled(150)
    g = s.create_group(b"g", 0, INVALID_ENTRIES_READ)
    assert g is not None
    c = g.get_or_create_consumer(b"c", clock.time_ms())
    g.deliver(make_id(1, 0), c, clock.time_ms())
    twin = s.copy()
    s.delete(make_id(2, 0))
    add(s, 151, b"f", b"x")
    g.ack(make_id(1, 0))
    assert twin.length == 150
    assert twin.get(make_id(2, 0)) == [b"f", b"v2"]
    assert twin.get(make_id(151, 0)) is None
    twin_group = twin.groups[b"g"]
    assert list(twin_group.pel) == [make_id(1, 0)]
    assert twin_group.pel[make_id(1, 0)].consumer is twin_group.consumers[b"c"]
    assert Stream.type_name == "stream" and Stream.encoding == "stream"


def test_ids_wider_than_32_bits_widen_the_node_arrays() -> None:
    s = Stream()
    ids = [make_id(5, 0), make_id(5, 1 << 40), make_id(5 + (1 << 33), 7),
           make_id((1 << 64) - 1, (1 << 64) - 2)]
    for sid in ids:
        s.append(sid, [b"f", b"%d" % sid], 0, NODE_ENTRIES, NODE_BYTES)
    assert s.node_count == 1
    node = s.nodes[0]
    assert (node.ms.typecode, node.seq.typecode) == ("Q", "Q")
    assert [sid for sid, _ in s.range(0, MAX_ID)] == ids
    assert [sid for sid, _ in s.range(0, MAX_ID, rev=True)] == ids[::-1]
    assert s.range(make_id(5, 1), make_id(5 + (1 << 33), 7)) == [
        (ids[1], [b"f", b"%d" % ids[1]]), (ids[2], [b"f", b"%d" % ids[2]])]
    assert s.delete(ids[2]) and not s.exists(ids[2]) and s.exists(ids[3])
    narrow = filled(3)
    assert (narrow.nodes[0].ms.typecode, narrow.nodes[0].seq.typecode) == ("I", "I")


def _resp_one_by_one(stream: Stream, start: int, end: int, count: int) -> tuple[int, bytes]:
    out: list[bytes] = []
    n = 0
    for node, i, sid in stream.iter_forward(start, end):
        node.entry_resp(i, sid, out)
        n += 1
        if n == count:
            break
    return n, b"".join(out)


def test_resp_forward_agrees_with_entry_resp_entry_by_entry() -> None:
    """XRANGE's node-by-node encoder writes the bytes the per-entry path writes, with
    tombstones, entries with their own fields, long values, a % in a field name, ranges
    starting and ending inside nodes, and counts."""
    import random

    rng = random.Random(7)
    stream = Stream()
    for ms in range(1, 400):
        if rng.random() < 0.2:
            pairs = [b"other", b"x" * rng.choice([1, 200]), b"f%d", b"v"]
        else:
            pairs = [b"f%d", b"%d" % ms, b"g", b"y" * rng.choice([0, 5, 130])]
        stream.append(make_id(ms, 0), [b"XADD", b"s", b"*", *pairs], 3, 10, 4096)
    for ms in rng.sample(range(1, 400), 80):
        stream.delete(make_id(ms, 0))
    for _ in range(60):
        start = make_id(rng.randrange(0, 420), rng.choice([0, 1]))
        end = make_id(rng.randrange(0, 420), 0)
        count = rng.choice([0, 1, 5, 50])
        out: list[bytes] = []
        n = stream.resp_forward(start, end, count, out) if start <= end else 0
        assert (n, b"".join(out)) == (_resp_one_by_one(stream, start, end, count)
                                      if start <= end else (0, b""))
