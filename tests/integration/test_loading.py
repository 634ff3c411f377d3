"""A server loading its data set at start: it listens at once and answers -LOADING meanwhile.

Redis listens before it loads and serves clients every so often during the load, answering
``-LOADING Redis is loading the dataset in memory`` to every command without the ``loading``
flag (PING and GET included; INFO, CLIENT, MULTI, EXEC and the like run), with INFO
persistence showing ``loading:1`` and the load's progress fields. resplite does the same.
``key-load-delay`` (microseconds after each key, a Redis directive for tests) makes each
load last seconds on purpose, so what a client sees during it does not depend on timing;
``loading-process-events-interval-bytes 1024`` makes Redis serve clients often enough
during a small file's load (resplite serves them by time, whatever the directive says).

The snapshot is made by the reference Redis 7.0 (DEBUG POPULATE), so both servers load the
same file, and the replies during the load are compared byte for byte.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.raw import RawClient
from support.servers import ServerProcess, redis_server_path, running

KEYS = 4000
# 1 ms per key: every load below lasts at least four seconds.
SLOW_LOAD = ("--key-load-delay", "1000", "--loading-process-events-interval-bytes", "1024")
LOADING = b"-LOADING Redis is loading the dataset in memory\r\n"
LOADING_FIELDS = ["loading_start_time", "loading_total_bytes", "loading_rdb_used_mem",
                  "loading_loaded_bytes", "loading_loaded_perc", "loading_eta_seconds"]

pytestmark = pytest.mark.skipif(redis_server_path() is None, reason="needs redis-server")


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An RDB file of KEYS strings (key:N = value:N) and one key with a far TTL."""
    folder = tmp_path_factory.mktemp("snapshot")
    with running("redis", "--dir", str(folder)) as server:
        conn = RawClient(server.host, server.port)
        assert conn.call("DEBUG", "POPULATE", KEYS - 1) == b"+OK\r\n"
        assert conn.call("SET", "ttl", "v", "PXAT", "4102444800000") == b"+OK\r\n"
        assert conn.call("SAVE") == b"+OK\r\n"
        conn.close()
    return folder / "dump.rdb"


@pytest.fixture
def loading_dir(snapshot: Path, tmp_path: Path) -> Iterator[Path]:
    shutil.copy(snapshot, tmp_path / "dump.rdb")
    yield tmp_path


def _info(conn: RawClient, section: str) -> list[tuple[str, str]]:
    reply = conn.call("INFO", section)
    text = reply.split(b"\r\n", 1)[1].decode()
    return [tuple(line.split(":", 1)) for line in text.splitlines()  # type: ignore[misc]
            if ":" in line]


def _wait_loaded(conn: RawClient) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if dict(_info(conn, "persistence"))["loading"] == "0":
            return
        time.sleep(0.05)
    raise AssertionError("the load did not finish")


def _during_load(server: ServerProcess) -> tuple[list[bytes], list[tuple[str, str]]]:
    """What a client sees while ``server`` loads: replies to a fixed script, and INFO
    persistence."""
    conn = RawClient(server.host, server.port, timeout=120)
    try:
        replies = [conn.call("PING")]
        assert replies[0] == LOADING, "the load ended before a client could see it"
        for command in (("GET", "key:1"), ("DBSIZE",), ("SET", "new", "1"),
                        ("CLIENT", "SETNAME", "loader"), ("CLIENT", "GETNAME"),
                        ("MULTI",), ("GET", "key:1"), ("EXEC",), ("ECHO", "hi")):
            replies.append(conn.call(*command))
        info = _info(conn, "persistence")
        assert dict(_info(conn, "persistence"))["loading"] == "1"
        _wait_loaded(conn)
        replies += [conn.call("PING"), conn.call("DBSIZE"), conn.call("GET", "key:1234"),
                    conn.call("CLIENT", "GETNAME")]
        return replies, info
    finally:
        conn.close()


