"""What a write is logged as in the append-only file: the command as Redis propagates it.

The general rule (:func:`logged_form`): a write command that changed something (the server's
``dirty`` counter moved while it ran) is logged as it was sent. A few are logged in another
form, so that replaying the log later gives the same data set whatever the clock says then:

* relative expiry becomes absolute: EXPIRE / PEXPIRE / EXPIREAT become ``PEXPIREAT key ms``
  (``DEL key`` when the expiry removed the key), SETEX / PSETEX and SET with EX / PX / EXAT
  become ``SET key value PXAT ms``, GETEX with an expiry ``PEXPIREAT`` and with PERSIST
  ``PERSIST``;
* XADD carries the id it resolved (``*`` or ``<ms>-*`` becomes the id the entry got);
* a blocking pop served after it waited is logged in its non-blocking form
  (:func:`unblocked_form`): BLPOP/BRPOP as LPOP/RPOP of the key served, BLMOVE as LMOVE,
  BRPOPLPUSH as RPOPLPUSH, BZPOPMIN/MAX as ZPOPMIN/MAX, BLMPOP/BZMPOP as LMPOP/ZMPOP,
  XREADGROUP without its BLOCK option.

Expired keys are logged as ``DEL`` by the server's expiry hook, MULTI/EXEC by the AOF itself
(:meth:`resplite.engine.aof.Aof.feed`). Everything here is a pure function of the command,
its reply and the key's expiry after it ran.
"""

from __future__ import annotations

from typing import Any

_SET_EXPIRY = frozenset({b"EX", b"PX", b"EXAT", b"PXAT"})
_GETEX_EXPIRY = frozenset({b"EX", b"PX", b"EXAT", b"PXAT"})


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
        if len(argv) > 3 and any(a.upper() in _SET_EXPIRY for a in argv[3:]):
            key = argv[1]
            when = expires.get(key)
            if when is not None:
                kept = [a for a in argv[3:] if a.upper() in (b"NX", b"XX", b"GET")]
                return [b"SET", key, argv[2], *kept, b"PXAT", _ms(when)]
        return argv
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
    if name == "xadd" and isinstance(reply, bytes):
        i = xadd_id_index(argv)
        if i < len(argv) and argv[i] != reply:
            out = list(argv)
            out[i] = reply
            return out
        return argv
    return argv


def unblocked_form(name: str, argv: list[bytes], key: bytes | None) -> list[bytes]:
    """The non-blocking command a blocking one served after waiting is logged as.

    ``key`` is the key that served it (None when not known)."""
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
