"""The connector's options, parsed once into a frozen value.

Spark hands a data source a case-insensitive ``str -> str`` mapping. :func:`parse_options` turns it
into :class:`StreamsOptions` and rejects anything it cannot use (a missing stream, a number that
is not one, an unknown option) with an :class:`~resplite.spark.errors.OptionError` naming the
option, so mistakes fail the query before it touches the server. The value is immutable and
picklable: it travels inside partitions and writers to the executors.

The option names, defaults and meanings are documented in ``resplite/spark/README.md``; the
table there and :data:`OPTION_NAMES` must list the same options.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from resplite.spark.errors import OptionError
from resplite.spark.ids import StreamId, parse_bound

#: Every option the connector understands (lower-cased, as Spark compares them).
OPTION_NAMES: frozenset[str] = frozenset(
    {
        "url",
        "protocol",
        "connecttimeout",
        "stream",
        "streams",
        "path",
        "startid",
        "endid",
        "numpartitions",
        "pagesize",
        "group",
        "consumerprefix",
        "creategroup",
        "groupstartid",
        "mkstream",
        "claimminidlems",
        "maxentriespertrigger",
        "maxlen",
        "minid",
        "approximatetrim",
        "idempotent",
        "idempotence",
        "producerid",
        "markerkey",
        "writebatchsize",
        "loglevel",
    }
)

#: Options Spark itself may put into the mapping; they are not ours to judge.
SPARK_OWNED: frozenset[str] = frozenset({"checkpointlocation", "queryname", "__partition_columns"})

DEFAULT_URL = "redis://localhost:6379/0"
_ID_PATTERN = re.compile(r"^\d+(-\d+)?$")
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_IDEMPOTENCE = ("auto", "idmp", "markers")


@dataclass(frozen=True, slots=True)
class StreamsOptions:
    """Everything the reader and writer need, validated.

    ``streams`` is never empty. ``group`` is None when none was given (batch reads and writes
    do not need one). Numbers are already checked for range.
    """

    url: str = DEFAULT_URL
    protocol: int = 3
    connect_timeout: float = 5.0
    streams: tuple[str, ...] = ()
    start_id: str = "-"
    end_id: str = "+"
    num_partitions: int | None = None
    page_size: int = 5000
    group: str | None = None
    consumer_prefix: str = "spark"
    create_group: bool = False
    group_start_id: str = "0"
    mkstream: bool = False
    claim_min_idle_ms: int = 60_000
    max_entries_per_trigger: int | None = None
    maxlen: int | None = None
    minid: str | None = None
    approximate_trim: bool = True
    idempotent: bool = False
    idempotence: str = "auto"
    producer_id: str | None = None
    marker_key: str | None = None
    write_batch_size: int = 1000
    log_level: str = "INFO"

    @property
    def stream(self) -> str:
        """The single stream a writer targets."""
        if len(self.streams) != 1:
            raise OptionError(
                f"writing needs exactly one stream key in option 'stream', got {len(self.streams)}"
            )
        return self.streams[0]

    @property
    def safe_url(self) -> str:
        """The URL with any password masked, fit for messages and logs."""
        return mask_url(self.url)

    def require_group(self) -> str:
        if not self.group:
            raise OptionError("option 'group' is required to read a stream continuously")
        return self.group

    def replace(self, **changes: object) -> StreamsOptions:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def mask_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def parse_options(raw: Mapping[str, str]) -> StreamsOptions:
    """Validate Spark's option mapping and build the frozen options value."""
    opts = {str(k).lower(): str(v) for k, v in raw.items()}
    unknown = sorted(k for k in opts if k not in OPTION_NAMES and k not in SPARK_OWNED)
    if unknown:
        raise OptionError(
            f"unknown option {unknown[0]!r}; known options are: "
            + ", ".join(sorted(_DISPLAY_NAMES[n] for n in OPTION_NAMES if n != "path"))
        )
    reader = _Reader(opts)
    url = reader.text("url", DEFAULT_URL)
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise OptionError(
            f"option 'url' must start with redis://, rediss:// or unix://, got {mask_url(url)!r}"
        )
    start_id = reader.bound("startId", "-", upper=False)
    end_id = reader.bound("endId", "+", upper=True)
    if parse_bound(start_id, upper=False) > parse_bound(end_id, upper=True):
        raise OptionError(f"option 'startId' ({start_id}) is after option 'endId' ({end_id})")
    group_start = reader.text("groupStartId", "0")
    if group_start != "$" and not _ID_PATTERN.match(group_start):
        raise OptionError(
            f"option 'groupStartId' must be '$' or a stream id like 0 or 1700000000000-0, "
            f"got {group_start!r}"
        )
    minid = reader.optional_text("minId")
    if minid is not None and not _ID_PATTERN.match(minid):
        raise OptionError(f"option 'minId' must be a stream id, got {minid!r}")
    log_level = reader.text("logLevel", "INFO").upper()
    if log_level not in _LEVELS:
        raise OptionError(f"option 'logLevel' must be one of {', '.join(_LEVELS)}")
    idempotence = reader.text("idempotence", "auto").lower()
    if idempotence not in _IDEMPOTENCE:
        raise OptionError(f"option 'idempotence' must be one of {', '.join(_IDEMPOTENCE)}")
    protocol = reader.integer("protocol", 3, low=2)
    if protocol not in (2, 3):
        raise OptionError(f"option 'protocol' must be 2 or 3, got {protocol}")
    consumer_prefix = reader.text("consumerPrefix", "spark")
    if not consumer_prefix:
        raise OptionError("option 'consumerPrefix' must not be empty")
    return StreamsOptions(
        url=url,
        protocol=protocol,
        connect_timeout=reader.number("connectTimeout", 5.0),
        streams=_streams(reader),
        start_id=start_id,
        end_id=end_id,
        num_partitions=reader.optional_integer("numPartitions", low=1),
        page_size=reader.integer("pageSize", 5000, low=1),
        group=reader.optional_text("group"),
        consumer_prefix=consumer_prefix,
        create_group=reader.boolean("createGroup", False),
        group_start_id=group_start,
        mkstream=reader.boolean("mkstream", False),
        claim_min_idle_ms=reader.integer("claimMinIdleMs", 60_000, low=0),
        max_entries_per_trigger=reader.optional_integer("maxEntriesPerTrigger", low=1),
        maxlen=reader.optional_integer("maxLen", low=0),
        minid=minid,
        approximate_trim=reader.boolean("approximateTrim", True),
        idempotent=reader.boolean("idempotent", False),
        idempotence=idempotence,
        producer_id=reader.optional_text("producerId"),
        marker_key=reader.optional_text("markerKey"),
        write_batch_size=reader.integer("writeBatchSize", 1000, low=1),
        log_level=log_level,
    )


