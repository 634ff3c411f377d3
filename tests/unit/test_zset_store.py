"""Unit tests of the sorted set value type (resplite.store.zset) against a naive model.

The model is a dict of member -> score whose order is recomputed with ``sorted`` each time;
both shapes of :class:`ZSet` (the listpack list and the skiplist SortedList) must agree with
it, and with each other, after any sequence of writes.
"""

from __future__ import annotations

import math
import random

import pytest

from resplite.store.zset import (
    LexBound,
    ZSet,
    lex_in_max,
    lex_in_min,
    lex_range_empty,
    order_key,
    score_prefix,
)

MEMBERS = [b"a", b"b", b"c", b"d", b"e", b"aa", b"ab", b"", b"12", b"\xff", b"z" * 10]
SCORES = [0.0, -0.0, 1.0, -1.0, 1.5, 2.0, math.inf, -math.inf, 0.1, 1e17, 5e-324]


def _model_order(model: dict[bytes, float]) -> list[tuple[float, bytes]]:
    return sorted((score, member) for member, score in model.items())


def _check(zs: ZSet, model: dict[bytes, float]) -> None:
    expected = _model_order(model)
    assert len(zs) == len(model) == len(zs.order)
    assert [m for _, m in zs.entries(0, len(zs))] == [m for _, m in expected]
    assert list(zs.order) == sorted(zs.order)  # the keys are in order
    for member, score in model.items():
        got = zs.score(member)
        assert got == score
        assert zs.rank(member) == expected.index((score, member))
        assert zs.rank(member, reverse=True) == len(model) - 1 - zs.rank(member)  # type: ignore[operator]
    for key in zs.order:
        member = key[8:]
        assert key == order_key(zs.scores[member], member)
        assert zs.keys[member] is key  # one key object per member, shared by both
    minus_zero = {m for m, s in model.items() if s == 0.0 and math.copysign(1, s) < 0}
    assert zs.negzero == (minus_zero or None)
    assert {m: math.copysign(1, s) for m, s in zs.scores.items()} == {
        m: math.copysign(1, s) for m, s in model.items()}


@pytest.mark.parametrize("skiplist", [False, True], ids=["listpack", "skiplist"])
def test_random_writes_agree_with_a_model(skiplist: bool) -> None:
    rng = random.Random(11)
    zs = ZSet(skiplist=skiplist)
    model: dict[bytes, float] = {}
    for step in range(3000):
        member = rng.choice(MEMBERS)
        op = rng.random()
        if op < 0.55:
            score = rng.choice(SCORES)
            new = zs.add(member, score)
            assert new == (member not in model)
            if not skiplist and score == 0.0:
                score = 0.0  # a listpack stores -0 as 0
            if new or model[member] != score:
                model[member] = score
        elif op < 0.8:
            assert zs.remove(member) == (model.pop(member, None) is not None)
        elif op < 0.9 and model:
            highest = rng.random() < 0.5
            count = rng.randrange(1, 4)
            popped = zs.pop(count, highest)
            expected = _model_order(model)
            want = expected[::-1][:count] if highest else expected[:count]
            assert popped == want
            for _, m in want:
                del model[m]
        elif model:
            n = len(model)
            start = rng.randrange(n)
            stop = rng.randrange(start, n + 1)
            expected = _model_order(model)
            assert zs.delete_positions(start, stop) == stop - start
            for _, m in expected[start:stop]:
                del model[m]
        if step % 50 == 0:
            _check(zs, model)
    _check(zs, model)


def test_entries_forward_and_reverse_and_iteration() -> None:
    for skiplist in (False, True):
        zs = ZSet(((float(i), b"m%02d" % i) for i in range(20)), skiplist=skiplist)
        assert zs.entries(2, 5) == [(2.0, b"m02"), (3.0, b"m03"), (4.0, b"m04")]
        assert zs.entries(0, 3, reverse=True) == [(19.0, b"m19"), (18.0, b"m18"), (17.0, b"m17")]
        assert list(zs.iter_from(17)) == [(17.0, b"m17"), (18.0, b"m18"), (19.0, b"m19")]
        assert list(zs.iter_from(2, reverse=True)) == [(2.0, b"m02"), (1.0, b"m01"), (0.0, b"m00")]
        assert list(zs.iter_from(-1, reverse=True)) == []
        assert list(zs.iter_from(20)) == []


def _naive_score_span(entries: list[tuple[float, bytes]], lo: float, lo_ex: bool, hi: float,
                      hi_ex: bool) -> list[tuple[float, bytes]]:
    return [(s, m) for s, m in entries
            if (s > lo if lo_ex else s >= lo) and (s < hi if hi_ex else s <= hi)]


