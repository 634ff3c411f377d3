"""resplite's build: the package, with its hot modules compiled by mypyc where it can be.

``pip install .`` and ``pip install -e .`` compile :data:`COMPILED` to C extension modules
when mypyc (part of mypy) is importable, a C compiler and Python's headers are present, and
``RESPLITE_PURE_PYTHON`` is not set (to anything but ``0``); otherwise the package is its
Python source alone, which behaves the same. Beside the extensions the build writes
``resplite/compiled-sources.txt``, the SHA-256 of each source compiled: :mod:`resplite.build`
loads the extensions only while every one of those sources is unchanged, so an edited
checkout runs its own source, never a stale extension (docs/architecture.md, "Builds").
An editable install builds the extensions in place, beside the sources.

The C extensions of :data:`NATIVE` (LZF compression, RDB strings, listpacks, scripts' array
replies, the request reader's framer) are ordinary extensions, all optional: where one
cannot be built the install goes on and resplite uses the pure-Python (or Lua) code it
replaces. They are built whether or not mypyc runs, unless ``RESPLITE_PURE_PYTHON`` asks for
no C at all.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import Distribution, Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
PACKAGE = "resplite"
# resplite.build reads these two; keep them in step.
MANIFEST = "compiled-sources.txt"
FORCE_PURE = "RESPLITE_PURE_PYTHON"
# mypyc puts the code of the compiled modules in two shared libraries, one per group below:
# resplite/native__mypyc (the core: protocol, store, engine, connection) and
# resplite/native_commands__mypyc (the commands and the scripting engine).
GROUPS = ("resplite.native", "resplite.native_commands")

# What a request runs through: the protocol, the store, the engine, the connection, the
# commands of the common types and the scripting engine's call path. Directories stand for
# their modules (never their __init__).
COMPILED = [
    "protocol",
    "store",
    "engine",
    "server/connection.py",
    "algorithms/numbers.py",
    "algorithms/scores.py",
    "commands/args.py",
    "commands/connection.py",
    "commands/generic.py",
    "commands/strings.py",
    "commands/lists.py",
    "commands/sets.py",
    "commands/hashes.py",
    "commands/sorted_sets.py",
    "commands/pubsub.py",
    "commands/scripting.py",
    "commands/streams.py",
    "commands/streams_common.py",
    "commands/streams_groups.py",
    "commands/streams_read.py",
    "engine/scripting/engine.py",
    "engine/scripting/convert.py",
]
# The second group's sources (by prefix): each group is one C file that gcc compiles on its
# own, so a build on two cores compiles both at once, the larger first. Calls within a group
# are direct C calls gcc may inline; calls from the commands into the core go through a
# table of pointers (methods of compiled classes are called through their vtables either
# way), and the dispatcher calls a command's handler as a Python callable in both builds.
SECOND_GROUP = ("resplite/commands/", "resplite/engine/scripting/")
# Modules of those directories left as Python source, with the reason. (No module is left
# out for a mypyc bug: the one met, a crash on a huge folded constant in commands/strings.py,
# is avoided in the source.)
NOT_COMPILED = {
    # Data and parsing done once at start: nothing a request runs, and compile time saved.
    "engine/config.py",
    "engine/config_names.py",
    "engine/redis_directives.py",
}


def compiled_sources() -> list[str]:
    """The sources to compile, paths relative to the project's root."""
    found: list[str] = []
    for entry in COMPILED:
        path = ROOT / PACKAGE / entry
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for file in files:
            relative = file.relative_to(ROOT / PACKAGE).as_posix()
            if file.name != "__init__.py" and relative not in NOT_COMPILED:
                found.append(f"{PACKAGE}/{relative}")
    return found


def compiled_groups() -> list[tuple[list[str], str]]:
    """The sources of each shared library, with its name (mypycify's ``separate``)."""
    sources = compiled_sources()
    second = [source for source in sources if source.startswith(SECOND_GROUP)]
    first = [source for source in sources if source not in second]
    return [(first, GROUPS[0]), (second, GROUPS[1])]


