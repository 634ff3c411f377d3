"""Per-key access fields behind OBJECT IDLETIME and OBJECT FREQ, against a controlled clock."""

from __future__ import annotations

from resplite.engine.clock import Clock
from resplite.store.keyspace import LFU_INIT_VAL, Keyspace


def make(policy: str = "noeviction") -> tuple[Keyspace, Clock]:
    clock = Clock()
    clock.freeze()
    clock.set(1_900_000_000_000)
    ks = Keyspace(2, clock)
    clock.add_listener(ks.tick)  # as the server wires it: jumps refresh the cached access clock
    ks.configure_access(policy)
    return ks, clock


def test_idle_time_grows_with_the_clock_and_reads_reset_it() -> None:
    ks, clock = make()
    db = ks[0]
    db.set(b"k", b"v")
    assert db.idle_ms(b"k") == 0
    clock.advance(5_000)
    assert db.idle_ms(b"k") == 5_000
    db.peek(b"k")  # TYPE, EXISTS, TTL, OBJECT do not count as an access
    db.contains(b"k")
    assert db.idle_ms(b"k") == 5_000
    db.get(b"k")
    assert db.idle_ms(b"k") == 0
    clock.advance(2_500)
    assert db.idle_ms(b"k") == 2_000  # the access clock has one-second resolution
    db.touch(b"k")
    assert db.idle_ms(b"k") == 0


def test_writes_reset_idle_time_and_moves_keep_it() -> None:
    ks, clock = make()
    db = ks[0]
    db.set(b"a", b"1")
    clock.advance(10_000)
    db.set(b"a", b"2")
    assert db.idle_ms(b"a") == 0
    db.set(b"b", b"1")
    clock.advance(3_000)
    moved = db.take(b"b")
    assert moved is not None
    ks[1].put(b"b", moved[0], moved[1], moved[2])
    assert ks[1].idle_ms(b"b") == 3_000


def test_deleted_and_expired_keys_leave_no_access_field() -> None:
    ks, clock = make()
    db = ks[0]
    db.set(b"a", b"1")
    db.set(b"b", b"1")
    db.set_expire(b"b", clock.time_ms() + 10)
    db.delete(b"a")
    clock.advance(20)
    assert db.get(b"b") is None
    assert db.access == {}
    db.set(b"c", b"1")
    db.flush()
    assert db.access == {}


def test_lfu_counter_starts_at_five_and_grows_surely_below_it() -> None:
    ks, _ = make("allkeys-lfu")
    db = ks[0]
    db.set(b"k", b"v")
    assert db.frequency(b"k") == LFU_INIT_VAL
    db.get(b"k")
    assert db.frequency(b"k") == LFU_INIT_VAL + 1
    for _ in range(2000):
        db.get(b"k")
    # logarithmic: thousands of hits move an 8-bit counter only a little
    assert LFU_INIT_VAL + 1 < db.frequency(b"k") < 40


def test_lfu_counter_decays_one_per_decay_period() -> None:
    ks, clock = make("volatile-lfu")
    db = ks[0]
    db.set(b"k", b"v")
    clock.advance(3 * 60_000)
    assert db.frequency(b"k") == LFU_INIT_VAL - 3
    clock.advance(60 * 60_000)
    assert db.frequency(b"k") == 0
    db.get(b"k")  # below the initial value an access always counts
    assert db.frequency(b"k") == 1
    ks.configure_access("allkeys-lfu", decay_time=0)
    clock.advance(10 * 60_000)
    assert db.frequency(b"k") == 1


def test_overwrite_under_lfu_keeps_the_counter_and_counts_the_write() -> None:
    ks, _ = make("allkeys-lfu")
    db = ks[0]
    db.set(b"k", b"v")
    db.set(b"k", b"w")  # the write's own lookup is an access
    assert db.frequency(b"k") == LFU_INIT_VAL + 1
    db.get(b"k")
    db.set(b"k", b"x", looked_up=True)  # already counted by the read
    assert db.frequency(b"k") in (LFU_INIT_VAL + 1, LFU_INIT_VAL + 2)


def test_keys_stamped_in_one_tick_share_one_access_object() -> None:
    """The access table holds the clock's one int object per tick, not a copy per key (a
    compiled build keeps the clock unboxed, and boxing it per store cost 32 bytes a key)."""
    ks, clock = make()
    db = ks[0]
    db.set(b"a", b"1")
    db.add(b"b", b"2")
    db.set_signalled(b"c", b"3")
    assert db.add_strings([b"d", b"e"], [b"4", b"5"])
    db.get(b"a")
    db.read(b"b")
    db.touch(b"c")
    stamps = [db.access[key] for key in (b"a", b"b", b"c", b"d", b"e")]
    assert stamps[0] > 256  # beyond CPython's cached small ints
    assert all(stamp is stamps[0] for stamp in stamps)
    clock.advance(1_000)
    db.get(b"a")
    assert db.access[b"a"] == stamps[0] + 1 and db.access[b"a"] is not stamps[0]
    assert db.idle_ms(b"b") == 1_000
