"""ACL (SETUSER, GETUSER, DELUSER, USERS, LIST, WHOAMI, CAT, GENPASS, LOG, DRYRUN, SAVE,
LOAD, HELP), MEMORY (USAGE, STATS, DOCTOR, HELP) and SLOWLOG (GET, LEN, RESET, HELP).

The users and their rules live in :mod:`resplite.engine.acl`; these handlers parse, reply
and close the connections of users that DELUSER or LOAD removes. ACL CAT lists subcommands as
``container|sub`` like Redis. ACL LOG entries have Redis 7.2's fields (``entry-id`` and the
two timestamps after 7.0's seven).

MEMORY USAGE is the figure the keyspace charges for the key (its entry and string, and its
value's O(1) estimate: see :mod:`resplite.store.sizes`), without the expiry, as Redis leaves
it out. MEMORY STATS has Redis's fields, from the same figures as INFO memory (see
:mod:`resplite.engine.info`): the overheads are the startup allowance, the clients and the
key tables, the data set is the rest; ``fragmentation`` compares the process's resident
size with ``used_memory``; the allocator's own ratios, which have no meaning without
Redis's allocator, are reported as a perfect fit.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from resplite.algorithms.scores import d2string
from resplite.commands.args import parse_int
from resplite.commands.helptext import help_reply
from resplite.engine import acl, acl_file, compat, errors, info
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import OK, Double, OrderedSet, Verbatim
from resplite.store.keyspace import KEY_COST, value_size

if TYPE_CHECKING:
    from resplite.engine.acl import User
    from resplite.engine.client import Client
    from resplite.engine.table import CommandSpec

log = logging.getLogger("resplite.acl")

_ACL_HELP = help_reply("ACL", [
    ("CAT [<category>]", [
        "Without <category>, list the command categories; with it, the commands",
        "(subcommands as container|sub) that belong to it.",
    ]),
    ("DELUSER <username> [<username> ...]", [
        "Remove the users and close their connections.",
    ]),
    ("DRYRUN <username> <command> [<arg> ...]", [
        "Tell whether <username> may run the command line, without running it.",
    ]),
    ("GETUSER <username>", ["Describe the user's flags, passwords and permissions."]),
    ("GENPASS [<bits>]", [
        "Reply with a random password of 256 bits, or of <bits> bits, in hexadecimal.",
    ]),
    ("LIST", ["Reply with every user as an ACL rule line."]),
    ("LOAD", ["Replace every user with the users of the ACL file."]),
    ("LOG [<count> | RESET]", [
        "Reply with the newest <count> (10) denied commands and logins, or clear them.",
    ]),
    ("SAVE", ["Write every user into the ACL file."]),
    ("SETUSER <username> <attribute> [<attribute> ...]", [
        "Create the user or change it by applying the rules in order.",
    ]),
    ("USERS", ["List the names of the users."]),
    ("WHOAMI", ["Reply with the user name this connection is logged in as."]),
])
_MEMORY_HELP = help_reply("MEMORY", [
    ("DOCTOR", ["Report, in a few sentences, on how the server uses memory."]),
    ("STATS", ["Reply with a map of figures about the server's memory use."]),
    ("USAGE <key> [SAMPLES <count>]", [
        "Estimate the bytes taken by <key>, its value and its keyspace entry. <count>",
        "is checked and otherwise ignored: every value keeps its own size.",
    ]),
])
_SLOWLOG_HELP = help_reply("SLOWLOG", [
    ("GET [<count>]", [
        "Reply with the newest <count> slow log entries, newest first (10 by default,",
        "-1 for every entry). An entry is: id, Unix time in seconds, duration in",
        "microseconds, the arguments, the client's address and the client's name.",
    ]),
    ("LEN", ["Reply with how many entries the slow log holds."]),
    ("RESET", ["Remove every entry from the slow log."]),
])


# -- ACL ----------------------------------------------------------------------------------


@command("acl|whoami")
def acl_whoami(client: Client, argv: list[bytes]) -> Any:
    return _name(client.user)


def _name(user: User) -> bytes:
    return user.name.encode("utf-8", "surrogateescape")


@command("acl|users")
def acl_users(client: Client, argv: list[bytes]) -> Any:
    return [_name(u) for u in client.server.acl.sorted_users()]


@command("acl|list")
def acl_list(client: Client, argv: list[bytes]) -> Any:
    return [b"user " + line.encode("utf-8", "surrogateescape")
            for line in client.server.acl.lines()]


def _specs(table: dict[bytes, CommandSpec]) -> list[CommandSpec]:
    found: list[CommandSpec] = []
    for spec in table.values():
        found.append(spec)
        found.extend(spec.subcommands.values())
    return found


@command("acl|cat")
def acl_cat(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise CommandError(errors.subcommand_syntax(argv))
    # The categories of this version's table (no array before 8.8).
    index = client.server.acl.index
    known = [name for name in acl.CATEGORIES if name in index.category]
    if len(argv) == 2:
        return [name.encode() for name in known]
    wanted = argv[2].decode("utf-8", "replace").lower()
    if wanted not in known:
        raise CommandError(errors.unknown_acl_category(argv[2][:128]))
    tag = "@" + wanted
    return [
        spec.fullname.encode()
        for spec in _specs(client.server.table)
        if tag in spec.acl_categories
    ]


@command("acl|setuser")
def acl_setuser(client: Client, argv: list[bytes]) -> Any:
    name = argv[2]
    if acl.has_spaces(name):
        raise CommandError("ERR Usernames can't contain spaces or null characters")
    server = client.server
    try:
        server.acl.set_user(name, argv[3:])
    except acl.AclError as exc:
        raise CommandError("ERR " + exc.message.replace("\r", " ").replace("\n", " ")) from None
    user = server.acl.get(name)
    assert user is not None
    server.users_changed(user)
    _disconnect_lost_subscribers(client, user)
    return OK


def _disconnect_lost_subscribers(caller: Client, user: User) -> None:
    """Redis's ACLKillPubsubClientsIfNeeded: a client of ``user`` subscribed to a channel
    (or pattern, compared literally) the new rules no longer allow is closed (the caller
    after its reply)."""
    for other in list(caller.server.clients.values()):
        if other.user is not user:
            continue
        if all(acl.channel_allowed(user, c, is_pattern=False)
               for c in (*other.channels, *other.shard_channels)) and all(
                acl.channel_allowed(user, p, is_pattern=True) for p in other.patterns):
            continue
        if other is caller:
            other.close_after_reply = True
        elif other.conn is not None:
            other.conn.close()


@command("acl|deluser")
def acl_deluser(client: Client, argv: list[bytes]) -> Any:
    if any(name == b"default" for name in argv[2:]):
        raise CommandError("ERR The 'default' user cannot be removed")
    server = client.server
    deleted = 0
    for name in argv[2:]:
        user = server.acl.users.pop(name.decode("utf-8", "surrogateescape"), None)
        if user is not None:
            deleted += 1
            _disconnect_users(client, {id(user)})
    return deleted


def _disconnect_users(caller: Client, users: set[int]) -> None:
    """Close every connection logged in as one of ``users`` (the caller after its reply)."""
    server = caller.server
    default = server.acl.default
    for other in list(server.clients.values()):
        if id(other.user) not in users:
            continue
        # As Redis: back to the default user, unauthenticated, until the close happens.
        other.user = default
        other.acl = None if default.unrestricted else default
        other.set_authenticated(False)
        if other is caller:
            other.close_after_reply = True
        elif other.conn is not None:
            other.conn.close()


def _selector_map(server_acl: acl.Acl, sel: acl.Selector) -> dict[bytes, Any]:
    def text(value: str) -> bytes:
        return value.encode("utf-8", "surrogateescape")

    keys = b"~*" if sel.allkeys else b" ".join(p.text() for p in sel.patterns)
    channels = b"&*" if sel.allchannels else b" ".join(b"&" + c for c in sel.channels)
    return {
        b"commands": text(server_acl.describe_commands(sel)),
        b"keys": keys,
        b"channels": channels,
    }


@command("acl|getuser")
def acl_getuser(client: Client, argv: list[bytes]) -> Any:
    server_acl = client.server.acl
    user = server_acl.get(argv[2])
    if user is None:
        return None
    reply: dict[bytes, Any] = {
        b"flags": OrderedSet(f.encode() for f in user.flag_names()),
        b"passwords": [p.encode() for p in user.passwords],
    }
    reply.update(_selector_map(server_acl, user.root))
    reply[b"selectors"] = [_selector_map(server_acl, s) for s in user.selectors[1:]]
    return reply


@command("acl|genpass")
def acl_genpass(client: Client, argv: list[bytes]) -> Any:
    bits = 256
    if len(argv) == 3:
        parsed = parse_int(argv[2])
        if parsed is None:
            raise CommandError(errors.NOT_INTEGER)
        bits = parsed
    elif len(argv) > 3:
        raise CommandError(errors.subcommand_syntax(argv))
    if bits <= 0 or bits > acl.GENPASS_MAX_BITS:
        raise CommandError(
            "ERR ACL GENPASS argument must be the number of bits for the output password, a "
            f"positive number up to {acl.GENPASS_MAX_BITS}")
    return acl.genpass(bits).encode()


@command("acl|log")
def acl_log(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    count = 10
    if len(argv) == 3:
        if argv[2].lower() == b"reset":
            server.acl.log.clear()
            return OK
        parsed = parse_int(argv[2])
        if parsed is None:
            raise CommandError(errors.NOT_INTEGER)
        count = max(parsed, 0)
    elif len(argv) > 3:
        raise CommandError(errors.subcommand_syntax(argv))
    now = server.clock.time_ms()
    return [
        {
            b"count": entry.count,
            b"reason": acl.Acl.reason_name(entry.reason).encode(),
            b"context": entry.context.encode(),
            b"object": entry.object,
            b"username": entry.username.encode("utf-8", "surrogateescape"),
            b"age-seconds": (now - entry.ctime_ms) / 1000,
            b"client-info": entry.client_info,
            # Redis 7.2 and later: a stable id and when the entry was made and last bumped.
            b"entry-id": entry.entry_id,
            b"timestamp-created": entry.created_ms,
            b"timestamp-last-updated": entry.ctime_ms,
        }
        for entry in server.acl.log[:count]
    ]


@command("acl|dryrun")
def acl_dryrun(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    user = server.acl.get(argv[2])
    if user is None:
        raise CommandError(f"ERR User '{errors.user_text(argv[2], 1 << 20)}' not found")
    line = argv[3:]
    # Redis's lookupCommand: a container alone is itself (its arity then refuses it).
    spec = server.table.get(line[0].lower())
    if spec is not None and spec.subcommands and len(line) > 1:
        spec = spec.subcommands.get(line[1].lower())
    if spec is None:
        raise CommandError(f"ERR Command '{errors.user_text(argv[3], 1 << 20)}' not found")
    if (spec.arity > 0 and len(line) != spec.arity) or len(line) < -spec.arity:
        raise CommandError(errors.wrong_arity(spec.fullname))
    result, pos = acl.check_command(user, spec, line)
    if result != acl.OK:
        text = acl.denial_message(result, user, spec, line[pos], verbose=True)
        return text.encode("utf-8", "surrogateescape")
    return OK


@command("acl|load")
def acl_load(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    path = server.config["aclfile"]
    if not path:
        raise CommandError("ERR " + acl_file.NOT_CONFIGURED_FOR_FILE)
    before = {id(u) for u in server.acl.users.values() if u is not server.acl.default}
    problems = acl_file.load_acl_file(server.acl, path)
    if problems is not None:
        raise CommandError("ERR " + problems)
    # Every user but the default one was replaced: their connections are closed.
    _disconnect_users(client, before)
    server.users_changed(*server.acl.users.values())
    return OK


@command("acl|save")
def acl_save(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    path = server.config["aclfile"]
    if not path:
        raise CommandError("ERR " + acl_file.NOT_CONFIGURED_FOR_FILE)
    try:
        acl_file.save_acl_file(server.acl, path)
    except OSError as exc:
        log.warning("Saving the ACL file %s: %s", path, exc)
        raise CommandError("ERR There was an error trying to save the ACLs. Please check the "
                           "server logs for more information") from None
    return OK


@command("acl|help")
def acl_help(client: Client, argv: list[bytes]) -> Any:
    return _ACL_HELP


# -- MEMORY -------------------------------------------------------------------------------


def estimate_usage(key: bytes, value: Any) -> int:
    """The bytes the keyspace charges for ``key`` and its value (expiry aside)."""
    return KEY_COST + len(key) + value_size(value)


@command("memory|usage")
def memory_usage(client: Client, argv: list[bytes]) -> Any:
    i = 3
    while i < len(argv):
        if argv[i].lower() == b"samples" and i + 1 < len(argv):
            samples = parse_int(argv[i + 1])
            if samples is None:
                raise CommandError(errors.NOT_INTEGER)
            if samples < 0:
                raise CommandError(errors.SYNTAX)
            i += 2
        else:
            raise CommandError(errors.SYNTAX)
    # Like Redis, the key is looked up without expiring it.
    value = client.db.data.get(argv[2])
    if value is None:
        return None
    return estimate_usage(argv[2], value)


@command("memory|stats")
def memory_stats(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    used, peak, startup = info.memory_figures(server)
    overhead = info.overhead_total(server)
    dataset = max(used - overhead, 0)
    net = used - startup
    rss = info.resident_memory()
    keys = sum(len(db.data) for db in server.keyspace.dbs)
    version = server.config["redis-compat-version"]
    # Redis 7.4's and 8.6's fields (compat DIFFERENCES "memory-stats-7.4" / "-8.6"): no
    # replica buffers, per-slot lookup tables or rehashing here, so those count nothing.
    newer = compat.follows(version, "memory-stats-8.6")
    since_74 = compat.follows(version, "memory-stats-7.4")
    stats: dict[bytes, Any] = {
        b"peak.allocated": peak,
        b"total.allocated": used,
        b"startup.allocated": startup,
        b"replication.backlog": 0,
        **({b"replica.fullsync.buffer": 0} if newer else {}),
        b"clients.slaves": 0,
        b"clients.normal": server.clients_memory,
        b"cluster.links": 0,
        b"aof.buffer": 0,
        b"lua.caches": server.script_memory,
        b"functions.caches": 0,
    }
    if newer:
        vm = dict(server.scripting.memory_lines())["used_memory_vm_total"]
        stats[b"script.VMs"] = vm
    for index, main, expires in info.db_overheads(server):
        stats[b"db.%d" % index] = {
            b"overhead.hashtable.main": main,
            b"overhead.hashtable.expires": expires,
        }
    if since_74:
        stats[b"overhead.db.hashtable.lut"] = 0
        stats[b"overhead.db.hashtable.rehashing"] = 0
    stats[b"overhead.total"] = overhead
    if since_74:
        stats[b"db.dict.rehashing.count"] = 0
    stats.update({
        b"keys.count": keys,
        b"keys.bytes-per-key": net // keys if keys else 0,
        b"dataset.bytes": dataset,
        # Doubles as Redis 7.2+ prints them (addReplyDouble).
        b"dataset.percentage": Double(d2string(dataset * 100 / net if net > 0 else 0.0)),
        b"peak.percentage": Double(d2string(used * 100 / peak if peak else 0.0)),
        b"allocator.allocated": used,
        b"allocator.active": used,
        b"allocator.resident": used,
        **({b"allocator.muzzy": 0} if since_74 else {}),
        b"allocator-fragmentation.ratio": Double(b"1"),
        b"allocator-fragmentation.bytes": 0,
        b"allocator-rss.ratio": Double(b"1"),
        b"allocator-rss.bytes": 0,
        b"rss-overhead.ratio": Double(d2string(rss / used if used else 1.0)),
        b"rss-overhead.bytes": rss - used,
        b"fragmentation": Double(d2string(rss / used if used else 1.0)),
        b"fragmentation.bytes": rss - used,
    })
    return stats


@command("memory|doctor")
def memory_doctor(client: Client, argv: list[bytes]) -> Any:
    server = client.server
    used, peak, _ = info.memory_figures(server)
    rss = info.resident_memory()
    report = (
        f"Memory report: the data set, clients and scripts hold {info.bytes_to_human(used)} "
        f"(peak {info.bytes_to_human(peak)}, of which {info.bytes_to_human(server.meter.used())}"
        f" is the data set); the process's resident size is {info.bytes_to_human(rss)}, "
        "which also holds the interpreter and memory it keeps for reuse. No problems "
        "detected.\n"
    )
    return Verbatim(report.encode())


@command("memory|help")
def memory_help(client: Client, argv: list[bytes]) -> Any:
    return _MEMORY_HELP


# -- SLOWLOG ------------------------------------------------------------------------------


@command("slowlog|get")
def slowlog_get(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 3:
        raise CommandError(errors.subcommand_syntax(argv))
    count = 10
    if len(argv) == 3:
        parsed = parse_int(argv[2])
        if parsed is None or parsed < -1:
            raise CommandError(errors.SLOWLOG_COUNT)
        count = parsed
    entries = client.server.slowlog.latest(count)
    if not compat.follows(client.server.config["redis-compat-version"], "slowlog-argc"):
        return [[entry.id, entry.time_s, entry.duration_us, entry.argv, entry.addr, entry.name]
                for entry in entries]
    return [
        [entry.id, entry.time_s, entry.duration_us, entry.argv, entry.addr, entry.name,
         entry.argc]
        for entry in entries
    ]


@command("slowlog|len")
def slowlog_len(client: Client, argv: list[bytes]) -> Any:
    return len(client.server.slowlog.entries)


@command("slowlog|reset")
def slowlog_reset(client: Client, argv: list[bytes]) -> Any:
    client.server.slowlog.reset()
    return OK


@command("slowlog|help")
def slowlog_help(client: Client, argv: list[bytes]) -> Any:
    return _SLOWLOG_HELP
