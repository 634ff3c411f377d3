"""A script's reply as lua/reply.lua writes it: the C writer of arrays (``_reply.c``) gives
the bytes the Lua code gives, element for element, in every pair of protocols; and a kill
still ends a long array while the C writer writes it (the compat suite compares the whole
with Redis: tests/compat/test_scripting.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from lupa import lua51

from resplite.engine.scripting.vm import _source, reply_encoder

# Lua expressions of script values (each made anew in a fresh state).
VALUES = [
    "{}",
    "{1, 2, 3}",
    "{0/0, -(0/0), 1e300, -1e300, 2^63, -2^63, 2^63 - 1024, -2^63 - 4096, -0.5, -0.0, 0.5,"
    " 1.9, -1.9, 1/0, -1/0, 9007199254740993, 4.9e-324, -4.9e-324, 2^31, -2^31 - 1, 2^53}",
    "{'a' .. string.char(0) .. 'b', 'x' .. string.char(13, 10) .. 'y', '', string.rep('z', 70000)}",
    "{true, false, {true, {false}}, 1}",
    "{1, 2, nil, 4}",
    "{1, 2, 3, [5] = 5}",
    "{[2] = 2}",
    "{a = 1}",
    "{1, {err = 'bad'}, {ok = 'fine'}, {double = 2.5}, {big_number = '9'}, {map = {x = 1}},"
    " {set = {y = true}}, {verbatim_string = {format = 'txt', string = 'hi'}}, 'tail'}",
    "{function() end, 1}",
    "{1, coroutine.create(function() end), 3}",
    "{{1, 'a', {true, {false, {0/0, {}}}}}, {}, 'end'}",
    "(function() local t = {} for i = 1, 40000 do t[i] = i * 3 end t[16384] = {1, 'a'}"
    " t[16385] = {ok = 'x'} t[32768] = false t[32769] = {err = 'e'} return t end)()",
    "(function() local t = {} for i = 1, 20000 do t[i] = string.rep('x', i % 7) end"
    " t[16390] = nil return t end)()",
    "(function() local t = {} for i = 1, 16384 do t[i] = i end return t end)()",
    "(function() local t = {} for i = 1, 16385 do t[i] = 'v' .. i end return t end)()",
    "(function() local s = string.rep('y', 300000) local t = {} for i = 1, 12 do t[i] = s end"
    " t[13] = 1 return t end)()",
    # Past Lua's stack: the arrays deep down are written by the Lua code in both.
    "(function() local t = {1, 'x', true} for i = 1, 9000 do t = {t, i} end return t end)()",
]


def _writer(native: bool, hook: Callable[[], None] | None = None,
            runtime: Any = None) -> tuple[Any, Any]:
    """(runtime, reply writer), with or without the C writer of arrays."""
    if runtime is None:
        runtime = lua51.LuaRuntime(encoding=None)
    py = runtime.table()
    if native:
        encode_array = reply_encoder(runtime)
        if encode_array is None:
            pytest.skip("the C writer of arrays is not built")
        py[b"encode_array"] = encode_array
    writer = runtime.execute(_source("reply"))(runtime.table(), py, hook or (lambda: None))
    return runtime, writer


def _write(native: bool, value: str, cresp: int, sresp: int) -> tuple[bytes, Any]:
    runtime, writer = _writer(native)
    data, errors = writer(runtime.eval(value), cresp, sresp)
    return data, None if errors is None else list(errors.values())


@pytest.mark.parametrize(("cresp", "sresp"), [(2, 2), (2, 3), (3, 2), (3, 3)])
@pytest.mark.parametrize("value", VALUES)
def test_the_c_writer_writes_what_the_lua_code_writes(value: str, cresp: int, sresp: int) -> None:
    native = _write(True, value, cresp, sresp)
    assert native == _write(False, value, cresp, sresp)


def test_a_kill_ends_the_c_writer_within_a_slice() -> None:
    calls = 0

    def killed() -> bool:
        nonlocal calls
        calls += 1
        return calls == 3

    runtime = lua51.LuaRuntime(encoding=None)
    # As the sandbox's hook does once a kill is in force: the kill's error table is raised.
    hook = runtime.eval("function(killed) return function() "
                        "if killed() then error({err = 'killed'}) end end end")(killed)
    runtime, writer = _writer(True, hook, runtime)
    table = runtime.eval("(function() local t = {} for i = 1, 1000000 do t[i] = i end "
                         "return t end)()")
    with pytest.raises(lua51.LuaError):
        writer(table, 2, 2)
    assert calls == 3  # checked every 16,384 elements: the third check ended the writing


def test_the_hook_runs_as_often_while_rows_are_written() -> None:
    # Many short arrays (each one C call) count together towards the next check.
    calls = 0

    def hook() -> None:
        nonlocal calls
        calls += 1

    runtime, writer = _writer(True, hook)
    table = runtime.eval("(function() local row = {} for i = 1, 1000 do row[i] = 'v' .. i end "
                         "local t = {} for i = 1, 1000 do t[i] = row end return t end)()")
    data, _ = writer(table, 2, 2)
    assert data.startswith(b"*1000\r\n*1000\r\n$2\r\nv1\r\n")
    assert calls == 1_000_000 // 16384
