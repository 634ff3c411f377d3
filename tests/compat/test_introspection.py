"""COMMAND and its subcommands against the reference Redis (8.6.3), byte for byte.

COMMAND INFO is what cluster-aware clients read (arity, flags, first/last/step, key specs), so
every command both servers have must give the same bytes in RESP2 and RESP3. Two things are
normalised, because Redis itself does not fix them: the order of a container's subcommands
(hash-table order, different in every Redis process), and which subcommands are compared (the
ones both servers have: resplite implements a subset of CLIENT, CONFIG, MEMORY, ...).

COMMAND DOCS carries our own prose (summaries, complexity lines, history notes), so its
structure is compared with the prose blanked out; ``display_text`` is left out of the
comparison because Redis 7.2 and later report it and 7.0 does not.

resplite answers as the reference's line (``redis-compat-version``), so it lists the commands
of that line. Facts taken deliberately from a Redis newer than the reference (8.8, 8.10) are
listed below with their version and reason; the lists adapt to the reference's version, so the
same tables serve a 7.0 reference.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from support.helpshape import assert_same_shape, implemented
from support.newer import Conn
from support.pair import Pair
from support.raw import RawClient
from support.resptree import Node, dump, parse, text, to_python
from support.servers import ServerProcess, reference_path, server_version

from resplite.commands import SPEC_DIR

_SPECS = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(SPEC_DIR.glob("*.json"))]


def _fullname(spec: dict) -> str:
    name = spec["name"].lower()
    return f"{spec['container'].lower()}|{name}" if spec.get("container") else name


ALL_NAMES = sorted(_fullname(s) for s in _SPECS)
TOP_LEVEL = sorted(_fullname(s) for s in _SPECS if not s.get("container"))

def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def _reference_line() -> tuple[int, int]:
    """The reference's release line (8.6 for the suite's 8.6.3; 8.6 without one: the tests
    skip then)."""
    exe = reference_path()
    return _version(server_version(exe) if exe is not None else "8.6.3")


REF = _reference_line()


def _newer(table: dict[str, tuple[str, str]]) -> dict[str, str]:
    """The entries of ``table`` (name -> (version, why)) newer than the reference."""
    return {name: why for name, (version, why) in table.items()
            if version == "own" or _version(version) > REF}


# Commands added after Redis 7.0, by version (the spec files' ``since``): those newer than the
# reference are missing there (and in resplite answering as the reference's line); their facts
# come from the newer Redis named there.
ADDED: dict[str, tuple[str, str]] = {
    _fullname(s): ("own", "resplite's own command") if _version(s["since"])[0] < 1
    else (s["since"].rsplit(".", 1)[0], f"added in Redis {s['since'].rsplit('.', 1)[0]}")
    for s in _SPECS
    if _version(s["since"])[0] < 1 or _version(s["since"]) > (7, 0)
}
NOT_IN_REFERENCE = _newer(ADDED)
# Commands whose argument tree (COMMAND DOCS) a Redis after 7.0 changed, by the newest change:
# those newer than the reference keep the reference's COMMAND INFO but a newer tree.
ARGUMENTS_CHANGED: dict[str, tuple[str, str]] = {
    "xadd": ("8.6", "Redis 8.2 adds KEEPREF | DELREF | ACKED, 8.6 IDMPAUTO | IDMP (7.2 also "
                    "renamed id_or_auto/field_value)"),
    "xtrim": ("8.2", "Redis 8.2 adds KEEPREF | DELREF | ACKED"),
    "xreadgroup": ("8.10", "Redis 8.4 adds CLAIM min-idle-time, 8.10 MAXCOUNT and MAXSIZE "
                           "(7.2 also renamed group_consumer)"),
    "xread": ("8.10", "Redis 8.10 adds MAXCOUNT and MAXSIZE"),
    **{n: ("8.8", "Redis 8.8 adds AGGREGATE COUNT") for n in ("zunion", "zinter",
                                                               "zunionstore", "zinterstore")},
    "client|kill": ("7.4", "Redis 7.4 adds MAXAGE (7.2 also renamed client-type, addr, laddr, "
                           "skipme)"),
    "hscan": ("7.4", "Redis 7.4 adds NOVALUES"),
    "bitop": ("8.2", "Redis 8.2 makes the operation a token and adds DIFF, DIFF1, ANDOR, ONE"),
    "zrank": ("7.2", "Redis 7.2 adds WITHSCORE"),
    "zrevrank": ("7.2", "Redis 7.2 adds WITHSCORE"),
    "set": ("8.4", "Redis 8.4 adds IFEQ | IFNE | IFDEQ | IFDNE"),
}
NEWER_ARGUMENTS = _newer(ARGUMENTS_CHANGED)
# Commands whose COMMAND INFO is newer Redis's: the arity, which the new argument changed.
NEWER_ARITY = {name: arity for name, arity in {"zrank": -3, "zrevrank": -3}.items()
               if REF < (7, 2)}  # Redis 7.2 (WITHSCORE)
# Commands whose COMMAND INFO Redis 7.2 / 7.4 changed in flags or arity (the 7.0 reference's
# bytes otherwise), with what COMMAND INFO shows for them now: (arity, flags, ACL categories).
INFO_CHANGED: dict[str, tuple[int, list[str], list[str]]] = {
    # 7.2 blocking, 7.4 allowed in scripts (answers at once there, as in MULTI)
    "wait": (3, ["blocking"], ["@slow", "@blocking", "@connection"]),
    # 7.2: allowed in scripts, where they do not block
    "blpop": (-3, ["write", "blocking"], ["@write", "@list", "@slow", "@blocking"]),
    "brpop": (-3, ["write", "blocking"], ["@write", "@list", "@slow", "@blocking"]),
    "blmove": (6, ["write", "denyoom", "blocking"], ["@write", "@list", "@slow", "@blocking"]),
    "brpoplpush": (4, ["write", "denyoom", "blocking"],
                   ["@write", "@list", "@slow", "@blocking"]),
    "bzpopmin": (-3, ["write", "blocking", "fast"], ["@write", "@sortedset", "@fast",
                                                     "@blocking"]),
    "bzpopmax": (-3, ["write", "blocking", "fast"], ["@write", "@sortedset", "@fast",
                                                     "@blocking"]),
    # 7.2: answered while loading
    "cluster|slots": (2, ["loading", "stale"], ["@slow"]),
    "cluster|shards": (2, ["loading", "stale"], ["@slow"]),
    # 7.2: the command alone is checked by the subcommand (its own errors)
    "command|getkeys": (-3, ["loading", "stale"], ["@slow", "@connection"]),
    "command|getkeysandflags": (-3, ["loading", "stale"], ["@slow", "@connection"]),
}
NEWER_INFO = INFO_CHANGED if REF < (7, 4) else {}
# Subcommands whose arguments are the reference's but whose history names newer Redis's reply
# fields.
NEWER_HISTORY = _newer({
    "xinfo|stream": ("8.8", "Redis 8.6 adds the idempotency fields, 8.8 nacked-count"),
    "slowlog|get": ("8.10", "Redis 8.10 adds the argument count to each entry"),
})
#: What resplite answering as the reference's line lists (COMMAND, COMMAND COUNT): the
#: commands added up to that line, and resplite's own.
TOP_LEVEL_AT_REF = sorted(
    _fullname(s) for s in _SPECS
    if not s.get("container") and (_version(s["since"])[0] < 1 or _version(s["since"]) <= REF))
SHARED_NAMES = [n for n in ALL_NAMES if n not in NOT_IN_REFERENCE]
SHARED_TOP_LEVEL = [n for n in TOP_LEVEL if n not in NOT_IN_REFERENCE]


def pairs(node: Node) -> list[tuple[Node, Node]]:
    """Key-value pairs of a map, in RESP3 (``%``) or flattened into a RESP2 array."""
    kind, items = node
    return list(items) if kind == b"%" else list(zip(items[::2], items[1::2], strict=True))


def rebuild(kind: bytes, kv: list[tuple[Node, Node]]) -> Node:
    return (kind, kv) if kind == b"%" else (kind, [x for pair in kv for x in pair])


def info_subcommands(entry: Node) -> set[str]:
    kind, items = entry[1][9]
    return {text(sub[1][0]) for sub in items} if kind == b"*" else set()


def with_subcommands(entry: Node, keep: set[str]) -> Node:
    """A COMMAND INFO entry with only the ``keep`` subcommands, sorted by name."""
    kind, items = entry
    items = list(items)
    sub_kind, subs = items[9]
    if sub_kind == b"*":
        chosen = [s for s in subs if text(s[1][0]) in keep]
        items[9] = (sub_kind, sorted(chosen, key=lambda s: text(s[1][0])))
    return (kind, items)


PROSE = (b"$", b"<our own words>")


def docs_structure(doc: Node, keep: set[str]) -> Node:
    """A COMMAND DOCS value with prose blanked, display_text dropped, subcommands sorted."""
    out = []
    for key, value in pairs(doc):
        field = text(key)
        if field in ("summary", "complexity", "replaced_by"):
            value = PROSE
        elif field == "history":
            value = (value[0], [(e[0], [e[1][0], PROSE]) for e in value[1]])
        elif field == "arguments":
            value = _argument_structure(value)
        elif field == "subcommands":
            chosen = [(k, docs_structure(v, keep)) for k, v in pairs(value) if text(k) in keep]
            value = rebuild(value[0], sorted(chosen, key=lambda kv: text(kv[0])))
        out.append((key, value))
    return rebuild(doc[0], out)


def _argument_structure(args: Node) -> Node:
    result = []
    for arg in args[1]:
        fields = []
        for key, value in pairs(arg):
            field = text(key)
            if field == "display_text":
                continue
            if field == "summary":
                value = PROSE
            elif field == "arguments":
                value = _argument_structure(value)
            fields.append((key, value))
        result.append(rebuild(arg[0], fields))
    return (args[0], result)


def docs_subcommands(doc: Node) -> set[str]:
    for key, value in pairs(doc):
        if text(key) == "subcommands":
            return {text(k) for k, _ in pairs(value)}
    return set()


def docs_dict(node: Node) -> dict[str, dict]:
    """A COMMAND DOCS reply as nested dicts, in either protocol version."""
    return {text(k): _doc_dict(v) for k, v in pairs(node)}


def _doc_dict(node: Node) -> dict:
    out: dict = {}
    for key, value in pairs(node):
        field = text(key)
        if field == "arguments":
            out[field] = [_doc_dict(arg) for arg in value[1]]
        elif field == "subcommands":
            out[field] = docs_dict(value)
        else:
            out[field] = to_python(value)
    return out


def tokens(args: list[dict]) -> set[str]:
    found = set()
    for arg in args:
        if arg.get("token"):
            found.add(arg["token"])
        found |= tokens(arg.get("arguments") or [])
    return found


# ---------------------------------------------------------------------------------------------
# COMMAND INFO


@pytest.mark.parametrize("name", [n for n in SHARED_NAMES
                                  if n not in NEWER_ARITY and n not in NEWER_INFO])
def test_command_info_equals_redis(pair: Pair, name: str) -> None:
    """COMMAND INFO <name>: same bytes as Redis 7.0 (subcommands: the shared ones, sorted)."""
    ref, ours = pair.both("COMMAND", "INFO", name)
    ref_entry, our_entry = parse(ref)[1][0], parse(ours)[1][0]
    assert ref_entry[0] == b"*", f"the reference has no {name}: its spec file's since is too old"
    keep = info_subcommands(ref_entry) & info_subcommands(our_entry) - set(NEWER_INFO)
    assert dump(with_subcommands(our_entry, keep)) == dump(with_subcommands(ref_entry, keep))


@pytest.mark.redis_version("7.2")
@pytest.mark.parametrize("name", sorted(NEWER_ARITY))
def test_command_info_equals_redis_but_for_a_newer_arity(pair: Pair, name: str) -> None:
    """COMMAND INFO <name>: Redis 7.0's bytes once the arity is put back to 7.0's."""
    ref, ours = pair.both("COMMAND", "INFO", name)
    ref_entry, our_entry = parse(ref)[1][0], parse(ours)[1][0]
    assert to_python(our_entry)[1] == NEWER_ARITY[name]
    old_arity = ref_entry[1][1]
    patched = (our_entry[0], [our_entry[1][0], old_arity, *our_entry[1][2:]])
    assert dump(patched) == dump(ref_entry)


@pytest.mark.redis_version("7.4")
@pytest.mark.parametrize("name", sorted(NEWER_INFO))
def test_command_info_shows_newer_flags_and_arity(pair: Pair, name: str) -> None:
    """COMMAND INFO <name>: the newer arity, flags and ACL categories; the rest (key specs,
    steps, tips) as Redis 7.0's."""
    ref, ours = pair.both("COMMAND", "INFO", name)
    ref_info, our_info = to_python(parse(ref))[0], to_python(parse(ours))[0]
    arity, flags, categories = NEWER_INFO[name]
    assert (our_info[1], our_info[2], our_info[6]) == (arity, flags, categories)
    assert our_info[0] == ref_info[0] and our_info[3:6] == ref_info[3:6]
    assert our_info[7:] == ref_info[7:]


