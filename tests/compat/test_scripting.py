"""Lua scripts (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT) against a real Redis 7.0, byte for
byte, in RESP2 and RESP3.

Each scenario runs on freshly flushed servers with empty script caches; every reply must be
identical, errors included: the values scripts return and how they are converted, the
values ``redis.call`` hands to Lua, the read-only globals, error texts with the script's SHA1
and line, the ``redis`` helpers and the cjson, cmsgpack, bit and struct libraries. The
scenarios' SHA1s are those of their script bodies, so they are the same on both servers.

Where resplite follows Redis 7.4 and 7.0 differs, the test is marked ``redis_version("7.4")``
and asserts 7.4's answer: the wording of two errors, numbers given to redis.call, TIME frozen
inside a script, blocking commands that run without blocking, and the 500-script limit on
what EVAL caches. ``redis.REDIS_VERSION`` is the version resplite reports in INFO.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from compat_helpers import Command, decode, ref_version, run
from support import normalize
from support.helpshape import assert_same_shape
from support.pair import Pair
from support.raw import RawClient
from support.servers import ServerPairFactory, paused

import resplite
from resplite.algorithms.keyslot import key_slot
from resplite.testing.embedded import ServerHandle

Scenario = list[Command]
# (the connection running a script, another connection) on Redis, then on resplite
BusyPairs = list[tuple[RawClient, RawClient]]


@pytest.fixture(autouse=True)
def empty_script_caches(request: pytest.FixtureRequest) -> Iterator[None]:
    if "pair" in request.fixturenames:
        pair = request.getfixturevalue("pair")
        for conn in (pair.ref, pair.ours):
            conn.call("SCRIPT", "FLUSH")
            conn.call("FUNCTION", "FLUSH")
    yield


SCENARIOS: dict[str, Scenario] = {
    'EVAL: a large table of strings, integers, empty strings and nested tables': [
        ("EVAL", "local t = {} for i = 1, 30000 do local m = i % 5 "
                 "if m == 0 then t[i] = 'v' .. i elseif m == 1 then t[i] = i * 1000003 "
                 "elseif m == 2 then t[i] = '' elseif m == 3 then t[i] = {i, 'x', {}} "
                 "else t[i] = -i - 0.5 end end return t", 0),
        ("EVAL", "redis.setresp(3) local t = {} for i = 1, 5000 do "
                 "t[i] = {map = {['k' .. i] = i}, set = {['s' .. i] = true}} end "
                 "t[5001] = true t[5002] = false t[5003] = {double = 1.5} return t", 0),
        ("EVAL", "local t = {} for i = 1, 20000 do t[i] = {ok = 'fine'} end "
                 "t[20001] = {err = 'bad one'} t[20002] = 2^53 return t", 0),
    ],
    # An array's strings, numbers and booleans are written in slices of 16,384 elements or
    # about 1 MB; tables among them, holes and every kind of number at and across the seams.
    'EVAL: arrays of plain values, across the slices they are written in': [
        ("EVAL", "return {0/0, -(0/0), 1e300, -1e300, 2^63, -2^63, 2^63 - 1024, -2^63 - 4096, "
                 "-0.5, -0.0, 0.5, 0.99999, -1.5, 1/0, -1/0, 9007199254740993, 4.9e-324, "
                 "-4.9e-324, 2^31, -2^31 - 1}", 0),
        ("EVAL", "return {'a' .. string.char(0) .. 'b', 'x' .. string.char(13, 10) .. 'y', '', "
                 "true, false, 7, string.rep('z', 70000)}", 0),
        ("EVAL", "redis.setresp(3) return {true, false, 1, 'x', {true, false, {false}}}", 0),
        ("EVAL", "return {true, false, {true, {false}}}", 0),
        ("EVAL", "local t = {} for i = 1, 40000 do t[i] = i * 3 end t[16384] = {1, 'a'} "
                 "t[16385] = {ok = 'x'} t[32768] = false t[32769] = {err = 'e'} "
                 "t[32770] = {double = -0.5} t[32771] = {} return t", 0),
        ("EVAL", "redis.setresp(3) local t = {} for i = 1, 20000 do t[i] = 0.5 - i end "
                 "t[16383] = {double = 0/0} t[16384] = {map = {a = true}} "
                 "t[16385] = {set = {b = true}} t[16386] = {big_number = '123456789012345678901'}"
                 " t[16387] = true return t", 0),
        ("EVAL", "local t = {} for i = 1, 20000 do t[i] = string.rep('x', i % 7) end "
                 "t[16390] = nil return t", 0),
        ("EVAL", "local t = {} for i = 1, 16384 do t[i] = i end return t", 0),
        ("EVAL", "local t = {} for i = 1, 16385 do t[i] = 'v' .. i end return t", 0),
        ("EVAL", "local s = string.rep('y', 300000) local t = {} for i = 1, 12 do t[i] = s end "
                 "t[13] = 1 return t", 0),
        ("EVAL", "local t = {1, 2, 3} t[5] = 5 return t", 0),
        ("EVAL", "return {{1, 'a', {true, {false, {0/0, {}}}}}, {}, 'end'}", 0),
        ("EVAL", "return {1, coroutine.create(function() end), 3}", 0),
    ],
    'EVAL: strings, integers and truncated numbers': [
        ("EVAL", "return 3.99", 0),
        ("EVAL", "return -0.5", 0),
        ("EVAL", "return 2^63", 0),
        ("EVAL", "return -2^63", 0),
        ("EVAL", "return 2^62", 0),
        ("EVAL", "return 1/0", 0),
        ("EVAL", "return {1/0, -1/0}", 0),
        ("EVAL", "return -9223372036854775808", 0),
        ("EVAL", "return 9007199254740993", 0),
        ("EVAL", "return 1e15", 0),
        ("EVAL", "return '' ", 0),
        ("EVAL", "return string.char(0, 1, 2)", 0),
        ("EVAL", "return tostring(1e100)", 0),
        ("EVAL", "return 2^53 + 1", 0),
        ("EVAL", "return true", 0),
        ("EVAL", "return false", 0),
        ("EVAL", "return nil", 0),
        ("EVAL", "return", 0),
        ("EVAL", "return 1, 2", 0),
    ],
    'EVAL: tables become arrays up to the first nil; nested tables; holes': [
        ("EVAL", "return {1, 2, nil, 4}", 0),
        ("EVAL", "return {1, {err='bad'}, 3}", 0),
        ("EVAL", "return {1.9, -1.9, true, false, 'x'}", 0),
        ("EVAL", "return {function() end, 1}", 0),
        ("EVAL", "return function() end", 0),
        ("EVAL", "return coroutine.create(function() end)", 0),
        ("EVAL", "return {1, 2, 3, [5] = 5}", 0),
        ("EVAL", "return {[2] = 2}", 0),
        ("EVAL", "return {a = 1}", 0),
        ('EVAL',
         'return setmetatable({}, {__index = function(t, i) if i < 3 then return i end end})', 0),
    ],
    'EVAL: {err=...} and {ok=...} replies, CR and LF flattened': [
        ("EVAL", "return {err=''}", 0),
        ("EVAL", "return {err=1}", 0),
        ("EVAL", "return {ok=1}", 0),
        ("EVAL", "return redis.status_reply('Fine' .. string.char(13,10) .. 'X')", 0),
        ("EVAL", "return {err='x' .. string.char(13,10) .. 'y'}", 0),
        ("EVAL", "return {err='CODE only'}", 0),
        ("EVAL", "return {ok='a' .. string.char(13) .. 'b'}", 0),
        ("EVAL", "return {err='E1', ok='S'}", 0),
        ("EVAL", "return {ok='S', double=1}", 0),
        ("EVAL", "return redis.status_reply('')", 0),
        ("EVAL", "return {ok=''}", 0),
        ("EVAL", "return {err='ERR'}", 0),
        ("EVAL", "return {err='-ERR x'}", 0),
    ],
    'EVAL: double, map, set, big_number and verbatim_string tables': [
        ("EVAL", "return {double=1.5}", 0),
        ("EVAL", "return {double='1.5'}", 0),
        ("EVAL", "return {map={a=1}}", 0),
        ("EVAL", "return {set={a=true}}", 0),
        ("EVAL", "return {big_number='123'}", 0),
        ("EVAL", "return {verbatim_string={format='txt', string='hi'}}", 0),
        ("EVAL", "return {big_number='1' .. string.char(10) .. '2'}", 0),
        ("EVAL", "return {map={[1]=2}}", 0),
        ("EVAL", "return {map={[{1}]={2}}}", 0),
        ("EVAL", "return {set={}}", 0),
        ("EVAL", "return {double=1.5, map={a=1}}", 0),
        ("EVAL", "return {verbatim_string={format='txtx', string='hi'}}", 0),
        ("EVAL", "return {verbatim_string={format=1, string='hi'}}", 0),
        ("EVAL", "return {verbatim_string={string='hi'}}", 0),
        ("EVAL", "return {double=1/0}", 0),
        ("EVAL", "return {double=-1/0}", 0),
        ("EVAL", "return {double=0.1}", 0),
        ("EVAL", "return {double=1e300}", 0),
        ("EVAL", "return {double=3}", 0),
        ("EVAL", "return {double=-0.0}", 0),
        ('EVAL',
         "return {1, {ok='a'}, {err='b'}, {double=2.5}, {big_number='9'}, {map={x=1}}, "
         '{set={y=true}}}', 0),
        ('EVAL',
         "redis.setresp(3) return {1, {double=2.5}, {big_number='9'}, {map={x=1}}, "
         '{set={y=true}}, true, false}', 0),
        ("EVAL", "return {verbatim_string={format='md', string='x'}}", 0),
        ("EVAL", "return {verbatim_string={format='markdown', string='x'}}", 0),
        ("EVAL", "return {map={}}", 0),
        ("EVAL", "return {set={a=true, b=false}}", 0),
        ("EVAL", "return {double='x'}", 0),
        ("EVAL", "return {map='x'}", 0),
        ("EVAL", "return {double=1/0}", 0),
        ("EVAL", "return {double=-1e-300}", 0),
        ("EVAL", "return {double=123456789012345678}", 0),
    ],
    'EVAL: KEYS and ARGV, numkeys checked before anything else': [
        ('EVAL',
         'return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}', 2, 'k1', 'k2', 'a1', 'a2'),
        ("EVAL", "return 1", -1),
        ("EVAL", "return 1", 1),
        ("EVAL", "return 1", "x"),
        ("EVAL", "return 1", "1.0"),
        ("EVAL", "return 1", 9223372036854775808),
        ("EVAL", "KEYS[1] = 'changed' return KEYS[1]", 1, "k"),
        ("EVAL", "return #KEYS + #ARGV", 2, "a", "b", "c"),
    ],
    'EVALSHA and SCRIPT LOAD / EXISTS / FLUSH: the script cache by SHA1': [
        ("EVALSHA", "abc", 0),
        ("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0),
        ("EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", 0),
        ("EVAL", "return 1", 0),
        ("EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", 0),
        ("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "x"),
        ("EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "x"),
        ('SCRIPT', 'EXISTS', 'E0E1F9FABFC9D4800C877A703B823AC0578FF8DB',
         'e0e1f9fabfc9d4800c877a703b823ac0578ff8db', 'x'),
        ("SCRIPT", "LOAD", "return 2"),
        ("SCRIPT", "LOAD"),
        ("SCRIPT", "LOAD", "a", "b"),
        ("SCRIPT", "FLUSH", "x"),
        ("SCRIPT", "FLUSH", "SYNC", "x"),
        ("SCRIPT", "FLUSH", "async"),
        ("SCRIPT", "KILL"),
        ("SCRIPT", "KILL", "x"),
        ("SCRIPT", "EXISTS"),
        ("SCRIPT", "HELP", "x"),
        ("SCRIPT", "FOO"),
        ("SCRIPT",),
    ],
    'SCRIPT LOAD: compile errors and shebang lines': [
        ("SCRIPT", "LOAD", "return ("),
        ("SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn 2"),
        ("SCRIPT", "LOAD", "#!lua flags=bad\nreturn 2"),
        ("SCRIPT", "LOAD", "#!lua\nreturn 2"),
        ("SCRIPT", "LOAD", "#!luax\nreturn 2"),
        ("SCRIPT", "LOAD", "#!lua"),
        ("SCRIPT", "LOAD", "#!lua name=x\nreturn 2"),
        ("SCRIPT", "LOAD", "#!lua flags=\nreturn 2"),
        ("SCRIPT", "LOAD", "#!lua flags=no-writes,,allow-oom\nreturn 2"),
        ("SCRIPT", "LOAD", "#! lua\nreturn 2"),
        ("SCRIPT", "LOAD", "#!\nreturn 2"),
        ("SCRIPT", "LOAD", "#!lua \"unbalanced\nreturn 2"),
    ],
    'globals are read-only; undefined globals are errors': [
        ("EVAL", "return {pcall(function() x = 1 end)}", 0),
        ("EVAL", "return {pcall(function() return x end)}", 0),
        ("EVAL", "return {pcall(function() rawset(_G, 'x', 1) end)}", 0),
        ("EVAL", "return {pcall(function() setmetatable(_G, nil) end)}", 0),
        ("EVAL", "return {pcall(function() table.insert(string, 1) end)}", 0),
        ("EVAL", "return {pcall(function() redis.call = 1 end)}", 0),
        ("EVAL", "return rawget(_G, 'redis') ~= nil", 0),
        ("EVAL", "local n = 0 for k, v in pairs(_G) do n = n + 1 end return n", 0),
        ("EVAL", "local t = {} for k, v in pairs(_G) do t[#t+1] = k end table.sort(t) return t", 0),
        ('EVAL',
         'local t = {} for k, v in pairs(redis) do t[#t+1] = k end table.sort(t) return t', 0),
        ("EVAL", "return type(getmetatable(_G))", 0),
        ("EVAL", "return type(getmetatable(_G).__index)", 0),
        ("EVAL", "return {pcall(function() math.pi = 3 end)}", 0),
        ("EVAL", "return {pcall(function() cjson.encode = nil end)}", 0),
        ("EVAL", "return {pcall(function() KEYS = {} end)}", 0),
        ("EVAL", "KEYS[1] = 'changed' return KEYS[1]", 1, "k"),
        ("EVAL", "return {pcall(function() _G.foo = 1 end)}", 0),
        ("EVAL", "return {pcall(function() return _G.foo end)}", 0),
        ("EVAL", "return {pcall(rawset, redis, 'x', 1)}", 0),
        ("EVAL", "return {pcall(setmetatable, string, {})}", 0),
        ("EVAL", "return type(getmetatable('').__index)", 0),
        ("EVAL", "return ('abc'):upper()", 0),
    ],
    'the string metatable is read-only too': [
        ("EVAL", "getmetatable('').__index = 1", 0),
        ("EVAL", "getmetatable('').foo = 1 return 1", 0),
        ("EVAL", "return getmetatable('').foo", 0),
    ],
    'the base library: what exists, what Redis removed': [
        ('EVAL',
         'return {type(getfenv), type(setfenv), type(newproxy), type(print), type(dofile), '
         'type(coroutine.create), type(gcinfo)}', 0),
        ("EVAL", "return coroutine.running()", 0),
        ("EVAL", "return tostring(print)", 0),
        ("EVAL", "return _VERSION", 0),
        ("EVAL", "return collectgarbage('count') > 0", 0),
        ("EVAL", "return type(gcinfo())", 0),
        ("EVAL", "return string.dump ~= nil", 0),
        ("EVAL", "return type(newproxy)", 0),
        ("EVAL", "return _VERSION", 0),
        ("EVAL", "return rawequal(_G, _G)", 0),
        ("EVAL", "return _G == _G._G", 0),
        ("EVAL", "return _G.redis == redis", 0),
    ],
    "loadstring and load: text only, chunks see the script's globals": [
        ("EVAL", "return select(2, loadstring(string.dump(function() return 1 end)))", 0),
        ("EVAL", "local f = loadstring('x = 1') return {pcall(f)}", 0),
        ('EVAL',
         "local f = loadstring('return 1 +') return {f, select(2, loadstring('return 1 +'))}", 0),
        ("EVAL", "return {loadstring('return ...', 'chunk')(5)}", 0),
        ('EVAL',
         "local parts = {'return ', '7'} local i = 0 return load(function() i = i + 1 return "
         'parts[i] end)()', 0),
        ("EVAL", "return load('x')", 0),
        ("EVAL", "return select(2, loadstring('error(\"in chunk\")', '=mychunk'))", 0),
        ("EVAL", "return {pcall(loadstring('error(\"in chunk\")', '=mychunk'))}", 0),
        ("EVAL", "return loadstring(123)()", 0),
    ],
    'coroutines and metatables in scripts': [
        ('EVAL',
         'local co = coroutine.create(function(a) local b = coroutine.yield(a + 1) return b * 2 '
         'end) local _, x = coroutine.resume(co, 1) local _, y = coroutine.resume(co, 10) '
         'return {x, y, coroutine.status(co)}', 0),
        ("EVAL", "local co = coroutine.wrap(function() error('in co') end) return {pcall(co)}", 0),
        ("EVAL", "return coroutine.create(1)", 0),
        ("EVAL", "return coroutine.wrap()", 0),
        ("EVAL", "return {pcall(coroutine.create, type)}", 0),
        ("EVAL", "return {pcall(coroutine.wrap, 'f')}", 0),
        ("EVAL", "return coroutine.wrap(function() error('two up', 2) end)()", 0),
        ("EVAL", "return coroutine.wrap(function(...) return select('#', ...), ... end)(1, 2)",
         0),
        ("EVAL", "return {coroutine.resume(coroutine.create(function() error({err='E x'}) end))}",
         0),
        ("EVAL", "local co = coroutine.wrap(function() coroutine.yield(coroutine.running()) end)"
                 " return type(co())", 0),
        ("EVAL", "local co = coroutine.create(function() end) coroutine.resume(co) "
                 "return {coroutine.resume(co)}", 0),
        ('EVAL',
         "local t = setmetatable({}, {__index = function(t, k) return k .. '!' end}) return "
         't.foo', 0),
        ("EVAL", "local t = setmetatable({}, {__metatable = 'locked'}) return getmetatable(t)", 0),
    ],
    'pairs over the read-only library tables': [
        ("EVAL", "return tostring(getmetatable(string))", 0),
        ("EVAL", "return rawget(string, 'len') == string.len", 0),
        ("EVAL", "local n = 0 for k in pairs(string) do n = n + 1 end return n", 0),
        ("EVAL", "local n = 0 for k in pairs(math) do n = n + 1 end return n", 0),
        ("EVAL", "local n = 0 for k in pairs(table) do n = n + 1 end return n", 0),
        ("EVAL", "local n = 0 for k in pairs(coroutine) do n = n + 1 end return n", 0),
        ("EVAL", "local n = 0 for k in next, redis do n = n + 1 end return n", 0),
        ('EVAL',
         'local t = {} table.foreach(bit, function(k) t[#t+1] = k end) table.sort(t) return t', 0),
        ('EVAL',
         'local t = {} for k in pairs(struct) do t[#t+1] = k end table.sort(t) return t', 0),
        ('EVAL',
         'local t = {} for k in pairs(cmsgpack) do t[#t+1] = k end table.sort(t) return t', 0),
        ("EVAL", "local t = {} for k in pairs(cjson) do t[#t+1] = k end table.sort(t) return t", 0),
        ("EVAL", "local t = {} for k in pairs(math) do t[#t+1] = k end table.sort(t) return t", 0),
        ('EVAL',
         'local t = {} for k in pairs(string) do t[#t+1] = k end table.sort(t) return t', 0),
        ("EVAL", "local t = {} for k in pairs(table) do t[#t+1] = k end table.sort(t) return t", 0),
    ],
    'errors raised by scripts: messages, script name and line': [
        ("EVAL", "error('x')", 0),
        ("EVAL", "error({err='MY code'})", 0),
        ("EVAL", "error({err='MY code'}, 0)", 0),
        ("EVAL", "error()", 0),
        ("EVAL", "error(nil)", 0),
        ("EVAL", "error(12)", 0),
        ("EVAL", "error('x', 0)", 0),
        ("EVAL", "return string.rep()", 0),
        ("EVAL", "local function f() error('in f') end f()", 0),
        ("EVAL", "local function f() return redis.call('nosuch') end return f()", 0),
        ("EVAL", "return redis.call('nosuch')", 0),
        ("EVAL", "local x = nil + 1", 0),
        ("EVAL", "local t = nil return t.x", 0),
        ("EVAL", "return #nil", 0),
        ("EVAL", "return ('x'):rep(-1)", 0),
        ("EVAL", "local function a() error('deep') end local function b() a() end b()", 0),
        ("EVAL", "\n\nerror('line three')", 0),
        ("EVAL", "local x = 1\nlocal y = 2\nreturn redis.call('nosuch')", 0),
        ("EVAL", "local function f() return redis.call('nosuch') end\nreturn f()", 0),
        ("EVAL", "return pcall(function() return redis.call('nosuch') end)", 0),
        ("EVAL", "error('x' .. string.char(10) .. 'y')", 0),
    ],
    "Redis's pcall hands back an error table's err string": [
        ("EVAL", "return {pcall(error)}", 0),
        ("EVAL", "return {pcall(error, {err='x'})}", 0),
        ("EVAL", "return {pcall(error, {err=5})}", 0),
        ("EVAL", "return {pcall(error, {foo=1})}", 0),
        ("EVAL", "local ok, e = pcall(error, {foo=1}) return type(e)", 0),
        ('EVAL',
         "return {xpcall(function() error('x') end, function(e) return 'handled: ' .. e end)}", 0),
        ("EVAL", "return {pcall(redis.call, 'nosuch')}", 0),
        ("EVAL", "return {pcall(redis.call, 'incr', 'notnum')}", 0),
        ('EVAL',
         "redis.call('set', 'notnum', 'x') return {pcall(redis.call, 'incr', 'notnum')}", 0),
    ],
    'argument errors of the base functions the sandbox replaces': [
        ("EVAL", "return {pcall(rawget)}", 0),
        ("EVAL", "return {pcall(next, {}, 'nokey')}", 0),
        ("EVAL", "return type(next(_G))", 0),
        ("EVAL", "return {pcall(unpack, {}, 1, 1e8)}", 0),
        ("EVAL", "return {pcall(tostring)}", 0),
        ("EVAL", "return {pcall(ipairs)}", 0),
        ("EVAL", "return {pcall(setmetatable, 1, {})}", 0),
        ("EVAL", "return {pcall(getmetatable)}", 0),
        ("EVAL", "return {pcall(string.format, '%d', 'x')}", 0),
        ("EVAL", "return {pcall(rawset, {}, 1)}", 0),
        ("EVAL", "return {pcall(next)}", 0),
        ("EVAL", "return {pcall(pairs)}", 0),
        ("EVAL", "return {pcall(setmetatable, {}, 1)}", 0),
        ("EVAL", "return {pcall(setmetatable, setmetatable({}, {__metatable=1}), {})}", 0),
        ("EVAL", "return {pcall(table.insert)}", 0),
        ("EVAL", "return {pcall(table.insert, {}, 1, 2, 3)}", 0),
        ("EVAL", "return {pcall(table.foreach, {})}", 0),
        ("EVAL", "return {pcall(loadstring)}", 0),
        ("EVAL", "return {pcall(load)}", 0),
        ("EVAL", "return rawget()", 0),
        ("EVAL", "return setmetatable(1)", 0),
        ("EVAL", "local t = {1} table.insert(t, 2) table.insert(t, 1, 0) return t", 0),
    ],
    'redis.call: argument checks': [
        ("EVAL", "return redis.call('get')", 0),
        ("EVAL", "return redis.call()", 0),
        ("EVAL", "return redis.call({})", 0),
        ("EVAL", "return redis.call('get', {})", 0),
        ("EVAL", "return redis.call('get', nil)", 0),
        ("EVAL", "return redis.call('get', 'a', true)", 0),
        ("EVAL", "return redis.pcall()", 0),
        ("EVAL", "return redis.pcall('get', {})", 0),
        ("EVAL", "return redis.call('config')", 0),
        ("EVAL", "return redis.call('config', 'foo')", 0),
    ],
    'redis.call: commands scripts may not run': [
        ("EVAL", "return redis.call('eval', 'return 1', 0)", 0),
        ("EVAL", "return redis.call('multi')", 0),
        ("EVAL", "return redis.call('watch', 'x')", 0),
        ("EVAL", "return redis.call('exec')", 0),
        ("EVAL", "return redis.call('script', 'load', 'return 1')", 0),
        ("EVAL", "return redis.call('function', 'list')", 0),
        ("EVAL", "return redis.call('fcall', 'x', 0)", 0),
        ("EVAL", "return redis.call('evalsha', 'x', 0)", 0),
        ("EVAL", "return redis.call('shutdown')", 0),
        ("EVAL", "return redis.call('hello')", 0),
        ("EVAL", "return redis.call('auth', 'x')", 0),
        ("EVAL", "return redis.call('quit')", 0),
        ("EVAL", "return redis.call('reset')", 0),
        ("EVAL", "return redis.call('flushall')", 0),
    ],
    'redis.call: replies converted to Lua and back': [
        ("EVAL", "return redis.call('ping', 'hello')", 0),
        ("EVAL", "return redis.call('echo', 'x')", 0),
        ("EVAL", "return redis.call('exists', 'a', 'b', 'db0key')", 0),
        ("EVAL", "return redis.call('type', 'db0key')", 0),
        ("EVAL", "return redis.call('object', 'encoding', 'db0key')", 0),
        ("EVAL", "return redis.call('debug', 'sleep', 0)", 0),
        ("EVAL", "return redis.call('command', 'count') > 0", 0),
        ("EVAL", "return redis.call('dbsize')", 0),
        ("EVAL", "return redis.call('info', 'server') ~= nil", 0),
        ("EVAL", "return redis.call('keys', '*')", 0),
    ],
    "redis.call: SELECT inside a script does not change the caller's database": [
        ("EVAL", "return redis.call('select', 1)", 0),
        ("SET", "db0key", "zero"),
        ('EVAL',
         "redis.call('select', 9) redis.call('set', 'db9key', 'nine') return redis.call('get', "
         "'db0key')", 0),
        ("GET", "db9key"),
        ("GET", "db0key"),
        ("SELECT", "9"),
        ("GET", "db9key"),
        ("SELECT", "0"),
    ],
    'redis.error_reply / status_reply': [
        ("EVAL", "return redis.error_reply('My Error')", 0),
        ("EVAL", "return redis.error_reply('-My Error')", 0),
        ("EVAL", "return redis.error_reply('My')", 0),
        ("EVAL", "return redis.error_reply('')", 0),
        ("EVAL", "return redis.error_reply(1)", 0),
        ("EVAL", "return redis.error_reply()", 0),
        ("EVAL", "return redis.status_reply('Fine\r\nX')", 0),
        ("EVAL", "return redis.status_reply(1)", 0),
        ("EVAL", "return redis.error_reply('CODE line1' .. string.char(13, 10) .. 'line2')", 0),
        ("EVAL", "return redis.error_reply('CODE x' .. string.char(13,10))", 0),
        ("EVAL", "return redis.error_reply(string.char(13,10) .. 'x')", 0),
        ("EVAL", "local t = redis.error_reply('MY x') return {t.err, type(t)}", 0),
        ("EVAL", "local t = redis.status_reply('fine') return {t.ok}", 0),
    ],
    'redis.sha1hex, log, setresp, set_repl, acl_check_cmd and the constants': [
        ("EVAL", "return redis.sha1hex('')", 0),
        ("EVAL", "return redis.sha1hex()", 0),
        ("EVAL", "return redis.sha1hex(1)", 0),
        ("EVAL", "return redis.sha1hex({})", 0),
        ('EVAL',
         'return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, '
         'redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, '
         'redis.REPL_ALL}', 0),
        ("EVAL", "return redis.replicate_commands()", 0),
        ("EVAL", "return redis.set_repl(redis.REPL_ALL)", 0),
        ("EVAL", "return redis.set_repl(9)", 0),
        ("EVAL", "return redis.log(redis.LOG_WARNING, 'hi')", 0),
        ("EVAL", "return redis.log()", 0),
        ("EVAL", "return redis.log('x', 'y')", 0),
        ("EVAL", "return redis.setresp(4)", 0),
        ("EVAL", "return redis.setresp()", 0),
        ("EVAL", "return redis.acl_check_cmd('get', 'x')", 0),
        ("EVAL", "return redis.acl_check_cmd('nosuch')", 0),
        ("EVAL", "return redis.acl_check_cmd()", 0),
        ("EVAL", "return redis.breakpoint()", 0),
        ("EVAL", "return redis.debug('x')", 0),
        ("EVAL", "return {pcall(redis.sha1hex)}", 0),
        ("EVAL", "return {pcall(redis.setresp, 4)}", 0),
        ("EVAL", "return {pcall(redis.log)}", 0),
        ("EVAL", "return redis.log(redis.LOG_WARNING, {}, 'x', 2)", 0),
        ("EVAL", "return redis.acl_check_cmd('set', 'a', 'b')", 0),
        ("EVAL", "return redis.acl_check_cmd('config', 'get', 'x')", 0),
        ("EVAL", "return redis.acl_check_cmd('config', 'nosub')", 0),
        ("EVAL", "return redis.acl_check_cmd({})", 0),
        ("EVAL", "return {pcall(redis.acl_check_cmd)}", 0),
        # The command's arity is checked (a container named alone is found, then refused).
        ("EVAL", "return redis.acl_check_cmd('eval', 'script')", 0),
        ("EVAL", "return redis.acl_check_cmd('get')", 0),
        ("EVAL", "return redis.acl_check_cmd('config')", 0),
        ("EVAL", "return redis.acl_check_cmd('config', 'get')", 0),
        ("EVAL", "return redis.acl_check_cmd('ping', 'a', 'b')", 0),
    ],
    "math.random: Redis's generator, the same sequence after randomseed": [
        ("EVAL", "return math.random()", 0),
        ("EVAL", "return {math.random(10), math.random(10), math.random(5, 100)}", 0),
        ("EVAL", "math.randomseed(7) return {math.random(1000), math.random(1000)}", 0),
        ("EVAL", "return math.random(0)", 0),
        ("EVAL", "return math.random(1,2,3)", 0),
        ("EVAL", "return {pcall(math.random, 1, 2, 3)}", 0),
        ("EVAL", "return {pcall(math.random, 0)}", 0),
        ("EVAL", "return {pcall(math.random, 'x')}", 0),
        ("EVAL", "return {pcall(math.randomseed)}", 0),
        ('EVAL',
         'math.randomseed(42) return {math.random(100), math.random(100), math.random(5, 10), '
         'math.floor(math.random() * 1000)}', 0),
    ],
    'string, table and math library functions': [
        ("EVAL", "return tostring(0/0)", 0),
        ("EVAL", "return tostring(-0.0)", 0),
        ("EVAL", "return tonumber('0x10')", 0),
        ("EVAL", "return tonumber('  12  ')", 0),
        ("EVAL", "return tonumber('1e')", 0),
        ("EVAL", "return string.format('%5.2f|%d|%s|%q', 3.14159, 42, 'x', 'a\"b')", 0),
        ("EVAL", "return {string.find('hello world', 'o w')}", 0),
        ("EVAL", "return {string.gsub('hello', 'l', 'L')}", 0),
        ("EVAL", "return table.concat({1, 2, 3}, ',')", 0),
        ("EVAL", "local t = {3, 1, 2} table.sort(t) return t", 0),
        ('EVAL',
         'return {math.floor(3.7), math.max(1, 5, 3), math.fmod(7, 3), math.huge == 1/0}', 0),
        ("EVAL", "return {unpack({1, 2, 3})}", 0),
        ("EVAL", "return select('#', 1, nil, 3)", 0),
        ("EVAL", "return {select(2, 'a', 'b', 'c')}", 0),
    ],
    "redis.call: replies as the script's protocol sees them (RESP2, or RESP3 after setresp(3))": [
        ("HSET", "h", "a", "1", "b", "2"),
        ("SET", "s", "str"),
        ('EVAL',
         "redis.setresp(3) local r = redis.call('hgetall', 'h') return {type(r), r.map and "
         'r.map.a, r.map and r.map.b}', 0),
        ("EVAL", "redis.setresp(3) return redis.call('hgetall', 'h')", 0),
        ("EVAL", "redis.setresp(3) return redis.call('get', 'nokey')", 0),
        ("EVAL", "redis.setresp(3) return type(redis.call('get', 'nokey'))", 0),
        ("EVAL", "return type(redis.call('get', 'nokey'))", 0),
        ("EVAL", "return redis.call('get', 'nokey')", 0),
        ("EVAL", "redis.setresp(3) return redis.call('incrbyfloat', 'f', '1.5')", 0),
        ('EVAL',
         "redis.setresp(3) local r = redis.call('incrbyfloat', 'f2', '1.5') return type(r)", 0),
        ("EVAL", "return redis.call('ping')", 0),
        ("EVAL", "local r = redis.call('ping') return {type(r), r.ok}", 0),
        ("EVAL", "return redis.call('set', 'x', 'y')", 0),
        ("EVAL", "return redis.pcall('set', 'x')", 0),
        ('EVAL',
         "local r = redis.pcall('nosuch') "
         "return {r.err, tostring(r.ignore_error_stats_update)}", 0),
        ("EVAL", "local r = redis.pcall('nosuch') return r", 0),
        ("EVAL", "return redis.call('hgetall', 'h')", 0),
        ("EVAL", "return redis.call('exists', 'h')", 0),
        ("EVAL", "return redis.call('xadd', 'st', '1-1', 'a', 'b')", 0),
        ("EVAL", "return redis.call('xrange', 'st', '-', '+')", 0),
        ("EVAL", "return redis.call('xread', 'streams', 'nost', '0')", 0),
        ("EVAL", "return type(redis.call('xread', 'streams', 'nost', '0'))", 0),
        ("EVAL", "redis.setresp(3) return redis.call('xread', 'streams', 'nost', '0')", 0),
        ("EVAL", "redis.setresp(3) return type(redis.call('xread', 'streams', 'nost', '0'))", 0),
        ("EVAL", "return redis.call('config', 'get', 'maxmemory')", 0),
        ("EVAL", "redis.setresp(3) return redis.call('config', 'get', 'maxmemory')", 0),
        ("EVAL", "redis.setresp(3) return redis.call('hello')", 0),
        ("EVAL", "return redis.call('client', 'info')", 0),
        ('EVAL',
         "redis.setresp(3) local r = redis.call('client', 'info') return "
         'r.verbatim_string.format', 0),
        ("EVAL", "return true", 0),
        ("EVAL", "redis.setresp(3) return true", 0),
        ("EVAL", "redis.setresp(3) return false", 0),
        ("EVAL", "redis.setresp(3) return nil", 0),
        ("EVAL", "return {map={a=1}}", 0),
        ("EVAL", "return {set={a=true}}", 0),
        ("EVAL", "return {double=1.5}", 0),
        ("EVAL", "return {double=0/0}", 0),
        ("EVAL", "return {big_number='123'}", 0),
        ("EVAL", "return {verbatim_string={format='txt', string='hi'}}", 0),
        ("EVAL", "return {true, false}", 0),
        ("EVAL", "redis.setresp(3) return {true, false}", 0),
        ("EVAL", "redis.setresp(3) return redis.call('exists', 'h')", 0),
        # (XINFO STREAM's whole map has newer fields than 7.0's: two of them are compared)
        ("EVAL", "redis.setresp(3) local r = redis.call('xinfo', 'stream', 'st') "
                 "return {r.map['length'], r.map['last-entry'], r.map['groups']}", 0),
        ("EVAL", "redis.setresp(3) return redis.call('object', 'freq', 'h')", 0),
        ("EVAL", "return redis.call('time')[1] ~= nil", 0),
        ("EVAL", "return redis.call('incr', 's')", 0),
        ("EVAL", "return redis.call('incr', 'h')", 0),
        ("EVAL", "return redis.call('set', 'k', 3.14)", 0),
        ("EVAL", "return redis.call('set', 'k', 1e20)", 0),
        ("EVAL", "return redis.call('set', 'k', 100)", 0),
        ("EVAL", "return redis.call('set', 'k', 0.1)", 0),
        ("EVAL", "return redis.call('set', 'k', -0.0)", 0),
        ("EVAL", "return redis.call('set', 'k', 1/0)", 0),
    ],
    # Redis converts a returned table in C, asking Lua for stack room before every value:
    # past 7995 nested arrays (fewer maps or sets, which hold more of the stack) the value is
    # the error "reached lua stack limit" and the rest of the reply goes on.
    'deep and self-referencing tables': [
        ("EVAL", "local t = 1 for i = 1, 1000 do t = {t} end return t", 0),
        ("EVAL", "local t = 'x' for i = 1, 7994 do t = {t} end return t", 0),
        ("EVAL", "local t = 'x' for i = 1, 7995 do t = {t} end return t", 0),
        ("EVAL", "local t = {} for i = 1, 100000 do t = {t} end return t", 0),
        ("EVAL", "local t = {} t[1] = t return t", 0),
        ("EVAL", "local t = {} t[1] = 1 t[2] = t t[3] = 'after' return t", 0),
        ("EVAL", "local t = {} t.map = t return t", 0),
        ("EVAL", "local t = {} t.map = {[t] = 1} return t", 0),
        ("EVAL", "local t = {} t.map = {[{double = 1.5}] = t} return t", 0),
        ("EVAL", "local t = {} t.set = {[t] = true} return t", 0),
        ("EVAL", "local t = {} t.err = t return t", 0),
        ("EVAL", "local t = {} t.ok = t t[1] = 'one' return t", 0),
        ("EVAL", "redis.setresp(3) local t = {} t[1] = true t[2] = t return t", 0),
        ("EVAL", "local t = {} t[1] = t return redis.call('set', 'k', t)", 0),
        ("EVAL", "local t = {} t[1] = t return redis.pcall('set', t, t)", 0),
        ("EVAL", "local t = {} t[1] = t return redis.error_reply(t)", 0),
        ("EVAL", "local t = {} t[1] = t return redis.status_reply(t)", 0),
        ("EVAL", "local t = {} t[1] = t return redis.sha1hex(t)", 0),
        ("EVAL", "local t = {} t[1] = t return {pcall(cjson.encode, t)}", 0),
        ("EVAL", "local t = {} t[1] = t return #cmsgpack.pack(t)", 0),
        ("EVAL", "return 'still answering'", 0),
    ],
}


LIBRARY_SCENARIOS: dict[str, Scenario] = {
    'cjson.encode': [
        ("EVAL", "return cjson.encode({1,2,3})", 0),
        ("EVAL", "return cjson.encode({})", 0),
        ("EVAL", "return cjson.encode({a=1})", 0),
        ("EVAL", "return cjson.encode({1,nil,3})", 0),
        ("EVAL", "return cjson.encode({[1]=1,[2]=2,[4]=4})", 0),
        ("EVAL", "return cjson.encode({[1]=1,[20]=2})", 0),
        ("EVAL", "return cjson.encode({[0]=1})", 0),
        ("EVAL", "return cjson.encode({[1.5]=1})", 0),
        ("EVAL", "return cjson.encode({[-1]=1})", 0),
        ('EVAL',
         'return cjson.encode(\'a"b\\\\c/d\\n\\r\\t\\b\\f\' .. string.char(0, 1, 31, 127, 128, '
         '255))', 0),
        ("EVAL", "return cjson.encode(3.14159265358979)", 0),
        ("EVAL", "return cjson.encode(1e300)", 0),
        ("EVAL", "return cjson.encode(0.1)", 0),
        ("EVAL", "return cjson.encode(-0)", 0),
        ("EVAL", "return cjson.encode(1/0)", 0),
        ("EVAL", "return cjson.encode(0/0)", 0),
        ("EVAL", "return cjson.encode({1/0})", 0),
        ("EVAL", "return cjson.encode(true)", 0),
        ("EVAL", "return cjson.encode(nil)", 0),
        ("EVAL", "return cjson.encode(cjson.null)", 0),
        ("EVAL", "return cjson.encode({cjson.null})", 0),
        ("EVAL", "return cjson.encode(function() end)", 0),
        ("EVAL", "return cjson.encode({[true]=1})", 0),
        ("EVAL", "return cjson.encode({a={b={c={}}}})", 0),
        ("EVAL", "return cjson.encode()", 0),
        ("EVAL", "return cjson.encode(1, 2)", 0),
        ('EVAL',
         'local t = {} local c = t for i=1,1001 do c[1] = {} c = c[1] end '
         'return cjson.encode(t)', 0),
        ('EVAL',
         'local t = {} local c = t for i=1,999 do c[1] = {} c = c[1] end '
         'return #cjson.encode(t)', 0),
        ("EVAL", "local t = {} t[1] = t return cjson.encode(t)", 0),
        ("EVAL", "return cjson.encode({[2]=1})", 0),
        ("EVAL", "return cjson.encode({[11]=1})", 0),
        ("EVAL", "return cjson.encode({1, 2, x=3})", 0),
        ('EVAL',
         'return {cjson.encode_max_depth(), cjson.decode_max_depth(), '
         'cjson.encode_number_precision()}', 0),
        ("EVAL", "return {cjson.encode_sparse_array()}", 0),
        ("EVAL", "return tostring(cjson.encode_keep_buffer())", 0),
        ("EVAL", "return tostring(cjson.encode_invalid_numbers())", 0),
        ("EVAL", "return tostring(cjson.decode_invalid_numbers())", 0),
        ("EVAL", "return cjson.encode_number_precision(20)", 0),
        ("EVAL", "return cjson.encode_number_precision('x')", 0),
        ("EVAL", "return cjson.encode_max_depth(1, 2)", 0),
        ("EVAL", "return cjson.encode_invalid_numbers('maybe')", 0),
        ("EVAL", "return cjson.encode_invalid_numbers({})", 0),
        ("EVAL", "return {cjson._NAME, cjson._VERSION}", 0),
        ('EVAL',
         'local c = cjson.new() c.encode_number_precision(3) return {c.encode(3.14159), '
         'cjson.encode(3.14159)}', 0),
        ("EVAL", "return type(cjson.null)", 0),
    ],
    'cjson.decode': [
        ("EVAL", "return cjson.decode('[1,2,3]')", 0),
        ("EVAL", "return cjson.decode('{\"a\":[1,{\"b\":2}]}').a[2].b", 0),
        ("EVAL", "return cjson.decode('\"\\\\u0041\\\\u00e9\\\\u20ac\\\\ud83d\\\\ude00\"')", 0),
        ("EVAL", "return cjson.decode('\"\\\\ud83d\"')", 0),
        ("EVAL", "return cjson.decode('\"\\\\ude00\"')", 0),
        ("EVAL", "return cjson.decode('\"\\\\u12G4\"')", 0),
        ("EVAL", "return cjson.decode('\"\\\\q\"')", 0),
        ("EVAL", "return cjson.decode('\"abc')", 0),
        ("EVAL", "return cjson.decode('')", 0),
        ("EVAL", "return cjson.decode(' ')", 0),
        ("EVAL", "return cjson.decode('[1,2')", 0),
        ("EVAL", "return cjson.decode('[1 2]')", 0),
        ("EVAL", "return cjson.decode('{1:2}')", 0),
        ("EVAL", "return cjson.decode('{\"a\" 2}')", 0),
        ("EVAL", "return cjson.decode('{\"a\":2 \"b\":3}')", 0),
        ("EVAL", "return cjson.decode('[1,]')", 0),
        ("EVAL", "return cjson.decode('[1] x')", 0),
        ("EVAL", "return cjson.decode('tru')", 0),
        ("EVAL", "return cjson.decode('nul')", 0),
        ("EVAL", "return {cjson.decode('true'), cjson.decode('false')}", 0),
        ("EVAL", "return type(cjson.decode('null'))", 0),
        ("EVAL", "return cjson.decode('[null]')[1] == cjson.null", 0),
        ("EVAL", "return cjson.decode('0x10')", 0),
        ("EVAL", "return cjson.decode('+5')", 0),
        ("EVAL", "return cjson.decode('01')", 0),
        ("EVAL", "return tostring(cjson.decode('Infinity'))", 0),
        ("EVAL", "return tostring(cjson.decode('-inf'))", 0),
        ("EVAL", "return tostring(cjson.decode('nan'))", 0),
        ("EVAL", "return cjson.decode('1e2')", 0),
        ("EVAL", "return tostring(cjson.decode('1.5e-3'))", 0),
        ("EVAL", "return cjson.decode('-')", 0),
        ("EVAL", "return cjson.decode('1.2.3')", 0),
        ("EVAL", "return cjson.decode('inc')", 0),
        ("EVAL", "return cjson.decode('[1,2,3]' .. string.char(0) .. 'junk')", 0),
        ("EVAL", "return cjson.decode(string.char(0) .. '1')", 0),
        ("EVAL", "return cjson.decode('1' .. string.char(0))", 0),
        ("EVAL", "return cjson.decode('\"a' .. string.char(0) .. 'b\"')", 0),
        ("EVAL", "return cjson.decode()", 0),
        ("EVAL", "return cjson.decode({})", 0),
        ("EVAL", "return cjson.decode(12)", 0),
        ("EVAL", "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))", 0),
        ("EVAL", "return cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)) ~= nil", 0),
        ('EVAL',
         "cjson.decode_invalid_numbers(false) local ok, e = pcall(cjson.decode, '0x10') "
         'cjson.decode_invalid_numbers(true) return e', 0),
        ("EVAL", "return cjson.decode('{\"a\":1,\"a\":2}').a", 0),
        ("EVAL", "return cjson.decode('   [  1 , 2 ]  ')", 0),
        ("EVAL", "return cjson.decode('[\"\\\\/\\\\b\\\\f\\\\n\\\\r\\\\t\\\\\\\\\\\\\"\"]')[1]", 0),
        ("EVAL", "return {pcall(cjson.decode, '[')}", 0),
    ],
    'cmsgpack.pack and unpack': [
        ('EVAL',
         'return cmsgpack.pack(1, -1, 127, 128, 255, 256, 65535, 65536, -32, -33, -128, -129, '
         '-32768, -32769, 4294967295, 4294967296, -2147483648, -2147483649)', 0),
        ("EVAL", "return cmsgpack.pack(1.5, 0.1, -0.0, 1/0, 3.0, 2^63, -2^63, 1e300)", 0),
        ('EVAL',
         "return cmsgpack.pack('', 'abc', string.rep('x', 31), string.rep('x', 32), "
         "string.rep('x', 256), string.rep('x', 65536))", 0),
        ('EVAL',
         'return cmsgpack.pack({}, {1,2,3}, {a=1}, {1,2,nil,4}, {[1]=1,[3]=3}, '
         'true, false, nil)', 0),
        ("EVAL", "return cmsgpack.pack()", 0),
        ("EVAL", "return cmsgpack.pack(function() end)", 0),
        ("EVAL", "local t = {} t[1] = t return cmsgpack.pack(t)", 0),
        ("EVAL", "local t = {} for i=1,20 do t[i]=i end return cmsgpack.pack(t)", 0),
        ("EVAL", "local t = {} for i=1,20 do t['k'..i]=i end return #cmsgpack.pack(t)", 0),
        ("EVAL", "return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1,2}, {x=1}))}", 0),
        ("EVAL", "return cmsgpack.unpack(cmsgpack.pack({a={b={c='d'}}})).a.b.c", 0),
        ('EVAL',
         'return {cmsgpack.unpack(cmsgpack.pack(-1, -200, 70000, -70000, 5000000000, '
         '-5000000000))}', 0),
        ("EVAL", "return tostring(cmsgpack.unpack(cmsgpack.pack(1.5)))", 0),
        ("EVAL", "return tostring(cmsgpack.unpack(cmsgpack.pack(0.1)))", 0),
        ("EVAL", "return cmsgpack.unpack('')", 0),
        ("EVAL", "return cmsgpack.unpack(string.char(0xc1))", 0),
        ("EVAL", "return cmsgpack.unpack(string.char(0xcd, 1))", 0),
        ("EVAL", "return cmsgpack.unpack(string.char(0x92, 1))", 0),
        ("EVAL", "return {cmsgpack.unpack(string.char(0x93, 1, 0xc0, 3))}", 0),
        ("EVAL", "return cmsgpack.unpack(string.char(0x81, 0xc0, 1))", 0),
        ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}", 0),
        ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)}", 0),
        ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}", 0),
        ("EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}", 0),
        ("EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 1)}", 0),
        ("EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3))}", 0),
        ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -1)}", 0),
        ("EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 10)}", 0),
        ("EVAL", "return {cmsgpack.unpack({})}", 0),
        ('EVAL',
         'return {cmsgpack.unpack(string.char(0xcf, 0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff))}', 0),
        ("EVAL", "return tostring(cmsgpack.unpack(string.char(0xcf, 0x80,0,0,0,0,0,0,0)))", 0),
        ('EVAL',
         'return {cmsgpack.unpack(string.char(0xd3, 0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xfe))}', 0),
        ("EVAL", "return {cmsgpack.unpack(string.char(0xd9, 3) .. 'abc', string.char(0xc4))}", 0),
        ("EVAL", "return {cmsgpack._NAME, cmsgpack._VERSION}", 0),
    ],
    'bit': [
        ('EVAL',
         'return {bit.tobit(0xffffffff), bit.tobit(2^32+5), bit.tobit(-1), bit.tobit(1.5), '
         'bit.tobit(2.5), bit.tobit(-1.5)}', 0),
        ('EVAL',
         'return {bit.bnot(0), bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4), bit.bxor(5, 3)}', 0),
        ('EVAL',
         'return {bit.lshift(1, 31), bit.lshift(1, 32), bit.rshift(-1, 28), bit.arshift(-256, '
         '4), bit.rol(0x12345678, 8), bit.ror(0x12345678, 8)}', 0),
        ('EVAL',
         'return {bit.bswap(0x12345678), bit.tohex(255), bit.tohex(-1), bit.tohex(255, 2), '
         'bit.tohex(255, -4), bit.tohex(255, 20)}', 0),
        ("EVAL", "return bit.band('12', 4)", 0),
        ("EVAL", "return bit.band('x', 4)", 0),
        ("EVAL", "return bit.band()", 0),
        ("EVAL", "return bit.tobit({})", 0),
        ("EVAL", "return bit.tohex(1, 'z')", 0),
        ("EVAL", "local b = bit.band return b('x')", 0),
        ("EVAL", "return bit.tobit(2^52 + 2^51 + 7)", 0),
    ],
    'struct': [
        ("EVAL", "return struct.pack('>I2', 258)", 0),
        ("EVAL", "return struct.pack('<i4', -2)", 0),
        ("EVAL", "return struct.pack('bBhHlLT', -1, 255, -2, 65535, -3, 7, 9)", 0),
        ("EVAL", "return struct.pack('!4 b i4', 1, 2)", 0),
        ("EVAL", "return struct.pack('>d', 1.5)", 0),
        ("EVAL", "return struct.pack('<f', 0.1)", 0),
        ("EVAL", "return struct.pack('s', 'abc')", 0),
        ("EVAL", "return struct.pack('c3', 'abcdef')", 0),
        ("EVAL", "return struct.pack('c0', 'abcdef')", 0),
        ("EVAL", "return struct.pack('c5', 'ab')", 0),
        ("EVAL", "return struct.pack('z', 1)", 0),
        ("EVAL", "return struct.pack('i33', 1)", 0),
        ("EVAL", "return struct.pack('!3', 1)", 0),
        ("EVAL", "return struct.pack('i', 'x')", 0),
        ("EVAL", "return struct.pack('i')", 0),
        ("EVAL", "return struct.pack()", 0),
        ("EVAL", "return struct.pack('i99999999999', 1)", 0),
        ("EVAL", "return {struct.unpack('>I2', struct.pack('>I2', 258))}", 0),
        ("EVAL", "return {struct.unpack('<i4i4', struct.pack('<i4i4', -2, 7))}", 0),
        ("EVAL", "return {struct.unpack('s', 'abc' .. string.char(0) .. 'x')}", 0),
        ("EVAL", "return {struct.unpack('s', 'abc')}", 0),
        ("EVAL", "return {struct.unpack('b c0', string.char(3) .. 'abcdef')}", 0),
        ("EVAL", "return {struct.unpack('c0', 'abc')}", 0),
        ("EVAL", "return {struct.unpack('i4', 'ab')}", 0),
        ("EVAL", "return {struct.unpack('i4', 'abcd', 0)}", 0),
        ("EVAL", "return {struct.unpack('B', 'abcd', 3)}", 0),
        ("EVAL", "return {struct.unpack('!4 b i4', struct.pack('!4 b i4', 1, 2))}", 0),
        ("EVAL", "return tostring(struct.unpack('>d', struct.pack('>d', 1.5)))", 0),
        ("EVAL", "return {struct.size('i4 b d'), struct.size('!8 b d'), struct.size('c10')}", 0),
        ("EVAL", "return struct.size('s')", 0),
        ("EVAL", "return struct.size('c0')", 0),
        ("EVAL", "return struct.size('q')", 0),
        ("EVAL", "return {struct.unpack('>i16', string.rep(string.char(255), 16))}", 0),
        ("EVAL", "return struct.pack('>I8', -1)", 0),
        ("EVAL", "return struct.pack('>i3', 2^40)", 0),
        ("EVAL", "return struct.pack('>I4', 1e30)", 0),
    ],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_script_scenario(pair: Pair, scenario: str) -> None:
    run(pair, *SCENARIOS[scenario])


@pytest.mark.parametrize("scenario", list(LIBRARY_SCENARIOS), ids=list(LIBRARY_SCENARIOS))
def test_library_scenario(pair: Pair, scenario: str) -> None:
    run(pair, *LIBRARY_SCENARIOS[scenario])


def test_eval_ro_and_no_writes_scripts_refuse_writes(pair: Pair) -> None:
    write = "return redis.call('set', 'k', 'v')"
    read = "return redis.call('get', 'k')"
    run(
        pair,
        ("EVAL_RO", write, 1, "k"), ("EVAL_RO", read, 1, "k"), ("EXISTS", "k"),
        ("EVAL", "#!lua flags=no-writes\n" + write, 1, "k"),
        ("EVAL", "#!lua flags=no-writes\n" + read, 1, "k"),
        ("EVAL_RO", "#!lua\n" + read, 1, "k"),
        ("EVAL_RO", "#!lua flags=no-writes\n" + read, 1, "k"),
        ("EVAL_RO", "#!lua flags=allow-oom\n" + read, 1, "k"),
        ("EVAL", "#!lua\n" + write, 1, "k"), ("GET", "k"),
        ("EVAL_RO", "return redis.pcall('del', 'k')", 1, "k"), ("GET", "k"),
    )
    sha = pair.check("SCRIPT", "LOAD", write)[5:-2]
    run(pair, ("EVALSHA_RO", sha, 1, "k"), ("EVALSHA", sha, 1, "k"))
    sha_ro = pair.check("SCRIPT", "LOAD", "#!lua flags=no-writes\n" + write)[5:-2]
    run(pair, ("EVALSHA", sha_ro, 1, "k"), ("EVALSHA_RO", sha_ro, 1, "k"))


def test_unpack_refuses_ranges_that_do_not_fit(pair: Pair) -> None:
    # Stock Lua 5.1 overflows a C int counting these ranges (and crashed the server); Redis's
    # Lua, and resplite's sandbox, refuse them, and any range past the C stack's 8000 slots.
    for i, j in ((-2, 2147483647), (0, 2147483647), (-2147483648, -2), (1, "1e10"),
                 (1, 7997), (1, 7998), (-1, -2), (1, -1), (-1, 5), ("2.7", "3.2"),
                 ("x", 1), (1, "y")):
        pair.check("EVAL", f"return #{{unpack({{1,2,3}}, {i!r}, {j!r})}}".replace("'", '"'), 0)
    pair.check("EVAL", "return {unpack({1,2,3})}", 0)
    # The 8000 slots count the arguments: one table and 7999 values fit, as three do not.
    fill = "local a = {} for i = 1, 7999 do a[i] = 1 end "
    pair.check("EVAL", fill + "return #{unpack(a)}", 0)
    pair.check("EVAL", fill + "return #{unpack(a, 1)}", 0)
    pair.check("EVAL", fill + "return #{unpack(a, 1, 7998)}", 0)
    pair.check("EVAL", fill + "return redis.call('rpush', KEYS[1], unpack(a))", 1, "l")
    pair.check("EVAL", fill + "return redis.pcall('rpush', KEYS[1], unpack(a))", 1, "l")
    pair.check("EVAL", fill + "a[5000] = nil return redis.pcall('rpush', KEYS[1], "
               "unpack(a, 1, 7999))", 1, "l")
    pair.check("EVAL", "return {unpack()}", 0)
    pair.check("EVAL", "return {unpack(5)}", 0)
    pair.check("PING")


def test_read_only_scripts_refuse_may_replicate_commands(pair: Pair) -> None:
    # PUBLISH and PFCOUNT are not writes, but Redis flags them may-replicate: a read-only
    # script may not call them; any other script may.
    publish = "return redis.call('publish', 'ch', 'm')"
    pfcount = "return redis.call('pfcount', KEYS[1])"
    run(
        pair,
        ("PFADD", "h", "a"),
        ("EVAL_RO", publish, 0), ("EVAL", "#!lua flags=no-writes\n" + publish, 0),
        ("EVAL_RO", pfcount, 1, "h"), ("EVAL", "#!lua flags=no-writes\n" + pfcount, 1, "h"),
        ("EVAL", publish, 0), ("EVAL", pfcount, 1, "h"),
    )


def test_scripts_share_the_callers_transaction_and_database(pair: Pair) -> None:
    run(
        pair,
        ("MULTI",), ("EVAL", "return redis.call('incr', KEYS[1])", 1, "n"),
        ("EVAL", "return redis.call('incr', KEYS[1])", 1, "n"),
        ("EVAL", "return redis.call('nosuch')", 0), ("EXEC",),
        ("SELECT", "3"), ("EVAL", "return redis.call('set', 'in3', '1')", 0), ("SELECT", "0"),
        ("EXISTS", "in3"), ("SELECT", "3"), ("EXISTS", "in3"), ("SELECT", "0"),
    )


def test_watch_sees_a_scripts_write(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        run(pair, ("SET", "w", "1"), ("WATCH", "w"), ("MULTI",), ("GET", "w"))
        other.check("EVAL", "return redis.call('set', 'w', '2')", 1, "w")
        run(pair, ("EXEC",))
    finally:
        other.close()


def test_celerys_chord_scripts(pair: Pair) -> None:
    """The scripts Celery's Redis result backend runs for a chord (each header task's part
    return, the callback's claim, its extension and the cleanup), as the installed Celery
    sends them: through EVALSHA after SCRIPT LOAD, a list or a sorted set of results, a
    late duplicate after the cleanup, and the error a script meets on a key of another type.
    tests/integration/test_celery.py runs the whole chord on both servers."""
    backend = pytest.importorskip("celery.backends.redis")
    part = pair.check("SCRIPT", "LOAD", backend.CHORD_PART_RETURN_LUA)[5:-2]
    extend = pair.check("SCRIPT", "LOAD", backend.CHORD_CLAIM_EXTEND_LUA)[5:-2]
    cleanup = pair.check("SCRIPT", "LOAD", backend.CHORD_CLEANUP_LUA)[5:-2]
    keys = ("g.j", "g.t", "g.s", "g.d", "g", "g.c")

    def part_return(task: str, value: str, ordered: str, index: str) -> Command:
        return ("EVALSHA", part, 6, *keys, task, value, ordered, index, 86400, 3600, 10, "tok")

    for ordered, index in (("0", "+inf"), ("1", "0"), ("1", "1")):
        run(
            pair,
            ("SET", "g.s", "2"),
            part_return(f"a{index}", "[1, 2]", ordered, index),
            part_return(f"a{index}", "[1, 2]", ordered, index),  # the same header entry again
            part_return(f"b{index}", "[3]", ordered, index),  # the last one: claims the callback
            ("TTL", "g.j"), ("TTL", "g"), ("TTL", "g.c"), ("SCARD", "g.d"),
            ("SISMEMBER", "g.d", f"a{index}:{index}"),
            ("EVALSHA", extend, 2, "g.c", "g.s", "tok", 30), ("TTL", "g.c"),
            ("EVALSHA", extend, 2, "g.c", "g.s", "other", 30),
            ("DEL", "g.c"),  # the claim lapsed: another worker takes it over
            ("EVALSHA", extend, 2, "g.c", "g.s", "other", 30),
            ("EVALSHA", cleanup, 5, "g.c", "g.j", "g.t", "g.s", "g.d", "tok", 300),
            ("EVALSHA", cleanup, 5, "g.c", "g.j", "g.t", "g.s", "g.d", "other", 300),
            ("GET", "g.c"), ("TTL", "g.c"), ("EXISTS", "g.j", "g.t", "g.s", "g.d"),
            part_return("late", "[4]", ordered, index), ("EXISTS", "g.j"),
            ("DEL", "g.c", "g"),
        )
    run(pair, ("SET", "g.s", "1"), ("SET", "g.t", "-1"), part_return("c", "[5]", "0", "+inf"),
        ("DEL", "g.j"), ("SET", "g.j", "x"), part_return("d", "[6]", "1", "0"))


def test_keys_expiring_during_a_script_stay_until_it_ends(pair: Pair) -> None:
    # The script's time stands still from its start: a key that expires while it spins is
    # still there when the script looks again.
    script = (
        "redis.call('set', KEYS[1], 'v', 'PX', 20) "
        "local t = redis.call('time') local stop = t[1] * 1000000 + t[2] "
        "local n = 0 while n < 3000000 do n = n + 1 end "
        "return {redis.call('exists', KEYS[1]), redis.call('get', KEYS[1])}"
    )
    run(pair, ("EVAL", script, 1, "k"))


def test_script_errors_count_in_errorstats(pair: Pair) -> None:
    for conn in (pair.ref, pair.ours):
        conn.call("CONFIG", "RESETSTAT")
    run(
        pair,
        ("EVAL", "return redis.call('nosuch')", 0),
        ("EVAL", "return redis.pcall('nosuch')", 0),
        ("EVAL", "error('mine')", 0),
        ("EVAL", "return {err='OWN code'}", 0),
        ("EVAL", "return redis.error_reply('OTHER code')", 0),
        ("EVAL", "return {1, {err='NESTED x'}}", 0),
        ("EVAL", "local t = {} t.map = t return t", 0),
    )
    ref, ours = (_info(conn, "errorstats") for conn in (pair.ref, pair.ours))
    assert ours == ref
    ref_total, ours_total = (
        _info(conn, "stats")["total_error_replies"] for conn in (pair.ref, pair.ours)
    )
    assert ours_total == ref_total
    ref, ours = (_cmdstat(conn, "eval") for conn in (pair.ref, pair.ours))
    assert ours == ref
    pair.check("CONFIG", "RESETSTAT")  # later INFO comparisons start from equal stats


@pytest.mark.parametrize("script", [
    "local t = redis.pcall('set', KEYS[1], 'y') return 1",  # caught: the SET's failure only
    "return redis.pcall('set', KEYS[1], 'y')",
    "return {1, redis.pcall('set', KEYS[1], 'y')}",
    "return redis.call('set', KEYS[1], 'y')",
    "return {1, {err='boom'}}",  # no code: counted as ERR
    "return {err='x' .. string.rep('y', 40) .. ' z'}",  # no space in the first 32 bytes
    "return {err=' lead'}",
])
def test_an_eval_fails_when_its_reply_holds_an_error(pair: Pair, script: str) -> None:
    """EVAL counts as failed when its reply is or holds an error; an error the script
    caught with redis.pcall and dropped is only its command's (rejected_calls here)."""
    pair.check("CONFIG", "RESETSTAT")
    try:
        pair.check("CONFIG", "SET", "maxmemory", "1")
        pair.check("EVAL", script, "1", "x")
    finally:
        pair.check("CONFIG", "SET", "maxmemory", "0")
    for section in ("errorstats", "commandstats"):
        ref, ours = (_info(conn, section) for conn in (pair.ref, pair.ours))
        for stats in (ref, ours):
            stats.pop("cmdstat_config|set", None)
            stats.pop("cmdstat_config|resetstat", None)
            for name in list(stats):
                stats[name] = re.sub(r"usec=\d+,usec_per_call=[\d.]+,", "", stats[name])
        assert ours == ref, section
    assert _info(pair.ours, "stats")["total_error_replies"] == \
        _info(pair.ref, "stats")["total_error_replies"]
    pair.check("CONFIG", "RESETSTAT")


