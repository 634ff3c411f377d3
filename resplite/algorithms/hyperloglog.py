"""HyperLogLog in Redis's exact representation, so that the same elements leave the same bytes.

An HLL is a string: a 16-byte header (``HYLL``, an encoding byte, three zero bytes, and the
cached cardinality as 8 little-endian bytes whose top bit set means "stale") followed by the
registers in one of two encodings:

* dense: 16384 registers of 6 bits packed least-significant bit first, 12288 bytes;
* sparse: a run-length code of opcodes: ZERO ``00xxxxxx`` (1..64 zero registers), XZERO
  ``01xxxxxx yyyyyyyy`` (1..16384 zero registers) and VAL ``1vvvvvxx`` (1..4 registers of
  value 1..32).

Elements are hashed with MurmurHash64A (seed ``0xadc83b19``): the low 14 bits pick the
register, and the position of the lowest set bit of the remaining 50 (plus one) is the
value it is raised to. A sparse HLL is updated in place by Redis's own procedure (split the
opcode that covers the register, then merge equal VAL neighbours over at most five opcodes),
which is not canonical: only by following it step by step do the bytes come out as Redis's.
It becomes dense for good once a value above 32 is needed or the sparse string would exceed
``hll-sparse-max-bytes``.

Cardinality comes from the register histogram through Ertl's improved estimator, computed in
the same order of double operations as Redis, so the estimate is the same integer.

Every function here takes the value as a ``bytearray`` (the stored
:class:`~resplite.store.string_value.MutableString`) and changes it in place; a conversion
to dense replaces its whole content, so the stored object keeps its identity.

Costs: adding to a dense HLL is O(1) with a small constant; to a sparse one O(size of the
sparse string) in the worst case, which is bounded by ``hll-sparse-max-bytes``. Counting a
dense HLL decodes all registers at once with whole-buffer byte operations (no Python loop
per register).
"""

from __future__ import annotations

import math
import struct
from bisect import bisect_right
from collections.abc import Iterable
from typing import Final

HLL_P: Final = 14
HLL_Q: Final = 64 - HLL_P
REGISTERS: Final = 1 << HLL_P
HDR_SIZE: Final = 16
DENSE_SIZE: Final = HDR_SIZE + (REGISTERS * 6 + 7) // 8
DENSE: Final = 0
SPARSE: Final = 1
MAGIC: Final = b"HYLL"
SEED: Final = 0xADC83B19
ALPHA_INF: Final = 0.721347520444481703680  # 0.5 / ln(2)

_M: Final = 0xC6A4A7935BD1E995
_MASK: Final = (1 << 64) - 1
_VAL_MAX_VALUE: Final = 32
_VAL_MAX_LEN: Final = 4
_ZERO_MAX_LEN: Final = 64


class CorruptHLL(ValueError):
    """A sparse HLL whose opcodes do not cover exactly the 16384 registers."""


# -- hashing --------------------------------------------------------------------------------


def murmurhash64a(data: bytes | bytearray, seed: int = SEED) -> int:
    """MurmurHash64A of ``data`` (little-endian blocks, as Redis computes it on x86)."""
    n = len(data)
    h = (seed ^ (n * _M)) & _MASK
    blocks = n >> 3
    if blocks == 1:
        k = (int.from_bytes(data[:8], "little") * _M) & _MASK
        k ^= k >> 47
        h ^= (k * _M) & _MASK
        h = (h * _M) & _MASK
    elif blocks:
        for k in struct.unpack_from(f"<{blocks}Q", data):
            k = (k * _M) & _MASK
            k ^= k >> 47
            h ^= (k * _M) & _MASK
            h = (h * _M) & _MASK
    if n & 7:
        h ^= int.from_bytes(data[blocks * 8 :], "little")
        h = (h * _M) & _MASK
    h ^= h >> 47
    h = (h * _M) & _MASK
    return h ^ (h >> 47)


