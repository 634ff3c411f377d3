"""ACL (WHOAMI, CAT, USERS, HELP), MEMORY (USAGE, STATS, DOCTOR, HELP) and SLOWLOG (GET, LEN,
RESET, HELP).

resplite has one user, ``default`` (authenticated by ``requirepass`` when it is set), so the
ACL subcommands report that user and the command categories of the spec data; ACL CAT lists
subcommands as ``container|sub`` like Redis.

MEMORY USAGE is an estimate: the Python sizes of the key and of the value (a value may say
what it costs through a ``memory_usage()`` method, as streams do), plus the cost of a
keyspace entry. MEMORY STATS has Redis's fields, filled from the resident-set figures INFO
uses (see :mod:`resplite.engine.info`); allocator and fragmentation figures, which have no
meaning without Redis's allocator, are reported as a perfect fit.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from resplite.commands.args import parse_int
from resplite.commands.helptext import help_reply
from resplite.engine import errors, info
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import OK, Verbatim

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.table import CommandSpec

# Redis's categories, in the order ACL CAT lists them.
ACL_CATEGORIES = (
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
    "dangerous", "connection", "transaction", "scripting",
)
# What one key costs the keyspace beyond its key and value objects (dict slot and entry).
_ENTRY_OVERHEAD = 72

_ACL_HELP = help_reply("ACL", [
    ("CAT [<category>]", [
        "Without <category>, list the command categories; with it, the commands",
        "(subcommands as container|sub) that belong to it.",
    ]),
    ("USERS", ["List the names of the users; resplite has one, 'default'."]),
    ("WHOAMI", ["Reply with the user name this connection is logged in as."]),
])
_MEMORY_HELP = help_reply("MEMORY", [
    ("DOCTOR", ["Report, in a few sentences, on how the server uses memory."]),
    ("STATS", ["Reply with a map of figures about the server's memory use."]),
    ("USAGE <key> [SAMPLES <count>]", [
        "Estimate the bytes taken by <key>, its value and its keyspace entry. <count>",
        "is checked and otherwise ignored: the whole value is always measured.",
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
    return client.user.encode()


@command("acl|users")
def acl_users(client: Client, argv: list[bytes]) -> Any:
    return [b"default"]


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
    if len(argv) == 2:
        return [name.encode() for name in ACL_CATEGORIES]
    wanted = argv[2].decode("utf-8", "replace").lower()
    if wanted not in ACL_CATEGORIES:
        raise CommandError(errors.unknown_acl_category(argv[2]))
    tag = "@" + wanted
    return [
        spec.fullname.encode()
        for spec in _specs(client.server.table)
        if tag in spec.acl_categories
    ]


@command("acl|help")
def acl_help(client: Client, argv: list[bytes]) -> Any:
    return _ACL_HELP


# -- MEMORY -------------------------------------------------------------------------------


def estimate_usage(key: bytes, value: Any) -> int:
    """An estimate of the bytes a key and its value occupy."""
    measure = getattr(value, "memory_usage", None)
    value_size = measure() if callable(measure) else sys.getsizeof(value)
    return sys.getsizeof(key) + int(value_size) + _ENTRY_OVERHEAD


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
    dataset = max(used - startup, 0)
    keys = sum(len(db.data) for db in server.keyspace.dbs)
    stats: dict[bytes, Any] = {
        b"peak.allocated": peak,
        b"total.allocated": used,
        b"startup.allocated": startup,
        b"replication.backlog": 0,
        b"clients.slaves": 0,
        b"clients.normal": 0,
        b"cluster.links": 0,
        b"aof.buffer": 0,
        b"lua.caches": 0,
        b"functions.caches": 0,
    }
    for db in server.keyspace.dbs:
        if db.data:
            stats[b"db.%d" % db.index] = {
                b"overhead.hashtable.main": _ENTRY_OVERHEAD * len(db.data),
                b"overhead.hashtable.expires": _ENTRY_OVERHEAD * len(db.expires),
            }
    stats.update({
        b"overhead.total": min(startup, used),
        b"keys.count": keys,
        b"keys.bytes-per-key": dataset // keys if keys else 0,
        b"dataset.bytes": dataset,
        b"dataset.percentage": dataset * 100 / used if used else 0.0,
        b"peak.percentage": used * 100 / peak if peak else 0.0,
        b"allocator.allocated": used,
        b"allocator.active": used,
        b"allocator.resident": used,
        b"allocator-fragmentation.ratio": 1.0,
        b"allocator-fragmentation.bytes": 0,
        b"allocator-rss.ratio": 1.0,
        b"allocator-rss.bytes": 0,
        b"rss-overhead.ratio": 1.0,
        b"rss-overhead.bytes": 0,
        b"fragmentation": 1.0,
        b"fragmentation.bytes": 0,
    })
    return stats


@command("memory|doctor")
def memory_doctor(client: Client, argv: list[bytes]) -> Any:
    used, peak, startup = info.memory_figures(client.server)
    report = (
        "Memory report: the server process holds "
        f"{info.bytes_to_human(used)} (peak {info.bytes_to_human(peak)}, "
        f"{info.bytes_to_human(startup)} when it started). No problems detected: resplite "
        "has no allocator fragmentation, replication buffers or scripts to report on.\n"
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
    return [
        [entry.id, entry.time_s, entry.duration_us, entry.argv, entry.addr, entry.name]
        for entry in client.server.slowlog.latest(count)
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
