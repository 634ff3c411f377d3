"""Random array command sequences sent to resplite, checked against a model (Redis 8.8).

The 8.6.3 reference has no arrays, so the replies are compared with a plain Python model of
Redis's semantics (a dict of index -> value and the insert cursor), written from
``t_array.c``: counts of new and removed slots, the cursor's rules (ARINSERT, ARSEEK,
ARNEXT), the emptied key going away, ranges in either direction. Indexes cluster around
slice edges (4096), the super-directory's first block (8,388,608) and the top of the range,
so the layout changes (sparse and dense slices, promotions, demotions, directory growth)
happen along the way; the store checks its own invariants in the unit tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.newer import Conn

if TYPE_CHECKING:
    from resplite.testing.embedded import ServerHandle

MAX = 2**64 - 2
NONE = 2**64 - 1
SLICE = 4096
SUPER = 2048 * SLICE

indexes = st.one_of(
    st.integers(0, 40), st.integers(SLICE - 20, SLICE + 20), st.integers(0, 3 * SLICE),
    st.integers(SUPER - 10, SUPER + 10), st.integers(MAX - 5, MAX), st.integers(0, MAX))
values = st.sampled_from([b"a", b"bb", b"1", b"-7", b"1.5", b"2.0", b"x" * 12, b"", b"hit"])


@st.composite
def command(draw: st.DrawFn) -> tuple[Any, ...]:
    kind = draw(st.sampled_from(["set", "set", "run", "mset", "del", "delrange", "insert",
                                 "seek", "get", "scan", "len", "next", "used", "grep"]))
    if kind == "set":
        return ("set", draw(indexes), draw(values))
    if kind == "run":
        return ("run", draw(indexes), draw(st.lists(values, min_size=2, max_size=30)))
    if kind == "mset":
        return ("mset", draw(st.lists(st.tuples(indexes, values), min_size=1, max_size=6)))
    if kind in ("del", "get", "seek"):
        return (kind, draw(st.lists(indexes, min_size=1, max_size=4)) if kind == "del"
                else draw(indexes))
    if kind in ("delrange", "scan", "used", "grep"):
        return (kind, draw(indexes), draw(indexes))
    if kind == "insert":
        return ("insert", draw(st.lists(values, min_size=1, max_size=20)))
    return (kind,)


class Model:
    def __init__(self) -> None:
        self.data: dict[int, bytes] = {}
        self.cursor = NONE

    def span(self, a: int, b: int) -> list[int]:
        lo, hi = min(a, b), max(a, b)
        return sorted((i for i in self.data if lo <= i <= hi), reverse=a > b)

    def emptied(self) -> None:
        if not self.data:
            self.cursor = NONE  # the key is gone, and with it the cursor


def _int(n: int) -> bytes:
    return b":%d\r\n" % n if n < 2**63 else b"(%d\r\n" % n


def _bulk(v: bytes | None) -> bytes:
    return b"_\r\n" if v is None else b"$%d\r\n%s\r\n" % (len(v), v)


def _apply(c: Conn, m: Model, cmd: tuple[Any, ...]) -> None:
    kind = cmd[0]
    if kind == "set":
        _, index, value = cmd
        assert c.call("ARSET", "a", index, value) == _int(int(index not in m.data))
        m.data[index] = value
    elif kind == "run":
        _, start, run = cmd
        if start + len(run) - 1 > MAX:
            assert c.call("ARSET", "a", start, *run) == b"-ERR array index overflow\r\n"
            return
        new = sum(1 for i in range(len(run)) if start + i not in m.data)
        assert c.call("ARSET", "a", start, *run) == _int(new)
        m.data.update((start + i, v) for i, v in enumerate(run))
    elif kind == "mset":
        pairs = cmd[1]
        before = len(m.data)
        for index, value in pairs:
            m.data[index] = value
        args = [x for pair in pairs for x in pair]
        assert c.call("ARMSET", "a", *args) == _int(len(m.data) - before)
    elif kind == "del":
        gone = {i for i in cmd[1] if i in m.data}
        assert c.call("ARDEL", "a", *cmd[1]) == _int(len(gone))
        for i in gone:
            del m.data[i]
        m.emptied()
    elif kind == "delrange":
        span = m.span(cmd[1], cmd[2])
        assert c.call("ARDELRANGE", "a", cmd[1], cmd[2]) == _int(len(span))
        for i in span:
            del m.data[i]
        m.emptied()
    elif kind == "insert":
        run = cmd[1]
        if m.cursor == NONE:
            start = 0
        elif m.cursor >= MAX:
            start = NONE
        else:
            start = m.cursor + 1
        if start == NONE or start + len(run) - 1 > MAX:
            assert c.call("ARINSERT", "a", *run) == b"-ERR insert index overflow\r\n"
            return
        assert c.call("ARINSERT", "a", *run) == _int(start + len(run) - 1)
        m.data.update((start + i, v) for i, v in enumerate(run))
        m.cursor = start + len(run) - 1
    elif kind == "seek":
        exists = bool(m.data)
        assert c.call("ARSEEK", "a", cmd[1]) == _int(int(exists))
        if exists:
            m.cursor = NONE if cmd[1] == 0 else cmd[1] - 1
    elif kind == "get":
        assert c.call("ARGET", "a", cmd[1]) == _bulk(m.data.get(cmd[1]))
    elif kind == "scan":
        found = m.span(cmd[1], cmd[2])[:50]
        reply = c.call("ARSCAN", "a", cmd[1], cmd[2], "LIMIT", 50)
        assert reply == b"*%d\r\n" % len(found) + b"".join(
            b"*2\r\n" + _int(i) + _bulk(m.data[i]) for i in found)
    elif kind == "len":
        assert c.call("ARLEN", "a") == _int(max(m.data) + 1 if m.data else 0)
        assert c.call("ARCOUNT", "a") == _int(len(m.data))
    elif kind == "next":
        if not m.data or m.cursor == NONE:
            expected = _int(0)
        elif m.cursor == MAX:
            expected = b"_\r\n"
        else:
            expected = _int(m.cursor + 1)
        assert c.call("ARNEXT", "a") == expected
    elif kind == "used":
        assert c.call("AROP", "a", cmd[1], cmd[2], "USED") == _int(len(m.span(cmd[1], cmd[2])))
    else:
        hits = [i for i in m.span(cmd[1], cmd[2]) if b"hit" in m.data[i]][:20]
        reply = c.call("ARGREP", "a", cmd[1], cmd[2], "MATCH", "hit", "LIMIT", 20)
        assert reply == b"*%d\r\n" % len(hits) + b"".join(_int(i) for i in hits)


@pytest.mark.redis_version("8.8")
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(command(), min_size=1, max_size=40))
def test_random_sequences_match_the_model(server: ServerHandle,
                                          commands: list[tuple[Any, ...]]) -> None:
    c = Conn(server.host, server.port, resp=3)
    try:
        c.call("DEL", "a")
        m = Model()
        for cmd in commands:
            _apply(c, m, cmd)
            assert c.call("EXISTS", "a") == _int(int(bool(m.data)))
    finally:
        c.close()
