"""The runner's reading of runtest's output and of suite.toml (no Redis needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import runner

GREEN, RED, END = "\x1b[0;32;49m", "\x1b[0;31;49m", "\x1b[0m"


def test_counts_ok_and_err_lines_and_keeps_the_reason() -> None:
    output = "\n".join([
        "Testing unit/type/incr",
        f"[{GREEN}ok{END}]: INCR against non existing key (0 ms)",
        f"[{GREEN}ok{END}]: INCR over 32bit value (1 ms)",
        f"[{RED}err{END}]: INCR can modify objects in-place in tests/unit/type/incr.tcl",
        "Expected 1 eq 2 (context: ...)",
        "[ignore]: Not supported on external server",
        "[skip]: a skipped test",
        "[1/1 done]: unit/type/incr (1 seconds)",
    ])
    result = runner.parse(output, "unit/type/incr", "resplite")
    assert (result.passed, result.failed, result.status) == (2, 1, "done")
    assert result.failures == ["INCR can modify objects in-place -- Expected 1 eq 2 (context: ...)"]
    assert result.cell() == "2/3"


def test_a_unit_that_never_says_done_was_aborted() -> None:
    output = "[ok]: first (0 ms)\n[exception]: Executing test client: boom\n"
    result = runner.parse(output, "unit/x", "resplite")
    assert (result.passed, result.status) == (1, "aborted")
    assert result.detail.startswith("Executing test client")


def test_runtest_s_own_timeout_is_a_hang() -> None:
    output = "[ok]: first (0 ms)\n[TIMEOUT]: clients state report follows.\n"
    result = runner.parse(output, "unit/x", "resplite")
    assert result.status == "hung"
    assert result.cell() == "1/1 hung"


def test_suite_file_lists_each_exclusion_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text('[excluded_tags]\n"needs:repl" = "no replication"\n'
                    '[ci]\n"unit/type/incr" = 31\n')
    suite = runner.Suite.load(path)
    assert suite.excluded_tags == {"needs:repl": "no replication"}
    assert suite.excluded_tests == {}
    assert suite.ci == {"unit/type/incr": 31}
    shipped = runner.Suite.load()
    assert all(reason.strip() for reason in [*shipped.excluded_tags.values(),
                                             *shipped.excluded_tests.values()])


def test_the_reference_tree_is_found_from_either_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = tmp_path / "redis-8.6.3"
    (tree / "src").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "tests" / "test_helper.tcl").write_text("")
    monkeypatch.delenv(runner.REFERENCE_ENV, raising=False)
    monkeypatch.setenv(runner.SERVER_ENV, str(tree / "src" / "redis-server"))
    assert runner.reference_dir() == tree.resolve()
    monkeypatch.setenv(runner.REFERENCE_ENV, str(tmp_path / "elsewhere"))
    assert runner.reference_dir() == tmp_path / "elsewhere"
    monkeypatch.delenv(runner.REFERENCE_ENV)
    monkeypatch.setenv(runner.SERVER_ENV, "/usr/bin/redis-server")  # no test suite beside it
    assert runner.reference_dir() == runner.DEFAULT_REFERENCE


def test_resplite_answers_as_the_reference_s_release_line(tmp_path: Path) -> None:
    """The suite asserts its own release's replies (SLOWLOG GET's six fields in 8.6, where
    8.10 has seven): resplite is started as that line."""
    assert runner.reference_line(tmp_path) is None
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "version.h").write_text(
        '#define REDIS_VERSION "8.6.3"\n#define REDIS_VERSION_NUM 0x00080603\n')
    assert runner.reference_line(tmp_path) == "8.6"