def pattern(element: bytes | bytearray) -> tuple[int, int]:
    """(register index, value) an element raises its register to."""
    h = murmurhash64a(element)
    rest = (h >> HLL_P) | (1 << HLL_Q)
    return h & (REGISTERS - 1), (rest & -rest).bit_length()


# -- creation and validation ----------------------------------------------------------------


def new_sparse() -> bytearray:
    """An empty HLL as Redis creates it: sparse, one XZERO covering every register, cached
    cardinality 0."""
    buf = bytearray(MAGIC + bytes([SPARSE]) + bytes(11))
    remaining = REGISTERS
    while remaining:
        run = min(remaining, 16384)
        buf += bytes([((run - 1) >> 8) | 0x40, (run - 1) & 0xFF])
        remaining -= run
    return buf


def is_valid(value: bytes | bytearray) -> bool:
    """Redis's ``isHLLObjectOrReply`` checks: header, magic, encoding, dense length."""
    if len(value) < HDR_SIZE or value[:4] != MAGIC:
        return False
    encoding = value[4]
    if encoding > SPARSE:
        return False
    return not (encoding == DENSE and len(value) != DENSE_SIZE)


def invalidate_cache(buf: bytearray) -> None:
    buf[15] |= 0x80


def cached_cardinality(buf: bytes | bytearray) -> int | None:
    """The cached estimate, or None when it is marked stale."""
    if buf[15] & 0x80:
        return None
    return int.from_bytes(buf[8:16], "little")


def store_cardinality(buf: bytearray, card: int) -> None:
    buf[8:16] = card.to_bytes(8, "little")


# -- dense registers ------------------------------------------------------------------------

# Byte tables for the four 6-bit lanes of each 3-byte group (registers 4k .. 4k+3).
_LOW6 = bytes(b & 63 for b in range(256))
_TOP2 = bytes(b >> 6 for b in range(256))
_LOW4_SHL2 = bytes((b & 15) << 2 for b in range(256))
_TOP4 = bytes(b >> 4 for b in range(256))
_LOW2_SHL4 = bytes((b & 3) << 4 for b in range(256))
_TOP6 = bytes(b >> 2 for b in range(256))
_LOW2_SHL6 = bytes(((b & 3) << 6) & 0xFF for b in range(256))
_SHR2 = bytes(b >> 2 for b in range(256))
_LOW4_SHL4 = bytes(((b & 15) << 4) & 0xFF for b in range(256))
_SHR4 = bytes(b >> 4 for b in range(256))
_SHL2 = bytes((b << 2) & 0xFF for b in range(256))


def _or(a: bytes, b: bytes) -> bytes:
    """Bytewise OR of two equally long byte strings, in C."""
    return (int.from_bytes(a, "big") | int.from_bytes(b, "big")).to_bytes(len(a), "big")


def dense_registers(buf: bytes | bytearray) -> bytearray:
    """The 16384 register values of a dense HLL, one byte each."""
    packed = bytes(buf[HDR_SIZE:DENSE_SIZE])
    b0, b1, b2 = packed[0::3], packed[1::3], packed[2::3]
    regs = bytearray(REGISTERS)
    regs[0::4] = b0.translate(_LOW6)
    regs[1::4] = _or(b0.translate(_TOP2), b1.translate(_LOW4_SHL2))
    regs[2::4] = _or(b1.translate(_TOP4), b2.translate(_LOW2_SHL4))
    regs[3::4] = b2.translate(_TOP6)
    return regs


def pack_dense(regs: bytes | bytearray) -> bytes:
    """The 12288 packed bytes of 16384 register values (each below 64)."""
    regs = bytes(regs)
    r0, r1, r2, r3 = regs[0::4], regs[1::4], regs[2::4], regs[3::4]
    packed = bytearray(DENSE_SIZE - HDR_SIZE)
    packed[0::3] = _or(r0, r1.translate(_LOW2_SHL6))
    packed[1::3] = _or(r1.translate(_SHR2), r2.translate(_LOW4_SHL4))
    packed[2::3] = _or(r2.translate(_SHR4), r3.translate(_SHL2))
    return bytes(packed)


