"""Unit tests of the array value type (resplite.store.sparse_array): contents against a dict
model under random operations (Hypothesis), the invariants after each, and the layout
decisions ARINFO reports (sparse and dense slices, window growth, promotion, demotion, the
flat directory and the super-directory), worked out from Redis's sparse array rules.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.store.sparse_array import (
    MAX_INDEX,
    NO_INSERT,
    SLICE_SIZE,
    SPARSE_KMAX,
    SparseArray,
)

# Indexes that exercise one slice, slice edges, the super-directory and the top of the range.
_HOT = [0, 1, 7, 8, 100, SLICE_SIZE - 1, SLICE_SIZE, 2 * SLICE_SIZE + 5,
        2048 * SLICE_SIZE - 1, 2048 * SLICE_SIZE, 4096 * SLICE_SIZE + 3, MAX_INDEX - 1, MAX_INDEX]
indexes = st.one_of(st.sampled_from(_HOT), st.integers(0, 300),
                    st.integers(0, 3 * SLICE_SIZE), st.integers(0, MAX_INDEX))
values = st.binary(max_size=12)

ops = st.one_of(
    st.tuples(st.just("set"), indexes, values),
    st.tuples(st.just("run"), indexes, st.lists(values, min_size=1, max_size=40)),
    st.tuples(st.just("del"), indexes, st.none()),
    st.tuples(st.just("delrange"), indexes, indexes),
)


def _model_scan(model: dict[int, bytes], start: int, end: int) -> list[tuple[int, bytes]]:
    lo, hi = min(start, end), max(start, end)
    keys = sorted((i for i in model if lo <= i <= hi), reverse=start > end)
    return [(i, model[i]) for i in keys]


@settings(max_examples=300, deadline=None)
@given(st.lists(ops, max_size=60), indexes, indexes)
def test_matches_a_dict(operations: list[tuple[str, object, object]], a: int, b: int) -> None:
    arr = SparseArray()
    model: dict[int, bytes] = {}
    for op, x, y in operations:
        if op == "set":
            assert isinstance(x, int) and isinstance(y, bytes)
            assert arr.set(x, y) == (x not in model)
            model[x] = y
        elif op == "run":
            assert isinstance(x, int) and isinstance(y, list)
            run = y[: MAX_INDEX - x + 1]
            new = sum(1 for i in range(len(run)) if x + i not in model)
            assert arr.set_run(x, run) == new
            for i, v in enumerate(run):
                model[x + i] = v
        elif op == "del":
            assert isinstance(x, int)
            assert arr.delete(x) == (model.pop(x, None) is not None)
        else:
            assert isinstance(x, int) and isinstance(y, int)
            lo, hi = min(x, y), max(x, y)
            gone = [i for i in model if lo <= i <= hi]
            assert arr.delete_range(lo, hi) == len(gone)
            for i in gone:
                del model[i]
        arr.check()
        assert arr.count == len(model)
        assert arr.length() == (max(model) + 1 if model else 0)
    assert list(arr.items()) == sorted(model.items())
    assert list(arr.scan(a, b)) == _model_scan(model, a, b)
    for i in [*list(model)[:20], a, b]:
        assert arr.get(i) == model.get(i)
    copy = arr.copy()
    copy.check()
    assert list(copy.items()) == list(arr.items())


def test_edge_indexes() -> None:
    arr = SparseArray()
    assert arr.set(0, b"first")
    assert arr.set(MAX_INDEX, b"last")
    assert arr.length() == MAX_INDEX + 1 == (1 << 64) - 1
    assert arr.count == 2
    assert list(arr.scan(MAX_INDEX, 0)) == [(MAX_INDEX, b"last"), (0, b"first")]
    assert arr.get_range(MAX_INDEX - 2, MAX_INDEX) == [None, None, b"last"]
    assert arr.delete_range(1, MAX_INDEX) == 1
    assert arr.length() == 1
    arr.check()


def test_sparse_promotes_past_kmax_and_demotes_back() -> None:
    arr = SparseArray()
    for i in range(SPARSE_KMAX):
        arr.set(i * 200, b"v")
    assert arr.slice_stats()[:2] == (0, 1)  # one sparse slice
    assert arr.slices[0].cap == SPARSE_KMAX  # 4, 8, then 10
    arr.set(5, b"v")
    dense, sparse, windows, filled, _ = arr.slice_stats()
    assert (dense, sparse, filled) == (1, 0, 11)
    assert windows == 2048  # offsets 0..1800: the next power of two
    for i in range(1, SPARSE_KMAX):
        arr.delete(i * 200)
    # Two left in a window of 2048: back to sparse, capacity SPARSE_KMIN.
    assert arr.slice_stats()[:2] == (0, 1)
    assert arr.slices[0].cap == 5
    arr.check()


def test_dense_window_grows_right_and_left() -> None:
    arr = SparseArray()
    arr.set_run(500, [b"x"] * 20)  # a bulk write over 10 slots: dense from offset 500
    s = arr.slices[0]
    assert s.dense and s.offset == 500 and len(s.items) == 32
    arr.set(499, b"y")  # left growth: the next power of two over the new span
    assert s.offset == 532 - 64 and len(s.items) == 64
    arr.set(4095, b"z")  # right growth to the slice's end: the whole slice
    assert s.offset == 0 and len(s.items) == SLICE_SIZE
    arr.check()


def test_window_stays_inside_its_slice() -> None:
    arr = SparseArray()
    arr.set_run(SLICE_SIZE - 3, [b"a"] * 12)  # crosses into the next slice
    first, second = arr.slices[0], arr.slices[1]
    assert first.offset + len(first.items) <= SLICE_SIZE
    assert not first.dense and first.count == 3
    assert not second.dense and second.count == 9
    arr.check()


def test_directory_flat_then_superdir() -> None:
    arr = SparseArray()
    arr.set(0, b"a")
    assert (arr.directory_size(), arr.super_dir_entries()) == (1, 0)
    arr.set(20 * SLICE_SIZE, b"b")
    assert arr.directory_size() == 32
    arr.delete(20 * SLICE_SIZE)
    assert arr.directory_size() == 1  # the highest slice went: halved down to fit
    arr.set(2048 * SLICE_SIZE, b"c")  # slice id 2048: the super-directory, for good
    assert (arr.directory_size(), arr.super_dir_entries()) == (4, 2)
    for block in range(2, 6):
        arr.set(block * 2048 * SLICE_SIZE, b"d")
    assert (arr.directory_size(), arr.super_dir_entries()) == (8, 6)
    arr.delete_range(2048 * SLICE_SIZE, MAX_INDEX)
    assert (arr.directory_size(), arr.super_dir_entries()) == (8, 1)
    arr.check()


def test_cursor_insert_seek_and_exhaustion() -> None:
    arr = SparseArray()
    assert arr.next_insert() == 0
    assert arr.insert([b"a", b"b"]) == 1
    assert arr.next_insert() == 2
    arr.seek(10)
    assert arr.insert([b"c"]) == 10
    arr.seek((1 << 64) - 1)
    assert arr.insert_idx == MAX_INDEX and arr.next_insert() is None
    assert arr.insert([b"x"]) is None
    arr.seek(MAX_INDEX)
    assert arr.insert([b"y", b"z"]) is None  # the run would pass the last index
    assert arr.insert([b"y"]) == MAX_INDEX
    arr.seek(0)
    assert arr.insert_idx == NO_INSERT


def test_ring_wraps_and_rebuilds() -> None:
    arr = SparseArray()
    for i in range(8):
        arr.ring_insert(5, [b"v%d" % i])
    # v5 v6 v7 v3 v4, cursor at 2; growing to 8 repacks oldest first, then appends.
    assert arr.ring_insert(8, [b"grown"]) == 5
    assert arr.get_range(0, 5) == [b"v3", b"v4", b"v5", b"v6", b"v7", b"grown"]
    # Shrinking keeps the newest run back from the cursor.
    assert arr.ring_insert(3, [b"n"]) == 0
    assert arr.get_range(0, 2) == [b"n", b"v7", b"grown"]
    arr.check()


def test_ring_rebuild_stops_at_a_hole() -> None:
    arr = SparseArray()
    for i in range(5):
        arr.ring_insert(5, [b"v%d" % i])
    arr.delete(3)
    assert arr.ring_insert(3, [b"new"]) == 1
    assert arr.get_range(0, 2) == [b"v4", b"new", None]
    assert arr.count == 2


def test_last_positions_wrap_and_holes() -> None:
    arr = SparseArray()
    for i in range(8):
        arr.ring_insert(5, [b"%d" % i])
    assert arr.last_positions(3) == [b"7", b"6", b"5"]
    assert arr.last_positions(10) == [b"7", b"6", b"5", b"4", b"3"]
    arr = SparseArray()
    arr.insert([b"a", b"b", b"c"])
    arr.delete(1)
    assert arr.last_positions(5) == [b"c", None, b"a"]
    arr.delete(2)
    assert arr.last_positions(5) == [b"a"]  # the cursor is past the end: from the tail


def test_memory_usage_follows_contents() -> None:
    arr = SparseArray()
    empty = arr.memory_usage()
    arr.set(0, b"x" * 100)
    grown = arr.memory_usage()
    assert grown > empty + 100
    arr.set(0, b"y")
    assert arr.memory_usage() == grown - 99
