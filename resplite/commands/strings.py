"""String commands: GET, SET and its variants, the INCR family (INCREX included), APPEND, ranges,
MGET/MSET/MSETEX, compare-and-delete (DELEX) and DIGEST, LCS.

GET and plain ``SET key value`` are the hot path redis-benchmark measures: they do one
keyspace call, one signal and return a constant or the stored bytes, with no cursor object.

Values are stored as the client sent them (``bytes``), except where Redis's encoding would
not follow from the bytes (APPEND and SETRANGE leave ``raw``, INCRBYFLOAT never leaves
``int``): those store a marker subclass from :mod:`resplite.store.string_value`, so OBJECT
ENCODING answers as Redis does. A string the bit commands made mutable
(:class:`~resplite.store.string_value.MutableString`) is grown in place by APPEND and SETRANGE
and copied into every reply. Integer commands parse with Redis's ``string2ll`` rules and
refuse to overflow a signed 64-bit value; INCRBYFLOAT computes in 80-bit extended precision
(:mod:`resplite.algorithms.longdouble`). String growth is bounded by ``proto-max-bulk-len``.

SET's compare-and-set conditions (IFEQ / IFNE on the value, IFDEQ / IFDNE on its
:func:`digest`, Redis 8.4) exclude NX, XX and one another; IFEQ and IFDEQ never create a key,
IFNE and IFDNE do, and a key of another type is WRONGTYPE for all four.

Checks come in Redis's order, which decides which error wins: option syntax, then argument
values that need no key, then the key lookup (WRONGTYPE), then the values that do.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

import xxhash

from resplite.algorithms import longdouble
from resplite.algorithms.lcs import lcs_length, lcs_walk
from resplite.commands.args import INT64_MAX, INT64_MIN, int_arg, parse_int
from resplite.commands.generic import lookup, lookup_read, note_overwrite, type_before
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC, STRING
from resplite.engine.registry import command
from resplite.protocol.replies import OK, Double
from resplite.store.string_value import (
    STRING_TYPES,
    MutableString,
    RawString,
    TextString,
    frozen,
)

if TYPE_CHECKING:
    from resplite.engine.client import Client


# MSETEX's numkeys is a C int in Redis.
_INT32_MAX = 2**31 - 1


def _string(value: Any) -> bytes | None:
    """A looked-up value as immutable bytes (a copy of a mutable string), None when absent;
    WRONGTYPE for another type."""
    if value is None or isinstance(value, bytes):
        return value
    if type(value) is MutableString:
        return bytes(value)
    raise CommandError(errors.WRONGTYPE)


def _stored_string(value: Any) -> bytes | MutableString | None:
    """A looked-up string as stored (no copy: for reads that take a part or a length)."""
    if value is None or isinstance(value, STRING_TYPES):
        return value
    raise CommandError(errors.WRONGTYPE)


def _max_len(client: Client) -> int:
    return client.server.config["proto-max-bulk-len"]  # type: ignore[no-any-return]


# -- GET / SET ----------------------------------------------------------------------------------


@command("get")
def get(client: Client, argv: list[bytes]) -> Any:
    # lookup_read, spelled out: GET is the hottest read.
    value = client.db.read(argv[1], not client.no_touch)
    if value is None or type(value) is bytes or isinstance(value, bytes):
        return value
    if type(value) is MutableString:
        return bytes(value)
    raise CommandError(errors.WRONGTYPE)


# SET / GETEX / MSETEX option flags, as Redis names them.
_NX, _XX, _GET, _KEEPTTL, _EX, _PX, _EXAT, _PXAT, _PERSIST = (1 << i for i in range(9))
# SET's compare-and-set conditions (Redis 8.4).
_IFEQ, _IFNE, _IFDEQ, _IFDNE = (1 << i for i in range(9, 13))
_EXPIRY = _EX | _PX | _EXAT | _PXAT
_COMPARE = _IFEQ | _IFNE | _IFDEQ | _IFDNE
_CONDITION = _NX | _XX | _COMPARE
# What an option's argument is.
_NO_VALUE, _EXPIRE_VALUE, _COMPARE_VALUE = 0, 1, 2
# For each option: the flag it sets, the flags it cannot follow and what its argument is.
# The conditions exclude one another and the expirations likewise; a condition or an
# expiry repeated is accepted, the last argument winning (as NX NX and EX 1 EX 2 are).
_SET_OPTIONS: dict[bytes, tuple[int, int, int]] = {
    b"NX": (_NX, _CONDITION & ~_NX, _NO_VALUE),
    b"XX": (_XX, _CONDITION & ~_XX, _NO_VALUE),
    b"GET": (_GET, 0, _NO_VALUE),
    b"KEEPTTL": (_KEEPTTL, _EXPIRY | _PERSIST, _NO_VALUE),
    b"EX": (_EX, _KEEPTTL | _PERSIST | _EXAT | _PX | _PXAT, _EXPIRE_VALUE),
    b"PX": (_PX, _KEEPTTL | _PERSIST | _EX | _EXAT | _PXAT, _EXPIRE_VALUE),
    b"EXAT": (_EXAT, _KEEPTTL | _PERSIST | _EX | _PX | _PXAT, _EXPIRE_VALUE),
    b"PXAT": (_PXAT, _KEEPTTL | _PERSIST | _EX | _EXAT | _PX, _EXPIRE_VALUE),
    b"IFEQ": (_IFEQ, _CONDITION & ~_IFEQ, _COMPARE_VALUE),
    b"IFNE": (_IFNE, _CONDITION & ~_IFNE, _COMPARE_VALUE),
    b"IFDEQ": (_IFDEQ, _CONDITION & ~_IFDEQ, _COMPARE_VALUE),
    b"IFDNE": (_IFDNE, _CONDITION & ~_IFDNE, _COMPARE_VALUE),
}
_GETEX_OPTIONS: dict[bytes, tuple[int, int, int]] = {
    b"PERSIST": (_PERSIST, _EXPIRY | _KEEPTTL, _NO_VALUE),
    **{name: _SET_OPTIONS[name] for name in (b"EX", b"PX", b"EXAT", b"PXAT")},
}
# MSETEX takes SET's existence conditions and expirations, not GET nor the comparisons.
_MSETEX_OPTIONS: dict[bytes, tuple[int, int, int]] = {
    name: _SET_OPTIONS[name]
    for name in (b"NX", b"XX", b"KEEPTTL", b"EX", b"PX", b"EXAT", b"PXAT")
}


def _parse_options(
    argv: list[bytes], table: dict[bytes, tuple[int, int, int]], start: int
) -> tuple[int, bytes | None, bytes | None]:
    """The option flags from ``argv[start:]``, the expiry argument and the comparison
    argument (None when absent); a syntax error for anything else."""
    flags = 0
    expire: bytes | None = None
    compare: bytes | None = None
    i, n = start, len(argv)
    while i < n:
        option = table.get(argv[i].upper())
        if option is None:
            raise CommandError(errors.SYNTAX)
        flag, conflicts, kind = option
        if flags & conflicts or (kind and i + 1 >= n):
            raise CommandError(errors.SYNTAX)
        flags |= flag
        if kind:
            i += 1
            if kind == _EXPIRE_VALUE:
                expire = argv[i]
            else:
                compare = argv[i]
        i += 1
    return flags, expire, compare


def digest(value: bytes) -> bytes:
    """Redis's DIGEST of a string: its XXH3 64-bit hash as 16 lower-case hex digits, zero
    padded (Redis 8.4 formats it with PRIx64 and pads since the first patch release)."""
    return xxhash.xxh3_64_hexdigest(value).encode()


def _checked_digest(arg: bytes) -> bytes:
    """An IFDEQ / IFDNE argument, lower-cased for comparison (Redis compares digests
    without regard to case); an error unless it is 16 bytes long (Redis's
    ``validateHexDigest`` checks the length alone: 16 other bytes just never match)."""
    if len(arg) != 16:
        raise CommandError(errors.DIGEST_LENGTH)
    return arg.lower()


def _compare(value: bytes, flags: int, against: bytes) -> bool:
    """Whether the comparison condition in ``flags`` holds for the present string
    ``value``; a digest argument is checked first (the digest error)."""
    if flags & (_IFEQ | _IFNE):
        equal = value == against
    else:
        equal = digest(value) == _checked_digest(against)
    return equal if flags & (_IFEQ | _IFDEQ) else not equal


def _expire_at(client: Client, flags: int, arg: bytes | None, fullname: str) -> int | None:
    """The absolute expiry in ms an EX/PX/EXAT/PXAT argument asks for (None without one)."""
    if arg is None:
        return None
    ms = parse_int(arg)
    if ms is None:
        raise CommandError(errors.NOT_INTEGER)
    seconds = flags & (_EX | _EXAT)
    if ms <= 0 or (seconds and ms > INT64_MAX // 1000):
        raise CommandError(errors.invalid_expire(fullname))
    if seconds:
        ms *= 1000
    if flags & (_EX | _PX):
        ms += client.server.clock.time_ms()
        if ms > INT64_MAX:
            raise CommandError(errors.invalid_expire(fullname))
    return ms


@command("set", counts_changes=True)
def set_(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 3:
        db = client.db
        key = argv[1]
        server = client.server
        if server.notify_flags:
            before = type_before(client, key)
            db.set_signalled(key, argv[2])
            server.dirty += 1
            note_overwrite(client, key, before, argv[2])
            server.notify(STRING, b"set", key, db.index)
            return OK
        db.set_signalled(key, argv[2])
        server.dirty += 1
        return OK
    flags, expire_arg, compare = _parse_options(argv, _SET_OPTIONS, 3)
    when = _expire_at(client, flags, expire_arg, "set")
    key = argv[1]
    old = _string(lookup_read(client, key)) if flags & _GET else None
    current = lookup(client, key)
    if flags & _CONDITION:
        if current is None:
            # A missing key: only NX and the "not equal" comparisons create it.
            proceed = bool(flags & (_NX | _IFNE | _IFDNE))
        elif flags & _COMPARE:
            assert compare is not None
            value = _string(current)  # WRONGTYPE for another type
            assert value is not None
            # A digest is checked only when there is a value to compare it with: on a
            # missing key IFDEQ answers null and IFDNE sets, whatever the argument.
            proceed = _compare(value, flags, compare)
        else:
            proceed = not flags & _NX
        if not proceed:
            return old
    db = client.db
    before = type_before(client, key)
    db.set(key, argv[2], keep_ttl=bool(flags & _KEEPTTL), looked_up=True)
    if when is not None:
        db.set_expire(key, when)
    if flags & _COMPARE or (when is not None and not flags & _PXAT):
        # Logged as the plain SET it amounted to, a relative expiry made absolute (as Redis
        # rewrites it to ``SET key value PXAT ms``): its replay needs neither the old
        # value nor the clock.
        form = [b"SET", key, argv[2]]
        if when is not None:
            form.append(b"PXAT")
            form.append(b"%d" % when)
        elif flags & _KEEPTTL:
            form.append(b"KEEPTTL")
        client.propagate_as(form)
    db.signal_modified(key)
    server = client.server
    server.dirty += 1
    notify = server.notify
    note_overwrite(client, key, before, argv[2])
    notify(STRING, b"set", key, db.index)
    if when is not None:
        notify(GENERIC, b"expire", key, db.index)
    return old if flags & _GET else OK


@command("setnx")
def setnx(client: Client, argv: list[bytes]) -> int:
    key = argv[1]
    if lookup(client, key) is not None:
        return 0
    db = client.db
    db.set(key, argv[2], looked_up=True)
    db.signal_modified(key)
    client.server.notify(STRING, b"set", key, db.index)
    return 1


def _set_expiring(client: Client, argv: list[bytes], flag: int) -> Any:
    fullname = argv[0].decode("latin-1").lower()
    when = _expire_at(client, flag, argv[2], fullname)
    assert when is not None
    key = argv[1]
    db = client.db
    before = type_before(client, key)
    db.set(key, argv[3])
    db.set_expire(key, when)
    client.propagate_as([b"SET", key, argv[3], b"PXAT", b"%d" % when])
    db.signal_modified(key)
    note_overwrite(client, key, before, argv[3])
    client.server.notify(STRING, b"set", key, db.index)
    client.server.notify(GENERIC, b"expire", key, db.index)
    return OK


@command("setex")
def setex(client: Client, argv: list[bytes]) -> Any:
    return _set_expiring(client, argv, _EX)


@command("psetex")
def psetex(client: Client, argv: list[bytes]) -> Any:
    return _set_expiring(client, argv, _PX)


@command("getset")
def getset(client: Client, argv: list[bytes]) -> bytes | None:
    key = argv[1]
    old = _string(lookup_read(client, key))
    db = client.db
    before = type_before(client, key)
    db.set(key, argv[2], looked_up=True)
    client.propagate_as([b"SET", key, argv[2]])  # as Redis logs it
    db.signal_modified(key)
    note_overwrite(client, key, before, argv[2])
    client.server.notify(STRING, b"set", key, db.index)
    return old


@command("getdel", counts_changes=True)
def getdel(client: Client, argv: list[bytes]) -> bytes | None:
    key = argv[1]
    value = _string(lookup_read(client, key))
    if value is not None:
        db = client.db
        db.delete(key)
        db.signal_modified(key)
        client.propagate_as([b"DEL", key])  # as Redis logs it
        server = client.server
        server.dirty += 1
        server.notify(GENERIC, b"del", key, db.index)
    return value


@command("getex", counts_changes=True)
def getex(client: Client, argv: list[bytes]) -> bytes | None:
    """GETEX: never logged as sent (its expiry may be relative), but as the change it made,
    as Redis propagates it: DEL (an absolute time already past), PEXPIREAT or PERSIST;
    nothing when it changed nothing."""
    flags, expire_arg, _ = _parse_options(argv, _GETEX_OPTIONS, 2)
    key = argv[1]
    value = _string(lookup_read(client, key))
    if value is None:
        return None
    when = _expire_at(client, flags, expire_arg, "getex")
    db = client.db
    server = client.server
    notify = server.notify
    if flags & (_EXAT | _PXAT) and when is not None and when <= server.clock.time_ms():
        db.delete(key)
        db.signal_modified(key)
        client.propagate_as([b"DEL", key])
        server.dirty += 1
        notify(GENERIC, b"del", key, db.index)
    elif when is not None:
        db.set_expire(key, when)
        db.signal_modified(key)
        client.propagate_as([b"PEXPIREAT", key, b"%d" % when])
        server.dirty += 1
        notify(GENERIC, b"expire", key, db.index)
    elif flags & _PERSIST and db.persist(key):
        db.signal_modified(key)
        client.propagate_as([b"PERSIST", key])
        server.dirty += 1
        notify(GENERIC, b"persist", key, db.index)
    return value


@command("mget")
def mget(client: Client, argv: list[bytes]) -> list[bytes | None]:
    out: list[bytes | None] = []
    for key in argv[1:]:
        value = lookup_read(client, key)
        out.append(frozen(value) if isinstance(value, STRING_TYPES) else None)
    return out


@command("mset")
def mset(client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2 == 0:
        raise CommandError(errors.wrong_arity("mset"))
    db = client.db
    notify = client.server.notify
    for i in range(1, len(argv), 2):
        before = type_before(client, argv[i])
        db.set(argv[i], argv[i + 1])
        db.signal_modified(argv[i])
        note_overwrite(client, argv[i], before, argv[i + 1])
        notify(STRING, b"set", argv[i], db.index)
    return OK


@command("msetnx")
def msetnx(client: Client, argv: list[bytes]) -> int:
    if len(argv) % 2 == 0:
        raise CommandError(errors.wrong_arity("msetnx"))
    for i in range(1, len(argv), 2):
        if lookup(client, argv[i]) is not None:
            return 0
    db = client.db
    notify = client.server.notify
    for i in range(1, len(argv), 2):
        db.set(argv[i], argv[i + 1], looked_up=True)
        db.signal_modified(argv[i])
        notify(STRING, b"set", argv[i], db.index)
    return 1


@command("msetex", counts_changes=True)
def msetex(client: Client, argv: list[bytes]) -> int:
    """MSETEX numkeys key value [key value ...] [NX | XX] [EX | PX | EXAT | PXAT | KEEPTTL]
    (Redis 8.4): 1 when every pair was set, 0 when NX or XX refused them all."""
    numkeys = parse_int(argv[1])
    if numkeys is None or numkeys < 1 or numkeys > _INT32_MAX:
        raise CommandError(errors.INVALID_NUMKEYS)
    end = 2 + 2 * numkeys
    if end > len(argv):
        raise CommandError(errors.KEY_VALUE_PAIRS)
    flags, expire_arg, _ = _parse_options(argv, _MSETEX_OPTIONS, end)
    when = _expire_at(client, flags, expire_arg, "msetex")
    if flags & (_NX | _XX):
        want = not flags & _NX
        for i in range(2, end, 2):
            if (lookup(client, argv[i]) is not None) != want:
                return 0
    db = client.db
    server = client.server
    notify = server.notify
    keep_ttl = bool(flags & _KEEPTTL)
    if when is not None and not flags & _PXAT:
        # The same absolute time for every key, whenever the log is replayed.
        condition = [b"NX"] if flags & _NX else [b"XX"] if flags & _XX else []
        client.propagate_as([*argv[:end], *condition, b"PXAT", b"%d" % when])
    for i in range(2, end, 2):
        key = argv[i]
        before = type_before(client, key)
        db.set(key, argv[i + 1], keep_ttl=keep_ttl)
        if when is not None:
            db.set_expire(key, when)
        db.signal_modified(key)
        note_overwrite(client, key, before, argv[i + 1])
        notify(STRING, b"set", key, db.index)
        if when is not None:
            notify(GENERIC, b"expire", key, db.index)
    server.dirty += numkeys
    return 1


# -- counters -----------------------------------------------------------------------------------


def _incr_by(client: Client, key: bytes, delta: int) -> int:
    current = _string(lookup(client, key))
    if current is None:
        value = 0
    else:
        parsed = parse_int(current)
        if parsed is None:
            raise CommandError(errors.NOT_INTEGER)
        value = parsed
    result = value + delta
    if result > INT64_MAX or result < INT64_MIN:
        raise CommandError(errors.OVERFLOW)
    db = client.db
    db.set(key, b"%d" % result, keep_ttl=True, looked_up=True)
    db.signal_modified(key)
    client.server.notify(STRING, b"incrby", key, db.index)
    return result


@command("incr")
def incr(client: Client, argv: list[bytes]) -> int:
    return _incr_by(client, argv[1], 1)


@command("decr")
def decr(client: Client, argv: list[bytes]) -> int:
    return _incr_by(client, argv[1], -1)


@command("incrby")
def incrby(client: Client, argv: list[bytes]) -> int:
    return _incr_by(client, argv[1], int_arg(argv[2]))


@command("decrby")
def decrby(client: Client, argv: list[bytes]) -> int:
    delta = int_arg(argv[2])
    if delta == INT64_MIN:
        raise CommandError(errors.DECREMENT_OVERFLOW)
    return _incr_by(client, argv[1], -delta)


@command("incrbyfloat")
def incrbyfloat(client: Client, argv: list[bytes]) -> bytes:
    key = argv[1]
    current = _string(lookup(client, key))
    value = longdouble.parse(current) if current is not None else longdouble.ZERO
    increment = longdouble.parse(argv[2])
    if value is None or increment is None:
        raise CommandError(errors.NOT_FLOAT)
    try:
        result = longdouble.add(value, increment)
    except longdouble.Overflow:
        raise CommandError(errors.INCR_NAN_OR_INF) from None
    text = TextString(longdouble.format_human(result))
    db = client.db
    db.set(key, text, keep_ttl=True, looked_up=True)
    # Logged as the value it left, as Redis does: a replay elsewhere must not depend on
    # how that machine rounds the addition.
    client.propagate_as([b"SET", key, bytes(text), b"KEEPTTL"])
    db.signal_modified(key)
    client.server.notify(STRING, b"incrbyfloat", key, db.index)
    return bytes(text)


# The largest finite x87 extended value (LDBL_MAX): INCREX BYFLOAT's default bounds. The
# power is a Fraction's, made at import: mypyc folds an int power of two constants, and one
# of 4,914 digits is past Python's int-to-text limit, on which its compiler crashes.
_LDBL_MAX = Fraction((1 << 64) - 1) * Fraction(2) ** (16384 - 64)
_INCREX_EXPIRY = {b"EX": _EX, b"PX": _PX, b"EXAT": _EXAT, b"PXAT": _PXAT}


@command("increx", counts_changes=True)
def increx(client: Client, argv: list[bytes]) -> list[Any]:
    """INCREX (Redis 8.8): INCRBY / INCRBYFLOAT within bounds, with an expiry.

    Options in any order: BYINT n | BYFLOAT x (1 in integer mode without either), LBOUND,
    UBOUND, SATURATE, EX | PX | EXAT | PXAT | PERSIST, ENX (only with a time, never with
    PERSIST). A result outside the bounds (the type's range without them) changes nothing
    and answers ``[current, 0]``; with SATURATE it is clamped to the bound. The reply is
    ``[new value, increment applied]``: integers, or in BYFLOAT mode long doubles printed
    as INCRBYFLOAT prints them (bulk strings in RESP2, doubles in RESP3). Without an expiry
    option the key keeps its TTL; ENX sets the time only on a key without one."""
    key = argv[1]
    by: bytes | None = None
    floating = False
    lower_arg: bytes | None = None
    upper_arg: bytes | None = None
    saturate = enx = persist = False
    expiry_flag = 0
    expiry_arg: bytes | None = None
    i, n = 2, len(argv)
    while i < n:
        option = argv[i].upper()
        has_value = i + 1 < n
        if option in (b"BYINT", b"BYFLOAT") and has_value and by is None:
            by, floating = argv[i + 1], option == b"BYFLOAT"
            i += 2
        elif option == b"LBOUND" and has_value and lower_arg is None:
            lower_arg = argv[i + 1]
            i += 2
        elif option == b"UBOUND" and has_value and upper_arg is None:
            upper_arg = argv[i + 1]
            i += 2
        elif option == b"SATURATE":
            saturate = True
            i += 1
        elif option == b"ENX":
            enx = True
            i += 1
        elif option == b"PERSIST" and not persist and not expiry_flag:
            persist = True
            i += 1
        elif option in _INCREX_EXPIRY and has_value and not persist and not expiry_flag:
            expiry_flag, expiry_arg = _INCREX_EXPIRY[option], argv[i + 1]
            i += 2
        else:
            raise CommandError(errors.SYNTAX)
    if enx and not expiry_flag:
        raise CommandError(errors.SYNTAX)  # ENX needs a time, and PERSIST has none
    when = _expire_at(client, expiry_flag, expiry_arg, "increx")
    # The arguments first, then the key (WRONGTYPE), then its value.
    if floating:
        bounds: tuple[Any, Any, Any] = _increx_float_args(by, lower_arg, upper_arg)
    else:
        bounds = _increx_int_args(by, lower_arg, upper_arg)
    current_value = _string(lookup(client, key))
    if floating:
        result = _increx_float(current_value, *bounds, saturate)
    else:
        result = _increx_int(current_value, *bounds, saturate)
    if result is None:  # out of bounds: nothing changes
        return [_increx_reply(current_value, floating), _increx_zero(floating)]
    new_text, delta = result
    db = client.db
    server = client.server
    db.set(key, TextString(new_text) if floating else new_text, keep_ttl=True, looked_up=True)
    server.dirty += 1
    db.signal_modified(key)
    server.notify(STRING, b"incrbyfloat" if floating else b"incrby", key, db.index)
    if when is not None and not (enx and db.expires.get(key) is not None):
        if when <= server.clock.time_ms():
            # An absolute time already past: the key goes at once, as SET ... PXAT would.
            db.delete(key)
            db.signal_modified(key)
            server.notify(GENERIC, b"del", key, db.index)
        else:
            db.set_expire(key, when)
            db.signal_modified(key)
            server.notify(GENERIC, b"expire", key, db.index)
    elif persist and db.persist(key):
        db.signal_modified(key)
        server.notify(GENERIC, b"persist", key, db.index)
    # Logged as the state it left (its expiry may be relative): the value with its
    # absolute expiry, or DEL when a time already past removed the key.
    if key not in db.data:
        client.propagate_as([b"DEL", key])
    else:
        expiry = db.expires.get(key)
        client.propagate_as([b"SET", key, new_text] if expiry is None
                            else [b"SET", key, new_text, b"PXAT", b"%d" % expiry])
    if floating:
        return [Double(new_text), Double(delta)]
    return [int(new_text), int(delta)]


def _increx_reply(current: bytes | None, floating: bool) -> Any:
    if current is None:
        return _increx_zero(floating)
    return Double(longdouble.format_human(longdouble.parse(current) or longdouble.ZERO)) \
        if floating else int(current)


def _increx_zero(floating: bool) -> Any:
    return Double(b"0") if floating else 0


def _increx_int_args(by: bytes | None, lower_arg: bytes | None,
                     upper_arg: bytes | None) -> tuple[int, int, int]:
    increment = 1 if by is None else parse_int(by)
    lower = INT64_MIN if lower_arg is None else parse_int(lower_arg)
    upper = INT64_MAX if upper_arg is None else parse_int(upper_arg)
    if increment is None or lower is None or upper is None:
        raise CommandError(errors.NOT_INTEGER)
    if lower > upper:
        raise CommandError(errors.INCREX_BOUNDS)
    return increment, lower, upper


def _increx_int(current: bytes | None, increment: int, lower: int, upper: int,
                saturate: bool) -> tuple[bytes, bytes] | None:
    """The new value and the increment applied, as text, or None when out of bounds."""
    value = 0 if current is None else parse_int(current)
    if value is None:
        raise CommandError(errors.NOT_INTEGER)
    result = value + increment
    if lower <= result <= upper:
        return b"%d" % result, b"%d" % increment
    if not saturate:
        return None
    result = lower if result < lower else upper
    delta = result - value
    if not INT64_MIN <= delta <= INT64_MAX:
        raise CommandError(errors.OVERFLOW)
    return b"%d" % result, b"%d" % delta


def _increx_float_args(by: bytes | None, lower_arg: bytes | None,
                       upper_arg: bytes | None) -> tuple[Fraction, Fraction, Fraction]:
    increment = Fraction(1) if by is None else longdouble.parse(by)
    lower = -_LDBL_MAX if lower_arg is None else longdouble.parse(lower_arg)
    upper = _LDBL_MAX if upper_arg is None else longdouble.parse(upper_arg)
    if increment is None or lower is None or upper is None:
        raise CommandError(errors.NOT_FLOAT)
    if abs(increment) >= longdouble.INF or abs(lower) >= longdouble.INF \
            or abs(upper) >= longdouble.INF:
        raise CommandError(errors.INCR_NAN_OR_INF)
    if lower > upper:
        raise CommandError(errors.INCREX_BOUNDS)
    return increment, lower, upper


def _increx_float(current: bytes | None, increment: Fraction, lower: Fraction, upper: Fraction,
                  saturate: bool) -> tuple[bytes, bytes] | None:
    value = longdouble.ZERO if current is None else longdouble.parse(current)
    if value is None:
        raise CommandError(errors.NOT_FLOAT)
    try:
        result: Fraction | None = longdouble.add(value, increment)
    except longdouble.Overflow:
        result = None  # past the type's limits: out of bounds
    if result is not None and lower <= result <= upper:
        return longdouble.format_human(result), longdouble.format_human(increment)
    if not saturate:
        return None
    clamped = lower if (result is None and increment < 0) or (
        result is not None and result < lower) else upper
    try:
        delta = longdouble.add(clamped, -value)
    except longdouble.Overflow:
        raise CommandError(errors.INCR_NAN_OR_INF) from None
    return longdouble.format_human(clamped), longdouble.format_human(delta)


# -- growing and slicing ------------------------------------------------------------------------


@command("append")
def append(client: Client, argv: list[bytes]) -> int:
    key, tail = argv[1], argv[2]
    current = _stored_string(lookup(client, key))
    db = client.db
    if current is None:
        db.set(key, tail, looked_up=True)
        length = len(tail)
    else:
        length = len(current) + len(tail)
        if length > _max_len(client):
            raise CommandError(errors.STRING_TOO_LONG)
        if isinstance(current, MutableString):
            current.extend(tail)  # in place: the stored value grows
        else:
            db.set(key, RawString(current + tail), keep_ttl=True, looked_up=True)
    db.signal_modified(key)
    client.server.notify(STRING, b"append", key, db.index)
    return length


@command("strlen")
def strlen(client: Client, argv: list[bytes]) -> int:
    value = _stored_string(lookup_read(client, argv[1]))
    return 0 if value is None else len(value)


def _range(client: Client, argv: list[bytes]) -> bytes:
    start = int_arg(argv[2])
    end = int_arg(argv[3])
    value = _stored_string(lookup_read(client, argv[1]))
    if value is None:
        return b""
    n = len(value)
    if start < 0 and end < 0 and start > end:
        return b""
    if start < 0:
        start = max(n + start, 0)
    if end < 0:
        end = max(n + end, 0)
    if end >= n:
        end = n - 1
    if start > end or n == 0:
        return b""
    return frozen(value[start : end + 1])


@command("getrange")
def getrange(client: Client, argv: list[bytes]) -> bytes:
    return _range(client, argv)


@command("substr")
def substr(client: Client, argv: list[bytes]) -> bytes:
    return _range(client, argv)


@command("setrange")
def setrange(client: Client, argv: list[bytes]) -> int:
    key, piece = argv[1], argv[3]
    offset = int_arg(argv[2])
    if offset < 0:
        raise CommandError(errors.OFFSET_OUT_OF_RANGE)
    current = _stored_string(lookup(client, key))
    db = client.db
    if current is None:
        if not piece:
            return 0
        if offset + len(piece) > _max_len(client):
            raise CommandError(errors.STRING_TOO_LONG)
        value = RawString(bytes(offset) + piece)
        db.set(key, value, looked_up=True)
    else:
        if not piece:
            return len(current)
        if offset + len(piece) > _max_len(client):
            raise CommandError(errors.STRING_TOO_LONG)
        if isinstance(current, MutableString):
            current.grow_zero(offset)
            current[offset : offset + len(piece)] = piece  # in place
            db.signal_modified(key)
            return len(current)
        head = current[:offset]
        if len(head) < offset:
            head += bytes(offset - len(head))
        value = RawString(head + piece + current[offset + len(piece) :])
        db.set(key, value, keep_ttl=True, looked_up=True)
    db.signal_modified(key)
    client.server.notify(STRING, b"setrange", key, db.index)
    return len(value)


# -- compare-and-delete, digests (Redis 8.4) -----------------------------------------------------


_DELEX_CONDITIONS = {b"IFEQ": _IFEQ, b"IFNE": _IFNE, b"IFDEQ": _IFDEQ, b"IFDNE": _IFDNE}


@command("delex", counts_changes=True)
def delex(client: Client, argv: list[bytes]) -> int:
    """DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE digest]: 1 when the key was
    deleted. Without a condition any type goes; with one the key must hold a string.
    Logged in the append-only file as ``DEL key``.

    Redis's order: the argument count (two or four, else the arity error), then the key
    (missing: 0 whatever the condition; with one, a read lookup), then the type (Redis 8.6's
    own error, not WRONGTYPE), the condition's name and the digest's length."""
    n = len(argv)
    if n != 2 and n != 4:
        raise CommandError(errors.wrong_arity("delex"))
    key = argv[1]
    current = lookup(client, key) if n == 2 else lookup_read(client, key)
    if current is None:
        return 0
    if n == 4:
        if not isinstance(current, (bytes, MutableString)):
            raise CommandError(errors.DELEX_NOT_STRING)
        flag = _DELEX_CONDITIONS.get(argv[2].upper())
        if flag is None:
            raise CommandError(errors.DELEX_CONDITION)
        value = _string(current)
        assert value is not None
        if not _compare(value, flag, argv[3]):
            return 0
    db = client.db
    server = client.server
    if server.config["lazyfree-lazy-user-del"]:
        # A large value is freed after the reply (see resplite.engine.lazyfree).
        server.lazyfree.maybe_defer(db.pop(key))
    else:
        db.delete(key)
    db.signal_modified(key)
    client.propagate_as([b"DEL", key])
    server.notify(GENERIC, b"del", key, db.index)
    server.dirty += 1
    return 1


@command("digest")
def digest_(client: Client, argv: list[bytes]) -> bytes | None:
    """DIGEST key: the XXH3 digest of a string value (null for a missing key)."""
    value = _string(lookup_read(client, argv[1]))
    return None if value is None else digest(value)


# -- LCS ------------------------------------------------------------------------------------------


@command("lcs")
def lcs(client: Client, argv: list[bytes]) -> Any:
    a = lookup_read(client, argv[1])
    b = lookup_read(client, argv[2])
    if (a is not None and not isinstance(a, STRING_TYPES)) or (
        b is not None and not isinstance(b, STRING_TYPES)
    ):
        raise CommandError(errors.LCS_NOT_STRINGS)
    a = frozen(a) if a is not None else b""
    b = frozen(b) if b is not None else b""
    want_len = want_idx = with_len = False
    min_len = 0
    i, n = 3, len(argv)
    while i < n:
        option = argv[i].upper()
        if option == b"IDX":
            want_idx = True
        elif option == b"LEN":
            want_len = True
        elif option == b"WITHMATCHLEN":
            with_len = True
        elif option == b"MINMATCHLEN" and i + 1 < n:
            min_len = max(int_arg(argv[i + 1]), 0)
            i += 1
        else:
            raise CommandError(errors.SYNTAX)
        i += 1
    if want_idx and want_len:
        raise CommandError(errors.LCS_LEN_AND_IDX)
    if len(a) >= 0xFFFFFFFE or len(b) >= 0xFFFFFFFE:
        raise CommandError(errors.LCS_TOO_LONG)
    # Redis refuses when its table of 32-bit cells would outgrow proto-max-bulk-len.
    if (len(a) + 1) * (len(b) + 1) * 4 > _max_len(client):
        raise CommandError(errors.LCS_TABLE_TOO_BIG)
    if want_len:
        return lcs_length(a, b)
    result = lcs_walk(a, b)
    if not want_idx:
        return result.text
    matches: list[list[Any]] = []
    for a_start, a_end, b_start, b_end in result.ranges:
        size = a_end - a_start + 1
        if min_len and size < min_len:
            continue
        item: list[Any] = [[a_start, a_end], [b_start, b_end]]
        if with_len:
            item.append(size)
        matches.append(item)
    return {b"matches": matches, b"len": result.length}
