"""What a write is logged as in the append-only file: the command as Redis propagates it.

The general rule (:func:`logged_form`): a write command that changed something (the server's
``dirty`` counter moved while it ran) is logged as it was sent. A few are logged in another
form, so that replaying the log later gives the same data set whatever the clock says then:

* relative expiry becomes absolute: EXPIRE / PEXPIRE / EXPIREAT become ``PEXPIREAT key ms``
  (``DEL key`` when the expiry removed the key), SETEX / PSETEX and SET with EX / PX / EXAT
  become ``SET key value PXAT ms`` (MSETEX likewise ``PXAT ms``), GETEX with an expiry
  ``PEXPIREAT`` and with PERSIST ``PERSIST``;
* SET with a compare-and-set condition (IFEQ / IFNE / IFDEQ / IFDNE) is logged as the plain
  SET it turned into, DELEX as ``DEL key``;
* XADD carries the id it resolved (``*`` or ``<ms>-*`` becomes the id the entry got);
  XADD and XTRIM with an approximate trim (``~``) carry an exact one, to what it left;
* SPOP becomes SREM of the members it chose;
* hash field expiry: HEXPIRE / HPEXPIRE / HEXPIREAT / HGETEX become each field's state
  (HPEXPIREAT, HPERSIST, HDEL), HSETEX's EX / PX / EXAT becomes PXAT, RESTORE's relative
  TTL becomes an absolute one with ABSTTL;
* XREADGROUP, XCLAIM and XAUTOCLAIM become the pending entries' state they left
  (:func:`group_forms`);
* INCREX becomes ``SET key value`` (``PXAT ms`` when the key has an expiry), or ``DEL key``
  when an EXAT / PXAT in the past removed it;
* HIMPORT SET becomes ``DEL`` and ``HSET`` of the pairs it stored (:func:`himport_forms`);
* LMOVEM and BLMOVEM become ``LMOVEM ... EXACTLY n`` with the number of elements moved;
* a blocking pop served after it waited is logged in its non-blocking form
  (:func:`unblocked_form`): BLPOP/BRPOP as LPOP/RPOP of the key served, BLMOVE as LMOVE,
  BRPOPLPUSH as RPOPLPUSH, BZPOPMIN/MAX as ZPOPMIN/MAX, BLMPOP/BZMPOP as LMPOP/ZMPOP,
  XREADGROUP without its BLOCK option.

MIGRATE logs itself (:data:`SELF_LOGGED`): one ``DEL`` of the keys the target acknowledged,
also when its reply is an error. Expired keys are logged as ``DEL`` by the server's expiry
hook, MULTI/EXEC by the AOF itself (:meth:`resplite.engine.aof.Aof.feed`). Everything here
is a pure function of the command, its reply and the key's expiry after it ran.
"""

from __future__ import annotations

from typing import Any

_SET_EXPIRY = frozenset({b"EX", b"PX", b"EXAT", b"PXAT"})
_SET_COMPARE = frozenset({b"IFEQ", b"IFNE", b"IFDEQ", b"IFDNE"})
_GETEX_EXPIRY = frozenset({b"EX", b"PX", b"EXAT", b"PXAT"})


# Commands whose handlers feed the append-only file themselves: the dispatcher logs nothing.
SELF_LOGGED = frozenset({"migrate"})


def _ms(value: int) -> bytes:
    return b"%d" % value


def xadd_id_index(argv: list[bytes]) -> int:
    """The index of XADD's id argument (its options skipped as XADD parses them)."""
    i = 2
    n = len(argv)
    while i < n:
        upper = argv[i].upper()
        if upper in (b"MAXLEN", b"MINID"):
            if i + 2 < n and argv[i + 1] in (b"~", b"="):
                i += 1
            i += 2
        elif upper in (b"LIMIT", b"IDMPAUTO"):
            i += 2
        elif upper == b"IDMP":
            i += 3
        elif upper in (b"NOMKSTREAM", b"KEEPREF", b"DELREF", b"ACKED"):
            i += 1
        else:
            return i
    return n


