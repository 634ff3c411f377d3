"""The parts of Redis's Lua libraries that need machine arithmetic, written in Python.

Lua 5.1 numbers are doubles, so the 32-bit operations of ``bit``, the byte layouts of
``struct``, MessagePack's integer and float encodings and Redis's ``math.random`` generator
are done here, exactly as the C libraries do them (including what C's conversions do with
out-of-range values on x86-64). Each function takes the values lupa hands over from Lua
(``bytes`` for strings, ``int`` or ``float`` for numbers, ``None`` for nil, lupa objects for
tables and functions) and answers plain values: never a Python object that Lua could keep.

Library functions answer ``(True, results...)`` or ``(False, message)`` /
``(False, message, narg)``; the Lua side turns a failure into the error Lua's C library
would raise (``bad argument #narg to 'name' (message)`` with the caller's position).
"""

from __future__ import annotations

import ctypes
import math
import re
import struct
from typing import Any

from lupa import lua51

from resplite.algorithms.scores import fpconv_dtoa

_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF
_TWO63 = 1 << 63
_MAGIC = 6755399441055744.0  # 2^52 + 2^51: what LuaBitOp adds to read a double's low bits

_ISSPACE = " \t\n\v\f\r"
_NUMBER = re.compile(
    r"[+-]?(?:"
    r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?"
    r"|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?"
    r")"
)


def lua_type(value: Any) -> str:
    """Lua's name for the type of a value lupa handed over."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, bytes):
        return "string"
    kind = lua51.lua_type(value)
    return str(kind) if kind else "userdata"


def str2number(text: bytes) -> float | None:
    """lua_tonumber of a string: strtod over the C string, surrounding spaces allowed."""
    s = text.split(b"\0", 1)[0].decode("latin-1").strip(_ISSPACE)
    m = _NUMBER.fullmatch(s)
    if m is None:
        return None
    body = s.lstrip("+-")
    negative = s.startswith("-")
    low = body.lower()
    if low.startswith("0x"):
        value = float.fromhex(body)
    elif low.startswith("inf"):
        value = math.inf
    elif low.startswith("nan"):
        value = math.nan
    else:
        value = float(body)
    return -value if negative else value


def tonumber(value: Any) -> float | None:
    """lua_tonumber: numbers as they are, numeric strings converted, anything else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, bytes):
        return str2number(value)
    return None


def number_text(value: int | float) -> bytes:
    """How Lua turns a number into a string (``%.14g``)."""
    if isinstance(value, int):
        value = float(value)
    return b"%.14g" % value


def c_int64(x: float) -> int:
    """(long long)x for a double on x86-64: truncation, INT64_MIN when out of range or NaN."""
    if x != x or x >= 9.2233720368547758e18 or x < -9.2233720368547758e18:
        return -_TWO63
    return int(x)


def c_uint64(x: float) -> int:
    """(unsigned long)x for a double on x86-64, as GCC compiles the conversion."""
    if x != x:
        return _TWO63
    if x >= 9.2233720368547758e18:
        high = x - 9.2233720368547758e18
        low = c_int64(high)
        return (low & _U64) ^ _TWO63
    return c_int64(x) & _U64


def c_int32(x: float) -> int:
    """(int) of a lua_Integer taken from a double: truncated, low 32 bits kept."""
    v = c_int64(x) & _U32
    return v - (1 << 32) if v & 0x80000000 else v


# -- bit (LuaBitOp 1.0.2) ---------------------------------------------------------------------


def _barg(args: tuple[Any, ...], i: int) -> int:
    """barg: the argument's low 32 bits after LuaBitOp's rounding trick; raises for non-numbers."""
    value = args[i] if i < len(args) else None
    n = tonumber(value)
    x = 0.0 if n is None else n
    bits = struct.unpack("<Q", struct.pack("<d", x + _MAGIC))[0] & _U32
    if bits == 0 and n is None:
        got = "no value" if i >= len(args) else lua_type(value)
        raise _ArgError(i + 1, f"number expected, got {got}")
    return bits


class _ArgError(Exception):
    def __init__(self, narg: int, message: str) -> None:
        super().__init__(message)
        self.narg = narg
        self.message = message


def _signed(b: int) -> int:
    b &= _U32
    return b - (1 << 32) if b & 0x80000000 else b


