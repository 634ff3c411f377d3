"""Memory accounting follows the data: the running totals agree with a walk of the keyspace.

Random command sequences over every value type run through the dispatcher (sans-IO, frozen
clock); after each command every database's ``used`` must equal the sum a full walk
computes, each container's running figures must equal a recount of its contents, and the
keyspace's meter must be the sum of its databases. A failure names the command that left
the totals wrong: a command that changes a value without signalling it, or a store method
that forgets its running sum.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.commands import command_table
from resplite.engine.client import Client
from resplite.engine.clock import Clock
from resplite.engine.config import Config
from resplite.engine.state import STARTUP_MEMORY, ServerState
from resplite.protocol.replies import OK
from resplite.store import keysizes
from resplite.store.hash import Hash
from resplite.store.keyspace import EXPIRE_COST, KEY_COST, Database, Keyspace, value_size
from resplite.store.set import Set
from resplite.store.sizes import BYTES_HEADER, FLAT_STRINGS
from resplite.store.stream import Stream, packed_size
from resplite.store.zset import ZSet


def recount(value: Any) -> None:
    """Check a container's running sums against its contents."""
    cls = value.__class__
    if cls is Hash:
        assert value.strbytes == sum(len(f) + len(v) for f, v in value.fields.items())
    elif cls is Set:
        expected = 0 if value.ints is not None else sum(map(len, value))
        assert value.strbytes == expected
    elif cls is ZSet:
        assert value.strbytes == sum(map(len, value.scores))
    elif cls is Stream:
        assert value.nbytes == sum(node.memory() for node in value.nodes[:-1])
        assert value.packed_bytes == sum(packed_size(node) for node in value.nodes
                                         if node.packed is not None)


def walk(db: Database) -> int:
    """``used`` as a walk of the database computes it; checks the per-key records too."""
    total = 0
    for key, value in db.data.items():
        total += KEY_COST + len(key)
        if value.__class__ in FLAT_STRINGS:
            total += BYTES_HEADER + len(value)
            assert key not in db.charged
        else:
            recount(value)
            assert db.charged[key] == value.memory_usage() == value_size(value), key
            total += db.charged[key]
        if key in db.expires:
            total += EXPIRE_COST
    assert set(db.charged) <= set(db.data)
    return total


def histogram(db: Database) -> tuple[list[int], dict[bytes, int]]:
    """The key-size histogram (INFO keysizes) and container slots a walk computes."""
    sizes = keysizes.empty()
    slots: dict[bytes, int] = {}
    for key, value in db.data.items():
        if value.__class__ in FLAT_STRINGS:
            sizes[len(value).bit_length()] += 1
            continue
        slot = keysizes.slot_of(value)
        if slot >= 0:
            sizes[slot] += 1
            slots[key] = slot
    return sizes, slots


def check(keyspace: Keyspace, after: object = None) -> None:
    total = keyspace.meter.used()  # settles every database
    for db in keyspace.dbs:
        assert db.used == walk(db), (after, db.index)
        assert (db.sizes, db.slots) == histogram(db), (after, db.index)
    assert total == sum(db.used for db in keyspace.dbs), after
    assert all(db.metered for db in keyspace.dbs if db.used), after


KEYS = [b"a", b"b", b"{x}c"]
MEMBERS = [b"1", b"2", b"300000", b"m", b"member-" + b"x" * 70]

key = st.sampled_from(KEYS)
member = st.sampled_from(MEMBERS)
small = st.integers(1, 3).map(lambda n: str(n).encode())
millis = st.integers(1, 3000).map(lambda n: str(n).encode())

