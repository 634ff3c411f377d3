"""A stream's snapshot fast paths give exactly the general path's bytes.

Three fast paths are checked against their references, for random streams changed by
XADD (fields as the master entry's or not, values that read as integers or not, short and
long, id gaps small and past 32 bits), XDEL, exact and approximate trimming, consumer
groups, and loading from the payload itself:

* :meth:`StreamNode.listpack` (in C where built) and :meth:`StreamNode.listpack_py` against
  :func:`rdb_values.node_listpack_general`, node by node;
* a DUMP (and MIGRATE's payload) that copies kept compressed node forms (and joins their
  kept CRCs) against one of a copy that keeps nothing, after every change;
* the stream's memory figure for the kept forms against a recount of them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.algorithms.crc64 import (
    _multiply,
    crc64,
    crc64_join,
    crc64_join_py,
    shift_for,
    shift_for_py,
)
from resplite.formats import rdb_file
from resplite.formats import rdb_values as rv
from resplite.formats.rdb_format import RdbError
from resplite.store.consumer_group import Consumer
from resplite.store.stream import RefPolicy, Stream, TrimStrategy, packed_size
from resplite.store.stream_ids import make_id

_values = st.one_of(
    st.sampled_from([b"v1", b"hello", b"", b"0", b"-0", b"007", b"-", b"12345678",
                     b"-42", b"9" * 19, b"x" * 70, b"y" * 5000, b"1" * 18, b"12ab"]),
    st.binary(max_size=12),
    st.integers(-(1 << 63), (1 << 63) - 1).map(lambda v: str(v).encode()),
)
_fields = st.sampled_from([(b"a", b"b"), (b"a", b"b"), (b"a", b"b"), (b"a",), (b"b", b"a"),
                           (b"a", b"b", b"c")])
_gaps = st.one_of(
    st.tuples(st.just(0), st.integers(1, 3)),
    st.tuples(st.integers(1, 200), st.integers(0, 300)),
    st.tuples(st.sampled_from([1 << 20, 1 << 33]), st.sampled_from([0, 1 << 40])),
)
_add = st.tuples(st.just("add"), _gaps, _fields, st.lists(_values, min_size=3, max_size=3))
_ops = st.one_of(
    _add, _add, _add, _add, _add, _add,
    st.tuples(st.just("del"), st.integers(0, 10_000)),
    st.tuples(st.just("trim"), st.booleans(), st.integers(0, 40), st.booleans()),
    st.tuples(st.just("group"), st.integers(0, 10_000)),
    st.tuples(st.just("dump")),
)


def _ids(stream: Stream) -> list[int]:
    return [sid for _, _, sid in stream.iter_forward(0)]


def _check(stream: Stream) -> None:
    for node in stream.nodes:
        # The C encoder (where built) and the Python one both give the reference's bytes.
        assert node.listpack() == node.listpack_py() == rv.node_listpack_general(node)
    assert stream.nodes == [] or stream.nodes[-1].packed is None
    assert stream.packed_bytes == sum(packed_size(n) for n in stream.nodes if n.packed is not None)
    assert stream.nbytes == sum(n.memory() for n in stream.nodes[:-1])
    for compress in (True, False):
        reference = rv.dump_payload(stream.copy(), compress)
        assert rv.dump_payload(stream, compress, True) == reference  # builds the kept forms
        assert rv.dump_payload(stream, compress, True) == reference  # copies them
        assert rv.payload_valid(reference)
        # MIGRATE's payload (RDB 10's stream form where it fits) writes the same nodes.
        assert rv.portable_payload(stream, compress) == rv.portable_payload(stream.copy(),
                                                                           compress)
    for node in stream.nodes:
        if node.packed and node.packed_shift:
            assert crc64(0, node.packed) == node.packed_crc
            assert shift_for(len(node.packed)) == node.packed_shift


@settings(max_examples=40, deadline=None)
@given(st.lists(_add, min_size=5, max_size=60), st.lists(_ops, max_size=40),
       st.integers(2, 12), st.sampled_from([0, 200]))
def test_kept_and_fast_forms_equal_the_general_path(adds: list, ops: list, max_entries: int,
                                                   max_bytes: int) -> None:
    stream = Stream()
    ms, seq = 1_700_000_000_000, 0
    for op in [*adds, ("dump",), *ops]:
        if op[0] == "add":
            _, (dms, dseq), fields, values = op
            ms, seq = (ms + dms, dseq) if dms else (ms, seq + dseq)
            argv = [b"XADD", b"k", b"*"]
            for name, value in zip(fields, values, strict=False):
                argv += [name, value]
            stream.append(make_id(ms, seq), argv, 3, max_entries, max_bytes)
        elif op[0] == "del":
            ids = _ids(stream)
            if ids:
                stream.delete(ids[op[1] % len(ids)])
        elif op[0] == "trim":
            _, by_len, amount, approx = op
            if by_len:
                stream.trim(TrimStrategy.MAXLEN, stream.length - amount % 4, approx)
            else:
                ids = _ids(stream)
                if ids:
                    stream.trim(TrimStrategy.MINID, ids[amount % len(ids)], approx,
                                policy=RefPolicy.KEEPREF)
        elif op[0] == "group":
            ids = _ids(stream)
            group = stream.groups.get(b"g")
            if group is None:
                group = stream.create_group(b"g", 0, 0)
                assert group is not None
            if ids:
                sid = ids[op[1] % len(ids)]
                consumer = group.consumers.setdefault(b"c", Consumer(b"c", 5))
                if sid not in group.pel:
                    group.deliver(sid, consumer, 7)
        else:
            _check(stream)
    _check(stream)
    # Loaded back (as RESTORE or a start-up load), the stream writes the same bytes again,
    # and a DUMP that keeps forms and one that copies them agree too.
    payload = rv.dump_payload(stream, True, True)
    if stream.nodes:
        loaded = rv.parse_payload(payload, b"k")
        assert rv.dump_payload(loaded, True, True) == payload
        assert rv.dump_payload(loaded, True, True) == payload
        _check(loaded)


def test_a_snapshot_joins_kept_checksums_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose streams' kept forms are copied has the checksum of its bytes, also when
    it is handed on in several chunks (each checksummed as it goes)."""
    monkeypatch.setattr(rdb_file, "_CHUNK", 4096)
    streams = []
    for k in range(3):
        stream = Stream()
        for i in range(3000):
            stream.append(make_id(i + 1, k), [b"f", b"value-%d" % (i % 7), b"n", b"%d" % i],
                          0, 100, 4096)
        streams.append(stream)

    def snapshot() -> bytes:
        records = [(b"s%d" % k, s, None, None, None) for k, s in enumerate(streams)]
        return b"".join(rdb_file.write_snapshot(
            [rdb_file.DbSnapshot(0, len(records), 0, records)], [], keep=True))

    first = snapshot()
    assert all(s.packed_bytes for s in streams)
    second = snapshot()
    assert second == first
    assert int.from_bytes(first[-8:], "little") == crc64(0, first[:-8])
    assert int.from_bytes(second[-8:], "little") == crc64(0, second[:-8])


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=300))
def test_joined_checksum_equals_the_checksum_of_the_joined_bytes(a: bytes, b: bytes) -> None:
    # anycrc's combine where installed, and the pure-Python join with its own factor.
    assert crc64_join(crc64(0, a), crc64(0, b), shift_for(len(b))) == crc64(0, a + b)
    assert crc64_join_py(crc64(0, a), crc64(0, b), shift_for_py(len(b))) == crc64(0, a + b)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, (1 << 64) - 1), st.integers(0, (1 << 64) - 1))
