"""Bad input fails the query with a message naming the option, key, group or entry, and
acknowledges nothing that was not delivered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from spark_helpers import FORMAT, start_stream

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


def test_key_of_the_wrong_type(spark: Any, one_backend: Any, tmp_path: Path) -> None:
    client = one_backend.client()
    key = one_backend.key("string")
    client.set(key, "not a stream")
    batch = spark.read.format(FORMAT).option("url", one_backend.url).option("stream", key)
    assert f"redis-streams: key '{key}' holds a string, not a stream" in _failure(
        lambda: batch.load().count()
    )
    stream = (
        spark.readStream.format(FORMAT)
        .option("url", one_backend.url)
        .option("stream", key)
        .option("group", "g")
        .load()
        .writeStream.format("memory")
        .queryName(f"wrongtype_{one_backend.name}")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
    )
    message = _failure(
        lambda: start_stream(stream, checkpoint=tmp_path / "cp").awaitTermination()
    )
    assert f"redis-streams: key '{key}' holds a string, not a stream" in message


def test_malformed_field_fails_the_query_and_acknowledges_nothing(
    spark: Any, one_backend: Any, tmp_path: Path
) -> None:
    client = one_backend.client()
    key = one_backend.key("typed")
    for n in range(20):
        client.xadd(key, {"amount": str(n)})
    bad_id = client.xadd(key, {"amount": "twelve"}).decode()
    client.xgroup_create(key, "g", "0")
    query = start_stream(
        spark.readStream.format(FORMAT)
        .schema("id string, amount long")
        .option("url", one_backend.url)
        .option("stream", key)
        .option("group", "g")
        .option("numPartitions", "1")
        .load()
        .writeStream.format("memory")
        .queryName(f"typed_{one_backend.name}")
        .trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "cp")),
        checkpoint=tmp_path / "cp",
    )
    message = _failure(query.awaitTermination)
    assert f"redis-streams: field 'amount' of entry {bad_id} in stream '{key}'" in message
    assert "cannot read b'twelve' as int64" in message
    group = client.xinfo_groups(key)[0]
    # Everything read was delivered and is still pending: nothing was acknowledged.
    assert group["pending"] == group["entries-read"] == 21
