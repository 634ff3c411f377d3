"""Row layout: the default schema, user schemas, and turning raw stream entries into Arrow.

The default schema is ``stream string, id string, ms bigint, seq bigint, fields
map<string,string>``. A user schema may use any of those five names as metadata columns (same
meaning, ``ms`` may also be a timestamp and ``fields`` may map to binary) and adds typed columns
that are filled from the entry field of the same name: a missing field gives null, a value that
does not parse fails the read with an :class:`~resplite.spark.errors.EntryError` naming the
stream, entry id, field and value.

Entries arrive as the server sent them (``[id, [name, value, name, value, ...]]`` with bytes
everywhere, or ``[id, None]`` for an entry deleted while pending). :class:`ArrowBuilder` converts a
page of them into one ``pyarrow.RecordBatch`` whose schema equals Spark's Arrow form of the
Spark schema, which is what Spark checks before accepting batches from ``read()``. The default
layout is converted column-wise with Arrow kernels; per-value Python code runs only for typed
columns and to locate the culprit once a vectorised conversion has failed.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from resplite.spark.errors import EntryError, OptionError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import DataType, StructType

DEFAULT_SCHEMA_DDL = "stream string, id string, ms bigint, seq bigint, fields map<string,string>"
METADATA_COLUMNS = ("stream", "id", "ms", "seq", "fields")

Entry = Sequence[Any]  # [id: bytes, fields: list[bytes] | None]


def default_schema() -> StructType:
    from pyspark.sql.types import LongType, MapType, StringType, StructField, StructType

    return StructType(
        [
            StructField("stream", StringType(), True),
            StructField("id", StringType(), True),
            StructField("ms", LongType(), True),
            StructField("seq", LongType(), True),
            StructField("fields", MapType(StringType(), StringType(), True), True),
        ]
    )


def validate_schema(schema: StructType) -> None:
    """Reject column types the connector cannot fill, naming the column."""
    from pyspark.sql.types import BinaryType, LongType, MapType, StringType, TimestampType

    for field in schema.fields:
        name, kind = field.name, field.dataType
        if name in ("stream", "id") and not isinstance(kind, StringType):
            raise OptionError(f"column {name!r} holds the entry's {name} and must be a string")
        elif name == "ms" and not isinstance(kind, LongType | TimestampType):
            raise OptionError("column 'ms' must be a bigint or a timestamp")
        elif name == "seq" and not isinstance(kind, LongType):
            raise OptionError("column 'seq' must be a bigint")
        elif name == "fields" and not (
            isinstance(kind, MapType)
            and isinstance(kind.keyType, StringType)
            and isinstance(kind.valueType, StringType | BinaryType)
        ):
            raise OptionError("column 'fields' must be map<string,string> or map<string,binary>")
        elif name not in METADATA_COLUMNS:
            _value_parser(kind, name)


class ArrowBuilder:
    """Converts pages of raw entries of one stream into record batches of a fixed schema."""

    def __init__(self, schema: StructType) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        validate_schema(schema)
        self.schema = schema
        self.arrow_schema: pa.Schema = to_arrow_schema(schema, timezone="UTC")
        self._typed = [
            (f.name, _value_parser(f.dataType, f.name))
            for f in schema.fields
            if f.name not in METADATA_COLUMNS
        ]

    def empty(self) -> pa.RecordBatch:
        import pyarrow as pa

        return pa.RecordBatch.from_pylist([], schema=self.arrow_schema)

    def build(self, stream: str, entries: Sequence[Entry]) -> pa.RecordBatch:
        """One batch for ``entries`` (all of ``stream``); deleted entries must be dropped first."""
        import pyarrow as pa

        ids = [e[0] for e in entries]
        field_lists = [e[1] for e in entries]
        columns: list[pa.Array] = []
        id_array: pa.Array | None = None
        ms_seq: tuple[pa.Array, pa.Array] | None = None
        records: list[dict[bytes, bytes]] | None = None
        for index, field in enumerate(self.schema.fields):
            target = self.arrow_schema.field(index).type
            name = field.name
            if name == "stream":
                columns.append(pa.array([stream] * len(ids), target))
            elif name == "id":
                id_array = id_array if id_array is not None else pa.array(ids, pa.binary())
                columns.append(id_array.cast(target))
            elif name in ("ms", "seq"):
                if id_array is None:
                    id_array = pa.array(ids, pa.binary())
                if ms_seq is None:
                    ms_seq = _split_ids(id_array)
                column = ms_seq[0] if name == "ms" else ms_seq[1]
                if pa.types.is_timestamp(target):
                    column = _ms_to_timestamp(column, target)
                columns.append(column)
            elif name == "fields":
                columns.append(_fields_map(stream, ids, field_lists, target))
            else:
                if records is None:
                    records = [dict(zip(f[0::2], f[1::2], strict=True)) for f in field_lists]
                parser = dict(self._typed)[name]
                columns.append(_typed_column(stream, ids, records, name, parser, target))
        return pa.RecordBatch.from_arrays(columns, schema=self.arrow_schema)


def _split_ids(id_array: pa.Array) -> tuple[pa.Array, pa.Array]:
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = pc.split_pattern(id_array, b"-")
    ms = pc.cast(pc.list_element(parts, 0).cast(pa.string()), pa.int64())
    seq = pc.cast(pc.list_element(parts, 1).cast(pa.string()), pa.int64())
    return ms, seq


def _ms_to_timestamp(ms: pa.Array, target: pa.DataType) -> pa.Array:
    import pyarrow as pa
    import pyarrow.compute as pc

    micros = pc.multiply(ms, pa.scalar(1000, pa.int64()))
    return micros.cast(target)


def _fields_map(
    stream: str, ids: Sequence[bytes], field_lists: Sequence[Sequence[bytes]], target: Any
) -> pa.Array:
    import pyarrow as pa

    lengths = [len(f) >> 1 for f in field_lists]
    flat = list(itertools.chain.from_iterable(field_lists))
    offsets = pa.array(itertools.accumulate(lengths, initial=0), pa.int32())
    keys = _utf8(pa.array(flat[0::2], pa.binary()), stream, ids, field_lists, "a field name")
    values_binary = pa.array(flat[1::2], pa.binary())
    if pa.types.is_string(target.item_type):
        values = _utf8(values_binary, stream, ids, field_lists, "a field value")
    else:
        values = values_binary
    return pa.MapArray.from_arrays(offsets, keys, values, type=target)


def _utf8(
    array: pa.Array,
    stream: str,
    ids: Sequence[bytes],
    field_lists: Sequence[Sequence[bytes]],
    what: str,
) -> pa.Array:
    import pyarrow as pa

    try:
        return array.cast(pa.string())
    except pa.ArrowInvalid:
        for entry_id, fields in zip(ids, field_lists, strict=True):
            for position, item in enumerate(fields):
                is_name = position % 2 == 0
                if (what == "a field name") != is_name:
                    continue
                try:
                    item.decode("utf-8")
                except UnicodeDecodeError:
                    raise EntryError(
                        f"entry {entry_id.decode()} of stream {stream!r} has {what} that is not "
                        f"UTF-8 ({item[:40]!r}); read it with a map<string,binary> 'fields' column"
                    ) from None
        raise


def _typed_column(
    stream: str,
    ids: Sequence[bytes],
    records: Sequence[dict[bytes, bytes]],
    name: str,
    parser: Callable[[bytes], Any],
    target: Any,
) -> pa.Array:
    import pyarrow as pa

    key = name.encode()
    values: list[Any] = []
    for entry_id, record in zip(ids, records, strict=True):
        raw = record.get(key)
        if raw is None:
            values.append(None)
            continue
        try:
            values.append(parser(raw))
        except (ValueError, ArithmeticError):
            raise EntryError(
                f"field {name!r} of entry {entry_id.decode()} in stream {stream!r}: cannot read "
                f"{raw[:60]!r} as {target}"
            ) from None
    try:
        return pa.array(values, target)
    except (pa.ArrowInvalid, OverflowError) as exc:
        raise EntryError(
            f"field {name!r} in stream {stream!r}: a value does not fit {target} ({exc})"
        ) from None


def _value_parser(kind: DataType, column: str) -> Callable[[bytes], Any]:
    """The per-value conversion for one typed column, or an OptionError naming it."""
    from pyspark.sql import types as t

    if isinstance(kind, t.StringType):
        return _as_text
    if isinstance(kind, t.BinaryType):
        return bytes
    if isinstance(kind, t.LongType | t.IntegerType | t.ShortType | t.ByteType):
        return _as_int
    if isinstance(kind, t.DoubleType | t.FloatType):
        return _as_float
    if isinstance(kind, t.DecimalType):
        return _as_decimal
    if isinstance(kind, t.BooleanType):
        return _as_bool
    if isinstance(kind, t.TimestampType | t.TimestampNTZType):
        return _as_timestamp
    if isinstance(kind, t.DateType):
        return _as_date
    raise OptionError(
        f"column {column!r} has type {kind.simpleString()}, which cannot be filled from a stream "
        "field; use string, binary, an integer, float, double, decimal, boolean, timestamp or date"
    )


def _as_text(raw: bytes) -> str:
    return raw.decode("utf-8")


def _as_int(raw: bytes) -> int:
    return int(raw)


def _as_float(raw: bytes) -> float:
    return float(raw)


def _as_decimal(raw: bytes) -> Any:
    import decimal

    try:
        return decimal.Decimal(raw.decode("ascii"))
    except (decimal.InvalidOperation, UnicodeDecodeError):
        raise ValueError(raw) from None


_TRUE = frozenset({b"1", b"true", b"t", b"yes", b"y"})
_FALSE = frozenset({b"0", b"false", b"f", b"no", b"n"})


def _as_bool(raw: bytes) -> bool:
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(raw)


def _as_timestamp(raw: bytes) -> dt.datetime:
    """Epoch milliseconds (digits) or ISO 8601; a naive ISO time is taken as UTC."""
    text = raw.decode("ascii").strip()
    if text.lstrip("-").isdigit():
        return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=int(text))
    value = dt.datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _as_date(raw: bytes) -> dt.date:
    return dt.date.fromisoformat(raw.decode("ascii").strip())
