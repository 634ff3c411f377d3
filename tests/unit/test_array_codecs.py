"""Unit tests of what the array commands rest on besides the store: the element encodings
and RDB form (resplite.formats.rdb_arrays), ARGREP's POSIX regular expressions
(resplite.algorithms.ere) and AROP's ``%.17Lg`` printing (resplite.algorithms.longdouble).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resplite.algorithms import ere, longdouble
from resplite.algorithms.ere import EreError, compile_ere
from resplite.formats import rdb_arrays
from resplite.formats import rdb_values as v
from resplite.formats.rdb_arrays import (
    TAG_FLOAT,
    TAG_INT,
    TAG_SMALL,
    TAG_STRING,
    element_kind,
    format_float,
)
from resplite.store.sparse_array import MAX_INDEX, SparseArray

# -- element encodings -----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "tag"), [
    (b"0", TAG_INT), (b"-1", TAG_INT), (b"12345", TAG_INT), (b"2305843009213693951", TAG_INT),
    (b"2305843009213693952", TAG_STRING),  # past 62 bits: a string
    (b"-2305843009213693952", TAG_INT), (b"007", TAG_SMALL), (b"1.0", TAG_FLOAT),
    (b"-0.0", TAG_FLOAT), (b"0.5", TAG_FLOAT), (b"1000000.0", TAG_FLOAT), (b"2.75", TAG_FLOAT),
    (b"0.1", TAG_SMALL), (b"3.14159", TAG_SMALL),  # their doubles lose low bits: text
    (b"0.00", TAG_SMALL), (b"10.500", TAG_SMALL), (b"1.0e-100", TAG_STRING), (b"1e5", TAG_SMALL),
    (b"", TAG_SMALL), (b"abcdefg", TAG_SMALL), (b"abcdefgh", TAG_STRING),
])
def test_element_kind(value: bytes, tag: int) -> None:
    assert element_kind(value)[0] == tag


@given(st.binary(max_size=24) | st.from_regex(rb"\A-?[0-9]{0,6}\.?[0-9]{0,6}\Z"))
def test_tagged_values_decode_to_their_bytes(value: bytes) -> None:
    """Redis's encodings always give back the bytes they were made from."""
    tag, payload = element_kind(value)
    if tag == TAG_INT:
        assert isinstance(payload, int)
        assert b"%d" % payload == value
    elif tag == TAG_FLOAT:
        assert isinstance(payload, float)
        assert format_float(payload) == value
    else:
        assert payload == value


@given(st.dictionaries(st.integers(0, MAX_INDEX),
                       st.binary(max_size=20) | st.sampled_from([b"1.5", b"-7", b"2.0"]),
                       min_size=1, max_size=30),
       st.integers(0, 2**64 - 1))
def test_rdb_round_trip(elements: dict[int, bytes], cursor: int) -> None:
    arr = SparseArray()
    for index, value in elements.items():
        arr.set(index, value)
    arr.seek(cursor)
    payload = v.dump_payload(arr)
    assert payload[0] == rdb_arrays.TYPE_ARRAY == 28
    assert payload[-10:-8] == b"\x0e\x00"  # RDB 14, the first with arrays
    assert v.payload_valid(payload)
    back = v.parse_payload(payload, b"k")
    assert isinstance(back, SparseArray)
    back.check()
    assert list(back.items()) == sorted(elements.items())
    assert back.insert_idx == arr.insert_idx


def test_rdb_layout() -> None:
    """count, cursor flag and cursor, then index, tag, value per element."""
    arr = SparseArray()
    arr.set(0, b"7")
    arr.set(300, b"1.5")
    arr.set(70000, b"hi")
    arr.set(70001, b"longer string")
    out = bytearray()
    v.write_value(out, arr, False)
    assert bytes(out) == (
        b"\x04\x00"
        + b"\x00\x01" + (7).to_bytes(8, "little")
        + b"\x41\x2c\x02" + bytes.fromhex("000000000000f83f")
        + b"\x80\x00\x01\x11\x70\x03\x02hi"
        + b"\x80\x00\x01\x11\x71\x00\x0dlonger string")
    arr.insert_idx = 5
    out = bytearray()
    v.write_value(out, arr, False)
    assert out[:3] == b"\x04\x01\x05"


# -- POSIX extended expressions ------------------------------------------------------------------


