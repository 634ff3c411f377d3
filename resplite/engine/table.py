"""The command table: spec files joined to handlers, frozen, validated once at start.

Each command and subcommand is declared once, in ``specs/<name>.json`` (subcommands as
``<container>-<sub>.json`` naming their ``container``), with Redis's field names. At start
:func:`build_table` loads every file, joins it to the handler registered under the same full
name, derives what Redis derives rather than declares (the legacy first/last/step key triple
and ``movablekeys``), precomputes the flag booleans the dispatcher reads on every call, and
refuses to build on any inconsistency: a handler without a spec, a spec without a handler,
a subcommand without its container, a key-spec index out of range, a duplicate name.

Dispatch, COMMAND INFO/DOCS/COUNT/LIST and GETKEYS all read these same objects.

A server does not read the 395 spec files at start: :func:`table_from_catalog` builds the
same table from one generated file holding what dispatch and COMMAND INFO need (see
:mod:`resplite.commands.catalog`, which :func:`build_table` validates when it is written).
There each handler is a :class:`Deferred` until its module is first needed, and a spec's
``doc`` is read from its spec file on first use (COMMAND DOCS).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Set
from pathlib import Path
from types import MappingProxyType
from typing import Any

from resplite.engine import compat
from resplite.engine.registry import Handler

# Placeholder that tools/gen_specs.py leaves where prose must still be written: refused.
OWN_WORDS = "TODO(own words)"


class SpecError(Exception):
    """The spec data is inconsistent; the server must not start."""


class KeySpec:
    """One key spec of a command, as its spec file gives it."""

    __slots__ = ("begin_search", "find_keys", "flags", "notes")

    def __init__(self, flags: tuple[str, ...], begin_search: Mapping[str, Any],
                 find_keys: Mapping[str, Any], notes: str | None = None) -> None:
        self.flags = flags
        self.begin_search = begin_search
        self.find_keys = find_keys
        self.notes = notes

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, KeySpec) and self.flags == other.flags
                and self.begin_search == other.begin_search
                and self.find_keys == other.find_keys and self.notes == other.notes)

    __hash__ = None  # type: ignore[assignment]  # its mappings are not hashable

    def __repr__(self) -> str:
        return (f"KeySpec({self.flags!r}, {dict(self.begin_search)!r}, "
                f"{dict(self.find_keys)!r}, {self.notes!r})")

    @property
    def is_plain_range(self) -> bool:
        return self.begin_search["type"] == "index" and self.find_keys["type"] == "range"


class CommandSpec:
    """One command (or subcommand) as the table knows it: the spec data and its handler.

    Built once when the table is made and never changed after (a plain class, not a
    dataclass: the table holds hundreds and the server builds them at every start).
    """

    __slots__ = (
        "acl_categories",
        "arity",
        "container",
        "dirties",
        "doc",
        "first_key",
        "flag_list",
        "flags",
        "fullname",
        "handler",
        "hints",
        "is_blocking",
        "is_denyoom",
        "is_no_multi",
        "is_noauth",
        "is_transaction_control",
        "is_write",
        "key_specs",
        "key_step",
        "last_key",
        "movablekeys",
        "name", "since",
        "subcommands",
    )

    def __init__(
        self, *, name: str, fullname: str, container: str | None, arity: int,
        flags: frozenset[str], flag_list: tuple[str, ...], acl_categories: tuple[str, ...],
        hints: tuple[str, ...], key_specs: tuple[KeySpec, ...], first_key: int,
        last_key: int, key_step: int, movablekeys: bool, doc: Mapping[str, Any],
        handler: Handler | None, subcommands: Mapping[bytes, CommandSpec] | None = None,
        is_write: bool = False, dirties: bool = False, is_denyoom: bool = False,
        is_noauth: bool = False, is_no_multi: bool = False, is_blocking: bool = False,
        is_transaction_control: bool = False, since: str = "",
    ) -> None:
        self.name = name
        # The Redis version that added it (its spec's "since"; resplite's own: 0.x).
        self.since = since
        self.fullname = fullname
        self.container = container
        self.arity = arity
        self.flags = flags
        self.flag_list = flag_list
        self.acl_categories = acl_categories
        self.hints = hints
        self.key_specs = key_specs
        self.first_key = first_key
        self.last_key = last_key
        self.key_step = key_step
        self.movablekeys = movablekeys
        self.doc = doc
        self.handler = handler
        self.subcommands: Mapping[bytes, CommandSpec] = (
            {} if subcommands is None else subcommands)
        # Booleans read on every dispatch, computed once.
        self.is_write = is_write
        # A write whose handler does not count its own changes: the dispatcher adds one.
        self.dirties = dirties
        self.is_denyoom = is_denyoom
        self.is_noauth = is_noauth
        self.is_no_multi = is_no_multi
        self.is_blocking = is_blocking
        self.is_transaction_control = is_transaction_control

    def with_subcommands(self, subcommands: Mapping[bytes, CommandSpec]) -> CommandSpec:
        """A copy of this container with other subcommands (its handler, if deferred, is
        bound with the original's)."""
        copy = CommandSpec(
            name=self.name, fullname=self.fullname, container=self.container,
            arity=self.arity, flags=self.flags, flag_list=self.flag_list,
            acl_categories=self.acl_categories, hints=self.hints, key_specs=self.key_specs,
            first_key=self.first_key, last_key=self.last_key, key_step=self.key_step,
            movablekeys=self.movablekeys, doc=self.doc, handler=self.handler,
            subcommands=subcommands, is_write=self.is_write, dirties=self.dirties,
            is_denyoom=self.is_denyoom, is_noauth=self.is_noauth,
            is_no_multi=self.is_no_multi, is_blocking=self.is_blocking,
            is_transaction_control=self.is_transaction_control, since=self.since)
        handler = self.handler
        if isinstance(handler, Deferred):
            handler.also_bind(copy)
        return copy

    def __repr__(self) -> str:
        return f"<CommandSpec {self.fullname} arity={self.arity}>"


# Commands that MULTI runs immediately instead of queueing, as Redis does.
_TRANSACTION_CONTROL = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})

# Commands Redis flags MAY_REPLICATE (its commands/*.json): they are not writes, but can
# change or propagate something, so a WRITE pause holds them and a read-only script may not
# call them. COMMAND hides the flag on purpose, so the catalog (made from COMMAND's replies)
# lacks it: it joins ``flags`` here, never ``flag_list``, which COMMAND prints.
_MAY_REPLICATE = frozenset({"eval", "evalsha", "fcall", "pfcount", "publish", "spublish"})


def _derive_legacy_range(specs: tuple[KeySpec, ...]) -> tuple[int, int, int, bool]:
    """Redis's legacy (first, last, step) triple and whether the keys are movable.

    Mirrors how Redis folds key specs into the triple that COMMAND INFO still reports:
    consecutive plain index/range specs with a step of one merge into one range; anything
    else (keyword searches, keynum, steps, gaps, incomplete specs) makes the keys movable.
    """
    movable = False
    if not specs:
        return 0, 0, 0, False
    if len(specs) == 1 and specs[0].is_plain_range:
        ks = specs[0]
        first = ks.begin_search["spec"]["index"]
        rng = ks.find_keys["spec"]
        last = rng["lastkey"]
        if "INCOMPLETE" in ks.flags:
            movable = True
        return first, (last if last < 0 else first + last), rng["keystep"], movable
    first = 1 << 31
    last = 0
    prev_last = 0
    mask = 0xFFFFFFFF  # Redis compares last keys as unsigned so that -1 wins over any index.
    for ks in specs:
        if not ks.is_plain_range:
            movable = True
            continue
        pos = ks.begin_search["spec"]["index"]
        rng = ks.find_keys["spec"]
        if rng["keystep"] != 1 or (prev_last and prev_last != pos - 1):
            movable = True
            continue
        if "INCOMPLETE" in ks.flags:
            movable = True
        first = min(first, pos)
        abs_last = rng["lastkey"]
        if abs_last >= 0:
            abs_last += pos
        last = last if (last & mask) >= (abs_last & mask) else abs_last
        prev_last = last
    if first == 1 << 31:
        return 0, 0, 0, movable
    return first, last, 1, movable


