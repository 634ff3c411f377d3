"""Parse raw RESP replies into typed trees, so tests can compare structure and bytes.

A tree keeps what a client library would erase: the reply type of every node (simple vs bulk
string, set vs array, map, the kind of null) and the order of elements. Tests normalise the
parts Redis itself leaves unordered (e.g. the subcommands of a container, which come out in
hash-table order) and compare the rest exactly; :func:`dump` turns a tree back into bytes.
"""

from __future__ import annotations

from typing import Any

# A node is (type byte, payload): payload is bytes for scalars and nulls, a list of nodes for
# arrays/sets/pushes, and a list of (key node, value node) pairs for maps and attributes.
Node = tuple[bytes, Any]


def parse(data: bytes) -> Node:
    node, end = _parse(data, 0)
    if end != len(data):
        raise ValueError(f"trailing bytes after reply: {data[end:end + 40]!r}")
    return node


def _parse(buf: bytes, i: int) -> tuple[Node, int]:
    kind = buf[i : i + 1]
    nl = buf.index(b"\r\n", i)
    head = buf[i + 1 : nl]
    i = nl + 2
    if kind in (b"$", b"=", b"!"):
        n = int(head)
        if n < 0:
            return (kind, None), i
        return (kind, buf[i : i + n]), i + n + 2
    if kind in (b"*", b"~", b">", b"%", b"|"):
        n = int(head)
        if n < 0:
            return (kind, None), i
        items = []
        for _ in range(n * 2 if kind in (b"%", b"|") else n):
            item, i = _parse(buf, i)
            items.append(item)
        if kind in (b"%", b"|"):
            return (kind, list(zip(items[::2], items[1::2], strict=True))), i
        return (kind, items), i
    return (kind, head), i


def dump(node: Node) -> bytes:
    kind, payload = node
    if kind in (b"$", b"=", b"!"):
        if payload is None:
            return kind + b"-1\r\n"
        return kind + b"%d\r\n" % len(payload) + payload + b"\r\n"
    if kind in (b"*", b"~", b">"):
        if payload is None:
            return kind + b"-1\r\n"
        return kind + b"%d\r\n" % len(payload) + b"".join(dump(x) for x in payload)
    if kind in (b"%", b"|"):
        return kind + b"%d\r\n" % len(payload) + b"".join(dump(k) + dump(v) for k, v in payload)
    return kind + payload + b"\r\n"


def text(node: Node) -> str:
    """The text of a string node (simple, bulk or verbatim)."""
    return node[1].decode()


def to_python(node: Node) -> Any:
    """A plain Python value (maps as dicts), for lookups in tests."""
    kind, payload = node
    if kind in (b"*", b"~", b">"):
        return None if payload is None else [to_python(x) for x in payload]
    if kind in (b"%", b"|"):
        return {to_python(k): to_python(v) for k, v in payload}
    if kind == b":":
        return int(payload)
    if payload is None or kind == b"_":
        return None
    return payload.decode()
