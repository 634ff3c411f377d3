"""Bad input fails the query with a message naming the option, key, group or entry, and
acknowledges nothing that was not delivered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from spark_helpers import FORMAT, produce

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _failure(action: Any) -> str:
    with pytest.raises(Exception) as info:  # Spark wraps worker errors in its own types
        action()
    return str(info.value)


def test_unknown_and_malformed_options_fail_before_any_task(spark: Any) -> None:
    def reader() -> Any:
        return spark.read.format(FORMAT).option("stream", "s")

    message = _failure(lambda: reader().option("grup", "g").load())
    assert "redis-streams: unknown option 'grup'" in message
    message = _failure(lambda: reader().option("numPartitions", "many").load())
    assert "redis-streams: option 'numPartitions' must be an integer, got 'many'" in message
    message = _failure(lambda: spark.read.format(FORMAT).load())
    assert "redis-streams: option 'stream' (one key) or 'streams'" in message


def test_unreachable_server_is_named(spark: Any) -> None:
    from support.servers import free_port

    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    message = _failure(
        lambda: spark.read.format(FORMAT).option("url", url).option("stream", "s").load().count()
    )
    assert "redis-streams: cannot connect to redis://:***@127.0.0.1:" in message
    assert "(option 'url')" in message and "hunter2" not in message


def test_key_of_the_wrong_type(spark: Any, backend: Any, tmp_path: Path) -> None:
    client = backend.client()
    key = backend.key("string")
    client.set(key, "not a stream")
    batch = spark.read.format(FORMAT).option("url", backend.url).option("stream", key)
    assert f"redis-streams: key '{key}' holds a string, not a stream" in _failure(
        lambda: batch.load().count()
    )
    stream = (
        spark.readStream.format(FORMAT)
        .option("url", backend.url)
        .option("stream", key)
        .option("group", "g")
        .load()
        .writeStream.format("memory")
        .queryName(f"wrongtype_{backend.name}")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
    )
    message = _failure(lambda: stream.start().awaitTermination())
    assert f"redis-streams: key '{key}' holds a string, not a stream" in message


def test_missing_group_is_created_only_when_asked(spark: Any, backend: Any, tmp_path: Path) -> None:
    client = backend.client()
    key = backend.key("nogroup")
    produce(client, key, 10)
    assert client.xinfo_groups(key) == []

    def run(name: str, stream_key: str, **options: str) -> Any:
        reader = (
            spark.readStream.format(FORMAT)
            .option("url", backend.url)
            .option("stream", stream_key)
            .option("group", "g")
        )
        for option, value in options.items():
            reader = reader.option(option, value)
        query = (
            reader.load()
            .writeStream.format("memory")
            .queryName(f"{name}_{backend.name}")
            .option("checkpointLocation", str(tmp_path / name))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        return spark.sql(f"select count(*) as n from {name}_{backend.name}").collect()[0].n

    message = _failure(lambda: run("missing", key))
    assert f"redis-streams: consumer group 'g' on stream '{key}' does not exist" in message
    assert "set option 'createGroup' to true" in message
    assert client.xinfo_groups(key) == []

    absent = backend.key("absent")
    message = _failure(lambda: run("nostream", absent, createGroup="true"))
    assert f"redis-streams: stream key '{absent}' does not exist" in message
    assert client.exists(absent) == 0

    assert run("mkstream", absent, createGroup="true", mkstream="true") == 0
    assert client.xinfo_groups(absent)[0]["name"] == b"g"


def test_malformed_field_fails_the_query_and_acknowledges_nothing(
    spark: Any, backend: Any, tmp_path: Path
) -> None:
    client = backend.client()
    key = backend.key("typed")
    for n in range(20):
        client.xadd(key, {"amount": str(n)})
    bad_id = client.xadd(key, {"amount": "twelve"}).decode()
    client.xgroup_create(key, "g", "0")
    query = (
        spark.readStream.format(FORMAT)
        .schema("id string, amount long")
        .option("url", backend.url)
        .option("stream", key)
        .option("group", "g")
        .option("numPartitions", "1")
        .load()
        .writeStream.format("memory")
        .queryName(f"typed_{backend.name}")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    message = _failure(query.awaitTermination)
    assert f"redis-streams: field 'amount' of entry {bad_id} in stream '{key}'" in message
    assert "cannot read b'twelve' as int64" in message
    group = client.xinfo_groups(key)[0]
    # Everything read was delivered and is still pending: nothing was acknowledged.
    assert group["pending"] == group["entries-read"] == 21


def test_idempotent_streaming_sink_needs_a_producer_id(spark: Any, tmp_path: Path) -> None:
    stream = (
        spark.readStream.format("rate")
        .load()
        .writeStream.format(FORMAT)
        .option("stream", "out")
        .option("idempotent", "true")
        .option("checkpointLocation", str(tmp_path / "cp"))
    )
    assert "redis-streams: option 'producerId' is required with idempotent=true" in _failure(
        lambda: stream.start().awaitTermination(30)
    )
