"""Functions (FUNCTION LOAD / DELETE / FLUSH / LIST / DUMP / RESTORE / STATS / KILL / HELP,
FCALL, FCALL_RO) against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Every scenario starts with no libraries loaded. FUNCTION LIST answers libraries in Redis's
hash-table order, so scenarios list one library at a time, and lists of several are
compared as sets. FUNCTION DUMP payloads carry the RDB version of the server that wrote
them (10 for Redis 7.0, 12 for 7.4, which resplite follows), so they are compared without
their last ten bytes, and each server restores the other's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from compat_helpers import Command, decode, run
from support.helpshape import assert_same_shape
from support.pair import Pair

Scenario = list[Command]


def lib(name: str, body: str) -> str:
    return f"#!lua name={name}\n{body}"


ECHO = lib("echo", "redis.register_function('echo', function(keys, args) "
                   "return {keys[1], args[1], #keys, #args} end)")


@pytest.fixture(autouse=True)
def no_libraries(request: pytest.FixtureRequest) -> Iterator[None]:
    if "pair" in request.fixturenames:
        pair = request.getfixturevalue("pair")
        for conn in (pair.ref, pair.ours):
            conn.call("FUNCTION", "FLUSH")
            conn.call("SCRIPT", "FLUSH")
    yield


REGISTER_ERRORS = [
    "return string.len('x')",
    "redis.call('ping')",
    "x = 1",
    "return 1",
    "redis.register_function('f')",
    "redis.register_function('f', 1)",
    "redis.register_function({}, function() end)",
    "redis.register_function()",
    "redis.register_function('a','b','c')",
    "redis.register_function({function_name='f'})",
    "redis.register_function({callback=function() end})",
    "redis.register_function({function_name='f', callback=function() end, flags={'bad'}})",
    "redis.register_function({function_name='f', callback=function() end, flags='no-writes'})",
    "redis.register_function({function_name='f', callback=function() end, flags={1}})",
    "redis.register_function({function_name='f', callback=function() end, foo=1})",
    "redis.register_function({function_name='f', callback=1})",
    "redis.register_function({function_name={}, callback=function() end})",
    "redis.register_function({function_name='f', description={}, callback=function() end})",
    "redis.register_function({[1]='x', function_name='f', callback=function() end})",
    "redis.register_function({[true]='x', function_name='f', callback=function() end})",
    "redis.register_function('bad-name', function() end)",
    "redis.register_function('', function() end)",
    "redis.register_function('f', function() end) redis.register_function('f', function() end)",
    "error('boom')",
    "error({err='MY boom'})",
    "local a = nil + 1",
    "(",
    "",
    "local t = {} for k in pairs(_G) do t[#t+1] = k end",
    "return redis.REDIS_VERSION_NUM > 0 and nil",
]


SCENARIOS: dict[str, Scenario] = {
    "FUNCTION LOAD then FCALL: keys and arguments": [
        ("FUNCTION", "LOAD", ECHO), ("FCALL", "echo", 1, "k", "a"),
        ("FCALL", "ECHO", 2, "k1", "k2"), ("FCALL", "Echo", 0, "a", "b", "c"),
        ("FCALL_RO", "echo", 0),
    ],
    "FCALL: deep and self-referencing tables stop at Lua's stack limit": [
        ("FUNCTION", "LOAD", lib("deep", "redis.register_function('deep', function(keys, args)\n"
                                 "  local t = {} for i = 1, tonumber(args[1]) do t = {t} end\n"
                                 "  return t\nend)\n"
                                 "redis.register_function('loop', function()\n"
                                 "  local t = {} t.set = {[t] = true} return t\nend)")),
        ("FCALL", "deep", 0, 1000), ("FCALL", "deep", 0, 7995), ("FCALL", "deep", 0, 7996),
        ("FCALL", "deep", 0, 100000), ("FCALL", "loop", 0), ("FCALL", "deep", 0, 1),
    ],
    "FCALL: unknown function, then bad numkeys": [
        ("FCALL", "nosuch", 0), ("FCALL", "nosuch", "x"), ("FUNCTION", "LOAD", ECHO),
        ("FCALL", "echo", "x"), ("FCALL", "echo", 2, "k"), ("FCALL", "echo", -1),
        ("FCALL", "echo", "1.0", "k"), ("FCALL", "echo"),
    ],
    "FUNCTION LOAD: library metadata checked first": [
        ("FUNCTION", "LOAD", "no shebang"), ("FUNCTION", "LOAD", "#!lua name=x8"),
        ("FUNCTION", "LOAD", "#!lua\nredis.register_function('f1', function() end)"),
        ("FUNCTION", "LOAD", lib("x name=y", "redis.register_function('f', function() end)")),
        ("FUNCTION", "LOAD", lib("x foo=y", "redis.register_function('f', function() end)")),
        ("FUNCTION", "LOAD", lib("bad-name", "redis.register_function('f', function() end)")),
        ("FUNCTION", "LOAD", "#!js name=x7\nredis.register_function('f', function() end)"),
        ("FUNCTION", "LOAD", "#!LUA name=x6\nredis.register_function('fx6', function() end)"),
        ("FUNCTION", "LOAD", "#!lua NAME=x5\nredis.register_function('fx5', function() end)"),
        ("FUNCTION", "LOAD", '#!lua name="quoted"\nredis.register_function(\'q\', function() end)'),
        ("FCALL", "fx5", 0), ("FCALL", "fx6", 0), ("FCALL", "q", 0),
        # The shebang is split as Redis splits arguments: a backslash outside quotes is an
        # ordinary character (so not a name's), escapes work inside double quotes, and a
        # NUL byte before the newline hides it, as in a C string.
        ("FUNCTION", "LOAD", lib("bad\\0format", "redis.register_function('b', function() end)")),
        ("FUNCTION", "LOAD", lib('"esc\\x41pe"', "redis.register_function('e', function() end)")),
        ("FUNCTION", "LOAD", lib("nul\0after", "redis.register_function('n', function() end)")),
        ("FUNCTION", "LOAD", lib("'open", "redis.register_function('o', function() end)")),
        ("FUNCTION", "LIST", "LIBRARYNAME", "escApe"),
    ],
    "FUNCTION LOAD: options, REPLACE and existing libraries": [
        ("FUNCTION", "LOAD"), ("FUNCTION", "LOAD", "REPLACE"), ("FUNCTION", "LOAD", "FOO", "code"),
        ("FUNCTION", "LOAD", lib("lib1", "redis.register_function('f1', function() return 1 end)")),
        ("FUNCTION", "LOAD", lib("lib1", "redis.register_function('f1', function() return 2 end)")),
        ("FCALL", "f1", 0),
        ("FUNCTION", "LOAD", "REPLACE", "REPLACE",
         lib("lib1", "redis.register_function('f1', function() return 3 end)")),
        ("FCALL", "f1", 0),
        ("FUNCTION", "LOAD", "replace",
         lib("lib1", "redis.register_function('f1', function() return 4 end)")),
        ("FCALL", "f1", 0),
        ("FUNCTION", "LOAD", "REPLACE", lib("lib1", "error('broken')")), ("FCALL", "f1", 0),
        ("FUNCTION", "LOAD", lib("LIB1", "redis.register_function('F1', function() end)")),
        ("FUNCTION", "LOAD", lib("LIB1", "redis.register_function('g1', function() end)")),
        ("FCALL", "g1", 0),
        ("FUNCTION", "LOAD", lib("other", "redis.register_function('G1', function() end)")),
    ],
    "redis.register_function: names, arguments and flags checked in Redis's order": [
        ("FUNCTION", "LOAD", lib(f"errors{i}", body)) for i, body in enumerate(REGISTER_ERRORS)
    ] + [("FUNCTION", "LIST")],
    "functions see the full globals when they run, not while loading": [
        ("FUNCTION", "LOAD", lib("g1", "redis.register_function('g', function() "
                                       "local t = {} for k in pairs(_G) do t[#t+1] = k end "
                                       "table.sort(t) return t end)")),
        ("FCALL", "g", 0),
        ("FUNCTION", "LOAD", lib("g2", "redis.register_function('r', function() "
                                       "local t = {} for k in pairs(redis) do t[#t+1] = k end "
                                       "table.sort(t) return t end)")),
        ("FCALL", "r", 0),
        ("FUNCTION", "LOAD", lib("g3", "redis.register_function('h', function() x = 1 end)")),
        ("FCALL", "h", 0),
        ("FUNCTION", "LOAD", lib("g4", "redis.register_function('h2', function() return y end)")),
        ("FCALL", "h2", 0),
        ("FUNCTION", "LOAD", lib("g5", "redis.register_function('h3', function() "
                                       "return redis.register_function end)")),
        ("FCALL", "h3", 0),
        ("FUNCTION", "LOAD", lib("g6", "redis.register_function('h4', function() "
                                       "return {type(KEYS), type(ARGV)} end)")),
        ("FCALL", "h4", 0),
        ("FUNCTION", "LOAD", lib("g7", "local n = 0 redis.register_function('count', "
                                       "function() n = n + 1 return n end)")),
        ("FCALL", "count", 0), ("FCALL", "count", 0),
        ("FUNCTION", "LOAD", lib("g8", "redis.log(redis.LOG_DEBUG, 'loading') "
                                       "redis.register_function('v', function() "
                                       "return redis.LOG_WARNING end)")),
        ("FCALL", "v", 0),
    ],
    "FCALL: errors carry the function's name and line": [
        ("FUNCTION", "LOAD", lib("e1", "redis.register_function('boom', function()\n"
                                       "  error('boom')\nend)")),
        ("FCALL", "boom", 0),
        ("FUNCTION", "LOAD", lib("e2", "redis.register_function('unknown', function() "
                                       "return redis.call('nosuch') end)")),
        ("FCALL", "unknown", 0),
        ("FUNCTION", "LOAD", lib("e3", "redis.register_function('resp3', function() "
                                       "redis.setresp(3) return {double=1.5, true} end)")),
        ("FCALL", "resp3", 0),
        ("FUNCTION", "LOAD", lib("e4", "redis.register_function('t', function(keys, args) "
                                       "return redis.call('incr', keys[1]) end)")),
        ("SET", "s", "x"), ("FCALL", "t", 1, "s"), ("FCALL", "t", 1, "n"),
    ],
    "function flags: no-writes, FCALL_RO and their refusals": [
        ("FUNCTION", "LOAD", lib("w", "redis.register_function('writes', function() "
                                      "return redis.call('set', 'x', 'y') end)")),
        ("FCALL_RO", "writes", 0), ("EXISTS", "x"), ("FCALL", "writes", 0),
        ("FUNCTION", "LOAD", lib("ro", "redis.register_function{function_name='ro', "
                                       "callback=function() return redis.call('set', 'x', 'z') "
                                       "end, flags={'no-writes'}}")),
        ("FCALL", "ro", 0), ("FCALL_RO", "ro", 0), ("GET", "x"),
        ("FUNCTION", "LOAD", lib("ro2", "redis.register_function{function_name='reads', "
                                        "callback=function() return redis.call('get', 'x') end, "
                                        "flags={'no-writes', 'allow-oom'}}")),
        ("FCALL_RO", "reads", 0), ("FCALL", "reads", 0),
    ],
    "FUNCTION LIST: one library with and without code, patterns, argument errors": [
        ("FUNCTION", "LOAD", lib("lib9", "redis.register_function{function_name='g9', "
                                         "callback=function() return 1 end, description='desc', "
                                         "flags={'no-writes', 'allow-oom', 'ALLOW-STALE', "
                                         "'no-cluster', 'allow-cross-slot-keys'}}")),
        ("FUNCTION", "LIST"), ("FUNCTION", "LIST", "WITHCODE"),
        ("FUNCTION", "LIST", "LIBRARYNAME", "lib9"), ("FUNCTION", "LIST", "LIBRARYNAME", "LIB*"),
        ("FUNCTION", "LIST", "libraryname", "nomatch"),
        ("FUNCTION", "LIST", "withcode", "libraryname", "lib?"),
        ("FUNCTION", "LIST", "LIBRARYNAME"), ("FUNCTION", "LIST", "FOO"),
        ("FUNCTION", "LIST", "WITHCODE", "WITHCODE"),
        ("FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b"),
    ],
    "FUNCTION DELETE / FLUSH / STATS / KILL with nothing running": [
        ("FUNCTION", "LOAD", ECHO), ("FUNCTION", "STATS"), ("FUNCTION", "DELETE", "nosuch"),
        ("FUNCTION", "DELETE", "ECHO"), ("FUNCTION", "DELETE", "echo"), ("FCALL", "echo", 0),
        ("FUNCTION", "DELETE"), ("FUNCTION", "STATS"), ("FUNCTION", "KILL"),
        ("FUNCTION", "LOAD", ECHO), ("FUNCTION", "FLUSH", "x"), ("FUNCTION", "FLUSH", "sync", "x"),
        ("FUNCTION", "FLUSH", "ASYNC"), ("FUNCTION", "LIST"), ("FUNCTION", "LOAD", ECHO),
        ("FUNCTION", "FLUSH", "sync"), ("FUNCTION", "STATS"),
    ],
    "FUNCTION RESTORE: bad payloads and policies": [
        ("FUNCTION", "RESTORE", "x"), ("FUNCTION", "RESTORE", "x", "y"),
        ("FUNCTION", "RESTORE", "x", "flush", "z"), ("FUNCTION", "RESTORE", "0123456789"),
        ("FUNCTION", "RESTORE", "\xf5\x02ab\x0a\x00" + "\x00" * 8), ("FUNCTION", "RESTORE"),
    ],
    "FUNCTION, SCRIPT and FCALL arity and subcommands": [
        ("FUNCTION",), ("FUNCTION", "FOO"), ("FUNCTION", "HELP", "x"), ("FCALL",), ("FCALL", "f"),
        ("FCALL_RO", "f"),
    ],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_function_scenario(pair: Pair, scenario: str) -> None:
    run(pair, *SCENARIOS[scenario])


def _libraries(reply: bytes) -> list[object]:
    value = decode(reply)
    assert isinstance(value, list)
    return sorted(value, key=repr)


def test_function_list_of_several_libraries_compared_as_a_set(pair: Pair) -> None:
    for i in range(4):
        pair.check("FUNCTION", "LOAD", lib(f"many{i}", f"redis.register_function('m{i}', "
                                                       f"function() return {i} end)"))
    ref, ours = pair.both("FUNCTION", "LIST", "WITHCODE")
    assert _libraries(ours) == _libraries(ref)
    ref, ours = pair.both("FUNCTION", "STATS")
    assert ours == ref


def test_dump_payloads_match_and_restore_across_servers(pair: Pair) -> None:
    body = "\n".join(f"redis.register_function('f{i}', function(keys, args) "
                     f"return redis.call('GET', keys[1]) .. '{i}' end)" for i in range(30))
    pair.check("FUNCTION", "LOAD", lib("big", body))
    ref, ours = (decode(p) for p in pair.both("FUNCTION", "DUMP"))
    assert isinstance(ref, bytes) and isinstance(ours, bytes)
    # Same libraries, same LZF-compressed RDB strings, same RDB version (10) and CRC.
    assert ours == ref
    run(pair, ("FUNCTION", "FLUSH"))
    assert pair.ours.call("FUNCTION", "RESTORE", ref) == b"+OK\r\n"
    assert pair.ref.call("FUNCTION", "RESTORE", ref) == b"+OK\r\n"
    run(pair, ("FCALL", "f7", 1, "k"), ("SET", "k", "v"), ("FCALL", "f29", 1, "k"),
        ("FUNCTION", "RESTORE", ref), ("FUNCTION", "RESTORE", ref, "APPEND"),
        ("FUNCTION", "RESTORE", ref, "REPLACE"), ("FUNCTION", "RESTORE", ref, "FLUSH"))
    # Thirty functions come out in each server's hash order: compared sorted.
    ref_list, ours_list = (decode(p) for p in pair.both("FUNCTION", "LIST", "WITHCODE"))
    assert isinstance(ref_list, list) and isinstance(ours_list, list)
    for entries in (ref_list, ours_list):
        for library in entries:
            slot = b"functions" if isinstance(library, dict) else 5
            library[slot] = sorted(library[slot], key=repr)
    assert ours_list == ref_list
    assert pair.ours.call("FUNCTION", "RESTORE", ours, "REPLACE") == b"+OK\r\n"
    corrupt = ref[:-1] + bytes([ref[-1] ^ 1])
    run(pair, ("FUNCTION", "RESTORE", corrupt))


def test_restore_appends_replaces_or_flushes(pair: Pair) -> None:
    pair.check("FUNCTION", "LOAD", lib("one", "redis.register_function('one', function() "
                                             "return 1 end)"))
    payload = decode(pair.ref.call("FUNCTION", "DUMP"))
    assert isinstance(payload, bytes)
    run(
        pair,
        ("FUNCTION", "RESTORE", payload),
        ("FUNCTION", "DELETE", "one"),
        ("FUNCTION", "LOAD", lib("other", "redis.register_function('one', function() end)")),
        ("FUNCTION", "RESTORE", payload), ("FUNCTION", "RESTORE", payload, "REPLACE"),
        ("FUNCTION", "RESTORE", payload, "FLUSH"), ("FCALL", "one", 0),
        ("FUNCTION", "LIST", "LIBRARYNAME", "other"),
        ("FUNCTION", "LOAD", lib("two", "redis.register_function('two', function() end)")),
        ("FUNCTION", "RESTORE", payload, "REPLACE"), ("FUNCTION", "LIST", "LIBRARYNAME", "two"),
    )


def test_dump_of_no_libraries(pair: Pair) -> None:
    # Just the RDB version (10) and the CRC-64 of those two bytes.
    run(pair, ("FUNCTION", "DUMP"))


def test_function_help_lists_the_subcommands(pair: Pair) -> None:
    ref, ours = pair.both("FUNCTION", "HELP")
    assert_same_shape(ref, ours, ours_has={
        "LOAD", "DELETE", "LIST", "STATS", "KILL", "FLUSH", "DUMP", "RESTORE", "HELP",
    })


def test_info_counts_functions_and_libraries(pair: Pair) -> None:
    pair.check("FUNCTION", "LOAD", lib("a", "redis.register_function('a1', function() end) "
                                           "redis.register_function('a2', function() end)"))
    pair.check("FUNCTION", "LOAD", ECHO)
    for conn in (pair.ref, pair.ours):
        text = decode(conn.call("INFO", "memory"))
        assert isinstance(text, bytes)
        assert b"number_of_functions:3\r\n" in text
        assert b"number_of_libraries:2\r\n" in text


def test_function_load_stops_a_library_that_runs_too_long(pair: Pair) -> None:
    # Loading has its own limit (500 ms in Redis), so a library that never returns fails.
    run(pair, ("FUNCTION", "LOAD", lib("forever", "while true do end")), ("FUNCTION", "LIST"))


def test_debug_reload_keeps_the_libraries(pair: Pair) -> None:
    # The snapshot carries the libraries; the reload empties them with the data and loads them
    # back from the file.
    run(pair, ("FUNCTION", "LOAD", ECHO), ("SET", "k", "v"), ("DEBUG", "RELOAD"),
        ("FUNCTION", "LIST", "WITHCODE"), ("FCALL", "echo", 1, "k", "a"), ("GET", "k"))
    # Without the flush, the library in the file meets the one in memory: the load fails (7.0
    # says "...RDB dump", 7.2 on adds ", check server logs.") and the library stays.
    ref, ours = pair.both("DEBUG", "RELOAD", "NOFLUSH")
    assert ref.startswith(b"-ERR Error trying to load the RDB dump")
    assert ours.startswith(b"-ERR Error trying to load the RDB dump")
    run(pair, ("FUNCTION", "LIST"), ("FLUSHALL",), ("FUNCTION", "LIST"))


def test_debug_reload_noflush_merge_replaces_what_is_there(pair: Pair) -> None:
    """MERGE: the file's keys and libraries replace those of the same name in memory
    (NOFLUSH alone refuses them); what only memory holds stays."""
    one = "#!lua name=test1\nredis.register_function('test1', function() return 'one' end)"
    two = "#!lua name=test2\nredis.register_function('test2', function() return 'two' end)"
    run(pair, ("FUNCTION", "FLUSH"), ("FUNCTION", "LOAD", one), ("SET", "x", "1"),
        ("SET", "y", "1"), ("DEBUG", "RELOAD"), ("FUNCTION", "LOAD", two),
        ("SET", "x", "2"), ("SET", "only", "memory"))
    run(pair, ("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE"), ("FCALL", "test1", 0),
        ("FCALL", "test2", 0), ("MGET", "x", "y", "only"), ("DBSIZE",))
    run(pair, ("DEBUG", "RELOAD", "NOFLUSH", "MERGE"), ("MGET", "x", "y", "only"),
        ("FUNCTION", "FLUSH"))


@pytest.mark.parametrize("flush", [("ASYNC",), ("SYNC",), ()], ids=["async", "sync", "default"])
def test_an_async_function_flush_counts_as_lazily_freed(pair: Pair, flush: tuple[str, ...]) -> None:
    """FUNCTION FLUSH ASYNC frees past 64 functions in the background: each function and
    the Lua engine count in lazyfreed_objects (SYNC, and the default with
    lazyfree-lazy-user-flush no, count nothing)."""
    pair.check("FUNCTION", "FLUSH")
    for i in range(70):
        pair.check("FUNCTION", "LOAD", f"#!lua name=l{i}\nredis.register_function('f{i}', "
                   "function() return 1 end)")
    pair.check("CONFIG", "RESETSTAT")
    pair.check("FUNCTION", "FLUSH", *flush)
    deadline = time.monotonic() + 30
    expected = "71" if flush == ("ASYNC",) else "0"
    for conn in (pair.ref, pair.ours):
        while True:
            text = conn.call("INFO", "memory").decode()
            freed = text.split("\r\nlazyfreed_objects:")[1].split("\r\n")[0]
            if freed == expected or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        assert freed == expected
    pair.check("FUNCTION", "LIST")
