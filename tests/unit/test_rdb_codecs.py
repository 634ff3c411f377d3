"""Byte-level tests of the persistence codecs against what a real Redis 8.0.6 wrote.

The fixtures (tests/fixtures/redis-8.0.6/, see its README) hold DUMP payloads and RDB files
made by Redis itself: each codec must read them and write the same bytes back.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.algorithms import lzf
from resplite.algorithms.crc64 import crc64, crc64_py
from resplite.algorithms.scores import d2string, fpconv_dtoa
from resplite.formats import rdb_file
from resplite.formats import rdb_format as f
from resplite.formats import rdb_values as v
from resplite.store import intset, listpack, ziplist
from resplite.store.list import List, Node
from resplite.store.listpack_size import integer_value

FIXTURES = Path(__file__).parent.parent / "fixtures" / "redis-8.0.6"


def _dumps(which: str) -> dict[str, dict[str, object]]:
    return json.loads((FIXTURES / which / "dumps.json").read_text())


def _payload(which: str, name: str) -> bytes:
    return bytes.fromhex(str(_dumps(which)[name]["dump_hex"]))


# -- CRC-64 ---------------------------------------------------------------------------------


def test_crc64_check_value() -> None:
    assert crc64(0, b"123456789") == 0xE9C6D914C4B8D9CA


def test_crc64_continues_across_chunks() -> None:
    data = os.urandom(1000)
    assert crc64(crc64(0, data[:333]), data[333:]) == crc64(0, data)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.integers(0, (1 << 64) - 1), st.integers(0, 8))
def test_crc64_fast_and_pure_agree(data: bytes, start: int, skip: int) -> None:
    """Whichever code :func:`crc64` uses (anycrc's when installed) gives the pure-Python
    reference's value, from any running value and on any buffer type."""
    expected = crc64_py(start, data[skip:])
    assert crc64(start, data[skip:]) == expected
    assert crc64(start, bytearray(data)[skip:]) == expected
    assert crc64(start, memoryview(data)[skip:]) == expected


def test_crc64_uses_anycrc_when_installed() -> None:
    """The C checksum is there where the dependencies are installed (pyproject.toml)."""
    pytest.importorskip("anycrc")
    from resplite.algorithms import crc64 as module

    assert module._c_crc64 is not None


@pytest.mark.parametrize("which", ["core", "extras"])
def test_crc64_of_every_redis_payload_and_file(which: str) -> None:
    for name, entry in _dumps(which).items():
        payload = bytes.fromhex(str(entry["dump_hex"]))
        assert crc64(0, payload[:-8]).to_bytes(8, "little") == payload[-8:], name
    rdb = (FIXTURES / which / "rdb" / "dump.rdb").read_bytes()
    assert crc64(0, rdb[:-8]).to_bytes(8, "little") == rdb[-8:]


# -- LZF ------------------------------------------------------------------------------------


def test_lzf_compresses_as_redis_does() -> None:
    # str:raw is 200 "r"s; Redis wrote it LZF-compressed after the 0xC3 marker.
    payload = _payload("core", "0:str:raw")
    r = f.Reader(payload, 1)
    assert r.byte() == 0xC3
    clen, ulen = r.length(), r.length()
    assert ulen == 200
    assert lzf.compress(b"r" * 200, 196) == payload[r.pos:r.pos + clen]
    big = _payload("core", "0:str:big")
    r = f.Reader(big, 2)
    clen, ulen = r.length(), r.length()
    assert lzf.compress(b"b" * 70000, 70000 - 4) == big[r.pos:r.pos + clen]


def test_lzf_round_trip_and_incompressible() -> None:
    for data in (b"abcabcabcabc" * 50, bytes(range(256)) * 9, b"x" * 9000 + b"y" * 17):
        packed = lzf.compress(data, len(data) - 4)
        assert packed is not None
        assert lzf.decompress(packed, len(data)) == data
    assert lzf.compress(os.urandom(64), 60) is None


_LZF_ALPHABETS = [b"ab", b"abcdefgh", bytes(range(256)), b"\x00\x01", b"x"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.binary(max_size=2000),
    st.builds(lambda alpha, picks: bytes(alpha[i % len(alpha)] for i in picks),
              st.sampled_from(_LZF_ALPHABETS), st.lists(st.integers(0, 255), max_size=2000)),
    st.builds(lambda unit, times, tail: unit * times + tail,
              st.binary(min_size=1, max_size=40), st.integers(1, 400), st.binary(max_size=20)),
), st.integers(-6, 6))
def test_lzf_compiled_and_pure_compressors_agree(data: bytes, slack: int) -> None:
    """The C compressor (resplite.algorithms._lzf) writes exactly the pure-Python
    compressor's bytes, and gives up at exactly the same output limits; called again on the
    same and on other input (its hash table persists across calls), it still does."""
    fast = lzf._c_compress
    if fast is None:
        pytest.skip("the C extension is not built")
    for out_len in (len(data) - 4, len(data) + slack, 2 * len(data) + 100, slack):
        expected = lzf.compress_py(data, out_len)
        assert fast(data, out_len) == expected
        assert fast(bytearray(data), out_len) == expected
        if expected is not None:
            assert lzf.decompress(expected, len(data)) == data


