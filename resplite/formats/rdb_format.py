"""The RDB format's building blocks: type and opcode numbers, lengths, strings, numbers.

Everything here is pure: writers append to a ``bytearray``, :class:`Reader` reads from bytes
already in memory. The value layouts built on these blocks are in
:mod:`resplite.formats.rdb_values`; whole files in :mod:`resplite.formats.rdb_file`.

Lengths (``rdbSaveLen``): the top two bits of the first byte say how the rest reads:

* ``00xxxxxx``: 6-bit length; ``01xxxxxx xxxxxxxx``: 14-bit, big-endian;
* ``0x80`` then a 32-bit big-endian length; ``0x81`` then a 64-bit big-endian one;
* ``11xxxxxx``: not a length but a special string encoding: 0, 1, 2 an 8, 16 or 32-bit
  little-endian signed integer, 3 an LZF-compressed string (compressed length, original
  length, then the compressed bytes).

Strings (``rdbSaveRawString``): one that reads as an integer and fits 32 bits is written as
that integer when it is at most 11 bytes long; else, with compression on and more than 20
bytes, LZF-compressed if that saves at least 4 bytes; else its length and bytes. Times are
64-bit little-endian milliseconds; scores (sorted sets, RDB 8+) are little-endian IEEE
doubles; older files wrote scores as a length byte and text (:meth:`Reader.string_double`).

Errors: :class:`RdbError` carries the byte offset where reading failed and what was
expected there, so a load can say "offset 1234: expected a length, found the end".
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Final, Protocol

from resplite.algorithms import lzf
from resplite.algorithms.crc64 import RunningCrc, crc64, shift_for
from resplite.store.listpack_size import integer_value

# RDB versions this code reads, and the one it writes for whole files (13, Redis 8.6's,
# only adds the stream type with the idempotent-producer state, which it reads; of 14's,
# Redis 8.8's, it reads the array type, not the stream type with XNACK state).
RDB_VERSION: Final = 12
OLDEST_READABLE: Final = 1
NEWEST_READABLE: Final = 14

# Value types (rdb.h).
TYPE_STRING: Final = 0
TYPE_LIST: Final = 1
TYPE_SET: Final = 2
TYPE_ZSET: Final = 3
TYPE_HASH: Final = 4
TYPE_ZSET_2: Final = 5
TYPE_MODULE_PRE_GA: Final = 6
TYPE_MODULE_2: Final = 7
TYPE_HASH_ZIPMAP: Final = 9
TYPE_LIST_ZIPLIST: Final = 10
TYPE_SET_INTSET: Final = 11
TYPE_ZSET_ZIPLIST: Final = 12
TYPE_HASH_ZIPLIST: Final = 13
TYPE_LIST_QUICKLIST: Final = 14
TYPE_STREAM_LISTPACKS: Final = 15
TYPE_HASH_LISTPACK: Final = 16
TYPE_ZSET_LISTPACK: Final = 17
TYPE_LIST_QUICKLIST_2: Final = 18
TYPE_STREAM_LISTPACKS_2: Final = 19
TYPE_SET_LISTPACK: Final = 20
TYPE_STREAM_LISTPACKS_3: Final = 21
TYPE_HASH_METADATA_PRE_GA: Final = 22
TYPE_HASH_LISTPACK_EX_PRE_GA: Final = 23
TYPE_HASH_METADATA: Final = 24
TYPE_HASH_LISTPACK_EX: Final = 25
TYPE_STREAM_LISTPACKS_4: Final = 26  # Redis 8.6: with the IDMP state
TYPE_ARRAY: Final = 28  # Redis 8.8 (resplite.formats.rdb_arrays)

# The oldest RDB version that knows each value type: a DUMP payload carries the oldest
# version able to hold its value, so that older servers accept what they can read.
TYPE_SINCE: Final = {
    TYPE_STRING: 9, TYPE_LIST: 9, TYPE_SET: 9, TYPE_ZSET: 9, TYPE_HASH: 9, TYPE_ZSET_2: 9,
    TYPE_SET_INTSET: 9, TYPE_LIST_QUICKLIST: 9, TYPE_STREAM_LISTPACKS: 9,
    TYPE_HASH_LISTPACK: 10, TYPE_ZSET_LISTPACK: 10, TYPE_LIST_QUICKLIST_2: 10,
    TYPE_STREAM_LISTPACKS_2: 10, TYPE_SET_LISTPACK: 11, TYPE_STREAM_LISTPACKS_3: 11,
    TYPE_HASH_METADATA: 12, TYPE_HASH_LISTPACK_EX: 12, TYPE_STREAM_LISTPACKS_4: 13,
    TYPE_ARRAY: 14,
}

# Opcodes.
OPCODE_SLOT_INFO: Final = 244
OPCODE_FUNCTION2: Final = 245
OPCODE_FUNCTION_PRE_GA: Final = 246
OPCODE_MODULE_AUX: Final = 247
OPCODE_IDLE: Final = 248
OPCODE_FREQ: Final = 249
OPCODE_AUX: Final = 250
OPCODE_RESIZEDB: Final = 251
OPCODE_EXPIRETIME_MS: Final = 252
OPCODE_EXPIRETIME: Final = 253
OPCODE_SELECTDB: Final = 254
OPCODE_EOF: Final = 255

ENC_INT8: Final = 0
ENC_INT16: Final = 1
ENC_INT32: Final = 2
ENC_LZF: Final = 3
# The first byte of an LZF-compressed string: the encoded-value marker (0b11) and ENC_LZF.
LZF_HEAD: Final = 0xC0 | ENC_LZF

QUICKLIST_PLAIN: Final = 1
QUICKLIST_PACKED: Final = 2

_DOUBLE: Final = struct.Struct("<d")
_INT64: Final = struct.Struct("<q")
_UINT64: Final = struct.Struct("<Q")


class RdbError(ValueError):
    """Reading failed at ``offset`` (from the start of what was being read)."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(f"offset {offset}: {message}")
        self.offset = offset
        self.reason = message


