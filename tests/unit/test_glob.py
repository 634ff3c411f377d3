"""Glob matching with Redis's rules (checked against a real Redis in tests/compat/test_glob.py)."""

from __future__ import annotations

import pytest

from resplite.store.glob import glob_match


@pytest.mark.parametrize(
    ("pattern", "string", "expected"),
    [
        (b"*", b"anything", True),
        (b"*", b"", False),  # Redis: an empty string matches only an empty pattern
        (b"", b"", True),
        (b"", b"a", False),
        (b"h?llo", b"hello", True),
        (b"h?llo", b"hllo", False),
        (b"h*llo", b"hllo", True),
        (b"h*llo", b"heeeello", True),
        (b"h[ae]llo", b"hallo", True),
        (b"h[ae]llo", b"hillo", False),
        (b"h[^e]llo", b"hallo", True),
        (b"h[^e]llo", b"hello", False),
        (b"h[a-b]llo", b"hbllo", True),
        (b"h[b-a]llo", b"hbllo", True),  # reversed range
        (b"h[a-b]llo", b"hcllo", False),
        (b"h\\*llo", b"h*llo", True),
        (b"h\\*llo", b"hello", False),
        (b"[\\]]", b"]", True),
        (b"[abc", b"b", True),  # unterminated set runs to the end of the pattern
        (b"a*", b"a", True),
        (b"a*?", b"a", False),
        (b"*a*b*", b"xxaxxbxx", True),
        (b"*a*b*", b"xxbxxaxx", False),
        (b"**x", b"abx", True),
        (b"\\", b"\\", True),  # a lone trailing backslash is literal
        (b"[a-]", b"]", True),  # "a-]" is a range, as Redis reads it
    ],
)
def test_glob_match(pattern: bytes, string: bytes, expected: bool) -> None:
    assert glob_match(pattern, string) is expected


def test_nocase_folds_letters_but_not_escaped_set_members() -> None:
    assert glob_match(b"XGROUP|*", b"xgroup|create", nocase=True)
    assert glob_match(b"[A-C]x", b"bX", nocase=True)
    assert not glob_match(b"[\\A]", b"a", nocase=True)
    assert glob_match(b"[A]", b"a", nocase=True)
    assert not glob_match(b"XGROUP|*", b"xgroup|create")


def test_bytes_beyond_ascii_match_exactly() -> None:
    assert glob_match("é*".encode(), "élan".encode())
    assert glob_match(b"\xff?", b"\xff\x00")