def test_lzf_compressor_is_built() -> None:
    """setup.py builds the C compressor wherever a C compiler is there (as in development
    and CI); its absence would make every snapshot a thousand times slower to compress."""
    assert lzf._c_compress is not None


def test_lzf_compressor_of_long_and_large_input() -> None:
    """Past 8 KB back references stop reaching; long matches and runs cross the 264-byte
    limit of one reference: the C and Python compressors still agree, and the output
    decodes."""
    pattern = bytes(range(256)) * 40 + b"z" * 3000 + os.urandom(9000) + b"tail" * 700
    for data in (pattern, pattern * 3, b"\x00" * 100_000):
        packed = lzf.compress(data, len(data) - 4)
        assert packed == lzf.compress_py(data, len(data) - 4)
        assert packed is not None and lzf.decompress(packed, len(data)) == data


def test_lzf_rejects_corrupt_input() -> None:
    with pytest.raises(lzf.LzfError):
        lzf.decompress(b"\x05abc", 6)  # literal run past the end of the input
    with pytest.raises(lzf.LzfError):
        lzf.decompress(b"\x00a\x20\x05", 5)  # back reference before the start
    with pytest.raises(lzf.LzfError):
        lzf.decompress(b"\x01ab", 3)  # shorter than announced


_CORRUPT = [(b"\x05abc", 6), (b"\x00a\x20\x05", 5), (b"\x01ab", 3), (b"\x01ab", 1),
            (b"\x00a\xe0", 12), (b"\x00a\x20", 4), (b"", 3), (b"\x00a\x20\x00", 4),
            (b"\x00a\xe0\xff\x00", 2 + 264), (b"\x00a\xe0\xff\x00", 1 << 40)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"bc", b"0123", b"xyz" * 9, bytes(range(40))]),
                max_size=300),
       st.binary(max_size=40), st.integers(-3, 3))
def test_lzf_fast_decoder_agrees_with_the_pure_one(parts: list[bytes], noise: bytes,
                                                   delta: int) -> None:
    """Whichever decoder :func:`lzf.decompress` uses (liblzf's when installed) gives the
    pure decoder's bytes, and refuses what it refuses, wrong lengths included."""
    data = noise + b"".join(parts)
    packed = lzf.compress(data, len(data) + 64) if data else None
    cases = list(_CORRUPT)
    if packed is not None:
        cases += [(packed, len(data) + delta), (packed[:-1], len(data))]
    for blob, out_len in cases:
        try:
            expected: bytes | None = lzf.decompress_py(blob, out_len)
        except lzf.LzfError:
            expected = None
        if expected is None:
            with pytest.raises(lzf.LzfError):
                lzf.decompress(blob, out_len)
        else:
            assert lzf.decompress(blob, out_len) == expected


def test_lzf_uses_liblzf_when_installed() -> None:
    """The fast decoder is there where the dependencies are installed (pyproject.toml)."""
    pytest.importorskip("lzf")
    assert lzf._c_decompress is not None


# -- listpack, intset, ziplist ---------------------------------------------------------------


def test_listpack_of_a_redis_hash() -> None:
    # hash:small: f1=v1, f2=2, f3=-3, a plain listpack (RDB type 16).
    payload = _payload("core", "0:hash:small")
    assert payload[0] == f.TYPE_HASH_LISTPACK
    blob = f.Reader(payload, 1).string()
    assert listpack.decode(blob) == [b"f1", b"v1", b"f2", 2, b"f3", -3]
    assert listpack.encode([b"f1", b"v1", b"f2", b"2", b"f3", b"-3"]) == blob