@pytest.fixture(params=["re2", "python"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each expression test on RE2 and on the Python fallback (where RE2 is installed)."""
    if request.param == "re2" and ere._re2 is None:
        pytest.skip("google-re2 is not installed")
    if request.param == "python":
        monkeypatch.setattr(ere, "_re2", None)
    return str(request.param)


@pytest.mark.parametrize(("pattern", "icase", "yes", "no"), [
    (b"^.*[0-9]{3}$", False, [b"foo123"], [b"foo12", b"123x"]),
    (b"foo|bar", False, [b"xbarx"], [b"BAR"]),
    (b"foo|bar", True, [b"BAR"], [b"baz"]),
    (b"^(foo|bar)$", True, [b"Foo"], [b"foobar"]),
    (b"b$", False, [b"ab"], [b"ab\n"]),  # $ is the very end
    (b"a.b", False, [b"a\nb"], [b"ab"]),  # . takes a newline
    (b"[]a]", False, [b"]"], [b"b"]),  # ] first is a literal
    (b"[\\d]", False, [b"\\", b"d"], [b"5"]),  # a backslash is literal in brackets
    (b"[[:digit:]]+x", False, [b"12x"], [b"x"]),
    (b"[^[:alpha:]]", False, [b"1"], [b"abc"]),
    (b"\\<ab\\>", False, [b"x ab y"], [b"xab"]),
    (b"\\x41\\x{42}", False, [b"AB"], [b"ab"]),
    (b"a{2,3}", False, [b"aa"], [b"a"]),
    (b"a{,2}b", False, [b"b"], [b"c"]),
    (b"(ab)*c", False, [b"ababc"], [b"d"]),
    (b"a**", False, [b""], []),
    (b"\\w+\\s\\d", False, [b"ab 1"], [b"ab1"]),
    (b"^[a-c]x$", True, [b"BX", b"ax"], [b"dx"]),  # NOCASE: ASCII letters only
    (b"^\xe9$", True, [b"\xe9"], [b"\xc9"]),
    (b"^[^a]$", True, [b"b"], [b"A", b"a"]),
    (b"^[[:upper:]]+$", True, [b"abC"], [b"1"]),
    (b"^\\x41$", True, [b"a", b"A"], [b"b"]),
    (b"a{255}", False, [b"a" * 255], [b"a" * 254]),
])
def test_ere_matches(engine: str, pattern: bytes, icase: bool, yes: list[bytes],
                     no: list[bytes]) -> None:
    compiled = compile_ere(pattern, icase)
    assert not compiled.backrefs
    for data in yes:
        assert compiled.search(data) is not None, data
    for data in no:
        assert compiled.search(data) is None, data


@pytest.mark.parametrize(("pattern", "message"), [
    (b"(", "Missing ')'"), (b"a)", "Missing ')'"), (b"[a", "Missing ']'"),
    (b"*a", "Invalid use of repetition operators"), (b"a|*", "Invalid use of repetition operators"),
    (b"a{2,1}", "Invalid contents of {}"), (b"a{x}", "Invalid contents of {}"),
    (b"[z-a]", "Invalid character range"), (b"[[:nope:]]", "Unknown character class name"),
    (b"ab\\", "Trailing backslash"), (b"(a)\\2", "Invalid back reference"),
    (b"\\x{1", "Missing '}'"), (b"\\x{zz}", "Invalid regexp"),
    (b"a{256}", "Invalid contents of {}"), (b"[[=a=]]", "Invalid regexp"),
])
def test_ere_errors(engine: str, pattern: bytes, message: str) -> None:
    with pytest.raises(EreError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("{", r"\{").replace("}", r"\}").replace("*", r"\*")):
        compile_ere(pattern, False)


def test_ere_backreferences_are_reported(engine: str) -> None:
    assert compile_ere(b"(a)\\1", False).backrefs


def test_re2_is_installed() -> None:
    """The linear-time engine is there where the dependencies are installed (pyproject.toml)."""
    assert ere._re2 is not None


def test_ere_time_is_linear_on_re2() -> None:
    """RE2 never backtracks: an expression that takes Python's re exponential time on this
    value is answered at once (without RE2 this would not finish)."""
    if ere._re2 is None:
        pytest.skip("google-re2 is not installed")
    compiled = compile_ere(b"^(a|a)*b$", False)
    assert compiled.search(b"a" * 5000 + b"c") is None
    assert compiled.search(b"a" * 5000 + b"b") is not None


# -- %.17Lg -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "printed"), [
    (b"60", b"60"), (b"60.5", b"60.5"), (b"0.1", b"0.1"), (b"-3.5", b"-3.5"),
    (b"1e16", b"10000000000000000"), (b"1e17", b"1e+17"),
    (b"123456789012345678", b"1.2345678901234568e+17"),
    (b"0.0001", b"0.0001"), (b"0.00001", b"1e-05"), (b"1e300", b"1e+300"),
    (b"9223372036854775808", b"9.2233720368547758e+18"),
])
def test_format_g17(text: bytes, printed: bytes) -> None:
    value = longdouble.parse(text)
    assert value is not None
    assert longdouble.format_g17(value) == printed


def test_format_g17_specials() -> None:
    assert longdouble.format_g17(longdouble.INF) == b"inf"
    assert longdouble.format_g17(-longdouble.INF) == b"-inf"
    assert longdouble.format_g17(Fraction(0)) == b"0"
    # Rounding carries into a new leading digit.
    assert longdouble.format_g17(Fraction(999999999999999999, 10**18)) == b"1"
