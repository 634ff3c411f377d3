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

#: Commands the connector relies on, tried on a scratch key before a backend is used.
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
    ("WATCH", "{k}:m"),
    ("MULTI",),
    ("HSET", "{k}:m", "a", "1"),
    ("EXEC",),
    ("HSCAN", "{k}:m", "0"),
    ("DEL", "{k}", "{k}:m"),
)


@dataclass
class Backend:
    """A running server the connector is tested against."""

    name: str
    url: str
    process: ServerProcess

    def client(self, **kwargs: Any) -> Any:
        import redis

        return redis.Redis.from_url(self.url, **kwargs)

    def key(self, label: str) -> str:
        """A key no other test uses."""
        return f"t{uuid.uuid4().hex[:10]}:{label}"


def _missing_commands(url: str) -> list[str]:
    import redis

    client = redis.Redis.from_url(url)
    conn = client.connection_pool.get_connection()
    key = f"probe:{uuid.uuid4().hex[:8]}"
    failed: list[str] = []
    try:
        for command in _PROBE:
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
            pytest.skip("redis-server is not installed")
        return start_redis()
    return start_resplite()


@pytest.fixture(scope="session")
def _servers() -> Iterator[dict[str, Any]]:
    started: dict[str, Any] = {}
    yield started
    for server in started.values():
        if isinstance(server, ServerProcess):
            server.stop()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, _servers: dict[str, Any]) -> Backend:
    """A running server of each kind; skips visibly if one cannot serve the connector."""
    name: str = request.param
    if name not in _servers:
        try:
            process = _start(name)
        except pytest.skip.Exception:
            raise
        except Exception as exc:
            _servers[name] = f"{name} did not start: {exc}"
        else:
            _servers[name] = process
            missing = _missing_commands(process.url + "/0")
            if missing:
                _servers[name] = f"{name} lacks commands the connector needs: {missing[:3]}"
    server = _servers[name]
    if isinstance(server, str):
        pytest.skip(server)
    return Backend(name, server.url + "/0", server)


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
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # Python workers import the connector; make this checkout importable for them.
    path = os.environ.get("PYTHONPATH", "")
    if str(REPO_ROOT) not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), path) if p)
    from pyspark.sql import SparkSession

    from resplite.spark import register

    session = (
        SparkSession.builder.master("local[2,3]")
        .appName("resplite-spark-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .config("spark.driver.memory", "1g")
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


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