def _bitop(fn: Any) -> Any:
    def run(*args: Any) -> tuple[Any, ...]:
        try:
            return (True, fn(args))
        except _ArgError as exc:
            return (False, exc.message.encode(), exc.narg)

    return run


def _tobit(a: tuple[Any, ...]) -> int:
    return _signed(_barg(a, 0))


def _bnot(a: tuple[Any, ...]) -> int:
    return _signed(~_barg(a, 0))


def _fold(op: Any) -> Any:
    def fn(a: tuple[Any, ...]) -> int:
        b = _barg(a, 0)
        for i in range(len(a) - 1, 0, -1):
            b = op(b, _barg(a, i))
        return _signed(b)

    return fn


def _shift(op: Any) -> Any:
    def fn(a: tuple[Any, ...]) -> int:
        b = _barg(a, 0)
        n = _barg(a, 1) & 31
        return _signed(op(b, n))

    return fn


def _rol(b: int, n: int) -> int:
    return ((b << n) | (b >> (32 - n))) & _U32


def _ror(b: int, n: int) -> int:
    return ((b << (32 - n)) | (b >> n)) & _U32


def _bswap(a: tuple[Any, ...]) -> int:
    b = _barg(a, 0)
    return _signed(int.from_bytes(b.to_bytes(4, "little"), "big"))


def _tohex(a: tuple[Any, ...]) -> bytes:
    b = _barg(a, 0)
    n = 8 if len(a) < 2 else _signed(_barg(a, 1))
    digits = "0123456789abcdef"
    if n < 0:
        n = -n
        digits = "0123456789ABCDEF"
    n = min(n, 8)
    out = []
    for _ in range(n):
        out.append(digits[b & 15])
        b >>= 4
    return "".join(reversed(out)).encode()


BIT_FUNCTIONS: dict[str, Any] = {
    "tobit": _bitop(_tobit),
    "bnot": _bitop(_bnot),
    "band": _bitop(_fold(lambda x, y: x & y)),
    "bor": _bitop(_fold(lambda x, y: x | y)),
    "bxor": _bitop(_fold(lambda x, y: x ^ y)),
    "lshift": _bitop(_shift(lambda b, n: (b << n) & _U32)),
    "rshift": _bitop(_shift(lambda b, n: b >> n)),
    "arshift": _bitop(_shift(lambda b, n: (_signed(b) >> n) & _U32)),
    "rol": _bitop(_shift(_rol)),
    "ror": _bitop(_shift(_ror)),
    "bswap": _bitop(_bswap),
    "tohex": _bitop(_tohex),
}


# -- struct (Roberto Ierusalimschy's struct library, as Redis ships it) -------------------------

_MAXINTSIZE = 32
_MAXALIGN = 8  # alignment of a double on x86-64
_INT_MAX = (1 << 31) - 1