def dense_set(buf: bytearray, index: int, count: int) -> bool:
    """Raise register ``index`` to ``count`` if lower; returns whether it changed."""
    pos = index * 6
    at = HDR_SIZE + (pos >> 3)
    shift = pos & 7
    b0 = buf[at]
    b1 = buf[at + 1] if at + 1 < len(buf) else 0
    old = ((b0 >> shift) | (b1 << (8 - shift))) & 63
    if count <= old:
        return False
    buf[at] = (b0 & ~(63 << shift) & 0xFF) | ((count << shift) & 0xFF)
    if shift > 2:
        buf[at + 1] = (b1 & ~(63 >> (8 - shift)) & 0xFF) | (count >> (8 - shift))
    return True


# -- sparse opcodes -------------------------------------------------------------------------


def _val(value: int, run: int) -> int:
    return 0x80 | ((value - 1) << 2) | (run - 1)


def _zeros(run: int) -> bytes:
    if run > _ZERO_MAX_LEN:
        return bytes([((run - 1) >> 8) | 0x40, (run - 1) & 0xFF])
    return bytes([run - 1])


def sparse_registers(buf: bytes | bytearray) -> bytearray:
    """The register values of a sparse HLL; CorruptHLL if the runs do not add up."""
    regs = bytearray(REGISTERS)
    i = 0
    p, end = HDR_SIZE, len(buf)
    while p < end:
        op = buf[p]
        if op & 0xC0 == 0:
            i += (op & 0x3F) + 1
            p += 1
        elif op & 0x80 == 0:
            second = buf[p + 1] if p + 1 < end else 0
            i += (((op & 0x3F) << 8) | second) + 1
            p += 2
        else:
            run = (op & 3) + 1
            if i + run > REGISTERS:
                raise CorruptHLL
            regs[i : i + run] = bytes([((op >> 2) & 0x1F) + 1]) * run
            i += run
            p += 1
    if i != REGISTERS:
        raise CorruptHLL
    return regs


def to_dense(buf: bytearray) -> bool:
    """Convert a sparse HLL to dense in place (the header, cache included, is kept).

    Returns whether it converted; CorruptHLL when the sparse form is invalid.
    """
    if buf[4] == DENSE:
        return False
    regs = sparse_registers(buf)
    header = bytearray(buf[:HDR_SIZE])
    header[4] = DENSE
    buf[:] = header + pack_dense(regs)
    return True


def sparse_set(buf: bytearray, index: int, count: int, max_bytes: int) -> int:
    """Raise register ``index`` of a sparse HLL to ``count``, Redis's way.

    Returns 1 when the register changed (the HLL may have become dense on the way), 0 when
    it already held ``count`` or more, -1 when the sparse form is invalid.
    """
    if count > _VAL_MAX_VALUE:
        return _promote(buf, index, count)
    # Step 1: find the opcode that covers the register.
    end = len(buf)
    p = HDR_SIZE
    first = span = 0
    prev = -1
    oplen = 1
    while p < end:
        op = buf[p]
        oplen = 1
        if op & 0xC0 == 0:
            span = (op & 0x3F) + 1
        elif op & 0x80:
            span = (op & 3) + 1
        else:
            span = (((op & 0x3F) << 8) | (buf[p + 1] if p + 1 < end else 0)) + 1
            oplen = 2
        if index <= first + span - 1:
            break
        prev = p
        p += oplen
        first += span
    if span == 0 or p >= end:
        return -1
    op = buf[p]
    is_zero = op & 0xC0 == 0
    is_xzero = op & 0xC0 == 0x40
    run = span

    # Step 2: the cases that rewrite one byte.
    if not is_zero and not is_xzero:
        old = ((op >> 2) & 0x1F) + 1
        if old >= count:
            return 0
        if run == 1:
            buf[p] = _val(count, 1)
            return _merge_from(buf, prev, 1)
    elif is_zero and run == 1:
        buf[p] = _val(count, 1)
        return _merge_from(buf, prev, 1)

    # General case: split the opcode into up to three.
    last = first + span - 1
    seq = bytearray()
    if is_zero or is_xzero:
        if index != first:
            seq += _zeros(index - first)
        seq.append(_val(count, 1))
        if index != last:
            seq += _zeros(last - index)
    else:
        current = ((op >> 2) & 0x1F) + 1
        if index != first:
            seq.append(_val(current, index - first))
        seq.append(_val(count, 1))
        if index != last:
            seq.append(_val(current, last - index))

    # Step 3: substitute it, unless the string would outgrow the sparse limit.
    old_len = 2 if is_xzero else 1
    delta = len(seq) - old_len
    if delta > 0 and len(buf) + delta > max_bytes:
        return _promote(buf, index, count)
    buf[p : p + old_len] = seq
    return _merge_from(buf, prev, 1)


