"""Server commands: INFO, DBSIZE, FLUSHDB, FLUSHALL, SWAPDB, TIME, SHUTDOWN, DEBUG, LASTSAVE,
SAVE, BGSAVE, BGREWRITEAOF, ROLE, WAIT, WAITAOF, LOLWUT, READONLY, READWRITE.

CONFIG lives in :mod:`resplite.commands.config`; ACL, MEMORY and SLOWLOG in
:mod:`resplite.commands.admin`.

SAVE writes an RDB snapshot in the foreground, BGSAVE in a forked child
(:mod:`resplite.engine.persistence`); LASTSAVE is the time of the last successful save.
BGREWRITEAOF answers that no AOF is configured: resplite writes snapshots only.

SHUTDOWN stops the server gracefully (every connection is closed, the caller gets no reply,
as with Redis); its NOSAVE / SAVE / NOW / FORCE / ABORT words are parsed as Redis parses
them. It saves a snapshot first when save rules are set or SAVE is given (not with NOSAVE);
a failed save stops the shutdown unless FORCE is given. DEBUG RELOAD saves, empties the
keyspace and loads the file back. WAIT has no replicas to wait for: it answers 0 at once
when asked for none, and otherwise blocks until its timeout (for ever with 0) as Redis does
without replicas. WAITAOF (Redis 7.2) answers from the append-only file's fsynced offset
(:mod:`resplite.engine.aof`): ``[1, 0]`` once the caller's last write is fsynced, waiting for
that when ``numlocal`` is 1, and for ever (or its timeout) when replicas are asked for, as
Redis without replicas; inside MULTI or a script it answers at once. DEBUG is limited to
SLEEP, SET-ACTIVE-EXPIRE, OBJECT, RELOAD, POPULATE and HELP, and is refused by the
dispatcher unless ``enable-debug-command`` allows it. DEBUG SLEEP stops the whole server for
its duration, exactly as in Redis.
"""

from __future__ import annotations

import logging
import os
import re
import time
from typing import TYPE_CHECKING, Any

from resplite.commands import debug_digest
from resplite.commands.args import parse_int
from resplite.commands.helptext import help_reply
from resplite.engine import compat, errors, info
from resplite.engine.blocking import BlockRequest
from resplite.engine.errors import CommandError
from resplite.engine.persistence import LoadError
from resplite.engine.registry import command
from resplite.protocol.encoder import encode
from resplite.protocol.replies import (
    OK,
    BigNumber,
    Double,
    OrderedSet,
    Push,
    Raw,
    Status,
    Verbatim,
)
from resplite.store.list import List

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.state import ServerState

log = logging.getLogger("resplite.server")

_INT_MAX = (1 << 31) - 1
_LLONG_MAX = (1 << 63) - 1
# The leading part of a number as C's strtod / atoi read it (the rest is ignored).
_STRTOD = re.compile(rb"\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf|nan)", re.I)
_ATOI = re.compile(rb"\s*[-+]?\d+")

_DEBUG_HELP = help_reply("DEBUG", [
    ("DIGEST", [
        "Reply with the SHA-1 digest of the whole data set (Redis's: equal data sets give",
        "equal digests there and here); all zeros when it is empty.",
    ]),
    ("DIGEST-VALUE <key> [<key> ...]", [
        "Reply with the digest of the value at each <key> (all zeros for a missing key).",
    ]),
    ("LOADAOF", [
        "Write out the append-only file, empty the data set and load it back from the",
        "append-only files.",
    ]),
    ("OBJECT <key>", [
        "Reply with a line about the value at <key>: its address, reference count,",
        "encoding, serialized length and access clock.",
    ]),
    ("POPULATE <count> [<prefix>] [<size>]", [
        "Create <count> string keys named <prefix>:<num> (prefix 'key' by default), each",
        "holding 'value:<num>', or <size> bytes starting with it; keys that exist are left",
        "as they are. Not written to the append-only file.",
    ]),
    ("PAUSE-CRON <0|1>", [
        "1 stops the server's periodic work (active expiry, client timeouts, persistence",
        "checks); 0 starts it again.",
    ]),
    ("PROTOCOL <type>", [
        "Reply with a sample of a RESP type: string, integer, double, bignum, null, array,",
        "set, map, attrib, push, verbatim, true or false.",
    ]),
    ("RELOAD [option ...]", [
        "Write the data set to the RDB file, empty it, and load the file back in. Options:",
        "NOSAVE loads the file as it is, without writing it first; NOFLUSH loads on top of",
        "the data set instead of emptying it; MERGE lets the file's keys and libraries",
        "replace those of the same name already there.",
    ]),
    ("SET-ACTIVE-EXPIRE <0|1>", [
        "0 stops the periodic sweep that deletes expired keys; 1 starts it again.",
        "Keys still expire when they are accessed.",
    ]),
    ("SLEEP <seconds>", [
        "Freeze the whole server for <seconds>, which may have a fraction; 0 returns",
        "at once.",
    ]),
])


