"""CONFIG GET / SET / RESETSTAT / REWRITE / HELP (``resplite/commands/config.py``) against a
real Redis 7.0.

Replies are compared byte for byte, except CONFIG GET with several names or a pattern, which
Redis answers in its hash table's order: those are compared as maps. CONFIG SET is checked
for its errors (atomic: a failed SET changes nothing) and for the effect of each directive on
the running server (open connections, writes, new connections). Then what keeps a
configuration safe: protected directives and commands, the validators of string directives,
and CONFIG REWRITE, into which no value can inject a directive.

Tests that change configuration restore it, because the servers are shared by the session.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support.helpshape import assert_same_shape, implemented
from support.pair import Pair, PairFactory
from support.raw import RawClient
from support.resptree import parse, to_python
from support.servers import (
    ServerProcess,
    _wait_for_port,
    free_port,
    reference_path,
    require_reference,
    server_version,
)


def test_config_get(pair: Pair) -> None:
    for name in ("maxmemory", "maxclients", "timeout", "maxmemory-policy", "appendonly",
                 "databases", "proto-max-bulk-len", "MAXCLIENTS", "hz", "save", "requirepass",
                 "slowlog-log-slower-than", "slowlog-max-len", "notify-keyspace-events",
                 "stream-node-max-entries", "stream-node-max-bytes", "lua-time-limit",
                 "busy-reply-threshold", "nosuch", "hash-max-ziplist-entries"):
        pair.check("CONFIG", "GET", name)
    # Several names: Redis answers in the order of its hash table, so compare as maps.
    for args in (("maxclients", "timeout"), ("MAXCLIENTS", "maxclients"),
                 ("timeout", "nosuch", "timeout"), ("Timeout", "maxclients", "TIMEOUT")):
        ref, ours = (_as_map(r) for r in pair.both("CONFIG", "GET", *args))
        assert ours == ref, args


def _as_map(reply: bytes) -> dict[str, str]:
    value = to_python(parse(reply))
    if isinstance(value, list):
        value = dict(zip(value[::2], value[1::2], strict=True))
    return value


def test_config_get_patterns_list_the_old_alias_names(pair: Pair) -> None:
    """Redis 7.0 matches a pattern against the ziplist-era names too, each listed once."""
    pair.check("CONFIG", "SET", "hash-max-ziplist-value", "32")
    try:
        for args in (("hash-max-*",), ("HASH-MAX-*",), ("hash-max-ziplist-*",),
                     ("h*ziplist-entries",), ("hash-max-?iplist-value",),
                     ("hash-max-*", "hash-max-ziplist-entries")):
            ref, ours = (_as_map(r) for r in pair.both("CONFIG", "GET", *args))
            assert ours == ref, args
        # Now every old name Redis lists (hash, list and zset directives) is known here.
        ref, ours = (_as_map(r) for r in pair.both("CONFIG", "GET", "*ziplist*"))
        assert ours == ref
        assert ours == {"hash-max-ziplist-entries": "512", "hash-max-ziplist-value": "32",
                        "list-max-ziplist-size": "-2", "zset-max-ziplist-entries": "128",
                        "zset-max-ziplist-value": "64"}
    finally:
        pair.check("CONFIG", "SET", "hash-max-listpack-value", "64")


def _reference_line() -> tuple[int, int]:
    exe = reference_path()
    major, minor = (server_version(exe) if exe is not None else "8.6.3").split(".")[:2]
    return int(major), int(minor)


REF = _reference_line()
# Directives added after Redis 7.0, by the line that has them (the 8.6 ones came between 8.2
# and 8.6); those newer than the reference are left out of the comparison.
ADDED_DIRECTIVES = {
    **dict.fromkeys((
        "max-new-connections-per-cycle", "max-new-tls-connections-per-cycle", "locale-collate",
        "set-max-listpack-entries", "set-max-listpack-value", "hide-user-data-from-log",
        "cluster-announce-human-nodename", "server-cpulist", "bio-cpulist",
        "aof-rewrite-cpulist", "bgsave-cpulist"), (7, 2)),
    **dict.fromkeys((
        "aof-load-corrupt-tail-max-size", "cluster-compatibility-sample-ratio",
        "cluster-slot-migration-handoff-max-lag-bytes",
        "cluster-slot-migration-write-pause-timeout", "cluster-slot-stats-enabled",
        "key-memory-histograms", "lookahead", "replica-full-sync-buffer-limit",
        "tls-auth-clients-user", "stream-idmp-duration", "stream-idmp-maxsize"), (8, 6)),
}
NEWER_DIRECTIVES = {name for name, line in ADDED_DIRECTIVES.items() if line > REF}
# resplite's own directives; io-threads-do-reads, which Redis 8.0 dropped, resplite still
# takes (so that a 7.x configuration file loads).
OWN_DIRECTIVES = {"uvloop", "enable-clock-command", "enable-fault-command", "cluster-nodes",
                  "lua-max-memory", "redis-compat-version", "active-expire-enabled",
                  *(("io-threads-do-reads",) if REF >= (8, 0) else ())}
# The vector-set module's own directive (Redis 8 builds the module in; resplite has no vector
# sets).
MODULE_DIRECTIVES = {"vset-force-single-threaded-execution"}


def test_config_get_lists_every_directive_redis_has(pair: Pair) -> None:
    """Every name the reference lists, with its default value (what a process sets aside)."""
    for pattern in ("max*", "*", "MAX*ients", "slowlog-*", "?z", "[mt]*", "*repl*", "tls-*"):
        ref, ours = (_as_map(r) for r in pair.both("CONFIG", "GET", pattern))
        for name in MODULE_DIRECTIVES:
            ref.pop(name, None)
        # Redis 7.4 hides aof-disable-auto-gc from patterns (an exact name still answers).
        assert set(ours) - OWN_DIRECTIVES - NEWER_DIRECTIVES == \
            set(ref) - {"aof-disable-auto-gc"}, pattern
        ref.pop("aof-disable-auto-gc", None)
        for key in set(ref):
            # Process-specific, or a default the reference was started without.
            if key in ("port", "bind", "dir", "unixsocket", "logfile", "loglevel",
                       "protected-mode", "save", "appendonly", "enable-debug-command",
                       "io-threads-do-reads"):
                continue
            assert ours[key] == ref[key], (pattern, key)


_SKIP_SET = {
    # Changing these moves the reference's listener or process; their checks are tested above.
    "port", "bind", "dir", "unixsocket", "tls-port", "cluster-announce-bus-port",
    # Protected configs (CONFIG SET refused unless enable-protected-configs) and the save
    # points are checked by their own tests.
    "dbfilename", "save",
    # Redis applies it (setlocale) and refuses a locale the system lacks; resplite stores it
    # and never sorts by locale, so it accepts any name.
    "locale-collate",
}
# Where Redis 7.2 - 8.0 changed a directive's check, the newer text the 7.0 reference's maps
# to.
_NEWER_TEXTS = {
    "loglevel": (b"warning\r\n", b"warning, nothing\r\n"),  # the level "nothing" (7.2)
    "maxmemory-samples": (b"1 and 2147483647", b"1 and 64"),  # bounded at 64 (7.4)
} if REF < (7, 2) else {}

_BAD_VALUES = ("abc", "-1", "1.5", "", "99999999999999999999999", "0x10", "yes no")


def test_config_set_checks_every_directive_as_redis_does(pair: Pair) -> None:
    """CONFIG SET of every directive the reference lists with values most refuse: the same
    error text (or the same acceptance, then both are put back)."""
    ref_map = _as_map(pair.ref.call("CONFIG", "GET", "*"))
    ours_map = _as_map(pair.ours.call("CONFIG", "GET", "*"))
    compared = 0
    for name in sorted(ref_map):
        if name in _SKIP_SET or name in MODULE_DIRECTIVES:
            continue
        for value in _BAD_VALUES:
            ref, ours = pair.both("CONFIG", "SET", name, value)
            if name in _NEWER_TEXTS:
                ref = ref.replace(*_NEWER_TEXTS[name])
            assert ours == ref, f"CONFIG SET {name} {value!r}\n redis: {ref!r}\n ours:  {ours!r}"
            compared += 1
            if ref.startswith(b"+OK"):
                pair.ref.call("CONFIG", "SET", name, ref_map[name])
                pair.ours.call("CONFIG", "SET", name, ours_map[name])
    assert compared > 1000


@pytest.mark.parametrize(
    "args",
    [
        ("x", "y"),
        ("maxclients", "abc"),
        ("MaxClients", "abc"),
        ("maxclients", "0"),
        ("timeout", "-1"),
        ("timeout", "1.5"),
        ("maxmemory", "1x"),
        ("maxmemory", "-1"),
        ("maxmemory-policy", "foo"),
        ("port", "70000"),
        ("maxclients", "100", "timeout", "abc"),
        ("maxclients", "100", "maxclients", "200"),
        ("maxclients", "100", "MAXCLIENTS", "200"),
        ("databases", "4"),
        ("maxclients", "x", "databases", "2"),
        ("FOO", "1", "maxclients", "x"),
        ("maxclients", "x", "FOO", "1"),
        ("maxclients", "10", "timeout"),
        ("protected-mode", "maybe"),
        ("appendonly", "maybe"),
        ("proto-max-bulk-len", "100"),
        ("client-query-buffer-limit", "1"),
        ("slowlog-log-slower-than", "abc"),
        ("slowlog-max-len", "-1"),
        ("enable-debug-command", "yes"),
    ],
    ids=lambda a: " ".join(a),
)
def test_config_set_errors(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check("CONFIG", "SET", *args)
    pair.check("CONFIG", "GET", "maxclients")  # atomic: nothing changed
    pair.check("CONFIG", "GET", "timeout")


def test_active_expire_effort_takes_1_to_10_as_redis(pair: Pair) -> None:
    """The expire cycle's effort: out-of-range and malformed values get Redis's error and
    change nothing; a value in range reads back."""
    with pair.configured(active_expire_effort="1"):
        for value in ("0", "11", "-1", "abc", "1.5", "10", "5", "1"):
            pair.check("CONFIG", "SET", "active-expire-effort", value)
            pair.check("CONFIG", "GET", "active-expire-effort")


def test_config_set_several_and_get_back(pair: Pair) -> None:
    with pair.configured(maxclients="500", timeout="300"):
        pair.check("CONFIG", "GET", "maxclients")
        pair.check("CONFIG", "GET", "timeout")
        pair.check("CONFIG", "SET", "maxmemory", "1GB", "maxmemory", "2")
        pair.check("CONFIG", "SET", "maxmemory", "100mb")
        pair.check("CONFIG", "GET", "maxmemory")
        pair.check("CONFIG", "SET", "maxmemory", "0")
        pair.check("CONFIG", "SET", "hz", "0")
        pair.check("CONFIG", "GET", "hz")
        pair.check("CONFIG", "SET", "hz", "100000")
        pair.check("CONFIG", "GET", "hz")
        pair.check("CONFIG", "SET", "hz", "10")


def test_config_set_proto_max_bulk_len_reaches_open_connections(pair: Pair) -> None:
    other = pair.connect_extra()
    try:
        with pair.configured(proto_max_bulk_len="1mb"):
            big = b"*2\r\n$4\r\nECHO\r\n$2000000\r\n"
            other.ref.send_raw(big)
            other.ours.send_raw(big)
            assert other.ours.read_reply() == other.ref.read_reply()
            assert other.ref.is_closed() and other.ours.is_closed()
    finally:
        other.close()


def test_lrm_policies_exist_from_redis_8_6(pair: Pair) -> None:
    """Redis 8.6's least-recently-modified policies: taken, listed back, and (answering as
    7.0, below) refused with 7.0's list of choices."""
    try:
        for policy in ("volatile-lrm", "ALLKEYS-LRM", "allkeys-lrmx"):
            pair.check("CONFIG", "SET", "maxmemory-policy", policy)
            pair.check("CONFIG", "GET", "maxmemory-policy")
    finally:
        pair.ref.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
        pair.ours.call("CONFIG", "SET", "maxmemory-policy", "noeviction")


