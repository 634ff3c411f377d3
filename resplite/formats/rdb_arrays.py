"""Arrays (Redis 8.8) in RDB form, registered with :mod:`resplite.formats.rdb_values`, and the
element encodings Redis keeps them in.

Element encodings (Redis's tagged values, ``arEncode``): a string is kept as

* an integer (tag 1) when ``string2ll`` reads it and it fits 62 signed bits;
* a double (tag 2) when it is digits with one ``.`` (and an optional ``-``) and the double it
  reads as, with the two lowest bits of its IEEE payload cleared, prints back (``d2string``,
  or that plus ``.0``) as exactly the same text;
* a short string (tag 3) of at most 7 bytes, else a string (tag 0).

Each decodes to the very bytes it was made from, which is why the store keeps bytes and this
module derives the tag from them: :func:`element_kind`. AROP reads numbers through the same
rules (an integer as such, a tagged double as that double, other text by ``strtold``).

The RDB record (``RDB_TYPE_ARRAY``, 28, new in RDB 14): the element count, then 1 and the
insert cursor, or 0 when there is none (both lengths), then per element in ascending index
order its index (a length), its tag (a length) and the value: an integer as 8 bytes
little-endian, a double as its 8 IEEE bytes little-endian, a string as an RDB string. The
layout is read from Redis's RDB parsers (librdb 2.3, the rdb-cli parsers); a load rebuilds
the array element by element, so its slices are the ones those writes give.

resplite writes whole files as RDB 12 (its other types are RDB 12's); a file holding an array
says 12 in its header though the type is RDB 14's (Redis 8.8 writes 14), so that nothing else
in the file changes: a Redis before 8.8 refuses either file at the array's type byte. A DUMP
payload of an array carries version 14, the oldest that knows the type.
"""

from __future__ import annotations

import struct
from typing import Final

from resplite.algorithms.numbers import parse_int
from resplite.algorithms.scores import d2string
from resplite.formats import rdb_format as f
from resplite.formats import rdb_values as v
from resplite.store.sparse_array import MAX_INDEX, NO_INSERT, SparseArray

TYPE_ARRAY: Final = f.TYPE_ARRAY

TAG_STRING: Final = 0
TAG_INT: Final = 1
TAG_FLOAT: Final = 2
TAG_SMALL: Final = 3

_INT_LIMIT: Final = 1 << 61  # 62-bit signed immediates: -2**61 .. 2**61 - 1
_SMALL_MAX: Final = 7
_INT64: Final = struct.Struct("<q")
_DOUBLE: Final = struct.Struct("<d")
_BITS: Final = struct.Struct("<Q")
_FLOAT_CHARS: Final = frozenset(b"0123456789.")


def tagged_double(value: bytes) -> float | None:
    """The double Redis keeps ``value`` as (its low two payload bits cleared), or None when
    it keeps it otherwise."""
    body = value[1:] if value[:1] == b"-" else value
    if not body or body.count(b".") != 1 or not _FLOAT_CHARS.issuperset(body):
        return None
    try:
        d = float(value)
    except ValueError:
        return None
    (bits,) = _BITS.unpack(_DOUBLE.pack(d))
    (trunc,) = _DOUBLE.unpack(_BITS.pack(bits & ~3))
    text = d2string(trunc)
    if text == value or text + b".0" == value:
        return float(trunc)
    return None


def format_float(d: float) -> bytes:
    """A tagged double's text (Redis's ``arFormatFloat``): ``d2string``, with ``.0`` added
    to a finite value that prints as an integer."""
    text = d2string(d)
    if d == d and d not in (float("inf"), float("-inf")) and not any(
            c in text for c in b".eE"):
        text += b".0"
    return text


def element_kind(value: bytes) -> tuple[int, int | float | bytes]:
    """The tag Redis keeps ``value`` under, and its payload (the integer, the double, or
    the bytes)."""
    n = parse_int(value)
    if n is not None and -_INT_LIMIT <= n < _INT_LIMIT:
        return TAG_INT, n
    d = tagged_double(value)
    if d is not None:
        return TAG_FLOAT, d
    return (TAG_SMALL if len(value) <= _SMALL_MAX else TAG_STRING), value


def _type_of(value: SparseArray) -> int:
    return TYPE_ARRAY


def _write(out: bytearray, value: SparseArray, compress: bool) -> None:
    f.write_len(out, value.count)
    if value.insert_idx == NO_INSERT:
        f.write_len(out, 0)
    else:
        f.write_len(out, 1)
        f.write_len(out, value.insert_idx)
    write_len = f.write_len
    write_string = f.write_string
    for index, element in value.items():
        write_len(out, index)
        tag, payload = element_kind(element)
        write_len(out, tag)
        if tag == TAG_INT:
            assert isinstance(payload, int)
            out += _INT64.pack(payload)
        elif tag == TAG_FLOAT:
            assert isinstance(payload, float)
            out += _DOUBLE.pack(payload)
        else:
            write_string(out, element, compress)


def _read(r: f.Reader, kind: int, limits: v.Limits) -> SparseArray:
    count = r.length("an array element count")
    at = r.pos
    flag = r.length("an array insert index flag")
    if flag not in (0, 1):
        raise r.error(f"invalid array insert index flag {flag}", at)
    cursor = r.length("an array insert index") if flag else NO_INSERT
    value = SparseArray()
    for _ in range(count):
        at = r.pos
        index = r.length("an array element index")
        if index > MAX_INDEX:
            raise r.error("array element index out of range", at)
        at = r.pos
        tag = r.length("an array element tag")
        if tag == TAG_INT:
            (n,) = _INT64.unpack(r.take(8, "an array integer"))
            element = b"%d" % n
        elif tag == TAG_FLOAT:
            element = format_float(r.binary_double())
        elif tag in (TAG_STRING, TAG_SMALL):
            element = r.string("an array element")
        else:
            raise r.error(f"unknown array element tag {tag}", at)
        value.set(index, element)
    if not value.count:
        raise v.EmptyValue
    if cursor != NO_INSERT and cursor > MAX_INDEX:
        raise r.error("array insert index out of range", at)
    value.insert_idx = cursor
    return value


v.register_type(SparseArray, _type_of, _write, {TYPE_ARRAY: _read})
