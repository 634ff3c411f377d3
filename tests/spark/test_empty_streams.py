"""A pipeline's first run: reading a stream that is empty, or does not exist yet.

Batch reads give no rows (a missing key is logged, not an error). Streaming reads run no batch
until entries arrive and then deliver them; with ``createGroup`` a stream that does not exist yet
is waited for, its group created once a producer makes it.
"""

from __future__ import annotations

from typing import Any

import pytest
from spark_helpers import FORMAT, pending_count, produce, start_stream

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _batch(spark: Any, backend: Any, key: str) -> Any:
    return spark.read.format(FORMAT).option("url", backend.url).option("stream", key).load()


def test_batch_read_of_a_missing_stream_has_no_rows(spark: Any, backend: Any) -> None:
    df = _batch(spark, backend, backend.key("never-written"))
    assert df.collect() == []
    assert "id" in df.columns  # the schema is there all the same


def test_batch_read_of_an_empty_stream_has_no_rows(spark: Any, backend: Any) -> None:
    client = backend.client()
    key = backend.key("emptied")
    produce(client, key, 3)
    client.xtrim(key, maxlen=0)
    assert client.xlen(key) == 0 and client.exists(key) == 1
    assert _batch(spark, backend, key).collect() == []
    # With another stream that has entries, only its rows come back.
    other = backend.key("full")
    ids = produce(client, other, 5)
    both = (spark.read.format(FORMAT).option("url", backend.url)
            .option("streams", f"{key},{other}").load())
    assert sorted(r.id for r in both.select("id").collect()) == sorted(ids)


def _stream_query(spark: Any, backend: Any, key: str, name: str, **options: str) -> Any:
    reader = (spark.readStream.format(FORMAT).option("url", backend.url).option("stream", key)
              .option("group", "g"))
    for option, value in options.items():
        reader = reader.option(option, value)
    return start_stream(reader.load().select("id").writeStream.format("memory").queryName(name))


def _rows(spark: Any, name: str) -> list[str]:
    return sorted(r.id for r in spark.sql(f"select id from {name}").collect())


def test_streaming_read_of_an_empty_stream_waits_for_entries(spark: Any, backend: Any) -> None:
    client = backend.client()
    key = backend.key("quiet")
    client.xgroup_create(key, "g", "0", mkstream=True)
    name = f"quiet_{backend.name}"
    query = _stream_query(spark, backend, key, name)
    try:
        query.processAllAvailable()
        assert _rows(spark, name) == []
        assert all(p["numInputRows"] == 0 for p in query.recentProgress)
        ids = produce(client, key, 7)
        query.processAllAvailable()
        assert _rows(spark, name) == sorted(ids)
    finally:
        query.stop()
    assert query.exception() is None


def test_streaming_read_waits_for_a_stream_that_does_not_exist_yet(
    spark: Any, backend: Any
) -> None:
    client = backend.client()
    key = backend.key("later")
    name = f"later_{backend.name}"
    query = _stream_query(spark, backend, key, name, createGroup="true")
    try:
        query.processAllAvailable()
        assert _rows(spark, name) == [] and client.exists(key) == 0
        ids = produce(client, key, 4)  # the first producer creates the stream
        query.processAllAvailable()
        query.processAllAvailable()  # the group is created, then its batch runs
        assert _rows(spark, name) == sorted(ids)
    finally:
        query.stop()
    assert query.exception() is None
    assert pending_count(client, key, "g") in (0, 4)  # the last batch is acked by the next
