"""The command table loader, the spec data and the legacy key-range derivation."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from resplite.commands import CATALOG, SPEC_DIR, catalog, command_table
from resplite.engine.registry import COUNTS_CHANGES, HANDLERS
from resplite.engine.table import (
    OWN_WORDS,
    CommandSpec,
    Deferred,
    KeySpec,
    SpecError,
    _derive_legacy_range,
    build_table,
    catalog_entry,
    load_spec_files,
    table_from_catalog,
)

ROOT = Path(__file__).resolve().parents[2]


def _load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_specs", ROOT / "tools" / "gen_specs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_specs = _load_generator()


def _handler(client: object, argv: list[bytes]) -> None:
    return None


def _range_spec(index: int, lastkey: int = 0, keystep: int = 1, limit: int = 0) -> dict:
    return {
        "flags": ["RW", "UPDATE"],
        "notes": None,
        "begin_search": {"type": "index", "spec": {"index": index}},
        "find_keys": {"type": "range", "spec": {"lastkey": lastkey, "keystep": keystep,
                                                  "limit": limit}},
    }


def _spec(name: str, container: str | None = None, **extra: Any) -> dict:
    data: dict[str, Any] = {"name": name.upper()}
    if container:
        data["container"] = container.upper()
    data.update(
        {
            "summary": "Does a thing.",
            "since": "1.0.0",
            "group": "generic",
            "complexity": "O(1)",
            "history": [],
            "doc_flags": [],
            "deprecated_since": None,
            "replaced_by": None,
            "arity": 2,
            "command_flags": ["readonly", "fast"],
            "acl_categories": ["@read", "@fast"],
            "hints": [],
            "key_specs": [_range_spec(1)],
            "arguments": [{"name": "key", "type": "key", "display_text": "key",
                           "key_spec_index": 0}],
            "reply_schema": None,
        }
    )
    data.update(extra)
    return data


def _files(*specs: dict) -> list[tuple[Path, dict]]:
    out = []
    for data in specs:
        stem = data["name"].lower()
        if data.get("container"):
            stem = f"{data['container'].lower()}-{stem}"
        out.append((Path(f"{stem}.json"), data))
    return out


# ---------------------------------------------------------------------------------------------
# The loader refuses an inconsistent table.


def test_loader_builds_a_consistent_table() -> None:
    table = build_table(
        _files(_spec("get"), _spec("grp", arity=-2, key_specs=[], arguments=[]),
               _spec("one", "grp", arity=3)),
        {"get": _handler, "grp|one": _handler},
    )
    assert set(table) == {b"get", b"grp"}
    assert table[b"grp"].subcommands[b"one"].fullname == "grp|one"
    assert table[b"get"].handler is _handler


def test_loader_refuses_a_handler_without_a_spec() -> None:
    with pytest.raises(SpecError, match="handlers without a spec: nosuch"):
        build_table(_files(_spec("get")), {"get": _handler, "nosuch": _handler})


def test_loader_refuses_a_spec_without_a_handler() -> None:
    with pytest.raises(SpecError, match="no handler for get"):
        build_table(_files(_spec("get")), {})


def test_loader_refuses_a_subcommand_without_a_handler() -> None:
    files = _files(_spec("grp", arity=-2, key_specs=[], arguments=[]), _spec("one", "grp"))
    with pytest.raises(SpecError, match=r"no handler for grp\|one"):
        build_table(files, {})


def test_loader_refuses_a_bad_key_spec_index() -> None:
    bad = _spec("get", arguments=[{"name": "key", "type": "key", "display_text": "key",
                                   "key_spec_index": 1}])
    with pytest.raises(SpecError, match="names key spec 1"):
        build_table(_files(bad), {"get": _handler})


def test_loader_refuses_a_nested_bad_key_spec_index() -> None:
    nested = {"name": "pair", "type": "block", "arguments": [
        {"name": "key", "type": "key", "display_text": "key", "key_spec_index": -1}]}
    with pytest.raises(SpecError, match="names key spec -1"):
        build_table(_files(_spec("get", arguments=[nested])), {"get": _handler})


def test_loader_refuses_a_key_argument_without_a_key_spec() -> None:
    bad = _spec("get", arguments=[{"name": "key", "type": "key", "display_text": "key"}])
    with pytest.raises(SpecError, match="has no key spec"):
        build_table(_files(bad), {"get": _handler})


def test_loader_refuses_a_duplicate_command() -> None:
    with pytest.raises(SpecError, match="duplicate command get"):
        build_table(_files(_spec("get"), _spec("GET")), {"get": _handler})


def test_loader_refuses_a_duplicate_subcommand() -> None:
    files = _files(_spec("grp", arity=-2, key_specs=[], arguments=[]), _spec("one", "grp"),
                   _spec("one", "grp"))
    with pytest.raises(SpecError, match=r"duplicate subcommand GRP\|one"):
        build_table(files, {"grp|one": _handler})


def test_loader_refuses_a_subcommand_of_an_unknown_container() -> None:
    with pytest.raises(SpecError, match="unknown container 'grp'"):
        build_table(_files(_spec("one", "grp")), {"grp|one": _handler})


def test_loader_refuses_prose_left_to_write() -> None:
    cases: list[tuple[str, Any]] = [("summary", OWN_WORDS), ("complexity", OWN_WORDS),
                                    ("history", [["7.0.0", OWN_WORDS]])]
    for field, value in cases:
        with pytest.raises(SpecError, match="own words"):
            build_table(_files(_spec("get", **{field: value})), {"get": _handler})


def test_loader_refuses_a_spec_without_a_summary() -> None:
    with pytest.raises(SpecError, match="missing summary"):
        build_table(_files(_spec("get", summary="")), {"get": _handler})


def test_a_container_may_answer_on_its_own() -> None:
    """COMMAND runs alone and has subcommands, as in Redis."""
    table = build_table(
        _files(_spec("cmd", arity=-1, key_specs=[], arguments=[]), _spec("count", "cmd")),
        {"cmd": _handler, "cmd|count": _handler},
    )
    assert table[b"cmd"].handler is _handler
    assert table[b"cmd"].subcommands[b"count"].handler is _handler


# ---------------------------------------------------------------------------------------------
# The spec data itself.


def test_every_listed_command_has_a_spec_file_and_nothing_else_does() -> None:
    expected = set(gen_specs.expected_stems())
    present = {p.stem for p in SPEC_DIR.glob("*.json")}
    assert present == expected


def test_spec_files_follow_redis_rules() -> None:
    problems = []
    for path in sorted(SPEC_DIR.glob("*.json")):
        problems += gen_specs.validate(path.stem, json.loads(path.read_text(encoding="utf-8")))
    assert problems == []


def test_spec_files_are_rendered_as_the_generator_writes_them() -> None:
    """Hand edits keep the generator's layout, so a regeneration leaves them unchanged."""
    for path in sorted(SPEC_DIR.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert gen_specs.render(json.loads(text)) == text, path.name


def test_hand_maintained_specs_are_read_from_since_and_history() -> None:
    at_86 = gen_specs.hand_maintained((8, 6, 3))
    assert at_86["xnack"] == "added in Redis 8.8.0"  # since
    assert at_86["xreadgroup"] == "Redis 8.10.0 history"  # a newer argument tree
    assert at_86["resplite.clock-set"] == "resplite's own command"
    assert not {"xadd", "xcfgset", "hotkeys-start", "get"} & set(at_86)  # the server has them
    # Against the newest Redis followed, only resplite's own commands are written by hand.
    assert set(gen_specs.hand_maintained((8, 10, 0))) == {
        stem for stem in at_86 if stem.startswith("resplite.")}


def test_validate_catches_misordered_flags_and_missing_categories() -> None:
    spec = _spec("get", command_flags=["fast", "readonly"], acl_categories=["@read"])
    problems = gen_specs.validate("get", spec)
    assert any("not in COMMAND INFO order" in p for p in problems)
    assert any("implicit ['@fast']" in p for p in problems)


def test_generator_keeps_our_prose_over_regeneration() -> None:
    info = ["xlen", 2, ["readonly", "fast"], 1, 1, 1, ["@read", "@stream", "@fast"], [],
            [{"flags": ["RO"], "begin_search": {"type": "index", "spec": {"index": 1}},
              "find_keys": {"type": "range", "spec": {"lastkey": 0, "keystep": 1,
                                                      "limit": 0}}}], []]
    doc = {"summary": "reference words", "since": "5.0.0", "group": "stream",
           "complexity": "O(1) with words after", "history": [["6.0.0", "reference note"]],
           "arguments": [{"name": "key", "type": "key", "key_spec_index": 0}]}
    fresh = gen_specs.build_spec(info, doc)
    assert fresh["summary"] == OWN_WORDS and fresh["complexity"] == OWN_WORDS
    assert fresh["history"] == [["6.0.0", OWN_WORDS]]
    assert fresh["arguments"][0]["display_text"] == "key"
    old = copy.deepcopy(fresh)
    old.update(summary="Ours.", complexity="O(1), ours.", history=[["6.0.0", "Our note."]])
    kept = gen_specs.keep_prose(gen_specs.build_spec(info, doc), old)
    assert (kept["summary"], kept["complexity"], kept["history"]) == (
        "Ours.", "O(1), ours.", [["6.0.0", "Our note."]])
    assert "reference" not in json.dumps(kept)


def test_the_real_table_loads_with_every_handler() -> None:
    """The shipped specs and handlers agree: every spec file has its handler and back."""
    table = command_table()
    assert len(table) == len([1 for _, d in load_spec_files(SPEC_DIR) if not d.get("container")])


# ---------------------------------------------------------------------------------------------
# The generated catalog a server starts from.


def test_the_catalog_is_current() -> None:
    """catalog.json is what the spec files and handlers give now: regenerated and compared
    (after changing a spec or moving a handler, run python -m resplite.commands.catalog)."""
    assert catalog.render() == CATALOG.read_text(encoding="utf-8")


def _fields(spec: CommandSpec) -> tuple[Any, ...]:
    return (spec.name, spec.fullname, spec.container, spec.arity, spec.flags, spec.flag_list,
            spec.acl_categories, spec.hints, spec.key_specs, spec.first_key, spec.last_key,
            spec.key_step, spec.movablekeys, spec.is_write, spec.dirties, spec.is_denyoom,
            spec.is_noauth, spec.is_no_multi, spec.is_blocking, spec.is_transaction_control,
            dict(spec.doc), list(spec.subcommands))


def test_the_catalog_table_equals_the_one_built_from_the_spec_files() -> None:
    """Every command, in the same order, with the same fields, documents and subcommands,
    and handlers that resolve to the registered ones."""
    catalog.render()  # imports every command module, so the registry is complete
    from_files = build_table(load_spec_files(SPEC_DIR), HANDLERS, COUNTS_CHANGES)
    from_catalog = command_table()
    assert list(from_catalog) == list(from_files)
    for name, spec in from_files.items():
        mine = from_catalog[name]
        assert _fields(mine) == _fields(spec), name
        for sub_name, sub in spec.subcommands.items():
            assert _fields(mine.subcommands[sub_name]) == _fields(sub), sub_name
        pairs = [(mine, spec), *((mine.subcommands[n], s) for n, s in spec.subcommands.items())]
        for got, want in pairs:
            handler = got.handler
            if isinstance(handler, Deferred):
                assert handler.module == want.handler.__module__.rsplit(".", 1)[1]
            else:
                assert handler is want.handler


def _entry(name: str, module: str | None, container: str | None = None) -> dict[str, Any]:
    return catalog_entry(_spec(name, container), f"{container}-{name}" if container else name,
                         module, counts_changes=False)


def _call(spec: CommandSpec, *argv: bytes) -> Any:
    handler: Any = spec.handler
    assert handler is not None
    return handler(None, list(argv))


def test_a_deferred_handler_imports_its_module_once_and_binds_all_of_its_commands(
    tmp_path: Path,
) -> None:
    calls: list[str] = []

    def first(client: object, argv: list[bytes]) -> bytes:
        return b"first:" + argv[0]

    def second(client: object, argv: list[bytes]) -> bytes:
        return b"second"

    def load(module: str) -> dict[str, Any]:
        calls.append(module)
        return {"one": first, "two": second, "grp|sub": second}

    entries = [_entry("one", "mod"), _entry("two", "mod"), _entry("sub", "other", "grp"),
               _entry("grp", None)]
    table = table_from_catalog(entries, tmp_path, load)
    assert isinstance(table[b"one"].handler, Deferred)
    assert table[b"grp"].handler is None  # a container without a handler of its own
    assert calls == []
    assert _call(table[b"one"], b"x") == b"first:x"
    assert calls == ["mod"]
    # Both commands of the module now call their handlers directly; the other module waits.
    assert table[b"one"].handler is first and table[b"two"].handler is second
    assert isinstance(table[b"grp"].subcommands[b"sub"].handler, Deferred)
    assert _call(table[b"two"]) == b"second"
    assert calls == ["mod"]


def test_a_catalog_naming_the_wrong_module_is_refused_on_first_call(tmp_path: Path) -> None:
    table = table_from_catalog([_entry("one", "mod")], tmp_path, lambda module: {})
    with pytest.raises(SpecError, match="stale"):
        _call(table[b"one"], b"one")


def test_a_spec_doc_is_read_from_its_file_on_first_use(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(json.dumps(_spec("one", summary="Read late.")))
    table = table_from_catalog([_entry("one", "mod")], tmp_path, lambda module: {})
    doc = table[b"one"].doc
    (tmp_path / "one.json").write_text(json.dumps(_spec("one", summary="Changed.")))
    assert doc["summary"] == "Changed."  # nothing was read before this
    (tmp_path / "one.json").unlink()
    assert doc["summary"] == "Changed." and dict(doc) == _spec("one", summary="Changed.")


# ---------------------------------------------------------------------------------------------
# Legacy (first, last, step) and movablekeys, as Redis derives them.


def _ks(begin: dict, find: dict, *flags: str) -> KeySpec:
    return KeySpec(flags=flags or ("RW",), begin_search=MappingProxyType(begin),
                   find_keys=MappingProxyType(find))


def _index(i: int) -> dict:
    return {"type": "index", "spec": {"index": i}}


def _range(lastkey: int, keystep: int = 1, limit: int = 0) -> dict:
    return {"type": "range", "spec": {"lastkey": lastkey, "keystep": keystep, "limit": limit}}


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        pytest.param([], (0, 0, 0, False), id="no keys"),
        pytest.param([_ks(_index(1), _range(0))], (1, 1, 1, False), id="GET"),
        pytest.param([_ks(_index(1), _range(-1))], (1, -1, 1, False), id="DEL"),
        pytest.param([_ks(_index(1), _range(-1, 2))], (1, -1, 2, False), id="MSET"),
        pytest.param([_ks(_index(1), _range(0)), _ks(_index(2), _range(0))], (1, 2, 1, False),
                     id="RENAME"),
        pytest.param([_ks(_index(1), _range(0)), _ks(_index(3), _range(0))], (1, 1, 1, True),
                     id="gap makes movable"),
        pytest.param([_ks({"type": "keyword", "spec": {"keyword": "STREAMS", "startfrom": 1}},
                          _range(-1, 1, 2))], (0, 0, 0, True), id="XREAD"),
        pytest.param([_ks(_index(1), _range(0), "RW", "INCOMPLETE")], (1, 1, 1, True),
                     id="incomplete"),
        pytest.param([_ks(_index(1), {"type": "keynum", "spec": {"keynumidx": 0, "firstkey": 1,
                                                                  "keystep": 1}})],
                     (0, 0, 0, True), id="keynum"),
    ],
)
def test_legacy_key_range_derivation(specs: list[KeySpec], expected: tuple) -> None:
    assert _derive_legacy_range(tuple(specs)) == expected


