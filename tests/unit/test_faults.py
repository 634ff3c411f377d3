"""Fault rules: matching by command glob and client name, counted calls, the dispatcher's
fast path left while a rule is set and restored when none is."""

from __future__ import annotations

from resplite.commands import command_table
from resplite.engine import gates
from resplite.engine.config import Config
from resplite.engine.faults import Faults
from resplite.engine.state import ServerState


def test_rules_match_by_glob_container_and_client_name() -> None:
    faults = Faults()
    by_name = faults.add(b"XREADGROUP", "error", error="LOADING x", client=b"worker-*")
    any_xgroup = faults.add(b"xgroup", "drop")
    assert faults.take("xreadgroup", None, b"worker-1") is by_name
    assert faults.take("xreadgroup", None, b"admin") is None
    assert faults.take("xgroup|create", "xgroup", b"") is any_xgroup
    assert faults.take("resplite.fault|list", "resplite.fault", b"") is None
    assert by_name.hits == 1 and any_xgroup.hits == 1


def test_counted_rules_go_after_their_last_call_and_ids_are_not_reused() -> None:
    seen: list[bool] = []
    faults = Faults()
    faults.on_change = seen.append
    first = faults.add(b"g*", "error", error="ERR boom", times=2)
    assert seen == [True]
    assert faults.take("get", None, b"") is first and first.remaining == 1
    assert faults.take("getdel", None, b"") is first
    assert faults.rules == [] and seen == [True, False]
    second = faults.add(b"*", "delay", delay_ms=5)
    assert second.id == first.id + 1
    assert faults.clear([99]) == 0 and faults.clear() == 1 and seen[-1] is False


def test_the_dispatcher_fast_path_is_left_only_while_a_fault_is_set() -> None:
    state = ServerState(Config(), table=command_table())
    assert not state.gates & gates.FAULTS
    state.faults.add(b"get", "error", error="ERR x")
    assert state.gates & gates.FAULTS
    state.faults.clear()
    assert not state.gates & gates.FAULTS
