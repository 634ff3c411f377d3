"""Keyspace commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME, RENAMENX, COPY,
MOVE, the EXPIRE family, TTL family, PERSIST, TOUCH and OBJECT.

Lookups follow Redis's two kinds: those that count as an access of the key (most commands)
and those that do not (EXISTS, TYPE, the TTL family, OBJECT, SCAN's TYPE filter), which use
:meth:`~resplite.store.keyspace.Database.peek`. A client in CLIENT NO-TOUCH mode never counts
as an access, except through TOUCH itself (Redis 7.2 behaviour).

SCAN walks the database's hash-ordered index (:mod:`resplite.store.scanindex`): a cursor is
the next hash position to visit, so each call costs about O(COUNT log n) and every key present
for the whole iteration is returned at least once, whatever is written in between. KEYS and
SCAN MATCH use Redis's glob rules (:mod:`resplite.store.glob`), including its quirks: ``*``
alone matches every key, but a pattern never matches the empty key unless it is empty too.

Expiry: a time in the past deletes the key at once (and answers 1), as Redis does on a
master; NX / XX / GT / LT compare with the current expiry, a key without one counting as
infinite. Every change is followed by ``signal_modified`` so WATCH and blocked clients see it.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import TYPE_CHECKING, Any

from resplite.commands.args import INT64_MAX, INT64_MIN, c_option, int_arg, parse_int
from resplite.commands.helptext import help_reply
from resplite.engine import compat, errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC, OVERWRITTEN, TYPE_CHANGED
from resplite.engine.registry import command
from resplite.protocol.replies import OK, Status
from resplite.store import string_value
from resplite.store.glob import compile_matcher

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.store.keyspace import Database

_INT32_MIN = -(1 << 31)
_INT32_MAX = (1 << 31) - 1
_ULONG_MAX = (1 << 64) - 1
# C's LLONG_MAX / 1000 and LLONG_MIN / 1000 truncate towards zero.
_MAX_SECONDS = INT64_MAX // 1000
_MIN_SECONDS = -(-INT64_MIN // 1000)

_TYPE_REPLIES: dict[str, Status] = {}
_NONE = Status("none")


def type_name(value: Any) -> str:
    """What TYPE answers for a stored value."""
    if isinstance(value, bytes):
        return "string"
    return value.type_name  # type: ignore[no-any-return]


def _type_reply(value: Any) -> Status:
    name = type_name(value)
    reply = _TYPE_REPLIES.get(name)
    if reply is None:
        reply = _TYPE_REPLIES[name] = Status(name)
    return reply


_OVERWRITE_EVENTS = OVERWRITTEN | TYPE_CHANGED


def type_before(client: Client, key: bytes, db: Any = None) -> str | None:
    """The type of the live value at ``key`` (in ``db``, else the client's database) that a
    write is about to replace, when ``overwritten`` / ``type_changed`` events are enabled;
    None otherwise (or when there is none)."""
    if not client.server.notify_flags & _OVERWRITE_EVENTS:
        return None
    old = (db if db is not None else client.db).peek(key)
    return None if old is None else type_name(old)


def note_overwrite(client: Client, key: bytes, before: str | None, value: Any,
                   db_index: int | None = None) -> None:
    """Redis 8.6's ``overwritten`` (and ``type_changed`` when the type differs) for a key
    whose value (of type ``before``, see :func:`type_before`) was replaced by ``value``."""
    if before is None:
        return
    index = client.db_index if db_index is None else db_index
    notify = client.server.notify
    notify(OVERWRITTEN, b"overwritten", key, index)
    if type_name(value) != before:
        notify(TYPE_CHANGED, b"type_changed", key, index)


def lookup(client: Client, key: bytes) -> Any:
    """The live value of ``key`` for a command about to write it (counts as an access).

    As Redis's lookupKeyWrite: a write lookup leaves the keyspace hit and miss counters alone.
    """
    if client.no_touch:
        return client.db.peek(key)
    return client.db.get(key)


def lookup_read(client: Client, key: bytes) -> Any:
    """The live value of ``key`` for a command that reads it, as Redis's lookupKeyRead: an
    access, counted in INFO's ``keyspace_hits`` or ``keyspace_misses`` (a miss is also the
    ``keymiss`` keyspace event, reported by the database's read lookup)."""
    return client.db.read(key, not client.no_touch)


def count_lookup(client: Client, found: bool, key: bytes | None = None) -> None:
    """Count one read lookup made without :func:`lookup_read` (EXISTS, TYPE, TTL, OBJECT);
    a miss of a named ``key`` is reported as ``keymiss`` too, as Redis's read lookups do."""
    db = client.db
    if found:
        db.hits += 1
        return
    db.misses += 1
    on_miss = db.on_miss
    if key is not None and on_miss is not None:
        on_miss(db.index, key)


def _db_index(client: Client, arg: bytes) -> int:
    """A database number as COPY DB and MOVE parse it (a C int, then the range check)."""
    index = parse_int(arg)
    if index is None:
        raise CommandError(errors.NOT_INTEGER)
    if not _INT32_MIN <= index <= _INT32_MAX:
        raise CommandError(errors.INT32_OUT_OF_RANGE)
    if not 0 <= index < len(client.server.keyspace):
        raise CommandError(errors.DB_INDEX_OUT_OF_RANGE)
    return index


# -- deleting and testing keys ------------------------------------------------------------


def _delete_keys(client: Client, argv: list[bytes], lazy: bool) -> int:
    db = client.db
    server = client.server
    notify = server.notify
    deleted = 0
    # An absent key is left alone by delete() and pop(): only the present ones are visited.
    for key in db.present(islice(argv, 1, None)):
        if lazy:
            value = db.pop(key)
            if value is None:
                continue
            # A large value is freed after the reply (see resplite.engine.lazyfree).
            server.lazyfree.maybe_defer(value)
        elif db.pop(key) is None:
            continue
        db.signal_modified(key)
        notify(GENERIC, b"del", key, db.index)
        deleted += 1
    # Counted per key deleted, as Redis: deleting nothing is no change (nor propagated).
    server.dirty += deleted
    return deleted


@command("del", counts_changes=True)
def del_(client: Client, argv: list[bytes]) -> int:
    return _delete_keys(client, argv, client.server.config["lazyfree-lazy-user-del"])


@command("unlink", counts_changes=True)
def unlink(client: Client, argv: list[bytes]) -> int:
    return _delete_keys(client, argv, True)


@command("exists")
def exists(client: Client, argv: list[bytes]) -> int:
    contains = client.db.contains
    found = 0
    for key in argv[1:]:
        present = contains(key)
        count_lookup(client, present, key)
        found += present
    return found


@command("type")
def type_(client: Client, argv: list[bytes]) -> Status:
    value = client.db.peek(argv[1])
    count_lookup(client, value is not None, argv[1])
    return _NONE if value is None else _type_reply(value)


@command("touch")
def touch(client: Client, argv: list[bytes]) -> int:
    db = client.db
    # TOUCH counts as an access even for a CLIENT NO-TOUCH client.
    touched = 0
    for key in argv[1:]:
        found = db.get(key) is not None
        count_lookup(client, found, key)
        touched += found
    return touched


# -- listing keys ---------------------------------------------------------------------------


@command("keys")
def keys(client: Client, argv: list[bytes]) -> list[bytes]:
    pattern = argv[1]
    live = client.db.live_keys()
    if pattern == b"*":
        return list(live)
    match = compile_matcher(pattern)
    return [key for key in live if match(key)]


_CURSOR = re.compile(rb"(?:[+-]?\d+)?")  # strtoul: empty reads as 0
_CANONICAL_LL = re.compile(rb"0|-?[1-9]\d{0,18}")  # what string2ll takes (range checked apart)
_STRTOULL = re.compile(rb"[ \t\n\v\f\r]*([+-]?)(\d+)")


def parse_scan_cursor(arg: bytes, client: Client) -> int:
    """A cursor as the Redis being answered as reads it (C sees ``arg`` up to its first NUL).

    Redis 7.4 on (``string2ull``): a canonical integer must not be negative; anything else
    goes to ``strtoull``, which skips leading blanks and wraps a signed value, but needs a
    digit and refuses what passes 2**64 - 1. Before: ``strtoul``, no leading blank, the
    empty string reading as 0 and a negative value wrapping."""
    text = arg.split(b"\x00", 1)[0]
    if not compat.follows(client.server.config["redis-compat-version"], "scan-cursor-string2ull"):
        return _parse_cursor_strtoul(text)
    if _CANONICAL_LL.fullmatch(text) and INT64_MIN <= (value := int(text)) <= INT64_MAX:
        if value < 0:
            raise CommandError(errors.INVALID_CURSOR)
        return value
    match = _STRTOULL.fullmatch(text)
    digits = b"" if match is None else match[2].lstrip(b"0") or b"0"
    if match is None or len(digits) > 20 or int(digits) > _ULONG_MAX:
        raise CommandError(errors.INVALID_CURSOR)
    magnitude = int(digits)
    return (-magnitude) & _ULONG_MAX if match[1] == b"-" else magnitude


def _parse_cursor_strtoul(text: bytes) -> int:
    if not _CURSOR.fullmatch(text):
        raise CommandError(errors.INVALID_CURSOR)
    digits = text[1:] if text[:1] in (b"+", b"-") else text
    digits = digits.lstrip(b"0")
    value = int(digits) if digits and len(digits) <= 20 else (0 if not digits else _ULONG_MAX + 1)
    if value > _ULONG_MAX:
        raise CommandError(errors.INVALID_CURSOR)
    return (-value) & _ULONG_MAX if text[:1] == b"-" else value


def parse_scan_options(
    argv: list[bytes], start: int, novalues_allowed: bool = False
) -> tuple[int, bytes | None, bool]:
    """(COUNT, MATCH pattern or None for ``*``, NOVALUES) of HSCAN, SSCAN and ZSCAN from
    ``argv[start:]``, with Redis's errors: a COUNT below 1 is a syntax error, and NOVALUES,
    which only HSCAN takes (Redis 7.4), names HSCAN in the others' error."""
    count = 10
    pattern: bytes | None = None
    novalues = False
    i, n = start, len(argv)
    while i < n:
        option = c_option(argv[i])
        if option == b"count" and n - i >= 2:
            count = int_arg(argv[i + 1])
            if count < 1:
                raise CommandError(errors.SYNTAX)
            i += 2
        elif option == b"match" and n - i >= 2:
            pattern = None if argv[i + 1] == b"*" else argv[i + 1]
            i += 2
        elif option == b"novalues":
            if not novalues_allowed:
                raise CommandError(errors.NOVALUES_HSCAN_ONLY)
            novalues = True
            i += 1
        else:
            raise CommandError(errors.SYNTAX)
    return count, pattern, novalues


@command("scan")
def scan(client: Client, argv: list[bytes]) -> list[Any]:
    cursor = parse_scan_cursor(argv[1], client)
    count = 10
    pattern: bytes | None = None
    wanted_type: str | None = None
    i, n = 2, len(argv)
    while i < n:
        option = argv[i].lower()
        if option == b"novalues":  # Redis 7.4 names the one command that takes it
            raise CommandError(errors.NOVALUES_HSCAN_ONLY)
        if n - i < 2:
            raise CommandError(errors.SYNTAX)
        if option == b"count":
            count_value = parse_int(argv[i + 1])
            if count_value is None:
                raise CommandError(errors.NOT_INTEGER)
            if count_value < 1:
                raise CommandError(errors.SYNTAX)
            count = count_value
        elif option == b"match":
            pattern = None if argv[i + 1] == b"*" else argv[i + 1]
        elif option == b"type":
            wanted_type = argv[i + 1].split(b"\x00", 1)[0].decode("latin-1").lower()
        else:
            raise CommandError(errors.SYNTAX)
        i += 2
    db = client.db
    next_cursor, found = db.scan(cursor, count)
    if pattern is not None:
        match = compile_matcher(pattern)
        found = [key for key in found if match(key)]
    if db.expires:
        contains = db.contains  # deletes the keys whose time has passed, as Redis does
        found = [key for key in found if contains(key)]
    if wanted_type is not None:
        peek = db.peek
        found = [key for key in found if type_name(peek(key)) == wanted_type]
    return [b"%d" % next_cursor, found]


@command("randomkey")
def randomkey(client: Client, argv: list[bytes]) -> bytes | None:
    return client.db.random_key()


# -- renaming, copying, moving --------------------------------------------------------------


def _rename(client: Client, argv: list[bytes], nx: bool) -> Any:
    src, dst = argv[1], argv[2]
    db = client.db
    if lookup(client, src) is None:
        raise CommandError(errors.NO_SUCH_KEY)
    if src == dst:
        return 0 if nx else OK
    before = None
    if db.contains(dst):
        if nx:
            return 0
        before = type_before(client, dst)
        db.delete(dst)
    moved = db.take(src)
    assert moved is not None
    value, when, access = moved
    db.put(dst, value, when, access)
    db.signal_modified(src)
    db.signal_modified(dst)
    notify = client.server.notify
    notify(GENERIC, b"rename_from", src, db.index)
    notify(GENERIC, b"rename_to", dst, db.index)
    note_overwrite(client, dst, before, value)
    return 1 if nx else OK


@command("rename")
def rename(client: Client, argv: list[bytes]) -> Any:
    return _rename(client, argv, nx=False)


@command("renamenx")
def renamenx(client: Client, argv: list[bytes]) -> Any:
    return _rename(client, argv, nx=True)


def duplicate(value: Any) -> Any:
    """An independent copy of a stored value (COPY, MIGRATE COPY)."""
    if isinstance(value, bytes):
        return string_value.copied(value)
    return value.copy()


@command("copy")
def copy(client: Client, argv: list[bytes]) -> int:
    replace = False
    target: Database = client.db
    i, n = 3, len(argv)
    while i < n:
        option = argv[i].lower()
        if option == b"replace":
            replace = True
        elif option == b"db" and i + 1 < n:
            target = client.server.keyspace[_db_index(client, argv[i + 1])]
            i += 1
        else:
            raise CommandError(errors.SYNTAX)
        i += 1
    src, dst = argv[1], argv[2]
    db = client.db
    if target is db and src == dst:
        raise CommandError(errors.SAME_OBJECT)
    value = lookup_read(client, src)
    if value is None:
        return 0
    when = db.expires.get(src)
    before = None
    if target.contains(dst):
        if not replace:
            return 0
        before = type_before(client, dst, target)
        target.delete(dst)
    target.put(dst, duplicate(value), when, None)
    target.signal_modified(dst)
    client.server.notify(GENERIC, b"copy_to", dst, target.index)
    note_overwrite(client, dst, before, value, target.index)
    return 1


@command("move")
def move(client: Client, argv: list[bytes]) -> int:
    key = argv[1]
    target = client.server.keyspace[_db_index(client, argv[2])]
    db = client.db
    if target is db:
        raise CommandError(errors.SAME_OBJECT)
    if lookup(client, key) is None or target.contains(key):
        return 0
    moved = db.take(key)
    assert moved is not None
    value, when, access = moved
    target.put(key, value, when, access)
    db.signal_modified(key)
    target.signal_modified(key)
    notify = client.server.notify
    notify(GENERIC, b"move_from", key, db.index)
    notify(GENERIC, b"move_to", key, target.index)
    return 1


# -- expiry -----------------------------------------------------------------------------------

_NX, _XX, _GT, _LT = 1, 2, 4, 8
_EXPIRE_FLAGS = {b"nx": _NX, b"xx": _XX, b"gt": _GT, b"lt": _LT}


def _expire(client: Client, argv: list[bytes], seconds: bool, relative: bool) -> int:
    flags = 0
    for option in argv[3:]:
        flag = _EXPIRE_FLAGS.get(option.lower())
        if flag is None:
            raise CommandError(errors.unsupported_expire_option(option))
        flags |= flag
    if flags & _NX and flags & (_XX | _GT | _LT):
        raise CommandError(errors.EXPIRE_NX_AND_OTHERS)
    if flags & _GT and flags & _LT:
        raise CommandError(errors.EXPIRE_GT_AND_LT)
    when = parse_int(argv[2])
    if when is None:
        raise CommandError(errors.NOT_INTEGER)
    fullname = argv[0].decode("latin-1").lower()
    if seconds:
        if when > _MAX_SECONDS or when < _MIN_SECONDS:
            raise CommandError(errors.invalid_expire(fullname))
        when *= 1000
    now = client.server.clock.time_ms()
    base = now if relative else 0
    if when > INT64_MAX - base:
        raise CommandError(errors.invalid_expire(fullname))
    when += base
    key = argv[1]
    if lookup(client, key) is None:
        return 0
    db = client.db
    if flags:
        current = db.expires.get(key)
        if flags & _NX and current is not None:
            return 0
        if flags & _XX and current is None:
            return 0
        # A key without an expiry counts as one that never expires.
        if flags & _GT and (current is None or when <= current):
            return 0
        if flags & _LT and current is not None and when >= current:
            return 0
    if when <= now:
        db.delete(key)
        event = b"del"
        # Logged as the deletion it was, as Redis propagates it.
        client.propagate_as([b"DEL", key])
    else:
        db.set_expire(key, when)
        event = b"expire"
        # Logged as PEXPIREAT of the absolute time, the options kept (as Redis rewrites
        # argv[0] and argv[2]): a replay sets the same expiry whenever it runs.
        client.propagate_as([b"PEXPIREAT", key, b"%d" % when, *argv[3:]])
    db.signal_modified(key)
    server = client.server
    server.dirty += 1
    server.notify(GENERIC, event, key, db.index)
    return 1


@command("expire", counts_changes=True)
def expire(client: Client, argv: list[bytes]) -> int:
    return _expire(client, argv, seconds=True, relative=True)


@command("pexpire", counts_changes=True)
def pexpire(client: Client, argv: list[bytes]) -> int:
    return _expire(client, argv, seconds=False, relative=True)


@command("expireat", counts_changes=True)
def expireat(client: Client, argv: list[bytes]) -> int:
    return _expire(client, argv, seconds=True, relative=False)


@command("pexpireat", counts_changes=True)
def pexpireat(client: Client, argv: list[bytes]) -> int:
    return _expire(client, argv, seconds=False, relative=False)


def _ttl(client: Client, key: bytes, ms: bool, absolute: bool) -> int:
    db = client.db
    if _peek_counted(client, key) is None:
        return -2
    when = db.expires.get(key)
    if when is None:
        return -1
    ttl = when if absolute else when - client.server.clock.time_ms()
    if ttl < 0:
        ttl = 0
    return ttl if ms else (ttl + 500) // 1000


@command("ttl")
def ttl(client: Client, argv: list[bytes]) -> int:
    return _ttl(client, argv[1], ms=False, absolute=False)


@command("pttl")
def pttl(client: Client, argv: list[bytes]) -> int:
    return _ttl(client, argv[1], ms=True, absolute=False)


@command("expiretime")
def expiretime(client: Client, argv: list[bytes]) -> int:
    return _ttl(client, argv[1], ms=False, absolute=True)


@command("pexpiretime")
def pexpiretime(client: Client, argv: list[bytes]) -> int:
    return _ttl(client, argv[1], ms=True, absolute=True)


@command("persist")
def persist(client: Client, argv: list[bytes]) -> int:
    key = argv[1]
    if lookup(client, key) is None:
        return 0
    db = client.db
    if db.persist(key):
        db.signal_modified(key)
        client.server.notify(GENERIC, b"persist", key, db.index)
        return 1
    return 0


# -- OBJECT -----------------------------------------------------------------------------------

_OBJECT_HELP = help_reply("OBJECT", [
    ("ENCODING <key>", [
        "Name the internal representation of the value at <key> (for example int,",
        "embstr, raw or stream).",
    ]),
    ("FREQ <key>", [
        "Reply with the logarithmic access counter of <key>; needs an LFU",
        "maxmemory-policy.",
    ]),
    ("IDLETIME <key>", [
        "Reply with the seconds since <key> was last read or written; refused under",
        "an LFU maxmemory-policy.",
    ]),
    ("REFCOUNT <key>", ["Reply with how many references share the value at <key>."]),
])


def _peek_counted(client: Client, key: bytes) -> Any:
    """The value OBJECT and TTL look at: no access recorded, but a counted read lookup."""
    value = client.db.peek(key)
    count_lookup(client, value is not None, key)
    return value


def _policy(client: Client) -> str:
    return client.server.config["maxmemory-policy"]  # type: ignore[no-any-return]


@command("object|encoding")
def object_encoding(client: Client, argv: list[bytes]) -> bytes | None:
    value = _peek_counted(client, argv[2])
    if value is None:
        return None
    if isinstance(value, bytes):
        embedded = compat.follows(client.server.config["redis-compat-version"], "kvobj")
        return string_value.encoding(value, len(argv[2]) if embedded else -1).encode()
    return value.encoding.encode()  # type: ignore[no-any-return]


@command("object|refcount")
def object_refcount(client: Client, argv: list[bytes]) -> int | None:
    value = _peek_counted(client, argv[2])
    if value is None:
        return None
    if not isinstance(value, bytes):
        return 1
    config = client.server.config
    # Under a memory limit with an LRU or LFU policy Redis stops sharing small integers:
    # each key then needs its own access field. Redis 8 copies every value into an object
    # of its own, holding the key too, so none is shared.
    shared = not ((config["maxmemory"] and _policy(client).endswith(("-lru", "-lfu", "-lrm")))
                  or compat.follows(config["redis-compat-version"], "kvobj"))
    return string_value.refcount(value, shared)


@command("object|idletime")
def object_idletime(client: Client, argv: list[bytes]) -> int | None:
    db = client.db
    if _peek_counted(client, argv[2]) is None:
        return None
    if _policy(client).endswith("-lfu"):
        raise CommandError(errors.IDLETIME_UNDER_LFU)
    return db.idle_ms(argv[2]) // 1000


@command("object|freq")
def object_freq(client: Client, argv: list[bytes]) -> int | None:
    db = client.db
    if _peek_counted(client, argv[2]) is None:
        return None
    if not _policy(client).endswith("-lfu"):
        raise CommandError(errors.FREQ_WITHOUT_LFU)
    return db.frequency(argv[2])


@command("object|help")
def object_help(client: Client, argv: list[bytes]) -> list[Status]:
    return _OBJECT_HELP
