"""The other-language snippets of docs/testing.md, run as a user would run them.

The Go snippet is a whole test file: it is taken from the page as it stands, given a free
port, and run with ``go test`` in GOPATH mode against Debian's redigo, with this checkout's
``resplite-server`` first on PATH. Skipped, saying why, where Go or redigo is missing (CI
installs both, see .ci/run).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.servers import free_port

HERE = Path(__file__).resolve().parent
DOC = HERE.parent.parent / "docs" / "testing.md"
GOCODE = Path("/usr/share/gocode")

pytestmark = pytest.mark.xdist_group("clients")


def _go_snippet() -> str:
    blocks = re.findall(r"```go\n(.*?)```", DOC.read_text(), flags=re.S)
    files = [block for block in blocks if block.startswith("// resplite_test.go\n")]
    assert len(files) == 1, "docs/testing.md has one Go test file, headed // resplite_test.go"
    return files[0]


def _require(why: str | None) -> None:
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"required in CI (.ci/run installs it): {why}")
        pytest.skip(why)


def test_go_snippet_runs(tmp_path: Path) -> None:
    snippet = _go_snippet()
    _require("go is not installed (Debian: golang-go)" if shutil.which("go") is None else None)
    _require(None if (GOCODE / "src" / "github.com" / "gomodule" / "redigo").is_dir() else
             "redigo is not installed (Debian: golang-github-gomodule-redigo-dev)")
    port = free_port()
    package = tmp_path / "src" / "snippet"
    package.mkdir(parents=True)
    (package / "resplite_test.go").write_text(snippet.replace("6390", str(port)))
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "resplite-server").exists(), "resplite-server is installed beside python"
    env = dict(os.environ, GO111MODULE="off", GOPATH=f"{tmp_path}:{GOCODE}", GOFLAGS="",
               GOTOOLCHAIN="local", GOCACHE=str(tmp_path / "go-cache"),
               PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(["go", "test", "-count=1", "-v", "."], cwd=package, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "--- PASS: TestAMinutePassesInstantly" in done.stdout