COMMANDS = st.one_of(
    st.tuples(st.just(b"SET"), key, member),
    st.tuples(st.just(b"SET"), key, member, st.just(b"PX"), millis),
    st.tuples(st.just(b"SET"), key, member, st.just(b"KEEPTTL")),
    st.tuples(st.just(b"APPEND"), key, member),
    st.tuples(st.just(b"SETRANGE"), key, small, member),
    st.tuples(st.just(b"SETBIT"), key, st.sampled_from([b"7", b"100", b"900"]), st.just(b"1")),
    st.tuples(st.just(b"INCRBY"), key, small),
    st.tuples(st.just(b"INCRBYFLOAT"), key, st.just(b"1.5")),
    st.tuples(st.just(b"GETDEL"), key),
    st.tuples(st.just(b"GETEX"), key, st.just(b"PERSIST")),
    st.tuples(st.just(b"DEL"), key, key),
    st.tuples(st.just(b"UNLINK"), key),
    st.tuples(st.just(b"PEXPIRE"), key, millis),
    st.tuples(st.just(b"PERSIST"), key),
    st.tuples(st.just(b"RENAME"), key, key),
    st.tuples(st.just(b"MOVE"), key, st.just(b"1")),
    st.tuples(st.just(b"COPY"), key, key, st.just(b"REPLACE")),
    st.tuples(st.just(b"SWAPDB"), st.just(b"0"), st.just(b"1")),
    st.tuples(st.just(b"HSET"), key, member, member),
    st.tuples(st.just(b"HDEL"), key, member),
    st.tuples(st.just(b"HINCRBY"), key, member, small),
    st.tuples(st.just(b"HPEXPIRE"), key, millis, st.just(b"FIELDS"), st.just(b"1"), member),
    st.tuples(st.just(b"HPERSIST"), key, st.just(b"FIELDS"), st.just(b"1"), member),
    st.tuples(st.just(b"HGETDEL"), key, st.just(b"FIELDS"), st.just(b"1"), member),
    st.tuples(st.just(b"SADD"), key, member, member),
    st.tuples(st.just(b"SREM"), key, member),
    st.tuples(st.just(b"SPOP"), key, small),
    st.tuples(st.just(b"SMOVE"), key, key, member),
    st.tuples(st.just(b"SINTERSTORE"), key, key, key),
    st.tuples(st.just(b"SUNIONSTORE"), key, key, key),
    st.tuples(st.just(b"SDIFFSTORE"), key, key, key),
    st.tuples(st.just(b"ZADD"), key, small, member),
    st.tuples(st.just(b"ZINCRBY"), key, small, member),
    st.tuples(st.just(b"ZREM"), key, member),
    st.tuples(st.just(b"ZPOPMIN"), key, small),
    st.tuples(st.just(b"ZREMRANGEBYRANK"), key, st.just(b"0"), st.just(b"0")),
    st.tuples(st.just(b"ZUNIONSTORE"), key, st.just(b"2"), key, key),
    st.tuples(st.just(b"ZRANGESTORE"), key, key, st.just(b"0"), st.just(b"-1")),
    st.tuples(st.just(b"XADD"), key, st.just(b"*"), member, member),
    st.tuples(st.just(b"XADD"), key, st.just(b"MAXLEN"), st.just(b"2"), st.just(b"*"),
              st.just(b"f"), member, st.just(b"g"), member),
    st.tuples(st.just(b"XTRIM"), key, st.just(b"MAXLEN"), st.just(b"1")),
    st.tuples(st.just(b"XDEL"), key, st.just(b"0-1")),
    st.tuples(st.just(b"XGROUP"), st.just(b"CREATE"), key, st.just(b"g"), st.just(b"0"),
              st.just(b"MKSTREAM")),
    st.tuples(st.just(b"XREADGROUP"), st.just(b"GROUP"), st.just(b"g"), st.just(b"c"),
              st.just(b"STREAMS"), key, st.just(b">")),
    st.tuples(st.just(b"XAUTOCLAIM"), key, st.just(b"g"), st.just(b"d"), st.just(b"0"),
              st.just(b"0")),
    st.tuples(st.just(b"XACK"), key, st.just(b"g"), st.just(b"0-1")),
    st.tuples(st.just(b"XGROUP"), st.just(b"DELCONSUMER"), key, st.just(b"g"),
              st.just(b"c")),
    st.tuples(st.just(b"PFADD"), key, member, member),
    st.tuples(st.just(b"PFMERGE"), key, key),
    st.tuples(st.just(b"BITOP"), st.just(b"OR"), key, key, key),
    st.tuples(st.just(b"SORT"), key, st.just(b"ALPHA"), st.just(b"STORE"), key),
    st.tuples(st.just(b"RPUSH"), key, member, member),
    st.tuples(st.just(b"LPUSH"), key, member),
    st.tuples(st.just(b"LPOP"), key),
    st.tuples(st.just(b"LSET"), key, st.just(b"0"), member),
    st.tuples(st.just(b"LINSERT"), key, st.just(b"BEFORE"), member, member),
    st.tuples(st.just(b"LTRIM"), key, st.just(b"1"), st.just(b"-1")),
    st.tuples(st.just(b"LREM"), key, st.just(b"0"), member),
    st.tuples(st.just(b"LMOVE"), key, key, st.just(b"LEFT"), st.just(b"RIGHT")),
    st.tuples(st.just(b"dump-restore"), key, key),
    st.tuples(st.just(b"FLUSHDB")),
    st.tuples(st.just(b"advance"), millis),
    st.tuples(st.just(b"active-expire")),
)


