"""The node count of the radix tree Redis would build over a stream's node keys.

XINFO STREAM reports ``radix-tree-nodes``: how many nodes Redis's radix tree (rax) uses to
index the stream's listpacks by their 16-byte big-endian master ids. A rax compresses
every chain of single-child nodes into one node, keeps one node per branching point and
one per stored key, and (all keys having the same length) ends up in the same shape for
the same set of keys whatever the order of insertions and deletions. So the count can be
derived from the sorted keys alone, without keeping a tree:

* an empty tree is one node;
* at a branching byte position, one node, plus the subtrees of each distinct byte there;
* a run of bytes shared by every key below a point is one compressed node;
* each key ends in one leaf node.
"""

from __future__ import annotations

from collections.abc import Sequence

_KEY_BYTES = 16


def _byte(key: int, depth: int) -> int:
    return (key >> (8 * (_KEY_BYTES - 1 - depth))) & 0xFF


def _common_prefix(a: int, b: int) -> int:
    diff = a ^ b
    if diff == 0:
        return _KEY_BYTES
    return _KEY_BYTES - 1 - (diff.bit_length() - 1) // 8


def radix_node_count(keys: Sequence[int]) -> int:
    """Nodes of a rax holding ``keys`` (sorted, distinct 128-bit integers)."""
    if not keys:
        return 1
    return _count(keys, 0, len(keys), 0)


def _count(keys: Sequence[int], lo: int, hi: int, depth: int) -> int:
    if hi - lo == 1:
        return 1 if depth == _KEY_BYTES else 2  # leaf, or compressed tail + leaf
    shared = _common_prefix(keys[lo], keys[hi - 1])
    nodes = 0
    if shared > depth:
        nodes += 1  # one compressed node for the shared run
        depth = shared
    nodes += 1  # the branching node
    start = lo
    current = _byte(keys[lo], depth)
    for i in range(lo + 1, hi):
        b = _byte(keys[i], depth)
        if b != current:
            nodes += _count(keys, start, i, depth + 1)
            start = i
            current = b
    nodes += _count(keys, start, hi, depth + 1)
    return nodes
