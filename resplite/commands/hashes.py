"""Hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL, HDEL, HEXISTS, HLEN, HKEYS, HVALS,
HSTRLEN, HINCRBY, HINCRBYFLOAT, HRANDFIELD and HSCAN.

The value type is :class:`resplite.store.hash.Hash`; these handlers parse arguments in Redis's
order (so the first error Redis would report is the one reported), look the key up (WRONGTYPE
for any other type), and decide where Redis converts a listpack into a hashtable:

* before a write, when a field or value is longer than ``hash-max-listpack-value``, and
  (Redis 7.2 and later) when HSET / HMSET bring more pairs than ``hash-max-listpack-entries``,
  duplicates included;
* after a write, when the hash holds more than ``hash-max-listpack-entries`` fields.

A key is created only when a field is about to be stored, and deleted when its last field is
removed, so the keyspace never holds an empty hash. Field expiry (Redis 7.4) lives in
:mod:`resplite.commands.hashes_expiry`; here every lookup drops the fields past their time,
HSET and HMSET clear a field's TTL and the increments keep it, as Redis does. Every write
calls ``signal_modified``, HSET even when it changed nothing, as Redis does.

Replies: HGETALL is a map (a flat array in RESP2); HRANDFIELD WITHVALUES is a list of pairs
in RESP3 and a flat array in RESP2. Option names are compared as C strings, case-insensitive
and ending at the first NUL byte, as Redis's ``strcasecmp`` sees them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.algorithms import longdouble
from resplite.commands.args import INT64_MAX, INT64_MIN, c_option, int_arg, parse_int
from resplite.commands.generic import lookup, lookup_read, parse_scan_cursor, parse_scan_options
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC, HASH
from resplite.engine.registry import command
from resplite.protocol.encoder import in_pieces
from resplite.protocol.replies import OK
from resplite.store.glob import compile_matcher
from resplite.store.hash import Hash

if TYPE_CHECKING:
    from resplite.engine.client import Client

HASH_NOT_INTEGER = "ERR hash value is not an integer"
HASH_NOT_FLOAT = "ERR hash value is not a float"
INCREMENT_NAN_OR_INF = "ERR value is NaN or Infinity"




def lookup_hash(client: Client, key: bytes) -> Hash | None:
    """The hash at ``key`` for a command that writes it, None when absent; WRONGTYPE for
    another type. Fields whose time has passed are dropped first (the key goes with
    the last of them), so no command ever sees an expired field."""
    return live_hash(client, key, lookup(client, key))


def read_hash(client: Client, key: bytes) -> Hash | None:
    """As :func:`lookup_hash`, for a command that only reads (a counted read lookup)."""
    return live_hash(client, key, lookup_read(client, key))


def live_hash(client: Client, key: bytes, value: Any) -> Hash | None:
    """The hash ``value`` that a lookup found at ``key``, its expired fields dropped first;
    None when nothing is left. WRONGTYPE when ``value`` is another type."""
    if value is None:
        return None
    if type(value) is not Hash:
        raise CommandError(errors.WRONGTYPE)
    if value.ttls:
        client.db.expire_fields(key, value)
        if not value.fields:
            return None
    return value


def create_hash(client: Client, key: bytes) -> Hash:
    h = Hash()
    client.db.add(key, h)
    return h


def listpack_limits(client: Client) -> tuple[int, int]:
    # The dict itself: Config.__getitem__ is a Python call, twice per write.
    values = client.server.config.values
    return values["hash-max-listpack-entries"], values["hash-max-listpack-value"]


# -- writing fields -----------------------------------------------------------------------------


def _set_pairs(client: Client, argv: list[bytes], fullname: str) -> int:
    if len(argv) % 2:
        raise CommandError(errors.wrong_arity(fullname))
    key = argv[1]
    h = lookup_hash(client, key)
    if h is None:
        h = create_hash(client, key)
    max_entries, max_value = listpack_limits(client)
    if h.listpack:
        if (len(argv) - 2) // 2 > max_entries:
            h.convert()  # Redis 7.2+: so many pairs will not fit, whatever their sizes
        else:
            h.fit_lengths(argv[2:], max_value)
    created = 0
    hset = h.set
    for i in range(2, len(argv), 2):
        if hset(argv[i], argv[i + 1]):
            created += 1
    h.fit_size(max_entries)
    db = client.db
    db.signal_modified(key)
    client.server.notify(HASH, b"hset", key, db.index)
    return created


@command("hset")
def hset(client: Client, argv: list[bytes]) -> int:
    return _set_pairs(client, argv, "hset")


@command("hmset")
def hmset(client: Client, argv: list[bytes]) -> Any:
    _set_pairs(client, argv, "hmset")
    return OK


@command("hsetnx")
def hsetnx(client: Client, argv: list[bytes]) -> int:
    key, field, value = argv[1], argv[2], argv[3]
    h = lookup_hash(client, key)
    if h is not None and field in h.fields:
        return 0
    _store_field(client, key, h, field, value, b"hset")
    return 1


def _store_field(
    client: Client, key: bytes, h: Hash | None, field: bytes, text: bytes, event: bytes
) -> None:
    """Store one field (HSETNX, HINCRBY, HINCRBYFLOAT), creating the hash when ``h`` is None,
    with the length and size checks Redis makes there; ``event`` is the notification. A
    field's TTL survives (the increments keep it; HSETNX only writes new fields)."""
    if h is None:
        h = create_hash(client, key)
    max_entries, max_value = listpack_limits(client)
    h.fit_lengths([field, text], max_value)
    h.set(field, text, keep_ttl=True)
    h.fit_size(max_entries)
    db = client.db
    db.signal_modified(key)
    client.server.notify(HASH, event, key, db.index)