def make_state() -> tuple[ServerState, Client, Clock]:
    clock = Clock()
    clock.freeze()
    state = ServerState(Config(), clock, table=command_table())
    return state, Client(state, 1, None), clock


@settings(max_examples=60, deadline=None)
@given(st.lists(COMMANDS, min_size=1, max_size=40))
def test_running_totals_match_a_walk_after_every_command(
        commands: list[tuple[bytes, ...]]) -> None:
    state, client, clock = make_state()
    for argv in commands:
        if argv[0] == b"advance":
            clock.advance(int(argv[1]))
        elif argv[0] == b"active-expire":
            for db in state.keyspace.dbs:
                db.active_expire()
        elif argv[0] == b"dump-restore":
            payload = state.dispatcher.execute(client, [b"DUMP", argv[1]])
            if payload.__class__ is bytes:
                state.dispatcher.execute(client, [b"RESTORE", argv[2], b"0", payload,
                                                  b"REPLACE"])
        else:
            state.dispatcher.execute(client, list(argv))
        check(state.keyspace, argv)


def test_a_stream_is_charged_the_node_forms_a_snapshot_keeps() -> None:
    """DUMP and a foreground save keep a stream's compressed node forms (charged at once);
    deleting, trimming and adding drop the forms of the nodes they change."""
    state, client, _ = make_state()
    execute = state.dispatcher.execute
    for i in range(1, 451):
        execute(client, [b"XADD", b"s", b"%d-1" % i, b"f", b"v%d" % (i % 5), b"g", b"w"])
    check(state.keyspace)
    before = state.keyspace.meter.used()
    payload = execute(client, [b"DUMP", b"s"])
    stream = client.db.data[b"s"]
    assert stream.packed_bytes and state.keyspace.meter.used() == before + stream.packed_bytes
    check(state.keyspace, "DUMP")
    assert execute(client, [b"DUMP", b"s"]) == payload
    for argv in ([b"XDEL", b"s", b"150-1"], [b"XTRIM", b"s", b"MAXLEN", b"420"],
                 [b"XDEL", b"s", b"250-1"], [b"XADD", b"s", b"*", b"f", b"v"]):
        execute(client, argv)
        check(state.keyspace, argv)
        for _ in range(2):
            execute(client, [b"DUMP", b"s"])
            check(state.keyspace, (argv, "DUMP"))
    assert b"".join(state.persistence.snapshot(keep=True)).startswith(b"REDIS")
    check(state.keyspace, "snapshot")


