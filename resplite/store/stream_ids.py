"""Stream entry ids as single integers, and their textual forms.

An id ``<ms>-<seq>`` (two unsigned 64-bit numbers) is held as the one integer
``ms << 64 | seq``. Integer order is then exactly Redis's id order, an id hashes and
compares at C speed, and a range bound is a plain number. :data:`MIN_ID` is ``0-0`` and
:data:`MAX_ID` is ``18446744073709551615-18446744073709551615``.

Parsing follows Redis's rules for ids given by clients:

* ``-`` and ``+`` stand for the smallest and largest id, unless the caller asks for a
  *strict* id (where they are invalid);
* a missing sequence part takes a caller-chosen default (0 for a range start, the maximum
  for a range end);
* ``<ms>-*`` asks XADD to pick the sequence; only accepted where the caller allows it;
* each number is read as Redis's ``string2ull`` reads it: plain decimal first, then the C
  library's ``strtoull`` rules (leading white space, a sign, leading zeros; a minus sign
  wraps around modulo 2**64, as in C); the text is cut at the first NUL byte, as a C string
  is, and must be at most 127 bytes long.

Invariants: every function here is pure; every id returned is in ``[MIN_ID, MAX_ID]``.
"""

from __future__ import annotations

from typing import Final

U64: Final = (1 << 64) - 1
MIN_ID: Final = 0
MAX_ID: Final = (1 << 128) - 1
SEQ_MASK: Final = U64

_SPACE = b" \t\n\v\f\r"
# Sentinel returned by parse_xadd_id for "<ms>-*": the caller picks the sequence.
AUTO_SEQ: Final = -1


def make_id(ms: int, seq: int) -> int:
    return (ms << 64) | seq


def format_id(sid: int) -> bytes:
    """The ``<ms>-<seq>`` form Redis replies with."""
    return b"%d-%d" % (sid >> 64, sid & U64)


def incr_id(sid: int) -> int | None:
    """The next id, or None past the largest one."""
    return None if sid == MAX_ID else sid + 1


def decr_id(sid: int) -> int | None:
    """The previous id, or None before the smallest one."""
    return None if sid == MIN_ID else sid - 1


def _strtoull(text: bytes) -> int | None:
    """C ``strtoull(text, &end, 10)`` that must consume the whole text, or None."""
    i = 0
    n = len(text)
    while i < n and text[i] in _SPACE:
        i += 1
    negative = False
    if i < n and text[i] in b"+-":
        negative = text[i] == 45
        i += 1
    digits = text[i:]
    if not digits or not digits.isdigit():
        return None
    value = int(digits)
    if value > U64:
        return None  # ERANGE
    return (-value) & U64 if negative else value


def _string2ull(text: bytes) -> int | None:
    """Redis's ``string2ull``: strict decimal first, then ``strtoull``."""
    if text.isdigit():
        value = int(text)
        return value if value <= U64 else None
    if text[:1] == b"-" and text[1:].isdigit() and text[1:2] != b"0" and int(text[1:]) <= 1 << 63:
        return None  # a negative that fits in 64 signed bits is refused before strtoull runs
    return _strtoull(text) if text else None


def _split(arg: bytes) -> tuple[bytes, bytes | None] | None:
    if len(arg) > 127:
        return None
    nul = arg.find(b"\x00")
    if nul >= 0:
        arg = arg[:nul]
    dash = arg.find(b"-")
    if dash < 0:
        return arg, None
    return arg[:dash], arg[dash + 1 :]


def parse_id(arg: bytes, missing_seq: int = 0, strict: bool = False) -> int | None:
    """Parse a client-given id; None when Redis would answer "Invalid stream ID"."""
    # Fast path: the common "<digits>-<digits>" form.
    dash = arg.find(b"-")
    if dash > 0:
        ms_part = arg[:dash]
        seq_part = arg[dash + 1 :]
        if ms_part.isdigit() and seq_part.isdigit() and len(arg) <= 127:
            ms = int(ms_part)
            seq = int(seq_part)
            if ms <= U64 and seq <= U64:
                return (ms << 64) | seq
            return None
    if arg == b"-" or arg[:2] == b"-\x00":
        return None if strict else MIN_ID
    if arg == b"+" or arg[:2] == b"+\x00":
        return None if strict else MAX_ID
    parts = _split(arg)
    if parts is None:
        return None
    ms_text, seq_text = parts
    ms_value = _string2ull(ms_text)
    if ms_value is None:
        return None
    if seq_text is None:
        return (ms_value << 64) | missing_seq
    seq_value = _string2ull(seq_text)
    if seq_value is None:
        return None
    return (ms_value << 64) | seq_value


def parse_xadd_id(arg: bytes) -> tuple[int, bool] | None:
    """Parse XADD's explicit id: ``(id, seq_given)``; ``<ms>-*`` gives ``seq_given`` False."""
    if b"-*" in arg:
        parts = _split(arg)
        if parts is not None and parts[1] == b"*":
            ms = _string2ull(parts[0])
            if ms is None:
                return None
            return ms << 64, False
    sid = parse_id(arg, 0, strict=True)
    if sid is None:
        return None
    return sid, True


def parse_interval_id(arg: bytes, missing_seq: int) -> tuple[int, bool] | None:
    """A range bound: ``(id, exclusive)``; a ``(`` prefix (on more than one byte) excludes."""
    if len(arg) > 1 and arg[0] == 40:  # "("
        sid = parse_id(arg[1:], missing_seq, strict=True)
        return None if sid is None else (sid, True)
    sid = parse_id(arg, missing_seq, strict=False)
    return None if sid is None else (sid, False)
