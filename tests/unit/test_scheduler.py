"""The engine's timer seam: deadline timers aimed through a scheduler the test drives."""

from __future__ import annotations

from resplite.commands import command_table
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.scheduler import DeadlineTimer, ManualScheduler
from resplite.engine.state import ServerState


def test_deadline_timer_aims_once_and_reaims() -> None:
    clock = Clock()
    scheduler = ManualScheduler()
    fired: list[int] = []
    timer = DeadlineTimer(clock, scheduler, lambda: fired.append(1))
    now = clock.time_ms()
    timer.aim(now + 5_000)
    timer.aim(now + 1_000)  # replaces the first aim
    assert scheduler.armed == 1
    assert scheduler.pending[-1][0] <= 1.0
    assert scheduler.run_due(1.0) == 1 and fired == [1]
    timer.aim(None)
    assert scheduler.armed == 0


def test_deadline_timer_is_idle_while_the_clock_is_frozen() -> None:
    clock = Clock()
    clock.freeze()
    scheduler = ManualScheduler()
    timer = DeadlineTimer(clock, scheduler, lambda: None)
    timer.aim(clock.time_ms() + 10)
    assert scheduler.armed == 0  # a frozen clock reaches deadlines only through jumps


def test_client_pause_and_blocking_timers_go_through_the_state_scheduler() -> None:
    scheduler = ManualScheduler()
    state = ServerState(Config(), table=command_table(), scheduler=scheduler)
    state.pause.pause(state.clock.time_ms() + 60_000, pause_all=True)
    assert scheduler.armed == 1
    state.pause.unpause()
    assert scheduler.armed == 0 and not state.pause.active
