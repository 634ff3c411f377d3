"""Scripts as real client libraries use them, and the sandbox's limits, against resplite.

redis-py's ``Lock`` (acquire, blocking acquire, extend, reacquire, release of a lost lock)
and ``register_script`` run their Lua through EVALSHA, falling back to EVAL after a SCRIPT
FLUSH; RQ enqueues a job and a burst worker runs it. The sandbox tests check what Redis
cannot be compared on: no Python object and no file-system function is reachable from a
script, a script that outgrows ``lua-max-memory`` fails with a clear error and the server
goes on, SHUTDOWN NOSAVE ends a runaway script (one looping in a coroutine too), and a
returned table too deep for Lua's stack answers Redis's error in place with nothing logged.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator

import pytest
import redis
from redis.exceptions import LockNotOwnedError, NoScriptError
from support.raw import RawClient
from support.servers import ServerProcess, paused, start_resplite

import resplite


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def client(request: pytest.FixtureRequest, server: ServerProcess) -> Iterator[redis.Redis]:
    r = redis.Redis(host=server.host, port=server.port, protocol=request.param)
    r.flushall()
    r.script_flush()
    yield r
    r.close()


# -- redis-py ----------------------------------------------------------------------------------


def test_lock_acquire_release_and_ownership(client: redis.Redis) -> None:
    lock = client.lock("resource", timeout=30)
    assert lock.acquire(blocking=False)
    assert lock.owned()
    assert lock.locked()
    other = client.lock("resource", timeout=30)
    assert not other.acquire(blocking=False)
    lock.release()
    assert not client.exists("resource")
    assert other.acquire(blocking=False)
    other.release()


def test_lock_blocking_acquire_waits_for_the_release(client: redis.Redis) -> None:
    holder = client.lock("resource", timeout=30)
    assert holder.acquire(blocking=False)
    waiter = client.lock("resource", timeout=30, sleep=0.01, thread_local=False)
    got: list[bool] = []
    thread = threading.Thread(target=lambda: got.append(waiter.acquire(blocking_timeout=20)))
    thread.start()
    holder.release()
    thread.join(30)
    assert got == [True]
    assert waiter.owned()
    waiter.release()


def test_lock_extend_and_reacquire(client: redis.Redis) -> None:
    lock = client.lock("resource", timeout=10)
    assert lock.acquire(blocking=False)
    assert lock.extend(100)
    assert client.pttl("resource") > 10_000
    assert lock.extend(5, replace_ttl=True)
    assert 0 < client.pttl("resource") <= 5_000
    assert lock.reacquire()
    assert 5_000 < client.pttl("resource") <= 10_000
    lock.release()


def test_releasing_a_lost_lock_raises(client: redis.Redis) -> None:
    lock = client.lock("resource", timeout=30)
    assert lock.acquire(blocking=False)
    client.delete("resource")  # as if it had expired
    thief = client.lock("resource", timeout=30)
    assert thief.acquire(blocking=False)
    with pytest.raises(LockNotOwnedError):
        lock.extend(10)
    with pytest.raises(LockNotOwnedError):
        lock.reacquire()
    with pytest.raises(LockNotOwnedError):
        lock.release()
    assert thief.owned()
    thief.release()


def test_register_script_uses_evalsha_and_survives_script_flush(client: redis.Redis) -> None:
    incr_by = client.register_script(
        "local v = redis.call('INCRBY', KEYS[1], ARGV[1]) return {v, redis.call('GET', KEYS[1])}"
    )
    assert incr_by(keys=["n"], args=[5]) == [5, b"5"]
    client.script_flush()
    # NOSCRIPT, then redis-py loads the script again and retries.
    assert incr_by(keys=["n"], args=[2]) == [7, b"7"]
    assert client.script_exists(incr_by.sha) == [True]
    client.script_flush()
    with pytest.raises(NoScriptError):
        client.evalsha(incr_by.sha, 1, "n", 1)
    pipe = client.pipeline()
    incr_by(keys=["n"], args=[1], client=pipe)
    incr_by(keys=["n"], args=[1], client=pipe)
    assert pipe.execute() == [[8, b"8"], [9, b"9"]]


# -- RQ ----------------------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    return a + b


def test_rq_enqueue_and_burst_worker(client: redis.Redis) -> None:
    rq = pytest.importorskip("rq")
    queue = rq.Queue("default", connection=client)
    job = queue.enqueue(add, 2, 3)
    worker = rq.SimpleWorker([queue], connection=client)
    assert worker.work(burst=True)
    job.refresh()
    assert job.get_status() == "finished"
    assert job.return_value() == 5
    assert queue.count == 0
    assert job.return_value() == 5


# -- the sandbox ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "python", "debug", "getfenv", "setfenv", "require", "module", "package", "io",
    "dofile", "loadfile", "print", "newproxy", "jit",
])
def test_what_a_script_cannot_reach(client: redis.Redis, name: str) -> None:
    with pytest.raises(redis.ResponseError, match="nonexistent global variable"):
        client.eval(f"return {name}", 0)


def test_os_has_clock_alone(client: redis.Redis) -> None:
    # Redis 7.4's sandboxed os library: os.clock, the processor time used, and nothing else.
    assert client.eval("local n = {} for k in pairs(os) do n[#n + 1] = k end return n", 0) == [
        b"clock"]
    assert client.eval("return type(os.clock())", 0) == b"number"
    with pytest.raises(redis.ResponseError, match="Attempt to modify a readonly table"):
        client.eval("os.execute = 1", 0)


def test_no_python_object_is_reachable_from_the_globals(client: redis.Redis) -> None:
    # Walk every table reachable from _G (and their metatables) and report anything that
    # is neither a plain Lua value nor cjson.null.
    script = """
    local seen, found = {}, {}
    local function walk(v, path)
      local t = type(v)
      if t == 'userdata' and v ~= cjson.null then found[#found + 1] = path end
      if t ~= 'table' or seen[v] then return end
      seen[v] = true
      for k, x in pairs(v) do walk(x, path .. '.' .. tostring(k)) end
      local mt = getmetatable(v)
      if type(mt) == 'table' then walk(mt, path .. '<meta>') end
    end
    walk(_G, '_G')
    walk(getmetatable(''), 'string-meta')
    return found
    """
    assert client.eval(script, 0) == []


def test_bytecode_cannot_be_loaded(client: redis.Redis) -> None:
    script = "return {loadstring(string.dump(function() return 1 end)) == nil}"
    assert client.eval(script, 0) == [1]
    with pytest.raises(redis.ResponseError, match="unexpected symbol"):
        client.eval("\x1bLua\x51\x00", 0)


def test_state_does_not_leak_between_scripts(client: redis.Redis) -> None:
    with pytest.raises(redis.ResponseError, match="readonly table"):
        client.eval("string.upper = function() return 'hijacked' end", 0)
    with pytest.raises(redis.ResponseError, match="readonly table"):
        client.eval("getmetatable('').__index = {upper = function() return 'x' end}", 0)
    assert client.eval("return ('a'):upper()", 0) == b"A"
    assert client.eval("return string.upper('b')", 0) == b"B"


@pytest.fixture
def small_memory_server() -> Iterator[ServerProcess]:
    srv = start_resplite("--lua-max-memory", "8mb")
    yield srv
    srv.stop()


def test_a_script_past_lua_max_memory_fails_and_the_server_goes_on(
    small_memory_server: ServerProcess,
) -> None:
    r = redis.Redis(host=small_memory_server.host, port=small_memory_server.port)
    with pytest.raises(redis.ResponseError, match=r"not enough memory.*lua-max-memory"):
        r.eval("local t = {} for i = 1, 1e8 do t[i] = 'x' .. i end return #t", 0)
    with pytest.raises(redis.ResponseError, match="not enough memory"):
        r.eval("return #string.rep('x', 64 * 1024 * 1024)", 0)
    assert r.eval("return 'still here'", 0) == b"still here"
    assert r.eval("local ok, e = pcall(string.rep, 'x', 64 * 1024 * 1024) return e", 0) \
        == b"not enough memory"
    assert r.config_set("lua-max-memory", "512mb")
    assert r.eval("return #string.rep('x', 32 * 1024 * 1024)", 0) == 32 * 1024 * 1024
    r.close()


@pytest.fixture
def busy_server() -> Iterator[ServerProcess]:
    srv = start_resplite("--busy-reply-threshold", "100")
    yield srv
    srv.stop()


def _wait_busy(conn: RawClient) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if conn.call("PING").startswith(b"-BUSY"):
            return
        time.sleep(0.05)
    raise AssertionError("the server never reported BUSY")


def test_new_connections_are_served_while_a_script_runs(busy_server: ServerProcess) -> None:
    runner = RawClient(busy_server.host, busy_server.port, timeout=30)
    watcher = RawClient(busy_server.host, busy_server.port, timeout=30)
    runner.send("EVAL", "while true do end", 0)
    _wait_busy(watcher)
    # Connections accepted while the script runs get answers at once, and keep working
    # after it ends.
    late = [RawClient(busy_server.host, busy_server.port, timeout=30) for _ in range(3)]
    for conn in late:
        assert conn.call("PING").startswith(b"-BUSY")
        assert conn.call("FUNCTION", "STATS").startswith(b"-BUSY")
    assert late[0].call("SCRIPT", "KILL") == b"+OK\r\n"
    assert runner.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
    for conn in [runner, watcher, *late]:
        assert conn.call("SET", "k", "v") == b"+OK\r\n"
        conn.close()


@pytest.mark.parametrize("uvloop", ["yes", "no"], ids=["uvloop", "asyncio"])
def test_connections_accepted_as_a_script_starts_are_served(uvloop: str) -> None:
    # The server, stopped meanwhile, sees the new connections and the script in one poll:
    # it accepts them first, then runs the script. On either event loop the connections are
    # clients before the script goes busy, so each is answered from inside it.
    srv = start_resplite("--busy-reply-threshold", "100", "--uvloop", uvloop)
    try:
        runner = RawClient(srv.host, srv.port, timeout=30)
        last = RawClient(srv.host, srv.port, timeout=30)
        assert runner.call("PING") == last.call("PING") == b"+PONG\r\n"
        with paused(srv):
            fresh = [RawClient(srv.host, srv.port, timeout=30) for _ in range(3)]
            runner.send("EVAL", "while true do end", 0)
        assert fresh[0].call("PING").startswith(b"-BUSY")
        assert fresh[1].call("CLIENT", "ID").startswith(b"-BUSY")
        # One never heard from while the script ran still ends it.
        assert fresh[2].call("SCRIPT", "KILL") == b"+OK\r\n"
        assert runner.read_reply().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
        for conn in (*fresh, runner, last):
            assert conn.call("SET", "k", "v") == b"+OK\r\n"
            conn.close()
    finally:
        srv.stop()


# The same row many times over: made in a moment, but ten million values to write out. Its
# strings are written by the C writer of arrays (where it is built), its tables by Lua.
_HUGE_REPLIES = {
    "strings": ("local row = {} for i = 1, 1000 do row[i] = 'v' .. i end "
                "local t = {} for i = 1, 10000 do t[i] = row end return t"),
    "tables": ("local row = {} for i = 1, 1000 do row[i] = {i} end "
               "local t = {} for i = 1, 10000 do t[i] = row end return t"),
}


@pytest.mark.parametrize("rows", list(_HUGE_REPLIES))
def test_script_kill_stops_the_writing_of_a_huge_reply(busy_server: ServerProcess,
                                                       rows: str) -> None:
    runner = RawClient(busy_server.host, busy_server.port, timeout=30)
    other = RawClient(busy_server.host, busy_server.port, timeout=30)
    # Busy soon: the writing of the strings takes less than a second.
    assert other.call("CONFIG", "SET", "busy-reply-threshold", "10") == b"+OK\r\n"
    runner.send("EVAL", _HUGE_REPLIES[rows], 0)
    # The script's own code ends at once; what goes busy is the writing of its table, and
    # other clients are answered meanwhile.
    _wait_busy(other)
    assert other.call("SCRIPT", "KILL") == b"+OK\r\n"
    # Redis's error in place of the data (without a script line: no line of the script
    # was running).
    assert runner.read_reply() == b"-ERR Script killed by user with SCRIPT KILL...\r\n"
    assert runner.call("EVAL", "return {1, 'a', {2}}", 0) == b"*3\r\n:1\r\n$1\r\na\r\n*1\r\n:2\r\n"
    assert other.call("SCRIPT", "KILL").startswith(b"-NOTBUSY")
    runner.close()
    other.close()


@pytest.mark.parametrize("script", [
    "redis.call('set', 'k', 'v') while true do end",
    # Lua hooks every coroutine separately: one the script made must be stopped too.
    "redis.call('set', 'k', 'v') coroutine.wrap(function() while true do end end)()",
    "redis.call('set', 'k', 'v') "
    "coroutine.wrap(function() while true do pcall(function() while true do end end) end end)()",
], ids=["main", "coroutine", "coroutine-pcall"])
def test_shutdown_nosave_ends_a_script_that_wrote(busy_server: ServerProcess,
                                                  script: str) -> None:
    runner = RawClient(busy_server.host, busy_server.port, timeout=30)
    other = RawClient(busy_server.host, busy_server.port, timeout=30)
    runner.send("EVAL", script, 0)
    _wait_busy(other)
    assert other.call("SCRIPT", "KILL").startswith(b"-UNKILLABLE")
    assert other.call("SHUTDOWN").startswith(b"-BUSY")
    other.send("SHUTDOWN", "NOSAVE")
    assert busy_server.proc.wait(30) == 0
    with contextlib.suppress(OSError):
        runner.close()
        other.close()


@pytest.mark.parametrize("script", [
    "local t = {} for i = 1, 100000 do t = {t} end return t",
    "local t = {} t[1] = t return t",
    "local t = {} t.map = t return t",
])
def test_a_deep_reply_table_is_an_error_in_place_not_a_failure(
    caplog: pytest.LogCaptureFixture, script: str
) -> None:
    # In this process, so that anything the server logs (a traceback) reaches caplog.
    with resplite.serve() as handle:
        conn = RawClient(handle.host, handle.port, timeout=30)
        reply = conn.call("EVAL", script, 0)
        assert reply.endswith(b"-ERR reached lua stack limit\r\n")
        assert b"internal error" not in reply
        assert conn.call("EVAL", "return {1, {2}}", 0) == b"*2\r\n:1\r\n*1\r\n:2\r\n"
        conn.close()
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