def _info(conn: RawClient, section: str) -> dict[str, str]:
    text = decode(conn.call("INFO", section))
    assert isinstance(text, bytes)
    fields = {}
    for line in text.decode().split("\r\n"):
        if line and not line.startswith("#"):
            name, _, value = line.partition(":")
            fields[name] = value
    return fields


def _cmdstat(conn: RawClient, name: str) -> dict[str, str]:
    line = _info(conn, "commandstats")[f"cmdstat_{name}"]
    stats = dict(part.split("=") for part in line.split(","))
    return {k: v for k, v in stats.items() if k in ("calls", "rejected_calls", "failed_calls")}


def test_script_help_lists_the_subcommands(pair: Pair) -> None:
    ref, ours = pair.both("SCRIPT", "HELP")
    # SCRIPT DEBUG (the Lua debugger) is not implemented.
    assert_same_shape(ref, ours, ours_has={"EXISTS", "FLUSH", "KILL", "LOAD", "HELP"})


def test_command_getkeys_reads_numkeys(pair: Pair) -> None:
    run(
        pair,
        ("COMMAND", "GETKEYS", "EVAL", "return 1", "2", "a", "b", "c"),
        ("COMMAND", "GETKEYS", "EVALSHA", "x" * 40, "1", "a", "b"),
        ("COMMAND", "GETKEYS", "EVAL_RO", "return 1", "0", "x"),
        ("COMMAND", "GETKEYS", "FCALL", "f", "2", "a", "b"),
        ("COMMAND", "GETKEYS", "FCALL_RO", "f", "1", "a"),
        ("COMMAND", "INFO", "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"),
    )


