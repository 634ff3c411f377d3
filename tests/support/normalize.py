"""Normalisers for replies that necessarily differ between two servers.

Client ids, addresses, ages, times and version strings depend on the process, not on the
behaviour under test; these helpers blank exactly those parts (keeping the reply's framing,
so the lengths of bulk strings are recomputed) or parse the line formats of CLIENT LIST and
INFO so that tests can compare field names, order and value shapes.

:func:`doubles` rewrites printed doubles to one form: the reference Redis 7.0 prints them
with 17 significant digits (``0.10000000000000001``), Redis 7.2+ (and resplite) with the
shortest digits that read back (``0.1``); both read back as the same double.
:func:`acl_texts_as_redis8` rewrites Redis 7.0's ACL refusal texts into Redis 8's words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from resplite.engine import compat
from resplite.version import REDIS_VERSION
from support.resptree import Node, dump, parse

# The references' versions and those resplite reports (its newest, or a line's ".0" release
# under redis-compat-version).
VERSIONS = (b"7.0.15", b"8.6.3", REDIS_VERSION.encode(),
            *(f"{line}.0".encode() for line in compat.VERSIONS))

# An extended XPENDING entry: id, consumer, then the idle time this blanks.
_PENDING_IDLE = re.compile(rb"(\*4\r\n\$\d+\r\n\d+-\d+\r\n\$\d+\r\n[^\r]*\r\n):\d+\r\n")

# Shapes of INFO values, from most to least specific.
_SHAPES = (
    ("int", re.compile(r"-?\d+")),
    ("float", re.compile(r"-?\d+\.\d+")),
    ("percent", re.compile(r"-?\d+\.\d+%")),
    ("human", re.compile(r"\d+(\.\d+)?[BKMGTP]")),
    ("hex40", re.compile(r"[0-9a-f]{40}")),
    ("pairs", re.compile(r"([a-z0-9_.\-]+=[^,]*,)*[a-z0-9_.\-]+=[^,]*")),
)


def hello(data: bytes) -> bytes:
    """Blank the server version and client id of every HELLO map inside a reply, and drop
    Redis 8's built-in modules from its ``modules`` (:func:`without_builtin_modules`)."""
    return dump(_blank_hello(parse(data)))


#: The modules Redis 8 builds in and lists in HELLO and MODULE LIST: vector sets, which
#: resplite does not implement (so it lists no module).
BUILTIN_MODULES = frozenset({b"vectorset"})


def _module_name(entry: Node) -> bytes | None:
    kind, payload = entry
    if not isinstance(payload, list):
        return None
    pairs = payload if kind == b"%" else list(zip(payload[::2], payload[1::2], strict=False))
    for key, value in pairs:
        if key[1] == b"name" and isinstance(value[1], bytes):
            return value[1]
    return None


def _drop_builtin_modules(node: Node) -> Node:
    kind, payload = node
    if not isinstance(payload, list):
        return node
    return (kind, [m for m in payload if _module_name(m) not in BUILTIN_MODULES])


def without_builtin_modules(data: bytes) -> bytes:
    """A MODULE LIST reply without Redis 8's built-in modules (errors pass through)."""
    if data[:1] not in (b"*", b"~"):
        return data
    return dump(_drop_builtin_modules(parse(data)))


def _blank_hello(node: Node) -> Node:
    kind, payload = node
    if payload is None or isinstance(payload, bytes):
        return node
    if kind == b"%":
        pairs = payload
    elif kind == b"*" and len(payload) == 14 and payload[0] == (b"$", b"server"):
        pairs = list(zip(payload[::2], payload[1::2], strict=True))
    else:
        return (kind, [_blank_hello(item) for item in payload])
    out: list[tuple[Node, Node]] = []
    for key, value in pairs:
        if key[1] == b"version":
            value = (b"$", b"<version>")
        elif key[1] == b"id":
            value = (b":", b"0")
        elif key[1] == b"modules":
            value = _drop_builtin_modules(value)
        out.append((key, _blank_hello(value)))
    if kind == b"%":
        return (b"%", out)
    return (b"*", [x for pair in out for x in pair])


def pending_idle(reply: bytes) -> bytes:
    """Blank the idle-time field of XPENDING's extended entries."""
    return _PENDING_IDLE.sub(rb"\1:<idle>\r\n", reply)


def verbatim_text(data: bytes) -> bytes:
    """The text of a bulk (RESP2) or verbatim (RESP3) reply."""
    kind, payload = parse(data)
    assert kind in (b"$", b"="), data[:40]
    return payload[4:] if kind == b"=" else payload


def client_fields(line: bytes) -> list[tuple[str, str]]:
    """``name=value`` fields of one CLIENT LIST line, in order."""
    fields = []
    for word in line.decode("utf-8", "replace").split(" "):
        name, _, value = word.partition("=")
        fields.append((name, value))
    return fields


