"""Streams in the keyspace against a real redis-server: TYPE, OBJECT ENCODING, DEL, RENAME,
COPY (a deep copy: groups, consumers and pending entries included), expiry and WATCH.
"""

from __future__ import annotations


def seed(pair, key: str = "s") -> None:  # type: ignore[no-untyped-def]
    for i in range(1, 4):
        pair.check("XADD", key, f"{i}-1", "f", f"v{i}")
    pair.check("XGROUP", "CREATE", key, "g", "0")
    pair.check("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", key, ">")


def test_type_and_encoding(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("TYPE", "s")
    pair.check("OBJECT", "ENCODING", "s")
    pair.check("SET", "str", "x")
    pair.check("SCAN", "0", "TYPE", "stream")
    pair.check("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM")
    pair.check("TYPE", "empty")
    pair.check("OBJECT", "ENCODING", "empty")
    pair.check("EXISTS", "s", "empty")


def test_del_and_unlink(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    seed(pair, "t")
    pair.check("DEL", "s")
    pair.check("UNLINK", "t")
    pair.check("XLEN", "s")
    pair.check("XINFO", "GROUPS", "t")
    pair.check("XADD", "s", "1-1", "a", "b")
    pair.check("XINFO", "STREAM", "s")


def test_rename_keeps_groups(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("RENAME", "s", "r")
    pair.check("XINFO", "GROUPS", "r")
    pair.check("XRANGE", "r", "-", "+")
    pair.check("RENAMENX", "r", "s")
    pair.check("TYPE", "s")


def test_copy_is_deep(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("COPY", "s", "c")
    pair.check("XADD", "s", "9-1", "only", "original")
    pair.check("XACK", "s", "g", "1-1")
    pair.check("XGROUP", "CREATE", "s", "other", "$")
    pair.check("XDEL", "s", "2-1")
    pair.check("XRANGE", "c", "-", "+")
    pair.check("XPENDING", "c", "g")
    pair.check("XINFO", "GROUPS", "c")
    pair.check("XINFO", "STREAM", "c")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "c", ">")
    pair.check("XINFO", "GROUPS", "s")
    pair.check("COPY", "s", "c")
    pair.check("COPY", "s", "c", "REPLACE")
    pair.check("XINFO", "STREAM", "c")


def test_expiry_applies_to_streams(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    pair.check("EXPIRE", "s", "100")
    pair.check("TTL", "s")
    pair.check("XADD", "s", "9-1", "a", "b")  # writing a stream keeps its TTL
    pair.check("TTL", "s")
    pair.check("PEXPIRE", "s", "1")
    pair.check("DEBUG", "SLEEP", "0.01")
    pair.check("XLEN", "s")
    pair.check("EXISTS", "s")
    pair.check("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")


def test_writes_invalidate_watch(pair) -> None:  # type: ignore[no-untyped-def]
    seed(pair)
    other = pair.connect_extra()
    try:
        for write in [
            ("XADD", "s", "10-1", "a", "b"),
            ("XDEL", "s", "10-1"),
            ("XDEL", "s", "77-7"),
            ("XTRIM", "s", "MAXLEN", "2"),
            ("XTRIM", "s", "MAXLEN", "2"),
            ("XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"),
            ("XSETID", "s", "99-0"),
            ("XGROUP", "CREATE", "s", "h", "0"),
            ("XGROUP", "SETID", "s", "h", "0"),
            ("XGROUP", "CREATECONSUMER", "s", "h", "x"),
            ("XGROUP", "DELCONSUMER", "s", "h", "x"),
            ("XGROUP", "DESTROY", "s", "h"),
            ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
            ("XACK", "s", "g", "1-1"),
            ("XCLAIM", "s", "g", "d", "0", "2-1"),
            ("XAUTOCLAIM", "s", "g", "e", "0", "0"),
            ("XLEN", "s"),
        ]:
            pair.check("WATCH", "s")
            other.check(*write)
            pair.check("MULTI")
            pair.check("PING")
            pair.check("EXEC")
    finally:
        other.close()
