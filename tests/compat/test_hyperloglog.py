"""HyperLogLog commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST, with GET after the writes so that the
representation itself (header, cached cardinality, sparse opcodes, dense registers) must be
Redis's, byte for byte. Random sets from 10 to 1M elements must get Redis's estimate; the
1M case runs once.
"""

from __future__ import annotations

import random

import pytest
from compat_helpers import Command, run
from support.pair import Pair, open_pair
from support.servers import ServerPairFactory

Scenario = list[Command]


def elements(prefix: str, n: int, start: int = 0) -> list[str]:
    return [f"{prefix}{i}" for i in range(start, start + n)]


SCENARIOS: dict[str, Scenario] = {
    "PFADD creates a sparse HLL; GET shows Redis's bytes": [
        ("PFADD", "h"), ("GET", "h"), ("PFADD", "h"), ("PFADD", "h", "a"), ("GET", "h"),
        ("PFADD", "h", "a"), ("PFADD", "h", "b", "c", "a"), ("GET", "h"), ("TYPE", "h"),
        ("OBJECT", "ENCODING", "h"), ("STRLEN", "h"),
    ],
    "PFCOUNT caches the estimate in the header": [
        ("PFADD", "h", "a", "b", "c"), ("GET", "h"), ("PFCOUNT", "h"), ("GET", "h"),
        ("PFADD", "h", "c"), ("GET", "h"), ("PFADD", "h", "d"), ("GET", "h"), ("PFCOUNT", "h"),
        ("GET", "h"),
    ],
    "PFADD with many elements, binary and empty ones": [
        ("PFADD", "h", *elements("e", 200)), ("GET", "h"), ("PFCOUNT", "h"),
        ("PFADD", "b", "", "\x00", "\xff\xfe", "x" * 7, "y" * 8, "z" * 9, "w" * 100),
        ("GET", "b"), ("PFCOUNT", "b"), ("PFDEBUG", "DECODE", "b"),
    ],
    "sparse to dense at hll-sparse-max-bytes": [
        ("PFADD", "h", *elements("x", 1500)), ("PFDEBUG", "ENCODING", "h"), ("STRLEN", "h"),
        ("PFADD", "h", *elements("x", 3000, 1500)), ("PFDEBUG", "ENCODING", "h"),
        ("STRLEN", "h"), ("GET", "h"), ("PFCOUNT", "h"), ("GET", "h"),
    ],
    "PFCOUNT of several keys is the union; missing keys count as empty": [
        ("PFADD", "a", *elements("e", 50)), ("PFADD", "b", *elements("e", 50, 25)),
        ("PFCOUNT", "a", "b"), ("PFCOUNT", "a", "nokey"), ("PFCOUNT", "nokey"),
        ("PFCOUNT", "nokey", "other"), ("PFCOUNT", "a", "a"), ("GET", "a"),
    ],
    "PFMERGE into a new, an existing and a dense destination": [
        ("PFADD", "a", *elements("e", 50)), ("PFADD", "b", *elements("e", 50, 25)),
        ("PFMERGE", "m", "a", "b"), ("GET", "m"), ("PFCOUNT", "m"), ("PFMERGE", "a", "b"),
        ("GET", "a"), ("PFMERGE", "n"), ("GET", "n"), ("PFMERGE", "n", "nokey"), ("GET", "n"),
        ("PFADD", "d", *elements("d", 4000)), ("PFMERGE", "m", "d"), ("PFDEBUG", "ENCODING", "m"),
        ("PFCOUNT", "m"), ("GET", "m"), ("PFMERGE", "s", "a"), ("PFDEBUG", "ENCODING", "s"),
        ("GET", "s"),
    ],
    "PFMERGE of large sparse HLLs goes dense through the sparse limit": [
        ("PFADD", "a", *elements("a", 1200)), ("PFADD", "b", *elements("b", 1200)),
        ("PFDEBUG", "ENCODING", "a"), ("PFMERGE", "m", "a", "b"), ("PFDEBUG", "ENCODING", "m"),
        ("GET", "m"), ("PFCOUNT", "m"),
    ],
    "PFDEBUG GETREG / DECODE / ENCODING / TODENSE": [
        ("PFADD", "h", "a", "b", "c", "d"), ("PFDEBUG", "DECODE", "h"),
        ("PFDEBUG", "ENCODING", "h"), ("PFDEBUG", "TODENSE", "h"), ("PFDEBUG", "ENCODING", "h"),
        ("PFDEBUG", "TODENSE", "h"), ("PFDEBUG", "DECODE", "h"), ("GET", "h"),
        ("PFADD", "g", "x"), ("PFDEBUG", "GETREG", "g"), ("PFDEBUG", "ENCODING", "g"),
        ("PFDEBUG", "getreg", "g"),
    ],
    "PFDEBUG errors": [
        ("PFDEBUG", "ENCODING", "nokey"), ("PFADD", "h", "a"), ("PFDEBUG", "BOGUS", "h"),
        ("PFDEBUG", "ENCODING", "h", "extra"), ("PFDEBUG", "DECODE", "h", "x"),
        ("PFDEBUG", "BOGUS", "nokey"), ("SET", "s", "not an hll"), ("PFDEBUG", "ENCODING", "s"),
        ("PFDEBUG", "ENCODING"), ("PFDEBUG", "bo\x00gus", "h"),
    ],
    "not an HLL: WRONGTYPE with Redis's HLL text, or the plain one for other types": [
        ("SET", "s", "hello"), ("PFADD", "s", "a"), ("PFCOUNT", "s"), ("PFCOUNT", "s", "nokey"),
        ("PFMERGE", "m", "s"), ("PFMERGE", "s", "nokey"), ("EXISTS", "m"),
        ("HSET", "hash", "f", "v"), ("PFADD", "hash", "a"), ("PFCOUNT", "hash"),
        ("PFMERGE", "hash"), ("SET", "short", "HYLL"), ("PFCOUNT", "short"),
        ("SET", "enc", "HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
        ("PFADD", "enc", "a"), ("SET", "dense", "HYLL\x00" + "\x00" * 20),
        ("PFCOUNT", "dense"), ("SET", "n", "123"), ("PFADD", "n", "x"), ("PFADD", "hll", "a"),
        ("PFCOUNT", "hll", "hash"), ("PFADD",),
    ],
    "a corrupt sparse HLL is INVALIDOBJ": [
        ("SET", "c", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xfe"),
        ("PFCOUNT", "c"), ("PFCOUNT", "c", "c"), ("PFMERGE", "m", "c"), ("PFDEBUG", "GETREG", "c"),
        ("PFDEBUG", "TODENSE", "c"), ("PFDEBUG", "DECODE", "c"),
        ("SET", "d", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x00"),
        ("PFCOUNT", "d"), ("PFADD", "d", "a"),
    ],
    "an HLL written by SET is read and updated; a stale-free cache is trusted": [
        ("SET", "h", "HYLL\x01\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x7f\xff"),
        ("PFCOUNT", "h"), ("OBJECT", "ENCODING", "h"), ("PFADD", "h", "a"), ("PFCOUNT", "h"),
        ("GET", "h"),
    ],
    "PFADD keeps the TTL; APPEND breaks the HLL": [
        ("PFADD", "h", "a"), ("EXPIRE", "h", "100"), ("PFADD", "h", "b"), ("TTL", "h"),
        ("PFCOUNT", "h"), ("TTL", "h"), ("APPEND", "h", "x"), ("PFCOUNT", "h"),
        ("PFADD", "z", "a"), ("SETRANGE", "z", "16", "\x00"), ("PFCOUNT", "z"),
    ],
    "PFSELFTEST": [("PFSELFTEST",), ("PFSELFTEST", "x")],
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario(pair: Pair, name: str) -> None:
    run(pair, *SCENARIOS[name])


def test_a_small_sparse_limit(server_pair_factory: ServerPairFactory) -> None:
    ref, ours = server_pair_factory("--hll-sparse-max-bytes", "40")
    pair = open_pair(ref, ours, 2)
    try:
        run(pair, ("PFADD", "h", "a", "b", "c", "d", "e"), ("PFDEBUG", "ENCODING", "h"),
            ("GET", "h"), ("PFADD", "h", *elements("x", 20)), ("PFDEBUG", "ENCODING", "h"),
            ("GET", "h"), ("CONFIG", "GET", "hll-sparse-max-bytes"),
            ("CONFIG", "SET", "hll-sparse-max-bytes", "0"), ("PFADD", "g", "a"),
            ("PFDEBUG", "ENCODING", "g"), ("GET", "g"))
    finally:
        pair.close()


def test_watch_sees_pfadd_and_a_cache_refresh(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        run(pair, ("PFADD", "h", "a"))
        for change, expect_abort in [
            (("PFADD", "h", "a"), False),
            (("PFADD", "h", "b"), True),
            (("PFCOUNT", "h"), True),  # refreshes the cached estimate
            (("PFCOUNT", "h"), False),  # served from the cache
            (("PFMERGE", "h"), True),
        ]:
            run(pair, ("WATCH", "h"))
            for client in (other.ref, other.ours):
                client.call(*change)
            run(pair, ("MULTI",), ("PING",))
            expected, got = pair.both("EXEC")
            assert expected == got
            assert (expected in (b"*-1\r\n", b"_\r\n")) == expect_abort, change
    finally:
        other.close()


@pytest.mark.parametrize("size", [10, 100, 1000, 5000, 20_000, 100_000])
def test_pfcount_of_random_sets_equals_redis(pair: Pair, size: int) -> None:
    if pair.resp == 3 and size > 1000:
        pytest.skip("the estimate is protocol-independent: large sets run once, under RESP2")
    rng = random.Random(size)
    members = [rng.randbytes(rng.randrange(1, 24)) for _ in range(size)]
    for start in range(0, size, 1000):
        run(pair, ("PFADD", "h", *members[start : start + 1000]))
    run(pair, ("PFCOUNT", "h"), ("GET", "h"), ("PFDEBUG", "ENCODING", "h"))
    half = members[: size // 2]
    for start in range(0, len(half), 1000):
        run(pair, ("PFADD", "g", *half[start : start + 1000]))
    run(pair, ("PFADD", "g", "extra"), ("PFCOUNT", "h", "g"), ("PFMERGE", "m", "g", "h"),
        ("GET", "m"), ("PFCOUNT", "m"))


@pytest.mark.slow
def test_pfcount_of_a_million_elements_equals_redis(pair: Pair) -> None:
    if pair.resp == 3:
        pytest.skip("runs once, under RESP2")
    for start in range(0, 1_000_000, 5000):
        run(pair, ("PFADD", "h", *[b"m:%d" % i for i in range(start, start + 5000)]))
    run(pair, ("PFCOUNT", "h"), ("GET", "h"))


@pytest.mark.redis_version("8.0")
def test_pfdebug_simd(pair: Pair) -> None:
    # Redis 8.0's switch for its vectorized merge, which its own tests flip; resplite has
    # none, so it answers "disabled", as Redis does on a CPU without AVX2 or NEON. The
    # argument is checked; the key position holds ON or OFF, not a key.
    ours = pair.ours
    assert ours.call("PFDEBUG", "SIMD", "ON") == b"+disabled\r\n"
    assert ours.call("pfdebug", "simd", "off") == b"+disabled\r\n"
    assert ours.call("PFDEBUG", "SIMD", "maybe") == b"-ERR Argument must be ON or OFF\r\n"
    assert ours.call("PFDEBUG", "SIMD", "ON", "x") == (
        b"-ERR wrong number of arguments for 'pfdebug' command\r\n")
    assert ours.call("PING") == b"+PONG\r\n"  # one reply each, nothing left over
