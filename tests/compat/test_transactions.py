"""MULTI / EXEC / DISCARD / WATCH / UNWATCH, byte for byte against Redis.

Covers the errors of misplaced transaction commands, EXECABORT after any command that fails
to queue (unknown, wrong arity, refused inside MULTI), errors inside EXEC's array, and every
way a WATCH fails the EXEC: a write from another connection or from the watcher itself, a
deletion, an expiry-time change, the key expiring, FLUSHDB / FLUSHALL / SWAPDB when the key
exists, and the cases where Redis lets the EXEC run (a flush of a database where the watched
key does not exist, a key that had already expired when it was watched).

Key expiry needs real time to pass on the reference server, so the two expiry tests wait a
few tens of milliseconds; everything else is immediate.
"""

from __future__ import annotations

import time

import pytest
from support.pair import Pair
from support.raw import RawClient
from support.resptree import parse, to_python


def test_misplaced_transaction_commands(pair: Pair) -> None:
    pair.check("EXEC")
    pair.check("DISCARD")
    pair.check("MULTI")
    pair.check("MULTI")
    pair.check("WATCH", "k")
    pair.check("DISCARD")
    pair.check("UNWATCH")


def test_exec_runs_queued_commands_and_reports_errors_inline(pair: Pair) -> None:
    pair.check("MULTI")
    pair.check("SET", "a", "1")
    pair.check("INCR", "a")
    pair.check("INCR", "nonnum")
    pair.check("SET", "nonnum", "x")
    pair.check("INCR", "nonnum")
    pair.check("GET", "a")
    pair.check("EXEC")
    pair.check("GET", "a")


def test_empty_transaction(pair: Pair) -> None:
    pair.check("MULTI")
    pair.check("EXEC")


@pytest.mark.parametrize(
    "bad",
    [("NOSUCH", "x"), ("GET",), ("SET", "k"), ("SAVE",), ("SHUTDOWN",), ("CONFIG", "NOSUCH")],
    ids=lambda c: " ".join(c),
)
def test_execabort_after_queueing_error(pair: Pair, bad: tuple[str, ...]) -> None:
    pair.check("MULTI")
    pair.check("SET", "k", "v")
    pair.check(*bad)
    pair.check("SET", "k2", "v")
    pair.check("EXEC")
    pair.check("EXISTS", "k", "k2")  # nothing ran
    pair.check("EXEC")


def test_discard_drops_queue_and_watches(pair: Pair) -> None:
    pair.check("SET", "k", "1")
    pair.check("WATCH", "k")
    pair.check("MULTI")
    pair.check("INCR", "k")
    pair.check("DISCARD")
    other = pair.connect_extra()
    try:
        other.check("SET", "k", "2")
    finally:
        other.close()
    pair.check("MULTI")  # the WATCH went away with DISCARD
    pair.check("INCR", "k")
    pair.check("EXEC")


def test_watch_fails_after_write_from_another_connection(pair: Pair) -> None:
    pair.check("SET", "k", "1")
    pair.check("WATCH", "k", "other")
    other = pair.connect_extra()
    try:
        other.check("SET", "k", "2")
    finally:
        other.close()
    pair.check("MULTI")
    pair.check("SET", "k", "3")
    pair.check("EXEC")
    pair.check("GET", "k")


def test_watch_untouched_key_succeeds(pair: Pair) -> None:
    pair.check("SET", "k", "1")
    pair.check("WATCH", "k")
    other = pair.connect_extra()
    try:
        other.check("SET", "unrelated", "2")
        other.check("GET", "k")  # reads do not count
    finally:
        other.close()
    pair.check("MULTI")
    pair.check("SET", "k", "3")
    pair.check("EXEC")


def test_watch_fails_after_own_write(pair: Pair) -> None:
    pair.check("WATCH", "k")
    pair.check("SET", "k", "mine")
    pair.check("MULTI")
    pair.check("GET", "k")
    pair.check("EXEC")


@pytest.mark.parametrize(
    "change",
    [
        [("DEL", "k")],
        [("EXPIRE", "k", "100")],
        [("SET", "k", "1")],
        [("INCR", "k")],
        [("RENAME", "k", "k2")],
        [("FLUSHALL",)],
        [("FLUSHDB",)],
        [("SWAPDB", "0", "1")],
    ],
    ids=lambda c: " ".join(" ".join(x) for x in c),
)
def test_watch_fails_after_change_of_existing_key(
    pair: Pair, change: list[tuple[str, ...]]
) -> None:
    pair.check("SET", "k", "1")
    pair.check("WATCH", "k")
    other = pair.connect_extra()
    try:
        for cmd in change:
            other.check(*cmd)
    finally:
        other.close()
    pair.check("MULTI")
    pair.check("PING")
    pair.check("EXEC")


@pytest.mark.parametrize(
    "change",
    [[("FLUSHALL",)], [("FLUSHDB",)], [("SWAPDB", "0", "1")], [("DEL", "k")],
     [("PERSIST", "k")]],
    ids=lambda c: " ".join(" ".join(x) for x in c),
)
def test_watch_survives_no_op_on_missing_key(pair: Pair, change: list[tuple[str, ...]]) -> None:
    # Redis only fails the EXEC when the flushed or swapped databases hold the key.
    pair.check("SET", "unrelated", "1")
    pair.check("WATCH", "k")
    other = pair.connect_extra()
    try:
        for cmd in change:
            other.check(*cmd)
    finally:
        other.close()
    pair.check("MULTI")
    pair.check("PING")
    pair.check("EXEC")


