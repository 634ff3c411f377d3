"""The request reader: framing, Redis's exact protocol errors and limits, and hand-overs.

Every case runs through the real reader (the C framer where it is built, plus the slow
parser), through the reader whose fast path is hiredis, and through a reader that uses
neither, fed whole, byte by byte and split at every offset: all of them must return the same
requests and the same error. The expected values are the
behaviour of a real redis-server 7.0 (tests/compat/test_protocol_errors.py checks the same
inputs against one).
"""

from __future__ import annotations

import random
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resplite.protocol.errors import ProtocolError
from resplite.protocol.reader import (
    DEFAULT_MAX_BULK_LEN,
    NEED_DATA,
    RequestReader,
    split_inline,
    string2ll,
)

K64 = 64 * 1024


def slow_reader(max_bulk_len: int = DEFAULT_MAX_BULK_LEN) -> RequestReader:
    """The reference: the same reader with the hiredis fast path switched off."""
    return RequestReader(max_bulk_len, use_hiredis=False)


def hiredis_reader(max_bulk_len: int = DEFAULT_MAX_BULK_LEN) -> RequestReader:
    """The reader whose fast path is hiredis (the C framer left out where it is built)."""
    return RequestReader(max_bulk_len, native=False)


READERS: list[Callable[..., RequestReader]] = [RequestReader, hiredis_reader, slow_reader]


def enc(*args: bytes) -> bytes:
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


Result = tuple[list[list[bytes]], str | None]


def collect(reader: RequestReader, chunks: Iterable[bytes]) -> Result:
    """Feed chunks, draining requests after each; stop at the first protocol error."""
    out: list[list[bytes]] = []
    for chunk in chunks:
        reader.feed(chunk)
        try:
            while (req := reader.get()) is not NEED_DATA:
                assert isinstance(req, list) and req, req
                out.append(req)
        except ProtocolError as exc:
            return out, exc.message
    return out, None


