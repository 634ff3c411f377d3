"""Random hash command sequences sent to a real redis-server and to resplite, compared.

Hypothesis draws sequences of hash commands (and a few keyspace ones) over two hash keys and
a string key, with fields and values that a listpack stores as integers or as strings,
numbers that are valid or not for HINCRBY / HINCRBYFLOAT, and small listpack limits so that
hashes convert to hashtables along the way. Replies must be byte-equal, except:

* a whole-hash reply (HGETALL, HKEYS, HVALS, HSCAN) from a key Redis holds as a hashtable,
  whose order is Redis's bucket order: compared sorted (and HSCAN's cursor exactly);
* HRANDFIELD draws are random: compared by shape (kinds and lengths), errors exactly.

No HSET brings more pairs than the entry limit, so Redis 7.2's early conversion of wide
HSETs (which 7.0 does not do) never comes into play.
"""

from __future__ import annotations

from compat_helpers import decode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.pair import Pair

KEYS = (b"h", b"g")
STRING_KEY = b"s"
FIELDS = (b"a", b"b", b"c", b"12", b"-3", b"", b"longfield")
VALUES = (
    b"", b"0", b"1", b"-1", b"v", b"abc", b"1.5", b" 2", b"007", b"1e3", b"inf", b"-0",
    b"9223372036854775807", b"-9223372036854775808", b"long value",
)
INT_STEPS = (b"1", b"-1", b"0", b"100", b"9223372036854775807", b"-9223372036854775808",
             b"x", b"1.5", b"")
FLOAT_STEPS = (b"1.5", b"-0.25", b"1e3", b"3", b"0x10", b"-1e-3", b"abc", b"inf", b"1e4932")
PATTERNS = (b"*", b"a*", b"?", b"*2", b"[ab]", b"")
WHOLE_HASH = {b"HGETALL", b"HKEYS", b"HVALS", b"HSCAN"}

keys = st.sampled_from(KEYS + KEYS + (STRING_KEY, b"nokey"))
fields = st.sampled_from(FIELDS)
field_lists = st.lists(fields, min_size=1, max_size=3)


@st.composite
def command(draw: st.DrawFn) -> tuple[bytes, ...]:
    key = draw(keys)
    kind = draw(st.sampled_from([
        "hset", "hset", "hset", "hmset", "hsetnx", "hget", "hmget", "hexists", "hlen",
        "hstrlen", "hdel", "hdel", "hincrby", "hincrbyfloat", "whole", "whole", "hscan",
        "hrandfield", "encoding", "keyspace",
    ]))
    if kind in ("hset", "hmset"):
        pairs = draw(st.lists(st.tuples(fields, st.sampled_from(VALUES)), min_size=1,
                              max_size=3))
        return (kind.upper().encode(), key, *[x for pair in pairs for x in pair])
    if kind == "hsetnx":
        return (b"HSETNX", key, draw(fields), draw(st.sampled_from(VALUES)))
    if kind in ("hget", "hexists", "hstrlen"):
        return (kind.upper().encode(), key, draw(fields))
    if kind in ("hmget", "hdel"):
        return (kind.upper().encode(), key, *draw(field_lists))
    if kind == "hlen":
        return (b"HLEN", key)
    if kind == "hincrby":
        return (b"HINCRBY", key, draw(fields), draw(st.sampled_from(INT_STEPS)))
    if kind == "hincrbyfloat":
        return (b"HINCRBYFLOAT", key, draw(fields), draw(st.sampled_from(FLOAT_STEPS)))
    if kind == "whole":
        return (draw(st.sampled_from([b"HGETALL", b"HKEYS", b"HVALS"])), key)
    if kind == "hscan":
        options: list[bytes] = []
        if draw(st.booleans()):
            options += [b"MATCH", draw(st.sampled_from(PATTERNS))]
        # COUNT above any size drawn here: Redis then walks a hashtable in one call too.
        options += [b"COUNT", b"1000"] if draw(st.booleans()) else []
        if draw(st.integers(0, 9)) == 0:
            options += draw(st.sampled_from([[b"COUNT", b"0"], [b"BOGUS"], [b"COUNT", b"x"]]))
        return (b"HSCAN", key, draw(st.sampled_from([b"0", b"0", b"x"])), *options)
    if kind == "hrandfield":
        count = draw(st.sampled_from([None, b"0", b"1", b"2", b"5", b"-1", b"-4", b"x"]))
        if count is None:
            return (b"HRANDFIELD", key)
        extra = draw(st.sampled_from([[], [b"WITHVALUES"], [b"withvalues"], [b"BOGUS"]]))
        return (b"HRANDFIELD", key, count, *extra)
    if kind == "encoding":
        return (b"OBJECT", b"ENCODING", key)
    other = draw(keys)
    return draw(st.sampled_from([
        (b"TYPE", key), (b"EXISTS", key), (b"DEL", key), (b"COPY", key, other, b"REPLACE"),
        (b"RENAME", key, other), (b"RENAMENX", key, other), (b"HGETALL", key),
    ]))


