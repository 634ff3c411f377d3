"""Byte sizes of Redis listpack elements, for mirroring when Redis starts a new stream node.

Redis packs stream entries into listpacks and starts a new node once the tail listpack's
byte size plus the new entry's raw field and value lengths reaches
``stream-node-max-bytes``. Which entries share a node decides what approximate trimming
(``~``) removes, so resplite keeps, per node, the exact byte size the equivalent listpack
would have, computed with these functions. Nothing is ever encoded: only sizes.

A listpack element is an encoding header plus payload, followed by a "back-length" of 1-5
bytes. Strings that read as 64-bit integers (by the same rules as Redis's ``string2ll``)
are stored as integers in 1, 2, 3, 4, 5 or 9 bytes.

Invariant: the functions are pure and agree with Redis's listpack encoder.
"""

from __future__ import annotations

from typing import Final

LISTPACK_EMPTY: Final = 7  # 4-byte total size, 2-byte element count, 1-byte end marker
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def _backlen(size: int) -> int:
    if size <= 127:
        return 1
    if size < 16383:
        return 2
    if size < 2097151:
        return 3
    if size < 268435455:
        return 4
    return 5


def int_size(v: int) -> int:
    """Size of an integer element (with its back-length)."""
    if 0 <= v <= 127:
        return 2
    if -4096 <= v <= 4095:
        return 3
    if -32768 <= v <= 32767:
        return 4
    if -8388608 <= v <= 8388607:
        return 5
    if -2147483648 <= v <= 2147483647:
        return 6
    return 10


def as_int64(v: int) -> int:
    """A 64-bit unsigned difference reinterpreted as signed, as C does on assignment."""
    v &= (1 << 64) - 1
    return v - (1 << 64) if v > _INT64_MAX else v


def integer_value(s: bytes | bytearray) -> int | None:
    """The integer a listpack (or an intset) stores ``s`` as, or None if it stays a string."""
    n = len(s)
    if n == 0 or n > 20:
        return None
    first = s[0]
    if n == 1:
        return first - 48 if 48 <= first <= 57 else None
    body = s[1:] if first == 45 else s
    if not body.isdigit() or body[0] == 48:
        return None
    value = int(s)
    if value < _INT64_MIN or value > _INT64_MAX:
        return None
    return value


def stored_as_int(s: bytes | bytearray) -> bool:
    """Whether a listpack stores ``s`` as an integer rather than as a string."""
    return len(s) <= 20 and integer_value(s) is not None


def str_size(s: bytes | bytearray) -> int:
    """Size of the element a listpack stores for the string ``s``."""
    n = len(s)
    if n <= 20 and n and (s[0] <= 57) and (s[0] >= 48 or s[0] == 45):
        value = integer_value(s)
        if value is not None:
            return int_size(value)
    if n < 64:
        return n + 2
    size = n + 2 if n < 4096 else n + 5
    return size + _backlen(size)


def delta_size(delta: int) -> int:
    """Size of the element for an id delta (an unsigned 64-bit difference, stored signed)."""
    return int_size(as_int64(delta))


def entry_size(dms: int, dseq: int, same_fields: bool, nvalues: int, strings: list[bytes]) -> int:
    """Bytes one stream entry adds to its node's listpack.

    ``dms`` and ``dseq`` are the id's differences from the node's master id (``dseq`` as an
    unsigned difference may be negative here); ``same_fields`` entries store only their
    ``nvalues`` values (``strings``), others store their field count and every field and
    value. The entry is its flags, the two deltas, the optional field count, the strings and
    the trailing element count ("lp-count"), each a listpack element. This is the one place
    both of :class:`~resplite.store.stream_node.StreamNode`'s add paths size an entry.
    """
    # flags (always small), then the ms and seq deltas: 2 bytes each in the common case.
    size = 2
    size += 2 if 0 <= dms <= 127 else delta_size(dms)
    size += 2 if 0 <= dseq <= 127 else delta_size(dseq)
    if same_fields:
        size += 2 if nvalues <= 124 else int_size(nvalues + 3)
    else:
        size += int_size(nvalues) + int_size(2 * nvalues + 4)
    for v in strings:
        n = len(v)
        if n < 64:
            # Short text that starts with a non-digit stays a string: header, bytes, back-length.
            c = v[0] if n else 0
            size += n + 2 if c > 57 or (c < 48 and c != 45) or not n else str_size(v)
        else:
            size += str_size(v)
    return size
