"""DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis's SHA-1 digests of the data set and of values.

The digests are Redis's (its debug.c), bit for bit, so a digest taken on resplite equals the
one Redis gives for the same data. Two mixes build them:

* ``xor(d, data)``: ``d ^= SHA1(data)``, for what has no order (set members, hash fields,
  sorted-set entries, the keys of a database);
* ``mix(d, data)``: ``d = SHA1(d ^ SHA1(data))``, for what has one (list elements, stream
  entries, and each part of a pair).

A value's digest starts with its type number (4 bytes, big-endian) mixed in, then its
contents, then ``!!expire!!`` xored in when the key has a TTL. A sorted-set score is written
as fpconv prints it; a hash field with a TTL adds ``!!hexpire!!`` to its own digest; a
stream entry is its id as ``<ms>.<seq>`` followed by its fields and values. The data-set
digest mixes in each non-empty database's number, then xors in each key's digest (the key
mixed into a fresh digest, then its value's). Keys and fields that are logically expired
but not yet deleted are included, as in Redis, which walks its tables as they are.
"""

from __future__ import annotations

import hashlib
from typing import Any

from resplite.algorithms.scores import fpconv_dtoa
from resplite.store.hash import Hash
from resplite.store.keyspace import Database
from resplite.store.list import List
from resplite.store.set import Set
from resplite.store.sparse_array import SparseArray
from resplite.store.stream import Stream
from resplite.store.stream_ids import MAX_ID
from resplite.store.zset import ZSet

_ZERO = bytes(20)

# Redis's object type numbers (OBJ_STRING ... OBJ_STREAM; 5 is a module's type).
_STRING, _LIST, _SET, _ZSET, _HASH, _STREAM, _ARRAY = 0, 1, 2, 3, 4, 6, 8


def _xor(digest: bytes, data: bytes) -> bytes:
    h = hashlib.sha1(data).digest()
    return (int.from_bytes(digest, "big") ^ int.from_bytes(h, "big")).to_bytes(20, "big")


def _mix(digest: bytes, data: bytes) -> bytes:
    return hashlib.sha1(_xor(digest, data)).digest()


def value_digest(db: Database, key: bytes, value: Any, digest: bytes = _ZERO) -> bytes:
    """``digest`` with ``key``'s value mixed in (Redis's xorObjectDigest)."""
    if isinstance(value, (bytes, bytearray)):
        kind = _STRING
    elif isinstance(value, List):
        kind = _LIST
    elif isinstance(value, Set):
        kind = _SET
    elif isinstance(value, ZSet):
        kind = _ZSET
    elif isinstance(value, Hash):
        kind = _HASH
    elif isinstance(value, Stream):
        kind = _STREAM
    elif isinstance(value, SparseArray):
        kind = _ARRAY
    else:
        raise TypeError(f"no digest for a value of type {type(value).__name__}")
    digest = _mix(digest, kind.to_bytes(4, "big"))
    if kind == _STRING:
        digest = _mix(digest, bytes(value))
    elif kind == _LIST:
        for element in value:
            digest = _mix(digest, bytes(element))
    elif kind == _SET:
        for member in value:
            digest = _xor(digest, member)
    elif kind == _ZSET:
        for score, member in value.entries(0, len(value)):
            pair = _mix(_mix(_ZERO, member), fpconv_dtoa(score))
            digest = _xor(digest, pair)
    elif kind == _HASH:
        ttls = value.ttls or {}
        for field, val in value.fields.items():
            pair = _mix(_mix(_ZERO, field), val)
            if field in ttls:
                pair = _xor(pair, b"!!hexpire!!")
            digest = _xor(digest, pair)
    elif kind == _ARRAY:
        # Each element as its index (decimal) then its value, by ascending index.
        for index, element in value.items():
            digest = _mix(_mix(digest, b"%d" % index), element)
    else:
        for sid, fields in value.range(0, MAX_ID):
            digest = _mix(digest, b"%d.%d" % (sid >> 64, sid & ((1 << 64) - 1)))
            for part in fields:
                digest = _mix(digest, part)
    if key in db.expires:
        digest = _xor(digest, b"!!expire!!")
    return digest


def dataset_digest(dbs: list[Database]) -> bytes:
    """The digest of every database (Redis's computeDatasetDigest): all zeros when empty."""
    final = _ZERO
    for index, db in enumerate(dbs):
        if not db.data:
            continue
        final = _mix(final, index.to_bytes(4, "big"))
        for key, value in db.data.items():
            final = _xor(final, value_digest(db, key, value, _mix(_ZERO, key)))
    return final