@pytest.mark.reference("7.0")
def test_lrm_policies_as_redis_7_0(pair: Pair) -> None:
    test_lrm_policies_exist_from_redis_8_6(pair)


@pytest.mark.reference("7.0")
def test_redis_7_0_refuses_reads_queued_over_maxmemory(pair: Pair) -> None:
    admin = pair.connect_extra()
    try:
        admin.check("CONFIG", "SET", "maxmemory", "1")
        pair.check("MULTI")
        pair.check("GET", "k")
        pair.check("DISCARD")
    finally:
        admin.check("CONFIG", "SET", "maxmemory", "0")
        admin.close()


def test_config_set_maxmemory_refuses_writes(pair: Pair) -> None:
    admin = pair.connect_extra()
    try:
        pair.check("MULTI")
        pair.check("SET", "queued", "before")
        admin.check("CONFIG", "SET", "maxmemory", "1")
        pair.check("EXEC")  # holds a write queued before the limit
        pair.check("SET", "k", "v")
        pair.check("GET", "k")
        pair.check("DEL", "k")
        pair.check("MULTI")
        pair.check("GET", "k")  # queued (Redis 7.0 refused even reads inside MULTI)
        pair.check("SET", "k", "v")
        pair.check("DISCARD")
        pair.check("MULTI")
        pair.check("EXEC")
    finally:
        admin.check("CONFIG", "SET", "maxmemory", "0")
        admin.close()
    pair.check("SET", "k", "v")


