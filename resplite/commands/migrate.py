"""MIGRATE: keys moved (or copied) to another server with DUMP payloads and RESTORE.

``MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
[AUTH2 username password] [KEYS key ...]``, as Redis's ``migrateCommand`` runs it:

* options are parsed first (``ERR syntax error`` for AUTH / AUTH2 without their arguments or
  an unknown word; KEYS with a non-empty key argument has its own error), then the timeout
  and the database as integers; a timeout of 0 or less means 1000 ms. The port is read as
  C's ``atoi`` reads it and not otherwise checked (a bad one fails to connect).
* the named keys are looked up as reads; when none exists the reply is ``+NOKEY`` and no
  connection is made.
* a link to ``host:port`` is taken from the cache of :mod:`resplite.engine.migrate` or
  opened (``IOERR error or timeout connecting to the client`` when it cannot be). One
  write carries AUTH (or AUTH with a username), SELECT when the link's last successful
  database differs, then one RESTORE per key (RESTORE-ASKING on a cluster node) with the
  remaining time to live in milliseconds (a key that expired since the lookup is skipped),
  the payload and REPLACE when asked; then one reply line is read for each.
* a key whose RESTORE was acknowledged is deleted here unless COPY, each as a DEL would be
  (keyspace ``del`` event, WATCH and client-side caching invalidated, a change counted) and
  logged in the append-only file as one ``DEL`` of those keys, even when another key
  failed. The reply is ``+OK``, or the first error the target gave (its AUTH's, SELECT's or
  a RESTORE's) as ``ERR Target instance replied with error: <error>``, keys acknowledged
  before and after it moved all the same; BUSYKEY from the target without REPLACE is one
  such error.
* a socket error closes the cached link. If nothing was acknowledged and it was not the
  timeout, MIGRATE tries once more on a fresh link (a cached link the target closed is
  common); otherwise ``IOERR error or timeout writing to target instance`` (or ``reading``).
  Keys acknowledged before a read error are already gone from here (and logged).

Like Redis, the whole server waits while MIGRATE talks to its target: the shell's transport
uses blocking sockets bounded by the timeout. The payloads are written in the oldest RDB
form that holds each value exactly (:func:`resplite.formats.rdb_values.portable_payload`),
so that Redis 7.0 (RDB 10) accepts everything its types can hold.

A target that is another node of this process's cluster is served by the same event loop
and could never answer a blocking socket: keys move to it directly, with the same
per-key outcomes (BUSYKEY without REPLACE, the TTL kept, COPY), in one step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.args import INT64_MAX, INT64_MIN, parse_int
from resplite.commands.generic import duplicate, lookup_read
from resplite.engine import errors
from resplite.engine.aof import encode_command
from resplite.engine.errors import CommandError
from resplite.engine.migrate import CachedLink, LinkError, MigrateLink, atoi
from resplite.engine.notify import GENERIC
from resplite.engine.registry import command
from resplite.formats.rdb_values import portable_payload
from resplite.protocol.replies import OK, Status

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.cluster import ClusterNode

NOKEY = Status("NOKEY")
KEYS_NOT_EMPTY = ("ERR When using MIGRATE KEYS option, the key argument must be set to the "
                  "empty string")
TARGET_ERROR = "ERR Target instance replied with error: "
# Redis reads each reply line into a 1024-byte buffer: longer lines are cut there.
_LINE_MAX = 1023


def _long(arg: bytes) -> int:
    value = parse_int(arg)
    if value is None or not INT64_MIN <= value <= INT64_MAX:
        raise CommandError(errors.NOT_INTEGER)
    return value


class _Options:
    __slots__ = ("copy", "keys", "password", "replace", "username")

    def __init__(self, argv: list[bytes]) -> None:
        self.copy = self.replace = False
        self.username: bytes | None = None
        self.password: bytes | None = None
        self.keys = [argv[3]]
        n = len(argv)
        j = 6
        while j < n:
            option = argv[j].lower()
            more = n - 1 - j
            if option == b"copy":
                self.copy = True
            elif option == b"replace":
                self.replace = True
            elif option == b"auth":
                if not more:
                    raise CommandError(errors.SYNTAX)
                j += 1
                self.password = argv[j]
            elif option == b"auth2":
                if more < 2:
                    raise CommandError(errors.SYNTAX)
                self.username, self.password = argv[j + 1], argv[j + 2]
                j += 2
            elif option == b"keys":
                if argv[3]:
                    raise CommandError(KEYS_NOT_EMPTY)
                self.keys = argv[j + 1:]
                break
            else:
                raise CommandError(errors.SYNTAX)
            j += 1


@command("migrate", counts_changes=True)
def migrate(client: Client, argv: list[bytes]) -> Any:
    options = _Options(argv)
    timeout = _long(argv[5])
    dbid = _long(argv[4])
    if timeout <= 0:
        timeout = 1000
    found: list[tuple[bytes, Any]] = []
    for key in options.keys:
        value = lookup_read(client, key)
        if value is not None:
            found.append((key, value))
    if not found:
        return NOKEY
    node = client.server.cluster
    if node is not None:
        target = _local_node(node, argv[1], argv[2])
        if target is not None:
            return _migrate_local(client, node, target, found, dbid, options)
    return _migrate_over_link(client, argv, found, dbid, timeout, options)


def _delete_acknowledged(client: Client, key: bytes) -> None:
    """A key the target restored: gone from here as a DEL would remove it."""
    db = client.db
    server = client.server
    if db.delete(key):
        db.signal_modified(key)
        server.notify(GENERIC, b"del", key, db.index)
        server.dirty += 1


def _log_deletions(client: Client, keys: list[bytes]) -> None:
    """MIGRATE is logged as Redis propagates it: one DEL of the keys the target took (also
    when it then answers an error; it counts no change when it deleted nothing)."""
    if keys:
        client.propagate_as([b"DEL", *keys])


def _migrate_over_link(client: Client, argv: list[bytes], found: list[tuple[bytes, Any]],
                       dbid: int, timeout: int, options: _Options) -> Any:
    server = client.server
    db = client.db
    sockets = server.migrate
    host, port = argv[1], argv[2]
    restore = b"RESTORE-ASKING" if server.cluster is not None else b"RESTORE"
    compress = server.config["rdbcompression"]
    password, username = options.password, options.username
    may_retry = True
    while True:
        cached = sockets.get(host, port, timeout)
        if cached is None:
            raise CommandError(errors.MIGRATE_IOERR)
        link = cached.link
        parts: list[bytes] = []
        if password is not None:
            parts.append(encode_command([b"AUTH", password] if username is None
                                        else [b"AUTH", username, password]))
        select = cached.last_dbid != dbid
        if select:
            parts.append(encode_command([b"SELECT", b"%d" % dbid]))
        now = server.clock.time_ms()
        live: list[tuple[bytes, Any]] = []
        for key, value in found:
            ttl = 0
            when = db.expires.get(key)
            if when is not None:
                ttl = when - now
                if ttl < 0:
                    continue  # expired since the lookup
                ttl = max(ttl, 1)
            live.append((key, value))
            command_argv = [restore, key, b"%d" % ttl, portable_payload(value, compress)]
            if options.replace:
                command_argv.append(b"REPLACE")
            parts.append(encode_command(command_argv))
        found = live
        write_error = timed_out = False
        try:
            link.send(b"".join(parts), timeout)
        except LinkError as exc:
            write_error, timed_out = True, exc.timed_out
        else:
            try:
                auth_line = _read(link, timeout) if password is not None else b""
                select_line = _read(link, timeout) if select else b""
            except LinkError as exc:
                timed_out = exc.timed_out
            else:
                error, socket_error, failed_at, timed_out, acked = _read_restores(
                    client, cached, found, timeout, options, auth_line, select_line)
                if error is None and socket_error and failed_at == 0 and may_retry \
                        and not timed_out:
                    sockets.close(host, port)
                    may_retry = False
                    continue
                if socket_error:
                    sockets.close(host, port)
                _log_deletions(client, acked)
                if error is not None:
                    raise CommandError(error)
                if socket_error:
                    raise CommandError("IOERR error or timeout reading to target instance")
                cached.last_dbid = dbid
                return OK
        # A write error, or no AUTH / SELECT reply: a fresh link once, unless timed out.
        sockets.close(host, port)
        if not timed_out and may_retry:
            may_retry = False
            continue
        raise CommandError("IOERR error or timeout %s to target instance"
                           % ("writing" if write_error else "reading"))


def _read(link: MigrateLink, timeout: int) -> bytes:
    line = link.read_line(timeout)
    if not line:
        # Redis's syncReadLine reports an empty line as nothing read: a socket error.
        raise LinkError(False, "empty reply line")
    return line[:_LINE_MAX]


def _read_restores(client: Client, cached: CachedLink, found: list[tuple[bytes, Any]], timeout: int,
                   options: _Options, auth_line: bytes, select_line: bytes
                   ) -> tuple[str | None, bool, int, bool, list[bytes]]:
    """Read one reply per RESTORE: (first error as the client sees it, socket error, index
    of the reply that failed to arrive, whether that was the timeout, keys deleted here)."""
    error: str | None = None
    acked: list[bytes] = []
    link = cached.link
    for j, (key, _value) in enumerate(found):
        try:
            line = _read(link, timeout)
        except LinkError as exc:
            return error, True, j, exc.timed_out, acked
        if auth_line[:1] == b"-" or select_line[:1] == b"-" or line[:1] == b"-":
            if error is None:
                cached.last_dbid = -1  # the target's database is no longer known
                bad = (auth_line if auth_line[:1] == b"-"
                       else select_line if select_line[:1] == b"-" else line)
                error = TARGET_ERROR + bad[1:].decode("utf-8", "replace")
        elif not options.copy:
            _delete_acknowledged(client, key)
            acked.append(key)
    return error, False, len(found), False, acked


# -- the in-process cluster: targets on this event loop -------------------------------------


def _local_node(node: ClusterNode, host: bytes, port: bytes) -> int | None:
    """The index of the other node of this process's cluster at ``host:port``, if any."""
    cluster = node.cluster
    wanted = atoi(port)
    name = host.decode("utf-8", "replace")
    for i, info in enumerate(cluster.nodes):
        if info.port == wanted and info.host == name and i != node.index \
                and i < len(cluster.states):
            return i
    return None


