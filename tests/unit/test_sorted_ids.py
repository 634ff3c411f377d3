"""SortedIds (the PELs' id set) agrees with sortedcontainers' SortedList on random work."""

from __future__ import annotations

import random

import pytest
from sortedcontainers import SortedList

from resplite.store import sorted_ids
from resplite.store.sorted_ids import SortedIds


@pytest.mark.parametrize("seed", range(20))
def test_matches_sorted_list(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(sorted_ids, "_LOAD", 4)  # tiny blocks: splits and emptied blocks
    rnd = random.Random(seed)
    ref: SortedList = SortedList()
    ids = SortedIds()
    for _ in range(600):
        if rnd.random() < 0.1:
            # A bulk delivery of new ids above every one held (none to many blocks).
            base = (ref[-1] + 1) if ref else rnd.randrange(300)
            more = list(range(base, base + rnd.choice([0, 1, 3, 4, 5, 9, 17])))
            ids.extend_above(more)
            ref.update(more)
        elif rnd.random() < 0.5:
            sid = rnd.randrange(300) if rnd.random() < 0.5 else (ref[-1] + 1 if ref else 0)
            if sid not in ref:
                ref.add(sid)
                ids.add(sid)
        else:
            sid = ref[0] if ref and rnd.random() < 0.3 else rnd.randrange(300)
            if sid in ref:
                ref.remove(sid)
                ids.remove(sid)
            else:
                with pytest.raises(ValueError):
                    ids.remove(sid)
        assert list(ids) == list(ref) and len(ids) == len(ref)
        if ref:
            assert (ids[0], ids[-1]) == (ref[0], ref[-1])
        low = rnd.choice([None, rnd.randrange(-5, 310)])
        high = rnd.choice([None, rnd.randrange(-5, 310)])
        assert list(ids.irange(low, high)) == list(ref.irange(low, high))
        assert list(ids.islice(0, 3)) == list(ref.islice(0, 3))
        for block, top in zip(ids.lists, ids.maxes, strict=True):
            assert block and block == sorted(block) and block[-1] == top
    assert list(SortedIds(ids)) == list(ref)


def test_empty() -> None:
    ids = SortedIds()
    assert not ids and list(ids.irange(0, 10)) == []
    with pytest.raises(IndexError):
        ids[0]
    with pytest.raises(ValueError):
        ids.remove(1)
