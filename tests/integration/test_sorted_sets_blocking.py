"""Blocking sorted set pops (BZPOPMIN, BZPOPMAX, BZMPOP) with several redis-py asyncio clients
at once, on a server whose clock the tests freeze and advance (no test waits for time to pass).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError
from support.blocking import blocked_count, park, until_blocked

pytestmark = pytest.mark.asyncio


@pytest.fixture
async def clients(frozen: Any) -> AsyncIterator[list[aioredis.Redis]]:
    made = [frozen.async_client(protocol=3, decode_responses=True) for _ in range(6)]
    await made[0].flushall()
    yield made
    for c in made:
        await c.aclose()


async def test_each_member_goes_to_one_waiter_in_blocking_order(
    clients: list[aioredis.Redis],
) -> None:
    admin, *workers = clients
    tasks = [await park(admin, w.bzpopmin("jobs", timeout=0), n)
             for n, w in enumerate(workers, start=1)]
    # One member at a time: each wakes exactly the next waiter.
    for n in range(len(workers)):
        await admin.zadd("jobs", {f"job{n}": n})
        assert await tasks[n] == ["jobs", f"job{n}", float(n)]
    assert await admin.exists("jobs") == 0
    assert await blocked_count(admin) == 0


async def test_one_write_serves_several_waiters_lowest_first(
    clients: list[aioredis.Redis],
) -> None:
    admin, a, b, c = clients[:4]
    ta = await park(admin, a.bzpopmin("q", timeout=0), 1)
    tb = await park(admin, b.bzpopmax("q", timeout=0), 2)
    tc = await park(admin, c.bzmpop(0, 1, ["q"], min=True, count=5), 3)
    await admin.zadd("q", {"one": 1, "two": 2, "three": 3, "four": 4})
    assert await ta == ["q", "one", 1.0]
    assert await tb == ["q", "four", 4.0]
    assert await tc == ["q", [["two", 2.0], ["three", 3.0]]]


async def test_timeouts_follow_the_servers_clock(
    clients: list[aioredis.Redis], resplite_clock: Any
) -> None:
    admin, timed, forever, mpop = clients[:4]
    t1 = await park(admin, timed.bzpopmin("z", timeout=5), 1)
    t2 = await park(admin, forever.bzpopmax("z", timeout=0), 2)
    t3 = await park(admin, mpop.bzmpop(0.25, 2, ["x", "z"], max=True), 3)
    resplite_clock.advance(249)
    await until_blocked(admin, 3)
    resplite_clock.advance(1)
    assert await t3 is None
    resplite_clock.advance(4749)
    await until_blocked(admin, 2)
    resplite_clock.advance(1)
    assert await t1 is None
    resplite_clock.advance(10**9)  # a timeout of 0 waits for ever
    assert await blocked_count(admin) == 1
    await admin.zadd("z", {"late": 7})
    assert await t2 == ["z", "late", 7.0]


async def test_several_keys_the_first_non_empty_one_in_argument_order(
    clients: list[aioredis.Redis],
) -> None:
    admin, reader = clients[:2]
    task = await park(admin, reader.bzpopmin(["a", "b", "c"], timeout=0), 1)
    async with admin.pipeline(transaction=True) as pipe:
        pipe.zadd("c", {"from-c": 1})
        pipe.zadd("b", {"from-b": 2})
        await pipe.execute()
    # After EXEC, both keys are ready; the re-run command looks at its keys in order.
    assert await task == ["b", "from-b", 2.0]
    assert await admin.zcard("c") == 1


async def test_key_deleted_or_of_another_type_keeps_waiters_blocked(
    clients: list[aioredis.Redis],
) -> None:
    admin, reader = clients[:2]
    task = await park(admin, reader.bzpopmin("k", timeout=0), 1)
    await admin.set("k", "a string")
    await admin.delete("k")
    await admin.hset("k", "f", "v")
    await until_blocked(admin, 1)
    assert not task.done()
    await admin.delete("k")
    await admin.zadd("k", {"m": 1})
    assert await task == ["k", "m", 1.0]


async def test_a_stream_reader_and_a_zset_waiter_on_one_key(
    clients: list[aioredis.Redis],
) -> None:
    admin, xreader, zwaiter = clients[:3]
    xtask = await park(admin, xreader.xread({"k": "$"}, block=0), 1)
    ztask = await park(admin, zwaiter.bzpopmax("k", timeout=0), 2)
    await admin.zadd("k", {"m": 1})
    assert await ztask == ["k", "m", 1.0]
    await until_blocked(admin, 1)
    assert not xtask.done()
    await admin.xadd("k", {"f": "v"}, id="1-1")
    reply = await xtask
    assert "k" in reply


async def test_client_unblock(clients: list[aioredis.Redis]) -> None:
    admin, first, second = clients[:3]
    first_id = await first.client_id()
    second_id = await second.client_id()
    waiting_timeout = await park(admin, first.bzpopmin("z", timeout=0), 1)
    waiting_error = await park(admin, second.bzmpop(0, 1, ["z"], min=True), 2)
    assert await admin.client_unblock(first_id) is True
    assert await waiting_timeout is None
    assert await admin.client_unblock(second_id, error=True) is True
    with pytest.raises(ResponseError, match="UNBLOCKED client unblocked via CLIENT UNBLOCK"):
        await waiting_error
    assert await admin.client_unblock(second_id) is False
    assert await blocked_count(admin) == 0


async def test_blocking_pops_inside_a_transaction_do_not_block(
    clients: list[aioredis.Redis],
) -> None:
    admin = clients[0]
    async with admin.pipeline(transaction=True) as pipe:
        pipe.bzpopmin("z", timeout=0)
        pipe.bzmpop(0, 1, ["z"], max=True)
        pipe.zadd("z", {"a": 1})
        pipe.bzpopmax("z", timeout=0)
        replies = await pipe.execute()
    assert replies == [None, None, 1, ["z", "a", 1.0]]
    assert await blocked_count(admin) == 0


async def test_disconnecting_while_blocked_leaves_nothing_behind(frozen: Any) -> None:
    admin = frozen.async_client(protocol=3, decode_responses=True)
    try:
        doomed = [frozen.async_client(protocol=3) for _ in range(3)]
        tasks = [asyncio.ensure_future(c.bzpopmin("z", timeout=0)) for c in doomed]
        await until_blocked(admin, 3)
        for task in tasks:
            task.cancel()
        for c in doomed:
            await c.aclose()
        for _ in range(2000):
            if await blocked_count(admin) == 0:
                break
            await asyncio.sleep(0.002)
        assert await blocked_count(admin) == 0
        await admin.zadd("z", {"kept": 1})
        assert await admin.zrange("z", 0, -1) == ["kept"]
    finally:
        await admin.aclose()


async def test_resp2_clients_get_flat_replies(frozen: Any) -> None:
    admin = frozen.async_client(protocol=2, decode_responses=True)
    reader = frozen.async_client(protocol=2, decode_responses=True)
    try:
        await admin.delete("z")
        task = await park(admin, reader.bzpopmax("z", timeout=0), 1)
        await admin.zadd("z", {"m": 2.5})
        assert await task == ("z", "m", 2.5)
    finally:
        await admin.aclose()
        await reader.aclose()
