"""Lazy free: large values deleted by UNLINK (and DEL / FLUSH under lazyfree-lazy-user-*),
expired (lazyfree-lazy-expire), deleted or overwritten as a side effect
(lazyfree-lazy-server-del) or evicted (lazyfree-lazy-eviction) are released after the
reply; INFO counts them. Database compaction (activerehashing)."""

from __future__ import annotations

import sys

import pytest

from resplite.commands import command_table
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.lazyfree import LAZYFREE_THRESHOLD, LazyFree, free_effort
from resplite.engine.scheduler import ManualScheduler
from resplite.engine.state import ServerState
from resplite.store.hash import Hash
from resplite.store.keyspace import Database


def test_only_values_costlier_than_the_threshold_wait() -> None:
    scheduler = ManualScheduler()
    lazy = LazyFree(scheduler)
    big = Hash()
    for i in range(LAZYFREE_THRESHOLD + 1):
        big.set(b"f%d" % i, b"v")
    assert free_effort(b"x" * 10_000) == 1 and free_effort(big) == LAZYFREE_THRESHOLD + 1
    assert not lazy.maybe_defer(b"small")
    assert lazy.maybe_defer(big)
    assert lazy.pending_count == 1 and lazy.freed == 0
    scheduler.run_due(0)
    assert lazy.pending_count == 0 and lazy.freed == 1 and lazy.pending == []


def test_a_flushed_database_counts_its_keys() -> None:
    lazy = LazyFree(ManualScheduler())
    db = Database(0, Clock())
    for i in range(10):
        db.set(b"k%d" % i, b"v")
    keys = db.flush(detach=True)
    assert len(db) == 0 and db.detached is not None and len(db.detached[0]) == 10
    lazy.defer(db.detached, objects=len(keys))
    lazy.release()
    assert lazy.freed == 10


def test_compaction_gives_back_the_table_of_a_shrunken_database() -> None:
    db = Database(0, Clock())
    for i in range(20_000):
        db.set(b"k%d" % i, b"v%d" % i)
    db.set_expire(b"k19999", db.clock.time_ms() + 60_000)
    for i in range(19_990):
        db.delete(b"k%d" % i)
    before = sys.getsizeof(db.data)
    assert db.compact()
    assert sys.getsizeof(db.data) * 100 < before
    assert list(db.data) == [b"k%d" % i for i in range(19_990, 20_000)]
    assert db.get(b"k19995") == b"v19995" and db.get_expire(b"k19999") is not None
    assert not db.compact()  # nothing left to give back


def _state() -> tuple[ServerState, Client, Clock]:
    clock = Clock()
    clock.freeze()
    state = ServerState(Config(), clock, table=command_table())
    return state, Client(state, 1, None), clock


def _big_hash(state: ServerState, client: Client, key: bytes) -> None:
    fields = [b"f%d" % (i // 2) if i % 2 == 0 else b"v" for i in range(2 * LAZYFREE_THRESHOLD + 2)]
    state.dispatcher.execute(client, [b"HSET", key, *fields])


@pytest.mark.parametrize("lazy", [False, True])
def test_lazy_expire_frees_an_expired_value_after_the_replies(lazy: bool) -> None:
    state, client, clock = _state()
    state.config.set("lazyfree-lazy-expire", "yes" if lazy else "no")
    _big_hash(state, client, b"h")
    state.dispatcher.execute(client, [b"PEXPIRE", b"h", b"10"])
    state.dispatcher.execute(client, [b"SET", b"s", b"v", b"PX", b"10"])
    clock.advance(11)
    assert state.dispatcher.execute(client, [b"EXISTS", b"h", b"s"]) == 0
    # Only the hash is worth deferring; the string goes at once either way.
    assert state.lazyfree.pending_count == (1 if lazy else 0)
    state.lazyfree.release()
    assert state.lazyfree.freed == (1 if lazy else 0)


@pytest.mark.parametrize("lazy", [False, True])
def test_lazy_server_del_covers_overwrites_and_implicit_deletes_not_del(lazy: bool) -> None:
    state, client, _ = _state()
    state.config.set("lazyfree-lazy-server-del", "yes" if lazy else "no")
    execute = state.dispatcher.execute
    _big_hash(state, client, b"h")
    execute(client, [b"SET", b"h", b"string now"])  # the hash is overwritten
    _big_hash(state, client, b"src")
    _big_hash(state, client, b"dst")
    execute(client, [b"RENAME", b"src", b"dst"])  # the old dst goes
    assert state.lazyfree.pending_count == (2 if lazy else 0)
    _big_hash(state, client, b"d")
    execute(client, [b"DEL", b"d"])  # DEL follows lazyfree-lazy-user-del only
    assert state.lazyfree.pending_count == (2 if lazy else 0)
    assert execute(client, [b"HGETALL", b"dst"]) != []


@pytest.mark.parametrize("lazy", [False, True])
def test_lazy_eviction_defers_evicted_values(lazy: bool) -> None:
    state, client, _ = _state()
    execute = state.dispatcher.execute
    state.config.set("lazyfree-lazy-eviction", "yes" if lazy else "no")
    state.config.set("maxmemory-policy", "allkeys-random")
    for n in range(4):
        _big_hash(state, client, b"h%d" % n)
    state.config.set("maxmemory", str(state.used_memory() - 100))
    execute(client, [b"SET", b"x", b"y"])
    assert state.evictor.evicted_keys >= 1
    assert state.lazyfree.pending_count == (state.evictor.evicted_keys if lazy else 0)
