"""Redis's ziplist byte format, read only: what files from Redis before 7.0 hold.

Redis 7.0 replaced ziplists with listpacks, but RDB files written by Redis 5 and 6 (RDB
versions 9) still carry hashes, sorted sets and list nodes as ziplists, and loading them is
supported. A ziplist is a header (total bytes and the tail offset as 32-bit little-endian
integers, an entry count as a 16-bit one), the entries, and a 0xFF terminator. An entry is
the previous entry's length (1 byte, or 0xFE then 4 bytes), an encoding, and its payload:

==============  ===========================================================
``00pppppp``    string of up to 63 bytes
``01pppppp q``  string of up to 16383 bytes (14-bit big-endian length)
``10000000``    string with a 32-bit big-endian length
``0xC0``        int16; ``0xD0`` int32; ``0xE0`` int64; ``0xF0`` int24; ``0xFE`` int8
``0xF1..0xFD``  the integers 0 to 12, in the encoding byte itself
==============  ===========================================================

Integers are little-endian. :func:`decode` returns every entry as ``bytes`` (integers in
decimal) and raises :class:`ZiplistError` with the offset of the first bad entry.
"""

from __future__ import annotations

from typing import Final

_INTS: Final = {0xC0: 2, 0xD0: 4, 0xE0: 8, 0xF0: 3, 0xFE: 1}


class ZiplistError(ValueError):
    """A blob that does not follow the ziplist format."""


def decode(blob: bytes | bytearray | memoryview) -> list[bytes]:
    """The entries of a ziplist, in order, as byte strings."""
    data = bytes(blob)
    size = len(data)
    if size < 11:
        raise ZiplistError(f"ziplist of {size} bytes is shorter than its header")
    if int.from_bytes(data[0:4], "little") != size:
        raise ZiplistError("ziplist header size disagrees with the value's length")
    declared = int.from_bytes(data[8:10], "little")
    out: list[bytes] = []
    p = 10
    end = size - 1
    prev_len = 0
    while p < end:
        start = p
        if data[p] < 0xFE:
            stored_prev = data[p]
            p += 1
        elif data[p] == 0xFE:
            stored_prev = int.from_bytes(data[p + 1:p + 5], "little")
            p += 5
        else:
            break
        if stored_prev != prev_len:
            raise ZiplistError(f"entry at offset {start} records a wrong previous length")
        enc = data[p]
        kind = enc >> 6
        if kind == 0:
            n = enc & 0x3F
            p += 1
            value = data[p:p + n]
            p += n
        elif kind == 1:
            n = ((enc & 0x3F) << 8) | data[p + 1]
            p += 2
            value = data[p:p + n]
            p += n
        elif enc == 0x80:
            n = int.from_bytes(data[p + 1:p + 5], "big")
            p += 5
            value = data[p:p + n]
            p += n
        elif enc in _INTS:
            width = _INTS[enc]
            value = b"%d" % int.from_bytes(data[p + 1:p + 1 + width], "little", signed=True)
            p += 1 + width
        elif 0xF1 <= enc <= 0xFD:
            value = b"%d" % ((enc & 0x0F) - 1)
            p += 1
        else:
            raise ZiplistError(f"unknown entry encoding 0x{enc:02x} at offset {start}")
        if p > end:
            raise ZiplistError(f"entry at offset {start} runs past the end")
        prev_len = p - start
        out.append(value)
    if p != end or data[end] != 0xFF:
        raise ZiplistError(f"ziplist does not end with its terminator (offset {p})")
    if declared != 0xFFFF and declared != len(out):
        raise ZiplistError(f"ziplist header counts {declared} entries, it holds {len(out)}")
    return out
