"""The keyspace: lazy and active expiry against an injected clock, and change signals."""

from __future__ import annotations

from resplite.engine.clock import Clock
from resplite.store.keyspace import Database, Keyspace


def make_db() -> tuple[Database, Clock, list[tuple[int, bytes]]]:
    clock = Clock()
    clock.freeze()
    signals: list[tuple[int, bytes]] = []
    db = Database(0, clock, lambda d, k: signals.append((d, k)))
    return db, clock, signals


def test_lookup_deletes_a_key_whose_time_has_passed_and_signals_it() -> None:
    db, clock, signals = make_db()
    db.set(b"k", b"v")
    db.set_expire(b"k", clock.time_ms() + 100)
    assert db.get(b"k") == b"v"
    clock.advance(100)
    # Redis's rule: a key lives while now <= its time.
    assert db.get(b"k") == b"v" and not db.is_expired(b"k")
    assert db.get_expire(b"k") == clock.time_ms()
    assert signals == []
    clock.advance(1)
    assert db.is_expired(b"k")
    assert db.get(b"k") is None
    assert b"k" not in db.data and b"k" not in db.expires
    assert signals == [(0, b"k")]
    assert db.expired_keys == 1


def test_set_clears_the_expiry_unless_asked_to_keep_it() -> None:
    db, clock, _ = make_db()
    db.set(b"a", b"1")
    db.set_expire(b"a", clock.time_ms() + 10)
    db.set(b"a", b"2", keep_ttl=True)
    assert db.get_expire(b"a") is not None
    db.set(b"a", b"3")
    assert db.get_expire(b"a") is None


def test_active_expiry_frees_keys_nobody_reads_and_skips_stale_heap_entries() -> None:
    db, clock, _ = make_db()
    now = clock.time_ms()
    for i in range(1000):
        db.set(b"k%d" % i, b"v")
        db.set_expire(b"k%d" % i, now + (10 if i % 2 else 10_000))
    db.set_expire(b"k1", now + 50_000)  # a later EXPIRE makes the first heap entry stale
    clock.advance(10)
    assert db.active_expire() == 0  # at their exact time the keys still live
    clock.advance(1)
    deleted = 0
    while (n := db.active_expire(budget=100)) > 0:
        deleted += n
    assert deleted == 499
    assert b"k1" in db.data and len(db) == 501


def test_persist_survives_the_expiry_cycle() -> None:
    db, clock, _ = make_db()
    db.set(b"k", b"v")
    db.set_expire(b"k", clock.time_ms() + 5)
    assert db.persist(b"k")
    clock.advance(10)
    assert db.active_expire() == 0
    assert db.get(b"k") == b"v"


def test_swap_exchanges_contents_and_expiries() -> None:
    clock = Clock()
    ks = Keyspace(2, clock)
    ks[0].set(b"a", b"1")
    ks[0].set_expire(b"a", clock.time_ms() + 60_000)
    ks[1].set(b"b", b"2")
    ks.swap(0, 1)
    assert ks[0].get(b"b") == b"2" and ks[1].get(b"a") == b"1"
    assert ks[1].get_expire(b"a") is not None and ks[0].get_expire(b"b") is None


def test_every_path_keeps_a_key_through_its_own_millisecond() -> None:
    db, clock, _ = make_db()
    when = clock.time_ms() + 50
    for name in (b"get", b"read", b"peek", b"contains", b"live", b"active"):
        db.set(name, b"v")
        db.set_expire(name, when)
    clock.advance(50)
    assert db.active_expire() == 0
    assert db.get(b"get") == b"v" and db.read(b"read") == b"v"
    assert db.peek(b"peek") == b"v" and db.contains(b"contains")
    assert set(db.live_keys()) == {b"get", b"read", b"peek", b"contains", b"live", b"active"}
    clock.advance(1)
    assert list(db.live_keys()) == []
    assert db.active_expire() == 6 and len(db) == 0


def test_present_keys_are_all_a_delete_can_act_on() -> None:
    """DEL visits only :meth:`Database.present` keys: deleting those leaves the database,
    the signals and the expiry count exactly as deleting every named key does."""
    outcomes = []
    for fast in (False, True):
        db, clock, signals = make_db()
        for key in (b"a", b"b", b"c"):
            db.set(key, b"v")
        db.set_expire(b"b", clock.time_ms() + 10)
        clock.advance(11)  # b is expired but still stored
        named = [b"x", b"a", b"b", b"a", b"y", b"c"]
        keys = list(db.present(named)) if fast else named
        deleted = [k for k in keys if db.delete(k)]
        outcomes.append((deleted, dict(db.data), signals, db.expired_keys, db.used))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == [b"a", b"c"]


def test_a_refreshed_ttl_leaves_a_bounded_timer_index() -> None:
    """A TTL set again and again (a session kept alive) files a new time each time; the
    cron drops the stale entries once they outnumber live keys two to one."""
    clock = Clock()
    clock.freeze()
    keyspace = Keyspace(1, clock)
    db = keyspace[0]
    now = clock.time_ms()
    for i in range(100):
        db.set(b"k%d" % i, b"v")
    for step in range(200):
        for i in range(100):
            db.set_expire(b"k%d" % i, now + 60_000 + step)
        if step == 5:
            keyspace.cron()  # 600 entries: not worth a rebuild yet
            assert db.timer_entries == 600
    assert db.timer_entries == 20_000
    keyspace.cron()
    assert db.timer_entries == len(db.expires) == 100
    # Only each key's latest time counts: nothing goes before it.
    clock.advance(60_000 + 199)
    assert db.active_expire(budget=10_000) == 0
    clock.advance(1)
    assert db.active_expire(budget=10_000) == 100


