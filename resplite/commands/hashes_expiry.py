"""Hash field expiry: HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME,
HPEXPIRETIME, HPERSIST (Redis 7.4) and HGETDEL, HGETEX, HSETEX (Redis 8.0).

Field TTLs live on the :class:`~resplite.store.hash.Hash` (absolute Unix ms, on the injected
clock). They expire lazily, at every lookup of the hash
(:func:`~resplite.commands.hashes.lookup_hash`), and actively: a command that sets a TTL has
the database track the hash (:meth:`~resplite.store.keyspace.Database.track_fields`), so the
active cycle and every clock jump (RESPLITE.CLOCK ADVANCE) drop the fields that are due.
A hash whose last field expires is deleted.

Replies follow Redis 8: per field, HEXPIRE answers -2 (no such field), 0 (the NX / XX / GT
/ LT condition was not met), 1 (set) or 2 (deleted, the time being now or past); HTTL and
friends -2, -1 (no TTL) or the time (seconds round up, as Redis's do); HPERSIST -2, -1 or 1.
Setting a TTL on a listpack turns it ``listpackex`` for good, whether or not a field
matched, as Redis converts before looking at the fields.

Checks come in Redis's order: the key's type first (these commands look the key up before
parsing), then the arguments. HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST and HGETDEL
take ``FIELDS numfields field ...`` right after the key, and their ``numfields`` must
match the number of arguments. Redis 8.6 lets the HEXPIRE family, HGETEX and HSETEX take
their options on either side of the ``FIELDS`` block (:func:`_hexpire_args`,
:func:`_field_expire_args`): the block is skipped as a whole, so a field may be called
``EX`` or ``FIELDS``, and what follows it is read as options again. HSETEX parses every
argument before it looks the key up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from resplite.algorithms.numbers import parse_int
from resplite.commands.args import int_arg
from resplite.commands.generic import lookup
from resplite.commands.hashes import create_hash, listpack_limits, lookup_hash, read_hash
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC, HASH
from resplite.engine.registry import command
from resplite.store.hash import Hash

if TYPE_CHECKING:
    from resplite.engine.client import Client

# Redis's bound on field expiry times: the 48-bit expiry field, divided by four.
HFE_MAX_ABS_TIME_MS = ((1 << 48) - 1) >> 2
_LONG_MAX = (1 << 63) - 1
_INT_MAX = (1 << 31) - 1

NO_FIELD, NO_CONDITION, SET, DELETED = -2, 0, 1, 2
NO_TTL = -1


def _word(arg: bytes) -> bytes:
    """An option as ``strcasecmp`` sees it: up to the first NUL, lower case."""
    return arg.split(b"\0", 1)[0].lower()


def _expire_time(arg: bytes, seconds: bool, relative: bool, name: str, now: int) -> int:
    """An expiry argument as Redis's ``parseExpireTime`` reads it, as absolute ms (a relative
    one from ``now``: the command's one reading of the clock, as Redis's
    commandTimeSnapshot, so PX 1 never finds its own time already past)."""
    value = int_arg(arg)
    if value < 0:
        raise CommandError(errors.HFE_NEGATIVE_TIME)
    if seconds:
        if value > HFE_MAX_ABS_TIME_MS // 1000:
            raise CommandError(errors.invalid_expire(name))
        value *= 1000
    base = now if relative else 0
    if value > HFE_MAX_ABS_TIME_MS - base:
        raise CommandError(errors.invalid_expire(name))
    return value + base


def _fields(argv: list[bytes], at: int, count_error: str) -> list[bytes]:
    """The fields of ``FIELDS numfields field ...`` where ``argv[at]`` is ``FIELDS``."""
    if at >= len(argv) or _word(argv[at]) != b"fields":
        raise CommandError(errors.HFE_FIELDS_MISSING)
    if at + 1 >= len(argv):
        raise CommandError(errors.wrong_arity(argv[0].decode("latin-1").lower()))
    count = parse_int(argv[at + 1])
    if count is None or count < 1:
        raise CommandError(count_error)
    if count != len(argv) - at - 2:
        raise CommandError(errors.HFE_NUMFIELDS_MISMATCH)
    return argv[at + 2 :]


def _finish(client: Client, key: bytes, h: Hash, changed: bool, *events: bytes,
            then_del: bool = False) -> None:
    """After fields changed: delete an emptied key, track the TTLs left, signal, and report
    ``events`` (in order; an emptied hash reports ``hdel`` and ``del`` instead, as Redis's
    HEXPIRE family does, or with ``then_del`` the events and then ``del``, as its HSETEX
    does)."""
    db = client.db
    gone = not h.fields
    if gone:
        db.delete(key)
    else:
        db.track_fields(key, h)
    if changed:
        db.signal_modified(key)
        notify = client.server.notify
        if gone and not then_del:
            notify(HASH, b"hdel", key, db.index)
            notify(GENERIC, b"del", key, db.index)
            return
        for event in events:
            notify(HASH, event, key, db.index)
        if gone:
            notify(GENERIC, b"del", key, db.index)


def _fields_block(argv: list[bytes], i: int, per_field: int, count_error: str,
                  short_error: str) -> int:
    """The number of fields of the ``FIELDS numfields ...`` block at ``argv[i]`` (read as
    ``getRangeLongFromObjectOrReply`` reads it, 1 to INT_MAX), whose ``numfields`` *
    ``per_field`` arguments must all be there."""
    count = parse_int(argv[i + 1])
    if count is None or not 1 <= count <= _INT_MAX:
        raise CommandError(count_error)
    if i + 2 + count * per_field > len(argv):
        raise CommandError(short_error)
    return count


# -- HEXPIRE family -------------------------------------------------------------------------------

_CONDITIONS = {b"nx", b"xx", b"gt", b"lt"}


def _hexpire_args(argv: list[bytes]) -> tuple[bytes, int, int]:
    """The condition (``b""`` for none), the position of ``FIELDS`` and the number of fields
    of ``HEXPIRE key time [NX | XX | GT | LT] FIELDS numfields field ...``, the condition on
    either side of the block, as Redis 8.6's ``parseHashCommandArgs`` reads them. A
    condition given twice is one condition; two different ones are refused."""
    argc = len(argv)
    fields_at = count = -1
    conditions: set[bytes] = set()
    i = 3
    while i < argc:
        word = _word(argv[i])
        if word == b"fields":
            if fields_at >= 0:
                raise CommandError(errors.HFE_FIELDS_TWICE)
            if i >= argc - 2:
                raise CommandError(errors.HFE_FIELDS_TOO_FEW)
            count = _fields_block(argv, i, 1, errors.HFE_NUMFIELDS_NOT_POSITIVE_HEXPIRE,
                                  errors.HFE_FIELDS_SHORT)
            fields_at = i
            i += 2 + count
            continue
        if word not in _CONDITIONS:
            raise CommandError(errors.unknown_argument(argv[i]))
        conditions.add(word)
        i += 1
    if fields_at < 0:
        raise CommandError(errors.HFE_FIELDS_ABSENT)
    if len(conditions) > 1:
        raise CommandError(errors.HFE_CONDITIONS)
    return (conditions.pop() if conditions else b""), fields_at, count


def _set_ttls(h: Hash, fields: list[bytes], when: int, condition: bytes, now: int) -> list[int]:
    """Redis's ``hashTypeSetEx`` for each field: -2, 0, 1 or 2 (see the module docstring)."""
    results: list[int] = []
    for field in fields:
        if field not in h.fields:
            results.append(NO_FIELD)
            continue
        previous = h.ttl_of(field)
        if previous is None:
            # A field without a TTL never expires: XX and GT fail, LT passes.
            if condition in (b"xx", b"gt"):
                results.append(NO_CONDITION)
                continue
        elif (
            condition == b"nx"
            or (condition == b"gt" and previous >= when)
            or (condition == b"lt" and previous <= when)
        ):
            results.append(NO_CONDITION)
            continue
        if when <= now:
            h.delete(field)
            results.append(DELETED)
        else:
            h.set_ttl(field, when)
            results.append(SET)
    return results


