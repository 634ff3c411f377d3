"""Replication between resplite and a real Redis 8.6.3, in both directions.

Each test starts its own servers (the compat suite's reference redis-server,
``RESPLITE_REFERENCE_SERVER``; skipped with the reason when there is none) and waits for
conditions (offsets equal, a link up), never for a fixed time. Data sets are compared key
by key: the type and a read of the whole value, the DUMP payload where both servers make
the same one, and the TTL within a tolerance (each server computes the remaining time from
its own clock, a few milliseconds apart).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
from support.raw import RawClient
from support.servers import Reference, ServerProcess, free_port, require_reference

WAIT_S = 60.0


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    """Poll ``condition`` until it holds (the limit is generous: a busy machine is slow)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _info(client: redis.Redis, section: str = "replication") -> dict[str, str]:
    text = client.execute_command("INFO", section)
    if isinstance(text, bytes):
        text = text.decode()
    if isinstance(text, dict):  # redis-py parsed it: slaveN's fields back to k=v,...
        return {k: ",".join(f"{a}={b}" for a, b in v.items()) if isinstance(v, dict)
                else str(v) for k, v in text.items()}
    return dict(line.split(":", 1) for line in text.splitlines()
                if line and not line.startswith("#"))


def _client(server: ServerProcess) -> redis.Redis:
    return redis.Redis(host=server.host, port=server.port, socket_timeout=WAIT_S)


def _link_up(replica: redis.Redis) -> bool:
    return _info(replica).get("master_link_status") == "up"


def _in_sync(primary: redis.Redis, replica: redis.Redis) -> bool:
    """The replica's link is up and it has applied everything the primary has sent."""
    mine = _info(replica)
    return (mine.get("master_link_status") == "up"
            and mine["slave_repl_offset"] == _info(primary)["master_repl_offset"])


@contextmanager
def _servers(*starters: Callable[[], ServerProcess]) -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    try:
        for start in starters:
            started.append(start())
        yield started
    finally:
        for server in started:
            server.stop()


def _redis(ref: Reference, *extra: str) -> Callable[[], ServerProcess]:
    # No 5-second wait for more replicas before a diskless sync.
    return lambda: ref.start_redis("--repl-diskless-sync-delay", "0", *extra)


def _resplite(ref: Reference, *extra: str) -> Callable[[], ServerProcess]:
    return lambda: ref.start_resplite(*extra)


# -- the workload and the comparison --------------------------------------------------------


_SCRIPT = """
redis.call('SET', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], 5)
redis.call('LPUSH', KEYS[3], ARGV[1], ARGV[1])
return redis.call('GET', KEYS[1])
"""


def _workload(r: redis.Redis, round_: int = 0) -> None:
    """Writes of every type, with expiries, in two databases, in MULTI/EXEC and a script."""
    p = f"r{round_}:"
    r.set(p + "plain", "v")
    r.set(p + "ex", "v", ex=1000)
    r.set(p + "px", "v", px=500_000)
    r.execute_command("SETEX", p + "setex", 2000, "v")
    r.incr(p + "counter")
    r.incrbyfloat(p + "float", 1.5)
    r.append(p + "plain", "-more")
    r.set(p + "gone", "x")
    r.delete(p + "gone")
    r.set(p + "persisted", "v", ex=100)
    r.persist(p + "persisted")
    r.rpush(p + "list", *range(20))
    r.lpush(p + "list", "head")
    r.lpop(p + "list")
    r.rpoplpush(p + "list", p + "list2")
    r.ltrim(p + "list", 0, 10)
    r.hset(p + "hash", mapping={f"f{i}": i for i in range(30)})
    r.hincrby(p + "hash", "f1", 10)
    r.hdel(p + "hash", "f2")
    r.hset(p + "bighash", mapping={f"f{i}": "x" * 100 for i in range(200)})
    r.sadd(p + "set", *range(50))
    r.sadd(p + "strset", *(f"m{i}" for i in range(20)))
    r.srem(p + "set", 7)
    r.spop(p + "strset")  # random: propagated as the SREM of what it took
    r.zadd(p + "zset", {f"m{i}": i * 1.5 for i in range(40)})
    r.zincrby(p + "zset", 2.5, "m3")
    r.zrem(p + "zset", "m4")
    r.zpopmin(p + "zset")
    r.expire(p + "zset", 3000)
    # Streams: ids the server generates, a group, reads, acknowledgements, claims.
    for i in range(10):
        r.xadd(p + "stream", {"n": i})
    r.xadd(p + "stream", {"n": "x"}, id="9999999999999-1")
    r.xgroup_create(p + "stream", "g1", id="0")
    r.xreadgroup("g1", "alice", {p + "stream": ">"}, count=6)
    entries: Any = r.xrange(p + "stream", count=3)
    r.xack(p + "stream", "g1", entries[0][0])
    r.xclaim(p + "stream", "g1", "bob", 0, [entries[1][0]])
    r.xautoclaim(p + "stream", "g1", "carol", 0, count=1)
    r.xtrim(p + "stream", maxlen=9)
    # A transaction, a script, another database.
    with r.pipeline(transaction=True) as tx:
        tx.set(p + "tx1", "a")
        tx.incr(p + "tx2")
        tx.expire(p + "tx1", 4000)
        tx.rpush(p + "txlist", "a", "b")
        tx.execute()
    r.eval(_SCRIPT, 3, p + "lua1", p + "lua2", p + "lua3", "value")
    r.execute_command("SELECT", 1)
    try:
        r.set(p + "db1", "v", ex=5000)
        r.hset(p + "db1hash", "f", "v")
    finally:
        r.execute_command("SELECT", 0)


