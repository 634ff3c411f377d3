"""Glob-style pattern matching with Redis's rules (KEYS, SCAN MATCH, COMMAND LIST PATTERN).

``*`` matches any run of bytes, ``?`` one byte, ``[...]`` one byte from a set (``^`` negates,
``a-z`` is a range whose ends may come in either order, ``\\`` escapes), and ``\\`` outside a
set makes the next byte literal. Matching is byte-wise; ``nocase`` folds ASCII letters, except
for bytes escaped inside a set, which Redis compares exactly.

Three details follow Redis rather than textbook globbing: an empty string matches only an
empty pattern (so ``*`` does not match ``""``), an unterminated ``[`` takes the rest of the
pattern as its set, and a pattern with more than 1000 ``*`` runs before its last token
matches nothing (Redis 7.2.6 / 7.4.1 and later stop recursing there; 7.0 had no limit).

The pattern is compiled once into tokens (cached), then matched with the usual single
backtracking point for the last ``*``, which gives the same answers as Redis's recursive
matcher in linear-times-pattern time.

:func:`compile_matcher` turns the same tokens into a regular expression for callers that
test many strings against one pattern (KEYS, SCAN MATCH): each token becomes a one-byte
class, the text before the first ``*`` is anchored at the start, the text after the last one
at the end, and every piece in between is searched leftmost inside an atomic group. Taking
the leftmost place of each piece never loses a match (each piece has a fixed length), and the
atomic groups stop the engine from retrying other places, so the cost stays bounded by
string length times pattern length, as Redis's matcher is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

_STAR = 0
_ANY = 1
_LIT = 2
_SET = 3

# A set item: (kind, a, b) where kind 0 = byte compared with case folding, 1 = escaped byte
# compared exactly, 2 = inclusive range a..b.
_SetItem = tuple[int, int, int]
_Token = tuple[int, int, bool, tuple[_SetItem, ...]]


def _lower(c: int) -> int:
    return c + 32 if 65 <= c <= 90 else c


def _signed(c: int) -> int:
    return c - 256 if c > 127 else c


@lru_cache(maxsize=256)
def _compile(pattern: bytes) -> tuple[_Token, ...]:
    tokens: list[_Token] = []
    n = len(pattern)
    i = 0
    while i < n:
        c = pattern[i]
        if c == 42:  # '*'
            while i + 1 < n and pattern[i + 1] == 42:
                i += 1
            tokens.append((_STAR, 0, False, ()))
        elif c == 63:  # '?'
            tokens.append((_ANY, 0, False, ()))
        elif c == 91:  # '['
            i += 1
            negate = i < n and pattern[i] == 94  # '^'
            if negate:
                i += 1
            items: list[_SetItem] = []
            while True:
                if i >= n:
                    i -= 1  # unterminated: the set ends with the pattern
                    break
                ch = pattern[i]
                if ch == 92 and n - i >= 2:  # '\\'
                    i += 1
                    items.append((1, pattern[i], 0))
                elif ch == 93:  # ']'
                    break
                elif n - i >= 3 and pattern[i + 1] == 45:  # 'a-z'
                    # Redis compares range ends as C chars, which are signed: bytes from
                    # 0x80 sort below 0x00 ([a-\xff] means \xff..a).
                    lo, hi = _signed(ch), _signed(pattern[i + 2])
                    if lo > hi:
                        lo, hi = hi, lo
                    items.append((2, lo, hi))
                    i += 2
                else:
                    items.append((0, ch, 0))
                i += 1
            tokens.append((_SET, 0, negate, tuple(items)))
        else:
            if c == 92 and n - i >= 2:  # '\\' escapes the next byte
                i += 1
                c = pattern[i]
            tokens.append((_LIT, c, False, ()))
        i += 1
    return tuple(tokens)


def _one(token: _Token, c: int, nocase: bool) -> bool:
    kind, lit, negate, items = token
    if kind == _ANY:
        return True
    if kind == _LIT:
        return lit == c or (nocase and _lower(lit) == _lower(c))
    matched = False
    for item_kind, a, b in items:
        if item_kind == 1:
            if a == c:
                matched = True
        elif item_kind == 2:
            sc = _signed(c)
            if nocase:
                if _lower(a) <= _lower(sc) <= _lower(b):
                    matched = True
            elif a <= sc <= b:
                matched = True
        elif a == c or (nocase and _lower(a) == _lower(c)):
            matched = True
    return matched != negate


# Redis gives up on a match that needs more nested '*' than this (CVE-2024-31228 fix).
MAX_STAR_NESTING = 1000


def _too_deep(tokens: tuple[_Token, ...]) -> bool:
    """Whether matching would nest deeper than Redis allows: more star runs than the limit
    that are followed by another token (a trailing star matches without nesting)."""
    stars = sum(1 for t in tokens if t[0] == _STAR)
    if stars and tokens[-1][0] == _STAR:
        stars -= 1
    return stars > MAX_STAR_NESTING


def glob_match(pattern: bytes, string: bytes, nocase: bool = False) -> bool:
    """Whether ``string`` matches the glob ``pattern`` under Redis's rules."""
    if not string:
        return not pattern
    tokens = _compile(pattern)
    if _too_deep(tokens):
        return False
    nt, ns = len(tokens), len(string)
    ti = si = 0
    star_ti = -1
    star_si = 0
    while si < ns:
        if ti < nt:
            token = tokens[ti]
            if token[0] == _STAR:
                star_ti, star_si = ti, si
                ti += 1
                continue
            if _one(token, string[si], nocase):
                ti += 1
                si += 1
                continue
        if star_ti < 0:
            return False
        star_si += 1
        si = star_si
        ti = star_ti + 1
    while ti < nt and tokens[ti][0] == _STAR:
        ti += 1
    return ti == nt