def logged_form(name: str, argv: list[bytes], reply: Any,
                expires: dict[bytes, int], data: Any) -> list[bytes]:
    """The argv to log for a write ``name`` that changed the data set.

    ``expires`` and ``data`` are the key's database's expiry table and key table after the
    command ran."""
    if name in ("expire", "pexpire", "expireat"):
        key = argv[1]
        if key not in data:
            return [b"DEL", key]
        when = expires.get(key)
        return [b"PEXPIREAT", key, _ms(when)] if when is not None else argv
    if name in ("setex", "psetex"):
        key = argv[1]
        when = expires.get(key)
        if when is None:
            return argv
        return [b"SET", key, argv[3], b"PXAT", _ms(when)]
    if name == "set":
        return _set(argv, expires) if len(argv) > 3 else argv
    if name == "delex":
        return [b"DEL", argv[1]]
    if name == "msetex":
        return _msetex(argv, expires)
    if name == "getex":
        key = argv[1]
        words = {a.upper() for a in argv[2:]}
        if b"PERSIST" in words:
            return [b"PERSIST", key]
        if words & _GETEX_EXPIRY:
            if key not in data:
                return [b"DEL", key]
            when = expires.get(key)
            if when is not None:
                return [b"PEXPIREAT", key, _ms(when)]
        return argv
    if name == "hsetex":
        return _hsetex(argv, data)
    if name in ("restore", "restore-asking") and len(argv) > 3 and argv[2] not in (b"0", b"-0"):
        if b"ABSTTL" not in (a.upper() for a in argv[4:]):
            when = expires.get(argv[1])
            if when is not None:
                return [argv[0], argv[1], _ms(when), *argv[3:], b"ABSTTL"]
        return argv
    if name == "spop":
        # A random choice: replayed it could choose differently, so the members it removed.
        members = [reply] if isinstance(reply, bytes) else list(reply or ())
        return [b"SREM", argv[1], *members] if members else argv
    if name in ("lmovem", "blmovem"):
        return lmovem_form(argv, reply)
    if name == "increx":
        # The state it left: the value, with its absolute expiry if it has one.
        key = argv[1]
        value = data.get(key)
        if value is None:
            return [b"DEL", key]
        when = expires.get(key)
        text = bytes(value)
        return [b"SET", key, text] if when is None else [b"SET", key, text, b"PXAT", _ms(when)]
    if name == "xadd" and isinstance(reply, bytes):
        out = _exact_trim(argv, 2, xadd_id_index(argv), data)
        i = xadd_id_index(out)
        if i < len(out) and out[i] != reply:
            out = list(out)
            out[i] = reply
        return out
    if name == "xtrim":
        return _exact_trim(argv, 2, len(argv), data)
    return argv


def _exact_trim(argv: list[bytes], start: int, stop: int, data: Any) -> list[bytes]:
    """XADD's or XTRIM's ``MAXLEN ~ n`` / ``MINID ~ id`` (looked for in ``argv[start:stop]``)
    logged as ``=`` and what the trim left, the stream's length or its first id, as Redis
    rewrites them: how much an approximate trim removes depends on the stream's nodes, so a
    replay must trim exactly. LIMIT, which only an approximate trim takes, is left out."""
    for i in range(start, min(stop, len(argv) - 2)):
        if argv[i].upper() in (b"MAXLEN", b"MINID") and argv[i + 1] == b"~":
            break
    else:
        return argv
    stream = data.get(argv[1])
    if argv[i].upper() == b"MAXLEN":
        left = b"%d" % (len(stream) if stream is not None else 0)
    else:
        first = stream.first_entry() if stream is not None else None
        sid = first[0] if first is not None else 0
        left = b"%d-%d" % (sid >> 64, sid & ((1 << 64) - 1))
    out = [*argv[:i + 1], b"=", left]
    j = i + 3
    if j + 1 < len(argv) and argv[j].upper() == b"LIMIT":
        j += 2
    out.extend(argv[j:])
    return out


