"""Our glob matcher against Redis's own: KEYS on the reference server is the oracle."""

from __future__ import annotations

import random

from support.raw import RawClient
from support.resptree import parse
from support.servers import ServerProcess

from resplite.store.glob import glob_match

KEYS = [
    b"a", b"b", b"ab", b"ba", b"abc", b"a-c", b"a]c", b"a[c", b"a*c", b"a?c", b"a\\c", b"A",
    b"AbC", b"xyz", b"-", b"]", b"[", b"^", b"aa", b"caab", b"\xff", b"a\xffc",
]
ALPHABET = [b"a", b"b", b"c", b"A", b"*", b"?", b"[", b"]", b"^", b"-", b"\\", b"x"]


def test_glob_agrees_with_redis_keys(redis_ref: ServerProcess) -> None:
    client = RawClient(redis_ref.host, redis_ref.port)
    try:
        client.call("SELECT", "9")
        client.call("FLUSHDB")
        for key in KEYS:
            client.call("SET", key, "1")
        rng = random.Random(20240501)
        patterns = {b"*", b"a*", b"*c", b"[a-b]*", b"[^a]*", b"a\\*c", b"a[\\]]c", b"[b-a]"}
        while len(patterns) < 400:
            patterns.add(b"".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 6))))
        for pattern in sorted(patterns):
            expected = {k.encode("latin-1") for k in _keys(client, pattern)}
            ours = {k for k in KEYS if glob_match(pattern, k)}
            assert ours == expected, pattern
        client.call("FLUSHDB")
    finally:
        client.close()


def _keys(client: RawClient, pattern: bytes) -> list[str]:
    raw = client.call("KEYS", pattern)
    return [item[1].decode("latin-1") for item in parse(raw)[1]]