def _make_spec(
    data: Mapping[str, Any],
    handler: Handler | None,
    subs: Mapping[bytes, CommandSpec],
    counts_changes: bool = False,
    doc: Mapping[str, Any] | None = None,
) -> CommandSpec:
    container = data.get("container")
    name = data["name"].lower()
    fullname = f"{container.lower()}|{name}" if container else name
    key_specs = tuple(
        KeySpec(
            flags=tuple(ks.get("flags", ())),
            begin_search=MappingProxyType(ks["begin_search"]),
            find_keys=MappingProxyType(ks["find_keys"]),
            notes=ks.get("notes"),
        )
        for ks in data.get("key_specs") or ()
    )
    first, last, step, movable = _derive_legacy_range(key_specs)
    flag_list = tuple(data.get("command_flags") or ())
    flags = frozenset(flag_list)
    if fullname in _MAY_REPLICATE:
        flags |= {"may_replicate"}
    return CommandSpec(
        name=name,
        fullname=fullname,
        container=container.lower() if container else None,
        arity=int(data["arity"]),
        flags=flags,
        flag_list=flag_list,
        acl_categories=tuple(data.get("acl_categories") or ()),
        hints=tuple(data.get("hints") or ()),
        key_specs=key_specs,
        first_key=first,
        last_key=last,
        key_step=step,
        movablekeys=movable,
        doc=MappingProxyType(data) if doc is None else doc,
        handler=handler,
        subcommands=MappingProxyType(dict(subs)),
        is_write="write" in flags,
        dirties="write" in flags and not counts_changes,
        is_denyoom="denyoom" in flags,
        is_noauth="no_auth" in flags,
        is_no_multi="no_multi" in flags,
        is_blocking="blocking" in flags,
        is_transaction_control=fullname in _TRANSACTION_CONTROL,
        since=data.get("since", ""),
    )


def _check_key_spec_indexes(data: dict[str, Any], path: Path) -> None:
    n = len(data.get("key_specs") or ())

    def walk(args: list[dict[str, Any]]) -> None:
        for arg in args:
            idx = arg.get("key_spec_index")
            if idx is not None and not 0 <= idx < n:
                raise SpecError(f"{path.name}: argument {arg.get('name')!r} names key spec {idx}")
            if arg.get("type") == "key" and idx is None:
                raise SpecError(f"{path.name}: key argument {arg.get('name')!r} has no key spec")
            walk(arg.get("arguments") or [])

    walk(data.get("arguments") or [])
    for ks in data.get("key_specs") or ():
        for part in ("begin_search", "find_keys"):
            if part not in ks or "type" not in ks[part]:
                raise SpecError(f"{path.name}: key spec without {part}")


