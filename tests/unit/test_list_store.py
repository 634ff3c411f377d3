"""Unit tests of the list value type (resplite.store.list): contents against a plain Python
list under random operations, the node invariants after each, the node layout decisions
(splits, merges, plain nodes) and the encoding conversions, and the fast end paths against
the general node methods.

That the layout matches Redis's node for node is checked against a real Redis 7.4+ by the
compat tests (DEBUG OBJECT's ``ql_nodes``); here the layouts are the ones Redis's quicklist
rules give, worked out by hand.
"""

from __future__ import annotations

import random

import pytest

from resplite.store.list import List, Node, exceeds_limit, is_large, node_limits
from resplite.store.listpack_size import LISTPACK_EMPTY, str_size


def _list(values: list[bytes], fill: int = -2, head: bool = False) -> List:
    lst = List()
    lst.push(values, 0, head, fill)
    lst.check()
    return lst


def _layout(lst: List) -> list[int]:
    return [len(node) for node in lst.nodes]


def _quick(fill: int) -> List:
    """An empty list already converted to a quicklist of ``fill``."""
    lst = List()
    lst.grow(fill, 1 << 40, 1)
    return lst


# -- the limits ----------------------------------------------------------------------------------


def test_node_limits_follow_the_fill() -> None:
    assert node_limits(-1) == (4096, (1 << 32) - 1)
    assert node_limits(-2)[0] == 8192 and node_limits(-5)[0] == 65536
    assert node_limits(-100)[0] == 65536  # below -5: the largest size
    assert node_limits(0)[1] == 1 and node_limits(7)[1] == 7
    assert exceeds_limit(-2, 8193, 1) and not exceeds_limit(-2, 8192, 10**6)
    assert exceeds_limit(3, 100, 4) and not exceeds_limit(3, 8192, 3)
    assert exceeds_limit(1000, 8193, 1)  # the safety limit of count fills
    assert is_large(8193, 5) and not is_large(8192, 5)
    assert is_large(4097, -1) and not is_large(4097, -2)


# -- contents under random operations ----------------------------------------------------------


def _element(rng: random.Random) -> bytes:
    kind = rng.random()
    if kind < 0.3:
        return b"%d" % rng.randrange(-1000, 10**6)
    if kind < 0.45:
        return rng.choice([b"a", b"b", b"", b"-", b"0", b"-0", b"007"])
    if kind < 0.95:
        return bytes(rng.randrange(256) for _ in range(rng.choice([1, 8, 63, 64, 200])))
    return b"L" * rng.choice([4097, 8193, 20000])


