"""Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO.

Bitmaps are strings. A command that writes bits makes the stored value a
:class:`~resplite.store.string_value.MutableString` (Redis's "unshare", which leaves ``raw``)
and changes it in place, zero-filling it up to the highest byte it touches, so a run of
SETBITs costs O(1) each and never copies the value. Readers take any string as it is
stored. The bit arithmetic lives in :mod:`resplite.algorithms.bitops`.

Checks follow Redis's order, which decides the error a bad call gets: every argument is
parsed before the key is looked up (BITCOUNT and BITPOS since Redis 7.4; 7.0 looked the key
up first and answered 0 or -1 for a missing key whatever the arguments). Offsets are limited
by ``proto-max-bulk-len``: bit ``n`` may be addressed while ``n / 8`` is below it.

A write signals the key only when something changed (a bit flipped, the string grew or was
created), as Redis does; BITFIELD on a missing key may create it without a change to signal
(every operation failing under OVERFLOW FAIL), as Redis does too. BITOP (with Redis 8.2's
DIFF, DIFF1, ANDOR and ONE) stores its result as a new ``raw`` string, or deletes the
destination when every source is empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from resplite.algorithms import bitops
from resplite.algorithms.numbers import parse_int
from resplite.commands.args import int_arg
from resplite.commands.generic import lookup, lookup_read, note_overwrite, type_before
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC, STRING
from resplite.engine.registry import command
from resplite.store.string_value import STRING_TYPES, MutableString, RawString

if TYPE_CHECKING:
    from resplite.engine.client import Client


def _c_word(arg: bytes) -> bytes:
    """An option as ``strcasecmp`` sees it: up to the first NUL, lower case."""
    return arg.split(b"\0", 1)[0].lower()


def _read_string(client: Client, key: bytes) -> bytes | bytearray | None:
    """The string at ``key`` as stored, None when absent; WRONGTYPE for another type (a
    counted read lookup, as Redis's ``lookupKeyRead``)."""
    value = lookup_read(client, key)
    if value is None or isinstance(value, STRING_TYPES):
        return value
    raise CommandError(errors.WRONGTYPE)


def _max_bytes(client: Client) -> int:
    return client.server.config["proto-max-bulk-len"]  # type: ignore[no-any-return]


def bit_offset(client: Client, arg: bytes, bits: int = 0) -> int:
    """A bit offset as Redis's ``getBitOffsetFromArgument`` reads it.

    With ``bits`` (BITFIELD) a ``#n`` offset means ``n * bits``, multiplied in wrapping
    64-bit arithmetic as Redis does. The offset's byte must lie below proto-max-bulk-len.
    """
    use_hash = bits > 0 and arg[:1] == b"#"
    value = parse_int(arg[1:] if use_hash else arg)
    if value is None:
        raise CommandError(errors.BIT_OFFSET)
    if use_hash:
        value = bitops.to_int64(value * bits)
    if value < 0 or (value >> 3) >= _max_bytes(client):
        raise CommandError(errors.BIT_OFFSET)
    return value


def writable_bits(client: Client, key: bytes, max_bit: int) -> tuple[MutableString, bool]:
    """The string at ``key`` made mutable and zero-filled so that ``max_bit`` exists
    (Redis's ``lookupStringForBitCommand``); returns it and whether it was created or grew.
    """
    value = lookup(client, key)
    size = (max_bit >> 3) + 1
    db = client.db
    if value is None:
        buf = MutableString(size)
        db.add(key, buf)
        return buf, True
    if not isinstance(value, STRING_TYPES):
        raise CommandError(errors.WRONGTYPE)
    if isinstance(value, MutableString):
        buf = value
    else:
        buf = MutableString(value)
        db.set(key, buf, keep_ttl=True, looked_up=True)
    return buf, buf.grow_zero(size)


# -- SETBIT / GETBIT ------------------------------------------------------------------------------


@command("setbit", counts_changes=True)
def setbit(client: Client, argv: list[bytes]) -> int:
    key = argv[1]
    offset = bit_offset(client, argv[2])
    on = parse_int(argv[3])
    if on is None or on & ~1:
        raise CommandError(errors.BIT_VALUE)
    buf, grew = writable_bits(client, key, offset)
    byte = offset >> 3
    mask = 0x80 >> (offset & 7)
    old = buf[byte] & mask
    if grew or bool(old) != bool(on):
        buf[byte] = (buf[byte] | mask) if on else (buf[byte] & ~mask)
        client.db.signal_modified(key)
        client.server.notify(STRING, b"setbit", key, client.db_index)
        client.server.dirty += 1  # only a change counts, as in Redis
    return 1 if old else 0


@command("getbit")
def getbit(client: Client, argv: list[bytes]) -> int:
    offset = bit_offset(client, argv[2])
    value = _read_string(client, argv[1])
    byte = offset >> 3
    if value is None or byte >= len(value):
        return 0
    return 1 if value[byte] & (0x80 >> (offset & 7)) else 0


# -- BITCOUNT / BITPOS ----------------------------------------------------------------------------


def _unit_is_bit(arg: bytes) -> bool:
    word = _c_word(arg)
    if word == b"bit":
        return True
    if word == b"byte":
        return False
    raise CommandError(errors.SYNTAX)


def _clamp(start: int, end: int, total: int) -> tuple[int, int]:
    """Redis's range normalisation: negatives count from the end, then clamp to the string."""
    if start < 0:
        start += total
    if end < 0:
        end += total
    start = max(start, 0)
    end = max(end, 0)
    end = min(end, total - 1)
    return start, end


@command("bitcount")
def bitcount(client: Client, argv: list[bytes]) -> int:
    argc = len(argv)
    if argc in (4, 5):
        start = int_arg(argv[2])
        end = int_arg(argv[3])
        is_bit = _unit_is_bit(argv[4]) if argc == 5 else False
        value = _read_string(client, argv[1])
        if value is None or (start < 0 and end < 0 and start > end):
            return 0
        total = len(value) * 8 if is_bit else len(value)
        start, end = _clamp(start, end, total)
        if start > end:
            return 0
        if is_bit:
            return bitops.count_bits(value, start, end)
        return bitops.popcount(value, start, end + 1)
    if argc == 2:
        value = _read_string(client, argv[1])
        return 0 if value is None else bitops.popcount(value)
    raise CommandError(errors.SYNTAX)


@command("bitpos")
def bitpos(client: Client, argv: list[bytes]) -> int:
    argc = len(argv)
    bit = int_arg(argv[2])
    if bit not in (0, 1):
        raise CommandError(errors.BIT_ARGUMENT)
    is_bit = end_given = False
    start = end = 0
    if 4 <= argc <= 6:
        start = int_arg(argv[3])
        if argc == 6:
            is_bit = _unit_is_bit(argv[5])
        if argc >= 5:
            end = int_arg(argv[4])
            end_given = True
        value = _read_string(client, argv[1])
        if value is None:
            return -1 if bit else 0
        total = len(value)
        if not end_given:
            end = total - 1
        if is_bit:
            total *= 8
        start, end = _clamp(start, end, total)
    elif argc == 3:
        value = _read_string(client, argv[1])
        if value is None:
            return -1 if bit else 0
        end = len(value) - 1
    else:
        raise CommandError(errors.SYNTAX)
    if start > end:
        return -1
    first_bit, last_bit = (start, end) if is_bit else (start * 8, end * 8 + 7)
    found = bitops.find_bit(value, bit, first_bit, last_bit)
    if found is not None:
        return found
    if bit == 1 or end_given:
        return -1
    # Looking for a clear bit with no explicit end: the string is taken as zero-padded.
    return (last_bit >> 3) * 8 + 8


# -- BITOP ----------------------------------------------------------------------------------------

_BITOPS = {
    b"and": "and",
    b"or": "or",
    b"xor": "xor",
    b"not": "not",
    # Redis 8.2
    b"diff": "diff",
    b"diff1": "diff1",
    b"andor": "andor",
    b"one": "one",
}


@command("bitop")
def bitop(client: Client, argv: list[bytes]) -> int:
    op = _BITOPS.get(_c_word(argv[1]))
    if op is None:
        raise CommandError(errors.SYNTAX)
    if op == "not" and len(argv) != 4:
        raise CommandError(errors.BITOP_NOT_ONE_KEY)
    if op in ("diff", "diff1", "andor") and len(argv) < 5:
        raise CommandError(errors.bitop_needs_two_keys(op))
    sources = [_read_string(client, key) or b"" for key in argv[3:]]
    result = bitops.combine(op, sources)
    dest = argv[2]
    db = client.db
    if result:
        before = type_before(client, dest)
        value = RawString(result)
        db.set(dest, value)
        db.signal_modified(dest)
        note_overwrite(client, dest, before, value)
        client.server.notify(STRING, b"set", dest, db.index)
    elif db.delete(dest):
        db.signal_modified(dest)
        client.server.notify(GENERIC, b"del", dest, db.index)
    return len(result)


# -- BITFIELD -------------------------------------------------------------------------------------

_GET, _SET, _INCRBY = 0, 1, 2
_OVERFLOWS = {b"wrap": bitops.WRAP, b"sat": bitops.SAT, b"fail": bitops.FAIL}


def _bitfield_type(arg: bytes) -> tuple[bool, int]:
    """(signed, bits) from ``i<bits>`` or ``u<bits>``: i1..i64, u1..u63."""
    text = arg.split(b"\0", 1)[0]  # Redis reads the width as a C string
    sign = text[:1]
    bits = parse_int(text[1:]) if sign in (b"i", b"u") else None
    if bits is None or bits < 1 or bits > (64 if sign == b"i" else 63):
        raise CommandError(errors.BITFIELD_TYPE)
    return sign == b"i", bits


def _bitfield(client: Client, argv: list[bytes], read_only: bool) -> list[int | None]:
    # (opcode, offset, value, overflow, signed, bits) per operation, all parsed first.
    ops: list[tuple[int, int, int, int, bool, int]] = []
    overflow = bitops.WRAP
    writes = False
    highest = 0
    j, argc = 2, len(argv)
    while j < argc:
        remaining = argc - j - 1
        name = _c_word(argv[j])
        if name == b"get" and remaining >= 2:
            opcode = _GET
        elif name == b"set" and remaining >= 3:
            opcode = _SET
        elif name == b"incrby" and remaining >= 3:
            opcode = _INCRBY
        elif name == b"overflow" and remaining >= 1:
            kind = _OVERFLOWS.get(_c_word(argv[j + 1]))
            if kind is None:
                raise CommandError(errors.BITFIELD_OVERFLOW)
            overflow = kind
            j += 2
            continue
        else:
            raise CommandError(errors.SYNTAX)
        signed, bits = _bitfield_type(argv[j + 1])
        offset = bit_offset(client, argv[j + 2], bits)
        value = 0
        if opcode != _GET:
            writes = True
            highest = max(highest, offset + bits - 1)
            value = int_arg(argv[j + 3])
        ops.append((opcode, offset, value, overflow, signed, bits))
        j += 3 if opcode == _GET else 4

    key = argv[1]
    buf: bytes | bytearray
    changes = 0
    grew = False
    if not writes:
        stored = _read_string(client, key)
        buf = b"" if stored is None else stored
    else:
        if read_only:
            raise CommandError(errors.BITFIELD_RO_GET_ONLY)
        buf, grew = writable_bits(client, key, highest)

    replies: list[int | None] = []
    for opcode, offset, value, kind, signed, bits in ops:
        if opcode == _GET:
            read = bitops.get_signed if signed else bitops.get_unsigned
            replies.append(read(buf, offset, bits))
            continue
        assert isinstance(buf, bytearray)
        if signed:
            old = bitops.get_signed(buf, offset, bits)
            if opcode == _INCRBY:
                direction, limit = bitops.signed_overflow(old, value, bits, kind)
                new = limit if direction else old + value
                reply = new
            else:
                direction, limit = bitops.signed_overflow(value, 0, bits, kind)
                new = limit if direction else value
                reply = old
        else:
            old = bitops.get_unsigned(buf, offset, bits)
            if opcode == _INCRBY:
                direction, limit = bitops.unsigned_overflow(old, value, bits, kind)
                new = limit if direction else old + value
                reply = new
            else:
                as_unsigned = value & ((1 << 64) - 1)
                direction, limit = bitops.unsigned_overflow(as_unsigned, 0, bits, kind)
                new = limit if direction else as_unsigned
                reply = old
        if direction and kind == bitops.FAIL:
            replies.append(None)
            continue
        replies.append(reply)
        bitops.set_bits(buf, offset, bits, new)
        if grew or old != new:
            changes += 1
    if changes:
        client.db.signal_modified(key)
        client.server.notify(STRING, b"setbit", key, client.db_index)
        client.server.dirty += changes  # each write that changed something, as in Redis
    return replies


@command("bitfield", counts_changes=True)
def bitfield(client: Client, argv: list[bytes]) -> list[int | None]:
    return _bitfield(client, argv, read_only=False)


@command("bitfield_ro")
def bitfield_ro(client: Client, argv: list[bytes]) -> list[int | None]:
    return _bitfield(client, argv, read_only=True)
