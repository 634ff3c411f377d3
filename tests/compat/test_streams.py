"""Stream entry commands of Redis 8.6: idempotent producers (XADD IDMP / IDMPAUTO, XCFGSET,
the idempotency fields of XINFO STREAM), and the change counter of the entry commands.

The idempotency tests assert the facts of Redis's documentation and test suite (no 8.6
binary is at hand); the change-counter test compares every command with the 7.0 reference.
"""

from __future__ import annotations

from typing import Any

import pytest
from compat_helpers import integer
from stream_fixtures import (
    T0,
    Conn,
    xs_fixture,  # noqa: F401  (the fixture)
)
from support.raw import RawClient

FIELDS = ("idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added",
          "iids-duplicates")


def idmp(xs: Conn, key: str = "s") -> dict[str, int]:
    info = xs.xinfo(key)
    return {name: info[name] for name in FIELDS}


# -- XADD IDMP / IDMPAUTO ---------------------------------------------------------------------


@pytest.mark.redis_version("8.6")
def test_xadd_idmp_a_repeated_iid_answers_the_first_entry(xs: Conn) -> None:
    first = xs.v("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "100")
    assert first == f"{T0}-0"
    assert xs.v("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "200") == first
    assert xs.v("XLEN", "s") == 1
    assert xs.v("XRANGE", "s", "-", "+") == [[first, ["amount", "100"]]]
    # Another iid, or the same iid from another producer, is a new entry.
    assert xs.v("XADD", "s", "IDMP", "p1", "payment-xyz", "*", "amount", "100") == f"{T0}-1"
    assert xs.v("XADD", "s", "IDMP", "p2", "payment-abc", "*", "amount", "100") == f"{T0}-2"
    # Binary and empty-looking ids are just bytes; options may come in any order.
    assert xs.v("XADD", "s", "MAXLEN", "~", "100", "IDMP", "p1", b"\x00\xff", "*", "f", "v") \
        == f"{T0}-3"
    assert xs.v("XADD", "s", "IDMP", "p1", b"\x00\xff", "KEEPREF", "*", "f", "w") == f"{T0}-3"
    assert idmp(xs) == {"idmp-duration": 100, "idmp-maxsize": 100, "pids-tracked": 2,
                        "iids-tracked": 4, "iids-added": 4, "iids-duplicates": 2}


@pytest.mark.redis_version("8.6")
def test_xadd_idmpauto_derives_the_iid_from_the_content(xs: Conn) -> None:
    first = xs.v("XADD", "s", "IDMPAUTO", "p", "*", "a", "1", "b", "2")
    # The same pairs in another order are the same message; another value is not.
    assert xs.v("XADD", "s", "IDMPAUTO", "p", "*", "b", "2", "a", "1") == first
    assert xs.v("XADD", "s", "IDMPAUTO", "p", "*", "a", "1", "b", "3") != first
    # Field names count, and each producer has its own iids.
    assert xs.v("XADD", "s", "IDMPAUTO", "p", "*", "c", "1", "b", "2") != first
    assert xs.v("XADD", "s", "IDMPAUTO", "q", "*", "a", "1", "b", "2") != first
    assert xs.v("XLEN", "s") == 4
    assert idmp(xs)["iids-duplicates"] == 1


@pytest.mark.redis_version("8.6")
def test_xadd_idmp_with_nomkstream_trimming_and_groups(xs: Conn) -> None:
    assert xs.call("XADD", "s", "NOMKSTREAM", "IDMP", "p", "i", "*", "f", "v") == (
        b"_\r\n" if xs.resp == 3 else b"$-1\r\n")
    assert xs.v("EXISTS", "s") == 0
    xs.call("XADD", "s", "*", "seed", "0")
    xs.call("XGROUP", "CREATE", "s", "g", "0")
    one = xs.v("XADD", "s", "IDMP", "p", "i1", "MAXLEN", "=", "5", "*", "f", "1")
    assert xs.v("XADD", "s", "IDMP", "p", "i1", "MAXLEN", "=", "1", "*", "f", "2") == one
    assert xs.v("XLEN", "s") == 2  # a duplicate adds nothing and trims nothing
    read = xs.v("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    entries = read["s"] if xs.resp == 3 else read[0][1]
    assert [e[0] for e in entries] == [f"{T0}-0", one]


@pytest.mark.redis_version("8.6")
@pytest.mark.parametrize(("command", "error"), [
    (("IDMP", "p1", "*", "f", "v"), b"-ERR Invalid stream ID specified as stream command argument"),
    (("IDMP", "p1", "iid1", "1-1", "f", "v"),
     b"-ERR IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (("IDMPAUTO", "p1", "1-1", "f", "v"),
     b"-ERR IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (("IDMP", "p1", "i1", "IDMP", "p2", "i2", "*", "f", "v"),
     b"-ERR IDMP/IDMPAUTO specified multiple times"),
    (("IDMPAUTO", "p1", "IDMP", "p2", "i2", "*", "f", "v"),
     b"-ERR IDMP/IDMPAUTO specified multiple times"),
    (("IDMP", "p1", "i1", "IDMPAUTO", "p2", "*", "f", "v"),
     b"-ERR IDMP/IDMPAUTO specified multiple times"),
    (("IDMP", "", "i1", "*", "f", "v"), b"-ERR IDMP requires a non-empty producer ID"),
    (("IDMP", "p1", "", "*", "f", "v"), b"-ERR IDMP requires a non-empty idempotent ID"),
    (("IDMPAUTO", "", "*", "f", "v"), b"-ERR IDMPAUTO requires a non-empty producer ID"),
])
def test_xadd_idmp_errors(xs: Conn, command: tuple[str, ...], error: bytes) -> None:
    assert xs.call("XADD", "s", *command) == error + b"\r\n"
    assert xs.v("EXISTS", "s") == 0


@pytest.mark.redis_version("8.6")
def test_iids_expire_after_the_duration_by_entry_time(xs: Conn, resplite_clock: Any) -> None:
    first = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert xs.v("XCFGSET", "s", "IDMP-DURATION", "2") == "OK"
    assert idmp(xs)["iids-tracked"] == 0  # a new setting forgets every iid
    first = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    resplite_clock.advance(1999)
    assert xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v") == first
    assert idmp(xs)["iids-tracked"] == 1
    resplite_clock.advance(1)  # the entry is now two seconds old: its iid is gone
    assert idmp(xs) == {"idmp-duration": 2, "idmp-maxsize": 100, "pids-tracked": 0,
                        "iids-tracked": 0, "iids-added": 2, "iids-duplicates": 1}
    again = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert again != first
    assert xs.v("XLEN", "s") == 3


@pytest.mark.redis_version("8.6")
def test_each_producer_keeps_at_most_maxsize_iids(xs: Conn) -> None:
    xs.call("XADD", "s", "IDMP", "p1", "init", "*", "f", "v")
    xs.call("XCFGSET", "s", "IDMP-MAXSIZE", "3", "IDMP-DURATION", "60")
    ids = {i: xs.v("XADD", "s", "IDMP", "p1", f"req-{i}", "*", "f", "v") for i in (1, 2, 3)}
    other = xs.v("XADD", "s", "IDMP", "p2", "req-1", "*", "f", "v")
    assert idmp(xs)["iids-tracked"] == 4
    xs.call("XADD", "s", "IDMP", "p1", "req-4", "*", "f", "v")  # evicts p1's req-1
    assert xs.v("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v") != ids[1]  # evicts req-2
    assert xs.v("XADD", "s", "IDMP", "p1", "req-3", "*", "f", "v") == ids[3]
    assert xs.v("XADD", "s", "IDMP", "p2", "req-1", "*", "f", "v") == other
    assert idmp(xs) == {"idmp-duration": 60, "idmp-maxsize": 3, "pids-tracked": 2,
                        "iids-tracked": 4, "iids-added": 7, "iids-duplicates": 2}


# -- XCFGSET ----------------------------------------------------------------------------------


@pytest.mark.redis_version("8.6")
def test_xcfgset_sets_and_reports_the_settings(xs: Conn) -> None:
    xs.call("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert xs.call("XCFGSET", "s", "IDMP-DURATION", "86400") == b"+OK\r\n"
    assert xs.call("XCFGSET", "s", "idmp-maxsize", "10000") == b"+OK\r\n"
    assert idmp(xs)["idmp-duration"] == 86400
    assert idmp(xs)["idmp-maxsize"] == 10000
    xs.call("XCFGSET", "s", "IDMP-DURATION", "1", "IDMP-MAXSIZE", "1")
    full = xs.xinfo("s", "FULL")
    assert (full["idmp-duration"], full["idmp-maxsize"]) == (1, 1)
    # Fields come right after recorded-first-entry-id, in both forms.
    for info in (xs.xinfo("s"), full):
        names = list(info)
        at = names.index("recorded-first-entry-id")
        assert names[at + 1 : at + 7] == list(FIELDS)


@pytest.mark.redis_version("8.6")
def test_xcfgset_with_the_same_settings_keeps_the_iids(xs: Conn) -> None:
    first = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    xs.call("XCFGSET", "s", "IDMP-DURATION", "100", "IDMP-MAXSIZE", "100")
    assert xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v") == first
    xs.call("XCFGSET", "s", "IDMP-DURATION", "50")
    assert xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v") != first
    assert idmp(xs) == {"idmp-duration": 50, "idmp-maxsize": 100, "pids-tracked": 1,
                        "iids-tracked": 1, "iids-added": 2, "iids-duplicates": 1}


@pytest.mark.redis_version("8.6")
@pytest.mark.parametrize(("args", "error"), [
    ((), b"-ERR At least one parameter must be specified"),
    (("IDMP-DURATION",), b"-ERR syntax error"),
    (("IDMP-MAXSIZE",), b"-ERR syntax error"),
    (("INVALID",), b"-ERR syntax error"),
    (("IDMP-DURATION", "A"), b"-ERR value is not an integer or out of range"),
    (("IDMP-DURATION", "3.14"), b"-ERR value is not an integer or out of range"),
    (("IDMP-DURATION", "000000000"), b"-ERR value is not an integer or out of range"),
    (("IDMP-DURATION", "INVALID", "IDMP-MAXSIZE"), b"-ERR value is not an integer or out of range"),
    (("IDMP-DURATION", "0"), b"-ERR IDMP-DURATION must be between 1 and 86400 seconds"),
    (("IDMP-DURATION", "86401"), b"-ERR IDMP-DURATION must be between 1 and 86400 seconds"),
    (("IDMP-MAXSIZE", "-50"), b"-ERR IDMP-MAXSIZE must be between 1 and 10000 entries"),
    (("IDMP-MAXSIZE", "10001"), b"-ERR IDMP-MAXSIZE must be between 1 and 10000 entries"),
])
def test_xcfgset_errors_change_nothing(xs: Conn, args: tuple[str, ...], error: bytes) -> None:
    xs.call("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert xs.call("XCFGSET", "s", *args) == error + b"\r\n"
    assert idmp(xs)["iids-tracked"] == 1


@pytest.mark.redis_version("8.6")
def test_xcfgset_needs_an_existing_stream(xs: Conn) -> None:
    assert xs.call("XCFGSET", "nokey", "IDMP-DURATION", "5") == b"-ERR no such key\r\n"
    xs.call("SET", "str", "x")
    assert xs.call("XCFGSET", "str", "IDMP-DURATION", "5").startswith(b"-WRONGTYPE")


@pytest.mark.redis_version("8.6")
def test_streams_start_with_the_configured_settings(xs: Conn) -> None:
    xs.call("XADD", "plain", "*", "f", "v")
    assert idmp(xs, "plain") == {"idmp-duration": 100, "idmp-maxsize": 100, "pids-tracked": 0,
                                 "iids-tracked": 0, "iids-added": 0, "iids-duplicates": 0}
    try:
        assert xs.call("CONFIG", "SET", "stream-idmp-duration", "86401").startswith(
            b"-ERR CONFIG SET failed (possibly related to argument 'stream-idmp-duration') - "
            b"argument must be between 1 and 86400 inclusive")
        assert xs.call("CONFIG", "SET", "stream-idmp-maxsize", "0").startswith(b"-ERR")
        xs.call("CONFIG", "SET", "stream-idmp-duration", "30")
        xs.call("CONFIG", "SET", "stream-idmp-maxsize", "2")
        xs.call("XADD", "new", "IDMP", "p", "i", "*", "f", "v")
        assert idmp(xs, "new")["idmp-duration"] == 30
        assert idmp(xs, "new")["idmp-maxsize"] == 2
    finally:
        xs.call("CONFIG", "SET", "stream-idmp-duration", "100")
        xs.call("CONFIG", "SET", "stream-idmp-maxsize", "100")


@pytest.mark.redis_version("8.6")
def test_copy_keeps_the_idempotency_state(xs: Conn) -> None:
    first = xs.v("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    xs.call("COPY", "s", "t")
    assert xs.v("XADD", "t", "IDMP", "p", "i", "*", "f", "v") == first
    assert xs.v("XADD", "t", "IDMP", "p", "j", "*", "f", "v") != first
    assert idmp(xs, "s")["iids-added"] == 1
    assert idmp(xs, "t")["iids-added"] == 2


# -- the change counter (INFO persistence rdb_changes_since_last_save) -----------------------

# Each runs on a fresh stream of five entries with a group g whose consumer c has read two.
_ENTRY_COMMANDS = [
    "XADD x * a 1", "XADD x MAXLEN 2 * a 1", "XADD x 1-1 a 1", "XADD nx NOMKSTREAM * a 1",
    "XDEL x 1-1 2-1 9-9", "XDEL x 9-9", "XTRIM x MAXLEN 2", "XTRIM x MAXLEN 10",
    "XTRIM x MINID 3-1", "XSETID x 10-1", "XSETID x 1-1", "XLEN x", "XRANGE x - +",
    "XREVRANGE x + - COUNT 1", "XREAD STREAMS x 0", "XINFO STREAM x", "XINFO GROUPS x",
    "XINFO CONSUMERS x g",
]


def _seed(conn: RawClient) -> None:
    conn.call("FLUSHALL")
    for i in range(1, 6):
        conn.call("XADD", "x", f"{i}-1", "a", str(i))
    conn.call("XGROUP", "CREATE", "x", "g", "0")
    conn.call("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "x", ">")


def _dirty(conn: RawClient) -> int:
    text = conn.call("INFO", "persistence").decode(errors="replace")
    line = next(x for x in text.split("\r\n") if x.startswith("rdb_changes_since_last_save:"))
    return int(line.split(":")[1])


def changes(conn: RawClient, command: str) -> int:
    _seed(conn)
    before = _dirty(conn)
    conn.call(*command.split())
    return _dirty(conn) - before


@pytest.mark.parametrize("command", _ENTRY_COMMANDS)
def test_entry_commands_count_changes_as_redis(pair, command: str) -> None:  # type: ignore[no-untyped-def]
    assert changes(pair.ours, command) == changes(pair.ref, command), command


@pytest.mark.redis_version("8.6")
def test_idempotent_writes_count_one_change_and_duplicates_none(xs: Conn) -> None:
    before = xs.dirty()
    xs.call("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    xs.call("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    xs.call("XCFGSET", "s", "IDMP-MAXSIZE", "5")
    assert integer(xs.call("XLEN", "s")) == 1
    assert xs.dirty() - before == 2
