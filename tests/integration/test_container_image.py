"""The Dockerfile and .dockerignore, checked by reading them (no Docker here) and by running
the pieces that can run without it: the dependency step, the health check.

What is checked: a pinned base (an exact Python and Debian release, never a floating tag), a
builder stage whose dependency layer is installed from pyproject.toml before any source is
copied, a runtime stage with only the virtualenv, a HEALTHCHECK that passes against a running
server (with and without a password), and a build context that holds what the COPY lines need
and nothing else (no .venv, .git, tests or node_modules).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import resplite

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_the_base_is_pinned_and_the_build_has_two_stages() -> None:
    steps = _instructions()
    args = dict(a.split("=", 1) for k, a in steps if k == "ARG" and "=" in a)
    base = args["PYTHON_IMAGE"]
    assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim-[a-z]+(@sha256:[0-9a-f]{64})?", base), base
    froms = [a for k, a in steps if k == "FROM"]
    assert froms == ["${PYTHON_IMAGE} AS builder", "${PYTHON_IMAGE}"]
    runtime = steps[[i for i, (k, _) in enumerate(steps) if k == "FROM"][1]:]
    copies = [a for k, a in runtime if k == "COPY"]
    assert copies == ["--from=builder /opt/resplite /opt/resplite"]  # no source in the image
    assert ("USER", "resplite") in runtime


def test_dependencies_are_a_layer_of_their_own() -> None:
    steps = _instructions()
    order = [(k, a) for k, a in steps if k in ("COPY", "RUN")]
    first_source = order.index(("COPY", "resplite ./resplite"))
    deps = [i for i, (k, a) in enumerate(order) if k == "RUN" and "-r /tmp/requirements.txt" in a]
    assert deps and deps[0] < first_source
    assert order[: deps[0]].count(("COPY", "pyproject.toml ./")) == 1
    assert all(k != "COPY" or a == "pyproject.toml ./" for k, a in order[: deps[0]])
    # The step's own command lists exactly pyproject.toml's dependencies.
    found = re.search(r'python -c "(.*?)" >', order[deps[0]][1])
    assert found is not None
    command = found.group(1)
    listed = subprocess.run([sys.executable, "-c", command.replace('\\"', '"')], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\n")
    import tomllib

    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [line for line in listed if line] == wanted


def _healthcheck_argv(port: int) -> list[str]:
    [args] = [a for k, a in _instructions() if k == "HEALTHCHECK"]
    argv = json.loads(args.split("CMD", 1)[1].strip())
    return [a.replace("6379", str(port)) for a in argv]


def test_the_health_check_passes_against_a_running_server() -> None:
    for directives in ({}, {"requirepass": "s3cret"}):
        with resplite.serve(**directives) as server:
            argv = _healthcheck_argv(server.port)
            assert argv[0] == "python"
            done = subprocess.run([sys.executable, *argv[1:]], capture_output=True, timeout=10)
            assert done.returncode == 0, done.stderr
    # Nothing listening: unhealthy.
    done = subprocess.run([sys.executable, *_healthcheck_argv(1)[1:]], capture_output=True,
                          timeout=10)
    assert done.returncode != 0


def _context_files() -> set[str]:
    """The build context under .dockerignore, with Docker's rules: patterns in order, the
    last that matches a path (or one of its parent folders) decides, ``!`` re-includes."""
    patterns = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            negate = line.startswith("!")
            patterns.append((negate, line.lstrip("!").rstrip("/")))
    included = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d != ".git"] if dirpath == str(ROOT) else dirnames
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), ROOT)
            parts = rel.split(os.sep)
            prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
            excluded = False
            for negate, pattern in patterns:
                pat = pattern[3:] if pattern.startswith("**/") else pattern
                anywhere = pattern.startswith("**/")
                if any(fnmatch.fnmatchcase(p, pat) or (anywhere and fnmatch.fnmatchcase(
                        p.rsplit("/", 1)[-1], pat)) for p in prefixes):
                    excluded = not negate
            if not excluded:
                included.add(rel)
    return included


def test_the_build_context_holds_what_the_image_needs_and_nothing_else() -> None:
    context = _context_files()
    for _, args in (s for s in _instructions() if s[0] == "COPY" and "--from" not in s[1]):
        source = args.split()[0]
        assert source in context or any(f.startswith(source + "/") for f in context), source
    for path in context:
        top = path.split(os.sep)[0]
        assert top in ("pyproject.toml", "setup.py", "README.md", "resplite"), path
        assert "__pycache__" not in path and not path.endswith(".pyc")
        # Modules compiled in the checkout stay out: the builder compiles its own.
        assert not path.endswith(".so") and not path.endswith("compiled-sources.txt"), path
    assert "resplite/commands/specs/get.json" in context
