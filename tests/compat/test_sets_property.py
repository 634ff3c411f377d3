"""Random set command sequences sent to a real redis-server and to resplite, compared.

Hypothesis draws sequences of set commands (and a few keyspace ones) over two set keys, a
string key and a missing key, with members that an intset stores (canonical integers) or
not, and small limits so that sets convert along the way: ``set-max-intset-entries`` on
both servers, and on resplite the 7.2 listpack directives. Replies must be byte-equal,
except:

* whole-set replies (SMEMBERS, SINTER, SUNION, SDIFF, SSCAN, SPOP of the whole set,
  SRANDMEMBER of at least the size) are compared as the same reply type with the same
  members, since the 7.0 reference keeps string sets as hashtables (table order) where
  resplite keeps 7.2's listpacks (insertion order); intsets are compared exactly;
* OBJECT ENCODING must agree, except that 7.2's ``listpack`` may stand where the reference
  has a ``hashtable`` (a string set) or an ``intset`` (a few integers that one command
  brought more of than ``set-max-intset-entries``, which 7.2 no longer starts as an intset);
* random picks (SPOP with a count below the size, SRANDMEMBER) are compared by shape, and
  after an SPOP the key is rewritten on both servers to what the reference kept, so the
  two stay in step.
"""

from __future__ import annotations

from compat_helpers import decode, ref_version
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.pair import Pair

KEYS = (b"a", b"b")
STRING_KEY = b"s"
MEMBERS = (b"1", b"2", b"3", b"-7", b"100", b"a", b"b", b"", b"01", b"long-member")
PATTERNS = (b"*", b"1*", b"?", b"[ab]", b"*m*")
WHOLE = {b"SMEMBERS", b"SINTER", b"SUNION", b"SDIFF", b"SSCAN"}

keys = st.sampled_from(KEYS + KEYS + (STRING_KEY, b"nokey"))
members = st.sampled_from(MEMBERS)
member_lists = st.lists(members, min_size=1, max_size=4)
key_lists = st.lists(keys, min_size=1, max_size=3)


@st.composite
def command(draw: st.DrawFn) -> tuple[bytes, ...]:
    key = draw(keys)
    kind = draw(st.sampled_from([
        "sadd", "sadd", "sadd", "srem", "sismember", "smismember", "scard", "smembers",
        "smove", "algebra", "algebra", "store", "sintercard", "sscan", "srandmember", "spop",
        "encoding", "keyspace",
    ]))
    if kind in ("sadd", "srem"):
        return (kind.upper().encode(), key, *draw(member_lists))
    if kind == "sismember":
        return (b"SISMEMBER", key, draw(members))
    if kind == "smismember":
        return (b"SMISMEMBER", key, *draw(member_lists))
    if kind in ("scard", "smembers"):
        return (kind.upper().encode(), key)
    if kind == "smove":
        return (b"SMOVE", key, draw(keys), draw(members))
    if kind == "algebra":
        return (draw(st.sampled_from([b"SINTER", b"SUNION", b"SDIFF"])), *draw(key_lists))
    if kind == "store":
        name = draw(st.sampled_from([b"SINTERSTORE", b"SUNIONSTORE", b"SDIFFSTORE"]))
        return (name, key, *draw(key_lists))
    if kind == "sintercard":
        sources = draw(key_lists)
        extra = draw(st.sampled_from([[], [b"LIMIT", b"1"], [b"LIMIT", b"0"], [b"LIMIT", b"-1"],
                                      [b"BOGUS"]]))
        return (b"SINTERCARD", b"%d" % len(sources), *sources, *extra)
    if kind == "sscan":
        options: list[bytes] = [b"COUNT", b"1000"]
        if draw(st.booleans()):
            options += [b"MATCH", draw(st.sampled_from(PATTERNS))]
        if draw(st.integers(0, 9)) == 0:
            options += draw(st.sampled_from([[b"COUNT", b"0"], [b"BOGUS"]]))
        return (b"SSCAN", key, draw(st.sampled_from([b"0", b"0", b"x"])), *options)
    if kind == "srandmember":
        count = draw(st.sampled_from([None, b"0", b"1", b"2", b"20", b"-1", b"-4", b"x"]))
        return (b"SRANDMEMBER", key) if count is None else (b"SRANDMEMBER", key, count)
    if kind == "spop":
        count = draw(st.sampled_from([None, b"0", b"1", b"2", b"20", b"-1"]))
        return (b"SPOP", key) if count is None else (b"SPOP", key, count)
    if kind == "encoding":
        return (b"OBJECT", b"ENCODING", key)
    other = draw(keys)
    return draw(st.sampled_from([
        (b"TYPE", key), (b"EXISTS", key), (b"DEL", key), (b"COPY", key, other, b"REPLACE"),
        (b"RENAME", key, other), (b"RENAMENX", key, other), (b"SMEMBERS", key),
    ]))


