"""Configuration: Redis's directive names from a file and the command line, with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from resplite.engine.config import ConfigError, parse_args, parse_memory


def test_command_line_directives_override_the_file(tmp_path: Path) -> None:
    conf = tmp_path / "redis.conf"
    conf.write_text("# comment\nport 7001\nmaxmemory 10mb\nrequirepass \"p w\"\n")
    config = parse_args([str(conf), "--port", "7002", "--bind", "127.0.0.1", "::1"])
    assert config["port"] == 7002
    assert config["maxmemory"] == 10 * 1024 * 1024
    assert config["requirepass"] == "p w"
    assert config["bind"] == ("127.0.0.1", "::1")
    assert config.config_file == str(conf.resolve())


def test_a_bad_directive_in_a_file_names_the_file_and_line(tmp_path: Path) -> None:
    conf = tmp_path / "bad.conf"
    conf.write_text("port 7001\n\nno-such-thing 1\n")
    with pytest.raises(ConfigError) as info:
        parse_args([str(conf)])
    assert f"{conf}:3" in str(info.value)
    assert "Bad directive" in str(info.value)


def test_a_bad_value_on_the_command_line_names_the_argument() -> None:
    with pytest.raises(ConfigError) as info:
        parse_args(["--maxclients", "zero"])
    assert "--maxclients zero" in str(info.value)


def test_memory_units_follow_redis() -> None:
    assert parse_memory("1k") == 1000
    assert parse_memory("1kb") == 1024
    assert parse_memory("2GB") == 2 * 1024**3
    with pytest.raises(ConfigError):
        parse_memory("12xb")


def test_immutable_directives_refuse_runtime_changes_but_hooks_see_mutable_ones() -> None:
    config = parse_args([])
    seen: list[object] = []
    config.on_change("timeout", lambda name, value: seen.append(value))
    config.set("timeout", "30")
    assert seen == [30]
    with pytest.raises(ConfigError, match="immutable"):
        config.set("databases", "4")