@pytest.mark.parametrize("name", sorted(NOT_IN_REFERENCE))
def test_newer_commands_are_unknown_to_the_reference(pair: Pair, name: str) -> None:
    """Commands listed as newer than the reference really are absent there, and in resplite
    answering as the reference's line (resplite's own commands excepted)."""
    ref, ours = pair.both("COMMAND", "INFO", name)
    assert parse(ref)[1][0][0] in (b"$", b"_")
    if name.startswith("resplite."):
        assert to_python(parse(ours))[0][0] == name
    else:
        assert ours == ref


@pytest.mark.redis_version("8.10")
@pytest.mark.parametrize("name", sorted(NOT_IN_REFERENCE))
def test_newer_commands_are_known_at_the_newest_version(conn: Conn, name: str) -> None:
    """resplite answering as its newest version has every command added since the
    reference."""
    assert conn.v("COMMAND", "INFO", name)[0][0] == name


def test_command_info_several_names_and_unknown_ones(pair: Pair) -> None:
    """COMMAND INFO: one entry per name asked, null for unknown or malformed names."""
    pair.check(
        "COMMAND", "INFO", "nosuch", "get", "GET", "xgroup|create", "XGROUP|CREATE", "get|x",
        "xgroup|", "|x", "a|b|c", "", "xgroup|nosuch",
    )