def _value(r: redis.Redis, key: Any) -> object:
    kind = r.type(key)
    if kind == b"string":
        return r.get(key)
    if kind == b"list":
        return r.lrange(key, 0, -1)
    if kind == b"hash":
        return r.hgetall(key)
    if kind == b"set":
        return sorted(r.smembers(key))
    if kind == b"zset":
        return r.zrange(key, 0, -1, withscores=True)
    if kind == b"stream":
        groups = r.xinfo_groups(key)
        pending = {g["name"]: r.xpending_range(key, g["name"], "-", "+", 100) for g in groups}
        for entries in pending.values():
            for entry in entries:
                entry.pop("time_since_delivered", None)
        info = r.xinfo_stream(key)
        return (r.xrange(key), info["last-generated-id"], info["entries-added"],
                [(g["name"], g["last-delivered-id"], g["pending"]) for g in groups], pending)
    raise AssertionError(f"unexpected type {kind!r} of {key!r}")


_ORDERED_ENCODINGS = (b"int", b"embstr", b"raw", b"listpack", b"intset")


def _compare(a: redis.Redis, b: redis.Redis, databases: int = 2) -> int:
    """The same keys, types, values and TTLs (within 2 s) in each database; DUMP equal
    where both servers encode the value the same way. Returns the keys compared."""
    compared = 0
    for db in range(databases):
        a.execute_command("SELECT", db)
        b.execute_command("SELECT", db)
        keys = sorted(a.keys("*"))
        assert keys == sorted(b.keys("*")), f"db {db}"
        for key in keys:
            assert a.type(key) == b.type(key), key
            assert _value(a, key) == _value(b, key), key
            ttl_a, ttl_b = a.pttl(key), b.pttl(key)
            assert (ttl_a < 0) == (ttl_b < 0), key
            assert abs(ttl_a - ttl_b) < 2000, key
            # The serialized value, without the trailer (RDB version, CRC-64): resplite
            # stamps a payload with the oldest version that reads it. A hash table's order
            # is each server's own: its DUMP differs, not its data.
            encoding = a.object("encoding", key)
            if encoding in _ORDERED_ENCODINGS and encoding == b.object("encoding", key):
                ours, theirs = a.dump(key), b.dump(key)
                assert ours is not None and theirs is not None, key
                assert ours[:-10] == theirs[:-10], key
            compared += 1
    a.execute_command("SELECT", 0)
    b.execute_command("SELECT", 0)
    return compared


# -- the tests ------------------------------------------------------------------------------


@pytest.fixture
def ref() -> Reference:
    return require_reference()


def test_redis_primary_resplite_replica(ref: Reference) -> None:
    with _servers(_redis(ref)) as (primary_server,):
        primary = _client(primary_server)
        _workload(primary, 0)  # in the snapshot of the full sync
        with _servers(_resplite(ref, "--replicaof", "127.0.0.1", str(primary_server.port))) \
                as (replica_server,):
            replica = _client(replica_server)
            _wait_for(lambda: _in_sync(primary, replica), "the first sync")
            _workload(primary, 1)  # in the stream
            assert primary.wait(1, int(WAIT_S * 1000)) == 1
            _wait_for(lambda: _in_sync(primary, replica), "the stream applied")
            assert _compare(primary, replica) > 40
            role = replica.execute_command("ROLE")
            assert role[0] == b"slave" and role[3] == b"connected"
            with pytest.raises(redis.ReadOnlyError):
                replica.set("k", "v")
            clients = replica.client_list(_type="master")
            assert len(clients) == 1 and clients[0]["flags"] == "M"


