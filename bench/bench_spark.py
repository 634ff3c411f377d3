"""Spark connector throughput against resplite and Redis, side by side, next to plain redis-py.

Usage::

    python bench/bench_spark.py [--entries 1000000] [--partitions 4] [--servers resplite,redis]

Both servers are started on free ports (resplite as ``python -m resplite``, Redis as
``redis-server`` without persistence) and measured one after the other with the same data: entries
of two small fields (``n`` = a number, ``k`` = one of seven keys). For each server it measures, in
entries per second:

* ``plain XADD``: one process, redis-py pipelines of 1000 XADD (the baseline for writing);
* ``spark write``: ``df.write.format("redis-streams")`` of a DataFrame with the same columns;
* ``plain XRANGE->Arrow``: one process, redis-py XRANGE pages of 10 000 entries turned into an
  Arrow table with the connector's default columns (the baseline for reading);
* ``spark read``: ``spark.read.format("redis-streams")`` of the whole stream into Spark's
  ``noop`` sink, which materialises every row;
* ``spark stream``: a ``Trigger.AvailableNow`` streaming query through a consumer group into the
  ``noop`` sink, including the XACK of every entry.

Spark runs in local mode with two cores, on the same machine as the server; each Spark figure is
wall time of the action after a warm-up on a small stream. The table gives each figure, the
resplite/Redis ratio, and for the Spark rows the ratio to the plain baseline on the same server
(the target for batch reads is at least 0.7).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import redis

from bench.common import free_port, stop

ROOT = Path(__file__).resolve().parents[1]
OPERATIONS = ("plain XADD", "spark write", "plain XRANGE->Arrow", "spark read", "spark stream")
BASELINE = {"spark write": "plain XADD", "spark read": "plain XRANGE->Arrow",
            "spark stream": "plain XRANGE->Arrow"}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--servers", default="resplite,redis")
    args = parser.parse_args(argv)
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    spark = _spark()
    results: dict[str, dict[str, float]] = {}
    try:
        for name in servers:
            with _server(name) as url:
                print(f"[{name}] {url}: {args.entries} entries", file=sys.stderr)
                results[name] = _measure(spark, url, args.entries, args.partitions, name)
    finally:
        spark.stop()
    _print_table(results, servers, args.entries)
    return 0


def _measure(spark: Any, url: str, entries: int, partitions: int, name: str) -> dict[str, float]:
    client = redis.Redis.from_url(url)
    client.flushall()
    _warm_up(spark, url, client)
    rates: dict[str, float] = {}

    def record(operation: str, seconds: float) -> None:
        rates[operation] = entries / seconds
        print(f"[{name}] {operation}: {seconds:.2f} s, {rates[operation]:,.0f} entries/s",
              file=sys.stderr)  # fmt: skip

    record("plain XADD", _timed(lambda: _plain_write(client, "bench:plain", entries)))
    record("plain XRANGE->Arrow", _timed(lambda: _plain_read(client, "bench:plain", entries)))
    record("spark read", _timed(lambda: _spark_read(spark, url, "bench:plain", partitions)))
    client.xgroup_create("bench:plain", "g", "0")
    with tempfile.TemporaryDirectory() as checkpoint:
        record(
            "spark stream",
            _timed(lambda: _spark_stream(spark, url, "bench:plain", partitions, checkpoint)),
        )
    assert int(client.xpending("bench:plain", "g")["pending"]) == 0
    client.delete("bench:plain")
    record("spark write", _timed(lambda: _spark_write(spark, url, "bench:spark", entries)))
    assert client.xlen("bench:spark") == entries
    client.delete("bench:spark")
    client.close()
    return rates


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


# -- plain single-process baselines -----------------------------------------------------------


def _plain_write(client: Any, key: str, entries: int) -> None:
    pipe = client.pipeline(transaction=False)
    for n in range(entries):
        pipe.xadd(key, {"n": n, "k": f"k{n % 7}"})
        if n % 1000 == 999:
            pipe.execute()
    pipe.execute()


def _plain_read(client: Any, key: str, entries: int) -> None:
    import pyarrow as pa

    map_type = pa.map_(pa.string(), pa.string())
    start, rows = "-", 0
    while True:
        page = client.xrange(key, start, "+", count=10_000)
        if not page:
            break
        ids = [i.decode() for i, _ in page]
        ms, seq = zip(*((int(a), int(b)) for a, _, b in (i.partition("-") for i in ids)),
                      strict=True)  # fmt: skip
        fields = [[(k.decode(), v.decode()) for k, v in f.items()] for _, f in page]
        pa.table(
            {
                "stream": pa.array([key] * len(ids)),
                "id": pa.array(ids),
                "ms": pa.array(ms, pa.int64()),
                "seq": pa.array(seq, pa.int64()),
                "fields": pa.array(fields, map_type),
            }
        )
        rows += len(page)
        start = "(" + ids[-1]
    assert rows == entries, rows


# -- the connector ----------------------------------------------------------------------------


def _spark_read(spark: Any, url: str, key: str, partitions: int) -> None:
    (
        spark.read.format("redis-streams")
        .option("url", url)
        .option("stream", key)
        .option("numPartitions", str(partitions))
        .option("logLevel", "WARNING")
        .load()
        .write.format("noop")
        .mode("overwrite")
        .save()
    )


def _spark_stream(spark: Any, url: str, key: str, partitions: int, checkpoint: str) -> None:
    query = (
        spark.readStream.format("redis-streams")
        .option("url", url)
        .option("stream", key)
        .option("group", "g")
        .option("numPartitions", str(partitions))
        .option("logLevel", "WARNING")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()


def _spark_write(spark: Any, url: str, key: str, entries: int) -> None:
    (
        spark.range(0, entries, 1, 4)
        .selectExpr("cast(id as string) as n", "concat('k', cast(id % 7 as string)) as k")
        .write.format("redis-streams")
        .option("url", url)
        .option("stream", key)
        .option("logLevel", "WARNING")
        .mode("append")
        .save()
    )


def _warm_up(spark: Any, url: str, client: Any) -> None:
    _plain_write(client, "bench:warm", 2000)
    _spark_read(spark, url, "bench:warm", 2)
    client.xgroup_create("bench:warm", "g", "0")
    with tempfile.TemporaryDirectory() as checkpoint:
        _spark_stream(spark, url, "bench:warm", 2, checkpoint)
    _spark_write(spark, url, "bench:warm2", 2000)
    client.delete("bench:warm", "bench:warm2")


def _spark() -> Any:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(ROOT) not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *paths])
    sys.path.insert(0, str(ROOT))
    from pyspark.sql import SparkSession

    from resplite.spark import register

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("resplite-spark-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


@contextlib.contextmanager
def _server(name: str) -> Iterator[str]:
    port = free_port()
    if name == "resplite":
        command = [sys.executable, "-m", "resplite", "--port", str(port), "--bind", "127.0.0.1",
                   "--save", ""]  # fmt: skip
    elif name == "redis":
        exe = shutil.which("redis-server") or "redis-server"
        command = [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no"]  # fmt: skip
    else:
        raise SystemExit(f"unknown server {name!r}")
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{name} did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(proc)


def _print_table(results: dict[str, dict[str, float]], servers: list[str], entries: int) -> None:
    header = ["operation (entries/s)", *servers]
    if len(servers) == 2:
        header.append(f"{servers[0]}/{servers[1]}")
    header += [f"vs plain ({s})" for s in servers]
    rows = []
    for operation in OPERATIONS:
        row = [operation] + [f"{results[s].get(operation, 0):,.0f}" for s in servers]
        if len(servers) == 2:
            a, b = (results[s].get(operation, 0) for s in servers)
            row.append(f"{a / b:.2f}" if b else "-")
        for server in servers:
            base = BASELINE.get(operation)
            value, ref = results[server].get(operation, 0), results[server].get(base or "", 0)
            row.append(f"{value / ref:.2f}" if base and ref else "")
        rows.append(row)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\nSpark connector, {entries:,} entries, local[2]")
    for line in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                        for i, (c, w) in enumerate(zip(line, widths, strict=True))))  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