def test_command_and_command_info_list_every_command(pair: Pair) -> None:
    """COMMAND and COMMAND INFO without names: one entry per top-level spec file."""
    everything = pair.ours.call("COMMAND")
    assert pair.ours.call("COMMAND", "INFO") == everything
    names = sorted(text(entry[1][0]) for entry in parse(everything)[1])
    assert names == TOP_LEVEL_AT_REF


def test_command_count_is_the_number_of_top_level_specs(pair: Pair) -> None:
    count = pair.ours.call("COMMAND", "COUNT")
    assert count == b":%d\r\n" % len(TOP_LEVEL_AT_REF)
    assert len(parse(pair.ours.call("COMMAND"))[1]) == len(TOP_LEVEL_AT_REF)


@pytest.mark.redis_version("8.10")
def test_command_count_at_the_newest_version_is_every_top_level_spec(conn: Conn) -> None:
    assert conn.v("COMMAND", "COUNT") == len(TOP_LEVEL)


# ---------------------------------------------------------------------------------------------
# COMMAND DOCS


@pytest.mark.parametrize("name", [n for n in SHARED_TOP_LEVEL if n not in NEWER_ARGUMENTS])
def test_command_docs_structure_equals_redis(pair: Pair, name: str) -> None:
    """COMMAND DOCS <name>: Redis's structure and argument tree, our own prose."""
    ref, ours = pair.both("COMMAND", "DOCS", name)
    ref_docs, our_docs = pairs(parse(ref)), pairs(parse(ours))
    assert [text(k) for k, _ in our_docs] == [name]
    ref_doc, our_doc = ref_docs[0][1], our_docs[0][1]
    keep = (docs_subcommands(ref_doc) & docs_subcommands(our_doc)) - set(NEWER_ARGUMENTS)
    keep -= set(NEWER_HISTORY)
    assert dump(docs_structure(our_doc, keep)) == dump(docs_structure(ref_doc, keep))


