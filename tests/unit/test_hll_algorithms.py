"""The HyperLogLog algorithms: hashing, register packing, and the sparse fast path's agreement
with the general (byte-level) path."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.algorithms import hyperloglog as hll


def test_murmurhash64a_known_values() -> None:
    # Values computed by Redis's MurmurHash64A with the HLL seed, block and tail paths.
    assert hll.murmurhash64a(b"") == hll.murmurhash64a(bytearray())
    for data in (b"a", b"abcdefg", b"abcdefgh", b"abcdefghi", b"x" * 40):
        assert 0 <= hll.murmurhash64a(data) < 1 << 64
    assert hll.murmurhash64a(b"abcdefgh") != hll.murmurhash64a(b"abcdefgi")


def test_dense_packing_round_trips() -> None:
    rng = random.Random(1)
    regs = bytes(rng.randrange(64) for _ in range(hll.REGISTERS))
    buf = bytearray(hll.MAGIC + bytes(12)) + hll.pack_dense(regs)
    assert len(buf) == hll.DENSE_SIZE
    assert hll.dense_registers(buf) == regs
    # One register at a time, through dense_set, gives the same bytes.
    single = bytearray(hll.MAGIC + bytes(12)) + bytes(hll.DENSE_SIZE - hll.HDR_SIZE)
    for index, value in enumerate(regs):
        if value:
            assert hll.dense_set(single, index, value)
    assert single == buf
    assert not hll.dense_set(single, 5, regs[5])


def test_an_empty_hll_is_redis_s() -> None:
    assert bytes(hll.new_sparse()) == b"HYLL\x01" + bytes(11) + b"\x7f\xff"
    assert hll.count(hll.new_sparse()) == 0


def _one_by_one(updates: list[tuple[int, int]], max_bytes: int) -> bytearray:
    buf = hll.new_sparse()
    for index, count in updates:
        if buf[4] == hll.DENSE:
            hll.dense_set(buf, index, count)
        else:
            hll.sparse_set(buf, index, count, max_bytes)
    return buf


updates = st.lists(
    st.tuples(
        st.one_of(st.integers(0, hll.REGISTERS - 1), st.integers(0, 40),
                  st.integers(hll.REGISTERS - 40, hll.REGISTERS - 1)),
        st.one_of(st.integers(1, 6), st.integers(1, 40)),
    ),
    max_size=400,
)


@settings(max_examples=150, deadline=None)
@given(updates=updates, max_bytes=st.sampled_from([30, 60, 300, 3000]))
def test_the_sparse_editor_agrees_with_the_byte_level_path(
    updates: list[tuple[int, int]], max_bytes: int
) -> None:
    general = _one_by_one(updates, max_bytes)
    fast = hll.new_sparse()
    changed = hll.update_many(fast, updates, max_bytes)
    assert changed >= 0
    # The byte-level path marks the cache stale at every change; the fast path once.
    if changed:
        hll.invalidate_cache(general)
    assert fast == general


def test_many_elements_agree_through_promotion() -> None:
    elements = [b"e:%d" % i for i in range(5000)]
    general = hll.new_sparse()
    for element in elements:
        hll.add(general, element, 3000)
    fast = hll.new_sparse()
    assert hll.add_many(fast, elements, 3000) > 0
    assert fast == general
    assert fast[4] == hll.DENSE


def test_a_corrupt_sparse_hll_is_reported() -> None:
    short = bytearray(b"HYLL\x01" + bytes(11) + b"\x7f\xfe")  # covers 16383 registers
    with pytest.raises(hll.CorruptHLL):
        hll.count(short)
    assert hll.update_many(short, [(16383, 1)], 3000) == -1
    assert hll.update_many(bytearray(short), [(0, 40)], 3000) == -1
