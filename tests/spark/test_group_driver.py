"""The driver side of the consumer-group source, run directly against both servers.

These call the same methods Spark calls on the driver (initialOffset, latestOffset, partitions,
commit) without a Spark session, so they are quick and run on any test worker; the Spark tests
cover the same paths end to end.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pyspark")

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from resplite.spark import groups
from resplite.spark.connection import StreamServer
from resplite.spark.errors import OptionError, ServerError
from resplite.spark.options import parse_options
from resplite.spark.schema import default_schema
from resplite.spark.source import RedisStreamsDataSource
from resplite.spark.stream_reader import StreamsStreamReader


def _reader(backend: Any, key: str, **options: str) -> StreamsStreamReader:
    opts = parse_options({"url": backend.url, "stream": key, "group": "g", **options})
    return StreamsStreamReader(opts, default_schema())


def _fill(client: Any, key: str, count: int) -> None:
    for n in range(count):
        client.xadd(key, {"n": str(n)})


def test_missing_group_or_stream_is_created_only_when_asked(backend: Any) -> None:
    client = backend.client()
    key, absent = backend.key("s"), backend.key("absent")
    _fill(client, key, 3)
    with pytest.raises(ServerError) as info:
        _reader(backend, key).initialOffset()
    assert str(info.value) == (
        f"redis-streams: consumer group 'g' on stream '{key}' does not exist; create it with "
        "XGROUP CREATE or set option 'createGroup' to true"
    )
    assert client.xinfo_groups(key) == []
    # A stream that does not exist yet is waited for (its group is created once it exists),
    # not created: only mkstream makes it.
    _reader(backend, absent, createGroup="true").initialOffset()
    assert client.exists(absent) == 0

    _reader(backend, key, createGroup="true", groupStartId="$").initialOffset()
    assert (
        client.xinfo_groups(key)[0]["last-delivered-id"]
        == client.xinfo_stream(key)["last-generated-id"]
    )
    _reader(backend, absent, createGroup="true", mkstream="true").initialOffset()
    assert client.type(absent) == b"stream" and client.xinfo_groups(absent)[0]["name"] == b"g"


def test_wrong_type_is_named(backend: Any) -> None:
    client = backend.client()
    key = backend.key("hash")
    client.hset(key, "f", "v")
    with pytest.raises(ServerError, match=f"key '{key}' holds a hash, not a stream"):
        _reader(backend, key).initialOffset()


def test_offsets_follow_new_entries_pending_batches_and_idle_readers(backend: Any) -> None:
    client = backend.client()
    key = backend.key("s")
    _fill(client, key, 10)
    client.xgroup_create(key, "g", "0")
    reader = _reader(backend, key, numPartitions="2")
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadMaxRows(6))
    last = client.xrevrange(key, count=1)[0][0].decode()
    assert end == {"batch": 1, "parts": 2, "limit": 6, "until": {key: last}}

    # The batch's two tasks read their shares; the first six entries are now pending on them.
    parts = reader.partitions(start, end)
    batches = [list(reader.read(p)) for p in parts]
    assert [sum(b.num_rows for b in bs) for bs in batches] == [3, 3]
    assert groups.pending_by_consumer(StreamServer(reader.options), key, "g") == {
        "spark-1-0": 3,
        "spark-1-1": 3,
    }

    # Four undelivered entries remain: a new batch; after commit(1) only batch 2 is pending.
    second = reader.latestOffset(end, ReadAllAvailable())
    assert second["batch"] == 2 and second["limit"] is None
    reader.commit(end)
    assert int(client.xpending(key, "g")["pending"]) == 0
    assert client.xinfo_consumers(key, "g") == []
    parts = reader.partitions(end, second)
    assert sum(b.num_rows for p in parts for b in reader.read(p)) == 4

    # Nothing new, but batch 2 holds entries: one more batch so that it gets committed.
    third = reader.latestOffset(second, ReadAllAvailable())
    assert third["batch"] == 3 and third["until"] == {}
    reader.commit(second)
    assert list(reader.read(reader.partitions(second, third)[0])) == []
    # Now nothing at all: the offset stays, and Spark runs no batch.
    assert reader.latestOffset(third, ReadAllAvailable()) == third
    reader.stop()


def test_idle_entries_of_another_reader_are_claimed_only_past_the_threshold(
    backend: Any,
) -> None:
    client = backend.client()
    key = backend.key("s")
    _fill(client, key, 5)
    client.xgroup_create(key, "g", "0")
    client.xreadgroup("g", "dead-reader", {key: ">"})
    patient = _reader(backend, key, claimMinIdleMs="3600000")
    start: dict[str, Any] = {"batch": 7, "parts": 2, "limit": None, "until": {}}
    assert patient.latestOffset(start, ReadAllAvailable()) == start  # nothing to take yet
    eager = _reader(backend, key, claimMinIdleMs="0")
    end = eager.latestOffset(start, ReadAllAvailable())
    assert end["batch"] == 8
    parts = eager.partitions(start, end)
    owners = groups.pending_by_consumer(StreamServer(eager.options), key, "g")
    assert owners == {"spark-8-0": 3, "spark-8-1": 2}
    read = sorted(i for p in parts for b in eager.read(p) for i in b.column("id").to_pylist())
    assert read == sorted(i.decode() for i, _ in client.xrange(key))
    eager.commit(end)
    assert int(client.xpending(key, "g")["pending"]) == 0
    assert [c["name"] for c in client.xinfo_consumers(key, "g")] == [b"dead-reader"]


def test_commit_leaves_other_prefixes_and_later_batches_alone(backend: Any) -> None:
    client = backend.client()
    key = backend.key("s")
    _fill(client, key, 4)
    client.xgroup_create(key, "g", "0")
    for consumer in ("spark-3-0", "spark-4-0", "other-3-0", "spark-x-0"):
        client.xreadgroup("g", consumer, {key: ">"}, count=1)
    with StreamServer(parse_options({"url": backend.url, "stream": key})) as server:
        assert groups.acknowledge_through(server, key, "g", "spark", 3) == (1, 1)
    left = {c["name"].decode(): c["pending"] for c in client.xinfo_consumers(key, "g")}
    assert left == {"spark-4-0": 1, "other-3-0": 1, "spark-x-0": 1}


def test_idempotent_streaming_sink_needs_a_producer_id() -> None:
    source = RedisStreamsDataSource({"stream": "out", "idempotent": "true"})
    with pytest.raises(OptionError, match="option 'producerId' is required with idempotent"):
        source.streamWriter(default_schema(), False)
    with pytest.raises(OptionError, match="can only be appended to"):
        RedisStreamsDataSource({"stream": "out"}).writer(default_schema(), True)