def test_clients_get_loading_during_a_slow_load_as_in_redis(loading_dir: Path) -> None:
    seen = {}
    for kind in ("redis", "resplite"):
        folder = loading_dir / kind
        folder.mkdir()
        shutil.copy(loading_dir / "dump.rdb", folder / "dump.rdb")
        with running(kind, "--dir", str(folder), *SLOW_LOAD, loaded=False) as server:
            seen[kind] = _during_load(server)
    assert seen["resplite"][0] == seen["redis"][0]
    assert seen["resplite"][0] == [
        LOADING, LOADING, LOADING, LOADING,  # PING, GET, DBSIZE, SET
        b"+OK\r\n", b"$6\r\nloader\r\n",  # CLIENT SETNAME / GETNAME ("loading" commands)
        b"+OK\r\n", LOADING,  # MULTI, then a GET refused instead of queued
        b"-EXECABORT Transaction discarded because of previous errors.\r\n",
        b"$2\r\nhi\r\n",
        # after the load
        b"+PONG\r\n", b":%d\r\n" % KEYS, b"$10\r\nvalue:1234\r\n", b"$6\r\nloader\r\n",
    ]
    # INFO persistence: loading:1 and the progress fields, after the AOF ones, as Redis.
    for kind in ("redis", "resplite"):
        info = seen[kind][1]
        names = [name for name, _ in info]
        assert dict(info)["loading"] == "1" and dict(info)["async_loading"] == "0"
        assert names[-len(LOADING_FIELDS):] == LOADING_FIELDS, kind
        assert names.index("module_fork_last_cow_size") == len(names) - len(LOADING_FIELDS) - 1
    ours = dict(seen["resplite"][1])
    size = (loading_dir / "dump.rdb").stat().st_size
    assert int(ours["loading_total_bytes"]) == size
    assert 0 <= int(ours["loading_loaded_bytes"]) <= size
    assert int(ours["loading_rdb_used_mem"]) > 0  # the file's used-mem field
    assert re.fullmatch(r"\d+\.\d\d", ours["loading_loaded_perc"])
    assert abs(int(ours["loading_start_time"]) - time.time()) < 3600
    assert int(ours["loading_eta_seconds"]) >= 0


def test_an_aof_base_loads_with_clients_answered(tmp_path: Path) -> None:
    """appendonly yes: the RDB base of the append-only file is loaded the same way."""
    aof = ("--appendonly", "yes")
    with running("resplite", "--dir", str(tmp_path), *aof) as first:
        conn = RawClient(first.host, first.port)
        conn.pipeline([("SET", f"k{i}", f"v{i}") for i in range(KEYS)])
        assert conn.call("BGREWRITEAOF").startswith(b"+")
        deadline = time.monotonic() + 120
        while (dict(_info(conn, "persistence"))["aof_rewrite_in_progress"] != "0"
               and time.monotonic() < deadline):
            time.sleep(0.05)
        conn.call("SET", "after", "rewrite")  # one command in the incr file too
        conn.close()
    with running("resplite", "--dir", str(tmp_path), *aof, *SLOW_LOAD, loaded=False) as second:
        conn = RawClient(second.host, second.port, timeout=120)
        assert conn.call("GET", "k1") == LOADING
        info = dict(_info(conn, "persistence"))
        assert info["loading"] == "1" and int(info["loading_total_bytes"]) > 0
        _wait_loaded(conn)
        assert conn.call("DBSIZE") == b":%d\r\n" % (KEYS + 1)
        assert conn.call("GET", "after") == b"$7\r\nrewrite\r\n"
        conn.close()


def test_shutdown_during_the_load_exits_without_saving(loading_dir: Path) -> None:
    """As Redis: SHUTDOWN while loading never saves (the file on disk stays as it was) and
    the server exits without finishing the load."""
    before = (loading_dir / "dump.rdb").read_bytes()
    with running("resplite", "--dir", str(loading_dir), *SLOW_LOAD,
                 save="3600 1", loaded=False) as server:
        conn = RawClient(server.host, server.port, timeout=120)
        assert conn.call("PING") == LOADING
        conn.send("SHUTDOWN")
        assert conn.is_closed(timeout=120)
        conn.close()
        assert server.proc.wait(120) == 0
    assert (loading_dir / "dump.rdb").read_bytes() == before