# -- INFO ---------------------------------------------------------------------------------


@command("info")
def info_(client: Client, argv: list[bytes]) -> Any:
    names = [arg.decode("utf-8", "replace") for arg in argv[1:]]
    return Verbatim(info.render(client.server, names))


# -- databases ----------------------------------------------------------------------------


@command("dbsize")
def dbsize(client: Client, argv: list[bytes]) -> Any:
    return len(client.db)


def _flush_lazily(client: Client, argv: list[bytes]) -> bool:
    """Whether FLUSHALL / FLUSHDB frees lazily: ASYNC, or lazyfree-lazy-user-flush unless
    SYNC; the keyspace is empty at once either way."""
    if len(argv) == 2 and argv[1].lower() in (b"sync", b"async"):
        return argv[1].lower() == b"async"
    if len(argv) != 1:
        raise CommandError(errors.SYNTAX)
    return bool(client.server.config["lazyfree-lazy-user-flush"])


def flush_database(server: ServerState, index: int | None, lazy: bool = False) -> None:
    """Empty one database, or all of them; WATCHes and blocked clients are told first.
    ``lazy`` hands the old contents to the lazy free (see resplite.engine.lazyfree)."""
    server.signal_flush(index)
    dbs = server.keyspace.dbs if index is None else [server.keyspace[index]]
    for db in dbs:
        keys = db.flush(detach=lazy)
        if lazy and db.detached is not None:
            server.lazyfree.defer(db.detached, objects=len(keys))
            db.detached = None


def _flush(client: Client, argv: list[bytes], index: int | None) -> Any:
    server = client.server
    lazy = _flush_lazily(client, argv)
    # Redis 8 runs a client's synchronous flush in the background too, the client waiting
    # for its end (not inside MULTI or a script): its keys count as lazily freed.
    waited = not lazy and client.may_block and compat.follows(
        server.config["redis-compat-version"], "flush-sync-in-background")
    flush_database(server, index, lazy or waited)
    if waited:
        server.lazyfree.release()  # freed before the reply, which the client waited for
    return OK


@command("flushdb")
def flushdb(client: Client, argv: list[bytes]) -> Any:
    return _flush(client, argv, client.db_index)


@command("flushall")
def flushall(client: Client, argv: list[bytes]) -> Any:
    return _flush(client, argv, None)


def _db_index(arg: bytes, error: str) -> int:
    value = parse_int(arg)
    if value is None or not -_INT_MAX - 1 <= value <= _INT_MAX:
        raise CommandError(error)
    return value


@command("swapdb")
def swapdb(client: Client, argv: list[bytes]) -> Any:
    first = _db_index(argv[1], errors.INVALID_FIRST_DB)
    second = _db_index(argv[2], errors.INVALID_SECOND_DB)
    server = client.server
    count = len(server.keyspace)
    if not (0 <= first < count and 0 <= second < count):
        raise CommandError(errors.DB_INDEX_OUT_OF_RANGE)
    if first != second:
        server.signal_flush(first, swapped_with=second)
        server.keyspace.swap(first, second)
    return OK


# -- time and persistence -----------------------------------------------------------------