def test_info_counts_cached_scripts(pair: Pair) -> None:
    for i in range(3):
        pair.check("SCRIPT", "LOAD", f"return {i}")
    pair.check("EVAL", "return 'x'", 0)
    ref, ours = (_info(conn, "memory") for conn in (pair.ref, pair.ours))
    assert ours["number_of_cached_scripts"] == ref["number_of_cached_scripts"] == "4"
    assert int(ours["used_memory_scripts_eval"]) > 0
    assert int(ours["used_memory_vm_eval"]) > 0
    pair.check("SCRIPT", "FLUSH")
    ours = _info(pair.ours, "memory")
    assert ours["number_of_cached_scripts"] == "0"
    assert ours["used_memory_scripts_eval"] == "0"


# -- where resplite answers as Redis 7.4 does ---------------------------------------------------


def test_redis_version_is_the_reported_one(pair: Pair) -> None:
    # INFO's redis_version (the redis-compat-version's, the reference's line here), as a
    # string and as Redis's number.
    found = re.search(rb"redis_version:([\d.]+)", pair.ours.call("INFO", "server"))
    assert found is not None
    text = found[1]
    major, minor, patch = (int(part) for part in text.split(b"."))
    number = (major << 16) | (minor << 8) | patch
    assert pair.ours.call("EVAL", "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}", 0) \
        == b"*2\r\n$%d\r\n%s\r\n:%d\r\n" % (len(text), text, number)


