"""pytest plugin: a real Redis endpoint per test session, with time under the test's control.

Registered through the ``pytest11`` entry point, so installing resplite is enough. Fixtures:

``resplite_server`` (session)
    A :class:`~resplite.testing.embedded.ServerHandle` started on first use; each xdist worker
    has its own, since each worker is its own session.
``redis_url`` (function)
    The URL of the server this test talks to, emptied (FLUSHALL) and with its clock running
    at the system's time again before the test.
``redis_client`` / ``aredis_client`` (function)
    redis-py clients on ``redis_url``, sync and asyncio (the latter needs pytest-asyncio),
    built exactly as ``redis.Redis.from_url(redis_url)`` builds them in the code under test
    (the installed redis-py's default protocol, no decoding) unless the test asks for a
    protocol or decoding; closed after the test.
``resplite_clock`` (function)
    The clock of that server: ``freeze()``, ``advance(ms)``, ``set(unix_ms)``, ``resume()``.
``resplite_faults`` (function)
    Faults on demand for that server (:class:`~resplite.testing.embedded.FaultControl`):
    ``error(command, error, client=, times=)``, ``delay``, ``close``, ``drop``, ``list``,
    ``clear``; every fault is cleared after the test.
``resplite_factory`` (function)
    ``resplite_factory(**directives)`` starts one more server with its own directives
    (``requirepass=``, ``maxmemory=`` ...; ``cluster=N`` for a cluster of N nodes, in either
    isolation); all are stopped after the test.
``resplite_instance`` (function)
    The handle behind ``redis_url``: the session server, or a server of the test's own when
    its ``resplite`` marker names directives.

The marker ``@pytest.mark.resplite(protocol=2, decode_responses=True, **directives)`` sets the
clients' protocol and decoding for one test; directives there give the test a server of its
own. Options, each with an ini setting of the same name in underscores: ``--resplite-isolation
thread|process``, ``--resplite-protocol default|2|3|both`` (``default``: whatever redis-py
uses when not told, so a test sees the reply shapes production sees; ``both`` runs client
tests under each of 2 and 3), ``--resplite-directive NAME=VALUE`` (repeatable;
``resplite_directives`` lists one a line), ``--resplite-start-timeout SECONDS`` (how long a
server may take to start; 60 unless set: ``pytest -n N`` on a small machine starts N servers
at once).

Nothing here imports the server, redis-py or asyncio machinery until a fixture is used, so
test runs that use none of these fixtures pay nothing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from resplite.testing.embedded import ClockControl, FaultControl, ServerHandle

_CLIENT_KEYS = ("protocol", "decode_responses", "isolation")
#: embedded.DEFAULT_STARTUP_TIMEOUT, repeated so that loading the plugin imports nothing more.
_DEFAULT_START_TIMEOUT = 60.0


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("resplite", "resplite test server")
    group.addoption(
        "--resplite-isolation",
        choices=("thread", "process"),
        default=None,
        help="run the server in a background thread (default) or a child process",
    )
    group.addoption(
        "--resplite-protocol",
        choices=("default", "2", "3", "both"),
        default=None,
        help="protocol of redis_client/aredis_client: default (redis-py's own, as "
        "Redis.from_url), 2, 3 or both (parametrize)",
    )
    group.addoption(
        "--resplite-directive",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a configuration directive for the session server (repeatable)",
    )
    group.addoption(
        "--resplite-start-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long a server may take to start (default 60)",
    )
    group.addoption(
        "--resplite-redis-version",
        default=None,
        metavar="X.Y",
        help="the Redis version servers answer as (redis-compat-version: 7.0 to 8.10)",
    )
    parser.addini("resplite_isolation", "thread or process", default="thread")
    parser.addini("resplite_protocol", "default, 2, 3 or both", default="default")
    parser.addini(
        "resplite_directives", "configuration directives NAME=VALUE, one a line", type="linelist"
    )
    parser.addini("resplite_start_timeout", "seconds a server may take to start", default="")
    parser.addini("resplite_redis_version", "the Redis version servers answer as (X.Y)",
                  default="")


def pytest_configure(config: pytest.Config) -> None:
    _start_timeout(config)  # a bad value stops the run at once, as a bad option does
    config.addinivalue_line(
        "markers",
        "resplite(protocol=None, decode_responses=False, **directives): client settings for "
        "this test; directives (redis_version='7.2' among them) give it a resplite server of "
        "its own",
    )


def _setting(config: pytest.Config, name: str) -> str:
    value = config.getoption(f"--resplite-{name}")
    if value is None:
        value = config.getini(f"resplite_{name}")
    return str(value)


def _start_timeout(config: pytest.Config) -> float:
    """Seconds a server may take to start: the option, else the ini setting, else 60."""
    value = config.getoption("--resplite-start-timeout")
    if value is None:
        text = str(config.getini("resplite_start_timeout")).strip()
        if not text:
            return _DEFAULT_START_TIMEOUT
        try:
            value = float(text)
        except ValueError:
            raise pytest.UsageError(
                f"resplite_start_timeout {text!r}: expected a number of seconds"
            ) from None
    if not value > 0:
        raise pytest.UsageError(f"resplite start timeout {value!r}: expected seconds above 0")
    return float(value)


def _session_directives(config: pytest.Config) -> dict[str, Any]:
    lines = list(config.getini("resplite_directives")) + list(
        config.getoption("--resplite-directive")
    )
    directives: dict[str, Any] = {}
    for line in lines:
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise pytest.UsageError(f"resplite directive {line!r}: expected NAME=VALUE")
        directives[name.strip()] = value.strip()
    version = config.getoption("--resplite-redis-version") or str(
        config.getini("resplite_redis_version")).strip()
    if version:
        directives["redis-compat-version"] = version
    return directives


def _marker_kwargs(request: pytest.FixtureRequest) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    # The closest marker wins: iter_markers yields the function's before the class's.
    for marker in reversed(list(request.node.iter_markers("resplite"))):
        kwargs.update(marker.kwargs)
    return kwargs


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "resplite_protocol" not in metafunc.fixturenames:
        return
    if _setting(metafunc.config, "protocol") != "both":
        return
    if any("protocol" in m.kwargs for m in metafunc.definition.iter_markers("resplite")):
        return
    metafunc.parametrize("resplite_protocol", [2, 3], indirect=True, ids=["resp2", "resp3"])


@pytest.fixture(scope="session")
def resplite_server(pytestconfig: pytest.Config) -> Iterator[ServerHandle]:
    """The session's resplite server (one per xdist worker)."""
    from resplite.testing.embedded import serve

    handle = serve(
        isolation=_setting(pytestconfig, "isolation"),
        startup_timeout=_start_timeout(pytestconfig),
        **_session_directives(pytestconfig),
    )
    handle.start()
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def resplite_factory(pytestconfig: pytest.Config) -> Iterator[Callable[..., ServerHandle]]:
    """Start extra servers with their own directives; all stop after the test."""
    from resplite.testing.embedded import serve

    started: list[ServerHandle] = []

    def factory(**directives: Any) -> ServerHandle:
        directives.setdefault("isolation", _setting(pytestconfig, "isolation"))
        # The session's Redis version holds for every server, unless the test names one.
        session_version = _session_directives(pytestconfig).get("redis-compat-version")
        if session_version is not None and not {"redis_version", "redis_compat_version",
                                                "redis-compat-version"} & set(directives):
            directives["redis_compat_version"] = session_version
        directives.setdefault("startup_timeout", _start_timeout(pytestconfig))
        handle = serve(**directives)
        handle.start()
        started.append(handle)
        return handle

    try:
        yield factory
    finally:
        for handle in reversed(started):
            handle.stop()