def _byte_class(token: _Token, nocase: bool) -> bytes:
    """The regex for one non-star token: a class of the bytes it accepts."""
    if token[0] == _ANY:
        return rb"[\x00-\xff]"
    if token[0] == _LIT:
        lit = token[1]
        if nocase and _lower(lit) != lit:
            return b"[" + re.escape(bytes((lit, _lower(lit)))) + b"]"
        if nocase and 97 <= lit <= 122:
            return b"[" + re.escape(bytes((lit, lit - 32))) + b"]"
        return re.escape(bytes((lit,)))
    accepted = [c for c in range(256) if _one(token, c, nocase)]
    if len(accepted) == 256:
        return rb"[\x00-\xff]"
    if not accepted:
        return rb"(?!)"
    if len(accepted) == 1:
        return re.escape(bytes(accepted))
    parts: list[bytes] = []
    start = prev = accepted[0]
    for c in [*accepted[1:], -2]:
        if c != prev + 1:
            parts.append(rb"\x%02x" % start if start == prev else rb"\x%02x-\x%02x" % (start, prev))
            start = c
        prev = c
    return b"[" + b"".join(parts) + b"]"


@lru_cache(maxsize=256)
def compile_matcher(pattern: bytes, nocase: bool = False) -> Callable[[bytes], bool]:
    """A fast predicate equal to ``lambda s: glob_match(pattern, s, nocase)``."""
    tokens = _compile(pattern)
    if _too_deep(tokens):
        return lambda string: False
    pieces: list[list[bytes]] = [[]]
    for token in tokens:
        if token[0] == _STAR:
            pieces.append([])
        else:
            pieces[-1].append(_byte_class(token, nocase))
    if len(pieces) == 1:
        regex = b"".join(pieces[0])
    else:
        middle = b"".join(rb"(?>.*?" + b"".join(p) + b")" for p in pieces[1:-1])
        regex = b"".join(pieces[0]) + middle + rb".*" + b"".join(pieces[-1])
    fullmatch = re.compile(regex, re.DOTALL).fullmatch
    empty_matches = not pattern

    def match(string: bytes) -> bool:
        if not string:
            return empty_matches
        return fullmatch(string) is not None

    return match
