"""Redis's own test suite, the fast subset: each unit in ``suite.toml``'s ``[ci]`` run with
runtest against resplite must pass at least the number of tests recorded there.

The whole suite, against resplite and the reference Redis side by side, is ``make
conformance`` (``runner.py``). These tests skip, saying why, where the reference Redis tree
($RESPLITE_REFERENCE_DIR) or tclsh is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support import procs

from conformance import runner

SUITE = runner.Suite.load()
REFERENCE = runner.reference_dir()
MISSING = runner.missing_prerequisite(REFERENCE)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(MISSING is not None, reason=f"Redis's test suite: {MISSING}"),
]


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with runner.suite_copy(REFERENCE) as path:
        yield path


@pytest.mark.parametrize("unit", sorted(SUITE.ci))
def test_unit_passes_as_many_tests_as_recorded(unit: str, workdir: Path) -> None:
    result = runner.run_unit(unit, "resplite", reference=REFERENCE, workdir=workdir,
                             suite=SUITE, unit_timeout=600, progress_timeout=180,
                             record=procs.record)
    expected = SUITE.ci[unit]
    failing = "".join(f"\n  {name}" for name in result.failures)
    assert result.status == "done", (
        f"{unit} did not run to its end ({result.status}; {result.passed} passed) "
        f"{result.detail}{failing}")
    assert result.passed >= expected, (
        f"{unit}: {result.passed} tests pass, {expected} did (suite.toml); failing:{failing}")
