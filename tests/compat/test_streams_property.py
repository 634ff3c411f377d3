"""Random stream command sequences sent to a real redis-server and to resplite, compared.

Hypothesis draws sequences of stream commands over two keys, with explicit ids so both
servers produce the same ones, small node limits so entries spread over many nodes, values
that a listpack stores as integers or as strings of every size class, and every trimming
form. Replies must be byte-equal, except where Redis 7.0 and the newer Redis that resplite
follows are known to differ:

* idle times (they depend on when each server ran the command) are masked;
* consumer groups' ``entries-read`` and ``lag`` are masked (Redis 7.2+ changed their rules);
* a consumer is always created with XGROUP CREATECONSUMER before a command names it,
  because Redis 7.2+ creates consumers in more places than 7.0 does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.pair import Pair

KEYS = ("s", "t")
GROUPS = ("g", "h")
CONSUMERS = ("c1", "c2", "c3")
FIELDS = (b"a", b"b", b"12", b"")

_IDLE = re.compile(rb"(\*4\r\n\$\d+\r\n\d+-\d+\r\n\$\d+\r\n[^\r]*\r\n):-?\d+\r\n")
_COUNTERS = re.compile(rb"(\$12\r\nentries-read\r\n|\$3\r\nlag\r\n)(:-?\d+|\$-1|_)\r\n")


def mask(reply: bytes) -> bytes:
    reply = _IDLE.sub(rb"\1:<idle>\r\n", reply)
    return _COUNTERS.sub(rb"\1<counter>\r\n", reply)


@dataclass(frozen=True)
class New:
    """An id above every id drawn so far (XADD), ``step`` further on."""

    step: int


@dataclass(frozen=True)
class SameMs:
    """``<ms>-*`` with the millisecond of the last id drawn: the server picks the sequence."""


@dataclass(frozen=True)
class Ref:
    """One of the ids drawn so far (most likely an existing entry)."""

    index: int


def materialize(commands: list[tuple[object, ...]]) -> list[tuple[bytes, ...]]:
    """Turn New/Ref placeholders into ids, in command order."""
    counter = 0
    issued: list[bytes] = []
    out = []
    for cmd in commands:
        args = []
        for arg in cmd:
            if isinstance(arg, New):
                # Above the range random ids are drawn from, so drawn ids keep growing.
                counter += arg.step
                sid = b"%d-%d" % (50 + counter // 3, counter % 3)
                issued.append(sid)
                args.append(sid)
            elif isinstance(arg, SameMs):
                args.append(b"%d-*" % (50 + counter // 3))
            elif isinstance(arg, Ref):
                args.append(issued[arg.index % len(issued)] if issued else b"1-1")
            else:
                assert isinstance(arg, bytes)
                args.append(arg)
        out.append(tuple(args))
    return out


values = st.one_of(
    st.sampled_from([b"0", b"1", b"127", b"128", b"-1", b"4096", b"-32769", b"007", b"",
                     b"9223372036854775807", b"9223372036854775808", b"x"]),
    st.binary(min_size=0, max_size=12),
    st.integers(min_value=60, max_value=300).map(lambda n: b"v" * n),
)
ms = st.integers(min_value=0, max_value=40)
new_ms = st.integers(min_value=45, max_value=200)
seq = st.integers(min_value=0, max_value=3)
random_ids = st.builds(lambda m, s: b"%d-%d" % (m, s), ms, seq)
ids = st.one_of(random_ids, st.integers(0, 10**6).map(Ref), st.integers(0, 10**6).map(Ref))
new_ids = st.integers(1, 3).map(New)
bounds = st.one_of(st.just(b"-"), st.just(b"+"), ids, new_ms.map(lambda m: b"%d" % m),
                   random_ids.map(lambda i: b"(" + i), new_ms.map(lambda m: b"(%d-1" % m))
keys = st.sampled_from(KEYS)
groups = st.sampled_from(GROUPS)
consumers = st.sampled_from(CONSUMERS)


@st.composite
def xadd(draw: st.DrawFn) -> list[tuple[object, ...]]:
    args: list[object] = [b"XADD", draw(keys).encode()]
    trim = draw(st.sampled_from(["", "MAXLEN", "MINID"]))
    if trim:
        args.append(trim.encode())
        approx = draw(st.sampled_from([b"", b"=", b"~"]))
        if approx:
            args.append(approx)
        args.append(b"%d" % draw(st.integers(0, 30)) if trim == "MAXLEN" else draw(ids))
        if approx == b"~" and draw(st.booleans()):
            args += [b"LIMIT", b"%d" % draw(st.integers(0, 40))]
    form = draw(st.sampled_from(["new"] * 8 + ["random", "ms-*", "same-ms"]))
    if form == "new":
        args.append(draw(new_ids))
    elif form == "same-ms":
        args.append(SameMs())
    else:
        args.append(draw(random_ids) if form == "random" else b"%d-*" % draw(ms))
    fields = draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=3))
    for f in fields:
        args += [f, draw(values)]
    return [tuple(args)]


@st.composite
def xtrim(draw: st.DrawFn) -> list[tuple[object, ...]]:
    key = draw(keys).encode()
    strategy = draw(st.sampled_from([b"MAXLEN", b"MINID"]))
    approx = draw(st.sampled_from([b"", b"=", b"~"]))
    threshold = (b"%d" % draw(st.integers(0, 30)) if strategy == b"MAXLEN"
                 else draw(st.one_of(ids, new_ms.map(lambda m: b"%d" % m))))
    args: list[object] = [b"XTRIM", key, strategy] + ([approx] if approx else []) + [threshold]
    if approx == b"~" and draw(st.booleans()):
        args += [b"LIMIT", b"%d" % draw(st.integers(0, 40))]
    return [tuple(args)]


@st.composite
def reads(draw: st.DrawFn) -> list[tuple[object, ...]]:
    key = draw(keys).encode()
    kind = draw(st.sampled_from(["range", "revrange", "xread", "len", "info", "del"]))
    count = [b"COUNT", b"%d" % draw(st.integers(-1, 6))] if draw(st.booleans()) else []
    if kind == "range":
        return [(b"XRANGE", key, draw(bounds), draw(bounds), *count)]
    if kind == "revrange":
        return [(b"XREVRANGE", key, draw(bounds), draw(bounds), *count)]
    if kind == "xread":
        other = [k.encode() for k in KEYS if k.encode() != key]
        return [(b"XREAD", *count, b"STREAMS", key, other[0], draw(ids), draw(ids))]
    if kind == "len":
        return [(b"XLEN", key)]
    if kind == "info":
        return [(b"XINFO", b"STREAM", key)]
    return [(b"XDEL", key, *draw(st.lists(ids, min_size=1, max_size=3)))]


@st.composite
def group_ops(draw: st.DrawFn) -> list[tuple[object, ...]]:
    key = draw(keys).encode()
    group = draw(groups).encode()
    consumer = draw(consumers).encode()
    create = (b"XGROUP", b"CREATECONSUMER", key, group, consumer)
    kind = draw(st.sampled_from(
        ["create", "setid", "destroy", "delconsumer", "read", "read", "history", "ack",
         "pending", "pending_range", "claim", "autoclaim", "groups"]))
    if kind == "create":
        start = draw(st.one_of(st.just(b"$"), st.just(b"0"), ids))
        mk = [b"MKSTREAM"] if draw(st.booleans()) else []
        return [(b"XGROUP", b"CREATE", key, group, start, *mk)]
    if kind == "setid":
        return [(b"XGROUP", b"SETID", key, group, draw(st.one_of(st.just(b"$"), ids)))]
    if kind == "destroy":
        return [(b"XGROUP", b"DESTROY", key, group)]
    if kind == "delconsumer":
        return [(b"XGROUP", b"DELCONSUMER", key, group, consumer)]
    if kind in ("read", "history"):
        count = [b"COUNT", b"%d" % draw(st.integers(0, 4))] if draw(st.booleans()) else []
        noack = [b"NOACK"] if kind == "read" and draw(st.integers(0, 2)) == 0 else []
        start = b">" if kind == "read" else draw(st.one_of(st.just(b"0"), ids))
        return [create, (b"XREADGROUP", b"GROUP", group, consumer, *count, *noack,
                         b"STREAMS", key, start)]
    if kind == "ack":
        return [(b"XACK", key, group, *draw(st.lists(ids, min_size=1, max_size=3)))]
    if kind == "pending":
        return [(b"XPENDING", key, group)]
    if kind == "pending_range":
        who = [consumer] if draw(st.booleans()) else []
        return [(b"XPENDING", key, group, draw(bounds), draw(bounds),
                 b"%d" % draw(st.integers(0, 5)), *who)]
    if kind == "claim":
        options: list[object] = []
        for opt in draw(st.lists(st.sampled_from(["JUSTID", "FORCE", "RETRYCOUNT", "IDLE"]),
                                 max_size=2, unique=True)):
            options.append(opt.encode())
            if opt == "RETRYCOUNT":
                options.append(b"%d" % draw(st.integers(0, 5)))
            elif opt == "IDLE":
                options.append(b"%d" % draw(st.integers(0, 50)))
        claimed = draw(st.lists(ids, min_size=1, max_size=3))
        return [create, (b"XCLAIM", key, group, consumer, b"0", *claimed, *options)]
    if kind == "autoclaim":
        count = [b"COUNT", b"%d" % draw(st.integers(1, 4))] if draw(st.booleans()) else []
        justid = [b"JUSTID"] if draw(st.booleans()) else []
        return [create, (b"XAUTOCLAIM", key, group, consumer, b"0", draw(bounds), *count,
                         *justid)]
    return [(b"XINFO", b"GROUPS", key)]


@st.composite
def xadd_batch(draw: st.DrawFn) -> list[tuple[object, ...]]:
    return [cmd for _ in range(draw(st.integers(1, 12))) for cmd in draw(xadd())]


commands = st.lists(st.one_of(xadd_batch(), xadd_batch(), xtrim(), reads(), reads(),
                              group_ops(), group_ops()), min_size=5, max_size=40)

# Every sequence ends by looking at everything, so no difference goes unseen.
FINALE: list[tuple[object, ...]] = [
    cmd
    for key in KEYS
    for cmd in [(b"XINFO", b"STREAM", key.encode()), (b"XRANGE", key.encode(), b"-", b"+"),
                (b"XINFO", b"GROUPS", key.encode())]
    + [(b"XPENDING", key.encode(), g.encode(), b"-", b"+", b"100") for g in GROUPS]
]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sequence=commands, node_entries=st.sampled_from([2, 5, 100]),
       node_bytes=st.sampled_from([90, 250, 4096]))
def test_random_stream_sequences_match_redis(pair: Pair, sequence: list[list[tuple[object, ...]]],
                                             node_entries: int, node_bytes: int) -> None:
    flat = materialize([cmd for group in sequence for cmd in group] + FINALE)
    for conn in (pair.ref, pair.ours):
        conn.call("FLUSHALL")
        conn.call("CONFIG", "SET", "stream-node-max-entries", node_entries)
        conn.call("CONFIG", "SET", "stream-node-max-bytes", node_bytes)
    try:
        expected = pair.ref.pipeline(flat)
        got = pair.ours.pipeline(flat)
        for cmd, want, have in zip(flat, expected, got, strict=True):
            shown = b" ".join(cmd)[:200]
            assert mask(have) == mask(want), f"{shown!r}\n redis:    {want!r}\n resplite: {have!r}"
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "stream-node-max-entries", "100")
            conn.call("CONFIG", "SET", "stream-node-max-bytes", "4096")
