"""The reply encoder: every value type under RESP3, and Redis's RESP2 downgrade of each."""

from __future__ import annotations

import pytest

from resplite.protocol.encoder import encode, encode_into
from resplite.protocol.replies import (
    NULL_ARRAY,
    OK,
    BigNumber,
    Double,
    ErrorReply,
    Push,
    Raw,
    Status,
    Verbatim,
)

CASES = [
    # (value, RESP2 bytes, RESP3 bytes)
    (b"hello", b"$5\r\nhello\r\n", b"$5\r\nhello\r\n"),
    (b"", b"$0\r\n\r\n", b"$0\r\n\r\n"),
    (b"x" * 2000, b"$2000\r\n" + b"x" * 2000 + b"\r\n", b"$2000\r\n" + b"x" * 2000 + b"\r\n"),
    (0, b":0\r\n", b":0\r\n"),
    (-7, b":-7\r\n", b":-7\r\n"),
    (2**63 - 1, b":9223372036854775807\r\n", b":9223372036854775807\r\n"),
    (True, b":1\r\n", b"#t\r\n"),
    (False, b":0\r\n", b"#f\r\n"),
    (1.5, b"$3\r\n1.5\r\n", b",1.5\r\n"),
    (float("inf"), b"$3\r\ninf\r\n", b",inf\r\n"),
    (float("-inf"), b"$4\r\n-inf\r\n", b",-inf\r\n"),
    (Double(b"0.1"), b"$3\r\n0.1\r\n", b",0.1\r\n"),
    ([Double(b"-0")], b"*1\r\n$2\r\n-0\r\n", b"*1\r\n,-0\r\n"),
    (None, b"$-1\r\n", b"_\r\n"),
    (NULL_ARRAY, b"*-1\r\n", b"_\r\n"),
    (OK, b"+OK\r\n", b"+OK\r\n"),
    (Status("stream"), b"+stream\r\n", b"+stream\r\n"),
    (ErrorReply("ERR syntax error"), b"-ERR syntax error\r\n", b"-ERR syntax error\r\n"),
    (ErrorReply("NOGROUP No such\r\nkey"), b"-NOGROUP No such  key\r\n",
     b"-NOGROUP No such  key\r\n"),
    ([], b"*0\r\n", b"*0\r\n"),
    ([b"a", 1, None], b"*3\r\n$1\r\na\r\n:1\r\n$-1\r\n", b"*3\r\n$1\r\na\r\n:1\r\n_\r\n"),
    ((b"a",), b"*1\r\n$1\r\na\r\n", b"*1\r\n$1\r\na\r\n"),
    ({b"k": 1, b"m": [b"x"]}, b"*4\r\n$1\r\nk\r\n:1\r\n$1\r\nm\r\n*1\r\n$1\r\nx\r\n",
     b"%2\r\n$1\r\nk\r\n:1\r\n$1\r\nm\r\n*1\r\n$1\r\nx\r\n"),
    ({}, b"*0\r\n", b"%0\r\n"),
    ({Status("write")}, b"*1\r\n+write\r\n", b"~1\r\n+write\r\n"),
    (Verbatim(b"a:b"), b"$3\r\na:b\r\n", b"=7\r\ntxt:a:b\r\n"),
    (BigNumber(12345678901234567890), b"$20\r\n12345678901234567890\r\n",
     b"(12345678901234567890\r\n"),
    (Push([b"message", b"c"]), b"*2\r\n$7\r\nmessage\r\n$1\r\nc\r\n",
     b">2\r\n$7\r\nmessage\r\n$1\r\nc\r\n"),
    (Raw(b"+PONG\r\n"), b"+PONG\r\n", b"+PONG\r\n"),
]


@pytest.mark.parametrize(("value", "resp2", "resp3"), CASES, ids=[repr(c[0])[:30] for c in CASES])
def test_encoding_per_protocol(value: object, resp2: bytes, resp3: bytes) -> None:
    assert encode(value, 2) == resp2
    assert encode(value, 3) == resp3


def test_nested_null_array_inside_array_downgrades_per_element() -> None:
    # XREADGROUP history of a deleted entry: [id, nil-array] inside the entries array.
    value = [[b"1-0", NULL_ARRAY]]
    assert encode(value, 2) == b"*1\r\n*2\r\n$3\r\n1-0\r\n*-1\r\n"
    assert encode(value, 3) == b"*1\r\n*2\r\n$3\r\n1-0\r\n_\r\n"


def test_error_echoes_undecodable_input_bytes_unchanged() -> None:
    text = b"ERR unknown command '\xff'".decode("utf-8", "surrogateescape")
    assert encode(ErrorReply(text), 2) == b"-ERR unknown command '\xff'\r\n"


def test_plain_str_is_refused_so_simple_and_bulk_strings_are_never_confused() -> None:
    with pytest.raises(TypeError):
        encode("OK", 2)


def test_subclasses_of_basic_types_encode_as_their_base() -> None:
    class Flag(int):
        pass

    assert encode(Flag(3), 3) == b":3\r\n"
    assert encode(bytearray(b"ab"), 2) == b"$2\r\nab\r\n"


def test_encode_into_appends_to_one_buffer_for_a_pipeline() -> None:
    out: list[bytes] = []
    for value in (OK, 5, b"x"):
        encode_into(out, value, 2)
    assert b"".join(out) == b"+OK\r\n:5\r\n$1\r\nx\r\n"


def test_large_and_small_integer_paths_agree() -> None:
    for n in (1023, 1024, -1, 10**18):
        assert encode(n, 2) == b":%d\r\n" % n
