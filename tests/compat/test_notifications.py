"""Keyspace notifications against the reference Redis: the events each command publishes,
their names, classes and order, and ``notify-keyspace-events`` itself (CONFIG SET / GET).

A watcher connection subscribes to ``__key*__:*`` on both servers; after a scenario has run
(replies compared as usual), the watcher's pending messages are read up to a PING and the two
lists compared byte for byte, in order. Lazy expiry is made deterministic with a time in the
past (``PXAT 1``) and the active expiry cycle switched off.
"""

from __future__ import annotations

import pytest
from support.notifications import Cmd, run
from support.pair import Pair

SCENARIOS: dict[str, tuple[str, list[Cmd]]] = {
    "strings: set family, counters, append, setrange": ("KEA", [
        ("SET", "s", "1"), ("SET", "s", "2", "EX", "100"), ("SET", "s", "3", "KEEPTTL"),
        ("SET", "s", "4", "NX"), ("SET", "s", "5", "XX", "GET"), ("SETNX", "n", "1"),
        ("SETNX", "n", "2"), ("SETEX", "e", "10", "v"), ("PSETEX", "p", "1000", "v"),
        ("GETSET", "s", "6"), ("MSET", "m1", "a", "m2", "b"), ("MSETNX", "m3", "c", "m4", "d"),
        ("MSETNX", "m3", "x", "m5", "y"), ("INCR", "c"), ("DECR", "c"), ("INCRBY", "c", "5"),
        ("DECRBY", "c", "2"), ("INCRBYFLOAT", "f", "1.5"), ("APPEND", "s", "x"),
        ("APPEND", "new", "y"), ("SETRANGE", "s", "1", "zz"), ("SETRANGE", "s", "0", ""),
        ("SETRANGE", "r", "2", "ab"), ("GETDEL", "s"), ("GETDEL", "s"),
        ("INCR", "s2"), ("SET", "bad", "x"), ("INCR", "bad"),
    ]),
    "strings: GETEX expire, persist and delete": ("KEA", [
        ("SET", "g", "v"), ("GETEX", "g", "EX", "100"), ("GETEX", "g", "PERSIST"),
        ("GETEX", "g", "PERSIST"), ("GETEX", "g"), ("GETEX", "g", "PXAT", "1"),
        ("GETEX", "g", "EX", "5"),
    ]),
    "generic: del, unlink, expire family, persist, rename, copy, move": ("KEA", [
        ("SET", "a", "1"), ("SET", "b", "2"), ("DEL", "a", "zz", "b"), ("SET", "a", "1"),
        ("UNLINK", "a"), ("SET", "k", "v"), ("EXPIRE", "k", "100"), ("PEXPIRE", "k", "5000"),
        ("EXPIREAT", "k", "4000000000"), ("PEXPIREAT", "k", "4000000000000"),
        ("EXPIRE", "k", "100", "NX"), ("PERSIST", "k"), ("PERSIST", "k"),
        ("EXPIRE", "missing", "10"), ("RENAME", "k", "k2"), ("SET", "k3", "x"),
        ("RENAME", "k2", "k3"), ("RENAMENX", "k3", "k4"), ("RENAME", "k4", "k4"),
        ("COPY", "k4", "k5"), ("COPY", "k4", "k5"), ("COPY", "k4", "k5", "REPLACE"),
        ("COPY", "k4", "k6", "DB", "1"), ("MOVE", "k5", "1"), ("MOVE", "k4", "1"),
        ("EXPIRE", "k4", "-1"), ("TOUCH", "k4"), ("TYPE", "k4"), ("EXISTS", "k4"),
    ]),
    "hashes: hset family, counters, hdel down to nothing": ("KEA", [
        ("HSET", "h", "a", "1", "b", "2"), ("HSET", "h", "a", "1"), ("HMSET", "h", "c", "3"),
        ("HSETNX", "h", "a", "9"), ("HSETNX", "h", "d", "4"), ("HINCRBY", "h", "n", "3"),
        ("HINCRBYFLOAT", "h", "f", "1.5"), ("HDEL", "h", "zz"), ("HDEL", "h", "a", "b"),
        ("HDEL", "h", "c", "d", "n", "f"), ("HINCRBY", "h2", "x", "1"), ("HGET", "h", "a"),
    ]),
    "sorted sets: zadd, zincr, zrem, ranges, pops, stores": ("KEA", [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZADD", "z", "1", "a"),
        ("ZADD", "z", "NX", "5", "a"), ("ZADD", "z", "INCR", "1", "a"), ("ZINCRBY", "z", "0", "a"),
        ("ZINCRBY", "z", "1", "n"), ("ZADD", "z", "CH", "9", "a"), ("ZREM", "z", "zz"),
        ("ZREM", "z", "n"), ("ZREMRANGEBYSCORE", "z", "100", "200"),
        ("ZREMRANGEBYSCORE", "z", "2", "2"), ("ZREMRANGEBYRANK", "z", "0", "0"),
        ("ZADD", "l", "0", "a", "0", "b"), ("ZREMRANGEBYLEX", "l", "-", "+"),
        ("ZADD", "z", "1", "x", "2", "y"), ("ZPOPMIN", "z"), ("ZPOPMAX", "z", "0"),
        ("ZPOPMAX", "z", "5"), ("ZADD", "z", "1", "x"), ("ZMPOP", "1", "z", "MAX"),
        ("ZADD", "a", "1", "m"), ("ZUNIONSTORE", "u", "1", "a"), ("ZINTERSTORE", "u", "1", "a"),
        ("ZDIFFSTORE", "u", "2", "a", "a"), ("ZDIFFSTORE", "u", "2", "a", "a"),
        ("ZRANGESTORE", "r", "a", "0", "-1"), ("ZRANGESTORE", "r", "a", "5", "6"),
        ("BZPOPMIN", "a", "0"), ("ZRANGE", "nokey", "0", "-1"), ("ZSCORE", "nokey", "m"),
    ]),
    "sorted sets: new keys and key misses": ("KEAmn", [
        ("ZADD", "z", "1", "a"), ("ZINCRBY", "y", "1", "a"), ("ZSCORE", "nokey", "a"),
        ("ZRANGE", "nokey", "0", "-1"), ("ZUNION", "2", "z", "nokey"), ("ZPOPMIN", "nokey"),
        ("ZUNIONSTORE", "d", "2", "z", "nokey"), ("ZRANGESTORE", "e", "z", "0", "-1"),
        ("ZRANDMEMBER", "nokey"), ("ZSCAN", "nokey", "0"), ("ZCARD", "z"),
    ]),
    "geo: GEOADD reports zadd, the searches that store report their own events": ("KEAmn", [
        ("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
         "Catania"), ("GEOADD", "g", "NX", "13.361389", "38.115556", "Palermo"),
        ("GEOADD", "g", "XX", "CH", "13", "38", "Palermo"), ("GEOADD", "g", "500", "0", "x"),
        ("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "500", "km"),
        ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("GEOSEARCHSTORE", "d", "nokey", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("GEORADIUS", "g", "15", "37", "200", "km", "STORE", "r"),
        ("GEORADIUSBYMEMBER", "g", "Catania", "1", "km", "STOREDIST", "r"),
        ("GEORADIUS", "g", "15", "37", "1", "km", "STORE", "r"),
        ("GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "r"),
        ("GEOHASH", "g", "Palermo"), ("GEOPOS", "nokey", "a"), ("GEODIST", "nokey", "a", "b"),
        ("GEOHASH", "nokey", "a"), ("GEOSEARCH", "nokey", "FROMLONLAT", "0", "0", "BYRADIUS",
                                    "1", "km"),
    ]),
    "streams: xadd, trim, xdel, groups and consumers, xsetid": ("KEA", [
        ("XADD", "st", "1-1", "f", "v"), ("XADD", "st", "2-1", "f", "v"),
        ("XADD", "st", "MAXLEN", "1", "3-1", "f", "v"),
        ("XADD", "st", "MAXLEN", "5", "4-1", "f", "v"),
        ("XADD", "st", "NOMKSTREAM", "5-1", "f", "v"),
        ("XADD", "nost", "NOMKSTREAM", "*", "f", "v"),
        ("XTRIM", "st", "MAXLEN", "1"), ("XTRIM", "st", "MAXLEN", "1"), ("XDEL", "st", "1-1"),
        ("XADD", "st", "9-1", "a", "b"), ("XDEL", "st", "9-1"),
        ("XGROUP", "CREATE", "st", "g", "0"), ("XGROUP", "CREATE", "st", "g", "0"),
        ("XGROUP", "CREATE", "mk", "g", "$", "MKSTREAM"),
        ("XGROUP", "CREATECONSUMER", "st", "g", "c1"),
        ("XGROUP", "CREATECONSUMER", "st", "g", "c1"),
        ("XGROUP", "SETID", "st", "g", "0"), ("XADD", "st", "10-1", "a", "b"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "st", ">"),
        ("XCLAIM", "st", "g", "c3", "0", "10-1"),
        ("XAUTOCLAIM", "st", "g", "c4", "0", "0-0"),
        ("XGROUP", "DELCONSUMER", "st", "g", "c1"), ("XGROUP", "DELCONSUMER", "st", "g", "c9"),
        ("XACK", "st", "g", "10-1"), ("XSETID", "st", "20-1"),
        ("XGROUP", "DESTROY", "st", "g"), ("XGROUP", "DESTROY", "st", "g"), ("DEL", "st"),
    ]),
    "bitmaps and HyperLogLogs": ("KEA", [
        ("SETBIT", "b", "7", "1"), ("SETBIT", "b", "7", "1"), ("SETBIT", "b", "7", "0"),
        ("SETBIT", "b", "100", "0"), ("BITFIELD", "bf", "SET", "u8", "0", "255"),
        ("BITFIELD", "bf", "SET", "u8", "0", "255"), ("BITFIELD", "bf", "GET", "u8", "0"),
        ("SET", "x", "ab"), ("BITOP", "AND", "dest", "x", "b"), ("BITOP", "AND", "dest", "nope"),
        ("BITOP", "AND", "dest", "nope"), ("PFADD", "h1", "a", "b"), ("PFADD", "h1", "a"),
        ("PFADD", "h2"), ("PFCOUNT", "h1"), ("PFMERGE", "h3", "h1", "h2"),
    ]),
    "the class filter: only the chosen classes publish": ("Kh$", [
        ("SET", "a", "1"), ("EXPIRE", "a", "100"), ("HSET", "h", "f", "v"), ("DEL", "a", "h"),
        ("XADD", "s", "1-1", "f", "v"),
    ]),
    "keyevent only": ("Eg", [
        ("SET", "a", "1"), ("EXPIRE", "a", "100"), ("DEL", "a"),
    ]),
    "no K nor E: nothing at all": ("gx$", [
        ("SET", "a", "1"), ("DEL", "a"),
    ]),
    "new keys: n reports each key created, before the command's event": ("KEAn", [
        ("SET", "a", "1"), ("SET", "a", "2"), ("HSET", "h", "f", "v"), ("HSET", "h", "g", "v"),
        ("XADD", "s", "1-1", "f", "v"), ("XGROUP", "CREATE", "mk", "g", "$", "MKSTREAM"),
        ("INCR", "c"), ("APPEND", "ap", "x"), ("MSET", "m1", "1", "a", "3"),
        ("RENAME", "a", "b"), ("COPY", "b", "b2"), ("MOVE", "b2", "2"), ("SETNX", "nx", "1"),
    ]),
    "n alone (with K and E) reports new keys only": ("KEn", [
        ("SET", "a", "1"), ("SET", "a", "2"), ("DEL", "a"), ("SET", "a", "1"),
    ]),
    "expired: lazy expiry reports expired before the reading command's reply": ("KEA", [
        ("SET", "t", "v", "PXAT", "1"), ("GET", "t"), ("SET", "u", "v"),
        ("PEXPIREAT", "u", "1"), ("HSET", "h", "f", "v"), ("PEXPIREAT", "h", "2"),
        ("SET", "w", "v"), ("PEXPIREAT", "w", "3"),
    ]),
    "expired keys are reported when written over": ("KEA", [
        ("SET", "t", "v", "PXAT", "1"), ("SET", "t", "again"), ("SET", "t2", "v", "PXAT", "1"),
        ("HSET", "t2", "f", "v"),
    ]),
    "keymiss: reads that find nothing (m is not part of A)": ("KEm", [
        ("GET", "nope"), ("SET", "k", "v"), ("GET", "k"), ("MGET", "a", "k", "b"),
        ("HGET", "nh", "f"), ("STRLEN", "x"), ("XRANGE", "ns", "-", "+"), ("TYPE", "x"),
        ("EXISTS", "x"), ("SETNX", "fresh", "v"), ("INCR", "ctr"), ("DEL", "x"),
    ]),
    "A with m": ("KEAm", [
        ("GET", "nope"), ("SET", "k", "v"), ("GETDEL", "k"),
    ]),
    "Redis 8.6's overwritten and type_changed (o, c): values replaced as a whole": ("KEoc$sgzl", [
        ("SET", "s", "1"), ("SET", "s", "2"), ("HSET", "h", "f", "v"), ("SET", "h", "x"),
        ("SET", "n", "1", "NX"), ("SET", "n", "2", "XX", "GET"), ("SETEX", "s", "10", "v"),
        ("PSETEX", "s", "1000", "v"), ("GETSET", "s", "w"), ("MSET", "s", "a", "m", "b"),
        ("SADD", "s1", "a", "b"), ("SADD", "s2", "b", "c"), ("SINTERSTORE", "s", "s1", "s2"),
        ("SUNIONSTORE", "s", "s1", "s2"), ("SDIFFSTORE", "x", "s1", "s2"),
        ("ZADD", "z1", "1", "a"), ("ZUNIONSTORE", "s", "1", "z1"), ("ZRANGESTORE", "s1", "z1",
        "0", "-1"), ("RPUSH", "l", "c", "b", "a"), ("SORT", "l", "ALPHA", "STORE", "z1"),
        ("SET", "b1", "x"), ("BITOP", "NOT", "s2", "b1"), ("SET", "r", "1"),
        ("RENAME", "r", "l"), ("SET", "c", "v"), ("COPY", "c", "z1", "REPLACE"),
        ("COPY", "c", "nowhere"), ("INCR", "m"), ("APPEND", "m", "x"),
        ("SET", "s", "plain"),
    ]),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_events(pair: Pair, events: Pair, name: str) -> None:
    flags, script = SCENARIOS[name]
    run(pair, events, flags, script)


@pytest.mark.redis_version("7.4")
def test_hash_field_expiry_events() -> None:
    """Redis 7.4's field-expiry events (not in the 7.0 reference): hexpire, hpersist, hdel
    for a time in the past, hexpired when fields run out (lazily or as the clock advances)
    and del when they were the hash's last."""
    import redis

    import resplite

    with resplite.serve() as srv:
        r = redis.Redis.from_url(srv.url)
        r.config_set("notify-keyspace-events", "KA")
        p = r.pubsub(ignore_subscribe_messages=True)
        p.psubscribe("__keyspace@0__:*")
        r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
        r.execute_command("HEXPIRE", "h", "100", "FIELDS", "1", "a")
        r.execute_command("HPERSIST", "h", "FIELDS", "1", "a")
        r.execute_command("HPEXPIREAT", "h", "1", "FIELDS", "1", "a")
        r.execute_command("HPEXPIRE", "h", "1000", "FIELDS", "1", "b")
        srv.clock.advance(1_001)
        r.execute_command("HPEXPIRE", "h", "1000", "FIELDS", "1", "c")
        srv.clock.advance(1_001)
        events: list[tuple[bytes, bytes]] = []
        while len(events) < 9:
            message = p.get_message(timeout=5)
            if message is not None:
                events.append((message["channel"], message["data"]))
        assert [data for _, data in events] == [
            b"hset", b"hexpire", b"hpersist", b"hdel", b"hexpire", b"hexpired", b"hexpire",
            b"hexpired", b"del",
        ]
        assert r.exists("h") == 0
        p.close()
        r.close()


@pytest.mark.redis_version("8.6")
def test_hsetex_with_a_past_time_sets_then_deletes() -> None:
    """HSETEX with a time already past sets the fields and deletes them: hset, then hdel,
    then del when the hash is left empty (Redis 8.6's hsetexCommand); a future time gives
    hset, then hexpire."""
    import redis

    import resplite

    with resplite.serve() as srv:
        r = redis.Redis.from_url(srv.url)
        r.config_set("notify-keyspace-events", "KA")
        p = r.pubsub(ignore_subscribe_messages=True)
        p.psubscribe("__keyspace@0__:*")
        r.execute_command("HSETEX", "h", "PX", "0", "FIELDS", "1", "a", "1")
        r.execute_command("HSET", "k", "keep", "1")
        r.execute_command("HSETEX", "k", "PX", "0", "FIELDS", "1", "a", "1")
        r.execute_command("HSETEX", "k", "EX", "100", "FIELDS", "1", "a", "1")
        events: list[tuple[bytes, bytes]] = []
        for _ in range(100):  # a bounded wait: a missing event fails the test, never hangs it
            message = p.get_message(timeout=1)
            if message is not None:
                events.append((message["channel"], message["data"]))
            if len(events) == 8:
                break
        h, k = b"__keyspace@0__:h", b"__keyspace@0__:k"
        assert events == [
            (h, b"hset"), (h, b"hdel"), (h, b"del"),
            (k, b"hset"),
            (k, b"hset"), (k, b"hdel"),
            (k, b"hset"), (k, b"hexpire"),
        ]
        p.close()
        r.close()


@pytest.mark.redis_version("8.6")
def test_hsetex_on_a_hash_whose_last_field_expired() -> None:
    """HSETEX drops the fields past their time (hexpired) but keeps the hash it empties:
    FNX then fills it again (hset, hexpire, no del between), FXX leaves it to go (del)."""
    import redis

    import resplite

    with resplite.serve(enable_debug_command=True) as srv:
        r = redis.Redis.from_url(srv.url)
        r.config_set("notify-keyspace-events", "KA")
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")  # the field expires lazily
        p = r.pubsub(ignore_subscribe_messages=True)
        p.psubscribe("__keyspace@0__:*")
        srv.clock.freeze()
        for condition, expected_reply in ((b"FNX", 1), (b"FXX", 0)):
            r.execute_command("HSET", condition, "f", "v")
            r.execute_command("HPEXPIRE", condition, "10", "FIELDS", "1", "f")
            srv.clock.advance(11)
            assert r.execute_command("HSETEX", condition, condition, "PX", "1000",
                                     "FIELDS", "1", "f", "v") == expected_reply
        events: list[tuple[bytes, bytes]] = []
        for _ in range(100):  # a bounded wait: a missing event fails the test, never hangs it
            message = p.get_message(timeout=1)
            if message is not None:
                events.append((message["channel"], message["data"]))
            if len(events) == 8:
                break
        fnx, fxx = b"__keyspace@0__:FNX", b"__keyspace@0__:FXX"
        assert events == [
            (fnx, b"hset"), (fnx, b"hexpire"), (fnx, b"hexpired"), (fnx, b"hset"),
            (fnx, b"hexpire"),
            (fxx, b"hset"), (fxx, b"hexpire"), (fxx, b"hexpired"),
        ]
        assert p.get_message(timeout=1) == {
            "type": "pmessage", "pattern": b"__keyspace@0__:*", "channel": fxx, "data": b"del"}
        assert r.exists("FNX", "FXX") == 1
        p.close()
        r.close()


def test_events_in_another_database(pair: Pair, events: Pair) -> None:
    pair.check("SELECT", "3")
    run(pair, events, "KEA", [("SET", "k", "v"), ("HSET", "h", "a", "b"), ("DEL", "k", "h")])


def test_event_names_with_odd_bytes(pair: Pair, events: Pair) -> None:
    run(pair, events, "KEA", [("SET", b"k\x00\xff \r\n", "v"), ("DEL", b"k\x00\xff \r\n")])


def test_own_keyspace_events_in_resp3(pair: Pair) -> None:
    """A RESP3 client subscribed to its own keys' events gets them after the reply."""
    if pair.resp != 3:
        pytest.skip("a RESP2 subscriber cannot run commands")
    ours = pair.ours
    ours.call("CONFIG", "SET", "notify-keyspace-events", "K$")
    try:
        assert ours.call("SUBSCRIBE", "__keyspace@0__:mine") == (
            b">3\r\n$9\r\nsubscribe\r\n$19\r\n__keyspace@0__:mine\r\n:1\r\n")
        assert ours.call("SET", "mine", "v") == b"+OK\r\n"
        assert ours.read_reply() == (
            b">3\r\n$7\r\nmessage\r\n$19\r\n__keyspace@0__:mine\r\n$3\r\nset\r\n")
    finally:
        ours.call("CONFIG", "SET", "notify-keyspace-events", "")


# -- the directive ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [
    "", "K", "E", "KE", "A", "KEA", "AKE", "g$lshzxetdn", "g$lshzxetd", "KEAm", "Elm", "mK",
    "Kn", "AKEnm", "xxxx", "Ag", "Koc", "AKEoc", "Eo", "gc", "$oclsn",
])
def test_config_set_and_canonical_get(pair: Pair, value: str) -> None:
    try:
        pair.check("CONFIG", "SET", "notify-keyspace-events", value)
        pair.check("CONFIG", "GET", "notify-keyspace-events")
    finally:
        for conn in (pair.ref, pair.ours):
            conn.call("CONFIG", "SET", "notify-keyspace-events", "")


@pytest.mark.parametrize("value", ["KEX", "q", "A ", "kea", "K E"])
def test_config_set_refuses_unknown_classes(pair: Pair, value: str) -> None:
    pair.check("CONFIG", "SET", "notify-keyspace-events", value)
    pair.check("CONFIG", "GET", "notify-keyspace-events")