def test_score_span_matches_a_filter_for_every_kind_of_bound() -> None:
    values = [-math.inf, -2.0, -0.0, 0.0, 1.0, 1.0, 1.5, 3.0, math.inf]
    entries = [(v, b"m%d" % i) for i, v in enumerate(values)]
    bounds = [-math.inf, -3.0, -0.0, 0.0, 1.0, 1.2, 3.0, math.inf]
    for skiplist in (False, True):
        zs = ZSet(entries, skiplist=True)
        if not skiplist:
            zs.compact()
        ordered = zs.entries(0, len(zs))
        for lo in bounds:
            for hi in bounds:
                for lo_ex in (False, True):
                    for hi_ex in (False, True):
                        start, stop = zs.score_span(lo, lo_ex, hi, hi_ex)
                        assert ordered[start:stop] == _naive_score_span(
                            ordered, lo, lo_ex, hi, hi_ex), (lo, lo_ex, hi, hi_ex)


LEX_BOUNDS: list[LexBound] = [
    (-1, b"", True), (1, b"", True), *[(0, v, ex) for v in (b"", b"a", b"ab", b"b", b"c", b"zz")
                                        for ex in (False, True)],
]


def test_lex_span_on_one_score_matches_a_filter() -> None:
    members = [b"", b"a", b"aa", b"ab", b"b", b"ba", b"c", b"d"]
    for skiplist in (False, True):
        zs = ZSet(((0.0, m) for m in members), skiplist=skiplist)
        for lo in LEX_BOUNDS:
            for hi in LEX_BOUNDS:
                start, stop = zs.lex_span(lo, hi)
                want = [m for m in members if lex_in_min(m, lo) and lex_in_max(m, hi)]
                if lex_range_empty(lo, hi):
                    want = []
                assert [m for _, m in zs.entries(start, stop)] == want, (lo, hi)
                first = zs.lex_first(lo, hi)
                last = zs.lex_first(lo, hi, reverse=True)
                if want:
                    assert first == members.index(want[0])
                    assert last == members.index(want[-1])
                else:
                    assert first is None and last is None


def test_listpack_lex_walk_with_mixed_scores_is_redis_linear_walk() -> None:
    # Scores out of member order: Redis's listpack walk finds the first member >= min from
    # the front and stops at the first one past max.
    zs = ZSet([(1.0, b"d"), (2.0, b"a"), (3.0, b"c"), (4.0, b"b"), (5.0, b"e")])
    assert zs.listpack
    assert zs.lex_first((0, b"b", False), (0, b"d", False)) == 0  # "d" is >= "b" and <= "d"
    # From there, the run of members <= "d": "d", "a", "c", "b" (then "e" stops it).
    assert zs.lex_span((0, b"b", False), (0, b"d", False)) == (0, 4)
    # The first member, "d", is already past "c": Redis finds nothing.
    assert zs.lex_first((0, b"b", False), (0, b"c", False)) is None


def test_conversions_keep_contents_and_listpack_writes_minus_zero_as_zero() -> None:
    zs = ZSet([(1.0, b"a"), (-0.0, b"z")])
    assert zs.encoding == "listpack"
    assert math.copysign(1, zs.scores[b"z"]) == 1.0
    zs.convert()
    assert zs.encoding == "skiplist" and zs.type_name == "zset"
    zs.add(b"n", -0.0)
    assert math.copysign(1, zs.scores[b"n"]) == -1.0  # a skiplist keeps the sign
    zs.compact()
    assert zs.encoding == "listpack"
    assert math.copysign(1, zs.scores[b"n"]) == 1.0
    assert [m for _, m in zs.entries(0, len(zs))] == [b"n", b"z", b"a"]


def test_fits_and_copy() -> None:
    zs = ZSet([(1.0, b"a"), (2.0, b"bbbb")])
    assert zs.fits(2, 4) and not zs.fits(1, 4) and not zs.fits(2, 3)
    zs.convert()
    twin = zs.copy()
    assert twin.encoding == "skiplist" and list(twin.order) == list(zs.order)
    twin.add(b"c", 3.0)
    zs.remove(b"a")
    assert len(twin) == 3 and len(zs) == 1
    small = ZSet([(1.0, b"x")]).copy()
    assert small.encoding == "listpack"


def test_scan_a_listpack_whole_a_skiplist_by_cursor() -> None:
    zs = ZSet([(2.0, b"b"), (1.0, b"a")])
    assert zs.scan(123, 1) == (0, [b"a", b"b"])
    big = ZSet(((float(i), b"m%d" % i) for i in range(500)), skiplist=True)
    seen: list[bytes] = []
    cursor = 0
    while True:
        cursor, batch = big.scan(cursor, 20)
        seen += batch
        big.add(b"new%d" % len(seen), 0.5)  # writes between calls do not break the cursor
        if cursor == 0:
            break
    assert {b"m%d" % i for i in range(500)} <= set(seen)