@command("hincrby")
def hincrby(client: Client, argv: list[bytes]) -> int:
    key, field = argv[1], argv[2]
    increment = int_arg(argv[3])
    h = lookup_hash(client, key)
    current = h.fields.get(field) if h is not None else None
    if current is None:
        value = 0
    else:
        parsed = parse_int(current)
        if parsed is None:
            raise CommandError(HASH_NOT_INTEGER)
        value = parsed
    result = value + increment
    if result > INT64_MAX or result < INT64_MIN:
        raise CommandError(errors.OVERFLOW)
    _store_field(client, key, h, field, b"%d" % result, b"hincrby")
    return result


@command("hincrbyfloat")
def hincrbyfloat(client: Client, argv: list[bytes]) -> bytes:
    key, field = argv[1], argv[2]
    increment = longdouble.parse(argv[3])
    if increment is None:
        raise CommandError(errors.NOT_FLOAT)
    if abs(increment) >= longdouble.INF:
        raise CommandError(INCREMENT_NAN_OR_INF)
    h = lookup_hash(client, key)
    current = h.fields.get(field) if h is not None else None
    if current is None:
        value = longdouble.ZERO
    else:
        parsed = longdouble.parse(current)
        if parsed is None:
            raise CommandError(HASH_NOT_FLOAT)
        value = parsed
    try:
        result = longdouble.add(value, increment)
    except longdouble.Overflow:
        raise CommandError(errors.INCR_NAN_OR_INF) from None
    text = longdouble.format_human(result)
    _store_field(client, key, h, field, text, b"hincrbyfloat")
    # Logged as the value it left, as Redis does (a replay must not depend on how another
    # machine rounds the addition); the field's TTL, which HSET would drop, follows it.
    client.propagate_as([b"HSET", key, field, text])
    stored = client.db.data.get(key)
    when = stored.ttl_of(field) if isinstance(stored, Hash) else None
    if when is not None:
        client.propagate_as([b"HPEXPIREAT", key, b"%d" % when, b"FIELDS", b"1", field])
    return text


@command("hdel")
def hdel(client: Client, argv: list[bytes]) -> int:
    key = argv[1]
    h = lookup_hash(client, key)
    if h is None:
        return 0
    deleted = 0
    for field in argv[2:]:
        if h.delete(field):
            deleted += 1
            if not h.fields:
                break
    if deleted:
        db = client.db
        gone = not h.fields
        if gone:
            db.delete(key)
        db.signal_modified(key)
        client.server.notify(HASH, b"hdel", key, db.index)
        if gone:
            client.server.notify(GENERIC, b"del", key, db.index)
    return deleted