# -- writing ------------------------------------------------------------------------------


def write_len(out: bytearray, n: int) -> None:
    """Append an RDB length."""
    if n < 64:
        out.append(n)
    elif n < 16384:
        out.append((n >> 8) | 0x40)
        out.append(n & 0xFF)
    elif n <= 0xFFFFFFFF:
        out.append(0x80)
        out += n.to_bytes(4, "big")
    else:
        out.append(0x81)
        out += n.to_bytes(8, "big")


def encode_len(n: int) -> bytes:
    out = bytearray()
    write_len(out, n)
    return bytes(out)


def _int_encoding(value: int) -> bytes | None:
    if -128 <= value <= 127:
        return bytes((0xC0, value & 0xFF))
    if -32768 <= value <= 32767:
        return b"\xc1" + (value & 0xFFFF).to_bytes(2, "little")
    if -(1 << 31) <= value < (1 << 31):
        return b"\xc2" + (value & 0xFFFFFFFF).to_bytes(4, "little")
    return None


def write_string_py(out: bytearray, s: bytes | bytearray | memoryview, compress: bool) -> None:
    """Append a string as ``rdbSaveRawString`` does (integer, LZF or plain form): the
    reference, and :func:`write_string` without the C extension."""
    n = len(s)
    if n <= 11 and n:
        first = s[0]
        if 48 <= first <= 57 or first == 45:
            value = integer_value(bytes(s))
            if value is not None:
                enc = _int_encoding(value)
                if enc is not None:
                    out += enc
                    return
    if compress and n > 20:
        packed = lzf.compress(s, n - 4)
        if packed is not None:
            out.append(LZF_HEAD)
            write_len(out, len(packed))
            write_len(out, n)
            out += packed
            return
    write_len(out, n)
    out += s


