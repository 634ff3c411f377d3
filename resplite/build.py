"""Which build runs: ``compiled`` (modules compiled by mypyc) or ``pure`` (the Python source).

``setup.py`` compiles the server's hot modules with mypyc when it can (docs/architecture.md,
"Builds") and writes :data:`MANIFEST` beside them: a line per compiled module with the
SHA-256 of the source it was compiled from and the name of its extension file. The package's
``__init__`` installs :class:`BuildFinder` before any other module of the package is
imported; at the first import of a module the manifest lists, the finder decides, once:

* ``RESPLITE_PURE_PYTHON`` set (to anything but ``0`` or nothing): pure;
* no manifest (a pure install): pure;
* every listed source unchanged and every extension file present: compiled;
* otherwise (a source edited since the build, an interpreter the files were not built
  for): pure, and :func:`reason` says why.

Invariant: either every module the manifest lists is loaded from its extension or none is.
Compiled modules call each other's functions and classes directly in C, so a compiled
module beside the interpreted source of a module it was compiled with would run code the
checkout no longer has; and a stale extension never runs in place of an edited source.
Modules the manifest does not list are left to Python's own finders (a build removes the
extension files of modules it no longer compiles).

This module imports only what the interpreter has loaded at start (``hashlib`` when a
manifest is checked): ``resplite-server --version`` imports the package, and stays cheap.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import (
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    ModuleSpec,
    SourceFileLoader,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

PACKAGE = "resplite"
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
MANIFEST = "compiled-sources.txt"
FORCE_PURE = "RESPLITE_PURE_PYTHON"
# A module every compiled build has: the connection's loop, the server's hottest code.
PROBE = "resplite.server.connection"


def forced_pure() -> bool:
    """Whether the environment asks for the pure build."""
    return os.environ.get(FORCE_PURE, "") not in ("", "0")


def manifest_line(digest: str, source: str, extension: str) -> str:
    """One line of the manifest: paths relative to the package, ``-`` for no source (the
    shared library mypyc puts every module's code in)."""
    return f"{digest} {source} {extension}\n"


def read_manifest(package_dir: str = PACKAGE_DIR) -> list[tuple[str, str, str, str]] | None:
    """The manifest's rows, (module, source's SHA-256, source, extension); None when
    there is no manifest (a pure install)."""
    try:
        with open(os.path.join(package_dir, MANIFEST), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    rows = []
    for line in lines:
        if line and not line.startswith("#"):
            digest, source, extension = line.split(" ")
            stem = extension.split(".", 1)[0]
            rows.append((f"{PACKAGE}.{stem.replace('/', '.')}", digest, source, extension))
    return rows


def file_digest(path: str) -> str:
    """SHA-256 of a file, hex."""
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def check(package_dir: str = PACKAGE_DIR) -> tuple[dict[str, str], str | None]:
    """Compare the manifest with the files: (module -> extension file to load it from,
    empty when the pure build must run; why a compiled build is not used, or None)."""
    if forced_pure():
        return {}, f"{FORCE_PURE} is set"
    rows = read_manifest(package_dir)
    if rows is None:
        return {}, None
    suffix = EXTENSION_SUFFIXES[0]
    extensions: dict[str, str] = {}
    for module, digest, source, extension in rows:
        if not extension.endswith(suffix):
            return {}, f"the compiled modules are for another interpreter ({extension})"
        path = os.path.join(package_dir, extension)
        if not os.path.exists(path):
            return {}, f"{extension} is missing"
        if source != "-":
            try:
                current = file_digest(os.path.join(package_dir, source))
            except FileNotFoundError:
                return {}, f"{source} is gone"
            if current != digest:
                return {}, f"{source} changed after the modules were compiled"
        extensions[module] = path
    return extensions, None


class BuildFinder:
    """Finds the modules the manifest lists (see the module docstring): from their
    extensions when the compiled build runs, else from their sources. Every other module is
    left to Python's own finders."""

    def __init__(self, package_dir: str = PACKAGE_DIR) -> None:
        self.package_dir = package_dir
        self._listed: frozenset[str] | None = None  # read at the first import
        self._extensions: dict[str, str] | None = None  # decided at the first listed one
        self.reason: str | None = None
        self._sources: dict[str, FileFinder] = {}

    @property
    def listed(self) -> frozenset[str]:
        """The modules the manifest lists (none without one)."""
        if self._listed is None:
            self._listed = frozenset(row[0] for row in read_manifest(self.package_dir) or ())
        return self._listed

    def decide(self) -> dict[str, str]:
        """Module -> extension file for the compiled build, empty for the pure one."""
        if self._extensions is None:
            self._extensions, self.reason = check(self.package_dir)
        return self._extensions

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if path is None or fullname not in self.listed:
            return None
        extension = self.decide().get(fullname)
        if extension is not None:
            compiled = ModuleSpec(
                fullname, ExtensionFileLoader(fullname, extension), origin=extension
            )
            compiled.has_location = True
            return compiled
        for entry in path:
            finder = self._sources.get(entry)
            if finder is None:
                finder = self._sources[entry] = FileFinder(
                    entry, (SourceFileLoader, SOURCE_SUFFIXES)
                )
            spec = finder.find_spec(fullname, target)
            if spec is not None and spec.loader is not None:
                return spec
        return None

    def invalidate_caches(self) -> None:
        for finder in self._sources.values():
            finder.invalidate_caches()


_finder = BuildFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once); the package's ``__init__`` calls
    this before importing anything else of the package."""
    if not any(isinstance(f, BuildFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _finder)  # type: ignore[arg-type]


def kind() -> str:
    """``compiled`` when the compiled modules run, else ``pure``: INFO server's
    ``resplite_build`` and the startup log say it. Asks the loaded probe module itself."""
    import importlib

    probe = importlib.import_module(PROBE)
    return "compiled" if isinstance(probe.__loader__, ExtensionFileLoader) else "pure"


def reason() -> str | None:
    """Why compiled modules that are present are not used, or None."""
    if not _finder.listed:
        return None
    _finder.decide()
    return _finder.reason