@pytest.mark.redis_version("7.4")
def test_set_repl_and_log_errors_use_74s_words(pair: Pair) -> None:
    ours = pair.ours.call("EVAL", "return redis.set_repl()", 0)
    assert ours.startswith(b"-ERR redis.set_repl() requires one argument. script: ")
    ours = pair.ours.call("EVAL", "return redis.log(10, 'y')", 0)
    assert ours.startswith(b"-ERR Invalid log level. script: ")


@pytest.mark.redis_version("7.4")
def test_numbers_given_to_redis_call_are_written_shortest(pair: Pair) -> None:
    # Redis 7.4 writes whole numbers as integers and others with the fewest digits that
    # read back the same; 7.0 used %.17g.
    for value, text in (("3.14", b"3.14"), ("0.1", b"0.1"), ("-0.0", b"0"), ("100", b"100"),
                        ("1e20", b"1e+20"), ("1/0", b"inf"), ("-1/0", b"-inf"),
                        ("2^62", b"4611686018427387904"), ("1.5e-7", b"1.5e-7"),
                        ("123456.789", b"123456.789")):
        assert pair.ours.call("EVAL", f"return redis.call('set', 'k', {value})", 0) == b"+OK\r\n"
        assert pair.ours.call("GET", "k") == b"$%d\r\n%s\r\n" % (len(text), text)


