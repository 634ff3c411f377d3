"""CLIENT and its subcommands: the connection's identity, introspection and control.

What every client library sends when it connects lands here (CLIENT SETNAME, CLIENT SETINFO
LIB-NAME / LIB-VER, and, from newer libraries, subcommands resplite does not have, which the
dispatcher answers with Redis's unknown-subcommand error while the connection stays open).

CLIENT LIST / INFO print Redis 8.10's fields in Redis's order (7.0's set plus ``watch``,
``lib-name`` and ``lib-ver``, then 8.0's ``io-thread`` (always 0: one thread serves every
client), ``tot-net-in``, ``tot-net-out``, ``tot-cmds`` and 8.8's ``read-events``,
``parse-batch-cmd-sum``, ``parse-batch-cnt``, counted by the connection). Fields about Redis's
buffers are reported from what a Python connection has: ``argv-mem`` is the size of the
arguments of the command in flight, ``multi-mem`` of the queued ones, ``omem`` the bytes
waiting in the transport's write buffer and in the client's outbox of pushes; the query-buffer
fields (``qbuf``, ``qbuf-free``, ``rbs``, ``rbp``) are 0 because unparsed input is not kept
per client in a buffer of Redis's kind. Ages come from the server's clock. A connection with a
subscription is of type ``pubsub`` (flag ``P``), every other one ``normal`` (a MONITOR too,
flag ``O``).

CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO drive client-side caching
(:mod:`resplite.engine.tracking`), with Redis's option rules and error texts.

Subcommands whose exact argument count Redis checks itself (PAUSE and UNBLOCK take one
optional word) answer Redis's generic "unknown subcommand or wrong number of arguments"
error beyond it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.commands.args import parse_int
from resplite.commands.connection import valid_client_name
from resplite.commands.helptext import help_reply
from resplite.commands.server import timeout_ms
from resplite.engine import compat, errors
from resplite.engine.client import REPLY_OFF, REPLY_ON, REPLY_SKIP_NEXT
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.engine.replication import MASTER, REPLICA
from resplite.protocol.replies import OK, ErrorReply, OrderedSet, Verbatim

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.state import ServerState

_CLIENT_TYPES = {
    b"normal": "normal",
    b"slave": "replica",
    b"replica": "replica",
    b"master": "master",
    b"pubsub": "pubsub",
}

_HELP = help_reply("CLIENT", [
    ("GETREDIR", ["Reply with the id tracking invalidations go to; -1 when tracking is off."]),
    ("GETNAME", ["Reply with this connection's name, or a null when it was never named."]),
    ("ID", ["Reply with this connection's id, unique for the life of the server."]),
    ("INFO", ["Describe this connection in one line, with the fields of CLIENT LIST."]),
    ("KILL <ip:port>", ["Close the connection whose peer address is <ip:port>."]),
    ("KILL <option> <value> [<option> <value> [...]]", [
        "Close each connection that passes every filter given:",
        "* ID <client-id>",
        "  only the connection with that id;",
        "* ADDR (<ip:port>|<unixsocket>:0)",
        "  only connections coming from that peer address;",
        "* LADDR (<ip:port>|<unixsocket>:0)",
        "  only connections made to that local address;",
        "* TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "  only connections of that kind;",
        "* USER <username>",
        "  only connections logged in as <username>;",
        "* SKIPME (YES|NO)",
        "  YES (the default) keeps the calling connection open;",
        "* MAXAGE <maxage>",
        "  only connections at least <maxage> seconds old.",
        "Replies with the number of connections closed.",
    ]),
    ("LIST [options ...]", [
        "Describe the open connections, one line each. Filters:",
        "* TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "  only connections of that kind;",
        "* ID <client-id> [<client-id> ...]",
        "  only the connections with those ids.",
    ]),
    ("UNPAUSE", ["Lift a pause started by CLIENT PAUSE at once."]),
    ("PAUSE <timeout> [WRITE|ALL]", [
        "Hold the commands of all clients (ALL, the default) or only those that may",
        "write (WRITE) for <timeout> milliseconds.",
    ]),
    ("REPLY (ON|OFF|SKIP)", [
        "Turn replies to this connection off or back on, or drop only the reply to",
        "the next command.",
    ]),
    ("SETNAME <name>", [
        "Give this connection a name (printable characters, no spaces); an empty",
        "name removes it.",
    ]),
    ("SETINFO <option> <value>", [
        "Store a fact about the client library on this connection, shown by CLIENT",
        "LIST:",
        "* LIB-NAME <name>",
        "  the library's name;",
        "* LIB-VER <version>",
        "  the library's version.",
    ]),
    ("UNBLOCK <clientid> [TIMEOUT|ERROR]", [
        "End the blocking command of client <clientid>: as a timeout (the default),",
        "or with an UNBLOCKED error.",
    ]),
    ("TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]", [
        "Turn client-side caching invalidations for this connection on or off; it also",
        "takes [OPTIN] [OPTOUT] [NOLOOP].",
    ]),
    ("CACHING (YES|NO)", [
        "Track (OPTIN mode) or do not track (OPTOUT mode) the keys of the next command.",
    ]),
    ("TRACKINGINFO", ["Describe the client-side caching state of this connection."]),
    ("NO-EVICT (ON|OFF)", ["Spare this connection, or not, when clients are evicted."]),
    ("NO-TOUCH (ON|OFF)", [
        "When ON, reads from this connection leave the keys' access time and counter",
        "untouched (TOUCH still updates them).",
    ]),
])


def _client_type(name: bytes) -> str | None:
    return _CLIENT_TYPES.get(name.lower())


def _type_of(client: Client) -> str:
    # Redis's getClientType: a MONITOR client is listed as normal.
    if client.repl_kind:
        return "master" if client.repl_kind == MASTER else "replica"
    return "pubsub" if client.pubsub else "normal"


def _flags(client: Client) -> str:
    """Redis's one-letter flags, in Redis's order (``N`` when none applies)."""
    flags = "O" if client.monitor else ""
    if client.repl_kind == REPLICA:
        flags += "S"
    elif client.repl_kind == MASTER:
        flags += "M"
    if client.pubsub:
        flags += "P"
    if client.multi is not None:
        flags += "x"
    if client.blocked is not None:
        flags += "b"
    tracking = client.tracking
    if tracking is not None:
        flags += "t"
        if tracking.broken_redirect:
            flags += "R"
        if tracking.bcast:
            flags += "B"
    if client.watch_dirty:
        flags += "d"
    if client.close_after_reply:
        flags += "c"
    server = client.server
    if server.unix_socket and client.laddr.startswith(server.unix_socket):
        flags += "U"
    if client.no_evict:
        flags += "e"
    if client.no_touch:
        flags += "T"
    return flags or "N"


def _argv_size(argv: list[bytes]) -> int:
    return sum(len(arg) for arg in argv)


def _c_text(value: bytes) -> str:
    """A name as Redis prints it into a CLIENT LIST line (%s): up to its first NUL byte."""
    return value.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def client_info_line(client: Client, current_argv: list[bytes] | None = None) -> bytes:
    """One CLIENT LIST line (without its newline) describing ``client``."""
    now = client.server.clock.monotonic_ms()
    argv_mem = _argv_size(current_argv) if current_argv is not None else 0
    multi = client.multi
    multi_mem = sum(_argv_size(args) for _, args in multi) if multi else 0
    omem, tot_mem = client.memory_usage(argv_mem)
    tracking = client.tracking
    version = client.server.config["redis-compat-version"]
    watch = f"watch={len(client.watched)} " if compat.follows(version, "client-list-watch") else ""
    line = (
        f"id={client.id} addr={client.addr} laddr={client.laddr} fd={client.fd} "
        f"name={_c_text(client.name)} "
        f"age={max(now - client.created_ms, 0) // 1000} "
        f"idle={max(now - client.last_interaction_ms, 0) // 1000} "
        f"flags={_flags(client)} db={client.db_index} sub={len(client.channels)} "
        f"psub={len(client.patterns)} ssub={len(client.shard_channels)} "
        f"multi={len(multi) if multi is not None else -1} {watch}"
        f"qbuf=0 qbuf-free=0 argv-mem={argv_mem} multi-mem={multi_mem} rbs=0 rbp=0 "
        f"obl=0 oll=0 omem={omem} tot-mem={tot_mem} events={'rw' if omem else 'r'} "
        f"cmd={client.last_command} user={client.user.name} "
        f"redir={tracking.redirect if tracking is not None else -1} resp={client.resp}"
    )
    if compat.follows(version, "client-list-lib"):
        line += f" lib-name={_c_text(client.lib_name)} lib-ver={_c_text(client.lib_ver)}"
    if compat.follows(version, "client-list-io"):
        # The I/O thread (one here: 0) and the traffic so far.
        line += (f" io-thread=0 tot-net-in={client.net_in} tot-net-out={client.net_out}"
                 f" tot-cmds={client.commands_processed}")
    if compat.follows(version, "client-list-reads"):
        # The reads and how many commands each parsed.
        line += (f" read-events={client.read_events}"
                 f" parse-batch-cmd-sum={client.parse_batch_cmds}"
                 f" parse-batch-cnt={client.parse_batches}")
    return line.encode("utf-8", "surrogateescape")


def _describe(clients: list[Client], caller: Client, argv: list[bytes]) -> bytes:
    return b"".join(
        client_info_line(c, argv if c is caller else None) + b"\n" for c in clients
    )


@command("client|id")
def client_id(client: Client, argv: list[bytes]) -> Any:
    return client.id


@command("client|info")
def client_info(client: Client, argv: list[bytes]) -> Any:
    return Verbatim(client_info_line(client, argv) + b"\n")


@command("client|list")
def client_list(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    chosen: list[Client]
    if len(argv) == 4 and argv[2].lower() == b"type":
        wanted = _client_type(argv[3])
        if wanted is None:
            raise CommandError(errors.unknown_client_type(argv[3]))
        chosen = [c for c in server.clients.values() if _type_of(c) == wanted]
    elif len(argv) > 3 and argv[2].lower() == b"id":
        chosen = []
        for arg in argv[3:]:
            cid = parse_int(arg)
            if cid is None:
                raise CommandError(errors.INVALID_CLIENT_ID)
            found = server.clients.get(cid)
            if found is not None:
                chosen.append(found)
    elif len(argv) != 2:
        raise CommandError(errors.SYNTAX)
    else:
        chosen = list(server.clients.values())
    return Verbatim(_describe(chosen, client, argv))


@command("client|setname")
def client_setname(client: Client, argv: list[bytes]) -> Any:
    name = argv[2]
    if name and not valid_client_name(name, client):
        raise CommandError(errors.BAD_CLIENT_NAME)
    client.name = name
    return OK


@command("client|getname")
def client_getname(client: Client, argv: list[bytes]) -> Any:
    return client.name or None


@command("client|setinfo")
def client_setinfo(client: Client, argv: list[bytes]) -> Any:
    attr, value = argv[2], argv[3]
    lowered = attr.lower()
    if lowered not in (b"lib-name", b"lib-ver"):
        raise CommandError(errors.unrecognized_option(attr))
    if not valid_client_name(value, client):
        raise CommandError(errors.bad_client_attr(attr))
    if lowered == b"lib-name":
        client.lib_name = value
    else:
        client.lib_ver = value
    return OK


def _on_off(argv: list[bytes]) -> bool:
    mode = argv[2].lower()
    if mode == b"on":
        return True
    if mode == b"off":
        return False
    raise CommandError(errors.SYNTAX)


@command("client|no-evict")
def client_no_evict(client: Client, argv: list[bytes]) -> Any:
    client.no_evict = _on_off(argv)
    return OK


@command("client|no-touch")
def client_no_touch(client: Client, argv: list[bytes]) -> Any:
    client.no_touch = _on_off(argv)
    return OK


@command("client|reply")
def client_reply(client: Client, argv: list[bytes]) -> Any:
    mode = argv[2].lower()
    if mode == b"on":
        client.reply_mode = REPLY_ON
    elif mode == b"off":
        client.reply_mode = REPLY_OFF
    elif mode == b"skip":
        # Redis skips the reply of the next command; this one has none either.
        if client.reply_mode != REPLY_OFF:
            client.reply_mode = REPLY_SKIP_NEXT
    else:
        raise CommandError(errors.SYNTAX)
    return OK


@command("client|tracking")
def client_tracking(client: Client, argv: list[bytes]) -> Any:
    redirect = 0
    bcast = optin = optout = noloop = False
    prefixes: list[bytes] = []
    j = 3
    n = len(argv)
    while j < n:
        opt = argv[j].lower()
        more = n - 1 - j
        if opt == b"redirect" and more:
            j += 1
            if redirect != 0:
                raise CommandError("ERR A client can only redirect to a single other client")
            target = parse_int(argv[j])
            if target is None:
                raise CommandError(errors.NOT_INTEGER)
            if target not in client.server.clients:
                raise CommandError("ERR The client ID you want redirect to does not exist")
            redirect = target
        elif opt == b"bcast":
            bcast = True
        elif opt == b"optin":
            optin = True
        elif opt == b"optout":
            optout = True
        elif opt == b"noloop":
            noloop = True
        elif opt == b"prefix" and more:
            j += 1
            prefixes.append(argv[j])
        else:
            raise CommandError(errors.SYNTAX)
        j += 1
    mode = argv[2].lower()
    tracking = client.server.tracking
    if mode == b"on":
        state = client.tracking
        if not bcast and prefixes:
            raise CommandError("ERR PREFIX option requires BCAST mode to be enabled")
        if state is not None and state.bcast != bcast:
            raise CommandError(
                "ERR You can't switch BCAST mode on/off before disabling tracking for this "
                "client, and then re-enabling it with a different mode."
            )
        if bcast and (optin or optout):
            raise CommandError("ERR OPTIN and OPTOUT are not compatible with BCAST")
        if optin and optout:
            raise CommandError("ERR You can't specify both OPTIN mode and OPTOUT mode")
        if state is not None and ((optin and state.optout) or (optout and state.optin)):
            raise CommandError(
                "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this "
                "client, and then re-enabling it with a different mode."
            )
        if bcast:
            tracking.check_prefixes(client, prefixes)
        client.server.tracking_used = True
        tracking.enable(client, redirect, bcast=bcast, optin=optin, optout=optout,
                        noloop=noloop, prefixes=prefixes)
    elif mode == b"off":
        tracking.disable(client)
    else:
        raise CommandError(errors.SYNTAX)
    return OK


@command("client|caching")
def client_caching(client: Client, argv: list[bytes]) -> Any:
    state = client.tracking
    if state is None:
        raise CommandError(
            "ERR CLIENT CACHING can be called only when the client is in tracking mode with "
            "OPTIN or OPTOUT mode enabled"
        )
    opt = argv[2].lower()
    if opt == b"yes":
        if not state.optin:
            raise CommandError(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
            )
    elif opt == b"no":
        if not state.optout:
            raise CommandError(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
            )
    else:
        raise CommandError(errors.SYNTAX)
    state.caching = True
    return OK


@command("client|trackinginfo")
def client_trackinginfo(client: Client, argv: list[bytes]) -> Any:
    state = client.tracking
    if state is None:
        return {b"flags": OrderedSet((b"off",)), b"redirect": -1, b"prefixes": []}
    flags = [b"on"]
    if state.bcast:
        flags.append(b"bcast")
    if state.optin:
        flags.append(b"optin")
        if state.caching:
            flags.append(b"caching-yes")
    if state.optout:
        flags.append(b"optout")
        if state.caching:
            flags.append(b"caching-no")
    if state.noloop:
        flags.append(b"noloop")
    if state.broken_redirect:
        flags.append(b"broken_redirect")
    return {
        b"flags": OrderedSet(flags),
        b"redirect": state.redirect,
        b"prefixes": sorted(state.prefixes),
    }


@command("client|getredir")
def client_getredir(client: Client, argv: list[bytes]) -> Any:
    state = client.tracking
    return state.redirect if state is not None else -1


def _timeout_end_ms(client: Client, arg: bytes) -> int:
    """A millisecond timeout checked as WAIT's is, turned into its absolute end (0: none)."""
    value = timeout_ms(client, arg)
    return client.server.clock.time_ms() + value if value else 0