class _StructError(Exception):
    def __init__(self, message: str, narg: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.narg = narg


def _getnum(fmt: bytes, i: int, default: int) -> tuple[int, int]:
    if i >= len(fmt) or not chr(fmt[i]).isdigit():
        return default, i
    a = 0
    while i < len(fmt) and chr(fmt[i]).isdigit():
        d = fmt[i] - 48
        if a > _INT_MAX // 10 or a * 10 > _INT_MAX - d:
            raise _StructError("integral size overflow")
        a = a * 10 + d
        i += 1
    return a, i


def _optsize(opt: str, fmt: bytes, i: int) -> tuple[int, int]:
    if opt in "Bb":
        return 1, i
    if opt in "Hh":
        return 2, i
    if opt in "LlT":
        return 8, i
    if opt == "f":
        return 4, i
    if opt == "d":
        return 8, i
    if opt == "x":
        return 1, i
    if opt == "c":
        return _getnum(fmt, i, 1)
    if opt in "iI":
        size, i = _getnum(fmt, i, 4)
        if size > _MAXINTSIZE:
            raise _StructError(
                f"integral size {size} is larger than limit of {_MAXINTSIZE}"
            )
        return size, i
    return 0, i


def _toalign(length: int, align: int, opt: str, size: int) -> int:
    if size == 0 or opt == "c":
        return 0
    if size > align:
        size = align
    return (size - (length & (size - 1))) & (size - 1)


def _control(opt: str, fmt: bytes, i: int, state: list[int]) -> int:
    """Endianness and alignment options; state is [little_endian, align]."""
    if opt == " ":
        return i
    if opt == ">":
        state[0] = 0
        return i
    if opt == "<":
        state[0] = 1
        return i
    if opt == "!":
        a, i = _getnum(fmt, i, _MAXALIGN)
        if not (a > 0 and (a & (a - 1)) == 0):
            raise _StructError(f"alignment {a} is not a power of 2")
        state[1] = a
        return i
    raise _StructError(f"invalid format option '{opt}'", 1)


def _check_format(args: tuple[Any, ...]) -> bytes:
    value = args[0] if args else None
    if isinstance(value, bytes):
        return value.split(b"\0", 1)[0]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number_text(value)
    got = "no value" if not args else lua_type(value)
    raise _StructError(f"string expected, got {got}", 1)


def _check_number(args: tuple[Any, ...], i: int) -> float:
    # struct.pack pushes a nil after its arguments, so a missing one reads as nil.
    value = args[i] if i < len(args) else None
    n = tonumber(value)
    if n is None:
        raise _StructError(f"number expected, got {lua_type(value)}", i + 1)
    return n


def _check_string(args: tuple[Any, ...], i: int, *, missing: str = "no value") -> bytes:
    value = args[i] if i < len(args) else None
    if isinstance(value, bytes):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number_text(value)
    got = missing if i >= len(args) else lua_type(value)
    raise _StructError(f"string expected, got {got}", i + 1)


def _struct(fn: Any) -> Any:
    def run(*args: Any) -> tuple[Any, ...]:
        try:
            return (True, *fn(args))
        except _StructError as exc:
            if exc.narg is None:
                return (False, exc.message.encode())
            return (False, exc.message.encode(), exc.narg)

    return run


def _pack(args: tuple[Any, ...]) -> tuple[Any, ...]:
    fmt = _check_format(args)
    state = [1, 1]
    arg = 1
    out = bytearray()
    total = 0
    i = 0
    while i < len(fmt):
        opt = chr(fmt[i])
        i += 1
        size, i = _optsize(opt, fmt, i)
        pad = _toalign(total, state[1], opt, size)
        total += pad
        out += b"\0" * pad
        if opt in "bBhHlLTiI":
            n = _check_number(args, arg)
            arg += 1
            value = (c_int64(n) & _U64) if n < 0 else c_uint64(n)
            data = value.to_bytes(8, "little") + b"\0" * max(size - 8, 0)
            data = data[:size]
            out += data if state[0] else data[::-1]
        elif opt == "x":
            out += b"\0"
        elif opt == "f":
            f = ctypes.c_float(_check_number(args, arg)).value
            arg += 1
            out += struct.pack("<f" if state[0] else ">f", f)
        elif opt == "d":
            d = _check_number(args, arg)
            arg += 1
            out += struct.pack("<d" if state[0] else ">d", d)
        elif opt in "cs":
            s = _check_string(args, arg, missing="nil")
            arg += 1
            if size == 0:
                size = len(s)
            if len(s) < size:
                # The C code names the argument after the one it just read.
                raise _StructError("string too short", arg + 1)
            out += s[:size]
            if opt == "s":
                out += b"\0"
                size += 1
        else:
            i = _control(opt, fmt, i, state)
        total += size
    return (bytes(out),)


def _getinteger(data: bytes, little: bool, signed: bool, size: int) -> float:
    value = 0
    for byte in (reversed(data) if little else data):
        value = ((value << 8) | byte) & _U64
    if not signed:
        return float(value)
    mask = (_U64 << ((size * 8 - 1) & 63)) & _U64
    if value & mask:
        value |= mask
    if value & _TWO63:
        value -= 1 << 64
    return float(value)


def _unpack(args: tuple[Any, ...]) -> tuple[Any, ...]:
    fmt = _check_format(args)
    data = _check_string(args, 1)
    ld = len(data)
    pos = 1
    if len(args) > 2 and args[2] is not None:
        n = tonumber(args[2])
        if n is None:
            raise _StructError(f"number expected, got {lua_type(args[2])}", 3)
        pos = c_int64(n) & _U64
    if pos == 0:
        raise _StructError("offset must be 1 or greater", 3)
    pos -= 1
    state = [1, 1]
    results: list[Any] = []
    i = 0
    while i < len(fmt):
        opt = chr(fmt[i])
        i += 1
        size, i = _optsize(opt, fmt, i)
        pos += _toalign(pos, state[1], opt, size)
        if not (size <= ld and pos <= ld - size):
            raise _StructError("data string too short", 2)
        if opt in "bBhHlLTiI":
            results.append(_getinteger(data[pos:pos + size], bool(state[0]), opt.islower(), size))
        elif opt == "x":
            pass
        elif opt == "f":
            results.append(struct.unpack("<f" if state[0] else ">f", data[pos:pos + 4])[0])
        elif opt == "d":
            results.append(struct.unpack("<d" if state[0] else ">d", data[pos:pos + 8])[0])
        elif opt == "c":
            if size == 0:
                if not results or not isinstance(results[-1], int | float):
                    raise _StructError("format 'c0' needs a previous size")
                size = c_uint64(float(results.pop()))
                if not (size <= ld and pos <= ld - size):
                    raise _StructError("data string too short", 2)
            results.append(data[pos:pos + size])
        elif opt == "s":
            end = data.find(b"\0", pos)
            if end < 0:
                raise _StructError("unfinished string in data")
            size = end - pos + 1
            results.append(data[pos:end])
        else:
            i = _control(opt, fmt, i, state)
        pos += size
    results.append(pos + 1)
    return tuple(results)


def _size(args: tuple[Any, ...]) -> tuple[Any, ...]:
    fmt = _check_format(args)
    state = [1, 1]
    pos = 0
    i = 0
    while i < len(fmt):
        opt = chr(fmt[i])
        i += 1
        size, i = _optsize(opt, fmt, i)
        pos += _toalign(pos, state[1], opt, size)
        if opt == "s":
            raise _StructError("option 's' has no fixed size", 1)
        if opt == "c" and size == 0:
            raise _StructError("option 'c0' has no fixed size", 1)
        if not opt.isalnum():
            i = _control(opt, fmt, i, state)
        pos += size
    return (pos,)


STRUCT_FUNCTIONS: dict[str, Any] = {
    "pack": _struct(_pack),
    "unpack": _struct(_unpack),
    "size": _struct(_size),
}


# -- MessagePack numbers ---------------------------------------------------------------------


def _mp_int(n: int) -> bytes:
    if n >= 0:
        if n <= 127:
            return bytes((n,))
        if n <= 0xFF:
            return b"\xcc" + bytes((n,))
        if n <= 0xFFFF:
            return b"\xcd" + n.to_bytes(2, "big")
        if n <= 0xFFFFFFFF:
            return b"\xce" + n.to_bytes(4, "big")
        return b"\xcf" + n.to_bytes(8, "big")
    if n >= -32:
        return bytes((n & 0xFF,))
    if n >= -128:
        return b"\xd0" + bytes((n & 0xFF,))
    if n >= -32768:
        return b"\xd1" + (n & 0xFFFF).to_bytes(2, "big")
    if n >= -2147483648:
        return b"\xd2" + (n & 0xFFFFFFFF).to_bytes(4, "big")
    return b"\xd3" + (n & _U64).to_bytes(8, "big")


def mp_number(n: int | float) -> bytes:
    """A Lua number packed as lua-cmsgpack packs it."""
    if isinstance(n, int):
        return _mp_int(n)
    if not math.isinf(n) and n == n and -9.2233720368547758e18 <= n < 9.2233720368547758e18 \
            and float(int(n)) == n:
        return _mp_int(int(n))
    f = ctypes.c_float(n).value
    if f == n:
        return b"\xca" + struct.pack(">f", f)
    return b"\xcb" + struct.pack(">d", n)


def mp_decode_number(tag: int, data: bytes) -> int | float:
    """The number a multi-byte MessagePack value stands for, as lua-cmsgpack reads it."""
    if tag == 0xD0:
        return struct.unpack(">b", data)[0]
    if tag == 0xD1:
        return struct.unpack(">h", data)[0]
    if tag == 0xD2:
        return struct.unpack(">i", data)[0]
    if tag in (0xD3, 0xCF):
        # uint64 is pushed as a lua_Integer: past 2^63 it comes back negative.
        return float(struct.unpack(">q", data)[0])
    if tag == 0xCA:
        return struct.unpack(">f", data)[0]
    return struct.unpack(">d", data)[0]


# -- math.random -------------------------------------------------------------------------------


class Lrand48:
    """Redis's redisLrand48: a 48-bit linear congruential generator, one per server.

    As in Redis the state is not reset between scripts; ``math.randomseed`` re-seeds it.
    """

    __slots__ = ("x",)

    _A = 0x5DEECE66D
    _C = 0xB
    _MASK = (1 << 48) - 1
    _MAX = 0x7FFFFFFF  # REDIS_LRAND48_MAX

    def __init__(self) -> None:
        self.x = 0x1234ABCD330E

    def seed(self, value: int) -> None:
        self.x = ((value & _U32) << 16) | 0x330E

    def next(self) -> int:
        self.x = (self._A * self.x + self._C) & self._MASK
        return self.x >> 17

    def random(self) -> float:
        """A number in [0, 1), as math.random() computes it."""
        return (self.next() % self._MAX) / self._MAX


# -- compiled scripts ----------------------------------------------------------------------------

_OP_CALL = 28
_OP_TAILCALL = 29
_HEADER = b"\x1bLua\x51\x00\x01\x04\x08\x04\x08\x00"  # Lua 5.1, little endian, 64-bit size_t


class _Chunk:
    """A cursor over a Lua 5.1 binary chunk (string.dump's format on this platform)."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytearray) -> None:
        self.data = data
        self.pos = len(_HEADER)

    def int32(self) -> int:
        value = int.from_bytes(self.data[self.pos : self.pos + 4], "little")
        self.pos += 4
        return value

    def string(self) -> None:
        size = int.from_bytes(self.data[self.pos : self.pos + 8], "little")
        self.pos += 8 + size

    def function(self) -> None:
        data = self.data
        self.string()  # source
        self.pos += 8 + 4  # linedefined, lastlinedefined, nups, numparams, is_vararg, maxstack
        for _ in range(self.int32()):
            ins = int.from_bytes(data[self.pos : self.pos + 4], "little")
            if ins & 0x3F == _OP_TAILCALL:
                ins = (ins & ~0x3F) | _OP_CALL
                data[self.pos : self.pos + 4] = ins.to_bytes(4, "little")
            self.pos += 4
        for _ in range(self.int32()):
            kind = data[self.pos]
            self.pos += 1
            if kind == 1:
                self.pos += 1
            elif kind == 3:
                self.pos += 8
            elif kind == 4:
                self.string()
        for _ in range(self.int32()):
            self.function()
        self.pos += 4 * self.int32()  # line info
        for _ in range(self.int32()):  # local variables
            self.string()
            self.pos += 8
        for _ in range(self.int32()):  # upvalue names
            self.string()


def without_tail_calls(dump: bytes) -> bytes:
    """A compiled chunk whose tail calls are plain calls followed by their return.

    Redis's ``redis.call`` is a C function, so ``return redis.call(...)`` keeps the script's
    frame and an error names the script's line. Our library functions are Lua functions, and
    a Lua tail call would erase that frame; turning ``TAILCALL A B 0`` into ``CALL A B 0``
    (the compiler always follows it with ``RETURN A 0``) returns the same values and keeps
    the frame. The one visible difference: unbounded tail recursion stops at Lua's call
    depth limit instead of running in constant space.
    """
    if not dump.startswith(_HEADER):
        return dump
    data = bytearray(dump)
    _Chunk(data).function()
    return bytes(data)


# -- numbers given to redis.call -----------------------------------------------------------------


def argument_bytes(n: int | float) -> bytes:
    """A Lua number given to redis.call, as Redis 7.4 turns it into an argument: whole values
    within +-2^62 as integers (``-0`` as ``0``), anything else as fpconv_dtoa writes the
    double."""
    if isinstance(n, int) and -(1 << 62) <= n <= (1 << 62):
        return b"%d" % n
    d = float(n)
    if -4.611686018427388e18 <= d <= 4.611686018427388e18 and d == int(d):
        return b"%d" % int(d)
    return fpconv_dtoa(d)