@pytest.mark.redis_version("7.4")
def test_time_stands_still_inside_a_script(pair: Pair) -> None:
    script = (
        "local a = redis.call('time') local n = 0 while n < 2000000 do n = n + 1 end "
        "local b = redis.call('time') return {a[1] == b[1] and a[2] == b[2]}"
    )
    assert pair.ours.call("EVAL", script, 0) == b"*1\r\n:1\r\n"


@pytest.mark.redis_version("7.4")
def test_blocking_commands_do_not_block_in_scripts(pair: Pair) -> None:
    # Redis 7.0 refused BLOCK in scripts; 7.4 runs the read, which answers at once: a null
    # (false in Lua under RESP2, nil under RESP3) when there is nothing, the entries if any.
    null = b"$-1\r\n" if pair.resp == 2 else b"_\r\n"
    script = "return redis.call('xread', 'block', 0, 'streams', KEYS[1], ARGV[1])"
    assert pair.ours.call("EVAL", script, 1, "s", "$") == null
    pair.ours.call("XADD", "s", "1-1", "f", "v")
    assert pair.ours.call("EVAL", script, 1, "s", "$") == null
    assert pair.ours.call("EVAL", script, 1, "s", "0") == pair.ours.call(
        "EVAL", "return redis.call('xread', 'streams', KEYS[1], ARGV[1])", 1, "s", "0"
    )