def _set_words(argv: list[bytes], start: int) -> tuple[list[bytes], bool, bool]:
    """SET / MSETEX options from ``argv[start:]`` whose meaning depends neither on the clock
    nor on the value found (NX, XX, GET, KEEPTTL), and whether an expiry and a
    compare-and-set condition were among the rest."""
    kept: list[bytes] = []
    expiry = compare = False
    i, n = start, len(argv)
    while i < n:
        word = argv[i].upper()
        if word in _SET_EXPIRY:
            expiry = True
            i += 2
        elif word in _SET_COMPARE:
            compare = True
            i += 2
        else:
            kept.append(argv[i])
            i += 1
    return kept, expiry, compare


def _set(argv: list[bytes], expires: dict[bytes, int]) -> list[bytes]:
    """SET with EX / PX / EXAT becomes ``SET key value ... PXAT ms``; SET with a comparison
    (IFEQ / IFNE / IFDEQ / IFDNE, Redis 8.4) is logged as the plain SET it turned into (it
    is only logged when it did set)."""
    kept, expiry, compare = _set_words(argv, 3)
    when = expires.get(argv[1])
    if expiry and when is None:
        return argv
    if not expiry and not compare:
        return argv
    tail = [b"PXAT", _ms(when)] if expiry and when is not None else []
    return [b"SET", argv[1], argv[2], *kept, *tail]


def _msetex(argv: list[bytes], expires: dict[bytes, int]) -> list[bytes]:
    """MSETEX with a relative expiry (or EXAT) becomes MSETEX with PXAT: the same absolute
    time for every key."""
    try:
        numkeys = int(argv[1])
    except ValueError:
        return argv
    end = 2 + 2 * numkeys
    kept, expiry, _ = _set_words(argv, end)
    when = expires.get(argv[2]) if end <= len(argv) else None
    if not expiry or when is None:
        return argv
    return [*argv[:end], *kept, b"PXAT", _ms(when)]


# Logged as several commands (see field_expiry_forms).
FIELD_EXPIRY_MANY = frozenset({"hexpire", "hpexpire", "hexpireat", "hgetex"})


def _fields(argv: list[bytes]) -> list[bytes]:
    upper = [a.upper() for a in argv]
    if b"FIELDS" not in upper:
        return []
    at = upper.index(b"FIELDS")
    try:
        count = int(argv[at + 1])
    except (IndexError, ValueError):
        return []
    return argv[at + 2:at + 2 + count]


def field_expiry_forms(argv: list[bytes], data: Any) -> list[list[bytes]]:
    """HEXPIRE / HPEXPIRE / HEXPIREAT / HGETEX: each named field's state after the command,
    as HDEL (gone), HPERSIST (HGETEX PERSIST) or HPEXPIREAT grouped by time."""
    from resplite.store.hash import Hash

    key = argv[1]
    value = data.get(key)
    fields = _fields(argv)
    gone: list[bytes] = []
    persisted: list[bytes] = []
    timed: dict[int, list[bytes]] = {}
    for field in fields:
        if not isinstance(value, Hash) or field not in value.fields:
            gone.append(field)
            continue
        when = value.ttl_of(field)
        if when is None:
            persisted.append(field)
        else:
            timed.setdefault(when, []).append(field)
    out: list[list[bytes]] = []
    if gone:
        out.append([b"HDEL", key, *gone])
    if persisted and argv[0].upper() == b"HGETEX":
        out.append([b"HPERSIST", key, b"FIELDS", b"%d" % len(persisted), *persisted])
    for when, group in timed.items():
        out.append([b"HPEXPIREAT", key, _ms(when), b"FIELDS", b"%d" % len(group), *group])
    return out or [argv]


