"""Key-spec interpreter: which arguments of a command line are keys, found as Redis finds them.

A key spec has two halves. ``begin_search`` says where the keys start: at a fixed ``index``,
or just after a ``keyword`` searched for from ``startfrom`` (forwards when positive, backwards
from the end when negative). ``find_keys`` says how far they go: a ``range`` (``lastkey``
relative to the first key, or counted from the end of the line when negative, where a
``limit`` of N keeps 1/N of the remaining arguments, as XREAD's ``STREAMS k1 k2 id1 id2``
needs), or a ``keynum`` (the number of keys read from an argument, as in ``LMPOP 2 k1 k2``).

The interpreter mirrors Redis's ``getKeysUsingKeySpecs``: a spec that does not fit the line
(first or last key out of bounds, a bad key count, an ``INCOMPLETE`` spec) makes the whole
result invalid, and specs flagged ``NOT_KEY`` are skipped unless asked for. Where Redis would
fall back to a command's own key callback because the specs fail, SORT, SORT_RO and
MIGRATE have theirs here (the keys after MIGRATE's KEYS are what its INCOMPLETE spec cannot
find); for every other command resplite implements the line then has no keys (which is
what their callbacks answer for such lines); a command whose key flags vary with its
arguments (``VARIABLE_FLAGS``: SET with or without GET or a comparison, DELEX with or
without a condition, BITFIELD with only GETs or with a SET / INCRBY) has a small rule here.
COMMAND GETKEYS, GETKEYSANDFLAGS, the ACL check and anything else that needs a command's
keys (cluster routing, WATCH-like bookkeeping) read them through :func:`command_keys`: a key
these rules miss is a key no ACL guards.

Positions are indexes into ``argv`` with ``argv[0]`` the command name, as in Redis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from resplite.algorithms.numbers import parse_int

if TYPE_CHECKING:
    from resplite.engine.table import CommandSpec, KeySpec


class KeyRef:
    """One key found in a command line: its position in ``argv`` and its spec's flags (a
    value: equal when both are)."""

    __slots__ = ("flags", "pos")

    def __init__(self, pos: int, flags: tuple[str, ...]) -> None:
        self.pos = pos
        self.flags = flags

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyRef) and self.pos == other.pos and self.flags == other.flags

    def __hash__(self) -> int:
        return hash((self.pos, self.flags))

    def __repr__(self) -> str:
        return f"KeyRef({self.pos}, {self.flags!r})"


def _begin(spec: KeySpec, argv: Sequence[bytes]) -> int | None:
    """Index of the first key, 0 when a keyword is absent, None for an unusable spec."""
    search = spec.begin_search
    kind = search["type"]
    if kind == "index":
        return int(search["spec"]["index"])
    if kind != "keyword":
        return None
    argc = len(argv)
    keyword = search["spec"]["keyword"].encode().lower()
    startfrom = int(search["spec"]["startfrom"])
    # Forwards from startfrom to the last argument, or backwards from argc+startfrom down to
    # (but not including) argument 1: the same walk as Redis, bounds included.
    if startfrom > 0:
        start, end = startfrom, argc - 1
    else:
        start, end = argc + startfrom, 1
    step = 1 if start <= end else -1
    i = start
    while i != end:
        if i >= argc or i < 1:
            break
        if argv[i].lower() == keyword:
            return i + 1
        i += step
    return 0


def _extent(
    spec: KeySpec, argv: Sequence[bytes], first: int
) -> tuple[int, int, int] | None:
    """(first, last, step) of the keys, or None when the spec cannot be applied."""
    argc = len(argv)
    find = spec.find_keys
    params = find["spec"]
    if find["type"] == "range":
        step = int(params["keystep"])
        lastkey = int(params["lastkey"])
        limit = int(params["limit"])
        if lastkey >= 0:
            last = first + lastkey
        elif not limit:
            last = argc + lastkey
        else:
            last = first + ((argc - first) // limit + lastkey)
        return first, last, step
    if find["type"] == "keynum":
        step = int(params["keystep"])
        at = first + int(params["keynumidx"])
        if at >= argc:
            return None
        numkeys = parse_int(argv[at])
        if numkeys is None or numkeys < 0:
            return None
        first += int(params["firstkey"])
        # numkeys counts keys, not arguments: with a step (MSETEX's key value pairs) the last
        # key is (numkeys - 1) steps on, as Redis computes it since 8.4's MSETEX fix.
        return first, first + (numkeys - 1) * step, step
    return None


def keys_from_specs(
    command: CommandSpec,
    argv: Sequence[bytes],
    *,
    include_not_keys: bool = False,
    partial: bool = False,
) -> list[KeyRef] | None:
    """The keys ``argv`` names according to ``command``'s key specs.

    Returns None when a spec does not fit the line (Redis's ``-1``), unless ``partial`` asks
    to skip such specs and keep what the others found.
    """
    argc = len(argv)
    found: list[KeyRef] = []
    for spec in command.key_specs:
        if "NOT_KEY" in spec.flags and not include_not_keys:
            continue
        first = _begin(spec, argv)
        if first == 0:
            continue  # keyword absent: this spec names no keys here
        extent = None if first is None else _extent(spec, argv, first)
        if extent is not None:
            start, last, step = extent
            if last >= argc or last < start or start >= argc:
                extent = None
        if extent is None:
            if partial:
                continue
            return None
        found.extend(KeyRef(pos, spec.flags) for pos in range(start, last + 1, step))
        if "INCOMPLETE" in spec.flags:
            if partial:
                continue
            return None
    return found


def has_keys(command: CommandSpec) -> bool:
    """Whether the command names keys at all (some key spec is not ``NOT_KEY``)."""
    return any("NOT_KEY" not in spec.flags for spec in command.key_specs)


_COMPARISONS = frozenset({b"ifeq", b"ifne", b"ifdeq", b"ifdne"})


def _c_word(arg: bytes) -> bytes:
    """An option word as C's strcasecmp sees it: up to the first NUL, any case."""
    return arg.split(b"\0", 1)[0].lower()


def _set_keys(command: CommandSpec, argv: Sequence[bytes]) -> list[KeyRef]:
    # SET returns the old value with GET (from the fourth argument on, any case) and needs it
    # to compare with IFEQ / IFNE / IFDEQ / IFDNE (Redis 8.4); otherwise it overwrites blindly.
    words = [_c_word(arg) for arg in argv[3:]]
    if b"get" in words:
        return [KeyRef(1, ("RW", "ACCESS", "UPDATE"))]
    if _COMPARISONS.intersection(words):
        return [KeyRef(1, ("RW", "UPDATE"))]
    return [KeyRef(1, ("OW", "UPDATE"))]


def _bitfield_keys(command: CommandSpec, argv: Sequence[bytes]) -> list[KeyRef]:
    # Redis's bitfieldGetKeys: read-only while every operation is a complete GET (OVERFLOW
    # with its argument may sit between them); a SET, an INCRBY or anything it cannot read
    # makes the key written.
    i, argc = 2, len(argv)
    while i < argc:
        option = _c_word(argv[i])
        left = argc - i - 1
        if option == b"get" and left >= 2:
            i += 3
        elif option == b"overflow" and left >= 1:
            i += 2
        else:
            return [KeyRef(1, ("RW", "ACCESS", "UPDATE"))]
    return [KeyRef(1, ("RO", "ACCESS"))]


def _delex_keys(command: CommandSpec, argv: Sequence[bytes]) -> list[KeyRef]:
    # DELEX with a condition reads the value before it removes the key; without one it is
    # DEL of one key. As Redis's delexGetKeys, a condition word anywhere after the key
    # counts (other words leave it a plain removal; the command refuses them).
    if _COMPARISONS.intersection(_c_word(arg) for arg in argv[2:]):
        return [KeyRef(1, ("RW", "DELETE"))]
    return [KeyRef(1, ("RM", "DELETE"))]


# Commands whose key specs carry VARIABLE_FLAGS: Redis asks the command itself for the flags
# of this very line, and so do we.
_VARIABLE_FLAG_KEYS: dict[str, Callable[[CommandSpec, Sequence[bytes]], list[KeyRef]]] = {
    "set": _set_keys,
    "delex": _delex_keys,
    "bitfield": _bitfield_keys,
}


def _sort_keys(command: CommandSpec, argv: Sequence[bytes]) -> list[KeyRef]:
    # Redis's sortGetKeys: the sorted key, then the last STORE's key. Options are skipped
    # with their arguments (LIMIT 2, GET and BY 1); a STORE key is looked at as an option
    # in turn, as Redis's walk does.
    keys = [KeyRef(1, ("RO", "ACCESS"))]
    store = 0
    i, argc = 2, len(argv)
    while i < argc:
        option = _c_word(argv[i])
        if option == b"limit":
            i += 2
        elif option == b"store" and i + 1 < argc:
            store = i + 1
        elif option in (b"get", b"by"):
            i += 1
        i += 1
    if store:
        keys.append(KeyRef(store, ("OW", "UPDATE")))
    return keys


def _sort_ro_keys(command: CommandSpec, argv: Sequence[bytes]) -> list[KeyRef]:
    return [KeyRef(1, ("RO", "ACCESS"))]


_MIGRATE_SKIPS = {b"copy": 0, b"replace": 0, b"auth": 1, b"auth2": 2}
_MIGRATE_FLAGS = ("RW", "ACCESS", "DELETE")


def _migrate_keys(command: CommandSpec, argv: Sequence[bytes]) -> list[KeyRef]:
    # Redis's migrateGetKeys: the key argument, or every argument after KEYS (options from
    # the seventh argument on are skipped with their own arguments, as MIGRATE parses them).
    # KEYS with a non-empty key argument is refused by the command: no keys then.
    argc = len(argv)
    i = 6
    while i < argc:
        option = _c_word(argv[i])
        if option == b"keys":
            if argv[3]:
                return []
            return [KeyRef(pos, _MIGRATE_FLAGS) for pos in range(i + 1, argc)]
        i += _MIGRATE_SKIPS.get(option, 0) + 1
    return [KeyRef(3, _MIGRATE_FLAGS)]


# Commands with a key callback that Redis falls back to when their specs do not fit a line
# (SORT's BY / GET / STORE keys are "unknown" to its specs; MIGRATE's KEYS spec is
# INCOMPLETE: a key may itself be spelled "keys").
_KEY_CALLBACKS: dict[str, Callable[[CommandSpec, Sequence[bytes]], list[KeyRef]]] = {
    "sort": _sort_keys,
    "sort_ro": _sort_ro_keys,
    "migrate": _migrate_keys,
}


def command_keys(command: CommandSpec, argv: Sequence[bytes]) -> list[KeyRef]:
    """The keys of a command line whose arity has been checked, as COMMAND GETKEYS finds them.

    Key specs are trusted unless one of them says its flags vary with the arguments, in which
    case the command's own rule decides; when the specs do not fit the line, the line names
    no keys.
    """
    if not has_keys(command):
        return []
    if any("VARIABLE_FLAGS" in s.flags for s in command.key_specs):
        rule = _VARIABLE_FLAG_KEYS.get(command.fullname)
        if rule is not None:
            return rule(command, argv)
    found = keys_from_specs(command, argv)
    if found is None:
        callback = _KEY_CALLBACKS.get(command.fullname)
        return [] if callback is None else callback(command, argv)
    return found
