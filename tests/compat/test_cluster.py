"""CLUSTER, READONLY, READWRITE, ASKING and MIGRATE (commands/cluster.py).

On a standalone server they answer as a standalone Redis does (compared with the reference,
byte for byte). A cluster is not started from the 7.0 reference here, so the in-process
cluster (``resplite.serve(cluster=3)``) is checked against Redis Cluster's documented replies:
the slot split redis-cli makes, -MOVED / -ASK / -CROSSSLOT / -TRYAGAIN, the shapes of SLOTS,
SHARDS, NODES and INFO, a slot migration with SETSLOT, MIGRATE and ASKING; then redis-py's
RedisCluster runs a consumer-group workload across the nodes, through a slot move.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster
from support.pair import Pair
from support.raw import RawClient
from support.resptree import parse, to_python

import resplite
from resplite.algorithms.keyslot import crc16, key_slot
from resplite.testing.embedded import ServerHandle


def test_standalone_servers_have_no_cluster_support(pair: Pair) -> None:
    for command in (("CLUSTER", "INFO"), ("CLUSTER", "KEYSLOT", "foo"), ("CLUSTER", "SLOTS"),
                    ("CLUSTER", "MYID"), ("CLUSTER", "NODES"), ("CLUSTER", "SHARDS"),
                    ("READONLY",), ("READWRITE",), ("ASKING",),
                    ("CLUSTER", "COUNTKEYSINSLOT", "1"), ("CLUSTER", "GETKEYSINSLOT", "1", "1")):
        pair.check(*command)
    pair.check("INFO", "cluster")
    pair.check("MIGRATE", "127.0.0.1", "1", "nokey", "0", "100")  # +NOKEY before connecting


def test_key_slots_follow_crc16_and_hash_tags() -> None:
    assert crc16(b"123456789") == 0x31C3  # the CRC16 check value Redis's cluster spec gives
    assert key_slot(b"foo") == 12182
    assert key_slot(b"{user1000}.following") == key_slot(b"{user1000}.followers")
    assert key_slot(b"foo{}{bar}") == key_slot(b"foo{}{bar}") != key_slot(b"bar")
    assert key_slot(b"foo{{bar}}zap") == key_slot(b"{bar")
    assert key_slot(b"foo{bar}{zap}") == key_slot(b"bar")


@pytest.fixture(scope="module")
def cluster() -> Iterator[ServerHandle]:
    with resplite.serve(cluster=3) as handle:
        yield handle


@pytest.fixture
def nodes(cluster: ServerHandle) -> Iterator[list[RawClient]]:
    conns = [RawClient(host, port) for host, port in cluster.cluster_nodes]
    for conn in conns:
        conn.call("FLUSHALL")
    yield conns
    for conn in conns:
        conn.close()


def _value(reply: bytes) -> Any:
    return to_python(parse(reply))


def _owner(cluster: ServerHandle, key: bytes) -> int:
    slot = key_slot(key)
    return 0 if slot <= 5460 else 1 if slot <= 10922 else 2


def test_slots_are_split_as_redis_cli_splits_them(cluster: ServerHandle,
                                                  nodes: list[RawClient]) -> None:
    ports = [port for _, port in cluster.cluster_nodes]
    slots = _value(nodes[1].call("CLUSTER", "SLOTS"))
    assert [(s[0], s[1], s[2][1]) for s in slots] == [
        (0, 5460, ports[0]), (5461, 10922, ports[1]), (10923, 16383, ports[2])]
    ids = [_value(n.call("CLUSTER", "MYID")) for n in nodes]
    assert [s[2][2] for s in slots] == ids and len(set(ids)) == 3
    assert all(len(i) == 40 for i in ids)
    # RESP2: each node entry ends with an empty map of further endpoints.
    assert nodes[0].call("CLUSTER", "SLOTS").startswith(b"*3\r\n*3\r\n:0\r\n:5460\r\n*4\r\n")
    assert b"*0\r\n" in nodes[0].call("CLUSTER", "SLOTS")
    shards = _value(nodes[0].call("CLUSTER", "SHARDS"))
    assert [s["slots"] if isinstance(s, dict) else s[1] for s in shards] == [
        [0, 5460], [5461, 10922], [10923, 16383]]
    info = _value(nodes[2].call("CLUSTER", "INFO"))
    assert "cluster_state:ok\r\n" in info and "cluster_known_nodes:3\r\n" in info
    lines = _value(nodes[2].call("CLUSTER", "NODES")).splitlines()
    assert len(lines) == 3
    mine = [ln for ln in lines if "myself" in ln]
    assert mine[0].startswith(ids[2]) and mine[0].endswith(" 10923-16383")
    assert f"127.0.0.1:{ports[2]}@{ports[2] + 10000}" in mine[0]
    assert b"cluster_enabled:1" in nodes[0].call("INFO", "cluster")


def test_moved_crossslot_and_select(cluster: ServerHandle, nodes: list[RawClient]) -> None:
    ports = [port for _, port in cluster.cluster_nodes]
    owner = _owner(cluster, b"foo")
    other = (owner + 1) % 3
    assert nodes[other].call("SET", "foo", "1") == (
        b"-MOVED 12182 127.0.0.1:%d\r\n" % ports[owner])
    assert nodes[owner].call("SET", "foo", "1") == b"+OK\r\n"
    assert nodes[owner].call("MSET", "{a}1", "x", "{b}1", "y") == (
        b"-CROSSSLOT Keys in request don't hash to the same slot\r\n")
    tagged = _owner(cluster, b"{a}")
    assert nodes[tagged].call("MSET", "{a}1", "x", "{a}2", "y") == b"+OK\r\n"
    assert nodes[tagged].call("CLUSTER", "COUNTKEYSINSLOT", key_slot(b"{a}")) == b":2\r\n"
    assert sorted(_value(nodes[tagged].call("CLUSTER", "GETKEYSINSLOT", key_slot(b"{a}"), 10))
                  ) == ["{a}1", "{a}2"]
    # Commands without keys are served anywhere; SELECT 0 only.
    assert nodes[other].call("PING") == b"+PONG\r\n"
    assert nodes[0].call("SELECT", "1") == b"-ERR SELECT is not allowed in cluster mode\r\n"
    assert nodes[0].call("SELECT", "0") == b"+OK\r\n"
    assert nodes[0].call("READONLY") == b"+OK\r\n" and nodes[0].call("READWRITE") == b"+OK\r\n"
    assert nodes[0].call("CLUSTER", "COUNTKEYSINSLOT", "16384") == b"-ERR Invalid slot\r\n"


def test_a_slot_migration_answers_ask_until_it_is_done(cluster: ServerHandle,
                                                       nodes: list[RawClient]) -> None:
    ports = [port for _, port in cluster.cluster_nodes]
    ids = [_value(n.call("CLUSTER", "MYID")) for n in nodes]
    slot = key_slot(b"{m}")
    src = _owner(cluster, b"{m}")
    dst = (src + 1) % 3
    nodes[src].call("SET", "{m}a", "1")
    nodes[src].call("SET", "{m}b", "2", "PX", "100000")
    assert nodes[dst].call("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src]) == b"+OK\r\n"
    assert nodes[src].call("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst]) == b"+OK\r\n"
    assert f"[{slot}->-{ids[dst]}]".encode() in nodes[src].call("CLUSTER", "NODES")
    # Keys still at the source are served there.
    assert nodes[src].call("GET", "{m}a") == b"$1\r\n1\r\n"
    assert nodes[src].call("MIGRATE", "127.0.0.1", ports[dst], "{m}a", "0", "1000") == (
        b"+OK\r\n")
    ask = b"-ASK %d 127.0.0.1:%d\r\n" % (slot, ports[dst])
    assert nodes[src].call("GET", "{m}a") == ask  # moved on: ask the target
    assert nodes[src].call("MGET", "{m}a", "{m}b") == (
        b"-TRYAGAIN Multiple keys request during rehashing of slot\r\n")
    # The target serves the slot only right after ASKING, once.
    assert nodes[dst].call("GET", "{m}a") == b"-MOVED %d 127.0.0.1:%d\r\n" % (slot, ports[src])
    assert nodes[dst].call("ASKING") == b"+OK\r\n"
    assert nodes[dst].call("GET", "{m}a") == b"$1\r\n1\r\n"
    assert nodes[dst].call("GET", "{m}a").startswith(b"-MOVED")
    assert nodes[src].call("MIGRATE", "127.0.0.1", ports[dst], "", "0", "1000", "KEYS",
                           "{m}b") == b"+OK\r\n"
    # Its keys are gone: a command on one is sent to the target, MIGRATE included.
    assert nodes[src].call("MIGRATE", "127.0.0.1", ports[dst], "{m}b", "0", "1000") == (
        b"-ASK %d 127.0.0.1:%d\r\n" % (slot, ports[dst]))
    for node in nodes:
        assert node.call("CLUSTER", "SETSLOT", slot, "NODE", ids[dst]) == b"+OK\r\n"
    assert nodes[dst].call("GET", "{m}b") == b"$1\r\n2\r\n"
    assert 0 < _value(nodes[dst].call("PTTL", "{m}b")) <= 100000  # the TTL went along
    assert nodes[src].call("GET", "{m}a") == b"-MOVED %d 127.0.0.1:%d\r\n" % (slot, ports[dst])
    assert nodes[src].call("CLUSTER", "COUNTKEYSINSLOT", slot) == b":0\r\n"
    # Give the slot back, so the module's other tests see the first split.
    nodes[dst].call("MIGRATE", "127.0.0.1", ports[src], "", "0", "1000", "KEYS", "{m}a", "{m}b")
    for node in nodes:
        node.call("CLUSTER", "SETSLOT", slot, "NODE", ids[src])


def _entries(reply: Any) -> list[tuple[bytes, Any]]:
    if not reply:
        return []
    if isinstance(reply, dict):
        return list(next(iter(reply.values()))[0])
    return list(reply[0][1])


def test_redis_py_cluster_runs_a_consumer_group_workload(cluster: ServerHandle,
                                                         nodes: list[RawClient]) -> None:
    """Streams on every node (hash tags pick their slots), a group per stream, producers and
    consumers through RedisCluster, and a slot moved to another node halfway: the client
    follows -MOVED and every entry is read and acknowledged once."""
    client = RedisCluster.from_url(cluster.cluster_url)
    try:
        streams = [f"{{orders-{n}}}:stream" for n in range(6)]
        assert len({_owner(cluster, s.encode()) for s in streams}) == 3
        produced: dict[str, list[bytes | str]] = {}
        for stream in streams:
            client.xgroup_create(stream, "billing", id="0", mkstream=True)
            produced[stream] = [client.xadd(stream, {"n": str(i)}) for i in range(20)]
        moved = streams[0]
        slot = key_slot(moved.encode())
        src = _owner(cluster, moved.encode())
        dst = (src + 1) % 3
        ports = [port for _, port in cluster.cluster_nodes]
        ids = [_value(n.call("CLUSTER", "MYID")) for n in nodes]
        consumed: dict[str, list[bytes | str]] = {s: [] for s in streams}
        for round_ in range(2):
            if round_ == 1:  # move the first stream's slot to another node
                # Redis Cluster's order: the target imports the slot before MIGRATE (its
                # RESTORE-ASKING would be redirected otherwise), then every node learns
                # the new owner.
                nodes[dst].call("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src])
                nodes[src].call("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst])
                assert nodes[src].call("MIGRATE", "127.0.0.1", ports[dst], moved, "0",
                                       "1000") == b"+OK\r\n"
                for node in nodes:
                    node.call("CLUSTER", "SETSLOT", slot, "NODE", ids[dst])
                for stream in streams:
                    produced[stream] += [client.xadd(stream, {"n": f"late{i}"}) for i in range(5)]
            for stream in streams:
                while True:
                    batch = _entries(client.xreadgroup("billing", "c1", {stream: ">"}, count=7))
                    if not batch:
                        break
                    ids_read = [entry_id for entry_id, _ in batch]
                    consumed[stream] += ids_read
                    assert client.xack(stream, "billing", *ids_read) == len(ids_read)
        assert consumed == produced
        assert all(client.xpending(s, "billing")["pending"] == 0 for s in streams)
        assert nodes[dst].call("EXISTS", moved) == b":1\r\n"
    finally:
        client.close()
        ids = [_value(n.call("CLUSTER", "MYID")) for n in nodes]
        for node in nodes:
            node.call("CLUSTER", "SETSLOT", key_slot(b"{orders-0}:stream"), "NODE",
                      ids[_owner(cluster, b"{orders-0}:stream")])


def test_one_node_cluster_and_plain_clients(cluster: ServerHandle) -> None:
    with resplite.serve(cluster=1) as single:
        r = redis.Redis.from_url(single.url)
        try:
            assert r.set("any", "key") and r.get("any") == b"key"
            assert r.execute_command("CLUSTER", "SLOTS")[0][:2] == [0, 16383]
        finally:
            r.close()


# -- Redis 8.2: CLUSTER SLOT-STATS ----------------------------------------------------------------


def _stats(reply: bytes) -> list[tuple[int, int]]:
    """(slot, key-count) per entry; the statistics are a map (RESP3) or a flat array."""
    out = []
    for slot, stats in _value(reply):
        fields = stats if isinstance(stats, dict) else dict(zip(stats[::2], stats[1::2],
                                                                strict=True))
        assert list(fields) == ["key-count"]
        out.append((slot, fields["key-count"]))
    return out


@pytest.mark.redis_version("8.2")
@pytest.mark.parametrize("resp", [2, 3])
def test_slot_stats_report_the_key_count_of_this_nodes_slots(
    cluster: ServerHandle, nodes: list[RawClient], resp: int
) -> None:
    """Each of the node's slots with its key-count (the only metric while
    cluster-slot-stats-enabled is off): by slot range in slot order, or ordered by the count
    (DESC by default, ties by the lower slot), LIMIT capping the reply."""
    node = nodes[0]
    if resp == 3:
        node.call("HELLO", "3")
    tags = [t for t in (f"t{i}".encode() for i in range(200)) if key_slot(t) <= 5460]
    hot, warm = tags[0], next(t for t in tags if key_slot(t) != key_slot(tags[0]))
    for key in (b"a{%s}" % hot, b"b{%s}" % hot, b"c{%s}" % hot, b"{%s}" % warm):
        assert node.call("SET", key, "v") == b"+OK\r\n"
    slot_hot, slot_warm = key_slot(hot), key_slot(warm)
    low = max(slot_hot - 1, 0)
    assert _stats(node.call("CLUSTER", "SLOT-STATS", "SLOTSRANGE", low, slot_hot + 1)) == [
        (slot, 3 if slot == slot_hot else int(slot == slot_warm))
        for slot in range(low, slot_hot + 2)]
    # Only this node's slots (0-5460): a range past them stops there.
    assert [slot for slot, _ in _stats(node.call(
        "CLUSTER", "SLOT-STATS", "SLOTSRANGE", "5459", "5465"))] == [5459, 5460]
    assert _stats(node.call("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "LIMIT", "3")) \
        == [(slot_hot, 3), (slot_warm, 1),
            (min(set(range(3)) - {slot_hot, slot_warm}), 0)]
    first_empty = min(set(range(3)) - {slot_hot, slot_warm})
    assert _stats(node.call("CLUSTER", "SLOT-STATS", "ORDERBY", "KEY-COUNT", "asc",
                            "LIMIT", 1)) == [(first_empty, 0)]
    assert len(_stats(node.call("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count"))) == 5461


@pytest.mark.redis_version("8.2")
def test_slot_stats_errors(cluster: ServerHandle, nodes: list[RawClient], pair: Pair) -> None:
    node = nodes[0]
    call = node.call
    assert call("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "10", "5") == \
        b"-ERR Start slot number 10 is greater than end slot number 5\r\n"
    assert call("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "16384") == \
        b"-ERR Invalid or out of range slot\r\n"
    assert call("CLUSTER", "SLOT-STATS", "ORDERBY", "cpu-usec") == \
        b"-ERR Unrecognized sort metric for ORDERBY.\r\n"
    assert call("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "LIMIT", "0") == \
        b"-ERR Limit has to lie in between 1 and 16384 (maximum number of slots).\r\n"
    assert call("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "ASC", "DESC") == \
        b"-ERR Multiple filters of the same type are disallowed.\r\n"
    assert call("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count", "FOO") == \
        b"-ERR syntax error\r\n"
    assert call("CLUSTER", "SLOT-STATS", "SLOTSRANGE", "1", "2", "3") == (
        b"-ERR unknown subcommand or wrong number of arguments for 'SLOT-STATS'. "
        b"Try CLUSTER HELP.\r\n")
    assert call("CLUSTER", "SLOT-STATS", "x") == \
        b"-ERR wrong number of arguments for 'cluster|slot-stats' command\r\n"
    assert pair.ours.call("CLUSTER", "SLOT-STATS", "ORDERBY", "key-count") == \
        b"-ERR This instance has cluster support disabled\r\n"