def test_resplite_primary_redis_replica(ref: Reference) -> None:
    with _servers(_resplite(ref)) as (primary_server,):
        primary = _client(primary_server)
        _workload(primary, 0)
        with _servers(_redis(ref, "--replicaof", "127.0.0.1", str(primary_server.port))) \
                as (replica_server,):
            replica = _client(replica_server)
            _wait_for(lambda: _in_sync(primary, replica), "the first sync")
            _workload(primary, 1)
            assert primary.wait(1, int(WAIT_S * 1000)) == 1
            _wait_for(lambda: _in_sync(primary, replica), "the stream applied")
            assert _compare(primary, replica) > 40
            info = _info(primary)
            assert info["connected_slaves"] == "1"
            assert f"port={replica_server.port},state=online" in info["slave0"]
            role = primary.execute_command("ROLE")
            assert role[0] == b"master"
            assert role[2] == [[b"127.0.0.1", str(replica_server.port).encode(),
                                str(role[2][0][2].decode()).encode()]]
            listed = primary.client_list(_type="replica")
            assert len(listed) == 1 and listed[0]["flags"] == "S"


def test_chain_redis_resplite_redis(ref: Reference) -> None:
    """resplite between two Redis servers passes the stream on unchanged: the same offsets
    and id all along the chain."""
    with _servers(_redis(ref)) as (top,):
        first = _client(top)
        with _servers(_resplite(ref, "--replicaof", "127.0.0.1", str(top.port))) as (mid,):
            middle = _client(mid)
            _wait_for(lambda: _in_sync(first, middle), "the middle's sync")
            with _servers(_redis(ref, "--replicaof", "127.0.0.1", str(mid.port))) as (end,):
                last = _client(end)
                _wait_for(lambda: _link_up(last), "the last link")
                _workload(first, 0)
                _wait_for(lambda: _in_sync(first, middle) and _in_sync(first, last),
                          "the chain in sync")
                assert _info(last)["master_replid"] == _info(first)["master_replid"]
                assert _compare(first, last) > 20


def test_partial_resync_after_the_replica_drops_its_link(ref: Reference) -> None:
    """CLIENT KILL TYPE master on resplite: it reconnects and continues (+CONTINUE)."""
    with _servers(_redis(ref)) as (primary_server,):
        primary = _client(primary_server)
        with _servers(_resplite(ref, "--replicaof", "127.0.0.1", str(primary_server.port))) \
                as (replica_server,):
            replica = _client(replica_server)
            _workload(primary, 0)
            _wait_for(lambda: _in_sync(primary, replica), "the first sync")
            before = _info(primary, "stats")
            assert replica.client_kill_filter(_type="master") == 1
            _workload(primary, 1)  # while the link may be down
            _wait_for(lambda: _in_sync(primary, replica), "the link back")
            after = _info(primary, "stats")
            assert int(after["sync_partial_ok"]) == int(before["sync_partial_ok"]) + 1
            assert after["sync_full"] == before["sync_full"]
            assert _compare(primary, replica) > 40


def test_partial_resync_after_the_primary_drops_a_replica(ref: Reference) -> None:
    """CLIENT KILL TYPE replica on resplite: the Redis replica continues from the backlog."""
    with _servers(_resplite(ref)) as (primary_server,):
        primary = _client(primary_server)
        with _servers(_redis(ref, "--replicaof", "127.0.0.1", str(primary_server.port))) \
                as (replica_server,):
            replica = _client(replica_server)
            _workload(primary, 0)
            _wait_for(lambda: _in_sync(primary, replica), "the first sync")
            assert primary.client_kill_filter(_type="replica") == 1
            _workload(primary, 1)
            _wait_for(lambda: _in_sync(primary, replica), "the link back")
            stats = _info(primary, "stats")
            assert stats["sync_full"] == "1"
            assert stats["sync_partial_ok"] == "1"
            assert _compare(primary, replica) > 40