@command("time")
def time_(client: Client, argv: list[bytes]) -> Any:
    micros = client.server.clock.time_us()
    return [b"%d" % (micros // 1_000_000), b"%d" % (micros % 1_000_000)]


@command("lastsave")
def lastsave(client: Client, argv: list[bytes]) -> Any:
    return client.server.last_save_time


@command("save")
def save(client: Client, argv: list[bytes]) -> Any:
    persistence = client.server.persistence
    if persistence.in_progress:
        raise CommandError("ERR Background save already in progress")
    if not persistence.save():
        raise CommandError("ERR")
    return OK


@command("bgsave")
def bgsave(client: Client, argv: list[bytes]) -> Any:
    schedule = False
    if len(argv) > 1:
        if len(argv) == 2 and argv[1].lower() == b"schedule":
            schedule = True
        else:
            raise CommandError(errors.SYNTAX)
    persistence = client.server.persistence
    if persistence.in_progress:
        raise CommandError("ERR Background save already in progress")
    if client.executing_multi:
        # Forking inside a transaction would snapshot it half done: Redis schedules it.
        persistence.bgsave_scheduled = True
        return Status("Background saving scheduled")
    if client.server.aof.in_progress:
        if not schedule:
            raise CommandError(
                "ERR Another child process is active (AOF?): can't BGSAVE right now. Use "
                "BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
        persistence.bgsave_scheduled = True
        return Status("Background saving scheduled")
    if not persistence.bgsave():
        raise CommandError("ERR")
    return Status("Background saving started")


@command("bgrewriteaof")
def bgrewriteaof(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    aof = server.aof
    if aof.in_progress:
        raise CommandError("ERR Background append only file rewriting already in progress")
    if server.persistence.in_progress or client.executing_multi:
        aof.rewrite_scheduled = True
        return Status("Background append only file rewriting scheduled")
    if not aof.rewrite():
        raise CommandError("ERR Can't execute an AOF background rewriting. Please check the "
                           "server logs for more information.")
    return Status("Background append only file rewriting started")


# -- shutdown -----------------------------------------------------------------------------


@command("shutdown")
def shutdown(client: Client, argv: list[bytes]) -> Any:
    words = {b"nosave", b"save", b"now", b"force", b"abort"}
    given: set[bytes] = set()
    for arg in argv[1:]:
        word = arg.lower()
        if word not in words:
            raise CommandError(errors.SYNTAX)
        given.add(word)
    if (b"abort" in given and len(given) > 1) or (b"nosave" in given and b"save" in given):
        raise CommandError(errors.SYNTAX)
    if b"abort" in given:
        # A shutdown here is immediate, so there is never one in progress to abort.
        raise CommandError(errors.NO_SHUTDOWN_IN_PROGRESS)
    server = client.server
    if server.scripting.busy:
        # A script past busy-reply-threshold: only SHUTDOWN NOSAVE may end the server, and
        # it ends the script with it.
        if b"nosave" not in given:
            raise CommandError(server.scripting.busy_error())
        server.scripting.abort()
    persistence = server.persistence
    if persistence.loading:
        # As Redis: a server still loading its data set has nothing new to save.
        given.discard(b"save")
        given.add(b"nosave")
    persistence.kill_child()
    if (b"save" in given or (server.config["save"] and b"nosave" not in given)) \
            and not persistence.save() and b"force" not in given:
        log.warning("Error trying to save the DB, can't exit.")
        raise CommandError(errors.SHUTDOWN_FAILED)
    server.shutdown_saved = True
    client.close_after_reply = True
    if server.shutdown_requested is not None:
        server.shutdown_requested()
    return Raw(b"")


# -- replication and cluster stand-ins ----------------------------------------------------


@command("role")
def role(client: Client, argv: list[bytes]) -> Any:
    return client.server.replication.role_reply()


_WAIT_ON_REPLICA = (
    "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
    "if a replica is configured to be writable (which is not the default) writes to "
    "replicas are just local and are not propagated.")
_WAITAOF_ON_REPLICA = (
    "ERR WAITAOF cannot be used with replica instances. Please also note that writes to "
    "replicas are just local and are not propagated.")


def timeout_ms(client: Client, arg: bytes) -> int:
    """A relative millisecond timeout checked as Redis checks one (0 means none)."""
    value = parse_int(arg)
    if value is None:
        raise CommandError(errors.TIMEOUT_NOT_INTEGER)
    if value < 0:
        raise CommandError(errors.TIMEOUT_NEGATIVE)
    if value > _LLONG_MAX - client.server.clock.time_ms():
        raise CommandError(errors.TIMEOUT_OUT_OF_RANGE)
    return value


@command("wait")
def wait(client: Client, argv: list[bytes]) -> Any:
    """WAIT numreplicas timeout: the replicas that acknowledged the caller's last write
    (resplite.engine.replication), waiting for ``numreplicas`` of them at most ``timeout``."""
    repl = client.server.replication
    if repl.master_host:
        raise CommandError(_WAIT_ON_REPLICA)
    replicas = parse_int(argv[1])
    if replicas is None:
        raise CommandError(errors.NOT_INTEGER)
    timeout = timeout_ms(client, argv[2])
    woff = client.woff
    acked = repl.acked(woff)
    if acked >= replicas or not client.may_block:
        return acked
    request = BlockRequest(keys=[], timeout_ms=timeout, retry=lambda: None, timeout_reply=acked)

    def retry() -> Any:
        now = repl.acked(woff)
        if now >= replicas:
            return now
        request.timeout_reply = now
        return request

    request.retry = retry
    repl.ask_acks(client)
    return request


@command("waitaof")
def waitaof(client: Client, argv: list[bytes]) -> Any:
    """WAITAOF numlocal numreplicas timeout: [local fsyncs, replica fsyncs] of this client's
    writes. With no replicas the second is 0; the first is whether the append-only file's
    fsynced offset has reached the client's last write (see resplite.engine.aof)."""
    numlocal = parse_int(argv[1])
    if numlocal is None:
        raise CommandError(errors.NOT_INTEGER)
    if not 0 <= numlocal <= 1:
        raise CommandError(errors.NUMLOCAL_OUT_OF_RANGE)
    numreplicas = parse_int(argv[2])
    if numreplicas is None or numreplicas < 0:
        raise CommandError(errors.NOT_POSITIVE)
    timeout = timeout_ms(client, argv[3])
    server = client.server
    repl = server.replication
    if repl.master_host:
        raise CommandError(_WAITAOF_ON_REPLICA)
    if numlocal and not server.config["appendonly"]:
        raise CommandError(errors.WAITAOF_APPENDONLY_OFF)
    aof = server.aof
    woff = client.woff

    def acks() -> list[int]:
        return [int(aof.fsynced_offset >= woff), repl.acked(woff, aof=True)]

    reply = acks()
    if reply[0] >= numlocal and reply[1] >= numreplicas:
        return reply
    request = BlockRequest(keys=[], timeout_ms=timeout, retry=lambda: None, timeout_reply=reply)

    def retry() -> Any:
        now = acks()
        if now[0] >= numlocal and now[1] >= numreplicas:
            return now
        request.timeout_reply = now  # what a timeout then answers
        return request

    request.retry = retry
    if client.may_block:
        aof.prune_fsync_waiters()
        aof.fsync_waiters[client] = None
        if numreplicas:
            repl.ask_acks(client)
    return request


@command("lolwut")
def lolwut(client: Client, argv: list[bytes]) -> Any:
    if len(argv) >= 3 and argv[1].lower() == b"version" and parse_int(argv[2]) is None:
        raise CommandError(errors.NOT_INTEGER)
    # Redis draws art for versions 5 and 6; resplite only states the version it follows.
    version = compat.reported(client.server.config["redis-compat-version"])
    return Verbatim(f"Redis ver. {version}\n".encode())


# -- DEBUG --------------------------------------------------------------------------------


def _strtod(arg: bytes) -> float:
    match = _STRTOD.match(arg)
    if match is None:
        return 0.0
    try:
        return float(match.group(0))
    except ValueError:
        return 0.0


def _atoi(arg: bytes) -> int:
    match = _ATOI.match(arg)
    return int(match.group(0)) if match else 0


def _encoding(value: Any) -> str:
    if isinstance(value, bytes):
        if len(value) <= 20 and parse_int(value) is not None:
            return "int"
        return "embstr" if len(value) <= 44 else "raw"
    encoding = getattr(value, "encoding", None)
    return encoding if isinstance(encoding, str) else type(value).__name__.lower()


def _debug_object(client: Client, key: bytes) -> Any:
    # As Redis's dbFind: no access (the key's LRU clock is what it reports) and no expiry.
    db = client.db
    value = db.data.get(key)
    if value is None:
        raise CommandError(errors.NO_SUCH_KEY)
    encoding = _encoding(value)
    shared = encoding == "int" and 0 <= int(value) < 10000
    length = len(value) if isinstance(value, (bytes, bytearray)) else 0
    serialized = (len(str(int(value))) if encoding == "int" else length + 1) if length else 1
    lru = db.access.get(key, db.lru_clock)  # the LRU clock of its last access (or LFU field)
    idle = db.idle_ms(key) // 1000
    extra = ""
    if isinstance(value, List) and value.quick:
        # The node figures mirror Redis's quicklist exactly (see resplite.store.list).
        nodes, count, size = value.quicklist_stats()
        compressed = int(client.server.config["list-compress-depth"] != 0)
        extra = (
            f" ql_nodes:{nodes} ql_avg_node:{count / nodes:.2f} ql_listpack_max:{value.fill}"
            f" ql_compressed:{compressed} ql_uncompressed_size:{size}"
        )
    return Status(
        f"Value at:0x{id(value):x} refcount:{2147483647 if shared else 1} "
        f"encoding:{encoding} serializedlength:{serialized} lru:{lru} "
        f"lru_seconds_idle:{idle}{extra}"
    )


_PROTOCOL_SAMPLES: dict[bytes, Any] = {
    b"string": b"Hello World",
    b"integer": 12345,
    b"double": Double(b"3.141"),
    b"bignum": BigNumber(1234567999999999999999999999999999999),
    b"null": None,
    b"array": [0, 1, 2],
    b"set": OrderedSet((0, 1, 2)),
    b"map": {0: False, 1: True, 2: False},
    b"true": True,
    b"false": False,
    b"verbatim": Verbatim(b"This is a verbatim\nstring", "txt"),
}


def _debug_protocol(client: Client, name: bytes) -> Any:
    """DEBUG PROTOCOL <type>: Redis's sample reply of each RESP type, for client tests. An
    attribute (RESP3 only) comes before an ordinary reply, as in Redis; a push before it
    (Redis 7.0) or after it (8.6: pushes made while a command runs wait for its reply)."""
    sample = _PROTOCOL_SAMPLES.get(name)
    if sample is not None or name == b"null":
        return sample
    if name == b"attrib":
        after = encode(b"Some real reply following the attribute", client.resp)
        if client.resp < 3:
            return Raw(after)
        attribute = encode(b"key-popularity", 3) + encode([b"key:123", 90], 3)
        return Raw(b"|1\r\n" + attribute + after)
    if name == b"push":
        if client.resp < 3:
            raise CommandError("ERR RESP2 is not supported by this command")
        push = encode(Push([b"server-cpu-usage", 42]), 3)
        reply = encode(b"Some real reply following the push reply", 3)
        if compat.follows(client.server.config["redis-compat-version"], "push-after-reply"):
            return Raw(reply + push)
        return Raw(push + reply)
    raise CommandError("ERR Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|"
                       "true|false")


def _debug_loadaof(client: Client) -> Any:
    """DEBUG LOADAOF: write out what the append-only file has in memory, empty the data set
    and load it back from the files the manifest on disk names, as Redis does. Without a
    manifest the data set is left empty and the answer is Redis's error."""
    server = client.server
    aof = server.aof
    if server.aof_on:
        aof.before_reply()
    flush_database(server, None)
    try:
        if not os.path.isfile(aof.manifest_path):
            raise LoadError(f"no append-only file manifest at {aof.manifest_path}")
        aof.read_at_start()
        aof.load()
    except LoadError as exc:
        log.warning("DEBUG LOADAOF: %s", exc)
        raise CommandError("ERR Error trying to load the AOF files, check server logs.") \
            from None
    server.dirty = 0
    log.info("Append Only File loaded by DEBUG LOADAOF")
    return OK


def _debug_reload(client: Client, options: list[bytes]) -> Any:
    words = {w.lower() for w in options}
    if not words <= {b"merge", b"nosave", b"noflush"}:
        raise CommandError(errors.subcommand_syntax([b"debug", b"reload", *options]))
    server = client.server
    persistence = server.persistence
    if b"nosave" not in words:
        persistence.kill_child()
        if not persistence.save():
            raise CommandError("ERR")
    if b"noflush" not in words:
        flush_database(server, None)
        server.scripting.flush_functions()  # the file brings them back, as Redis's emptyData
    try:
        # MERGE (with NOFLUSH): what is already there is replaced by the file's, as
        # Redis's RDBFLAGS_ALLOW_DUP; without it a key or library both hold fails the load.
        persistence.load_file(persistence.path, merge=b"merge" in words)
    except LoadError as exc:
        log.warning("DEBUG RELOAD: %s", exc)
        raise CommandError("ERR Error trying to load the RDB dump, check server logs.") \
            from None
    log.info("DB reloaded by DEBUG RELOAD")
    return OK


def _positive(arg: bytes) -> int:
    """getPositiveLongFromObjectOrReply without a message of its own: a long, 0 or more;
    anything else (a word too) gets the same "must be positive" error."""
    value = parse_int(arg)
    if value is None or value < 0:
        raise CommandError(errors.NOT_POSITIVE)
    return value


def _debug_populate(client: Client, argv: list[bytes]) -> Any:
    """Redis's DEBUG POPULATE: ``count`` string keys ``<prefix>:<n>`` holding ``value:<n>``
    (or ``size`` bytes that start with it, zero-filled), skipping keys that exist. Keys are
    signalled as modified (WATCH, tracking) but not counted as changes, so nothing is
    propagated, as in Redis."""
    count = _positive(argv[2])
    if client.server.persistence.loading:
        raise CommandError(errors.LOADING)
    size = _positive(argv[4]) if len(argv) == 5 else 0
    # Redis formats into a 128-byte C buffer: the prefix ends at a NUL, the name at 127.
    prefix = argv[3].split(b"\0", 1)[0] if len(argv) > 3 else b"key"
    db = client.db
    for n in range(count):
        key = b"%s:%d" % (prefix, n)
        if len(key) > _POPULATE_NAME_MAX:
            key = key[:_POPULATE_NAME_MAX]
        if db.contains(key):
            continue
        value = b"value:%d" % n
        if size:
            value = value[:size].ljust(size, b"\0")
        db.set(key, value)
        db.signal_modified(key)
    return OK


_POPULATE_NAME_MAX = 127


@command("debug")
def debug(client: Client, argv: list[bytes]) -> Any:
    sub = argv[1].lower()
    if sub == b"help" and len(argv) == 2:
        return _DEBUG_HELP
    if sub == b"sleep" and len(argv) == 3:
        seconds = _strtod(argv[2])
        if seconds > 0:
            time.sleep(min(seconds, 1e7))
        return OK
    if sub == b"set-active-expire" and len(argv) == 3:
        client.server.config.values["active-expire-enabled"] = _atoi(argv[2]) != 0
        return OK
    if sub == b"pause-cron" and len(argv) == 3:
        client.server.cron_paused = _atoi(argv[2]) != 0
        return OK
    if sub == b"object" and len(argv) == 3:
        return _debug_object(client, argv[2])
    if sub == b"reload":
        return _debug_reload(client, argv[2:])
    if sub == b"loadaof":
        return _debug_loadaof(client)
    if sub == b"set-disable-deny-scripts" and len(argv) == 3:  # unlisted in HELP, as in Redis
        client.server.scripting.allow_noscript = _atoi(argv[2]) != 0
        return OK
    if sub == b"populate" and 3 <= len(argv) <= 5:
        return _debug_populate(client, argv)
    if sub == b"protocol" and len(argv) == 3:
        return _debug_protocol(client, argv[2].lower())
    if sub == b"digest" and len(argv) == 2:
        return Status(debug_digest.dataset_digest(client.server.keyspace.dbs).hex())
    if sub == b"digest-value":
        # The values as they are, logically expired ones included, as Redis's dbFind.
        data = client.db.data
        return [Status(debug_digest.value_digest(client.db, key, data[key]).hex()
                       if key in data else "0" * 40) for key in argv[2:]]
    raise CommandError(errors.subcommand_syntax(argv))
