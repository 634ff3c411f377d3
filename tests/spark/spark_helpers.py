"""Shared pieces of the Spark tests: producing entries, reading outputs, and fault injection.

The fault-injecting UDFs run inside Spark's Python workers. They decide what to do from the task
context (batch, partition, attempt) and leave files in a directory the test owns, so the test can
both wait for an event (a task reached the gate) and prove that it happened (a worker was
killed). Waiting is always for an event with a deadline, never a fixed sleep.
"""

from __future__ import annotations

import os
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

FORMAT = "redis-streams"


def produce(client: Any, key: str, count: int, *, start: int = 0, chunk: int = 2000) -> list[str]:
    """XADD ``count`` entries (``n`` = sequence number, ``k`` = n mod 7); returns their ids."""
    ids: list[str] = []
    for base in range(start, start + count, chunk):
        pipe = client.pipeline(transaction=False)
        for n in range(base, min(base + chunk, start + count)):
            pipe.xadd(key, {"n": str(n), "k": f"k{n % 7}"})
        ids += [i.decode() if isinstance(i, bytes) else i for i in pipe.execute()]
    return ids


@dataclass(frozen=True)
class Tally:
    """Entries in versus out: what was lost, what came out more than once."""

    expected: int
    out: int
    lost: int
    duplicates: int

    def line(self) -> str:
        return f"in={self.expected} out={self.out} lost={self.lost} duplicates={self.duplicates}"


def tally(expected: Iterable[str], seen: Iterable[str]) -> Tally:
    want = set(expected)
    counts = Counter(seen)
    out = sum(counts.values())
    return Tally(
        expected=len(want),
        out=out,
        lost=len(want - set(counts)),
        duplicates=sum(c - 1 for c in counts.values() if c > 1),
    )


def pending_count(client: Any, key: str, group: str) -> int:
    return int(client.xpending(key, group)["pending"])


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def killer_udf(
    flag_dir: Path,
    after_rows: int,
    *,
    url: str | None = None,
    key: str = "",
    min_len: int = 0,
    pad: int = 0,
) -> Callable[[str], str]:
    """Kills its Python worker once, in partition 0's first attempt, at row ``after_rows``.

    With ``url``, it first waits until stream ``key`` holds ``min_len`` entries, so that a
    writer downstream in the same task has provably written part of its rows when it dies.
    ``pad`` left-pads values with zeros: the worker sends results back through a 64 KB buffer,
    and small values would all still sit in it, never reaching the writer, when it dies.
    """
    flags = str(flag_dir)
    seen: dict[tuple[int, int, int], int] = {}

    def kill_once(value: str) -> str:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is not None and ctx.partitionId() == 0 and ctx.attemptNumber() == 0:
            slot = (ctx.stageId(), ctx.partitionId(), ctx.attemptNumber())
            seen[slot] = seen.get(slot, 0) + 1
            marker = os.path.join(flags, "killed")
            if seen[slot] >= after_rows and not os.path.exists(marker):
                if url is not None:
                    import redis

                    client = redis.Redis.from_url(url)
                    deadline = time.monotonic() + 60
                    while client.xlen(key) < min_len and time.monotonic() < deadline:
                        time.sleep(0.02)
                with open(marker, "w") as f:
                    f.write(f"stage {ctx.stageId()} row {seen[slot]}")
                os._exit(1)
        return value.zfill(pad)

    return kill_once


def gate_udf(flag_dir: Path, batch: str, after_rows: int) -> Callable[[str], str]:
    """Blocks partition 0 of micro-batch ``batch`` at row ``after_rows`` while ``gate`` exists.

    It writes ``entered`` when it starts waiting, and gives up after two minutes so that a
    forgotten gate cannot leave a worker behind.
    """
    flags = str(flag_dir)
    seen: dict[tuple[int, int], int] = {}

    def gate(value: str) -> str:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is None or ctx.partitionId() != 0:
            return value
        if ctx.getLocalProperty("streaming.sql.batchId") != batch:
            return value
        slot = (ctx.stageId(), ctx.attemptNumber())
        seen[slot] = seen.get(slot, 0) + 1
        gate_file = os.path.join(flags, "gate")
        if seen[slot] == after_rows and os.path.exists(gate_file):
            open(os.path.join(flags, "entered"), "w").close()
            deadline = time.monotonic() + 120
            while os.path.exists(gate_file) and time.monotonic() < deadline:
                time.sleep(0.05)
        return value

    return gate


#: Spark's message when a Python process it launched did not connect back in time.
CONNECT_BACK_FAILED = "Python worker failed to connect back"


def _source_started(query: Any) -> bool:
    """Whether the query got past creating its sources' Python runners (or ended)."""
    if not query.isActive:
        return True
    message = str(query.status["message"])
    # "Initializing StreamExecution", then "Initializing sources" (the runners start here),
    # then "Getting offsets from ..." for each trigger.
    return not message.startswith(("Initializing", "Getting offsets"))


def start_stream(writer: Any, attempts: int = 3, checkpoint: Path | None = None) -> Any:
    """``writer.start()``, started again if Spark could not start the source's Python runner.

    A streaming Python data source runs its planning in a Python process the driver launches
    when the query first asks for offsets; Spark 4.3 gives it 10 seconds to connect back
    (hard-coded in PythonWorkerFactory), which a busy machine can miss. The query then stops
    with ``Python worker failed to connect back`` before it read or wrote anything, and is
    started again from the same checkpoint; any other outcome is the test's to see. A sink
    that cannot recover from a checkpoint (memory) refuses one with an ``offsets`` folder, so
    the empty one the failed attempt left in ``checkpoint`` is removed first.
    """
    for attempt in range(1, attempts + 1):
        query = writer.start()
        wait_for(partial(_source_started, query), "the query's sources to start", 300)
        if query.isActive or attempt == attempts:
            return query
        error = query.exception()
        if error is None or CONNECT_BACK_FAILED not in str(error):
            return query
        offsets = checkpoint / "offsets" if checkpoint is not None else None
        if offsets is not None and offsets.is_dir() and not any(offsets.iterdir()):
            offsets.rmdir()
        # Shown in the run's warnings summary: how often the machine was too busy.
        warnings.warn(f"streaming query started again (attempt {attempt + 1}): Spark's "
                      f"Python runner did not connect back in time", stacklevel=2)
    raise AssertionError("unreachable")
