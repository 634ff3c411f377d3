"""redis-py against resplite: sync and asyncio, RESP2 and RESP3, pure-Python and hiredis parsers.

Each client goes through redis-py 8's full connection handshake (HELLO 3 for RESP3, CLIENT
SETINFO LIB-NAME / LIB-VER, CLIENT MAINT_NOTIFICATIONS, which resplite refuses like Redis 7
so the library carries on) and then runs ordinary commands, a pipeline, a WATCH / MULTI /
EXEC transaction that succeeds and one that a concurrent write aborts, and the introspection
calls redis-py parses itself (INFO, CLIENT INFO, CLIENT LIST, CONFIG GET).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
import redis.asyncio
from redis._parsers import (
    _AsyncHiredisParser,
    _AsyncRESP2Parser,
    _AsyncRESP3Parser,
    _HiredisParser,
    _RESP2Parser,
    _RESP3Parser,
)
from support.servers import ServerProcess, start_resplite

from resplite.version import REDIS_VERSION

SYNC_PARSERS = {2: _RESP2Parser, 3: _RESP3Parser}
ASYNC_PARSERS = {2: _AsyncRESP2Parser, 3: _AsyncRESP3Parser}
COMBOS = [(2, False), (3, False), (2, True), (3, True)]
COMBO_IDS = ["resp2-python", "resp3-python", "resp2-hiredis", "resp3-hiredis"]


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    srv = start_resplite()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def protected_server() -> Iterator[ServerProcess]:
    srv = start_resplite("--requirepass", "s3cret")
    yield srv
    srv.stop()


def _sync_client(srv: ServerProcess, protocol: int, hiredis: bool, **kw) -> redis.Redis:
    # The parser is chosen per connection, through the pool.
    parser = _HiredisParser if hiredis else SYNC_PARSERS[protocol]
    pool = redis.ConnectionPool(host=srv.host, port=srv.port, protocol=protocol,
                                parser_class=parser, **kw)
    client = redis.Redis(connection_pool=pool)
    client.auto_close_connection_pool = True
    return client


def _async_client(srv: ServerProcess, protocol: int, hiredis: bool, **kw) -> redis.asyncio.Redis:
    parser = _AsyncHiredisParser if hiredis else ASYNC_PARSERS[protocol]
    pool = redis.asyncio.ConnectionPool(host=srv.host, port=srv.port, protocol=protocol,
                                        parser_class=parser, **kw)
    client = redis.asyncio.Redis(connection_pool=pool)
    client.auto_close_connection_pool = True
    return client


def test_parser_choice_is_honoured(server):
    for hiredis, expected in ((False, _RESP3Parser), (True, _HiredisParser)):
        r = _sync_client(server, 3, hiredis)
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
def test_sync_handshake_and_commands(server, protocol, hiredis):
    r = _sync_client(server, protocol, hiredis, decode_responses=True)
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
def test_sync_pipeline_and_transactions(server, protocol, hiredis):
    r = _sync_client(server, protocol, hiredis)
    other = _sync_client(server, protocol, hiredis)
    try:
        with r.pipeline(transaction=False) as pipe:
            pipe.set("a", "1").incr("a").get("a").echo(b"x" * 100_000)
            assert pipe.execute() == [True, 2, b"2", b"x" * 100_000]
        with r.pipeline() as pipe:  # MULTI / EXEC
            pipe.set("b", "1").incr("b").incr("b")
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
            pipe.set("c", "x").incr("c")
            with pytest.raises(redis.ResponseError, match="not an integer"):
                pipe.execute()
    finally:
        r.flushall()
        r.close()
        other.close()


@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
def test_sync_errors_keep_the_connection(server, protocol, hiredis):
    r = _sync_client(server, protocol, hiredis)
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
def test_sync_password(protected_server, protocol, hiredis):
    r = _sync_client(protected_server, protocol, hiredis, password="s3cret")
    try:
        assert r.ping() is True
        assert r.acl_whoami() in ("default", b"default")
    finally:
        r.close()
    bad = _sync_client(protected_server, protocol, hiredis, password="wrong")
    try:
        with pytest.raises(redis.AuthenticationError):
            bad.ping()
    finally:
        bad.close()
    anonymous = _sync_client(protected_server, protocol, hiredis)
    try:
        with pytest.raises((redis.AuthenticationError, redis.ResponseError)):
            anonymous.ping()
    finally:
        anonymous.close()


@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
async def test_async_handshake_pipeline_transaction(server, protocol, hiredis):
    r = _async_client(server, protocol, hiredis, decode_responses=True)
    other = _async_client(server, protocol, hiredis, decode_responses=True)
    try:
        assert await r.ping() is True
        info = await r.client_info()
        assert info["lib-name"] == "redis-py" and int(info["resp"]) == protocol
        assert await r.set("k", "v") is True
        assert await r.get("k") == "v"
        async with r.pipeline(transaction=False) as pipe:
            pipe.incr("n").incr("n").get("n")
            assert await pipe.execute() == [1, 2, "2"]
        async with r.pipeline() as pipe:
            await pipe.watch("n")
            await other.set("n", "10")
            pipe.multi()
            pipe.incr("n")
            with pytest.raises(redis.WatchError):
                await pipe.execute()
        async with r.pipeline() as pipe:
            pipe.incr("n").get("n")
            assert await pipe.execute() == [11, "11"]
        assert (await r.info("server"))["redis_version"] == REDIS_VERSION
    finally:
        await r.flushall()
        await r.aclose()
        await other.aclose()


@pytest.mark.parametrize(("protocol", "hiredis"), COMBOS, ids=COMBO_IDS)
async def test_async_password(protected_server, protocol, hiredis):
    r = _async_client(protected_server, protocol, hiredis, password="s3cret")
    try:
        assert await r.ping() is True
    finally:
        await r.aclose()
