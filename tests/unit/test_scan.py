"""SCAN over the hash-ordered index: the guarantee under concurrent writes, and its cost."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.engine.clock import Clock
from resplite.store.keyspace import SCAN_INDEX_IDLE_MS, Database, Keyspace
from resplite.store.scanindex import ScanIndex, position_of, reverse_bits, table_bits


def make_db() -> tuple[Database, Clock]:
    clock = Clock()
    clock.freeze()
    return Database(0, clock), clock


def full_scan(db: Database, count: int) -> list[bytes]:
    cursor, out = 0, []
    while True:
        cursor, keys = db.scan(cursor, count)
        out.extend(keys)
        if cursor == 0:
            return out


KEYS = st.binary(min_size=0, max_size=6)
# One step between two SCAN calls: keys created, keys deleted, keys deleted and re-created.
STEP = st.tuples(st.lists(KEYS, max_size=12), st.lists(KEYS, max_size=12), st.booleans())


@settings(max_examples=300, deadline=None)
@given(
    initial=st.lists(KEYS, max_size=80, unique=True),
    steps=st.lists(STEP, max_size=60),
    count=st.integers(min_value=1, max_value=12),
)
def test_scan_returns_every_key_present_for_the_whole_iteration(
    initial: list[bytes], steps: list[tuple[list[bytes], list[bytes], bool]], count: int
) -> None:
    db, _ = make_db()
    for key in initial:
        db.set(key, b"v")
    present_throughout = set(initial)
    cursor, seen = db.scan(0, count)
    for added, removed, drop_index in steps:
        if cursor == 0:
            break
        for key in added:
            db.set(key, b"w")
        for key in removed:
            db.delete(key)
            present_throughout.discard(key)
        if drop_index:
            db.drop_scan_index()  # as the cron does for an idle index: cursors stay valid
        cursor, keys = db.scan(cursor, count)
        # COUNT keys, more only to finish the last key's bucket
        shift = 64 - table_bits(len(db.data))
        assert len(keys) <= count or len({position_of(k) >> shift for k in keys}) < len(keys)
        assert all(key in db.data for key in keys)  # nothing deleted is returned
        seen.extend(keys)
    while cursor != 0:
        cursor, keys = db.scan(cursor, count)
        seen.extend(keys)
    assert present_throughout <= set(seen)


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(KEYS, max_size=200, unique=True), count=st.integers(1, 30))
def test_without_writes_every_key_comes_exactly_once(keys: list[bytes], count: int) -> None:
    db, _ = make_db()
    for key in keys:
        db.set(key, b"v")
    got = full_scan(db, count)
    assert sorted(got) == sorted(keys)


def test_a_call_visits_about_count_entries_not_the_whole_index() -> None:
    db, _ = make_db()
    for i in range(20_000):
        db.set(b"key:%d" % i, b"v")
    db.scan(0, 10)  # builds the index once
    index = db.scan_index
    assert index is not None
    visited = 0
    original = index.entries.islice

    def counting_islice(*args: Any, **kwargs: Any) -> Iterator[Any]:
        nonlocal visited
        for item in original(*args, **kwargs):
            visited += 1
            yield item

    index.entries.islice = counting_islice
    cursor, keys = db.scan(0, 10)
    assert cursor != 0
    # Ten keys, and the rest of the tenth key's bucket (rarely more than one key at this
    # fill), then the one key that shows the next bucket starts.
    shift = 64 - table_bits(len(db.data))
    buckets = [position_of(k) >> shift for k in keys]
    assert len(keys) >= 10 and all(b == buckets[9] for b in buckets[10:])
    assert visited == len(keys) + 1


def test_new_keys_cost_an_append_only_while_an_index_exists() -> None:
    db, _ = make_db()
    db.set(b"a", b"1")
    assert db.scan_index is None
    db.scan(0, 10)
    index = db.scan_index
    assert index is not None
    db.set(b"b", b"2")
    db.set(b"b", b"3")  # an overwrite is not a new key
    assert index.pending == [b"b"]
    assert sorted(full_scan(db, 1)) == [b"a", b"b"]
    assert index.pending == []


def test_pending_keys_beyond_the_database_size_drop_the_index() -> None:
    db, _ = make_db()
    db.scan(0, 10)
    for i in range(2000):
        db.set(b"tmp", b"v")
        db.delete(b"tmp")
        db.set(b"k%d" % (i % 3), b"v")
    assert db.scan_index is None  # churn made the index not worth keeping
    assert sorted(full_scan(db, 5)) == [b"k0", b"k1", b"k2"]


def test_dead_entries_are_dropped_and_a_mostly_dead_index_is_rebuilt() -> None:
    db, _ = make_db()
    for i in range(3000):
        db.set(b"k%d" % i, b"v")
    db.scan(0, 10)
    for i in range(2990):
        db.delete(b"k%d" % i)
    assert sorted(full_scan(db, 100)) == sorted(b"k%d" % i for i in range(2990, 3000))
    assert db.scan_index is not None and len(db.scan_index) == 10


def test_idle_index_is_dropped_by_the_cron_and_flush_drops_it_too() -> None:
    clock = Clock()
    clock.freeze()
    ks = Keyspace(2, clock)
    ks[0].set(b"a", b"1")
    ks[0].scan(0, 10)
    ks.cron()
    assert ks[0].scan_index is not None
    clock.advance(SCAN_INDEX_IDLE_MS + 1)
    ks.cron()
    assert ks[0].scan_index is None
    ks[0].scan(0, 10)
    ks[0].flush()
    assert ks[0].scan_index is None


def test_swapdb_swaps_the_indexes_with_the_data() -> None:
    clock = Clock()
    ks = Keyspace(2, clock)
    ks[0].set(b"a", b"1")
    ks[1].set(b"b", b"1")
    ks[0].scan(0, 10)
    ks.swap(0, 1)
    ks[1].set(b"c", b"1")
    ks[0].set(b"d", b"1")
    assert sorted(full_scan(ks[0], 1)) == [b"b", b"d"]
    assert sorted(full_scan(ks[1], 1)) == [b"a", b"c"]


def test_cursor_after_the_last_hash_ends_the_iteration() -> None:
    index = ScanIndex([b"x"])
    assert index.scan({b"x": 1}, (1 << 64) - 1, 10)[0] == 0
    at = reverse_bits(position_of(b"x"))
    assert index.scan({b"x": 1}, at, 10) == (0, [b"x"])
    assert index.scan({b"x": 1}, reverse_bits(position_of(b"x") + 1), 10) == (0, [])


def test_random_key_is_uniform_and_skips_expired_keys() -> None:
    db, clock = make_db()
    for i in range(10):
        db.set(b"k%d" % i, b"v")
    for i in range(100):
        db.set(b"old%d" % i, b"v")
        db.set_expire(b"old%d" % i, clock.time_ms() + 5)
    clock.advance(10)
    drawn = {db.random_key() for _ in range(300)}
    assert drawn == {b"k%d" % i for i in range(10)}
    db.scan(0, 1)  # with an index, sampling goes through it
    drawn = {db.random_key() for _ in range(300)}
    assert drawn == {b"k%d" % i for i in range(10)}
    empty, _ = make_db()
    assert empty.random_key() is None


def test_positions_reverse_the_hash_bits_so_buckets_follow_redis_cursor_order() -> None:
    for value in (0, 1, 2, 3, 1 << 63, (1 << 64) - 1, 0x0123456789ABCDEF):
        assert reverse_bits(reverse_bits(value)) == value
        assert reverse_bits(value) == int(f"{value:064b}"[::-1], 2)
    assert [table_bits(n) for n in (0, 1, 4, 5, 8, 9, 1000, 1024, 1025)] == [
        2, 2, 2, 3, 3, 4, 10, 10, 11]


@settings(max_examples=30, deadline=None)
@given(size=st.integers(1, 3000), count=st.integers(1, 50))
def test_cursors_stay_below_the_table_size(size: int, count: int) -> None:
    db, _ = make_db()
    for i in range(size):
        db.set(b"k%d" % i, b"v")
    limit = 1 << table_bits(size)
    cursor, seen = db.scan(0, count)
    while cursor:
        assert 0 < cursor < limit
        cursor, keys = db.scan(cursor, count)
        seen.extend(keys)
    assert sorted(seen) == sorted(db.data)
