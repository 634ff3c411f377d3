"""HOTKEYS (Redis 8.6): a session that finds the keys costing the most CPU time or traffic.

HOTKEYS START opens a session with the metrics asked for (CPU, NET or both), the number K of
keys to report, an optional DURATION after which it stops by itself and a SAMPLE ratio (each
key of a command is counted with probability 1/ratio). While it runs, the dispatcher hands
every executed command to :meth:`Hotkeys.on_call`: its execution time and its request bytes
are added to the session's totals, and to each key the command names (its key specs, as
COMMAND GETKEYS finds them) that the sample picks. HOTKEYS GET reports the totals, the
process's CPU time used since the start (``getrusage``) and the server's network bytes since
the start, and the top K keys per metric; STOP ends the session and keeps its data; RESET
drops it.

Invariants: ``active`` implies a session exists (``started_ms`` is set); a stopped session's
``ended_ms`` is set; per-key totals only grow while the session is active.

Costs: on_call is O(keys of the command) (a dict update per sampled key); GET sorts the
keys seen, O(n log n). Every key seen is kept (Redis keeps a bounded top-K structure), so a
long session over many distinct keys holds one counter pair per key.
"""

from __future__ import annotations

import random
import resource
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from resplite.engine.keyspecs import command_keys

if TYPE_CHECKING:
    from resplite.engine.clock import Clock
    from resplite.engine.table import CommandSpec

_RNG = random.Random()


def request_size(argv: Sequence[bytes]) -> int:
    """The bytes of ``argv`` as a RESP request (what a client sent for it)."""
    size = 3 + len(str(len(argv)))
    for arg in argv:
        n = len(arg)
        size += 5 + len(str(n)) + n
    return size


class Hotkeys:
    __slots__ = ("active", "all_net", "all_us", "by_cpu", "by_net", "clock", "cpu", "duration_ms",
                 "ended_ms", "k", "net", "net_at_start", "net_at_stop", "on_change",
                 "rusage_at_start", "rusage_at_stop", "sample_ratio", "started_ms", "tracking_ms")

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        # Told when ``active`` changes (the dispatcher watches every call while it is set).
        self.on_change: Callable[[], None] | None = None
        self.active = False
        self.started_ms: int | None = None
        self.ended_ms: int | None = None
        self.cpu = self.net = False
        self.k = 10
        self.duration_ms = 0
        self.sample_ratio = 1
        self.by_cpu: dict[bytes, int] = {}
        self.by_net: dict[bytes, int] = {}
        self.all_us = 0
        self.all_net = 0
        # INFO's hotkeys-cmd-cpu-time: what counting keys cost, in whole milliseconds per
        # command as Redis adds them (so a session of cheap commands shows 0).
        self.tracking_ms = 0
        self.rusage_at_start = (0.0, 0.0)
        self.rusage_at_stop = (0.0, 0.0)
        self.net_at_start = 0
        self.net_at_stop = 0

    @property
    def exists(self) -> bool:
        return self.started_ms is not None

    def start(self, cpu: bool, net: bool, k: int, duration_s: int, sample_ratio: int,
              net_total: int) -> None:
        self.reset()
        self.active = True
        self.cpu, self.net, self.k = cpu, net, k
        self.duration_ms = duration_s * 1000
        self.sample_ratio = sample_ratio
        self.started_ms = self.clock.time_ms()
        self.rusage_at_start = _rusage()
        self.net_at_start = net_total
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def stop(self, net_total: int, at_ms: int | None = None) -> None:
        self.active = False
        self.ended_ms = self.clock.time_ms() if at_ms is None else at_ms
        self.rusage_at_stop = _rusage()
        self.net_at_stop = net_total
        self._changed()

    def reset(self) -> None:
        was_active = self.active
        self.active = False
        self.started_ms = self.ended_ms = None
        self.by_cpu = {}
        self.by_net = {}
        self.all_us = self.all_net = self.tracking_ms = 0
        if was_active:
            self._changed()

    def expire(self, net_total: int) -> None:
        """Stop a session whose DURATION has passed (checked lazily)."""
        if self.active and self.duration_ms and self.started_ms is not None:
            end = self.started_ms + self.duration_ms
            if self.clock.time_ms() >= end:
                self.stop(net_total, end)

    def on_call(self, spec: CommandSpec, argv: list[bytes], elapsed_ns: int,
                net_total: int) -> None:
        """Count one executed command (called by the dispatcher while ``active``)."""
        self.expire(net_total)
        if not self.active:
            return
        us = elapsed_ns // 1000
        size = request_size(argv)
        self.all_us += us
        self.all_net += size
        refs = command_keys(spec, argv) if spec.key_specs else ()
        ratio = self.sample_ratio
        began = time.perf_counter_ns()
        for ref in refs:
            if ratio > 1 and _RNG.random() * ratio >= 1:
                continue
            key = argv[ref.pos]
            if self.cpu:
                self.by_cpu[key] = self.by_cpu.get(key, 0) + us
            if self.net:
                self.by_net[key] = self.by_net.get(key, 0) + size
        self.tracking_ms += (time.perf_counter_ns() - began) // 1_000_000

    def report(self, net_total: int) -> list[tuple[bytes, Any]]:
        """HOTKEYS GET's fields, in Redis's order (the session must exist)."""
        self.expire(net_total)
        assert self.started_ms is not None
        now = self.clock.time_ms()
        end = now if self.active else (self.ended_ms or now)
        user_s, sys_s = _rusage() if self.active else self.rusage_at_stop
        net_now = net_total if self.active else self.net_at_stop
        fields: list[tuple[bytes, Any]] = [
            (b"tracking-active", int(self.active)),
            (b"sample-ratio", self.sample_ratio),
            (b"selected-slots", [[0, 16383]]),
            (b"all-commands-all-slots-us", self.all_us),
            (b"net-bytes-all-commands-all-slots", self.all_net),
            (b"collection-start-time-unix-ms", self.started_ms),
            (b"collection-duration-ms", max(end - self.started_ms, 0)),
        ]
        if self.cpu:
            fields.append((b"total-cpu-time-user-ms",
                           int((user_s - self.rusage_at_start[0]) * 1000)))
            fields.append((b"total-cpu-time-sys-ms",
                           int((sys_s - self.rusage_at_start[1]) * 1000)))
        if self.net:
            fields.append((b"total-net-bytes", max(net_now - self.net_at_start, 0)))
        if self.cpu:
            fields.append((b"by-cpu-time-us", _top(self.by_cpu, self.k)))
        if self.net:
            fields.append((b"by-net-bytes", _top(self.by_net, self.k)))
        return fields


def _top(totals: dict[bytes, int], k: int) -> list[Any]:
    """The ``k`` largest totals as a flat [key, value, ...] list, largest first (ties by
    key, so the order is stable)."""
    ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:k]
    return [x for pair in ranked for x in pair]


def _rusage() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime
