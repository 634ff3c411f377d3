"""The client matrix: one workload per client library, run against resplite and against a
real redis-server.

Each program under tests/clients/<language>/ takes ``HOST PORT PREFIX`` (some also the library
to use) and runs the steps of :data:`STEPS` through its client's own API, printing ``PASS step``,
``FAIL step: why`` or ``SKIP step: why`` for each: strings, hashes, lists with BLPOP (one
blocked until another connection pushes), sorted sets, SCAN and HSCAN iterated to cursor 0
over enough keys to take many calls, a 1,000-command pipeline, MULTI/EXEC with a WATCH
conflict from another connection, pub/sub, EVAL/EVALSHA with the NOSCRIPT error, the
consumer-group cycle (XGROUP CREATE, XADD, XREADGROUP, XACK, XPENDING, XAUTOCLAIM), XINFO
STREAM FULL, and RESP3 where the client speaks it. Every key and channel of
a run starts with its own prefix, so the clients share one server per kind.

A client whose toolchain or library is missing is skipped with the reason (in CI, where
.ci/run installs them all from Debian's packages, it fails instead). Go and C programs are
compiled once per run into a temporary folder. docs/testing.md's "tested clients" table
lists exactly :data:`CLIENTS` (checked below).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import node as node_support
from support import servers

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
#: Where Debian's golang-*-dev packages put their sources (GOPATH layout).
GOCODE = Path("/usr/share/gocode")

STEPS = ("strings", "hashes", "lists_blpop", "sorted_sets", "scan", "hscan", "pipeline",
         "multi_watch", "pubsub", "eval_evalsha", "consumer_group", "xinfo_stream_full",
         "resp3")

pytestmark = pytest.mark.xdist_group("clients")


def _run_ok(*argv: str) -> bool:
    if shutil.which(argv[0]) is None:
        return False
    return subprocess.run(argv, capture_output=True, timeout=120).returncode == 0


def _debian_version(package: str) -> str:
    """The upstream part of an installed Debian package's version (no epoch, no revision)."""
    if shutil.which("dpkg-query") is None:
        return "unknown"
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return "unknown"
    version = done.stdout.split(":", 1)[-1].rsplit("-", 1)[0]
    return re.split(r"[+~]", version)[0]


def _npm_version(package: str) -> str:
    manifest = node_support.NODE_DIR / "node_modules" / package / "package.json"
    return str(json.loads(manifest.read_text())["version"]) if manifest.exists() else "unknown"


def _python_version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _go_missing(package: str) -> str | None:
    if shutil.which("go") is None:
        return "go is not installed (Debian: golang-go)"
    if not (GOCODE / "src" / package).is_dir():
        return f"{package} is not installed under {GOCODE}/src"
    return None


@dataclass(frozen=True)
class Client:
    """One client library of the matrix."""

    id: str  # the test id and -k name
    name: str  # as docs/testing.md names it
    language: str
    #: Why it cannot run here, or None.
    missing: Callable[[], str | None]
    version: Callable[[], str]
    #: The program's argv before HOST PORT PREFIX, given the folder of this run's builds.
    argv: Callable[[Path], list[str]]
    #: Steps the client has no API for: they must report SKIP (and the rest PASS).
    skips: frozenset[str] = frozenset()
    #: The Debian package it comes from, when it does.
    debian: str | None = None
    #: Extra resplite directive sets to run it against besides the defaults (see go-redis).
    compat_versions: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


def _py(*args: str) -> Callable[[Path], list[str]]:
    return lambda _builds: [sys.executable, *(str(HERE / "python" / a) if a.endswith(".py")
                                              else a for a in args)]


def _python_missing(module: str) -> Callable[[], str | None]:
    def missing() -> str | None:
        if importlib.util.find_spec(module) is None:
            return f"the Python package {module!r} is not installed (pip install -e '.[dev]')"
        return None
    return missing


def _node_missing() -> str | None:
    return node_support.missing()


def _node_argv(script: str) -> Callable[[Path], list[str]]:
    return lambda _builds: [node_support.node_with_packages(), str(HERE / "node" / script)]


