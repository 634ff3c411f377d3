"""Redis's intset byte format, as RDB and DUMP payloads carry a set of integers.

An intset is a 32-bit little-endian item width in bytes (2, 4 or 8), a 32-bit item count,
then the items, sorted ascending, each a signed little-endian integer of that width. Redis
widens the whole blob when a value needs more bits and never narrows it, which is why the
width is part of the value (:class:`~resplite.store.set.Set` keeps it the same way).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

WIDTHS: Final = (2, 4, 8)
_RANGES: Final = {2: 1 << 15, 4: 1 << 31, 8: 1 << 63}


class IntsetError(ValueError):
    """A blob that is not a valid intset; the message says why."""


def encode(values: Sequence[int], width: int) -> bytes:
    """The intset blob of ``values`` (already sorted and distinct) at ``width`` bytes each."""
    out = bytearray(width.to_bytes(4, "little") + len(values).to_bytes(4, "little"))
    for v in values:
        out += v.to_bytes(width, "little", signed=True)
    return bytes(out)


def decode(blob: bytes | bytearray | memoryview) -> tuple[list[int], int]:
    """``(values, width)`` of an intset blob; :class:`IntsetError` if it is malformed
    (bad width, a size that disagrees with the count, values not strictly ascending)."""
    data = bytes(blob)
    if len(data) < 8:
        raise IntsetError(f"intset of {len(data)} bytes is shorter than its header")
    width = int.from_bytes(data[0:4], "little")
    count = int.from_bytes(data[4:8], "little")
    if width not in WIDTHS:
        raise IntsetError(f"intset item width {width} is not 2, 4 or 8")
    if len(data) != 8 + width * count:
        raise IntsetError(f"intset of {count} items of {width} bytes has {len(data)} bytes")
    values = [int.from_bytes(data[8 + i * width:8 + (i + 1) * width], "little", signed=True)
              for i in range(count)]
    for i in range(1, count):
        if values[i] <= values[i - 1]:
            raise IntsetError("intset items are not strictly ascending")
    return values, width


def width_for(values: Sequence[int]) -> int:
    """The narrowest width holding every value (2 for an empty set)."""
    for width in WIDTHS:
        limit = _RANGES[width]
        if all(-limit <= v < limit for v in values):
            return width
    raise IntsetError("value outside the signed 64-bit range")
