"""Compatibility fixtures: the same commands go to a real redis-server and to resplite.

``pair`` gives two raw connections, one to each server, already switched to the protocol
version under test (the fixture runs every test under RESP2 and RESP3), on freshly flushed
servers. ``pair.check(*cmd)`` sends the command to both and asserts the raw reply bytes are
equal. Servers are started once per test process on free ports. Without a redis-server the
tests skip visibly, except under CI, where its absence is an error.

``events`` is a watcher pair subscribed to every keyspace and keyevent channel
(``support/notifications.py`` compares what it receives).

``server_pair_factory`` and ``pair_factory`` start servers of the test's own, with the extra
directives given (as processes, or as a ``Pair``).

``server``, ``conn``, ``rconn`` and ``xs`` are resplite alone, its clock frozen at
``support.newer.T0``: for tests marked ``@pytest.mark.redis_version("x.y")`` that assert a
newer Redis than the reference, whose binary is not installed (``support/newer.py``).

Where the tests are: ``README.md`` in this folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from support.newer import T0, Conn
from support.pair import Normalizer, Pair, PairFactory, loose_ids, open_pair
from support.servers import (
    ServerPairFactory,
    ServerProcess,
    redis_server_path,
    start_redis,
    start_resplite,
)

if TYPE_CHECKING:
    from resplite.testing.embedded import ClockControl, ServerHandle

__all__ = ["Normalizer", "Pair", "loose_ids", "open_pair"]


def _require_redis() -> None:
    if redis_server_path() is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is required for the compatibility tests in CI")
        pytest.skip("redis-server is not installed: compatibility tests need the reference")


@pytest.fixture(scope="session")
def redis_ref() -> Iterator[ServerProcess]:
    _require_redis()
    server = start_redis()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def resplite_srv() -> Iterator[ServerProcess]:
    server = start_resplite()
    yield server
    server.stop()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def pair(request: pytest.FixtureRequest, redis_ref: ServerProcess,
         resplite_srv: ServerProcess) -> Iterator[Pair]:
    p = open_pair(redis_ref, resplite_srv, request.param)
    p.ref.call("FLUSHALL")
    p.ours.call("FLUSHALL")
    yield p
    p.close()


@pytest.fixture
def server_pair_factory() -> Iterator[ServerPairFactory]:
    """Start a dedicated redis-server and resplite with extra directives."""
    started: list[ServerProcess] = []

    def make(*extra: str) -> tuple[ServerProcess, ServerProcess]:
        _require_redis()
        ref = start_redis(*extra)
        started.append(ref)
        ours = start_resplite(*extra)
        started.append(ours)
        return ref, ours

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def pair_factory() -> Iterator[PairFactory]:
    """Start a redis-server and a resplite with the same extra arguments, as a Pair."""
    started: list[ServerProcess] = []
    pairs: list[Pair] = []

    def make(*extra: str, resp: int = 2) -> Pair:
        if redis_server_path() is None:
            pytest.skip("redis-server is not installed")
        ref = start_redis(*extra)
        started.append(ref)
        ours = start_resplite(*extra)
        started.append(ours)
        p = open_pair(ref, ours, resp)
        pairs.append(p)
        return p

    yield make
    for p in pairs:
        p.close()
    for server in started:
        server.stop()


@pytest.fixture
def server(
    resplite_instance: ServerHandle, resplite_clock: ClockControl
) -> Iterator[ServerHandle]:
    """resplite alone (the test kit's server), its clock frozen at ``T0`` for the test."""
    resplite_clock.freeze()  # first: a running clock would move on before the freeze
    resplite_clock.set(T0)
    yield resplite_instance
    resplite_clock.reset()


@pytest.fixture
def conn(server: ServerHandle) -> Iterator[Conn]:
    """A RESP3 connection to ``server``, so that maps read as dicts."""
    c = Conn(server.host, server.port, resp=3)
    yield c
    c.close()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def rconn(server: ServerHandle, request: pytest.FixtureRequest) -> Iterator[Conn]:
    """A connection to ``server`` under RESP2, then RESP3 (``rconn.resp``)."""
    c = Conn(server.host, server.port, resp=request.param)
    yield c
    c.close()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def xs(
    resplite_instance: ServerHandle, resplite_clock: ClockControl, request: pytest.FixtureRequest
) -> Iterator[Conn]:
    """A connection to a flushed resplite alone under RESP2, then RESP3, clock frozen at
    ``T0``; ``xs.v(...)`` decodes a reply (maps as dicts, whichever the protocol)."""
    resplite_clock.freeze()
    resplite_clock.set(T0)
    c = Conn(resplite_instance.host, resplite_instance.port, resp=request.param)
    c.call("FLUSHALL")
    yield c
    c.close()
    resplite_clock.reset()


@pytest.fixture
def events(pair: Pair) -> Iterator[Pair]:
    """A watcher pair subscribed to every keyspace and keyevent channel."""
    watcher = pair.connect_extra()
    for conn in (watcher.ref, watcher.ours):
        conn.call("PSUBSCRIBE", "__key*__:*")
    pair.check("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    yield watcher
    for conn in (pair.ref, pair.ours):
        conn.call("CONFIG", "SET", "notify-keyspace-events", "")
        conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    watcher.close()
