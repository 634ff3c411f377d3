"""The compiled snapshot codecs against the Python code they replace.

resplite.formats._rdb: write_string, Reader.string and the run of string keys a load reads
in C (rdb_format.scan_strings); resplite.store._listpack: listpack.decode (stream nodes'
listpacks are checked in test_stream_snapshot_property.py). Each must give exactly the
Python code's bytes, values, offsets and errors; the Python paths stay the reference (and
the code without a C compiler).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.formats import rdb_file
from resplite.formats import rdb_format as f
from resplite.store import listpack

needs_c = pytest.mark.skipif(f.scan_strings is None, reason="the C extension is not built")

# Strings that hit each form: integers in and out of 32 bits and the canonical rule,
# short and long, compressible and not.
_INTEGERS = st.integers(-(1 << 40), 1 << 40).map(lambda n: b"%d" % n)
_NEAR_INTEGERS = st.sampled_from([b"0", b"-0", b"00", b"01", b"-", b"+1", b"1 ", b" 1",
                                  b"2147483647", b"2147483648", b"-2147483648",
                                  b"-2147483649", b"12345678901", b"-1234567890", b"9" * 12,
                                  b"-128", b"-129", b"127", b"128", b"32767", b"-32769", b""])
_STRINGS = st.one_of(
    _INTEGERS, _NEAR_INTEGERS, st.binary(max_size=80),
    st.builds(lambda unit, times: unit * times, st.binary(min_size=1, max_size=12),
              st.integers(1, 3000)),
)


def test_the_extensions_are_built() -> None:
    """setup.py builds them wherever a C compiler is there (development and CI): without
    them a snapshot is several times slower to write and read."""
    assert f.scan_strings is not None and f.write_string is not f.write_string_py
    assert listpack._c_decode is not None and listpack.c_stream_node is not None


_ELEMENTS = st.lists(st.one_of(
    st.integers(-(1 << 63), (1 << 63) - 1),
    st.sampled_from([0, 127, 128, -1, 4095, 4096, -4096, -4097, 32767, 32768, -32769,
                     8388607, 8388608, -8388609, 2147483647, 2147483648]),
    _STRINGS,
), max_size=30)


@pytest.mark.skipif(listpack._c_decode is None, reason="the C extension is not built")
@settings(max_examples=400, deadline=None)
@given(_ELEMENTS, st.booleans(), st.integers(0, 4), st.binary(max_size=3), st.integers(0, 500))
def test_listpack_decode_agrees_with_the_python_decoder(
        items: list[int | bytes], as_bytes: bool, damage: int, junk: bytes, at: int) -> None:
    """Whole, cut, lengthened or with bytes changed: the same elements, or the same
    ListpackError, from the C decoder and the Python one."""
    blob = bytearray(listpack.encode(items))
    if damage == 1:
        del blob[at % len(blob):]
    elif damage == 2 and junk:
        where = at % len(blob)
        blob[where:where + len(junk)] = junk
    elif damage == 3:
        blob[4:6] = b"\xff\xff"  # element count unknown: counted instead
    elif damage == 4:
        blob[-1:-1] = junk
        blob[0:4] = len(blob).to_bytes(4, "little")
    data = bytes(blob)
    try:
        expected: Any = listpack.decode_py(data, as_bytes)
    except listpack.ListpackError as exc:
        expected = str(exc)
    try:
        got: Any = listpack.decode(data, as_bytes)
    except listpack.ListpackError as exc:
        got = str(exc)
    assert got == expected
    if not damage:
        assert len(got) == len(items)
        assert listpack.encode(got) == data  # integers as int, or as their decimal bytes


@needs_c
@settings(max_examples=400, deadline=None)
@given(_STRINGS, st.booleans())
def test_write_string_writes_the_python_bytes(s: bytes, compress: bool) -> None:
    expected = bytearray(b"head")
    f.write_string_py(expected, s, compress)
    for form in (s, bytearray(s), memoryview(s)):
        out = bytearray(b"head")
        f.write_string(out, form, compress)
        assert out == expected
    # And reads back, in C and in Python, to the same value and offset.
    fast, slow = f.Reader(bytes(expected), 4), f.Reader(bytes(expected), 4)
    assert fast.string() == slow.string_py() == s
    assert fast.pos == slow.pos == len(expected)


def _error(call: Any) -> tuple[int, str] | None:
    try:
        call()
    except f.RdbError as exc:
        return exc.offset, exc.reason
    return None


@needs_c
@settings(max_examples=400, deadline=None)
@given(_STRINGS, st.booleans(), st.integers(0, 40), st.binary(max_size=3),
       st.integers(0, 30))
def test_reader_agrees_on_cut_and_damaged_strings(s: bytes, compress: bool, cut: int,
                                                  junk: bytes, at: int) -> None:
    """A string cut short or with bytes changed reads, or fails with the same offset and
    reason, whichever reader reads it."""
    out = bytearray()
    f.write_string_py(out, s, compress)
    damaged = bytearray(out[:max(len(out) - cut, 0)])
    if junk and damaged:
        where = at % len(damaged)
        damaged[where:where + len(junk)] = junk
    data = bytes(damaged)
    fast, slow = f.Reader(data), f.Reader(data)
    fast_value = slow_value = None
    fast_error = _error(lambda: fast.string())
    if fast_error is None:
        fast_value = f.Reader(data).string()
    slow_error = _error(lambda: slow.string_py())
    if slow_error is None:
        slow_value = f.Reader(data).string_py()
    assert fast_error == slow_error
    assert fast_value == slow_value
    assert fast.pos == slow.pos


def _snapshot(records: list[tuple[bytes, Any, int | None]]) -> bytes:
    chunks = rdb_file.write_snapshot(
        [rdb_file.DbSnapshot(0, len(records), sum(r[2] is not None for r in records),
                             [(k, val, exp, None, None) for k, val, exp in records])],
        [(b"redis-ver", b"8.0.0")])
    return b"".join(chunks)


def _load(data: bytes, now_ms: int | None, *, fast: bool,
          monkeypatch: pytest.MonkeyPatch, bulk: bool = False) -> tuple[Any, ...]:
    if not fast:
        monkeypatch.setattr(f, "scan_strings", None)
    loaded: list[tuple[int, bytes, Any, int | None]] = []

    def sink(db: int, key: bytes, value: Any, expire: int | None, *rest: Any) -> bool:
        if any(k == key for _, k, _, _ in loaded):
            return False
        loaded.append((db, key, value, expire))
        return True

    def strings(db: int, keys: list[bytes], values: list[bytes]) -> bool:
        known = {k for _, k, _, _ in loaded}
        if len(set(keys)) != len(keys) or known & set(keys):
            return False  # refused: each key goes to sink, which finds the duplicate
        loaded.extend((db, k, val, None) for k, val in zip(keys, values, strict=True))
        return True

    try:
        report, end = rdb_file.read_snapshot(data, sink, databases=16, now_ms=now_ms,
                                             on_strings=strings if bulk else None)
    except f.RdbError as exc:
        return ("error", exc.offset, exc.reason, loaded)
    finally:
        monkeypatch.undo()
    return (report.keys_loaded, report.keys_expired, end, loaded)


@needs_c
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.binary(min_size=1, max_size=12), _STRINGS,
                          st.one_of(st.none(), st.integers(-(1 << 50), 1 << 50))),
                max_size=40),
       st.integers(0, 1 << 50))
def test_string_keys_load_the_same_in_c_and_in_python(
        records: list[tuple[bytes, bytes, int | None]], now_ms: int) -> None:
    """Keys, values, expiries, expired counts, duplicated keys (with their offset) and the
    end offset are the same whether the run of string keys is read in C or in Python, and
    whether runs without expiry go to a bulk sink (which refuses those with a duplicate)."""
    data = _snapshot(records)
    with pytest.MonkeyPatch.context() as mp:
        fast = _load(data, now_ms, fast=True, monkeypatch=mp)
    with pytest.MonkeyPatch.context() as mp:
        slow = _load(data, now_ms, fast=False, monkeypatch=mp)
    with pytest.MonkeyPatch.context() as mp:
        bulk = _load(data, now_ms, fast=True, monkeypatch=mp, bulk=True)
    assert fast == slow == bulk


@needs_c
def test_string_keys_mixed_with_other_records_and_damage(monkeypatch: pytest.MonkeyPatch) -> None:
    """The C run stops at another value type, an IDLE or FREQ opcode, a string that does not
    read, and the progress mark; the Python reader takes over from exactly there."""
    from resplite.store.hash import Hash

    h = Hash()
    h.fields[b"f"] = b"v"
    h.recount()
    records = [(b"a", b"1", None, None, None), (b"b", b"x" * 100, 10**13, None, None),
               (b"h", h, None, None, None), (b"c", b"y" * 30, None, 5, None),
               (b"d", b"z", None, None, 7), (b"e", b"", 10**13, None, None)]
    records += [(b"k%d" % i, b"v" * (i % 50), None, None, None) for i in range(3000)]
    # Past a megabyte, where the load reports progress (and the C run stops to let it).
    noise = random.Random(1)
    records += [(b"n%d" % i, noise.randbytes(600), None, None, None) for i in range(2000)]
    data = b"".join(rdb_file.write_snapshot(
        [rdb_file.DbSnapshot(0, len(records), 2, records)], []))

    def load() -> tuple[list[tuple[Any, ...]], list[int]]:
        got: list[tuple[Any, ...]] = []
        marks: list[int] = []

        def sink(*record: Any) -> bool:
            got.append(record)
            return True

        rdb_file.read_snapshot(data, sink, databases=16, progress=marks.append)
        return [(a[1], a[2] if isinstance(a[2], bytes) else dict(a[2].fields), *a[3:])
                for a in got], marks

    fast = load()
    monkeypatch.setattr(f, "scan_strings", None)
    slow = load()
    monkeypatch.undo()
    assert fast == slow
    assert len(fast[0]) == len(records) and fast[1]
    # The LZF string's length claim damaged: the same error at the same offset.
    broken = bytearray(data)
    at = data.index(bytes((f.LZF_HEAD,)))  # "x" * 100: one length byte, then 0x40 0x64
    assert broken[at + 2:at + 4] == b"\x40\x64"
    broken[at + 3] = 99
    errors = []
    for c_reader in (True, False):
        if not c_reader:
            monkeypatch.setattr(f, "scan_strings", None)
        with pytest.raises(f.RdbError) as info:
            rdb_file.read_snapshot(bytes(broken), lambda *a: True, databases=16)
        errors.append((info.value.offset, info.value.reason))
        monkeypatch.undo()
    assert errors[0] == errors[1]
    assert "LZF" in errors[0][1]


def _c_paths_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every compiled path of a load off: the pure-Python reader alone."""
    from resplite.store import stream_node

    for name in ("scan_strings", "read_strings", "read_scored", "_c_read_string"):
        monkeypatch.setattr(f, name, None)
    monkeypatch.setattr(listpack, "_c_decode", None)
    monkeypatch.setattr(stream_node, "c_same_fields_node", None)