def test_the_table_for_an_older_version_has_only_its_commands() -> None:
    from resplite.engine.table import for_version

    table = command_table()
    assert for_version(table, (8, 10)) is table
    old = for_version(table, (7, 0))
    assert b"get" in old and b"hexpire" not in old and b"waitaof" not in old
    assert b"hexpire" in for_version(table, (7, 4))
    client = old[b"client"]
    assert b"no-touch" not in client.subcommands and b"setinfo" not in client.subcommands
    assert b"kill" in client.subcommands
    assert b"no-touch" in table[b"client"].subcommands  # the full table is left as it was
    # resplite's own commands (since 0.x) are there whatever the version.
    own = [name for name, spec in table.items() if spec.since.startswith("0.")]
    assert own and all(name in old for name in own)
    every_since = {spec.since for spec in table.values()}
    assert "" not in every_since  # the catalog carries each command's since


# -- the docs name every command (the last step of docs/architecture.md's recipe) ------------

def _top_level_specs() -> list[dict[str, Any]]:
    specs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(SPEC_DIR.glob("*.json"))]
    return [spec for spec in specs if not spec.get("container")]


def _names_in(text: str) -> set[str]:
    return set(re.findall(r"[A-Z][A-Z0-9_.\-]*[A-Z0-9]", text))


