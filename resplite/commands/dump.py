"""DUMP and RESTORE: a key's value in Redis's own serialization, between servers.

A payload is the value's RDB type byte, its RDB form, the RDB version as two little-endian
bytes and a CRC-64 of all that (:mod:`resplite.formats.rdb_values`). DUMP writes, as RDB
version, the oldest one that knows the value's type (9 for strings and other types Redis 5
already had, 10 for listpack hashes and sorted sets, 11 for listpack sets and streams, 12 for
hashes with field TTLs, 13 for a stream with idempotent-producer state, in Redis 8.6's form),
so Redis 7.0 restores every payload whose type it knows, and newer servers all of them; Redis
itself writes its own current version, which older servers refuse. RESTORE accepts versions
up to 13 and answers Redis's errors: ``DUMP payload version or
checksum are wrong`` for a newer version or a bad checksum, ``Bad data format`` for a payload
that does not parse (or holds a type resplite cannot keep, such as a module type), ``BUSYKEY``
when the key exists without REPLACE.

RESTORE-ASKING, which MIGRATE sends to a cluster node, is RESTORE allowed on a slot the node
is importing (its ``asking`` flag stands for a preceding ASKING); elsewhere it is RESTORE.

Every payload is validated deeply, whatever ``sanitize-dump-payload`` says (Redis checks
only the outer structure under ``no``, its default): a malformed value is refused with
``Bad data format`` rather than kept to fail a later command or SAVE. The setting (no, yes,
clients, as Redis) decides only what INFO's ``dump_payload_sanitizations`` counts.

RESTORE's TTL is relative milliseconds unless ABSTTL; a time already past stores nothing (and
deletes the old key under REPLACE, reported as ``del``). IDLETIME sets the LRU access time
(under a non-LFU policy), FREQ the LFU counter (under an LFU policy), as Redis's
``objectSetLRUOrLFU`` does; each excludes the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.args import parse_int
from resplite.commands.generic import note_overwrite, type_before
from resplite.engine import compat, errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC
from resplite.engine.persistence import keep_stream_forms, load_limits
from resplite.engine.registry import command
from resplite.formats import rdb_values
from resplite.formats.rdb_format import RdbError
from resplite.protocol.replies import OK

if TYPE_CHECKING:
    from resplite.engine.client import Client

_LLONG_MAX = (1 << 63) - 1
BAD_FORMAT = "ERR Bad data format"


@command("dump")
def dump(client: Client, argv: list[bytes]) -> Any:
    db = client.db
    value = db.read(argv[1])
    if value is None:
        return None
    server = client.server
    payload = rdb_values.dump_payload(value, server.config["rdbcompression"],
                                      keep_stream_forms(server))
    # A stream keeps its nodes' compressed forms for the next DUMP or SAVE: charge them.
    db.recharge(argv[1])
    return payload


def _long(arg: bytes) -> int:
    value = parse_int(arg)
    if value is None or not -_LLONG_MAX - 1 <= value <= _LLONG_MAX:
        raise CommandError(errors.NOT_INTEGER)
    return value


def _sanitizes(client: Client) -> bool:
    """Whether Redis would sanitize this RESTORE's payload deeply (``rdbLoadObject``):
    always under ``sanitize-dump-payload yes``; under ``clients`` unless the server is
    loading (an append-only file's RESTORE) or the client's user has
    ``skip-sanitize-payload``. resplite validates every payload deeply regardless; this
    decides what INFO's ``dump_payload_sanitizations`` counts."""
    server = client.server
    mode = server.config["sanitize-dump-payload"]
    if mode == "yes":
        return True
    return mode == "clients" and not server.persistence.loading and \
        client.user.sanitize != "skip-sanitize-payload"


@command("restore-asking", counts_changes=True)
@command("restore", counts_changes=True)
def restore(client: Client, argv: list[bytes]) -> Any:
    replace = absttl = False
    idle = freq = -1
    i, n = 4, len(argv)
    while i < n:
        option = argv[i].lower()
        more = n - i - 1
        if option == b"replace":
            replace = True
        elif option == b"absttl":
            absttl = True
        elif option == b"idletime" and more >= 1 and freq == -1:
            idle = _long(argv[i + 1])
            if idle < 0:
                raise CommandError("ERR Invalid IDLETIME value, must be >= 0")
            i += 1
        elif option == b"freq" and more >= 1 and idle == -1:
            freq = _long(argv[i + 1])
            if not 0 <= freq <= 255:
                raise CommandError("ERR Invalid FREQ value, must be >= 0 and <= 255")
            i += 1
        else:
            raise CommandError(errors.SYNTAX)
        i += 1
    key = argv[1]
    db = client.db
    if not replace and db.contains(key):
        raise CommandError(errors.BUSYKEY)
    ttl = _long(argv[2])
    if ttl < 0:
        raise CommandError("ERR Invalid TTL value, must be >= 0")
    payload = argv[3]
    server = client.server
    if not rdb_values.payload_valid(payload, zero_crc=compat.follows(
            server.config["redis-compat-version"], "payload-crc-zero")):
        raise CommandError(errors.BAD_DUMP_PAYLOAD)
    try:
        value, checked = rdb_values.parse_payload_checked(payload, key,
                                                          load_limits(server.config))
    except (RdbError, rdb_values.UnsupportedValue, rdb_values.EmptyValue):
        raise CommandError(BAD_FORMAT) from None
    if _sanitizes(client):
        server.dump_payload_sanitizations += checked
    before = type_before(client, key) if replace else None
    deleted = db.delete(key) if replace else False
    now = server.clock.time_ms()
    if ttl and not absttl:
        ttl += now
    if ttl and ttl <= now and not server.persistence.loading:
        if deleted:
            db.signal_modified(key)
            # As Redis's deleteExpiredKeyFromOverwriteAndPropagate: UNLINK when the
            # server deletes lazily.
            lazy = server.config["lazyfree-lazy-server-del"]
            client.propagate_as([b"UNLINK" if lazy else b"DEL", key])
            server.dirty += 1
            server.notify(GENERIC, b"del", key, db.index)
        # Not stored, but counted as a key that expired (INFO expired_keys), as Redis does.
        db.expired_keys += 1
        return OK
    if ttl and not absttl:
        # Logged with the absolute time, as Redis rewrites it: the same expiry on replay.
        client.propagate_as([argv[0], key, b"%d" % ttl, *argv[3:], b"ABSTTL"])
    db.put(key, value, ttl or None, None)
    db.restore_access(key, idle if idle >= 0 else None, freq if freq >= 0 else None)
    db.signal_modified(key)
    server.dirty += 1
    server.notify(GENERIC, b"restore", key, db.index)
    note_overwrite(client, key, before, value)
    return OK
