"""The controllable clock: both readings move together, and listeners hear every jump."""

from __future__ import annotations

import pytest

from resplite.engine.clock import Clock


def test_frozen_clock_stands_still_and_advances_exactly() -> None:
    clock = Clock()
    clock.freeze()
    wall, mono = clock.time_ms(), clock.monotonic_ms()
    assert clock.time_ms() == wall
    clock.advance(1500)
    assert clock.time_ms() == wall + 1500
    assert clock.monotonic_ms() == mono + 1500


def test_resume_continues_from_the_frozen_reading_without_a_jump() -> None:
    clock = Clock()
    clock.freeze()
    clock.advance(10_000)
    frozen = clock.time_ms()
    clock.resume()
    assert frozen <= clock.time_ms() < frozen + 1000
    assert not clock.frozen


def test_set_moves_wall_time_backwards_but_never_monotonic_time() -> None:
    clock = Clock()
    clock.freeze()
    mono = clock.monotonic_ms()
    clock.set(1_000_000)
    assert clock.time_ms() == 1_000_000
    assert clock.monotonic_ms() == mono


def test_a_running_clock_jumps_as_a_frozen_one_does() -> None:
    clock = Clock()  # running: readings also move by the real time the test takes (< 1 s)
    wall, mono = clock.time_ms(), clock.monotonic_ms()
    clock.advance(3_600_000)
    assert wall + 3_600_000 <= clock.time_ms() < wall + 3_601_000
    assert mono + 3_600_000 <= clock.monotonic_ms() < mono + 3_601_000
    mono = clock.monotonic_ms()
    target = clock.time_ms() + 86_400_000
    clock.set(target)
    assert target <= clock.time_ms() < target + 1000
    assert mono + 86_399_000 < clock.monotonic_ms() < mono + 86_401_000
    mono = clock.monotonic_ms()
    clock.set(1_000_000)  # backwards: the monotonic reading stays
    assert 1_000_000 <= clock.time_ms() < 1_001_000
    assert mono <= clock.monotonic_ms() < mono + 1000


def test_advance_refuses_negative_amounts() -> None:
    clock = Clock()
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_listeners_hear_advance_set_and_resume() -> None:
    clock = Clock()
    heard: list[int] = []
    clock.add_listener(lambda: heard.append(clock.time_ms()))
    clock.freeze()
    clock.advance(5)
    clock.set(2_000_000_000_000)
    clock.resume()
    assert len(heard) == 3
    assert heard[1] == 2_000_000_000_000