@pytest.mark.redis_version("7.4")
def test_eval_keeps_at_most_500_scripts_it_brought_in(pair: Pair) -> None:
    pair.check("CONFIG", "RESETSTAT")  # both servers, so later INFO comparisons stay equal
    loaded = pair.ours.call("SCRIPT", "LOAD", "return 'loaded'")[5:-2]
    first = pair.ours.call("EVAL", "return 'first'", 0)
    assert first == b"$5\r\nfirst\r\n"
    for i in range(500):
        pair.ours.call("EVAL", f"return {i}", 0)
    memory = _info(pair.ours, "memory")
    assert memory["number_of_cached_scripts"] == "501"  # 500 from EVAL, one from SCRIPT LOAD
    assert _info(pair.ours, "stats")["evicted_scripts"] == "1"
    sha_first = pair.ours.call("EVAL", "return redis.sha1hex('return \\'first\\'')", 0)[5:-2]
    assert pair.ours.call("SCRIPT", "EXISTS", sha_first, loaded) == b"*2\r\n:0\r\n:1\r\n"


# -- long scripts: BUSY, SCRIPT KILL, FUNCTION KILL -------------------------------------------


def _wait_busy(conn: RawClient) -> bytes:
    """PING until the server answers -BUSY (the running script passed the threshold)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        reply = conn.call("PING")
        if reply.startswith(b"-BUSY"):
            return reply
        time.sleep(0.05)
    raise AssertionError("the server never reported BUSY")


@pytest.fixture
def busy_servers(server_pair_factory: ServerPairFactory) -> BusyPairs:
    ref, ours = server_pair_factory("--busy-reply-threshold", "100")
    # Both connections go straight to work: a script started at once must find the other
    # one served while it runs, however recently it was accepted.
    return [(RawClient(s.host, s.port, timeout=30), RawClient(s.host, s.port, timeout=30))
            for s in (ref, ours)]


def test_connections_accepted_as_a_script_starts_are_served_while_it_runs(
    server_pair_factory: ServerPairFactory,
) -> None:
    # The server, stopped meanwhile, accepts two new connections in the same turn as it
    # starts the script: neither has sent anything yet, both are answered from inside it (the
    # first gets -BUSY, the second's SCRIPT KILL works), as Redis serves every connection.
    replies = []
    for server in server_pair_factory("--busy-reply-threshold", "100"):
        runner = RawClient(server.host, server.port, timeout=30)
        last = RawClient(server.host, server.port, timeout=30)
        assert runner.call("PING") == last.call("PING") == b"+PONG\r\n"
        with paused(server):
            fresh = [RawClient(server.host, server.port, timeout=30) for _ in range(2)]
            runner.send("EVAL", "while true do end", 0)
        seen = [fresh[0].call("PING"), fresh[1].call("SCRIPT", "KILL"), runner.read_reply()]
        seen += [conn.call("PING") for conn in (*fresh, runner, last)]
        replies.append(seen)
        for conn in (*fresh, runner, last):
            conn.close()
    assert replies[0][0].startswith(b"-BUSY")
    assert replies[1] == replies[0]


def test_a_long_script_makes_others_busy_until_script_kill(busy_servers: BusyPairs) -> None:
    replies = []
    for runner, other in busy_servers:
        seen = []
        runner.send("EVAL", "local i = 0\nwhile true do\n  i = i + 1\nend", 0)
        seen.append(_wait_busy(other))
        for cmd in (("GET", "k"), ("FUNCTION", "STATS"), ("FUNCTION", "KILL"),
                    ("SHUTDOWN",), ("NOSUCH",), ("GET",), ("SCRIPT", "KILL")):
            seen.append(other.call(*cmd))
        seen.append(runner.read_reply())
        seen.append(other.call("PING"))
        seen.append(runner.call("SCRIPT", "KILL"))
        replies.append(seen)
    assert replies[1] == replies[0]


def test_a_script_that_wrote_cannot_be_killed(busy_servers: BusyPairs) -> None:
    replies = []
    for runner, other in busy_servers:
        runner.send("EVAL", "redis.call('set', 'k', 'v') local i = 0 "
                    "while i < 3e7 do i = i + 1 end return redis.call('get', 'k')", 0)
        seen = [_wait_busy(other), other.call("SCRIPT", "KILL")]
        seen.append(runner.read_reply())
        replies.append(seen)
    assert replies[1] == replies[0]


def test_a_long_function_is_stopped_by_function_kill(busy_servers: BusyPairs) -> None:
    replies = []
    for runner, other in busy_servers:
        runner.call("FUNCTION", "LOAD", "#!lua name=spinning\n"
                    "redis.register_function('spin', function()\n  while true do end\nend)")
        runner.send("FCALL", "spin", 0)
        seen = [_wait_busy(other), other.call("SCRIPT", "KILL")]
        stats = decode(other.call("FUNCTION", "STATS"))
        assert isinstance(stats, (list, dict))
        seen.append(other.call("FUNCTION", "KILL"))
        seen.append(runner.read_reply())
        replies.append(seen)
    assert replies[1] == replies[0]


# Lua 5.1 hooks each coroutine separately: a loop inside one must still make the server busy
# and yield to SCRIPT KILL, wherever the coroutine is resumed from.
COROUTINE_LOOPS = {
    "in a coroutine": "coroutine.wrap(function()\n  while true do end\nend)()",
    "in a coroutine called through pcall": (
        "local ok, e = pcall(coroutine.wrap(function()\n  while true do end\nend))\n"
        "return {ok, e}"
    ),
    "under pcall in a coroutine": (
        "coroutine.wrap(function()\n  pcall(function()\n    while true do end\n  end)\n"
        "  return 1\nend)()"
    ),
    "in a coroutine in a coroutine": (
        "coroutine.wrap(function()\n  coroutine.wrap(function()\n    while true do end\n"
        "  end)()\nend)()"
    ),
    "in a coroutine made by coroutine.create": (
        "local co = coroutine.create(function()\n  while true do end\nend)\n"
        "return {coroutine.resume(co)}"
    ),
    # The outer loop does some work of its own between resumes: Redis kills the thread the
    # hook fires in, and each new coroutine inherits the count hook, so with an empty outer
    # loop Redis itself takes some 20 s (a billion instructions) to reach its own check.
    "in coroutines resumed in a loop that swallows the kill": (
        "while true do\n  coroutine.resume(coroutine.create(function()\n"
        "    while true do end\n  end))\n  for i = 1, 5000 do end\nend"
    ),
    "in a coroutine that catches the kill in a loop": (
        "coroutine.wrap(function()\n  while true do\n    pcall(function()\n"
        "      while true do end\n    end)\n  end\nend)()"
    ),
}


@pytest.mark.parametrize("script", list(COROUTINE_LOOPS.values()), ids=list(COROUTINE_LOOPS))
def test_a_loop_in_a_coroutine_makes_others_busy_until_script_kill(
    busy_servers: BusyPairs, script: str
) -> None:
    replies = []
    for runner, other in busy_servers:
        runner.send("EVAL", script, 0)
        seen = [_wait_busy(other), other.call("GET", "k"), other.call("SCRIPT", "KILL")]
        seen.append(runner.read_reply())
        seen.append(other.call("PING"))
        seen.append(runner.call("EVAL", "return coroutine.wrap(function() return 7 end)()", 0))
        replies.append(seen)
    assert replies[1] == replies[0]


def test_a_function_looping_in_a_coroutine_is_stopped_by_function_kill(
    busy_servers: BusyPairs,
) -> None:
    replies = []
    for runner, other in busy_servers:
        runner.call("FUNCTION", "LOAD", "#!lua name=spinning\n"
                    "redis.register_function('spin', function()\n"
                    "  return coroutine.wrap(function()\n    while true do end\n  end)()\nend)")
        runner.send("FCALL", "spin", 0)
        seen = [_wait_busy(other), other.call("SCRIPT", "KILL"), other.call("FUNCTION", "KILL")]
        seen.append(runner.read_reply())
        seen.append(other.call("PING"))
        replies.append(seen)
    assert replies[1] == replies[0]


def test_blocked_clients_are_served_after_the_whole_script(pair: Pair) -> None:
    # A reader blocked on the stream wakes once, after the script: it sees both entries the
    # script added, not just the first.
    reader = pair.connect_extra()
    try:
        run(pair, ("XADD", "s", "1-0", "f", "v"))
        for conn in (reader.ref, reader.ours):
            conn.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        for conn in (reader.ref, reader.ours):
            deadline = time.monotonic() + 10
            while decode(conn_info(pair, conn)) != 1 and time.monotonic() < deadline:
                time.sleep(0.01)
        run(pair, ("EVAL", "redis.call('xadd', KEYS[1], '2-0', 'n', '1') "
                           "redis.call('xadd', KEYS[1], '3-0', 'n', '2') return 1", 1, "s"))
        assert reader.ours.read_reply() == reader.ref.read_reply()
    finally:
        reader.close()


def conn_info(pair: Pair, conn: RawClient) -> bytes:
    """INFO clients' blocked_clients of the server ``conn`` talks to, as an integer reply."""
    main = pair.ref if conn.sock.getpeername() == pair.ref.sock.getpeername() else pair.ours
    fields = _info(main, "clients")
    return b":%d\r\n" % int(fields["blocked_clients"])


