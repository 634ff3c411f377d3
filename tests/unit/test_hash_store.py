"""Unit tests of the hash value type (resplite.store.hash): order, encoding, copy, scan."""

from __future__ import annotations

import random
from collections.abc import Callable

from resplite.store.hash import Hash


def _hash(n: int, prefix: bytes = b"f") -> Hash:
    h = Hash()
    for i in range(n):
        h.set(prefix + b"%d" % i, b"v%d" % i)
    return h


def test_set_reports_new_fields_and_keeps_the_place_of_overwritten_ones() -> None:
    h = Hash()
    assert h.set(b"b", b"1") and h.set(b"a", b"2")
    assert not h.set(b"b", b"3")
    assert list(h.fields.items()) == [(b"b", b"3"), (b"a", b"2")]
    assert h.delete(b"b") and not h.delete(b"b")
    h.set(b"b", b"4")
    assert list(h.fields) == [b"a", b"b"]


def test_encoding_converts_once_and_never_back() -> None:
    h = _hash(3)
    h.fit_size(3)
    assert h.encoding == "listpack"
    h.fit_lengths([b"x" * 8], 8)
    assert h.encoding == "listpack"
    h.fit_lengths([b"short", b"x" * 9], 8)
    assert h.encoding == "hashtable"
    h.delete(b"f0")
    h.fit_size(100)
    h.fit_lengths([b"a"], 100)
    assert h.encoding == "hashtable" and h.type_name == "hash"
    g = _hash(4)
    g.fit_size(3)
    assert g.encoding == "hashtable"


def test_copy_is_independent_and_keeps_encoding_and_order() -> None:
    h = _hash(5)
    h.convert()
    twin = h.copy()
    assert twin.encoding == "hashtable" and list(twin.fields.items()) == list(h.fields.items())
    twin.set(b"new", b"x")
    h.delete(b"f1")
    assert b"new" not in h.fields and b"f1" in twin.fields
    assert _hash(2).copy().encoding == "listpack"


def test_a_listpack_scan_answers_everything_with_cursor_zero() -> None:
    h = _hash(20)
    assert h.scan(12345, 1) == (0, list(h.fields))
    assert h.scan_index is None


def _full_scan(
    h: Hash, count: int, between: Callable[[int], None] | None = None
) -> list[bytes]:
    cursor, calls = 0, 0
    seen: list[bytes] = []
    while True:
        cursor, batch = h.scan(cursor, count)
        seen += batch
        calls += 1
        if between is not None:
            between(calls)
        if cursor == 0:
            return seen
        assert calls < 10_000


def test_a_hashtable_scan_walks_every_field_once() -> None:
    h = _hash(500)
    h.convert()
    seen = _full_scan(h, 7)
    assert sorted(seen) == sorted(h.fields) and len(seen) == 500


def test_a_hashtable_cursor_survives_adds_deletes_and_index_rebuilds() -> None:
    h = _hash(400)
    h.convert()
    rng = random.Random(3)
    removed: set[bytes] = set()

    def churn(call: int) -> None:
        for i in range(30):
            h.set(b"new:%d:%d" % (call, i), b"n")
        victim = b"f%d" % rng.randrange(400)
        if h.delete(victim):
            removed.add(victim)
        if call == 5:
            h.scan_index = None  # as if dropped: the next call rebuilds from the live fields

    seen = set(_full_scan(h, 10, churn))
    assert {b"f%d" % i for i in range(400)} - removed <= seen


def test_random_helpers() -> None:
    rng = random.Random(1)
    h = _hash(10)
    assert h.random_field(rng) in h.fields
    draws = h.random_pairs(50, rng)
    assert len(draws) == 50 and all(h.fields[f] == v for f, v in draws)
    distinct = h.distinct_pairs(4, rng)
    order = list(h.fields)
    positions = [order.index(f) for f, _ in distinct]
    assert len(set(positions)) == 4 and positions == sorted(positions)
    h.convert()
    assert len({f for f, _ in h.distinct_pairs(9, rng)}) == 9


def test_memory_usage_grows_with_contents() -> None:
    assert _hash(100).memory_usage() > _hash(10).memory_usage() > Hash().memory_usage() > 0


def test_field_ttls_expire_in_time_order_and_stale_entries_are_skipped() -> None:
    h = _hash(4)
    h.set_ttl(b"f0", 300)
    h.set_ttl(b"f1", 100)
    h.set_ttl(b"f2", 200)
    h.set_ttl(b"f1", 400)  # a later TTL makes the first entry stale
    assert h.encoding == "listpackex"
    assert h.next_expiry() == 200
    assert h.expire_due(200) == []  # a field lives while now <= its time
    assert h.expire_due(201) == [b"f2"]
    assert h.persist(b"f0") and not h.persist(b"f0")
    assert h.next_expiry() == 400
    h.set(b"f1", b"new")  # an overwrite clears the TTL
    assert h.next_expiry() is None and h.ttl_of(b"f1") is None
    h.set_ttl(b"f3", 50)
    h.set(b"f3", b"kept", keep_ttl=True)
    assert h.expire_due(51) == [b"f3"]
    assert b"f3" not in h.fields and h.ttls == {}
    assert h.encoding == "listpackex"


def test_copy_keeps_field_ttls_independently() -> None:
    h = _hash(2)
    h.set_ttl(b"f0", 10)
    twin = h.copy()
    assert twin.ttl_of(b"f0") == 10 and twin.encoding == "listpackex"
    twin.persist(b"f0")
    assert h.ttl_of(b"f0") == 10
    assert h.expire_due(11) == [b"f0"] and twin.expire_due(11) == []
