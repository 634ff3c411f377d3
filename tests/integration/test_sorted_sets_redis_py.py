"""redis-py's sorted set API against resplite, as applications use it: a leaderboard, a
sliding-window rate limiter and a delayed-job queue, in RESP2 and RESP3 (redis-py decodes
the two protocols' shapes differently, so both are exercised), with the server's clock under
the test's control for expiry.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest
import redis
from support.newer import T0


def pairs(reply: Any) -> list[tuple[str, float]]:
    """(member, score) pairs whichever shape redis-py decoded them into for the protocol."""
    return [(member, float(score)) for member, score in reply]


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def r(request: pytest.FixtureRequest, frozen: Any) -> Iterator[redis.Redis]:
    client = frozen.client(protocol=request.param, decode_responses=True)
    client.flushall()
    yield client
    client.close()


def test_leaderboard(r: redis.Redis) -> None:
    r.zadd("board", {"alice": 120, "bob": 95, "carol": 120, "dave": 40})
    r.zincrby("board", 30, "bob")
    r.zadd("board", {"dave": 10}, gt=True)  # a lower score never replaces a best
    r.zadd("board", {"erin": 60}, nx=True)
    top = pairs(r.zrevrange("board", 0, 2, withscores=True))
    assert top == [("bob", 125.0), ("carol", 120.0), ("alice", 120.0)]
    assert r.zrevrank("board", "alice") == 2 and r.zrank("board", "dave") == 0
    assert r.zscore("board", "erin") == 60.0 and r.zscore("board", "nobody") is None
    assert r.zmscore("board", ["bob", "nobody"]) == [125.0, None]
    assert r.zcount("board", 60, "+inf") == 4
    assert r.zrange("board", "(60", "+inf", byscore=True) == ["alice", "carol", "bob"]
    assert pairs(r.zrange("board", 0, 1, desc=True, withscores=True)) == [("bob", 125.0),
                                                                            ("carol", 120.0)]
    # Around a player: their rank, then the neighbours.
    # redis-py types a reply as every shape the command can have: cast to the one it has here.
    rank = cast(int, r.zrevrank("board", "carol"))
    assert r.zrevrange("board", max(rank - 1, 0), rank + 1) == ["bob", "carol", "alice"]
    # Weekly boards summed into an all-time board.
    r.zadd("week2", {"alice": 10, "frank": 70})
    assert r.zunionstore("alltime", {"board": 1, "week2": 2}) == 6
    assert pairs(r.zrevrange("alltime", 0, 1, withscores=True)) == [("frank", 140.0),
                                                                      ("alice", 140.0)]
    assert pairs(r.zinter(["board", "week2"], withscores=True, aggregate="MAX")) == [
        ("alice", 120.0)
    ]
    assert pairs(r.zpopmax("alltime", 2)) == [("frank", 140.0), ("alice", 140.0)]
    assert r.zrandmember("board", 2, withscores=True) is not None
    assert r.zcard("board") == 5 and r.type("board") == "zset"


def allow(r: redis.Redis, user: str, now_ms: int, limit: int, window_ms: int) -> bool:
    """The classic sliding-window limiter: drop old hits, count, record, expire."""
    key = f"rate:{user}"
    with r.pipeline(transaction=True) as pipe:
        pipe.zremrangebyscore(key, 0, now_ms - window_ms)
        pipe.zcard(key)
        pipe.zadd(key, {f"{now_ms}": now_ms})
        pipe.pexpire(key, window_ms)
        _, count, _, _ = pipe.execute()
    return bool(count < limit)


def test_sliding_window_rate_limiter(r: redis.Redis, resplite_clock: Any) -> None:
    now = T0
    verdicts = [allow(r, "u1", now + i, limit=3, window_ms=1000) for i in range(5)]
    assert verdicts == [True, True, True, False, False]
    assert r.zcard("rate:u1") == 5
    # Half a second later the window still holds them all; a second later none.
    assert not allow(r, "u1", now + 500, limit=3, window_ms=1000)
    assert allow(r, "u1", now + 1600, limit=3, window_ms=1000)
    assert r.zrange("rate:u1", 0, -1) == [str(now + 1600)]
    # The key expires with the server's clock once the user goes quiet.
    assert r.pttl("rate:u1") == 1000
    resplite_clock.advance(1001)  # a key lives through its own millisecond
    assert r.exists("rate:u1") == 0


def test_delayed_job_queue(r: redis.Redis) -> None:
    """Jobs scheduled by due time; a worker claims what is due, atomically, with ZPOPMIN /
    ZRANGEBYSCORE + ZREM, and the blocking pop serves the next one."""
    r.zadd("delayed", {"email:1": 1000, "email:2": 3000, "report": 2000})
    due = r.zrangebyscore("delayed", "-inf", 2500, start=0, num=10)
    assert due == ["email:1", "report"]
    assert r.zrem("delayed", *due) == 2
    assert pairs(r.zpopmin("delayed", 1)) == [("email:2", 3000.0)]
    r.zadd("delayed", {"later": 9000})
    popped_next = cast("tuple[str, str, float]", r.bzpopmin("delayed", timeout=1))
    assert tuple(popped_next) == ("delayed", "later", 9000.0)
    assert r.zmpop(1, ["delayed"], min=True) is None
    r.zadd("delayed", {"a": 1, "b": 2})
    key, popped = cast("list[Any]", r.zmpop(1, ["delayed"], min=True, count=5))
    assert key == "delayed" and pairs(popped) == [("a", 1.0), ("b", 2.0)]


def test_autocomplete_by_lex_and_scan(r: redis.Redis) -> None:
    words = ["apple", "apricot", "banana", "band", "bandana", "can"]
    r.zadd("words", {w: 0 for w in words})
    assert r.zrangebylex("words", "[ban", "[ban\xff") == ["banana", "band", "bandana"]
    assert r.zlexcount("words", "[a", "(b") == 2
    assert r.zrange("words", "(band", "+", bylex=True, offset=0, num=2) == ["bandana", "can"]
    assert r.zremrangebylex("words", "-", "(b") == 2
    assert sorted(m for m, _ in r.zscan_iter("words", match="ban*")) == [
        "banana", "band", "bandana"
    ]
    assert r.zrangestore("copy", "words", 0, -1) == 4
    assert r.zdiff(["words", "copy"]) == []
    assert r.zintercard(2, ["words", "copy"]) == 4
