"""Lists in RDB form, registered with :mod:`resplite.formats.rdb_values`.

Writing follows Redis 7.0+'s ``rdbSaveObject``: every list, listpack or quicklist, is RDB
type 18 (``RDB_TYPE_LIST_QUICKLIST_2``): the node count, then per node its container (1 a
plain node: the element's bytes; 2 a packed node: its listpack) and the node as an RDB
string. A listpack-encoded list is written as a quicklist of one packed node. The listpacks
are rebuilt from the elements (:func:`resplite.store.listpack.encode`, Redis's own element
encodings), so they equal Redis's bytes for the same node structure, which
:mod:`resplite.store.list` mirrors. A node Redis keeps LZF-compressed (``list-compress-depth``)
is written as an LZF string; with ``rdbcompression yes`` (the default) that is the same
compression of the same bytes as here, so the files agree.

Reading accepts every list type of RDB versions 1 to 12, as ``rdbLoadObject`` does:

* type 1 (a count and the elements): pushed at the tail of a quicklist of the configured
  ``list-max-listpack-size``, then a listpack if that came out one node within the limit;
* type 10 (one ziplist, before Redis 3.2): pushed the same way, and left a quicklist (Redis
  does not try the conversion for this type);
* types 14 (ziplist nodes, Redis 3.2 to 6.2) and 18 (listpack or plain nodes, 7.0+): the
  file's nodes kept as they are (empty packed nodes skipped), then a listpack if exactly one
  packed node within the limit is left. Strings read as LZF are decompressed by the reader,
  which is how compressed nodes load.

A list with no elements raises :class:`~resplite.formats.rdb_values.EmptyValue`; a node that
does not decode, an unknown container or an empty plain node raise
:class:`~resplite.formats.rdb_format.RdbError` with the offset.
"""

from __future__ import annotations

from typing import Final

from resplite.formats import rdb_format as f
from resplite.formats import rdb_values as v
from resplite.store import listpack, ziplist
from resplite.store.list import List, Node

CONTAINER_PLAIN: Final = 1
CONTAINER_PACKED: Final = 2


def _type_of(value: List) -> int:
    return f.TYPE_LIST_QUICKLIST_2


def _write(out: bytearray, value: List, compress: bool) -> None:
    nodes = value.nodes
    f.write_len(out, len(nodes))
    for node in nodes:
        if node.plain:
            f.write_len(out, CONTAINER_PLAIN)
            f.write_string(out, node.data, compress)
        else:
            f.write_len(out, CONTAINER_PACKED)
            f.write_string(out, listpack.encode(node.items()), compress)


def _read_plain(r: f.Reader, kind: int, limits: v.Limits) -> List:
    count = r.length("a list length")
    values = [r.string("a list element") for _ in range(count)]
    if not values:
        raise v.EmptyValue
    return List.built(values, limits.list_fill)


def _read_ziplist(r: f.Reader, kind: int, limits: v.Limits) -> List:
    start = r.pos
    blob = r.string("a list ziplist")
    try:
        values = ziplist.decode(blob)
    except ValueError as exc:
        raise r.error(f"List ziplist integrity check failed ({exc})", start) from None
    if not values:
        raise v.EmptyValue
    return List.built(values, limits.list_fill, convert=False)


def _read_quicklist(r: f.Reader, kind: int, limits: v.Limits) -> List:
    nodes: list[Node] = []
    for _ in range(r.length("a quicklist node count")):
        container = CONTAINER_PACKED
        if kind == f.TYPE_LIST_QUICKLIST_2:
            at = r.pos
            container = r.length("a quicklist node container")
            if container not in (CONTAINER_PLAIN, CONTAINER_PACKED):
                raise r.error("Quicklist integrity check failed", at)
        start = r.pos
        blob = r.string("a quicklist node")
        if not blob:
            raise r.error("empty quicklist node", start)
        if container == CONTAINER_PLAIN:
            nodes.append(Node.plain_of(blob))
            continue
        try:
            if kind == f.TYPE_LIST_QUICKLIST_2:
                r.checked += 1
                values = [bytes(x) for x in listpack.decode(blob, as_bytes=True)]
            else:
                values = ziplist.decode(blob)
        except ValueError as exc:
            what = "Listpack" if kind == f.TYPE_LIST_QUICKLIST_2 else "Ziplist"
            raise r.error(f"{what} integrity check failed ({exc})", start) from None
        if values:  # Redis skips an empty node silently
            nodes.append(Node.of(values))
    if not nodes:
        raise v.EmptyValue
    value = List.of_nodes(nodes, limits.list_fill)
    value.shrink(limits.list_fill, halve=False)
    return value


v.register_type(List, _type_of, _write, {
    f.TYPE_LIST: _read_plain,
    f.TYPE_LIST_ZIPLIST: _read_ziplist,
    f.TYPE_LIST_QUICKLIST: _read_quicklist,
    f.TYPE_LIST_QUICKLIST_2: _read_quicklist,
})
