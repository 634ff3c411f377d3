"""The eviction pool (``resplite/engine/evict.py``) on an in-process server, clock frozen.

A pool holds the best candidates sampled so far, each once; with a deterministic clock, LRU
takes the keys idle longest first; under the limit nothing is evicted.
"""

from __future__ import annotations

from typing import Any

from resplite.commands import command_table
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.evict import POOL_SIZE
from resplite.engine.state import ServerState

T0 = 1_700_000_000_000


def engine() -> tuple[ServerState, Client, Clock]:
    clock = Clock()
    clock.freeze()
    clock.set(T0)
    state = ServerState(Config(), clock, table=command_table())
    return state, Client(state, 1, None), clock


def call(state: ServerState, client: Client, *args: str | int) -> Any:
    return state.dispatcher.execute(client, [str(a).encode() for a in args])


def test_the_pool_keeps_the_best_candidates_each_once() -> None:
    state, client, clock = engine()
    for i in range(40):
        call(state, client, "SET", f"k{i}", "v")
        clock.advance(1000)  # the LRU clock's resolution: one second per key
    evictor = state.evictor
    # 40 samples of 40 keys: every key, and a second round draws them all again.
    assert evictor._best_key("allkeys-lru", False, 40) == (0, b"k0")
    assert evictor._best_key("allkeys-lru", False, 40) == (0, b"k0")
    # The pool holds the next 15 keys idle longest, each once.
    assert len(evictor.pool) == POOL_SIZE - 1
    assert evictor.pooled == {(index, key) for _, index, key in evictor.pool}
    assert sorted(key for _, _, key in evictor.pool) == sorted(
        f"k{i}".encode() for i in range(1, POOL_SIZE))
    assert [score for score, _, _ in evictor.pool] == sorted(
        score for score, _, _ in evictor.pool)


def test_lru_evicts_the_keys_idle_longest_first() -> None:
    state, client, clock = engine()
    call(state, client, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    call(state, client, "CONFIG", "SET", "maxmemory-samples", "64")
    for i in range(20):
        call(state, client, "SET", f"k{i}", "x" * 1000)
        clock.advance(1000)
    used = state.used_memory()
    # Room for about 15 of the 20 values: the oldest ones go.
    call(state, client, "CONFIG", "SET", "maxmemory", str(used - 5 * 1100))
    assert call(state, client, "SET", "new", "y") is not None
    left = {i for i in range(20) if state.keyspace.dbs[0].peek(f"k{i}".encode()) is not None}
    assert left and min(left) > max(set(range(20)) - left)


def test_nothing_is_evicted_under_the_limit() -> None:
    state, client, _ = engine()
    call(state, client, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    for i in range(50):
        call(state, client, "SET", f"k{i}", "v")
    call(state, client, "CONFIG", "SET", "maxmemory", str(state.used_memory() + 10**6))
    for i in range(50, 100):
        call(state, client, "SET", f"k{i}", "v")
    assert state.evictor.evicted_keys == 0
    assert len(state.keyspace.dbs[0].data) == 100


def test_random_eviction_takes_the_databases_in_turn() -> None:
    state, client, _ = engine()
    call(state, client, "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    for db in (0, 3, 5):
        call(state, client, "SELECT", db)
        for i in range(10):
            call(state, client, "SET", f"k{i}", "x" * 1000)
    evictor = state.evictor
    taken = []
    for _ in range(7):
        chosen = evictor._random_key(False)
        assert chosen is not None
        taken.append(chosen[0])
        state.evict(*chosen)
    assert taken == [3, 5, 0, 3, 5, 0, 3]
    # A database emptied meanwhile is passed over.
    call(state, client, "SELECT", 5)
    call(state, client, "FLUSHDB")
    assert [evictor._random_key(False)[0] for _ in range(3)] == [0, 3, 0]  # type: ignore[index]
