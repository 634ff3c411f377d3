"""Unit tests of resplite.algorithms.geohash and resplite.algorithms.pqsort: Redis's 52-bit
geohash, its distance and printing, and its partial quicksort.

Expected values are Redis's own answers (GEOADD scores, GEOHASH strings, GEODIST texts from a
Redis server); the compat tests compare whole commands.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from resplite.algorithms import geohash
from resplite.algorithms.pqsort import pqsort


def test_positions_encode_to_redis_scores() -> None:
    assert geohash.position_score(13.361389, 38.115556) == 3479099956230698
    assert geohash.position_score(15.087269, 37.502669) == 3479447370796909
    assert geohash.position_score(-180, -85.05112878) == 0
    # At the top edge the 26-bit offset overflows into bit 52, as in Redis.
    assert geohash.position_score(180, 85.05112878) == 13510798882111488
    assert geohash.encode(180.0000001, 0) is None and geohash.encode(0, -85.06) is None


def test_scores_decode_to_cell_centres() -> None:
    lon, lat = geohash.decode_score(3479099956230698)
    assert (lon, lat) == (13.361389338970184, 38.1155563954963)
    assert geohash.decode_score(13510798882111488) == (180.0, 85.05112878)
    assert geohash.geohash_string(3479099956230698) == b"sqc8b49rny0"
    assert geohash.geohash_string(3479447370796909) == b"sqdtr74hyu0"


@pytest.mark.parametrize(("score", "bits"), [
    (1.5, 1), (-1.0, (1 << 64) - 1), (-1.5, (1 << 64) - 1), (1e19, 10**19),
    (2.0**64, 0), (math.inf, 0), (-math.inf, 1 << 63), (-1e19, 1 << 63), (0.0, 0),
])
def test_scores_convert_to_integers_as_c_does(score: float, bits: int) -> None:
    assert geohash.score_bits(score) == bits


def test_distance_and_its_printing() -> None:
    d = geohash.distance(13.361389338970184, 38.1155563954963, 15.087267458438873,
                         37.50266842333162)
    assert geohash.format_distance(d / 1000) == b"166.2742"
    assert geohash.format_distance(0.0) == b"0.0000"
    assert geohash.format_distance(0.00004) == b"0.0000"
    assert geohash.format_distance(0.00006) == b"0.0001"
    assert geohash.format_distance(1.23456) == b"1.2346"
    assert geohash.format_distance(12345678.9) == b"12345678.9000"
    # Ties round to even after the scaling, as llrint does.
    assert geohash.format_distance(0.00025) == b"0.0002"
    assert geohash.format_distance(0.00035) == b"0.0004"
    # The same longitude: only the latitudes count.
    assert geohash.distance(10, 1, 10, 2) == geohash.lat_distance(1, 2)


#: Half a cell at the full precision (26 bits per coordinate), in degrees.
_HALF_LONG = (geohash.LONG_MAX - geohash.LONG_MIN) / 2**27
_HALF_LAT = (geohash.LAT_MAX - geohash.LAT_MIN) / 2**27
#: What the arithmetic of decoding may add to an exact cell centre (a few ulps of 180).
_ROUNDING = 1e-12


@settings(max_examples=300, deadline=None)
@given(lon=st.floats(-180, 180, exclude_max=True), lat=st.floats(-85.05112878, 85.05112878))
# The eastern edge: this longitude's offset rounds up to 2^26 cells, so the score needs 54
# bits and its double drops the lowest latitude bit (1.03 cells off at latitude 47).
@example(lon=math.nextafter(180.0, 0.0), lat=47.0)
def test_decoding_lands_within_half_a_cell(lon: float, lat: float) -> None:
    """A score decodes to the centre of the cell the position fell in: within half a cell on
    each axis. The one exception is Redis's eastern-edge quirk (a score of 2^53 or more, not
    exact as a double): rounding moves the latitude to the cell below, so it lands within one
    and a half cells, and the longitude clamps to 180."""
    score = geohash.position_score(lon, lat)
    x, y = geohash.decode_score(float(score))
    assert abs(x - lon) <= _HALF_LONG + _ROUNDING
    if score < 2**53:
        assert abs(y - lat) <= _HALF_LAT + _ROUNDING
    else:
        assert x == 180.0 and abs(y - lat) <= 3 * _HALF_LAT + _ROUNDING


def test_the_eastern_edge_scores_as_redis_does() -> None:
    # Longitude 180 fills all 26 cell bits and one more, which spills into the interleaved
    # latitude: Redis 7.0 scores GEOADD k 180 47 as 10415967122571328 and decodes it back to
    # 180, 46.99999739221061645 (a cell away from 47); resplite keeps the same quirk.
    assert float(geohash.position_score(180.0, 47.0)) == 10415967122571328.0  # as a double
    x, y = geohash.decode_score(10415967122571328.0)
    assert x == 180.0 and abs(y - 46.99999739221061645) < 1e-12


def test_search_boxes_cover_a_radius() -> None:
    shape = geohash.Shape(12.5, 41.9, 1000.0, radius=5.0)
    cells = geohash.search_boxes(shape)
    assert len(cells) == 9 and cells[0] is not None
    _, step = cells[0]
    estimate = geohash.estimate_step(5000.0, 41.9)
    assert step in (estimate, estimate - 1)
    low, high = geohash.cell_scores(cells[0])
    assert low <= geohash.position_score(12.5, 41.9) < high


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.integers(0, 6), min_size=1, max_size=90), data=st.data())
def test_pqsort_sorts_the_wanted_range(keys: list[int], data: st.DataObject) -> None:
    count = data.draw(st.integers(1, len(keys)))
    items = list(range(len(keys)))
    pqsort(items, lambda a, b: (keys[a] > keys[b]) - (keys[a] < keys[b]), 0, count - 1)
    assert [keys[i] for i in items[:count]] == sorted(keys)[:count]
    assert sorted(items) == list(range(len(keys)))


def test_pqsort_with_distinct_keys_agrees_with_sorted() -> None:
    rng = random.Random(1)
    for _ in range(200):
        keys = rng.sample(range(1000), rng.randint(1, 120))
        items = list(keys)
        count = rng.randint(1, len(items))
        pqsort(items, lambda a, b: (a > b) - (a < b), 0, count - 1)
        assert items[:count] == sorted(keys)[:count]
