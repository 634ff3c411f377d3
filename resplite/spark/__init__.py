"""PySpark connector: Redis streams as a Spark source and sink (format ``redis-streams``).

Works against resplite and any Redis 7.0 or later, through redis-py and the public protocol
only. Install with ``pip install resplite[spark]``; register once per Spark session::

    from resplite.spark import register
    register(spark)
    spark.read.format("redis-streams").option("stream", "events").load()

See ``resplite/spark/README.md`` for options, schema and the delivery guarantee.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from resplite.spark.errors import EntryError, OptionError, ServerError, StreamsConnectorError
from resplite.spark.options import StreamsOptions, parse_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FORMAT_NAME = "redis-streams"

__all__ = [
    "FORMAT_NAME",
    "EntryError",
    "OptionError",
    "RedisStreamsDataSource",
    "ServerError",
    "StreamsConnectorError",
    "StreamsOptions",
    "parse_options",
    "register",
]


def register(spark: SparkSession) -> None:
    """Make ``format("redis-streams")`` available in ``spark``."""
    from resplite.spark.source import RedisStreamsDataSource

    spark.dataSource.register(RedisStreamsDataSource)


def __getattr__(name: str) -> Any:
    # The data source class imports pyspark; keep ``import resplite.spark`` light without it.
    if name == "RedisStreamsDataSource":
        from resplite.spark.source import RedisStreamsDataSource

        return RedisStreamsDataSource
    raise AttributeError(name)
