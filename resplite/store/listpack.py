"""Redis's listpack byte format: encoding and decoding whole listpacks (RDB and DUMP payloads).

A listpack is a 6-byte header (total size as a 32-bit little-endian integer, element count
as a 16-bit one, 65535 meaning "count them"), the elements, and a 0xFF terminator. Each
element is an encoding byte (with the length or value folded in where it fits), its payload,
and a *back-length*: the size of encoding plus payload in 1 to 5 bytes, 7 bits a byte, so
the list can be walked from the end. Encodings:

==============  =========================================================
``0xxxxxxx``    integer 0..127
``10xxxxxx``    string of up to 63 bytes
``110xxxxx``    13-bit signed integer (one more byte)
``1110xxxx``    string of up to 4095 bytes (12-bit length, one more byte)
``0xF0``        string, 32-bit little-endian length
``0xF1..0xF4``  16, 24, 32 and 64-bit signed little-endian integers
==============  =========================================================

A string that reads as a 64-bit integer by Redis's ``string2ll`` rules is always stored as an
integer (:func:`~resplite.store.listpack_size.integer_value`), as ``lpAppend`` does, so
:func:`encode` of the same values gives Redis's bytes. Sizes agree with
:mod:`resplite.store.listpack_size`, which computes them without encoding.

:func:`decode` checks every element against the buffer's bounds and the header, and raises
:class:`ListpackError` naming the offset of the first inconsistency: the caller turns that
into "Bad data format" (RESTORE) or a load error with the file offset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from resplite.store.listpack_size import integer_value

Element = bytes | int

EOF: Final = 0xFF
HEADER_SIZE: Final = 6
NUMELE_UNKNOWN: Final = 65535


class ListpackError(ValueError):
    """A listpack that does not follow the format; the message says where and what."""


def _backlen(size: int) -> bytes:
    if size <= 127:
        return bytes((size,))
    if size < 16383:
        return bytes((size >> 7, (size & 127) | 128))
    if size < 2097151:
        return bytes((size >> 14, ((size >> 7) & 127) | 128, (size & 127) | 128))
    if size < 268435455:
        return bytes((size >> 21, ((size >> 14) & 127) | 128, ((size >> 7) & 127) | 128,
                      (size & 127) | 128))
    return bytes((size >> 28, ((size >> 21) & 127) | 128, ((size >> 14) & 127) | 128,
                  ((size >> 7) & 127) | 128, (size & 127) | 128))


# The complete element (with back-length) for each small integer, built once.
SMALL_INTS: Final = [bytes((v, 1)) for v in range(128)]


def encode_int(v: int) -> bytes:
    """The element for the integer ``v`` (a signed 64-bit value)."""
    if 0 <= v <= 127:
        return SMALL_INTS[v]
    if -4096 <= v <= 4095:
        u = v & 0x1FFF
        return bytes(((u >> 8) | 0xC0, u & 0xFF, 2))
    if -32768 <= v <= 32767:
        return b"\xf1" + (v & 0xFFFF).to_bytes(2, "little") + b"\x03"
    if -8388608 <= v <= 8388607:
        return b"\xf2" + (v & 0xFFFFFF).to_bytes(3, "little") + b"\x04"
    if -2147483648 <= v <= 2147483647:
        return b"\xf3" + (v & 0xFFFFFFFF).to_bytes(4, "little") + b"\x05"
    return b"\xf4" + (v & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little") + b"\x09"


def encode_str(s: bytes | bytearray) -> bytes:
    """The element for the string ``s``, stored as an integer when it reads as one."""
    n = len(s)
    if n <= 20 and n and (48 <= s[0] <= 57 or s[0] == 45):
        value = integer_value(s)
        if value is not None:
            return encode_int(value)
    if n < 64:
        return bytes((0x80 | n,)) + s + bytes((n + 1,))
    if n < 4096:
        head = bytes(((n >> 8) | 0xE0, n & 0xFF))
        return head + s + _backlen(n + 2)
    head = b"\xf0" + n.to_bytes(4, "little")
    return head + s + _backlen(n + 5)


def encode(items: Iterable[Element]) -> bytes:
    """A listpack holding ``items`` in order (``bytes`` as strings, ``int`` as integers)."""
    fast = _c_encode
    if fast is not None:
        if not isinstance(items, (list, tuple)):
            items = list(items)  # a second pass, should the Python encoder be needed
        got = fast(items)
        if got is not None:
            return got
    return encode_py(items)


def encode_py(items: Iterable[Element]) -> bytes:
    """:func:`encode` in pure Python: the reference, and the encoder without the C
    extension."""
    parts: list[bytes] = []
    append = parts.append
    for item in items:
        append(encode_int(item) if type(item) is int else encode_str(item))  # type: ignore[arg-type]
    return join(parts)


def join(parts: list[bytes], elements: int | None = None) -> bytes:
    """A listpack from already encoded elements (:func:`encode_int`, :func:`encode_str`),
    each a part, or ``elements`` of them in ``parts`` (where a part may hold several)."""
    body = b"".join(parts)
    total = HEADER_SIZE + len(body) + 1
    if elements is None:
        elements = len(parts)
    count = elements if elements < NUMELE_UNKNOWN else NUMELE_UNKNOWN
    return total.to_bytes(4, "little") + count.to_bytes(2, "little") + body + b"\xff"


# The C extension (setup.py; tests hold it equal to the Python code) where it is built: a
# load decodes every listpack of the file (hashes, sets, sorted sets, lists, stream nodes).
_c_decode: Callable[..., list[Element] | None] | None = None
c_stream_node: Callable[..., bytes] | None = None
c_same_fields_node: Callable[[bytes, int], tuple[Any, ...] | None] | None = None
_c_encode: Callable[[Iterable[Element]], bytes | None] | None = None
try:
    from resplite.store import _listpack  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler): the Python code does the same, slowly
    pass
else:
    _c_decode = _listpack.decode
    c_stream_node = _listpack.stream_node
    c_same_fields_node = _listpack.same_fields_node
    _c_encode = _listpack.encode


def decode(buf: bytes | bytearray | memoryview, as_bytes: bool = False) -> list[Element]:
    """The elements of the listpack ``buf``: integers as ``int`` (or as their decimal
    ``bytes`` when ``as_bytes``), strings as ``bytes``. Raises :class:`ListpackError`."""
    fast = _c_decode
    if fast is not None:
        got = fast(buf, as_bytes)
        if got is not None:
            return got
        # Not well formed: the Python decoder says where and why.
    return decode_py(buf, as_bytes)


def decode_py(buf: bytes | bytearray | memoryview, as_bytes: bool = False) -> list[Element]:
    """:func:`decode` in pure Python: the reference, the decoder without the C extension,
    and what words its errors."""
    data = bytes(buf)
    size = len(data)
    if size < HEADER_SIZE + 1:
        raise ListpackError(f"listpack of {size} bytes is shorter than its header")
    total = int.from_bytes(data[0:4], "little")
    if total != size:
        raise ListpackError(f"listpack header says {total} bytes, the value holds {size}")
    declared = int.from_bytes(data[4:6], "little")
    out: list[Element] = []
    append = out.append
    p = HEADER_SIZE
    end = size - 1
    while p < end:
        start = p
        b = data[p]
        # The two commonest elements, a 7-bit integer and a string of up to 63 bytes, taken
        # whole when their back-length byte is where and what it must be; anything else
        # (including those two when malformed) goes through the checks below.
        if b < 0x80:
            if p + 1 < end and data[p + 1] == 1:
                append(b"%d" % b if as_bytes else b)
                p += 2
                continue
        elif b < 0xC0:
            q = p + 1 + (b & 0x3F)
            if q < end and data[q] == q - p:
                append(data[p + 1:q])
                p = q + 1
                continue
        elif b < 0xE0:
            # Then the integers: a 13-bit one, and the 16 to 64-bit ones (F1 to F4), whose
            # back-length is one byte, the element's size.
            if p + 2 < end and data[p + 2] == 2:
                u = ((b & 0x1F) << 8) | data[p + 1]
                small = u - 0x2000 if u >= 0x1000 else u
                append(b"%d" % small if as_bytes else small)
                p += 3
                continue
        elif 0xF1 <= b <= 0xF4:
            q = p + (9 if b == 0xF4 else b - 0xEE)
            if q < end and data[q] == q - p:
                wide = int.from_bytes(data[p + 1:q], "little", signed=True)
                append(b"%d" % wide if as_bytes else wide)
                p = q + 1
                continue
        if b < 0x80:
            value: Element = b
            p += 1
        elif b < 0xC0:
            n = b & 0x3F
            p += 1
            value = data[p:p + n]
            p += n
        elif b < 0xE0:
            if p + 2 > end:
                raise ListpackError(f"integer at offset {start} runs past the end")
            u = ((b & 0x1F) << 8) | data[p + 1]
            value = u - 0x2000 if u >= 0x1000 else u
            p += 2
        elif b < 0xF0:
            if p + 2 > end:
                raise ListpackError(f"string length at offset {start} runs past the end")
            n = ((b & 0x0F) << 8) | data[p + 1]
            p += 2
            value = data[p:p + n]
            p += n
        elif b == 0xF0:
            n = int.from_bytes(data[p + 1:p + 5], "little")
            p += 5
            value = data[p:p + n]
            p += n
        elif b in _INT_WIDTHS:
            width = _INT_WIDTHS[b]
            if p + 1 + width > end:
                raise ListpackError(f"integer at offset {start} runs past the end")
            value = int.from_bytes(data[p + 1:p + 1 + width], "little", signed=True)
            p += 1 + width
        elif b == EOF:
            raise ListpackError(f"terminator at offset {start} before the end of the listpack")
        else:
            raise ListpackError(f"unknown element encoding 0x{b:02x} at offset {start}")
        if p > end:
            raise ListpackError(f"element at offset {start} runs past the end")
        back = _backlen(p - start)
        if data[p:p + len(back)] != back:
            raise ListpackError(f"bad back-length after the element at offset {start}")
        p += len(back)
        if as_bytes and type(value) is int:
            value = b"%d" % value  # type: ignore[str-format]
        append(value)
    if p != end or data[end] != EOF:
        raise ListpackError(f"listpack does not end with its terminator (offset {p})")
    if declared != NUMELE_UNKNOWN and declared != len(out):
        raise ListpackError(f"listpack header counts {declared} elements, it holds {len(out)}")
    return out


_INT_WIDTHS: Final = {0xF1: 2, 0xF2: 3, 0xF3: 4, 0xF4: 8}
