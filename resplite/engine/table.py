"""The command table: spec files joined to handlers, frozen, validated once at start.

Each command and subcommand is declared once, in ``specs/<name>.json`` (subcommands as
``<container>-<sub>.json`` naming their ``container``), with Redis's field names. At start
:func:`build_table` loads every file, joins it to the handler registered under the same full
name, derives what Redis derives rather than declares (the legacy first/last/step key triple
and ``movablekeys``), precomputes the flag booleans the dispatcher reads on every call, and
refuses to build on any inconsistency: a handler without a spec, a spec without a handler,
a subcommand without its container, a key-spec index out of range, a duplicate name.

Dispatch, COMMAND INFO/DOCS/COUNT/LIST and GETKEYS all read these same objects.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from resplite.engine.registry import Handler

# Placeholder that tools/gen_specs.py leaves where prose must still be written: refused.
OWN_WORDS = "TODO(own words)"


class SpecError(Exception):
    """The spec data is inconsistent; the server must not start."""


@dataclass(frozen=True, slots=True)
class KeySpec:
    flags: tuple[str, ...]
    begin_search: Mapping[str, Any]
    find_keys: Mapping[str, Any]
    notes: str | None = None

    @property
    def is_plain_range(self) -> bool:
        return self.begin_search["type"] == "index" and self.find_keys["type"] == "range"


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    fullname: str
    container: str | None
    arity: int
    flags: frozenset[str]
    flag_list: tuple[str, ...]
    acl_categories: tuple[str, ...]
    hints: tuple[str, ...]
    key_specs: tuple[KeySpec, ...]
    first_key: int
    last_key: int
    key_step: int
    movablekeys: bool
    doc: Mapping[str, Any]
    handler: Handler | None
    subcommands: Mapping[bytes, CommandSpec] = field(default_factory=dict)
    # Booleans read on every dispatch, computed once.
    is_write: bool = False
    # A write whose handler does not count its own changes: the dispatcher adds one.
    dirties: bool = False
    is_denyoom: bool = False
    is_noauth: bool = False
    is_no_multi: bool = False
    is_blocking: bool = False
    is_transaction_control: bool = False


# Commands that MULTI runs immediately instead of queueing, as Redis does.
_TRANSACTION_CONTROL = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})


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
    data: dict[str, Any],
    handler: Handler | None,
    subs: Mapping[bytes, CommandSpec],
    counts_changes: bool = False,
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
        doc=MappingProxyType(data),
        handler=handler,
        subcommands=MappingProxyType(dict(subs)),
        is_write="write" in flags,
        dirties="write" in flags and not counts_changes,
        is_denyoom="denyoom" in flags,
        is_noauth="no_auth" in flags,
        is_no_multi="no_multi" in flags,
        is_blocking="blocking" in flags,
        is_transaction_control=fullname in _TRANSACTION_CONTROL,
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