def byte_by_byte(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def all_ways(data: bytes, *, splits: bool = True, **limits: object) -> list[Result]:
    """Results of every reader kind, fed whole, byte by byte and cut at each offset."""

    def make(cls: Callable[..., RequestReader]) -> RequestReader:
        reader = cls()
        for name, value in limits.items():
            setattr(reader, name, value)
        return reader

    results = []
    for cls in READERS:
        results.append(collect(make(cls), [data]))
        results.append(collect(make(cls), byte_by_byte(data)))
        if splits:
            for cut in range(1, len(data)):
                results.append(collect(make(cls), [data[:cut], data[cut:]]))
    return results


def assert_all_ways(data: bytes, expected: Result, **limits: object) -> None:
    splits = len(data) < 4096
    for got in all_ways(data, splits=splits, **limits):
        assert got == expected


# -- well-formed requests ---------------------------------------------------------------------

VALID: list[tuple[str, bytes, list[list[bytes]]]] = [
    ("multibulk", enc(b"SET", b"key", b"value"), [[b"SET", b"key", b"value"]]),
    ("empty bulk", enc(b"SET", b"k", b""), [[b"SET", b"k", b""]]),
    ("binary payload", enc(b"SET", b"k", b"\r\n\x00*1\r\n$3\r\n\xff"),
     [[b"SET", b"k", b"\r\n\x00*1\r\n$3\r\n\xff"]]),
    ("many args", enc(*[b"%d" % i for i in range(120)]), [[b"%d" % i for i in range(120)]]),
    ("bulk beyond the tables", enc(b"SET", b"k", b"v" * 10000), [[b"SET", b"k", b"v" * 10000]]),
    ("count beyond the tables", enc(*[b"a"] * 1500), [[b"a"] * 1500]),
    ("inline crlf", b"PING\r\n", [[b"PING"]]),
    ("inline lf only", b"PING\n", [[b"PING"]]),
    ("inline blanks", b"  SET\t a   b \r\n", [[b"SET", b"a", b"b"]]),
    ("inline cr inside", b"ECHO a\rb\r\n", [[b"ECHO", b"a", b"b"]]),
    ("inline cr before crlf", b"ECHO x\r\r\n", [[b"ECHO", b"x"]]),
    ("inline double quotes", b'SET a "x\\x41y \\n\\"z"\r\n', [[b"SET", b"a", b'xAy \n"z']]),
    ("inline bad hex is literal", b'ECHO "\\x4g\\z"\r\n', [[b"ECHO", b"x4gz"]]),
    ("inline escapes", b'ECHO "\\a\\b\\t\\r\\\\"\r\n', [[b"ECHO", b"\x07\x08\t\r\\"]]),
    ("inline single quotes", b"ECHO 'a\\'b\\n'\r\n", [[b"ECHO", b"a'b\\n"]]),
    ("inline empty quotes", b'ECHO ""\r\n', [[b"ECHO", b""]]),
    ("inline quote mid word", b'ECHO a"b c"\r\n', [[b"ECHO", b"ab c"]]),
    ("inline quote then tab", b'ECHO "a"\tb\r\n', [[b"ECHO", b"a", b"b"]]),
    ("inline quote then vtab", b'ECHO "a"\x0b\r\n', [[b"ECHO", b"a"]]),
    ("inline vtab inside word", b"ECHO a\x0bb\r\n", [[b"ECHO", b"a\x0bb"]]),
    ("inline vtab/ff as leading blank", b"\x0bECHO\x0cb\r\n", [[b"ECHO\x0cb"]]),
    ("inline high bytes", b"ECHO \xe9\xff\r\n", [[b"ECHO", b"\xe9\xff"]]),
    ("inline star not first", b" *1\r\n", [[b"*1"]]),
    ("skipped empty lines", b"\r\n\n   \r\nPING\r\n", [[b"PING"]]),
    ("skipped *0", b"*0\r\nPING\r\n", [[b"PING"]]),
    ("skipped *-1", b"*-1\r\n" + enc(b"PING"), [[b"PING"]]),
    ("skipped *-5", b"*-5\r\nPING\r\n", [[b"PING"]]),
    ("skipped most negative", b"*-9223372036854775808\r\nPING\r\n", [[b"PING"]]),
    ("header cr plus any byte", b"*1\rx$4\rxPING\r\n", [[b"PING"]]),
    ("payload followed by any two bytes", b"*1\r\n$4\r\nPINGxy" + enc(b"PING"),
     [[b"PING"], [b"PING"]]),
    ("mixed inline and multibulk",
     enc(b"SET", b"a", b"1") + b"GET a\r\n" + enc(b"GET", b"a") + b"\n" + b"*0\r\n" + b"PING\n",
     [[b"SET", b"a", b"1"], [b"GET", b"a"], [b"GET", b"a"], [b"PING"]]),
]


@pytest.mark.parametrize(("data", "expected"), [c[1:] for c in VALID], ids=[c[0] for c in VALID])
def test_valid_request_every_way(data: bytes, expected: list[list[bytes]]) -> None:
    assert_all_ways(data, (expected, None))


def test_valid_requests_pipelined_in_one_chunk() -> None:
    data = b"".join(c[1] for c in VALID)
    expected = [req for c in VALID for req in c[2]]
    for cls in READERS:
        assert collect(cls(), [data]) == (expected, None)
        assert collect(cls(), byte_by_byte(data)) == (expected, None)
    rng = random.Random(7)
    for _ in range(50):
        cuts = sorted(rng.sample(range(1, len(data)), 8))
        chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert collect(RequestReader(), chunks) == (expected, None)


def test_feed_accepts_bytearray_and_memoryview() -> None:
    reader = RequestReader()
    data = enc(b"PING") + b"ECHO x\r\n"
    reader.feed(bytearray(data[:5]))
    reader.feed(memoryview(data)[5:])
    assert collect(reader, [b""]) == ([[b"PING"], [b"ECHO", b"x"]], None)


def test_returned_arguments_are_independent_bytes() -> None:
    reader = RequestReader()
    reader.feed(enc(b"SET", b"k", b"v1")[:-3])
    reader.feed(b"1\r\n" + enc(b"GET", b"k"))
    first, second = reader.get(), reader.get()
    assert first == [b"SET", b"k", b"v1"] and second == [b"GET", b"k"]
    assert all(type(a) is bytes for a in [*first, *second])


# -- waiting for more data -------------------------------------------------------------------

WAITING: list[tuple[str, bytes]] = [
    ("bulk without its trailer", b"*1\r\n$4\r\nPING"),
    ("header cr without next byte", b"*1\r"),
    ("count line unfinished", b"*12"),
    ("bulk header unfinished", b"*1\r\n$4"),
    ("huge count is only a header", b"*2147483647\r\n"),
    ("bulk at the limit", b"*1\r\n$536870912\r\n"),
    ("nul hides the inline line end", b"ECHO a\x00b\r\nPING\r\n"),
    ("nul hides the count line end", b"*1\x00\r\n$4\r\nPING\r\n"),
    ("nul hides the bulk line end", b"*1\r\n$4\x00\r\nPING\r\n"),
    ("inline of exactly 64 KB", b"x" * K64),
    ("count line of exactly 64 KB", b"*" + b"1" * (K64 - 1)),
    ("bulk line of exactly 64 KB", b"*1\r\n$" + b"1" * (K64 - 1)),
]


@pytest.mark.parametrize("data", [c[1] for c in WAITING], ids=[c[0] for c in WAITING])
def test_incomplete_request_waits(data: bytes) -> None:
    for cls in READERS:
        for chunks in ([data], byte_by_byte(data) if len(data) < 4096 else [data[:9], data[9:]]):
            assert collect(cls(), chunks) == ([], None)


def test_request_completes_once_its_last_byte_arrives() -> None:
    data = enc(b"SET", b"key", b"x" * 100)
    for cls in READERS:
        reader = cls()
        for i in range(len(data) - 1):
            reader.feed(data[i : i + 1])
            assert reader.get() is NEED_DATA
        reader.feed(data[-1:])
        assert reader.get() == [b"SET", b"key", b"x" * 100]
        assert reader.get() is NEED_DATA


# -- protocol errors -------------------------------------------------------------------------

MB = "Protocol error: invalid multibulk length"
BL = "Protocol error: invalid bulk length"
QUOTES = "Protocol error: unbalanced quotes in request"

ERRORS: list[tuple[str, bytes, list[list[bytes]], str]] = [
    ("count not a number", b"*abc\r\n", [], MB),
    ("count empty", b"*\r\n", [], MB),
    ("count above INT_MAX", b"*2147483648\r\n", [], MB),
    ("count leading zero", b"*01\r\n$4\r\nPING\r\n", [], MB),
    ("count plus sign", b"*+1\r\n$4\r\nPING\r\n", [], MB),
    ("count minus zero", b"*-0\r\n", [], MB),
    ("count overflows 64 bits", b"*" + b"9" * 19 + b"\r\n", [], MB),
    ("count below 64 bits", b"*-9223372036854775809\r\n", [], MB),
    ("count line ends at the first cr", b"*1\nPING\r\n", [], MB),
    ("bulk not a number", b"*1\r\n$x\r\n", [], BL),
    ("bulk empty", b"*1\r\n$\r\n", [], BL),
    ("bulk leading zero", b"*1\r\n$04\r\nPING\r\n", [], BL),
    ("bulk plus sign", b"*1\r\n$+4\r\nPING\r\n", [], BL),
    ("bulk negative", b"*1\r\n$-1\r\n", [], BL),
    ("bulk minus zero", b"*1\r\n$-0\r\n", [], BL),
    ("bulk above proto-max-bulk-len", b"*1\r\n$536870913\r\n", [], BL),
    ("bulk of 21 digits", b"*1\r\n$" + b"1" * 21 + b"\r\n", [], BL),
    ("bulk line ends at the first cr", b"*1\r\n$4\nPING\r\n", [], BL),
    ("integer element", b"*1\r\n:1\r\n", [], "Protocol error: expected '$', got ':'"),
    ("status element", b"*1\r\n+PING\r\n", [], "Protocol error: expected '$', got '+'"),
    ("nested array", b"*2\r\n$4\r\nECHO\r\n*1\r\n$1\r\na\r\n", [],
     "Protocol error: expected '$', got '*'"),
    ("verbatim element", b"*2\r\n$4\r\nECHO\r\n=5\r\ntxt:a\r\n", [],
     "Protocol error: expected '$', got '='"),
    ("resp3 null element", b"*1\r\n_\r\n", [], "Protocol error: expected '$', got '_'"),
    ("cr shown as a space", b"*1\r\n\r\n", [], "Protocol error: expected '$', got ' '"),
    ("lf shown as a space", b"*1\r\n\nx\r\n", [], "Protocol error: expected '$', got ' '"),
    ("raw byte echoed", b"*1\r\n\xff\r\n", [], "Protocol error: expected '$', got '\xff'"),
    ("inline over 64 KB", b"x" * (K64 + 1), [], "Protocol error: too big inline request"),
    ("nul-hidden inline over 64 KB", b"ECHO a\x00b\r\n" + b"y" * K64, [],
     "Protocol error: too big inline request"),
    ("count line over 64 KB", b"*" + b"1" * K64, [], "Protocol error: too big mbulk count string"),
    ("bulk line over 64 KB", b"*1\r\n$" + b"1" * K64, [],
     "Protocol error: too big bulk count string"),
    ("nul-hidden bulk line over 64 KB", b"*1\r\n$4\x00\r\n" + b"z" * K64, [],
     "Protocol error: too big bulk count string"),
    ("unterminated double quote", b'ECHO "abc\r\n', [], QUOTES),
    ("text after closing double quote", b'ECHO "abc"d\r\n', [], QUOTES),
    ("text after closing single quote", b"ECHO 'a'x\r\n", [], QUOTES),
    ("escaped closing quote", b'ECHO "a\\"\r\n', [], QUOTES),
    ("adjacent quoted words", b'ECHO "a""b"\r\n', [], QUOTES),
    ("requests before the error run first",
     b"PING\r\n" + enc(b"ECHO", b"x") + b"*x\r\n" + enc(b"PING"), [[b"PING"], [b"ECHO", b"x"]], MB),
    ("error after a skipped request", b"*0\r\n\r\n*1\r\n$-1\r\n", [], BL),
]


@pytest.mark.parametrize(("data", "before", "message"), [c[1:] for c in ERRORS],
                         ids=[c[0] for c in ERRORS])
def test_protocol_error_every_way(data: bytes, before: list[list[bytes]], message: str) -> None:
    assert_all_ways(data, (before, message))


def test_error_reply_bytes_carry_the_raw_byte() -> None:
    reader = RequestReader()
    reader.feed(b"*1\r\n\xff\r\n")
    with pytest.raises(ProtocolError) as info:
        reader.get()
    assert info.value.reply == b"-ERR Protocol error: expected '$', got '\xff'\r\n"


def test_error_is_sticky_and_later_input_is_ignored() -> None:
    for cls in READERS:
        reader = cls()
        reader.feed(b"PING\r\n*x\r\n")
        assert reader.get() == [b"PING"]
        for _ in range(3):
            with pytest.raises(ProtocolError, match="invalid multibulk length"):
                reader.get()
            reader.feed(enc(b"PING"))


def test_huge_bulk_header_is_refused_before_any_payload() -> None:
    for cls in READERS:
        reader = cls()
        reader.feed(enc(b"PING") + b"*2\r\n$3\r\nSET\r\n$999999999999\r\n")
        assert reader.get() == [b"PING"]
        with pytest.raises(ProtocolError, match="invalid bulk length"):
            reader.get()


# -- limits ----------------------------------------------------------------------------------

UNAUTH_MB = "Protocol error: unauthenticated multibulk length"
UNAUTH_BL = "Protocol error: unauthenticated bulk length"


@pytest.mark.parametrize(("data", "expected"), [
    (enc(*[b"a"] * 10), ([[b"a"] * 10], None)),
    (enc(*[b"a"] * 11), ([], UNAUTH_MB)),
    (b"*11\r\n", ([], UNAUTH_MB)),
    (b"*-5\r\nPING\r\n", ([[b"PING"]], None)),
    (b"*x\r\n", ([], MB)),
    (enc(b"ECHO", b"v" * 16384), ([[b"ECHO", b"v" * 16384]], None)),
    (b"*2\r\n$4\r\nECHO\r\n$16385\r\n", ([], UNAUTH_BL)),
    (b"*1\r\n$-1\r\n", ([], BL)),
    (b"PING" + b" a" * 20 + b"\r\n", ([[b"PING"] + [b"a"] * 20], None)),  # inline: no limit
], ids=["10 args", "11 args", "11 args header only", "negative count skipped", "bad count first",
        "bulk of 16384", "bulk of 16385", "bad bulk first", "inline unlimited"])
def test_unauthenticated_limits(data: bytes, expected: Result) -> None:
    assert_all_ways(data, expected, authenticated=False)


def test_authenticated_again_lifts_the_limits_for_the_next_request() -> None:
    """AUTH runs before the next request is parsed, even when both came in one chunk."""
    data = enc(b"AUTH", b"pw") + enc(*[b"x"] * 12) + enc(b"ECHO", b"y" * 20000)
    for cls in READERS:
        for chunks in ([data], byte_by_byte(data)):
            reader = cls()
            reader.authenticated = False
            out = []
            for chunk in chunks:
                reader.feed(chunk)
                while (req := reader.get()) is not NEED_DATA:
                    out.append(req)
                    if req[0] == b"AUTH":  # type: ignore[index]
                        reader.authenticated = True
            assert out == [[b"AUTH", b"pw"], [b"x"] * 12, [b"ECHO", b"y" * 20000]]


def test_max_bulk_len_changes_between_requests() -> None:
    data = enc(b"SET", b"k", b"12345") + enc(b"SET", b"k", b"123456") + enc(b"GET", b"k")
    for cls in READERS:
        reader = cls(max_bulk_len=5)
        reader.feed(data)
        assert reader.get() == [b"SET", b"k", b"12345"]
        with pytest.raises(ProtocolError, match="invalid bulk length"):
            reader.get()
        reader = cls(max_bulk_len=5)
        reader.feed(data)
        assert reader.get() == [b"SET", b"k", b"12345"]
        reader.max_bulk_len = 6
        assert reader.get() == [b"SET", b"k", b"123456"]
        reader.max_bulk_len = 0
        with pytest.raises(ProtocolError, match="invalid bulk length"):
            reader.get()


def test_max_bulk_len_is_not_rechecked_for_a_header_already_read() -> None:
    for cls in READERS:
        reader = cls()
        reader.feed(b"*2\r\n$4\r\nECHO\r\n$10\r\n01234")
        assert reader.get() is NEED_DATA
        reader.max_bulk_len = 3
        reader.feed(b"56789\r\n")
        assert reader.get() == [b"ECHO", b"0123456789"]
        reader.feed(enc(b"ECHO", b"abcd"))
        with pytest.raises(ProtocolError, match="invalid bulk length"):
            reader.get()


def test_limits_are_properties() -> None:
    reader = RequestReader(max_bulk_len=123)
    assert reader.max_bulk_len == 123 and reader.authenticated is True
    reader.authenticated = False
    assert reader.authenticated is False


# -- sizes and scaling -----------------------------------------------------------------------

def _timed(fn: object) -> float:
    """CPU seconds spent in ``fn`` (other processes on the machine do not count)."""
    start = time.process_time()
    fn()  # type: ignore[operator]
    return time.process_time() - start


@pytest.mark.parametrize("size", [10 * 1024 * 1024, 100 * 1024 * 1024], ids=["10MB", "100MB"])
def test_large_bulk_in_64k_chunks(size: int) -> None:
    payload = bytes(range(256)) * (size // 256)
    data = enc(b"SET", b"big", payload) + enc(b"PING")
    for cls in READERS:
        reader = cls()
        out: list[object] = []

        def run(reader: RequestReader = reader, out: list[object] = out) -> None:
            for i in range(0, len(data), 65536):
                reader.feed(data[i : i + 65536])
                while (req := reader.get()) is not NEED_DATA:
                    out.append(req)

        elapsed = _timed(run)
        assert len(out) == 2 and out[1] == [b"PING"]
        assert out[0] == [b"SET", b"big", payload]
        # Linear work is a few hundred milliseconds per 100 MB here; rescanning or re-copying
        # the buffer per chunk would take minutes.
        assert elapsed < 3 + size / (10 * 1024 * 1024)


def test_many_arguments_byte_by_byte_scale_linearly() -> None:
    """Per-byte cost must not grow with the request: compare 10k and 40k arguments."""

    def cost(count: int) -> float:
        data = b"*%d\r\n" % count + b"$1\r\nx\r\n" * count

        def run() -> None:
            reader = RequestReader()
            for i in range(len(data)):
                reader.feed(data[i : i + 1])
                req = reader.get()
            assert req == [b"x"] * count

        return min(_timed(run) for _ in range(2)) / len(data)

    small, large = cost(10_000), cost(40_000)
    assert large < small * 2.5


@pytest.mark.slow
def test_million_arguments_byte_by_byte() -> None:
    count = 1_000_000
    data = b"*%d\r\n" % count + b"$1\r\nx\r\n" * count
    reader = RequestReader()
    feed, get = reader.feed, reader.get
    for i in range(len(data) - 1):
        feed(data[i : i + 1])
        assert get() is NEED_DATA
    feed(data[-1:])
    req = get()
    assert isinstance(req, list) and len(req) == count and req[-1] == b"x"


def test_million_arguments_in_one_request() -> None:
    count = 1_000_000
    data = b"*%d\r\n" % count + b"$1\r\nx\r\n" * count + enc(b"PING")
    requests, error = collect(RequestReader(), [data[i : i + 65536]
                                                for i in range(0, len(data), 65536)])
    assert error is None and len(requests) == 2 and requests[1] == [b"PING"]
    assert requests[0] == [b"x"] * count


@pytest.mark.parametrize("header", [b"*2147483647\r\n", b"*2\r\n$4\r\nECHO\r\n*2000000000\r\n",
                                    b"*1\r\n~2000000000\r\n", b"*1\r\n>2000000000\r\n",
                                    b"*1\r\n|1000000000\r\n", b"*1\r\n%1000000000\r\n"])
def test_large_aggregate_headers_allocate_nothing(header: bytes) -> None:
    """A count is only a promise: nothing is allocated for elements that have not arrived."""
    for prefix in (b"", enc(b"PING") * 3):
        reader = RequestReader()
        tracemalloc.start()
        try:
            reader.feed(prefix + header)
            result = collect(reader, [b""])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 1 << 20
        assert result[0] == [[b"PING"]] * (len(prefix) // 14)
        if header.startswith(b"*2147483647"):
            assert result[1] is None
        else:
            assert result[1] is not None and result[1].startswith("Protocol error: expected '$'")


def test_payload_that_looks_like_a_large_header() -> None:
    """Bytes that resemble a big aggregate header inside a value are only data."""
    value = b"*1234567\r\n~9999999\r\n"
    data = (enc(b"SET", b"k", value) + b"PING\r\n") * 50
    expected = [[b"SET", b"k", value], [b"PING"]] * 50
    for cls in READERS:
        assert collect(cls(), [data]) == (expected, None)
        assert collect(cls(), [data[i : i + 7] for i in range(0, len(data), 7)]) == (expected, None)


# -- properties --------------------------------------------------------------------------------

argvs = st.lists(st.lists(st.binary(max_size=40) | st.sampled_from(
    [b"", b"\r\n", b"$", b"*1\r\n", b"\x00", b"+OK", b"x" * 300]), min_size=1, max_size=8),
    min_size=1, max_size=12)


def _split(data: bytes, cuts: Sequence[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests=argvs, cuts=st.lists(st.integers(min_value=0, max_value=10**6), max_size=10))
def test_encoded_argv_lists_come_back_identical(requests: list[list[bytes]],
                                                cuts: list[int]) -> None:
    data = b"".join(enc(*argv) for argv in requests)
    for cls in READERS:
        assert collect(cls(), _split(data, cuts)) == (requests, None)


FRAGMENTS = [
    enc(b"SET", b"k", b"v"), enc(b"PING"), enc(b"ECHO", b"\r\n\x00"), enc(b"GET", b"x" * 200),
    b"PING\r\n", b"ECHO 'a b'\n", b'SET a "\\x41"\r\n', b"\r\n", b"  \n", b"*0\r\n", b"*-1\r\n",
    b"*1\rx$1\rxa\r\n", b"*1\r\n$1\r\nab!", b"*2\r\n$1\r\na\r\n", b"$1\r\nb\r\n",
    b"*1\r\n:1\r\n", b"*1\r\n+OK\r\n", b"*3\r\n$1\r\na\r\n*1\r\n$1\r\nb\r\n", b"*x\r\n",
    b"*01\r\n", b"$-1\r\n", b'ECHO "x\r\n', b"\x00", b"\xff", b"*", b"$", b"\r", b"\n", b":",
    b"~1\r\n$1\r\na\r\n", b"%1\r\n$1\r\na\r\n$1\r\nb\r\n", b"*1000000\r\n", b"=5\r\ntxt:a\r\n",
    b"*2\r\n$3\r\nabc", b"*11\r\n", b"*1\r\n$20000\r\n",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from(FRAGMENTS) | st.binary(max_size=6), max_size=25),
       cuts=st.lists(st.integers(min_value=0, max_value=10**6), max_size=12),
       authenticated=st.booleans())
def test_fast_and_slow_parsers_agree_on_any_input(parts: list[bytes], cuts: list[int],
                                                  authenticated: bool) -> None:
    """The C framer and hiredis, with their hand-overs, must frame arbitrary bytes exactly
    as the slow parser."""
    data = b"".join(parts)
    reference = slow_reader()
    reference.authenticated = authenticated
    expected = collect(reference, [data])
    for chunks in ([data], _split(data, cuts)):
        for cls in (RequestReader, hiredis_reader):
            reader = cls()
            reader.authenticated = authenticated
            assert collect(reader, chunks) == expected


# Elements of requests with many arguments (element mode): canonical bulks of every size
# class, and what must hand an element back to the slow parser: other types, headers hiredis
# refuses, a nested aggregate, a payload that looks like a large aggregate header, any two
# bytes after a payload, NULs, a partial element at the end.
ELEMENTS = [
    b"$1\r\na\r\n", b"$0\r\n\r\n", b"$3\r\n\x00\r\n\r\n", b"$8\r\n*1234567\r\n",
    b"$300\r\n" + b"y" * 300 + b"\r\n", b"$2\r\nabXY", b"+OK\r\n", b":5\r\n", b"$-1\r\n",
    b"$05\r\nabcde\r\n", b"$+1\r\na\r\n", b"*1\r\n$1\r\na\r\n", b"*1000000\r\n",
    b"$70000\r\n" + b"z" * 70000 + b"\r\n", b"$1\r\n", b"\x00", b"$4\r\na\rb\n\r\n",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(min_value=64, max_value=300),
       picks=st.lists(st.tuples(st.integers(0, 299), st.sampled_from(ELEMENTS)), max_size=4),
       tail=st.sampled_from([b"", enc(b"PING"), b"*1\r\n$4\r\nPI"]),
       cuts=st.lists(st.integers(min_value=0, max_value=10**6), max_size=12))
def test_element_mode_frames_many_arguments_as_the_slow_parser(
        count: int, picks: list[tuple[int, bytes]], tail: bytes, cuts: list[int]) -> None:
    """A request with many arguments, some replaced by elements element mode must hand to
    the slow parser, in any chunks: the same requests and the same error as the reference."""
    elements = [b"$%d\r\n%s\r\n" % (len(b"a%d" % i), b"a%d" % i) for i in range(count)]
    for index, element in picks:
        elements[index % count] = element
    data = b"*%d\r\n" % count + b"".join(elements) + tail
    expected = collect(slow_reader(), [data])
    for chunks in ([data], _split(data, cuts), [data[i : i + 7] for i in range(0, len(data), 7)]):
        assert collect(RequestReader(), chunks) == expected


def collect_framing(reader: RequestReader, chunks: Iterable[bytes]) -> tuple[Result, int]:
    """:func:`collect` for a reader with an element quota: the stops for the quota are
    counted and the reader asked again, as the connection does in a later turn."""
    out: list[list[bytes]] = []
    framing = 0
    for chunk in chunks:
        reader.feed(chunk)
        try:
            while True:
                req = reader.get()
                if req is NEED_DATA:
                    if not reader.framing:
                        break
                    reader.framing = False
                    framing += 1
                    continue
                assert isinstance(req, list) and req, req
                out.append(req)
        except ProtocolError as exc:
            return (out, exc.message), framing
    return (out, None), framing


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(min_value=64, max_value=400),
       quota=st.integers(min_value=1, max_value=200),
       picks=st.lists(st.tuples(st.integers(0, 399), st.sampled_from(ELEMENTS)), max_size=3),
       tail=st.sampled_from([b"", enc(b"PING"), b"*1\r\n$4\r\nPI"]),
       cuts=st.lists(st.integers(min_value=0, max_value=10**5), max_size=8))
def test_an_element_quota_changes_nothing_but_when_requests_come(
        count: int, quota: int, picks: list[tuple[int, bytes]], tail: bytes,
        cuts: list[int]) -> None:
    """With an element quota, a request with many arguments comes after stops for the quota
    (at most one per quota of its arguments), and requests and errors are the same."""
    elements = [b"$%d\r\n%s\r\n" % (len(b"a%d" % i), b"a%d" % i) for i in range(count)]
    for index, element in picks:
        elements[index % count] = element
    data = b"*%d\r\n" % count + b"".join(elements) + tail
    expected = collect(slow_reader(), [data])
    for chunks in ([data], _split(data, cuts)):
        reader = RequestReader()
        reader.element_quota = quota
        got, framing = collect_framing(reader, chunks)
        assert got == expected
        assert framing <= count // quota


def test_an_element_quota_frames_a_huge_request_a_quota_at_a_time() -> None:
    args = [b"DEL", *(b"m%06d" % i for i in range(200_000))]
    reader = RequestReader()
    reader.element_quota = 10_000
    got, framing = collect_framing(reader, [enc(*args) + enc(b"PING")])
    assert got == ([args, [b"PING"]], None)
    assert 19 <= framing <= 20


def test_three_million_arguments_in_256k_reads() -> None:
    args = [b"DEL", *(b"m%07d" % i for i in range(3_000_000))]
    data = enc(*args)
    reader = RequestReader()
    got = []
    for i in range(0, len(data), 1 << 18):
        reader.feed(data[i : i + (1 << 18)])
        while (req := reader.get()) is not NEED_DATA:
            got.append(req)
    assert got == [args]


# -- helpers -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    (b"0", 0), (b"7", 7), (b"-7", -7), (b"9223372036854775807", 2**63 - 1),
    (b"-9223372036854775808", -(2**63)), (b"9223372036854775808", None),
    (b"", None), (b"-", None), (b"-0", None), (b"00", None), (b"01", None), (b"+1", None),
    (b" 1", None), (b"1 ", None), (b"1_0", None), (b"0x10", None), (b"1" * 21, None),
])
def test_string2ll(text: bytes, value: int | None) -> None:
    assert string2ll(text) == value


