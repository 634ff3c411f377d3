"""Random BITFIELD and BITOP calls sent to a real redis-server and to resplite, compared.

Hypothesis draws BITFIELD calls of several operations each (every width from i1..i64 and
u1..u63, plain and ``#`` offsets, every OVERFLOW mode, values around each width's limits and
the 64-bit extremes) over strings seeded with random bytes, and BITOP calls over random
strings of different lengths, interleaved with GET, so the whole string is compared after
every step. Replies must be byte-equal.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.pair import Pair

KEYS = (b"a", b"b", b"c")


def _limits(bits: int, signed: bool) -> list[int]:
    top = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    bottom = -top - 1 if signed else 0
    return [top, top + 1, bottom, bottom - 1, 0, 1, -1, top // 2]


@st.composite
def field_type(draw: st.DrawFn) -> tuple[bool, int]:
    signed = draw(st.booleans())
    bits = draw(st.integers(1, 64 if signed else 63))
    return signed, bits


@st.composite
def amount(draw: st.DrawFn, signed: bool, bits: int) -> bytes:
    value = draw(st.one_of(
        st.sampled_from(_limits(bits, signed)),
        st.sampled_from([(1 << 63) - 1, -(1 << 63), 1 << 62, -(1 << 62)]),
        st.integers(-(1 << 63), (1 << 63) - 1),
        st.integers(-300, 300),
    ))
    return b"%d" % value


@st.composite
def bitfield_call(draw: st.DrawFn) -> tuple[bytes, ...]:
    args: list[bytes] = [draw(st.sampled_from([b"BITFIELD", b"BITFIELD", b"BITFIELD_RO"])),
                         draw(st.sampled_from(KEYS))]
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.integers(0, 4)) == 0:
            args += [b"OVERFLOW", draw(st.sampled_from([b"WRAP", b"SAT", b"FAIL", b"sat"]))]
        signed, bits = draw(field_type())
        kind = b"%s%d" % (b"i" if signed else b"u", bits)
        if draw(st.booleans()):
            offset = b"#%d" % draw(st.integers(0, 6))
        else:
            offset = b"%d" % draw(st.integers(0, 90))
        op = draw(st.sampled_from([b"GET", b"SET", b"INCRBY", b"INCRBY"]))
        args += [op, kind, offset]
        if op != b"GET":
            args.append(draw(amount(signed, bits)))
    return tuple(args)


@st.composite
def bitop_call(draw: st.DrawFn) -> tuple[bytes, ...]:
    op = draw(st.sampled_from([b"AND", b"OR", b"XOR", b"NOT"]))
    sources = [draw(st.sampled_from((*KEYS, b"nokey")))]
    if op != b"NOT":
        sources += draw(st.lists(st.sampled_from((*KEYS, b"nokey")), max_size=3))
    return (b"BITOP", op, draw(st.sampled_from(KEYS)), *sources)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seeds=st.lists(st.binary(max_size=12), min_size=3, max_size=3),
       calls=st.lists(bitfield_call(), min_size=1, max_size=12))
def test_random_bitfield_calls_match_redis(pair: Pair, seeds: list[bytes],
                                           calls: list[tuple[bytes, ...]]) -> None:
    for conn in (pair.ref, pair.ours):
        conn.call("FLUSHALL")
        for key, seed in zip(KEYS, seeds, strict=True):
            if seed:
                conn.call("SET", key, seed)
    for step, cmd in enumerate(calls):
        for check in (cmd, (b"GET", cmd[1])):
            want, have = pair.ref.call(*check), pair.ours.call(*check)
            assert want == have, (
                f"step {step}: {b' '.join(check)!r}\n redis:    {want!r}\n resplite: {have!r}"
            )


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seeds=st.lists(st.binary(max_size=70), min_size=3, max_size=3),
       calls=st.lists(bitop_call(), min_size=1, max_size=8))
def test_random_bitop_calls_match_redis(pair: Pair, seeds: list[bytes],
                                        calls: list[tuple[bytes, ...]]) -> None:
    for conn in (pair.ref, pair.ours):
        conn.call("FLUSHALL")
        for key, seed in zip(KEYS, seeds, strict=True):
            if seed:
                conn.call("SET", key, seed)
    for step, cmd in enumerate(calls):
        for check in (cmd, (b"GET", cmd[2]), (b"BITCOUNT", cmd[2]), (b"BITPOS", cmd[2], b"1")):
            want, have = pair.ref.call(*check), pair.ours.call(*check)
            assert want == have, (
                f"step {step}: {b' '.join(check)!r}\n redis:    {want!r}\n resplite: {have!r}"
            )


@st.composite
def range_call(draw: st.DrawFn) -> tuple[bytes, ...]:
    key = draw(st.sampled_from(KEYS))
    bound = st.integers(-100, 100)
    start, end = b"%d" % draw(bound), b"%d" % draw(bound)
    unit = draw(st.sampled_from([[], [b"BYTE"], [b"BIT"]]))
    if draw(st.booleans()):
        return (b"BITCOUNT", key, start, end, *unit)
    bit = draw(st.sampled_from([b"0", b"1"]))
    shape = draw(st.integers(0, 2))
    if shape == 0:
        return (b"BITPOS", key, bit)
    if shape == 1:
        return (b"BITPOS", key, bit, start)
    return (b"BITPOS", key, bit, start, end, *unit)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seeds=st.lists(st.binary(min_size=1, max_size=40), min_size=3, max_size=3),
       calls=st.lists(range_call(), min_size=1, max_size=20))
def test_random_bitcount_and_bitpos_ranges_match_redis(pair: Pair, seeds: list[bytes],
                                                       calls: list[tuple[bytes, ...]]) -> None:
    for conn in (pair.ref, pair.ours):
        conn.call("FLUSHALL")
        for key, seed in zip(KEYS, seeds, strict=True):
            conn.call("SET", key, seed)
    for step, cmd in enumerate(calls):
        want, have = pair.ref.call(*cmd), pair.ours.call(*cmd)
        assert want == have, (
            f"step {step}: {b' '.join(cmd)!r}\n redis:    {want!r}\n resplite: {have!r}"
        )