# The C extension (setup.py; a test holds it equal to the Python code) where it is built:
# a snapshot writes and reads two strings a key, and the interpreter's share of each was
# most of the time of a SAVE or a load of small keys.
class _StringWriter(Protocol):
    def __call__(self, out: bytearray, s: bytes | bytearray | memoryview,
                 compress: bool) -> None: ...


write_string: _StringWriter = write_string_py
_c_read_string: Callable[[bytes | memoryview, int], tuple[bytes, int] | None] | None = None
# (data, pos, limit, count) -> (keys, values, expiries or None, record offsets, end): a run
# of string keys (see rdb_file.read_snapshot).
scan_strings: Callable[[bytes | memoryview, int, int, int],
                       tuple[list[bytes], list[bytes], list[int] | None, list[int], int]] \
    | None = None
# (data, pos, n) -> (the n strings at pos, end), or None where one does not read.
read_strings: Callable[[bytes | memoryview, int, int], tuple[list[bytes], int] | None] | None \
    = None
# (data, pos, n) -> (members, scores, end): n RDB_TYPE_ZSET_2 members, None where one does
# not read or a score is NaN.
read_scored: Callable[[bytes | memoryview, int, int],
                      tuple[list[bytes], list[float], int] | None] | None = None
try:
    from resplite.formats import _rdb  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler): the Python code does the same, slowly
    pass
else:
    write_string = _rdb.write_string
    _c_read_string = _rdb.read_string
    scan_strings = _rdb.scan_strings
    read_strings = _rdb.read_strings
    read_scored = _rdb.read_scored


def write_millis(out: bytearray, ms: int) -> None:
    out += _INT64.pack(ms)


def write_binary_double(out: bytearray, value: float) -> None:
    out += _DOUBLE.pack(value)


def write_aux(out: bytearray, key: bytes, value: bytes) -> None:
    out.append(OPCODE_AUX)
    write_string(out, key, False)
    write_string(out, value, False)


# -- reading ------------------------------------------------------------------------------