@pytest.mark.parametrize(("line", "args"), [
    (b"", []), (b" \t ", []), (b"a b", [b"a", b"b"]), (b'"a b" c', [b"a b", b"c"]),
    (b"'\\''", [b"'"]), (b"'\\\\'", None), (b'"\\x00"', [b"\x00"]), (b'"\\xfF"', [b"\xff"]),
    (b'"\\x1"', [b"x1"]), (b'a"b"c', None), (b'"', None), (b"'", None), (b'"\\', None),
    (b"a'b c'", [b"ab c"]), (b'"a"\x0cb', [b"a", b"b"]),
])
def test_split_inline(line: bytes, args: list[bytes] | None) -> None:
    assert split_inline(line) == args


def test_a_nested_aggregate_in_a_long_request_is_refused_at_once() -> None:
    """Element mode must not wait for a nested aggregate to complete: Redis refuses it at
    its first byte (found by the property test above)."""
    data = b"*1000000\r\n*3\r\n$1\r\na\r\n*1\r\n$1\r\nb\r\n"
    reader = RequestReader()
    reader.authenticated = True
    assert collect(reader, [data]) == ([], "Protocol error: expected '$', got '*'")


# -- the C framer ------------------------------------------------------------------------------

frame_module = pytest.importorskip("resplite.protocol._frame", reason="the C framer is not built")


