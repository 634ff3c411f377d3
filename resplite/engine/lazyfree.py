"""Freeing large values after the reply, as Redis's lazy free does in a background thread.

Dropping the last reference to a hash of a million fields runs a million deallocations in
the thread that drops it, inside the command that deleted it. UNLINK, DEL under
``lazyfree-lazy-user-del``, and FLUSHALL / FLUSHDB with ASYNC or under
``lazyfree-lazy-user-flush`` hand such a value to :meth:`LazyFree.defer` instead: the command
answers at once and the value is released by a callback the scheduler runs once the event
loop has written the replies, so the client that asked (and everyone pipelined behind it)
does not wait for the freeing. Python has one interpreter lock, so the work is moved in time,
not onto another core.

Redis frees lazily only what costs more than ``LAZYFREE_THRESHOLD`` (64) elements to free;
:func:`free_effort` estimates the same: a string costs 1, a container one per element. INFO
reports ``lazyfree_pending_objects`` (values waiting) and ``lazyfreed_objects`` (released so
far; a lazily flushed database counts its keys, as Redis does).

Invariant: ``pending`` is released in full by one callback; a state without timers (unit
tests) releases at the next :meth:`release` call, which the server cron also makes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resplite.engine.scheduler import Scheduler, TimerHandle

LAZYFREE_THRESHOLD = 64


def free_effort(value: Any) -> int:
    """How many allocations freeing ``value`` takes, roughly (Redis's lazyfreeGetFreeEffort)."""
    if isinstance(value, (bytes, bytearray)):
        return 1
    try:
        return len(value)
    except TypeError:
        return 1


class LazyFree:
    __slots__ = ("_scheduler", "_timer", "freed", "pending", "pending_count")

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._timer: TimerHandle | None = None
        self.pending: list[Any] = []
        self.pending_count = 0  # objects (keys, for a flushed database) waiting
        self.freed = 0

    def defer(self, value: Any, objects: int = 1) -> None:
        """Release ``value`` after the current replies; ``objects`` is what it counts as."""
        self.pending.append(value)
        self.pending_count += objects
        if self._timer is None:
            self._timer = self._scheduler.call_later(0, self.release)

    def maybe_defer(self, value: Any) -> bool:
        """Defer ``value`` if it is worth it (see :data:`LAZYFREE_THRESHOLD`)."""
        if free_effort(value) > LAZYFREE_THRESHOLD:
            self.defer(value)
            return True
        return False

    def release(self) -> None:
        """Drop every pending value now."""
        self._timer = None
        if self.pending:
            self.pending.clear()
            self.freed += self.pending_count
            self.pending_count = 0
