"""Streaming read through a consumer group, at-least-once, with replay of a batch's own entries.

Theory of operation
-------------------
An offset is a small JSON dict::

    {"batch": B, "parts": P, "limit": Q or null, "until": {stream: last id to read}}

``B`` counts micro-batches. Batch ``B`` reads through ``P`` consumers named
``<prefix>-<B>-<p>`` (see :mod:`resplite.spark.groups`); ``until`` records, per stream, the last
entry that existed when the batch was planned, so a batch ends even while producers keep adding;
``limit`` is the row budget when the query has a read limit.

On the driver, per trigger, Spark calls ``latestOffset(start)`` then ``commit(end of the previous
batch)`` then ``partitions(start, end)``:

* ``latestOffset`` returns a new offset when there are undelivered entries, entries of a dead
  reader idle past ``claimMinIdleMs``, or when the previous batch still holds pending entries (a
  batch is acknowledged only when the next one starts; without this an idle stream would leave its
  last batch pending forever). Otherwise it returns ``start`` and Spark runs nothing.
* ``commit(end)`` acknowledges (XACK) what this query's consumers of batches ``<= B`` hold and
  removes those consumers.
* ``partitions`` takes over idle entries of other readers with XAUTOCLAIM into this batch's
  consumers, then hands each task its consumer.

On an executor, a task first reads its consumer's own pending entries (XREADGROUP from id 0),
which is empty on a first attempt and exactly what an earlier attempt received on a retry or a
restart, then new entries (``>``) until its share of ``limit`` or the ``until`` id is reached.
Because acknowledgement waits for Spark's commit, an entry is never acknowledged before the batch
that read it is committed by the sink.

An empty stream gives no batch until entries arrive. With ``createGroup`` (and without
``mkstream``) a stream that does not exist yet is waited for: its group is created by the first
``latestOffset`` that finds the stream, and until then the stream takes no part in batches.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from redis.exceptions import ResponseError

from resplite.spark import groups
from resplite.spark.connection import StreamServer, configure_logging, text
from resplite.spark.ids import StreamId
from resplite.spark.options import StreamsOptions
from resplite.spark.schema import ArrowBuilder

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

log = logging.getLogger("resplite.spark")

#: Partitions per micro-batch when option numPartitions is not given.
DEFAULT_STREAM_PARTITIONS = 2


@dataclass(frozen=True, slots=True)
class GroupPartition(InputPartition):
    """One task of a micro-batch: which consumer to read as, and how far."""

    consumer: str
    streams: tuple[str, ...]
    until: tuple[tuple[str, str], ...]
    quota: int | None


class StreamsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: StreamsOptions, schema: StructType) -> None:
        self.options = options
        self.group = options.require_group()
        self.schema = schema
        configure_logging(options.log_level)
        self._server: StreamServer | None = None
        self._target: dict[str, str] | None = None
        # Streams whose group is known to exist; the others are still awaited (see above).
        self._ready: set[str] = set()

    # -- driver side --------------------------------------------------------------------------

    def _conn(self) -> StreamServer:
        if self._server is None:
            self._server = StreamServer(self.options)
        return self._server

    def initialOffset(self) -> dict:
        server = self._conn()
        for key in self.options.streams:
            self._check_ready(server, key, first=True)
        return {"batch": 0, "parts": 0, "limit": None, "until": {}}

    def _check_ready(self, server: StreamServer, key: str, *, first: bool = False) -> bool:
        """Whether ``key`` has its group, creating it once the stream exists when the options
        ask for that; a stream still missing is waited for (createGroup) or an error."""
        if key in self._ready:
            return True
        opts = self.options
        if opts.create_group and not opts.mkstream and not server.check_stream(
                key, missing_ok=True):
            if first:
                log.warning("stream key %r does not exist yet; waiting for it", key)
            return False
        server.ensure_group(key, self.group)
        self._ready.add(key)
        return True

    def _ready_streams(self) -> tuple[str, ...]:
        return tuple(k for k in self.options.streams if k in self._ready)

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_entries_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        server = self._conn()
        self._target = {}
        for key in self.options.streams:
            last = _last_id(server, key)
            if last is not None:
                self._target[key] = last
        log.info("Trigger.AvailableNow: reading up to %s", self._target)

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        server = self._conn()
        batch = int(start["batch"])
        current = {
            groups.consumer_name(self.options.consumer_prefix, batch, p)
            for p in range(int(start.get("parts") or 0))
        }
        until: dict[str, str] = {}
        work = False
        for key in self.options.streams:
            if not self._check_ready(server, key):
                continue
            last = _last_id(server, key)
            if self._target is not None:
                target = self._target.get(key)
                last = None if target is None or last is None else _min_id(last, target)
            delivered = self._last_delivered(server, key)
            if last is not None and StreamId.parse(last) > StreamId.parse(delivered):
                until[key] = last
                work = True
            owners = groups.pending_by_consumer(server, key, self.group)
            if any(owners.get(c, 0) for c in current):
                work = True  # the previous batch waits for its commit
            elif groups.idle_foreign_pending(
                server, key, self.group, owners, current, self.options.claim_min_idle_ms
            ):
                work = True
        if not work:
            return start
        rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        parts = self.options.num_partitions or DEFAULT_STREAM_PARTITIONS
        return {"batch": batch + 1, "parts": parts, "limit": rows, "until": until}

    def _last_delivered(self, server: StreamServer, key: str) -> str:
        for info in server.groups(key):
            if text(info.get("name")) == self.group:
                return text(info.get("last-delivered-id"))
        raise server.explain(ResponseError("NOGROUP"), key, self.group)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        if int(end["batch"]) == int(start["batch"]):
            return []
        server = self._conn()
        opts = self.options
        batch, parts = int(end["batch"]), int(end["parts"])
        consumers = [groups.consumer_name(opts.consumer_prefix, batch, p) for p in range(parts)]
        limit = end.get("limit")
        claimed = dict.fromkeys(consumers, 0)
        streams = self._ready_streams()
        for key in streams:
            remaining = None if limit is None else max(0, limit - sum(claimed.values()))
            if remaining == 0:
                break
            result = groups.claim_idle(
                server, key, self.group, consumers, opts.claim_min_idle_ms, remaining
            )
            for consumer, count in result.per_consumer.items():
                claimed[consumer] += count
        share = None
        if limit is not None:
            share = math.ceil(max(0, limit - sum(claimed.values())) / parts)
        until = tuple(sorted((end.get("until") or {}).items()))
        return [
            GroupPartition(
                consumer=c,
                streams=streams,
                until=until,
                quota=None if share is None else claimed[c] + share,
            )
            for c in consumers
        ]

    def commit(self, end: dict) -> None:
        batch = int(end["batch"])
        if batch == 0:
            return
        server = self._conn()
        for key in self._ready_streams():
            groups.acknowledge_through(server, key, self.group, self.options.consumer_prefix, batch)

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        log.info("stopping: removing this query's consumers that hold no entries")
        try:
            for key in self._ready_streams():
                groups.remove_idle_consumers(server, key, self.group, self.options.consumer_prefix)
        except Exception as exc:  # stopping must not mask the reason the query ended
            log.warning("could not tidy up consumers on stop: %s", exc)
        finally:
            server.close()

    # -- executor side ------------------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, GroupPartition):
            return  # a placeholder partition: nothing planned, nothing to read
        configure_logging(self.options.log_level)
        builder = ArrowBuilder(self.schema)
        reader = _GroupReader(self.options, self.group, partition)
        with StreamServer(self.options) as server:
            for key, entries in reader.entries(server):
                yield builder.build(key, entries)
            if reader.count == 0:
                # Reading created the consumer; one that received nothing would otherwise stay
                # until a later commit (or forever, after the query's last batch).
                groups.remove_if_empty(server, partition.streams, self.group, partition.consumer)


class _GroupReader:
    """The per-task read loop: own pending entries first, then new ones within the bounds."""

    def __init__(self, options: StreamsOptions, group: str, partition: GroupPartition) -> None:
        self.options = options
        self.group = group
        self.partition = partition
        self.count = 0

    def entries(self, server: StreamServer) -> Iterator[tuple[str, list[Any]]]:
        part = self.partition
        for key in part.streams:
            cursor = "0"
            while True:
                reply = self._read(server, {key: cursor}, self.options.page_size)
                page = reply.get(key) or []
                if not page:
                    break
                cursor = text(page[-1][0])
                live = [e for e in page if e[1] is not None]
                self.count += len(live)
                if live:
                    yield key, live
        bounds = {k: StreamId.parse(v) for k, v in part.until}
        open_streams = [k for k in part.streams if k in bounds]
        while open_streams:
            budget = self.options.page_size
            if part.quota is not None:
                budget = min(budget, part.quota - self.count)
                if budget <= 0:
                    return
            reply = self._read(server, dict.fromkeys(open_streams, ">"), budget)
            still_open = []
            for key in open_streams:
                page = reply.get(key) or []
                if not page:
                    continue
                self.count += len(page)
                yield key, page
                if StreamId.parse(page[-1][0]) < bounds[key]:
                    still_open.append(key)
            open_streams = still_open

    def _read(self, server: StreamServer, cursors: dict[str, str], count: int) -> dict[str, Any]:
        keys = list(cursors)
        args: list[str | int] = ["XREADGROUP", "GROUP", self.group, self.partition.consumer]
        args += ["COUNT", count, "STREAMS", *keys, *cursors.values()]
        try:
            reply = server.call(*args)
        except ResponseError as exc:
            for key in keys:  # name the culprit when one of several keys is wrong
                server.check_stream(key, missing_ok=False)
            raise server.explain(exc, ", ".join(keys), self.group) from None
        if reply is None:
            return {}
        if isinstance(reply, dict):
            return {text(k): v for k, v in reply.items()}
        return {text(k): v for k, v in reply}


def _last_id(server: StreamServer, key: str) -> str | None:
    try:
        reply = server.call("XREVRANGE", key, "+", "-", "COUNT", 1)
    except ResponseError as exc:
        raise server.explain(exc, key) from None
    return text(reply[0][0]) if reply else None


def _min_id(a: str, b: str) -> str:
    return a if StreamId.parse(a) <= StreamId.parse(b) else b
