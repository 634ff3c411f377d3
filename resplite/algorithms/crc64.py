"""CRC-64 with the Jones polynomial, as Redis checksums RDB files and DUMP payloads.

Redis's ``crc64.c``: polynomial 0xad93d23594c935a9, reflected input and output, initial value
0, no final XOR; ``crc64(0, "123456789")`` is 0xe9c6d914c4b8d9ca. The checksum of a whole
file is the running value over every byte before the 8-byte trailer, stored little-endian.

:func:`crc64` continues from a previous value, so a file can be checksummed chunk by chunk as
it is written. The work is done in C by ``anycrc`` (its ``CRC64-REDIS`` model, carry-less
multiplication: gigabytes a second) when that wheel is installed; :func:`crc64_py` is the
pure-Python reference and fallback, eight bytes at a time ("slicing by 8", eight 256-entry
tables built once at import), about 50 to 200 ns a byte. A test holds the two equal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import lru_cache
from typing import Final

_c_crc64: Callable[[bytes | bytearray | memoryview, int], int] | None = None
_c_combine: Callable[[int, int, int], int] | None = None
try:
    import anycrc as _anycrc
except ImportError:  # crc64_py does the same work, slowly
    pass
else:
    _model = _anycrc.Model("CRC64-REDIS")
    _c_crc64 = _model.calc
    _c_combine = _model.combine

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
    fast = _c_crc64
    if fast is not None:
        return fast(data, crc)
    return crc64_py(crc, data)


def crc64_py(crc: int, data: bytes | bytearray | memoryview) -> int:
    """:func:`crc64` in pure Python: the reference, and the code without ``anycrc``."""
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



# -- joining checksums ------------------------------------------------------------------------
#
# This CRC (no initial value, no final XOR) is linear: the CRC of A followed by B is the CRC of
# A multiplied by x^(8 * len(B)) modulo the polynomial, XORed with the CRC of B. In the
# reflected representation the top bit stands for x^0, so the "shift" for n bytes is a 64-bit
# value computed once per length (:func:`shift_for_py`) and the join is one multiplication
# (:func:`crc64_join_py`): a writer that kept a part's CRC and shift need not read its bytes
# again. With anycrc, :func:`shift_for` and :func:`crc64_join` are its combine, in C.

_RPOLY: Final = _reflect(POLY, 64)
_X0: Final = 1 << 63  # the polynomial 1, reflected


def _multiply(a: int, b: int) -> int:
    """a * b modulo the polynomial, both reflected (at most 64 steps)."""
    m = _X0
    p = 0
    while a:
        if a & m:
            p ^= b
            a ^= m
        m >>= 1
        b = (b >> 1) ^ _RPOLY if b & 1 else b >> 1
    return p


def _square_table() -> list[int]:
    # x^(2^k) modulo the polynomial, reflected, for k = 0 .. 63.
    table = [_X0 >> 1]  # x^1
    for _ in range(63):
        table.append(_multiply(table[-1], table[-1]))
    return table


_X2N: Final = _square_table()


def shift_for(length: int) -> int:
    """The join factor of a part of ``length`` bytes: what :func:`crc64_join` takes for it
    (not 0 for a part of any length but 0). With ``anycrc``, the length itself: its combine
    derives x^(8 * length) in C; without, :func:`shift_for_py`'s polynomial. Either way
    the factor is only ever given back to :func:`crc64_join` in the same process."""
    if _c_combine is not None:
        return length
    return shift_for_py(length)


@lru_cache(maxsize=4096)
def shift_for_py(length: int) -> int:
    """x^(8 * length) modulo the polynomial: what :func:`crc64_join_py` multiplies by.

    Cached: the parts joined are mostly a stream's compressed nodes, whose lengths repeat
    (each miss costs a few joins)."""
    p = _X0
    n = length
    k = 3  # 8 * length = length * 2^3
    while n:
        if n & 1:
            p = crc64_join_py(p, 0, _X2N[k & 63])  # p * x^(2^k)
        n >>= 1
        k += 1
    return p


def _times_x4(i: int) -> int:
    for _ in range(4):
        i = (i >> 1) ^ _RPOLY if i & 1 else i >> 1
    return i


# Multiplying by x^4 moves the low 4 bits out; what they bring back, for each of their values.
_X4: Final = [_times_x4(i) for i in range(16)]


def crc64_join(crc1: int, crc2: int, shift2: int) -> int:
    """The CRC-64 of A followed by B from A's CRC, B's CRC and B's :func:`shift_for`
    (in C with ``anycrc``, about ten times faster than :func:`crc64_join_py`)."""
    fast = _c_combine
    if fast is not None:
        return fast(crc1, crc2, shift2)
    return crc64_join_py(crc1, crc2, shift2)


def crc64_join_py(crc1: int, crc2: int, shift2: int) -> int:
    """:func:`crc64_join` in pure Python, from B's :func:`shift_for_py`.

    ``shift2 * crc1`` four bits at a time (Horner's rule from the highest power down, a
    16-entry table of ``crc1`` times each 4-bit polynomial): about four times fewer steps
    than :func:`_multiply`'s bit by bit, which a test holds it equal to."""
    b1 = (crc1 >> 1) ^ _RPOLY if crc1 & 1 else crc1 >> 1  # crc1 * x
    b2 = (b1 >> 1) ^ _RPOLY if b1 & 1 else b1 >> 1
    b3 = (b2 >> 1) ^ _RPOLY if b2 & 1 else b2 >> 1
    # A nibble's bit e (from the low end) is the coefficient of x^(3 - e).
    t = [0, b3, b2, b2 ^ b3, b1, b1 ^ b3, b1 ^ b2, b1 ^ b2 ^ b3]
    t += [crc1 ^ x for x in t]
    x4 = _X4
    p = 0
    a = shift2
    for _ in range(16):
        p = (p >> 4) ^ x4[p & 15] ^ t[a & 15]
        a >>= 4
    return p ^ crc2


class RunningCrc:
    """The CRC-64 of all that was appended to a buffer, brought up to date on demand, so
    that a part whose CRC is known (a kept stream node) is joined without reading its
    bytes. ``done`` is how much of the buffer ``crc`` covers."""

    __slots__ = ("crc", "done")

    def __init__(self) -> None:
        self.crc = 0
        self.done = 0

    def update(self, out: bytes | bytearray | memoryview, end: int | None = None) -> int:
        """The CRC of ``out`` up to ``end`` (its length by default), which ``done``
        becomes; only the bytes past ``done`` are read."""
        if end is None:
            end = len(out)
        if end > self.done:
            self.crc = crc64(self.crc, out[self.done:end])
            self.done = end
        return self.crc

    def join(self, crc: int, shift: int, end: int) -> None:
        """Take the bytes from ``done`` to ``end``, whose CRC is ``crc`` and whose length's
        :func:`shift_for` is ``shift``, as read."""
        self.crc = crc64_join(self.crc, crc, shift)
        self.done = end

    def append(self, out: bytearray, part: bytes, crc: int, shift: int) -> None:
        """``out += part``, where ``crc`` and ``shift`` are the part's CRC and
        :func:`shift_for` its length."""
        self.update(out)
        out += part
        self.join(crc, shift, len(out))