def _merge_from(buf: bytearray, prev: int, result: int) -> int:
    """Step 4: merge equal adjacent VAL opcodes, scanning five opcodes from ``prev``."""
    p = prev if prev >= 0 else HDR_SIZE
    end = len(buf)
    scan = 5
    while p < end and scan > 0:
        scan -= 1
        op = buf[p]
        if op & 0xC0 == 0x40:
            p += 2
            continue
        if op & 0xC0 == 0:
            p += 1
            continue
        if p + 1 < end and buf[p + 1] & 0x80:
            nxt = buf[p + 1]
            value = ((op >> 2) & 0x1F) + 1
            if value == ((nxt >> 2) & 0x1F) + 1:
                run = (op & 3) + (nxt & 3) + 2
                if run <= _VAL_MAX_LEN:
                    buf[p + 1] = _val(value, run)
                    del buf[p]
                    end -= 1
                    continue
        p += 1
    invalidate_cache(buf)
    return result


def _promote(buf: bytearray, index: int, count: int) -> int:
    try:
        to_dense(buf)
    except CorruptHLL:
        return -1
    dense_set(buf, index, count)
    return 1


_PROMOTE: Final = 2
_XZERO: Final = 0x4000  # an XZERO opcode in SparseEditor.codes: 0x4000 | (run - 1)


def _code_run(code: int) -> int:
    if code >= _XZERO:
        return (code & 0x3FFF) + 1
    if code & 0x80:
        return (code & 3) + 1
    return (code & 0x3F) + 1


def _zero_code(run: int) -> int:
    return _XZERO | (run - 1) if run > _ZERO_MAX_LEN else run - 1