@pytest.mark.redis_version("8.8")
def test_xinfo_stream_docs_name_the_newer_fields(pair: Pair) -> None:
    doc = docs_dict(parse(pair.ours.call("COMMAND", "DOCS", "xinfo|stream")))["xinfo|stream"]
    assert [version for version, _ in doc["history"]][-2:] == ["8.6.0", "8.8.0"]
    assert "iids-duplicates" in doc["history"][-2][1]
    assert "nacked-count" in doc["history"][-1][1]


@pytest.mark.parametrize("name", sorted(NEWER_ARGUMENTS))
def test_command_docs_newer_argument_trees_keep_every_reference_token(
    pair: Pair, name: str
) -> None:
    """Everything Redis 7.0 documents is still documented; the tree itself is newer."""
    ref, ours = (docs_dict(parse(r)) for r in pair.both("COMMAND", "DOCS", name))
    assert tokens(ref[name].get("arguments", [])) < tokens(ours[name]["arguments"])


@pytest.mark.redis_version("7.4")
def test_client_kill_docs_name_the_maxage_filter(pair: Pair) -> None:
    doc = docs_dict(parse(pair.ours.call("COMMAND", "DOCS", "client|kill")))["client|kill"]
    assert ["7.4.0", doc["history"][-1][1]] == doc["history"][-1]
    new_format = doc["arguments"][0]["arguments"][1]
    maxage = new_format["arguments"][-1]
    assert maxage == {
        "name": "maxage", "type": "integer", "display_text": "maxage", "token": "MAXAGE",
        "since": "7.4.0", "flags": ["optional"],
    }


