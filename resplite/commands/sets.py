"""Set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SMOVE,
SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONCARD, SUNIONSTORE, SDIFF, SDIFFCARD,
SDIFFSTORE and SSCAN.

The value type is :class:`resplite.store.set.Set`, which owns the encodings and the set
algebra; these handlers parse arguments in Redis's order (so the first error Redis would
report is the one reported), look keys up as Redis does (a counted read lookup for the
commands that only read, SSCAN and every source of the set algebra included; an uncounted
write lookup for SADD, SREM, SMOVE and SPOP), raise WRONGTYPE for any other type (key by
key in argument order), read the set directives into a :class:`~resplite.store.set.Limits`, and
keep the keyspace rules: a key is created when its first member arrives and deleted with
its last one, a STORE command replaces its destination (dropping its TTL) or deletes it
when the result is empty. ``signal_modified`` and the keyspace events (``sadd``, ``srem``,
``spop``, ``sinterstore``, ``sunionstore``, ``sdiffstore``, then ``del`` when a key goes)
follow Redis: SADD and SREM only when they changed something, SMOVE for each side it
changed.

Replies: SMEMBERS, SINTER, SUNION, SDIFF and SPOP with a count are sets (``~`` in RESP3,
arrays in RESP2), in the order Redis 7.2+ produces them for intsets and listpacks;
SRANDMEMBER with a count and SMISMEMBER are arrays. Every reply is a snapshot: inside MULTI
it is encoded after later commands of the transaction have run.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Any

from resplite.algorithms import hyperloglog as hll
from resplite.commands.args import INT64_MAX, c_option, int_arg, parse_int
from resplite.commands.generic import (
    lookup,
    lookup_read,
    note_overwrite,
    parse_scan_cursor,
    parse_scan_options,
    type_before,
)
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC
from resplite.engine.notify import SET as SET_EVENTS
from resplite.engine.registry import command
from resplite.protocol.encoder import in_pieces
from resplite.protocol.replies import OrderedSet
from resplite.store import set as setstore
from resplite.store.glob import compile_matcher
from resplite.store.set import Limits, Set

if TYPE_CHECKING:
    from resplite.engine.client import Client

EMPTY_SET = OrderedSet()
# The longest SRANDMEMBER reply with repetitions we build (see errors.REPLY_TOO_LONG).
MAX_DRAWS = 1 << 25




_LIMITS: dict[tuple[int, int, int], Limits] = {}


def limits(client: Client) -> Limits:
    """The set directives in force (one shared tuple per combination of values, so the hot
    path builds none)."""
    values = client.server.config.values
    key = (values["set-max-intset-entries"], values["set-max-listpack-entries"],
           values["set-max-listpack-value"])
    found = _LIMITS.get(key)
    if found is None:
        if len(_LIMITS) > 64:
            _LIMITS.clear()
        found = _LIMITS[key] = Limits(*key)
    return found


def lookup_set(client: Client, key: bytes) -> Set | None:
    """The set at ``key`` for a command that writes it (Redis's lookupKeyWrite), None when
    absent; WRONGTYPE for another type."""
    value = lookup(client, key)
    if value is None or type(value) is Set:
        return value
    raise CommandError(errors.WRONGTYPE)


def read_set(client: Client, key: bytes) -> Set | None:
    """As :func:`lookup_set`, for a command that reads the set (a counted read lookup)."""
    value = lookup_read(client, key)
    if value is None or type(value) is Set:
        return value
    raise CommandError(errors.WRONGTYPE)


def _sets(client: Client, keys: list[bytes]) -> list[Set | None]:
    """The sets a command combines, read in argument order (WRONGTYPE at the first key
    holding something else, missing keys included in the walk)."""
    return [read_set(client, key) for key in keys]


def _store(client: Client, key: bytes, result: Set, event: bytes) -> int:
    """Put a STORE command's result at ``key``, or delete ``key`` when it is empty."""
    db = client.db
    if len(result):
        before = type_before(client, key)
        db.set(key, result)
        db.signal_modified(key)
        note_overwrite(client, key, before, result)
        client.server.notify(SET_EVENTS, event, key, db.index)
    elif db.delete(key):
        db.signal_modified(key)
        client.server.notify(GENERIC, b"del", key, db.index)
    return len(result)


# -- adding and removing ------------------------------------------------------------------------


@command("sadd")
def sadd(client: Client, argv: list[bytes]) -> int:
    key = argv[1]
    db = client.db
    # lookup_set spelled out: SADD is the set command clients send most.
    s = db.peek(key) if client.no_touch else db.get(key)
    if s is not None and type(s) is not Set:
        raise CommandError(errors.WRONGTYPE)
    lim = limits(client)
    n = len(argv) - 2
    if s is None:
        s = Set.create(argv[2], n, lim)
        db.add(key, s)
    elif n > lim.listpack_entries or n > lim.intset_entries:
        s.maybe_convert(n, lim)
    if n == 1:
        added = 1 if s.add(argv[2], lim) else 0
    else:
        add = s.add
        added = 0
        for member in islice(argv, 2, None):
            if add(member, lim):
                added += 1
    if added:
        db.signal_modified(key)
        client.server.notify(SET_EVENTS, b"sadd", key, db.index)
    return added


@command("srem")
def srem(client: Client, argv: list[bytes]) -> int:
    key = argv[1]
    s = lookup_set(client, key)
    if s is None:
        return 0
    db = client.db
    removed = 0
    emptied = False
    for member in islice(argv, 2, None):
        if s.remove(member):
            removed += 1
            if not len(s):
                db.delete(key)
                emptied = True
                break
    if removed:
        db.signal_modified(key)
        notify = client.server.notify
        notify(SET_EVENTS, b"srem", key, db.index)
        if emptied:
            notify(GENERIC, b"del", key, db.index)
    return removed


@command("smove")
def smove(client: Client, argv: list[bytes]) -> int:
    src_key, dst_key, member = argv[1], argv[2], argv[3]
    src_value = lookup(client, src_key)
    dst_value = lookup(client, dst_key)
    if src_value is None:
        return 0  # before any type check, as Redis
    if type(src_value) is not Set or (
            dst_value is not None and type(dst_value) is not Set):
        raise CommandError(errors.WRONGTYPE)
    src: Set = src_value
    dst: Set | None = dst_value
    if src is dst:
        return 1 if member in src else 0
    if not src.remove(member):
        return 0
    db = client.db
    notify = client.server.notify
    notify(SET_EVENTS, b"srem", src_key, db.index)
    if not len(src):
        db.delete(src_key)
        notify(GENERIC, b"del", src_key, db.index)
    lim = limits(client)
    if dst is None:
        dst = Set.create(member, 1, lim)
        db.add(dst_key, dst)
    db.signal_modified(src_key)
    if dst.add(member, lim):
        db.signal_modified(dst_key)
        notify(SET_EVENTS, b"sadd", dst_key, db.index)
    return 1


# -- membership and size ------------------------------------------------------------------------


@command("sismember")
def sismember(client: Client, argv: list[bytes]) -> int:
    s = read_set(client, argv[1])
    return 1 if s is not None and argv[2] in s else 0


@command("smismember")
def smismember(client: Client, argv: list[bytes]) -> list[int]:
    s = read_set(client, argv[1])
    if s is None:
        return [0] * (len(argv) - 2)
    return [1 if member in s else 0 for member in islice(argv, 2, None)]


@command("scard")
def scard(client: Client, argv: list[bytes]) -> int:
    s = read_set(client, argv[1])
    return 0 if s is None else len(s)


@command("smembers")
def smembers(client: Client, argv: list[bytes]) -> Any:
    s = read_set(client, argv[1])
    return EMPTY_SET if s is None else in_pieces(OrderedSet(s.members()), client.resp)


# -- random members -----------------------------------------------------------------------------


# The most members one SREM that SPOP is logged as carries (Redis's SPOP_MOVE_STRATEGY_MUL
# batch: 1024).
_SREM_BATCH = 1024


@command("spop", counts_changes=True)
def spop(client: Client, argv: list[bytes]) -> Any:
    """SPOP: a random choice, so never logged as sent but as what it removed, as Redis
    propagates it: SREM of the members it chose (in batches), DEL when it took them all."""
    if len(argv) > 3:
        raise CommandError(errors.SYNTAX)
    key = argv[1]
    db = client.db
    if len(argv) == 2:
        s = lookup_set(client, key)
        if s is None:
            return None
        member = s.pop_random()
        client.propagate_as([b"SREM", key, member])
        client.server.dirty += 1
        notify = client.server.notify
        notify(SET_EVENTS, b"spop", key, db.index)
        if not len(s):
            db.delete(key)
            notify(GENERIC, b"del", key, db.index)
        db.signal_modified(key)
        return member
    count = parse_int(argv[2])
    if count is None or count < 0:
        raise CommandError(errors.NOT_POSITIVE)
    s = lookup_set(client, key)
    if s is None or count == 0:
        return EMPTY_SET
    server = client.server
    notify = server.notify
    notify(SET_EVENTS, b"spop", key, db.index)
    if count >= len(s):
        # The whole set, answered as SUNION of it would answer it.
        popped = setstore.union([s], limits(client)).members()
        server.dirty += len(popped)
        db.delete(key)
        # As Redis: UNLINK when the server deletes lazily.
        lazy = server.config["lazyfree-lazy-server-del"]
        client.propagate_as([b"UNLINK" if lazy else b"DEL", key])
        notify(GENERIC, b"del", key, db.index)
    else:
        popped = s.pop_many(count, limits(client))
        server.dirty += len(popped)
        if server.propagating:
            chosen = list(popped)
            for at in range(0, len(chosen), _SREM_BATCH):
                client.propagate_as([b"SREM", key, *chosen[at:at + _SREM_BATCH]])
    db.signal_modified(key)
    return OrderedSet(popped)


@command("srandmember")
def srandmember(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise CommandError(errors.SYNTAX)
    if len(argv) == 2:
        s = read_set(client, argv[1])
        return None if s is None else s.random_member()
    wanted = int_arg(argv[2])
    if wanted < -INT64_MAX:
        raise CommandError(errors.LONG_OUT_OF_RANGE)
    s = read_set(client, argv[1])
    if s is None or wanted == 0:
        return []
    count = abs(wanted)
    if wanted < 0 or count == 1:
        if count > MAX_DRAWS:
            raise CommandError(errors.REPLY_TOO_LONG)
        return s.random_members(count)
    if count >= len(s):
        return s.members()
    return s.distinct_members(count)


# -- set algebra --------------------------------------------------------------------------------


@command("sinter")
def sinter(client: Client, argv: list[bytes]) -> OrderedSet:
    return OrderedSet(setstore.intersection(_sets(client, argv[1:])))


def _card_args(argv: list[bytes], approx_allowed: bool) -> tuple[list[bytes], int, bool]:
    """The keys, LIMIT (0: none) and APPROX of SINTERCARD, SUNIONCARD and SDIFFCARD, checked
    in Redis's order: numkeys, then the options left to right."""
    numkeys = parse_int(argv[1])
    if numkeys is None or numkeys < 1:
        raise CommandError(errors.NUMKEYS_NOT_POSITIVE)
    if numkeys > len(argv) - 2:
        raise CommandError(errors.NUMKEYS_TOO_MANY)
    limit = 0
    approx = False
    i, n = 2 + numkeys, len(argv)
    while i < n:
        option = c_option(argv[i])
        if option == b"limit" and i + 1 < n:
            limit_value = parse_int(argv[i + 1])
            if limit_value is None or limit_value < 0:
                raise CommandError(errors.LIMIT_CANT_BE_NEGATIVE)
            limit = limit_value
            i += 2
        elif option == b"approx" and approx_allowed:
            approx = True
            i += 1
        else:
            raise CommandError(errors.SYNTAX)
    return argv[2:2 + numkeys], limit, approx


@command("sintercard")
def sintercard(client: Client, argv: list[bytes]) -> int:
    keys, limit, _ = _card_args(argv, approx_allowed=False)
    return setstore.intersection_size(_sets(client, keys), limit)


@command("sunioncard")
def sunioncard(client: Client, argv: list[bytes]) -> int:
    keys, limit, approx = _card_args(argv, approx_allowed=True)
    sets = _sets(client, keys)
    if not approx:
        return setstore.union_size(sets, limit)
    # A HyperLogLog estimate, as PFCOUNT gives for the same members: one register array
    # raised member by member, the union never built.
    registers = bytearray(hll.REGISTERS)
    for s in sets:
        if s is None:
            continue
        for member in s:
            index, count = hll.pattern(member)
            if count > registers[index]:
                registers[index] = count
    estimate = hll.estimate(hll.histogram(registers))
    return min(estimate, limit) if limit else estimate


@command("sdiffcard")
def sdiffcard(client: Client, argv: list[bytes]) -> int:
    keys, limit, _ = _card_args(argv, approx_allowed=False)
    return setstore.difference_size(_sets(client, keys), limit)


@command("sinterstore")
def sinterstore(client: Client, argv: list[bytes]) -> int:
    sets = _sets(client, argv[2:])
    return _store(client, argv[1], setstore.intersection_set(sets, limits(client)),
                  b"sinterstore")


@command("sunion")
def sunion(client: Client, argv: list[bytes]) -> OrderedSet:
    sets = _sets(client, argv[1:])
    return OrderedSet(setstore.union(sets, limits(client)).members())


@command("sunionstore")
def sunionstore(client: Client, argv: list[bytes]) -> int:
    sets = _sets(client, argv[2:])
    return _store(client, argv[1], setstore.union(sets, limits(client)), b"sunionstore")


@command("sdiff")
def sdiff(client: Client, argv: list[bytes]) -> OrderedSet:
    sets = _sets(client, argv[1:])
    return OrderedSet(setstore.difference(sets, limits(client)).members())


@command("sdiffstore")
def sdiffstore(client: Client, argv: list[bytes]) -> int:
    sets = _sets(client, argv[2:])
    return _store(client, argv[1], setstore.difference(sets, limits(client)), b"sdiffstore")


# -- SSCAN --------------------------------------------------------------------------------------


@command("sscan")
def sscan(client: Client, argv: list[bytes]) -> list[Any]:
    cursor = parse_scan_cursor(argv[2], client)
    s = read_set(client, argv[1])
    if s is None:
        return [b"0", []]  # Redis answers before it looks at the options
    count, pattern, _ = parse_scan_options(argv, 3)
    next_cursor, members = s.scan(cursor, count)
    if pattern is not None:
        match = compile_matcher(pattern)
        members = [m for m in members if match(m)]
    return [b"%d" % next_cursor, members]