def test_watch_fails_when_swapdb_brings_the_key(pair: Pair) -> None:
    pair.check("SELECT", "1")
    pair.check("SET", "k", "in-db1")
    pair.check("SELECT", "0")
    pair.check("WATCH", "k")
    other = pair.connect_extra()
    try:
        other.check("SWAPDB", "0", "1")
        other.check("SWAPDB", "0", "1")
    finally:
        other.close()
    pair.check("MULTI")
    pair.check("PING")
    pair.check("EXEC")


def test_watch_other_database_is_separate(pair: Pair) -> None:
    pair.check("SET", "k", "1")
    pair.check("WATCH", "k")
    other = pair.connect_extra()
    try:
        other.check("SELECT", "1")
        other.check("SET", "k", "x")
    finally:
        other.close()
    pair.check("MULTI")
    pair.check("PING")
    pair.check("EXEC")


def test_watch_fails_when_key_expires(pair: Pair) -> None:
    pair.check("SET", "k", "1", "PX", "30")
    pair.check("WATCH", "k")
    time.sleep(0.08)  # real time must pass on the reference server
    pair.check("MULTI")
    pair.check("PING")
    pair.check("EXEC")


def test_watch_of_already_expired_key(pair: Pair) -> None:
    # A key already expired when watched: its (lazy) deletion later is not a change.
    pair.check("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        pair.check("SET", "k", "1", "PX", "5")
        time.sleep(0.03)
        pair.check("WATCH", "k")
        other = pair.connect_extra()
        try:
            other.check("GET", "k")  # deletes it lazily
        finally:
            other.close()
        pair.check("MULTI")
        pair.check("PING")
        pair.check("EXEC")
    finally:
        pair.check("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def _ms(conn: RawClient) -> int:
    seconds, micros = (int(x) for x in to_python(parse(conn.call("TIME"))))
    return seconds * 1000 + micros // 1000


def _until_past(pair: Pair, ms: int) -> None:
    """Wait until ``ms`` milliseconds have passed on both servers' clocks (so a key set
    with PX ``ms`` before the call is logically expired on both)."""
    for conn in (pair.ref, pair.ours):
        end = _ms(conn) + ms + 1
        for _ in range(10_000):
            if _ms(conn) > end:
                break
        else:
            raise AssertionError("the server's clock did not move")


@pytest.mark.parametrize("case", ["flushdb", "swapdb-to-none", "swapdb-from-none",
                                  "swapdb-stale-for-stale"])
def test_emptying_or_swapping_a_stale_watched_key_is_no_change(pair: Pair, case: str) -> None:
    # Redis 7: a key that was already expired when WATCHed may be flushed away or swapped
    # for nothing or for another expired key, and a missing key may be swapped for an
    # expired one: none of it is a logical change, so EXEC runs.
    pair.check("FLUSHALL")
    pair.check("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        if case == "swapdb-from-none":
            pair.check("SET", "x", "foo", "PX", "1")
            pair.check("SELECT", "1")
        else:
            if case == "swapdb-stale-for-stale":
                pair.check("SET", "x", "bar", "PX", "1")
            pair.check("SELECT", "1")
            pair.check("SET", "x", "foo", "PX", "1")
        _until_past(pair, 2)
        pair.check("WATCH", "x")
        if case == "flushdb":
            pair.check("FLUSHDB")
        else:
            pair.check("SWAPDB", "0", "1")
        pair.check("MULTI")
        pair.check("PING")
        assert pair.check("EXEC") == b"*1\r\n+PONG\r\n"
    finally:
        pair.check("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        pair.check("SELECT", "0")


def test_a_transaction_sees_one_time(pair: Pair) -> None:
    # Redis 7+ takes the time once for EXEC: a key set with PX 1 in the transaction has not
    # expired for a GET after a DEBUG SLEEP in the same transaction.
    pair.check("MULTI")
    pair.check("SET", "k", "v", "PX", "1")
    pair.check("DEBUG", "SLEEP", "0.01")
    pair.check("GET", "k")
    pair.check("EXISTS", "k")
    pair.check("EXEC")


def test_unwatch_forgets_keys(pair: Pair) -> None:
    pair.check("WATCH", "k")
    pair.check("UNWATCH")
    other = pair.connect_extra()
    try:
        other.check("SET", "k", "1")
    finally:
        other.close()
    pair.check("MULTI")
    pair.check("GET", "k")
    pair.check("EXEC")


def test_exec_unwatches(pair: Pair) -> None:
    pair.check("WATCH", "k")
    pair.check("MULTI")
    pair.check("EXEC")
    other = pair.connect_extra()
    try:
        other.check("SET", "k", "1")
    finally:
        other.close()
    pair.check("MULTI")
    pair.check("GET", "k")
    pair.check("EXEC")


def test_blocking_command_inside_exec_does_not_block(pair: Pair) -> None:
    pair.check("MULTI")
    pair.check("WAIT", "1", "0")
    pair.check("EXEC")


def test_connection_commands_inside_multi(pair: Pair) -> None:
    pair.check("MULTI")
    pair.check("SELECT", "2")
    pair.check("CLIENT", "SETNAME", "tx")
    pair.check("SET", "in2", "v")
    pair.check("EXEC")
    pair.check("CLIENT", "GETNAME")
    pair.check("EXISTS", "in2")
    pair.check("SELECT", "0")
    pair.check("EXISTS", "in2")


def test_hello_inside_multi_switches_protocol_mid_exec(pair: Pair) -> None:
    from support import normalize

    pair.check("MULTI")
    pair.check("HELLO", "3")
    pair.check("CONFIG", "GET", "maxclients")
    pair.check("EXEC", normalize=normalize.hello)


def test_watch_inside_multi_flags_nothing(pair: Pair) -> None:
    # WATCH inside MULTI is an error but does not abort the transaction.
    pair.check("MULTI")
    pair.check("WATCH", "k")
    pair.check("SET", "k", "1")
    pair.check("EXEC")
