"""Stream.range_pieces (XRANGE's large replies, made piece by piece) against the general path.

The pieces joined must be byte for byte what :meth:`Stream.resp_forward` appends (which is
itself checked against the entry-by-entry encoder in test_stream_store.py), with the same
count, over ranges cut anywhere, with tombstones, entries with their own fields and long
values; and they must be the range as it was when the reader was made, whatever XDEL, XADD
and XTRIM do while it is being read.
"""

from __future__ import annotations

import random

import pytest

from resplite.store import stream as stream_module
from resplite.store.stream import RefPolicy, Stream, TrimStrategy
from resplite.store.stream_ids import MAX_ID, make_id


def add(stream: Stream, ms: int, *pairs: bytes, seq: int = 0) -> int:
    sid = make_id(ms, seq)
    stream.append(sid, [b"XADD", b"key", b"id", *pairs], 3, 100, 4096)
    return sid


def general(stream: Stream, start: int, end: int, count: int) -> tuple[int, bytes]:
    out: list[bytes] = []
    n = stream.resp_forward(start, end, count, out)
    return n, b"".join(out)


def pieces(stream: Stream, start: int, end: int, count: int) -> tuple[int, bytes]:
    total, reader = stream.range_pieces(start, end, count)
    return total, b"".join(reader)


def mixed_stream(rng: random.Random, n: int) -> tuple[Stream, list[int]]:
    s = Stream()
    ids: list[int] = []
    ms = 0
    for _ in range(n):
        ms += rng.choice((0, 1, 1, 2, 1000))
        seq = rng.randrange(3) if ids and ms == ids[-1] >> 64 else 0
        sid = make_id(ms, seq)
        if ids and sid <= ids[-1]:
            sid = ids[-1] + 1
        shape = rng.random()
        if shape < 0.7:
            pairs: tuple[bytes, ...] = (b"f1", b"%08d" % rng.randrange(10**8),
                                        b"f2", b"v%d" % rng.randrange(1000))
        elif shape < 0.8:
            pairs = (b"f1", b"x" * rng.choice((127, 128, 300, 5000)), b"f2", b"%")
        elif shape < 0.9:
            pairs = (b"other", b"1")
        else:
            pairs = (b"f1", b"a", b"f2", b"b", b"f3", b"c" * rng.randrange(200))
        s.append(sid, [b"XADD", b"k", b"id", *pairs], 3, 100, 4096)
        ids.append(sid)
    return s, ids


@pytest.mark.parametrize("seed", range(6))
def test_pieces_agree_with_the_general_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Small pieces, so that a range is cut into many and every node edge is crossed.
    monkeypatch.setattr(stream_module, "PIECE_BYTES", 512)
    rng = random.Random(seed)
    s, ids = mixed_stream(rng, 1500)
    for sid in rng.sample(ids, 300):
        s.delete(sid)
    if seed % 2:
        s.trim(TrimStrategy.MAXLEN, 1000)
    for _ in range(60):
        a, b = sorted(rng.sample(ids, 2))
        start = rng.choice((0, a, a + 1))
        end = rng.choice((MAX_ID, b, b - 1))
        count = rng.choice((0, 0, 1, 7, 100, 5000))
        assert pieces(s, start, end, count) == general(s, start, end, count)


def test_an_empty_range_has_no_pieces() -> None:
    s = Stream()
    for i in range(1, 300):
        add(s, i, b"f", b"v")
    assert pieces(s, make_id(1000, 0), MAX_ID, 0) == (0, b"")
    assert pieces(s, make_id(5, 1), make_id(5, 2), 0) == (0, b"")


@pytest.mark.parametrize("change", ["xdel", "xdel-node", "trim", "trim-approx", "xadd",
                                    "delref"])
def test_a_reader_gives_the_range_as_it_was(change: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_module, "PIECE_BYTES", 256)
    s = Stream()
    ids = [add(s, i, b"f1", b"%08d" % i, b"f2", b"v") for i in range(1, 2001)]
    expected = general(s, 0, MAX_ID, 0)
    total, reader = s.range_pieces(0, MAX_ID, 0)
    got = [next(reader), next(reader)]  # some sent already
    if change == "xdel":
        for sid in ids[::7]:
            s.delete(sid)
    elif change == "xdel-node":
        for sid in ids[-150:]:  # whole nodes disappear
            s.delete(sid)
    elif change == "trim":
        s.trim(TrimStrategy.MAXLEN, 10)
    elif change == "trim-approx":
        s.trim(TrimStrategy.MAXLEN, 10, approx=True)
    elif change == "delref":
        s.trim(TrimStrategy.MINID, make_id(1500, 0), policy=RefPolicy.DELREF)
    else:
        for i in range(2001, 2500):
            add(s, i, b"f1", b"new", b"f2", b"v")
    got.extend(reader)
    assert (total, b"".join(got)) == expected
    # And the stream did change, for whoever reads it next.
    assert general(s, 0, MAX_ID, 0) != expected


