"""Sans-IO request reader: raw client bytes in, argv lists out, framed exactly as Redis 7.0 does.

``feed(data)`` only buffers. ``get()`` returns the next complete request as a list of
``bytes``, :data:`NEED_DATA` when the buffer holds no complete request (or, with an element
quota set, when part of a long request was framed and :attr:`framing` says so), or raises
:class:`~resplite.protocol.errors.ProtocolError` when the next request is malformed (every
request before the bad one is returned first, as Redis runs them). Requests Redis skips
silently (an empty inline line, ``*0``, ``*-N``) are never returned. Limits are read when a
header is parsed, so changing ``max_bulk_len`` or ``authenticated`` between two ``get()``
calls affects the next request, as CONFIG SET and AUTH do in Redis.

Theory of operation
-------------------
Two parsers share one buffer and one cursor, ``_pos``, which always marks where the next
unread byte of the current request is; in the fast mode it is always a request boundary.

*Native mode*, where the C framer is built (``resplite/protocol/_frame.c``, an optional
extension of setup.py), takes the place of the fast mode below: at a request boundary the
framer takes one whole request written canonically (``*<count>`` and ``$<len>`` headers
without sign or leading zero, ``\\r\\n`` line ends, at most 1024 arguments, within the
limits) straight from the buffer, allocating nothing before the whole request is there, so
no hazard scan is needed. Anything else (an inline command, a partial request, another
byte where a header belongs, a limit passed, ``*0``) goes to the slow parser from that
boundary, exactly as a hand-over from hiredis does, and the next boundary that starts with
``*`` goes back to the framer. The framer decides nothing Redis could frame differently: a
request it takes is the canonical encoding of its arguments.

*Fast mode* hands the bytes to ``hiredis.Reader``. hiredis is a reply parser, more permissive
than Redis's request parser: it accepts element types Redis refuses (``+``, ``:``, nested
arrays, RESP3 types), knows no size limits and no inline commands. So every array it returns
is checked against the buffer before it is trusted: walking the array, the request header
must start with ``*`` and each element header with ``$`` at the offset a canonical encoding
of the returned values predicts. hiredis only accepts canonical integers in headers (no
sign, no leading zero) and ``\\r\\n`` line ends, so when those bytes match, the request is
byte for byte the canonical encoding and Redis frames it the same way; the walk also yields
the exact end of the request. Lengths are checked against the limits through lookup tables
that are cut at the limits, so the common case is a few table lookups per element.

*Slow mode* is a pure-Python port of Redis's framing rules (``processInlineBuffer`` and
``processMultibulkBuffer``): lines found the way C's ``strchr`` finds them (a NUL byte hides
everything after it), a line end that is ``\\r`` plus any byte, bulk payloads followed by
any two bytes, ``string2ll`` number syntax, the 64 KB line caps, the limits checked as soon
as a header arrives (counts up to INT_MAX as in Redis 7.0, bulks up to ``max_bulk_len``, and
10 arguments of at most 16384 bytes before AUTH), and ``sdssplitargs`` quoting for inline
commands. It keeps its state between calls, so a partial request is never rescanned.

Hand-over rules, which keep every byte examined a bounded number of times:

* hiredis is fed in windows (doubling from 1 KB to 16 KB) rather than whole chunks, which
  bounds both its buffer compaction work and what is wasted when it has to be dropped.
* Anything hiredis cannot be trusted with (an error, a value that fails the walk, a request
  still incomplete when the buffer runs out) hands the request at ``_pos`` to the slow
  parser, which finishes that one request; the next request starting with ``*`` goes back
  to a fresh hiredis reader. A partial request therefore never waits inside hiredis: its
  declared lengths are checked at once, and a huge bulk grows only our buffer.
* hiredis allocates an aggregate's whole list as soon as it reads the count, so bytes that
  look like an aggregate header with six or more digits (found with one ``translate`` and
  one ``find`` per window) are never given to it; the slow parser reads that request.

*Element mode* keeps the slow parser off the per-argument path of a request with many
arguments (a header past the tables or the hazard limit, or a request split across reads):
once the slow parser has checked the count, the element bytes go, in windows, to a second
hiredis reader with no aggregate header in front of them, so each element comes back as a
top-level bulk string, parsed in C; the same walk checks each one (``$`` where a canonical
encoding puts it, a length within the limit) and advances the cursor by its canonical
size. Anything else (another type, a non-canonical header hiredis refuses, a hazard in the
window, an element still incomplete 64 KB after its start) hands that one element to the
slow parser, which reads it, or reports the error Redis reports, and element mode resumes
after it. Elements are taken only while the request has some left, so bytes of the next
request that hiredis was given are read again by the normal path. A 3-million-argument
request is framed at about a fifth of the slow parser's cost, and still a window at a time,
so other clients are served between reads. With :attr:`RequestReader.element_quota` set,
``get()`` also stops after that many elements while more of the request is buffered: it
answers :data:`NEED_DATA` with :attr:`framing` set (the caller clears it), so a caller can
let others go between parts of one large read, and a caller that never sets a quota pays
nothing per request for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

import hiredis

from resplite.protocol.errors import ProtocolError

# The C framer (setup.py NATIVE; tests hold it equal to the Python parser) where it is built.
_c_frame: Callable[[bytes | bytearray, int, int, int], tuple[list[bytes], int] | None] | None
try:
    from resplite.protocol import _frame  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler): hiredis and the Python parser frame alone
    _c_frame = None
else:
    _c_frame = _frame.frame

__all__ = ["NEED_DATA", "ProtocolError", "RequestReader", "split_inline"]


class _NeedData:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = _NeedData()
"""Returned by :meth:`RequestReader.get` when no complete request is buffered."""


# Redis's framing limits (server.h: PROTO_INLINE_MAX_SIZE; networking.c).
INLINE_MAX_SIZE: Final = 64 * 1024
MULTIBULK_MAX: Final = 2**31 - 1  # Redis 7.0 accepts counts up to INT_MAX
UNAUTH_MAX_ARGS: Final = 10
UNAUTH_MAX_BULK: Final = 16384
DEFAULT_MAX_BULK_LEN: Final = 512 * 1024 * 1024

_LLONG_MAX: Final = 2**63 - 1
_INF: Final = 1 << 62

_MSG_MULTIBULK = "Protocol error: invalid multibulk length"
_MSG_UNAUTH_MULTIBULK = "Protocol error: unauthenticated multibulk length"
_MSG_BULK = "Protocol error: invalid bulk length"
_MSG_UNAUTH_BULK = "Protocol error: unauthenticated bulk length"
_MSG_BIG_MBULK = "Protocol error: too big mbulk count string"
_MSG_BIG_BULK = "Protocol error: too big bulk count string"
_MSG_BIG_INLINE = "Protocol error: too big inline request"
_MSG_QUOTES = "Protocol error: unbalanced quotes in request"

# Fast-mode lookup tables: wire size of a canonical header/element by count/length.
_HDR_TABLE_SIZE: Final = 1025
_BULK_TABLE_SIZE: Final = 8192
# No entry for a count of 0: adding None fails, so *0 leaves the fast path to be skipped.
_HDR_FULL: Final = (None, *(3 + len(str(n)) for n in range(1, _HDR_TABLE_SIZE)))


def _bulk_sizes(count: int) -> tuple[int, ...]:
    """``5 + n + len(str(n))`` for n below ``count``, built a run of equal digit counts at
    a time (the table is made at every start)."""
    sizes: list[int] = []
    low, digits = 0, 1
    while low < count:
        high = min(10 ** digits, count)
        sizes.extend(range(5 + low + digits, 5 + high + digits))
        low, digits = high, digits + 1
    return tuple(sizes)


_BULK_FULL: Final = _bulk_sizes(_BULK_TABLE_SIZE)
_bulk_tables: dict[int, tuple[int, ...]] = {}

# hiredis windows.
_WINDOW_MIN: Final = 1024
_WINDOW_MAX: Final = 16384
# Element mode (see the module docstring): from how many elements left, and how far an
# element may run past its start before the slow parser takes it over.
_ELEMENTS_MIN: Final = 64
_ELEMENT_SPAN_MAX: Final = 65536

# An aggregate type byte followed by six digits: a count hiredis would allocate at once.
_HAZARD_MAP: Final = bytes.maketrans(b"*%~>|0123456789", b"*****0000000000")
_HAZARD: Final = b"*000000"
_HAZARD_SPAN: Final = len(_HAZARD) - 1

_STRING2LL = re.compile(rb"0|-?[1-9][0-9]*")
_SHORT_DIGITS_MAX: Final = 18  # digit strings this short cannot overflow 64 bits


def string2ll(text: bytes | bytearray) -> int | None:
    """Parse a header number with Redis's ``string2ll`` rules, or return None.

    Only ``0`` or an optional ``-`` and digits without a leading zero, under 21 characters,
    within a signed 64-bit range: no ``+``, no spaces, no ``-0``.
    """
    if not 0 < len(text) < 21 or _STRING2LL.fullmatch(text) is None:
        return None
    value = int(text)
    if value > _LLONG_MAX or value < -_LLONG_MAX - 1:
        return None
    return value


def _parse_ll(text: bytes | bytearray) -> int | None:
    """:func:`string2ll`, quicker for the plain short numbers found in request headers."""
    if text.isdigit() and len(text) <= _SHORT_DIGITS_MAX and (text[0] != 48 or len(text) == 1):
        return int(text)
    return string2ll(text)


# -- inline commands ------------------------------------------------------------------------

_SPACES: Final = frozenset(b" \t\n\r\x0b\x0c")  # C isspace() in the C locale
_WORD_ENDS: Final = frozenset(b" \t\n\r")  # what ends an unquoted word
_HEX: Final = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}
_ESCAPES: Final = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("a"): 7}
# Without quotes, vertical tab or form feed, sdssplitargs agrees with bytes.split().
_SPLIT_NEEDS_CARE = re.compile(rb"[\"'\x0b\x0c]")


def split_inline(line: bytes) -> list[bytes] | None:
    """Split an inline command line as Redis's ``sdssplitargs`` does; None on bad quotes.

    Blanks (C ``isspace``) separate words, but only space, tab, CR and LF end an unquoted
    word, so a vertical tab inside a word is kept. Double quotes understand ``\\n \\r \\t
    \\b \\a \\xHH`` and take any other escaped character literally; single quotes only
    understand ``\\'``. A quote may open in the middle of a word; a closing quote must be
    followed by a blank or the end of the line. ``line`` holds no NUL byte: the framing
    stops a line at the first NUL, as C string functions do.
    """
    if _SPLIT_NEEDS_CARE.search(line) is None:
        return line.split()
    args: list[bytes] = []
    n = len(line)
    i = 0
    while True:
        while i < n and line[i] in _SPACES:
            i += 1
        if i >= n:
            return args
        word = bytearray()
        quote = 0  # 0, or the quote character we are inside
        while i < n:
            c = line[i]
            if quote == 34:  # "..."
                if c == 92 and i + 3 < n and line[i + 1] == 120 and line[i + 2] in _HEX \
                        and line[i + 3] in _HEX:
                    word.append(_HEX[line[i + 2]] * 16 + _HEX[line[i + 3]])
                    i += 4
                elif c == 92 and i + 1 < n:
                    escaped = line[i + 1]
                    word.append(_ESCAPES.get(escaped, escaped))
                    i += 2
                elif c == 34:
                    if i + 1 < n and line[i + 1] not in _SPACES:
                        return None
                    i += 1
                    break
                else:
                    word.append(c)
                    i += 1
            elif quote == 39:  # '...'
                if c == 92 and i + 1 < n and line[i + 1] == 39:
                    word.append(39)
                    i += 2
                elif c == 39:
                    if i + 1 < n and line[i + 1] not in _SPACES:
                        return None
                    i += 1
                    break
                else:
                    word.append(c)
                    i += 1
            elif c in _WORD_ENDS:
                i += 1
                break
            elif c == 34 or c == 39:
                quote = c
                i += 1
            else:
                word.append(c)
                i += 1
        else:
            if quote:
                return None  # the line ended inside quotes
        args.append(bytes(word))


# -- the reader -----------------------------------------------------------------------------

_HI_NEED: Final = object()  # what hiredis returns when it needs more bytes
_HI_FAILED: Final = object()  # hiredis raised instead of returning a reply
_SWITCH: Final = object()  # slow mode handing back to fast mode

# Slow-mode request kinds.
_BOUNDARY: Final = 0
_INLINE: Final = 1
_MULTIBULK: Final = 2


def _bulk_table(limit: int) -> tuple[int, ...]:
    """The element-size table cut so that a length over ``limit`` misses it."""
    if limit >= _BULK_TABLE_SIZE - 1:
        return _BULK_FULL
    table = _bulk_tables.get(limit)
    if table is None:
        table = _bulk_tables[limit] = _BULK_FULL[: max(limit, -1) + 1]
    return table


class RequestReader:
    """Frames client requests; see the module docstring for how the two parsers cooperate."""

    __slots__ = (
        "_argv",
        "_authenticated",
        "_buf",
        "_bulk",
        "_bulklen",
        "_clear_to",
        "_efed",
        "_ehr",
        "_equota",
        "_error",
        "_eslow",
        "_frame",
        "_frame_args",
        "_frame_bulk",
        "_hazard",
        "_hdr",
        "_hfed",
        "_hr",
        "_kind",
        "_max_bulk_len",
        "_mbleft",
        "_pos",
        "_scan",
        "_stuck",
        "_use_hiredis",
        "_window",
        "framing",
    )

    def __init__(self, max_bulk_len: int = DEFAULT_MAX_BULK_LEN, *,
                 use_hiredis: bool = True, native: bool = True) -> None:
        # use_hiredis=False makes a reader that never uses hiredis nor the C framer (a
        # reference for tests and benchmarks); native=False one that frames requests with
        # hiredis although the C framer is built.
        self._use_hiredis = use_hiredis
        self._buf: bytes | bytearray = b""
        self._pos = 0
        self._error: ProtocolError | None = None
        # native mode: the C framer, and the limits it is given (see _update_tables)
        self._frame = _c_frame if use_hiredis and native else None
        # Typed Any so that the compiled build keeps them as Python ints: handed to the
        # framer at every request, a native int would be boxed (allocated) every time.
        self._frame_args: Any = MULTIBULK_MAX
        self._frame_bulk: Any = max_bulk_len
        # fast mode (hiredis), where the C framer is not used
        self._hr: hiredis.Reader | None = (
            hiredis.Reader(notEnoughData=_HI_NEED)
            if use_hiredis and self._frame is None else None
        )
        self._hfed = 0  # bytes of _buf given to hiredis
        self._window = _WINDOW_MIN
        self._clear_to = 0  # no hazard starts before this offset (unless at _hazard)
        self._hazard = _INF  # offset of a suspected large aggregate header
        # slow mode
        self._kind = _BOUNDARY
        self._mbleft = 0  # elements still to read; 0 while the count line is pending
        self._bulklen = -1  # length of the bulk being read; -1 while its header is pending
        self._argv: list[bytes] = []
        self._scan = 0  # where the search for the current line's end resumes
        self._stuck = False  # a NUL hides the current line's end for good
        # element mode: its reader, the end of what it was given, and the element the slow
        # parser must read before element mode resumes (-1: none)
        self._ehr: hiredis.Reader | None = None
        self._efed = 0
        self._eslow = -1
        # at most this many elements framed per get() call (0: no bound), see element_quota
        self._equota = 0
        self.framing = False
        # limits
        self._max_bulk_len = max_bulk_len
        self._authenticated = True
        self._hdr = _HDR_FULL
        self._bulk = _BULK_FULL
        self._update_tables()

    # -- limits -------------------------------------------------------------------------

    @property
    def max_bulk_len(self) -> int:
        """Largest bulk accepted (proto-max-bulk-len); may change between requests."""
        return self._max_bulk_len

    @max_bulk_len.setter
    def max_bulk_len(self, value: int) -> None:
        self._max_bulk_len = value
        self._update_tables()

    @property
    def element_quota(self) -> int:
        """At most this many arguments of a long request are framed by one :meth:`get`
        call (0: no bound); when more of it is buffered, that call answers
        :data:`NEED_DATA` with :attr:`framing` set to True (call again, now or in a later
        turn of the event loop, after clearing it), so that a connection can let other
        clients go between parts of a request with millions of arguments, however much of
        it one read delivered."""
        return self._equota

    @element_quota.setter
    def element_quota(self, value: int) -> None:
        self._equota = value

    @property
    def authenticated(self) -> bool:
        """False applies Redis's limits for clients that still have to AUTH."""
        return self._authenticated

    @authenticated.setter
    def authenticated(self, value: bool) -> None:
        self._authenticated = value
        self._update_tables()

    def _update_tables(self) -> None:
        limit = self._max_bulk_len
        if not self._authenticated:
            limit = min(limit, UNAUTH_MAX_BULK)
            self._hdr = _HDR_FULL[: UNAUTH_MAX_ARGS + 1]
            self._frame_args = UNAUTH_MAX_ARGS
        else:
            self._hdr = _HDR_FULL
            self._frame_args = MULTIBULK_MAX
        self._frame_bulk = limit
        if self._frame is None:
            self._bulk = _bulk_table(limit)

    # -- input --------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> int:
        """Buffer bytes received from the client; answer how many wait unparsed (Redis's
        query buffer: the current partial request and any complete ones not yet taken)."""
        hr = self._hr
        if not self._buf and hr is not None and type(data) is bytes and data:
            # Nothing buffered in fast mode, the usual case: an empty buffer always has its
            # offsets at 0 (see where it is released). The data becomes the buffer uncopied
            # and goes to hiredis whole when it is small and holds no hazard.
            self._buf = data
            size = len(data)
            # partition, not ``in``: CPython's bytes ``in`` first tries the needle as an
            # integer and builds and drops a TypeError, several times the search.
            if size <= self._window and not data.translate(_HAZARD_MAP).partition(_HAZARD)[1]:
                hr.feed(data)
                self._hfed = size
                self._clear_to = size - _HAZARD_SPAN if size > _HAZARD_SPAN else 0
            else:
                self._extend()
            return size
        buf = self._buf
        cut = self._pos
        if cut >= len(buf):
            # Nothing pending (the usual case): the new data becomes the buffer, uncopied.
            if not data or self._error is not None:
                return 0
            if type(data) is not bytes:
                data = bytes(data)
            self._buf = data
            if cut:
                self._shift(cut)
            if hr is not None and self._hfed == 0:
                size = len(data)
                if size <= self._window and not data.translate(_HAZARD_MAP).partition(
                    _HAZARD
                )[1]:
                    hr.feed(data)
                    self._hfed = size
                    self._clear_to = size - _HAZARD_SPAN if size > _HAZARD_SPAN else 0
                else:
                    self._extend()
            return len(data)
        if not data or self._error is not None:
            return len(buf) - cut
        if isinstance(buf, bytearray):
            # Drop the consumed prefix only once it is a large share of the buffer, so that
            # a request arriving byte by byte does not pay for a resize per byte.
            if cut > 4096 and cut * 2 > len(buf):
                del buf[:cut]
                self._shift(cut)
            buf += data
        else:
            merged = bytearray(memoryview(buf)[cut:])
            merged += data
            self._buf = merged
            if cut:
                self._shift(cut)
        return len(self._buf) - self._pos

    def pending_size(self) -> int:
        """How many bytes wait unparsed (what :meth:`feed` last answered, less what
        :meth:`get` has consumed since)."""
        return len(self._buf) - self._pos

    def pending_head(self, size: int) -> bytes:
        """The first ``size`` bytes waiting unparsed (for a log line about this client)."""
        return bytes(self._buf[self._pos : self._pos + size])

    def _shift(self, cut: int) -> None:
        """Renumber offsets after the first ``cut`` bytes left the buffer."""
        self._pos -= cut
        self._hfed -= cut
        self._efed -= cut
        if self._eslow >= 0:
            self._eslow -= cut
        self._scan = max(self._scan - cut, 0)
        self._clear_to = max(self._clear_to - cut, 0)
        if self._hazard != _INF:
            self._hazard -= cut

    # -- output -------------------------------------------------------------------------

    def get(self) -> list[bytes] | object:
        """The next complete request, NEED_DATA, or ProtocolError for a malformed one."""
        frame = self._frame
        if frame is not None:
            # Native mode's common case: a whole canonical request at a request boundary,
            # framed in C (see the module docstring). _get_native does everything else.
            if self._kind == _BOUNDARY:
                buf = self._buf
                pos = self._pos
                if pos < len(buf) and buf[pos] == 42:  # '*'
                    got = frame(buf, pos, self._frame_args, self._frame_bulk)
                    if got is not None:
                        argv, end = got
                        if end == len(buf):
                            # The request ends the buffer (every unpipelined read, the last
                            # of a pipeline): release it.
                            self._buf = b""
                            self._pos = 0
                        else:
                            self._pos = end
                        return argv
                    # Not canonical, over a limit, or not all here: the slow parser reads it.
                    self._begin(pos)
            return self._get_native()
        # The common case, spelled out for speed: hiredis has a whole request whose layout
        # walk (see the module docstring) passes on the first try. Everything else, including
        # *0 and lengths beyond the tables, goes through _get_general, which decides exactly.
        hr = self._hr
        if hr is not None:
            buf = self._buf
            if not buf:
                # Released below or on NEED_DATA: hiredis holds nothing unread either.
                return NEED_DATA
            try:
                r = hr.gets()
            except Exception:  # hiredis gave up on these bytes: the slow parser decides
                return self._get_general(_HI_FAILED)
            if type(r) is list:
                try:
                    p = self._pos
                    q = p + self._hdr[len(r)]  # type: ignore[operator]
                    if buf[p] == 42:  # '*'
                        bulk = self._bulk
                        for a in r:
                            if buf[q] != 36:  # '$'
                                break
                            q += bulk[len(a)]
                        else:
                            if q == len(buf):
                                # The request ends the buffer (every unpipelined read, the
                                # last of a pipeline): hiredis has consumed it all, so release
                                # it now and answer the next call without asking hiredis.
                                self._buf = b""
                                self._pos = self._hfed = self._clear_to = 0
                            else:
                                self._pos = q
                            return r  # type: ignore[no-any-return]
                except (IndexError, TypeError):  # beyond the tables, or not a bulk
                    pass
            elif r is _HI_NEED and self._pos == len(buf):
                # hiredis consumed exactly the buffer, so it is at a request boundary
                self._buf = b""
                self._pos = self._hfed = self._clear_to = 0
                return NEED_DATA
            return self._get_general(r)
        return self._get_general(_HI_FAILED)

    def _get_native(self) -> list[bytes] | object:
        """Finish :meth:`get` in native mode: the slow parser reads the request under way
        (or an inline one), and hands each request boundary that starts with ``*`` back
        to the C framer."""
        frame = self._frame
        assert frame is not None
        while True:
            result = self._slow_get()
            if result is not _SWITCH:
                return result
            buf = self._buf
            pos = self._pos
            got = frame(buf, pos, self._frame_args, self._frame_bulk)
            if got is None:
                self._begin(pos)
                continue
            argv, end = got
            if end == len(buf):
                self._buf = b""
                self._pos = 0
            else:
                self._pos = end
            return argv

    def _get_general(self, r: object) -> list[bytes] | object:
        """Finish :meth:`get` from the reply hiredis just gave (or a failure marker)."""
        while True:
            hr = self._hr
            if hr is not None:
                buf = self._buf
                while True:
                    if type(r) is list:
                        q = self._check_long(r, self._pos)  # type: ignore[arg-type]
                        if q < 0:
                            break
                        self._pos = q
                        if r:
                            return r
                    elif r is _HI_NEED:
                        if self._hfed < len(buf):
                            if not self._extend():
                                break
                        elif self._pos == len(buf):
                            # hiredis consumed exactly the buffer: it is at a boundary
                            self._buf = b""
                            self._pos = self._hfed = self._clear_to = 0
                            return NEED_DATA
                        else:
                            break  # a partial request: the slow parser checks it as it grows
                    else:
                        break
                    try:
                        r = hr.gets()
                    except Exception:  # hiredis gave up on these bytes: the slow parser decides
                        break
                self._take_over()
            result = self._slow_get()
            if result is not _SWITCH:
                return result
            r = _HI_NEED  # fresh hiredis reader: give it its first window

    # -- fast mode helpers --------------------------------------------------------------

    def _extend(self) -> bool:
        """Give hiredis its next window of the buffer; False when it must not get more."""
        hr = self._hr
        assert hr is not None
        buf = self._buf
        start = self._hfed
        end = min(len(buf), start + self._window, self._hazard)
        if end <= start:
            return False
        if end > self._clear_to:
            scan_from = max(self._clear_to, start)
            found = buf[scan_from:end].translate(_HAZARD_MAP).find(_HAZARD)
            if found >= 0:
                self._hazard = self._clear_to = scan_from + found
                end = self._hazard
                if end <= start:
                    return False
            else:
                # A hazard may start in the last few bytes once more data arrives; hiredis
                # cannot read such a header before the next window is scanned.
                self._clear_to = max(end - _HAZARD_SPAN, scan_from)
        hr.feed(buf, start, end - start)  # type: ignore[arg-type]  # any buffer works
        self._hfed = end
        if self._window < _WINDOW_MAX:
            self._window <<= 1
        return True

    def _check_long(self, r: list[object], p: int) -> int:
        """The walk of :meth:`get` without tables; the request's end, or -1 to hand over."""
        buf = self._buf
        try:
            if buf[p] != 42:
                return -1
            count = len(r)
            if count > MULTIBULK_MAX or (count > UNAUTH_MAX_ARGS and not self._authenticated):
                return -1
            limit = self._max_bulk_len
            if not self._authenticated:
                limit = min(limit, UNAUTH_MAX_BULK)
            q = p + 3 + len(str(count))
            for a in r:
                if type(a) is not bytes or buf[q] != 36:
                    return -1
                size = len(a)
                if size > limit:
                    return -1
                q += size + len(str(size)) + 5
        except IndexError:
            return -1
        return q

    def _take_over(self) -> None:
        """Drop hiredis; the slow parser reads the request at ``_pos`` to its end."""
        self._hr = None
        self._hfed = self._pos
        self._begin(self._pos)

    # -- slow mode ----------------------------------------------------------------------

    def _begin(self, pos: int) -> None:
        """Start reading the request at ``pos`` (there is at least one byte) in slow mode."""
        self._kind = _MULTIBULK if self._buf[pos] == 42 else _INLINE
        self._mbleft = 0
        self._bulklen = -1
        self._scan = pos
        self._stuck = False

    def _slow_get(self) -> list[bytes] | object:
        if self._error is not None:
            raise self._error
        try:
            return self._slow_parse()
        except ProtocolError as exc:
            self._error = exc
            self._hr = None
            self._ehr = None
            self._buf = b""
            self._pos = 0
            raise

    def _slow_parse(self) -> list[bytes] | object:
        buf = self._buf
        while True:
            pos = self._pos
            kind = self._kind
            if kind == _BOUNDARY:
                if pos >= len(buf):
                    if buf:
                        self._buf = b""
                        self._pos = self._hfed = self._scan = self._clear_to = 0
                        self._hazard = _INF
                    return NEED_DATA
                if buf[pos] == 42 and pos != self._hazard and self._use_hiredis:
                    if self._frame is None:
                        self._enter_fast(pos)
                    return _SWITCH
                self._begin(pos)
                kind = self._kind
            argv = self._read_inline() if kind == _INLINE else self._read_multibulk()
            if argv is None:
                continue  # a request Redis skips
            return argv

    def _enter_fast(self, pos: int) -> None:
        self._hr = hiredis.Reader(notEnoughData=_HI_NEED)
        self._hfed = pos
        self._window = _WINDOW_MIN
        if self._hazard < pos:
            self._hazard = _INF
            self._clear_to = pos

    def _find_line_end(self, char: int) -> int:
        """Offset of the next ``char`` from the cursor, or -1; resumes where it last stopped.

        A NUL byte before it hides it for good, as C's ``strchr`` stops there: a NUL seen
        while nothing is found marks the line stuck here; when the line end is found, the
        caller checks the line itself (a valid header cannot hold a NUL, so only a line
        that fails to parse needs :meth:`_hidden`).
        """
        if self._stuck:
            return -1
        buf = self._buf
        found = buf.find(char, self._scan)
        if found < 0:
            if buf.find(0, self._scan) >= 0:
                self._stuck = True
            self._scan = len(buf)
        return found

    def _hidden(self, pos: int, end: int, too_big: str) -> bool:
        """Whether a NUL in the line at ``pos`` hides its end at ``end`` (then: wait or fail)."""
        if self._buf.find(0, pos, end) < 0:
            return False
        self._stuck = True
        if len(self._buf) - pos > INLINE_MAX_SIZE:
            raise ProtocolError(too_big)
        return True

    def _header_end(self, pos: int, too_big: str) -> int:
        """The CR ending the header line at ``pos`` once the byte after it is here, else -1."""
        size = len(self._buf)
        cr = self._find_line_end(13)
        if cr >= 0:
            if cr <= size - 2:
                return cr
            if not self._hidden(pos, cr, too_big):
                return -1  # Redis wants one more byte after the CR before it looks
        if size - pos > INLINE_MAX_SIZE:
            raise ProtocolError(too_big)
        return -1

    def _read_inline(self) -> list[bytes] | object | None:
        buf = self._buf
        pos = self._pos
        newline = self._find_line_end(10)
        if newline < 0 or self._hidden(pos, newline, _MSG_BIG_INLINE):
            if len(buf) - pos > INLINE_MAX_SIZE:
                raise ProtocolError(_MSG_BIG_INLINE)
            return NEED_DATA
        if newline - pos > INLINE_MAX_SIZE:
            # However the bytes arrived: Redis reads at most 16 KB at a time and refuses a
            # line still unfinished past 64 KB, so a longer line is refused here whole too.
            raise ProtocolError(_MSG_BIG_INLINE)
        end = newline - 1 if newline > pos and buf[newline - 1] == 13 else newline
        argv = split_inline(bytes(buf[pos:end]))
        if argv is None:
            raise ProtocolError(_MSG_QUOTES)
        self._pos = newline + 1
        self._kind = _BOUNDARY
        return argv or None

    def _read_multibulk(self) -> list[bytes] | object | None:
        buf = self._buf
        size = len(buf)
        pos = self._pos
        if self._mbleft == 0:
            cr = self._header_end(pos, _MSG_BIG_MBULK)
            if cr < 0:
                return NEED_DATA
            count = _parse_ll(buf[pos + 1 : cr])
            if count is None or count > MULTIBULK_MAX:
                if self._hidden(pos, cr, _MSG_BIG_MBULK):
                    return NEED_DATA
                raise ProtocolError(_MSG_MULTIBULK)
            if count > UNAUTH_MAX_ARGS and not self._authenticated:
                raise ProtocolError(_MSG_UNAUTH_MULTIBULK)
            pos = self._pos = self._scan = cr + 2
            if count <= 0:
                self._kind = _BOUNDARY
                return None
            self._mbleft = count
            self._argv = []
        argv = self._argv
        append = argv.append
        left = self._mbleft
        bulklen = self._bulklen
        limit = self._max_bulk_len
        if not self._authenticated:
            limit = min(limit, UNAUTH_MAX_BULK)
        try:
            while left:
                if (bulklen < 0 and left >= _ELEMENTS_MIN and self._use_hiredis
                        and pos != self._eslow):
                    quota = self._equota
                    pos, taken, more = self._elements(
                        buf, pos, left if not quota or quota > left else quota, limit, append)
                    left -= taken
                    if taken:
                        self._scan = pos
                        self._stuck = False
                    if not left:
                        break
                    if more:
                        return NEED_DATA
                    if quota and taken == quota:
                        # The quota is framed, the element mode reader kept: the rest of
                        # the request on the next call.
                        self.framing = pos < size
                        return NEED_DATA
                    self._eslow = pos  # the slow parser reads this element
                if bulklen < 0:
                    cr = self._header_end(pos, _MSG_BIG_BULK)
                    if cr < 0:
                        return NEED_DATA
                    first = buf[pos]
                    value = _parse_ll(buf[pos + 1 : cr]) if first == 36 else None
                    if value is None or value < 0 or value > limit:
                        if self._hidden(pos, cr, _MSG_BIG_BULK):
                            return NEED_DATA
                        raise self._bulk_header_error(first, value)
                    bulklen = value
                    pos = cr + 2
                if size - pos < bulklen + 2:
                    return NEED_DATA
                end = pos + bulklen
                if type(buf) is bytes or bulklen < 4096:
                    append(bytes(buf[pos:end]))
                else:
                    with memoryview(buf) as view:  # one copy of a large value, not two
                        append(view[pos:end].tobytes())
                pos = self._scan = end + 2
                self._stuck = False
                bulklen = -1
                left -= 1
        finally:
            self._pos = pos
            self._mbleft = left
            self._bulklen = bulklen
        self._kind = _BOUNDARY
        self._argv = []
        self._ehr = None
        self._eslow = -1
        return argv

    def _elements(self, buf: bytes | bytearray, pos: int, left: int, limit: int,
                  append: Callable[[bytes], None]) -> tuple[int, int, bool]:
        """Element mode (see the module docstring) from the element boundary ``pos``:
        (position after the elements taken, how many, whether it waits for more data).
        Not waiting and some left means the slow parser must read the element at the
        returned position; element mode then starts afresh after it."""
        hr = self._ehr
        if hr is None:
            hr = self._ehr = hiredis.Reader(notEnoughData=_HI_NEED)
            self._efed = pos
        sizes = _BULK_FULL
        size = len(buf)
        taken = 0
        while taken < left:
            try:
                a = hr.gets()
            except Exception:  # a header hiredis refuses: the slow parser words the error
                break
            if a is _HI_NEED:
                if pos < size and buf[pos] != 36:
                    # hiredis waits inside something that is not a bulk string (a nested
                    # aggregate): Redis refuses it at its first byte, as the slow parser does.
                    break
                start = self._efed
                if start - pos > _ELEMENT_SPAN_MAX:
                    break  # a large element: the slow parser copies it out once
                end = min(size, start + _WINDOW_MAX)
                if end <= start:
                    return pos, taken, True
                found = buf[start : end + _HAZARD_SPAN].translate(_HAZARD_MAP).find(_HAZARD)
                if 0 <= found < end - start:
                    end = start + found
                elif end > size - _HAZARD_SPAN:
                    # The buffer's last bytes may start such a header whose digits have not
                    # arrived: they are not given to hiredis either.
                    lo = max(start, size - _HAZARD_SPAN)
                    found = buf[lo:end].translate(_HAZARD_MAP).find(b"*")
                    if found >= 0:
                        end = lo + found
                if end <= start:
                    break  # an aggregate-looking header: never given to hiredis
                hr.feed(buf, start, end - start)  # type: ignore[arg-type]  # any buffer works
                self._efed = end
                continue
            if type(a) is not bytes or buf[pos] != 36:
                break  # not a bulk string: the slow parser reports it as Redis does
            n = len(a)  # type: ignore[arg-type]
            if n > limit:
                break
            pos += sizes[n] if n < _BULK_TABLE_SIZE else n + len(str(n)) + 5
            append(a)  # type: ignore[arg-type]
            taken += 1
        else:
            return pos, taken, False
        self._ehr = None
        return pos, taken, False

    def _bulk_header_error(self, first: int, value: int | None) -> ProtocolError:
        if first != 36:
            # Redis shows the offending byte, with CR and LF replaced by spaces.
            shown = " " if first in (10, 13) else chr(first)
            return ProtocolError(f"Protocol error: expected '$', got '{shown}'")
        if value is None or value < 0 or value > self._max_bulk_len:
            return ProtocolError(_MSG_BULK)
        return ProtocolError(_MSG_UNAUTH_BULK)
