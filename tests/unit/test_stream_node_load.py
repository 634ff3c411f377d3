"""A stream node's load paths (from_same_fields' column by column common case, from_blob's
same case read in C straight from the listpack, and from_listpack_general's entry by entry
one) build the same node from a listpack, and the fast ones never accept what the general
one refuses."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.store import listpack
from resplite.store.stream_ids import make_id
from resplite.store.stream_node import StreamNode

_values = st.one_of(
    st.binary(max_size=20),
    st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1).map(lambda v: str(v).encode()),
    st.sampled_from([b"", b"0", b"-0", b"007", b"x" * 127, b"x" * 128, b"9" * 20]),
)
_gaps = st.one_of(
    st.tuples(st.just(0), st.integers(1, 300)),
    st.tuples(st.integers(1, 300), st.integers(0, 5000)),
    st.tuples(st.sampled_from([1 << 20, 1 << 33]), st.sampled_from([0, 1 << 40])),
)
_names = st.sampled_from([b"f", b"g", b"12", b"-5"])
# Changes to one element of a listpack's items: a wrong counter, flag, id or value kind.
_mutations = st.tuples(st.integers(0, 10_000), st.sampled_from(
    [0, 1, 2, 3, 4, 5, 7, 127, -1, 1 << 40, b"", b"x", b"2"]))


def _state(node: StreamNode) -> tuple[Any, ...]:
    return (node.master, node.fields, node.ms.typecode, list(node.ms), node.seq.typecode,
            list(node.seq), list(node.offs), bytes(node.flags), bytes(node.data), node.count,
            node.deleted, node.lp_bytes)


def _general(master: int, items: list[Any], size: int) -> tuple[Any, ...] | None:
    try:
        return _state(StreamNode.from_listpack_general(master, items, size))
    except (ValueError, IndexError, TypeError, OverflowError):
        return None


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3), st.lists(
    st.tuples(_gaps, st.lists(_values, min_size=1, max_size=3), st.booleans(), _names),
    min_size=1, max_size=60), st.integers(0, 2**64 - 1), st.lists(_mutations, max_size=2))
def test_both_load_paths_build_the_same_node(nfields: int, entries: list[Any], seq0: int,
                                             mutations: list[Any]) -> None:
    ms, seq = 1_700_000_000_000, seq0 % 1000
    master = make_id(ms, seq)
    names = [b"a%d" % k for k in range(nfields)]
    node = StreamNode(master, tuple(names))
    deleting = []
    for i, ((dms, dseq), values, delete, other) in enumerate(entries):
        if i:
            if dms:
                ms, seq = ms + dms, dseq
            else:
                seq += dseq
        sid = make_id(ms, seq)
        pairs: list[bytes] = []
        if other == b"f":  # the master fields, each given a value
            for k in range(nfields):
                pairs += [names[k], values[k % len(values)]]
        else:  # fields of its own
            for k, value in enumerate(values):
                pairs += [other + b"%d" % k, value]
        argv = [b"XADD", b"k", b"*", *pairs]
        node.append(sid, argv, 3, node.same_fields(argv, 3))
        if delete:
            deleting.append(len(node) - 1)
    for i in deleting[:-1] if len(deleting) == len(node) else deleting:
        node.mark_deleted(i)
    blob = node.listpack()
    items = listpack.decode(blob)
    expected = _state(node)
    assert _general(master, items, len(blob)) == expected
    fast = StreamNode.from_same_fields(master, items, len(blob))
    assert fast is None or _state(fast) == expected
    # The same node read straight from the listpack in C, where from_same_fields takes it.
    blob_node = StreamNode.from_blob(master, blob)
    assert (blob_node is None) == (fast is None or listpack.c_same_fields_node is None)
    assert blob_node is None or _state(blob_node) == expected
    # Every entry with the master fields and short values: the fast path takes it.
    if all(node.flags[i] & 2 for i in range(len(node))) and \
            max(len(v) for i in range(len(node)) for v in node.fields_at(i)[1::2]) < 0x80:
        assert fast is not None
    for at, element in mutations:
        items[at % len(items)] = element
    wrong = _general(master, items, len(blob))
    fast = StreamNode.from_same_fields(master, items, len(blob))
    assert fast is None or _state(fast) == wrong
    # The changed elements as a listpack: the C reader takes what from_same_fields takes,
    # building the same node, and nothing the general path refuses.
    changed = listpack.encode(items)
    decoded = listpack.decode(changed)
    fast = StreamNode.from_same_fields(master, decoded, len(changed))
    blob_node = StreamNode.from_blob(master, changed)
    assert (blob_node is None) == (fast is None or listpack.c_same_fields_node is None)
    if blob_node is not None:
        assert _state(blob_node) == _general(master, decoded, len(changed)) is not None
