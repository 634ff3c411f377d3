"""CONFIG GET / SET / RESETSTAT / REWRITE / HELP (``resplite/commands/config.py``) against a
real Redis 7.0.

Replies are compared byte for byte, except CONFIG GET with several names or a pattern, which
Redis answers in its hash table's order: those are compared as maps. CONFIG SET is checked
for its errors (atomic: a failed SET changes nothing) and for the effect of each directive on
the running server (open connections, writes, new connections).

Tests that change configuration restore it, because the servers are shared by the session.
"""

from __future__ import annotations

import re

import pytest
from support.helpshape import assert_same_shape, implemented
from support.pair import Pair
from support.raw import RawClient
from support.resptree import parse, to_python


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
        # Redis also lists the old names of list directives, which resplite lacks.
        ref, ours = (_as_map(r) for r in pair.both("CONFIG", "GET", "*ziplist*"))
        assert ours == {k: v for k, v in ref.items() if k.startswith(("hash-", "zset-"))}
        assert ours == {"hash-max-ziplist-entries": "512", "hash-max-ziplist-value": "32",
                        "zset-max-ziplist-entries": "128", "zset-max-ziplist-value": "64"}
    finally:
        pair.check("CONFIG", "SET", "hash-max-listpack-value", "64")


def test_config_get_patterns_are_a_subset(pair: Pair) -> None:
    for pattern in ("max*", "*", "MAX*ients", "slowlog-*", "?z", "[mt]*"):
        ref, ours = (to_python(parse(r)) for r in pair.both("CONFIG", "GET", pattern))
        if pair.resp == 2:
            ref = dict(zip(ref[::2], ref[1::2], strict=True))
            ours = dict(zip(ours[::2], ours[1::2], strict=True))
        # resplite's own directives, and newer Redis's (7.2's listpack sets, 8.6's
        # idempotency defaults)
        extras = {"uvloop", "enable-clock-command", "active-expire-enabled",
                  "set-max-listpack-entries", "set-max-listpack-value",
                  "stream-idmp-duration", "stream-idmp-maxsize"}
        assert set(ours) - extras <= set(ref), pattern
        for key in set(ours) - extras:
            # Process-specific, or (protected-mode) a Redis feature resplite does not have.
            if key in ("port", "bind", "dir", "unixsocket", "logfile", "loglevel",
                       "protected-mode"):
                continue
            assert ours[key] == ref[key], (pattern, key)


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
        pair.check("GET", "k")  # inside MULTI even reads are refused
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
