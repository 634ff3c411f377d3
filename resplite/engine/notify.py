"""Keyspace notifications: the classes of ``notify-keyspace-events`` and their channels.

Command modules report what they did with one call, :meth:`ServerState.notify(cls, event,
key, db) <resplite.engine.state.ServerState.notify>`, naming the event exactly as Redis does
(``set``, ``hset``, ``xgroup-createconsumer``, ``expired`` ...) and its class below. When the
class is enabled, the event is published on ``__keyspace@<db>__:<key>`` (message: the event)
if ``K`` is set, and on ``__keyevent@<db>__:<event>`` (message: the key) if ``E`` is set, in
that order, through the ordinary Pub/Sub registry. With neither ``K`` nor ``E`` nothing is
published, as in Redis.

Event order follows Redis: a key created by a command first reports ``new`` (class ``n``, when
the keyspace adds it), then the command's own event; a command that deletes the last element
of a container reports its own event, then ``del``. Events are published as the command runs;
a subscriber that is the calling client itself receives them after the command's reply
(Redis 7.2+), see :mod:`resplite.engine.output`.

The flag string parses and prints as Redis's ``keyspaceEventsStringToFlags`` and
``keyspaceEventsFlagsToString`` do: ``A`` stands for ``g$lshzxetd`` (not ``n``, ``m``, ``o``
nor ``c``) and is printed back whenever all of those are set (then, as in Redis, ``o`` and
``c`` are not printed).

Redis 8.6's ``o`` and ``c``: a command that replaces a key's value as a whole (SET and its
kin, the STORE commands, BITOP, RENAME, COPY, RESTORE REPLACE) reports ``overwritten``, and
``type_changed`` when the new value is of another type (:func:`resplite.commands.generic.
note_overwrite`).

Redis 8.8's array commands report class ``a`` (:data:`ARRAY`), which ``A`` includes there, so
``KEA`` sees ``arset``; ``A`` is still printed back for ``g$lshzxetd`` alone, as the servers
before 8.8 (which have no arrays) print it (``a`` is then implied), and ``a`` after the other
classes when ``A`` is not printed.
"""

from __future__ import annotations

KEYSPACE = 1 << 0  # K
KEYEVENT = 1 << 1  # E
GENERIC = 1 << 2  # g
STRING = 1 << 3  # $
LIST = 1 << 4  # l
SET = 1 << 5  # s
HASH = 1 << 6  # h
ZSET = 1 << 7  # z
EXPIRED = 1 << 8  # x
EVICTED = 1 << 9  # e
STREAM = 1 << 10  # t
KEY_MISS = 1 << 11  # m
MODULE = 1 << 13  # d
NEW = 1 << 14  # n
OVERWRITTEN = 1 << 15  # o (Redis 8.6: a key's value replaced by another)
TYPE_CHANGED = 1 << 16  # c (Redis 8.6: ... by one of another type)
ARRAY = 1 << 23  # a (Redis 8.8)
ALL = GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE

_FLAGS = {
    "A": ALL | ARRAY, "a": ARRAY, "g": GENERIC, "$": STRING, "l": LIST, "s": SET, "h": HASH,
    "z": ZSET, "x": EXPIRED, "e": EVICTED, "K": KEYSPACE, "E": KEYEVENT, "t": STREAM, "m": KEY_MISS,
    "d": MODULE, "n": NEW, "o": OVERWRITTEN, "c": TYPE_CHANGED,
}
# The order keyspaceEventsFlagsToString prints classes in (when not all of A are set).
_PRINT_ORDER = (
    ("g", GENERIC), ("$", STRING), ("l", LIST), ("s", SET), ("h", HASH), ("z", ZSET),
    ("x", EXPIRED), ("e", EVICTED), ("t", STREAM), ("d", MODULE), ("n", NEW),
    ("o", OVERWRITTEN), ("c", TYPE_CHANGED), ("a", ARRAY),
)

INVALID_CLASS = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."


def parse_flags(text: str) -> int:
    """The class flags of a ``notify-keyspace-events`` value; ValueError on a bad letter."""
    flags = 0
    for ch in text:
        bit = _FLAGS.get(ch)
        if bit is None:
            raise ValueError(INVALID_CLASS)
        flags |= bit
    return flags


def format_flags(flags: int) -> str:
    """The canonical text CONFIG GET shows for ``flags``."""
    out = "A" if flags & ALL == ALL else "".join(ch for ch, bit in _PRINT_ORDER if flags & bit)
    if flags & KEYSPACE:
        out += "K"
    if flags & KEYEVENT:
        out += "E"
    if flags & KEY_MISS:
        out += "m"
    return out


def keyspace_channel(db: int, key: bytes) -> bytes:
    return b"__keyspace@%d__:%s" % (db, key)


def keyevent_channel(db: int, event: bytes) -> bytes:
    return b"__keyevent@%d__:%s" % (db, event)