@command("client|pause")
def client_pause(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 4:
        raise CommandError(errors.subcommand_syntax(argv))
    pause_all = True
    if len(argv) == 4:
        mode = argv[3].lower()
        if mode == b"write":
            pause_all = False
        elif mode != b"all":
            raise CommandError(errors.PAUSE_MODE)
    end_ms = _timeout_end_ms(client, argv[2])
    client.server.pause.pause(end_ms, pause_all)
    return OK


@command("client|unpause")
def client_unpause(client: Client, argv: list[bytes]) -> Any:
    client.server.pause.unpause()
    return OK


@command("client|unblock")
def client_unblock(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 4:
        raise CommandError(errors.subcommand_syntax(argv))
    target_id = parse_int(argv[2])
    if target_id is None:
        raise CommandError(errors.NOT_INTEGER)
    as_error = False
    if len(argv) == 4:
        reason = argv[3].lower()
        if reason == b"error":
            as_error = True
        elif reason != b"timeout":
            raise CommandError(errors.UNBLOCK_REASON)
    server = client.server
    target = server.clients.get(target_id)
    if target is None or target.blocked is None or server.pause.is_holding(target):
        return 0
    reply: Any
    if as_error:
        server.count_error(errors.UNBLOCKED)
        reply = ErrorReply(errors.UNBLOCKED)
    else:
        reply = target.blocked.request.timeout_reply
    server.blocking.wake(target, reply)
    return 1


def _parse_kill_filters(client: Client, argv: list[bytes]) -> dict[str, Any]:
    filters: dict[str, Any] = {"skipme": True}
    i = 2
    while i < len(argv):
        opt = argv[i].lower()
        if i + 1 >= len(argv):
            raise CommandError(errors.SYNTAX)
        value = argv[i + 1]
        if opt == b"id":
            cid = parse_int(value)
            if cid is None or cid <= 0:
                raise CommandError(errors.CLIENT_ID_NOT_POSITIVE)
            filters["id"] = cid
        elif opt == b"maxage":
            age = parse_int(value)
            if age is None:
                raise CommandError(errors.MAXAGE_NOT_INTEGER)
            if age <= 0:
                raise CommandError(errors.MAXAGE_NOT_POSITIVE)
            filters["maxage"] = age
        elif opt == b"type":
            kind = _client_type(value)
            if kind is None:
                raise CommandError(errors.unknown_client_type(value))
            filters["type"] = kind
        elif opt == b"addr":
            filters["addr"] = value.decode("utf-8", "surrogateescape")
        elif opt == b"laddr":
            filters["laddr"] = value.decode("utf-8", "surrogateescape")
        elif opt == b"user":
            user = client.server.acl.get(value)
            if user is None:
                raise CommandError(errors.no_such_user(value))
            filters["user"] = user
        elif opt == b"skipme":
            flag = value.lower()
            if flag == b"yes":
                filters["skipme"] = True
            elif flag == b"no":
                filters["skipme"] = False
            else:
                raise CommandError(errors.SYNTAX)
        else:
            raise CommandError(errors.SYNTAX)
        i += 2
    return filters


def _matches(candidate: Client, caller: Client, filters: dict[str, Any]) -> bool:
    if "addr" in filters and candidate.addr != filters["addr"]:
        return False
    if "laddr" in filters and candidate.laddr != filters["laddr"]:
        return False
    if "type" in filters and _type_of(candidate) != filters["type"]:
        return False
    if "id" in filters and candidate.id != filters["id"]:
        return False
    if "user" in filters and candidate.user is not filters["user"]:
        return False
    if candidate is caller and filters["skipme"]:
        return False
    if "maxage" in filters:
        now = caller.server.clock.monotonic_ms()
        if (now - candidate.created_ms) // 1000 < filters["maxage"]:
            return False
    return True


def kill_client(server: ServerState, victim: Client, caller: Client | None) -> None:
    """Close ``victim``'s connection; the caller itself closes after its reply is written."""
    if victim is caller:
        victim.close_after_reply = True
        return
    conn = victim.conn
    server.forget_client(victim)
    if conn is not None:
        conn.close()


@command("client|kill")
def client_kill(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    if len(argv) == 3:
        # The old form: one address, and a client may kill itself with it.
        addr = argv[2].decode("utf-8", "surrogateescape")
        victims = [c for c in server.clients.values() if c.addr == addr]
        if not victims:
            raise CommandError(errors.NO_SUCH_CLIENT)
        for victim in victims:
            kill_client(server, victim, client)
        return OK
    filters = _parse_kill_filters(client, argv)
    victims = [c for c in list(server.clients.values()) if _matches(c, client, filters)]
    for victim in victims:
        kill_client(server, victim, client)
    return len(victims)


@command("client|help")
def client_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP
