"""The pytest plugin, exercised the way users meet it: pytest runs on small test projects.

Each test writes a project into a temporary folder and runs pytest on it in a subprocess;
the plugin is active there through its ``pytest11`` entry point, as it is for anyone who
installs resplite. The projects check the fixtures from the inside (a shared session server,
a clean database and a running clock per test, protocol and directives from markers,
options and ini settings, extra servers from the factory, the asyncio client), under both
isolations, under pytest-xdist, and that a run which uses no fixture starts nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FIXTURE_TESTS = '''
import os
import sys
import time

import pytest
import redis

SEEN = {}
FACTORY_SERVERS = []


def test_the_session_server_is_shared_1(resplite_server, redis_url):
    SEEN["port"] = resplite_server.port
    assert redis_url == resplite_server.url
    assert resplite_server.isolation == os.environ["EXPECTED_ISOLATION"]
    assert (resplite_server.pid == os.getpid()) == (resplite_server.isolation == "thread")


def test_the_session_server_is_shared_2(resplite_server):
    assert resplite_server.port == SEEN["port"]


def test_a_test_that_leaves_data_and_travels_in_time(redis_client, resplite_clock):
    redis_client.set("left", "behind")
    redis_client.execute_command("SELECT", "3")
    redis_client.set("left", "behind")
    resplite_clock.freeze()
    resplite_clock.advance(86_400_000)


def test_the_next_test_starts_empty_with_a_running_clock(redis_client, resplite_clock):
    assert redis_client.dbsize() == 0
    assert redis_client.execute_command("SELECT", "3") in (b"OK", True)
    assert redis_client.dbsize() == 0
    assert abs(resplite_clock.get() - time.time() * 1000) < 1000


def test_clients_are_built_as_from_url_builds_them(redis_client, redis_url, resplite_protocol):
    assert resplite_protocol is None
    theirs = redis.Redis.from_url(redis_url)
    try:
        ours_kwargs = redis_client.connection_pool.connection_kwargs
        their_kwargs = theirs.connection_pool.connection_kwargs
        # Same settings (per-pool helper objects aside): no protocol, no decoding forced.
        assert sorted(ours_kwargs) == sorted(their_kwargs)
        assert "protocol" not in ours_kwargs and "decode_responses" not in ours_kwargs
        redis_client.xadd("s", {"f": "v"}, id="1-1")
        # The same reply shape the code under test gets from its own client.
        assert redis_client.xread({"s": "0"}) == theirs.xread({"s": "0"})
    finally:
        theirs.close()


@pytest.mark.resplite(protocol=3)
def test_a_marker_selects_resp3(redis_client):
    redis_client.xadd("s", {"f": "v"}, id="1-1")
    assert redis_client.xread({"s": "0"}) == {b"s": [[(b"1-1", {b"f": b"v"})]]}


@pytest.mark.resplite(protocol=2, decode_responses=True)
def test_a_marker_selects_resp2_and_decoding(redis_client):
    redis_client.xadd("s", {"f": "v"}, id="1-1")
    assert redis_client.xread({"s": "0"}) == [["s", [("1-1", {"f": "v"})]]]


@pytest.mark.resplite(requirepass="pw", maxmemory="1mb")
def test_marker_directives_give_the_test_a_server_of_its_own(
    redis_url, redis_client, resplite_server, resplite_instance
):
    assert redis_url != resplite_server.url
    assert redis_url == resplite_instance.url
    assert redis_url.startswith("redis://:pw@127.0.0.1:")
    assert resplite_instance.execute("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"1048576"]
    assert redis_client.ping()


def test_faults_on_demand(redis_client, resplite_faults):
    resplite_faults.error("GET", "-LOADING Redis is loading the dataset in memory", times=1)
    with pytest.raises(redis.exceptions.BusyLoadingError):
        redis_client.get("k")
    assert redis_client.get("k") is None
    resplite_faults.drop("PING")  # cleared by the fixture after the test


def test_faults_are_cleared_between_tests(redis_client):
    assert redis_client.ping()


def test_the_factory_starts_servers_with_their_own_directives(resplite_factory):
    locked = resplite_factory(requirepass="x")
    small = resplite_factory(databases=2)
    assert locked.port != small.port
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=locked.port).ping()
    assert small.execute("CONFIG", "GET", "databases") == [b"databases", b"2"]
    FACTORY_SERVERS.extend([locked, small])


def test_factory_servers_are_gone_after_their_test():
    assert len(FACTORY_SERVERS) == 2
    for handle in FACTORY_SERVERS:
        assert not handle.running


@pytest.mark.asyncio
async def test_the_asyncio_client(aredis_client, resplite_clock):
    resplite_clock.freeze()
    await aredis_client.set("k", "v", px=1000)
    resplite_clock.advance(1000)
    assert await aredis_client.get("k") == b"v"  # a key lives while now <= its time
    resplite_clock.advance(1)
    assert await aredis_client.get("k") is None
'''

PROTOCOL_TESTS = '''
import pytest


def test_under_each_protocol(redis_client, resplite_protocol):
    assert redis_client.connection_pool.connection_kwargs["protocol"] == resplite_protocol
    assert resplite_protocol in (2, 3)


@pytest.mark.resplite(protocol=2)
def test_a_marker_still_wins(redis_client):
    assert redis_client.connection_pool.connection_kwargs["protocol"] == 2


def test_no_client_no_parametrization():
    pass
'''

XDIST_TESTS = '''
import os

import pytest


@pytest.mark.parametrize("n", range(8))
def test_each_worker_has_its_own_server(n, redis_client, resplite_server):
    assert redis_client.incr("counter") == 1  # a clean database for every test
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(os.environ["OUT"], f"{worker}-{n}"), "w") as f:
        f.write(f"{resplite_server.port} {os.getpid()}")
'''

LAZY_TESTS = '''
import sys
import threading


def test_nothing_is_started_or_imported_without_a_fixture():
    assert "resplite.testing.plugin" in sys.modules
    loaded = sorted(m for m in sys.modules if m.startswith("resplite"))
    # The package itself imports only resplite.version (constants) and resplite.build
    # (which finds the compiled modules; it imports nothing more).
    assert loaded == ["resplite", "resplite.build", "resplite.testing",
                      "resplite.testing.plugin", "resplite.version"], loaded
    assert not [t for t in threading.enumerate() if t.name.startswith("resplite")]
'''

INI_TESTS = '''
def config(client, name):
    reply = client.execute_command("CONFIG", "GET", name)
    return reply[1] if isinstance(reply, list) else reply[name.encode()]


def test_ini_settings_and_options(redis_client):
    assert redis_client.connection_pool.connection_kwargs["protocol"] == 2
    assert config(redis_client, "maxmemory-policy") == b"allkeys-lru"
    assert config(redis_client, "maxmemory") == b"2097152"
    assert config(redis_client, "databases") == b"3"
'''

INI = """
[pytest]
resplite_protocol = 2
resplite_directives =
    maxmemory=2mb
    maxmemory-policy = allkeys-lru
"""


START_TIMEOUT_TESTS = '''
import os


def test_every_server_gets_the_start_timeout(resplite_server, resplite_factory):
    want = float(os.environ["EXPECTED_TIMEOUT"])
    assert resplite_server.startup_timeout == want
    assert resplite_factory(databases=2).startup_timeout == want
'''

NO_TIME_TO_START_TESTS = '''
def test_a_server_with_no_time_to_start(redis_client):
    redis_client.ping()
'''

CLUSTER_TESTS = '''
import redis.cluster


def test_a_cluster_from_the_factory(resplite_factory):
    cluster = resplite_factory(cluster=3)
    assert cluster.isolation == "process"
    ports = [port for _, port in cluster.cluster_nodes]
    assert len(set(ports)) == 3 and ports[0] == cluster.port
    client = redis.cluster.RedisCluster.from_url(cluster.cluster_url)
    try:
        for n in range(20):
            client.set(f"key{n}", n)
        assert sorted(int(client.get(f"key{n}")) for n in range(20)) == list(range(20))
        owners = {client.get_node_from_key(f"key{n}").port for n in range(20)}
        assert owners == set(ports)  # the keys spread over the three nodes
        cluster.clock.freeze()
        client.set("short", "lived", px=1000)
        cluster.clock.advance(1001)
        assert client.get("short") is None
    finally:
        client.close()
'''


def run_pytest(
    tmp_path: Path, tests: str, *args: str, ini: str = "", env: dict[str, str] | None = None,
    returncode: int = 0,
) -> str:
    (tmp_path / "test_project.py").write_text(textwrap.dedent(tests), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(ini or "[pytest]\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-W",
         "error::pytest.PytestUnraisableExceptionWarning", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == returncode, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_the_fixtures_from_the_inside(tmp_path: Path, isolation: str) -> None:
    out = run_pytest(tmp_path, FIXTURE_TESTS, "-q", f"--resplite-isolation={isolation}",
                     env={"EXPECTED_ISOLATION": isolation})
    assert "13 passed" in out


def test_protocol_both_runs_client_tests_under_resp2_and_resp3(tmp_path: Path) -> None:
    out = run_pytest(tmp_path, PROTOCOL_TESTS, "-v", "--resplite-protocol", "both")
    assert "test_under_each_protocol[resp2] PASSED" in out
    assert "test_under_each_protocol[resp3] PASSED" in out
    assert re.search(r"test_a_marker_still_wins PASSED", out)
    assert "test_no_client_no_parametrization PASSED" in out
    assert "4 passed" in out


def test_protocol_option_pins_the_clients(tmp_path: Path) -> None:
    out = run_pytest(tmp_path, PROTOCOL_TESTS.replace("resp", "resp"), "-v",
                     "--resplite-protocol", "2", "-k", "each_protocol")
    assert "test_under_each_protocol PASSED" in out


@pytest.mark.slow
def test_each_xdist_worker_gets_its_own_server(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    out = run_pytest(tmp_path, XDIST_TESTS, "-q", "-n", "2", "-p", "xdist",
                     env={"OUT": str(results)})
    assert "8 passed" in out
    by_worker: dict[str, set[str]] = {}
    for path in results.iterdir():
        by_worker.setdefault(path.name.split("-")[0], set()).add(path.read_text())
    assert sorted(by_worker) == ["gw0", "gw1"]
    assert all(len(seen) == 1 for seen in by_worker.values())  # one server per worker
    assert by_worker["gw0"] != by_worker["gw1"]


def test_a_run_that_uses_no_fixture_starts_nothing(tmp_path: Path) -> None:
    out = run_pytest(tmp_path, LAZY_TESTS, "-q")
    assert "1 passed" in out


def test_ini_settings_and_command_line_directives(tmp_path: Path) -> None:
    out = run_pytest(tmp_path, INI_TESTS, "-q", "--resplite-directive", "databases=3", ini=INI)
    assert "1 passed" in out


@pytest.fixture(scope="module")
def snapshot_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder with a snapshot of two keys, written by resplite."""
    import redis

    import resplite

    folder = tmp_path_factory.mktemp("snap")
    with resplite.serve(dir=str(folder)) as srv:
        client = redis.Redis.from_url(srv.url)
        client.set("greeting", "hello")
        client.xadd("events", {"n": "1"}, id="1-1")
        client.save()
    return str(folder)


def test_a_marker_starts_the_test_from_a_snapshot(request, snapshot_dir):  # type: ignore[no-untyped-def]
    request.applymarker(pytest.mark.resplite(dir=snapshot_dir, dbfilename="dump.rdb"))
    client = request.getfixturevalue("redis_client")
    assert client.get("greeting") == b"hello"
    assert client.xlen("events") == 1


@pytest.mark.parametrize(
    ("args", "ini", "expected"),
    [
        ((), "", 60.0),  # the default: room for pytest -n N on a busy two-core machine
        ((), "[pytest]\nresplite_start_timeout = 90\n", 90.0),
        (("--resplite-start-timeout", "120"), "[pytest]\nresplite_start_timeout = 90\n", 120.0),
    ],
    ids=["default", "ini", "option-over-ini"],
)
def test_the_start_timeout_comes_from_the_option_or_the_ini(
    tmp_path: Path, args: tuple[str, ...], ini: str, expected: float
) -> None:
    out = run_pytest(tmp_path, START_TIMEOUT_TESTS, "-q", *args, ini=ini,
                     env={"EXPECTED_TIMEOUT": str(expected)})
    assert "1 passed" in out


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_the_start_timeout_is_what_the_server_gets(tmp_path: Path, isolation: str) -> None:
    # No server starts within a microsecond: the limit given is the one that applies.
    out = run_pytest(tmp_path, NO_TIME_TO_START_TESTS, "-q", "--resplite-start-timeout",
                     "0.000001", f"--resplite-isolation={isolation}", returncode=1)
    assert re.search(r"ServerStartError: the server (process )?did not start in 1e-06s", out)
    assert "1 error" in out


def test_a_bad_start_timeout_is_a_usage_error(tmp_path: Path) -> None:
    ini = "[pytest]\nresplite_start_timeout = soon\n"
    (tmp_path / "test_project.py").write_text(NO_TIME_TO_START_TESTS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(ini, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 4, done.stdout + done.stderr  # pytest's usage-error status
    assert "resplite_start_timeout 'soon': expected a number of seconds" in done.stderr


def test_a_cluster_from_the_factory_under_process_isolation(tmp_path: Path) -> None:
    out = run_pytest(tmp_path, CLUSTER_TESTS, "-q", "--resplite-isolation=process")
    assert "1 passed" in out


def test_the_plugins_default_start_timeout_is_serves() -> None:
    from resplite.testing import embedded, plugin

    assert plugin._DEFAULT_START_TIMEOUT == embedded.DEFAULT_STARTUP_TIMEOUT


GUIDE_MARKER_TESTS = '''
import pytest


@pytest.mark.resplite(requirepass="s3cret", maxmemory="1mb")
def test_with_a_password(redis_client, redis_url):
    assert redis_url.startswith("redis://:s3cret@")
    assert redis_client.set("greeting", "hello")
    assert redis_client.get("greeting") == b"hello"
'''


def test_the_guides_maxmemory_1mb_marker_takes_writes(tmp_path: Path) -> None:
    """docs/testing.md's marker example: a server of the test's own at maxmemory 1mb."""
    out = run_pytest(tmp_path, GUIDE_MARKER_TESTS, "-q")
    assert "1 passed" in out


REDIS_VERSION_TESTS = '''
import pytest


def info_version(client):
    return client.info("server")["redis_version"]


def test_the_session_server_answers_as_the_version(redis_client, resplite_factory):
    assert info_version(redis_client) == "8.0.0"
    # A command added after 8.0 is unknown there, as on Redis 8.0.
    with pytest.raises(Exception, match="unknown command"):
        redis_client.execute_command("XNACK", "s", "g", "c", "IDS", "1", "1-1")
    factory_server = resplite_factory(databases=2)  # the session's version holds here too
    import redis

    client = redis.Redis.from_url(factory_server.url)
    try:
        assert info_version(client) == "8.0.0"
    finally:
        client.close()


@pytest.mark.resplite(redis_version="7.2")
def test_a_marker_picks_another(redis_client):
    assert info_version(redis_client) == "7.2.0"
'''


@pytest.mark.parametrize("how", ["option", "ini"])
def test_the_redis_version_comes_from_the_option_or_the_ini(tmp_path: Path, how: str) -> None:
    if how == "option":
        out = run_pytest(tmp_path, REDIS_VERSION_TESTS, "--resplite-redis-version", "8.0")
    else:
        out = run_pytest(tmp_path, REDIS_VERSION_TESTS,
                         ini="[pytest]\nresplite_redis_version = 8.0\n")
    assert "2 passed" in out
