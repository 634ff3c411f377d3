"""POSIX extended regular expressions as Redis's ARGREP compiles them (the TRE library, with
``REG_EXTENDED | REG_NOSUB | REG_USEBYTES``, plus ``REG_ICASE`` for NOCASE), translated for
a matching engine over bytes.

ARGREP only asks whether a value matches, and whether a match exists does not depend on
POSIX's leftmost-longest rule or on a leftmost-first one, so a faithful translation of the
syntax is enough. What is translated:

* ``.`` matches any byte, newline included; ``^`` and ``$`` anchor at the ends of the value
  only (no REG_NEWLINE); alternation, groups, ``* + ?`` and bounds ``{m}``, ``{m,}``,
  ``{m,n}``, ``{,n}`` (at most 255, TRE's ``RE_DUP_MAX``); a repetition of a repetition
  (``a**``) repeats the whole;
* bracket expressions with ranges, ``]`` first as a literal, a backslash as a literal, and the
  classes ``[:alpha:]`` ``[:digit:]`` ``[:alnum:]`` ``[:upper:]`` ``[:lower:]`` ``[:space:]``
  ``[:blank:]`` ``[:punct:]`` ``[:print:]`` ``[:graph:]`` ``[:cntrl:]`` ``[:xdigit:]`` (ASCII,
  the C locale);
* TRE's escapes: ``\\w \\W \\s \\S \\d \\D``, ``\\b \\B``, ``\\<`` and ``\\>`` (word start and
  end), ``\\t \\n \\r \\f \\e``, ``\\xHH`` and ``\\x{H...}``; any other escaped character is
  itself; ``\\1`` to ``\\9`` are back references, which ARGREP refuses after compiling;
* case folding (NOCASE) is ASCII only, as ``tolower`` in the C locale: each letter is
  spelled out in both cases, so neither engine's own folding comes into play.

The engine is RE2 (the ``google-re2`` package): like TRE it never backtracks, so a match
costs time linear in the value whatever the expression. Python's ``re``, which backtracks
(``(a|a)*b`` takes exponential time), is the fallback where RE2 is not installed. RE2 has no
look-around, so there ``\\<`` and ``\\>`` are plain word boundaries (``\\b``).

Errors carry TRE's messages (``tre_regerror``): "Missing ')'", "Missing ']'", "Missing '}'",
"Invalid contents of {}", "Invalid character range", "Unknown character class name",
"Trailing backslash", "Invalid back reference", "Invalid use of repetition operators", and
"Invalid regexp" for anything else the engine refuses. Not translated (TRE extensions
resplite does not mirror): ``(?flags)`` groups, equivalence classes ``[=a=]`` and collating
symbols ``[.a.]`` (refused as "Invalid regexp").
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any


def _load_re2() -> Any:
    try:
        return importlib.import_module("re2")
    except ImportError:  # pragma: no cover - google-re2 is a dependency
        return None


# RE2 (linear-time matching), or None: Python's re then. Not Final: tests try both engines.
_re2: Any = _load_re2()

RE_DUP_MAX = 255

_CLASSES = {
    b"alpha": [(0x41, 0x5A), (0x61, 0x7A)], b"digit": [(0x30, 0x39)],
    b"alnum": [(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)], b"upper": [(0x41, 0x5A)],
    b"lower": [(0x61, 0x7A)], b"space": [(0x20, 0x20), (0x09, 0x0D)],
    b"blank": [(0x20, 0x20), (0x09, 0x09)],
    b"punct": [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
    b"print": [(0x20, 0x7E)], b"graph": [(0x21, 0x7E)], b"cntrl": [(0x00, 0x1F), (0x7F, 0x7F)],
    b"xdigit": [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
}
_HEX = frozenset(b"0123456789abcdefABCDEF")
_BOUND = re.compile(rb"\{(\d*)(,?)(\d*)\}")

MISSING_PAREN = "Missing ')'"
MISSING_BRACKET = "Missing ']'"
MISSING_BRACE = "Missing '}'"
BAD_BRACE = "Invalid contents of {}"
BAD_RANGE = "Invalid character range"
BAD_CLASS = "Unknown character class name"
TRAILING_BACKSLASH = "Trailing backslash"
BAD_BACKREF = "Invalid back reference"
BAD_REPEAT = "Invalid use of repetition operators"
BAD_PATTERN = "Invalid regexp"


class EreError(ValueError):
    """The pattern does not compile; the message is TRE's."""