# -- reading fields -----------------------------------------------------------------------------


@command("hget")
def hget(client: Client, argv: list[bytes]) -> bytes | None:
    h = read_hash(client, argv[1])
    return None if h is None else h.fields.get(argv[2])


@command("hmget")
def hmget(client: Client, argv: list[bytes]) -> list[bytes | None]:
    h = read_hash(client, argv[1])
    if h is None:
        return [None] * (len(argv) - 2)
    get = h.fields.get
    return [get(field) for field in argv[2:]]


@command("hexists")
def hexists(client: Client, argv: list[bytes]) -> int:
    h = read_hash(client, argv[1])
    return 1 if h is not None and argv[2] in h.fields else 0


@command("hlen")
def hlen(client: Client, argv: list[bytes]) -> int:
    h = read_hash(client, argv[1])
    return 0 if h is None else len(h.fields)


@command("hstrlen")
def hstrlen(client: Client, argv: list[bytes]) -> int:
    h = read_hash(client, argv[1])
    value = None if h is None else h.fields.get(argv[2])
    return 0 if value is None else len(value)


@command("hgetall")
def hgetall(client: Client, argv: list[bytes]) -> Any:
    h = read_hash(client, argv[1])
    # A copy: inside MULTI the reply is encoded after later commands of the transaction ran,
    # and a large one is encoded as it is sent.
    return {} if h is None else in_pieces(dict(h.fields), client.resp)


@command("hkeys")
def hkeys(client: Client, argv: list[bytes]) -> Any:
    h = read_hash(client, argv[1])
    return [] if h is None else in_pieces(list(h.fields), client.resp)


@command("hvals")
def hvals(client: Client, argv: list[bytes]) -> Any:
    h = read_hash(client, argv[1])
    return [] if h is None else in_pieces(list(h.fields.values()), client.resp)


# -- HRANDFIELD ---------------------------------------------------------------------------------


@command("hrandfield")
def hrandfield(client: Client, argv: list[bytes]) -> Any:
    if len(argv) == 2:
        h = read_hash(client, argv[1])
        return None if h is None else h.random_field()
    wanted = int_arg(argv[2])
    if wanted < -INT64_MAX:
        raise CommandError(errors.LONG_OUT_OF_RANGE)
    if len(argv) > 4 or (len(argv) == 4 and c_option(argv[3]) != b"withvalues"):
        raise CommandError(errors.SYNTAX)
    withvalues = len(argv) == 4
    # Redis bounds the count so that twice it (fields and values) still fits a long.
    if withvalues and not -(INT64_MAX // 2) <= wanted <= INT64_MAX // 2:
        raise CommandError(errors.VALUE_OUT_OF_RANGE)
    h = read_hash(client, argv[1])
    if h is None or wanted == 0:
        return []
    count = abs(wanted)
    if wanted < 0 or count == 1:
        pairs = h.random_pairs(count)
    elif count >= len(h.fields):
        pairs = list(h.fields.items())
    else:
        pairs = h.distinct_pairs(count)
    if not withvalues:
        return [field for field, _ in pairs]
    if client.resp >= 3:
        return [[field, value] for field, value in pairs]
    return [x for pair in pairs for x in pair]


# -- HSCAN --------------------------------------------------------------------------------------


@command("hscan")
def hscan(client: Client, argv: list[bytes]) -> list[Any]:
    cursor = parse_scan_cursor(argv[2], client)
    h = read_hash(client, argv[1])
    if h is None:
        return [b"0", []]  # Redis answers before it looks at the options
    count, pattern, novalues = parse_scan_options(argv, 3, novalues_allowed=True)
    next_cursor, fields = h.scan(cursor, count)
    if pattern is not None:
        match = compile_matcher(pattern)
        fields = [field for field in fields if match(field)]
    if novalues:
        items = fields
    else:
        values = h.fields
        items = [x for field in fields for x in (field, values[field])]
    return [b"%d" % next_cursor, items]
