"""The ``redis-streams`` data source: Spark's entry point into the connector.

Spark builds one :class:`RedisStreamsDataSource` per query from the user's options, asks it for a
schema, and then for a batch or streaming reader or writer. Options are parsed and validated
here, once, on the driver, so a mistake fails the query before any task starts; the parsed,
frozen :class:`~resplite.spark.options.StreamsOptions` then travels with the readers and writers.

Example::

    from resplite.spark import register
    register(spark)
    df = (spark.read.format("redis-streams")
          .option("url", "redis://localhost:6379/0")
          .option("stream", "events")
          .load())
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource

from resplite.spark.connection import configure_logging
from resplite.spark.options import StreamsOptions, parse_options
from resplite.spark.schema import DEFAULT_SCHEMA_DDL, validate_schema

if TYPE_CHECKING:
    from pyspark.sql.datasource import (
        DataSourceReader,
        DataSourceStreamReader,
        DataSourceStreamWriter,
        DataSourceWriter,
    )
    from pyspark.sql.types import StructType

FORMAT_NAME = "redis-streams"


class RedisStreamsDataSource(DataSource):
    """Read and write Redis streams (resplite or Redis 7+) from Spark."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    @cached_property
    def parsed(self) -> StreamsOptions:
        parsed = parse_options(self.options)
        configure_logging(parsed.log_level)
        return parsed

    def schema(self) -> str:
        self.parsed  # noqa: B018 -- validate options before Spark plans anything
        return DEFAULT_SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        from resplite.spark.batch_reader import StreamsBatchReader

        validate_schema(schema)
        return StreamsBatchReader(self.parsed, schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        from resplite.spark.stream_reader import StreamsStreamReader

        validate_schema(schema)
        return StreamsStreamReader(self.parsed, schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from resplite.spark.writer import StreamsBatchWriter

        self._check_write(overwrite)
        return StreamsBatchWriter(self.parsed)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from resplite.spark.writer import StreamsStreamWriter

        self._check_write(overwrite)
        return StreamsStreamWriter(self.parsed)

    def _check_write(self, overwrite: bool) -> None:
        from resplite.spark.errors import OptionError

        if overwrite:
            raise OptionError("a stream can only be appended to; use mode('append')")
        self.parsed.stream  # noqa: B018 -- exactly one target stream
