"""INFO text rules, the slow log's argument trimming and CONFIG REWRITE, without a socket."""

from __future__ import annotations

from pathlib import Path

import pytest

from resplite.commands import command_table
from resplite.commands.config import rewrite_file
from resplite.engine.clock import Clock
from resplite.engine.config import Config, ConfigError, parse_args
from resplite.engine.info import bytes_to_human, fields, render, select_sections
from resplite.engine.slowlog import SlowLog
from resplite.engine.state import ServerState
from resplite.version import REDIS_VERSION


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0B"), (200, "200B"), (1023, "1023B"), (1024, "1.00K"), (1751040, "1.67M"),
     (25276510208, "23.54G"), (5 * 1024**4, "5.00T")],
)
def test_bytes_to_human_matches_redis(n, text):
    assert bytes_to_human(n) == text


def test_section_selection_rules():
    default = select_sections([])
    assert default == select_sections(["default"]) == select_sections(["DEFAULT"])
    assert "commandstats" not in default and "keyspace" in default
    assert select_sections(["all"]) == select_sections(["everything"])
    assert "commandstats" in select_sections(["all"])
    assert select_sections(["keyspace", "Server", "keyspace"]) == ["server", "keyspace"]
    assert select_sections(["nosuch"]) == []


def test_render_layout_and_clock():
    clock = Clock()
    clock.freeze()
    state = ServerState(Config(), clock, table=command_table())
    text = render(state, ["server", "keyspace"])
    assert text.startswith(b"# Server\r\nredis_version:%b\r\n" % REDIS_VERSION.encode())
    assert b"\r\n\r\n# Keyspace\r\n" in text and text.endswith(b"# Keyspace\r\n")
    before = int(fields(text)["uptime_in_seconds"])
    clock.advance(90_000)
    assert int(fields(render(state, ["server"]))["uptime_in_seconds"]) == before + 90
    state.keyspace[2].set(b"k", b"v")
    assert fields(render(state, ["keyspace"]))["db2"] == "keys=1,expires=0,avg_ttl=0,subexpiry=0"
    assert render(state, ["nosuch"]) == b""


def test_slowlog_trims_arguments_like_redis():
    log = SlowLog(Config(), Clock())

    class FakeClient:
        addr = "127.0.0.1:5000"
        name = b"n"

    argv = [b"CMD", b"x" * 200] + [b"a"] * 40
    log.record(FakeClient(), argv, 12)  # type: ignore[arg-type]
    entry = log.latest(1)[0]
    assert len(entry.argv) == 32
    assert entry.argv[1] == b"x" * 128 + b"... (72 more bytes)"
    assert entry.argv[-1] == b"... (11 more arguments)"
    assert (entry.duration_us, entry.addr, entry.name) == (12, b"127.0.0.1:5000", b"n")


def test_slowlog_keeps_the_newest_entries():
    config = Config()
    log = SlowLog(config, Clock())
    config.set("slowlog-max-len", "2", at_startup=True)
    log._set_max_len("slowlog-max-len", 2)

    class FakeClient:
        addr = ""
        name = b""

    for i in range(5):
        log.record(FakeClient(), [b"%d" % i], 1)  # type: ignore[arg-type]
    assert [e.argv for e in log.latest(-1)] == [[b"4"], [b"3"]]
    assert [e.id for e in log.latest(1)] == [4]


def test_config_bounds_follow_redis():
    config = Config()
    with pytest.raises(ConfigError, match="between 1048576 and"):
        config.set("proto-max-bulk-len", "100")
    config.set("proto-max-bulk-len", "1mb")
    assert config["proto-max-bulk-len"] == 1 << 20
    config.set("hz", "0")
    assert config["hz"] == 1
    config.set("hz", "100000")
    assert config["hz"] == 500
    for bad in ("+5", " 5", "05", "1_000", "5.0"):
        with pytest.raises(ConfigError, match="couldn't be parsed"):
            config.set("timeout", bad)


def test_config_rewrite(tmp_path: Path):
    conf = tmp_path / "r.conf"
    conf.write_text("# keep me\ntimeout 5\n\n# and me\ntimeout 6\n", encoding="utf-8")
    config = parse_args([str(conf)])
    assert config["timeout"] == 6
    config.set("timeout", "42")
    config.set("maxclients", "99")
    config.set("requirepass", "with space")
    rewrite_file(config, conf)
    lines = conf.read_text(encoding="utf-8").splitlines()
    assert lines[:4] == ["# keep me", "timeout 42", "", "# and me"]
    assert "maxclients 99" in lines and 'requirepass "with space"' in lines
    assert lines.count("timeout 42") == 1
    again = parse_args([str(conf)])
    assert (again["timeout"], again["maxclients"], again["requirepass"]) == (42, 99, "with space")