def _build_go(name: str, builds: Path) -> Path:
    out = builds / name
    if not out.exists():
        env = dict(os.environ, GO111MODULE="off", GOPATH=str(GOCODE), GOFLAGS="",
                   GOTOOLCHAIN="local")
        if "HOME" not in env and "GOCACHE" not in env:
            env["GOCACHE"] = str(builds / "go-cache")
        done = subprocess.run(["go", "build", "-o", str(out), "main.go"], cwd=HERE / "go" / name,
                              env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"go build of {name} failed:\n{done.stderr}"
    return out


def _build_c(builds: Path) -> Path:
    out = builds / "hiredis"
    if not out.exists():
        done = subprocess.run(["gcc", "-O1", "-Wall", "-Werror", "-o", str(out),
                               str(HERE / "c" / "workload.c"), "-lhiredis"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"compiling the hiredis workload failed:\n{done.stderr}"
    return out


def _ruby_missing() -> str | None:
    if shutil.which("ruby") is None:
        return "ruby is not installed (Debian: ruby)"
    return None if _run_ok("ruby", "-e", "require 'redis'") else "redis-rb is not installed " \
        "(Debian: ruby-redis)"


def _php_missing(library: str) -> Callable[[], str | None]:
    def missing() -> str | None:
        if shutil.which("php") is None:
            return "php is not installed (Debian: php-cli)"
        if library == "phpredis" and not _run_ok(
                "php", "-r", "exit(extension_loaded('redis') ? 0 : 1);"):
            return "the phpredis extension is not loaded (Debian: php-redis)"
        if library == "predis" and not Path("/usr/share/php/Predis/Autoloader.php").exists():
            return "Predis is not installed (Debian: php-predis)"
        return None
    return missing


def _perl_missing(module: str, package: str) -> Callable[[], str | None]:
    def missing() -> str | None:
        if shutil.which("perl") is None:
            return "perl is not installed"
        if _run_ok("perl", f"-M{module}", "-e", "1"):
            return None
        return f"the Perl module {module} is not installed (Debian: {package})"
    return missing


def _hiredis_missing() -> str | None:
    if shutil.which("gcc") is None:
        return "gcc is not installed"
    if not Path("/usr/include/hiredis/hiredis.h").exists():
        return "hiredis is not installed (Debian: libhiredis-dev)"
    return None


RESP2_ONLY = frozenset({"resp3"})

CLIENTS: tuple[Client, ...] = (
    Client("redis-py-sync", "redis-py", "Python", _python_missing("redis"),
           lambda: _python_version("redis"), _py("sync_workload.py", "redis")),
    Client("redis-py-asyncio", "redis-py (asyncio)", "Python", _python_missing("redis"),
           lambda: _python_version("redis"), _py("async_workload.py")),
    Client("valkey-py", "valkey-py", "Python", _python_missing("valkey"),
           lambda: _python_version("valkey"), _py("sync_workload.py", "valkey")),
    Client("ioredis", "ioredis", "node", _node_missing, lambda: _npm_version("ioredis"),
           _node_argv("ioredis.cjs")),
    Client("node-redis", "node-redis", "node", _node_missing, lambda: _npm_version("redis"),
           _node_argv("node_redis.cjs")),
    Client("redigo", "redigo", "Go", lambda: _go_missing("github.com/gomodule/redigo"),
           lambda: _debian_version("golang-github-gomodule-redigo-dev"),
           lambda builds: [str(_build_go("redigo", builds))], RESP2_ONLY,
           debian="golang-github-gomodule-redigo-dev"),
    # go-redis v5 was written for Redis 3 and 4. A client made for an older Redis can fail on
    # replies that gained fields since (go-redis 9.7's XINFO STREAM parser on 8.6's idmp
    # fields), so users run resplite as the Redis they run: go-redis also runs against
    # resplite answering as the oldest line it can (7.0), besides the default.
    Client("go-redis", "go-redis", "Go", lambda: _go_missing("gopkg.in/redis.v5"),
           lambda: _debian_version("golang-gopkg-redis.v5-dev"),
           lambda builds: [str(_build_go("goredis", builds))], RESP2_ONLY,
           debian="golang-gopkg-redis.v5-dev", compat_versions=("7.0",)),
    Client("redis-rb", "redis-rb", "Ruby", _ruby_missing,
           lambda: _debian_version("ruby-redis"),
           lambda _b: ["ruby", str(HERE / "ruby" / "redis_rb.rb")], RESP2_ONLY,
           debian="ruby-redis"),
    Client("phpredis", "phpredis", "PHP", _php_missing("phpredis"),
           lambda: _debian_version("php-redis"),
           lambda _b: ["php", str(HERE / "php" / "workload.php"), "phpredis"], RESP2_ONLY,
           debian="php-redis"),
    Client("predis-php", "Predis", "PHP", _php_missing("predis"),
           lambda: _debian_version("php-predis"),
           lambda _b: ["php", str(HERE / "php" / "workload.php"), "predis"], RESP2_ONLY,
           debian="php-predis"),
    Client("redis-pm", "Redis (Perl)", "Perl", _perl_missing("Redis", "libredis-perl"),
           lambda: _debian_version("libredis-perl"),
           lambda _b: ["perl", str(HERE / "perl" / "workload.pl"), "Redis"], RESP2_ONLY,
           debian="libredis-perl"),
    Client("redis-fast", "Redis::Fast", "Perl",
           _perl_missing("Redis::Fast", "libredis-fast-perl"),
           lambda: _debian_version("libredis-fast-perl"),
           lambda _b: ["perl", str(HERE / "perl" / "workload.pl"), "Redis::Fast"], RESP2_ONLY,
           debian="libredis-fast-perl"),
    Client("hiredis", "hiredis", "C", _hiredis_missing,
           lambda: _debian_version("libhiredis-dev"),
           lambda builds: [str(_build_c(builds))], RESP2_ONLY, debian="libhiredis-dev"),
)

#: (client, server) pairs: every client against resplite and redis-server, and against
#: resplite answering as each of the client's compat versions.
CASES = [
    pytest.param(client, server, id=f"{client.id}-{server}")
    for client in CLIENTS
    for server in ("resplite", "redis", *(f"resplite-{v}" for v in client.compat_versions))
]

LINE = re.compile(r"^(PASS|FAIL|SKIP) (\w+)(?:: (.*))?$")


class _Servers:
    """Servers of the module, one per kind, started on first use and all stopped at the end."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._stack = stack
        self._started: dict[str, servers.ServerProcess] = {}

    def get(self, kind: str) -> servers.ServerProcess:
        if kind not in self._started:
            if kind == "redis":
                if servers.redis_server_path() is None:
                    pytest.skip("redis-server is not installed")
                server = self._stack.enter_context(servers.running("redis"))
            else:
                version = kind.partition("-")[2]
                extra = ("--redis-compat-version", version) if version else ()
                server = self._stack.enter_context(servers.running("resplite", *extra))
            self._started[kind] = server
        return self._started[kind]


@pytest.fixture(scope="module")
def matrix_servers() -> Iterator[_Servers]:
    with contextlib.ExitStack() as stack:
        yield _Servers(stack)


@pytest.fixture(scope="session")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This run's compiled workloads (Go, C): each built once, on first use."""
    return tmp_path_factory.mktemp("client-builds")


def _available(client: Client) -> None:
    why = client.missing()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{client.name} is required in CI (.ci/run installs it): {why}")
        pytest.skip(f"{client.name}: {why}")


@pytest.mark.parametrize(("client", "server"), CASES)
def test_client_workload(client: Client, server: str, matrix_servers: _Servers,
                         builds: Path) -> None:
    _available(client)
    target = matrix_servers.get(server)
    argv = [*client.argv(builds), target.host, str(target.port), f"matrix:{client.id}:"]
    env = dict(os.environ, NODE_PATH=str(node_support.NODE_DIR / "node_modules"),
               NODE_NO_WARNINGS="1", **client.env)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    report = f"{client.name} {client.version()} against {server}:\n{done.stdout}\n{done.stderr}"
    results: dict[str, tuple[str, str]] = {}
    for line in done.stdout.splitlines():
        m = LINE.match(line)
        if m:
            results[m[2]] = (m[1], m[3] or "")
    assert tuple(results) == STEPS, f"steps reported out of order or missing; {report}"
    failed = {name: why for name, (outcome, why) in results.items() if outcome == "FAIL"}
    assert not failed, report
    skipped = {name for name, (outcome, _) in results.items() if outcome == "SKIP"}
    assert skipped == client.skips, report
    assert done.returncode == 0, report


# docs/testing.md's table: | client | language | version | exercised | command |
DOCS = REPO / "docs" / "testing.md"


def _docs_rows() -> list[list[str]]:
    text = DOCS.read_text()
    start = text.index("<!-- tested-clients -->")
    rows: list[list[str]] = []
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in ("client", "") or set(cells[0]) <= {"-"}:
            continue
        rows.append(cells)
    return rows


def test_docs_table_lists_the_matrix() -> None:
    rows = _docs_rows()
    assert [r[0] for r in rows] == [c.name for c in CLIENTS]
    for client in CLIENTS:  # each command selects that client's tests only
        assert not [other for other in CLIENTS if other is not client and client.id in other.id]
    for row, client in zip(rows, CLIENTS, strict=True):
        _name, language, _version, exercised, command = row
        assert language == client.language, row
        steps = "all steps" if not client.skips else "all steps but RESP3"
        assert client.skips <= RESP2_ONLY, "the table has no words for other skips"
        assert exercised.split(";")[0] == steps, row
        assert command == f"`pytest tests/clients -k {client.id}`", row


def test_docs_table_versions_are_the_installed_ones() -> None:
    """The Debian and npm clients' versions are fixed by bookworm and package-lock.json: the
    table names the version the suite runs (Python's come from the dev extra's range)."""
    checked = 0
    for row, client in zip(_docs_rows(), CLIENTS, strict=True):
        if client.language == "Python" or client.missing() is not None:
            continue
        installed = client.version()
        if installed == "unknown":
            continue
        assert row[2] == installed, f"{client.name}: the table says {row[2]}, {installed} runs"
        checked += 1
    if checked == 0:
        pytest.skip("none of the Debian or npm clients is installed")


def test_ci_installs_every_debian_client() -> None:
    """CI runs on a fresh machine: .ci/run must install each client the matrix takes from
    Debian, or the matrix fails there."""
    script = (REPO / ".ci" / "run").read_text()
    for client in CLIENTS:
        if client.debian is not None:
            assert f"missing+=({client.debian})" in script, client.name
