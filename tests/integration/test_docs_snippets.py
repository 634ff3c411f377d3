"""Every Python snippet in the README and the docs runs as pasted.

The snippets are taken from the Markdown files as they are (fenced ``python`` blocks). One that
defines ``test_*`` functions is run by pytest, in a folder of its own (the resplite plugin
provides the fixtures it names); any other is run by the interpreter. A snippet marked
``<!-- snippet: fragment ... -->`` on the line before its fence is a sketch that needs
context (a SparkSession, a surrounding module): it must still be valid Python.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "resplite" / "spark" / "README.md"]
FENCE = re.compile(r"^([ \t]*)(<!-- snippet: fragment[^>]*-->\n[ \t]*)?```python\n(.*?)^[ \t]*```",
                   re.MULTILINE | re.DOTALL)


def _snippets() -> list[tuple[str, str, bool]]:
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text[: match.start()].count("\n") + 1
            code = textwrap.dedent(match.group(3))
            found.append((f"{path.relative_to(ROOT)}:{line}", code, match.group(2) is not None))
    return found


SNIPPETS = _snippets()


def test_the_docs_have_snippets_to_run() -> None:
    assert sum(1 for _, _, fragment in SNIPPETS if not fragment) >= 8


@pytest.mark.parametrize(("where", "code", "fragment"), SNIPPETS,
                         ids=[where for where, _, _ in SNIPPETS])
def test_snippet_runs_as_pasted(where: str, code: str, fragment: bool, tmp_path: Path) -> None:
    ast.parse(code, filename=where)
    if fragment:
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    if re.search(r"^(async )?def test_", code, re.MULTILINE):
        (tmp_path / "test_snippet.py").write_text(code, encoding="utf-8")
        (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = strict\n")
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_snippet.py"]
    else:
        (tmp_path / "snippet.py").write_text(code, encoding="utf-8")
        argv = [sys.executable, "snippet.py"]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"{where}\n{code}\n{done.stdout}\n{done.stderr}"
