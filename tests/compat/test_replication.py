"""The replication commands (``resplite/commands/replication.py``) on a primary without
replicas, against Redis 8.6.3: REPLICAOF / SLAVEOF NO ONE, the argument errors of REPLICAOF,
REPLCONF and PSYNC, ROLE and INFO replication's fields.

Replication itself (replicas attaching, the stream, resynchronisation) is tested with
real servers on both sides in ``tests/integration/test_replication.py``.
"""

from __future__ import annotations

import re

from support.pair import Pair


def _check_role(pair: Pair) -> None:
    """ROLE alike but for the offset, which counts the writes each server has logged since
    it started (the servers are shared with the tests before)."""
    ref, ours = pair.both("ROLE")
    strip = re.compile(rb":\d+\r\n")
    assert strip.sub(b":N\r\n", ours) == strip.sub(b":N\r\n", ref), (ref, ours)


def test_replicaof_no_one_on_a_primary(pair: Pair) -> None:
    pair.check("REPLICAOF", "NO", "ONE")
    pair.check("SLAVEOF", "no", "one")
    pair.check("REPLICAOF", "no", "ONE")
    _check_role(pair)


def test_replicaof_errors(pair: Pair) -> None:
    pair.check("REPLICAOF")
    pair.check("REPLICAOF", "NO")
    pair.check("REPLICAOF", "a", "b", "c")
    pair.check("REPLICAOF", "localhost", "port")
    pair.check("REPLICAOF", "localhost", "-1")
    pair.check("REPLICAOF", "localhost", "65536")
    pair.check("SLAVEOF", "localhost", "99999999999999999999")
    _check_role(pair)


def test_replconf_errors_and_options(pair: Pair) -> None:
    pair.check("REPLCONF")
    pair.check("REPLCONF", "listening-port")
    pair.check("REPLCONF", "listening-port", "abc")
    pair.check("REPLCONF", "listening-port", "6380")
    pair.check("REPLCONF", "capa", "eof", "capa", "psync2")
    pair.check("REPLCONF", "capa", "nosuch")
    pair.check("REPLCONF", "ip-address", "10.0.0.1")
    pair.check("REPLCONF", "ip-address", "x" * 256)
    pair.check("REPLCONF", "nosuch", "1")
    pair.check("REPLCONF", "rdb-only", "2")
    pair.check("REPLCONF", "rdb-only", "x")
    pair.check("REPLCONF", "rdb-only", "0")
    # ACK from a client that is no replica, and GETACK on a primary: no reply at all, the
    # next command's reply comes next.
    pair.ref.send("REPLCONF", "ACK", "100")
    pair.ours.send("REPLCONF", "ACK", "100")
    pair.check("PING")
    pair.ref.send("REPLCONF", "GETACK", "*")
    pair.ours.send("REPLCONF", "GETACK", "*")
    pair.check("PING")


def test_psync_argument_errors(pair: Pair) -> None:
    pair.check("PSYNC")
    pair.check("PSYNC", "?")
    pair.check("PSYNC", "?", "notanumber")


def test_wait_without_replicas(pair: Pair) -> None:
    pair.check("SET", "k", "v")
    pair.check("WAIT", "0", "0")
    pair.check("WAIT", "1", "1")
    pair.check("WAIT", "-1", "0")
    pair.check("WAIT", "x", "0")
    pair.check("WAITAOF", "0", "1", "1")


def test_info_replication_fields_and_order(pair: Pair) -> None:
    ref, ours = pair.info("replication")
    ref_fields = ref["Replication"]
    our_fields = ours["Replication"]
    assert [f for f, _ in our_fields] == [f for f, _ in ref_fields]
    hex_id = re.compile(r"^[0-9a-f]{40}$")
    for (field, expected), (_, got) in zip(ref_fields, our_fields, strict=True):
        if field == "master_replid":
            assert hex_id.match(expected) and hex_id.match(got)
            assert expected != got  # each server draws its own
        elif field == "master_repl_offset":
            # The servers are shared by the session: an earlier test's AOF writes count.
            assert got.isdigit() and expected.isdigit()
        else:
            assert got == expected, field


def test_a_delete_of_nothing_is_no_change(pair: Pair) -> None:
    """DEL / UNLINK count one change per key deleted (what is propagated to replicas and
    the AOF follows): none for absent keys."""
    def changes() -> tuple[int, int]:
        ref, ours = pair.info("persistence")
        return (int(dict(ref["Persistence"])["rdb_changes_since_last_save"]),
                int(dict(ours["Persistence"])["rdb_changes_since_last_save"]))

    # (The servers are shared by the session: only the changes made here are compared.)
    ref_before, ours_before = changes()
    pair.check("SET", "a", "1")
    pair.check("SET", "b", "1")
    pair.check("DEL", "missing", "other")
    pair.check("UNLINK", "missing")
    pair.check("DEL", "a", "b", "missing")
    ref_after, ours_after = changes()
    assert ours_after - ours_before == ref_after - ref_before == 4


def test_hgetdel_counts_the_fields_it_deleted(pair: Pair) -> None:
    """HGETDEL changes the data set by the fields it deleted (and is then propagated as
    HDEL); one that finds none is no change."""
    def changes() -> tuple[int, int]:
        ref, ours = pair.info("persistence")
        return (int(dict(ref["Persistence"])["rdb_changes_since_last_save"]),
                int(dict(ours["Persistence"])["rdb_changes_since_last_save"]))

    pair.check("HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3")
    ref_before, ours_before = changes()
    pair.check("HGETDEL", "h", "FIELDS", "2", "f7", "f8")
    pair.check("HGETDEL", "h", "FIELDS", "3", "f1", "f2", "f9")
    pair.check("HGETDEL", "h", "FIELDS", "1", "f3")
    pair.check("EXISTS", "h")
    ref_after, ours_after = changes()
    assert ours_after - ours_before == ref_after - ref_before