def _hexpire(client: Client, argv: list[bytes], seconds: bool, relative: bool) -> list[int]:
    name = argv[0].decode("latin-1").lower()
    key = argv[1]
    h = lookup_hash(client, key)
    now = client.server.clock.time_ms()
    when = _expire_time(argv[2], seconds, relative, name, now)
    condition, fields_at, count = _hexpire_args(argv)
    first = fields_at + 2
    fields = argv[first : first + count]
    if h is None:
        return [NO_FIELD] * len(fields)
    h.mark_ex()
    results = _set_ttls(h, fields, when, condition, now)
    deleted = [f for f, r in zip(fields, results, strict=True) if r == DELETED]
    updated = [f for f, r in zip(fields, results, strict=True) if r == SET]
    client.db.expired_fields += len(deleted)
    # Logged as Redis propagates it: HDEL of the fields a time already past removed, and the
    # command itself as HPEXPIREAT of the absolute time (as sent, if it was HPEXPIREAT),
    # its options where they were, with only the fields it set.
    if deleted:
        client.propagate_as([b"HDEL", key, *deleted])
    if updated:
        logged = list(argv)
        if name != "hpexpireat":
            logged[0] = b"HPEXPIREAT"
            logged[2] = b"%d" % when
        if len(updated) != count:
            kept = [f for f, r in zip(fields, results, strict=True) if r == SET]
            logged[first : first + count] = kept
            logged[fields_at + 1] = b"%d" % len(kept)
        client.propagate_as(logged)
    client.server.dirty += len(deleted) + len(updated)
    _finish(client, key, h, bool(deleted or updated), b"hdel" if deleted else b"hexpire")
    return results