@pytest.mark.parametrize("value", [0, 127, 128, -1, -4096, 4095, 4096, -32768, 32767, 32768,
                                   -8388608, 8388607, 8388608, -(1 << 31), (1 << 31) - 1,
                                   1 << 31, -(1 << 63), (1 << 63) - 1])
def test_listpack_integers_round_trip(value: int) -> None:
    blob = listpack.encode([value, b"%d" % value])
    assert listpack.decode(blob) == [value, value]


@pytest.mark.parametrize("size", [0, 1, 63, 64, 127, 128, 4095, 4096, 20000])
def test_listpack_strings_round_trip(size: int) -> None:
    s = b"s" * size
    assert listpack.decode(listpack.encode([s, b"tail"])) == [s, b"tail"]


_elements = st.lists(st.one_of(
    st.integers(-(1 << 63), (1 << 63) - 1),
    st.sampled_from([0, 127, 128, -1, -4096, 4095, 4096, -32768, 32768, 8388608, 1 << 31]),
    st.binary(max_size=70), st.sampled_from([b"x" * 4095, b"y" * 4096])), max_size=30)


@settings(max_examples=120, deadline=None)
@given(_elements, st.integers(0, 10_000), st.integers(1, 255))
def test_listpack_decodes_every_element_kind(items: list[int | bytes], at: int,
                                             flip: int) -> None:
    """Each element kind (the inline fast paths and the general one) decodes to what was
    encoded; a changed byte gives the elements or a ListpackError, never another error."""
    blob = listpack.encode(items)
    expected: list[int | bytes] = []
    for x in items:
        number = None if isinstance(x, int) else integer_value(x)
        expected.append(x if number is None else number)  # a numeric string is an integer
    assert listpack.decode(blob) == expected
    assert listpack.decode(blob, as_bytes=True) == [
        b"%d" % x if x.__class__ is int else x for x in expected]
    broken = bytearray(blob)
    broken[at % len(broken)] ^= flip
    with contextlib.suppress(listpack.ListpackError):
        listpack.decode(bytes(broken))


def test_listpack_errors_name_the_offset() -> None:
    blob = bytearray(listpack.encode([b"abc", 5]))
    blob[10] ^= 0x7F  # break the first element's back-length
    with pytest.raises(listpack.ListpackError, match="offset 6"):
        listpack.decode(bytes(blob))
    with pytest.raises(listpack.ListpackError):
        listpack.decode(b"\x07\x00\x00\x00\x00\x00\xfe")


def test_intset_of_a_redis_set() -> None:
    payload = _payload("core", "0:set:int")
    blob = f.Reader(payload, 1).string()
    values, width = intset.decode(blob)
    assert values == [-5, 1, 2, 3, (1 << 63) - 1]
    assert width == 8
    assert intset.encode(values, 8) == blob
    assert intset.width_for([1, -40000]) == 4


def test_intset_rejects_unsorted() -> None:
    with pytest.raises(intset.IntsetError):
        intset.decode(intset.encode([3, 1], 2))


def test_ziplist_decodes_every_encoding() -> None:
    # A ziplist as Redis 6 writes it: "ab", 7 (immediate), 300 (int16), -70000 (int32),
    # a 100-byte string, 2**40 (int64), 1000000 (int24), -5 (int8).
    entries = [
        b"\x02ab", b"\xf8", b"\xc0" + (300).to_bytes(2, "little"),
        b"\xd0" + (-70000).to_bytes(4, "little", signed=True),
        b"\x40\x64" + b"z" * 100, b"\xe0" + (1 << 40).to_bytes(8, "little"),
        b"\xf0" + (1000000).to_bytes(3, "little"),
        b"\xfe" + (-5).to_bytes(1, "little", signed=True),
    ]
    body = bytearray()
    prev = 0
    for e in entries:
        item = bytes((prev,)) + e
        body += item
        prev = len(item)
    total = 10 + len(body) + 1
    blob = total.to_bytes(4, "little") + (0).to_bytes(4, "little") + \
        len(entries).to_bytes(2, "little") + bytes(body) + b"\xff"
    assert ziplist.decode(blob) == [b"ab", b"7", b"300", b"-70000", b"z" * 100,
                                    b"%d" % (1 << 40), b"1000000", b"-5"]


# -- RDB lengths, strings, doubles -----------------------------------------------------------


