"""Fixtures for the Spark connector tests: two servers and one Spark session.

Every end-to-end test runs against a real redis-server and against resplite (started as
``python -m resplite``); a backend that cannot start, or lacks the stream commands the connector
needs, is skipped with the reason. One SparkSession (``local[2,3]``: two cores, up to three task
attempts so that a killed task is retried) is shared by all tests of the session and started only
when the first Spark test needs it. Spark tests carry the ``spark`` mark and the ``xdist_group``
mark ``spark`` so that ``pytest -n N --dist loadgroup`` keeps them on one worker.

Each test works on keys with a fresh random prefix, so tests never see each other's data.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.servers import ServerProcess, redis_server_path, start_redis, start_resplite

REPO_ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ("redis", "resplite")

#: Commands every connector path relies on, tried on a scratch key before a backend is used.
_PROBE = (
    ("XADD", "{k}", "*", "f", "v"),
    ("XGROUP", "CREATE", "{k}", "g", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "{k}", ">"),
    ("XAUTOCLAIM", "{k}", "g", "c2", "0", "0-0", "COUNT", "1", "JUSTID"),
    ("XPENDING", "{k}", "g"),
    ("XPENDING", "{k}", "g", "IDLE", "0", "-", "+", "10", "c2"),
    ("XINFO", "GROUPS", "{k}"),
    ("XINFO", "CONSUMERS", "{k}", "g"),
    ("XACK", "{k}", "g", "0-1"),
    ("XGROUP", "DELCONSUMER", "{k}", "g", "c"),
    ("XRANGE", "{k}", "(0-0", "+", "COUNT", "1"),
    ("XREVRANGE", "{k}", "+", "-", "COUNT", "1"),
    ("DEL", "{k}"),
)

#: What the idempotent sink's markers need in addition (a transaction over a hash).
_MARKER_PROBE = (
    ("WATCH", "{k}:m"),
    ("HEXISTS", "{k}:m", "a"),
    ("MULTI",),
    ("HSET", "{k}:m", "a", "1"),
    ("EXEC",),
    ("HSCAN", "{k}:m", "0", "MATCH", "a*"),
    ("HDEL", "{k}:m", "a"),
    ("DEL", "{k}:m"),
)


@dataclass
class Backend:
    """A running server the connector is tested against."""

    name: str
    url: str
    process: ServerProcess
    lacking_for_markers: list[str]

    def require_markers(self) -> None:
        """Skip unless the server runs the idempotent sink's MULTI/EXEC-over-a-hash scheme."""
        if self.lacking_for_markers:
            pytest.skip(f"{self.name} lacks {self.lacking_for_markers[:3]} (idempotent sink)")

    def client(self, **kwargs: Any) -> Any:
        import redis

        return redis.Redis.from_url(self.url, **kwargs)

    def key(self, label: str) -> str:
        """A key no other test uses."""
        return f"t{uuid.uuid4().hex[:10]}:{label}"


def _missing_commands(url: str, probe: tuple[tuple[str, ...], ...] = _PROBE) -> list[str]:
    import redis

    client = redis.Redis.from_url(url)
    conn = client.connection_pool.get_connection()
    key = f"probe:{uuid.uuid4().hex[:8]}"
    failed: list[str] = []
    try:
        for command in probe:
            args = [a.replace("{k}", key) for a in command]
            conn.send_command(*args)  # raw: no reply callbacks, so any well-formed reply is fine
            try:
                conn.read_response()
            except redis.ResponseError as exc:
                failed.append(f"{' '.join(args[:2])}: {exc}")
    finally:
        client.connection_pool.release(conn)
        client.close()
    return failed


def _start(name: str) -> ServerProcess:
    if name == "redis":
        if redis_server_path() is None:
            raise RuntimeError("redis-server is not installed")
        return start_redis()
    return start_resplite()


@pytest.fixture(scope="session")
def _servers() -> Iterator[dict[str, Any]]:
    """Per backend name: a Backend, or the reason it is skipped. Processes stop at the end."""
    state: dict[str, Any] = {"processes": []}
    yield state
    for process in state["processes"]:
        process.stop()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, _servers: dict[str, Any]) -> Backend:
    """A running server of each kind; skips visibly if one cannot serve the connector."""
    name: str = request.param
    if name not in _servers:
        _servers[name] = _launch(name, _servers["processes"])
    found = _servers[name]
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture
def one_backend(_servers: dict[str, Any]) -> Backend:
    """The first backend that works, resplite first: for checks that do not depend on the
    server's stream semantics (error messages, option handling) and need not run twice."""
    reasons = []
    for name in ("resplite", "redis"):
        if name not in _servers:
            _servers[name] = _launch(name, _servers["processes"])
        if isinstance(_servers[name], Backend):
            return _servers[name]
        reasons.append(_servers[name])
    pytest.skip("; ".join(reasons))


def _launch(name: str, processes: list[ServerProcess]) -> Backend | str:
    try:
        process = _start(name)
    except pytest.skip.Exception as exc:
        return str(exc.msg)
    except Exception as exc:
        return f"{name} did not start: {exc}"
    processes.append(process)
    url = process.url + "/0"
    missing = _missing_commands(url)
    if missing:
        return f"{name} lacks commands the connector needs: {missing[:3]}"
    return Backend(name, url, process, _missing_commands(url, _MARKER_PROBE))


@pytest.fixture
def spark(spark_session: Any) -> Iterator[Any]:
    """The shared session; streaming queries a test leaves running are stopped after it."""
    yield spark_session
    for query in spark_session.streams.active:
        query.stop()


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    """The one SparkSession of the test session (created lazily, stopped at the end)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed: Spark tests need Java 17+")
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install resplite[spark])")
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install resplite[spark])")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Spark starts its Python workers with PYSPARK_PYTHON ("python3" when unset: whatever is
    # first on PATH, likely without pyspark or the connector); the driver side too.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # Python workers import the connector; make this checkout importable for them.
    path = os.environ.get("PYTHONPATH", "")
    if str(REPO_ROOT) not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), path) if p)
    from pyspark.sql import SparkSession

    from resplite.spark import register

    _warm_python_workers()
    session = (
        SparkSession.builder.master("local[2,3]")
        .appName("resplite-spark-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.adaptive.enabled", "false")
        # Generous limits for a busy machine: the Python side's socket handshake with the JVM
        # (default 15 s), stopping a streaming query, and the local executor's heartbeats.
        .config("spark.python.authenticate.socketTimeout", "120s")
        .config("spark.sql.streaming.stopTimeout", "120s")
        .config("spark.network.timeout", "300s")
        .config("spark.executor.heartbeatInterval", "20s")
        .config("spark.driver.memory", "1g")
        # Short jobs: the quick JIT tier and one GC thread start faster on a small machine.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    # The fault-injecting UDFs live in a test module the workers cannot import: ship them whole.
    import spark_helpers
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(spark_helpers)
    yield session
    session.stop()


def _warm_python_workers() -> None:
    """Import, once, what Spark's Python workers import before they connect back to the JVM.

    A streaming source's Python runner (PythonStreamingSourceRunner) must connect back within
    10 seconds of being launched, a limit fixed in Spark 4.3 (PythonWorkerFactory's accept
    timeout; no configuration raises it). On a busy machine a cold start, reading pyspark,
    pyarrow and numpy from disk, can take most of that; with the files in the page cache it
    takes a fraction of a second.
    """
    import subprocess

    modules = "pyspark.daemon, pyspark.sql.streaming.python_streaming_source_runner"
    subprocess.run([sys.executable, "-c", f"import {modules}"], check=True, timeout=300,
                   stdout=subprocess.DEVNULL)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
