"""The append-only file end to end: Redis 8.0.6's multi-part AOF loads, writes survive a
restart under each fsync policy, a torn tail, BGREWRITEAOF, and kill -9 under load.

Each test starts its own server processes on a temporary ``dir``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from support.servers import (
    ServerProcess,
    free_port,
    redis_server_path,
    require_reference,
    running,
)

from integration.test_persistence import FIXTURES, _build, dataset
from resplite.engine.aof import encode_command

AOF = ("--appendonly", "yes")


def _manifest(folder: Path) -> list[str]:
    return (folder / "appendonlydir" / "appendonly.aof.manifest").read_text().splitlines()


def _wait_rewrite(client: redis.Redis) -> None:
    for _ in range(200):
        if client.info("persistence")["aof_rewrite_in_progress"] == 0:
            return
        time.sleep(0.05)


def test_the_redis_8_aof_loads(tmp_path: Path) -> None:
    """Redis 8.0.6's manifest, RDB-preamble base and incr file give the data set its
    commands build."""
    shutil.copytree(FIXTURES / "core" / "aof" / "appendonlydir", tmp_path / "appendonlydir")
    commands = json.loads((FIXTURES / "core" / "commands.json").read_text())
    with running("resplite", "--dir", str(tmp_path), *AOF) as loaded, \
            running("resplite") as built:
        expected_client = redis.Redis.from_url(built.url)
        for cmd in commands:
            expected_client.execute_command(*cmd)
        loaded_client = redis.Redis.from_url(loaded.url)
        assert dataset(loaded_client) == dataset(expected_client)
        assert loaded_client.info("persistence")["aof_enabled"] == 1


def test_the_redis_8_extras_aof_loads_as_its_snapshot(tmp_path: Path) -> None:
    """The extras fixture (GEO, a function library, hash field TTLs, stream metadata): its
    AOF gives the data set and the function library its RDB snapshot gives."""
    aof_dir = tmp_path / "aof"
    rdb_dir = tmp_path / "rdb"
    shutil.copytree(FIXTURES / "extras" / "aof" / "appendonlydir", aof_dir / "appendonlydir")
    rdb_dir.mkdir()
    shutil.copy(FIXTURES / "extras" / "rdb" / "dump.rdb", rdb_dir / "dump.rdb")
    with running("resplite", "--dir", str(aof_dir), *AOF) as from_aof, \
            running("resplite", "--dir", str(rdb_dir)) as from_rdb:
        aof_client = redis.Redis.from_url(from_aof.url)
        rdb_client = redis.Redis.from_url(from_rdb.url)
        loaded = dataset(aof_client)
        assert loaded == dataset(rdb_client)
        assert loaded
        libraries = aof_client.execute_command("FUNCTION", "LIST", "WITHCODE")
        assert libraries == rdb_client.execute_command("FUNCTION", "LIST", "WITHCODE")
        assert [lib[b"library_name"] for lib in libraries] == [b"fixturelib"]
        assert aof_client.fcall("hello", 0, "there") == b"hi there"


@pytest.mark.parametrize("policy", ["always", "everysec", "no"])
def test_writes_survive_a_restart(tmp_path: Path, policy: str) -> None:
    with running("resplite", "--dir", str(tmp_path), *AOF, "--appendfsync", policy) as first:
        client = redis.Redis.from_url(first.url)
        _build(client)
        client.set("rel", "v", ex=1000)
        client.expire("s:int", 5000)
        sid = client.xadd("stream:x", {"a": "1"})
        assert isinstance(sid, bytes)
        with client.pipeline() as pipe:  # MULTI/EXEC
            pipe.incr("counter")
            pipe.hset("h:tx", "f", "v")
            pipe.execute()
        before = dataset(client)
    lines = _manifest(tmp_path)
    assert lines[0].startswith("file appendonly.aof.1.base.rdb seq 1 type b")
    assert lines[-1] == "file appendonly.aof.1.incr.aof seq 1 type i"
    incr = (tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert b"PEXPIREAT" in incr and b"PXAT" in incr and sid in incr
    assert b"MULTI" in incr and b"EXEC" in incr
    with running("resplite", "--dir", str(tmp_path), *AOF) as second:
        assert dataset(redis.Redis.from_url(second.url)) == before


def test_a_torn_last_command(tmp_path: Path) -> None:
    with running("resplite", "--dir", str(tmp_path), *AOF, "--appendfsync", "always") as srv:
        client = redis.Redis.from_url(srv.url)
        client.set("a", "1")
        client.set("b", "2")
    incr = tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof"
    whole = incr.read_bytes()
    incr.write_bytes(whole + b"*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$1")
    port = free_port()
    refused = subprocess.run(
        [sys.executable, "-m", "resplite", "--port", str(port), "--dir", str(tmp_path),
         *AOF, "--aof-load-truncated", "no"], capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    assert "Unexpected end of file" in refused.stderr + refused.stdout
    with running("resplite", "--dir", str(tmp_path), *AOF) as srv:
        client = redis.Redis.from_url(srv.url)
        assert client.mget("a", "b", "c") == [b"1", b"2", None]
        client.set("d", "4")
    assert incr.read_bytes().startswith(whole)
    with running("resplite", "--dir", str(tmp_path), *AOF) as srv:
        assert redis.Redis.from_url(srv.url).get("d") == b"4"
    # A file the manifest names but that is missing stops the start, naming it.
    incr.unlink()
    missing = subprocess.run(
        [sys.executable, "-m", "resplite", "--port", str(free_port()), "--dir",
         str(tmp_path), *AOF], capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0
    assert "appendonly.aof.1.incr.aof" in missing.stdout + missing.stderr


def test_bgrewriteaof(tmp_path: Path) -> None:
    with running("resplite", "--dir", str(tmp_path), *AOF) as srv:
        client = redis.Redis.from_url(srv.url)
        _build(client)
        for _ in range(200):
            client.incr("n")
        client.set_response_callback("BGREWRITEAOF", lambda r, **kw: r)
        assert client.execute_command("BGREWRITEAOF") == \
            b"Background append only file rewriting started"
        client.set("after", "yes")
        _wait_rewrite(client)
        time.sleep(0.3)  # the cron installs the new base
        info = client.info("persistence")
        assert info["aof_last_bgrewrite_status"] == "ok" and info["aof_rewrites"] == 1
        assert info["aof_enabled"] == 1 and info["aof_rewrite_in_progress"] == 0
        assert info["aof_last_write_status"] == "ok"
        assert info["aof_current_size"] >= info["aof_base_size"] > 0
        before = dataset(client)
    assert _manifest(tmp_path) == ["file appendonly.aof.2.base.rdb seq 2 type b",
                                   "file appendonly.aof.2.incr.aof seq 2 type i"]
    assert sorted(os.listdir(tmp_path / "appendonlydir")) == [
        "appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof", "appendonly.aof.manifest"]
    base = (tmp_path / "appendonlydir" / "appendonly.aof.2.base.rdb").read_bytes()
    assert base.startswith(b"REDIS0012") and b"aof-base" in base
    with running("resplite", "--dir", str(tmp_path), *AOF) as second:
        assert dataset(redis.Redis.from_url(second.url)) == before


def test_auto_rewrite(tmp_path: Path) -> None:
    with running("resplite", "--dir", str(tmp_path), *AOF, "--auto-aof-rewrite-min-size",
                 "10kb", "--auto-aof-rewrite-percentage", "100") as srv:
        client = redis.Redis.from_url(srv.url)
        for i in range(300):
            client.set(f"k{i}", "x" * 100)
        for _ in range(100):
            if client.info("persistence")["aof_rewrites"] >= 1:
                break
            time.sleep(0.05)
        assert client.info("persistence")["aof_rewrites"] >= 1
        assert client.dbsize() == 300


def _load(url: str, name: str, acked: dict[str, list[tuple[str, bytes]]],
          stop: threading.Event) -> None:
    client = redis.Redis.from_url(url, socket_timeout=5)
    done = acked.setdefault(name, [])
    i = 0
    try:
        while not stop.is_set() and i < 3000:
            kind = i % 3
            if kind == 0:
                client.set(f"{name}:s{i}", i)
                done.append(("set", f"{name}:s{i}".encode()))
            elif kind == 1:
                client.hset(f"{name}:h", f"f{i}", i)
                done.append(("hset", f"f{i}".encode()))
            else:
                sid = client.xadd(f"{name}:x", {"i": i})
                assert isinstance(sid, bytes)
                done.append(("xadd", sid))
            i += 1
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
        pass  # the server was killed: what was acknowledged is in `done`


def _consume(url: str, log: dict[str, list[tuple[str, bytes]]], stop: threading.Event) -> None:
    """A consumer of the writers' streams: XREADGROUP, then XACK of every other entry;
    ``log`` records what each answered reply said, as (stream, id): delivered, acknowledged."""
    client = redis.Redis.from_url(url, socket_timeout=5)
    delivered = log.setdefault("delivered", [])
    acked = log.setdefault("acked", [])
    try:
        for name in ("c0", "c1"):
            with contextlib.suppress(redis.exceptions.ResponseError):
                client.xgroup_create(f"{name}:x", "g", id="0", mkstream=True)
        while not stop.is_set():
            for name in ("c0", "c1"):
                key = f"{name}:x"
                got: Any = client.xreadgroup("g", "reader", {key: ">"}, count=20)
                for _, entries in got or []:
                    ids: list[bytes] = [sid for sid, _ in entries]
                    delivered.extend((key, sid) for sid in ids)
                    to_ack = ids[::2]
                    if to_ack:
                        client.xack(key, "g", *to_ack)
                        acked.extend((key, sid) for sid in to_ack)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
        pass


def test_kill_9_loses_no_acknowledged_write(tmp_path: Path) -> None:
    """appendfsync always: every write a client heard succeed is there after SIGKILL."""
    port = free_port()
    args = [sys.executable, "-m", "resplite", "--port", str(port), "--bind", "127.0.0.1",
            "--dir", str(tmp_path), *AOF, "--appendfsync", "always", "--loglevel", "warning"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"redis://127.0.0.1:{port}"
        client = redis.Redis.from_url(url)
        for _ in range(500):
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
        acked: dict[str, list[tuple[str, bytes]]] = {}
        stop = threading.Event()
        threads = [threading.Thread(target=_load, args=(url, f"c{n}", acked, stop))
                   for n in range(2)]
        group_log: dict[str, list[tuple[str, bytes]]] = {}
        threads.append(threading.Thread(target=_consume, args=(url, group_log, stop)))
        for t in threads:
            t.start()
        time.sleep(random.uniform(0.3, 1.5))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        stop.set()
        for t in threads:
            t.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert sum(len(v) for v in acked.values()) > 0
    with running("resplite", "--dir", str(tmp_path), *AOF) as srv:
        client = redis.Redis.from_url(srv.url)
        for name, done in acked.items():
            fields = set(client.hkeys(f"{name}:h"))
            ids = {e[0] for e in client.xrange(f"{name}:x") or []}
            for kind, what in done:
                if kind == "set":
                    assert client.exists(what), what
                elif kind == "hset":
                    assert what in fields, what
                else:
                    assert what in ids, what
        # Every delivery the consumer heard of is in the group: pending unless its XACK
        # was answered (an XACK sent but not answered may or may not have landed).
        acked_ids = set(group_log.get("acked", []))
        pending: set[tuple[str, Any]] = set()
        entries: set[tuple[str, Any]] = set()
        for name in ("c0", "c1"):
            key = f"{name}:x"
            entries |= {(key, e[0]) for e in client.xrange(key) or []}
            with contextlib.suppress(redis.exceptions.ResponseError):
                pending |= {(key, p["message_id"]) for p in
                            client.xpending_range(key, "g", "-", "+", 100000)}
        for item in group_log.get("delivered", []):
            assert item in entries, item
            if item in acked_ids:
                assert item not in pending, item
        # A delivered entry left pending stays so; only the one XACK in flight at the kill
        # (at most 10 ids) may have landed unanswered.
        gone = [i for i in group_log.get("delivered", [])
                if i not in acked_ids and i not in pending]
        assert len(gone) <= 10, gone


def test_consumer_groups_and_random_pops_replay_to_the_same_state(tmp_path: Path) -> None:
    """XREADGROUP / XCLAIM / XAUTOCLAIM are logged as the PEL state they leave and SPOP as
    SREM, so the replay gives the same groups, pending entries and set."""
    with running("resplite", "--dir", str(tmp_path), *AOF) as first:
        client = redis.Redis.from_url(first.url)
        client.sadd("set", *range(50))
        client.spop("set")
        client.spop("set", 5)
        for i in range(10):
            client.xadd("s", {"i": i})
        client.xgroup_create("s", "g", id="0")
        client.xreadgroup("g", "alice", {"s": ">"}, count=4)
        client.xreadgroup("g", "bob", {"s": ">"}, count=3)
        # (A history read is not logged, as in Redis: the delivery counts it raises are
        # not kept by a replay.)
        pending = client.xpending_range("s", "g", "-", "+", 10)
        client.xack("s", "g", pending[0]["message_id"])
        client.xclaim("s", "g", "carol", 0, [pending[1]["message_id"]])
        client.xautoclaim("s", "g", "dave", 0, start_id="0", count=2)
        client.xreadgroup("g", "erin", {"s": ">"}, noack=True, count=1)
        # A blocked XREADGROUP served by a later XADD.
        blocked = redis.Redis.from_url(first.url)
        result: list[object] = []
        waiter = threading.Thread(target=lambda: result.append(
            blocked.xreadgroup("g", "frank", {"s": ">"}, block=5000)))
        waiter.start()
        for _ in range(200):
            if client.info("clients")["blocked_clients"]:
                break
            time.sleep(0.01)
        client.xadd("s", {"late": 1})
        waiter.join(10)
        assert result and result[0]
        before = dataset(client)
        idle_before = {p["message_id"]: p["times_delivered"]
                       for p in client.xpending_range("s", "g", "-", "+", 100)}
    incr = (tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert b"SPOP" not in incr and b"SREM" in incr and b"XREADGROUP" not in incr
    with running("resplite", "--dir", str(tmp_path), *AOF) as second:
        client = redis.Redis.from_url(second.url)
        assert dataset(client) == before
        assert {p["message_id"]: p["times_delivered"]
                for p in client.xpending_range("s", "g", "-", "+", 100)} == idle_before


def test_newer_commands_replay_to_the_same_state(tmp_path: Path) -> None:
    """Redis 8.8 / 8.10 writes: INCREX is logged as the value and absolute expiry it left,
    LMOVEM and a blocked BLMOVEM as ``LMOVEM ... EXACTLY n``, HIMPORT SET (whose fieldset a
    replay would not have) as DEL and HSET; WAITAOF sees them fsynced."""
    with running("resplite", "--dir", str(tmp_path), *AOF) as first:
        client = redis.Redis.from_url(first.url)
        assert client.increx("c", byint=5, ex=1000) == [5, 5]
        assert client.increx("f", byfloat="0.5", ubound=10) == [0.5, 0.5]
        client.rpush("src", *"abcdefg")
        assert client.lmovem("src", "dst", "RIGHT", "LEFT", count=3, ordering="OBO") == \
            [b"e", b"f", b"g"]
        blocked = redis.Redis.from_url(first.url)
        result: list[object] = []
        waiter = threading.Thread(target=lambda: result.append(blocked.blmovem(
            "src", "dst", 5, "LEFT", "RIGHT", count=6, mode="EXACTLY", ordering="BULK")))
        waiter.start()
        for _ in range(200):
            if client.info("clients")["blocked_clients"]:
                break
            time.sleep(0.01)
        client.rpush("src", "h", "i")
        waiter.join(10)
        assert result == [[b"a", b"b", b"c", b"d", b"h", b"i"]]
        client.hset("h", mapping={"old": "x"})
        client.execute_command("HIMPORT", "PREPARE", "fs", "a", "b")
        client.execute_command("HIMPORT", "SET", "h", "fs", "1", "2")
        assert client.waitaof(1, 0, 0) == [1, 0]
        before = dataset(client)
        expiry = client.pexpiretime("c")
    incr = (tmp_path / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert b"INCREX" not in incr and b"BLMOVEM" not in incr and b"EXACTLY" in incr
    assert b"HIMPORT" not in incr
    with running("resplite", "--dir", str(tmp_path), *AOF) as second:
        client = redis.Redis.from_url(second.url)
        assert dataset(client) == before
        assert client.pexpiretime("c") == expiry


@pytest.mark.skipif(shutil.which("redis-check-aof") is None, reason="needs redis-check-aof")
def test_redis_check_aof_accepts_the_incr_files(tmp_path: Path) -> None:
    """Debian's redis-check-aof (7.0) validates resplite's incr files. Its RDB check refuses
    version 12, so a whole manifest (base included) fails there for resplite's files exactly
    as it does for Redis 8.0.6's own."""
    with running("resplite", "--dir", str(tmp_path), *AOF) as srv:
        client = redis.Redis.from_url(srv.url)
        _build(client)
        with client.pipeline() as pipe:
            pipe.set("t", 1)
            pipe.incr("t")
            pipe.execute()
    folder = tmp_path / "appendonlydir"
    checked = subprocess.run(["redis-check-aof", str(folder / "appendonly.aof.1.incr.aof")],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and "is valid" in checked.stdout
    ours = subprocess.run(["redis-check-aof", str(folder / "appendonly.aof.manifest")],
                          capture_output=True, text=True, timeout=60)
    theirs_dir = tmp_path / "theirs"
    shutil.copytree(FIXTURES / "core" / "aof" / "appendonlydir", theirs_dir)
    theirs = subprocess.run(["redis-check-aof", str(theirs_dir / "appendonly.aof.manifest")],
                            capture_output=True, text=True, timeout=60)
    assert (ours.returncode, ours.stdout.splitlines()[-1:]) == \
        (theirs.returncode, theirs.stdout.splitlines()[-1:])


def test_config_set_appendonly_starts_the_log(tmp_path: Path) -> None:
    with running("resplite", "--dir", str(tmp_path)) as srv:
        client = redis.Redis.from_url(srv.url)
        client.set("before", "1")
        client.config_set("appendonly", "yes")
        client.set("after", "2")
        assert client.info("persistence")["aof_enabled"] == 1
    with running("resplite", "--dir", str(tmp_path), *AOF) as srv:
        assert redis.Redis.from_url(srv.url).mget("before", "after") == [b"1", b"2"]


def test_a_base_without_rdb_preamble(tmp_path: Path) -> None:
    """aof-use-rdb-preamble no: the base is commands (RESTORE ... ABSTTL per key)."""
    options = (*AOF, "--aof-use-rdb-preamble", "no")
    with running("resplite", "--dir", str(tmp_path), *options) as srv:
        client = redis.Redis.from_url(srv.url)
        _build(client)
        client.set_response_callback("BGREWRITEAOF", lambda r, **kw: r)
        client.execute_command("BGREWRITEAOF")
        _wait_rewrite(client)
        time.sleep(0.3)  # the cron installs the new base
        client.set("after", "1")
        before = dataset(client)
    assert _manifest(tmp_path)[0] == "file appendonly.aof.2.base.aof seq 2 type b"
    base = (tmp_path / "appendonlydir" / "appendonly.aof.2.base.aof").read_bytes()
    assert base.startswith(b"*2\r\n$6\r\nSELECT\r\n") and b"RESTORE" in base
    with running("resplite", "--dir", str(tmp_path), *AOF) as second:
        assert dataset(redis.Redis.from_url(second.url)) == before


def test_a_base_without_rdb_preamble_keeps_a_stream_s_iids(tmp_path: Path) -> None:
    """aof-use-rdb-preamble no: a stream's idempotent-producer state follows its RESTORE as
    Redis 8.6 rewrites it (XCFGSET for its own settings, one XIDMPRECORD per iid whose entry
    is left), and both resplite and Redis 8.6.3 replay it to the same duplicates."""
    ref = require_reference()
    options = (*AOF, "--aof-use-rdb-preamble", "no")
    folder = tmp_path / "resplite"
    folder.mkdir()
    with running("resplite", "--dir", str(folder), *options) as srv:
        client = redis.Redis.from_url(srv.url)
        run = client.execute_command
        run("XADD", "s", "*", "f", "v")
        run("XCFGSET", "s", "IDMP-DURATION", "1000")
        ids = {(pid, iid): run("XADD", "s", "IDMP", pid, iid, "*", "f", "v")
               for pid, iid in (("p1", "a"), ("p1", "gone"), ("p2", "a"))}
        run("XDEL", "s", ids["p1", "gone"])
        assert run("BGREWRITEAOF")
        _wait_for(lambda: _manifest(folder)[0].startswith("file appendonly.aof.2.base.aof"))
    base = (folder / "appendonlydir" / "appendonly.aof.2.base.aof").read_bytes()
    assert encode_command([b"XCFGSET", b"s", b"IDMP-DURATION", b"1000", b"IDMP-MAXSIZE",
                           b"100"]) in base
    assert base.count(b"XIDMPRECORD") == 2
    assert encode_command([b"XIDMPRECORD", b"s", b"p2", b"a", ids["p2", "a"]]) in base
    shutil.copytree(folder, tmp_path / "redis")

    def replayed(server: ServerProcess) -> None:
        client = redis.Redis.from_url(server.url)
        run = client.execute_command
        assert run("XLEN", "s") == 3, server.name
        for (pid, iid), sid in ids.items():
            again = run("XADD", "s", "IDMP", pid, iid, "*", "f", "retry")
            assert (again == sid) == (iid != "gone"), (server.name, pid, iid)
        assert client.xinfo_stream("s")["idmp-duration"] == 1000, server.name

    with running("resplite", "--dir", str(folder), *AOF) as server:
        replayed(server)
    server = ref.start_redis("--dir", str(tmp_path / "redis"), *AOF)
    try:
        replayed(server)
    finally:
        server.stop()


def _wait_for(condition: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.05)


# -- scripts and functions --------------------------------------------------------------------

LIBRARY = ("#!lua name=aoflib\n"
           "redis.register_function('bump', function(keys) redis.call('incr', keys[1]) "
           "return redis.call('incr', keys[1]) end)")


def _script_workload(client: redis.Redis) -> None:
    """Writes from scripts as Redis propagates them: each write the script made (never the
    EVAL), several inside MULTI/EXEC, none after redis.set_repl(REPL_NONE)."""
    client.eval("redis.call('set', KEYS[1], 'one') return 1", 1, "single")
    client.eval("redis.call('set', KEYS[1], 'a') redis.call('rpush', KEYS[2], 'x', 'y') "
                "return redis.call('incr', KEYS[3])", 3, "s", "l", "n")
    client.eval("return redis.call('get', KEYS[1])", 1, "s")  # no write: nothing logged
    client.eval("redis.set_repl(redis.REPL_NONE) redis.call('set', 'unlogged', '1') "
                "redis.set_repl(redis.REPL_ALL) redis.call('set', 'logged', '1')", 0)
    client.function_load(LIBRARY)
    client.fcall("bump", 1, "fn")
    with client.pipeline() as pipe:  # a script inside MULTI/EXEC: one transaction
        pipe.set("tx", "1")
        pipe.eval("redis.call('incr', 'tx') redis.call('incr', 'tx')", 0)
        pipe.execute()


def test_script_writes_are_logged_as_redis_logs_them(tmp_path: Path) -> None:
    """The incr file equals Redis 7.0's byte for byte for the same scripts."""
    files = {}
    for kind in ("redis", "resplite"):
        folder = tmp_path / kind
        folder.mkdir()
        with running(kind, "--dir", str(folder), *AOF) as srv:
            client = redis.Redis.from_url(srv.url)
            _script_workload(client)
        files[kind] = (folder / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert files["resplite"] == files["redis"]
    assert b"EVAL" not in files["resplite"] and b"unlogged" not in files["resplite"]
    assert files["resplite"].count(b"MULTI") == 3  # two scripts, one transaction


def _rewritten_workload(client: redis.Redis) -> None:
    """Writes Redis logs in another form than they were sent, with no clock in the form."""
    run = client.execute_command
    run("RPUSH", "l", "a", "b", "c", "d", "e")
    run("LMPOP", "1", "l", "LEFT", "COUNT", "2")  # LPOP l 2
    run("BLMPOP", "1", "2", "nol", "l", "RIGHT", "COUNT", "9")  # RPOP l 3
    run("RPUSH", "l", "a", "b")
    run("BLPOP", "nol", "l", "1")  # LPOP l
    run("BLMOVE", "l", "l2", "RIGHT", "LEFT", "1")  # LMOVE
    run("BRPOPLPUSH", "l2", "l3", "1")  # RPOPLPUSH
    run("ZADD", "z", "1", "a", "2", "b", "3", "c")
    run("ZMPOP", "1", "z", "MAX", "COUNT", "9")  # ZPOPMAX z 3
    run("ZADD", "z", "1", "a", "2", "b")
    run("BZPOPMIN", "z", "1")  # ZPOPMIN z
    run("BZMPOP", "1", "1", "z", "MAX")  # ZPOPMAX z 1
    run("SET", "s", "v")
    run("GETSET", "s", "w")  # SET s w
    run("GETDEL", "s")  # DEL s
    run("GETDEL", "s")  # nothing
    run("SET", "f", "1.5")
    run("INCRBYFLOAT", "f", "0.25")  # SET f 1.75 KEEPTTL
    run("HSET", "h", "x", "1")
    run("HINCRBYFLOAT", "h", "x", "0.5")  # HSET h x 1.5
    run("SADD", "st", "a", "b")
    run("SPOP", "st", "5")  # DEL st
    run("SPOP", "st")  # nothing
    run("SET", "e", "v")
    run("EXPIRE", "e", "-1")  # DEL e
    run("EXPIRE", "e", "100")  # nothing
    run("SET", "g", "v")
    run("GETEX", "g")  # nothing
    run("GETEX", "g", "PERSIST")  # nothing: no TTL to remove
    run("PEXPIREAT", "g", "1")  # DEL g
    run("XADD", "x", "1-1", "f", "v")
    run("XADD", "x", "2-*", "f", "v")  # the id it made
    run("XADD", "x", "MAXLEN", "~", "1", "3-1", "f", "v")  # MAXLEN = 3
    run("XTRIM", "x", "MAXLEN", "~", "1")  # trims nothing: not logged


def test_rewritten_writes_are_logged_as_redis_logs_them(tmp_path: Path) -> None:
    """The incr file equals Redis 7.0's byte for byte for writes Redis rewrites."""
    files = {}
    for kind in ("redis", "resplite"):
        folder = tmp_path / kind
        folder.mkdir()
        with running(kind, "--dir", str(folder), *AOF) as srv:
            _rewritten_workload(redis.Redis.from_url(srv.url))
        files[kind] = (folder / "appendonlydir" / "appendonly.aof.1.incr.aof").read_bytes()
    assert files["resplite"] == files["redis"]


def test_libraries_and_script_writes_survive_a_restart(tmp_path: Path) -> None:
    with running("resplite", "--dir", str(tmp_path), *AOF) as first:
        client = redis.Redis.from_url(first.url)
        _script_workload(client)
        before = dataset(client)
        libraries = client.execute_command("FUNCTION", "LIST", "WITHCODE")
    # The write made under REPL_NONE was not logged, so the replay does not have it.
    del before[(0, b"unlogged")]
    with running("resplite", "--dir", str(tmp_path), *AOF) as second:
        client = redis.Redis.from_url(second.url)
        assert dataset(client) == before
        assert client.execute_command("FUNCTION", "LIST", "WITHCODE") == libraries
        assert client.fcall("bump", 1, "fn") == 4


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_a_rewrite_keeps_the_libraries(tmp_path: Path, preamble: str) -> None:
    options = (*AOF, "--aof-use-rdb-preamble", preamble)
    with running("resplite", "--dir", str(tmp_path), *options) as srv:
        client = redis.Redis.from_url(srv.url)
        client.function_load(LIBRARY)
        client.fcall("bump", 1, "fn")
        client.set_response_callback("BGREWRITEAOF", lambda r, **kw: r)
        client.execute_command("BGREWRITEAOF")
        _wait_rewrite(client)
        time.sleep(0.3)  # the cron installs the new base
    base = next((tmp_path / "appendonlydir").glob("appendonly.aof.2.base.*")).read_bytes()
    if preamble == "no":
        assert base.startswith(b"*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n")
    with running("resplite", "--dir", str(tmp_path), *AOF) as srv:
        client = redis.Redis.from_url(srv.url)
        assert client.fcall("bump", 1, "fn") == 4


# -- a manifest Redis refuses: the start stops, every file left as it was -------------------

FIXTURE_AOF = FIXTURES / "core" / "aof" / "appendonlydir"
_BASE_LINE = "file appendonly.aof.2.base.rdb seq 2 type b\n"
_INCR_LINE = "file appendonly.aof.2.incr.aof seq 2 type i\n"
BAD_MANIFESTS = {
    "empty": ("", "Found an empty AOF manifest"),
    "absolute path": ("file {folder}/appendonly.aof.2.base.rdb seq 2 type b\n" + _INCR_LINE,
                      "File can't be a path, just a filename"),
    "parent path": ("file ../appendonly.aof.2.base.rdb seq 2 type b\n" + _INCR_LINE,
                    "File can't be a path, just a filename"),
    "folder path": (_BASE_LINE + "file appendonlydir/appendonly.aof.2.incr.aof seq 2 type i\n",
                    "File can't be a path, just a filename"),
    "invalid line": (_BASE_LINE + "file appendonly.aof.2.incr.aof seq 2\n",
                     "Invalid AOF manifest file format"),
    "missing file": (_BASE_LINE + _INCR_LINE + "file appendonly.aof.3.incr.aof seq 3 type i\n",
                     "Unable to obtain the AOF file appendonly.aof.3.incr.aof length. stat: "
                     "No such file or directory"),
    "duplicate base": (_BASE_LINE + _BASE_LINE + _INCR_LINE,
                       "Found duplicate base file information"),
}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _start_refused(kind: str, folder: Path, *extra: str) -> str:
    """Start ``kind`` on ``folder``; it must exit with status 1, as Redis's exit(1) (a
    server that starts instead fails the test at the timeout). Returns what it printed."""
    exe = [redis_server_path() or "redis-server"] if kind == "redis" else \
        [sys.executable, "-m", "resplite"]
    done = subprocess.run([*exe, "--port", str(free_port()), "--bind", "127.0.0.1",
                           "--dir", str(folder), *extra],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    return done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["resplite", "redis"])
@pytest.mark.parametrize("case", list(BAD_MANIFESTS))
def test_a_bad_manifest_stops_the_start_and_touches_nothing(
        tmp_path: Path, case: str, kind: str) -> None:
    """As redis-server (7.0 and 8.x): an empty manifest, a line naming a path, an invalid
    line, a missing file, two bases. Redis 8's files are used: Redis 7.0 could not load
    them, but it refuses these manifests before loading anything."""
    if kind == "redis" and redis_server_path() is None:
        pytest.skip("redis-server is not installed")
    folder = tmp_path / "appendonlydir"
    shutil.copytree(FIXTURE_AOF, folder)
    text, reason = BAD_MANIFESTS[case]
    (folder / "appendonly.aof.manifest").write_text(text.format(folder=folder))
    before = _files(tmp_path)
    out = _start_refused(kind, tmp_path, *AOF)
    assert reason in out
    if reason != BAD_MANIFESTS["missing file"][1]:
        assert "*** FATAL AOF MANIFEST FILE ERROR ***" in out
    assert _files(tmp_path) == before


@pytest.mark.parametrize("kind", ["resplite", "redis"])
def test_a_bad_manifest_stops_the_start_without_appendonly(tmp_path: Path, kind: str) -> None:
    """Redis reads the manifest at every start, the log on or not."""
    if kind == "redis" and redis_server_path() is None:
        pytest.skip("redis-server is not installed")
    folder = tmp_path / "appendonlydir"
    shutil.copytree(FIXTURE_AOF, folder)
    (folder / "appendonly.aof.manifest").write_bytes(b"")
    before = _files(tmp_path)
    out = _start_refused(kind, tmp_path, "--appendonly", "no")
    assert "Found an empty AOF manifest" in out
    assert _files(tmp_path) == before


def test_history_files_are_not_replayed_and_are_removed(tmp_path: Path) -> None:
    """A manifest may still name the files a finished rewrite replaced (type h): they are
    never loaded, and the start deletes them and rewrites the manifest without them."""
    clean = tmp_path / "clean"
    shutil.copytree(FIXTURE_AOF, clean / "appendonlydir")
    folder = tmp_path / "with-history" / "appendonlydir"
    shutil.copytree(FIXTURE_AOF, folder)
    history = folder / "appendonly.aof.1.incr.aof"
    history.write_bytes(encode_command([b"SET", b"from-history", b"1"]))
    manifest = folder / "appendonly.aof.manifest"
    base, incr = manifest.read_text().splitlines()
    manifest.write_text(f"{base}\nfile appendonly.aof.1.incr.aof seq 1 type h\n{incr}\n")
    with running("resplite", "--dir", str(folder.parent), *AOF) as loaded, \
            running("resplite", "--dir", str(clean), *AOF) as expected:
        client = redis.Redis.from_url(loaded.url)
        assert client.get("from-history") is None
        assert dataset(client) == dataset(redis.Redis.from_url(expected.url))
    assert not history.exists()
    # (Redis 8's offsets after an incr line are not written back: resplite keeps none.)
    assert [line.split()[:6] for line in manifest.read_text().splitlines()] == [
        base.split(), incr.split()[:6]]