def test_expire_keys_reaches_at_most_its_limit_and_resumes_inside_a_millisecond() -> None:
    """Keys sharing an expiry time are taken part by part: a limit smaller than the keys of
    one millisecond leaves the rest for the next call, none lost and none taken twice."""
    db, clock, signals = make_db()
    when = clock.time_ms() + 5
    for i in range(50):
        db.set(b"k%d" % i, b"v")
        db.set_expire(b"k%d" % i, when)
    clock.advance(6)
    counts = []
    while db.keys_due(clock.time_ms()):
        reached, expired = db.expire_keys(7, clock.time_ms())
        assert reached <= 7
        counts.append(expired)
    assert sum(counts) == 50 and len(db) == 0
    assert sorted(k for _, k in signals) == sorted(b"k%d" % i for i in range(50))
    assert db.used == 0 and db.timer_entries == 0


def test_volatile_samples_are_keys_with_an_expiry() -> None:
    db, clock, _ = make_db()
    for i in range(200):
        db.set(b"k%d" % i, b"v")
        if i % 2:
            db.set_expire(b"k%d" % i, clock.time_ms() + 1000)
    assert set(db.sample_keys(50, volatile=True)) <= set(db.expires)
    for i in range(1, 200, 4):
        db.persist(b"k%d" % i)
    for _ in range(20):
        picked = db.sample_keys(10, volatile=True)
        assert picked and set(picked) <= set(db.expires)


def test_sampled_figures_are_those_of_the_keys_drawn() -> None:
    """sample_access draws live keys only (stale sampler entries are dropped) and reports
    with each the figure eviction scores it by: idle time, LFU counter or expiry."""
    from resplite.store.keyspace import SAMPLE_EXPIRY, SAMPLE_FREQUENCY, SAMPLE_IDLE

    db, clock, _ = make_db()
    for i in range(300):
        db.set(b"k%d" % i, b"v")
        if i % 3 == 0:
            db.set_expire(b"k%d" % i, clock.time_ms() + 1000 * (i + 1))
    db.sample_keys(5, False)  # the samplers exist from here on
    db.sample_keys(5, True)
    clock.advance(7_000)
    db.tick()
    for i in range(0, 300, 2):
        db.read(b"k%d" % i)  # half the keys were used just now
    for i in range(0, 300, 5):
        db.delete(b"k%d" % i)  # and some are gone since they were listed
    for _ in range(30):
        keys, idle = db.sample_access(10, False, SAMPLE_IDLE)
        assert len(keys) == 10 and all(key in db.data for key in keys)
        assert idle == [db.idle_ms(key) for key in keys]
        assert set(idle) == {0, 7000} or len(set(idle)) == 1
        keys, when = db.sample_access(10, True, SAMPLE_EXPIRY)
        assert keys and all(key in db.expires for key in keys)
        assert when == [db.expires[key] for key in keys]
        keys, idle = db.sample_access(10, True, SAMPLE_IDLE)
        assert all(key in db.expires for key in keys)
        assert idle == [db.idle_ms(key) for key in keys]
    assert len(db.sampler or []) < 300  # stale entries met were dropped
    small, _, _ = make_db()
    small.set(b"a", b"1")
    small.set(b"b", b"2")
    keys, idle = small.sample_access(5, False, SAMPLE_IDLE)
    assert sorted(keys) == [b"a", b"b"] and idle == [0, 0]
    small.lfu = True
    keys, freq = small.sample_access(5, False, SAMPLE_FREQUENCY)
    assert freq == [small.frequency(key) for key in keys]


def test_add_strings_stores_as_adding_one_by_one() -> None:
    """A snapshot's run of string keys stored at once leaves the same keys, access fields
    and memory figure as adding them one by one; a key already there, a key given twice or
    a database whose writes need per-key bookkeeping refuse the run, storing nothing."""
    keys = [b"k%d" % i for i in range(50)]
    values = [b"v" * i for i in range(50)]
    one, _, _ = make_db()
    for key, value in zip(keys, values, strict=True):
        one.add(key, value)
    bulk, _, _ = make_db()
    assert bulk.add_strings(keys, values)
    assert bulk.data == one.data and list(bulk.data) == list(one.data)
    assert bulk.access == one.access
    assert bulk.used == one.used and bulk.metered
    assert not bulk.add_strings([b"new", b"k3"], [b"x", b"y"])  # k3 is there
    assert not bulk.add_strings([b"a", b"a"], [b"x", b"y"])  # twice
    assert b"new" not in bulk.data and b"a" not in bulk.data and bulk.used == one.used
    clock = Clock()
    lfu = Keyspace(1, clock)
    lfu.configure_access("allkeys-lfu")
    assert not lfu[0].add_strings([b"x"], [b"y"]) and not lfu[0].data
    lfu.configure_access("noeviction")
    assert lfu[0].add_strings([b"x"], [b"y"]) and lfu[0].data == {b"x": b"y"}