@pytest.mark.parametrize("fill", [-2, -1, 0, 1, 3, 16])
def test_random_operations_keep_the_contents_and_the_invariants(fill: int) -> None:
    rng = random.Random(fill * 7919 + 1)
    lst = List()
    model: list[bytes] = []
    for _ in range(1500):
        op = rng.randrange(13)
        if op < 3:
            values = [_element(rng) for _ in range(rng.choice([1, 1, 5, 40]))]
            head = op == 0
            lst.push(values, 0, head, fill)
            for v in values:
                if head:
                    model.insert(0, v)
                else:
                    model.append(v)
        elif op == 3 and model:
            assert lst.pop_head() == model.pop(0)
        elif op == 4 and model:
            assert lst.pop_tail() == model.pop()
        elif op == 5 and model:
            n = rng.choice([1, 3, 50, 1000])
            head = rng.random() < 0.5
            got = lst.pop_many(n, head)
            want = model[:n] if head else model[::-1][:n]
            if head:
                del model[: len(want)]
            else:
                del model[len(model) - len(want) :]
            assert got == want
        elif op == 6:
            i = rng.randrange(-len(model) - 2, len(model) + 2)
            v = _element(rng)
            lst.grow(fill, len(v), 1)
            ok = lst.set(i, v)
            assert ok == (-len(model) <= i < len(model))
            if ok:
                model[i] = v
        elif op == 7 and model:
            pivot = rng.choice(model) if rng.random() < 0.8 else b"absent"
            v = _element(rng)
            after = rng.random() < 0.5
            lst.grow(fill, len(v), 1)
            ok = lst.insert(pivot, v, after)
            assert ok == (pivot in model)
            if ok:
                k = model.index(pivot)
                model.insert(k + 1 if after else k, v)
        elif op == 8 and model:
            target = rng.choice(model)
            count = rng.choice([0, 1, 2, -1, -2])
            removed = lst.remove(target, count)
            positions = [k for k, v in enumerate(model) if v == target]
            if count < 0:
                positions = positions[::-1]
            gone = positions if count == 0 else positions[: abs(count)]
            assert removed == len(gone)
            for k in sorted(gone, reverse=True):
                del model[k]
        elif op == 9:
            start, stop = rng.randrange(-30, 30), rng.randrange(-30, 300)
            assert lst.range(start, stop) == _redis_range(model, start, stop)
        elif op == 10 and len(model) > 20:
            start, stop = rng.randrange(-5, 10), rng.randrange(-10, len(model))
            lst.trim(start, stop)
            model[:] = _redis_range(model, start, stop)
        elif op == 11 and model:
            target = rng.choice(model)
            rank = rng.choice([1, 2, -1, -2])
            maxlen = rng.choice([0, 5, 100])
            assert lst.positions(target, rank, 0, maxlen) == _positions(
                model, target, rank, maxlen)
        elif op == 12:
            i = rng.randrange(-len(model) - 2, len(model) + 2)
            one = model[i] if -len(model) <= i < len(model) else None
            assert lst.get(i) == one
        if not model:
            lst = List()  # the keyspace drops an emptied list
        else:
            lst.shrink(fill)
        lst.check()
        assert lst.values() == model and len(lst) == len(model)


def _redis_range(model: list[bytes], start: int, stop: int) -> list[bytes]:
    n = len(model)
    start = start + n if start < 0 else start
    stop = stop + n if stop < 0 else stop
    start = max(start, 0)
    if start > stop or start >= n:
        return []
    return model[start : min(stop, n - 1) + 1]


def _positions(model: list[bytes], value: bytes, rank: int, maxlen: int) -> list[int]:
    n = len(model)
    order = list(range(n)) if rank > 0 else list(range(n - 1, -1, -1))
    if maxlen:
        order = order[:maxlen]
    hits = [k for k in order if model[k] == value]
    return hits[abs(rank) - 1 :]


# -- layouts -------------------------------------------------------------------------------------


def test_a_listpack_converts_on_the_raw_bytes_about_to_come() -> None:
    lst = _list([b"v" * 60] * 132)
    assert lst.encoding == "listpack" and lst.nodes[0].sz == LISTPACK_EMPTY + 132 * 62
    lst.grow(-2, 1, 1)  # 8191 + 1 = 8192: still fits
    assert lst.encoding == "listpack"
    lst.grow(-2, 2, 1)
    assert lst.encoding == "quicklist" and _layout(lst) == [132] and lst.fill == -2
    lst.push_tail(b"x")  # the node is over its limit: a new one
    assert _layout(lst) == [132, 1]


def test_a_quicklist_becomes_a_listpack_at_half_the_limit() -> None:
    lst = _list([b"v" * 60] * 132)
    lst.grow(-2, 100, 1)
    lst.push_tail(b"x")
    lst.pop_tail()
    lst.shrink(-2)
    assert lst.encoding == "quicklist"  # one node, but 8191 bytes
    lst.trim(0, 65)  # 7 + 66 * 62 = 4099
    lst.shrink(-2)
    assert lst.encoding == "quicklist"
    lst.pop_tail()  # 4037 <= 4096
    lst.shrink(-2)
    assert lst.encoding == "listpack"
    lst.check()
    counted = _list([b"a"] * 4, fill=4)
    counted.grow(4, 1, 1)
    counted.push_tail(b"b")
    assert _layout(counted) == [4, 1]
    counted.pop_head()
    counted.shrink(4)
    assert counted.encoding == "quicklist"  # two nodes
    counted.pop_many(3, head=True)
    counted.shrink(4)
    assert counted.encoding == "listpack"  # one node of one element: at most 4 // 2


