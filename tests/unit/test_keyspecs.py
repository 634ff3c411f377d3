"""The key-spec interpreter, on synthetic specs covering every begin/find kind."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from resplite.engine.keyspecs import KeyRef, command_keys, has_keys, keys_from_specs
from resplite.engine.table import CommandSpec, KeySpec


def _ks(begin: dict, find: dict, *flags: str) -> KeySpec:
    return KeySpec(flags=flags or ("RW",), begin_search=MappingProxyType(begin),
                   find_keys=MappingProxyType(find))


def _cmd(*specs: KeySpec, name: str = "cmd", arity: int = -2) -> CommandSpec:
    return CommandSpec(
        name=name, fullname=name, container=None, arity=arity, flags=frozenset(),
        flag_list=(), acl_categories=(), hints=(), key_specs=specs, first_key=0, last_key=0,
        key_step=0, movablekeys=False, doc=MappingProxyType({}), handler=None,
    )


def index(i: int) -> dict:
    return {"type": "index", "spec": {"index": i}}


def keyword(word: str, startfrom: int) -> dict:
    return {"type": "keyword", "spec": {"keyword": word, "startfrom": startfrom}}


def rng(lastkey: int, keystep: int = 1, limit: int = 0) -> dict:
    return {"type": "range", "spec": {"lastkey": lastkey, "keystep": keystep, "limit": limit}}


def keynum(idx: int, firstkey: int, keystep: int = 1) -> dict:
    return {"type": "keynum", "spec": {"keynumidx": idx, "firstkey": firstkey,
                                       "keystep": keystep}}


def line(text: str) -> list[bytes]:
    return [w.encode() for w in text.split()]


def positions(cmd: CommandSpec, text: str, **kw: bool) -> list[int] | None:
    refs = keys_from_specs(cmd, line(text), **kw)
    return None if refs is None else [r.pos for r in refs]


def test_index_and_fixed_range() -> None:
    assert positions(_cmd(_ks(index(1), rng(0))), "get k") == [1]
    assert positions(_cmd(_ks(index(1), rng(1))), "lcs a b len") == [1, 2]


def test_negative_lastkey_counts_from_the_end() -> None:
    assert positions(_cmd(_ks(index(1), rng(-1))), "del a b c") == [1, 2, 3]
    assert positions(_cmd(_ks(index(1), rng(-2))), "cmd a b c 9") == [1, 2, 3]


def test_keystep_skips_values() -> None:
    assert positions(_cmd(_ks(index(1), rng(-1, 2))), "mset a 1 b 2") == [1, 3]


def test_limit_keeps_a_share_of_the_remaining_arguments() -> None:
    xread = _cmd(_ks(keyword("STREAMS", 1), rng(-1, 1, 2)))
    assert positions(xread, "xread count 1 streams a b 0 0") == [4, 5]
    assert positions(xread, "xread STREAMS a 0") == [2]
    # Three remaining arguments: one key (integer division), as Redis computes it.
    assert positions(xread, "xread streams a b c") == [2]


def test_keyword_search_is_case_insensitive_and_starts_where_told() -> None:
    xreadgroup = _cmd(_ks(keyword("STREAMS", 4), rng(-1, 1, 2)))
    # A group named "streams" (argument 2) is not where the search starts.
    assert positions(xreadgroup, "xreadgroup GROUP streams c StReAmS k >") == [5]


def test_missing_keyword_names_no_keys_but_is_not_an_error() -> None:
    xread = _cmd(_ks(keyword("STREAMS", 1), rng(-1, 1, 2)))
    assert positions(xread, "xread count 1 block 0") == []


def test_keyword_searched_backwards_from_the_end() -> None:
    cmd = _cmd(_ks(keyword("KEYS", -2), rng(-1)))
    assert positions(cmd, "cmd KEYS x KEYS a b") == [4, 5]
    # The backwards walk stops before argument 1, as Redis's does.
    assert positions(cmd, "cmd KEYS a") == []


def test_keynum_reads_the_number_of_keys() -> None:
    cmd = _cmd(_ks(index(1), keynum(0, 1)))
    assert positions(cmd, "lmpop 2 a b left") == [2, 3]
    assert positions(cmd, "lmpop 0 left") is None  # last < first: a syntax error
    assert positions(cmd, "lmpop x a left") is None
    assert positions(cmd, "lmpop -1 a left") is None
    assert positions(cmd, "lmpop 5 a left") is None  # keys past the end


def test_out_of_bounds_spec_invalidates_the_whole_line() -> None:
    cmd = _cmd(_ks(index(1), rng(0)), _ks(index(3), rng(0)))
    assert positions(cmd, "cmd a b c") == [1, 3]
    assert positions(cmd, "cmd a b") is None
    assert positions(cmd, "cmd a b", partial=True) == [1]


def test_not_key_specs_are_skipped_unless_asked_for() -> None:
    cmd = _cmd(_ks(index(1), rng(0)), _ks(index(2), rng(0), "RO", "NOT_KEY"))
    assert positions(cmd, "cmd a b") == [1]
    assert positions(cmd, "cmd a b", include_not_keys=True) == [1, 2]
    assert has_keys(cmd)
    assert not has_keys(_cmd(_ks(index(1), rng(0), "RO", "NOT_KEY")))


def test_incomplete_spec_invalidates_unless_partial() -> None:
    cmd = _cmd(_ks(index(1), rng(0), "RW", "INCOMPLETE"))
    assert positions(cmd, "cmd a") is None
    assert positions(cmd, "cmd a", partial=True) == [1]  # what it found is kept


def test_unknown_spec_kinds_are_invalid() -> None:
    cmd = _cmd(_ks({"type": "unknown", "spec": {}}, rng(0)))
    assert positions(cmd, "cmd a") is None


def test_keys_carry_their_specs_flags() -> None:
    cmd = _cmd(_ks(index(1), rng(0), "RW", "DELETE"))
    assert keys_from_specs(cmd, line("cmd a")) == [KeyRef(1, ("RW", "DELETE"))]


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        ("set k v", ("OW", "UPDATE")),
        ("set k v GET", ("RW", "ACCESS", "UPDATE")),
        ("set k v ex 10 get", ("RW", "ACCESS", "UPDATE")),
        ("set k get", ("OW", "UPDATE")),  # the value itself is not the GET option
    ],
)
def test_set_flags_depend_on_get(text: str, flags: tuple[str, ...]) -> None:
    cmd = _cmd(_ks(index(1), rng(0), "RW", "ACCESS", "UPDATE", "VARIABLE_FLAGS"), name="set")
    assert command_keys(cmd, line(text)) == [KeyRef(1, flags)]


def test_command_keys_is_empty_when_the_specs_do_not_fit() -> None:
    cmd = _cmd(_ks(index(1), rng(0)), _ks(index(3), rng(0)))
    assert command_keys(cmd, line("cmd a b")) == []
    assert command_keys(_cmd(), line("ping")) == []


def _real(name: bytes) -> CommandSpec:
    from resplite.commands import command_table

    return command_table()[name]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("migrate h 1 k 0 5", [3]),
        ("migrate h 1 k 0 5 COPY REPLACE AUTH pw", [3]),
        ("migrate h 1 - 0 5 KEYS a b", []),  # KEYS needs an empty key argument: no keys
        ("migrate h 1 k 0 5 KEYS", [3]),  # KEYS is searched from the last-but-one argument
        ("migrate h 1 k 0 5 keys a keys b", []),
        ("migrate h 1 k 0 5 AUTH keys", [3]),
    ],
)
def test_migrate_keys(text: str, found: list[int]) -> None:
    refs = command_keys(_real(b"migrate"), line(text))
    assert [r.pos for r in refs] == found
    assert all(r.flags == ("RW", "ACCESS", "DELETE") for r in refs)


def test_migrate_keys_after_keys_are_all_found() -> None:
    """The KEYS spec is INCOMPLETE (a key may be spelled "keys"): Redis's migrateGetKeys
    finds them, skipping AUTH's and AUTH2's arguments, and so must the ACL's check."""
    spec = _real(b"migrate")
    argv = [b"migrate", b"h", b"1", b"", b"0", b"5", b"AUTH2", b"u", b"keys", b"COPY",
            b"KEYS", b"a", b"keys", b"b"]
    assert [r.pos for r in command_keys(spec, argv)] == [11, 12, 13]
    argv = [b"migrate", b"h", b"1", b"", b"0", b"5", b"KEYS"]
    assert [r.pos for r in command_keys(spec, argv)] == [3]


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        ("bitfield k GET u8 0", ("RO", "ACCESS")),
        ("bitfield k GET u8 0 OVERFLOW WRAP GET i4 4", ("RO", "ACCESS")),
        ("bitfield k", ("RO", "ACCESS")),
        ("bitfield k GET u8 0 SET u8 0 1", ("RW", "ACCESS", "UPDATE")),
        ("bitfield k INCRBY u8 0 1", ("RW", "ACCESS", "UPDATE")),
        ("bitfield k GET u8", ("RW", "ACCESS", "UPDATE")),  # incomplete: taken as a write
        ("bitfield k OVERFLOW", ("RW", "ACCESS", "UPDATE")),
    ],
)
def test_bitfield_flags_depend_on_the_operations(text: str, flags: tuple[str, ...]) -> None:
    assert command_keys(_real(b"bitfield"), line(text)) == [KeyRef(1, flags)]


@pytest.mark.parametrize(
    ("argv", "flags"),
    [
        ([b"delex", b"k"], ("RM", "DELETE")),
        ([b"delex", b"k", b"IFEQ", b"v"], ("RW", "DELETE")),
        ([b"delex", b"k", b"ifdne", b"0123"], ("RW", "DELETE")),
        ([b"delex", b"k", b"bogus"], ("RM", "DELETE")),  # no condition (refused by DELEX)
        ([b"delex", b"k", b"ifeq\0x", b"v"], ("RW", "DELETE")),  # words are C strings
        ([b"set", b"k", b"v", b"get\0x"], ("RW", "ACCESS", "UPDATE")),
        ([b"set", b"k", b"v", b"IFNE\0", b"x"], ("RW", "UPDATE")),
    ],
)
def test_variable_flags_as_redis_8_finds_them(argv: list[bytes],
                                              flags: tuple[str, ...]) -> None:
    """delexGetKeys and setGetKeys of Redis 8.6: the options are compared as C strings."""
    assert command_keys(_real(argv[0]), argv) == [KeyRef(1, flags)]
