"""The list value type: a Redis list in packed nodes, shaped exactly like Redis's quicklist.

Theory of operation. Redis keeps a small list in one *listpack* (OBJECT ENCODING
``listpack``) and a larger one in a *quicklist*: a doubly linked list of listpack nodes, each
bounded by ``list-max-listpack-size`` (negative: 4, 8, 16, 32 or 64 KB per node; positive: an
element count, with an 8 KB safety limit), plus *plain* nodes that hold one large element
each. Which encoding a list has at a given moment depends on how big Redis's nodes are, and
that depends on the exact history of pushes, pops, inserts, splits and merges. So that OBJECT
ENCODING answers what Redis would answer, this module mirrors the node structure decision by
decision: every node carries the byte size its listpack would have in Redis (``sz``, computed
with :mod:`resplite.store.listpack_size`, never encoded), and nodes are created, split,
merged and dropped at the same points as in Redis 7.4+'s ``quicklist.c``. The elements
themselves are stored our own way.

Layout, per :class:`Node` (no Python object per element):

* ``data``: the node's elements concatenated, in one ``bytearray``;
* ``lens``: each element's length, an ``array('I')`` (4 bytes an element);
* ``sz``: Redis's ``lpBytes`` of the node (7 bytes of listpack header and trailer plus each
  element's encoded size), or, for a plain node, the element's own length;
* ``plain``: whether the node is a plain node (exactly one element);
* ``rev``: whether the elements are stored back to front, as in a node that grows at the
  head (LPUSH appends to the buffers instead of moving them).

A quicklist :class:`List` is a ``deque`` of nodes, so pushes and pops at either end cost O(1)
(plus, at worst, a move of one node's bytes, as Redis's ``memmove`` inside a listpack);
reaching an index walks the node counts from the nearer end, O(n / node size) node steps and
one ``sum`` over a slice of ``lens``; searches (LPOS, LREM, LINSERT) run ``bytes.find`` over
each node's buffer. A list of 1 million 8-byte elements grows the process by about 12.5
bytes an element (Redis: about 10).

Encodings. While ``quick`` is false the list is a listpack: exactly one node, no node limits.
The store never reads the configuration: commands pass ``list-max-listpack-size`` (``fill``)
where Redis checks it.

* :meth:`List.grow` (Redis's ``listTypeTryConversionAppend``) runs before elements are added
  and turns the listpack into a quicklist when its bytes plus the raw lengths of what is
  coming would exceed the limit; the quicklist remembers the ``fill`` it was created with.
* :meth:`List.shrink` (``listTypeTryConversion(..., LIST_CONV_SHRINKING)``, Redis 7.2+)
  runs after elements are removed and turns a quicklist of one packed node back into a
  listpack when that node is at most half the limit.

Invariants (checked by :meth:`List.check`): ``length`` is the sum of the nodes' counts; every
node's ``sz`` and ``len(data)`` agree with its elements; a quicklist has no empty node and
each plain node holds one element; a listpack has exactly one node (empty only transiently:
the keyspace never holds an empty list, commands delete the key).
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Iterator
from itertools import accumulate, islice
from typing import Final, cast

from resplite.store.listpack_size import LISTPACK_EMPTY, str_size

# Redis's node limits (quicklist.c): sizes for negative fills, the safety limit for counts.
_NEG_FILL_LIMITS: Final = (4096, 8192, 16384, 32768, 65536)
SIZE_SAFETY_LIMIT: Final = 8192
# Over-estimate of one element's listpack overhead when deciding whether it fits a node.
_INSERT_OVERHEAD: Final = 8
# quicklist's fill field is a 16-bit signed bit-field clamped to [-5, 32767].
_FILL_MIN: Final = -5
_FILL_MAX: Final = 32767
_SIZE_MAX: Final = (1 << 64) - 1
_UINT_MAX: Final = (1 << 32) - 1

Value = bytes | bytearray


def node_limits(fill: int) -> tuple[int, int]:
    """(size limit, count limit) of a node for ``fill``; the unused one is "unlimited"."""
    if fill >= 0:
        return _SIZE_MAX, fill or 1
    offset = min(-fill - 1, len(_NEG_FILL_LIMITS) - 1)
    return _NEG_FILL_LIMITS[offset], _UINT_MAX


def exceeds_limit(fill: int, size: int, count: int) -> bool:
    """Whether a node of ``size`` listpack bytes and ``count`` elements is too big."""
    if fill < 0:
        return size > _NEG_FILL_LIMITS[min(-fill - 1, len(_NEG_FILL_LIMITS) - 1)]
    return size > SIZE_SAFETY_LIMIT or count > (fill or 1)


def is_large(size: int, fill: int) -> bool:
    """Whether an element of ``size`` bytes goes into a plain node of its own (Redis 7.4+)."""
    if fill >= 0:
        return size > SIZE_SAFETY_LIMIT
    return size > _NEG_FILL_LIMITS[min(-fill - 1, len(_NEG_FILL_LIMITS) - 1)]


def clamp_fill(fill: int) -> int:
    return _FILL_MIN if fill < _FILL_MIN else _FILL_MAX if fill > _FILL_MAX else fill


def _limits(fill: int) -> tuple[int, int]:
    """(``max_bytes``, ``max_count``) of a quicklist whose fill is ``fill`` (clamped)."""
    if fill >= 0:
        return SIZE_SAFETY_LIMIT, fill or 1
    return _NEG_FILL_LIMITS[min(-fill - 1, len(_NEG_FILL_LIMITS) - 1)], _UINT_MAX


def _single(node: Node) -> deque[Node]:
    # A listpack has exactly one node and never adds or drops one, so a one-element Python
    # list (64 bytes) stands in for the deque (760 bytes) that a quicklist needs for its O(1)
    # ends: small lists are the common case. Only indexing, len() and iteration are used on it.
    return cast("deque[Node]", [node])


def _entry_size(value: Value) -> int:
    """A listpack element's size, with str_size's answer for a short string that cannot
    be an integer computed inline (the common case on the hot paths)."""
    n = len(value)
    if n < 64 and n and not (48 <= value[0] <= 57 or value[0] == 45):
        return n + 2
    return str_size(value)


class Node:
    """One listpack (or plain) node; see the module docstring for the layout.

    ``rev`` says the elements are stored back to front: a node that grows at the head of
    the list (LPUSH) appends to its buffers instead of moving all their bytes for each
    element. The end operations (and reads) work in either orientation; the other changes
    turn the node front to back first (:meth:`forward`), an O(node) step they cost anyway.
    """

    __slots__ = ("data", "lens", "plain", "rev", "sz")

    def __init__(self) -> None:
        self.data = bytearray()
        self.lens = array("I")
        self.sz = LISTPACK_EMPTY
        self.plain = False
        self.rev = False

    @classmethod
    def packed(cls, value: Value, rev: bool = False) -> Node:
        node = cls()
        node.data += value
        node.lens.append(len(value))
        node.sz = LISTPACK_EMPTY + _entry_size(value)
        node.rev = rev
        return node

    @classmethod
    def of(cls, values: list[bytes]) -> Node:
        """A packed node holding ``values`` in order (a node read from an RDB file)."""
        node = cls()
        node.data = bytearray(b"".join(values))
        node.lens = array("I", map(len, values))
        node.sz = LISTPACK_EMPTY + sum(map(str_size, values))
        return node

    @classmethod
    def plain_of(cls, value: Value) -> Node:
        node = cls()
        node.data += value
        node.lens.append(len(value))
        node.sz = len(value)
        node.plain = True
        return node

    def __len__(self) -> int:
        return len(self.lens)

    def __repr__(self) -> str:
        kind = "plain" if self.plain else "packed"
        return f"<Node {kind} count={len(self.lens)} sz={self.sz} rev={self.rev}>"

    def copy(self) -> Node:
        twin = Node()
        twin.data = bytearray(self.data)
        twin.lens = array("I", self.lens)
        twin.sz = self.sz
        twin.plain = self.plain
        twin.rev = self.rev
        return twin

    def forward(self) -> None:
        """Store the elements front to back."""
        if self.rev:
            values = self._physical(0, len(self.lens))
            values.reverse()
            self.data = bytearray(b"".join(values))
            self.lens.reverse()
            self.rev = False

    # -- reading ------------------------------------------------------------------------

    def _offset(self, p: int) -> int:
        """Where physical element ``p`` starts in ``data`` (summed from the nearer end)."""
        lens = self.lens
        if p <= len(lens) >> 1:
            return sum(lens[:p])
        return len(self.data) - sum(lens[p:])

    def _physical(self, start: int, stop: int) -> list[bytes]:
        """Physical elements ``start`` to ``stop`` (exclusive), in storage order."""
        if start >= stop:
            return []
        lens = self.lens
        base = self._offset(start)
        buf = bytes(self.data[base : base + sum(lens[start:stop])])
        ends = list(accumulate(lens[start:stop]))
        return [buf[b:e] for b, e in zip([0, *ends[:-1]], ends, strict=True)]

    def get(self, k: int) -> bytearray:
        """Element ``k`` (in list order)."""
        if self.rev:
            k = len(self.lens) - 1 - k
        start = self._offset(k)
        return self.data[start : start + self.lens[k]]

    def items(self, start: int = 0, stop: int | None = None) -> list[bytes]:
        """Elements ``start`` to ``stop`` (exclusive), in list order."""
        n = len(self.lens)
        if stop is None:
            stop = n
        if not self.rev:
            return self._physical(start, stop)
        values = self._physical(n - stop, n - start)
        values.reverse()
        return values

    def matches(self, value: bytes, backwards: bool = False, budget: int = -1) -> list[int]:
        """Indexes (in list order) of the elements equal to ``value`` among the first
        ``budget`` elements (all when negative) scanned from the front, or from the back
        when ``backwards``; in scanning order.

        The buffer is searched with ``find`` (in C) and each hit kept only if it is a whole
        element, so the Python work is per occurrence of the bytes, not per element.
        """
        lens = self.lens
        size = len(value)
        if size not in lens:  # a scan in C rules most nodes out
            return []
        n = len(lens)
        if size:
            data = self.data
            starts = [0, *accumulate(lens)]
            found = []
            find = data.find
            p = find(value)
            while p != -1:
                k = bisect_right(starts, p) - 1  # the non-empty element starting at p, if any
                if starts[k] == p and lens[k] == size:
                    found.append(k)
                p = find(value, p + 1)
        else:
            found = [k for k in range(n) if not lens[k]]
        if self.rev:
            found = [n - 1 - p for p in reversed(found)]
        if backwards:
            found.reverse()
        if 0 <= budget < n:
            found = [k for k in found if (n - 1 - k if backwards else k) < budget]
        return found

    # -- changing -----------------------------------------------------------------------

    def append(self, value: Value) -> None:
        """Add ``value`` after the last element."""
        if self.rev:
            self.data[:0] = value
            self.lens.insert(0, len(value))
        else:
            self.data += value
            self.lens.append(len(value))
        self.sz += _entry_size(value)

    def prepend(self, value: Value) -> None:
        """Add ``value`` before the first element."""
        if self.rev:
            self.data += value
            self.lens.append(len(value))
        else:
            self.data[:0] = value
            self.lens.insert(0, len(value))
        self.sz += _entry_size(value)

    def insert(self, k: int, value: Value) -> None:
        self.forward()
        at = self._offset(k)
        self.data[at:at] = value
        self.lens.insert(k, len(value))
        self.sz += str_size(value)

    def replace(self, k: int, value: Value) -> None:
        self.forward()
        at = self._offset(k)
        n = self.lens[k]
        if not self.plain:
            self.sz += str_size(value) - str_size(self.data[at : at + n])
        else:
            self.sz = len(value)
        self.data[at : at + n] = value
        self.lens[k] = len(value)

    def delete(self, k: int) -> None:
        self.forward()
        at = self._offset(k)
        n = self.lens[k]
        self.sz -= str_size(self.data[at : at + n])
        del self.data[at : at + n]
        del self.lens[k]

    def delete_range(self, start: int, stop: int) -> None:
        """Remove elements ``start`` to ``stop`` (exclusive, in list order)."""
        if start >= stop:
            return
        if self.rev:
            n = len(self.lens)
            start, stop = n - stop, n - start
        for value in self._physical(start, stop):
            self.sz -= str_size(value)
        at = self._offset(start)
        del self.data[at : at + sum(self.lens[start:stop])]
        del self.lens[start:stop]

    def split(self, offset: int, after: bool) -> Node:
        """Redis's ``_quicklistSplitNode``: with ``after``, this node keeps elements up to
        ``offset`` included and the new node gets the rest; without, the new node gets the
        elements before ``offset`` and this node keeps the rest."""
        self.forward()
        cut = offset + 1 if after else offset
        at = self._offset(cut)
        twin = Node()
        if after:
            twin.data = self.data[at:]
            twin.lens = self.lens[cut:]
            del self.data[at:]
            del self.lens[cut:]
        else:
            twin.data = self.data[:at]
            twin.lens = self.lens[:cut]
            del self.data[:at]
            del self.lens[:cut]
        twin.sz = LISTPACK_EMPTY + sum(map(str_size, twin.items()))
        self.sz -= twin.sz - LISTPACK_EMPTY
        return twin

    def absorb(self, other: Node) -> None:
        """Append ``other``'s elements (a merge of two packed nodes, ``other`` on the right)."""
        self.forward()
        other.forward()
        self.data += other.data
        self.lens.extend(other.lens)
        self.sz += other.sz - LISTPACK_EMPTY