def test_count_fills_and_plain_nodes() -> None:
    lst = _quick(3)
    for i in range(7):
        lst.push_tail(b"%d" % i)
    assert _layout(lst) == [3, 3, 1]
    lst.push_tail(b"B" * 9000)  # above the 8 KB safety limit: a plain node
    lst.push_head(b"H" * 9000)
    assert _layout(lst) == [1, 3, 3, 1, 1]
    assert lst.nodes[0].plain and lst.nodes[-1].plain and not lst.nodes[1].plain
    lst.push_tail(b"t")  # never into a plain node
    assert _layout(lst) == [1, 3, 3, 1, 1, 1]
    lst.check()
    assert lst.pop_head() == b"H" * 9000 and _layout(lst) == [3, 3, 1, 1, 1]


def test_insert_into_a_full_node_splits_it_and_merges_around() -> None:
    lst = _quick(4)
    for i in range(8):
        lst.push_tail(b"%d" % i)
    assert _layout(lst) == [4, 4]
    # After "1": node 0 is full and "1" is not at its tail: split [0 1 | x 2 3], then the
    # new node [x 2 3] cannot merge with its full neighbour.
    assert lst.insert(b"1", b"x", after=True)
    assert _layout(lst) == [2, 3, 4]
    assert lst.values() == [b"0", b"1", b"x", b"2", b"3", b"4", b"5", b"6", b"7"]
    # Before "2" in a node with room: in place.
    assert lst.insert(b"2", b"y", after=False)
    assert _layout(lst) == [2, 4, 4]
    # After the last element of a full node whose next node is full: a new node between.
    assert lst.insert(b"3", b"z", after=True)
    assert _layout(lst) == [2, 4, 1, 4]
    lst.check()


def test_insert_at_a_node_edge_uses_the_neighbour_with_room() -> None:
    lst = _quick(3)
    for v in (b"a", b"b", b"c", b"d"):
        lst.push_tail(v)
    assert _layout(lst) == [3, 1]
    assert lst.insert(b"c", b"x", after=True)  # tail of a full node: head of the next
    assert _layout(lst) == [3, 2] and lst.values() == [b"a", b"b", b"c", b"x", b"d"]
    assert lst.insert(b"x", b"w", after=False)  # head of the second node, which has room
    assert _layout(lst) == [3, 3]
    lst.check()


def test_lset_of_a_large_element_splits_and_a_small_one_replaces_a_plain_node() -> None:
    lst = _quick(-2)
    for i in range(6):
        lst.push_tail(b"%d" % i)
    assert lst.set(2, b"L" * 9000)
    assert _layout(lst) == [2, 1, 3] and lst.nodes[1].plain
    assert lst.set(2, b"small")  # out of the plain node, into the next one's head
    assert _layout(lst) == [2, 4] and lst.get(2) == b"small"
    # The tail element of a node: no split; the plain node goes after it, and the node it
    # left (now three elements) merges with the one before.
    assert lst.set(-1, b"M" * 9000)
    assert _layout(lst) == [5, 1]
    lst.check()
    assert lst.values() == [b"0", b"1", b"small", b"3", b"4", b"M" * 9000]


def test_delete_range_drops_whole_nodes_and_cuts_the_edges() -> None:
    lst = _quick(4)
    for i in range(14):
        lst.push_tail(b"%d" % i)
    assert _layout(lst) == [4, 4, 4, 2]
    lst.trim(2, -3)  # two off the head, two off the tail
    assert _layout(lst) == [2, 4, 4]
    assert lst.pop_many(5, head=False) == [b"11", b"10", b"9", b"8", b"7"]
    assert _layout(lst) == [2, 3]
    lst.check()


# -- orientation and fast paths ------------------------------------------------------------------


