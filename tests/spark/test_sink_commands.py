"""The sink's command shapes, checked against a recording stand-in for the server.

These tests pin the commands the connector sends for IDMP (Redis 8.6+, and resplite) and how
it chooses between IDMP and markers; test_streaming.py runs the IDMP sink end to end.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pyspark")

from resplite.spark.errors import OptionError
from resplite.spark.options import parse_options
from resplite.spark.writer import _Sink, default_marker_key


class Recorder:
    """Answers like a server that knows the given XADD argument tokens."""

    def __init__(self, tokens: set[str] | None) -> None:
        self.tokens = tokens
        self.sent: list[list[Any]] = []

    def command_arguments(self, name: str) -> set[str] | None:
        return self.tokens

    def pipeline(self, commands: Any) -> list[Any]:
        batch = [list(c) for c in commands]
        self.sent += batch
        return [b"1-1"] * len(batch)


def _sink(**options: str) -> _Sink:
    return _Sink(parse_options({"stream": "out", **options}))


@pytest.mark.parametrize(
    ("wanted", "tokens", "mode"),
    [
        ("auto", {"MAXLEN", "IDMP", "IDMPAUTO"}, "idmp"),
        ("auto", {"MAXLEN", "MINID"}, "markers"),
        ("auto", None, "markers"),  # COMMAND DOCS unavailable
        ("markers", {"IDMP"}, "markers"),
        ("idmp", {"IDMP"}, "idmp"),
    ],
)
def test_idempotence_mode_follows_the_servers_xadd(
    wanted: str, tokens: set[str] | None, mode: str
) -> None:
    sink = _sink(idempotent="true", idempotence=wanted)
    assert sink._mode(Recorder(tokens)) == mode  # type: ignore[arg-type]


def test_asking_for_idmp_on_an_older_server_is_refused() -> None:
    with pytest.raises(OptionError, match="server's XADD has no IDMP argument"):
        _sink(idempotent="true", idempotence="idmp")._mode(Recorder({"MAXLEN"}))  # type: ignore[arg-type]


def test_idmp_commands_carry_producer_and_row_before_trimming() -> None:
    server = Recorder({"IDMP"})
    sink = _sink(maxLen="1000")
    rows = [(["a", "1"], None), (["a", "2"], None)]
    sink._idmp(server, rows, "job:7:3:0", "job")  # type: ignore[arg-type]
    assert server.sent == [
        ["XADD", "out", "IDMP", "job:7:3:0", "0", "MAXLEN", "~", 1000, "*", "a", "1"],
        ["XADD", "out", "IDMP", "job:7:3:0", "1", "MAXLEN", "~", 1000, "*", "a", "2"],
    ]


def test_rows_from_a_stream_entry_are_named_by_that_entry() -> None:
    """Whichever query writes a source entry, it carries the same idempotent id, and no
    producer name holds more than 100 of them."""
    import pyarrow as pa

    from resplite.spark.writer import _chunks, _rows

    batch = pa.RecordBatch.from_pydict({
        "stream": ["in", "in", "in"],
        "id": ["1700000000000-0", "1700000000000-199", "bad"],
        "n": ["1", "2", "3"],
    })
    rows = [row for chunk in _chunks(_rows(iter([batch])), 100) for row in chunk]
    assert rows == [(["n", "1"], ("in", 1700000000000, 0)),
                    (["n", "2"], ("in", 1700000000000, 199)), (["n", "3"], None)]
    server = Recorder({"IDMP"})
    _sink()._idmp(server, rows, "job:7:3:0", "job")  # type: ignore[arg-type]
    assert [c[2:5] for c in server.sent] == [
        ["IDMP", "job@in:1700000000000:0", "0"],
        ["IDMP", "job@in:1700000000000:1", "199"],
        ["IDMP", "job:7:3:0", "2"],
    ]


@pytest.mark.parametrize(
    ("options", "trim"),
    [
        ({}, []),
        ({"maxLen": "10"}, ["MAXLEN", "~", 10]),
        ({"maxLen": "10", "approximateTrim": "false"}, ["MAXLEN", 10]),
        ({"minId": "1700000000000-0"}, ["MINID", "~", "1700000000000-0"]),
    ],
)
def test_plain_xadd_with_optional_trimming(options: dict[str, str], trim: list[Any]) -> None:
    server = Recorder(set())
    _sink(**options)._plain(server, [["f", "v"]])  # type: ignore[arg-type]
    assert server.sent == [["XADD", "out", *trim, "*", "f", "v"]]


def test_the_markers_hash_shares_the_streams_cluster_slot() -> None:
    from resplite.algorithms.keyslot import key_slot

    for stream in ("events", "orders:eu", "{tenant-7}events", "x{y"):
        marker = default_marker_key(stream)
        assert marker.endswith(":spark-writes")
        assert key_slot(marker.encode()) == key_slot(stream.encode()), stream
    assert default_marker_key("events") == "{events}:spark-writes"
    assert default_marker_key("{t}events") == "{t}events:spark-writes"
    assert default_marker_key("a{}b") == "a{}b:spark-writes"  # no tag can hold it