def _read_any(data: bytes, kind: int) -> Any:
    from resplite.formats import rdb_values as rv

    r = f.Reader(data)
    try:
        value = rv.read_value(r, kind, b"k")
    except f.RdbError as exc:
        return ("error", exc.offset, exc.reason)
    except rv.EmptyValue:
        return ("empty",)
    return (rv.dump_payload(value), r.pos)


_MEMBERS = st.lists(_STRINGS, min_size=1, max_size=40)


@needs_c
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["hash", "set", "zset", "list"]), _MEMBERS,
       st.lists(st.floats(allow_nan=True), min_size=40, max_size=40), st.integers(0, 3),
       st.integers(0, 10_000), st.binary(min_size=1, max_size=3), st.booleans())
def test_values_load_the_same_with_and_without_the_c_paths(
        kind: str, members: list[bytes], scores: list[float], damage: int, at: int,
        junk: bytes, big: bool) -> None:
    """Hashtable hashes, sets and sorted sets (strings read in one call, scores with them),
    and the listpack forms (decoded in C): each value written, then cut or changed, loads
    to the same value or fails with the same offset and reason whichever reader reads it."""
    from resplite.formats import rdb_values as rv
    from resplite.store.hash import Hash
    from resplite.store.list import List
    from resplite.store.set import HASHTABLE, LISTPACK, Set
    from resplite.store.zset import ZSet

    value: Any
    if kind == "hash":
        value = Hash()
        for i, m in enumerate(members):
            value.fields[m] = members[-1 - i]
        value.recount()
        if big:
            value.convert()
    elif kind == "set":
        if big:
            value = Set(HASHTABLE)
            value.ht = set(members)
        else:
            value = Set(LISTPACK)
            value.lp = dict.fromkeys(members)
        value.recount()
    elif kind == "zset":
        entries = {m: s for m, s in zip(members, scores, strict=False) if s == s}
        if not entries:
            return
        value = ZSet.from_entries([(s, m) for m, s in entries.items()], skiplist=big)
    else:
        value = List.built(members, -2)
    out = bytearray()
    rv.write_value(out, value, True)
    rdb_kind = rv.value_type(value)
    blob = bytearray(out)
    if damage == 1:
        del blob[at % len(blob):]
    elif damage >= 2:
        where = at % len(blob)
        blob[where:where + len(junk)] = junk
    data = bytes(blob)
    fast = _read_any(data, rdb_kind)
    with pytest.MonkeyPatch.context() as mp:
        _c_paths_off(mp)
        slow = _read_any(data, rdb_kind)
    assert fast == slow