def test_under_maxmemory_the_node_forms_are_kept_only_while_memory_is_plentiful() -> None:
    state, client, _ = make_state()
    execute = state.dispatcher.execute
    for i in range(1, 451):
        execute(client, [b"XADD", b"s", b"%d-1" % i, b"f", b"v%d" % (i % 5), b"g", b"w"])
    tight = state.used_memory() + 100_000  # more than half of it is in use
    assert execute(client, [b"CONFIG", b"SET", b"maxmemory", b"%d" % tight]) == OK
    payload = execute(client, [b"DUMP", b"s"])
    assert client.db.data[b"s"].packed_bytes == 0
    # RESTORE under a memory limit keeps no forms either (a load's rule).
    execute(client, [b"RESTORE", b"t", b"0", payload])
    assert client.db.data[b"t"].packed_bytes == 0
    assert execute(client, [b"CONFIG", b"SET", b"maxmemory", b"%d" % (4 * tight)]) == OK
    assert execute(client, [b"DUMP", b"s"]) == payload
    assert client.db.data[b"s"].packed_bytes
    check(state.keyspace)


def test_flushall_gives_the_memory_back_at_once() -> None:
    state, client, _ = make_state()
    execute = state.dispatcher.execute
    for i in range(100):
        execute(client, [b"SET", b"k%d" % i, b"x" * 1000])
        execute(client, [b"HSET", b"h%d" % i, b"f", b"y" * 1000])
    assert state.used_memory() > STARTUP_MEMORY + 200_000
    execute(client, [b"FLUSHALL"])
    assert state.keyspace.meter.used() == 0
    assert state.used_memory() == STARTUP_MEMORY + state.clients_memory


def test_a_value_changed_in_place_is_charged_its_growth() -> None:
    state, client, _ = make_state()
    execute = state.dispatcher.execute
    execute(client, [b"HSET", b"h", b"f", b"v"])
    before = state.keyspace.meter.used()
    execute(client, [b"HSET", b"h", b"g", b"x" * 100_000])
    assert state.keyspace.meter.used() - before >= 100_000
    execute(client, [b"SETBIT", b"bits", b"800000", b"1"])
    state.keyspace.meter.used()
    assert state.keyspace[0].charged[b"bits"] >= 100_000


def test_memory_usage_is_the_charged_figure() -> None:
    state, client, _ = make_state()
    execute = state.dispatcher.execute
    execute(client, [b"SET", b"k", b"v" * 100])
    execute(client, [b"ZADD", b"z", b"1", b"a", b"2", b"b"])
    db = state.keyspace[0]
    for name in (b"k", b"z"):
        usage = execute(client, [b"MEMORY", b"USAGE", name])
        assert usage == KEY_COST + len(name) + value_size(db.data[name])
    db.settle()
    assert db.used == sum(execute(client, [b"MEMORY", b"USAGE", k]) for k in (b"k", b"z"))


@settings(max_examples=40, deadline=None)
@given(old=st.sampled_from(["none", "string", "text", "hash", "expiring"]),
       scanned=st.booleans(), new=st.sampled_from([b"", b"v", b"x" * 300]))
def test_set_signalled_agrees_with_set_then_signal(old: str, scanned: bool,
                                                   new: bytes) -> None:
    """The plain SET hot path leaves what the general path leaves: value, expiry, access
    field, totals and the signal."""
    from resplite.store.string_value import TextString

    results = []
    for fast in (False, True):
        clock = Clock()
        clock.freeze()
        signals: list[bytes] = []

        def note(db_index: int, key: bytes, seen: list[bytes] = signals) -> None:
            seen.append(key)

        db = Keyspace(1, clock, note)[0]
        if old == "string":
            db.set(b"k", b"before")
        elif old == "text":
            db.set(b"k", TextString(b"1.5"))
        elif old == "hash":
            h = Hash()
            h.set(b"f", b"v" * 50)
            db.set(b"k", h)
        elif old == "expiring":
            db.set(b"k", b"before")
            db.set_expire(b"k", clock.time_ms() + 1000)
        if scanned:
            db.scan(0, 10)  # the bookkeeping path
        if fast:
            db.set_signalled(b"k", new)
        else:
            db.set(b"k", new)
            db.signal_modified(b"k")
        db.settle()
        results.append((dict(db.data), dict(db.expires), dict(db.access), db.used,
                        dict(db.charged), signals))
        assert db.used == walk(db)
    assert results[0] == results[1]