def _allow_insert(node: Node | None, fill: int, size: int) -> bool:
    """Redis's ``_quicklistNodeAllowInsert``: may an element of ``size`` raw bytes join."""
    if node is None or node.plain or is_large(size, fill):
        return False
    return not exceeds_limit(fill, node.sz + size + _INSERT_OVERHEAD, len(node.lens) + 1)


def _allow_merge(a: Node | None, b: Node | None, fill: int) -> bool:
    """Redis's ``_quicklistNodeAllowMerge``."""
    if a is None or b is None or a.plain or b.plain:
        return False
    return not exceeds_limit(fill, a.sz + b.sz - LISTPACK_EMPTY, len(a.lens) + len(b.lens))


class List:
    """A Redis list."""

    __slots__ = ("fill", "length", "max_bytes", "max_count", "nodes", "quick")

    type_name: Final = "list"  # TYPE

    def __init__(self) -> None:
        self.nodes: deque[Node] = _single(Node())
        self.length = 0
        self.quick = False
        # The quicklist's own fill, meaningful once ``quick``, and the two limits derived
        # from it: a node holds at most ``max_bytes`` listpack bytes (the safety limit for a
        # count fill) and ``max_count`` elements; a longer element goes into a plain node.
        self.fill = -2
        self.max_bytes, self.max_count = _limits(-2)

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"<List {self.encoding} length={self.length} nodes={len(self.nodes)}>"

    @property
    def encoding(self) -> str:
        """OBJECT ENCODING's answer."""
        return "quicklist" if self.quick else "listpack"

    # -- encoding -------------------------------------------------------------------------

    def grow(self, fill: int, add_bytes: int, add_count: int) -> None:
        """Before adding ``add_count`` elements of ``add_bytes`` raw bytes in all: become a
        quicklist if the listpack would exceed the node limit of ``fill``."""
        if self.quick:
            return
        node = self.nodes[0]
        if exceeds_limit(fill, node.sz + add_bytes, self.length + add_count):
            self.quick = True
            self.fill = clamp_fill(fill)
            self.max_bytes, self.max_count = _limits(self.fill)
            self.nodes = deque(self.nodes) if self.length else deque()

    def shrink(self, fill: int, halve: bool = True) -> None:
        """After removing elements: become a listpack again if one packed node is left and
        it is at most half the node limit of ``fill`` (Redis 7.2+). Without ``halve``, the
        whole limit (Redis's ``LIST_CONV_AUTO``, for a list just built)."""
        if not self.quick or len(self.nodes) != 1:
            return
        node = self.nodes[0]
        if node.plain:
            return
        size_limit, count_limit = node_limits(fill)
        if halve:
            size_limit //= 2
            count_limit //= 2
        if node.sz > size_limit or self.length > count_limit:
            return
        self.quick = False
        self.nodes = _single(node)

    @classmethod
    def built(cls, values: list[bytes], fill: int, convert: bool = True) -> List:
        """A list made whole from ``values`` as Redis's SORT ... STORE makes it: a quicklist
        of ``fill`` filled from the tail, then (if ``convert``) a listpack if it came out one
        node that fits."""
        lst = cls.of_nodes([], fill)
        for value in values:
            lst.push_tail(value)
        if convert:
            lst.shrink(fill, halve=False)
        return lst

    @classmethod
    def of_nodes(cls, nodes: list[Node], fill: int) -> List:
        """A quicklist of ``fill`` made of ``nodes`` as they are (an RDB load keeps the
        file's nodes, even those larger than ``fill`` allows)."""
        lst = cls()
        lst.quick = True
        lst.fill = clamp_fill(fill)
        lst.max_bytes, lst.max_count = _limits(lst.fill)
        lst.nodes = deque(nodes)
        lst.length = sum(len(node.lens) for node in nodes)
        return lst

    # -- both ends --------------------------------------------------------------------------

    def push(self, values: list[bytes], start: int, head: bool, fill: int) -> int:
        """LPUSH / RPUSH of ``values[start:]``: the conversion check, then each push in
        order; returns the new length."""
        if not self.quick:
            add = 0
            for i in range(start, len(values)):
                add += len(values[i])
            self.grow(fill, add, len(values) - start)
        if self.quick:
            push = self.push_head if head else self.push_tail
            for i in range(start, len(values)):
                push(values[i])
            return self.length
        node = self.nodes[0]
        if not self.length:
            node.rev = head  # a list started by LPUSH grows at the head: store it reversed
        if head:
            for i in range(start, len(values)):
                node.prepend(values[i])
        else:
            for i in range(start, len(values)):
                node.append(values[i])
        self.length += len(values) - start
        return self.length

    def push_head(self, value: Value) -> None:
        self.length += 1
        nodes = self.nodes
        head = nodes[0] if nodes else None
        size = len(value)
        if self.quick:
            # is_large and _allow_insert on the precomputed limits (the hot path).
            if size > self.max_bytes:
                nodes.appendleft(Node.plain_of(value))
                return
            if (head is None or head.plain
                    or head.sz + size + _INSERT_OVERHEAD > self.max_bytes
                    or len(head.lens) >= self.max_count):
                nodes.appendleft(Node.packed(value, rev=True))
                return
        assert head is not None
        # Node.prepend, inline.
        if head.rev:
            head.data += value
            head.lens.append(size)
        else:
            head.data[:0] = value
            head.lens.insert(0, size)
        if size < 64 and size and not (48 <= value[0] <= 57 or value[0] == 45):
            head.sz += size + 2
        else:
            head.sz += str_size(value)

    def push_tail(self, value: Value) -> None:
        self.length += 1
        nodes = self.nodes
        tail = nodes[-1] if nodes else None
        size = len(value)
        if self.quick:
            if size > self.max_bytes:
                nodes.append(Node.plain_of(value))
                return
            if (tail is None or tail.plain
                    or tail.sz + size + _INSERT_OVERHEAD > self.max_bytes
                    or len(tail.lens) >= self.max_count):
                nodes.append(Node.packed(value))
                return
        assert tail is not None
        # Node.append, inline.
        if tail.rev:
            tail.data[:0] = value
            tail.lens.insert(0, size)
        else:
            tail.data += value
            tail.lens.append(size)
        if size < 64 and size and not (48 <= value[0] <= 57 or value[0] == 45):
            tail.sz += size + 2
        else:
            tail.sz += str_size(value)

    def pop_head(self) -> bytearray:
        """Remove and return the first element (the list must not be empty)."""
        self.length -= 1
        nodes = self.nodes
        node = nodes[0]
        if node.plain:
            nodes.popleft()
            return node.data
        # The physically last element of a reversed node, else the first (the hot path).
        lens = node.lens
        data = node.data
        if node.rev:
            n = lens.pop()
            value = data[-n:] if n else bytearray()
            if n:
                del data[-n:]
        else:
            n = lens.pop(0)
            value = data[:n]
            del data[:n]
        if n < 64 and n and not (48 <= value[0] <= 57 or value[0] == 45):
            node.sz -= n + 2
        else:
            node.sz -= str_size(value)
        if not lens and self.quick:
            nodes.popleft()
        return value

    def pop_tail(self) -> bytearray:
        """Remove and return the last element (the list must not be empty)."""
        self.length -= 1
        nodes = self.nodes
        node = nodes[-1]
        if node.plain:
            nodes.pop()
            return node.data
        lens = node.lens
        data = node.data
        if node.rev:  # the physically first element (a bytearray drops its front cheaply)
            n = lens.pop(0)
            value = data[:n]
            del data[:n]
        else:
            n = lens.pop()
            value = data[-n:] if n else bytearray()
            if n:
                del data[-n:]
        if n < 64 and n and not (48 <= value[0] <= 57 or value[0] == 45):
            node.sz -= n + 2
        else:
            node.sz -= str_size(value)
        if not lens and self.quick:
            nodes.pop()
        return value

    def pop_many(self, count: int, head: bool) -> list[bytes]:
        """LPOP / RPOP with a count: up to ``count`` elements from one end, nearest first."""
        n = min(count, self.length)
        if head:
            taken = self.range(0, n - 1)
            self._delete_range(0, n)
        else:
            taken = self.range(-n, -1)
            taken.reverse()
            self._delete_range(-n, n)
        return taken

    # -- positions ----------------------------------------------------------------------------

    def _seek(self, index: int) -> tuple[int, int]:
        """(node position, offset in the node) of element ``index`` (0 <= index < length),
        walking from the nearer end."""
        nodes = self.nodes
        if index <= (self.length - 1) >> 1:
            for pos, node in enumerate(nodes):
                n = len(node.lens)
                if index < n:
                    return pos, index
                index -= n
        else:
            back = self.length - 1 - index
            last = len(nodes) - 1
            for j, node in enumerate(reversed(nodes)):
                n = len(node.lens)
                if back < n:
                    return last - j, n - 1 - back
                back -= n
        raise IndexError(index)

    def get(self, index: int) -> bytearray | None:
        """LINDEX: the element at ``index`` (negative counts from the end), or None."""
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            return None
        pos, offset = self._seek(index)
        return self.nodes[pos].get(offset)

    def range(self, start: int, stop: int) -> list[bytes]:
        """LRANGE's elements from ``start`` to ``stop`` inclusive, with Redis's rules for
        negative and out-of-range indexes."""
        length = self.length
        if start < 0:
            start += length
        if stop < 0:
            stop += length
        if start < 0:
            start = 0
        if start > stop or start >= length:
            return []
        if stop >= length:
            stop = length - 1
        want = stop - start + 1
        pos, offset = self._seek(start)
        out: list[bytes] = []
        for node in islice(self.nodes, pos, None):
            take = min(len(node.lens) - offset, want - len(out))
            out += node.items(offset, offset + take)
            if len(out) == want:
                break
            offset = 0
        return out

    def __iter__(self) -> Iterator[bytes]:
        for node in self.nodes:
            yield from node.items()

    def values(self) -> list[bytes]:
        out: list[bytes] = []
        for node in self.nodes:
            out += node.items()
        return out

    def set(self, index: int, value: Value) -> bool:
        """LSET: replace the element at ``index``; False when out of range."""
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            return False
        pos, offset = self._seek(index)
        if not self.quick:
            self.nodes[0].replace(offset, value)
        else:
            self._replace(pos, offset, value)
        return True

    def insert(self, pivot: bytes, value: Value, after: bool) -> bool:
        """LINSERT: put ``value`` next to the first ``pivot`` from the head; False when the
        pivot is not in the list."""
        for pos, node in enumerate(self.nodes):
            found = node.matches(pivot, budget=-1)
            if not found:
                continue
            k = found[0]
            if not self.quick:
                node.insert(k + 1 if after else k, value)
                self.length += 1
            else:
                self._insert(pos, k, value, after)
            return True
        return False

    def remove(self, value: bytes, count: int) -> int:
        """LREM: remove up to ``count`` occurrences of ``value`` (all when 0), from the tail
        when ``count`` is negative; returns how many were removed."""
        limit = abs(count)
        backwards = count < 0
        removed = 0
        nodes = self.nodes
        order = range(len(nodes) - 1, -1, -1) if backwards else range(len(nodes))
        emptied: list[int] = []
        for pos in order:
            node = nodes[pos]
            hits = node.matches(value, backwards)
            if not hits:
                continue
            if limit and len(hits) > limit - removed:
                del hits[limit - removed :]
            for k in sorted(hits, reverse=True):
                node.delete(k)
            removed += len(hits)
            if not node.lens and self.quick:
                emptied.append(pos)
            if limit and removed == limit:
                break
        for pos in sorted(emptied, reverse=True):
            del nodes[pos]
        self.length -= removed
        return removed

    def trim(self, start: int, stop: int) -> int:
        """LTRIM with Redis's index rules; returns how many elements were removed."""
        length = self.length
        if start < 0:
            start += length
        if stop < 0:
            stop += length
        if start < 0:
            start = 0
        if start > stop or start >= length:
            left, right = length, 0
        else:
            if stop >= length:
                stop = length - 1
            left, right = start, length - stop - 1
        self._delete_range(0, left)
        self._delete_range(-right, right)
        return left + right

    def positions(self, value: bytes, rank: int, count: int, maxlen: int) -> list[int]:
        """LPOS: indexes of matches of ``value``, skipping the first ``|rank| - 1`` matches
        (from the tail when ``rank`` is negative), at most ``count`` of them (0: all),
        looking at no more than ``maxlen`` elements (0: all)."""
        backwards = rank < 0
        skip = abs(rank) - 1
        scanned = 0
        found: list[int] = []
        base = self.length if backwards else 0
        for node in reversed(self.nodes) if backwards else iter(self.nodes):
            n = len(node.lens)
            if backwards:
                base -= n
            budget = n if not maxlen else min(n, maxlen - scanned)
            if budget <= 0:
                break
            for k in node.matches(value, backwards, budget):
                if skip:
                    skip -= 1
                    continue
                found.append(base + k)
                if count and len(found) >= count:
                    return found
            scanned += budget
            if not backwards:
                base += n
        return found

    # -- quicklist structure (Redis's quicklist.c decisions) --------------------------------

    def _node_at(self, pos: int) -> Node | None:
        nodes = self.nodes
        return nodes[pos] if 0 <= pos < len(nodes) else None

    def _merge(self, pos: int) -> None:
        """Merge node ``pos + 1`` into node ``pos``."""
        nodes = self.nodes
        nodes[pos].absorb(nodes[pos + 1])
        del nodes[pos + 1]

    def _merge_around(self, center: int) -> int:
        """Redis's ``_quicklistMergeNodes``: try the four merges around ``center``; returns
        the position of the node the center ended up in."""
        fill = self.fill
        at = self._node_at
        if _allow_merge(at(center - 1), at(center - 2), fill):
            self._merge(center - 2)
            center -= 1
        if _allow_merge(at(center + 1), at(center + 2), fill):
            self._merge(center + 1)
        if _allow_merge(at(center), at(center - 1), fill):
            self._merge(center - 1)
            center -= 1
        if _allow_merge(at(center), at(center + 1), fill):
            self._merge(center)
        return center

    def _insert(self, pos: int, offset: int, value: Value, after: bool) -> None:
        """Redis's ``_quicklistInsert``: ``value`` before or after element ``offset`` of node
        ``pos``, into that node, a neighbour, a new node or a split of the node."""
        nodes = self.nodes
        fill = self.fill
        size = len(value)
        node = nodes[pos]
        count = len(node.lens)
        full = not _allow_insert(node, fill, size)
        at_tail = at_head = avail_next = avail_prev = False
        if after and offset == count - 1:
            at_tail = True
            avail_next = _allow_insert(self._node_at(pos + 1), fill, size)
        if not after and offset == 0:
            at_head = True
            avail_prev = _allow_insert(self._node_at(pos - 1), fill, size)
        self.length += 1
        if is_large(size, fill):
            if node.plain or at_tail or at_head:
                nodes.insert(pos + 1 if after else pos, Node.plain_of(value))
            else:
                rest = node.split(offset, after)
                if after:
                    nodes.insert(pos + 1, Node.plain_of(value))
                    nodes.insert(pos + 2, rest)
                else:
                    nodes.insert(pos, Node.plain_of(value))
                    nodes.insert(pos, rest)
            return
        if not full:
            node.insert(offset + 1 if after else offset, value)
        elif at_tail and avail_next:
            nodes[pos + 1].prepend(value)
        elif at_head and avail_prev:
            nodes[pos - 1].append(value)
        elif at_tail or at_head:
            nodes.insert(pos + 1 if after else pos, Node.packed(value))
        else:
            rest = node.split(offset, after)
            if after:
                rest.prepend(value)
                nodes.insert(pos + 1, rest)
            else:
                rest.append(value)
                nodes.insert(pos, rest)
                pos += 1
            self._merge_around(pos)

    def _replace(self, pos: int, offset: int, value: Value) -> None:
        """Redis's ``quicklistReplaceEntry`` for element ``offset`` of node ``pos``."""
        nodes = self.nodes
        node = nodes[pos]
        large = is_large(len(value), self.fill)
        if not node.plain and not large:
            node.replace(offset, value)
        elif node.plain:
            if large:
                node.replace(0, value)
            else:
                self._insert(pos, 0, value, after=True)
                del nodes[pos]
                self.length -= 1
        else:
            rest = node.split(offset, after=True) if offset != len(node.lens) - 1 else None
            nodes.insert(pos + 1, Node.plain_of(value))
            if rest is not None:
                nodes.insert(pos + 2, rest)
            if len(node.lens) == 1:
                del nodes[pos]
            else:
                node.delete(len(node.lens) - 1)
                self._merge_around(pos + 1)

    def _delete_range(self, start: int, count: int) -> None:
        """Redis's ``quicklistDelRange`` (and ``lpDeleteRange`` for a listpack): ``count``
        elements from index ``start`` (negative counts from the end)."""
        if count <= 0:
            return
        length = self.length
        extent = count
        if start >= 0 and extent > length - start:
            extent = length - start
        elif start < 0 and extent > -start:
            extent = -start
        index = start + length if start < 0 else start
        if not 0 <= index < length or extent <= 0:
            return
        if not self.quick:
            self.nodes[0].delete_range(index, index + extent)
            self.length -= extent
            return
        pos, offset = self._seek(index)
        if start < 0:
            offset -= len(self.nodes[pos].lens)  # Redis seeks from the tail: a negative offset
        nodes = self.nodes
        while extent:
            node = nodes[pos]
            n = len(node.lens)
            whole = False
            if offset == 0 and extent >= n:
                whole = True
                gone = n
            elif offset >= 0 and extent + offset >= n:
                gone = n - offset
            elif offset < 0:
                gone = min(-offset, extent)
            else:
                gone = extent
            if whole or node.plain:
                del nodes[pos]
                self.length -= n
            else:
                first = offset if offset >= 0 else n + offset
                node.delete_range(first, first + gone)
                self.length -= gone
                if node.lens:
                    pos += 1
                else:
                    del nodes[pos]
            extent -= gone
            offset = 0

    # -- whole-value operations -------------------------------------------------------------

    def copy(self) -> List:
        """An independent copy (COPY) with the same encoding and node structure."""
        twin = List()
        copies = [node.copy() for node in self.nodes]
        twin.nodes = deque(copies) if self.quick else _single(copies[0])
        twin.length = self.length
        twin.quick = self.quick
        twin.fill = self.fill
        twin.max_bytes, twin.max_count = self.max_bytes, self.max_count
        return twin

    def memory_usage(self) -> int:
        """An estimate of the bytes the list occupies (MEMORY USAGE)."""
        size = sys.getsizeof(self) + sys.getsizeof(self.nodes)
        for node in self.nodes:
            size += sys.getsizeof(node) + sys.getsizeof(node.data) + sys.getsizeof(node.lens)
        return size

    def quicklist_stats(self) -> tuple[int, int, int]:
        """(nodes, elements, listpack bytes summed over nodes), as DEBUG OBJECT reports."""
        return len(self.nodes), self.length, sum(node.sz for node in self.nodes)

    def check(self) -> None:
        """Assert the invariants of the module docstring (for tests)."""
        assert self.length == sum(len(node.lens) for node in self.nodes)
        if not self.quick:
            assert len(self.nodes) == 1 and not self.nodes[0].plain
        for node in self.nodes:
            assert len(node.data) == sum(node.lens)
            if self.quick:
                assert node.lens, "empty quicklist node"
            if node.plain:
                assert len(node.lens) == 1 and node.sz == len(node.data)
            else:
                assert node.sz == LISTPACK_EMPTY + sum(map(str_size, node.items()))
