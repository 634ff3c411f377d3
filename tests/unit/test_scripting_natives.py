"""The machine arithmetic behind scripting: the FUNCTION DUMP payload, number formatting,
Redis's random generator, compiled-chunk patching, the clock pin, and the engine without a
server."""

from __future__ import annotations

import pytest

from resplite.commands import command_table
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.scripting import natives
from resplite.engine.scripting.functions import dump_payload, read_payload, verify_payload
from resplite.engine.state import ServerState
from resplite.protocol.replies import ErrorReply, Raw, Status


def test_function_payload_round_trip() -> None:
    class Lib:
        def __init__(self, code: bytes) -> None:
            self.code = code

    codes = [b"#!lua name=a\n" + b"redis.register_function('f', function() end)" * 3,
             b"#!lua name=b\nx"]
    payload = dump_payload([Lib(c) for c in codes], 12)  # type: ignore[misc]
    assert payload[-10:-8] == b"\x0c\x00"  # the RDB version given
    assert verify_payload(payload, 12) and verify_payload(payload, 13)
    assert not verify_payload(payload, 11)  # a Redis that cannot read it refuses it
    assert read_payload(payload) == codes
    assert not verify_payload(payload[:-1] + bytes([payload[-1] ^ 1]), 12)
    assert not verify_payload(b"short", 12)
    no_checksum = payload[:-8] + bytes(8)
    assert verify_payload(no_checksum, 12, zero_crc=True)
    assert not verify_payload(no_checksum, 12)


@pytest.mark.parametrize(("value", "text"), [
    (3.14, b"3.14"), (0.1, b"0.1"), (-0.0, b"0"), (1e20, b"1e+20"), (1.5e-7, b"1.5e-7"),
    (123456.789, b"123456.789"), (1e21, b"1e+21"), (0.000123, b"0.000123"),
    (float("inf"), b"inf"), (float("-inf"), b"-inf"), (1e-300, b"1e-300"),
    (2.5, b"2.5"), (100.5, b"100.5"), (1234567.0, b"1234567"),
])
def test_fractions_given_to_redis_call_as_fpconv_dtoa(value: float, text: bytes) -> None:
    assert natives.argument_bytes(value) == text


def test_arguments_given_to_redis_call() -> None:
    assert natives.argument_bytes(42) == b"42"
    assert natives.argument_bytes(-7) == b"-7"
    assert natives.argument_bytes(3.0) == b"3"
    assert natives.argument_bytes(0.5) == b"0.5"
    assert natives.argument_bytes(2.0**62) == b"4611686018427387904"
    # Past 2^62 a double is written with its shortest digits, then zeros (fpconv_dtoa).
    assert natives.argument_bytes(2.0**63) == b"9223372036854776000"


def test_lrand48_is_redis_generator() -> None:
    rng = natives.Lrand48()
    rng.seed(7)
    # math.randomseed(7) then math.random(1000) twice gives 267 and 683 in Redis 7.0.
    draws = [int(rng.random() * 1000) + 1 for _ in range(2)]
    assert draws == [267, 683]


def test_c_conversions_follow_x86_64() -> None:
    assert natives.c_int64(float("nan")) == -(1 << 63)
    assert natives.c_int64(1e30) == -(1 << 63)
    assert natives.c_int64(-3.9) == -3
    assert natives.c_uint64(2.0**64) == 0
    assert natives.c_uint64(2.0**63) == 1 << 63
    assert natives.c_int32(2.0**32 + 5) == 5


def test_tail_calls_become_plain_calls() -> None:
    from lupa import lua51

    lua = lua51.LuaRuntime(encoding=None)
    dump = lua.eval("string.dump(loadstring('local function f() return g() end return f()'))")
    patched = natives.without_tail_calls(dump)
    assert patched != dump
    assert len(patched) == len(dump)
    ops = [int.from_bytes(patched[i:i + 4], "little") & 0x3F for i in range(0, len(patched), 4)]
    assert ops  # the chunk still loads and runs the same way:
    run = lua.eval("function(code) local g = function() return 7 end "
                   "local f = loadstring(code) return f end")
    assert run(patched) is not None


def test_clock_pin_holds_readings_and_leaves_the_offsets() -> None:
    clock = Clock()
    assert clock.pin()
    first = clock.time_ns()
    assert clock.time_ns() == first
    assert not clock.frozen
    assert not clock.pin()  # already pinned
    clock.advance(1000)  # a jump while pinned moves both
    assert clock.time_ns() == first + 1_000_000_000
    clock.unpin()
    assert clock.time_ns() >= first + 1_000_000_000
    clock.freeze()
    assert not clock.pin()  # a frozen clock is left alone


@pytest.fixture
def state() -> ServerState:
    return ServerState(Config(), table=command_table())


def _eval(state: ServerState, body: bytes, *args: bytes, nkeys: int = 0) -> object:
    client = Client(state, 1, None)
    return state.dispatcher.execute(client, [b"EVAL", body, b"%d" % nkeys, *args])


def test_engine_runs_scripts_without_a_server(state: ServerState) -> None:
    assert _eval(state, b"return redis.call('set', KEYS[1], ARGV[1])", b"k", b"v", nkeys=1) \
        == Status("OK")
    assert _eval(state, b"return redis.call('get', 'k')") == b"v"
    assert _eval(state, b"return {1, 'a'}") == Raw(b"*2\r\n:1\r\n$1\r\na\r\n")
    assert _eval(state, b"return 3.9") == 3
    reply = _eval(state, b"return redis.call('nosuch')")
    assert isinstance(reply, ErrorReply)
    assert reply.message.startswith("ERR Unknown Redis command called from script script: ")
    assert state.scripting.running is None


def test_script_time_is_the_start_time(state: ServerState) -> None:
    state.clock.freeze()
    now = state.clock.time_ms()
    state.clock.resume()
    assert _eval(state, b"local a = redis.call('time') for i = 1, 1e6 do end "
                        b"local b = redis.call('time') return a[2] == b[2] and 1 or 0") == 1
    assert state.clock.time_ms() >= now


def test_flush_gives_a_fresh_state(state: ServerState) -> None:
    assert _eval(state, b"cjson.encode_max_depth(3) return cjson.encode_max_depth()") == 3
    assert _eval(state, b"return cjson.encode_max_depth()") == 3  # kept, as in Redis
    state.dispatcher.execute(Client(state, 1, None), [b"SCRIPT", b"FLUSH"])
    assert _eval(state, b"return cjson.encode_max_depth()") == 1000
