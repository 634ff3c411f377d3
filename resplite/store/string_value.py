"""String values and the encodings Redis would report for them (OBJECT ENCODING / REFCOUNT).

A string is stored as ``bytes``. Redis picks an encoding when a value is stored: ``int`` for
a canonical decimal that fits a signed 64-bit integer (at most 20 bytes), ``embstr`` up to 44
bytes, ``raw`` beyond; and small integers (0..9999) share one object, whose reference count
reads as 2147483647. Redis 8 stores each key in one object with its value: an ``embstr``
value stays one only while value and key fit a 64-byte line together (``key_len`` of
:func:`encoding`), and no value is shared (the caller asks :func:`refcount` so). Most
values are stored by commands that apply exactly that rule, so their encoding is derived
from the bytes alone and costs nothing to track.

Three commands leave a value whose encoding the bytes do not tell; they store it as one of
the marker subclasses below (empty ``__slots__``: no memory beyond a plain ``bytes``):

* :class:`RawString`: grown in place by APPEND or SETRANGE, which always leaves ``raw``;
* :class:`TextString`: written by INCRBYFLOAT, which never produces ``int`` (``embstr`` or
  ``raw`` by length);
* :class:`PrivateInt`: a small integer copied by COPY into an object of its own, so it is
  ``int`` with a reference count of 1.

A string that is changed in place (SETBIT, BITFIELD, PFADD and the other HyperLogLog
writers, and APPEND / SETRANGE once it is one) is a :class:`MutableString`: a ``bytearray``
the store owns, so that flipping a bit costs O(1) rather than a copy of the whole value.
Redis's bit commands "unshare" the value they write (``dbUnshareStringValue``), which always
leaves ``raw``; that is what the class reports. A mutable string is never handed out: a
reply carries a copy (:func:`frozen`), since a pipelined or queued reply may be encoded after
a later command changed the value.

A stored string is therefore an instance of ``bytes`` or of :class:`MutableString`: test
with ``isinstance(value, STRING_TYPES)`` (or :func:`is_string`).
"""

from __future__ import annotations

import sys
from typing import Any, Final

from mypy_extensions import mypyc_attr

SHARED_REFCOUNT = 2147483647  # how Redis reports the refcount of its shared objects
SHARED_INTEGERS = 10000
EMBSTR_SIZE_LIMIT = 44
# Redis 8's kvobjSet: a 16-byte object, the key with 3 bytes of header and terminator, the
# value with 4, within a 64-byte cache line.
KV_EMBED_LIMIT = 64 - 16 - 3 - 4
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_BYTEARRAY_HEADER: Final = sys.getsizeof(bytearray())


@mypyc_attr(native_class=False)
class RawString(bytes):
    """A string Redis holds in its ``raw`` encoding whatever its content."""

    __slots__ = ()


@mypyc_attr(native_class=False)
class TextString(bytes):
    """A string never held as an integer: ``embstr`` or ``raw`` by length."""

    __slots__ = ()


@mypyc_attr(native_class=False)
class PrivateInt(bytes):
    """An integer-encoded string in an object of its own (reference count 1)."""

    __slots__ = ()


@mypyc_attr(native_class=False)
class MutableString(bytearray):
    """A string value changed in place; always ``raw`` (see the module docstring).

    Invariants: only the store's owner of the key mutates it, and only while it is stored;
    its length never exceeds ``proto-max-bulk-len`` (the commands check before growing).
    """

    __slots__ = ()

    type_name: Final = "string"  # TYPE
    encoding: Final = "raw"  # OBJECT ENCODING

    def copy(self) -> MutableString:
        """An independent copy (COPY)."""
        return MutableString(self)

    def grow_zero(self, size: int) -> bool:
        """Zero-fill up to ``size`` bytes (Redis's ``sdsgrowzero``); returns whether it grew."""
        missing = size - len(self)
        if missing <= 0:
            return False
        self.extend(bytes(missing))
        return True

    def memory_usage(self) -> int:
        """An estimate of the bytes held, in O(1): the header and the bytes (a mutable
        string changes in place, so the keyspace asks again after each change)."""
        return _BYTEARRAY_HEADER + len(self)


STRING_TYPES: Final = (bytes, MutableString)


def is_string(value: Any) -> bool:
    """Whether a stored value is a string (either representation)."""
    return isinstance(value, STRING_TYPES)


def frozen(value: bytes | bytearray) -> bytes:
    """The value as immutable ``bytes`` for a reply: itself, or a copy of a mutable string."""
    return value if isinstance(value, bytes) else bytes(value)


def mutable(value: bytes | bytearray) -> MutableString:
    """The in-place representation of a stored string: itself if already mutable, else a copy
    that the caller stores back in place of ``value`` (what Redis's unsharing does)."""
    if isinstance(value, MutableString):
        return value
    return MutableString(value)


def as_long(value: bytes) -> int | None:
    """The integer ``value`` spells canonically (as Redis's ``string2l``), or None."""
    n = len(value)
    if n == 0 or n > 20:
        return None
    if n == 1:
        c = value[0]
        return c - 48 if 48 <= c <= 57 else None
    body = value[1:] if value[0] == 45 else value  # '-'
    if not body.isdigit() or body[0] == 48:  # no sign other than '-', no leading zero
        return None
    number = int(value)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def encoding(value: bytes, key_len: int = -1) -> str:
    """The name OBJECT ENCODING gives to a stored string.

    ``key_len`` (0 or more): the length of the key holding it, in Redis 8, which embeds the
    key and an ``embstr`` value in one 64-byte allocation, so that a value stays ``embstr``
    only while value and key together take at most :data:`KV_EMBED_LIMIT` bytes. Redis 7
    (``key_len`` -1) looks at the value alone."""
    cls = type(value)
    if cls is RawString:
        return "raw"
    if cls is not TextString and as_long(value) is not None:
        return "int"
    if key_len >= 0:
        return "embstr" if len(value) + key_len <= KV_EMBED_LIMIT else "raw"
    return "embstr" if len(value) <= EMBSTR_SIZE_LIMIT else "raw"


def refcount(value: bytes, shared_integers: bool = True) -> int:
    """What OBJECT REFCOUNT answers for a stored string.

    ``shared_integers`` is false when Redis would not share small integers (a ``maxmemory``
    limit under an LRU or LFU policy, where every key needs its own access field).
    """
    if shared_integers and type(value) is bytes:
        number = as_long(value)
        if number is not None and 0 <= number < SHARED_INTEGERS:
            return SHARED_REFCOUNT
    return 1


def copied(value: bytes) -> bytes:
    """The value COPY stores: same bytes, and the encoding Redis's duplicate would have."""
    if type(value) is bytes and encoding(value) == "int":
        return PrivateInt(value)
    return value