class SparseEditor:
    """A sparse HLL decoded into a list of opcodes, for a run of updates.

    :meth:`set` gives exactly the result of :func:`sparse_set` (the general path, which
    works on the bytes) but finds the opcode covering a register by bisection over the
    opcodes' first registers instead of a scan, and splices lists instead of bytes. A
    split or a merge never changes which registers the other opcodes cover, so ``starts``
    stays sorted and valid through every update.

    Invariants: ``codes[i]`` is a one-byte opcode (ZERO ``0x00..0x3f`` or VAL
    ``0x80..0xff``) or an XZERO as ``0x4000 | (run - 1)``; ``starts[i]`` is the first
    register it covers; ``size`` is the byte length the opcodes encode to.
    """

    __slots__ = ("codes", "size", "starts")

    def __init__(self, codes: list[int], starts: list[int], size: int) -> None:
        self.codes = codes
        self.starts = starts
        self.size = size

    @classmethod
    def parse(cls, buf: bytes | bytearray) -> SparseEditor | None:
        """The editor of a sparse HLL, or None when its last XZERO is cut short (the
        general path then handles it the way Redis reads past the end)."""
        codes: list[int] = []
        starts: list[int] = []
        p, end, first = HDR_SIZE, len(buf), 0
        while p < end:
            op = buf[p]
            if op & 0xC0 == 0x40:
                if p + 1 >= end:
                    return None
                code = _XZERO | ((op & 0x3F) << 8) | buf[p + 1]
                p += 2
            else:
                code = op
                p += 1
            codes.append(code)
            starts.append(first)
            first += _code_run(code)
        return cls(codes, starts, end - HDR_SIZE)

    def encode(self) -> bytes:
        out = bytearray()
        for code in self.codes:
            if code >= _XZERO:
                out += bytes([0x40 | ((code >> 8) & 0x3F), code & 0xFF])
            else:
                out.append(code)
        return bytes(out)

    def set(self, index: int, count: int, max_bytes: int) -> int:
        """As :func:`sparse_set`, except that where the HLL must become dense it changes
        nothing and returns 2 (the caller converts it)."""
        if count > _VAL_MAX_VALUE:
            return _PROMOTE
        codes, starts = self.codes, self.starts
        i = bisect_right(starts, index) - 1
        if i < 0:
            return -1
        code = codes[i]
        first = starts[i]
        span = _code_run(code)
        if index > first + span - 1:
            return -1
        is_xzero = code >= _XZERO
        is_zero = code < 0x40
        if not is_zero and not is_xzero:
            if ((code >> 2) & 0x1F) + 1 >= count:
                return 0
            if span == 1:
                codes[i] = _val(count, 1)
                self._merge(i - 1)
                return 1
        elif is_zero and span == 1:
            codes[i] = _val(count, 1)
            self._merge(i - 1)
            return 1
        last = first + span - 1
        seq: list[int] = []
        seq_starts: list[int] = []
        if is_zero or is_xzero:
            if index != first:
                seq.append(_zero_code(index - first))
                seq_starts.append(first)
            seq.append(_val(count, 1))
            seq_starts.append(index)
            if index != last:
                seq.append(_zero_code(last - index))
                seq_starts.append(index + 1)
        else:
            current = ((code >> 2) & 0x1F) + 1
            if index != first:
                seq.append(_val(current, index - first))
                seq_starts.append(first)
            seq.append(_val(count, 1))
            seq_starts.append(index)
            if index != last:
                seq.append(_val(current, last - index))
                seq_starts.append(index + 1)
        delta = sum(2 if c >= _XZERO else 1 for c in seq) - (2 if is_xzero else 1)
        if delta > 0 and HDR_SIZE + self.size + delta > max_bytes:
            return _PROMOTE
        codes[i : i + 1] = seq
        starts[i : i + 1] = seq_starts
        self.size += delta
        self._merge(i - 1)
        return 1

    def _merge(self, prev: int) -> None:
        codes, starts = self.codes, self.starts
        p = prev if prev >= 0 else 0
        scan = 5
        while p < len(codes) and scan > 0:
            scan -= 1
            code = codes[p]
            if code < 0x80 or code >= _XZERO:
                p += 1
                continue
            if p + 1 < len(codes):
                nxt = codes[p + 1]
                if 0x80 <= nxt < _XZERO and (code >> 2) == (nxt >> 2):
                    run = (code & 3) + (nxt & 3) + 2
                    if run <= _VAL_MAX_LEN:
                        codes[p] = _val(((code >> 2) & 0x1F) + 1, run)
                        del codes[p + 1]
                        del starts[p + 1]
                        self.size -= 1
                        continue
            p += 1


def update_many(buf: bytearray, updates: Iterable[tuple[int, int]], max_bytes: int) -> int:
    """Raise register ``index`` to ``count`` for each pair, in order, as Redis's one-by-one
    updates would; returns how many changed a register, or -1 at an invalid sparse HLL
    (the updates before it stay applied, as in Redis). The cache is marked stale when
    anything changed."""
    changed = 0
    editor: SparseEditor | None = None
    result = 0
    for index, count in updates:
        if buf[4] == DENSE:
            changed += dense_set(buf, index, count)
            continue
        if editor is None:
            editor = SparseEditor.parse(buf)
            if editor is None:  # the general path reads the cut-short opcode as Redis does
                result = sparse_set(buf, index, count, max_bytes)
                if result < 0:
                    break
                changed += result
                continue
        result = editor.set(index, count, max_bytes)
        if result == _PROMOTE:
            buf[HDR_SIZE:] = editor.encode()
            editor = None
            result = _promote(buf, index, count)
            if result < 0:
                break
        elif result < 0:
            break
        changed += result
    if editor is not None:
        buf[HDR_SIZE:] = editor.encode()
    if changed:
        invalidate_cache(buf)
    return -1 if result < 0 else changed