def test_promotion_keeps_the_history_for_psync2(ref: Reference) -> None:
    """REPLICAOF NO ONE on resplite: a new id, the old one kept as replid2; the former
    primary, made a replica of it, continues instead of a full sync."""
    with _servers(_redis(ref)) as (old_server,):
        old = _client(old_server)
        with _servers(_resplite(ref, "--replicaof", "127.0.0.1", str(old_server.port))) \
                as (new_server,):
            new = _client(new_server)
            _workload(old, 0)
            _wait_for(lambda: _in_sync(old, new), "the sync")
            before = _info(new)
            assert new.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
            after = _info(new)
            assert after["role"] == "master"
            assert after["master_replid"] != before["master_replid"]
            assert after["master_replid2"] == before["master_replid"]
            assert int(after["second_repl_offset"]) == int(before["master_repl_offset"]) + 1
            new.set("written-after-promotion", "yes")
            old.execute_command("REPLICAOF", "127.0.0.1", str(new_server.port))
            _wait_for(lambda: _in_sync(new, old), "the old primary following")
            assert old.get("written-after-promotion") == b"yes"
            stats = _info(new, "stats")
            assert stats["sync_partial_ok"] == "1" and stats["sync_full"] == "0"
            assert _compare(new, old) > 20


def test_wait_counts_acknowledging_replicas(ref: Reference) -> None:
    with _servers(_resplite(ref)) as (primary_server,):
        primary = _client(primary_server)
        port = str(primary_server.port)
        with _servers(_redis(ref, "--replicaof", "127.0.0.1", port),
                      _redis(ref, "--replicaof", "127.0.0.1", port)) as replicas:
            clients = [_client(s) for s in replicas]
            _wait_for(lambda: all(_in_sync(primary, c) for c in clients), "two replicas")
            primary.set("k", "v")
            assert primary.wait(2, int(WAIT_S * 1000)) == 2
            os.kill(replicas[1].proc.pid, signal.SIGSTOP)
            try:
                primary.set("k", "v2")
                # Only one can acknowledge this write: WAIT times out with 1.
                assert primary.wait(2, 200) == 1
            finally:
                os.kill(replicas[1].proc.pid, signal.SIGCONT)
            assert primary.wait(2, int(WAIT_S * 1000)) == 2


def test_min_replicas_to_write(ref: Reference) -> None:
    with _servers(_resplite(ref, "--min-replicas-to-write", "1")) as (primary_server,):
        primary = _client(primary_server)
        with pytest.raises(redis.ResponseError, match="NOREPLICAS Not enough good replicas"):
            primary.set("k", "v")
        assert primary.get("k") is None  # reads are served
        with _servers(_redis(ref, "--replicaof", "127.0.0.1", str(primary_server.port))) \
                as (replica_server,):
            replica = _client(replica_server)
            _wait_for(lambda: _in_sync(primary, replica), "the replica")
            _wait_for(lambda: _info(primary).get("min_slaves_good_slaves") == "1",
                      "a good replica")
            assert primary.set("k", "v")


