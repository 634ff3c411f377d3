"""Random list command sequences sent to a real redis-server and to resplite, compared.

Hypothesis draws sequences of list commands (blocking ones included, with timeouts short
enough that an empty key answers quickly) and a few keyspace ones over two list keys and a
string key, with elements that a listpack stores as integers or as strings, some long enough
for plain nodes, and a small ``list-max-listpack-size`` per example (sizes and counts) so
that nodes split, merge and convert along the way. Every reply must be byte-equal: list
order is defined, so nothing is compared loosely.

Against Redis 7.4 or newer the encoding and the node layout are compared too (OBJECT ENCODING
and DEBUG OBJECT's ``ql_*`` figures after every command); Redis 7.0, the usual reference,
reports every list as a quicklist with other node rules, so there they are left out.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.pair import Pair
from support.servers import ServerProcess

KEYS = (b"a", b"b")
STRING_KEY = b"s"
ELEMENTS = (
    b"", b"a", b"b", b"c", b"0", b"1", b"-1", b"12", b"007", b"-0", b"9223372036854775807",
    b"9223372036854775808", b"x" * 30, b"y" * 70, b"z" * 300, b"L" * 4100, b"M" * 9000,
)
FILLS = (b"-2", b"-1", b"1", b"2", b"3", b"5", b"0")
_QL = re.compile(rb"encoding:(\S+)|(ql_nodes:\S+ ql_avg_node:\S+ ql_listpack_max:\S+ "
                 rb"ql_compressed:\S+ ql_uncompressed_size:\d+)")

keys = st.sampled_from(KEYS + KEYS + (STRING_KEY, b"nokey"))
elements = st.sampled_from(ELEMENTS)
indexes = st.sampled_from([b"0", b"1", b"2", b"-1", b"-2", b"5", b"-7", b"100", b"x"])
sides = st.sampled_from([b"LEFT", b"RIGHT", b"left", b"UP"])


@st.composite
def command(draw: st.DrawFn) -> tuple[bytes, ...]:
    key = draw(keys)
    kind = draw(st.sampled_from([
        "push", "push", "push", "push", "pushx", "pop", "pop", "popcount", "llen", "lrange",
        "lrange", "lindex", "lset", "linsert", "lrem", "ltrim", "lpos", "lmove", "rpoplpush",
        "lmpop", "blocking", "keyspace",
    ]))
    if kind in ("push", "pushx"):
        name = draw(st.sampled_from([b"LPUSH", b"RPUSH"]))
        if kind == "pushx":
            name += b"X"
        return (name, key, *draw(st.lists(elements, min_size=1, max_size=4)))
    if kind == "pop":
        return (draw(st.sampled_from([b"LPOP", b"RPOP"])), key)
    if kind == "popcount":
        count = draw(st.sampled_from([b"0", b"1", b"2", b"5", b"100", b"-1", b"x"]))
        return (draw(st.sampled_from([b"LPOP", b"RPOP"])), key, count)
    if kind == "llen":
        return (b"LLEN", key)
    if kind == "lrange":
        return (b"LRANGE", key, draw(indexes), draw(indexes))
    if kind == "lindex":
        return (b"LINDEX", key, draw(indexes))
    if kind == "lset":
        return (b"LSET", key, draw(indexes), draw(elements))
    if kind == "linsert":
        where = draw(st.sampled_from([b"BEFORE", b"AFTER", b"after", b"MIDDLE"]))
        return (b"LINSERT", key, where, draw(elements), draw(elements))
    if kind == "lrem":
        count = draw(st.sampled_from([b"0", b"1", b"-1", b"2", b"-2", b"x"]))
        return (b"LREM", key, count, draw(elements))
    if kind == "ltrim":
        return (b"LTRIM", key, draw(indexes), draw(indexes))
    if kind == "lpos":
        options: list[bytes] = []
        for name, values in ((b"RANK", [b"1", b"2", b"-1", b"-2", b"0"]),
                             (b"COUNT", [b"0", b"1", b"2", b"-1"]),
                             (b"MAXLEN", [b"0", b"1", b"3", b"-1"])):
            if draw(st.booleans()):
                options += [name, draw(st.sampled_from(values))]
        return (b"LPOS", key, draw(elements), *options)
    if kind == "lmove":
        return (b"LMOVE", key, draw(keys), draw(sides), draw(sides))
    if kind == "rpoplpush":
        return (b"RPOPLPUSH", key, draw(keys))
    if kind == "lmpop":
        counted = draw(st.sampled_from([[], [b"COUNT", b"1"], [b"COUNT", b"3"], [b"COUNT", b"0"]]))
        return (b"LMPOP", b"2", key, draw(keys), draw(sides), *counted)
    if kind == "blocking":
        timeout = draw(st.sampled_from([b"0.001", b"0.002", b"-1", b"x"]))
        return draw(st.sampled_from([
            (b"BLPOP", key, draw(keys), timeout), (b"BRPOP", key, timeout),
            (b"BLMOVE", key, draw(keys), draw(sides), draw(sides), timeout),
            (b"BRPOPLPUSH", key, draw(keys), timeout),
            (b"BLMPOP", timeout, b"1", key, draw(sides), b"COUNT", b"2"),
        ]))
    other = draw(keys)
    return draw(st.sampled_from([
        (b"TYPE", key), (b"EXISTS", key), (b"DEL", key), (b"COPY", key, other, b"REPLACE"),
        (b"RENAME", key, other), (b"LRANGE", key, b"0", b"-1"),
    ]))


def _layout(reply: bytes) -> object:
    if not reply.startswith(b"+"):
        return reply
    return [m.group(0) for m in _QL.finditer(reply)]


@pytest.fixture(scope="module")
def layouts_comparable(redis_ref: ServerProcess) -> bool:
    """Whether the reference has Redis 7.4's list encodings and node rules."""
    from support.raw import RawClient

    conn = RawClient(redis_ref.host, redis_ref.port)
    try:
        info = conn.call("INFO", "server")
    finally:
        conn.close()
    version = re.search(rb"redis_version:(\d+)\.(\d+)", info)
    assert version is not None
    return (int(version.group(1)), int(version.group(2))) >= (7, 4)


FINALE = [cmd for key in KEYS for cmd in [(b"LRANGE", key, b"0", b"-1"), (b"LLEN", key),
                                          (b"TYPE", key)]]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sequence=st.lists(command(), min_size=5, max_size=40), fill=st.sampled_from(FILLS))
def test_random_list_sequences_match_redis(
    pair: Pair, layouts_comparable: bool, sequence: list[tuple[bytes, ...]], fill: int
) -> None:
    for conn in (pair.ref, pair.ours):
        conn.call("FLUSHALL")
        conn.call("CONFIG", "SET", "list-max-listpack-size", fill)
        conn.call("SET", STRING_KEY, "x")
    try:
        for step, cmd in enumerate([*sequence, *FINALE]):
            want, have = pair.ref.call(*cmd), pair.ours.call(*cmd)
            assert want == have, (
                f"step {step} (fill {fill!r}): {b' '.join(c[:40] for c in cmd)!r}\n"
                f" redis:    {want[:300]!r}\n resplite: {have[:300]!r}"
            )
            if layouts_comparable:
                for key in KEYS:
                    want_l = _layout(pair.ref.call(b"DEBUG", b"OBJECT", key))
                    have_l = _layout(pair.ours.call(b"DEBUG", b"OBJECT", key))
                    assert want_l == have_l, f"step {step}: {cmd!r} layout of {key!r}"
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "list-max-listpack-size", "-2")
