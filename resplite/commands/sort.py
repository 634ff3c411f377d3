"""SORT and SORT_RO: the elements of a set, list or sorted set, sorted, sliced and projected.

Theory of operation, in Redis's order (its ``sort.c``):

1. Options are parsed first, so a syntax error wins over WRONGTYPE: ASC / DESC, ALPHA,
   LIMIT offset count, BY pattern, GET pattern (any number), STORE destination (SORT only).
   A BY pattern without ``*`` means "don't sort" (``nosort`` is the usual spelling). The
   keys BY and GET patterns build are named by no key spec, so the ACL cannot check them:
   a user that may not read every key (``~*``, ``%R~*`` or ``allkeys`` in a selector that
   allows the line) is refused a BY pattern with ``*`` and any GET (even ``#``), each
   with its own error, where the option is met.
2. The key must be a set, list or sorted set (a missing key sorts as an empty list). A set
   that would not be sorted is sorted ALPHA anyway when the result is STOREd, so the stored
   list does not depend on the set's internal order.
3. Elements come in the value's own order (:func:`elements`). With "don't sort", a list or
   sorted set keeps that order (reversed by DESC); a set keeps its iteration order.
4. Otherwise each element gets a sort key: itself, or the value :func:`lookup_by_pattern`
   finds for it (a string key, or a hash field with ``->``). Numeric keys are read by
   ``fast_float_strtod`` (Redis 8; Redis 7's ``strtod`` as ``redis-compat-version`` 7.x)
   (anything else fails the whole command with "One or more scores can't be
   converted into double"; a missing value counts as 0) and ties are broken by comparing
   the elements; ALPHA compares the bytes (as ``strcoll`` in the C locale: up to the first
   NUL byte, except under STORE, which compares whole strings), a missing BY value sorting
   first, ties keeping their order. The sort is stable, as the C library's is.
5. LIMIT clips to the elements there are; GET patterns replace each element by what they
   find (``#`` is the element itself; nothing found is a null, or an empty string in a
   STOREd list). STORE writes a list (or deletes the destination when there is nothing)
   and answers its length.

Sorted sets and lists plug in through :func:`sequence_elements` (and a list result through
:func:`store_list`), in one section at the end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.algorithms.numbers import parse_fast_float, parse_int, parse_strtod
from resplite.commands.args import c_option
from resplite.commands.generic import lookup_read, note_overwrite, type_before, type_name
from resplite.commands.hashes import live_hash
from resplite.engine import acl, compat, errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC, LIST
from resplite.engine.registry import command
from resplite.store.hash import Hash
from resplite.store.list import List
from resplite.store.set import Set
from resplite.store.zset import ZSet

if TYPE_CHECKING:
    from resplite.engine.client import Client

_SORTABLE = frozenset({"set", "list", "zset"})


def _c_string(arg: bytes) -> bytes:
    return arg.split(b"\0", 1)[0]


def lookup_by_pattern(client: Client, pattern: bytes, element: bytes) -> bytes | None:
    """What a BY or GET pattern names for ``element``, or None.

    ``#`` is the element itself. Otherwise the first ``*`` is replaced by the element to
    form a key; ``key->field`` (a non-empty field after the ``*``) reads that field of a
    hash, anything else reads a string. Another type, a missing key or field, or a
    pattern without ``*`` find nothing. Patterns are C strings where Redis reads them as
    such (``*`` and ``->`` are looked for before the first NUL byte).
    """
    if _c_string(pattern) == b"#":
        return element
    head = _c_string(pattern)
    star = head.find(b"*")
    if star < 0:
        return None
    arrow = head.find(b"->", star + 1)
    field: bytes | None = None
    if arrow >= 0 and arrow + 2 < len(head):
        field = pattern[arrow + 2:]
        key = pattern[:star] + element + pattern[star + 1:arrow]
    else:
        key = pattern[:star] + element + pattern[star + 1:]
    value = lookup_read(client, key)
    if value is None:
        return None
    if field is not None:
        if value.__class__ is not Hash:
            return None
        h = live_hash(client, key, value)
        return None if h is None else h.get(field)
    return value if isinstance(value, bytes) else None


def _reads_everything(client: Client, argv: list[bytes], readonly: bool) -> bool:
    """Whether the client's user may read any key with this very line: the keys a BY or
    GET pattern builds are named by no key spec, so Redis lets only such a user use them
    (a script runs as its caller's user)."""
    user = client.acl
    if user is None:
        return True
    # By its own name: rename-command may have moved it in the table.
    spec = client.server.acl.index.by_name["sort_ro" if readonly else "sort"]
    return acl.unrestricted_key_access(user, spec, argv, acl.READ)


def elements(value: Any, dontsort: bool, desc: bool) -> list[bytes]:
    """The elements to sort, in the order SORT starts from."""
    if value.__class__ is Set:
        return value.members()  # type: ignore[no-any-return]
    return sequence_elements(value, dontsort, desc)


def _sort(client: Client, argv: list[bytes], readonly: bool) -> Any:
    desc = alpha = dontsort = False
    limit_start, limit_count = 0, -1
    sortby: bytes | None = None
    store: bytes | None = None
    gets: list[bytes] = []
    j, argc = 2, len(argv)
    while j < argc:
        left = argc - j - 1
        option = c_option(argv[j])
        if option == b"asc":
            desc = False
        elif option == b"desc":
            desc = True
        elif option == b"alpha":
            alpha = True
        elif option == b"limit" and left >= 2:
            start_arg, count_arg = parse_int(argv[j + 1]), parse_int(argv[j + 2])
            if start_arg is None or count_arg is None:
                raise CommandError(errors.NOT_INTEGER)
            limit_start, limit_count = start_arg, count_arg
            j += 2
        elif option == b"store" and not readonly and left >= 1:
            store = argv[j + 1]
            j += 1
        elif option == b"by" and left >= 1:
            sortby = argv[j + 1]
            dontsort = b"*" not in _c_string(sortby)
            if not dontsort and not _reads_everything(client, argv, readonly):
                raise CommandError(errors.SORT_BY_DENIED)
            j += 1
        elif option == b"get" and left >= 1:
            if not _reads_everything(client, argv, readonly):
                raise CommandError(errors.SORT_GET_DENIED)
            gets.append(argv[j + 1])
            j += 1
        else:
            raise CommandError(errors.SYNTAX)
        j += 1

    value = lookup_read(client, argv[1])
    if value is not None and type_name(value) not in _SORTABLE:
        raise CommandError(errors.WRONGTYPE)
    if dontsort and value is not None and value.__class__ is Set and (
            store is not None or client.is_script):
        # A stored result, or a script's, must not depend on the set's internal order.
        dontsort, alpha, sortby = False, True, None

    items = [] if value is None else elements(value, dontsort, desc)
    if value.__class__ is ZSet:
        # Reading converted a listpack sorted set (unsignalled, as in Redis): re-measure it.
        client.db.recharge(argv[1])
    n = len(items)
    start = min(max(limit_start, 0), n)
    count = min(max(limit_count, -1), n)
    end = n - 1 if count < 0 else start + count - 1
    if start >= n:
        start, end = n - 1, n - 2
    end = min(end, n - 1)

    if not dontsort:
        items = _sorted(client, items, sortby, alpha, desc, store is not None)

    chosen = items[start:end + 1] if end >= start else []
    if store is None:
        if not gets:
            return chosen
        return [lookup_by_pattern(client, pattern, e) for e in chosen for pattern in gets]
    if gets:
        chosen = [lookup_by_pattern(client, pattern, e) or b"" for e in chosen
                  for pattern in gets]
    return store_list(client, store, chosen)


def _sorted(client: Client, items: list[bytes], sortby: bytes | None, alpha: bool,
            desc: bool, storing: bool) -> list[bytes]:
    """``items`` in SORT's order (see the module docstring, step 4)."""
    if alpha:
        if sortby is None:
            key = (lambda e: e) if storing else _c_string
            return sorted(items, key=key, reverse=desc)
        keyed = []
        for e in items:
            by = lookup_by_pattern(client, sortby, e)
            if by is None:
                keyed.append(((0, b""), e))
            else:
                keyed.append(((1, by if storing else _c_string(by)), e))
        keyed.sort(key=lambda pair: pair[0], reverse=desc)
        return [e for _, e in keyed]
    scored = []
    parse = (parse_fast_float if compat.follows(
        client.server.config["redis-compat-version"], "fast-float-strtod") else parse_strtod)
    for e in items:
        by = e if sortby is None else lookup_by_pattern(client, sortby, e)
        score = 0.0 if by is None else parse(by)
        if score is None:
            raise CommandError(errors.SORT_NOT_DOUBLE)
        scored.append((score, e))
    scored.sort(reverse=desc)
    return [e for _, e in scored]


# -- sorted sets and lists ----------------------------------------------------------------------
#
# The functions below are the whole of SORT's dependence on the sorted-set and list types.
# A sorted set is read through its store class (:class:`~resplite.store.zset.ZSet`); a list
# iterates its elements from head to tail, and a stored result is built by
# :meth:`~resplite.store.list.List.built` as Redis builds it.


def sequence_elements(value: Any, dontsort: bool, desc: bool) -> list[bytes]:
    """A sorted set's or a list's elements in native order (ascending score; head to tail),
    reversed by DESC when nothing is sorted (then the order is the answer), as Redis reads
    them for SORT.

    SORT turns a listpack sorted set into a skiplist for good before reading it, even
    SORT_RO, as Redis does (OBJECT ENCODING shows it).
    """
    if value.__class__ is ZSet:
        zset: ZSet = value
        zset.convert()
        items = [member for _, member in zset.entries(0, len(zset))]
    else:
        items = [bytes(e) for e in value]
    if dontsort and desc:
        items.reverse()
    return items


def store_list(client: Client, key: bytes, items: list[bytes]) -> int:
    """SORT ... STORE: the result as a list at ``key`` (replacing it, TTL dropped), or the
    key deleted when the result is empty; answers the length."""
    db = client.db
    if items:
        fill = client.server.config["list-max-listpack-size"]
        before = type_before(client, key)
        value = List.built(items, fill)
        db.set(key, value)
        db.signal_modified(key)
        server = client.server
        if server.notify_flags:
            note_overwrite(client, key, before, value)
            server.notify(LIST, b"sortstore", key, db.index)
        return len(items)
    if db.delete(key):
        db.signal_modified(key)
        client.server.notify(GENERIC, b"del", key, db.index)
    return 0


@command("sort")
def sort(client: Client, argv: list[bytes]) -> Any:
    return _sort(client, argv, readonly=False)


@command("sort_ro")
def sort_ro(client: Client, argv: list[bytes]) -> Any:
    return _sort(client, argv, readonly=True)
