"""COMMAND and its subcommands, answered from the loaded spec objects.

Everything here is derived from the same :class:`~resplite.engine.table.CommandSpec` objects
the dispatcher uses, so what COMMAND reports is what the server does. The reply shapes are
Redis's, in both protocol versions:

* COMMAND INFO entries are 10-element arrays: name, arity, flags, first key, last key, key
  step, ACL categories, hints, key specs, subcommands. Flags, categories, hints and key specs
  are sets (``~`` in RESP3) in Redis's fixed orders; key specs and their halves are maps; the
  subcommands are an array of entries, or an empty *set* for a command without any, exactly as
  Redis sends them. An unknown name gives a null.
* COMMAND DOCS is a map of name to a map of summary, since, group, complexity, doc flags,
  deprecation, history (a set of ``[version, note]`` pairs), arguments (an array of maps,
  fields in the order of the spec file, ``display_text`` included as Redis 7.2 and later
  report it) and subcommands (a map). Unknown names are left out.
* COMMAND GETKEYS / GETKEYSANDFLAGS read keys through :mod:`resplite.engine.keyspecs`, with
  Redis's checks and texts in Redis's order.

Replies for single commands are built once per spec object and reused: the spec objects are
frozen, so the replies cannot go stale.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mypy_extensions import mypyc_attr

from resplite.commands.helptext import help_reply
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.keyspecs import command_keys, has_keys
from resplite.engine.registry import command
from resplite.protocol.replies import OrderedSet, Status
from resplite.store.glob import glob_match

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.table import CommandSpec, KeySpec

# COMMAND INFO lists command flags in this fixed order, whatever order they were declared in.
_FLAG_ORDER = {
    name: i
    for i, name in enumerate(
        (
            "write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
            "blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast",
            "no_auth", "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys",
            "allow_busy",
        )
    )
}
# Key-spec flags: spec files use Redis's source names, replies its reply names, in this order.
_KEY_FLAGS = {
    "RO": "RO", "RW": "RW", "OW": "OW", "RM": "RM", "ACCESS": "access", "UPDATE": "update",
    "INSERT": "insert", "DELETE": "delete", "NOT_KEY": "not_key", "INCOMPLETE": "incomplete",
    "VARIABLE_FLAGS": "variable_flags",
}
_KEY_FLAG_ORDER = {name: i for i, name in enumerate(_KEY_FLAGS)}
_ACL_CATEGORIES = frozenset(
    (
        "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
        "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
        "dangerous", "connection", "transaction", "scripting", "array",
    )
)

INVALID_COMMAND = "ERR Invalid command specified"
NO_KEY_ARGUMENTS = "ERR The command has no key arguments"
INVALID_ARG_COUNT = "ERR Invalid number of arguments specified for command"
INVALID_ARGUMENTS = "ERR Invalid arguments specified for command"

HELP_REPLY = help_reply("COMMAND", [
    ("(no subcommand)", ["Describe every command this server knows, as COMMAND INFO does."]),
    ("COUNT", ["Reply with how many commands this server has."]),
    ("LIST", [
        "Reply with the names of all commands; FILTERBY (MODULE <name>|ACLCAT <category>|",
        "PATTERN <glob>) narrows the list.",
    ]),
    ("INFO [<command-name> ...]", [
        "Describe the named commands: arity, flags, key positions, ACL categories,",
        "key specs and subcommands. Without names, every command is described.",
    ]),
    ("DOCS [<command-name> ...]", [
        "Reply with the documentation of the named commands: summary, version,",
        "group, complexity, history and arguments. Without names, that of every command.",
    ]),
    ("GETKEYS <full-command>", ["Reply with the key names a whole command line would touch."]),
    ("GETKEYSANDFLAGS <full-command>", [
        "Like GETKEYS, with the access flags (RW, OW, RM, access, update, ...) of each key.",
    ]),
])


# ---------------------------------------------------------------------------------------------
# Looking commands up the way Redis does.


def lookup_by_name(table: Mapping[bytes, CommandSpec], name: bytes) -> CommandSpec | None:
    """A command named as COMMAND INFO/DOCS take it: ``get`` or ``xgroup|create``."""
    parts = name.split(b"|")
    if len(parts) > 2:
        return None
    base = table.get(parts[0].lower())
    if len(parts) == 1 or base is None:
        return base
    return base.subcommands.get(parts[1].lower())


def lookup_by_argv(table: Mapping[bytes, CommandSpec], argv: list[bytes]) -> CommandSpec | None:
    """The command a full command line runs: the container alone, or its subcommand."""
    base = table.get(argv[0].lower())
    if base is None or len(argv) == 1 or not base.subcommands:
        return base
    return base.subcommands.get(argv[1].lower())


def walk(table: Mapping[bytes, CommandSpec]) -> Iterator[CommandSpec]:
    """Every command and subcommand, each container followed by its subcommands."""
    for spec in table.values():
        yield spec
        yield from spec.subcommands.values()


# ---------------------------------------------------------------------------------------------
# Reply builders.

_info_cache: dict[int, tuple[CommandSpec, list[Any]]] = {}
_docs_cache: dict[int, tuple[CommandSpec, dict[bytes, Any]]] = {}


def key_flags_reply(flags: tuple[str, ...]) -> OrderedSet:
    ordered = sorted(flags, key=_KEY_FLAG_ORDER.__getitem__)
    return OrderedSet(Status(_KEY_FLAGS[f]) for f in ordered)


def _begin_search_reply(search: Mapping[str, Any]) -> dict[bytes, Any]:
    kind = search["type"]
    spec = search.get("spec") or {}
    if kind == "index":
        return {b"type": b"index", b"spec": {b"index": int(spec["index"])}}
    if kind == "keyword":
        return {
            b"type": b"keyword",
            b"spec": {b"keyword": spec["keyword"].encode(), b"startfrom": int(spec["startfrom"])},
        }
    return {b"type": b"unknown", b"spec": {}}


def _find_keys_reply(find: Mapping[str, Any]) -> dict[bytes, Any]:
    kind = find["type"]
    spec = find.get("spec") or {}
    if kind == "range":
        return {
            b"type": b"range",
            b"spec": {
                b"lastkey": int(spec["lastkey"]),
                b"keystep": int(spec["keystep"]),
                b"limit": int(spec["limit"]),
            },
        }
    if kind == "keynum":
        return {
            b"type": b"keynum",
            b"spec": {
                b"keynumidx": int(spec["keynumidx"]),
                b"firstkey": int(spec["firstkey"]),
                b"keystep": int(spec["keystep"]),
            },
        }
    return {b"type": b"unknown", b"spec": {}}


def _key_spec_reply(ks: KeySpec) -> dict[bytes, Any]:
    reply: dict[bytes, Any] = {}
    if ks.notes:
        reply[b"notes"] = ks.notes.encode()
    reply[b"flags"] = key_flags_reply(ks.flags)
    reply[b"begin_search"] = _begin_search_reply(ks.begin_search)
    reply[b"find_keys"] = _find_keys_reply(ks.find_keys)
    return reply


def info_reply(spec: CommandSpec) -> list[Any]:
    """One COMMAND INFO entry."""
    cached = _info_cache.get(id(spec))
    if cached is not None and cached[0] is spec:
        return cached[1]
    flags = sorted(spec.flag_list, key=_FLAG_ORDER.__getitem__)
    if spec.movablekeys and "movablekeys" not in flags:
        flags.append("movablekeys")
        flags.sort(key=_FLAG_ORDER.__getitem__)
    subs: Any = (
        [info_reply(sub) for sub in spec.subcommands.values()]
        if spec.subcommands
        else OrderedSet()
    )
    reply = [
        spec.fullname.encode(),
        spec.arity,
        OrderedSet(Status(f) for f in flags),
        spec.first_key,
        spec.last_key,
        spec.key_step,
        OrderedSet(Status(c) for c in spec.acl_categories),
        OrderedSet(h.encode() for h in spec.hints),
        OrderedSet(_key_spec_reply(ks) for ks in spec.key_specs),
        subs,
    ]
    _info_cache[id(spec)] = (spec, reply)
    return reply


def _argument_reply(arg: Mapping[str, Any]) -> dict[bytes, Any]:
    reply: dict[bytes, Any] = {}
    for field, value in arg.items():
        if field == "flags":
            reply[b"flags"] = OrderedSet(Status(f) for f in value)
        elif field == "arguments":
            reply[b"arguments"] = [_argument_reply(a) for a in value]
        elif field == "key_spec_index":
            reply[b"key_spec_index"] = int(value)
        elif value is not None:
            reply[field.encode()] = str(value).encode()
    return reply


def docs_reply(spec: CommandSpec) -> dict[bytes, Any]:
    """One COMMAND DOCS value: the documentation map of a command."""
    cached = _docs_cache.get(id(spec))
    if cached is not None and cached[0] is spec:
        return cached[1]
    doc = spec.doc
    reply: dict[bytes, Any] = {
        b"summary": doc["summary"].encode(),
        b"since": doc["since"].encode(),
        b"group": doc["group"].encode(),
    }
    if doc.get("complexity"):
        reply[b"complexity"] = doc["complexity"].encode()
    if doc.get("doc_flags"):
        reply[b"doc_flags"] = OrderedSet(Status(f) for f in doc["doc_flags"])
    if doc.get("deprecated_since"):
        reply[b"deprecated_since"] = doc["deprecated_since"].encode()
    if doc.get("replaced_by"):
        reply[b"replaced_by"] = doc["replaced_by"].encode()
    if doc.get("history"):
        reply[b"history"] = OrderedSet(
            [version.encode(), note.encode()] for version, note in doc["history"]
        )
    if doc.get("arguments"):
        reply[b"arguments"] = [_argument_reply(a) for a in doc["arguments"]]
    if spec.subcommands:
        reply[b"subcommands"] = {
            sub.fullname.encode(): docs_reply(sub) for sub in spec.subcommands.values()
        }
    _docs_cache[id(spec)] = (spec, reply)
    return reply


@mypyc_attr(native_class=False)
class _RepeatedName(bytes):
    """A map key that may appear twice: COMMAND DOCS names a command once per time asked."""

    __slots__ = ()

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


# ---------------------------------------------------------------------------------------------
# Handlers.


def _table(client: Client) -> Mapping[bytes, CommandSpec]:
    return client.server.table


@command("command")
def command_all(client: Client, argv: list[bytes]) -> list[Any]:
    return [info_reply(spec) for spec in _table(client).values()]


@command("command|count")
def command_count(client: Client, argv: list[bytes]) -> int:
    return len(_table(client))


@command("command|info")
def command_info(client: Client, argv: list[bytes]) -> list[Any]:
    table = _table(client)
    if len(argv) == 2:
        return [info_reply(spec) for spec in table.values()]
    found = (lookup_by_name(table, name) for name in argv[2:])
    return [None if spec is None else info_reply(spec) for spec in found]


@command("command|docs")
def command_docs(client: Client, argv: list[bytes]) -> dict[bytes, Any]:
    table = _table(client)
    if len(argv) == 2:
        return {spec.fullname.encode(): docs_reply(spec) for spec in table.values()}
    reply: dict[bytes, Any] = {}
    for name in argv[2:]:
        spec = lookup_by_name(table, name)
        if spec is None:
            continue
        key = spec.fullname.encode()
        if key in reply:
            key = _RepeatedName(key)
        reply[key] = docs_reply(spec)
    return reply


def _list_filter(argv: list[bytes]) -> tuple[bytes, bytes] | None:
    i = 2
    chosen = None
    while i < len(argv):
        more = len(argv) - 1 - i
        if argv[i].lower() == b"filterby" and more == 2:
            kind = argv[i + 1].lower()
            if kind not in (b"module", b"aclcat", b"pattern"):
                raise CommandError(errors.SYNTAX)
            chosen = (kind, argv[i + 2])
            i += 3
        else:
            raise CommandError(errors.SYNTAX)
    return chosen


@command("command|list")
def command_list(client: Client, argv: list[bytes]) -> list[bytes]:
    chosen = _list_filter(argv)
    specs = walk(_table(client))
    if chosen is None:
        return [spec.fullname.encode() for spec in specs]
    kind, value = chosen
    if kind == b"module":
        return []  # resplite loads no modules
    if kind == b"aclcat":
        category = value.decode("utf-8", "replace").lower()
        if category not in _ACL_CATEGORIES:
            return []
        wanted = "@" + category
        return [
            spec.fullname.encode()
            for spec in specs
            if any(c.lower() == wanted for c in spec.acl_categories)
        ]
    return [
        spec.fullname.encode()
        for spec in specs
        if glob_match(value, spec.fullname.encode(), nocase=True)
    ]


def _keys_of(client: Client, argv: list[bytes]) -> tuple[list[bytes], list[Any]]:
    line = argv[2:]
    target = lookup_by_argv(_table(client), line)
    if target is None:
        raise CommandError(INVALID_COMMAND)
    if not has_keys(target):
        raise CommandError(NO_KEY_ARGUMENTS)
    n = len(line)
    if (target.arity > 0 and target.arity != n) or n < -target.arity:
        raise CommandError(INVALID_ARG_COUNT)
    refs = command_keys(target, line)
    if not refs and "no_mandatory_keys" not in target.flags:
        raise CommandError(INVALID_ARGUMENTS)
    return line, refs


@command("command|getkeys")
def command_getkeys(client: Client, argv: list[bytes]) -> list[bytes]:
    line, refs = _keys_of(client, argv)
    return [line[ref.pos] for ref in refs]


@command("command|getkeysandflags")
def command_getkeysandflags(client: Client, argv: list[bytes]) -> list[list[Any]]:
    line, refs = _keys_of(client, argv)
    return [[line[ref.pos], key_flags_reply(ref.flags)] for ref in refs]


@command("command|help")
def command_help(client: Client, argv: list[bytes]) -> list[Status]:
    return HELP_REPLY