class Compiled:
    """A compiled pattern: ``search(value)`` (true when some part of ``value`` matches) and
    whether it has back references (then ``search`` is not to be used: ARGREP refuses it)."""

    __slots__ = ("backrefs", "search")

    def __init__(self, search: Callable[[bytes], object], backrefs: bool) -> None:
        self.search = search
        self.backrefs = backrefs


def _lit(byte: int) -> bytes:
    return b"\\x%02x" % byte


def _folded(ranges: list[tuple[int, int]], icase: bool) -> list[tuple[int, int]]:
    """``ranges`` of bytes, with the other case of their ASCII letters added under icase."""
    if not icase:
        return ranges
    out = list(ranges)
    for lo, hi in ranges:
        for base, other in ((0x41, 0x61), (0x61, 0x41)):  # A-Z <-> a-z
            a, b = max(lo, base), min(hi, base + 25)
            if a <= b:
                out.append((a - base + other, b - base + other))
    return out


def _class_text(ranges: list[tuple[int, int]]) -> bytes:
    return b"".join(_lit(lo) if lo == hi else _lit(lo) + b"-" + _lit(hi) for lo, hi in ranges)


def _literal(byte: int, icase: bool) -> bytes:
    if icase and (0x41 <= byte <= 0x5A or 0x61 <= byte <= 0x7A):
        return b"[" + _lit(byte) + _lit(byte ^ 0x20) + b"]"
    return _lit(byte)


def _bracket(pattern: bytes, i: int, icase: bool) -> tuple[bytes, int]:
    """The class for the bracket expression opening at ``pattern[i]`` (``[``), and the
    position after it."""
    n = len(pattern)
    i += 1
    negate = i < n and pattern[i] == ord("^")
    if negate:
        i += 1
    ranges: list[tuple[int, int]] = []
    first = True
    prev: int | None = None  # the last single byte, which a following "-x" makes a range
    while True:
        if i >= n:
            raise EreError(MISSING_BRACKET)
        c = pattern[i]
        if c == ord("]") and not first:
            i += 1
            break
        first = False
        if c == ord("[") and i + 1 < n and pattern[i + 1] in b":=.":
            kind = pattern[i + 1]
            end = pattern.find(bytes((kind,)) + b"]", i + 2)
            if end < 0:
                raise EreError(MISSING_BRACKET)
            if kind != ord(":"):
                raise EreError(BAD_PATTERN)
            cls = _CLASSES.get(pattern[i + 2:end])
            if cls is None:
                raise EreError(BAD_CLASS)
            ranges.extend(cls)
            prev = None
            i = end + 2
            continue
        if c == ord("-") and prev is not None and i + 1 < n and pattern[i + 1] != ord("]"):
            hi = pattern[i + 1]
            if hi < prev:
                raise EreError(BAD_RANGE)
            ranges[-1] = (prev, hi)
            prev = None
            i += 2
            continue
        ranges.append((c, c))
        prev = c
        i += 1
    body = _class_text(_folded(ranges, icase))
    return (b"[^" if negate else b"[") + body + b"]", i