def test_a_finished_reader_is_forgotten() -> None:
    s = Stream()
    for i in range(1, 500):
        add(s, i, b"f", b"v")
    total, reader = s.range_pieces(0, MAX_ID, 0)
    assert total == 499 and s.readers is not None and len(s.readers) == 1
    b"".join(reader)
    del reader
    assert not s.readers
    s.delete(make_id(3, 0))  # nothing to settle


# -- reverse ranges (XREVRANGE) ---------------------------------------------------------------


def general_rev(stream: Stream, start: int, end: int, count: int) -> tuple[int, bytes]:
    out: list[bytes] = []
    n = 0
    if start <= end:
        for node, i, sid in stream.iter_backward(end, start):
            node.entry_resp(i, sid, out)
            n += 1
            if n == count:
                break
    return n, b"".join(out)


def pieces_rev(stream: Stream, start: int, end: int, count: int) -> tuple[int, bytes]:
    total, reader = stream.range_pieces_rev(end, start, count)
    return total, b"".join(reader)


@pytest.mark.parametrize("seed", range(6))
def test_reverse_pieces_agree_with_the_general_path(seed: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_module, "PIECE_BYTES", 512)
    rng = random.Random(seed)
    s, ids = mixed_stream(rng, 1500)
    for sid in rng.sample(ids, 300):
        s.delete(sid)
    if seed % 2:
        s.trim(TrimStrategy.MAXLEN, 1000)
    for _ in range(60):
        a, b = sorted(rng.sample(ids, 2))
        start = rng.choice((0, a, a + 1))
        end = rng.choice((MAX_ID, b, b - 1))
        count = rng.choice((0, 0, 1, 7, 100, 5000))
        assert pieces_rev(s, start, end, count) == general_rev(s, start, end, count)
    assert pieces_rev(s, 0, 0, 0) == (0, b"")
    assert pieces_rev(Stream(), 0, MAX_ID, 0) == (0, b"")


@pytest.mark.parametrize("change", ["xdel", "xdel-node", "trim", "trim-approx", "xadd",
                                    "delref"])
def test_a_reverse_reader_gives_the_range_as_it_was(change: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_module, "PIECE_BYTES", 256)
    s = Stream()
    ids = [add(s, i, b"f1", b"%08d" % i, b"f2", b"v") for i in range(1, 2001)]
    expected = general_rev(s, 0, MAX_ID, 0)
    total, reader = s.range_pieces_rev(MAX_ID, 0, 0)
    got = [next(reader), next(reader)]  # the newest entries sent already
    if change == "xdel":
        for sid in ids[::7]:
            s.delete(sid)
    elif change == "xdel-node":
        for sid in ids[:150]:  # whole nodes disappear
            s.delete(sid)
    elif change == "trim":
        s.trim(TrimStrategy.MAXLEN, 1950)
    elif change == "trim-approx":
        s.trim(TrimStrategy.MAXLEN, 10, approx=True)
    elif change == "delref":
        s.trim(TrimStrategy.MINID, make_id(1500, 0), policy=RefPolicy.DELREF)
    else:
        for i in range(2001, 2500):  # the last node grows past the reader's first entry
            add(s, i, b"f1", b"new", b"f2", b"v")
    got.extend(reader)
    assert (total, b"".join(got)) == expected
    assert general_rev(s, 0, MAX_ID, 0) != expected


def test_deliver_new_does_what_read_new_resp_does() -> None:
    rng = random.Random(7)
    twins = []
    for _ in range(2):
        s, ids = mixed_stream(random.Random(3), 800)
        for sid in random.Random(4).sample(ids, 100):
            s.delete(sid)
        group = s.create_group(b"g", 0, 0)
        assert group is not None
        twins.append((s, group, group.get_or_create_consumer(b"c", 1)))
    (a, ga, ca), (b, gb, cb) = twins
    now = 10
    while True:
        count = rng.choice((0, 1, 50, 300))
        start = ga.last_id + 1
        n = a.read_new_resp(start, count, ga, ca, now, [])
        total, _ = b.range_pieces(start, MAX_ID, count)
        assert total == n
        b.deliver_new(start, total, gb, cb, now)
        assert (ga.last_id, ga.entries_read, sorted(ga.pel), sorted(ca.pel), ca.active_time) \
            == (gb.last_id, gb.entries_read, sorted(gb.pel), sorted(cb.pel), cb.active_time)
        now += 1
        if not n:
            break
