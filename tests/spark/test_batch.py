"""Batch reads and writes, end to end through Spark."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from spark_helpers import FORMAT, killer_udf, tally

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _write_bursty(client: Any, key: str) -> int:
    """A quiet minute (one entry every 600 ms), a dense burst, then quiet again: explicit ids
    make the shape exact whatever the clock does."""
    ids = [f"{1_000_000 + 600 * i}-0" for i in range(100)]
    ids += [f"{1_070_000 + i // 40}-{i % 40}" for i in range(6_000)]  # 40 entries per ms
    ids += [f"{2_000_000 + 600 * i}-0" for i in range(100)]
    pipe = client.pipeline(transaction=False)
    for n, entry_id in enumerate(ids):
        pipe.xadd(key, {"n": str(n)}, id=entry_id)
    pipe.execute()
    return len(ids)


def test_batch_read_of_a_bursty_stream_has_no_gaps_repeats_or_skew(
    spark: Any, backend: Any
) -> None:
    from pyspark.sql import functions as F

    client = backend.client()
    key = backend.key("bursty")
    total = _write_bursty(client, key)
    df = (
        spark.read.format(FORMAT)
        .option("url", backend.url)
        .option("stream", key)
        .option("numPartitions", "4")
        .option("pageSize", "1000")
        .load()
    )
    parts = (
        df.groupBy(F.spark_partition_id().alias("p"))
        .agg(
            F.count("*").alias("rows"),
            F.countDistinct("id").alias("distinct"),
            F.min(F.struct("ms", "seq")).alias("lo"),
            F.max(F.struct("ms", "seq")).alias("hi"),
        )
        .orderBy("lo")
        .collect()
    )
    assert sum(p.rows for p in parts) == sum(p.distinct for p in parts) == total
    # Partitions are contiguous id ranges in order: each starts after the previous one ends.
    for before, after in itertools.pairwise(parts):
        assert tuple(before.hi) < tuple(after.lo)
    # Balanced by count: an even split of the id range would give one partition 99 %.
    assert len(parts) == 4 and max(p.rows for p in parts) <= 1.5 * total / 4, parts


def test_typed_schema_over_two_streams_and_an_exclusive_id_range(spark: Any, backend: Any) -> None:
    client = backend.client()
    a, b = backend.key("a"), backend.key("b")
    for n in range(1, 6):
        client.xadd(a, {"user": f"u{n}", "amount": str(n * 1.5)}, id=f"{n}-0")
        client.xadd(b, {"user": f"v{n}", "amount": str(n)}, id=f"{n}-1")
    rows = (
        spark.read.format(FORMAT)
        .schema("stream string, id string, user string, amount double, missing long")
        .option("url", backend.url)
        .option("streams", f"{a},{b}")
        .option("startId", "2")
        .option("endId", "4")
        .load()
        .orderBy("stream", "id")
        .collect()
    )
    got = [(r.stream, r.id, r.user, r.amount, r.missing) for r in rows]
    assert got == sorted(
        [
            *((a, f"{n}-0", f"u{n}", n * 1.5, None) for n in (2, 3, 4)),
            *((b, f"{n}-1", f"v{n}", float(n), None) for n in (2, 3, 4)),
        ]
    )


def test_batch_write_appends_fields_and_trims(spark: Any, backend: Any) -> None:
    client = backend.client()
    key = backend.key("sink")
    df = spark.createDataFrame(
        [(i, f"u{i % 3}", i * 0.5, {"tag": f"t{i}"}) for i in range(500)],
        "n long, user string, amount double, fields map<string,string>",
    )
    (
        df.write.format(FORMAT)
        .option("url", backend.url)
        .option("stream", key)
        .option("maxLen", "200")
        .option("approximateTrim", "false")
        .mode("append")
        .save()
    )
    assert client.xlen(key) == 200
    entries = client.xrange(key)
    numbers = sorted(int(f[b"n"]) for _, f in entries)
    assert len(set(numbers)) == 200 and client.xinfo_stream(key)["entries-added"] == 500
    _, fields = entries[0]
    n = int(fields[b"n"])
    assert set(fields) == {b"n", b"user", b"amount", b"tag"}
    assert (fields[b"user"], fields[b"tag"]) == (f"u{n % 3}".encode(), f"t{n}".encode())
    assert float(fields[b"amount"]) == n * 0.5  # printed by Arrow: 150.0 becomes "150"


def test_idempotent_batch_write_survives_a_killed_task(
    spark: Any, backend: Any, tmp_path: Path
) -> None:
    """A task dies after writing part of its rows and is retried: markers skip what it wrote."""
    backend.require_markers()
    result = _write_with_a_killed_task(spark, backend, tmp_path, idempotent=True)
    assert (result.lost, result.duplicates) == (0, 0), result.line()
    assert backend.client().hlen(f"{{{backend.name}-retry-sink}}:spark-writes") == 0  # deleted


def test_plain_batch_write_repeats_a_killed_tasks_rows(
    spark: Any, one_backend: Any, tmp_path: Path
) -> None:
    """Without idempotence the retry writes the rows again: the check above can fail."""
    result = _write_with_a_killed_task(spark, one_backend, tmp_path, idempotent=False)
    assert result.lost == 0 and result.duplicates > 0, result.line()


def _write_with_a_killed_task(spark: Any, backend: Any, tmp_path: Path, idempotent: bool) -> Any:
    from pyspark.sql.functions import udf

    client = backend.client()
    key = f"{backend.name}-retry-sink"
    client.delete(key, f"{{{key}}}:spark-writes")
    # One task: it dies at row 3000, once its writer has added at least 1000 entries.
    kill = udf(
        killer_udf(tmp_path, 3000, url=backend.url, key=key, min_len=1000, pad=200), "string"
    )
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "100")
    try:
        (
            spark.range(0, 4000, 1, 1)
            .selectExpr("cast(id as string) as n")
            .select(kill("n").alias("n"))
            .write.format(FORMAT)
            .option("url", backend.url)
            .option("stream", key)
            .option("idempotent", str(idempotent).lower())
            .option("writeBatchSize", "100")
            .mode("append")
            .save()
        )
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    assert (tmp_path / "killed").exists()
    written = [str(int(f[b"n"])) for _, f in client.xrange(key)]
    return tally((str(i) for i in range(4000)), written)