def test_random_picks() -> None:
    rng = random.Random(2)
    for skiplist in (False, True):
        zs = ZSet(((float(i), b"m%d" % i) for i in range(10)), skiplist=skiplist)
        assert zs.random_entry(rng) in zs.entries(0, len(zs))
        draws = zs.random_entries(500, rng)
        assert len(draws) == 500 and len(set(draws)) == 10
        distinct = zs.distinct_entries(4, rng)
        assert len(set(distinct)) == 4
        if not skiplist:
            assert distinct == sorted(distinct)  # a listpack answers in its own order


def test_score_range_walk_agrees_with_span_and_positions() -> None:
    """The fast path (a walk from the seek point) and the general one (positions from
    score_span, then entries) give the same entries, for every bound, offset and limit."""
    rng = random.Random(4)
    values = [rng.choice([-math.inf, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, math.inf]) for _ in range(300)]
    for skiplist in (False, True):
        zs = ZSet(((v, b"m%03d" % i) for i, v in enumerate(values)), skiplist=skiplist)
        bounds = [-math.inf, -1.0, 0.0, 0.7, 1.0, 3.0, math.inf]
        for _ in range(1500):
            lo, hi = rng.choice(bounds), rng.choice(bounds)
            lo_ex, hi_ex = rng.random() < 0.5, rng.random() < 0.5
            offset = rng.choice([0, 1, 5, 63, 64, 100, 400])
            limit = rng.choice([-1, 0, 1, 3, 50])
            reverse = rng.random() < 0.5
            start, stop = zs.score_span(lo, lo_ex, hi, hi_ex)
            if reverse:
                n = len(zs)
                general = zs.entries(n - stop, n - start, reverse=True)
            else:
                general = zs.entries(start, stop)
            general = general[offset:]
            if limit >= 0:
                general = general[:limit]
            got = zs.score_range(lo, lo_ex, hi, hi_ex, offset, limit, reverse)
            assert got == general, (skiplist, lo, lo_ex, hi, hi_ex, offset, limit, reverse)
            members = zs.score_range_members(lo, lo_ex, hi, hi_ex, offset, limit, reverse)
            assert members == [m for _, m in general]


def test_order_keys_sort_as_redis_sorts_entries() -> None:
    """Byte order of the keys is score order (both zeros alike), then memcmp-then-length
    order of the members."""
    rng = random.Random(9)
    values = [*SCORES, -5e-324, -1e300, 1e300, -0.5, 3.0]
    entries = [(rng.choice(values), rng.choice(MEMBERS)) for _ in range(2000)]
    by_key = sorted(entries, key=lambda e: order_key(*e))
    assert [(0.0 if s == 0 else s, m) for s, m in by_key] == sorted(
        (0.0 if s == 0 else s, m) for s, m in entries)
    assert order_key(-0.0, b"a") == order_key(0.0, b"a") == score_prefix(0.0) + b"a"
    assert score_prefix(-math.inf) < score_prefix(-1.0) < score_prefix(-5e-324) < score_prefix(
        0.0) < score_prefix(5e-324) < score_prefix(1.0) < score_prefix(math.inf)


@pytest.mark.parametrize("skiplist", [False, True], ids=["listpack", "skiplist"])
def test_insert_and_update_agree_with_add(skiplist: bool) -> None:
    """ZADD's fast paths (insert a member known absent, update one known present) leave the
    sorted set exactly as the general add does."""
    rng = random.Random(5)
    general, fast = ZSet(skiplist=skiplist), ZSet(skiplist=skiplist)
    for _ in range(2000):
        member, score = rng.choice(MEMBERS), rng.choice(SCORES)
        general.add(member, score)
        old = fast.scores.get(member)
        if old is None:
            fast.insert(member, score)
        else:
            fast.update(member, old, score)
        if rng.random() < 0.2:
            gone = rng.choice(MEMBERS)
            assert general.remove(gone) == fast.remove(gone)
    assert list(general.order) == list(fast.order)
    assert dict(general.scores.items()) == dict(fast.scores.items())
    assert [math.copysign(1, s) for s in general.scores.values()] == [
        math.copysign(1, s) for s in fast.scores.values()]


def test_a_loaded_or_copied_skiplist_keeps_minus_zero_and_its_scores() -> None:
    entries = [(-0.0, b"n"), (0.0, b"p"), (-1.5, b"a"), (2.0, b"b"), (-math.inf, b"lo")]
    zs = ZSet.from_entries(entries, skiplist=True)
    twin = zs.copy()
    for value in (zs, twin):
        assert value.negzero == {b"n"}
        assert [(math.copysign(1, s), s, m) for s, m in value.entries(0, len(value))] == [
            (-1.0, -math.inf, b"lo"), (-1.0, -1.5, b"a"), (-1.0, -0.0, b"n"),
            (1.0, 0.0, b"p"), (1.0, 2.0, b"b")]
        assert all(value.keys[key[8:]] is key for key in value.order)
    zs.remove(b"n")
    assert zs.negzero is None and twin.negzero == {b"n"}
    small = ZSet.from_entries([(0.0, b"n"), (1.0, b"a")], skiplist=False)
    assert small.negzero is None and small.score(b"n") == 0.0
