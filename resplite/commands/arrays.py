"""Array commands (Redis 8.8): ARSET, ARGET, ARMSET, ARMGET, ARGETRANGE, ARDEL, ARDELRANGE,
ARLEN, ARCOUNT, ARINFO, ARNEXT, ARSEEK, ARINSERT, ARRING, ARLASTITEMS, AROP, ARGREP, ARSCAN.

The value type is :class:`resplite.store.sparse_array.SparseArray`; these handlers parse in
Redis's order (``t_array.c``), so the first error Redis reports is the one reported, and
format the replies.

Indexes are read as Redis's ``string2ull``: a strict decimal first, else ``strtoull`` over
the C string (leading blanks, a ``+``, leading zeros; a ``-`` wraps around), and must be at
most 2**64 - 2 ("invalid array index"); ARSEEK alone takes 2**64 - 1 (the exhausted cursor).
Counts and indexes above 2**63 - 1 are replied as big numbers (``(`` in RESP3, a bulk string
in RESP2), as Redis's ``addReplyUnsignedLongLong``.

A key is created by the first write (ARSET, ARMSET, ARINSERT, ARRING) and deleted with its
last element (ARDEL, ARDELRANGE: the command's event, then ``del``). Events are of class
``a``: ``arset``, ``armset``, ``ardel``, ``ardelrange``, ``arinsert``, ``arring``,
``arseek``. The change counter grows by the values written or removed (1 for ARSEEK), as in
Redis, and a command that changed nothing is not logged. Every write is logged as received:
the cursor commands are deterministic given the array, which the log rebuilds.

Numbers (AROP): an integer as such, a value Redis keeps as a double as that double, other
text as ``strtold`` reads it; SUM, MIN and MAX work in x87 extended precision
(:mod:`resplite.algorithms.longdouble`) and print as ``%.17Lg``; AND, OR and XOR take
integers, and doubles truncated towards zero when they fit 64 bits. ARGREP's RE predicates
are POSIX extended expressions (:mod:`resplite.algorithms.ere`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from resplite.algorithms import longdouble
from resplite.algorithms.ere import EreError, compile_ere
from resplite.algorithms.numbers import parse_int
from resplite.algorithms.scores import d2string
from resplite.commands.args import INT64_MAX, INT64_MIN, c_option, int_arg
from resplite.commands.generic import lookup, lookup_read
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import ARRAY, GENERIC
from resplite.engine.registry import command
from resplite.formats.rdb_arrays import TAG_FLOAT, TAG_INT, element_kind
from resplite.protocol.encoder import in_pieces
from resplite.protocol.replies import BigNumber, Double
from resplite.store.glob import compile_matcher
from resplite.store.sparse_array import MAX_INDEX, SLICE_SIZE, SparseArray

if TYPE_CHECKING:
    from collections.abc import Callable

    from resplite.engine.client import Client

MAX_REPLY_ITEMS = 1_000_000
GREP_MAX_PREDICATES = 250
GREP_MAX_RE_LEN = 2048

INVALID_INDEX = "ERR invalid array index"
INDEX_OVERFLOW = "ERR array index overflow"
INSERT_OVERFLOW = "ERR insert index overflow"
RANGE_TOO_LONG = f"ERR range exceeds maximum of {MAX_REPLY_ITEMS} items"
COUNT_TOO_LONG = f"ERR count exceeds maximum of {MAX_REPLY_ITEMS} items"
LIMIT_NOT_POSITIVE = "ERR LIMIT must be positive"
UNKNOWN_OPERATION = "ERR unknown operation"
MATCH_NEEDS_VALUE = "ERR MATCH requires a value argument"
INVALID_SIZE = "ERR invalid size"
SIZE_NOT_POSITIVE = "ERR size must be positive"
INVALID_COUNT = "ERR invalid COUNT"
TOO_MANY_PREDICATES = f"ERR too many predicates, maximum is {GREP_MAX_PREDICATES}"
RE_TOO_LONG = f"ERR regular expression is too long, maximum is {GREP_MAX_RE_LEN} bytes"
RE_EMPTY = "ERR regular expression is empty"
RE_BACKREFS = "ERR regular expression backreferences are not supported"

_ULLONG_MAX = (1 << 64) - 1
_C_SPACE = b" \t\n\v\f\r"


# -- arguments and replies -------------------------------------------------------------------


def string2ull(arg: bytes) -> int | None:
    """Redis's ``string2ull``: ``string2ll`` (a negative value refused), else ``strtoull``
    in base 10 over the C string, which must be read whole."""
    text = arg.split(b"\0", 1)[0]
    value = parse_int(text)
    if value is not None:
        return value if value >= 0 else None
    body = text.lstrip(_C_SPACE)
    negative = body[:1] == b"-"
    if body[:1] in (b"-", b"+"):
        body = body[1:]
    if not body or not body.isdigit():
        return None
    value = int(body)
    if value > _ULLONG_MAX:
        return None  # ERANGE
    return (-value) & _ULLONG_MAX if negative else value


def parse_index(arg: bytes, allow_max: bool = False) -> int:
    """An array index (0 .. 2**64 - 2; 2**64 - 1 too with ``allow_max``)."""
    value = string2ull(arg)
    if value is None or (value == _ULLONG_MAX and not allow_max):
        raise CommandError(INVALID_INDEX)
    return value


def unsigned(value: int) -> int | BigNumber:
    """``addReplyUnsignedLongLong``: an integer, or a big number above 2**63 - 1."""
    return value if value <= INT64_MAX else BigNumber(value)


def _array(value: Any) -> SparseArray | None:
    if value is None:
        return None
    if value.__class__ is not SparseArray:
        raise CommandError(errors.WRONGTYPE)
    return value  # type: ignore[no-any-return]


def _read(client: Client, key: bytes) -> SparseArray | None:
    return _array(lookup_read(client, key))


def _for_write(client: Client, key: bytes) -> SparseArray | None:
    return _array(lookup(client, key))


def _create(client: Client, key: bytes) -> SparseArray:
    """The array at ``key`` for a write that stores values, created when absent."""
    arr = _for_write(client, key)
    if arr is None:
        arr = SparseArray()
        client.db.add(key, arr)
    return arr


def _written(client: Client, key: bytes, event: bytes, changes: int) -> None:
    db = client.db
    server = client.server
    db.signal_modified(key)
    server.notify(ARRAY, event, key, db.index)
    server.dirty += changes


def _removed(client: Client, key: bytes, arr: SparseArray, event: bytes, count: int) -> None:
    """After ``count`` elements left ``arr``: the event, the emptied key deleted (``del``),
    the signal; nothing at all when nothing left."""
    if not count:
        return
    db = client.db
    server = client.server
    server.notify(ARRAY, event, key, db.index)
    if not arr.count:
        db.delete(key)
        server.notify(GENERIC, b"del", key, db.index)
    db.signal_modified(key)
    server.dirty += count


def _positions(client: Client, values: list[bytes | None]) -> Any:
    return in_pieces(values, client.resp)  # type: ignore[arg-type]


# -- single and multiple elements -------------------------------------------------------------


@command("arget")
def arget(client: Client, argv: list[bytes]) -> bytes | None:
    arr = _read(client, argv[1])
    index = parse_index(argv[2])
    return None if arr is None else arr.get(index)


@command("armget")
def armget(client: Client, argv: list[bytes]) -> Any:
    arr = _read(client, argv[1])
    indexes = [parse_index(arg) for arg in argv[2:]]
    if arr is None:
        return _positions(client, [None] * len(indexes))
    get = arr.get
    return _positions(client, [get(i) for i in indexes])


@command("arset", counts_changes=True)
def arset(client: Client, argv: list[bytes]) -> int:
    start = parse_index(argv[2])
    values = argv[3:]
    if start + len(values) - 1 > MAX_INDEX:
        raise CommandError(INDEX_OVERFLOW)
    key = argv[1]
    arr = _create(client, key)
    added = arr.set_run(start, values)
    _written(client, key, b"arset", len(values))
    return added


@command("armset", counts_changes=True)
def armset(client: Client, argv: list[bytes]) -> int:
    if len(argv) % 2:
        raise CommandError(errors.wrong_arity("armset"))
    indexes = [parse_index(argv[i]) for i in range(2, len(argv), 2)]
    key = argv[1]
    arr = _create(client, key)
    before = arr.count
    for n, index in enumerate(indexes):
        arr.set(index, argv[3 + 2 * n])
    _written(client, key, b"armset", len(indexes))
    return arr.count - before


@command("ardel", counts_changes=True)
def ardel(client: Client, argv: list[bytes]) -> int:
    indexes = [parse_index(arg) for arg in argv[2:]]
    key = argv[1]
    arr = _for_write(client, key)
    if arr is None:
        return 0
    deleted = sum(1 for index in indexes if arr.delete(index))
    _removed(client, key, arr, b"ardel", deleted)
    return deleted


@command("ardelrange", counts_changes=True)
def ardelrange(client: Client, argv: list[bytes]) -> int | BigNumber:
    if len(argv) % 2:
        raise CommandError(errors.wrong_arity("ardelrange"))
    bounds = [parse_index(arg) for arg in argv[2:]]
    key = argv[1]
    arr = _for_write(client, key)
    if arr is None:
        return 0
    deleted = 0
    for i in range(0, len(bounds), 2):
        start, end = bounds[i], bounds[i + 1]
        deleted += arr.delete_range(min(start, end), max(start, end))
    _removed(client, key, arr, b"ardelrange", deleted)
    return unsigned(deleted)


# -- sizes and layout ------------------------------------------------------------------------------


@command("arlen")
def arlen(client: Client, argv: list[bytes]) -> int | BigNumber:
    arr = _read(client, argv[1])
    return 0 if arr is None else unsigned(arr.length())


@command("arcount")
def arcount(client: Client, argv: list[bytes]) -> int:
    arr = _read(client, argv[1])
    return 0 if arr is None else arr.count


@command("arinfo")
def arinfo(client: Client, argv: list[bytes]) -> dict[bytes, Any]:
    full = False
    if len(argv) > 2:
        if len(argv) == 3 and c_option(argv[2]) == b"full":
            full = True
        else:
            raise CommandError(errors.SYNTAX)
    arr = _read(client, argv[1])
    if arr is None:
        raise CommandError(errors.NO_SUCH_KEY)
    nxt = arr.next_insert()
    reply: dict[bytes, Any] = {
        b"count": arr.count,
        b"len": unsigned(arr.length()),
        b"next-insert-index": 0 if nxt is None else unsigned(nxt),
        b"slices": len(arr.slices),
        b"directory-size": arr.directory_size(),
        b"super-dir-entries": arr.super_dir_entries(),
        b"slice-size": SLICE_SIZE,
    }
    if full:
        dense, sparse, windows, filled, caps = arr.slice_stats()
        reply[b"dense-slices"] = dense
        reply[b"sparse-slices"] = sparse
        reply[b"avg-dense-size"] = _double(windows / dense if dense else 0.0)
        reply[b"avg-dense-fill"] = _double(filled / windows if windows else 0.0)
        reply[b"avg-sparse-size"] = _double(caps / sparse if sparse else 0.0)
    return reply


def _double(value: float) -> Double:
    return Double(d2string(value))


# -- ranges ---------------------------------------------------------------------------------------


@command("argetrange")
def argetrange(client: Client, argv: list[bytes]) -> Any:
    start = parse_index(argv[2])
    end = parse_index(argv[3])
    arr = _read(client, argv[1])
    lo, hi = min(start, end), max(start, end)
    if hi - lo + 1 > MAX_REPLY_ITEMS:
        raise CommandError(RANGE_TOO_LONG)
    if arr is None:
        values: list[bytes | None] = [None] * (hi - lo + 1)
    else:
        values = arr.get_range(lo, hi)
        if start > end:
            values.reverse()
    return _positions(client, values)


def _limit(arg: bytes) -> int:
    limit = int_arg(arg)
    if limit <= 0:
        raise CommandError(LIMIT_NOT_POSITIVE)
    return limit


@command("arscan")
def arscan(client: Client, argv: list[bytes]) -> Any:
    start = parse_index(argv[2])
    end = parse_index(argv[3])
    limit = -1
    if len(argv) == 6:
        if c_option(argv[4]) != b"limit":
            raise CommandError(errors.SYNTAX)
        limit = _limit(argv[5])
    elif len(argv) != 4:
        raise CommandError(errors.wrong_arity("arscan"))
    arr = _read(client, argv[1])
    if arr is None:
        return []
    pairs: list[Any] = []
    for index, value in arr.scan(start, end):
        if len(pairs) == limit:
            break
        pairs.append([unsigned(index), value])
    return in_pieces(pairs, client.resp)


# -- ARGREP ---------------------------------------------------------------------------------------

_PREDICATES = {b"exact": 1, b"match": 2, b"glob": 3, b"re": 4}


def _grep_bound(arg: bytes) -> int | None:
    """An ARGREP bound: an index (``-``: the start, 0), or None for ``+`` (the end)."""
    if arg == b"-":
        return 0
    if arg == b"+":
        return None
    return parse_index(arg)


def _lower(data: bytes) -> bytes:
    # ASCII letters only, as Redis's arGrepLowerAscii (bytes.lower() is ASCII-only).
    return data.lower()


def _grep_plan(argv: list[bytes]) -> tuple[list[Callable[[bytes], bool]], bool, int, bool]:
    """ARGREP's predicates and options, parsed in one pass in any order (the last of a
    repeated option wins), then the regular expressions compiled in order: the matchers,
    whether all must match (AND), the limit (-1: none), WITHVALUES."""
    raw: list[tuple[int, bytes]] = []
    use_and = False
    limit = -1
    withvalues = False
    nocase = False
    i = 4
    n = len(argv)
    while i < n:
        token = c_option(argv[i])
        kind = _PREDICATES.get(token)
        if kind is not None:
            if i + 1 >= n:
                raise CommandError(errors.SYNTAX)
            if len(raw) >= GREP_MAX_PREDICATES:
                raise CommandError(TOO_MANY_PREDICATES)
            pattern = argv[i + 1]
            if kind == 4 and len(pattern) > GREP_MAX_RE_LEN:
                raise CommandError(RE_TOO_LONG)
            raw.append((kind, pattern))
            i += 2
        elif token == b"limit":
            if i + 1 >= n:
                raise CommandError(errors.SYNTAX)
            limit = _limit(argv[i + 1])
            i += 2
        elif token == b"withvalues":
            withvalues = True
            i += 1
        elif token == b"nocase":
            nocase = True
            i += 1
        elif token in (b"and", b"or"):
            use_and = token == b"and"
            i += 1
        else:
            raise CommandError(errors.SYNTAX)
    if not raw:
        raise CommandError(errors.SYNTAX)
    matchers: list[Callable[[bytes], bool]] = []
    for kind, pattern in raw:
        if kind == 4:
            if not pattern:
                raise CommandError(RE_EMPTY)
            try:
                compiled = compile_ere(pattern, nocase)
            except EreError as exc:
                raise CommandError(f"ERR invalid regular expression: {exc}") from None
            if compiled.backrefs:
                raise CommandError(RE_BACKREFS)
            matchers.append(_regex_matcher(compiled.search))
        elif kind == 3:
            matchers.append(compile_matcher(pattern, nocase))
        else:
            matchers.append(_text_matcher(pattern, kind == 1, nocase))
    return matchers, use_and, limit, withvalues


def _regex_matcher(search: Callable[[bytes], object]) -> Callable[[bytes], bool]:
    def match(data: bytes) -> bool:
        return search(data) is not None
    return match


def _text_matcher(pattern: bytes, exact: bool, nocase: bool) -> Callable[[bytes], bool]:
    """EXACT (the whole value) or MATCH (a substring), ASCII case folded with NOCASE."""
    wanted = _lower(pattern) if nocase else pattern

    def match(data: bytes) -> bool:
        text = _lower(data) if nocase else data
        return text == wanted if exact else wanted in text
    return match


@command("argrep")
def argrep(client: Client, argv: list[bytes]) -> Any:
    start_bound = _grep_bound(argv[2])
    end_bound = _grep_bound(argv[3])
    matchers, use_and, limit, withvalues = _grep_plan(argv)
    arr = _read(client, argv[1])
    if arr is None or not arr.count:
        return []
    top = arr.length() - 1
    start = top if start_bound is None else start_bound
    end = top if end_bound is None else end_bound
    combine = all if use_and else any
    found: list[Any] = []
    for index, value in arr.scan(start, end):
        if len(found) == limit:
            break
        if combine(match(value) for match in matchers):
            found.append([unsigned(index), value] if withvalues else unsigned(index))
    return in_pieces(found, client.resp)


# -- AROP -----------------------------------------------------------------------------------------

_OPERATIONS = (b"sum", b"min", b"max", b"and", b"or", b"xor", b"match", b"used")


def _number(value: bytes) -> tuple[Fraction | float, int | None] | None:
    """What AROP reads ``value`` as: (the number, the integer when it is one), or None.
    Infinities are floats (``inf``), everything else exact."""
    tag, payload = element_kind(value)
    if tag == TAG_INT:
        assert isinstance(payload, int)
        return Fraction(payload), payload
    if tag == TAG_FLOAT:
        assert isinstance(payload, float)
        return Fraction(payload), None
    n = parse_int(value)
    if n is not None:
        return Fraction(n), n
    parsed = longdouble.parse(value)
    if parsed is None:
        return None
    if abs(parsed) >= longdouble.INF:
        return (math.inf if parsed > 0 else -math.inf), None
    return parsed, None


def _ld_add(a: Fraction | float, b: Fraction | float) -> Fraction | float:
    """``a + b`` in extended precision; infinities and NaN as floats."""
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        try:
            return longdouble.add(a, b)
        except longdouble.Overflow:
            return math.inf if a + b > 0 else -math.inf
    fa = a if isinstance(a, float) else 0.0
    fb = b if isinstance(b, float) else 0.0
    return fa + fb


def _ld_text(value: Fraction | float) -> bytes:
    if isinstance(value, float):
        if value != value:
            return b"-nan"  # the x87's default NaN, which printf shows signed
        return b"inf" if value > 0 else b"-inf"
    return longdouble.format_g17(value)


@command("arop")
def arop(client: Client, argv: list[bytes]) -> Any:
    start = parse_index(argv[2])
    end = parse_index(argv[3])
    op = c_option(argv[4])
    if op not in _OPERATIONS:
        raise CommandError(UNKNOWN_OPERATION)
    if op == b"match":
        if len(argv) != 6:
            raise CommandError(MATCH_NEEDS_VALUE)
    elif len(argv) != 5:
        raise CommandError(errors.wrong_arity("arop"))
    arr = _read(client, argv[1])
    counting = op in (b"match", b"used")
    if arr is None:
        return 0 if counting else None
    elements = arr.scan(start, end)
    if op == b"used":
        return sum(1 for _ in elements)
    if op == b"match":
        wanted = argv[5]
        return sum(1 for _, value in elements if value == wanted)
    if op in (b"and", b"or", b"xor"):
        acc: int | None = None
        for _, value in elements:
            parsed = _number(value)
            if parsed is None:
                continue
            num, ival = parsed
            if ival is None:
                if isinstance(num, float) or not INT64_MIN <= num <= INT64_MAX:
                    continue
                ival = int(num)  # towards zero
            if acc is None:
                acc = ival
            elif op == b"and":
                acc &= ival
            elif op == b"or":
                acc |= ival
            else:
                acc ^= ival
        return acc
    total: Fraction | float | None = None
    for _, value in elements:
        parsed = _number(value)
        if parsed is None:
            continue
        num = parsed[0]
        if total is None:
            total = num
        elif op == b"sum":
            total = _ld_add(total, num)
        elif (op == b"min" and num < total) or (op == b"max" and num > total):
            total = num
    return None if total is None else _ld_text(total)


# -- the insert cursor ----------------------------------------------------------------------------


@command("arinsert", counts_changes=True)
def arinsert(client: Client, argv: list[bytes]) -> int | BigNumber:
    key = argv[1]
    arr = _for_write(client, key)
    created = arr is None
    if arr is None:
        arr = SparseArray()
    last = arr.insert(argv[2:])
    if last is None:
        raise CommandError(INSERT_OVERFLOW)
    if created:
        client.db.add(key, arr)
    _written(client, key, b"arinsert", len(argv) - 2)
    return unsigned(last)


@command("arring", counts_changes=True)
def arring(client: Client, argv: list[bytes]) -> int | BigNumber:
    size = int_arg(argv[2], INVALID_SIZE)
    if size <= 0:
        raise CommandError(SIZE_NOT_POSITIVE)
    key = argv[1]
    arr = _create(client, key)
    last = arr.ring_insert(size, argv[3:])
    _written(client, key, b"arring", len(argv) - 3)
    return unsigned(last)


@command("arnext")
def arnext(client: Client, argv: list[bytes]) -> int | BigNumber | None:
    arr = _read(client, argv[1])
    if arr is None:
        return 0
    nxt = arr.next_insert()
    return None if nxt is None else unsigned(nxt)


@command("arseek", counts_changes=True)
def arseek(client: Client, argv: list[bytes]) -> int:
    index = parse_index(argv[2], allow_max=True)
    key = argv[1]
    arr = _for_write(client, key)
    if arr is None:
        return 0
    arr.seek(index)
    _written(client, key, b"arseek", 1)
    return 1


@command("arlastitems")
def arlastitems(client: Client, argv: list[bytes]) -> Any:
    count = int_arg(argv[2], INVALID_COUNT)
    if count <= 0:
        return []
    rev = False
    if len(argv) == 4:
        if c_option(argv[3]) != b"rev":
            raise CommandError(errors.SYNTAX)
        rev = True
    elif len(argv) != 3:
        raise CommandError(errors.wrong_arity("arlastitems"))
    arr = _read(client, argv[1])
    if arr is None:
        return []
    walked = min(count, arr.length())
    if walked > arr.count and walked > MAX_REPLY_ITEMS:
        raise CommandError(COUNT_TOO_LONG)
    values = arr.last_positions(walked)
    if not rev:
        values.reverse()
    return _positions(client, values)