def _migrate_local(client: Client, node: ClusterNode, target: int,
                   found: list[tuple[bytes, Any]], dbid: int, options: _Options) -> Any:
    """MIGRATE to another node of this process, with the outcomes RESTORE-ASKING would
    have there: a node's only database is 0 (SELECT of another fails, the keys are
    restored in 0 all the same and stay here, as Redis's pipeline leaves them)."""
    server = client.server
    source_db = client.db
    target_state = node.cluster.states[target]
    target_db = target_state.keyspace[0]
    target_node = target_state.cluster
    now = server.clock.time_ms()
    # SELECT fails first: every key then counts as refused, though restored there.
    error = TARGET_ERROR + errors.SELECT_IN_CLUSTER if dbid != 0 else None
    acked: list[bytes] = []
    for key, value in found:
        when = source_db.expires.get(key)
        if when is not None and when < now:
            continue
        present = target_db.contains(key)
        # What RESTORE-ASKING would meet there: a redirection when the node neither owns
        # nor imports the slot, BUSYKEY without REPLACE.
        refused = target_node.route([key], [present], True) if target_node else None
        if refused is None and present and not options.replace:
            refused = errors.BUSYKEY
        if refused is not None:
            if error is None:
                error = TARGET_ERROR + refused
            continue
        if options.copy or dbid != 0:
            moved, access = duplicate(value), None
        else:
            taken = source_db.take(key)
            assert taken is not None
            moved, when, access = taken
            source_db.signal_modified(key)
            server.notify(GENERIC, b"del", key, source_db.index)
            server.dirty += 1
            acked.append(key)
        target_db.delete(key)
        target_db.put(key, moved, when, access)
        target_db.signal_modified(key)
        target_state.notify(GENERIC, b"restore", key, 0)
        target_state.dirty += 1
    _log_deletions(client, acked)
    if error is not None:
        raise CommandError(error)
    return OK
