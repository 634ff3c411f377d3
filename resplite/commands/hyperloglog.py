"""HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST.

An HLL is a string in Redis's exact representation (:mod:`resplite.algorithms.hyperloglog`),
so GET returns Redis's bytes and an HLL written by Redis (SET of its GET) works here. The
commands that change an HLL make the stored value a
:class:`~resplite.store.string_value.MutableString` (Redis "unshares" it, leaving ``raw``)
and change it in place. PFCOUNT of one key also writes: it refreshes the cached cardinality
in the header, and signals the key when it does, as Redis does.

A string that is not an HLL gets Redis's ``WRONGTYPE Key is not a valid HyperLogLog string
value.``; another type the ordinary WRONGTYPE; a sparse HLL whose runs do not cover the
16384 registers ``INVALIDOBJ Corrupted HLL object detected``. The sparse limit is the
``hll-sparse-max-bytes`` directive, read at every write as Redis reads it.

PFSELFTEST checks the register packing and the estimator's error on a smaller sample than
Redis's (which adds ten million elements) and answers OK as Redis does.
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Any

from resplite.algorithms import hyperloglog as hll
from resplite.commands.generic import lookup, lookup_read
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import STRING
from resplite.engine.registry import command
from resplite.protocol.replies import OK, Status
from resplite.store.string_value import STRING_TYPES, MutableString

if TYPE_CHECKING:
    from resplite.engine.client import Client


def _max_bytes(client: Client) -> int:
    return client.server.config["hll-sparse-max-bytes"]  # type: ignore[no-any-return]


def _checked(value: Any) -> bytes | bytearray:
    """A looked-up value that must be a valid HLL (Redis's ``isHLLObjectOrReply``)."""
    if not isinstance(value, STRING_TYPES):
        raise CommandError(errors.WRONGTYPE)
    if not hll.is_valid(value):
        raise CommandError(errors.HLL_WRONGTYPE)
    return value


def _unshared(client: Client, key: bytes, value: bytes | bytearray) -> MutableString:
    """The stored HLL as a mutable string (stored back in place of an immutable one)."""
    if isinstance(value, MutableString):
        return value
    buf = MutableString(value)
    client.db.set(key, buf, keep_ttl=True, looked_up=True)
    return buf


@command("pfadd")
def pfadd(client: Client, argv: list[bytes]) -> int:
    key = argv[1]
    value = lookup(client, key)
    updated = 0
    if value is None:
        buf = MutableString(hll.new_sparse())
        client.db.add(key, buf)
        updated = 1
    else:
        buf = _unshared(client, key, _checked(value))
    result = hll.add_many(buf, argv[2:], _max_bytes(client))
    if result < 0:
        raise CommandError(errors.HLL_CORRUPT)
    updated += result
    if updated:
        hll.invalidate_cache(buf)
        client.db.signal_modified(key)
        client.server.notify(STRING, b"pfadd", key, client.db_index)
    return 1 if updated else 0


@command("pfcount")
def pfcount(client: Client, argv: list[bytes]) -> int:
    if len(argv) > 2:
        maximum = bytearray(hll.REGISTERS)
        for key in argv[1:]:
            value = lookup_read(client, key)
            if value is None:
                continue
            try:
                hll.merge_into(maximum, _checked(value))
            except hll.CorruptHLL:
                raise CommandError(errors.HLL_CORRUPT) from None
        return hll.estimate(hll.histogram(maximum))
    key = argv[1]
    value = lookup_read(client, key)
    if value is None:
        return 0
    buf = _unshared(client, key, _checked(value))
    card = hll.cached_cardinality(buf)
    if card is not None:
        return card
    try:
        card = hll.count(buf)
    except hll.CorruptHLL:
        raise CommandError(errors.HLL_CORRUPT) from None
    hll.store_cardinality(buf, card)
    client.db.signal_modified(key)
    return card


@command("pfmerge")
def pfmerge(client: Client, argv: list[bytes]) -> Any:
    maximum = bytearray(hll.REGISTERS)
    use_dense = False
    # The destination is the first of the merged keys, so it is checked like the sources.
    for key in argv[1:]:
        value = lookup_read(client, key)
        if value is None:
            continue
        checked = _checked(value)
        if checked[4] == hll.DENSE:
            use_dense = True
        try:
            hll.merge_into(maximum, checked)
        except hll.CorruptHLL:
            raise CommandError(errors.HLL_CORRUPT) from None
    dest = argv[1]
    value = lookup(client, dest)
    if value is None:
        buf = MutableString(hll.new_sparse())
        client.db.add(dest, buf)
    else:
        buf = _unshared(client, dest, value)
    if use_dense:
        try:
            hll.to_dense(buf)
        except hll.CorruptHLL:
            raise CommandError(errors.HLL_CORRUPT) from None
    if buf[4] == hll.DENSE:
        regs = hll.dense_registers(buf)
        merged = bytes(map(max, regs, maximum))
        buf[hll.HDR_SIZE :] = hll.pack_dense(merged)
    else:
        # Register by register, in order, as Redis writes a sparse destination: the
        # sparse bytes depend on the order of the updates. (Redis ignores a failure here.)
        updates = [(index, count) for index, count in enumerate(maximum) if count]
        hll.update_many(buf, updates, _max_bytes(client))
    hll.invalidate_cache(buf)
    client.db.signal_modified(dest)
    client.server.notify(STRING, b"pfadd", dest, client.db_index)
    return OK


# -- debugging ------------------------------------------------------------------------------------


@command("pfdebug")
def pfdebug(client: Client, argv: list[bytes]) -> Any:
    sub = argv[1]
    if sub.split(b"\0", 1)[0].lower() == b"simd":
        return _pfdebug_simd(argv)
    key = argv[2]
    value = lookup(client, key)
    if value is None:
        raise CommandError(errors.HLL_NO_KEY)
    buf = _unshared(client, key, _checked(value))
    name = sub.split(b"\0", 1)[0].lower()
    if name not in (b"getreg", b"decode", b"encoding", b"todense"):
        raise CommandError(errors.pfdebug_unknown(sub))
    if len(argv) != 3:
        raise CommandError(errors.pfdebug_arity(sub))
    if name == b"getreg":
        try:
            hll.to_dense(buf)
        except hll.CorruptHLL:
            raise CommandError(errors.HLL_CORRUPT) from None
        return list(hll.dense_registers(buf))
    if name == b"decode":
        if buf[4] != hll.SPARSE:
            raise CommandError(errors.HLL_NOT_SPARSE)
        return hll.decode_sparse(buf)
    if name == b"encoding":
        return Status("dense" if buf[4] == hll.DENSE else "sparse")
    try:
        return 1 if hll.to_dense(buf) else 0
    except hll.CorruptHLL:
        raise CommandError(errors.HLL_CORRUPT) from None


def _pfdebug_simd(argv: list[bytes]) -> Any:
    """PFDEBUG SIMD ON|OFF (Redis 8.0): Redis switches its vectorized register merge, for its
    tests; there is none here, so the answer is always that it is disabled, as on a CPU
    without one. (Redis sends that status after the error for a bad argument too, two
    replies to one command; only the error is sent here.)"""
    if len(argv) != 3:
        raise CommandError(errors.pfdebug_arity(argv[1]))
    if argv[2].lower() not in (b"on", b"off"):
        raise CommandError("ERR Argument must be ON or OFF")
    return Status("disabled")


# PFSELFTEST adds elements up to this many (Redis goes to ten million).
_SELFTEST_ELEMENTS = 100_000


@command("pfselftest")
def pfselftest(client: Client, argv: list[bytes]) -> Any:
    rng = random.Random()
    # Register packing: random values survive a pack and an unpack, neighbours untouched.
    for _ in range(10):
        regs = bytes(rng.randrange(64) for _ in range(hll.REGISTERS))
        packed = bytearray(hll.MAGIC + bytes(12)) + hll.pack_dense(regs)
        if hll.dense_registers(packed) != regs:
            raise CommandError("ERR TESTFAILED Register packing mismatch")
    # Estimates: dense and sparse agree, and stay within six standard errors.
    dense = bytearray(hll.MAGIC + bytes(12)) + bytes(hll.DENSE_SIZE - hll.HDR_SIZE)
    sparse = hll.new_sparse()
    max_bytes = _max_bytes(client)
    relerr = 1.04 / math.sqrt(hll.REGISTERS)
    seed = rng.getrandbits(64)
    checkpoint = 1
    for j in range(1, _SELFTEST_ELEMENTS + 1):
        element = (j ^ seed).to_bytes(8, "little")
        index, count = hll.pattern(element)
        hll.dense_set(dense, index, count)
        hll.add(sparse, element, max_bytes)
        if j == checkpoint:
            if j < max_bytes // 2 and sparse[4] != hll.SPARSE:
                raise CommandError("ERR TESTFAILED sparse encoding not used")
            estimate = hll.count(dense)
            if estimate != hll.count(sparse):
                raise CommandError("ERR TESTFAILED dense/sparse disagree")
            maxerr = 1 if j == 10 else math.ceil(relerr * 6 * checkpoint)
            if abs(checkpoint - estimate) > maxerr:
                raise CommandError(
                    f"ERR TESTFAILED Too big error. card:{checkpoint} "
                    f"abserr:{abs(checkpoint - estimate)}"
                )
            checkpoint *= 10
    return OK