def test_command_docs_prose_is_our_own(pair: Pair) -> None:
    """Summaries differ from Redis's by design, for every shared command."""
    ref = docs_dict(parse(pair.ref.call("COMMAND", "DOCS", *SHARED_TOP_LEVEL)))
    ours = docs_dict(parse(pair.ours.call("COMMAND", "DOCS", *SHARED_TOP_LEVEL)))
    same = [n for n in SHARED_TOP_LEVEL if ours[n]["summary"] == ref[n]["summary"]]
    assert same == []


def test_command_docs_repeats_unknown_and_subcommand_names(pair: Pair) -> None:
    """COMMAND DOCS: unknown names are left out; a name asked twice is answered twice."""
    ref, ours = pair.both("COMMAND", "DOCS", "nosuch", "get", "GET", "xgroup|create", "a|b|c")
    assert [text(k) for k, _ in pairs(parse(ours))] == [text(k) for k, _ in pairs(parse(ref))]
    assert [text(k) for k, _ in pairs(parse(ours))] == ["get", "get", "xgroup|create"]


def test_command_docs_arguments_carry_display_text(pair: Pair) -> None:
    """As Redis 7.2+ reports it: every argument but oneof/block has display_text."""
    docs = docs_dict(parse(pair.ours.call("COMMAND", "DOCS")))

    def walk(args: list[dict]) -> Iterator[dict]:
        for arg in args:
            yield arg
            yield from walk(arg.get("arguments", []))

    def every(doc: dict) -> Iterator[dict]:
        yield from walk(doc.get("arguments", []))
        for sub in doc.get("subcommands", {}).values():
            yield from every(sub)

    args = [arg for doc in docs.values() for arg in every(doc)]
    assert args
    for arg in args:
        assert ("display_text" in arg) == (arg["type"] not in ("oneof", "block")), arg


# ---------------------------------------------------------------------------------------------
# COMMAND GETKEYS / GETKEYSANDFLAGS

