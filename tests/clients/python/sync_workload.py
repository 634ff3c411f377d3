"""The client matrix's workload through redis-py or valkey-py (same API): ``sync_workload.py
LIBRARY HOST PORT PREFIX``, LIBRARY being ``redis`` or ``valkey``.

Prints one ``PASS step``, ``FAIL step: why`` or ``SKIP step: why`` line per step, in the order
of test_client_matrix.STEPS, and exits 1 when a step failed. Every key and channel starts
with PREFIX, so that clients can share a server.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

LIBRARY, HOST, PORT, P = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lib: Any = importlib.import_module(LIBRARY)
r: Any = lib.Redis(host=HOST, port=PORT, decode_responses=True, protocol=2,
                   socket_timeout=60)
failed = False


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def step(name: str, fn: Callable[[], None]) -> None:
    global failed
    try:
        fn()
    except Exception as exc:  # any error fails this step only
        failed = True
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        print(f"FAIL {name}: {detail}", flush=True)
    else:
        print(f"PASS {name}", flush=True)


def strings() -> None:
    r.set(f"{P}s", "hello")
    check(r.append(f"{P}s", " world") == 11, "APPEND length")
    check(r.get(f"{P}s") == "hello world", "GET after APPEND")
    check(r.incrby(f"{P}n", 5) == 5, "INCRBY")
    r.set(f"{P}t", "v", ex=100)
    check(0 < r.ttl(f"{P}t") <= 100, "TTL after SET EX")


def hashes() -> None:
    check(r.hset(f"{P}h", mapping={"f1": "v1", "f2": "v2"}) == 2, "HSET")
    check(r.hgetall(f"{P}h") == {"f1": "v1", "f2": "v2"}, "HGETALL")
    check(r.hincrby(f"{P}h", "n", 3) == 3, "HINCRBY")
    check(r.hdel(f"{P}h", "f1") == 1, "HDEL")
    check(r.hlen(f"{P}h") == 2, "HLEN")


def lists_blpop() -> None:
    check(r.rpush(f"{P}l", "a", "b", "c") == 3, "RPUSH")
    check(r.lrange(f"{P}l", 0, -1) == ["a", "b", "c"], "LRANGE")
    check(tuple(r.blpop([f"{P}l"], timeout=5)) == (f"{P}l", "a"), "BLPOP")
    # The first key is empty: BLPOP serves the first non-empty one without blocking.
    check(tuple(r.blpop([f"{P}empty", f"{P}l"], timeout=5)) == (f"{P}l", "b"), "BLPOP 2 keys")
    # A BLPOP that blocks until another connection pushes, once CLIENT LIST flags it blocked
    # (its cmd= field would also name the BLPOPs above, which have returned).
    other = lib.Redis(host=HOST, port=PORT, decode_responses=True, socket_timeout=60)
    got: list[Any] = []
    waiter = threading.Thread(target=lambda: got.append(r.blpop([f"{P}wait"], timeout=60)))
    waiter.start()
    try:
        deadline = time.monotonic() + 60
        while not any(c.get("flags") == "b" for c in other.client_list()):
            check(time.monotonic() < deadline and waiter.is_alive(), "BLPOP never blocked")
            time.sleep(0.01)
        other.rpush(f"{P}wait", "late")
    finally:
        waiter.join(120)
        other.close()
    check(len(got) == 1 and tuple(got[0]) == (f"{P}wait", "late"), f"woken BLPOP: {got}")


def sorted_sets() -> None:
    check(r.zadd(f"{P}z", {"a": 1, "b": 2, "c": 3}) == 3, "ZADD")
    check(r.zincrby(f"{P}z", 10, "a") == 11.0, "ZINCRBY")
    check(r.zrange(f"{P}z", 0, -1, withscores=True) == [("b", 2.0), ("c", 3.0), ("a", 11.0)],
          "ZRANGE WITHSCORES")
    check(r.zrangebyscore(f"{P}z", 2, 3) == ["b", "c"], "ZRANGEBYSCORE")
    check(r.zrank(f"{P}z", "a") == 2, "ZRANK")
    check(r.zscore(f"{P}z", "c") == 3.0, "ZSCORE")


def scan() -> None:
    r.mset({f"{P}scan:{i}": i for i in range(300)})
    cursor, seen, calls = 0, set(), 0
    while True:
        cursor, keys = r.scan(cursor, match=f"{P}scan:*", count=20)
        seen.update(keys)
        calls += 1
        check(calls < 10_000, "SCAN did not reach cursor 0")
        if cursor == 0:
            break
    check(calls > 1, "one SCAN call returned everything")
    check(seen == {f"{P}scan:{i}" for i in range(300)}, "SCAN keys")


def hscan() -> None:
    # More fields than hash-max-listpack-entries (512): a listpack is returned whole.
    r.hset(f"{P}bigh", mapping={f"f{i}": i for i in range(600)})
    cursor, seen, calls = 0, {}, 0
    while True:
        cursor, fields = r.hscan(f"{P}bigh", cursor, count=20)
        seen.update(fields)
        calls += 1
        check(calls < 10_000, "HSCAN did not reach cursor 0")
        if cursor == 0:
            break
    check(calls > 1, "one HSCAN call returned everything")
    check(seen == {f"f{i}": str(i) for i in range(600)}, "HSCAN fields")


def pipeline() -> None:
    pipe = r.pipeline(transaction=False)
    for _ in range(1000):
        pipe.incr(f"{P}pipe")
    check(pipe.execute() == list(range(1, 1001)), "1,000 INCR replies")
    check(r.get(f"{P}pipe") == "1000", "counter after the pipeline")


def multi_watch() -> None:
    tx = r.pipeline(transaction=True)
    tx.incr(f"{P}tx").incr(f"{P}tx")
    check(tx.execute() == [1, 2], "MULTI/EXEC replies")
    other = lib.Redis(host=HOST, port=PORT, decode_responses=True)
    try:
        with r.pipeline() as pipe:
            pipe.watch(f"{P}w")
            other.set(f"{P}w", "theirs")  # a write by another client after WATCH
            pipe.multi()
            pipe.set(f"{P}w", "mine")
            try:
                pipe.execute()
                raise AssertionError("EXEC ran despite the WATCH conflict")
            except lib.WatchError:
                pass
        check(r.get(f"{P}w") == "theirs", "value after the aborted EXEC")
        with r.pipeline() as pipe:
            pipe.watch(f"{P}w")
            pipe.multi()
            pipe.set(f"{P}w", "mine")
            check(pipe.execute() == [True], "EXEC without a conflict")
        check(r.get(f"{P}w") == "mine", "value after EXEC")
    finally:
        other.close()


def pubsub() -> None:
    ps = r.pubsub()
    try:
        ps.subscribe(f"{P}chan")
        confirm = ps.get_message(timeout=30)
        check(confirm is not None and confirm["type"] == "subscribe", "subscribe confirmation")
        check(r.publish(f"{P}chan", "hi") == 1, "PUBLISH receivers")
        msg = ps.get_message(timeout=30)
        check(msg is not None and msg["type"] == "message" and msg["data"] == "hi"
              and msg["channel"] == f"{P}chan", f"message received: {msg!r}")
        ps.unsubscribe()
    finally:
        ps.close()


def eval_evalsha() -> None:
    body = f"return redis.call('INCRBY', KEYS[1], ARGV[1]) -- {P}"
    sha = hashlib.sha1(body.encode()).hexdigest()
    try:
        r.evalsha(sha, 1, f"{P}ev", 2)
        raise AssertionError("EVALSHA of an unknown script succeeded")
    except lib.exceptions.NoScriptError:
        pass
    check(r.eval(body, 1, f"{P}ev", 2) == 2, "EVAL")
    check(r.evalsha(sha, 1, f"{P}ev", 3) == 5, "EVALSHA after EVAL")
    # The client's own NOSCRIPT fallback: Script tries EVALSHA, then loads the script.
    script = r.register_script(f"return ARGV[1] .. '{P}'")
    check(script(args=["x"]) == f"x{P}", "registered script")


def consumer_group() -> None:
    st = f"{P}st"
    r.xgroup_create(st, "g", id="$", mkstream=True)
    ids = [r.xadd(st, {"n": str(i)}) for i in range(3)]
    got = r.xreadgroup("g", "c1", {st: ">"}, count=10)
    check([e[0] for e in got[0][1]] == ids, "XREADGROUP entries")
    check(r.xack(st, "g", ids[0]) == 1, "XACK")
    summary = r.xpending(st, "g")
    check(summary["pending"] == 2 and summary["min"] == ids[1], "XPENDING summary")
    detail = r.xpending_range(st, "g", min="-", max="+", count=10)
    check([d["message_id"] for d in detail] == ids[1:]
          and all(d["consumer"] == "c1" for d in detail), "XPENDING range")
    claimed = r.xautoclaim(st, "g", "c2", min_idle_time=0, start_id="0-0")
    check(claimed[0] == "0-0" and [e[0] for e in claimed[1]] == ids[1:], "XAUTOCLAIM")
    check(r.xpending(st, "g")["consumers"] == [{"name": "c2", "pending": 2}],
          "XPENDING after XAUTOCLAIM")


def xinfo_stream_full() -> None:
    info = r.xinfo_stream(f"{P}st", full=True)
    check(info["length"] == 3, "length")
    group = info["groups"][0]
    check(group["name"] == "g" and group["pel-count"] == 2, "group")
    check([c["name"] for c in group["consumers"]] == ["c1", "c2"], "consumers")


def resp3() -> None:
    r3 = lib.Redis(host=HOST, port=PORT, decode_responses=True, protocol=3)
    try:
        hello = r3.execute_command("HELLO", 3)
        check(hello["proto"] == 3, "HELLO 3")
        check(r3.hgetall(f"{P}h") == {"f2": "v2", "n": "3"}, "HGETALL map")
        check(r3.zscore(f"{P}z", "c") == 3.0, "ZSCORE double")
        info = r3.xinfo_stream(f"{P}st", full=True)
        check(info["groups"][0]["pel-count"] == 2, "XINFO STREAM FULL in RESP3")
    finally:
        r3.close()


for name, fn in [("strings", strings), ("hashes", hashes), ("lists_blpop", lists_blpop),
                 ("sorted_sets", sorted_sets), ("scan", scan), ("hscan", hscan),
                 ("pipeline", pipeline), ("multi_watch", multi_watch), ("pubsub", pubsub),
                 ("eval_evalsha", eval_evalsha), ("consumer_group", consumer_group),
                 ("xinfo_stream_full", xinfo_stream_full), ("resp3", resp3)]:
    step(name, fn)
r.close()
sys.exit(1 if failed else 0)
