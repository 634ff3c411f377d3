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


def test_memory_values_read_as_redis_memtoull_does() -> None:
    assert parse_memory("") == 0 and parse_memory("kb") == 0
    assert parse_memory("99999999999999999999999") == (1 << 64) - 1  # strtoull saturates
    assert parse_memory("16gb") == 16 << 30
    for bad in ("-1", "1.5", "0x10", "1 kb", "1tb"):
        with pytest.raises(ConfigError, match="memory value"):
            parse_memory(bad)


def test_every_redis_directive_is_accepted_with_its_checks() -> None:
    from resplite.engine.config import DIRECTIVES
    from resplite.engine.redis_directives import CATALOGUE

    config = parse_args([])
    for row in CATALOGUE:
        assert row.name in DIRECTIVES
        assert config.get_text(row.name) is not None
    config.set("maxmemory-clients", "10%")
    assert config.get_text("maxmemory-clients") == "10%"
    with pytest.raises(ConfigError, match="less or equal to 100"):
        config.set("maxmemory-clients", "101%")
    config.set("shutdown-on-sigterm", "nosave now")
    assert config.get_text("shutdown-on-sigterm") == "nosave now"
    with pytest.raises(ConfigError, match="SAVE and NOSAVE"):
        config.set("shutdown-on-sigterm", "save nosave")
    config.set("slave-priority", "5")  # an old alias
    assert config.get_text("replica-priority") == "5"
    config.set("unixsocketperm", "700", at_startup=True)
    with pytest.raises(ConfigError, match="can't set immutable config"):
        config.set("rdbchecksum", "no")


def test_proc_title_templates_follow_redis() -> None:
    from resplite.engine.config import expand_template

    values = {"title": "resplite-server", "listen-addr": "*:6379", "server-mode": ""}
    assert expand_template("{title} {listen-addr} {server-mode}", values) == (
        "resplite-server *:6379")
    assert expand_template("{{x}} {title}", values) == "{x} resplite-server"
    assert expand_template("{nope}", values) is None
    assert expand_template("{title", values) is None
    config = parse_args([])
    for bad in ("{unknown}", "{title}", "}"):  # "{title}" alone expands to nothing
        with pytest.raises(ConfigError, match="template format is invalid"):
            config.set("proc-title-template", bad)


def test_file_only_lines_and_what_has_no_effect(tmp_path: Path) -> None:
    (tmp_path / "a.conf").write_text(
        "rename-command DEBUG \"\"\nloadmodule /x/y.so\nlist-max-ziplist-entries 5\n"
        "appendfsync always\nhz 20\nrepl-timeout 30\naof-timestamp-enabled yes\n")
    config = parse_args([str(tmp_path / "a.conf")])
    assert config.renames == [("debug", "")]
    assert config.without_effect() == ["loadmodule", "repl-timeout", "aof-timestamp-enabled"]


def test_rename_command_moves_or_removes_a_command() -> None:
    from resplite.commands import command_table
    from resplite.engine.table import renamed

    table = renamed(command_table(), [("get", "fetch"), ("del", "")])
    assert b"fetch" in table and b"get" not in table and b"del" not in table
    with pytest.raises(ValueError, match="No such command"):
        renamed(table, [("get", "x")])
    with pytest.raises(ValueError, match="already exists"):
        renamed(table, [("set", "fetch")])


def test_the_compat_differences_table_in_the_docs_is_the_code_s() -> None:
    """docs/compatibility.md's table of redis-compat-version differences lists exactly
    resplite.engine.compat.DIFFERENCES, oldest first."""
    from pathlib import Path

    from resplite.engine import compat

    text = (Path(__file__).resolve().parents[2] / "docs" / "compatibility.md").read_text()
    table = text.split("<!-- compat-differences -->")[1].split("<!-- /compat-differences -->")[0]
    rows = [line.strip("|").split(" | ") for line in table.strip().splitlines()[2:]]
    expected = sorted(((first, what) for first, what in compat.DIFFERENCES.values()),
                      key=lambda row: compat.parse(row[0]))
    assert [(since.strip(), what.strip()) for since, what in rows] == expected


def test_compat_versions_parse_and_gate() -> None:
    from resplite.engine import compat

    assert compat.parse("8.6") == (8, 6) and compat.parse("8.6.3") == (8, 6)
    assert compat.parse("8.10") > compat.parse("8.8")
    for bad in ("6.2", "8.5", "9.0", "8", "", "8.x", "8.6.3.1"):
        with pytest.raises(compat.VersionError):
            compat.parse(bad)
    assert compat.reported((8, 10), "8.10.0") == "8.10.0"
    assert compat.reported((7, 2), "8.10.0") == "7.2.0"
    assert compat.version_num("8.6.0") == 0x080600
    assert compat.available("7.2.0", (7, 2)) and not compat.available("7.4.0", (7, 2))
    assert compat.available("0.1.0", (7, 0))  # resplite's own commands
    assert compat.follows((8, 6), "xinfo-stream-idmp")
    assert not compat.follows((8, 4), "xinfo-stream-idmp")