GETKEYS_LINES = [
    "get k", "set k v", "set k v EX 10 GET", "set k v get", "mget a b c", "mset a 1 b 2",
    "msetnx a 1 b 2", "del a b c", "unlink a", "exists a b", "touch a b", "rename a b",
    "renamenx a b", "copy a b DB 1 REPLACE", "move a 1", "lcs a b LEN", "getrange k 0 1",
    "substr k 0 1", "setrange k 0 v", "getex k PERSIST", "getdel k", "expire k 10 NX",
    "pexpireat k 1 GT", "ttl k", "type k", "watch a b c", "incr k", "incrbyfloat k 1.5",
    "append k v", "psetex k 100 v", "setex k 10 v", "setnx k v", "getset k v",
    "object encoding k", "object freq k", "memory usage k", "xadd s * f v",
    "xadd s MAXLEN ~ 10 * f v", "xrange s - +", "xrevrange s + -", "xlen s", "xdel s 1-1 2-2",
    "xtrim s MAXLEN 0", "xread STREAMS a b 0 0", "xread COUNT 1 BLOCK 0 STREAMS a 0",
    "xread COUNT 1 STREAMS a b c 0 0 0", "xread streams a b c", "xread COUNT 1 STREAMS",
    "xread COUNT 1 nostreams a 0", "xreadgroup GROUP g c STREAMS a b > >",
    "xreadgroup GROUP g c COUNT 1 NOACK STREAMS a >", "xreadgroup GROUP streams c STREAMS a >",
    "xreadgroup GROUP g streams STREAMS a >", "xreadgroup GROUP g c COUNT 1 STREAMS",
    "xack s g 1-1", "xpending s g", "xpending s g IDLE 10 - + 10 c", "xclaim s g c 10 1-1",
    "xautoclaim s g c 10 0 COUNT 1", "xgroup create s g $ MKSTREAM", "XGROUP CREATE s g $",
    "xgroup setid s g 0", "xgroup destroy s g", "xgroup createconsumer s g c",
    "xgroup delconsumer s g c", "xinfo stream s FULL", "XINFO STREAM s", "xinfo groups s",
    "xinfo consumers s g", "xsetid s 1-1",
    # commands with a getkeys rule of their own in Redis, on lines their specs do not fit
    # (bad key counts, a keyword last): what the ACL check reads for them too
    "georadius k 0 0 1 m STORE", "georadius k 0 0 1 m STORE a STOREDIST b",
    "georadiusbymember k m 1 m STORE d", "lmpop 5 a LEFT", "lmpop -1 a LEFT",
    "blmpop 0 2 a b LEFT", "zmpop 5 a MIN", "bzmpop 0 5 a MIN", "sintercard 5 a",
    "zintercard 3 a", "zdiff 5 a", "zunionstore d 5 a", "zinterstore d 0 a", "eval s 5 a",
    "eval s -1", "eval_ro s 2 a b", "fcall f 5 a", "fcall_ro f 1 a", "sort k store",
    "sort k by x store d", "sort k limit 0 store d", "sort k store a store b",
    "sort_ro k store d", "bitfield_ro k get u8 0",
    # errors: unknown command or subcommand, no keys, wrong argument count
    "nosuch a", "xgroup nosuch a", "config get x", "client list", "object help",
    "xgroup help", "get a b", "dbsize x", "keys *", "scan 0", "flushall async", "ping x",
]


@pytest.mark.parametrize("line", GETKEYS_LINES)
@pytest.mark.parametrize("sub", ["GETKEYS", "GETKEYSANDFLAGS"])
def test_command_getkeys_equals_redis(pair: Pair, sub: str, line: str) -> None:
    pair.check("COMMAND", sub, *line.split(" "))