def _connected_clients(info: bytes) -> int:
    match = re.search(rb"connected_clients:(\d+)", info)
    assert match is not None, info
    return int(match[1])


def test_config_set_maxclients_refuses_connections(pair: Pair) -> None:
    host_ref, port_ref = pair.ref.sock.getpeername()[:2]
    host_ours, port_ours = pair.ours.sock.getpeername()[:2]
    count = _connected_clients(pair.ours.call("INFO", "clients"))
    ref_count = _connected_clients(pair.ref.call("INFO", "clients"))
    pair.ours.call("CONFIG", "SET", "maxclients", str(count))
    pair.ref.call("CONFIG", "SET", "maxclients", str(ref_count))
    try:
        extra_ref, extra_ours = RawClient(host_ref, port_ref), RawClient(host_ours, port_ours)
        try:
            assert extra_ours.read_reply() == extra_ref.read_reply() == (
                b"-ERR max number of clients reached\r\n"
            )
        finally:
            extra_ref.close()
            extra_ours.close()
    finally:
        pair.ours.call("CONFIG", "SET", "maxclients", "10000")
        pair.ref.call("CONFIG", "SET", "maxclients", "10000")


def test_config_set_requirepass_applies_to_new_connections(pair: Pair) -> None:
    host_ref, port_ref = pair.ref.sock.getpeername()[:2]
    host_ours, port_ours = pair.ours.sock.getpeername()[:2]
    with pair.configured(requirepass="s3cret"):
        pair.check("PING")  # already authenticated connections stay so
        fresh = [RawClient(host_ref, port_ref), RawClient(host_ours, port_ours)]
        try:
            assert fresh[1].call("PING") == fresh[0].call("PING")
            assert fresh[1].call("AUTH", "s3cret") == fresh[0].call("AUTH", "s3cret")
            pair.ref.call("CONFIG", "SET", "requirepass", "")
            pair.ours.call("CONFIG", "SET", "requirepass", "")
        finally:
            for conn in fresh:
                conn.close()


