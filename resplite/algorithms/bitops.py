"""Bit-level algorithms on byte strings, with Redis's bit order and integer rules.

Redis numbers the bits of a string from the most significant bit of its first byte: bit 0
is ``0x80`` of byte 0, bit 7 is ``0x01`` of byte 0, bit 8 is ``0x80`` of byte 1. Everything
here follows that order. Counting and searching run in C through ``int.bit_count``,
``bytes.translate`` and regular expressions over the buffer, so their cost is linear in the
bytes of the range with a small constant, never a Python loop per byte.

BITFIELD's integers are read and written as big-endian bit runs of 1..64 bits at any bit
offset; :func:`signed_overflow` and :func:`unsigned_overflow` reproduce Redis's overflow
checks exactly, including the cases where its 64-bit arithmetic wraps (``SET i8`` of
-2**63 saturates to the maximum, as Redis's does).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

INT64_MAX: Final = (1 << 63) - 1
INT64_MIN: Final = -(1 << 63)
_M64: Final = (1 << 64) - 1

WRAP: Final = 0
SAT: Final = 1
FAIL: Final = 2

# Counting is done in slices of this many bytes, so that a 512 MB value never becomes one
# 4-gigabit integer at once.
_CHUNK = 1 << 20

_NOT_ZERO = re.compile(rb"[^\x00]")
_NOT_ONES = re.compile(rb"[^\xff]")


def to_int64(value: int) -> int:
    """``value`` reduced to a signed 64-bit integer, as C's wrapping arithmetic leaves it."""
    value &= _M64
    return value - (1 << 64) if value > INT64_MAX else value


# -- counting -------------------------------------------------------------------------------


def popcount(buf: bytes | bytearray, start: int = 0, end: int | None = None) -> int:
    """Set bits in ``buf[start:end]``."""
    if end is None:
        end = len(buf)
    view = memoryview(buf)
    total = 0
    for i in range(start, end, _CHUNK):
        total += int.from_bytes(view[i : min(i + _CHUNK, end)], "big").bit_count()
    return total


def count_bits(buf: bytes | bytearray, first_bit: int, last_bit: int) -> int:
    """Set bits between bit positions ``first_bit`` and ``last_bit``, both included."""
    first_byte, last_byte = first_bit >> 3, last_bit >> 3
    total = popcount(buf, first_byte, last_byte + 1)
    head = first_bit & 7
    if head:
        total -= (buf[first_byte] >> (8 - head)).bit_count()
    tail = 7 - (last_bit & 7)
    if tail:
        total -= (buf[last_byte] & ((1 << tail) - 1)).bit_count()
    return total


# -- searching ------------------------------------------------------------------------------


def find_bit(buf: bytes | bytearray, bit: int, first_bit: int, last_bit: int) -> int | None:
    """The first position between ``first_bit`` and ``last_bit`` (both included) whose bit
    equals ``bit``, or None."""
    first_byte, last_byte = first_bit >> 3, last_bit >> 3
    # The bits of the edge bytes that lie outside the range.
    head_out = (0xFF00 >> (first_bit & 7)) & 0xFF
    tail_out = (1 << (7 - (last_bit & 7))) - 1

    def edge(pos: int, outside: int) -> int | None:
        byte = buf[pos]
        byte = (byte & ~outside) if bit else (byte | outside)
        found = _first_in_byte(byte, bit)
        return None if found is None else pos * 8 + found

    if first_byte == last_byte:
        return edge(first_byte, head_out | tail_out)
    found = edge(first_byte, head_out)
    if found is not None:
        return found
    if last_byte - first_byte > 1:
        # The bytes strictly between the edges, searched in C.
        m = (_NOT_ZERO if bit else _NOT_ONES).search(buf, first_byte + 1, last_byte)
        if m is not None:
            at = m.start()
            inner = _first_in_byte(buf[at], bit)
            assert inner is not None
            return at * 8 + inner
    return edge(last_byte, tail_out)


def _first_in_byte(byte: int, bit: int) -> int | None:
    byte &= 0xFF
    if not bit:
        byte ^= 0xFF
    return 8 - byte.bit_length() if byte else None


# -- BITOP ----------------------------------------------------------------------------------