@command("hexpire", counts_changes=True)
def hexpire(client: Client, argv: list[bytes]) -> list[int]:
    return _hexpire(client, argv, seconds=True, relative=True)


@command("hpexpire", counts_changes=True)
def hpexpire(client: Client, argv: list[bytes]) -> list[int]:
    return _hexpire(client, argv, seconds=False, relative=True)


@command("hexpireat", counts_changes=True)
def hexpireat(client: Client, argv: list[bytes]) -> list[int]:
    return _hexpire(client, argv, seconds=True, relative=False)


@command("hpexpireat", counts_changes=True)
def hpexpireat(client: Client, argv: list[bytes]) -> list[int]:
    return _hexpire(client, argv, seconds=False, relative=False)


# -- HTTL family ----------------------------------------------------------------------------------


def _httl(client: Client, argv: list[bytes], seconds: bool, relative: bool) -> list[int]:
    h = read_hash(client, argv[1])
    fields = _fields(argv, 2, errors.HFE_NUMFIELDS_NOT_POSITIVE)
    if h is None:
        return [NO_FIELD] * len(fields)
    now = client.server.clock.time_ms()
    base = now if relative else 0
    results: list[int] = []
    for field in fields:
        if field not in h.fields:
            results.append(NO_FIELD)
            continue
        when = h.ttl_of(field)
        if when is None:
            results.append(NO_TTL)
        elif when < now or (when == now and h.listpack):
            # Due but not yet removed (a listpack counts its last millisecond as gone).
            results.append(NO_FIELD)
        elif seconds:
            results.append((when + 999 - base) // 1000)
        else:
            results.append(when - base)
    return results


@command("httl")
def httl(client: Client, argv: list[bytes]) -> list[int]:
    return _httl(client, argv, seconds=True, relative=True)


@command("hpttl")
def hpttl(client: Client, argv: list[bytes]) -> list[int]:
    return _httl(client, argv, seconds=False, relative=True)


@command("hexpiretime")
def hexpiretime(client: Client, argv: list[bytes]) -> list[int]:
    return _httl(client, argv, seconds=True, relative=False)


@command("hpexpiretime")
def hpexpiretime(client: Client, argv: list[bytes]) -> list[int]:
    return _httl(client, argv, seconds=False, relative=False)


@command("hpersist")
def hpersist(client: Client, argv: list[bytes]) -> list[int]:
    key = argv[1]
    h = lookup_hash(client, key)
    fields = _fields(argv, 2, errors.HFE_NUMFIELDS_NOT_POSITIVE)
    if h is None:
        return [NO_FIELD] * len(fields)
    results: list[int] = []
    for field in fields:
        if field not in h.fields:
            results.append(NO_FIELD)
        else:
            results.append(SET if h.persist(field) else NO_TTL)
    if SET in results:
        client.db.signal_modified(key)
        client.server.notify(HASH, b"hpersist", key, client.db_index)
    return results


# -- Redis 8.0: HGETDEL, HGETEX, HSETEX -----------------------------------------------------------


@command("hgetdel", counts_changes=True)
def hgetdel(client: Client, argv: list[bytes]) -> list[bytes | None]:
    """HGETDEL: propagated as HDEL of the fields named, as Redis does, when it deleted
    any (a change: nothing is propagated otherwise)."""
    key = argv[1]
    h = lookup_hash(client, key)
    fields = _fields(argv, 2, errors.HFE_NUMFIELDS_NOT_POSITIVE)
    if h is None:
        return [None] * len(fields)
    values: list[bytes | None] = []
    for field in fields:
        value = h.fields.get(field)
        values.append(value)
        if value is not None:
            h.delete(field)
    deleted = sum(v is not None for v in values)
    _finish(client, key, h, deleted > 0, b"hdel")
    if deleted:
        client.server.dirty += deleted
        client.propagate_as([b"HDEL", key, *fields])
    return values


_TIMES = {b"ex": (True, True), b"px": (False, True), b"exat": (True, False),
          b"pxat": (False, False)}


class _FieldExpireArgs:
    """HGETEX's and HSETEX's options, as :func:`_field_expire_args` read them."""

    __slots__ = ("count", "first", "fnx", "fxx", "keep_ttl", "persist", "time_at", "when")

    def __init__(self) -> None:
        self.when: int | None = None  # the absolute expiry time (ms) of EX / PX / EXAT / PXAT
        self.time_at = -1  # where that time is
        self.persist = self.keep_ttl = self.fxx = self.fnx = False
        self.first = -1  # the first field
        self.count = 0  # how many fields


def _field_expire_args(argv: list[bytes], hsetex: bool, now: int) -> _FieldExpireArgs:
    """HGETEX's ``[EX s | PX ms | EXAT t | PXAT t | PERSIST] FIELDS numfields field ...`` and
    HSETEX's ``[FNX | FXX] [EX ... | KEEPTTL] FIELDS numfields field value ...``, options in
    any order around the block, read and checked as Redis 8.6's
    ``parseHashFieldExpireArgs`` does (the same texts, in its order)."""
    name = "hsetex" if hsetex else "hgetex"
    argc = len(argv)
    args = _FieldExpireArgs()
    one_expiry = errors.HSETEX_ONE_EXPIRY if hsetex else errors.HGETEX_ONE_EXPIRY
    i = 2
    while i < argc:
        word = _word(argv[i])
        if word == b"fields":
            if args.first >= 0:
                raise CommandError(errors.HFE_FIELDS_TWICE)
            if i + 1 >= argc:
                raise CommandError(errors.wrong_arity(name))
            args.count = _fields_block(argv, i, 2 if hsetex else 1, errors.HSETEX_NUMFIELDS,
                                       errors.HFE_FIELDS_SHORT)
            args.first = i + 2
            i = args.first + args.count * (2 if hsetex else 1)
            continue
        if word in _TIMES:
            if args.when is not None or args.keep_ttl or args.persist:
                raise CommandError(one_expiry)
            if i >= argc - 1:
                raise CommandError(errors.HSETEX_MISSING_TIME)
            seconds, relative = _TIMES[word]
            i += 1
            args.when = _expire_time(argv[i], seconds, relative, name, now)
            args.time_at = i
        elif word == b"persist":
            if args.when is not None or args.persist:
                raise CommandError(one_expiry)
            args.persist = True
        elif word == b"keepttl":
            if args.when is not None or args.keep_ttl:
                raise CommandError(one_expiry)
            args.keep_ttl = True
        elif word in (b"fxx", b"fnx"):
            if args.fxx or args.fnx:
                raise CommandError(errors.HSETEX_ONE_CONDITION)
            args.fxx, args.fnx = word == b"fxx", word == b"fnx"
        else:
            raise CommandError(errors.unknown_argument(argv[i]))
        i += 1
    if args.first < 0:
        raise CommandError(errors.HFE_FIELDS_ABSENT)
    if (args.persist if hsetex else (args.keep_ttl or args.fxx or args.fnx)):
        raise CommandError(errors.HFE_UNKNOWN_ARGUMENT)
    return args


@command("hgetex", counts_changes=True)
def hgetex(client: Client, argv: list[bytes]) -> list[bytes | None]:
    """HGETEX: logged as the change it made to the fields it found, as Redis propagates
    it: HPERSIST, HPEXPIREAT of the absolute time, or HDEL (a time already past); nothing
    when it only read."""
    key = argv[1]
    h = lookup_hash(client, key)
    now = client.server.clock.time_ms()
    args = _field_expire_args(argv, hsetex=False, now=now)
    when, persist = args.when, args.persist
    fields = argv[args.first : args.first + args.count]
    if h is None:
        return [None] * len(fields)
    if when is not None or persist:
        h.mark_ex()
    values: list[bytes | None] = []
    changed = deleted = False
    for field in fields:
        value = h.fields.get(field)
        values.append(value)
        if value is None:
            continue
        if persist:
            h.persist(field)
            changed = True  # Redis counts every field found, with a TTL or not
        elif when is not None:
            changed = True
            if when <= now:
                h.delete(field)
                deleted = True
            else:
                h.set_ttl(field, when)
    if changed:
        found = [f for f, v in zip(fields, values, strict=True) if v is not None]
        # (Redis's canonical HPERSIST / HPEXPIREAT name every field the command named.)
        if persist:
            client.propagate_as([b"HPERSIST", key, b"FIELDS", b"%d" % len(fields), *fields])
        elif deleted:
            client.propagate_as([b"HDEL", key, *found])
        elif when is not None:
            client.propagate_as([b"HPEXPIREAT", key, b"%d" % when, b"FIELDS",
                                 b"%d" % len(fields), *fields])
        client.server.dirty += len(found)
    event = b"hpersist" if persist else b"hdel" if deleted else b"hexpire"
    _finish(client, key, h, changed, event)
    return values


@command("hsetex", counts_changes=True)
def hsetex(client: Client, argv: list[bytes]) -> int:
    """HSETEX: with a relative time (EX / PX) or EXAT, logged with ``PXAT`` of the
    absolute time in its place, as Redis propagates it."""
    now = client.server.clock.time_ms()
    args = _field_expire_args(argv, hsetex=True, now=now)
    when, keep_ttl, fxx, fnx = args.when, args.keep_ttl, args.fxx, args.fnx
    time_at = args.time_at if when is not None and _word(argv[args.time_at - 1]) != b"pxat" \
        else -1
    key = argv[1]
    # Fields past their time go first (hexpired), but not the hash they leave empty: as in
    # Redis's HSETEX, the command fills it, or deletes it (del) when it sets nothing.
    h = lookup(client, key)
    if h is not None and h.__class__ is not Hash:
        raise CommandError(errors.WRONGTYPE)
    if h is not None and h.ttls:
        client.db.expire_fields(key, h, keep_empty=True)
    if h is None:
        if fxx:
            return 0
        h = create_hash(client, key)
    pairs = argv[args.first : args.first + 2 * args.count]
    fields = pairs[::2]
    if fnx or fxx:
        present = h.fields
        ok = (all(f in present for f in fields) if fxx
              else not any(f in present for f in fields))
        if not ok:
            if not h.fields:
                client.db.delete(key)
                client.server.notify(GENERIC, b"del", key, client.db_index)
            return 0
    max_entries, max_value = listpack_limits(client)
    if h.listpack:
        if len(fields) > max_entries:
            h.convert()
        else:
            h.fit_lengths(pairs, max_value)
    if when is not None:
        h.mark_ex()
    deleted = False
    for j in range(0, len(pairs), 2):
        field = pairs[j]
        h.set(field, pairs[j + 1], keep_ttl=keep_ttl or when is not None)
        if when is not None:
            if when <= now:
                h.delete(field)
                deleted = True
            else:
                h.set_ttl(field, when)
    h.fit_size(max_entries)
    if time_at >= 0 and when is not None:
        client.propagate_as([*argv[:time_at - 1], b"PXAT", b"%d" % when, *argv[time_at + 1:]])
    client.server.dirty += args.count
    if when is None:
        _finish(client, key, h, True, b"hset")
    else:
        # Fields set with a time already past are set, then deleted: hset, hdel (and del
        # when that empties the hash), as Redis 8.6 reports them.
        _finish(client, key, h, True, b"hset", b"hdel" if deleted else b"hexpire",
                then_del=True)
    return 1
