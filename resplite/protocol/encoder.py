"""Pure reply encoder: a reply value and a protocol version in, wire bytes out.

This is the only place that knows how RESP3 types degrade under RESP2 (maps become flat
arrays, nulls become ``$-1`` or ``*-1``, booleans become integers, doubles and big numbers
become bulk strings, verbatim strings lose their format, sets and pushes become arrays).
See :mod:`resplite.protocol.replies` for the value vocabulary.

The encoder appends to a list of byte chunks so a whole pipeline of replies is joined once
and written with a single ``transport.write``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from resplite.protocol.replies import (
    NULL_ARRAY,
    BigNumber,
    Chunked,
    Double,
    ErrorReply,
    OrderedSet,
    Push,
    Pushes,
    Raw,
    Status,
    Verbatim,
)

_Emit = Callable[[list[bytes], Any, int], None]

_NULL2: Final = b"$-1\r\n"
_NULL3: Final = b"_\r\n"
_NULL_ARRAY2: Final = b"*-1\r\n"
# Small integers and bulk headers are encoded so often that precomputing them pays off.
# (Final, here and below: the compiled build reads a Final module name from a C static,
# any other from the module's dict, at every reply.)
_INT_CACHE: Final = [b":%d\r\n" % i for i in range(1024)]
_BULK_HDR: Final = [b"$%d\r\n" % i for i in range(1024)]
_ARRAY_HDR: Final = [b"*%d\r\n" % i for i in range(256)]


def format_double(value: float) -> bytes:
    """Format a ``float`` reply as Redis 7.0 printed doubles (``%.17g``, ``inf``, ``nan``).

    Replies that follow Redis 7.2+ (every score) are :class:`Double` values, printed by
    the command with :func:`resplite.algorithms.scores.d2string`."""
    if math.isinf(value):
        return b"inf" if value > 0 else b"-inf"
    if math.isnan(value):
        return b"nan"
    return b"%.17g" % value


def _bulk(out: list[bytes], value: bytes, resp: int) -> None:
    n = len(value)
    out.append(_BULK_HDR[n] if n < 1024 else b"$%d\r\n" % n)
    out.append(value)
    out.append(b"\r\n")


def _bytearray(out: list[bytes], value: bytearray, resp: int) -> None:
    # A copy, that the reply never changes with the array; and _bulk takes bytes only.
    _bulk(out, bytes(value), resp)


def _int(out: list[bytes], value: int, resp: int) -> None:
    out.append(_INT_CACHE[value] if 0 <= value < 1024 else b":%d\r\n" % value)


def _bool(out: list[bytes], value: bool, resp: int) -> None:
    if resp == 3:
        out.append(b"#t\r\n" if value else b"#f\r\n")
    else:
        out.append(b":1\r\n" if value else b":0\r\n")


def _double(out: list[bytes], value: float, resp: int) -> None:
    text = format_double(value)
    if resp == 3:
        out.append(b"," + text + b"\r\n")
    else:
        _bulk(out, text, resp)


def _double_text(out: list[bytes], value: bytes, resp: int) -> None:
    if resp == 3:
        out.append(b"," + value + b"\r\n")
    else:
        _bulk(out, value, resp)


def _none(out: list[bytes], value: None, resp: int) -> None:
    out.append(_NULL3 if resp == 3 else _NULL2)


def _null_array(out: list[bytes], value: object, resp: int) -> None:
    out.append(_NULL3 if resp == 3 else _NULL_ARRAY2)


def _array(out: list[bytes], value: list[Any] | tuple[Any, ...], resp: int) -> None:
    n = len(value)
    out.append(_ARRAY_HDR[n] if n < 256 else b"*%d\r\n" % n)
    for item in value:
        _EMITTERS.get(type(item), _fallback)(out, item, resp)


def _map(out: list[bytes], value: dict[Any, Any], resp: int) -> None:
    if resp == 3:
        out.append(b"%%%d\r\n" % len(value))
    else:
        out.append(b"*%d\r\n" % (2 * len(value)))
    for k, v in value.items():
        _EMITTERS.get(type(k), _fallback)(out, k, resp)
        _EMITTERS.get(type(v), _fallback)(out, v, resp)


def _set(out: list[bytes], value: set[Any] | frozenset[Any] | OrderedSet, resp: int) -> None:
    out.append(b"~%d\r\n" % len(value) if resp == 3 else b"*%d\r\n" % len(value))
    for item in value:
        _EMITTERS.get(type(item), _fallback)(out, item, resp)


def _push(out: list[bytes], value: Push, resp: int) -> None:
    out.append(b">%d\r\n" % len(value) if resp == 3 else b"*%d\r\n" % len(value))
    for item in value:
        _EMITTERS.get(type(item), _fallback)(out, item, resp)


def _pushes(out: list[bytes], value: Pushes, resp: int) -> None:
    for item in value:
        _push(out, item, resp)


_STATUS_CACHE: Final[dict[str, bytes]] = {}


def _status(out: list[bytes], value: str, resp: int) -> None:
    # A handful of statuses (OK, QUEUED, PONG, type names) make up nearly all of them.
    try:
        encoded = _STATUS_CACHE[value]
    except KeyError:
        encoded = b"+" + value.encode() + b"\r\n"
        if len(_STATUS_CACHE) < 256:
            _STATUS_CACHE[value] = encoded
    out.append(encoded)


def _error(out: list[bytes], value: ErrorReply, resp: int) -> None:
    # Redis replaces newlines inside error texts so the reply stays one line.
    text = value.message.replace("\r", " ").replace("\n", " ")
    out.append(b"-" + text.encode("utf-8", "surrogateescape") + b"\r\n")


def _verbatim(out: list[bytes], value: Verbatim, resp: int) -> None:
    if resp == 3:
        body = value.format.encode() + b":" + value.text
        out.append(b"=%d\r\n" % len(body) + body + b"\r\n")
    else:
        _bulk(out, value.text, resp)


def _bignum(out: list[bytes], value: BigNumber, resp: int) -> None:
    if resp == 3:
        out.append(b"(%d\r\n" % value.value)
    else:
        _bulk(out, b"%d" % value.value, resp)


def _raw(out: list[bytes], value: bytes, resp: int) -> None:
    out.append(value)


def _chunked(out: list[bytes], value: Chunked, resp: int) -> None:
    out.append(value.head)
    out.extend(value.pieces)


def _fallback(out: list[bytes], value: Any, resp: int) -> None:
    # Subclasses of the basic types (e.g. an IntEnum, a bytearray) land here.
    for base, emit in _EMITTERS.items():
        if isinstance(value, base):
            emit(out, value, resp)
            return
    raise TypeError(f"cannot encode {type(value).__name__} as a RESP reply")


_EMITTERS: Final[dict[type, _Emit]] = {
    bytes: _bulk,
    Raw: _raw,
    Chunked: _chunked,
    Status: _status,
    bool: _bool,
    int: _int,
    float: _double,
    Double: _double_text,
    type(None): _none,
    list: _array,
    tuple: _array,
    dict: _map,
    set: _set,
    frozenset: _set,
    OrderedSet: _set,
    Push: _push,
    Pushes: _pushes,
    ErrorReply: _error,
    type(NULL_ARRAY): _null_array,
    Verbatim: _verbatim,
    BigNumber: _bignum,
    bytearray: _bytearray,
    memoryview: lambda out, v, resp: _bulk(out, bytes(v), resp),
}


# Read-only to the outside (typed as a Mapping; a proxy would slow every lookup).
EMITTERS: Mapping[type, _Emit] = _EMITTERS
"""The emitter of each exact reply class, for callers that dispatch themselves (the
connection, once per reply); :func:`encode_into` also handles subclasses."""


def encode_into(out: list[bytes], value: Any, resp: int) -> None:
    """Append the encoding of ``value`` under protocol ``resp`` (2 or 3) to ``out``."""
    _EMITTERS.get(type(value), _fallback)(out, value, resp)


# From this many elements, in_pieces answers an array, set or map in pieces of
# _PIECE_ITEMS elements (Chunked).
PIECES_FROM = 4096
_PIECE_ITEMS = 1024


def in_pieces(value: list[Any] | dict[Any, Any] | OrderedSet, resp: int) -> Any:
    """``value``, or, when it holds :data:`PIECES_FROM` elements or more, a
    :class:`Chunked` reply whose pieces encode them (under ``resp``, the client's
    protocol) a thousand at a time as the connection sends them, so that a reply of a
    million elements is neither encoded in one go nor held whole as bytes. ``value`` must
    be the command's own copy, as every reply value is (MULTI encodes its replies after
    the later commands of the transaction ran)."""
    n = len(value)
    if n < PIECES_FROM:
        return value
    if isinstance(value, dict):
        head = b"%%%d\r\n" % n if resp == 3 else b"*%d\r\n" % (2 * n)
        return Chunked(head, _pairs_pieces(list(value.items()), resp))
    if isinstance(value, OrderedSet):
        head = b"~%d\r\n" % n if resp == 3 else b"*%d\r\n" % n
        return Chunked(head, _items_pieces(list(value), resp))
    return Chunked(b"*%d\r\n" % n, _items_pieces(value, resp))


def _items_pieces(items: list[Any], resp: int) -> Iterator[bytes]:
    for start in range(0, len(items), _PIECE_ITEMS):
        out: list[bytes] = []
        for item in items[start : start + _PIECE_ITEMS]:
            _EMITTERS.get(type(item), _fallback)(out, item, resp)
        yield b"".join(out)


def _pairs_pieces(pairs: list[tuple[Any, Any]], resp: int) -> Iterator[bytes]:
    for start in range(0, len(pairs), _PIECE_ITEMS):
        out: list[bytes] = []
        for k, v in pairs[start : start + _PIECE_ITEMS]:
            _EMITTERS.get(type(k), _fallback)(out, k, resp)
            _EMITTERS.get(type(v), _fallback)(out, v, resp)
        yield b"".join(out)


def encode(value: Any, resp: int = 2) -> bytes:
    """Return the encoding of ``value`` under protocol ``resp`` (2 or 3)."""
    out: list[bytes] = []
    _EMITTERS.get(type(value), _fallback)(out, value, resp)
    return b"".join(out)


def bulk_array(items: list[bytes]) -> Raw:
    """An array of bulk strings, encoded once (its bytes are the same in RESP2 and RESP3)."""
    parts = [b"$%d\r\n%b\r\n" % (len(v), v) for v in items]
    return Raw(b"*%d\r\n%b" % (len(items), b"".join(parts)))