def test_redis_cli_rdb_loads_in_redis(ref: Reference) -> None:
    """``redis-cli --rdb`` against resplite writes a snapshot redis-server loads."""
    cli = shutil.which("redis-cli", path=str(Path(ref.exe).parent)) or shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli is not installed")
    with _servers(_resplite(ref)) as (primary_server,):
        primary = _client(primary_server)
        _workload(primary, 0)
        folder = tempfile.mkdtemp(prefix="resplite-rdb-")
        try:
            path = os.path.join(folder, "dump.rdb")
            done = subprocess.run([cli, "-p", str(primary_server.port), "--rdb", path],
                                  capture_output=True, timeout=WAIT_S, check=False)
            assert done.returncode == 0, done.stderr
            checker = Path(ref.exe).parent / "redis-check-rdb"
            if checker.exists():
                checked = subprocess.run([str(checker), path], capture_output=True,
                                         timeout=WAIT_S, check=False)
                assert checked.returncode == 0, checked.stdout
            loaded = ref.start_redis("--dir", folder, "--dbfilename", "dump.rdb")
            try:
                assert _compare(primary, _client(loaded)) > 20
            finally:
                loaded.stop()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def test_redis_cli_replica_mode_prints_the_stream(ref: Reference) -> None:
    cli = shutil.which("redis-cli", path=str(Path(ref.exe).parent)) or shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli is not installed")
    with _servers(_resplite(ref)) as (primary_server,):
        primary = _client(primary_server)
        proc = subprocess.Popen([cli, "-p", str(primary_server.port), "--replica"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            assert proc.stdout is not None
            _wait_for(lambda: _info(primary)["connected_slaves"] == "1", "redis-cli attached")
            _wait_for(lambda: "state=online" in _info(primary).get("slave0", ""),
                      "redis-cli online")
            primary.set("streamed-key", "streamed-value")
            seen = b""
            while b"streamed-value" not in seen:
                chunk = proc.stdout.readline()
                assert chunk, seen
                seen += chunk
            assert b'"set","streamed-key","streamed-value"' in seen.lower()
        finally:
            proc.kill()
            proc.wait()



def test_a_replica_without_its_primary_answers_as_redis(ref: Reference) -> None:
    """A replica whose primary is unreachable: the same replies, byte for byte, as Redis
    8.6.3 in the same place (-READONLY for writes; -MASTERDOWN for the commands without
    the ``stale`` flag once replica-serve-stale-data is no; REPLICAOF to the same primary;
    ROLE once promoted)."""
    nowhere = str(free_port())  # nothing listens there
    args = ("--replicaof", "127.0.0.1", nowhere)
    with _servers(_redis(ref, *args), _resplite(ref, *args)) as servers:
        clients = [RawClient(s.host, s.port) for s in servers]
        try:
            def same(*command: str) -> bytes:
                replies = [c.call(*command) for c in clients]
                assert replies[0] == replies[1], command
                return replies[0]

            assert same("SET", "k", "v").startswith(b"-READONLY")
            same("GET", "k")
            same("REPLICAOF", "127.0.0.1", nowhere)
            same("CONFIG", "SET", "replica-serve-stale-data", "no")
            assert same("GET", "k").startswith(b"-MASTERDOWN")
            same("SET", "k", "v")
            same("PING")
            same("ECHO", "x")
            same("CONFIG", "SET", "replica-read-only", "no")
            same("CONFIG", "SET", "replica-serve-stale-data", "yes")
            same("SET", "k", "v")  # a writable replica takes writes
            same("WAIT", "0", "0")
            same("REPLICAOF", "NO", "ONE")
            same("ROLE")
        finally:
            for c in clients:
                c.close()


def test_replica_authenticates_with_masterauth_and_masteruser(ref: Reference) -> None:
    with _servers(_redis(ref, "--requirepass", "secret")) as (primary_server,):
        primary = redis.Redis(host=primary_server.host, port=primary_server.port,
                              password="secret", socket_timeout=WAIT_S)
        primary.acl_setuser("repl", enabled=True, passwords=["+pw"], commands=["+@all"],
                            keys=["*"], channels=["*"])
        primary.set("k", "v")
        with _servers(_resplite(ref, "--replicaof", "127.0.0.1", str(primary_server.port),
                                "--masteruser", "repl", "--masterauth", "pw")) \
                as (replica_server,):
            replica = _client(replica_server)
            _wait_for(lambda: _in_sync(primary, replica), "the sync")
            assert replica.get("k") == b"v"


def test_a_replica_answers_loading_while_it_loads_the_snapshot(ref: Reference) -> None:
    with _servers(_redis(ref)) as (primary_server,):
        primary = _client(primary_server)
        primary.mset({f"key:{i}": i for i in range(300)})
        # Each key loaded takes 10 ms: the load lasts long enough to be seen.
        # Handed over at once, not once loaded: a replica that starts quickly may already be
        # loading the primary's snapshot when the kit would check.
        replica_start = lambda: ref.start_resplite(  # noqa: E731
            "--key-load-delay", "10000", "--replicaof", "127.0.0.1", str(primary_server.port),
            loaded=False)
        with _servers(replica_start) as (replica_server,):
            replica = _client(replica_server)
            raw = RawClient(replica_server.host, replica_server.port)
            try:
                _wait_for(lambda: raw.call("INFO", "persistence").find(b"loading:1") > 0,
                          "the load")
                assert raw.call("GET", "key:1") == (
                    b"-LOADING Redis is loading the dataset in memory\r\n")
            finally:
                raw.close()
            _wait_for(lambda: _in_sync(primary, replica), "the sync")
            assert replica.get("key:1") == b"1"


def test_waitaof_counts_replicas_that_fsynced(ref: Reference) -> None:
    with _servers(_resplite(ref)) as (primary_server,):
        primary = _client(primary_server)
        with _servers(_redis(ref, "--replicaof", "127.0.0.1", str(primary_server.port),
                             "--appendonly", "yes", "--appendfsync", "always")) \
                as (replica_server,):
            replica = _client(replica_server)
            _wait_for(lambda: _in_sync(primary, replica), "the replica")
            primary.set("k", "v")
            # No local AOF here (numlocal 0); the replica's fsync is acknowledged (FACK).
            assert primary.execute_command("WAITAOF", 0, 1, int(WAIT_S * 1000)) == [0, 1]