_DISPLAY_NAMES: dict[str, str] = {
    name.lower(): name
    for name in [
        *("url", "protocol", "connectTimeout", "stream", "streams", "path", "startId", "endId"),
        *("numPartitions", "pageSize", "group", "consumerPrefix", "createGroup", "groupStartId"),
        *("mkstream", "claimMinIdleMs", "maxEntriesPerTrigger", "maxLen", "minId"),
        *("approximateTrim", "idempotent", "idempotence", "producerId", "markerKey"),
        *("writeBatchSize", "logLevel"),
    ]
}


def _streams(reader: _Reader) -> tuple[str, ...]:
    single = reader.optional_text("stream")
    path = reader.optional_text("path")
    many = reader.optional_text("streams")
    given = [name for name, value in (("stream", single), ("streams", many)) if value]
    if single and path and single != path:
        raise OptionError("give the stream key either as option 'stream' or as the load() path")
    single = single or path
    if single and many:
        raise OptionError(f"give either option 'stream' or option 'streams', not both ({given})")
    if single:
        return (single,)
    if many:
        keys = tuple(k.strip() for k in many.split(","))
        if any(not k for k in keys):
            raise OptionError(f"option 'streams' has an empty key in {many!r}")
        if len(set(keys)) != len(keys):
            raise OptionError(f"option 'streams' names a key twice in {many!r}")
        return keys
    raise OptionError("option 'stream' (one key) or 'streams' (comma-separated keys) is required")


class _Reader:
    """Typed access to the lower-cased option mapping; errors use the documented spelling."""

    def __init__(self, opts: dict[str, str]) -> None:
        self._opts = opts

    def optional_text(self, name: str) -> str | None:
        value = self._opts.get(name.lower())
        return value if value not in (None, "") else None

    def text(self, name: str, default: str) -> str:
        value = self.optional_text(name)
        return default if value is None else value

    def optional_integer(self, name: str, *, low: int) -> int | None:
        value = self.optional_text(name)
        if value is None:
            return None
        try:
            number = int(value)
        except ValueError:
            raise OptionError(f"option {name!r} must be an integer, got {value!r}") from None
        if number < low:
            raise OptionError(f"option {name!r} must be at least {low}, got {number}")
        return number

    def integer(self, name: str, default: int, *, low: int) -> int:
        value = self.optional_integer(name, low=low)
        return default if value is None else value

    def number(self, name: str, default: float) -> float:
        value = self.optional_text(name)
        if value is None:
            return default
        try:
            number = float(value)
        except ValueError:
            raise OptionError(f"option {name!r} must be a number, got {value!r}") from None
        if not number > 0:
            raise OptionError(f"option {name!r} must be positive, got {value!r}")
        return number

    def boolean(self, name: str, default: bool) -> bool:
        value = self.optional_text(name)
        if value is None:
            return default
        lowered = value.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise OptionError(f"option {name!r} must be true or false, got {value!r}")

    def bound(self, name: str, default: str, *, upper: bool) -> str:
        value = self.text(name, default)
        try:
            parse_bound(value, upper=upper)
        except ValueError:
            raise OptionError(
                f"option {name!r} must be '-', '+' or a stream id like 1700000000000-0, "
                f"got {value!r}"
            ) from None
        return value


__all__ = ["OPTION_NAMES", "StreamId", "StreamsOptions", "mask_url", "parse_options"]