def test_config_resetstat_rewrite_help(pair: Pair) -> None:
    pair.check("NOSUCH")
    pair.check("CONFIG", "RESETSTAT")
    ref, ours = pair.info("stats", "errorstats", "commandstats")
    assert ours.get("Errorstats") == ref.get("Errorstats") == []
    assert [f for f, _ in ours["Commandstats"]] == [f for f, _ in ref["Commandstats"]]
    pair.check("CONFIG", "REWRITE")


@pytest.mark.parametrize("container", ["CONFIG"])
def test_help_has_the_shape_of_redis(pair: Pair, container: str) -> None:
    ref, ours = pair.both(container, "HELP")
    assert_same_shape(ref, ours, ours_has=implemented(container))


# -- CONFIG and security: protected directives, validators, CONFIG REWRITE ------------------
#
# CONFIG security against a real Redis 7.0: protected directives, protected commands, the
# validators of string directives, and CONFIG REWRITE that no value can inject a directive into.
#
# Byte-for-byte comparisons run on the shared pair (RESP2 and RESP3); tests that need other
# start-up settings or a configuration file start their own pair of servers and stop them.


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
def test_config_set_protected_directives_are_refused_by_default(
    pair: Pair, args: tuple[str, ...]
) -> None:
    pair.check("CONFIG", "SET", *args)
    pair.check("CONFIG", "GET", "dbfilename")
    pair.check("CONFIG", "GET", "maxclients")


def test_config_get_protected_settings(pair: Pair) -> None:
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
def test_config_set_validators(pair: Pair, args: tuple[str, ...]) -> None:
    pair.check("CONFIG", "SET", *args)


@pytest.mark.parametrize(
    "value", ["", "KEA", "AKE", "Kg$", "Ex", "KEn", "gslhzxetdm$K", "An", "EK", "mK"],
)
def test_notify_keyspace_events_spelled_as_redis_spells_them(pair: Pair, value: str) -> None:
    try:
        pair.check("CONFIG", "SET", "notify-keyspace-events", value)
        pair.check("CONFIG", "GET", "notify-keyspace-events")
    finally:
        pair.ref.call("CONFIG", "SET", "notify-keyspace-events", "")
        pair.ours.call("CONFIG", "SET", "notify-keyspace-events", "")


