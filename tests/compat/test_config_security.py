"""CONFIG security against a real Redis 7.0: protected directives, protected commands, the
validators of string directives, and CONFIG REWRITE that no value can inject a directive into.

Byte-for-byte comparisons run on the shared pair (RESP2 and RESP3); tests that need other
start-up settings or a configuration file start their own pair of servers and stop them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpshape import assert_same_shape, implemented
from support.pair import Pair, open_pair
from support.raw import RawClient
from support.servers import (
    ServerProcess,
    _wait_for_port,
    free_port,
    redis_server_path,
    start_redis,
    start_resplite,
)

PROTECTED_REFUSALS = [
    ("dir", "/tmp"),
    ("DIR", "/tmp"),
    ("dbfilename", "x.rdb"),
    ("maxclients", "100", "dir", "/tmp"),
    ("dir", "/tmp", "maxclients", "abc"),
    ("maxclients", "abc", "dbfilename", "x"),
    ("dbfilename", "x", "nosuch", "1"),
    ("enable-protected-configs", "yes"),
    ("enable-debug-command", "yes"),
    ("enable-module-command", "local"),
]


@pytest.mark.parametrize("args", PROTECTED_REFUSALS, ids=lambda a: " ".join(a))
def test_config_set_protected_directives_are_refused_by_default(pair, args):
    pair.check("CONFIG", "SET", *args)
    pair.check("CONFIG", "GET", "dbfilename")
    pair.check("CONFIG", "GET", "maxclients")


def test_config_get_protected_settings(pair):
    for name in ("enable-protected-configs", "enable-debug-command", "enable-module-command",
                 "enable-*-command", "dbfilename", "protected-mode", "acllog-max-len",
                 "acl-pubsub-default", "aclfile", "appendfilename"):
        ref, ours = pair.both("CONFIG", "GET", name)
        if name == "enable-debug-command":
            continue  # both test servers are started with it on; shapes compared below
        if name == "enable-*-command":
            # resplite also lists its own enable-clock-command
            assert b"enable-module-command" in ours and b"enable-debug-command" in ours
            continue
        assert ours == ref, name


@pytest.mark.parametrize(
    "args",
    [
        ("save", "60"),
        ("save", "0 1"),
        ("save", "60 -1"),
        ("save", "60 1 30"),
        ("save", "a b"),
        ("save", " 60 1"),
        ("notify-keyspace-events", "Q"),
        ("notify-keyspace-events", "KEA?"),
        ("bind", " ".join(["127.0.0.1"] * 17)),
        ("appendfilename", "x"),
        ("unixsocket", "/tmp/x"),
        ("logfile", "/tmp/x"),
        ("aclfile", "/tmp/x"),
        ("acllog-max-len", "-1"),
        ("acl-pubsub-default", "some"),
    ],
    ids=lambda a: " ".join(a),
)
def test_config_set_validators(pair, args):
    pair.check("CONFIG", "SET", *args)


@pytest.mark.parametrize(
    "value", ["", "KEA", "AKE", "Kg$", "Ex", "KEn", "gslhzxetdm$K", "An", "EK", "mK"],
)
def test_notify_keyspace_events_spelled_as_redis_spells_them(pair, value):
    try:
        pair.check("CONFIG", "SET", "notify-keyspace-events", value)
        pair.check("CONFIG", "GET", "notify-keyspace-events")
    finally:
        pair.ref.call("CONFIG", "SET", "notify-keyspace-events", "")
        pair.ours.call("CONFIG", "SET", "notify-keyspace-events", "")


def test_save_rules_read_back_as_redis_prints_them(pair):
    before = pair.ref.call("CONFIG", "GET", "save")
    try:
        for value in ("3600 1 300 100", "60 0", "", "+5 10", "60 1 60 1"):
            pair.check("CONFIG", "SET", "save", value)
            pair.check("CONFIG", "GET", "save")
    finally:
        pair.ref.call("CONFIG", "SET", "save", "")
        pair.ours.call("CONFIG", "SET", "save", "")
        assert before  # the shared servers run with no save rules


@pytest.fixture
def pair_factory() -> Iterator:
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


def test_protected_configs_yes_validates_dir_and_dbfilename(pair_factory, tmp_path):
    pair = pair_factory("--enable-protected-configs", "yes")
    afile = tmp_path / "plain-file"
    afile.write_text("x")
    odd = tmp_path / "with space \"and\" quote"
    odd.mkdir()
    pair.check("CONFIG", "SET", "dir", str(tmp_path))
    pair.check("CONFIG", "GET", "dir")
    pair.check("CONFIG", "SET", "dir", "/nonexistent/dir")
    pair.check("CONFIG", "SET", "dir", str(afile))
    pair.check("CONFIG", "SET", "dir", str(odd))
    pair.check("CONFIG", "GET", "dir")
    pair.check("CONFIG", "SET", "dir", "..")  # relative to the current dir, as chdir is
    pair.check("CONFIG", "GET", "dir")
    for value in ("a/b", "a\\b", "/abs", "", "with space.rdb", "new\nline.rdb"):
        pair.check("CONFIG", "SET", "dbfilename", value)
        pair.check("CONFIG", "GET", "dbfilename")


def test_protected_configs_local_allows_loopback_clients(pair_factory, tmp_path):
    pair = pair_factory("--enable-protected-configs", "local")
    pair.check("CONFIG", "SET", "dir", str(tmp_path))
    pair.check("CONFIG", "GET", "dir")


@pytest.mark.parametrize("setting", ["no", "yes", "local"])
def test_debug_and_module_commands_follow_their_settings(pair_factory, setting):
    pair = pair_factory("--enable-debug-command", setting, "--enable-module-command", setting)
    for args in (("DEBUG", "SLEEP", "0"), ("DEBUG", "HELP"), ("DEBUG", "nosuch"),
                 ("MODULE", "LOAD", "/nonexistent/x.so"), ("MODULE", "LOAD", "/x.so", "a"),
                 ("MODULE", "LOADEX", "/x.so", "CONFIG", "a", "b", "ARGS", "c"),
                 ("MODULE", "UNLOAD", "nosuch"), ("MODULE", "LIST"), ("MODULE", "HELP"),
                 ("MODULE", "LOAD"), ("MODULE", "nosuch"), ("MODULE",)):
        if args in (("DEBUG", "HELP"), ("MODULE", "HELP")):
            ref, ours = pair.both(*args)
            if args[0] == "MODULE":
                assert_same_shape(ref, ours, ours_has=implemented("module"))
            assert ours.startswith(b"-") == ref.startswith(b"-")
            continue
        pair.check(*args)
    # Refused inside MULTI too, marking the transaction as failed.
    pair.check("MULTI")
    pair.check("DEBUG", "SLEEP", "0")
    pair.check("EXEC")


# -- CONFIG REWRITE -----------------------------------------------------------------------------


def _start_with_file(kind: str, conf: Path, *extra: str) -> ServerProcess:
    port = free_port()
    workdir = tempfile.mkdtemp(prefix=f"{kind}-conf-")
    if kind == "redis":
        exe = redis_server_path()
        assert exe is not None
        args = [exe, str(conf), "--port", str(port), "--bind", "127.0.0.1", *extra]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                cwd=workdir)
    else:
        args = [sys.executable, "-m", "resplite", str(conf), "--port", str(port),
                "--bind", "127.0.0.1", *extra]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                cwd=workdir, env=dict(os.environ))
    _wait_for_port(port, proc)
    return ServerProcess(kind, "127.0.0.1", port, proc, workdir)


def _config_lines(path: Path, name: str) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n")
            if line.split(b" ", 1)[0] == name.encode()]


INJECTION = "\nenable-debug-command yes\nlogfile /tmp/resplite-injected.log\ninclude /etc/x\n#"


def test_config_rewrite_cannot_inject_directives(tmp_path):
    """The reproducer: a value with newlines, quotes and tabs, then CONFIG REWRITE, then a
    restart from the rewritten file. Every directive keeps its value; nothing is added."""
    if redis_server_path() is None:
        pytest.skip("redis-server is not installed")
    evil_dir = tmp_path / ("d" + INJECTION.replace("/", "_") + "\t\"'\\")
    evil_dir.mkdir()
    written: dict[str, Path] = {}
    for kind in ("redis", "resplite"):
        conf = tmp_path / f"{kind}.conf"
        conf.write_text("# settings\nenable-protected-configs yes\n")
        server = _start_with_file(kind, conf)
        try:
            conn = RawClient(server.host, server.port)
            for name, value in (("dir", str(evil_dir)), ("requirepass", "p" + INJECTION),
                                ("dbfilename", "f" + INJECTION.replace("/", "_")),
                                ("notify-keyspace-events", "KEA")):
                assert conn.call("CONFIG", "SET", name, value) == b"+OK\r\n", (kind, name)
            conn.call("AUTH", "p" + INJECTION)
            assert conn.call("CONFIG", "REWRITE") == b"+OK\r\n", kind
            conn.close()
        finally:
            server.stop()
        written[kind] = conf
        # Restarted from the rewritten file: the values come back whole, nothing else does.
        again = _start_with_file(kind, conf)
        try:
            conn = RawClient(again.host, again.port)
            assert conn.call("AUTH", "p" + INJECTION) == b"+OK\r\n", kind
            get = conn.call("CONFIG", "GET", "enable-debug-command")
            assert get.endswith(b"$2\r\nno\r\n"), (kind, get)
            assert str(evil_dir).encode() in conn.call("CONFIG", "GET", "dir")
            assert conn.call("CONFIG", "GET", "logfile").endswith(b"$0\r\n\r\n")
            conn.close()
        finally:
            again.stop()
    for name in ("dir", "requirepass", "dbfilename", "notify-keyspace-events",
                 "enable-debug-command", "logfile", "include"):
        assert _config_lines(written["resplite"], name) == _config_lines(written["redis"], name)


def test_config_rewrite_lines_match_redis(tmp_path):
    """Comments kept, repeats blanked, unknown lines commented out, values quoted as Redis
    quotes them: the lines both servers write for the directives resplite has are equal."""
    if redis_server_path() is None:
        pytest.skip("redis-server is not installed")
    text = (
        "# a comment\n"
        "maxmemory 10mb\n"
        "timeout 0\n"
        "maxmemory 20mb\n"
        "\n\n\n"
        "loglevel warning\n"
        "requirepass \"a b\"\n"
        "bind 127.0.0.1 -::1\n"
        "save 60 1\n"
        "save 30 2\n"
        "hash-max-ziplist-entries 100\n"
        "unixsocketperm 700\n"
    )
    files: dict[str, Path] = {}
    for kind in ("redis", "resplite"):
        conf = tmp_path / f"{kind}.conf"
        conf.write_text(text)
        server = _start_with_file(kind, conf)
        try:
            conn = RawClient(server.host, server.port)
            conn.call("AUTH", "a b")
            for name, value in (("timeout", "30"), ("maxclients", "77"),
                                ("requirepass", "x\x01\xff\"\\y"),
                                ("maxmemory", "3000"), ("save", "100 5"),
                                ("proto-max-bulk-len", "1gb"),
                                ("hash-max-listpack-value", "1kb"),
                                ("client-output-buffer-limit", "normal 1mb 512kb 10"),
                                ("notify-keyspace-events", "KEx")):
                assert conn.call("CONFIG", "SET", name, value) == b"+OK\r\n", (kind, name)
            assert conn.call("CONFIG", "REWRITE") == b"+OK\r\n", kind
            conn.close()
        finally:
            server.stop()
        files[kind] = conf
    ref = files["redis"].read_bytes().split(b"\n")
    ours = files["resplite"].read_bytes().split(b"\n")
    # The lines that stood in the file keep their places and take the same text.
    head = ref.index(b"# Generated by CONFIG REWRITE")
    assert ours[:head] == ref[:head]
    shared = {"maxclients", "timeout", "requirepass", "maxmemory", "save", "proto-max-bulk-len",
              "hash-max-listpack-value", "client-output-buffer-limit", "notify-keyspace-events"}
    for name in shared:
        assert _config_lines(files["resplite"], name) == _config_lines(files["redis"], name), name