def test_head_grown_nodes_are_stored_back_to_front_and_read_in_order() -> None:
    lst = _list([b"c", b"b", b"a"], head=True)
    node = lst.nodes[0]
    assert node.rev and lst.values() == [b"a", b"b", b"c"]
    assert node.items(1, 3) == [b"b", b"c"] and node.get(0) == b"a"
    assert node.matches(b"c") == [2] and node.matches(b"a", backwards=True) == [0]
    assert lst.positions(b"b", -1, 0, 0) == [1]
    node.delete_range(0, 1)
    assert lst.nodes[0].items() == [b"b", b"c"] and node.rev
    node.insert(0, b"z")  # a middle operation turns the node front to back
    assert not node.rev and node.items() == [b"z", b"b", b"c"]


@pytest.mark.parametrize("rev", [False, True])
def test_the_inline_end_paths_agree_with_the_node_methods(rev: bool) -> None:
    rng = random.Random(17 + rev)
    fast, slow = List(), List()
    fast.nodes[0].rev = slow.nodes[0].rev = rev
    for _ in range(400):
        v = _element(rng) if rng.random() < 0.9 else b""
        if rng.random() < 0.6 or not fast.length:
            if rng.random() < 0.5:
                fast.push_head(v)
                slow.nodes[0].prepend(v)
            else:
                fast.push_tail(v)
                slow.nodes[0].append(v)
            slow.length += 1
        else:
            node = slow.nodes[0]
            if rng.random() < 0.5:
                want = node.items(0, 1)[0]
                node.delete_range(0, 1)
                assert fast.pop_head() == want
            else:
                want = node.items(len(node) - 1)[0]
                node.delete_range(len(node) - 1, len(node))
                assert fast.pop_tail() == want
            slow.length -= 1
        fast.check()
        slow.check()
        assert fast.nodes[0].sz == slow.nodes[0].sz and fast.values() == slow.values()


def test_copy_is_independent_and_keeps_encoding_and_layout() -> None:
    lst = _quick(2)
    for i in range(5):
        lst.push_head(b"%d" % i)
    twin = lst.copy()
    assert twin.encoding == "quicklist" and _layout(twin) == _layout(lst) == [1, 2, 2]
    twin.push_tail(b"new")
    lst.set(0, b"changed")
    assert twin.values() == [b"4", b"3", b"2", b"1", b"0", b"new"]
    assert lst.values()[0] == b"changed"
    small = _list([b"a", b"b"])
    assert small.copy().encoding == "listpack"


def test_node_sizes_are_listpack_sizes() -> None:
    node = Node.packed(b"12345")
    node.append(b"x" * 100)
    node.prepend(b"-7")
    assert node.sz == LISTPACK_EMPTY + str_size(b"12345") + str_size(b"x" * 100) + str_size(
        b"-7")
    assert str_size(b"12345") == 4 and str_size(b"x" * 100) == 103 and str_size(b"-7") == 3


def test_a_built_list_is_a_quicklist_unless_it_fits_one_node() -> None:
    """SORT ... STORE's list: pushed from the tail into a quicklist, then a listpack when it
    is one packed node within the whole limit (not half of it, as after a removal)."""
    small = List.built([b"a", b"b", b"c"], -2)
    assert small.encoding == "listpack" and small.values() == [b"a", b"b", b"c"]
    # A push into a node allows for 8 bytes of overhead: 131 elements of 60 bytes fill one
    # node (7 + 131 * 62 = 8129 bytes), the 132nd starts another.
    full = List.built([b"v" * 60] * 131, -2)
    assert full.encoding == "listpack"
    over = List.built([b"v" * 60] * 132, -2)
    assert over.encoding == "quicklist" and _layout(over) == [131, 1]
    counted = List.built([b"%d" % i for i in range(5)], 5)
    assert counted.encoding == "listpack"  # 5 elements: the whole count limit
    plain = List.built([b"x" * 9000], -2)
    assert plain.encoding == "quicklist" and plain.nodes[0].plain
    for lst in (small, full, over, counted, plain):
        lst.check()
