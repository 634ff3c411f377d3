"""Which build runs (compiled by mypyc or pure Python), and that it is the checkout's code.

The compiled modules are used only while every source they were made from is unchanged
(resplite/build.py): a stale extension beside an edited source never runs. INFO server's
``resplite_build`` and the startup log say which build runs; under ``make test``
``RESPLITE_EXPECT_BUILD`` names the one that must (compiled where a C compiler is present,
pure for the second run with ``RESPLITE_PURE_PYTHON=1``).
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
import redis
from support.servers import running

from resplite import build

ROOT = Path(__file__).resolve().parents[2]
SUFFIX = EXTENSION_SUFFIXES[0]


def _module_files() -> dict[str, str]:
    """Each module the manifest lists, imported: the file it was loaded from."""
    files = {}
    for module in build._finder.listed:
        if module.endswith("__mypyc"):
            continue
        files[module] = importlib.import_module(module).__file__ or ""
    return files


def test_the_build_is_the_expected_one_and_every_listed_module_comes_from_it() -> None:
    kind = build.kind()
    expected = os.environ.get("RESPLITE_EXPECT_BUILD")
    if expected:
        assert kind == expected, build.reason()
    files = _module_files()
    if kind == "compiled":
        assert files and all(f.endswith(SUFFIX) for f in files.values()), files
    else:
        # Never some modules compiled and others not: all of them run from their sources.
        assert all(f.endswith(".py") for f in files.values()), files
        assert not files or build.reason() is not None


def test_info_says_which_build_the_server_runs() -> None:
    with running("resplite", "--loglevel", "notice") as server:
        client = redis.Redis(port=server.port)
        try:
            info = client.info("server")
        finally:
            client.close()
    # A child process with the same environment runs the same build as this one.
    assert info["resplite_build"] == build.kind()


def test_the_startup_log_says_which_build_runs(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with running("resplite", "--loglevel", "notice", "--logfile", str(log)) as server:
        redis.Redis(port=server.port).close()
        text = log.read_text(encoding="utf-8")
    assert f"resplite_build:{build.kind()}" in text


def _package(tmp: Path, digest_of: dict[str, str] | None = None) -> Path:
    """A package folder with two sources, their (dummy) extension files and a manifest."""
    package = tmp / "pkg"
    (package / "engine").mkdir(parents=True)
    rows = []
    for source in ("engine/state.py", "engine/dispatch.py"):
        (package / source).write_text(f"# {source}\n", encoding="utf-8")
        extension = source.removesuffix(".py") + SUFFIX
        (package / extension).write_bytes(b"")
        digest = (digest_of or {}).get(source) or build.file_digest(str(package / source))
        rows.append(build.manifest_line(digest, source, extension))
    rows.append(build.manifest_line("-", "-", "native__mypyc" + SUFFIX))
    (package / ("native__mypyc" + SUFFIX)).write_bytes(b"")
    (package / build.MANIFEST).write_text("".join(rows), encoding="utf-8")
    return package


def test_extensions_built_from_the_current_sources_are_used(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.delenv(build.FORCE_PURE, raising=False)
    package = _package(tmp_path)
    extensions, reason = build.check(str(package))
    assert reason is None
    assert extensions == {
        "resplite.engine.state": str(package / f"engine/state{SUFFIX}"),
        "resplite.engine.dispatch": str(package / f"engine/dispatch{SUFFIX}"),
        "resplite.native__mypyc": str(package / f"native__mypyc{SUFFIX}"),
    }


def test_an_edited_source_makes_the_whole_build_pure(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(build.FORCE_PURE, raising=False)
    package = _package(tmp_path)
    with open(package / "engine/dispatch.py", "a", encoding="utf-8") as f:
        f.write("x = 1\n")
    assert build.check(str(package)) == (
        {}, "engine/dispatch.py changed after the modules were compiled")


def test_a_missing_extension_or_source_makes_the_build_pure(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.delenv(build.FORCE_PURE, raising=False)
    package = _package(tmp_path)
    (package / f"native__mypyc{SUFFIX}").unlink()
    assert build.check(str(package)) == ({}, f"native__mypyc{SUFFIX} is missing")
    package = _package(tmp_path / "again")
    (package / "engine/state.py").unlink()
    assert build.check(str(package)) == ({}, "engine/state.py is gone")


def test_extensions_for_another_interpreter_are_not_used(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.delenv(build.FORCE_PURE, raising=False)
    package = _package(tmp_path)
    manifest = package / build.MANIFEST
    other = ".cpython-399-x86_64-linux-gnu.so"
    manifest.write_text(manifest.read_text().replace(SUFFIX, other))
    extensions, reason = build.check(str(package))
    assert extensions == {}
    assert reason is not None and "another interpreter" in reason


def test_the_environment_forces_the_pure_build(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    package = _package(tmp_path)
    monkeypatch.setenv(build.FORCE_PURE, "1")
    assert build.check(str(package)) == ({}, "RESPLITE_PURE_PYTHON is set")
    monkeypatch.setenv(build.FORCE_PURE, "0")
    assert build.check(str(package))[1] is None


def test_no_manifest_is_a_pure_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(build.FORCE_PURE, raising=False)
    assert build.check(str(tmp_path)) == ({}, None)


def _where(root: Path, env: dict[str, str]) -> list[str]:
    code = ("import resplite.engine.state as s, resplite.build as b; "
            "print(b.kind()); print(s.__file__); print(b.reason())")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.splitlines()


@pytest.mark.skipif(build.kind() != "compiled", reason="needs the compiled build")
def test_a_stale_compiled_module_never_runs_in_place_of_its_edited_source(
        tmp_path: Path) -> None:
    """The real thing: a copy of the compiled checkout runs compiled; once a source is
    edited, the same copy runs every module from its source, and says why."""
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT / "resplite", copy / "resplite",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = {k: v for k, v in os.environ.items() if k != build.FORCE_PURE}
    env["PYTHONPATH"] = str(copy)
    kind, where, _ = _where(copy, env)
    assert (kind, where) == ("compiled", str(copy / "resplite/engine" / f"state{SUFFIX}"))
    with open(copy / "resplite/engine/dispatch.py", "a", encoding="utf-8") as f:
        f.write("\n# edited\n")
    kind, where, reason = _where(copy, env)
    assert (kind, where) == ("pure", str(copy / "resplite/engine/state.py"))
    assert reason == "engine/dispatch.py changed after the modules were compiled"
