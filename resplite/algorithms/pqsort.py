"""Redis's partial quicksort (``pqsort``): only the positions [lrange, rrange] end up sorted.

GEOSEARCH and GEORADIUS with COUNT sort just the first COUNT results with it. The order it
leaves among equal keys (two members at the same position, hence the same distance) is not
a stable one; it is whatever this particular algorithm does, so to answer as Redis does it
is repeated here step by step: the Bentley-McIlroy three-way quicksort of the BSD C library
(insertion sort below 7 elements, median of three or, above 40, Tukey's ninther as pivot,
keys equal to the pivot gathered at both ends and swapped to the middle), recursing into a
part only when it overlaps the wanted range.

A full sort (no COUNT, or COUNT covering every result) is the C library's ``qsort``, which
glibc implements as a stable merge sort: Python's ``sorted`` gives the same order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def pqsort(items: list[T], cmp: Callable[[T, T], int], lrange: int, rrange: int) -> None:
    """Sort ``items`` in place so that positions ``lrange``..``rrange`` hold what a full sort
    would put there, exactly as Redis's ``pqsort`` arranges them."""
    _pqsort(items, 0, len(items), cmp, lrange, rrange)


def _med3(a: list[T], i: int, j: int, k: int, cmp: Callable[[T, T], int]) -> int:
    if cmp(a[i], a[j]) < 0:
        if cmp(a[j], a[k]) < 0:
            return j
        return k if cmp(a[i], a[k]) < 0 else i
    if cmp(a[j], a[k]) > 0:
        return j
    return i if cmp(a[i], a[k]) < 0 else k


def _vecswap(a: list[T], i: int, j: int, n: int) -> None:
    for t in range(n):
        a[i + t], a[j + t] = a[j + t], a[i + t]


def _pqsort(a: list[T], base: int, n: int, cmp: Callable[[T, T], int], lrange: int,
            rrange: int) -> None:
    while True:
        if n < 7:
            for pm in range(base + 1, base + n):
                pl = pm
                while pl > base and cmp(a[pl - 1], a[pl]) > 0:
                    a[pl], a[pl - 1] = a[pl - 1], a[pl]
                    pl -= 1
            return
        pm = base + n // 2
        if n > 7:
            pl = base
            pn = base + n - 1
            if n > 40:
                d = n // 8
                pl = _med3(a, pl, pl + d, pl + 2 * d, cmp)
                pm = _med3(a, pm - d, pm, pm + d, cmp)
                pn = _med3(a, pn - 2 * d, pn - d, pn, cmp)
            pm = _med3(a, pl, pm, pn, cmp)
        a[base], a[pm] = a[pm], a[base]
        pa = pb = base + 1
        pc = pd = base + n - 1
        while True:
            while pb <= pc:
                c = cmp(a[pb], a[base])
                if c > 0:
                    break
                if c == 0:
                    a[pa], a[pb] = a[pb], a[pa]
                    pa += 1
                pb += 1
            while pb <= pc:
                c = cmp(a[pc], a[base])
                if c < 0:
                    break
                if c == 0:
                    a[pc], a[pd] = a[pd], a[pc]
                    pd -= 1
                pc -= 1
            if pb > pc:
                break
            a[pb], a[pc] = a[pc], a[pb]
            pb += 1
            pc -= 1
        pn = base + n
        r = min(pa - base, pb - pa)
        _vecswap(a, base, pb - r, r)
        r = min(pd - pc, pn - pd - 1)
        _vecswap(a, pb, pn - r, r)
        r = pb - pa
        if r > 1 and not _outside(base, base + r - 1, lrange, rrange):
            _pqsort(a, base, r, cmp, lrange, rrange)
        r = pd - pc
        if r <= 1:
            return
        base, n = pn - r, r
        if _outside(base, base + n - 1, lrange, rrange):
            return


def _outside(first: int, last: int, lrange: int, rrange: int) -> bool:
    """Whether the wanted positions lie wholly before or wholly after [first, last]."""
    return (lrange < first and rrange < first) or (lrange > last and rrange > last)
