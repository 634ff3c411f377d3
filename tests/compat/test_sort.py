"""SORT and SORT_RO against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Sorted output is fully determined (numeric ties are broken by the elements, ALPHA compares
bytes), so it is compared exactly even for sets the reference holds as hashtables. Output
that follows a set's internal order (BY a constant pattern, without STORE) is compared
exactly for intsets and without order for string sets (see :mod:`test_sets`). Lists and
sorted sets are sorted only where the server has those types; the tests for them skip
otherwise.
"""

from __future__ import annotations

import pytest
from compat_helpers import Command, U, decode, play, u
from support import normalize
from support.pair import Pair

I64_MAX = "9223372036854775807"
I64_MIN = "-9223372036854775808"

Step = Command


def ints(key: str, *members: int) -> Step:
    return ("SADD", key, *[str(m) for m in members])


WEIGHTS: list[Step] = [
    ints("s", 3, 1, 2, 10, -4), ("MSET", "w_1", "30", "w_2", "20", "w_3", "10", "w_10", "5"),
    ("HSET", "h_1", "f", "3", "g", "b"), ("HSET", "h_2", "f", "1", "g", "a"),
    ("HSET", "h_3", "f", "2", "g", "c"), ("HSET", "h_10", "f", "-1"),
]

SCENARIOS: dict[str, list[Step]] = {
    "SORT of an intset: ASC, DESC, ALPHA": [
        ints("s", 3, 1, 2, 10, -4, 0), ("SORT", "s"), ("SORT", "s", "ASC"), ("SORT", "s", "DESC"),
        ("SORT", "s", "ALPHA"), ("SORT", "s", "ALPHA", "DESC"), ("SORT", "s", "desc", "asc"),
        ("SORT", "s", "alpha"), ("SORT_RO", "s"), ("SORT_RO", "s", "DESC", "ALPHA"),
    ],
    "SORT: LIMIT clips to what there is": [
        ints("s", 5, 4, 3, 2, 1),
        *[("SORT", "s", "LIMIT", a, b) for a, b in (
            ("0", "2"), ("1", "-1"), ("-5", "2"), ("10", "5"), ("0", "0"), ("2", "100"),
            ("4", "1"), ("5", "1"), ("3", "-7"), ("0", I64_MAX), (I64_MIN, "3"),
            (I64_MAX, I64_MAX), ("1", "1"))],
        ("SORT", "s", "DESC", "LIMIT", "1", "2"),
        ("SORT", "s", "LIMIT", "1", "2", "LIMIT", "0", "1"),
        ("SORT", "nokey", "LIMIT", "0", "5"), ("SORT", "nokey", "LIMIT", "5", "5"),
    ],
    "SORT: numeric values as strtod reads them; ties broken by the bytes": [
        ("SADD", "s", "1.5", "-2", "1e3", " 4", "0x10", "inf", "-inf", "1", "1.0", "+1", "-0",
         "0", ".5", "5."),
        ("SORT", "s"), ("SORT", "s", "DESC"), ("SORT", "s", "LIMIT", "2", "5"),
        ("SORT", "s", "ALPHA"), ("SORT", "s", "ALPHA", "DESC"),
    ],
    "SORT: elements that are not numbers fail the whole command": [
        ("SADD", "s", "1", "2", "x"), ("SORT", "s"), ("SORT", "s", "LIMIT", "0", "1"),
        ("SORT", "s", "ALPHA"), ("SADD", "t", "1", "nan"), ("SORT", "t"),
        ("SADD", "z", "1", "5 "), ("SORT", "z"), ("SADD", "e", "1", ""), ("SORT", "e"),
    ],
    "SORT ALPHA compares bytes": [
        ("SADD", "s", "b", "A", "a", "B", "é", "z", "aa", "", "_", "1", "10", "9"),
        ("SORT", "s", "ALPHA"), ("SORT", "s", "ALPHA", "DESC"),
        ("SORT", "s", "ALPHA", "LIMIT", "3", "4"),
    ],
    "SORT BY a string key, missing weights count as 0": [
        *WEIGHTS, ("SORT", "s", "BY", "w_*"), ("SORT", "s", "BY", "w_*", "DESC"),
        ("SORT", "s", "BY", "w_*", "LIMIT", "1", "3"), ("SORT", "s", "BY", "nothing_*"),
        ("SORT", "s", "BY", "w_*", "ALPHA"), ("SORT", "s", "BY", "w_*", "ALPHA", "DESC"),
        ("SORT", "s", "BY", "*"), ("SORT", "s", "BY", "*_*"), ("SORT_RO", "s", "BY", "w_*"),
    ],
    "SORT BY a hash field": [
        *WEIGHTS, ("SORT", "s", "BY", "h_*->f"), ("SORT", "s", "BY", "h_*->f", "DESC"),
        ("SORT", "s", "BY", "h_*->g", "ALPHA"), ("SORT", "s", "BY", "h_*->g", "ALPHA", "DESC"),
        ("SORT", "s", "BY", "h_*->nofield"), ("SORT", "s", "BY", "w_*->f"),
        ("SORT", "s", "BY", "h_*->"), ("SORT", "s", "BY", "h_*->g"),
    ],
    "SORT BY weights that are not numbers": [
        ints("s", 1, 2, 3), ("MSET", "w_1", "1", "w_2", "abc", "w_3", "2"),
        ("SORT", "s", "BY", "w_*"), ("SORT", "s", "BY", "w_*", "ALPHA"),
        ("MSET", "w_2", " 5", "x_1", "", "x_2", "0x1p3", "x_3", "inf"),
        ("SORT", "s", "BY", "w_*"), ("SORT", "s", "BY", "x_*"),
        ("SET", "w_2", "nan"), ("SORT", "s", "BY", "w_*"),
        ("SET", "w_2", b"7\x00junk"), ("SORT", "s", "BY", "w_*"),
    ],
    "SORT BY a constant pattern does not sort": [
        *WEIGHTS, ("SORT", "s", "BY", "nosort"), ("SORT", "s", "BY", "nosort", "DESC"),
        ("SORT", "s", "BY", "nosort", "LIMIT", "1", "2"), ("SORT", "s", "BY", "w_1"),
        ("SORT", "s", "BY", "nosort", "GET", "w_*"), ("SORT", "s", "BY", b"w_\x00*"),
        ("SADD", "t", "b", "a", "c"), u("SORT", "t", "BY", "nosort"),
        u("SORT", "t", "BY", "nosort", "ALPHA"), ("SORT", "t", "BY", "nosort", "LIMIT", "5", "1"),
    ],
    "SORT GET: # and patterns, several of them, nulls for what is missing": [
        *WEIGHTS, ("SORT", "s", "GET", "#"), ("SORT", "s", "GET", "w_*"),
        ("SORT", "s", "GET", "#", "GET", "w_*", "GET", "h_*->g"),
        ("SORT", "s", "BY", "w_*", "GET", "h_*->f", "GET", "#"),
        ("SORT", "s", "GET", "nostar"), ("SORT", "s", "GET", "h_*"), ("SORT", "s", "GET", "w_*->f"),
        ("SORT", "s", "GET", "h_*->"), ("SORT", "s", "LIMIT", "1", "2", "GET", "#", "GET", "#"),
        ("SORT", "s", "GET", "*"), ("SORT", "s", "GET", b"#\x00x"), ("SORT", "s", "GET", "##"),
        ("SORT", "nokey", "GET", "#"), ("SORT_RO", "s", "GET", "w_*", "DESC"),
        ("SORT", "s", "GET", "w_*", "LIMIT", "9", "9"),
    ],
    "SORT GET through keys holding other types": [
        ints("s", 1, 2), ("SADD", "k_1", "x"), ("XADD", "k_2", "1-1", "f", "v"),
        ("SORT", "s", "GET", "k_*"), ("SORT", "s", "BY", "k_*"), ("SORT", "s", "GET", "k_*->f"),
    ],
    "SORT ALPHA BY: missing values sort first, ties keep their order": [
        ints("s", 4, 3, 2, 1), ("MSET", "a_1", "b", "a_2", "a", "a_4", "b"),
        ("SORT", "s", "BY", "a_*", "ALPHA"), ("SORT", "s", "BY", "a_*", "ALPHA", "DESC"),
        ("SORT", "s", "BY", "a_*", "ALPHA", "GET", "a_*", "GET", "#"),
    ],
    "SORT: errors and their order": [
        ints("s", 1), ("SET", "str", "x"), ("HSET", "h", "f", "v"), ("XADD", "t", "1-1", "f", "v"),
        ("SORT", "str"), ("SORT", "h"), ("SORT", "t"), ("SORT_RO", "str"), ("SORT", "str", "BOGUS"),
        ("SORT", "s", "BOGUS"), ("SORT", "s", "LIMIT"), ("SORT", "s", "LIMIT", "1"),
        ("SORT", "s", "LIMIT", "x", "1"), ("SORT", "s", "LIMIT", "1", "x"),
        ("SORT", "s", "LIMIT", "1.5", "1"), ("SORT", "str", "LIMIT", "x", "1"), ("SORT", "s", "BY"),
        ("SORT", "s", "GET"), ("SORT", "s", "STORE"), ("SORT_RO", "s", "STORE", "d"),
        ("SORT_RO", "s", "STORE"), ("SORT", "s", b"alpha\x00x"), ("SORT",), ("SORT_RO",),
        ("SORT", "nokey"), ("SORT_RO", "nokey", "DESC"), ("SORT", "str", "STORE", "d"),
        ("EXISTS", "d"),
    ],
    "SORT STORE of nothing deletes the destination": [
        ("SET", "d", "x"), ("SORT", "nokey", "STORE", "d"), ("EXISTS", "d"), ("SET", "d", "x"),
        ints("s", 1, 2), ("SORT", "s", "LIMIT", "5", "5", "STORE", "d"), ("EXISTS", "d"),
        ("SORT", "s", "LIMIT", "0", "0", "STORE", "nokey2"),
    ],
    "COMMAND GETKEYS of SORT and SORT_RO (Redis's key callbacks)": [
        ("COMMAND", "GETKEYS", "SORT", "s"), ("COMMAND", "GETKEYS", "SORT", "s", "STORE", "d"),
        ("COMMAND", "GETKEYS", "SORT", "s", "BY", "w_*", "GET", "h_*->f", "STORE", "d"),
        ("COMMAND", "GETKEYS", "SORT", "s", "STORE", "d", "STORE", "e", "LIMIT", "1", "2"),
        ("COMMAND", "GETKEYS", "SORT", "s", "STORE", "limit", "x", "y"),
        ("COMMAND", "GETKEYS", "SORT", "s", "GET", "store", "x"),
        ("COMMAND", "GETKEYS", "SORT", "s", "STORE"), ("COMMAND", "GETKEYS", "SORT_RO", "s"),
        ("COMMAND", "GETKEYS", "SORT_RO", "s", "BY", "w_*", "STORE", "d"),
        ("COMMAND", "GETKEYSANDFLAGS", "SORT", "s", "STORE", "d"),
        ("COMMAND", "GETKEYSANDFLAGS", "SORT_RO", "s", "GET", "#"),
    ],
    "SORT inside MULTI; SORT_RO is read-only": [
        ints("s", 2, 1), ("MULTI",), ("SORT", "s"), ("SADD", "s", "0"), ("SORT_RO", "s", "DESC"),
        ("EXEC",),
    ],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_sort_scenario(pair: Pair, scenario: str) -> None:
    play(pair, *SCENARIOS[scenario])


def _clear_errno(pair: Pair) -> None:
    """Make the reference forget an ERANGE: Redis reads SORT scores with ``strtod`` without
    clearing ``errno`` first, so after one out-of-range score every later SORT would fail
    until some system call sets ``errno`` again: here the ``accept`` loop of a new connection,
    which ends on EAGAIN."""
    extra = pair.connect_extra()
    try:
        assert extra.ref.call("PING") == b"+PONG\r\n"
    finally:
        extra.close()


@pytest.mark.parametrize("score", ["1e400", "-1e400", "4e-320", "1e-400", "0x1p-1100"])
def test_sort_scores_out_of_range(pair: Pair, score: str) -> None:
    try:
        play(pair, ("SADD", "s", "1", score), ("SORT", "s"))
        _clear_errno(pair)
        play(pair, ("DEL", "s"), ints("s", 1, 2), ("SET", "w_2", score),
             ("SORT", "s", "BY", "w_*"), ("SORT", "s", "BY", "w_*", "ALPHA"))
    finally:
        _clear_errno(pair)
    play(pair, ("SET", "w_2", b"7\x00junk"), ("SORT", "s", "BY", "w_*"), ("SORT", "s"))


def test_sort_large_sets(pair: Pair) -> None:
    members = [str((i * 7919) % 1000) for i in range(1000)]
    play(pair, ("SADD", "s", *members), ("SADD", "t", *[f"m{i}" for i in range(300)]),
         ("SORT", "s"), ("SORT", "s", "DESC", "LIMIT", "10", "20"), ("SORT", "s", "ALPHA"),
         ("SORT", "t", "ALPHA"), ("SORT", "t", "ALPHA", "DESC", "LIMIT", "0", "5"),
         ("SORT", "t"), U(("SORT", "t", "BY", "nosort")))


# -- lists and sorted sets -------------------------------------------------------------------------


def _has(pair: Pair, name: str) -> bool:
    return decode(pair.ours.call("COMMAND", "INFO", name)) not in ([None], [])


@pytest.fixture
def lists(pair: Pair) -> Pair:
    if not _has(pair, "lpush"):
        pytest.skip("resplite has no list type in this build")
    return pair


@pytest.fixture
def zsets(pair: Pair) -> Pair:
    if not _has(pair, "zadd"):
        pytest.skip("resplite has no sorted set type in this build")
    return pair


def test_sort_store_writes_a_list(lists: Pair) -> None:
    pair = lists
    play(pair, *WEIGHTS, ("SET", "d", "x", "EX", "100"), ("SORT", "s", "STORE", "d"),
         ("TYPE", "d"), ("TTL", "d"), ("LRANGE", "d", "0", "-1"),
         ("SORT", "s", "BY", "w_*", "GET", "#", "GET", "w_*", "STORE", "d"),
         ("LRANGE", "d", "0", "-1"), ("SORT", "s", "GET", "nostar", "STORE", "d"),
         ("LRANGE", "d", "0", "-1"), ("SORT", "s", "BY", "nosort", "STORE", "d"),
         ("LRANGE", "d", "0", "-1"), ("SADD", "t", "b", "a", "c"),
         ("SORT", "t", "BY", "nosort", "STORE", "d"), ("LRANGE", "d", "0", "-1"),
         ("SORT", "t", "ALPHA", "LIMIT", "1", "1", "STORE", "d"), ("LRANGE", "d", "0", "-1"),
         ("SORT", "s", "STORE", "s"), ("TYPE", "s"), ("LRANGE", "s", "0", "-1"))


@pytest.mark.redis_version("7.2")
def test_sort_store_makes_a_small_list_a_listpack(lists: Pair) -> None:
    """Redis 7.2+ builds the stored list as a quicklist, then converts a small one to a
    listpack (7.0 has no listpack lists)."""
    pair = lists
    play(pair, ("SADD", "s", "3", "1", "2"), ("SORT", "s", "STORE", "d"))
    assert pair.ours.call("OBJECT", "ENCODING", "d") == b"$8\r\nlistpack\r\n"
    play(pair, ("SADD", "big", *[f"{i:0100d}" for i in range(200)]),
         ("SORT", "big", "ALPHA", "STORE", "d"), ("LLEN", "d"))
    assert pair.ours.call("OBJECT", "ENCODING", "d") == b"$9\r\nquicklist\r\n"


def test_sort_of_lists(lists: Pair) -> None:
    pair = lists
    play(pair, ("RPUSH", "l", "3", "1", "2", "1", "10"), ("MSET", "w_1", "9", "w_3", "2"),
         ("SORT", "l"), ("SORT", "l", "DESC"), ("SORT", "l", "ALPHA"),
         ("SORT", "l", "LIMIT", "1", "2"), ("SORT", "l", "BY", "nosort"),
         ("SORT", "l", "BY", "nosort", "DESC"), ("SORT", "l", "BY", "nosort", "LIMIT", "1", "3"),
         ("SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "3"), ("SORT", "l", "BY", "w_*"),
         ("SORT", "l", "GET", "w_*", "GET", "#"), ("SORT", "l", "BY", "nosort", "STORE", "d"),
         ("LRANGE", "d", "0", "-1"), ("RPUSH", "bad", "1", "x"), ("SORT", "bad"),
         ("SORT", "bad", "ALPHA"), ("SORT_RO", "l", "BY", "nosort", "DESC", "LIMIT", "0", "2"))


def test_sort_of_sorted_sets(zsets: Pair) -> None:
    pair = zsets
    play(pair, ("ZADD", "z", "3", "c", "1", "a", "2", "b", "2", "10"),
         ("SORT", "z", "ALPHA"), ("SORT", "z", "BY", "nosort"),
         ("SORT", "z", "BY", "nosort", "DESC"), ("SORT", "z", "BY", "nosort", "LIMIT", "1", "2"),
         ("SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "2"), ("SORT", "z"),
         ("ZADD", "n", "5", "1", "4", "2", "3", "3"), ("SORT", "n"), ("SORT", "n", "BY", "nosort"),
         ("OBJECT", "ENCODING", "n"), ("SORT_RO", "n", "BY", "nosort", "GET", "#"))


# -- the ACL: keys that BY and GET patterns build -----------------------------------------------

# The keys a BY or GET pattern builds come from the sorted values, so no key spec names them:
# Redis lets only a user that may read every key (~*, %R~* or allkeys, in a selector that
# allows the line) use a BY pattern with "*" or any GET (even "#"). Each user below runs
# every line; the replies, refusals included, must equal Redis's.
SORT_USERS: dict[str, list[str]] = {
    "app": ["+@all", "~app:*"],  # some keys only
    "reader": ["+@all", "%R~*"],  # reads everything, writes nothing
    "writer": ["+@all", "%W~*", "%R~app:*"],  # writes everything, reads some keys
    # a selector that allows SORT (not SORT_RO) with every key
    "selector": ["+@all", "~app:*", "(~* +sort)"],
    # every key readable, but only through a selector that does not allow SORT
    "other_selector": ["+sort", "+sort_ro", "+eval", "~app:*", "(%R~* +get)"],
}

SORT_LINES: list[Command] = [
    ("SORT", "app:s", "BY", "w_*"),
    ("SORT", "app:s", "BY", "app:w_*"),  # even a pattern within the user's keys
    ("SORT", "app:s", "BY", "nosort"),  # a constant BY reads no key: allowed
    ("SORT", "app:s", "BY", "x\0*"),  # "*" after a NUL is not seen: constant
    ("SORT", "app:s", "BY", "x*\0y"),
    ("SORT", "app:s", "GET", "#"),
    ("SORT", "app:s", "GET", "secret_*"),
    ("SORT", "app:s", "GET", "h_*->f"),
    ("SORT", "app:s", "BY", "w_*", "GET", "#", "GET", "secret_*"),
    ("SORT", "app:s", "GET", "secret_*", "STORE", "app:out"),
    ("SORT", "app:s", "GET", "secret_*", "STORE", "out"),  # STORE's key is checked first
    ("SORT", "app:s", "LIMIT", "x", "1", "GET", "#"),  # errors in the order they are met
    ("SORT", "app:s", "GET", "#", "LIMIT", "x", "1"),
    ("SORT", "app:s", "GET", "#", "BOGUS"),
    ("SORT_RO", "app:s", "GET", "secret_*"),
    ("SORT_RO", "app:s", "BY", "w_*"),
    ("SORT", "secret_1", "BY", "nosort"),
    ("EVAL", "return redis.pcall('SORT', KEYS[1], 'GET', 'secret_*')", 1, "app:s"),
    ("EVAL", "return redis.pcall('SORT', KEYS[1], 'BY', 'w_*', 'GET', 'w_*')", 1, "app:s"),
    ("EVAL", "return redis.pcall('SORT_RO', KEYS[1], 'BY', 'w_*')", 1, "app:s"),
    ("EVAL", "return redis.pcall('SORT', KEYS[1], 'GET', '#', 'STORE', 'app:out2')", 1,
     "app:s"),
]


@pytest.mark.parametrize("name", list(SORT_USERS))
def test_sort_patterns_need_access_to_every_key(pair: Pair, name: str) -> None:
    play(pair, ints("app:s", 3, 1, 2), ("MSET", "w_1", "3", "w_2", "1", "w_3", "2",
                                         "secret_1", "s1", "secret_2", "s2"),
         ("HSET", "h_1", "f", "x"))
    pair.check("ACL", "SETUSER", name, "on", ">pw", *SORT_USERS[name])
    user = pair.connect_extra()
    user.normalize = normalize.acl_texts_as_redis8(name)
    try:
        user.check("AUTH", name, "pw")
        replies = dict(zip(SORT_LINES, (user.check(*line) for line in SORT_LINES),
                           strict=True))
        # The data is there: a user that reads everything gets the other keys' values.
        secrets = replies[("SORT", "app:s", "GET", "secret_*")]
        if name in ("reader", "selector"):
            assert b"\r\ns1\r\n" in secrets and b"\r\ns2\r\n" in secrets
        else:
            assert secrets == b"-ERR GET option of SORT denied due to insufficient ACL " \
                              b"permissions.\r\n"
        pair.check("LRANGE", "app:out", "0", "-1")
        pair.check("LRANGE", "app:out2", "0", "-1")
    finally:
        user.close()
        pair.check("ACL", "DELUSER", name)
