"""Keyspace notifications compared on both servers: the events a command sequence publishes.

A watcher pair (the ``events`` fixture of ``tests/compat/conftest.py``) subscribes to
``__key*__:*`` on both servers; :func:`run` plays a script with the given
``notify-keyspace-events`` flags, then reads each watcher's pending messages up to a PING and
demands the two lists be equal, in order (stream ids from ``*`` blanked).
"""

from __future__ import annotations

from support.pair import Pair, loose_ids
from support.raw import RawClient

Cmd = tuple[bytes | str | int, ...]


def drain(conn: RawClient, resp: int) -> list[bytes]:
    """Every message the watcher got before a PING sent now."""
    conn.send("PING")
    pong = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n" if resp == 2 else b"+PONG\r\n"
    out: list[bytes] = []
    while True:
        reply = conn.read_reply()
        if reply == pong:
            return out
        out.append(reply)


def run(pair: Pair, watcher: Pair, flags: str, script: list[Cmd]) -> list[bytes]:
    """Play ``script`` under ``flags``; both servers must publish the same events."""
    pair.check("CONFIG", "SET", "notify-keyspace-events", flags)
    for cmd in script:
        pair.check(*cmd, normalize=loose_ids)
    expected = [loose_ids(m) for m in drain(watcher.ref, pair.resp)]
    got = [loose_ids(m) for m in drain(watcher.ours, pair.resp)]
    assert got == expected, f"events for {script}\n redis: {expected}\n resplite: {got}"
    return got