class Reader:
    """A cursor over RDB bytes held in memory; every read checks the bounds.

    ``base`` is added to offsets in error messages (the position of this buffer in a
    larger file). ``checksum``, when a whole file is read, is the CRC-64 of ``data`` up to
    its ``done``: a part whose CRC a value reader computes anyway (:meth:`part_checksum`)
    is joined to it instead of being read twice. ``checked`` counts the packed blobs the
    value readers validated.
    """

    __slots__ = ("base", "checked", "checksum", "data", "pos")

    def __init__(self, data: bytes | memoryview, pos: int = 0, base: int = 0) -> None:
        self.data = data
        self.pos = pos
        self.base = base
        self.checksum: RunningCrc | None = None
        # Packed blobs validated element by element (listpacks, intsets, stream nodes), as
        # Redis counts them in ``dump_payload_sanitizations`` when it sanitizes deeply.
        self.checked = 0

    def part_checksum(self, start: int, part: bytes) -> tuple[int, int]:
        """The CRC-64 of ``part`` (the bytes at ``start``) and :func:`shift_for` its
        length, ``checksum`` brought past it; (0, 0), for "not computed", when no
        ``checksum`` is kept (a DUMP payload is checked as a whole before it is read)."""
        running = self.checksum
        if running is None or running.done > start:
            return 0, 0
        crc = crc64(0, part)
        shift = shift_for(len(part))
        running.update(self.data, start)
        running.join(crc, shift, start + len(part))
        return crc, shift

    def error(self, message: str, at: int | None = None) -> RdbError:
        return RdbError(self.base + (self.pos if at is None else at), message)

    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def take(self, n: int, what: str = "data") -> bytes:
        start = self.pos
        end = start + n
        if end > len(self.data):
            raise self.error(f"expected {n} bytes of {what}, the input ends after "
                             f"{len(self.data) - start}")
        self.pos = end
        return bytes(self.data[start:end])

    def byte(self, what: str = "a type byte") -> int:
        pos = self.pos
        if pos >= len(self.data):
            raise self.error(f"expected {what}, found the end of the input")
        self.pos = pos + 1
        return self.data[pos]

    def length_or_encoding(self, what: str = "a length") -> tuple[int, bool]:
        """(value, is_encoding): a length, or the special string encoding number."""
        start = self.pos
        first = self.byte(what)
        kind = first >> 6
        if kind == 0:
            return first & 0x3F, False
        if kind == 1:
            return ((first & 0x3F) << 8) | self.byte(what), False
        if kind == 3:
            return first & 0x3F, True
        if first == 0x80:
            return int.from_bytes(self.take(4, what), "big"), False
        if first == 0x81:
            return int.from_bytes(self.take(8, what), "big"), False
        raise self.error(f"unknown length encoding 0x{first:02x} where {what} was expected",
                         start)

    def length(self, what: str = "a length") -> int:
        start = self.pos
        value, encoded = self.length_or_encoding(what)
        if encoded:
            raise self.error(f"expected {what}, found a string encoding", start)
        return value

    def string(self, what: str = "a string") -> bytes:
        """A string in any of its forms (integer, LZF, plain)."""
        start = self.pos
        data = self.data
        fast = _c_read_string
        if fast is not None:
            got = fast(data, start)
            if got is not None:
                self.pos = got[1]
                return got[0]
            # Not well formed: read again below, for the error and its offset.
        return self.string_py(what)

    def string_py(self, what: str = "a string") -> bytes:
        """:meth:`string` in pure Python: the reference, the reader without the C
        extension, and what says why a string does not read."""
        start = self.pos
        data = self.data
        if start < len(data):
            first = data[start]
            if first < 0x40:
                # A plain string of up to 63 bytes (keys, small values): the commonest
                # record of a file, read without the general path's calls.
                end = start + 1 + first
                if end <= len(data):
                    self.pos = end
                    return bytes(data[start + 1:end])
        value, encoded = self.length_or_encoding(what)
        if not encoded:
            return self.take(value, what)
        if value == ENC_INT8:
            return b"%d" % int.from_bytes(self.take(1, what), "little", signed=True)
        if value == ENC_INT16:
            return b"%d" % int.from_bytes(self.take(2, what), "little", signed=True)
        if value == ENC_INT32:
            return b"%d" % int.from_bytes(self.take(4, what), "little", signed=True)
        if value == ENC_LZF:
            clen = self.length("a compressed length")
            ulen = self.length("an uncompressed length")
            packed = self.take(clen, "compressed data")
            try:
                return lzf.decompress(packed, ulen)
            except lzf.LzfError as exc:
                raise self.error(f"invalid LZF compressed string ({exc})", start) from None
        raise self.error(f"unknown string encoding {value} where {what} was expected", start)

    def millis(self, what: str = "a time in milliseconds") -> int:
        return _INT64.unpack(self.take(8, what))[0]  # type: ignore[no-any-return]

    def seconds(self) -> int:
        return int.from_bytes(self.take(4, "a time in seconds"), "little", signed=True)

    def binary_double(self) -> float:
        return _DOUBLE.unpack(self.take(8, "a binary double"))[0]  # type: ignore[no-any-return]

    def string_double(self) -> float:
        """A score as RDB versions before 8 wrote it: a length byte, then text."""
        start = self.pos
        n = self.byte("a double")
        if n == 255:
            return float("-inf")
        if n == 254:
            return float("inf")
        if n == 253:
            return float("nan")
        text = self.take(n, "a double")
        try:
            return float(text)
        except ValueError:
            raise self.error("unreadable double", start) from None

    def uint64(self, what: str = "a 64-bit number") -> int:
        return _UINT64.unpack(self.take(8, what))[0]  # type: ignore[no-any-return]