def add_many(buf: bytearray, elements: Iterable[bytes], max_bytes: int) -> int:
    """Add elements in order (PFADD); see :func:`update_many` for the result."""
    return update_many(buf, map(pattern, elements), max_bytes)


def add(buf: bytearray, element: bytes, max_bytes: int) -> int:
    """Add one element: 1 if a register changed, 0 if not, -1 for an invalid HLL."""
    index, count = pattern(element)
    if buf[4] == DENSE:
        return 1 if dense_set(buf, index, count) else 0
    return sparse_set(buf, index, count, max_bytes)


# -- reading --------------------------------------------------------------------------------


def registers(buf: bytes | bytearray) -> bytearray:
    """The register values of a valid HLL, whatever its encoding (CorruptHLL if invalid)."""
    if buf[4] == DENSE:
        return dense_registers(buf)
    return sparse_registers(buf)


def merge_into(maximum: bytearray, buf: bytes | bytearray) -> None:
    """``maximum[i] = max(maximum[i], register i)`` for every register (PFMERGE, PFCOUNT of
    several keys); CorruptHLL for an invalid sparse HLL."""
    regs = registers(buf)
    if not any(maximum):
        maximum[:] = regs
        return
    maximum[:] = bytes(map(max, maximum, regs))


def histogram(regs: bytes | bytearray) -> list[int]:
    """How many registers hold each value 0..63."""
    data = bytes(regs)
    return [data.count(v) for v in range(64)]


def _sigma(x: float) -> float:
    if x == 1.0:
        return math.inf
    y = 1.0
    z = x
    while True:
        x *= x
        previous = z
        z += x * y
        y += y
        if previous == z:
            return z


def _tau(x: float) -> float:
    if x == 0.0 or x == 1.0:
        return 0.0
    y = 1.0
    z = 1 - x
    while True:
        x = math.sqrt(x)
        previous = z
        y *= 0.5
        z -= math.pow(1 - x, 2) * y
        if previous == z:
            return z / 3


def estimate(hist: list[int]) -> int:
    """Ertl's estimator over a register histogram, in Redis's order of double operations."""
    m = float(REGISTERS)
    z = m * _tau((m - hist[HLL_Q + 1]) / m)
    for j in range(HLL_Q, 0, -1):
        z += hist[j]
        z *= 0.5
    z += m * _sigma(hist[0] / m)
    e = ALPHA_INF * m * m / z
    # llroundl: halves round away from zero.
    whole = math.floor(e)
    return int(whole + 1 if e - whole >= 0.5 else whole)


def count(buf: bytes | bytearray) -> int:
    """The estimate of one HLL (CorruptHLL for an invalid sparse one)."""
    return estimate(histogram(registers(buf)))


def decode_sparse(buf: bytes | bytearray) -> bytes:
    """PFDEBUG DECODE's text: ``z:<run>``, ``Z:<run>`` and ``v:<value>,<run>`` opcodes."""
    parts: list[bytes] = []
    p, end = HDR_SIZE, len(buf)
    while p < end:
        op = buf[p]
        if op & 0xC0 == 0:
            parts.append(b"z:%d" % ((op & 0x3F) + 1))
            p += 1
        elif op & 0x80 == 0:
            second = buf[p + 1] if p + 1 < end else 0
            parts.append(b"Z:%d" % ((((op & 0x3F) << 8) | second) + 1))
            p += 2
        else:
            parts.append(b"v:%d,%d" % (((op >> 2) & 0x1F) + 1, (op & 3) + 1))
            p += 1
    return b" ".join(parts)