def _sorted(value: object) -> object:
    if isinstance(value, list):
        if len(value) == 2 and isinstance(value[1], list):  # SSCAN
            return [value[0], sorted(value[1])]
        return sorted(value, key=repr)
    return value


def _shape(value: object) -> object:
    if isinstance(value, list):
        return ["<bulk>" if isinstance(v, bytes) else v for v in value]
    return "<bulk>" if isinstance(value, bytes) else value


def _random_pick(cmd: tuple[bytes, ...], want: bytes) -> bool:
    """Whether ``cmd`` drew at random (its reply can only be compared by shape)."""
    return cmd[0] in (b"SPOP", b"SRANDMEMBER") and want[:1] != b"-"


def _same(cmd: tuple[bytes, ...], want: bytes, have: bytes, wide_sadd: bool = False) -> bool:
    if want == have:
        return True
    if want[:1] == b"-" or have[:1] == b"-" or want[:1] != have[:1]:
        return False
    if cmd[:2] == (b"OBJECT", b"ENCODING"):
        # 7.2+ makes listpacks of sets 7.0 holds as hashtables, and of small sets of integers
        # that a command brought too many members for an intset at once.
        if have == b"$8\r\nlistpack\r\n" and want in (b"$9\r\nhashtable\r\n",
                                                      b"$6\r\nintset\r\n"):
            return True
        # 7.2+ also converts an existing intset to a hashtable as soon as one SADD names more
        # members than set-max-intset-entries (duplicates included), where 7.0 adds them one
        # by one and may keep its intset.
        return wide_sadd and have == b"$9\r\nhashtable\r\n" and want == b"$6\r\nintset\r\n"
    if _random_pick(cmd, want):
        return _shape(decode(want)) == _shape(decode(have)) or _sorted(decode(want)) == _sorted(
            decode(have))
    if cmd[0] in WHOLE:
        return _sorted(decode(want)) == _sorted(decode(have))
    return False


def _resync(pair: Pair, key: bytes) -> None:
    """After a random pop, give both servers the members the reference kept."""
    kept = decode(pair.ref.call("SMEMBERS", key))
    if not isinstance(kept, list):
        return
    for conn in (pair.ref, pair.ours):
        conn.call("DEL", key)
        if kept:
            conn.call("SADD", key, *sorted(kept))


FINALE = [
    cmd
    for key in KEYS
    for cmd in [(b"SMEMBERS", key), (b"OBJECT", b"ENCODING", key), (b"SCARD", key),
                (b"TYPE", key)]
]


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sequence=st.lists(command(), min_size=5, max_size=40),
       intset_entries=st.sampled_from([b"2", b"3", b"512"]),
       listpack_entries=st.sampled_from([b"3", b"5", b"128"]),
       listpack_value=st.sampled_from([b"2", b"8", b"64"]))
def test_random_set_sequences_match_redis(pair: Pair, sequence: list[tuple[bytes, ...]],
                                          intset_entries: bytes, listpack_entries: bytes,
                                          listpack_value: bytes) -> None:
    for conn in (pair.ref, pair.ours):
        conn.call("FLUSHALL")
        conn.call("CONFIG", "SET", "set-max-intset-entries", intset_entries)
        conn.call("SET", STRING_KEY, "x")
    # Redis 7.0 has no listpack sets: the reference gets these limits from 7.2 on.
    listpacks = (pair.ref, pair.ours) if ref_version(pair) >= (7, 2) else (pair.ours,)
    for conn in listpacks:
        conn.call("CONFIG", "SET", "set-max-listpack-entries", listpack_entries)
        conn.call("CONFIG", "SET", "set-max-listpack-value", listpack_value)
    try:
        wide: set[bytes] = set()  # keys an intset-breaking SADD reached (see _same)
        for step, cmd in enumerate([*sequence, *FINALE]):
            want, have = pair.ref.call(*cmd), pair.ours.call(*cmd)
            if cmd[0] == b"SADD" and len(cmd) - 2 > int(intset_entries):
                wide.add(cmd[1])
            wide_sadd = cmd[:2] == (b"OBJECT", b"ENCODING") and cmd[2] in wide
            assert _same(cmd, want, have, wide_sadd), (
                f"step {step}: {b' '.join(cmd)!r}\n redis:    {want!r}\n resplite: {have!r}"
            )
            if cmd[0] == b"SPOP" and want[:1] != b"-":
                _resync(pair, cmd[1])
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "set-max-intset-entries", "512")
        for conn in listpacks:
            conn.call("CONFIG", "SET", "set-max-listpack-entries", "128")
            conn.call("CONFIG", "SET", "set-max-listpack-value", "64")