def info_sections(text: bytes) -> dict[str, list[tuple[str, str]]]:
    """INFO text as ``section title -> [(field, value), ...]`` in order."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for line in text.decode("utf-8", "replace").split("\r\n"):
        if line.startswith("# "):
            current = sections.setdefault(line[2:], [])
        elif line and current is not None:
            field, _, value = line.partition(":")
            current.append((field, value))
    return sections


def shape(value: str) -> str:
    """The kind of an INFO value: int, float, percent, human size, 40-hex id, pairs, text."""
    for name, pattern in _SHAPES:
        if pattern.fullmatch(value):
            return name
    return "text"


def version(data: bytes) -> bytes:
    """Blank the server version inside a reply, fixing up bulk lengths."""
    node = parse(data)
    return dump(_replace_version(node))


def _replace_version(node: Node) -> Node:
    kind, payload = node
    if payload is None:
        return node
    if isinstance(payload, bytes):
        for v in VERSIONS:
            payload = payload.replace(v, b"<version>")
        return (kind, payload)
    if kind in (b"%", b"|"):
        return (kind, [(_replace_version(k), _replace_version(v)) for k, v in payload])
    return (kind, [_replace_version(item) for item in payload])


# A double as Redis 7.0 (%.17g, or %.17Lf with trailing zeros cut for GEOPOS) or 7.2+
# (integers, fpconv) prints one.
_DOUBLE = re.compile(rb"-?(?:inf|(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)")


def doubles(data: bytes) -> bytes:
    """Rewrite every double-looking string of a reply (RESP3 doubles, bulk strings, status
    lines) as ``%.17g`` of the double it reads as, fixing up bulk lengths.

    Both servers' replies go through it, so it erases only how the digits are printed:
    the value must be the same double. Use it only where fractional doubles appear (a
    numeric member such as ``007`` would become ``7`` on both sides).
    """
    return dump(_canonical_doubles(parse(data)))


def _canonical_doubles(node: Node) -> Node:
    kind, payload = node
    if payload is None:
        return node
    if isinstance(payload, bytes):
        if kind in (b",", b"$", b"+") and _DOUBLE.fullmatch(payload):
            value = float(payload)
            if math.isinf(value):
                return (kind, b"inf" if value > 0 else b"-inf")
            return (kind, b"%.17g" % value)
        return node
    if kind in (b"%", b"|"):
        return (kind, [(_canonical_doubles(k), _canonical_doubles(v)) for k, v in payload])
    return (kind, [_canonical_doubles(item) for item in payload])


def coordinates(data: bytes) -> bytes:
    """As :func:`doubles`, but only for pairs of doubles (GEOPOS's and WITHCOORD's
    ``[longitude, latitude]``), and to the precision Redis 7.0 prints them with: 17 digits
    after the point (``%.17Lf``, trailing zeros cut), where Redis 8.0+ prints the exact
    double (a coordinate of a few millionths loses digits in 7.0). Everything else
    (distances above all) stays as sent."""
    return dump(_canonical_pairs(parse(data)))


def _canonical_pairs(node: Node) -> Node:
    kind, payload = node
    if payload is None or isinstance(payload, bytes):
        return node
    if kind in (b"%", b"|"):
        return (kind, [(_canonical_pairs(k), _canonical_pairs(v)) for k, v in payload])
    if (kind == b"*" and len(payload) == 2
            and all(isinstance(p, bytes) and k in (b"$", b",") and _DOUBLE.fullmatch(p)
                    for k, p in payload)):
        return (kind, [(k, b"%.17g" % float(b"%.17f" % float(p))) for k, p in payload])
    return (kind, [_canonical_pairs(item) for item in payload])


# Redis 7.2 reworded the ACL refusals (getAclErrorMessage); resplite answers as Redis 8 does.
# The 7.0 reference's texts are rewritten into those words, so a comparison still checks that
# the same lines are refused for the same reason (and, for ACL DRYRUN, the same key or
# channel named), and resplite's replies must carry Redis 8's bytes to match.
_ACL_70_TO_8 = (
    (re.compile(rb"^NOPERM this user has no permissions to access one of the keys used as "
                rb"arguments$"), b"NOPERM No permissions to access a key"),
    (re.compile(rb"^NOPERM this user has no permissions to access one of the channels used as "
                rb"arguments$"), b"NOPERM No permissions to access a channel"),
    (re.compile(rb"^NOPERM this user has no permissions to run the ('[^']*') command$"),
     b"NOPERM User %(user)s has no permissions to run the \\1 command"),
    (re.compile(rb"^ERR The user executing the script can't access at least one of the keys "
                rb"mentioned in the command arguments"),
     b"ERR ACL failure in script: No permissions to access a key"),
    (re.compile(rb"^ERR The user executing the script can't publish to the channel mentioned "
                rb"in the command"), b"ERR ACL failure in script: No permissions to access a "
                                     b"channel"),
    (re.compile(rb"^This user has no permissions to (run|access) the ('.*') "
                rb"(command|key|channel)$", re.S),
     b"User %(user)s has no permissions to \\1 the \\2 \\3"),
)


def acl_texts_as_redis8(user: str) -> Callable[[bytes], bytes]:
    """A normaliser rewriting Redis 7.0's ACL refusal texts, for the user ``user``, into
    Redis 8's (error replies and ACL DRYRUN's bulk strings, anywhere in a reply; bulk
    lengths fixed up). The 7.0 text of a script's refused command does not name the
    command, so it cannot be rewritten: tests assert that one on resplite alone."""
    name = user.encode()

    def rewrite(text: bytes) -> bytes:
        for pattern, replacement in _ACL_70_TO_8:
            text = pattern.sub(replacement.replace(b"%(user)s", name), text)
        return text

    def walk(node: Node) -> Node:
        kind, payload = node
        if payload is None:
            return node
        if isinstance(payload, bytes):
            return (kind, rewrite(payload)) if kind in (b"-", b"$", b"!") else node
        if kind in (b"%", b"|"):
            return (kind, [(walk(k), walk(v)) for k, v in payload])
        return (kind, [walk(item) for item in payload])

    return lambda data: dump(walk(parse(data)))
