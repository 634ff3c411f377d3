"""Every write command's logged form replays to the same data set.

Each case runs a write (after a common data set, on a frozen clock) on a server with the
append-only file on, then a fresh server loads that file with its clock 7001 ms later and
both data sets are compared: every key's value read back by type, its absolute expiry
(PEXPIRETIME) and, for hashes, each field's; for strings the DUMP payload too; for
streams the entries and each group's position, consumers and pending entries (delivery
times and counts). A write whose logged form kept a relative expiry, a random choice or a
clock-dependent decision would replay to something else.

The walk covers every command of the table flagged ``write`` (a new one fails
:func:`test_every_write_command_has_a_case` until it has a case), each case alone and
inside MULTI/EXEC; scripts' writes, blocking commands served after they waited and a
Hypothesis property over random sequences of writes with relative expiries complete it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resplite.commands import command_table
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.scheduler import ManualScheduler
from resplite.engine.state import ServerState
from resplite.engine.table import CommandSpec
from resplite.protocol.encoder import encode
from resplite.protocol.replies import QUEUED, ErrorReply
from resplite.store.stream import Stream

T0 = 1_800_000_000_000  # the run's clock (ms)
LATER = 7_001  # how much later the replay runs
T0_S = T0 // 1000

LIBRARY = (b"#!lua name=lib\nredis.register_function('f', function(keys, args) "
           b"return redis.call('set', keys[1], args[1], 'EX', 100) end)")
LIBRARY2 = (b"#!lua name=lib2\nredis.register_function('g', function(keys, args) "
            b"return redis.call('expire', keys[1], 50) end)")

# The data set every case starts from (at T0).
BASE: list[list[bytes]] = [c.encode().split() for c in (
    "SET str hello",
    "SET ttl v PX 500000",
    "RPUSH list a b c d e",
    "SADD set m1 m2 m3 m4 m5 m6",
    "ZADD zset 1 a 2 b 3 c 4 d",
    "HSET hash f1 1 f2 2 f3 3.5",
    "HPEXPIRE hash 400000 FIELDS 1 f1",
    "XADD stream 1-1 a 1",
    "XADD stream 2-1 b 2",
    "XADD stream 3-1 c 3",
    "XADD stream 4-1 d 4",
    "XGROUP CREATE stream g 0",
    "XREADGROUP GROUP g alice COUNT 2 STREAMS stream >",
    "PFADD hll a b c",
    "SET counter 10",
    "SET float 1.5",
    "GEOADD geo 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
)] + [[b"FUNCTION", b"LOAD", LIBRARY]]


def _c(*lines: str) -> list[list[bytes]]:
    return [line.encode().split() for line in lines]


# For each write command, cases of one or more commands (the last is the one tested; those
# before prepare it). "$DUMP" stands for DUMP str, "$FDUMP" for FUNCTION DUMP, "$T+n" for
# T0's seconds plus n, "$TMS+n" for T0 plus n ms.
CASES: dict[str, list[list[list[bytes]]]] = {
    "append": [_c("APPEND str x"), _c("APPEND new x")],
    "ardel": [_c("ARSET arr 0 a b c", "ARDEL arr 1 2")],
    "ardelrange": [_c("ARMSET arr 0 a 5 b 9000 c", "ARDELRANGE arr 1 5 8000 9000")],
    "arinsert": [_c("ARSET arr 3 a", "ARINSERT arr b c")],
    "armset": [_c("ARMSET arr 0 a 100 b 8388608 c")],
    "arring": [_c("ARRING arr 3 a b c d e")],
    "arseek": [_c("ARSET arr 0 a", "ARSEEK arr 10", "ARINSERT arr z")],
    "arset": [_c("ARSET arr 2 a b c"), _c("ARSET arr 0 a", "ARSET arr 0 b")],
    "bitfield": [_c("BITFIELD bf SET u8 0 200")],
    "bitop": [_c("BITOP OR dest str counter")],
    "blmove": [_c("BLMOVE list list2 LEFT RIGHT 0"), _c("BLMOVE nolist list2 LEFT RIGHT 1")],
    "blmovem": [_c("BLMOVEM list list2 LEFT RIGHT 0 COUNT 2 BULK")],
    "blmpop": [_c("BLMPOP 0 2 nolist list LEFT COUNT 2")],
    "blpop": [_c("BLPOP nolist list 0")],
    "brpop": [_c("BRPOP list 0")],
    "brpoplpush": [_c("BRPOPLPUSH list list2 0")],
    "bzmpop": [_c("BZMPOP 0 1 zset MAX COUNT 2")],
    "bzpopmax": [_c("BZPOPMAX nozset zset 0")],
    "bzpopmin": [_c("BZPOPMIN zset 0")],
    "copy": [_c("COPY ttl copied"), _c("COPY hash h2 DB 1")],
    "decr": [_c("DECR counter")],
    "decrby": [_c("DECRBY counter 3")],
    "del": [_c("DEL str ttl nokey")],
    "delex": [_c("DELEX str IFEQ hello"), _c("DELEX str IFEQ nope")],
    "expire": [_c("EXPIRE str 100"), _c("EXPIRE ttl 100 GT"), _c("EXPIRE ttl 1000 GT"),
               _c("EXPIRE str -1"), _c("EXPIRE nokey 100")],
    "expireat": [_c("EXPIREAT str $T+1000"), _c("EXPIREAT ttl 1")],
    "flushall": [_c("FLUSHALL")],
    "flushdb": [_c("FLUSHDB")],
    "function|delete": [_c("FUNCTION DELETE lib")],
    "function|flush": [_c("FUNCTION FLUSH")],
    "function|load": [[[b"FUNCTION", b"LOAD", LIBRARY2]]],
    "function|restore": [_c("FUNCTION RESTORE $FDUMP REPLACE")],
    "geoadd": [_c("GEOADD geo 2.35 48.85 Paris")],
    "georadius": [_c("GEORADIUS geo 15 37 200 km STORE gstore")],
    "georadiusbymember": [_c("GEORADIUSBYMEMBER geo Palermo 300 km STOREDIST gdist")],
    "geosearchstore": [_c("GEOSEARCHSTORE gs geo FROMLONLAT 15 37 BYRADIUS 200 km")],
    "getdel": [_c("GETDEL str"), _c("GETDEL nokey")],
    "getex": [_c("GETEX ttl EX 100"), _c("GETEX str PX 200000"), _c("GETEX ttl PERSIST"),
              _c("GETEX str EXAT $T+500"), _c("GETEX str PXAT 1"), _c("GETEX ttl"),
              _c("GETEX str PERSIST")],
    "getset": [_c("GETSET ttl new")],
    "hdel": [_c("HDEL hash f2")],
    "hexpire": [_c("HEXPIRE hash 100 FIELDS 2 f1 f2"), _c("HEXPIRE hash 100 GT FIELDS 1 f2"),
                _c("HEXPIRE hash 0 FIELDS 2 f2 nofield"), _c("HEXPIRE hash 100 NX FIELDS 1 f1")],
    "hexpireat": [_c("HEXPIREAT hash $T+300 FIELDS 1 f3")],
    "hgetdel": [_c("HGETDEL hash FIELDS 1 f1")],
    "hgetex": [_c("HGETEX hash EX 100 FIELDS 2 f1 f2"), _c("HGETEX hash PERSIST FIELDS 1 f1"),
               _c("HGETEX hash PXAT 1 FIELDS 1 f2"), _c("HGETEX hash FIELDS 1 f1")],
    "himport|set": [_c("HIMPORT PREPARE fs a b", "HIMPORT SET hi fs 1 2")],
    "hincrby": [_c("HINCRBY hash f2 5")],
    "hincrbyfloat": [_c("HINCRBYFLOAT hash f1 0.1"), _c("HINCRBYFLOAT hash f3 2")],
    "hmset": [_c("HMSET hash f1 x f9 y")],
    "hpersist": [_c("HPERSIST hash FIELDS 1 f1")],
    "hpexpire": [_c("HPEXPIRE hash 100000 FIELDS 1 f2")],
    "hpexpireat": [_c("HPEXPIREAT hash $TMS+300000 FIELDS 1 f2")],
    "hset": [_c("HSET hash f1 x")],
    "hsetex": [_c("HSETEX hash EX 100 FIELDS 1 f9 v"),
               _c("HSETEX hs2 PX 100000 FNX FIELDS 2 a 1 b 2"),
               _c("HSETEX hash KEEPTTL FIELDS 1 f1 new"),
               _c("HSETEX hash FXX EXAT $T+200 FIELDS 1 nofield v"),
               _c("HSETEX hash EXAT $T+200 FIELDS 1 f2 v")],
    "hsetnx": [_c("HSETNX hash f7 v")],
    "incr": [_c("INCR counter")],
    "incrby": [_c("INCRBY counter 7")],
    "incrbyfloat": [_c("INCRBYFLOAT float 0.1"), _c("INCRBYFLOAT ttl2 3")],
    "increx": [_c("INCREX counter BYINT 2 EX 100"), _c("INCREX f BYFLOAT 0.5 PX 100000"),
               _c("INCREX counter EXAT 1")],
    "linsert": [_c("LINSERT list BEFORE c x")],
    "lmove": [_c("LMOVE list list2 RIGHT LEFT")],
    "lmovem": [_c("LMOVEM list list2 LEFT LEFT COUNT 3 OBO")],
    "lmpop": [_c("LMPOP 1 list RIGHT COUNT 2")],
    "lpop": [_c("LPOP list 2")],
    "lpush": [_c("LPUSH list z")],
    "lpushx": [_c("LPUSHX list z")],
    "lrem": [_c("LREM list 0 a")],
    "lset": [_c("LSET list 0 q")],
    "ltrim": [_c("LTRIM list 1 2")],
    "move": [_c("MOVE ttl 1")],
    "mset": [_c("MSET a 1 b 2")],
    "msetex": [_c("MSETEX 2 a 1 b 2 EX 100"), _c("MSETEX 1 str 1 XX PX 100000"),
               _c("MSETEX 1 a 1 PXAT $TMS+90000"), _c("MSETEX 1 str 1 NX EX 10")],
    "msetnx": [_c("MSETNX a 1 b 2")],
    "persist": [_c("PERSIST ttl")],
    "pexpire": [_c("PEXPIRE str 100000"), _c("PEXPIRE ttl 100000 LT")],
    "pexpireat": [_c("PEXPIREAT str $TMS+100000"), _c("PEXPIREAT str 1")],
    "pfadd": [_c("PFADD hll d e")],
    "pfdebug": [_c("PFDEBUG TODENSE hll")],
    "pfmerge": [_c("PFMERGE hll2 hll")],
    "psetex": [_c("PSETEX str 100000 v")],
    "rename": [_c("RENAME ttl renamed")],
    "renamenx": [_c("RENAMENX ttl renamed")],
    "restore": [_c("RESTORE r 100000 $DUMP"), _c("RESTORE r 0 $DUMP"),
                _c("RESTORE str 100000 $DUMP REPLACE ABSTTL"),
                _c("RESTORE r $TMS+500000 $DUMP ABSTTL IDLETIME 5")],
    "restore-asking": [_c("RESTORE-ASKING r 100000 $DUMP")],
    "rpop": [_c("RPOP list")],
    "rpoplpush": [_c("RPOPLPUSH list list")],
    "rpush": [_c("RPUSH list y")],
    "rpushx": [_c("RPUSHX nolist y")],
    "sadd": [_c("SADD set m1 m9")],
    "sdiffstore": [_c("SDIFFSTORE sd set nokey")],
    "set": [_c("SET str v EX 100"), _c("SET str v PX 100000 NX"), _c("SET str v EXAT $T+100"),
            _c("SET new v PXAT $TMS+100000"), _c("SET ttl v KEEPTTL"),
            _c("SET ttl v GET EX 100"), _c("SET str x IFEQ hello EX 100"),
            _c("SET str x IFNE hello PX 5000"), _c("SET ttl v XX")],
    "setbit": [_c("SETBIT bits 7 1")],
    "setex": [_c("SETEX str 100 v")],
    "setnx": [_c("SETNX str v"), _c("SETNX nx v")],
    "setrange": [_c("SETRANGE ttl 3 xyz")],
    "sinterstore": [_c("SINTERSTORE si set set")],
    "smove": [_c("SMOVE set set2 m1")],
    "sort": [_c("SORT list ALPHA STORE sorted")],
    "spop": [_c("SPOP set"), _c("SPOP set 3"), _c("SPOP set 10"), _c("SPOP noset")],
    "srem": [_c("SREM set m2")],
    "sunionstore": [_c("SUNIONSTORE su set")],
    "swapdb": [_c("SWAPDB 0 1")],
    "unlink": [_c("UNLINK hash")],
    "xack": [_c("XACK stream g 1-1")],
    "xackdel": [_c("XACKDEL stream g IDS 1 1-1")],
    "xadd": [_c("XADD stream * f v"), _c("XADD stream MAXLEN ~ 2 * f v"),
             _c("XADD stream 9-* f v"), _c("XADD s2 IDMPAUTO p1 * f v"),
             _c("XADD stream IDMP p1 i1 * f v", "XADD stream IDMP p1 i1 * f again"),
             _c("XADD stream MINID ~ 3 LIMIT 10 * f v"), _c("XADD stream MAXLEN = 3 * f v"),
             _c("XADD stream 5-5 f v")],
    "xautoclaim": [_c("XAUTOCLAIM stream g bob 500 0 COUNT 10"),
                   _c("XDEL stream 1-1", "XAUTOCLAIM stream g bob 0 0 JUSTID")],
    "xcfgset": [_c("XCFGSET stream IDMP-DURATION 100"),
                _c("XADD stream IDMP p1 i1 * f v", "XCFGSET stream IDMP-MAXSIZE 5")],
    "xidmprecord": [_c("XADD stream 1800000001000-5 f v",
                       "XIDMPRECORD stream p1 i1 1800000001000-5")],
    "xclaim": [_c("XCLAIM stream g bob 500 1-1"), _c("XCLAIM stream g bob 0 3-1 FORCE"),
               _c("XCLAIM stream g bob 0 1-1 IDLE 300 RETRYCOUNT 5 LASTID 9-9"),
               _c("XCLAIM stream g bob 0 2-1 TIME $TMS-100 JUSTID"),
               _c("XCLAIM stream g bob 999999 1-1 LASTID 3-1")],
    "xdel": [_c("XDEL stream 2-1")],
    "xdelex": [_c("XDELEX stream IDS 1 4-1")],
    "xgroup|create": [_c("XGROUP CREATE stream g2 $"), _c("XGROUP CREATE s3 g 0 MKSTREAM")],
    "xgroup|createconsumer": [_c("XGROUP CREATECONSUMER stream g bob")],
    "xgroup|delconsumer": [_c("XGROUP DELCONSUMER stream g alice")],
    "xgroup|destroy": [_c("XGROUP DESTROY stream g")],
    "xgroup|setid": [_c("XGROUP SETID stream g 3-1")],
    "xnack": [_c("XNACK stream g FAIL IDS 1 1-1")],
    "xreadgroup": [_c("XREADGROUP GROUP g bob COUNT 1 STREAMS stream >"),
                   _c("XREADGROUP GROUP g carol NOACK STREAMS stream >"),
                   _c("XREADGROUP GROUP g dave CLAIM 500 STREAMS stream >"),
                   _c("XREADGROUP GROUP g erin BLOCK 10 STREAMS stream >")],
    "xsetid": [_c("XSETID stream 99-0")],
    "xtrim": [_c("XTRIM stream MAXLEN ~ 1"), _c("XTRIM stream MINID 3-1"),
              _c("XTRIM stream MINID ~ 9-0 LIMIT 5")],
    "zadd": [_c("ZADD zset 5 e")],
    "zdiffstore": [_c("ZDIFFSTORE zd 1 zset")],
    "zincrby": [_c("ZINCRBY zset 2.5 a")],
    "zinterstore": [_c("ZINTERSTORE zi 1 zset")],
    "zmpop": [_c("ZMPOP 1 zset MIN COUNT 2")],
    "zpopmax": [_c("ZPOPMAX zset")],
    "zpopmin": [_c("ZPOPMIN zset 2")],
    "zrangestore": [_c("ZRANGESTORE zr zset 0 1")],
    "zrem": [_c("ZREM zset a")],
    "zremrangebylex": [_c("ZADD zl 0 a 0 b 0 c", "ZREMRANGEBYLEX zl [a [b")],
    "zremrangebyrank": [_c("ZREMRANGEBYRANK zset 0 0")],
    "zremrangebyscore": [_c("ZREMRANGEBYSCORE zset 2 3")],
    "zunionstore": [_c("ZUNIONSTORE zu 1 zset")],
}

# Not compared: a history read (XREADGROUP with an id, not ">") re-delivers the consumer's
# pending entries, raising their delivery counts and times, and changes nothing as Redis
# counts changes, so that, as in Redis, it is not logged and a replay does not keep them.

# Write commands left out, and why.
SKIPPED = {
    "migrate": "needs a second server; its logged DEL is tested in tests/compat/test_migrate.py",
}

# Scripts: their writes are logged (never the EVAL), each in the form its command records.
SCRIPT_CASES: list[list[list[bytes]]] = [
    [[b"EVAL", b"redis.call('set', KEYS[1], 'v', 'EX', 100) "
      b"redis.call('expire', KEYS[2], 50) return redis.call('spop', KEYS[3])",
      b"3", b"str", b"ttl", b"set"]],
    [[b"EVAL", b"return redis.call('xadd', KEYS[1], '*', 'f', 'v')", b"1", b"stream"]],
    [[b"EVAL", b"redis.call('getex', KEYS[1], 'PX', 99999) "
      b"return redis.call('hexpire', KEYS[2], 70, 'FIELDS', 1, 'f2')", b"2", b"str", b"hash"]],
    _c("FCALL f 1 fkey fvalue"),
]


@functools.cache
def _table() -> dict[bytes, CommandSpec]:
    return command_table()


def _write_commands() -> set[str]:
    names: set[str] = set()
    for spec in _table().values():
        for each in (spec, *spec.subcommands.values()):
            if each.is_write and not each.subcommands:
                names.add(each.fullname)
    return names


class Server:
    """One engine with the append-only file on, on a frozen clock, and a client."""

    def __init__(self, folder: Path, at_ms: int) -> None:
        clock = Clock()
        clock.set(at_ms)
        clock.freeze()
        config = Config()
        config.set("dir", str(folder), at_startup=True)
        config.set("appendonly", "yes", at_startup=True)
        config.set("enable-debug-command", "yes", at_startup=True)
        self.state = ServerState(config, clock, table=_table(), scheduler=ManualScheduler())
        self.state.persistence.load_at_start()
        self.state.start_aof()
        self.client = Client(self.state, 1, None)

    def run(self, argv: list[bytes]) -> Any:
        return self.state.dispatcher.execute(self.client, argv)

    def snapshot(self) -> dict[Any, Any]:
        """The data set: each key's value read back by type and its absolute expiry, and
        the function libraries."""
        out: dict[Any, Any] = {"functions": encode(self.run(
            [b"FUNCTION", b"LIST", b"WITHCODE"]))}
        for index in (0, 1):
            self.run([b"SELECT", b"%d" % index])
            for key in sorted(self.state.keyspace[index].data):
                found = self._key(key)
                if found is not None:  # (None: it had expired)
                    out[(index, key)] = found
        self.run([b"SELECT", b"0"])
        return out

    def _key(self, key: bytes) -> Any:
        run = self.run
        kind = run([b"TYPE", key])
        if kind == "none":
            return None
        when = run([b"PEXPIRETIME", key])
        if kind == "string":
            value: Any = (run([b"GET", key]), run([b"DUMP", key]))
        elif kind == "list":
            value = run([b"LRANGE", key, b"0", b"-1"])
        elif kind == "set":
            value = sorted(run([b"SMEMBERS", key]))
        elif kind == "zset":
            value = encode(run([b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"]))
        elif kind == "hash":
            h = self.state.keyspace[self.client.db_index].data[key]
            value = sorted((f, v, h.ttl_of(f)) for f, v in h.fields.items())
        elif kind == "stream":
            value = self._stream(key)
        elif kind == "array":
            value = run([b"DUMP", key])  # every element, the layout and the insert cursor
        else:
            raise AssertionError(f"no snapshot for {kind!r}")
        return kind, when, value

    def _stream(self, key: bytes) -> Any:
        s = self.state.keyspace[self.client.db_index].data[key]
        assert isinstance(s, Stream)
        groups = {}
        for name, group in s.groups.items():
            pel = {sid: (None if nack.consumer is None else nack.consumer.name,
                         nack.delivery_time, nack.delivery_count)
                   for sid, nack in group.pel.items()}
            groups[name] = (group.last_id, group.entries_read, sorted(group.consumers), pel)
        entries = encode(self.run([b"XRANGE", key, b"-", b"+"]))
        state = s.idmp
        idmp = None if state is None else (
            state.duration, state.maxsize, {pid: dict(k) for pid, k in state.producers.items()},
            state.iids_added, state.iids_duplicates)
        return (entries, s.length, s.last_id, s.first_id, s.max_deleted_id, s.entries_added,
                groups, idmp)


def _resolve(argv: list[bytes], server: Server) -> list[bytes]:
    out: list[bytes] = []
    for arg in argv:
        if arg == b"$DUMP":
            arg = server.run([b"DUMP", b"str"])
        elif arg == b"$FDUMP":
            arg = server.run([b"FUNCTION", b"DUMP"])
        elif arg.startswith(b"$TMS"):
            arg = b"%d" % (T0 + int(arg[4:]))
        elif arg.startswith(b"$T"):
            arg = b"%d" % (T0_S + int(arg[2:]))
        out.append(arg)
    return out


def _replays_alike(folder: Path, commands: list[list[bytes]], in_multi: bool) -> None:
    first = Server(folder, T0)
    for argv in BASE:
        reply = first.run(argv)
        assert not isinstance(reply, ErrorReply), (argv, reply)
    first.state.clock.advance(1000)  # pending entries are 1 s old when the case runs
    resolved = [_resolve(argv, first) for argv in commands]
    if in_multi:
        assert first.run([b"MULTI"]) == "OK"
        for argv in resolved:
            assert first.run(argv) is QUEUED, argv
        replies = first.run([b"EXEC"])
        assert isinstance(replies, list), replies
    else:
        replies = [first.run(argv) for argv in resolved]
    for argv, reply in zip(resolved, replies, strict=True):
        assert not isinstance(reply, ErrorReply), (argv, reply)
    expected = first.snapshot()
    first.state.aof.before_reply()
    second = Server(folder, T0 + 1000 + LATER)
    assert second.snapshot() == expected


def _case_ids() -> list[tuple[str, int]]:
    return [(name, i) for name, cases in sorted(CASES.items()) for i in range(len(cases))]


def test_every_write_command_has_a_case() -> None:
    assert _write_commands() - set(SKIPPED) == set(CASES)


@pytest.mark.parametrize("in_multi", [False, True], ids=["alone", "multi"])
@pytest.mark.parametrize(("name", "index"), _case_ids(),
                         ids=[f"{n}-{i}" for n, i in _case_ids()])
def test_a_write_replays_to_the_same_data_set(tmp_path: Path, name: str, index: int,
                                              in_multi: bool) -> None:
    _replays_alike(tmp_path, CASES[name][index], in_multi)


@pytest.mark.parametrize("in_multi", [False, True], ids=["alone", "multi"])
@pytest.mark.parametrize("index", range(len(SCRIPT_CASES)))
def test_script_writes_replay_to_the_same_data_set(tmp_path: Path, index: int,
                                                   in_multi: bool) -> None:
    _replays_alike(tmp_path, SCRIPT_CASES[index], in_multi)


# -- blocking commands served after they waited -------------------------------------------------

BLOCKED: list[tuple[list[bytes], list[bytes]]] = [
    (b"BLPOP q 0".split(), b"RPUSH q x y".split()),
    (b"BRPOPLPUSH q d 0".split(), b"RPUSH q x".split()),
    (b"BLMOVE q d LEFT RIGHT 0".split(), b"RPUSH q x".split()),
    (b"BLMPOP 0 1 q RIGHT COUNT 5".split(), b"RPUSH q x y".split()),
    (b"BLMOVEM q d LEFT RIGHT 0 EXACTLY 2 BULK".split(), b"RPUSH q x y z".split()),
    (b"BZPOPMIN zq 0".split(), b"ZADD zq 1 a 2 b".split()),
    (b"BZMPOP 0 1 zq MAX COUNT 2".split(), b"ZADD zq 1 a 2 b 3 c".split()),
    (b"XREADGROUP GROUP g frank BLOCK 0 STREAMS stream >".split(),
     b"XADD stream * late 1".split()),
]


@pytest.mark.parametrize(("blocking", "serving"), BLOCKED,
                         ids=[b[0][0].decode() for b in BLOCKED])
def test_a_blocked_write_served_later_replays_to_the_same_data_set(
        tmp_path: Path, blocking: list[bytes], serving: list[bytes]) -> None:
    first = Server(tmp_path, T0)
    for argv in BASE:
        first.run(argv)
    first.run(b"XREADGROUP GROUP g frank STREAMS stream >".split())  # nothing new after it
    first.state.clock.advance(1000)
    request = first.run(blocking)
    first.state.blocking.block(first.client, request)
    first.state.clock.advance(250)
    other = Client(first.state, 2, None)
    first.state.dispatcher.execute(other, serving)
    first.state.blocking.serve_ready()
    assert first.client.blocked is None
    expected = first.snapshot()
    first.state.aof.before_reply()
    assert Server(tmp_path, T0 + LATER * 3).snapshot() == expected


# -- a property: random sequences of writes with relative expiries ------------------------------

_KEYS = st.sampled_from([b"k1", b"k2", b"k3"])
_TTL = st.integers(min_value=20, max_value=10_000)  # seconds, past any replay delay
_VALUE = st.sampled_from([b"1", b"2.5", b"x"])

_WRITE: st.SearchStrategy[list[bytes]] = st.one_of(
    st.builds(lambda k, v, t: [b"SET", k, v, b"EX", b"%d" % t], _KEYS, _VALUE, _TTL),
    st.builds(lambda k, v, t: [b"SET", k, v, b"PX", b"%d" % (t * 1000), b"GET"],
              _KEYS, _VALUE, _TTL),
    st.builds(lambda k, v, t: [b"SETEX", k, b"%d" % t, v], _KEYS, _VALUE, _TTL),
    st.builds(lambda k, t: [b"PSETEX", k, b"%d" % (t * 1000), b"v"], _KEYS, _TTL),
    st.builds(lambda k, t, o: [b"EXPIRE", k, b"%d" % t, *o], _KEYS, _TTL,
              st.sampled_from([[], [b"NX"], [b"XX"], [b"GT"], [b"LT"]])),
    st.builds(lambda k, t: [b"PEXPIRE", k, b"%d" % (t * 1000)], _KEYS, _TTL),
    st.builds(lambda k, t: [b"GETEX", k, b"EX", b"%d" % t], _KEYS, _TTL),
    st.builds(lambda k: [b"GETEX", k, b"PERSIST"], _KEYS),
    st.builds(lambda k: [b"PERSIST", k], _KEYS),
    st.builds(lambda k: [b"INCRBYFLOAT", k, b"0.1"], _KEYS),
    st.builds(lambda k, t: [b"INCREX", k, b"BYFLOAT", b"1.5", b"EX", b"%d" % t], _KEYS, _TTL),
    st.builds(lambda k, t: [b"MSETEX", b"2", k, b"a", b"k4", b"b", b"PX", b"%d" % (t * 1000)],
              _KEYS, _TTL),
    st.builds(lambda f, t: [b"HSETEX", b"h", b"EX", b"%d" % t, b"FIELDS", b"1", f, b"v"],
              _KEYS, _TTL),
    st.builds(lambda f, t: [b"HEXPIRE", b"h", b"%d" % t, b"FIELDS", b"1", f], _KEYS, _TTL),
    st.builds(lambda f, t: [b"HGETEX", b"h", b"PX", b"%d" % (t * 1000), b"FIELDS", b"1", f],
              _KEYS, _TTL),
    st.builds(lambda f: [b"HINCRBYFLOAT", b"h", f, b"0.5"], _KEYS),
    st.builds(lambda m: [b"SADD", b"s", m, b"m"], _VALUE),
    st.builds(lambda n: [b"SPOP", b"s", b"%d" % n], st.integers(min_value=1, max_value=3)),
    st.builds(lambda: [b"XADD", b"x", b"MAXLEN", b"~", b"3", b"*", b"f", b"v"]),
    st.builds(lambda: [b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"1", b"STREAMS", b"x",
                       b">"]),
    st.builds(lambda: [b"XAUTOCLAIM", b"x", b"g", b"d", b"10", b"0"]),
)
_STEP = st.one_of(
    _WRITE.map(lambda argv: ("run", argv)),
    st.integers(min_value=1, max_value=3000).map(lambda ms: ("advance", ms)),
    st.lists(_WRITE, min_size=1, max_size=3).map(lambda cmds: ("multi", cmds)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_STEP, min_size=1, max_size=15))
def test_random_writes_replay_to_the_same_data_set(
        tmp_path_factory: pytest.TempPathFactory,
        steps: list[tuple[str, Any]]) -> None:
    folder = tmp_path_factory.mktemp("aof")
    first = Server(folder, T0)
    first.run(b"XGROUP CREATE x g 0 MKSTREAM".split())
    elapsed = 0
    for kind, what in steps:
        if kind == "advance":
            first.state.clock.advance(what)
            elapsed += what
        elif kind == "run":
            first.run(what)
        else:
            first.run([b"MULTI"])
            for argv in what:
                first.run(argv)
            first.run([b"EXEC"])
    expected = first.snapshot()
    first.state.aof.before_reply()
    assert Server(folder, T0 + elapsed + LATER).snapshot() == expected