def load_spec_files(spec_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    files = sorted(spec_dir.glob("*.json"))
    return [(p, json.loads(p.read_text(encoding="utf-8"))) for p in files]


def build_table(
    spec_files: list[tuple[Path, dict[str, Any]]],
    handlers: Mapping[str, Handler],
    counts_changes: Set[str] = frozenset(),
) -> dict[bytes, CommandSpec]:
    """Build the frozen table, keyed by lower-case command name as bytes.

    ``counts_changes`` names the handlers that count their own changes to the data set
    (see :mod:`resplite.engine.registry`).

    The engine never imports a command module: the caller passes the handlers that the
    command modules registered (:func:`resplite.commands.command_table` does).
    """

    tops: dict[str, dict[str, Any]] = {}
    subs: dict[str, dict[str, dict[str, Any]]] = {}
    for path, data in spec_files:
        if not isinstance(data.get("summary"), str) or not data["summary"].strip():
            raise SpecError(f"{path.name}: missing summary")
        if OWN_WORDS in json.dumps(data):
            raise SpecError(f"{path.name}: prose still to be written in our own words")
        for required in ("name", "arity", "group", "since"):
            if required not in data:
                raise SpecError(f"{path.name}: missing {required!r}")
        _check_key_spec_indexes(data, path)
        name = data["name"].lower()
        container = data.get("container")
        if container:
            bucket = subs.setdefault(container.lower(), {})
            if name in bucket:
                raise SpecError(f"{path.name}: duplicate subcommand {container}|{name}")
            bucket[name] = data
        else:
            if name in tops:
                raise SpecError(f"{path.name}: duplicate command {name}")
            tops[name] = data

    for container in subs:
        if container not in tops:
            raise SpecError(f"subcommands of unknown container {container!r}")

    used: set[str] = set()
    table: dict[bytes, CommandSpec] = {}
    for name, data in tops.items():
        children: dict[bytes, CommandSpec] = {}
        for sub_name, sub_data in subs.get(name, {}).items():
            fullname = f"{name}|{sub_name}"
            handler = handlers.get(fullname)
            if handler is None:
                raise SpecError(f"no handler for {fullname}")
            used.add(fullname)
            children[sub_name.encode()] = _make_spec(
                sub_data, handler, {}, fullname in counts_changes)
        handler = handlers.get(name)
        if handler is None and not children:
            raise SpecError(f"no handler for {name}")
        if handler is not None:
            used.add(name)
        table[name.encode()] = _make_spec(data, handler, children, name in counts_changes)

    unbound = sorted(set(handlers) - used)
    if unbound:
        raise SpecError(f"handlers without a spec: {', '.join(unbound)}")
    return table


def renamed(table: dict[bytes, CommandSpec], renames: list[tuple[str, str]]
            ) -> dict[bytes, CommandSpec]:
    """The table after redis.conf's ``rename-command`` lines, applied in order: a command
    moves to its new name, or is gone when the new name is empty. Raises ValueError with
    Redis's words for an unknown command or a name already taken. The specs are shared:
    a renamed command still reports its own name (COMMAND INFO, errors), as in Redis."""
    result = dict(table)
    for old, new in renames:
        spec = result.pop(old.encode(), None)
        if spec is None:
            raise ValueError("No such command in rename-command")
        if new:
            if new.encode() in result:
                raise ValueError("Target command name already exists")
            result[new.encode()] = spec
    return result


def for_version(table: dict[bytes, CommandSpec], version: compat.Version
                ) -> dict[bytes, CommandSpec]:
    """The table of a server answering as Redis ``version`` (``redis-compat-version``):
    without the commands and subcommands added after it, so that they answer Redis's
    unknown-command errors and COMMAND does not list them. The newest version's table is
    ``table`` itself."""
    if compat.text(version) == compat.DEFAULT:
        return table
    result: dict[bytes, CommandSpec] = {}
    for name, spec in table.items():
        if not compat.available(spec.since, version):
            continue
        subs = spec.subcommands
        if subs and not all(compat.available(sub.since, version) for sub in subs.values()):
            spec = spec.with_subcommands(MappingProxyType({
                sub_name: sub for sub_name, sub in subs.items()
                if compat.available(sub.since, version)}))
        result[name] = spec
    return result


# -- the table from the generated catalog ---------------------------------------------------

# The spec fields a catalog entry keeps: what dispatch, ACL and COMMAND INFO read. The prose
# and argument trees (COMMAND DOCS) stay in the spec files.
CATALOG_FIELDS = ("name", "container", "arity", "command_flags", "acl_categories", "hints",
                  "key_specs", "since")


# Embedded servers in threads of one process share the table: one reads a file at a time.
_DOC_LOCK = threading.Lock()


class SpecDoc(Mapping[str, Any]):
    """A spec file's whole content, read on first use: the ``doc`` of a table built from
    the catalog. Invariant: once read, the same dict is answered for the process's life."""

    __slots__ = ("_data", "_dir", "_stem")

    def __init__(self, spec_dir: Path, stem: str) -> None:
        # The path is joined when read: 395 joins at start would cost more than the rest.
        self._dir = spec_dir
        self._stem = stem
        self._data: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        data = self._data
        if data is None:
            with _DOC_LOCK:
                data = self._data
                if data is None:
                    path = self._dir / f"{self._stem}.json"
                    data = self._data = json.loads(path.read_text(encoding="utf-8"))
        return data

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


class _ModuleBinder:
    """The specs whose handlers one command module registers, and how to import it.

    The first call of any of them imports the module (which registers its handlers) and
    replaces every :class:`Deferred` of the module by the real handler, so later calls
    go straight to it. The specs stay frozen to everyone else: only this swap writes them.
    """

    __slots__ = ("_lock", "load", "module", "specs")

    def __init__(self, module: str, load: Callable[[str], Mapping[str, Handler]]) -> None:
        self.module = module
        self.load = load
        self.specs: list[CommandSpec] = []
        self._lock = threading.Lock()

    def bind(self, fullname: str) -> Handler:
        with self._lock:
            handlers = self.load(self.module)
            for spec in self.specs:
                handler = handlers.get(spec.fullname)
                if handler is None:
                    raise SpecError(f"module {self.module!r} registers no handler for "
                                    f"{spec.fullname}: the catalog is stale")
                spec.handler = handler
        return handlers[fullname]


class Deferred:
    """Stands for a handler whose module is not imported yet (see :class:`_ModuleBinder`)."""

    __slots__ = ("_binder", "fullname")

    def __init__(self, binder: _ModuleBinder, fullname: str) -> None:
        self._binder = binder
        self.fullname = fullname

    @property
    def module(self) -> str:
        return self._binder.module

    def __call__(self, client: Any, argv: list[bytes]) -> Any:
        return self._binder.bind(self.fullname)(client, argv)

    def also_bind(self, spec: CommandSpec) -> None:
        """Give ``spec`` (a copy of this handler's spec) the real handler too when the
        module is imported."""
        binder = self._binder
        with binder._lock:
            binder.specs.append(spec)

    def __repr__(self) -> str:
        return f"<handler of {self.fullname} in {self._binder.module}, not imported yet>"


def catalog_entry(data: Mapping[str, Any], file: str, module: str | None,
                  counts_changes: bool) -> dict[str, Any]:
    """One command's line of the catalog: its dispatch fields, its spec file's name, the
    module that registers its handler (None: a container without one) and whether that
    handler counts its own changes."""
    entry = {name: data[name] for name in CATALOG_FIELDS if name in data}
    entry["file"] = file
    if module is not None:
        entry["module"] = module
    if counts_changes:
        entry["counts_changes"] = True
    return entry


def table_from_catalog(
    entries: list[dict[str, Any]],
    spec_dir: Path,
    load_module: Callable[[str], Mapping[str, Handler]],
) -> dict[bytes, CommandSpec]:
    """The table :func:`build_table` builds from the spec files, from catalog entries (in
    the spec files' order; they were validated by :func:`build_table` when written).

    ``load_module(name)`` imports a command module and answers the registry of handlers;
    it is called at most once per module, on the first call of one of its commands.
    """
    binders: dict[str, _ModuleBinder] = {}

    def make(entry: dict[str, Any], subs: Mapping[bytes, CommandSpec]) -> CommandSpec:
        module = entry.get("module")
        handler: Handler | None = None
        binder = None
        if module is not None:
            binder = binders.get(module)
            if binder is None:
                binder = binders[module] = _ModuleBinder(module, load_module)
            name = entry["name"].lower()
            container = entry.get("container")
            fullname = f"{container.lower()}|{name}" if container else name
            handler = Deferred(binder, fullname)
        spec = _make_spec(entry, handler, subs, bool(entry.get("counts_changes")),
                          doc=SpecDoc(spec_dir, entry["file"]))
        if binder is not None:
            binder.specs.append(spec)
        return spec

    children: dict[str, dict[bytes, CommandSpec]] = {}
    for entry in entries:
        container = entry.get("container")
        if container:
            children.setdefault(container.lower(), {})[entry["name"].lower().encode()] = (
                make(entry, {}))
    table: dict[bytes, CommandSpec] = {}
    for entry in entries:
        if not entry.get("container"):
            name = entry["name"].lower()
            table[name.encode()] = make(entry, children.get(name, {}))
    return table
