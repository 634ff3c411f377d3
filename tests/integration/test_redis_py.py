"""redis-py against resplite: sync and asyncio, RESP2 and RESP3, pure-Python and hiredis parsers.

Each client goes through redis-py 8's full connection handshake (HELLO 3 for RESP3, CLIENT
SETINFO LIB-NAME / LIB-VER, CLIENT MAINT_NOTIFICATIONS, which resplite refuses like Redis 7
so the library carries on) and then runs ordinary commands, a pipeline, a WATCH / MULTI /
EXEC transaction that succeeds and one that a concurrent write aborts, and the introspection
calls redis-py parses itself (INFO, CLIENT INFO, CLIENT LIST, CONFIG GET).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
import redis.asyncio
from redis._parsers import (
    _HiredisParser,
    _RESP3Parser,
)
from support.redis_py import COMBO_IDS, COMBOS, async_client, sync_client
from support.servers import ServerProcess, start_resplite

from resplite.version import REDIS_VERSION


@pytest.fixture(scope="module")
def protected_server() -> Iterator[ServerProcess]:
    srv = start_resplite("--requirepass", "s3cret")
    yield srv
    srv.stop()


def test_parser_choice_is_honoured(server: ServerProcess) -> None:
    for hiredis, expected in ((False, _RESP3Parser), (True, _HiredisParser)):
        r = sync_client(server, 3, hiredis)
        try:
            r.ping()
            conn = r.connection_pool.get_connection()
            try:
                assert type(conn._parser) is expected
            finally:
                r.connection_pool.release(conn)
        finally:
            r.close()


@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
def test_sync_handshake_and_commands(server: ServerProcess, protocol: int, hiredis: bool) -> None:
    r = sync_client(server, protocol, hiredis, decode_responses=True)
    try:
        assert r.ping() is True
        info = r.client_info()
        assert info["lib-name"] == "redis-py" and info["lib-ver"] == redis.__version__
        assert int(info["resp"]) == protocol
        assert r.set("k", "v") is True
        assert r.get("k") == "v"
        assert r.incr("n") == 1
        assert r.incrby("n", 41) == 42
        assert r.mget("k", "n", "missing") == ["v", "42", None]
        assert r.expire("k", 100) is True
        assert 0 < r.ttl("k") <= 100
        assert r.delete("k", "n") == 2
        assert r.exists("k") == 0
        server_info = r.info()
        assert server_info["redis_version"] == REDIS_VERSION
        assert server_info["arch_bits"] in (32, 64)
        assert server_info["cluster_enabled"] == 0
        assert server_info["loading"] == 0
        assert "connected_clients" in r.info("clients")
        assert r.config_get("maxmemory") == {"maxmemory": "0"}
        assert any(c["lib-name"] == "redis-py" for c in r.client_list())
        assert r.dbsize() >= 0
        assert isinstance(r.time()[0], int)
    finally:
        r.flushall()
        r.close()


@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
def test_sync_pipeline_and_transactions(
    server: ServerProcess, protocol: int, hiredis: bool
) -> None:
    r = sync_client(server, protocol, hiredis)
    other = sync_client(server, protocol, hiredis)
    try:
        with r.pipeline(transaction=False) as pipe:
            # One queued command a statement: redis-py types each as returning its reply.
            pipe.set("a", "1")
            pipe.incr("a")
            pipe.get("a")
            pipe.echo(b"x" * 100_000)
            assert pipe.execute() == [True, 2, b"2", b"x" * 100_000]
        with r.pipeline() as pipe:  # MULTI / EXEC
            pipe.set("b", "1")
            pipe.incr("b")
            pipe.incr("b")
            assert pipe.execute() == [True, 2, 3]
        with r.pipeline() as pipe:
            pipe.watch("b")
            pipe.multi()
            pipe.incr("b")
            assert pipe.execute() == [4]
        with r.pipeline() as pipe:
            pipe.watch("b")
            other.set("b", "100")
            pipe.multi()
            pipe.incr("b")
            with pytest.raises(redis.WatchError):
                pipe.execute()
        assert r.get("b") == b"100"
        with r.pipeline() as pipe:
            pipe.set("c", "x")
            pipe.incr("c")
            with pytest.raises(redis.ResponseError, match="not an integer"):
                pipe.execute()
    finally:
        r.flushall()
        r.close()
        other.close()


@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
def test_sync_errors_keep_the_connection(
    server: ServerProcess, protocol: int, hiredis: bool
) -> None:
    r = sync_client(server, protocol, hiredis)
    try:
        with pytest.raises(redis.ResponseError, match="unknown command"):
            r.execute_command("NOSUCH", "x")
        with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
            r.execute_command("GET")
        with pytest.raises(redis.ResponseError, match="unknown subcommand"):
            r.execute_command("CLIENT", "MAINT_NOTIFICATIONS", "ON")
        assert r.ping() is True
    finally:
        r.close()


@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
def test_sync_password(protected_server: ServerProcess, protocol: int, hiredis: bool) -> None:
    r = sync_client(protected_server, protocol, hiredis, password="s3cret")
    try:
        assert r.ping() is True
        assert r.acl_whoami() in ("default", b"default")
    finally:
        r.close()
    bad = sync_client(protected_server, protocol, hiredis, password="wrong")
    try:
        with pytest.raises(redis.AuthenticationError):
            bad.ping()
    finally:
        bad.close()
    anonymous = sync_client(protected_server, protocol, hiredis)
    try:
        with pytest.raises((redis.AuthenticationError, redis.ResponseError)):
            anonymous.ping()
    finally:
        anonymous.close()


@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
async def test_async_handshake_pipeline_transaction(
    server: ServerProcess, protocol: int, hiredis: bool
) -> None:
    r = async_client(server, protocol, hiredis, decode_responses=True)
    other = async_client(server, protocol, hiredis, decode_responses=True)
    try:
        assert await r.ping() is True
        info = await r.client_info()
        assert info["lib-name"] == "redis-py" and int(info["resp"]) == protocol
        assert await r.set("k", "v") is True
        assert await r.get("k") == "v"
        async with r.pipeline(transaction=False) as pipe:
            pipe.incr("n")
            pipe.incr("n")
            pipe.get("n")
            assert await pipe.execute() == [1, 2, "2"]
        async with r.pipeline() as pipe:
            await pipe.watch("n")
            await other.set("n", "10")
            pipe.multi()
            pipe.incr("n")
            with pytest.raises(redis.WatchError):
                await pipe.execute()
        async with r.pipeline() as pipe:
            pipe.incr("n")
            pipe.get("n")
            assert await pipe.execute() == [11, "11"]
        assert (await r.info("server"))["redis_version"] == REDIS_VERSION
    finally:
        await r.flushall()
        await r.aclose()
        await other.aclose()


@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
async def test_async_password(
    protected_server: ServerProcess, protocol: int, hiredis: bool
) -> None:
    r = async_client(protected_server, protocol, hiredis, password="s3cret")
    try:
        assert await r.ping() is True
    finally:
        await r.aclose()


# -- the newest stream calls (Redis 8.6 IDMP / XCFGSET, 8.8 XNACK, 8.10 MAXCOUNT / MAXSIZE) ------


@pytest.mark.redis_version("8.10")
@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
def test_sync_newest_stream_calls(server: ServerProcess, protocol: int, hiredis: bool) -> None:
    """redis-py 8.1's own xadd(idmp=, idmpauto=), xcfgset and xnack; it has no keyword for
    MAXCOUNT / MAXSIZE yet, so those go through execute_command."""
    r = sync_client(server, protocol, hiredis)
    try:
        key = f"newest:{protocol}:{int(hiredis)}"
        r.delete(key)
        first = r.xadd(key, {"amount": "100"}, idmp=("p1", b"payment-1"))
        assert r.xadd(key, {"amount": "200"}, idmp=("p1", b"payment-1")) == first
        auto = r.xadd(key, {"a": "1", "b": "2"}, idmpauto="p2")
        assert r.xadd(key, {"b": "2", "a": "1"}, idmpauto="p2") == auto
        assert r.xcfgset(key, idmp_duration=300, idmp_maxsize=50) == b"OK"  # no reply callback
        info = r.xinfo_stream(key)
        assert (info["idmp-duration"], info["idmp-maxsize"]) == (300, 50)
        assert (info["iids-added"], info["iids-duplicates"], info["iids-tracked"]) == (2, 2, 0)
        with pytest.raises(redis.ResponseError, match="IDMP-DURATION must be between"):
            r.execute_command("XCFGSET", key, "IDMP-DURATION", "0")

        r.xgroup_create(key, "g", "0")
        r.xreadgroup("g", "c", {key: ">"})
        assert r.xnack(key, "g", "FAIL", first, auto) == 2
        assert r.xnack(key, "g", "FATAL", first, retrycount=3) == 1
        pending = r.xpending_range(key, "g", "-", "+", 10)
        assert [(p["consumer"], p["times_delivered"]) for p in pending] == [(b"", 3), (b"", 1)]
        assert r.xnack(key, "g", "SILENT", "9-9", force=True) == 0  # not in the stream
        # Released entries are claimable at once, whatever the idle time asked for.
        r.xautoclaim(key, "g", "d", 3_600_000, "0-0", justid=True)
        pending = r.xpending_range(key, "g", "-", "+", 10)
        assert [p["consumer"] for p in pending] == [b"d", b"d"]

        r.xadd(key, {"x": "1"})
        reply = r.execute_command("XREAD", "MAXCOUNT", "2", "STREAMS", key, key, "0", "0")
        assert _stream_entries(reply) == 2
        reply = r.execute_command("XREADGROUP", "GROUP", "g", "c", "MAXSIZE", "1",
                                  "STREAMS", key, ">")
        assert _stream_entries(reply) == 1
    finally:
        r.close()


def _stream_entries(reply: Any) -> int:
    """Entries in an XREAD reply as redis-py parses it (RESP2 pairs, RESP3 nested lists)."""
    if isinstance(reply, dict):
        return sum(len(v[0]) if v and isinstance(v[0], list) else len(v) for v in reply.values())
    return sum(len(entries) for _, entries in reply)
