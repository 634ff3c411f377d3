"""The set store: encodings and their conversion points, intset widths, random picks, scans
and set algebra, with a seeded generator where draws matter."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from resplite.store import set as setstore
from resplite.store.set import HASHTABLE, INTSET, LISTPACK, Limits, Set

DEFAULT = Limits(512, 128, 64)
SMALL = Limits(3, 4, 8)


def make(members: list[bytes], limits: Limits = DEFAULT) -> Set:
    """A set as SADD creates it with all of ``members`` in one command."""
    s = Set.create(members[0], len(members), limits)
    s.maybe_convert(len(members), limits)
    for m in members:
        s.add(m, limits)
    return s


def ints(*values: int) -> list[bytes]:
    return [b"%d" % v for v in values]


# -- creation and conversions -------------------------------------------------------------


def test_create_picks_the_encoding_from_the_first_member_and_the_count() -> None:
    assert Set.create(b"1", 1, DEFAULT).encoding == "intset"
    assert Set.create(b"1", 512, DEFAULT).encoding == "intset"
    assert Set.create(b"1", 513, DEFAULT).encoding == "hashtable"
    assert Set.create(b"a", 128, DEFAULT).encoding == "listpack"
    assert Set.create(b"a", 129, DEFAULT).encoding == "hashtable"
    assert Set.create(b"01", 1, DEFAULT).encoding == "listpack"
    assert Set.create(b"1", 4, SMALL).encoding == "listpack"  # too many for an intset of 3
    assert Set.create(b"1", 1, Limits(0, 128, 64)).encoding == "listpack"
    assert Set.create(b"1", 1, Limits(0, 0, 64)).encoding == "hashtable"


def test_intset_keeps_integers_sorted_and_refuses_non_canonical_forms() -> None:
    s = make(ints(5, -3, 12, 0))
    assert s.encoding == "intset" and s.members() == ints(-3, 0, 5, 12)
    for text in (b"05", b"+5", b"-0", b" 5", b"5.0", b"9223372036854775808", b""):
        assert text not in s
        assert not s.remove(text)
    assert b"5" in s and b"-3" in s
    assert not s.add(b"5", DEFAULT)
    assert s.remove(b"0") and s.members() == ints(-3, 5, 12)


def test_intset_widths_upgrade_and_never_narrow() -> None:
    s = make(ints(1))
    assert s.intset_width == 2
    s.add(b"32767", DEFAULT)
    s.add(b"-32768", DEFAULT)
    assert s.intset_width == 2
    s.add(b"32768", DEFAULT)
    assert s.intset_width == 4
    s.add(b"-2147483649", DEFAULT)  # the new smallest value: goes in front after the upgrade
    assert s.intset_width == 8
    assert s.members() == ints(-2147483649, -32768, 1, 32767, 32768)
    s.add(b"9223372036854775807", DEFAULT)
    s.add(b"-9223372036854775808", DEFAULT)
    assert s.members()[0] == b"-9223372036854775808"
    assert s.members()[-1] == b"9223372036854775807"
    for v in (-9223372036854775808, 9223372036854775807, -2147483649, 32768):
        s.remove(b"%d" % v)
    assert s.intset_width == 8  # as Redis: removing never narrows
    assert s.copy().intset_width == 8
    narrow = make(ints(1, 2))
    wide = make(ints(1, 1 << 40))
    assert narrow.intset_width == 2 and wide.intset_width == 8
    # A set that becomes an intset again is given the narrowest width that fits.
    t = make([b"a", *ints(3, 70000)])
    t.remove(b"a")
    t.maybe_to_intset(DEFAULT)
    assert t.encoding == "intset" and t.intset_width == 4 and t.members() == ints(3, 70000)


def test_an_intset_grows_into_a_hashtable() -> None:
    s = make(ints(1, 2, 3), SMALL)
    assert s.encoding == "intset"
    s.add(b"4", SMALL)
    assert s.encoding == "hashtable" and sorted(s.members()) == ints(1, 2, 3, 4)


def test_a_string_turns_an_intset_into_a_listpack_if_it_all_fits() -> None:
    s = make(ints(3, 1))
    s.add(b"x", DEFAULT)
    assert s.encoding == "listpack" and s.members() == [b"1", b"3", b"x"]
    full = make(ints(*range(128)))
    full.add(b"x", DEFAULT)
    assert full.encoding == "hashtable"
    fits = make(ints(*range(127)))
    fits.add(b"x", DEFAULT)
    assert fits.encoding == "listpack"
    long = make(ints(1))
    long.add(b"m" * 65, DEFAULT)
    assert long.encoding == "hashtable"
    # The widest integer must fit the value limit too (its decimal length, sign included).
    wide = make(ints(-10000000))  # 9 characters
    wide.add(b"x", SMALL)
    assert wide.encoding == "hashtable"
    narrow = make(ints(-1000000))  # 8 characters
    narrow.add(b"x", SMALL)
    assert narrow.encoding == "listpack"


def test_listpack_limits() -> None:
    s = make([b"a", b"b", b"c", b"d"], SMALL)
    assert s.encoding == "listpack"
    assert not s.add(b"a", SMALL)
    assert s.encoding == "listpack"
    s.add(b"e", SMALL)
    assert s.encoding == "hashtable"
    v = make([b"abcdefgh"], SMALL)
    assert v.encoding == "listpack"
    v.add(b"abcdefghi", SMALL)
    assert v.encoding == "hashtable"


def test_listpack_keeps_insertion_order_and_moves_readded_members_to_the_end() -> None:
    s = make([b"c", b"a", b"b"])
    assert s.members() == [b"c", b"a", b"b"]
    s.remove(b"a")
    s.add(b"a", DEFAULT)
    assert s.members() == [b"c", b"b", b"a"] == list(s)


def test_maybe_convert_before_a_wide_command() -> None:
    s = make([b"a"])
    s.maybe_convert(128, DEFAULT)
    assert s.encoding == "listpack"
    s.maybe_convert(129, DEFAULT)
    assert s.encoding == "hashtable"
    i = make(ints(1))
    i.maybe_convert(512, DEFAULT)
    assert i.encoding == "intset"
    i.maybe_convert(513, DEFAULT)
    assert i.encoding == "hashtable"


def test_removing_never_converts() -> None:
    s = make([f"m{i}".encode() for i in range(200)])
    assert s.encoding == "hashtable"
    for i in range(199):
        s.remove(f"m{i}".encode())
    assert s.encoding == "hashtable" and s.members() == [b"m199"]


def test_convert_and_copy_keep_members() -> None:
    s = make([b"x", *ints(3, 1)])
    for kind in (HASHTABLE, LISTPACK, HASHTABLE):
        s.convert(kind)
        assert sorted(s.members()) == sorted([b"x", b"1", b"3"])
    c = make([b"q", b"p"]).copy()
    assert c.encoding == "listpack" and c.members() == [b"q", b"p"]
    original = make(ints(1, 2))
    twin = original.copy()
    twin.add(b"3", DEFAULT)
    assert original.members() == ints(1, 2)
    i = make(ints(2, 1))
    i.convert(HASHTABLE)
    i.convert(INTSET)
    assert i.encoding == "intset" and i.members() == ints(1, 2)


def test_add_all_agrees_with_adding_one_by_one() -> None:
    rng = random.Random(3)
    for limits in (DEFAULT, SMALL, Limits(10, 20, 3)):
        for _ in range(50):
            pool = [*ints(*range(-20, 20)), b"a", b"bb", b"ccc", b"dddd", b"e" * 9]
            members = [rng.choice(pool) for _ in range(rng.randrange(1, 60))]
            start = rng.choice([INTSET, LISTPACK, HASHTABLE])
            one, bulk = Set(start), Set(start)
            added = sum(one.add(m, limits) for m in members)
            assert bulk.add_all(members, limits) == added
            assert one.encoding == bulk.encoding
            if one.encoding == "hashtable":
                assert set(one.members()) == set(bulk.members())
            else:
                assert one.members() == bulk.members()


# -- random picks -------------------------------------------------------------------------


def test_random_member_of_each_encoding_is_uniform() -> None:
    rng = random.Random(7)
    for members in (ints(*range(10)), [f"m{i}".encode() for i in range(10)],
                    [f"h{i}".encode() for i in range(300)]):
        s = make(members)
        counts = Counter(s.random_member(rng) for _ in range(300 * len(members)))
        assert set(counts) == set(members)
        assert max(counts.values()) < 1.4 * 300 and min(counts.values()) > 0.6 * 300


def test_hashtable_sampler_stays_exact_through_writes() -> None:
    """The sampler's list may hold removed members (skipped) and learns of new ones; a
    removed and re-added member is drawn no more often than the others."""
    rng = random.Random(11)
    members = [f"h{i}".encode() for i in range(400)]
    s = make(members)
    s.random_member(rng)  # builds the sampler
    for i in range(0, 400, 2):
        s.remove(members[i])
    for i in range(0, 100, 2):
        s.add(members[i], DEFAULT)  # revived entries
    s.add(b"new", DEFAULT)
    live = set(s.members())
    counts = Counter(s.random_member(rng) for _ in range(200 * len(live)))
    assert set(counts) == live
    assert max(counts.values()) < 1.45 * 200 and min(counts.values()) > 0.55 * 200
    # Popping everything returns each live member exactly once.
    popped = [s.pop_random(rng) for _ in range(len(live))]
    assert sorted(popped) == sorted(live) and len(s) == 0


def test_random_members_with_repetition() -> None:
    rng = random.Random(5)
    for members in (ints(1, 2, 3), [b"a", b"b"], [f"h{i}".encode() for i in range(300)]):
        s = make(members)
        for count in (1, 5, 1000):
            drawn = s.random_members(count, rng)
            assert len(drawn) == count and set(drawn) <= set(members)


def test_distinct_members_listpack_answers_in_its_own_order() -> None:
    rng = random.Random(9)
    members = [f"m{i}".encode() for i in range(20)]
    s = make(members)
    for count in (2, 5, 19):
        drawn = s.distinct_members(count, rng)
        assert len(set(drawn)) == count
        assert [members.index(m) for m in drawn] == sorted(members.index(m) for m in drawn)
    h = make([f"h{i}".encode() for i in range(300)])
    for count in (2, 50, 150, 299):  # both of Redis's strategies
        drawn = h.distinct_members(count, rng)
        assert len(set(drawn)) == count and set(drawn) <= set(h.members())
    i = make(ints(*range(100)))
    assert len(set(i.distinct_members(40, rng))) == 40


@pytest.mark.parametrize("kind", ["intset", "listpack", "hashtable"])
def test_pop_many_both_strategies(kind: str) -> None:
    rng = random.Random(13)
    if kind == "intset":
        members = ints(*range(60))
    elif kind == "listpack":
        members = [f"m{i}".encode() for i in range(60)]
    else:
        members = [f"h{i}".encode() for i in range(600)]
    n = len(members)
    for count in (1, 7, n // 2, n - 5, n - 1):
        s = make(members)
        popped = s.pop_many(count, DEFAULT, rng)
        assert len(popped) == count and len(set(popped)) == count
        left = s.members()
        assert set(left) | set(popped) == set(members) and not set(left) & set(popped)
        rebuilt = (n - count) * setstore.SPOP_MOVE_STRATEGY_MUL <= count
        if kind == "listpack":
            order = [members.index(m) for m in popped]
            assert order == sorted(order)
            assert [members.index(m) for m in left] == sorted(members.index(m) for m in left)
        if kind == "intset" and rebuilt:
            assert popped == sorted(popped, key=int) and s.encoding == "intset"
        if kind == "hashtable":
            assert s.encoding == ("listpack" if rebuilt else "hashtable")


# -- scanning -----------------------------------------------------------------------------


def test_scan_small_sets_whole_and_hashtables_by_cursor() -> None:
    assert make(ints(3, 1)).scan(12345, 1) == (0, ints(1, 3))
    assert make([b"b", b"a"]).scan(0, 1) == (0, [b"b", b"a"])
    members = [f"h{i}".encode() for i in range(500)]
    s = make(members)
    seen: list[bytes] = []
    cursor, calls = 0, 0
    while True:
        cursor, batch = s.scan(cursor, 20)
        seen += batch
        calls += 1
        s.add(b"new%d" % calls, DEFAULT)
        s.remove(b"new%d" % (calls - 1))
        if cursor == 0:
            break
    assert set(members) <= set(seen) and calls > 10


# -- set algebra --------------------------------------------------------------------------


def test_intersection_follows_the_smallest_set() -> None:
    a = make([b"x", b"2", b"5", b"zz"])
    c = make([b"x", b"5", b"2"])
    c.remove(b"x")
    c.add(b"x", DEFAULT)
    assert setstore.intersection([a, c]) == [b"5", b"2", b"x"]
    assert setstore.intersection([a, None]) == []
    assert setstore.intersection([c, c]) == c.members()
    assert setstore.intersection_size([a, c], limit=2) == 2
    assert setstore.intersection_size([a, c]) == 3
    stored = setstore.intersection_set([a, c], DEFAULT)
    assert stored.encoding == "listpack" and stored.members() == [b"5", b"2", b"x"]
    c.remove(b"x")
    only_ints = setstore.intersection_set([a, c], DEFAULT)
    assert only_ints.encoding == "intset" and only_ints.members() == ints(2, 5)


def test_intersection_of_hashtables_agrees_with_the_general_path() -> None:
    a = make([f"m{i}".encode() for i in range(0, 600, 2)])
    b = make([f"m{i}".encode() for i in range(0, 600, 3)])
    fast = setstore.intersection([a, b])
    general = [m for m in b if m in a]  # what the member-by-member walk gives
    assert sorted(fast) == sorted(general) and len(fast) == 100


def test_union_starts_from_an_intset() -> None:
    c = make([b"x", b"5", b"2"])
    c.remove(b"x")
    c.add(b"x", DEFAULT)
    assert c.members() == [b"5", b"2", b"x"]
    u = setstore.union([c], DEFAULT)
    assert u.encoding == "listpack" and u.members() == [b"2", b"5", b"x"]
    assert setstore.union([None, make(ints(2, 1))], DEFAULT).members() == ints(1, 2)
    big = setstore.union([make([f"m{i}".encode() for i in range(300)]), c], DEFAULT)
    assert big.encoding == "hashtable" and len(big) == 303


def test_difference_algorithms_show_in_the_encoding() -> None:
    a = make([b"1", b"x", b"2", b"3", b"4", b"5"])
    b, z = make([b"x"]), make([b"zz"])
    one = setstore.difference([a, b], DEFAULT)  # survivors added one by one
    assert one.encoding == "intset" and one.members() == ints(1, 2, 3, 4, 5)
    two = setstore.difference([a, b, z], DEFAULT)  # all added, then the others removed
    assert two.encoding == "listpack" and two.members() == ints(1, 2, 3, 4, 5)
    assert len(setstore.difference([a, a], DEFAULT)) == 0
    assert len(setstore.difference([None, a], DEFAULT)) == 0
    assert setstore.difference([a, None], DEFAULT).members() == a.members()
    big = make([f"m{i}".encode() for i in range(400)])
    small = make([f"m{i}".encode() for i in range(0, 400, 2)])
    assert len(setstore.difference([big, small, make([b"q"])], DEFAULT)) == 200
