"""Blocking stream reads with several redis-py asyncio clients at once, on a server whose
clock the tests freeze and advance (no test waits for time to pass).
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
    yield made
    for c in made:
        await c.aclose()


def entries(reply: Any, key: str) -> list[tuple[str, dict[str, str]]]:
    """The (id, fields) pairs redis-py decoded for ``key`` (empty when nothing was served)."""
    if not reply:
        return []
    if isinstance(reply, dict):  # RESP3: key -> [entries]
        found = reply[key]
        found = found[0] if found and isinstance(found[0], list) else found
    else:  # RESP2: [[key, entries], ...]
        found = next(v for k, v in reply if k == key)
    return [(sid, dict(fields)) for sid, fields in found]


async def test_each_entry_goes_to_one_consumer_in_blocking_order(
    clients: list[aioredis.Redis],
) -> None:
    admin, *consumers = clients
    await admin.xgroup_create("jobs", "workers", id="$", mkstream=True)
    tasks = []
    for n, c in enumerate(consumers, start=1):
        tasks.append(await park(admin, c.xreadgroup("workers", f"w{n}", {"jobs": ">"},
                                                     count=1, block=0), n))
    for n in range(1, len(consumers) + 1):
        await admin.xadd("jobs", {"job": str(n)}, id=f"{n}-0")
        assert entries(await tasks[n - 1], "jobs") == [(f"{n}-0", {"job": str(n)})]
    summary = await admin.xpending("jobs", "workers")
    assert summary["pending"] == len(consumers)
    owners = {c["name"]: c["pending"] for c in summary["consumers"]}
    assert owners == {f"w{n}": 1 for n in range(1, len(consumers) + 1)}


async def test_timeouts_follow_the_servers_clock(
    clients: list[aioredis.Redis], resplite_clock: Any
) -> None:
    admin, reader, forever = clients[:3]
    await admin.xadd("s", {"f": "v"}, id="1-1")
    timed = await park(admin, reader.xread({"s": "$"}, block=5000), 1)
    waiting = await park(admin, forever.xread({"s": "$"}, block=0), 2)
    resplite_clock.advance(4999)
    await until_blocked(admin, 2)
    resplite_clock.advance(1)
    assert not await timed  # a null reply
    resplite_clock.advance(10**9)  # BLOCK 0 waits for ever
    assert await blocked_count(admin) == 1
    await admin.xadd("s", {"late": "entry"}, id="2-1")
    assert entries(await waiting, "s") == [("2-1", {"late": "entry"})]


async def test_reads_on_several_streams(clients: list[aioredis.Redis]) -> None:
    admin, reader = clients[:2]
    for key in ("a", "b", "c"):
        await admin.xadd(key, {"seed": key}, id="1-1")
    task = await park(admin, reader.xread({"a": "$", "b": "$", "c": "$"}, block=0), 1)
    await admin.xadd("b", {"x": "1"}, id="2-1")
    got = await task
    assert list(got) == ["b"]
    assert entries(got, "b") == [("2-1", {"x": "1"})]


async def test_dollar_is_fixed_when_the_client_blocks(clients: list[aioredis.Redis]) -> None:
    admin, reader = clients[:2]
    await admin.xadd("s", {"f": "v"}, id="5-1")
    task = await park(admin, reader.xread({"s": "$"}, block=0), 1)
    await admin.xdel("s", "5-1")  # a change, but nothing after the fixed id
    await until_blocked(admin, 1)
    await admin.xadd("s", {"f": "w"}, id="6-1")
    assert entries(await task, "s") == [("6-1", {"f": "w"})]


async def test_client_unblock(clients: list[aioredis.Redis]) -> None:
    admin, first, second = clients[:3]
    await admin.xgroup_create("s", "g", id="$", mkstream=True)
    first_id = await first.client_id()
    second_id = await second.client_id()
    waiting_timeout = await park(admin, first.xread({"s": "$"}, block=0), 1)
    waiting_error = await park(admin, second.xreadgroup("g", "c", {"s": ">"}, block=0), 2)
    assert await admin.client_unblock(first_id) is True
    assert not await waiting_timeout  # the timeout reply: null
    assert await admin.client_unblock(second_id, error=True) is True
    with pytest.raises(ResponseError, match="UNBLOCKED client unblocked via CLIENT UNBLOCK"):
        await waiting_error
    assert await admin.client_unblock(second_id) is False
    assert await blocked_count(admin) == 0


async def test_disconnecting_while_blocked_leaves_nothing_behind(frozen: Any) -> None:
    admin = frozen.async_client(protocol=3, decode_responses=True)
    try:
        await admin.xgroup_create("s", "g", id="$", mkstream=True)
        doomed = [frozen.async_client(protocol=3) for _ in range(3)]
        tasks = [asyncio.ensure_future(c.xreadgroup("g", f"c{i}", {"s": ">"}, block=0))
                 for i, c in enumerate(doomed)]
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
        await admin.xadd("s", {"f": "v"}, id="1-1")
        assert (await admin.xpending("s", "g"))["pending"] == 0
    finally:
        await admin.aclose()


async def test_group_removed_under_a_blocked_reader(clients: list[aioredis.Redis]) -> None:
    admin, reader = clients[:2]
    await admin.xgroup_create("s", "g", id="$", mkstream=True)
    task = await park(admin, reader.xreadgroup("g", "c", {"s": ">"}, block=0), 1)
    await admin.xgroup_destroy("s", "g")
    with pytest.raises(ResponseError, match="NOGROUP"):
        await task


async def test_blocking_read_inside_a_transaction_does_not_block(
    clients: list[aioredis.Redis],
) -> None:
    admin = clients[0]
    await admin.xgroup_create("s", "g", id="$", mkstream=True)
    async with admin.pipeline(transaction=True) as pipe:
        pipe.xread({"s": "$"}, block=0)
        pipe.xreadgroup("g", "c", {"s": ">"}, block=0)
        replies = await pipe.execute()
    assert [bool(r) for r in replies] == [False, False]  # null replies, nothing blocked
    assert await blocked_count(admin) == 0


async def test_resp2_clients_get_lists_of_pairs(frozen: Any) -> None:
    admin = frozen.async_client(protocol=2, decode_responses=True)
    reader = frozen.async_client(protocol=2, decode_responses=True)
    try:
        task = await park(admin, reader.xread({"s": "0"}, block=0), 1)
        await admin.xadd("s", {"f": "v"}, id="1-1")
        assert entries(await task, "s") == [("1-1", {"f": "v"})]
    finally:
        await admin.aclose()
        await reader.aclose()
