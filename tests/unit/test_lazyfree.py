"""Lazy free: large values deleted by UNLINK (and DEL / FLUSH under lazyfree-lazy-user-*)
are released after the reply; INFO counts them. Database compaction (activerehashing)."""

from __future__ import annotations

import sys

from resplite.engine.clock import Clock
from resplite.engine.lazyfree import LAZYFREE_THRESHOLD, LazyFree, free_effort
from resplite.engine.scheduler import ManualScheduler
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