def test_four_bits_at_a_time_multiplies_as_bit_by_bit(a: int, b: int) -> None:
    assert crc64_join_py(a, 0, b) == _multiply(b, a)


def test_a_loaded_file_keeps_its_nodes_forms_with_their_checksums() -> None:
    """Loading a file keeps each full stream node's bytes and checksum (computed as part of
    the file's), so the file written again from the loaded data is the same file, and a bad
    checksum is still found."""
    stream = Stream()
    for i in range(2000):
        stream.append(make_id(i + 1, 0), [b"f", b"value-%d" % (i % 7), b"n", b"%d" % i],
                      0, 100, 4096)
    records = [(b"s", stream, None, None, None), (b"t", b"plain", None, None, None)]
    data = b"".join(rdb_file.write_snapshot([rdb_file.DbSnapshot(0, 2, 0, records)], []))
    loaded: dict[bytes, object] = {}

    def sink(db: int, key: bytes, value: object, *_: object) -> bool:
        loaded[key] = value
        return True

    rdb_file.read_snapshot(data, sink, databases=16)
    again = loaded[b"s"]
    assert isinstance(again, Stream) and again.packed_bytes
    for node in again.nodes[:-1]:
        assert node.packed and node.packed_crc == crc64(0, node.packed)
        assert node.packed_shift == shift_for(len(node.packed))
    assert again.nodes[-1].packed is None
    records = [(b"s", again, None, None, None), (b"t", b"plain", None, None, None)]
    assert b"".join(rdb_file.write_snapshot([rdb_file.DbSnapshot(0, 2, 0, records)], [])) == data
    bad = data[:-8] + bytes(8 * [1])
    with pytest.raises(RdbError, match="wrong RDB checksum"):
        rdb_file.read_snapshot(bad, sink, databases=16)
