"""The longest common subsequence behind the LCS command, bit-parallel.

Redis fills the whole (len(a)+1) x (len(b)+1) dynamic-programming table and then walks it
back from the bottom-right corner; which subsequence it prints, and which ranges IDX lists,
depend on that walk's tie-breaking (on a mismatch it steps up in ``a`` only when that keeps a
strictly longer LCS, otherwise left in ``b``). We reproduce the same walk, but not the same
table: row ``i`` of the table is held as one integer of len(b) bits (the classic bit-vector
LCS, where a zero bit ``j`` means the row gains one at column ``j+1``), so building all rows
costs a few big-integer operations per byte of ``a`` and 1/32 of Redis's memory, and any cell
is ``j - popcount(row & (2**j - 1))``.

Invariant of a row ``v`` (len(b) bits, all ones for the empty prefix of ``a``): for every
``j``, ``LCS(i, j) == j - popcount(v_i & ((1 << j) - 1))``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _match_masks(b: bytes) -> dict[int, int]:
    masks: dict[int, int] = {}
    for j, c in enumerate(b):
        masks[c] = masks.get(c, 0) | (1 << j)
    return masks


def lcs_rows(a: bytes, b: bytes, keep: bool = True) -> list[int]:
    """Row vectors for the prefixes of ``a`` (all of them, or only the last if not ``keep``)."""
    full = (1 << len(b)) - 1
    masks = _match_masks(b)
    v = full
    rows = [v]
    for c in a:
        m = masks.get(c)
        if m is not None:
            u = v & m
            v = ((v + u) | (v - u)) & full
        if keep:
            rows.append(v)
    if not keep:
        rows.append(v)
    return rows


def lcs_length(a: bytes, b: bytes) -> int:
    v = lcs_rows(a, b, keep=False)[-1]
    return len(b) - v.bit_count()


@dataclass(slots=True)
class LcsResult:
    length: int
    text: bytes = b""
    # (a_start, a_end, b_start, b_end), from the end of the strings towards their start
    ranges: list[tuple[int, int, int, int]] = field(default_factory=list)


def lcs_walk(a: bytes, b: bytes) -> LcsResult:
    """The LCS text and its matching ranges, in the order Redis's walk reports them."""
    rows = lcs_rows(a, b)

    def cell(i: int, j: int) -> int:
        return j - (rows[i] & ((1 << j) - 1)).bit_count()

    alen, blen = len(a), len(b)
    length = cell(alen, blen)
    out = bytearray()
    ranges: list[tuple[int, int, int, int]] = []
    run: list[int] | None = None  # [a_start, a_end, b_start, b_end] of the current run
    i, j = alen, blen
    while i > 0 and j > 0:
        close = False
        if a[i - 1] == b[j - 1]:
            out.append(a[i - 1])
            if run is None:
                run = [i - 1, i - 1, j - 1, j - 1]
            elif run[0] == i and run[2] == j:
                run[0] -= 1
                run[2] -= 1
            else:
                close = True
            if run[0] == 0 or run[2] == 0:
                close = True  # touching the start of either string: the walk ends here
            i -= 1
            j -= 1
        else:
            if cell(i - 1, j) > cell(i, j - 1):
                i -= 1
            else:
                j -= 1
            close = run is not None
        if close and run is not None:
            ranges.append((run[0], run[1], run[2], run[3]))
            run = None
    out.reverse()
    return LcsResult(length, bytes(out), ranges)
