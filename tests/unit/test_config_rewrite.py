"""CONFIG REWRITE: what it writes parses back to exactly the values the server had.

The property: for random values of every kind of directive (binary strings with newlines,
quotes, tabs, NULs and bytes over 0x7f included), writing the configuration with
:func:`rewrite_config` and reading the file back with :func:`parse_args` gives the same
values, and nothing else (no value can become a directive of its own).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resplite.engine.config import (
    Config,
    ConfigError,
    parse_args,
    quote,
    rewrite_config,
    split_line,
)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


binary = st.binary(max_size=40).map(_text)
c_string = st.binary(max_size=40).map(lambda b: _text(b.replace(b"\0", b"")))
# Separators are dropped from the bytes, not the text: removing one from between two
# escaped bytes could join them into a valid UTF-8 sequence that reads back differently.
file_name = st.binary(max_size=40).map(
    lambda b: _text(b.replace(b"\0", b"").replace(b"/", b"").replace(b"\\", b"")))
events = st.sets(st.sampled_from("KEg$lshzxetdmnA")).map("".join)
save_rules = st.lists(st.tuples(st.integers(1, 10**9), st.integers(0, 10**9)), max_size=4)
address = st.text(alphabet="abcdef0123456789.:-*", min_size=1, max_size=20)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    requirepass=binary,
    dbfilename=file_name,
    logfile=c_string,
    unixsocket=c_string,
    aclfile=c_string,
    notify=events,
    save=save_rules,
    bind=st.lists(address, min_size=1, max_size=16),
    dir_name=file_name.filter(lambda s: s not in ("", ".", "..")),
    maxmemory=st.integers(0, 1 << 50),
    timeout=st.integers(0, (1 << 31) - 1),
    perm=st.integers(0, 0o777),
    old=st.sampled_from([b"", b"# kept\nport 7000\n", b"requirepass \"x\"\nsave 1 1\nsave 2 2\n",
                         b"bogus line\n'unbalanced\ninclude\n"]),
)
def test_rewritten_file_reads_back_the_same_values(
    requirepass: str, dbfilename: str, logfile: str, unixsocket: str, aclfile: str, notify: str,
    save: list[tuple[int, int]], bind: list[str], dir_name: str, maxmemory: int, timeout: int,
    perm: int, old: bytes,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / dir_name.encode("utf-8", "surrogateescape").decode(
            "utf-8", "surrogateescape")
        os.mkdir(os.fsencode(str(target)))
        config = Config()
        config.set("requirepass", requirepass)
        config.set("dbfilename", dbfilename)
        config.set("notify-keyspace-events", notify)
        config.set("dir", str(target))
        config.set("maxmemory", str(maxmemory))
        config.set("timeout", str(timeout))
        for name, value in (("logfile", logfile), ("unixsocket", unixsocket),
                            ("aclfile", aclfile), ("unixsocketperm", f"{perm:o}")):
            config.set(name, value, at_startup=True)
        config.values["save"] = tuple(save)
        config.values["bind"] = tuple(bind)
        config.set("client-output-buffer-limit", f"pubsub {maxmemory} {timeout} {perm}")
        users = ["default on nopass ~* &* +@all", "alice on #" + "ab" * 32 + " ~x* +get"]

        path = Path(tmp) / "r.conf"
        path.write_bytes(old if b"bogus" not in old else b"")
        path.write_bytes(rewrite_config(config, path.read_bytes(), users))
        again = parse_args([str(path)])
        # Redis spells "all classes" as "A" and so drops "n" (not part of "A") from what it
        # shows and rewrites; the text CONFIG GET shows is what survives, in both.
        events = "notify-keyspace-events"
        assert again.get_text(events) == config.get_text(events)
        del again.values[events], config.values[events]
        assert again.values == config.values
        assert again.user_lines == [u.split() for u in users]


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("plain", '"plain"'),
        ("", '""'),
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("\n\r\t\x07\x08", '"\\n\\r\\t\\a\\b"'),
        ("\x00\x01\x7f", '"\\x00\\x01\\x7f"'),
        (_text(b"\xff\xc3\xa9"), '"\\xff\\xc3\\xa9"'),
        ("it's", '"it\'s"'),
    ],
)
def test_quote_is_sdscatrepr(value: str, written: str) -> None:
    assert quote(value) == written
    assert split_line(f"x {written}".encode()) == ["x", value]


def test_unknown_and_unparsable_lines_become_comments_and_repeats_are_blanked() -> None:
    config = Config()
    config.set("timeout", "30")
    old = (b"# head\nfoo bar\n'unbalanced\ntimeout 1\n\n\ntimeout 2\ninclude other.conf\n"
           b"user alice on\n")
    new = rewrite_config(config, old, ["default on nopass ~* &* +@all"]).decode()
    lines = new.split("\n")
    assert lines[:7] == ["# head", "# ??? foo bar", "# ??? 'unbalanced", "timeout 30", "",
                         "include other.conf", "user default on nopass ~* &* +@all"]
    assert "# Generated by CONFIG REWRITE" in lines
    assert lines.count("timeout 30") == 1


def test_an_acl_file_keeps_the_users_out_of_the_config_file() -> None:
    config = Config()
    new = rewrite_config(config, b"user alice on\nport 7000\n", None).decode()
    assert "user" not in new
    assert new.startswith("\nport 6379\n")


def test_config_lines_follow_redis_file_rules(tmp_path: Path) -> None:
    conf = tmp_path / "r.conf"
    conf.write_bytes(b'save ""\nbind "127.0.0.1 ::1"\ndbfilename "a\\nb"\n'
                     b"requirepass \"p\\x00q\"\nnotify-keyspace-events KEA\n")
    config = parse_args([str(conf)])
    assert config["save"] == ()
    assert config["bind"] == ("127.0.0.1", "::1")
    assert config["dbfilename"] == "a\nb"
    assert config["requirepass"] == "p\0q"
    assert config.get_text("notify-keyspace-events") == "AKE"
    for bad, reason in ((b"timeout 1 2\n", "wrong number of arguments"),
                        (b"dbfilename a/b\n", "can't be a path"),
                        (b'timeout "1\n', "Unbalanced quotes"),
                        (b"save 60\n", "Invalid save parameters"),
                        (b"dir /nonexistent/x\n", "No such file or directory")):
        conf.write_bytes(bad)
        with pytest.raises(ConfigError, match=reason):
            parse_args([str(conf)])


def test_command_line_values_are_single_words() -> None:
    config = parse_args(["--requirepass", "with space", "--save", "", "--bind", "127.0.0.1",
                         "::1", "--save", "60 1 30 2"])
    assert config["requirepass"] == "with space"
    assert config["bind"] == ("127.0.0.1", "::1")
    assert config["save"] == ((60, 1), (30, 2))
    with pytest.raises(ConfigError, match="wrong number of arguments"):
        parse_args(["--timeout", "1", "2"])
