"""Demo pipeline: events through a consumer group into Parquet, a reader crash, and recovery.

Run it with ``python -m resplite.spark.demo`` (``make pipeline``). It

1. starts an embedded resplite server (``resplite.serve()``; a ``python -m resplite`` child process
   if that is unavailable; a local redis-server only if neither can serve streams),
2. produces ``--events`` events into the stream ``events`` and creates the group ``pipeline``,
3. runs streaming reader A: each micro-batch is aggregated per user and kind into Parquet,
4. crashes reader A in the middle of its second micro-batch, after the batch was read and before
   it was written, so that its entries stay pending on A's consumers,
5. runs reader B (another consumer prefix, Trigger.AvailableNow), which takes A's entries over
   with XAUTOCLAIM once they have been idle for ``--claim-idle-ms`` and reads the rest,
6. checks the Parquet output against what was produced and prints one line of proof::

       in=N out=N lost=0 duplicates=D pending=0

``out`` counts entry ids in the output, ``lost`` the produced ids missing from it, ``duplicates``
the ids found more than once, ``pending`` the entries left unacknowledged in the group. The exit
status is 1 if any entry was lost or left pending, else 0. Everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import random
import re
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

STREAM = "events"
GROUP = "pipeline"
KINDS = ("view", "click", "buy")

log = logging.getLogger("resplite.spark.demo")


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="resplite-pipeline-"))
    try:
        with _server(args.server) as (url, description):
            log.info("server: %s at %s", description, url)
            return _pipeline(url, workdir, args)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m resplite.spark.demo", description=__doc__)
    parser.add_argument("--events", type=int, default=20_000, help="events to produce")
    parser.add_argument(
        "--server",
        default="auto",
        help="auto (embedded resplite, falling back as needed), resplite, resplite-process, "
        "redis, or a redis:// URL of a running server",
    )
    parser.add_argument("--claim-idle-ms", type=int, default=1000, help="XAUTOCLAIM min idle")
    parser.add_argument("--workdir", help="keep Parquet output and checkpoints here")
    return parser.parse_args(argv)


# -- the pipeline ---------------------------------------------------------------------------------


def _pipeline(url: str, workdir: Path, args: argparse.Namespace) -> int:
    client = redis.Redis.from_url(url)
    client.delete(STREAM)
    produced = _produce(client, args.events)
    client.xgroup_create(STREAM, GROUP, "0")
    log.info("produced %d events into stream %r, group %r created", len(produced), STREAM, GROUP)

    spark = _spark_session()
    try:
        batch_size = max(1, args.events // 4)
        crashed = _run_reader_a(spark, url, workdir, batch_size)
        held = int(client.xpending(STREAM, GROUP)["pending"])
        log.info("%s; %d entries pending on its consumers", crashed, held)
        # XAUTOCLAIM only takes entries idle for at least the threshold; let them age.
        time.sleep(args.claim_idle_ms / 1000 + 0.2)
        _run_reader_b(spark, url, workdir, args.claim_idle_ms)
        seen = _output_ids(spark, workdir)
        totals = _output_totals(spark, workdir)
    finally:
        spark.stop()

    pending = int(client.xpending(STREAM, GROUP)["pending"])
    distinct = set(seen)
    lost = len(set(produced) - distinct)
    duplicates = len(seen) - len(distinct)
    log.info("aggregates in Parquet: %s", ", ".join(f"{k}={v}" for k, v in sorted(totals.items())))
    if sum(totals.values()) != len(seen):
        log.info("aggregate counts (%d) disagree with the ids written (%d)",
                 sum(totals.values()), len(seen))  # fmt: skip
        lost = max(lost, 1)
    print(f"in={len(produced)} out={len(seen)} lost={lost} duplicates={duplicates} "
          f"pending={pending}")  # fmt: skip
    return 1 if lost or pending else 0


def _produce(client: Any, count: int) -> list[str]:
    rng = random.Random(7)
    ids: list[str] = []
    for start in range(0, count, 1000):
        pipe = client.pipeline(transaction=False)
        for _ in range(start, min(start + 1000, count)):
            event = {
                "user": f"user{rng.randrange(50):02d}",
                "kind": rng.choice(KINDS),
                "amount": f"{rng.uniform(1, 100):.2f}",
            }
            pipe.xadd(STREAM, event)
        ids += [i.decode() for i in pipe.execute()]
    return ids


def _reader(spark: Any, url: str, prefix: str, **options: str) -> Any:
    reader = (
        spark.readStream.format("redis-streams")
        .schema("id string, user string, kind string, amount double")
        .option("url", url)
        .option("stream", STREAM)
        .option("group", GROUP)
        .option("consumerPrefix", prefix)
    )
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def _writer(workdir: Path, reader: str, crash_in_batch: int | None) -> Callable[[Any, int], None]:
    """The foreachBatch function: per-batch aggregates and ids into Parquet.

    Each batch overwrites its own folder, so a replayed batch replaces its earlier output.
    """

    def write(batch: Any, batch_id: int) -> None:
        from pyspark.sql import functions as F

        batch = batch.persist()
        rows = batch.count()  # reads the micro-batch: its entries are now delivered
        if batch_id == crash_in_batch:
            raise RuntimeError(f"reader {reader} crashed in micro-batch {batch_id} ({rows} read)")
        target = f"{reader}-batch={batch_id}"
        (
            batch.groupBy("user", "kind")
            .agg(F.count("*").alias("events"), F.sum("amount").alias("amount"))
            .write.mode("overwrite")
            .parquet(str(workdir / "aggregates" / target))
        )
        batch.select("id").write.mode("overwrite").parquet(str(workdir / "ids" / target))
        batch.unpersist()

    return write


def _run_reader_a(spark: Any, url: str, workdir: Path, batch_size: int) -> str:
    query = (
        _reader(spark, url, "reader-a", maxEntriesPerTrigger=str(batch_size))
        .writeStream.foreachBatch(_writer(workdir, "a", crash_in_batch=1))
        .option("checkpointLocation", str(workdir / "checkpoints" / "a"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        query.awaitTermination()
    except Exception as exc:  # the crash is the point of the exercise
        found = re.search(r"reader a crashed in micro-batch \d+ \(\d+ read\)", str(exc))
        return found.group(0) if found else f"{type(exc).__name__}: {str(exc)[:120]}"
    return "it did not crash"


def _run_reader_b(spark: Any, url: str, workdir: Path, claim_idle_ms: int) -> None:
    query = (
        _reader(spark, url, "reader-b", claimMinIdleMs=str(claim_idle_ms))
        .writeStream.foreachBatch(_writer(workdir, "b", crash_in_batch=None))
        .option("checkpointLocation", str(workdir / "checkpoints" / "b"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    log.info("reader B finished: %d micro-batches, %d rows",
             len(query.recentProgress),
             sum(p["numInputRows"] for p in query.recentProgress))  # fmt: skip


def _output_ids(spark: Any, workdir: Path) -> list[str]:
    folder = workdir / "ids"
    if not folder.exists():
        return []
    return [row.id for row in spark.read.parquet(str(folder / "*")).collect()]


def _output_totals(spark: Any, workdir: Path) -> dict[str, int]:
    folder = workdir / "aggregates"
    if not folder.exists():
        return {}
    rows = spark.read.parquet(str(folder / "*")).groupBy("kind").sum("events").collect()
    return {row["kind"]: int(row["sum(events)"]) for row in rows}


# -- Spark and the server -----------------------------------------------------------------------


def _spark_session() -> Any:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # Spark's Python workers import the connector: make this copy of resplite importable.
    import resplite

    root = str(Path(resplite.__file__).resolve().parents[1])
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])

    from pyspark.sql import SparkSession

    from resplite.spark import register

    spark = (
        SparkSession.builder.master("local[2,3]")
        .appName("resplite-pipeline-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # A short job: the quick JIT tier and one GC thread start faster on a small machine.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    # The demo reports through its own lines; Spark would also log the deliberate crash.
    spark.sparkContext.setLogLevel("OFF")
    register(spark)
    return spark


def _stream_commands_work(url: str) -> bool:
    """True if the server answers the stream commands the connector uses."""
    client = redis.Redis.from_url(url)
    key = f"demo-probe-{os.getpid()}"
    try:
        client.xadd(key, {"f": "v"})
        client.xgroup_create(key, "g", "0")
        client.xreadgroup("g", "c", {key: ">"}, count=1)
        client.xautoclaim(key, "g", "c2", 0, "0-0", count=1, justid=True)
        client.xpending(key, "g")
        client.xinfo_groups(key)
        client.xack(key, "g", "0-1")
        return True
    except redis.RedisError as exc:
        log.info("server at %s cannot run the pipeline: %s", url, exc)
        return False
    finally:
        with contextlib.suppress(redis.RedisError):
            client.delete(key)
        client.close()


@contextlib.contextmanager
def _server(choice: str) -> Iterator[tuple[str, str]]:
    if choice.startswith(("redis://", "rediss://", "unix://")):
        yield choice, "the given server"
        return
    order = {
        "auto": ("resplite", "resplite-process", "redis"),
        "resplite": ("resplite",),
        "resplite-process": ("resplite-process",),
        "redis": ("redis",),
    }.get(choice)
    if order is None:
        raise SystemExit(f"unknown --server {choice!r}")
    for kind in order:
        with contextlib.ExitStack() as stack:
            try:
                url, description = stack.enter_context(_start(kind))
            except Exception as exc:
                log.info("could not start %s: %s", kind, exc)
                continue
            if not _stream_commands_work(url):
                continue
            yield url, description
            return
    raise SystemExit("no server could run the pipeline")


@contextlib.contextmanager
def _start(kind: str) -> Iterator[tuple[str, str]]:
    if kind == "resplite":
        import resplite

        with resplite.serve() as handle:
            yield handle.url, "embedded resplite (resplite.serve)"
        return
    port = _free_port()
    if kind == "resplite-process":
        command = [sys.executable, "-m", "resplite", "--port", str(port), "--bind", "127.0.0.1"]
        description = "resplite (python -m resplite)"
    else:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed")
        command = [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no"]  # fmt: skip
        description = "redis-server (fallback)"
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port, proc)
        yield f"redis://127.0.0.1:{port}/0", description
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with status {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"not listening on port {port} after {timeout} s")


if __name__ == "__main__":
    raise SystemExit(main())