def test_save_rules_read_back_as_redis_prints_them(pair: Pair) -> None:
    before = pair.ref.call("CONFIG", "GET", "save")
    try:
        for value in ("3600 1 300 100", "60 0", "", "+5 10", "60 1 60 1"):
            pair.check("CONFIG", "SET", "save", value)
            pair.check("CONFIG", "GET", "save")
    finally:
        pair.ref.call("CONFIG", "SET", "save", "")
        pair.ours.call("CONFIG", "SET", "save", "")
        assert before  # the shared servers run with no save rules


def test_protected_configs_yes_validates_dir_and_dbfilename(
    pair_factory: PairFactory, tmp_path: Path
) -> None:
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


def test_protected_configs_local_allows_loopback_clients(
    pair_factory: PairFactory, tmp_path: Path
) -> None:
    pair = pair_factory("--enable-protected-configs", "local")
    pair.check("CONFIG", "SET", "dir", str(tmp_path))
    pair.check("CONFIG", "GET", "dir")


# -- CONFIG REWRITE -----------------------------------------------------------------------------


def _start_with_file(kind: str, conf: Path, *extra: str) -> ServerProcess:
    port = free_port()
    workdir = tempfile.mkdtemp(prefix=f"{kind}-conf-")
    ref = require_reference()
    if kind == "redis":
        args = [ref.exe, str(conf), "--port", str(port), "--bind", "127.0.0.1", *extra]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                cwd=workdir)
    else:
        args = [sys.executable, "-m", "resplite", str(conf), "--port", str(port),
                "--bind", "127.0.0.1", *extra]
        if ref.compat_version is not None:
            args += ["--redis-compat-version", ref.compat_version]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                cwd=workdir, env=dict(os.environ))
    _wait_for_port(port, proc)
    return ServerProcess(kind, "127.0.0.1", port, proc, workdir)


def _config_lines(path: Path, name: str) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n")
            if line.split(b" ", 1)[0] == name.encode()]


INJECTION = "\nenable-debug-command yes\nlogfile /tmp/resplite-injected.log\ninclude /etc/x\n#"


def test_config_rewrite_cannot_inject_directives(tmp_path: Path) -> None:
    """The reproducer: a value with newlines, quotes and tabs, then CONFIG REWRITE, then a
    restart from the rewritten file. Every directive keeps its value; nothing is added."""
    require_reference()
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


def test_config_rewrite_lines_match_redis(tmp_path: Path) -> None:
    """Comments kept, repeats blanked, unknown lines commented out, values quoted as Redis
    quotes them: the lines both servers write for the directives resplite has are equal."""
    require_reference()
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


PERSISTENCE = (
    "save", "appendonly", "appendfsync", "appendfilename", "appenddirname", "dbfilename",
    "aof-use-rdb-preamble", "aof-load-truncated", "aof-timestamp-enabled",
    "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size", "no-appendfsync-on-rewrite",
    "aof-rewrite-incremental-fsync", "rdb-save-incremental-fsync",
    "stop-writes-on-bgsave-error", "rdbcompression", "rdbchecksum", "rdb-del-sync-files",
    "sanitize-dump-payload", "shutdown-on-sigterm", "shutdown-on-sigint", "shutdown-timeout",
    "rdb-key-save-delay",
)


def test_persistence_defaults_are_redis_s() -> None:
    """Started without a save option (or any other persistence directive), resplite answers
    CONFIG GET for every persistence setting as Redis does: Redis's built-in save rules
    included, so a stop writes the snapshot the next start loads."""
    reference = require_reference()
    servers = [reference.start_redis(save=None), reference.start_resplite(save=None)]
    try:
        ref, ours = (RawClient(s.host, s.port) for s in servers)
        for name in PERSISTENCE:
            assert ours.call("CONFIG", "GET", name) == ref.call("CONFIG", "GET", name), name
        assert to_python(parse(ref.call("CONFIG", "GET", "save"))) == \
            ["save", "3600 1 300 100 60 10000"]
        # ``dir``: the folder each was started in.
        for server, conn in zip(servers, (ref, ours), strict=True):
            assert to_python(parse(conn.call("CONFIG", "GET", "dir"))) == \
                ["dir", os.path.realpath(server.workdir)]
        ref.close()
        ours.close()
    finally:
        for server in servers:
            server.stop()
