"""The compiled glob matcher (KEYS, SCAN MATCH) answers exactly as the token matcher does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.store.glob import compile_matcher, glob_match

PATTERN_BYTES = st.sampled_from(list(b"ab*?[]^-\\Zz\x80\xff\x00"))
STRING_BYTES = st.sampled_from(list(b"abZz-^]\\*?\x80\xff\x00"))


@settings(max_examples=800, deadline=None)
@given(
    st.lists(PATTERN_BYTES, max_size=10).map(bytes),
    st.lists(STRING_BYTES, max_size=10).map(bytes),
    st.booleans(),
)
def test_compiled_matcher_equals_token_matcher(pattern: bytes, string: bytes, nocase: bool) -> None:
    assert compile_matcher(pattern, nocase)(string) == glob_match(pattern, string, nocase)


def test_ranges_compare_signed_bytes_as_redis_does() -> None:
    # C chars are signed: 0x80..0xff sort below 0x00, so [a-\xff] is the range \xff..a
    for matcher in (compile_matcher(b"[a-\xff]"), lambda s: glob_match(b"[a-\xff]", s)):
        assert matcher(b"\x00") and matcher(b"a") and matcher(b"\xff") and matcher(b"Z")
        assert not matcher(b"b") and not matcher(b"\x80")
    assert compile_matcher(b"[\x80-\x90]")(b"\x85")
    assert not compile_matcher(b"[\x80-\x90]")(b"a")


def test_many_stars_stay_fast() -> None:
    matcher = compile_matcher(b"*a" * 30 + b"*b")
    assert not matcher(b"a" * 5000)  # bounded: no exponential backtracking
    assert matcher(b"a" * 60 + b"b")


@pytest.mark.redis_version("7.2")
def test_more_than_a_thousand_nested_stars_match_nothing() -> None:
    # Redis 7.2.6 / 7.4.1 and later stop at 1000 levels of '*' (CVE-2024-31228); 7.0 recursed.
    deep = b"*a" * 1001
    shallow = b"*a" * 1000
    string = b"a" * 1001
    assert not glob_match(deep, string) and not compile_matcher(deep)(string)
    assert glob_match(shallow, string) and compile_matcher(shallow)(string)
    # a trailing star needs no nesting
    assert glob_match(shallow + b"*", string) and compile_matcher(shallow + b"*")(string)