def himport_forms(argv: list[bytes], data: Any) -> list[list[bytes]]:
    """HIMPORT SET: ``DEL key`` and ``HSET key`` of the pairs it stored, since a replay
    has no fieldset (they live on the connection that prepared them)."""
    from resplite.store.hash import Hash

    key = argv[2]
    value = data.get(key)
    pairs: list[bytes] = []
    if isinstance(value, Hash):
        for field, text in value.fields.items():
            pairs += (field, text)
    return [[b"DEL", key], [b"HSET", key, *pairs]]


def _hsetex(argv: list[bytes], data: Any) -> list[bytes]:
    """HSETEX with a relative expiry: the same fields and values with PXAT."""
    from resplite.store.hash import Hash

    upper = [a.upper() for a in argv]
    if b"FIELDS" not in upper:
        return argv
    fields_at = upper.index(b"FIELDS")
    for option in (b"EX", b"PX", b"EXAT"):
        if option not in upper[2:fields_at]:
            continue
        at = upper.index(option, 2)
        value = data.get(argv[1])
        first = argv[fields_at + 2] if fields_at + 2 < len(argv) else None
        when = value.ttl_of(first) if isinstance(value, Hash) and first is not None else None
        if when is None:
            return argv
        return [*argv[:at], b"PXAT", _ms(when), *argv[at + 2:]]
    return argv


def lmovem_form(argv: list[bytes], reply: Any) -> list[bytes]:
    """LMOVEM / BLMOVEM that moved elements: ``LMOVEM src dst from to EXACTLY n ordering``
    with the number it moved, so that a replay moves the same elements whatever the list
    holds then (BLMOVEM's timeout dropped, as Redis rewrites it)."""
    timeout = 1 if argv[0].upper() == b"BLMOVEM" else 0
    rest = argv[5 + timeout:]
    ordering = rest[2] if len(rest) == 3 else b"OBO"
    moved = len(reply) if isinstance(reply, list) else 1
    return [b"LMOVEM", *argv[1:5], b"EXACTLY", b"%d" % moved, ordering]


def unblocked_form(name: str, argv: list[bytes], key: bytes | None,
                   reply: Any = None) -> list[bytes]:
    """The non-blocking command a blocking one served after waiting is logged as.

    ``key`` is the key that served it (None when not known), ``reply`` what it answered."""
    if name == "blmovem":
        return lmovem_form(argv, reply)
    if name in ("blpop", "brpop") and key is not None:
        return [b"LPOP" if name == "blpop" else b"RPOP", key]
    if name in ("bzpopmin", "bzpopmax") and key is not None:
        return [b"ZPOPMIN" if name == "bzpopmin" else b"ZPOPMAX", key]
    if name == "blmove":
        return [b"LMOVE", *argv[1:5]]
    if name == "brpoplpush":
        return [b"RPOPLPUSH", *argv[1:3]]
    if name in ("blmpop", "bzmpop"):
        # BLMPOP timeout numkeys key... -> LMPOP numkeys key...
        return [b"LMPOP" if name == "blmpop" else b"ZMPOP", *argv[2:]]
    if name == "xreadgroup":
        out: list[bytes] = [argv[0]]
        i = 1
        while i < len(argv):
            if argv[i].upper() == b"BLOCK" and i + 1 < len(argv):
                i += 2
                continue
            out.append(argv[i])
            i += 1
        return out
    return argv


# -- consumer groups ---------------------------------------------------------------------------
#
# XREADGROUP, XCLAIM and XAUTOCLAIM depend on the clock (delivery times, min-idle-time) and
# would not replay to the same pending entries: as Redis, each entry they touched is logged as
# the state it is left in, ``XCLAIM key group owner 0 id TIME ms RETRYCOUNT n FORCE JUSTID
# LASTID last-id``, an entry they dropped from the PEL as XACK, and a group whose position moved
# as ``XGROUP SETID key group last-id ENTRIESREAD n``.

_XCLAIM_OPTIONS = frozenset({b"IDLE", b"TIME", b"RETRYCOUNT", b"FORCE", b"JUSTID", b"LASTID"})


