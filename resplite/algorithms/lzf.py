"""LZF compression as Redis uses it for RDB strings (``rdbcompression``).

The format (three kinds of token, read left to right):

* ``000LLLLL`` then ``L + 1`` literal bytes (1 to 32);
* ``LLLooooo oooooooo``: copy ``L + 2`` bytes (3 to 8) from ``o + 1`` bytes back (1 to 8192);
* ``111ooooo LLLLLLLL oooooooo``: copy ``L + 9`` bytes from ``o + 1`` bytes back.

:func:`decompress` reads any valid stream. :func:`compress` produces the same bytes as the
compressor Redis ships (liblzf with a 16-bit hash table and its "very fast" re-hashing after a
match), so that a DUMP or an RDB file resplite writes equals Redis's byte for byte. The one
freedom the C code has, an uninitialised hash table whose stale slots can point into the
input, only ever produces other valid matches; this implementation starts from an empty
table, which is what Redis does in the common case of a fresh stack frame.

Cost in pure Python: O(n) with a small constant for runs of matches, about a microsecond per
literal byte, plus the empty table each call (a few hundred microseconds).

Both directions run in C where they can. Compressing: :mod:`resplite.algorithms._lzf`, the
project's own extension (built by ``setup.py`` when a C compiler is there), is this module's
:func:`compress_py` without the interpreter, a thousand times faster on short strings, and a
test holds the two equal on random input. liblzf's own compressor (the ``lzf`` module below)
cannot stand in: it leaves its hash table uninitialised, so a stale slot from an earlier call
can change what it writes. Decompressing is deterministic (every valid stream has one
output), so :func:`decompress` hands the work to liblzf's C decoder when the
``python-neo-lzf`` wheel is installed, about a hundred times faster, and checks the length it
returns; loading a snapshot is mostly decompressing. :func:`decompress_py` is the pure-Python
decoder, used without it and for the messages of a stream that does not decode (a test holds
the two equal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

_c_decompress: Callable[[bytes, int], bytes | None] | None = None
try:
    import lzf as _liblzf
except ImportError:  # the pure-Python decoder below does the same work, slowly
    pass
else:
    _c_decompress = _liblzf.decompress

_c_compress: Callable[[bytes | bytearray | memoryview, int], bytes | None] | None = None
try:
    from resplite.algorithms import _lzf  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler): compress_py does the same, slowly
    pass
else:
    _c_compress = _lzf.compress

_HSIZE_MASK: Final = (1 << 16) - 1  # HLOG = 16
_MAX_LIT: Final = 1 << 5
_MAX_OFF: Final = 1 << 13
_MAX_REF: Final = (1 << 8) + (1 << 3)
_U32: Final = 0xFFFFFFFF
_MAX_GROWTH: Final = 88


class LzfError(ValueError):
    """A compressed stream that does not decode to the expected length."""


def compress(data: bytes | bytearray | memoryview, out_len: int) -> bytes | None:
    """``data`` compressed into at most ``out_len`` bytes, or None when it does not fit
    (liblzf's ``lzf_compress`` returning 0). Redis asks for ``len(data) - 4`` at most."""
    fast = _c_compress
    if fast is not None and len(data) < _C_LIMIT:
        return fast(data, out_len)
    return compress_py(data, out_len)


# Positions in the C table are 32-bit; anything longer (no RDB string is) stays here.
_C_LIMIT: Final = 1 << 31


def compress_py(data: bytes | bytearray | memoryview, out_len: int) -> bytes | None:
    """:func:`compress` in pure Python: the reference, and the compressor without the C
    extension."""
    src = bytes(data)
    in_len = len(src)
    if not in_len or out_len <= 0:
        return None
    out = bytearray(out_len + 4)
    htab = [0] * (_HSIZE_MASK + 1)
    op = 1  # out[0] will hold the first literal run's length
    lit = 0
    ip = 0
    end2 = in_len - 2
    hval = (src[0] << 8) | src[1] if in_len > 1 else 0
    while ip < end2:
        hval = ((hval << 8) | src[ip + 2]) & _U32
        slot = ((hval >> 8) - hval * 5) & _HSIZE_MASK
        ref = htab[slot]
        htab[slot] = ip
        off = ip - ref - 1
        if (
            ref > 0
            and 0 <= off < _MAX_OFF
            and src[ref + 2] == src[ip + 2]
            and src[ref] == src[ip]
            and src[ref + 1] == src[ip + 1]
        ):
            maxlen = in_len - ip - 2
            if maxlen > _MAX_REF:
                maxlen = _MAX_REF
            if op + 4 >= out_len and op - (not lit) + 4 >= out_len:
                return None
            out[op - lit - 1] = (lit - 1) & 0xFF  # stop the literal run
            if not lit:
                op -= 1  # undo an empty run
            # The length of the match, the way liblzf's unrolled loop finds it: 16
            # unchecked steps when at least 17 bytes may match, then bounded ones.
            length = 3
            if maxlen > 16:
                while length <= 18 and src[ref + length] == src[ip + length]:
                    length += 1
                if length == 19:
                    while length < maxlen and src[ref + length] == src[ip + length]:
                        length += 1
            else:
                while length < maxlen and src[ref + length] == src[ip + length]:
                    length += 1
            length -= 2
            ip += 1
            if length < 7:
                out[op] = (off >> 8) + (length << 5)
                op += 1
            else:
                out[op] = (off >> 8) + (7 << 5)
                out[op + 1] = length - 7
                op += 2
            out[op] = off & 0xFF
            op += 2  # the offset byte, then room for the next run's length
            lit = 0
            ip += length + 1
            if ip >= end2:
                break
            ip -= 2
            hval = (src[ip] << 8) | src[ip + 1]
            hval = ((hval << 8) | src[ip + 2]) & _U32
            htab[((hval >> 8) - hval * 5) & _HSIZE_MASK] = ip
            ip += 1
            hval = ((hval << 8) | src[ip + 2]) & _U32
            htab[((hval >> 8) - hval * 5) & _HSIZE_MASK] = ip
            ip += 1
        else:
            if op >= out_len:
                return None
            lit += 1
            out[op] = src[ip]
            op += 1
            ip += 1
            if lit == _MAX_LIT:
                out[op - lit - 1] = lit - 1
                lit = 0
                op += 1
    if op + 3 > out_len:
        return None
    while ip < in_len:
        lit += 1
        out[op] = src[ip]
        op += 1
        ip += 1
        if lit == _MAX_LIT:
            out[op - lit - 1] = lit - 1
            lit = 0
            op += 1
    out[op - lit - 1] = (lit - 1) & 0xFF
    if not lit:
        op -= 1
    if op > out_len:
        return None
    return bytes(out[:op])


def decompress(data: bytes | bytearray | memoryview, out_len: int) -> bytes:
    """The ``out_len`` bytes ``data`` decodes to; :class:`LzfError` if it does not decode
    to exactly that many (a corrupt or truncated stream)."""
    fast = _c_decompress
    # liblzf's binding allocates out_len bytes first: a length no stream of this size can
    # reach (a 3-byte token gives at most 264) goes to the pure decoder, which refuses it.
    if fast is not None and 0 < out_len <= _MAX_GROWTH * len(data):
        src = bytes(data)
        try:
            out = fast(src, out_len)
        except ValueError:
            out = None
        # liblzf returns what fits (None past out_len, fewer bytes when the stream ends
        # early) or refuses a corrupt stream: anything but exactly out_len bytes is an
        # error, which the pure decoder finds again to say what it is.
        if out is not None and len(out) == out_len:
            return out
        return decompress_py(src, out_len)
    return decompress_py(data, out_len)


def decompress_py(data: bytes | bytearray | memoryview, out_len: int) -> bytes:
    """:func:`decompress` in pure Python: the reference, and the decoder without liblzf."""
    src = bytes(data)
    out = bytearray()
    ip = 0
    n = len(src)
    while ip < n:
        ctrl = src[ip]
        ip += 1
        if ctrl < 32:
            ctrl += 1
            if len(out) + ctrl > out_len:
                raise LzfError("literal run past the expected length")
            if ip + ctrl > n:
                raise LzfError("literal run past the end of the input")
            out += src[ip:ip + ctrl]
            ip += ctrl
            continue
        length = ctrl >> 5
        back = ((ctrl & 0x1F) << 8) + 1
        if ip >= n:
            raise LzfError("back reference cut short")
        if length == 7:
            length += src[ip]
            ip += 1
            if ip >= n:
                raise LzfError("back reference cut short")
        back += src[ip]
        ip += 1
        length += 2
        start = len(out) - back
        if len(out) + length > out_len:
            raise LzfError("back reference past the expected length")
        if start < 0:
            raise LzfError("back reference before the start of the output")
        if back >= length:
            out += out[start:start + length]
        else:
            # An overlapping copy repeats the last ``back`` bytes.
            for i in range(length):
                out.append(out[start + i])
    if len(out) != out_len:
        raise LzfError(f"decoded {len(out)} bytes, expected {out_len}")
    return bytes(out)