def test_the_reader_frames_with_c_where_it_is_built() -> None:
    reader = RequestReader()
    reader.feed(enc(b"SET", b"k", b"v") * 2)
    assert reader._frame is frame_module.frame
    assert [reader.get(), reader.get(), reader.get()] == [[b"SET", b"k", b"v"]] * 2 + [NEED_DATA]


@pytest.mark.parametrize("kind", [bytes, bytearray])
def test_frame_takes_a_whole_canonical_request(kind: type) -> None:
    data = kind(b"xx" + enc(b"SET", b"key", b"") + b"*1\r\n")
    assert frame_module.frame(data, 2, 10, 100) == ([b"SET", b"key", b""], len(data) - 4)


@pytest.mark.parametrize("data", [
    enc(b"SET", b"k", b"v")[:-1],  # not all here
    enc(b"SET", b"k", b"v")[:3],
    b"*0\r\n", b"*-1\r\n",  # skipped by Redis: the Python parser skips them
    b"*01\r\n$4\r\nPING\r\n", b"*1\r\n$04\r\nPING\r\n",  # leading zeros
    b"*+1\r\n$4\r\nPING\r\n", b"*1\r\n$+4\r\nPING\r\n",  # signs
    b"*1\rx$4\r\nPING\r\n", b"*1\r\n$4\rxPING\r\n",  # a CR plus another byte
    b"*1\r\n$4\r\nPINGxy",  # any two bytes after the payload
    b"*1\r\n+PING\r\n", b"*1\r\n*1\r\n$1\r\na\r\n",  # not a bulk
    b"*1\r\n$1234567890123456789\r\n",  # too many digits
    b"PING\r\n",  # inline
])
def test_frame_leaves_everything_else_to_the_python_parser(data: bytes) -> None:
    assert frame_module.frame(data, 0, 1 << 31, 1 << 29) is None


def test_frame_leaves_requests_over_the_limits_to_the_python_parser() -> None:
    data = enc(b"ECHO", b"x" * 100)
    assert frame_module.frame(data, 0, 2, 100) == ([b"ECHO", b"x" * 100], len(data))
    assert frame_module.frame(data, 0, 1, 100) is None  # arguments
    assert frame_module.frame(data, 0, 2, 99) is None  # a bulk's length
    many = enc(*[b"a"] * 1025)  # framed a part at a time by the Python parser's element mode
    assert frame_module.frame(many, 0, 1 << 31, 1 << 29) is None
    assert frame_module.frame(enc(*[b"a"] * 1024), 0, 1 << 31, 1 << 29) is not None


def test_frame_refuses_other_arguments() -> None:
    with pytest.raises(TypeError):
        frame_module.frame("*1\r\n$1\r\na\r\n", 0, 10, 10)
    with pytest.raises(TypeError):
        frame_module.frame(b"*1\r\n$1\r\na\r\n", 0, 10)
    assert frame_module.frame(b"*1\r\n$1\r\na\r\n", 99, 10, 10) is None
