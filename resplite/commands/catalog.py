"""``python -m resplite.commands.catalog``: write ``catalog.json`` from the spec files.

The catalog is what a server reads at start instead of the 395 spec files under ``specs/``:
one JSON file listing, for each command and subcommand in the spec files' order, the fields
dispatch, ACL and COMMAND INFO read (:data:`~resplite.engine.table.CATALOG_FIELDS`), the
spec file it came from and the module that registers its handler. Writing it imports every
command module and builds the table with :func:`~resplite.engine.table.build_table`, so a
catalog is only written from specs and handlers that agree.

It is generated, and committed: run this module after changing a spec file or moving a
handler to another module (``tools/gen_specs.py`` runs it after writing the specs). A test
regenerates it and compares, so a stale catalog fails the suite (``--check`` does the same
from the command line).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from resplite.commands import CATALOG, MODULES, SPEC_DIR
from resplite.engine.registry import COUNTS_CHANGES, HANDLERS
from resplite.engine.table import build_table, catalog_entry, load_spec_files

FORMAT = 1


def render() -> str:
    """The catalog's text for the spec files and handlers as they are now."""
    for name in MODULES:
        importlib.import_module(f"resplite.commands.{name}")
    files = load_spec_files(SPEC_DIR)
    build_table(files, HANDLERS, COUNTS_CHANGES)  # refuses any inconsistency
    # A handler is registered where it is defined, so importing its module registers it.
    module_of = {fullname: fn.__module__.rsplit(".", 1)[1] for fullname, fn in HANDLERS.items()}
    strays = sorted(f for f, module in module_of.items() if module not in MODULES)
    if strays:
        raise SystemExit(f"handlers defined outside resplite.commands.MODULES: {strays}")
    lines = []
    for path, data in files:
        name = data["name"].lower()
        container = data.get("container")
        fullname = f"{container.lower()}|{name}" if container else name
        entry = catalog_entry(data, path.stem, module_of.get(fullname),
                              fullname in COUNTS_CHANGES)
        lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
    body = ",\n".join(lines)
    return f'{{"format":{FORMAT},"commands":[\n{body}\n]}}\n'



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit status 1 if the catalog is stale")
    args = parser.parse_args(argv)
    text = render()
    current = CATALOG.read_text(encoding="utf-8") if CATALOG.exists() else ""
    if args.check:
        if current != text:
            sys.stderr.write(f"{CATALOG} is stale: run python -m resplite.commands.catalog\n")
            return 1
        return 0
    if current != text:
        CATALOG.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