def _entry_id(entry: Any) -> bytes | None:
    if isinstance(entry, bytes):
        return entry
    if isinstance(entry, list | tuple) and entry and isinstance(entry[0], bytes):
        return bytes(entry[0])
    return None


def _pel_state(key: bytes, group_name: bytes, stream: Any, ids: list[bytes]) -> list[list[bytes]]:
    from resplite.store.stream_ids import format_id, parse_id

    group = stream.groups.get(group_name) if stream is not None else None
    if group is None:
        return []
    last = format_id(group.last_id)
    out: list[list[bytes]] = []
    for raw in ids:
        sid = parse_id(raw)
        if sid is None:
            continue
        entry = group.pel.get(sid)
        if entry is None:
            out.append([b"XACK", key, group_name, raw])
        elif entry.consumer is not None:
            out.append([b"XCLAIM", key, group_name, entry.consumer.name, b"0", raw,
                        b"TIME", _ms(entry.delivery_time), b"RETRYCOUNT",
                        _ms(entry.delivery_count), b"FORCE", b"JUSTID", b"LASTID", last])
    return out


def _setid(key: bytes, group_name: bytes, stream: Any) -> list[list[bytes]]:
    from resplite.store.stream_ids import format_id

    group = stream.groups.get(group_name) if stream is not None else None
    if group is None:
        return []
    return [[b"XGROUP", b"SETID", key, group_name, format_id(group.last_id), b"ENTRIESREAD",
             _ms(group.entries_read)]]


def _touched_now(stream: Any, group_name: bytes, consumer_name: bytes) -> list[bytes]:
    """The ids of the pending entries XREADGROUP just delivered: the read set the consumer's
    seen time to its ``now`` and gave each entry it delivered that delivery time, so they
    are the PEL's entries delivered at or after it (an entry delivered earlier in the same
    millisecond is logged again, which changes nothing)."""
    from resplite.store.stream_ids import format_id

    group = stream.groups.get(group_name) if stream is not None else None
    if group is None:
        return []
    consumer = group.consumers.get(consumer_name)
    if consumer is None:
        return []
    mask = (1 << 128) - 1
    return [format_id(key & mask)
            for key in group.by_time().irange(minimum=consumer.seen_time << 128)]


def group_forms(name: str, argv: list[bytes], reply: Any, data: Any) -> list[list[bytes]] | None:
    """What XREADGROUP / XCLAIM / XAUTOCLAIM are logged as (None for other commands)."""
    if name == "xclaim":
        key, group, consumer = argv[1], argv[2], argv[3]
        ids = []
        for arg in argv[5:]:
            if arg.upper() in _XCLAIM_OPTIONS:
                break
            ids.append(arg)
        create = [b"XGROUP", b"CREATECONSUMER", key, group, consumer]
        return [create, *_pel_state(key, group, data.get(key), ids)]
    if name == "xautoclaim":
        key, group, consumer = argv[1], argv[2], argv[3]
        ids = []
        if isinstance(reply, list) and len(reply) >= 2:
            ids = [i for i in map(_entry_id, reply[1] or []) if i is not None]
            if len(reply) >= 3:
                ids += [i for i in reply[2] or [] if isinstance(i, bytes)]
        create = [b"XGROUP", b"CREATECONSUMER", key, group, consumer]
        return [create, *_pel_state(key, group, data.get(key), ids)]
    if name == "xreadgroup":
        upper = [a.upper() for a in argv]
        g = upper.index(b"GROUP")
        group, consumer = argv[g + 1], argv[g + 2]
        s = len(argv) - 1 - upper[::-1].index(b"STREAMS")
        rest = argv[s + 1:]
        keys = rest[:len(rest) // 2]
        out: list[list[bytes]] = []
        for key in keys:
            stream = data.get(key)
            out.append([b"XGROUP", b"CREATECONSUMER", key, group, consumer])
            out += _pel_state(key, group, stream, _touched_now(stream, group, consumer))
            out += _setid(key, group, stream)
        return out
    return None
