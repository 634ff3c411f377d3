"""The slow log: the most recent commands whose execution took at least a threshold.

The dispatcher times every command; when the time reaches ``slowlog-log-slower-than``
microseconds (a negative threshold turns logging off, zero logs everything) it calls
:meth:`SlowLog.record`. At most ``slowlog-max-len`` entries are kept, newest first, as Redis
keeps them. An entry stores what SLOWLOG GET shows: a growing id, the Unix time in seconds
(from the server's clock), the duration in microseconds, the arguments (at most 32, each cut
to 128 bytes, with Redis's notes on what was left out), the client's address and name, and
(Redis 8.10) the command's whole argument count.

The threshold lives in :attr:`SlowLog.threshold_us`, kept in step with CONFIG SET by a hook,
and in ``trigger_ns``, the nanosecond duration from which a command is logged (beyond any
duration while logging is off), so the dispatcher's check costs one comparison.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, NamedTuple

from resplite.engine.monitor import redact

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.clock import Clock
    from resplite.engine.config import Config

_MAX_ARGS = 32
# Commands whose arguments may carry passwords (see resplite.engine.monitor.redact).
_SECRET_BEARING = frozenset({b"migrate", b"hello"})
_MAX_ARG_LEN = 128


class SlowLogEntry(NamedTuple):
    id: int
    time_s: int
    duration_us: int
    argv: list[bytes]
    addr: bytes
    name: bytes
    argc: int  # the command's whole argument count, however many ``argv`` shows (8.10)


def _shown_args(argv: list[bytes]) -> list[bytes]:
    """The arguments as the slow log keeps them: a bounded number, each bounded in length."""
    count = min(len(argv), _MAX_ARGS)
    shown: list[bytes] = []
    for i in range(count):
        if count != len(argv) and i == count - 1:
            shown.append(b"... (%d more arguments)" % (len(argv) - count + 1))
            break
        arg = argv[i]
        if len(arg) > _MAX_ARG_LEN:
            arg = arg[:_MAX_ARG_LEN] + b"... (%d more bytes)" % (len(arg) - _MAX_ARG_LEN)
        shown.append(bytes(arg))
    return shown


def _trigger_ns(threshold_us: int) -> int:
    # A negative threshold turns logging off: no duration reaches 2**63 ns (292 years).
    return threshold_us * 1000 if threshold_us >= 0 else 1 << 63


class SlowLog:
    __slots__ = ("clock", "entries", "max_len", "next_id", "threshold_us", "trigger_ns")

    def __init__(self, config: Config, clock: Clock) -> None:
        self.clock = clock
        self.entries: deque[SlowLogEntry] = deque()
        self.next_id = 0
        self.threshold_us: int = config["slowlog-log-slower-than"]
        self.trigger_ns = _trigger_ns(self.threshold_us)
        self.max_len: int = config["slowlog-max-len"]
        config.on_change("slowlog-log-slower-than", self._set_threshold)
        config.on_change("slowlog-max-len", self._set_max_len)

    def _set_threshold(self, name: str, value: Any) -> None:
        self.threshold_us = int(value)
        self.trigger_ns = _trigger_ns(self.threshold_us)

    def _set_max_len(self, name: str, value: Any) -> None:
        self.max_len = int(value)
        while len(self.entries) > self.max_len:
            self.entries.pop()

    def record(self, client: Client, argv: list[bytes], duration_us: int) -> None:
        name = argv[0].lower() if argv else b""
        if name in _SECRET_BEARING:
            # Secrets are shown as MONITOR shows them: Redis redacts them in the command
            # vector both read.
            argv = list(redact(name.decode(), argv))
        entry = SlowLogEntry(
            self.next_id,
            self.clock.time_ms() // 1000,
            duration_us,
            _shown_args(argv),
            client.addr.encode(),
            client.name,
            len(argv),
        )
        self.next_id += 1
        self.entries.appendleft(entry)
        while len(self.entries) > self.max_len:
            self.entries.pop()

    def latest(self, count: int) -> list[SlowLogEntry]:
        """Up to ``count`` newest entries (all of them when ``count`` is negative)."""
        if count < 0 or count >= len(self.entries):
            return list(self.entries)
        return [self.entries[i] for i in range(count)]

    def reset(self) -> None:
        self.entries.clear()
