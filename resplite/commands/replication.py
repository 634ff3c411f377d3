"""REPLICAOF (SLAVEOF), SYNC, PSYNC, REPLCONF: the replication commands.

The state they change lives in :mod:`resplite.engine.replication`; these handlers parse
the arguments with Redis's texts and answer. SYNC and PSYNC answer raw lines
(``+FULLRESYNC``, ``+CONTINUE`` and the backlog) ahead of anything else the connection
then carries: from then on the client is a replica and gets only the stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.args import parse_int
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.engine.replication import REPLICA
from resplite.protocol.reader import split_inline
from resplite.protocol.replies import NO_REPLY, OK, Raw, Status

if TYPE_CHECKING:
    from resplite.engine.client import Client

_NOMASTERLINK = "NOMASTERLINK Can't SYNC while not connected with my master"
_NET_HOST_STR_LEN = 256  # Redis's bound on an announced address (with its NUL byte)


@command("replicaof")
def replicaof(client: Client, argv: list[bytes]) -> Any:
    return _replicaof(client, argv)


@command("slaveof")
def slaveof(client: Client, argv: list[bytes]) -> Any:
    return _replicaof(client, argv)


def _replicaof(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    if server.cluster is not None:
        raise CommandError("ERR REPLICAOF not allowed in cluster mode.")
    repl = server.replication
    if argv[1].lower() == b"no" and argv[2].lower() == b"one":
        repl.unset_master()
        return OK
    if client.repl_kind == REPLICA:
        raise CommandError("ERR Command is not valid when client is a replica.")
    port = parse_int(argv[2])
    if port is None or not 0 <= port <= 65535:
        raise CommandError("ERR Invalid master port")
    host = argv[1].decode("utf-8", "surrogateescape")
    if repl.master_host and repl.master_host.lower() == host.lower() \
            and repl.master_port == port:
        return Status("OK Already connected to specified master")
    repl.set_master(host, port)
    return OK


@command("sync")
def sync(client: Client, argv: list[bytes]) -> Any:
    return _sync(client, argv, psync=False)


@command("psync")
def psync(client: Client, argv: list[bytes]) -> Any:
    return _sync(client, argv, psync=True)


def _sync(client: Client, argv: list[bytes], psync: bool) -> Any:
    if client.repl_kind == REPLICA:
        return NO_REPLY  # already a replica: ignored, as Redis does
    repl = client.server.replication
    if repl.master_host and repl.link_status != "up":
        raise CommandError(_NOMASTERLINK)
    if psync:
        offset = parse_int(argv[2])
        if offset is None:
            raise CommandError(errors.NOT_INTEGER)
        replid = argv[1].decode("ascii", "replace")
        continued = repl.try_partial(client, replid, offset)
        if continued is not None:
            return Raw(continued)
    return Raw(repl.full_sync(client, psync))


@command("replconf")
def replconf(client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2 == 0:
        raise CommandError(errors.SYNTAX)
    repl = client.server.replication
    for j in range(1, len(argv), 2):
        option = argv[j].lower()
        value = argv[j + 1]
        if option == b"listening-port":
            port = parse_int(value)
            if port is None:
                raise CommandError(errors.NOT_INTEGER)
            repl.replica_of(client).listening_port = port
        elif option == b"ip-address":
            if len(value) >= _NET_HOST_STR_LEN:
                raise CommandError("ERR REPLCONF ip-address provided by replica instance is "
                                   f"too long: {len(value)} bytes")
            repl.replica_of(client).ip = value.decode("utf-8", "surrogateescape")
        elif option == b"capa":
            capa = value.lower()
            if capa == b"eof":
                repl.replica_of(client).capa_eof = True
            elif capa == b"psync2":
                repl.replica_of(client).capa_psync2 = True
        elif option == b"ack":
            # No reply, ever: the replica does not read one.
            if client.repl_kind != REPLICA:
                return NO_REPLY
            offset = parse_int(value)
            if offset is None:
                return NO_REPLY
            fack = None
            if len(argv) > j + 3 and argv[j + 2].lower() == b"fack":
                fack = parse_int(argv[j + 3])
                if fack is None:
                    return NO_REPLY
            repl.ack(client, offset, fack)
            return NO_REPLY
        elif option == b"getack":
            repl.send_ack()
            return NO_REPLY
        elif option == b"rdb-only":
            only = parse_int(value)
            if only is None or not 0 <= only <= 1:
                raise CommandError(errors.NOT_INTEGER if only is None
                                   else errors.NUMLOCAL_OUT_OF_RANGE)
            repl.replica_of(client).rdb_only = bool(only)
        elif option == b"rdb-filter-only":
            words = split_inline(value)
            if words is None:
                raise CommandError("ERR Missing rdb-filter-only values")
            replica = repl.replica_of(client)
            replica.rdb_data = replica.rdb_functions = False  # all but what is named
            for word in words:
                if word.lower() != b"functions":
                    raise CommandError("ERR Unsupported rdb-filter-only option: "
                                       + word.decode("utf-8", "surrogateescape"))
                replica.rdb_functions = True
        else:
            raise CommandError("ERR Unrecognized REPLCONF option: "
                               + argv[j].decode("utf-8", "surrogateescape"))
    return OK
