"""The bit-parallel LCS against a plain dynamic-programming table walked the same way."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.algorithms.lcs import lcs_length, lcs_rows, lcs_walk

SMALL = st.binary(max_size=30).map(lambda b: bytes(c % 4 + 97 for c in b))  # "abcd" strings


def table(a: bytes, b: bytes) -> list[list[int]]:
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                t[i][j] = t[i - 1][j - 1] + 1
            else:
                t[i][j] = max(t[i - 1][j], t[i][j - 1])
    return t


def walk_text(a: bytes, b: bytes) -> bytes:
    """The subsequence a walk from the bottom-right corner spells (up only when strictly better)."""
    t = table(a, b)
    i, j, out = len(a), len(b), bytearray()
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            out.append(a[i - 1])
            i, j = i - 1, j - 1
        elif t[i - 1][j] > t[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return bytes(reversed(out))


@settings(max_examples=500, deadline=None)
@given(SMALL, SMALL)
def test_every_cell_of_the_bit_rows_equals_the_table(a: bytes, b: bytes) -> None:
    t = table(a, b)
    rows = lcs_rows(a, b)
    for i, row in enumerate(rows):
        for j in range(len(b) + 1):
            assert j - (row & ((1 << j) - 1)).bit_count() == t[i][j]


@settings(max_examples=500, deadline=None)
@given(SMALL, SMALL)
def test_length_and_text_follow_the_table_walk(a: bytes, b: bytes) -> None:
    result = lcs_walk(a, b)
    assert lcs_length(a, b) == result.length == table(a, b)[len(a)][len(b)]
    assert result.text == walk_text(a, b)
    # every reported range is a real common substring, listed from the end backwards
    for a_start, a_end, b_start, b_end in result.ranges:
        assert a[a_start : a_end + 1] == b[b_start : b_end + 1]
    starts = [r[0] for r in result.ranges]
    assert starts == sorted(starts, reverse=True)
    assert sum(r[1] - r[0] + 1 for r in result.ranges) == result.length


def test_documented_example() -> None:
    result = lcs_walk(b"ohmytext", b"mynewtext")
    assert result.text == b"mytext" and result.length == 6
    assert result.ranges == [(4, 7, 5, 8), (2, 3, 0, 1)]


def test_large_inputs_stay_fast() -> None:
    a = bytes(range(256)) * 20
    b = bytes(reversed(range(256))) * 20
    assert lcs_length(a, b) == lcs_walk(a, b).length