@pytest.fixture
def resplite_instance(
    request: pytest.FixtureRequest, resplite_factory: Callable[..., ServerHandle]
) -> ServerHandle:
    """The server behind ``redis_url``: the session's, or the test's own (marker directives)."""
    kwargs = _marker_kwargs(request)
    directives = {k: v for k, v in kwargs.items() if k not in _CLIENT_KEYS}
    if directives or "isolation" in kwargs:
        if "isolation" in kwargs:
            directives["isolation"] = kwargs["isolation"]
        return resplite_factory(**directives)
    handle: ServerHandle = request.getfixturevalue("resplite_server")
    if not handle.running:
        raise RuntimeError(f"the session's resplite server is gone ({handle!r})")
    handle.reset()
    return handle


@pytest.fixture
def redis_url(resplite_instance: ServerHandle) -> str:
    """URL of an empty resplite server whose clock runs at the system's time."""
    return resplite_instance.url


@pytest.fixture
def resplite_clock(resplite_instance: ServerHandle) -> ClockControl:
    """The clock of the server behind ``redis_url``."""
    return resplite_instance.clock


@pytest.fixture
def resplite_faults(resplite_instance: ServerHandle) -> Iterator[FaultControl]:
    """Faults on demand for the server behind ``redis_url``, cleared after the test."""
    faults = resplite_instance.faults
    try:
        yield faults
    finally:
        if resplite_instance.running:
            faults.clear()


@pytest.fixture
def resplite_protocol(request: pytest.FixtureRequest) -> int | None:
    """RESP version the clients are told to speak: parametrized, from the marker, or from the
    options; None when nothing asks for one (the client library's own default)."""
    param = getattr(request, "param", None)
    if param is not None:
        return int(param)
    kwargs = _marker_kwargs(request)
    if kwargs.get("protocol") is not None:
        return int(kwargs["protocol"])
    setting = _setting(request.config, "protocol")
    return None if setting in ("default", "both") else int(setting)


def _client_kwargs(request: pytest.FixtureRequest, protocol: int | None) -> dict[str, Any]:
    """What the test asked for, and nothing else: with no marker and no option the client is
    exactly ``Redis.from_url(redis_url)``."""
    kwargs = _marker_kwargs(request)
    client: dict[str, Any] = {}
    if protocol is not None:
        client["protocol"] = protocol
    if "decode_responses" in kwargs:
        client["decode_responses"] = bool(kwargs["decode_responses"])
    return client


@pytest.fixture
def redis_client(
    request: pytest.FixtureRequest, redis_url: str, resplite_protocol: int | None
) -> Iterator[Any]:
    """A redis-py ``Redis`` client on ``redis_url``."""
    import redis

    client = redis.Redis.from_url(redis_url, **_client_kwargs(request, resplite_protocol))
    try:
        yield client
    finally:
        client.close()


async def _aredis_client(
    request: pytest.FixtureRequest, redis_url: str, resplite_protocol: int | None
) -> AsyncIterator[Any]:
    """A redis-py asyncio ``Redis`` client on ``redis_url`` (needs pytest-asyncio)."""
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(
        redis_url, **_client_kwargs(request, resplite_protocol)
    )
    try:
        yield client
    finally:
        await client.aclose()


if importlib.util.find_spec("pytest_asyncio") is not None:
    import pytest_asyncio

    aredis_client = pytest_asyncio.fixture(_aredis_client, name="aredis_client")
else:

    @pytest.fixture(name="aredis_client")
    def _aredis_client_unavailable() -> Any:
        pytest.skip("aredis_client needs pytest-asyncio (pip install pytest-asyncio)")