def combine(op: str, sources: Sequence[bytes | bytearray]) -> bytes:
    """BITOP ``op`` (``and``, ``or``, ``xor``, ``not``, ``diff``, ``diff1``, ``andor``,
    ``one``) of ``sources``, each zero-padded to the longest; ``b""`` when all are empty.

    DIFF is X and not (Y1 or Y2 ...), DIFF1 (not X) and (Y1 or ...), ANDOR X and (Y1 or ...)
    and ONE keeps the bits set in exactly one source (Redis 8.2).
    """
    size = max((len(s) for s in sources), default=0)
    if not size:
        return b""
    mask = (1 << (size * 8)) - 1

    def num(s: bytes | bytearray) -> int:
        # Left-aligned: a shorter string is zero-padded on the right.
        return int.from_bytes(s, "big") << ((size - len(s)) * 8)

    values = [num(s) for s in sources]
    first = values[0]
    if op == "not":
        result = ~first & mask
    elif op == "and":
        result = first
        for v in values[1:]:
            result &= v
    elif op == "or":
        result = first
        for v in values[1:]:
            result |= v
    elif op == "xor":
        result = first
        for v in values[1:]:
            result ^= v
    elif op == "one":
        result, seen_twice = first, 0
        for v in values[1:]:
            seen_twice |= result & v
            result ^= v
        result &= ~seen_twice
    else:
        others = 0
        for v in values[1:]:
            others |= v
        if op == "diff":
            result = first & ~others
        elif op == "diff1":
            result = ~first & others & mask
        elif op == "andor":
            result = first & others
        else:
            raise ValueError(op)
    return result.to_bytes(size, "big")


# -- BITFIELD -------------------------------------------------------------------------------


def get_unsigned(buf: bytes | bytearray, offset: int, bits: int) -> int:
    """The ``bits``-bit unsigned integer at bit ``offset``; bytes past the end read as 0."""
    first = offset >> 3
    last = (offset + bits - 1) >> 3
    chunk = bytes(buf[first : last + 1])
    chunk += bytes(last + 1 - first - len(chunk))
    whole = int.from_bytes(chunk, "big")
    shift = (last + 1) * 8 - (offset + bits)
    return (whole >> shift) & ((1 << bits) - 1)


def get_signed(buf: bytes | bytearray, offset: int, bits: int) -> int:
    value = get_unsigned(buf, offset, bits)
    if value >> (bits - 1):
        value -= 1 << bits
    return value


def set_bits(buf: bytearray, offset: int, bits: int, value: int) -> None:
    """Write the low ``bits`` bits of ``value`` at bit ``offset`` (the buffer is long enough)."""
    first = offset >> 3
    last = (offset + bits - 1) >> 3
    width = (last + 1 - first) * 8
    shift = width - (offset - first * 8) - bits
    field = ((1 << bits) - 1) << shift
    whole = int.from_bytes(buf[first : last + 1], "big")
    whole = (whole & ~field) | ((value << shift) & field)
    buf[first : last + 1] = whole.to_bytes(last + 1 - first, "big")


def unsigned_overflow(value: int, incr: int, bits: int, owtype: int) -> tuple[int, int]:
    """Redis's unsigned overflow check of ``value + incr`` in ``bits`` bits.

    ``value`` is an unsigned 64-bit reading (a SET value arrives as its two's complement).
    Returns (direction, limit): direction 0 (no overflow), 1 (above the maximum) or -1
    (below zero); limit the value WRAP or SAT leaves (meaningless for FAIL or direction 0).
    """
    top = _M64 if bits == 64 else (1 << bits) - 1
    max_incr = to_int64(top - value)
    min_incr = to_int64(-value)
    if value > top or (incr > 0 and incr > max_incr):
        direction, sat = 1, top
    elif incr < 0 and incr < min_incr:
        direction, sat = -1, 0
    else:
        return 0, 0
    if owtype == WRAP:
        return direction, ((value + incr) & _M64) & top
    return direction, sat


def signed_overflow(value: int, incr: int, bits: int, owtype: int) -> tuple[int, int]:
    """Redis's signed overflow check of ``value + incr`` in ``bits`` bits (see
    :func:`unsigned_overflow` for the result)."""
    top = INT64_MAX if bits == 64 else (1 << (bits - 1)) - 1
    bottom = -top - 1
    # Redis computes these in 64-bit arithmetic that wraps; the wrapped values decide.
    max_incr = to_int64(top - value)
    min_incr = to_int64(bottom - value)
    if (
        value > top
        or (bits != 64 and incr > max_incr)
        or (value >= 0 and incr > 0 and incr > max_incr)
    ):
        direction, sat = 1, top
    elif (
        value < bottom
        or (bits != 64 and incr < min_incr)
        or (value < 0 and incr < 0 and incr < min_incr)
    ):
        direction, sat = -1, bottom
    else:
        return 0, 0
    if owtype == WRAP:
        total = (value + incr) & _M64
        if bits < 64:
            total &= (1 << bits) - 1
            if total >> (bits - 1):
                total -= 1 << bits
            return direction, total
        return direction, to_int64(total)
    return direction, sat
