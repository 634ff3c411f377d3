"""The engine's side of a load that serves clients (no sockets): what the dispatcher answers
while ``loading`` is set, and how a load calls the shell's hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from resplite.commands import command_table
from resplite.engine import errors
from resplite.engine.client import Client
from resplite.engine.config import Config
from resplite.engine.persistence import LoadingStopped
from resplite.engine.state import ServerState
from resplite.protocol.replies import ErrorReply, Verbatim


def make_state(folder: Path, **directives: str) -> ServerState:
    config = Config()
    config.set("dir", str(folder), at_startup=True)
    for name, value in directives.items():
        config.set(name.replace("_", "-"), value, at_startup=True)
    return ServerState(config, table=command_table())


def _info(reply: object) -> bytes:
    assert isinstance(reply, Verbatim)
    return reply.text


def test_requests_served_during_a_load_get_loading_unless_flagged(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    client = Client(state, 1, None)
    dispatcher = state.dispatcher
    state.persistence.start_loading(100)
    for argv in ([b"PING"], [b"GET", b"k"], [b"SET", b"k", b"v"], [b"DBSIZE"]):
        reply = dispatcher.execute_while_busy(client, argv)
        assert isinstance(reply, ErrorReply) and reply.message == errors.LOADING, argv
    assert dispatcher.execute_while_busy(client, [b"ECHO", b"x"]) == b"x"
    text = _info(dispatcher.execute_while_busy(client, [b"INFO", b"persistence"]))
    assert b"loading:1\r\n" in text and b"loading_total_bytes:100\r\n" in text
    # The load's own writes (an append-only file replayed) take the normal path.
    assert dispatcher.execute(Client(state, -1, None), [b"SET", b"k", b"v"]) is not None
    assert state.keyspace[0].data[b"k"] == b"v"
    state.persistence.stop_loading()
    assert dispatcher.execute_while_busy(client, [b"GET", b"k"]) != errors.LOADING
    text = _info(dispatcher.execute_while_busy(client, [b"INFO", b"persistence"]))
    assert b"loading:0\r\n" in text and b"loading_total_bytes" not in text


def _snapshot(folder: Path, keys: int) -> None:
    state = make_state(folder)
    client = Client(state, 1, None)
    for i in range(keys):
        state.dispatcher.execute(client, [b"SET", b"k%d" % i, b"v%d" % i])
    assert state.persistence.save()


def test_a_load_calls_the_shell_between_keys_and_reports_progress(tmp_path: Path) -> None:
    _snapshot(tmp_path, 50)
    # 2 ms per key: the load lasts at least 100 ms, far past the interval between turns.
    state = make_state(tmp_path, key_load_delay="2000")
    persistence = state.persistence
    seen: list[tuple[bool, int]] = []

    def serve() -> None:
        seen.append((persistence.loading, len(state.keyspace[0])))

    persistence.serve_while_loading = serve
    persistence.load_at_start()
    assert seen, "the load never let clients in"
    assert all(loading for loading, _ in seen)
    assert [n for _, n in seen] == sorted(n for _, n in seen)
    assert not persistence.loading and len(state.keyspace[0]) == 50
    assert persistence.keys_loaded == 50
    assert persistence.loading_loaded_bytes == (tmp_path / "dump.rdb").stat().st_size


def test_a_load_stopped_by_the_shell_leaves_loading_off(tmp_path: Path) -> None:
    _snapshot(tmp_path, 50)
    state = make_state(tmp_path, key_load_delay="2000")

    def stop() -> None:
        raise LoadingStopped

    state.persistence.serve_while_loading = stop
    with pytest.raises(LoadingStopped):
        state.persistence.load_at_start()
    assert not state.persistence.loading
    assert len(state.keyspace[0]) < 50
