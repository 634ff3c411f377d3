"""The install paths docs/install.md gives work today: a wheel built as ``make dist`` builds
it, and a git URL. Each is installed into a fresh virtual environment, offline (the
dependencies already installed here are made visible to it through a ``.pth`` file, as in
test_fresh_project), and the installed ``resplite-server`` and package are used.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    # What is installed, and how, is checked here, not the compiled modules (minutes of C
    # compilation; the suite runs on them): a pure-Python build.
    env["RESPLITE_PURE_PYTHON"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _source(tmp: Path) -> Path:
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "resplite", source / "resplite",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.so",
                                                  "compiled-sources.txt"))
    return source


def _venv(tmp: Path, env: dict[str, str]) -> Path:
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, env)
    python = venv / "bin" / "python"
    purelib = Path(_run([str(python), "-c",
                         "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        tmp, env).strip())
    (purelib / "_installed_dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    return venv


def _check_installed(venv: Path, tmp: Path, env: dict[str, str]) -> None:
    out = _run([str(venv / "bin" / "resplite-server"), "--version"], tmp, env)
    assert out.startswith("resplite server v=")
    where = _run([str(venv / "bin" / "python"), "-c",
                  "import resplite, resplite.commands; print(resplite.__file__); "
                  "print(len(resplite.commands.command_table()))"], tmp, env).split()
    assert where[0].startswith(str(venv)), where
    assert int(where[1]) > 200  # the spec files came along


def test_a_wheel_as_make_dist_builds_it(tmp_path: Path) -> None:
    env = _env()
    source = _source(tmp_path)
    # The command `make dist` runs (its venv's pip, offline with the installed setuptools).
    make = (ROOT / "Makefile").read_text()
    assert "pip wheel -q --no-deps --no-build-isolation -w dist ." in make
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "-w", "dist", "."], source, env)
    [wheel] = list((source / "dist").glob("resplite-*-py3-none-any.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "resplite/commands/specs/xadd.json" in names
    entry_points = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert re.search(r"resplite-server = resplite.server.cli:main", entry_points)
    assert "resplite = resplite.testing.plugin" in entry_points
    venv = _venv(tmp_path, env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
          "--no-index", str(wheel)], tmp_path, env)
    _check_installed(venv, tmp_path, env)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_git_url(tmp_path: Path) -> None:
    env = _env()
    source = _source(tmp_path)
    git = {**env, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "-m", "resplite"]):
        _run(argv, source, git)
    venv = _venv(tmp_path, env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
          "--no-build-isolation", "--no-index", f"resplite @ git+file://{source}@main"],
         tmp_path, git)
    _check_installed(venv, tmp_path, env)
