"""A stream node's two add paths (push's inline common case and append's general one) size
entries with one helper and agree byte for byte, whatever the ids and values."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.store.stream_ids import make_id
from resplite.store.stream_node import StreamNode

_values = st.one_of(
    st.binary(max_size=70),
    st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1).map(lambda v: str(v).encode()),
    st.sampled_from([b"", b"0", b"-0", b"007", b"-", b"x" * 200, b"9" * 20]),
)
# Gaps between ids: same millisecond, small steps, and jumps past the 32-bit deltas.
_gaps = st.one_of(
    st.tuples(st.just(0), st.integers(1, 300)),
    st.tuples(st.integers(1, 300), st.integers(0, 5000)),
    st.tuples(st.sampled_from([1 << 20, 1 << 33]), st.sampled_from([0, 1 << 40])),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_gaps, _values), min_size=1, max_size=140))
def test_push_and_append_size_every_entry_alike(entries: list) -> None:
    ms, seq = 1_700_000_000_000, 0
    master = make_id(ms, seq)
    fast = StreamNode(master, (b"f",))
    general = StreamNode(master, (b"f",))
    for (dms, dseq), value in entries:
        if dms:
            ms, seq = ms + dms, dseq
        else:
            seq += dseq
        sid = make_id(ms, seq)
        argv = [b"XADD", b"k", b"*", b"f", value]
        assert fast.push(sid, argv, 3, 0, 0)
        general.append(sid, argv, 3, True)
        assert fast.lp_bytes == general.lp_bytes
    assert bytes(fast.data) == bytes(general.data)
    assert list(fast.ms) == list(general.ms) and list(fast.seq) == list(general.seq)
    assert [fast.fields_at(i) for i in range(len(fast))] == [
        general.fields_at(i) for i in range(len(general))]
