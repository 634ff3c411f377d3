"""POSIX extended regular expressions as Redis's ARGREP compiles them (the TRE library, with
``REG_EXTENDED | REG_NOSUB | REG_USEBYTES``, plus ``REG_ICASE`` for NOCASE), translated into
Python's :mod:`re` over bytes.

ARGREP only asks whether a value matches, and whether a match exists does not depend on
POSIX's leftmost-longest rule or on Python's leftmost-first one, so a faithful translation of
the syntax is enough. What is translated:

* ``.`` matches any byte, newline included; ``^`` and ``$`` anchor at the ends of the value
  only (no REG_NEWLINE); alternation, groups, ``* + ?`` and bounds ``{m}``, ``{m,}``,
  ``{m,n}``, ``{,n}``; a repetition of a repetition (``a**``) repeats the whole;
* bracket expressions with ranges, ``]`` first as a literal, a backslash as a literal, and the
  classes ``[:alpha:]`` ``[:digit:]`` ``[:alnum:]`` ``[:upper:]`` ``[:lower:]`` ``[:space:]``
  ``[:blank:]`` ``[:punct:]`` ``[:print:]`` ``[:graph:]`` ``[:cntrl:]`` ``[:xdigit:]`` (ASCII,
  the C locale);
* TRE's escapes: ``\\w \\W \\s \\S \\d \\D``, ``\\b \\B``, ``\\<`` and ``\\>`` (word start and
  end), ``\\t \\n \\r \\f \\e``, ``\\xHH`` and ``\\x{H...}``; any other escaped character is
  itself; ``\\1`` to ``\\9`` are back references, which ARGREP refuses after compiling.

Errors carry TRE's messages (``tre_regerror``): "Missing ')'", "Missing ']'", "Missing '}'",
"Invalid contents of {}", "Invalid character range", "Unknown character class name",
"Trailing backslash", "Invalid back reference", "Invalid use of repetition operators", and
"Invalid regexp" for anything else Python's compiler refuses. Not translated (TRE extensions
resplite does not mirror): ``(?flags)`` groups, equivalence classes ``[=a=]`` and collating
symbols ``[.a.]`` (refused as "Invalid regexp").
"""

from __future__ import annotations

import re

_CLASSES = {
    b"alpha": rb"a-zA-Z", b"digit": rb"0-9", b"alnum": rb"a-zA-Z0-9", b"upper": rb"A-Z",
    b"lower": rb"a-z", b"space": rb" \t\n\r\f\v", b"blank": rb" \t",
    b"punct": rb"!-/:-@\[-`{-~", b"print": rb"\x20-\x7e", b"graph": rb"\x21-\x7e",
    b"cntrl": rb"\x00-\x1f\x7f", b"xdigit": rb"0-9A-Fa-f",
}
_SIMPLE_ESCAPES = {
    ord("w"): rb"\w", ord("W"): rb"\W", ord("s"): rb"\s", ord("S"): rb"\S", ord("d"): rb"\d",
    ord("D"): rb"\D", ord("b"): rb"\b", ord("B"): rb"\B", ord("<"): rb"\b(?=\w)",
    ord(">"): rb"\b(?<=\w)", ord("t"): rb"\t", ord("n"): rb"\n", ord("r"): rb"\r",
    ord("f"): rb"\f", ord("e"): rb"\x1b",
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


def _lit(byte: int) -> bytes:
    return b"\\x%02x" % byte


class Compiled:
    """A compiled pattern: ``search(value)`` and whether it has back references."""

    __slots__ = ("backrefs", "search")

    def __init__(self, pattern: re.Pattern[bytes], backrefs: bool) -> None:
        self.search = pattern.search
        self.backrefs = backrefs


def _bracket(pattern: bytes, i: int) -> tuple[bytes, int]:
    """The Python class for the bracket expression opening at ``pattern[i]`` (``[``), and
    the position after it."""
    n = len(pattern)
    i += 1
    negate = i < n and pattern[i] == ord("^")
    if negate:
        i += 1
    parts: list[bytes] = []
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
            parts.append(cls)
            prev = None
            i = end + 2
            continue
        if c == ord("-") and prev is not None and i + 1 < n and pattern[i + 1] != ord("]"):
            hi = pattern[i + 1]
            if hi < prev:
                raise EreError(BAD_RANGE)
            parts.append(b"-" + _lit(hi))
            prev = None
            i += 2
            continue
        parts.append(_lit(c))
        prev = c
        i += 1
    body = b"".join(parts)
    return (b"[^" if negate else b"[") + body + b"]", i


def compile_ere(pattern: bytes, icase: bool) -> Compiled:
    """Compile ``pattern`` as TRE would for ARGREP; EreError with TRE's message if not."""
    out: list[bytes] = []
    atom = -1  # where in ``out`` the last repeatable atom starts (-1: none)
    repeated = False  # the last atom already carries a repetition
    depth_starts: list[int] = []
    groups = 0
    backrefs = False
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
                    piece = _lit(code)
                    i = end + 1
                else:
                    j = i
                    while j < n and j < i + 2 and pattern[j] in _HEX:
                        j += 1
                    piece = _lit(int(pattern[i:j], 16) if j > i else 0)
                    i = j
            else:
                piece = _SIMPLE_ESCAPES.get(e) or _lit(e)
            atom, repeated = len(out), False
            out.append(piece)
            continue
        if c == ord("["):
            piece, i = _bracket(pattern, i)
            atom, repeated = len(out), False
            out.append(piece)
            continue
        if c == ord("("):
            depth_starts.append(len(out))
            groups += 1
            out.append(b"(")
            atom = -1
            i += 1
            continue
        if c == ord(")"):
            if not depth_starts:
                raise EreError(MISSING_PAREN)
            atom, repeated = depth_starts.pop(), False
            out.append(b")")
            i += 1
            continue
        if c in b"*+?{":
            if c == ord("{"):
                m = _BOUND.match(pattern, i)
                if m is None:
                    raise EreError(MISSING_BRACE if pattern.find(b"}", i) < 0 else BAD_BRACE)
                low, comma, high = m.groups()
                if (not low and not comma) or (low and high and int(low) > int(high)):
                    raise EreError(BAD_BRACE)
                piece = m.group(0)
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
            out.append(rb"\Z")
            atom = -1
            i += 1
            continue
        atom, repeated = len(out), False
        out.append(b"." if c == ord(".") else _lit(c))
        i += 1
    if depth_starts:
        raise EreError(MISSING_PAREN)
    flags = re.DOTALL | (re.IGNORECASE if icase else 0)
    try:
        compiled = re.compile(b"".join(out), flags)
    except re.error as exc:
        raise EreError(BAD_REPEAT if "repeat" in str(exc) else BAD_PATTERN) from None
    return Compiled(compiled, backrefs)