def test_the_readme_table_names_every_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## What it implements")
    table = readme[start : readme.index("\n\n", readme.index("| group", start))]
    missing = [spec["name"] for spec in _top_level_specs()
               if spec["name"] not in _names_in(table)]
    assert missing == []


def test_the_compatibility_table_names_every_command_newer_than_7_0() -> None:
    page = _names_in((ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8"))
    newer = [spec["name"] for spec in _top_level_specs()
             if gen_specs.version_of(spec["since"]) > (7, 0, 99)]
    assert newer and [name for name in newer if name not in page] == []


def test_the_recipe_for_a_command_names_real_files_and_tests() -> None:
    """docs/architecture.md's "How to add a command": every path it names exists (a
    placeholder such as ``<name>`` aside) and every test it names is defined, so a file
    renamed or a check removed shows here."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = page.index("## How to add a command")
    recipe = page[start : page.find("\n## ", start + 1)]
    quoted = re.findall(r"`([^`\n]+)`", recipe)
    paths = [q for q in quoted if "/" in q and " " not in q and "<" not in q]
    assert {"tools/gen_specs.py", "resplite/commands/catalog.json",
            "tests/unit/test_propagation_replay.py"} <= set(paths)
    assert [p for p in paths if not (ROOT / p).exists()] == []
    tests = {q for q in quoted if q.startswith("test_") and "." not in q}
    assert len(tests) >= 3
    defined = {m for path in (ROOT / "tests").rglob("test_*.py")
               for m in re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"),
                                   re.MULTILINE)}
    assert sorted(tests - defined) == []
