"""CRC-64 with the Jones polynomial, as Redis checksums RDB files and DUMP payloads.

Redis's ``crc64.c``: polynomial 0xad93d23594c935a9, reflected input and output, initial value
0, no final XOR; ``crc64(0, "123456789")`` is 0xe9c6d914c4b8d9ca. The checksum of a whole
file is the running value over every byte before the 8-byte trailer, stored little-endian.

:func:`crc64` continues from a previous value, so a file can be checksummed chunk by chunk as
it is written. Eight bytes at a time ("slicing by 8", eight 256-entry tables built once at
import) keeps the pure-Python cost near 50 ns a byte.
"""

from __future__ import annotations

import sys
from typing import Final

POLY: Final = 0xAD93D23594C935A9
# Machine words are read as little-endian integers, as the reflected CRC wants them.
_LITTLE: Final = sys.byteorder == "little"


def _reflect(value: int, bits: int) -> int:
    out = 0
    for _ in range(bits):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


def _tables() -> list[list[int]]:
    rpoly = _reflect(POLY, 64)
    first = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ rpoly if crc & 1 else crc >> 1
        first.append(crc)
    tables = [first]
    for _ in range(7):
        prev = tables[-1]
        tables.append([(prev[i] >> 8) ^ first[prev[i] & 0xFF] for i in range(256)])
    return tables


_T: Final = _tables()
_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7 = _T


def crc64(crc: int, data: bytes | bytearray | memoryview) -> int:
    """The CRC-64 of ``data`` continued from ``crc`` (0 to start)."""
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    n = len(view)
    whole = n - n % 8
    t0, t1, t2, t3, t4, t5, t6, t7 = _T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7
    if whole:
        words = memoryview(bytes(view[:whole]) if not isinstance(view, bytes) else view[:whole])
        for word in words.cast("Q") if _LITTLE else _words(view[:whole]):
            crc ^= word
            crc = (
                t7[crc & 0xFF] ^ t6[(crc >> 8) & 0xFF] ^ t5[(crc >> 16) & 0xFF]
                ^ t4[(crc >> 24) & 0xFF] ^ t3[(crc >> 32) & 0xFF] ^ t2[(crc >> 40) & 0xFF]
                ^ t1[(crc >> 48) & 0xFF] ^ t0[crc >> 56]
            )
    for byte in view[whole:]:
        crc = t0[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


def _words(data: bytes | memoryview) -> list[int]:
    return [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8)]