def test_maxmemory_and_the_script_flags(pair: Pair) -> None:
    pair.check("CONFIG", "SET", "maxmemory", "1")
    try:
        run(
            pair,
            # Without a shebang EVAL itself runs; its denyoom commands are refused.
            ("EVAL", "return redis.call('set', 'k', 'v')", 0),
            ("EVAL", "return redis.pcall('set', 'k', 'v')", 0),
            ("EVAL", "return redis.call('get', 'k')", 0),
            ("EVAL", "return redis.call('del', 'k')", 0),
            # With one, the script's own flags decide before it runs.
            ("EVAL", "#!lua\nreturn redis.call('set', 'k', 'v')", 0),
            ("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", 0),
            ("EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'k', 'v')", 0),
            ("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", 0),
            ("FUNCTION", "LOAD", "#!lua name=m\nredis.register_function('w', function() "
                                 "return redis.call('set', 'k', 'w') end)"),
        )
    finally:
        pair.check("CONFIG", "SET", "maxmemory", "0")
    run(
        pair,
        ("FUNCTION", "LOAD", "#!lua name=m\nredis.register_function('w', function() "
                             "return redis.call('set', 'k', 'w') end)\n"
                             "redis.register_function{function_name='r', callback=function() "
                             "return redis.call('get', 'k') end, flags={'no-writes'}}\n"
                             "redis.register_function{function_name='o', callback=function() "
                             "return redis.call('set', 'k', 'o') end, flags={'allow-oom'}}"),
    )
    pair.check("CONFIG", "SET", "maxmemory", "1")
    try:
        run(pair, ("FCALL", "w", 0), ("FCALL", "r", 0), ("FCALL", "o", 0), ("FCALL_RO", "r", 0))
    finally:
        pair.check("CONFIG", "SET", "maxmemory", "0")
    run(pair, ("GET", "k"))


# -- what the caller may do: ACL users, a failed snapshot ---------------------------------------


def _acl_log(conn: RawClient) -> list[dict[bytes, object]]:
    """ACL LOG's entries without the fields about time and the client's address."""
    entries = decode(conn.call("ACL", "LOG"))
    out = []
    for entry in entries:
        if isinstance(entry, list):
            entry = dict(zip(entry[::2], entry[1::2], strict=True))
        out.append({k: v for k, v in entry.items()
                    if k in (b"count", b"reason", b"context", b"object", b"username")})
    return out


def test_redis_call_runs_with_the_callers_acl_user(pair: Pair) -> None:
    run(pair, ("ACL", "SETUSER", "scripter", "on", ">pw", "~k*", "&chan", "+eval", "+get",
               "+set", "+publish"),
        ("ACL", "LOG", "RESET"))
    user = pair.connect_extra()
    # Redis 8's words for the refusals (the reference's 7.0 texts are rewritten into them).
    user.normalize = normalize.acl_texts_as_redis8("scripter")
    try:
        run(user, ("AUTH", "scripter", "pw"))
        run(
            user,
            ("EVAL", "return redis.call('set', KEYS[1], 'v')", 1, "k1"),
            ("EVAL", "return redis.call('get', 'other')", 0),
            ("EVAL", "return redis.pcall('get', 'other')", 0),
        )
        # 7.0's text for a refused command does not name it; 7.2's does.
        script = "return redis.call('del', 'k1')"
        ref, ours = user.both("EVAL", script, 0)
        if ref_version(pair) >= (7, 2):
            assert ours == ref
        else:
            assert ref.startswith(b"-ERR The user executing the script can't run this command")
        assert ours == (b"-ERR ACL failure in script: User scripter has no permissions to run "
                        b"the 'del' command script: %s, on @user_script:1.\r\n"
                        % hashlib.sha1(script.encode()).hexdigest().encode())
        run(
            user,
            ("EVAL", "return redis.call('publish', 'elsewhere', 'm')", 0),
            ("EVAL", "return redis.call('publish', 'chan', 'm')", 0),
            ("EVAL", "return {redis.acl_check_cmd('get', 'k2'), redis.acl_check_cmd('get', 'x'),"
                     " redis.acl_check_cmd('del', 'k2')}", 0),
            ("EVAL", "return redis.acl_check_cmd('nosuch')", 0),
        )
        assert _acl_log(pair.ours) == _acl_log(pair.ref)
        assert {e[b"context"] for e in _acl_log(pair.ours)} == {b"lua"}
    finally:
        user.close()
        run(pair, ("ACL", "DELUSER", "scripter"), ("ACL", "LOG", "RESET"))


