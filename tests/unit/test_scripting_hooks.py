"""The Lua count hook behind BUSY and SCRIPT KILL, on a bare Lua state: it reaches every
coroutine a script makes (Lua 5.1 keeps a hook per thread), scripts cannot take it away,
and a kill leaves no coroutine hooked on every line for the next run."""

from __future__ import annotations

from typing import Any

import pytest

from resplite.engine.scripting.vm import LuaVM

KILLED = b"ERR killed"
FAIL = 1  # sandbox.lua's code for an error raised by the script


class Hook:
    """The engine's side of the hook: counts its calls; raises once told to."""

    def __init__(self) -> None:
        self.calls = 0
        self.kill_after: int | None = None

    def __call__(self) -> bytes | None:
        self.calls += 1
        if self.kill_after is not None and self.calls > self.kill_after:
            return KILLED
        return None


def _vm(mode: str, hook: Hook, registered: dict[bytes, Any]) -> LuaVM:
    def register(name: bytes, callback: Any, description: Any, *flags: bytes) -> None:
        registered[name] = callback

    helpers: dict[str, Any] = {
        name: (lambda *args: None)
        for name in ("command", "setresp", "set_repl", "log", "sha1hex", "acl_check", "rand",
                     "srand")
    }
    helpers.update(hook=hook, register_function=register, version=b"7.4.0", version_num=0)
    return LuaVM(mode, helpers, 0)


def _eval(code: str, hook: Hook) -> Any:
    vm = _vm("eval", hook, {})
    assert vm.compile is not None
    return vm.run(vm.compile(code.encode()), 2, 0)


# Loops that end by themselves (some 40 million instructions), so that a hook that never
# comes shows as a script that finished rather than as a test that never does.
SPIN = "for i = 1, 1e7 do end"
LOOPS = {
    "wrap": f"coroutine.wrap(function() {SPIN} end)() return 'done'",
    "create": f"local co = coroutine.create(function() {SPIN} end)\n"
              "local ok, e = coroutine.resume(co) if not ok then error(e) end return 'done'",
    "nested": f"coroutine.wrap(function() coroutine.wrap(function()\n  {SPIN} end)() end)()\n"
              "return 'done'",
    "pcall inside": "coroutine.wrap(function() for j = 1, 3 do\n"
                    f"  pcall(function() {SPIN} end) end end)() return 'done'",
}


@pytest.mark.parametrize("code", list(LOOPS.values()), ids=list(LOOPS))
def test_a_loop_in_a_coroutine_reaches_the_hook_and_is_killed(code: str) -> None:
    hook = Hook()
    hook.kill_after = 3
    result = _eval(code, hook)
    assert result[0] == FAIL
    assert result[1] == KILLED


def test_coroutines_cannot_reach_the_hook_or_debug() -> None:
    hook = Hook()
    result = _eval("return coroutine.wrap(function() return debug.sethook() end)()", hook)
    assert result[0] == FAIL
    assert b"nonexistent global variable 'debug'" in result[1]


def test_a_kill_leaves_suspended_coroutines_counting_again() -> None:
    hook = Hook()
    registered: dict[bytes, Any] = {}
    vm = _vm("function", hook, registered)
    assert vm.load is not None
    # The coroutine catches the kill and yields on the same line (no new line to raise on),
    # so it is left suspended with the every-line hook, as Redis leaves it.
    assert vm.load(
        b"local co\n"
        b"redis.register_function('spin', function()\n"
        b"  co = coroutine.wrap(function()\n"
        b"    pcall(function() while true do end end) coroutine.yield(1)\n"
        b"    for i = 1, 20000 do end\n"
        b"    coroutine.yield(2)\n"
        b"  end)\n"
        b"  return co()\n"
        b"end)\n"
        b"redis.register_function('step', function() return co() end)\n"
    ) is True
    hook.kill_after = hook.calls + 2
    assert vm.run(registered[b"spin"], 2, 0) == 1
    # The next run counts instructions again: the coroutine's 20,000 turns (some 80,000
    # instructions, 20,000 line events) reach the hook at most twice, not on every line.
    hook.kill_after = None
    before = hook.calls
    assert vm.run(registered[b"step"], 2, 0) == 2
    assert hook.calls - before <= 2