@pytest.mark.parametrize(
    "args",
    [
        ("COMMAND", "GETKEYS"),
        ("COMMAND", "COUNT", "x"),
        ("COMMAND", "HELP", "x"),
        ("COMMAND", "nosuch"),
    ],
    ids=lambda a: " ".join(a),
)
def test_command_errors_equal_redis(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check(*args)


def test_command_getkeys_checks_a_lone_command_itself(pair: Pair) -> None:
    """Arity -3 since Redis 7.2: the command named alone gets GETKEYS's own errors (7.0
    refused it with the arity error)."""
    for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
        for name in ("get", "xgroup", "ping", "nosuch"):
            pair.check("COMMAND", sub, name)
    assert pair.ours.call("COMMAND", "GETKEYS", "get") == \
        b"-ERR Invalid number of arguments specified for command\r\n"


def test_command_help_has_the_shape_of_redis(pair: Pair) -> None:
    ref, ours = pair.both("COMMAND", "HELP")
    assert_same_shape(ref, ours, ours_has=implemented("command") | {"(no subcommand)"})


# ---------------------------------------------------------------------------------------------
# COMMAND LIST


@pytest.mark.parametrize(
    "filters",
    [
        (),
        ("FILTERBY", "PATTERN", "x*"),
        ("FILTERBY", "PATTERN", "*|*"),
        ("filterby", "pattern", "X[A-G]*"),
        ("FILTERBY", "PATTERN", "c?ient*"),
        ("FILTERBY", "ACLCAT", "stream"),
        ("FILTERBY", "ACLCAT", "STREAM"),
        ("FILTERBY", "ACLCAT", "admin"),
        ("FILTERBY", "ACLCAT", "connection"),
        ("FILTERBY", "ACLCAT", "@stream"),
        ("FILTERBY", "ACLCAT", "nosuch"),
        ("FILTERBY", "MODULE", "nosuch"),
    ],
    ids=lambda f: " ".join(f) or "all",
)
def test_command_list_equals_redis_on_shared_commands(pair: Pair, filters: tuple[str, ...]) -> None:
    """COMMAND LIST [FILTERBY ...]: the same names as Redis among the commands both have."""
    ref, ours = pair.both("COMMAND", "LIST", *filters)
    assert parse(ours)[0] == b"*"
    ref_names = set(to_python(parse(ref)))
    our_names = to_python(parse(ours))
    assert len(our_names) == len(set(our_names))
    assert ref_names & set(ALL_NAMES) == set(our_names) - set(NOT_IN_REFERENCE)


@pytest.mark.parametrize(
    "args",
    [
        ("FILTERBY",),
        ("FILTERBY", "ACLCAT"),
        ("FILTERBY", "foo", "bar"),
        ("FILTERBY", "ACLCAT", "stream", "extra"),
        ("x",),
    ],
    ids=lambda a: " ".join(a),
)
def test_command_list_syntax_errors_equal_redis(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check("COMMAND", "LIST", *args)


# ---------------------------------------------------------------------------------------------
# What clients build from COMMAND


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_reads_the_same_command_table(
    redis_ref: ServerProcess, resplite_srv: ServerProcess, protocol: int
) -> None:
    """redis-py's parsed COMMAND (what its cluster client uses) agrees on shared commands."""
    redis = pytest.importorskip("redis")
    ref = redis.Redis(host=redis_ref.host, port=redis_ref.port, protocol=protocol)
    ours = redis.Redis(host=resplite_srv.host, port=resplite_srv.port, protocol=protocol)
    try:
        ref_table, our_table = ref.command(), ours.command()
    finally:
        ref.close()
        ours.close()
    fields = (
        "arity", "flags", "first_key_pos", "last_key_pos", "step_count", "acl_categories",
        "tips", "key_specifications",
    )
    for name in SHARED_TOP_LEVEL:
        a, b = ref_table[name], our_table[name]
        for field in fields:
            if field == "arity" and name in NEWER_ARITY:
                assert b[field] == NEWER_ARITY[name]
                continue
            if field in ("flags", "acl_categories") and name in NEWER_INFO:
                continue  # test_command_info_shows_newer_flags_and_arity
            assert b[field] == a[field], (name, field)


def test_reference_and_resplite_agree_on_movable_keys(redis_ref: ServerProcess) -> None:
    """The loader's derivation of first/last/step and movablekeys, checked on every 7.0 command.

    Redis computes these from key specs at start-up; the table does the same. Feeding each of
    Redis 7.0's 240 commands' key specs through our derivation must give Redis's numbers.
    """
    from types import MappingProxyType

    from resplite.engine.table import KeySpec, _derive_legacy_range

    client = RawClient(redis_ref.host, redis_ref.port)
    try:
        client.call("HELLO", "3")
        everything = to_python(parse(client.call("COMMAND")))
    finally:
        client.close()

    def check(entry: list) -> int:
        specs = tuple(
            KeySpec(
                flags=tuple(f.upper() for f in ks["flags"]),
                begin_search=MappingProxyType(ks["begin_search"]),
                find_keys=MappingProxyType(ks["find_keys"]),
                notes=ks.get("notes"),
            )
            for ks in entry[8]
        )
        expected = (entry[3], entry[4], entry[5], "movablekeys" in entry[2])
        assert _derive_legacy_range(specs) == expected, entry[0]
        return 1 + sum(check(sub) for sub in entry[9])

    assert sum(check(entry) for entry in everything) > 300
