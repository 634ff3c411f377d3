"""Entries to Arrow and rows to fields, without a Spark session (pyspark and pyarrow needed)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import pytest

pa = pytest.importorskip("pyarrow")
types = pytest.importorskip("pyspark.sql.types")

from pyspark.sql.pandas.types import to_arrow_schema  # noqa: E402

from resplite.spark.errors import EntryError, OptionError  # noqa: E402
from resplite.spark.schema import ArrowBuilder, default_schema, validate_schema  # noqa: E402
from resplite.spark.writer import _rows  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

ENTRIES = [
    [b"1700000000000-0", [b"user", b"ann", b"amount", b"12.5", b"ok", b"true"]],
    [b"1700000000000-1", [b"user", b"bob", b"ts", b"1700000000123"]],
    [b"1700000000005-7", [b"amount", b"-3", b"ts", b"2024-02-03T04:05:06", b"day", b"2024-02-03"]],
]


def _schema(*fields: tuple[str, object]) -> StructType:
    return types.StructType([types.StructField(n, t, True) for n, t in fields])


def test_default_layout_matches_sparks_arrow_schema() -> None:
    builder = ArrowBuilder(default_schema())
    batch = builder.build("events", ENTRIES)
    assert batch.schema.equals(to_arrow_schema(default_schema(), timezone="UTC"))
    rows = batch.to_pylist()
    assert [r["id"] for r in rows] == ["1700000000000-0", "1700000000000-1", "1700000000005-7"]
    assert [(r["ms"], r["seq"]) for r in rows] == [
        (1700000000000, 0),
        (1700000000000, 1),
        (1700000000005, 7),
    ]
    assert {r["stream"] for r in rows} == {"events"}
    assert rows[1]["fields"] == [("user", "bob"), ("ts", "1700000000123")]
    assert builder.empty().num_rows == 0


def test_typed_columns_are_parsed_from_fields_and_missing_fields_are_null() -> None:
    schema = _schema(
        ("id", types.StringType()),
        ("ms", types.TimestampType()),
        ("user", types.StringType()),
        ("amount", types.DoubleType()),
        ("ok", types.BooleanType()),
        ("ts", types.TimestampType()),
        ("day", types.DateType()),
    )
    batch = ArrowBuilder(schema).build("s", ENTRIES)
    assert batch.schema.equals(to_arrow_schema(schema, timezone="UTC"))
    rows = batch.to_pylist()
    utc = dt.UTC
    assert rows[0]["ms"] == dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=utc)
    assert [r["user"] for r in rows] == ["ann", "bob", None]
    assert [r["amount"] for r in rows] == [12.5, None, -3.0]
    assert [r["ok"] for r in rows] == [True, None, None]
    assert rows[1]["ts"] == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=utc)
    assert rows[2]["ts"] == dt.datetime(2024, 2, 3, 4, 5, 6, tzinfo=utc)
    assert rows[2]["day"] == dt.date(2024, 2, 3)


def test_malformed_value_names_field_entry_and_stream() -> None:
    schema = _schema(("amount", types.LongType()))
    with pytest.raises(EntryError) as info:
        ArrowBuilder(schema).build("payments", ENTRIES)
    message = str(info.value)
    assert "field 'amount' of entry 1700000000000-0 in stream 'payments'" in message
    assert "b'12.5'" in message


def test_non_utf8_field_value_names_the_entry() -> None:
    entries = [[b"5-0", [b"k", b"ok"]], [b"5-1", [b"k", b"\xff\xfe"]]]
    with pytest.raises(EntryError, match=r"entry 5-1 of stream 's' has a field value that is not"):
        ArrowBuilder(default_schema()).build("s", entries)
    binary = _schema(("fields", types.MapType(types.StringType(), types.BinaryType())))
    rows = ArrowBuilder(binary).build("s", entries).to_pylist()
    assert rows[1]["fields"] == [("k", b"\xff\xfe")]


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (("id", types.LongType()), "column 'id' holds the entry's id and must be a string"),
        (("seq", types.StringType()), "column 'seq' must be a bigint"),
        (("fields", types.StringType()), "column 'fields' must be map<string,string>"),
        (("tags", types.ArrayType(types.StringType())), "column 'tags' has type array<string>"),
    ],
)
def test_unusable_schemas_are_rejected_naming_the_column(
    field: tuple[str, object], message: str
) -> None:
    with pytest.raises(OptionError, match=message.replace("(", r"\(")):
        validate_schema(_schema(field))


def test_rows_become_field_lists_without_metadata_or_nulls() -> None:
    batch = pa.RecordBatch.from_pylist(
        [
            {"id": "1-0", "user": "ann", "n": 3, "x": 1.5, "fields": [("a", "1")]},
            {"id": "1-1", "user": None, "n": 4, "x": None, "fields": []},
        ],
        schema=pa.schema(
            [
                ("id", pa.string()),
                ("user", pa.string()),
                ("n", pa.int64()),
                ("x", pa.float64()),
                ("fields", pa.map_(pa.string(), pa.string())),
            ]
        ),
    )
    # Each row comes with its source entry (stream, ms, seq): the idempotent sink's key.
    assert list(_rows(iter([batch]))) == [
        (["user", "ann", "n", "3", "x", "1.5", "a", "1"], ("", 1, 0)),
        (["n", "4"], ("", 1, 1)),
    ]


def test_a_row_without_any_value_is_refused() -> None:
    batch = pa.RecordBatch.from_pylist([{"user": None}], schema=pa.schema([("user", pa.string())]))
    with pytest.raises(EntryError, match="row 0 of this task has no non-null column"):
        list(_rows(iter([batch])))
