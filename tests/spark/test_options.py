"""Option parsing: defaults, spelling, and the messages of every rejection (no Spark needed)."""

from __future__ import annotations

import pickle

import pytest

from resplite.spark.errors import OptionError
from resplite.spark.ids import MAX_ID, MIN_ID, StreamId, parse_bound
from resplite.spark.options import OPTION_NAMES, mask_url, parse_options


def test_defaults_for_a_single_stream() -> None:
    opts = parse_options({"stream": "events"})
    assert opts.streams == ("events",)
    assert opts.url == "redis://localhost:6379/0"
    assert (opts.start_id, opts.end_id, opts.group, opts.protocol) == ("-", "+", None, 3)
    assert opts.claim_min_idle_ms == 60_000
    assert opts.max_entries_per_trigger is None and not opts.idempotent


def test_option_names_are_case_insensitive_and_typed() -> None:
    opts = parse_options(
        {
            "STREAMS": "a, b",
            "numpartitions": "8",
            "ClaimMinIdleMs": "0",
            "createGroup": "TRUE",
            "maxEntriesPerTrigger": "500",
            "protocol": "2",
            "url": "redis://u:secret@h:1/2",
        }
    )
    assert opts.streams == ("a", "b")
    assert (opts.num_partitions, opts.claim_min_idle_ms, opts.create_group) == (8, 0, True)
    assert (opts.max_entries_per_trigger, opts.protocol) == (500, 2)
    assert opts.safe_url == "redis://u:***@h:1/2"
    assert pickle.loads(pickle.dumps(opts)) == opts


def test_load_path_names_the_stream() -> None:
    assert parse_options({"path": "events"}).streams == ("events",)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "option 'stream' (one key) or 'streams' (comma-separated keys) is required"),
        ({"stream": "a", "streams": "b,c"}, "give either option 'stream' or option 'streams'"),
        ({"streams": "a,,b"}, "option 'streams' has an empty key"),
        ({"streams": "a,a"}, "option 'streams' names a key twice"),
        ({"stream": "a", "numPartitions": "x"}, "option 'numPartitions' must be an integer"),
        ({"stream": "a", "numPartitions": "0"}, "option 'numPartitions' must be at least 1"),
        ({"stream": "a", "claimMinIdleMs": "-1"}, "option 'claimMinIdleMs' must be at least 0"),
        ({"stream": "a", "createGroup": "maybe"}, "option 'createGroup' must be true or false"),
        ({"stream": "a", "startId": "abc"}, "option 'startId' must be '-', '+' or a stream id"),
        ({"stream": "a", "startId": "5", "endId": "4"}, "option 'startId' (5) is after"),
        ({"stream": "a", "groupStartId": "x"}, "option 'groupStartId' must be '$' or a stream"),
        ({"stream": "a", "url": "http://h"}, "option 'url' must start with redis://"),
        ({"stream": "a", "protocol": "4"}, "option 'protocol' must be 2 or 3"),
        ({"stream": "a", "idempotence": "magic"}, "option 'idempotence' must be one of"),
        ({"stream": "a", "connectTimeout": "0"}, "option 'connectTimeout' must be positive"),
        ({"stream": "a", "consumerPrefix": ""}, None),
        ({"stream": "a", "grup": "g"}, "unknown option 'grup'; known options are:"),
    ],
)
def test_bad_options_are_named(options: dict[str, str], message: str | None) -> None:
    if message is None:  # an empty value means "not given": the default applies
        assert parse_options(options).consumer_prefix == "spark"
        return
    with pytest.raises(OptionError) as info:
        parse_options(options)
    assert str(info.value).startswith("redis-streams: ")
    assert message in str(info.value)


def test_unknown_option_message_lists_documented_spellings() -> None:
    with pytest.raises(OptionError) as info:
        parse_options({"stream": "a", "bogus": "1"})
    assert "maxEntriesPerTrigger" in str(info.value) and "claimMinIdleMs" in str(info.value)


def test_writing_needs_exactly_one_stream() -> None:
    with pytest.raises(OptionError, match="exactly one stream"):
        _ = parse_options({"streams": "a,b"}).stream


def test_every_option_is_documented_in_the_readme() -> None:
    from pathlib import Path

    import resplite.spark

    readme = (Path(resplite.spark.__file__).parent / "README.md").read_text().lower()
    missing = [name for name in OPTION_NAMES if f"`{name}`" not in readme and name != "path"]
    assert missing == []


def test_mask_url_leaves_password_free_urls_alone() -> None:
    assert mask_url("redis://h:1/0") == "redis://h:1/0"
    assert mask_url("redis://:pw@h/0") == "redis://:***@h/0"


def test_stream_ids_order_and_step() -> None:
    assert StreamId.parse("5-3") < StreamId.parse("6") < StreamId.parse("6-1")
    assert StreamId.parse(b"7") == StreamId(7, 0)
    assert StreamId(1, 2**64 - 1).next() == StreamId(2, 0)
    assert StreamId.from_int(StreamId(9, 4).as_int()) == StreamId(9, 4)
    assert parse_bound("-", upper=False) == MIN_ID and parse_bound("+", upper=True) == MAX_ID
    assert parse_bound("5", upper=True) == StreamId(5, 2**64 - 1)
    for bad in ("x", "1-", "-1", "1-2-3", str(2**64)):
        with pytest.raises(ValueError):
            StreamId.parse(bad)
