"""Batch read: XRANGE over an id range, split into partitions of about equal entry counts.

The driver (``partitions``) checks each key, finds the first and last entry of the requested
range, and asks :mod:`resplite.spark.planning` for split ids. Each partition covers
``[start, split)`` of one stream and is read on an executor in pages of ``pageSize`` entries; a
page after the first starts just past the last id seen (an exclusive ``(id`` range), so no entry
is read twice and entries deleted meanwhile are simply skipped. The last partition of a stream
ends at the requested end id, inclusive.

Reads never modify the stream; a partition that fails is simply read again. A missing or empty
stream reads as no rows (a missing one with a warning), so a pipeline's first run, before any
producer has written, succeeds with an empty result.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceReader, InputPartition
from redis.exceptions import ResponseError

from resplite.spark.connection import StreamServer, configure_logging, text
from resplite.spark.ids import StreamId
from resplite.spark.options import StreamsOptions
from resplite.spark.planning import RUN_LENGTH, plan_ranges
from resplite.spark.schema import ArrowBuilder

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

log = logging.getLogger("resplite.spark")

#: Partitions made per this many entries when option numPartitions is not given.
ENTRIES_PER_PARTITION = 200_000


@dataclass(frozen=True, slots=True)
class RangePartition(InputPartition):
    """Entries of ``stream`` from ``start`` (inclusive) to ``end`` (an XRANGE end argument)."""

    stream: str
    start: str
    end: str


class StreamsBatchReader(DataSourceReader):
    def __init__(self, options: StreamsOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        configure_logging(options.log_level)

    def partitions(self) -> Sequence[InputPartition]:
        opts = self.options
        with StreamServer(opts) as server:
            present = [k for k in opts.streams if server.check_stream(k, missing_ok=True)]
            for key in set(opts.streams) - set(present):
                log.warning("stream key %r does not exist; reading it as empty", key)
            sizes = {key: int(server.call("XLEN", key)) for key in present}
            shares = _share_partitions(sizes, opts.num_partitions)
            partitions: list[InputPartition] = []
            for key in present:
                partitions.extend(_plan_stream(server, key, opts, shares[key]))
        return partitions

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, RangePartition):
            # partitions() found nothing to read (every stream missing or empty): Spark
            # still runs one task, with a placeholder partition, which reads no rows.
            return
        builder = ArrowBuilder(self.schema)
        page = self.options.page_size
        with StreamServer(self.options) as server:
            start = partition.start
            while True:
                try:
                    entries = server.call(
                        "XRANGE", partition.stream, start, partition.end, "COUNT", page
                    )
                except ResponseError as exc:
                    raise server.explain(exc, partition.stream) from None
                if not entries:
                    return
                yield builder.build(partition.stream, entries)
                if len(entries) < page:
                    return
                start = "(" + text(entries[-1][0])


def _share_partitions(sizes: dict[str, int], wanted: int | None) -> dict[str, int]:
    """Spread the partition count over streams in proportion to their lengths (>= 1 each)."""
    total = sum(sizes.values())
    if not sizes:
        return {}
    if wanted is None:
        wanted = max(len(sizes), math.ceil(total / ENTRIES_PER_PARTITION))
    if total == 0:
        return dict.fromkeys(sizes, 1)
    return {key: max(1, round(wanted * size / total)) for key, size in sizes.items()}


def _plan_stream(
    server: StreamServer, key: str, opts: StreamsOptions, parts: int
) -> list[RangePartition]:
    first_reply = _xrange(server, key, opts.start_id, opts.end_id)
    if not first_reply:
        return []
    last_reply = server.call("XREVRANGE", key, opts.end_id, opts.start_id, "COUNT", 1)
    first = StreamId.parse(first_reply[0][0])
    last = StreamId.parse(last_reply[0][0])
    if parts <= 1 or first == last:
        return [RangePartition(key, opts.start_id, opts.end_id)]

    def probe(points: Sequence[StreamId]) -> list[Sequence[StreamId]]:
        replies = server.pipeline(
            ("XRANGE", key, str(p), str(last), "COUNT", RUN_LENGTH) for p in points
        )
        return [[StreamId.parse(e[0]) for e in _ok(reply, server, key)] for reply in replies]

    def top_seq(ms_values: Sequence[int]) -> dict[int, int]:
        replies = server.pipeline(
            ("XREVRANGE", key, f"{ms}-18446744073709551615", f"{ms}-0", "COUNT", 1)
            for ms in ms_values
        )
        return {
            ms: StreamId.parse(_ok(reply, server, key)[0][0]).seq
            for ms, reply in zip(ms_values, replies, strict=True)
        }

    whole = opts.start_id == "-" and opts.end_id == "+"
    total = int(server.call("XLEN", key)) if whole else None
    splits, estimate = plan_ranges(first, last, parts, probe, top_seq, total)
    bounds = [opts.start_id, *(str(s) for s in splits)]
    ends = [f"({s}" for s in splits] + [opts.end_id]
    log.info(
        "stream %r: %d partitions over %s .. %s (about %d entries)",
        key, len(bounds), first, last, round(estimate),
    )  # fmt: skip
    return [RangePartition(key, lo, hi) for lo, hi in zip(bounds, ends, strict=True)]


def _xrange(server: StreamServer, key: str, start: str, end: str) -> Any:
    try:
        return server.call("XRANGE", key, start, end, "COUNT", 1)
    except ResponseError as exc:
        raise server.explain(exc, key) from None


def _ok(reply: Any, server: StreamServer, key: str) -> Any:
    if isinstance(reply, ResponseError):
        raise server.explain(reply, key)
    return reply
