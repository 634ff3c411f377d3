"""Streaming reads through a consumer group, end to end, and what survives failures.

Each test states how many entries were lost (always zero) and how many were delivered twice:
zero wherever the guarantee promises exactly-once output (task retry, restart of the same query
from its checkpoint with an idempotent sink, a takeover into this connector's IDMP sink), and
exactly the uncommitted-but-written batch when another query takes over a dead one's entries
into a sink that does not name rows by their source entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from spark_helpers import (
    FORMAT,
    gate_udf,
    killer_udf,
    pending_count,
    produce,
    start_stream,
    tally,
    wait_for,
)

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _source(spark: Any, backend: Any, key: str, **options: object) -> Any:
    reader = spark.readStream.format(FORMAT).option("url", backend.url).option("stream", key)
    for name, value in {"group": "g", **options}.items():
        reader = reader.option(name, str(value))
    return reader.load()


def _consumers(client: Any, key: str, group: str = "g") -> list[str]:
    return [c["name"].decode() for c in client.xinfo_consumers(key, group)]


def test_micro_batches_into_a_file_sink_deliver_every_entry_once(
    spark: Any, backend: Any, workdir: Path
) -> None:
    client = backend.client()
    key = backend.key("events")
    ids = produce(client, key, 3500)
    client.xgroup_create(key, "g", "0")
    query = start_stream(
        _source(spark, backend, key, maxEntriesPerTrigger=2000, numPartitions=2)
        .select("id", "fields")
        .writeStream.format("parquet")
        .option("path", str(workdir / "out"))
        .trigger(availableNow=True)
        .option("checkpointLocation", str(workdir / "cp")),
        checkpoint=workdir / "cp",
    )
    query.awaitTermination()
    rows = spark.read.parquet(str(workdir / "out")).select("id").collect()
    result = tally(ids, (r.id for r in rows))
    assert (result.lost, result.duplicates, result.out) == (0, 0, 3500), result.line()
    # Progress shows the rows of each batch, capped by the read limit.
    per_batch = [p["numInputRows"] for p in query.recentProgress]
    assert sum(per_batch) == 3500 and max(per_batch) == 2000
    # Everything acknowledged, and the query's consumers are gone.
    assert pending_count(client, key, "g") == 0
    assert _consumers(client, key) == []


def test_killed_python_worker_is_retried_and_replays_its_own_entries(
    spark: Any, backend: Any, workdir: Path
) -> None:
    from pyspark.sql.functions import udf

    client = backend.client()
    key = backend.key("retry")
    ids = produce(client, key, 3000)
    client.xgroup_create(key, "g", "0")
    kill = udf(killer_udf(workdir, after_rows=700), "string")
    name = f"retry_{backend.name}"
    query = start_stream(
        # The limit gives each of the two tasks exactly half of the entries.
        _source(spark, backend, key, numPartitions=2, pageSize=250, maxEntriesPerTrigger=3000)
        .select(kill("id").alias("id"))
        .writeStream.format("memory")
        .queryName(name)
        .trigger(availableNow=True)
        .option("checkpointLocation", str(workdir / "cp")),
        checkpoint=workdir / "cp",
    )
    query.awaitTermination()
    assert (workdir / "killed").exists(), "the worker was never killed"
    result = tally(ids, (r.id for r in spark.sql(f"select id from {name}").collect()))
    assert (result.lost, result.duplicates) == (0, 0), result.line()
    assert pending_count(client, key, "g") == 0


def test_query_stopped_mid_batch_restarts_from_its_checkpoint_without_duplicates(
    spark: Any, backend: Any, workdir: Path
) -> None:
    from pyspark.sql.functions import col, udf

    backend.require_markers()
    client = backend.client()
    key, copy = backend.key("src"), backend.key("copy")
    ids = produce(client, key, 1000)
    client.xgroup_create(key, "g", "0")
    (workdir / "gate").touch()
    gate = udf(gate_udf(workdir, batch="0", after_rows=200), "string")

    def start(**extra: object) -> Any:
        stream = _source(
            spark, backend, key, maxEntriesPerTrigger=1000, numPartitions=2, pageSize=100
        )
        return start_stream(
            stream.select(gate("id").alias("src"), col("fields")["n"].alias("n"))
            .writeStream.format(FORMAT)
            .option("url", backend.url)
            .option("stream", copy)
            .option("idempotent", "true")
            .option("producerId", "copy-job")
            .option("writeBatchSize", "50")
            .trigger(**extra)
            .option("checkpointLocation", str(workdir / "cp")),
            checkpoint=workdir / "cp",
        )

    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "100")
    try:
        first = start(processingTime="10 milliseconds")
        wait_for((workdir / "entered").exists, "the first batch to reach the gate")
        # Partition 1 of the interrupted batch is not held: let it finish writing.
        wait_for(lambda: client.xlen(copy) >= 500, "the unblocked half of the batch")
        first.stop()
        (workdir / "gate").unlink()
        written_before_restart = client.xlen(copy)
        assert pending_count(client, key, "g") > 0  # the interrupted batch is still pending
        second = start(availableNow=True)
        second.awaitTermination()
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    copied = [f[b"src"].decode() for _, f in client.xrange(copy)]
    result = tally(ids, copied)
    assert (result.lost, result.duplicates, result.out) == (0, 0, 1000), result.line()
    # The interrupted batch had already written part of its rows: the replay skipped them.
    assert written_before_restart >= 500
    assert pending_count(client, key, "g") == 0


def test_second_query_takes_over_a_dead_querys_entries_with_xautoclaim(
    spark: Any, backend: Any, workdir: Path
) -> None:
    client = backend.client()
    key = backend.key("takeover")
    ids = produce(client, key, 3000)
    client.xgroup_create(key, "g", "0")

    def run(prefix: str, min_idle_ms: int, **trigger: object) -> Any:
        limit = {"maxEntriesPerTrigger": 1000} if prefix == "a" else {}
        return start_stream(
            _source(spark, backend, key, consumerPrefix=prefix, claimMinIdleMs=min_idle_ms, **limit)
            .select("id")
            .writeStream.format("memory")
            .queryName(f"takeover_{prefix}_{backend.name}")
            .trigger(**trigger)
            .option("checkpointLocation", str(workdir / f"cp-{prefix}")),
            checkpoint=workdir / f"cp-{prefix}",
        )

    # Query a writes its first batch, then dies before the next trigger would acknowledge it.
    dead = run("a", 60_000, processingTime="1 hour")
    wait_for(lambda: dead.lastProgress is not None, "query a's first batch")
    dead.stop()
    first_batch = dead.lastProgress["numInputRows"]
    assert pending_count(client, key, "g") == first_batch == 1000

    # Query b takes a's entries over (any idle time will do here: a is dead) and reads the
    # rest. Query a's consumers stay, empty: they are not b's to remove. (That a live reader's
    # entries are left alone below the idle threshold is checked in test_group_driver.py.)
    run("b", 0, availableNow=True).awaitTermination()
    assert pending_count(client, key, "g") == 0
    assert all(c.startswith("a-") for c in _consumers(client, key))

    seen = [
        r.id
        for prefix in ("a", "b")
        for r in spark.sql(f"select id from takeover_{prefix}_{backend.name}").collect()
    ]
    result = tally(ids, seen)
    # Query a's batch reached its sink but was never acknowledged: exactly it comes twice.
    assert (result.lost, result.duplicates) == (0, first_batch), result.line()


def test_takeover_into_the_idmp_sink_writes_each_entry_once(
    spark: Any, backend: Any, workdir: Path
) -> None:
    """The idempotent sink names each row by its source entry: the batch a dead query wrote
    but never acknowledged, taken over and written again by another query with the same
    producerId, adds nothing the second time."""
    import redis

    client = backend.client()
    key, out = backend.key("idmp-in"), backend.key("idmp-out")
    try:
        client.execute_command("XADD", out, "IDMP", "probe", "1", "*", "f", "v")
    except redis.ResponseError:
        pytest.skip(f"{backend.name}'s XADD has no IDMP (Redis 8.6+)")
    client.delete(out)
    ids = produce(client, key, 3000)
    client.xgroup_create(key, "g", "0")

    def run(prefix: str, min_idle_ms: int, **trigger: object) -> Any:
        limit = {"maxEntriesPerTrigger": 1000} if prefix == "a" else {}
        return start_stream(
            _source(spark, backend, key, consumerPrefix=prefix, claimMinIdleMs=min_idle_ms, **limit)
            .select("stream", "id", "fields")
            .writeStream.format(FORMAT)
            .option("url", backend.url)
            .option("stream", out)
            .option("idempotent", "true")
            .option("producerId", "copier")
            .trigger(**trigger)
            .option("checkpointLocation", str(workdir / f"cp-{prefix}")),
            checkpoint=workdir / f"cp-{prefix}",
        )

    dead = run("a", 60_000, processingTime="1 hour")
    wait_for(lambda: dead.lastProgress is not None, "query a's first batch")
    dead.stop()
    assert pending_count(client, key, "g") == dead.lastProgress["numInputRows"] == 1000
    assert client.xlen(out) == 1000

    run("b", 0, availableNow=True).awaitTermination()
    assert pending_count(client, key, "g") == 0
    copied = [fields[b"n"].decode() for _, fields in client.xrange(out)]
    result = tally((str(n) for n in range(3000)), copied)
    assert (result.lost, result.duplicates, result.out) == (0, 0, 3000), result.line()
    info = client.xinfo_stream(out)
    assert info["iids-duplicates"] == 1000  # query b's rewrite of a's batch, all refused
    assert len(ids) == 3000
