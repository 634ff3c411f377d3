"""Compatibility fixtures: the same commands go to a reference Redis and to resplite.

The reference is Redis 8.6.3: the ``redis-server`` named by ``$RESPLITE_REFERENCE_SERVER``
(``tools/build-redis-reference.sh`` builds it; ``.ci/run`` sets it), else the one on PATH.
Its version is read from the binary, and resplite is started beside it with that release
line as its ``redis-compat-version`` (``8.6``), so version-dependent replies (COMMAND's
table, HELLO, INFO, CLIENT LIST's fields) compare as they are. A test about Redis 7.x is
marked ``@pytest.mark.reference("7.0")``: its fixtures then use the 7.0 reference
(``$RESPLITE_REFERENCE_SERVER_70``, else a redis-server 7.0 on PATH) and a resplite answering
as 7.0. A test marked ``@pytest.mark.redis_version("x.y")`` with a version newer than the
reference gets a resplite answering as its newest version instead (in ``pair`` too: the
reference side then serves what the versions share). ``reference`` is the test's
:class:`Reference`.

``pair`` gives two raw connections, one to each server, already switched to the protocol
version under test (the fixture runs every test under RESP2 and RESP3), on freshly flushed
servers. ``pair.check(*cmd)`` sends the command to both and asserts the raw reply bytes are
equal. Servers are started once per test process (and reference) on free ports. Without the
reference the tests skip visibly, naming the build script, except under CI, where its
absence is an error.

``events`` is a watcher pair subscribed to every keyspace and keyevent channel
(``support/notifications.py`` compares what it receives).

``server_pair_factory`` and ``pair_factory`` start servers of the test's own, with the extra
directives given (as processes, or as a ``Pair``).

``server``, ``conn``, ``rconn`` and ``xs`` are resplite alone (answering as its default,
the newest version), its clock frozen at ``support.newer.T0``: for tests marked
``@pytest.mark.redis_version("x.y")`` that assert a newer Redis than the reference, whose
binary is not installed (``support/newer.py``).

Where the tests are: ``README.md`` in this folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from support.newer import T0, Conn
from support.pair import Normalizer, Pair, PairFactory, loose_ids, open_pair
from support.servers import (
    Reference,
    ServerPairFactory,
    ServerProcess,
    require_reference,
    start_resplite,
)

if TYPE_CHECKING:
    from resplite.testing.embedded import ClockControl, ServerHandle

__all__ = ["Normalizer", "Pair", "Reference", "loose_ids", "open_pair"]


def _reference(version: str | None = None) -> Reference:
    return require_reference(version)


def _require_redis() -> None:
    _reference()


def _asked_version(request: pytest.FixtureRequest) -> str | None:
    """The version a ``@pytest.mark.reference("7.0")`` marker asks for (None: the suite's)."""
    marker = request.node.get_closest_marker("reference")
    return None if marker is None else str(marker.args[0])


@pytest.fixture
def reference(request: pytest.FixtureRequest) -> Reference:
    """The test's reference: the suite's (Redis 8.6.3), or the 7.0 one for a test marked
    ``@pytest.mark.reference("7.0")``."""
    return _reference(_asked_version(request))


def _newest_for(request: pytest.FixtureRequest, reference: Reference) -> bool:
    """Whether the test is marked with a Redis newer than the reference
    (``@pytest.mark.redis_version("8.10")``): its resplite then answers as resplite's newest
    version, so that the newer commands and replies it asserts on resplite exist."""
    marker = request.node.get_closest_marker("redis_version")
    if marker is None:
        return False
    asked = tuple(int(part) for part in str(marker.args[0]).split(".")[:2])
    return asked > tuple(int(part) for part in reference.line.split("."))


class _SessionServers:
    """One reference per reference asked for, and beside it one resplite answering as its
    version (and one answering as the newest, for tests marked newer), each started on first
    use and stopped at the end of the session."""

    def __init__(self) -> None:
        self.redis: dict[str | None, ServerProcess] = {}
        self.ours: dict[tuple[str | None, bool], ServerProcess] = {}

    def get(self, version: str | None, request: pytest.FixtureRequest,
            ) -> tuple[ServerProcess, ServerProcess]:
        ref = _reference(version)
        if version not in self.redis:
            self.redis[version] = ref.start_redis()
        newest = _newest_for(request, ref)
        if (version, newest) not in self.ours:
            self.ours[version, newest] = (start_resplite() if newest else ref.start_resplite())
        return self.redis[version], self.ours[version, newest]

    def stop(self) -> None:
        for ours in self.ours.values():
            ours.stop()
        for redis in self.redis.values():
            redis.stop()


@pytest.fixture(scope="session")
def _session_servers() -> Iterator[_SessionServers]:
    servers = _SessionServers()
    yield servers
    servers.stop()


@pytest.fixture(scope="session")
def redis_ref(_session_servers: _SessionServers) -> ServerProcess:
    """The session's reference redis-server (the suite's: a module may share it)."""
    ref = _reference()
    if None not in _session_servers.redis:
        _session_servers.redis[None] = ref.start_redis()
    return _session_servers.redis[None]


@pytest.fixture
def reference_srv(request: pytest.FixtureRequest,
                  _session_servers: _SessionServers) -> ServerProcess:
    """The session's reference redis-server for this test: the one its
    ``@pytest.mark.reference`` asks for, else the suite's (``redis_ref``)."""
    return _session_servers.get(_asked_version(request), request)[0]


@pytest.fixture
def resplite_srv(request: pytest.FixtureRequest,
                 _session_servers: _SessionServers) -> ServerProcess:
    """The session's resplite, answering as the reference's version (as its newest, for a
    test marked with a newer Redis)."""
    return _session_servers.get(_asked_version(request), request)[1]


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def pair(request: pytest.FixtureRequest, _session_servers: _SessionServers) -> Iterator[Pair]:
    redis, ours = _session_servers.get(_asked_version(request), request)
    p = open_pair(redis, ours, request.param)
    p.ref.call("FLUSHALL")
    p.ours.call("FLUSHALL")
    yield p
    p.close()


@pytest.fixture
def server_pair_factory(request: pytest.FixtureRequest,
                        reference: Reference) -> Iterator[ServerPairFactory]:
    """Start a dedicated reference redis-server and resplite with extra directives."""
    started: list[ServerProcess] = []

    newest = _newest_for(request, reference)

    def make(*extra: str) -> tuple[ServerProcess, ServerProcess]:
        ref = reference.start_redis(*extra)
        started.append(ref)
        ours = start_resplite(*extra) if newest else reference.start_resplite(*extra)
        started.append(ours)
        return ref, ours

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def pair_factory(request: pytest.FixtureRequest,
                 reference: Reference) -> Iterator[PairFactory]:
    """Start a reference redis-server and a resplite with the same extra arguments, as a
    Pair."""
    started: list[ServerProcess] = []
    pairs: list[Pair] = []

    newest = _newest_for(request, reference)

    def make(*extra: str, resp: int = 2) -> Pair:
        ref = reference.start_redis(*extra)
        started.append(ref)
        ours = start_resplite(*extra) if newest else reference.start_resplite(*extra)
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