def _translate(pattern: bytes, icase: bool, re2: bool) -> tuple[bytes, bool]:
    """The pattern in the engine's syntax, and whether it has back references."""
    out: list[bytes] = []
    atom = -1  # where in ``out`` the last repeatable atom starts (-1: none)
    repeated = False  # the last atom already carries a repetition
    group_starts: list[int] = []
    groups = 0
    backrefs = False
    word_start = rb"\b" if re2 else rb"\b(?=\w)"
    word_end = rb"\b" if re2 else rb"\b(?<=\w)"
    escapes = {
        ord("w"): rb"\w", ord("W"): rb"\W", ord("s"): rb"\s", ord("S"): rb"\S",
        ord("d"): rb"\d", ord("D"): rb"\D", ord("b"): rb"\b", ord("B"): rb"\B",
        ord("<"): word_start, ord(">"): word_end, ord("t"): rb"\x09", ord("n"): rb"\x0a",
        ord("r"): rb"\x0d", ord("f"): rb"\x0c", ord("e"): rb"\x1b",
    }
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == ord("\\"):
            if i + 1 >= n:
                raise EreError(TRAILING_BACKSLASH)
            e = pattern[i + 1]
            i += 2
            if ord("1") <= e <= ord("9"):
                if e - ord("0") > groups:
                    raise EreError(BAD_BACKREF)
                backrefs = True
                piece = b"\\%d" % (e - ord("0"))
            elif e == ord("x"):
                if i < n and pattern[i] == ord("{"):
                    end = pattern.find(b"}", i)
                    digits = pattern[i + 1:end] if end >= 0 else b""
                    if end < 0 or not digits or not _HEX.issuperset(digits):
                        raise EreError(MISSING_BRACE if end < 0 else BAD_PATTERN)
                    code = int(digits, 16)
                    if code > 0xFF:
                        raise EreError(BAD_PATTERN)
                    piece = _literal(code, icase)
                    i = end + 1
                else:
                    j = i
                    while j < n and j < i + 2 and pattern[j] in _HEX:
                        j += 1
                    piece = _literal(int(pattern[i:j], 16) if j > i else 0, icase)
                    i = j
            else:
                piece = escapes.get(e) or _literal(e, icase)
            atom, repeated = len(out), False
            out.append(piece)
            continue
        if c == ord("["):
            piece, i = _bracket(pattern, i, icase)
            atom, repeated = len(out), False
            out.append(piece)
            continue
        if c == ord("("):
            group_starts.append(len(out))
            groups += 1
            out.append(b"(")
            atom = -1
            i += 1
            continue
        if c == ord(")"):
            if not group_starts:
                raise EreError(MISSING_PAREN)
            atom, repeated = group_starts.pop(), False
            out.append(b")")
            i += 1
            continue
        if c in b"*+?{":
            if c == ord("{"):
                m = _BOUND.match(pattern, i)
                if m is None:
                    raise EreError(MISSING_BRACE if pattern.find(b"}", i) < 0 else BAD_BRACE)
                low, comma, high = m.groups()
                lo = int(low) if low else 0
                hi = int(high) if high else -1
                if (not low and not comma) or max(lo, hi) > RE_DUP_MAX or 0 <= hi < lo:
                    raise EreError(BAD_BRACE)
                piece = b"{%d%s%s}" % (lo, comma, high)
                i = m.end()
            else:
                piece = bytes((c,))
                i += 1
            if atom < 0:
                raise EreError(BAD_REPEAT)
            if repeated:  # a repetition of a repetition repeats the whole
                out[atom:] = [b"(?:" + b"".join(out[atom:]) + b")"]
            out.append(piece)
            repeated = True
            continue
        if c == ord("|"):
            out.append(b"|")
            atom = -1
            i += 1
            continue
        if c == ord("^"):
            out.append(b"^")
            atom = -1
            i += 1
            continue
        if c == ord("$"):
            out.append(rb"\z" if re2 else rb"\Z")
            atom = -1
            i += 1
            continue
        atom, repeated = len(out), False
        out.append(b"." if c == ord(".") else _literal(c, icase))
        i += 1
    if group_starts:
        raise EreError(MISSING_PAREN)
    return b"".join(out), backrefs


def _python(pattern: bytes, icase: bool) -> tuple[re.Pattern[bytes], bool]:
    text, backrefs = _translate(pattern, icase, re2=False)
    try:
        return re.compile(text, re.DOTALL), backrefs
    except re.error as exc:
        raise EreError(BAD_REPEAT if "repeat" in str(exc) else BAD_PATTERN) from None


def compile_ere(pattern: bytes, icase: bool) -> Compiled:
    """Compile ``pattern`` as TRE would for ARGREP; EreError with TRE's message if not."""
    if _re2 is None:
        compiled, backrefs = _python(pattern, icase)
        return Compiled(compiled.search, backrefs)
    text, backrefs = _translate(pattern, icase, re2=True)
    if backrefs:  # RE2 has none: checked by Python's compiler, then refused by the caller
        _python(pattern, icase)
        return Compiled(lambda value: None, True)
    options = _re2.Options()
    options.encoding = _re2.Options.Encoding.LATIN1  # one character per byte
    options.dot_nl = True
    options.never_capture = True
    options.log_errors = False
    try:
        return Compiled(_re2.compile(text, options).search, False)
    except _re2.error as exc:
        raise EreError(BAD_REPEAT if b"repetition" in str(exc).encode() else BAD_PATTERN) \
            from None
