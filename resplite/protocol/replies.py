"""Reply values that command handlers return, independent of the protocol version.

Handlers speak in plain Python values wherever one maps unambiguously onto a RESP type, and
in the small wrapper types below where it does not:

========================  =====================  ==========================================
Python value              RESP3                  RESP2
========================  =====================  ==========================================
``bytes``                 bulk string ``$``      bulk string
``int``                   integer ``:``          integer
``bool``                  boolean ``#``          integer 1 / 0
``float``                 double ``,``           bulk string
:class:`Double`           double ``,``           bulk string (text printed by the handler)
``None``                  null ``_``             null bulk ``$-1``
``list`` / ``tuple``      array ``*``            array
``dict``                  map ``%``              flat array of key, value, ...
``set`` / ``frozenset``   set ``~``              array
:class:`OrderedSet`       set ``~``              array (elements in the given order)
:class:`Status`           simple string ``+``    simple string
:class:`ErrorReply`       error ``-``            error
:data:`NULL_ARRAY`        null ``_``             null array ``*-1``
:class:`Verbatim`         verbatim ``=``         bulk string (the text only)
:class:`BigNumber`        big number ``(``       bulk string
:class:`Push`             push ``>``             array
:class:`Pushes`           pushes, back to back   arrays, back to back
:class:`Raw`              pre-encoded bytes, sent as they are in both versions
:class:`Chunked`          pre-encoded bytes made piece by piece as they are sent
========================  =====================  ==========================================

The downgrade rules live only in :mod:`resplite.protocol.encoder`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from mypy_extensions import mypyc_attr


@mypyc_attr(native_class=False)
class Status(str):
    """A simple string reply (``+OK``). A ``str`` subclass so it reads naturally in tests."""

    __slots__ = ()


class ErrorReply:
    """An error reply. ``message`` carries its code (``ERR ...``, ``WRONGTYPE ...``)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"ErrorReply({self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ErrorReply) and other.message == self.message

    def __hash__(self) -> int:
        return hash(self.message)


class _NullArray:
    """The null array: ``*-1`` in RESP2 (e.g. an XREAD that timed out), ``_`` in RESP3."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL_ARRAY"


NULL_ARRAY: Final = _NullArray()


class Verbatim:
    """A verbatim string (``=``) with its three-letter format, e.g. ``txt`` for CLIENT INFO."""

    __slots__ = ("format", "text")

    def __init__(self, text: bytes, format: str = "txt") -> None:
        self.text = text
        self.format = format


class BigNumber:
    """A big number (``(``); RESP2 sends it as a bulk string of its digits."""

    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value


@mypyc_attr(native_class=False)
class OrderedSet(tuple[Any, ...]):
    """A set reply whose element order is fixed, e.g. COMMAND INFO's flags (``~`` / array)."""

    __slots__ = ()


@mypyc_attr(native_class=False)
class Push(list[Any]):
    """An out-of-band push message (``>``); RESP2 sends it as an array."""

    __slots__ = ()


@mypyc_attr(native_class=False)
class Pushes(tuple[Push, ...]):
    """Push messages that together are one command's reply: what (P|S)(UN)SUBSCRIBE answer,
    one message per channel. Like every push they are sent even while CLIENT REPLY is OFF."""

    __slots__ = ()


@mypyc_attr(native_class=False)
class Double(bytes):
    """A double already printed as text (``0.1``, ``-inf``): ``,`` in RESP3, a bulk string
    in RESP2. Handlers answer scores and other doubles with this, printed by
    :func:`resplite.algorithms.scores.d2string` as Redis 7.2+ prints them; a plain
    ``float`` is printed by the encoder with Redis 7.0's ``%.17g``."""

    __slots__ = ()


@mypyc_attr(native_class=False)
class Raw(bytes):
    """Bytes already encoded for the wire, valid in both protocol versions."""

    __slots__ = ()


class Chunked:
    """A pre-encoded reply made piece by piece as it is sent: ``head``, then every piece
    ``pieces`` yields. Its bytes are those of the protocol the command ran under (a range's
    are alike in both; XREAD's map is not). The connection writes the pieces as
    they come, over several turns of the event loop if need be, so that a reply too large
    to build at once is never held whole; everywhere else (MULTI/EXEC, scripts) it is
    encoded at once. Whoever makes one guarantees that the pieces are the data as it was
    when the command ran, whenever they are taken (see the stream's ``RangePieces``)."""

    __slots__ = ("head", "pieces")

    def __init__(self, head: bytes, pieces: Iterator[bytes]) -> None:
        self.head = head
        self.pieces = pieces


# A reply that writes nothing: the connection sends no bytes for it (a dropped reply).
NO_REPLY: Final = Raw(b"")
OK: Final = Status("OK")
QUEUED: Final = Status("QUEUED")
PONG: Final = Status("PONG")