def _mask_bulks(value: object) -> object:
    if isinstance(value, list):
        return [_mask_bulks(v) for v in value]
    if isinstance(value, bytes):
        return b"<bulk>"
    return value


def _sorted_whole(cmd: tuple[bytes, ...], reply: bytes) -> object:
    value = decode(reply)
    if cmd[0] == b"HSCAN" and isinstance(value, list) and len(value) == 2:
        cursor, items = value
        return cursor, sorted(zip(items[::2], items[1::2], strict=True))
    if isinstance(value, dict):
        return sorted(value.items())
    if cmd[0] == b"HGETALL" and isinstance(value, list):
        return sorted(zip(value[::2], value[1::2], strict=True))
    return sorted(value) if isinstance(value, list) else value


def _same(pair: Pair, cmd: tuple[bytes, ...], want: bytes, have: bytes) -> bool:
    if want == have:
        return True
    if want[:1] == b"-" or have[:1] == b"-":
        return False
    if cmd[0] == b"HRANDFIELD":
        return bool(_mask_bulks(decode(want)) == _mask_bulks(decode(have)))
    if cmd[0] in WHOLE_HASH:
        # Only a hashtable may answer in another order (the state has not moved since).
        encoding = pair.ref.call("OBJECT", "ENCODING", cmd[1])
        return encoding == b"$9\r\nhashtable\r\n" and _sorted_whole(cmd, want) == _sorted_whole(
            cmd, have
        )
    return False


FINALE = [
    cmd
    for key in KEYS
    for cmd in [(b"HGETALL", key), (b"OBJECT", b"ENCODING", key), (b"HLEN", key), (b"TYPE", key)]
]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sequence=st.lists(command(), min_size=5, max_size=40),
       max_entries=st.sampled_from([b"3", b"4", b"512"]),
       max_value=st.sampled_from([b"4", b"8", b"64"]))
def test_random_hash_sequences_match_redis(pair: Pair, sequence: list[tuple[bytes, ...]],
                                           max_entries: bytes, max_value: bytes) -> None:
    for conn in (pair.ref, pair.ours):
        conn.call("FLUSHALL")
        conn.call("CONFIG", "SET", "hash-max-listpack-entries", max_entries)
        conn.call("CONFIG", "SET", "hash-max-listpack-value", max_value)
        conn.call("SET", STRING_KEY, "x")
    try:
        for step, cmd in enumerate([*sequence, *FINALE]):
            want, have = pair.ref.call(*cmd), pair.ours.call(*cmd)
            assert _same(pair, cmd, want, have), (
                f"step {step}: {b' '.join(cmd)!r}\n redis:    {want!r}\n resplite: {have!r}"
            )
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "hash-max-listpack-entries", "512")
            conn.call("CONFIG", "SET", "hash-max-listpack-value", "64")