@pytest.mark.parametrize("n,encoded", [(0, "00"), (63, "3f"), (64, "4040"), (16383, "7fff"),
                                       (16384, "8000004000"), (1 << 32, "810000000100000000")])
def test_rdb_lengths(n: int, encoded: str) -> None:
    assert f.encode_len(n).hex() == encoded
    assert f.Reader(bytes.fromhex(encoded)).length() == n


@pytest.mark.parametrize("name", ["0:str:int", "0:str:neg", "0:str:embstr", "0:str:raw",
                                  "0:str:bin", "0:str:empty", "0:str:big"])
def test_rdb_strings_as_redis_writes_them(name: str) -> None:
    payload = _payload("core", name)
    value = f.Reader(payload, 1).string()
    out = bytearray()
    f.write_string(out, value, True)
    assert bytes(out) == payload[1:-10]


def test_rdb_string_integer_forms() -> None:
    for text, encoded in ((b"-1", "c0ff"), (b"300", "c12c01"), (b"-70000", "c290eefeff"),
                          (b"4294967296", "0a34323934393637323936"), (b"012", "03303132")):
        out = bytearray()
        f.write_string(out, text, True)
        assert out.hex() == encoded
        assert f.Reader(bytes(out)).string() == text


def test_rdb_binary_and_text_doubles() -> None:
    out = bytearray()
    f.write_binary_double(out, 2.5)
    assert f.Reader(bytes(out)).binary_double() == 2.5
    assert f.Reader(b"\x032.5").string_double() == 2.5
    assert f.Reader(b"\xfe").string_double() == float("inf")
    assert f.Reader(b"\xff").string_double() == float("-inf")


def test_reader_errors_carry_the_offset() -> None:
    with pytest.raises(f.RdbError, match="offset 1: expected 5 bytes"):
        f.Reader(b"\x05abc").string()
    with pytest.raises(f.RdbError, match="unknown length encoding"):
        f.Reader(b"\x82").length()


def test_score_text_as_redis_7_2_writes_it() -> None:
    assert [d2string(x) for x in (1.0, 2.5, -0.0, float("inf"), 1 / 3)] == \
        [b"1", b"2.5", b"-0", b"inf", b"0.3333333333333333"]
    assert [fpconv_dtoa(x) for x in (1e-05, 1e-07, 1e22, 123.25)] == \
        [b"0.00001", b"1e-7", b"1e+22", b"123.25"]


# -- values and DUMP payloads ----------------------------------------------------------------


def _holdable(which: str) -> list[str]:
    return list(_dumps(which))


# OBJECT ENCODING after RESTORE where it differs from the key's encoding in Redis: RPUSH of
# 1000 elements checked only their raw lengths and left an 8897-byte listpack, but a load
# converts by the node's real size (over 8 KB), so Redis's own RESTORE gives a quicklist.
_RESTORED_ENCODING = {"0:list:big": "quicklist"}


@pytest.mark.parametrize("which", ["core", "extras"])
def test_every_redis_payload_round_trips_byte_for_byte(which: str) -> None:
    """RESTORE then DUMP gives Redis's bytes, except the order inside hashtables."""
    for name in _holdable(which):
        entry = _dumps(which)[name]
        payload = bytes.fromhex(str(entry["dump_hex"]))
        assert v.payload_valid(payload), name
        value = v.parse_payload(payload, name.encode())
        encoding = value.encoding if hasattr(value, "encoding") else None
        if entry["type"] != "string":
            assert encoding == _RESTORED_ENCODING.get(name, entry["encoding"]), name
        mine = v.dump_payload(value)
        assert v.payload_valid(mine)
        if entry["encoding"] == "hashtable":
            assert len(mine) == len(payload), name
            assert v.parse_payload(mine, b"k").__class__ is value.__class__
        else:
            assert mine[:-10] == payload[:-10], name


def test_payload_version_is_the_oldest_that_knows_the_type() -> None:
    assert v.dump_payload(b"x")[-10:-8] == (9).to_bytes(2, "little")
    lst = v.parse_payload(_payload("core", "0:list:small"), b"k")
    assert v.dump_payload(lst)[-10:-8] == (10).to_bytes(2, "little")
    hfe = v.parse_payload(_payload("extras", "5:hfe:small"), b"k")
    assert v.dump_payload(hfe)[-10:-8] == (12).to_bytes(2, "little")
    stream = v.parse_payload(_payload("core", "0:stream:main"), b"k")
    assert v.dump_payload(stream)[-10:-8] == (11).to_bytes(2, "little")