@needs_c
@pytest.mark.parametrize(("kind", "strings"), [
    (f.TYPE_HASH, [b"a", b"1", b"b", b"2", b"a", b"3"]),
    (f.TYPE_SET, [b"x", b"y", b"x"]),
])
def test_a_duplicate_read_in_one_call_is_reported_where_python_reports_it(
        kind: int, strings: list[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    out = bytearray()
    f.write_len(out, len(strings) // (2 if kind == f.TYPE_HASH else 1))
    for s in strings:
        f.write_string_py(out, s, False)
    fast = _read_any(bytes(out), kind)
    _c_paths_off(monkeypatch)
    assert fast == _read_any(bytes(out), kind)
    assert fast[0] == "error" and "duplicate" in fast[2]


@needs_c
def test_a_nan_score_read_in_one_call_is_reported_where_python_reports_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    out = bytearray()
    f.write_len(out, 2)
    for member, score in ((b"a", 1.0), (b"b", float("nan"))):
        f.write_string_py(out, member, False)
        f.write_binary_double(out, score)
    fast = _read_any(bytes(out), f.TYPE_ZSET_2)
    _c_paths_off(monkeypatch)
    assert fast == _read_any(bytes(out), f.TYPE_ZSET_2)
    assert fast[0] == "error" and "NAN" in fast[2]


@pytest.mark.parametrize("which", ["core", "extras"])
def test_redis_8_files_load_the_same_with_and_without_the_c_paths(
        which: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The RDB files Redis 8.0.6 wrote (tests/fixtures/redis-8.0.6/, the shared fixtures)
    load to the same keys, values (by their DUMP payloads), expiries and report either way."""
    from pathlib import Path

    from resplite.formats import rdb_values as rv

    path = Path(__file__).parent.parent / "fixtures" / "redis-8.0.6" / which / "rdb" / "dump.rdb"
    data = path.read_bytes()

    def load() -> tuple[Any, ...]:
        keys: dict[tuple[int, bytes], tuple[bytes, int | None]] = {}

        def sink(db: int, key: bytes, value: Any, expire: int | None, *rest: Any) -> bool:
            keys[(db, key)] = (rv.dump_payload(value), expire)
            return True

        report, end = rdb_file.read_snapshot(data, sink, databases=16, now_ms=0)
        return keys, report.keys_loaded, report.functions, report.aux, end

    fast = load()
    _c_paths_off(monkeypatch)
    assert fast == load()
    assert fast[1] == len(fast[0]) > 0 and fast[4] == len(data)