def test_a_failed_snapshot_refuses_writes_from_scripts(
        server_pair_factory: ServerPairFactory, tmp_path: Path) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    servers = server_pair_factory("--save", "3600 1", "--stop-writes-on-bgsave-error", "yes",
                                  "--dir", str(folder))
    conns = [RawClient(s.host, s.port) for s in servers]
    pair = Pair(conns[0], conns[1], 2)
    try:
        run(pair, ("SET", "k", "v"),
            ("FUNCTION", "LOAD", "#!lua name=m\n"
             "redis.register_function('w', function() return redis.call('set', 'k', 'w') end)\n"
             "redis.register_function{function_name='r', callback=function() "
             "return redis.call('get', 'k') end, flags={'no-writes'}}"))
        shutil.rmtree(folder)
        for conn in conns:
            conn.call("BGSAVE")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            states = [_info(conn, "persistence")["rdb_last_bgsave_status"] for conn in conns]
            if states == ["err", "err"] and conns[1].call("SET", "x", "1").startswith(b"-MISCONF"):
                break
            time.sleep(0.05)
        run(
            pair,
            ("PING",),
            # Without a shebang EVAL runs; its first write is refused inside the script.
            ("EVAL", "return redis.call('set', 'k', 'x')", 0),
            ("EVAL", "return redis.pcall('set', 'k', 'x')", 0),
            ("EVAL", "return redis.call('get', 'k')", 0),
            # A shebang that allows writes makes EVAL a write: refused before it runs.
            ("EVAL", "#!lua\nreturn redis.call('get', 'k')", 0),
            ("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", 0),
            ("FCALL", "w", 0), ("FCALL", "r", 0), ("FCALL_RO", "r", 0),
        )
    finally:
        for conn in conns:
            conn.close()


# -- cluster nodes (resplite's in-process cluster; Redis 7.4's rules and words) --------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[ServerHandle]:
    with resplite.serve(cluster=3) as handle:
        yield handle


def _node_of(key: bytes) -> int:
    slot = key_slot(key)
    return 0 if slot <= 5460 else 1 if slot <= 10922 else 2


def _same_node_other_slot(key: bytes) -> bytes:
    """A key that the node of ``key`` serves, in another slot."""
    for i in range(1000):
        candidate = b"k%d" % i
        if _node_of(candidate) == _node_of(key) and key_slot(candidate) != key_slot(key):
            return candidate
    raise AssertionError("no such key")


@pytest.mark.redis_version("7.4")
def test_scripts_on_a_cluster_node(cluster: ServerHandle) -> None:
    conns = [RawClient(host, port) for host, port in cluster.cluster_nodes]
    try:
        foo = conns[_node_of(b"foo")]
        near = _same_node_other_slot(b"foo").decode()
        for conn in conns:
            conn.call("FLUSHALL")
            conn.call("FUNCTION", "FLUSH")
        # Declared keys route the EVAL as any command's keys do.
        assert foo.call("EVAL", "return 1", 2, "foo", "bar") == (
            b"-CROSSSLOT Keys in request don't hash to the same slot\r\n")
        assert conns[_node_of(b"bar")].call("EVAL", "return 1", 1, "foo").startswith(b"-MOVED ")
        # A key served elsewhere, whatever the flags.
        assert foo.call("EVAL", "return redis.call('get', 'bar')", 0).startswith(
            b"-ERR Script attempted to access a non local key in a cluster node script: ")
        # Keys of two slots in one command.
        assert foo.call("EVAL", f"return redis.call('mget', 'foo', '{near}')", 0).startswith(
            b"-ERR Command 'mget' in script attempted to access keys that don't hash to the "
            b"same slot script: ")
        # Scripts without a shebang may use several slots of this node; others may not.
        script = f"redis.call('set', 'foo', 'bar') redis.call('set', '{near}', 'foo') return 'OK'"
        assert foo.call("EVAL", script, 0) == b"$2\r\nOK\r\n"
        assert foo.call("EVAL", "#!lua\n" + script, 0).startswith(
            b"-ERR Script attempted to access keys that do not hash to the same slot script: ")
        allowed = "#!lua flags=allow-cross-slot-keys\n" + script
        assert foo.call("EVAL", allowed, 0) == b"$2\r\nOK\r\n"
        # ... including a slot other than the declared keys' (Redis 7.4 checks it).
        assert foo.call("EVAL", "#!lua\nreturn redis.call('get', 'foo')", 1, near).startswith(
            b"-ERR Script attempted to access keys that do not hash to the same slot script: ")
        assert foo.call("EVAL", "return redis.call('get', 'foo')", 1, near) == b"$3\r\nbar\r\n"
        # Functions: the same rules, and no-cluster refuses to run.
        foo.call("FUNCTION", "LOAD", "#!lua name=c\n"
                 f"redis.register_function('two', function() {script} end)\n"
                 f"redis.register_function{{function_name='two_ok', callback=function() {script} "
                 "end, flags={'allow-cross-slot-keys'}}\n"
                 "redis.register_function{function_name='nc', callback=function() return 1 end, "
                 "flags={'no-cluster'}}")
        assert foo.call("FCALL", "two", 0).startswith(
            b"-ERR Script attempted to access keys that do not hash to the same slot script: ")
        assert foo.call("FCALL", "two_ok", 0) == b"$2\r\nOK\r\n"
        assert foo.call("FCALL", "nc", 0) == (
            b"-ERR Can not run script on cluster, 'no-cluster' flag is set.\r\n")
        assert foo.call("EVAL", "#!lua flags=no-cluster\nreturn 1", 0) == (
            b"-ERR Can not run script on cluster, 'no-cluster' flag is set.\r\n")
    finally:
        for conn in conns:
            conn.close()


# -- MONITOR and client-side caching -------------------------------------------------------------

_MONITOR_HEAD = re.compile(rb"^\+\d+\.\d{6} \[(\d+) ([^\]]+)\] ")


def _drain_monitor(conn: RawClient) -> list[bytes]:
    """The lines before the monitor's own ECHO, time and peer address (not ``lua``) masked."""
    conn.send("ECHO", "end-of-monitor")
    out: list[bytes] = []
    while True:
        reply = conn.read_reply()
        if reply == b"$14\r\nend-of-monitor\r\n":
            conn.read_reply()
            return out
        out.append(_MONITOR_HEAD.sub(
            lambda m: b"+<time> [%s %s] " % (m[1], m[2] if m[2] == b"lua" else b"<addr>"),
            reply))


def test_monitor_shows_the_script_command_then_its_commands_as_lua(pair: Pair) -> None:
    run(pair, ("FUNCTION", "LOAD", "#!lua name=m\nredis.register_function('f', "
                                   "function(keys) return redis.call('incr', keys[1]) end)"))
    monitor = pair.connect_extra()
    try:
        for conn in (monitor.ref, monitor.ours):
            assert conn.call("MONITOR") == b"+OK\r\n"
        sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        run(pair,
            ("EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])",
             1, "k", "v"),
            ("EVALSHA", sha, 0), ("EVALSHA", "short", 0), ("SCRIPT", "LOAD", "return 1"),
            ("EVALSHA", sha, 0), ("EVAL_RO", "return redis.call('get', 'k')", 0),
            ("FCALL", "f", 1, "n"), ("FCALL_RO", "f", 1, "n"), ("FCALL", "nosuch", 0),
            ("EVAL", "return redis.pcall('auth', 'x')", 0))
        assert _drain_monitor(monitor.ours) == _drain_monitor(monitor.ref)
    finally:
        monitor.close()


@pytest.mark.redis_version("7.2")
def test_a_scripts_reads_are_tracked_for_its_caller(pair: Pair) -> None:
    # Redis 7.2 remembers the keys of the commands a script runs for the tracking caller
    # (7.0 remembered the script command's declared keys instead), never EVAL_RO's own.
    if pair.resp == 2:
        pytest.skip("RESP3 pushes carry the invalidations")
    reader = pair.connect_extra().ours
    try:
        reader.call("CLIENT", "TRACKING", "on")
        reader.call("EVAL", "return redis.call('get', 'read-by-script')", 1, "declared")
        reader.call("EVAL_RO", "return 1", 1, "declared-ro")
        for key in ("declared", "declared-ro", "read-by-script"):
            pair.ours.call("SET", key, "1")
        assert reader.call("PING") == (
            b">2\r\n$10\r\ninvalidate\r\n*1\r\n$14\r\nread-by-script\r\n")
        assert reader.read_reply() == b"+PONG\r\n"
    finally:
        reader.close()


def test_sort_of_a_set_in_a_script_does_not_depend_on_its_order(pair: Pair) -> None:
    # BY a pattern without '*' means "do not sort"; for a set in a script Redis sorts it
    # ALPHA all the same, so the script's result is the same everywhere.
    run(pair, ("SADD", "s", *[f"m{i}" for i in range(40)]), ("SADD", "small", "b", "a", "c"),
        ("RPUSH", "l", "b", "a", "c"),
        ("EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort')", 1, "s"),
        ("EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort', 'desc')", 1, "small"),
        ("EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort', 'limit', 1, 2)", 1, "s"),
        ("EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort')", 1, "l"))


def test_blocking_list_and_sorted_set_commands_never_block_in_scripts(pair: Pair) -> None:
    # Run without blocking: what is there is popped, an empty key answers the timeout's null.
    # (BLMPOP and BZMPOP only: 7.0 refuses the older blocking pops in scripts; Redis 7.2
    # allows them, see the test below.)
    run(pair, ("RPUSH", "l", "a"), ("ZADD", "z", 1, "m"),
        *[("EVAL", f"return redis.call({call})", 0) for call in (
            "'blmpop', 0, 1, 'none', 'left'", "'blmpop', 0, 1, 'l', 'left'",
            "'bzmpop', 0, 1, 'z', 'min'", "'bzmpop', 0, 1, 'z', 'min'")])


@pytest.mark.redis_version("7.2")
def test_blocking_pops_run_in_scripts_since_redis_7_2(pair: Pair) -> None:
    """BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BZPOPMIN and BZPOPMAX lost noscript in Redis 7.2: in
    a script they pop what is there or answer the timeout's null at once."""
    ours = pair.ours
    ours.call("RPUSH", "l", "a")
    ours.call("ZADD", "z", 1, "m")
    nil = b"$-1\r\n" if pair.resp == 2 else b"_\r\n"
    expected = [
        ("'blpop', 'l', 0", b"*2\r\n$1\r\nl\r\n$1\r\na\r\n"),
        ("'blpop', 'l', 0", nil),
        ("'brpop', 'none', 1", nil),
        ("'brpoplpush', 'none', 'dst', 0", nil),
        ("'blmove', 'none', 'dst', 'left', 'right', 0", nil),
        ("'bzpopmin', 'z', 0", b"*3\r\n$1\r\nz\r\n$1\r\nm\r\n$1\r\n1\r\n"),
        ("'bzpopmax', 'z', 0", nil),
    ]
    for call, reply in expected:
        assert ours.call("EVAL", f"return redis.call({call})", 0) == reply, call
    assert ours.call("EVAL", "redis.setresp(3) return redis.call('blpop', 'none', 0)", 0) == nil