def test_payload_checks() -> None:
    good = _payload("core", "0:str:embstr")
    assert v.payload_valid(good)
    bad_crc = good[:-1] + bytes((good[-1] ^ 1,))
    assert not v.payload_valid(bad_crc)
    assert v.payload_valid(bad_crc, check_crc=False)
    newer = bytearray(good)
    newer[-10] = 13
    assert not v.payload_valid(bytes(newer))
    assert not v.payload_valid(b"short")


def test_module_value_is_refused_naming_the_key() -> None:
    out = bytearray((f.TYPE_MODULE_2,))
    f.write_len(out, (0x12345 << 10) | 1)
    with pytest.raises(v.UnsupportedValue, match="mykey"):
        v.read_value(f.Reader(bytes(out), 1), f.TYPE_MODULE_2, b"mykey")


# -- whole files -----------------------------------------------------------------------------


def test_redis_rdb_file_loads() -> None:
    data = (FIXTURES / "core" / "rdb" / "dump.rdb").read_bytes()
    keys: dict[tuple[int, bytes], object] = {}

    def sink(db: int, key: bytes, value: object, *rest: object) -> bool:
        keys[(db, key)] = value
        return True

    rdb_file.read_snapshot(data, sink, databases=16, now_ms=0)
    expected = {(int(name.split(":", 1)[0]), name.split(":", 1)[1].encode())
                for name in _dumps("core")}
    assert set(keys) == expected
    small = keys[(0, b"list:small")]
    assert isinstance(small, List) and small.values() == [b"a", b"b", b"c", b"1", b"2",
                                                          b"-100000"]
    plain = keys[(0, b"list:plain")]
    assert isinstance(plain, List) and plain.values() == [b"p" * 20000, b"tail"]
    assert [node.plain for node in plain.nodes] == [True, False]
    big = keys[(0, b"list:big")]
    assert isinstance(big, List) and big.values() == [b"item%d" % i for i in range(1000)]


