"""Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET.

These change the client's own state (protocol version, database, authentication) and are
what every client library sends when it connects, so their replies must match Redis's in
both protocol versions, including the errors libraries fall back on (HELLO's NOPROTO).
CLIENT and its subcommands live in :mod:`resplite.commands.client`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.args import parse_int
from resplite.engine import acl, compat, errors, gates
from resplite.engine.client import REPLY_ON
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import OK, PONG, Status

if TYPE_CHECKING:
    from resplite.engine.client import Client

_NOPROTO = "NOPROTO unsupported protocol version"
_HELLO_NOAUTH = (
    "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
    "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
    "select the RESP protocol version at the same time"
)
_AUTH_NO_PASSWORD = (
    "ERR AUTH <password> called without any password configured for the default user. "
    "Are you sure your configuration is correct?"
)


@command("ping")
def ping(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 2:
        # The spec's arity is -1; Redis itself refuses more than one message.
        raise CommandError(errors.wrong_arity("ping"))
    if client.gates & gates.CONTEXT and client.pubsub and client.resp == 2:
        # In the RESP2 subscribed context the answer has a message's shape (the gate, one
        # attribute, is read first: this runs for every PING).
        return [b"pong", argv[1] if len(argv) == 2 else b""]
    return argv[1] if len(argv) == 2 else PONG


@command("echo")
def echo(client: Client, argv: list[bytes]) -> Any:
    return argv[1]


def _authenticate(client: Client, name: bytes, password: bytes, command_name: bytes) -> None:
    """Log ``client`` in as ``name`` (ACLAuthenticateUser); a failure is logged in ACL LOG
    under the user name given, with the command as the object, as Redis does."""
    server = client.server
    user = server.acl.authenticate(name, password)
    if user is None:
        server.log_acl_denial(client, acl.DENIED_AUTH, command_name,
                              username=name.decode("utf-8", "surrogateescape"))
        raise CommandError(errors.WRONGPASS)
    client.log_in(user)


@command("auth")
def auth(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise CommandError(errors.SYNTAX)
    if len(argv) == 2:
        if client.server.acl.default.nopass:
            raise CommandError(_AUTH_NO_PASSWORD)
        _authenticate(client, b"default", argv[1], argv[0])
    else:
        _authenticate(client, argv[1], argv[2], argv[0])
    return OK


def valid_client_name(name: bytes, client: Client) -> bool:
    """Redis allows names of printable ASCII without spaces. Redis 7.2 and later check them
    as C strings, up to the first NUL byte, and keep the rest unchecked (compat DIFFERENCES
    "client-name-c-string")."""
    if compat.follows(client.server.config["redis-compat-version"], "client-name-c-string"):
        name = name.split(b"\0", 1)[0]
    return all(33 <= b <= 126 for b in name)


@command("hello")
def hello(client: Client, argv: list[bytes]) -> Any:
    protover = client.resp
    i = 1
    if len(argv) >= 2:
        version = parse_int(argv[1])
        if version is None:
            raise CommandError("ERR Protocol version is not an integer or out of range")
        if version < 2 or version > 3:
            raise CommandError(_NOPROTO)
        protover = version
        i = 2
    user: bytes | None = None
    password = b""
    name: bytes | None = None
    while i < len(argv):
        more = len(argv) - i - 1
        opt = argv[i].upper()
        if opt == b"AUTH" and more >= 2:
            user, password = argv[i + 1], argv[i + 2]
            i += 3
        elif opt == b"SETNAME" and more >= 1:
            name = argv[i + 1]
            i += 2
        else:
            raise CommandError(f"ERR Syntax error in HELLO option '{errors.user_text(argv[i])}'")
    if user is not None:
        _authenticate(client, user, password, argv[0])
    if not client.authenticated:
        raise CommandError(_HELLO_NOAUTH)
    if name is not None:
        if not valid_client_name(name, client):
            raise CommandError(errors.BAD_CLIENT_NAME)
        client.name = name
    client.set_resp(protover)
    return {
        b"server": b"redis",
        b"version": compat.reported(client.server.config["redis-compat-version"]).encode(),
        b"proto": protover,
        b"id": client.id,
        b"mode": b"standalone",
        b"role": b"master",
        b"modules": [],
    }


@command("select")
def select(client: Client, argv: list[bytes]) -> Any:
    index = parse_int(argv[1])
    if index is None:
        raise CommandError(errors.NOT_INTEGER)
    if client.server.cluster is not None and index != 0:
        raise CommandError(errors.SELECT_IN_CLUSTER)
    if not 0 <= index < len(client.server.keyspace):
        raise CommandError(errors.DB_INDEX_OUT_OF_RANGE)
    client.select(index)
    return OK


@command("quit")
def quit_(client: Client, argv: list[bytes]) -> Any:
    client.close_after_reply = True
    return OK


@command("reset")
def reset(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    client.multi = None
    client.multi_dirty = False
    server.unwatch_all(client)
    client.select(0)
    client.set_resp(2)
    # Out of tracking, Pub/Sub (no unsubscribe messages) and MONITOR, as Redis's RESET.
    server.tracking.disable(client)
    server.pubsub.forget(client)
    client.pubsub = False
    if client.monitor:
        server.set_monitor(client, False)
    client.name = b""
    client.no_evict = False
    client.no_touch = False
    client.reply_mode = REPLY_ON
    client.fieldsets = None  # HIMPORT's, as Redis 8.10 drops them
    # Back to the default user, authenticated only if it needs no password (Redis's
    # clearClientConnectionState).
    default = server.acl.default
    if client.user is not default or not (default.nopass and default.enabled):
        client.user = default
        client.acl = None if default.unrestricted else default
        client.set_authenticated(default.nopass and default.enabled)
    return Status("RESET")
