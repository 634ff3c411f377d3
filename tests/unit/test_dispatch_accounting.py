"""What the dispatcher's fast path records per command, checked without a socket.

The fast path (a plain command in a common spelling) and the general path (other spellings,
containers, EXEC's queued commands) must leave the same statistics behind: commandstats
calls and time, INFO total_commands_processed, the slow log, rdb_changes_since_last_save.
"""

from __future__ import annotations

import pytest

from resplite.commands import command_table
from resplite.engine.client import Client
from resplite.engine.config import Config
from resplite.engine.dispatch import Dispatcher
from resplite.engine.info import fields, render
from resplite.engine.state import ServerState
from resplite.protocol.replies import OK, ErrorReply

Setup = tuple[ServerState, Dispatcher, Client]


@pytest.fixture
def setup() -> Setup:
    state = ServerState(Config(), table=command_table())
    dispatcher = state.dispatcher
    return state, dispatcher, Client(state, 1, None)


def _stats(state: ServerState) -> dict[str, str]:
    return fields(render(state, ["stats", "commandstats"]))


def test_fast_and_general_paths_count_the_same(setup: Setup) -> None:
    state, dispatcher, client = setup
    assert dispatcher.execute(client, [b"SET", b"k", b"v"]) is OK  # fast path
    assert dispatcher.execute(client, [b"Set", b"k", b"w"]) is OK  # other spelling
    assert dispatcher.execute(client, [b"get", b"k"]) == b"w"
    assert dispatcher.execute(client, [b"config", b"get", b"hz"]) == {b"hz": b"10"}
    info = _stats(state)
    assert info["cmdstat_set"].startswith("calls=2,")
    assert info["cmdstat_get"].startswith("calls=1,")
    assert info["cmdstat_config|get"].startswith("calls=1,")
    assert info["total_commands_processed"] == "4"
    assert state.dirty == 2
    assert client.last_command == "config|get"


def test_rejections_are_not_commands_processed(setup: Setup) -> None:
    state, dispatcher, client = setup
    reply = dispatcher.execute(client, [b"GET"])
    assert reply == ErrorReply("ERR wrong number of arguments for 'get' command")
    info = _stats(state)
    assert info["cmdstat_get"] == ("calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,"
                                   "failed_calls=0")
    assert info["total_commands_processed"] == "0"


def test_commands_inside_exec_count_once_each(setup: Setup) -> None:
    state, dispatcher, client = setup
    dispatcher.execute(client, [b"MULTI"])
    dispatcher.execute(client, [b"SET", b"a", b"1"])
    dispatcher.execute(client, [b"INCR", b"a"])
    assert dispatcher.execute(client, [b"EXEC"]) == [OK, 2]
    info = _stats(state)
    # MULTI, SET, INCR, EXEC: the queued commands count when EXEC runs them, as in Redis.
    assert info["total_commands_processed"] == "4"
    assert info["cmdstat_set"].startswith("calls=1,")
    assert info["cmdstat_incr"].startswith("calls=1,")


def test_resetstat_restarts_the_total(setup: Setup) -> None:
    state, dispatcher, client = setup
    for _ in range(3):
        dispatcher.execute(client, [b"PING"])
    assert dispatcher.execute(client, [b"CONFIG", b"RESETSTAT"]) is OK
    info = _stats(state)
    # The RESETSTAT itself is counted after the reset, as Redis counts it.
    assert info["total_commands_processed"] == "1"
    assert "cmdstat_ping" not in info


def test_time_below_a_microsecond_adds_up(setup: Setup) -> None:
    state, dispatcher, client = setup
    for _ in range(50):
        dispatcher.execute(client, [b"PING"])
    stats = state.command_stats["ping"]
    # Kept in nanoseconds: fifty fast calls add up to their real time, where truncating
    # each call to whole microseconds would drop most of it.
    assert stats.ns > 0
    assert stats.usec == stats.ns // 1000


def test_slow_log_threshold_zero_logs_all_and_negative_logs_none(setup: Setup) -> None:
    state, dispatcher, client = setup
    state.config.set("slowlog-log-slower-than", "0")
    dispatcher.execute(client, [b"PING"])
    dispatcher.execute(client, [b"GET", b"k"])
    assert [entry.argv[0] for entry in state.slowlog.entries] == [b"GET", b"PING"]
    state.config.set("slowlog-log-slower-than", "-1")
    dispatcher.execute(client, [b"PING"])
    assert len(state.slowlog.entries) == 2


def test_handler_exception_is_one_error_reply_and_a_failed_call(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    state, dispatcher, client = setup
    spec = dispatcher.table[b"ping"]
    original = spec.handler

    def broken(client: Client, argv: list[bytes]) -> object:
        raise RuntimeError("boom")

    object.__setattr__(spec, "handler", broken)  # the spec is frozen: patched for this test
    try:
        reply = dispatcher.execute(client, [b"PING"])
    finally:
        object.__setattr__(spec, "handler", original)
    assert reply == ErrorReply("ERR internal error while running 'ping'")
    assert "boom" in caplog.text
    info = _stats(state)
    assert info["cmdstat_ping"].endswith("rejected_calls=0,failed_calls=1")
    assert info["total_error_replies"] == "1"