def why_pure() -> str | None:
    """Why this build is pure Python, or None when the modules can be compiled."""
    if os.environ.get(FORCE_PURE, "") not in ("", "0"):
        return f"{FORCE_PURE} is set"
    if sys.implementation.name != "cpython":
        return f"mypyc compiles for CPython, not {sys.implementation.name}"
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        return "mypyc is not installed (it comes with mypy)"
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    if shutil.which(compiler.split()[0]) is None:
        return f"no C compiler ({compiler.split()[0]} is not on PATH)"
    if not (Path(sysconfig.get_path("include")) / "Python.h").exists():
        return "Python's headers are not installed (Debian: python3-dev)"
    return None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class BuildExt(build_ext):
    """build_ext that compiles :data:`COMPILED` with mypyc first (see the module docstring)."""

    def run(self) -> None:
        inplace = self.inplace or self.editable_mode
        if inplace:
            # A build in place starts from nothing compiled: whatever it leaves is current.
            _remove_in_place()
        reason = why_pure()
        if reason is not None:
            sys.stderr.write(f"resplite: building pure Python ({reason})\n")
            super().run()
            return
        from mypyc.build import mypycify

        sources = compiled_sources()
        digests = {source: _digest(ROOT / source) for source in sources}  # before mypyc reads
        # One C file per group (see SECOND_GROUP). (multi_file=True, one C file per
        # module, fails with mypy 2.4.1 for a group inside a package: each module's C file
        # includes a header that mypyc writes into the package's folder, not on the include
        # path.)
        extensions = mypycify(
            sources,
            opt_level=os.environ.get("RESPLITE_MYPYC_OPT", "3"),
            separate=compiled_groups(),
            target_dir=str(ROOT / "build" / "mypyc"),
        )
        # The largest C file first, so that a parallel build starts on it at once.
        extensions.sort(key=lambda ext: -sum((ROOT / source).stat().st_size
                                             for source in ext.sources))
        for ext in extensions:
            # What finalize_options does for the extensions it is given (these come later).
            full_name = self.get_ext_fullname(ext.name)
            ext._full_name = full_name
            ext._links_to_dynamic = False
            ext._needs_stub = False
            self.ext_map[full_name] = ext
        self.extensions = [*self.extensions, *extensions]
        self.distribution.ext_modules = self.extensions
        if not self.parallel:
            self.parallel = os.cpu_count() or 1  # the groups' C files side by side
        super().run()
        lines = ["# Sources of resplite's compiled modules (resplite/build.py reads this).\n"]
        for ext in extensions:
            extension = Path(self.get_ext_filename(ext.name)).relative_to(PACKAGE).as_posix()
            source = ext.name.removeprefix(PACKAGE + ".").replace(".", "/") + ".py"
            digest = digests.get(f"{PACKAGE}/{source}")
            lines.append(f"{digest} {source} {extension}\n" if digest else f"- - {extension}\n")
        text = "".join(lines)
        (Path(self.build_lib) / PACKAGE / MANIFEST).write_text(text, encoding="utf-8")
        if inplace:
            (ROOT / PACKAGE / MANIFEST).write_text(text, encoding="utf-8")


def _remove_in_place() -> None:
    """Remove the manifest and the mypyc extensions an earlier build left in the checkout
    (those it lists, and any beside a source compiled now); other extensions stay."""
    package = ROOT / PACKAGE
    manifest = package / MANIFEST
    stale: set[Path] = set()
    if manifest.exists():
        for line in manifest.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#"):
                stale.add(package / line.split(" ")[2])
        manifest.unlink()
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    stale.update(package / f"{group.rpartition('.')[2]}__mypyc{suffix}" for group in GROUPS)
    stale.update((ROOT / source).with_suffix(suffix) for source in compiled_sources())
    for path in stale:
        path.unlink(missing_ok=True)


class RespliteDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        # Platform wheels only when modules will be compiled; ext_modules is filled late
        # (mypyc runs in build_ext, not at every setup.py invocation pip makes).
        return bool(self.ext_modules) or why_pure() is None


NATIVE = [
    # LZF compression for RDB strings (resplite.algorithms.lzf.compress, in C).
    Extension("resplite.algorithms._lzf", ["resplite/algorithms/_lzf.c"],
              depends=["resplite/algorithms/lzf_codec.h"], optional=True),
    # RDB strings, the commonest record of a snapshot (resplite.formats.rdb_format).
    Extension("resplite.formats._rdb", ["resplite/formats/_rdb.c"],
              depends=["resplite/algorithms/lzf_codec.h", "resplite/algorithms/canonical_int.h"],
              optional=True),
    # Listpacks as snapshots read them, and stream nodes' listpacks as they write them.
    Extension("resplite.store._listpack", ["resplite/store/_listpack.c"],
              depends=["resplite/algorithms/canonical_int.h"], optional=True),
    # A script's array replies (resplite.engine.scripting.vm.reply_encoder): a Lua C
    # function, loaded into each Lua state with package.loadlib.
    Extension("resplite.engine.scripting._reply", ["resplite/engine/scripting/_reply.c"],
              optional=True),
    # The request reader's fast path: a whole canonical request framed in one call.
    Extension("resplite.protocol._frame", ["resplite/protocol/_frame.c"], optional=True),
]

# RESPLITE_PURE_PYTHON=1 builds no C at all (a wheel for any platform: py3-none-any).
setup(distclass=RespliteDistribution, cmdclass={"build_ext": BuildExt},
      ext_modules=NATIVE if os.environ.get(FORCE_PURE, "") in ("", "0") else [])