def test_snapshot_round_trip_and_checksum() -> None:
    payloads = {name: _payload("core", name) for name in _holdable("core")}
    records = [(name.split(":", 1)[1].encode(), v.parse_payload(p, b"k"), None, None, None)
               for name, p in payloads.items() if name.startswith("0:")]
    chunks = list(rdb_file.write_snapshot(
        [rdb_file.DbSnapshot(0, len(records), 0, records)], [(b"redis-ver", b"8.4.0")]))
    data = b"".join(chunks)
    assert data.startswith(b"REDIS0012")
    assert crc64(0, data[:-8]).to_bytes(8, "little") == data[-8:]
    loaded: dict[bytes, object] = {}
    report, end = rdb_file.read_snapshot(
        data, lambda db, k, val, *rest: loaded.setdefault(k, val) is val, databases=16)
    assert end == len(data)
    assert report.aux == {b"redis-ver": b"8.4.0"}
    assert set(loaded) == {r[0] for r in records}
    broken = bytearray(data)
    broken[20] ^= 0xFF
    with pytest.raises(f.RdbError):
        rdb_file.read_snapshot(bytes(broken), lambda *a: True, databases=16)
    with pytest.raises(f.RdbError, match="offset"):
        rdb_file.read_snapshot(data[: len(data) // 2], lambda *a: True, databases=16)


# -- lists ----------------------------------------------------------------------------------


def _ziplist(values: list[bytes]) -> bytes:
    """A ziplist of short strings (the encoding Redis 6 uses for them)."""
    body = bytearray()
    prev = 0
    for value in values:
        entry = bytes((prev, len(value))) + value
        body += entry
        prev = len(entry)
    tail = 10 + len(body) - prev
    total = 10 + len(body) + 1
    return (total.to_bytes(4, "little") + tail.to_bytes(4, "little")
            + len(values).to_bytes(2, "little") + bytes(body) + b"\xff")


def _read_list(kind: int, body: bytes, limits: v.Limits = v.DEFAULT_LIMITS) -> List:
    value = v.read_value(f.Reader(body), kind, b"k", limits)
    assert isinstance(value, List)
    value.check()
    return value


def test_list_of_elements_type_1_loads_as_redis_pushes_it() -> None:
    out = bytearray()
    f.write_len(out, 3)
    for element in (b"a", b"12", b"c"):
        f.write_string(out, element, False)
    value = _read_list(f.TYPE_LIST, bytes(out))
    assert value.values() == [b"a", b"12", b"c"] and value.encoding == "listpack"
    # With a node limit of 2 elements the pushes make two nodes: a quicklist.
    value = _read_list(f.TYPE_LIST, bytes(out), v.Limits(list_fill=2))
    assert value.encoding == "quicklist" and [len(n) for n in value.nodes] == [2, 1]


def test_list_ziplist_type_10_stays_a_quicklist() -> None:
    out = bytearray()
    f.write_string(out, _ziplist([b"x", b"y"]), False)
    value = _read_list(f.TYPE_LIST_ZIPLIST, bytes(out))
    assert value.values() == [b"x", b"y"] and value.encoding == "quicklist"


def test_quicklist_of_ziplists_type_14_keeps_the_nodes() -> None:
    out = bytearray()
    f.write_len(out, 3)
    f.write_string(out, _ziplist([b"a", b"b"]), False)
    f.write_string(out, _ziplist([]), False)  # an empty node is skipped
    f.write_string(out, _ziplist([b"c"]), False)
    value = _read_list(f.TYPE_LIST_QUICKLIST, bytes(out))
    assert value.values() == [b"a", b"b", b"c"]
    assert value.encoding == "quicklist" and [len(n) for n in value.nodes] == [2, 1]
    one = bytearray(b"\x01")
    f.write_string(one, _ziplist([b"a", b"1"]), False)
    assert _read_list(f.TYPE_LIST_QUICKLIST, bytes(one)).encoding == "listpack"


def test_quicklist_2_reads_compressed_plain_and_packed_nodes() -> None:
    packed = listpack.encode([b"v" * 30, b"w" * 30])
    out = bytearray(b"\x03")
    f.write_len(out, 2)
    f.write_string(out, packed, True)  # LZF, as a compressed node is written
    assert out[2] == 0xC3
    f.write_len(out, 1)
    f.write_string(out, b"P" * 10000, True)
    f.write_len(out, 2)
    f.write_string(out, listpack.encode([7]), False)
    value = _read_list(f.TYPE_LIST_QUICKLIST_2, bytes(out))
    assert value.values() == [b"v" * 30, b"w" * 30, b"P" * 10000, b"7"]
    assert [n.plain for n in value.nodes] == [False, True, False]
    again = bytearray()
    v.write_value(again, value, True)
    assert bytes(again) == bytes(out)


def test_quicklist_2_errors_and_empty_lists() -> None:
    with pytest.raises(f.RdbError, match="Quicklist integrity"):
        _read_list(f.TYPE_LIST_QUICKLIST_2, b"\x01\x03\x01a")
    with pytest.raises(f.RdbError, match="empty quicklist node"):
        _read_list(f.TYPE_LIST_QUICKLIST_2, b"\x01\x01\x00")
    with pytest.raises(f.RdbError, match="Listpack integrity"):
        _read_list(f.TYPE_LIST_QUICKLIST_2, b"\x01\x02\x03abc")
    empty = bytearray(b"\x01\x02")
    f.write_string(empty, listpack.encode([]), False)
    for kind, body in ((f.TYPE_LIST_QUICKLIST_2, bytes(empty)), (f.TYPE_LIST, b"\x00"),
                       (f.TYPE_LIST_QUICKLIST_2, b"\x00")):
        with pytest.raises(v.EmptyValue):
            _read_list(kind, body)


def test_list_writes_one_node_for_a_listpack_and_each_node_of_a_quicklist() -> None:
    small = List.built([b"a", b"-5"], -2)
    assert small.encoding == "listpack"
    out = bytearray()
    v.write_value(out, small, False)
    assert v.value_type(small) == f.TYPE_LIST_QUICKLIST_2
    blob = listpack.encode([b"a", -5])
    assert len(blob) == 13 and bytes(out) == b"\x01\x02\x0d" + blob
    nodes = List.of_nodes([Node.of([b"x"]), Node.plain_of(b"y" * 50)], -2)
    out = bytearray()
    v.write_value(out, nodes, False)
    assert bytes(out) == (b"\x02\x02" + bytes((len(listpack.encode([b"x"])),))
                          + listpack.encode([b"x"]) + b"\x01\x32" + b"y" * 50)
