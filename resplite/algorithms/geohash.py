"""Redis's geo index as pure functions: the 52-bit geohash, its area search and its distance.

Theory of operation. A position (longitude, latitude) becomes a sorted-set score: each
coordinate is scaled into its range (longitude -180..180, latitude -85.05112878..85.05112878,
the limits of Web Mercator) as a 26-bit integer, and the two integers are interleaved bit by
bit, longitude in the odd bits and latitude in the even ones. Close positions share a long
prefix, so a square cell of the grid at precision ``step`` (``2 * step`` bits) is one range
of scores: ``[bits << (52 - 2 step), (bits + 1) << (52 - 2 step))``. Decoding a score gives
the cell's centre, which is why GEOPOS answers a position up to half a cell away (~0.6 m)
from the one added.

A search (radius or box) picks the precision whose cells are about as large as the search
(:func:`estimate_step`), takes the cell of the centre and its eight neighbours, drops the
neighbours the bounding box of the search cannot reach, and reads each cell's score range;
every candidate is then checked against the shape with the haversine distance on a sphere of
Redis's radius (6372797.560856 m). :func:`search_boxes` returns the cells in Redis's order
(centre, north, south, east, west, north-east, north-west, south-east, south-west), which is
the order results come in before any sorting.

Everything here repeats Redis's floating-point operations in Redis's order (the C library's
``sin``, ``cos``, ``asin`` and ``sqrt`` are the ones Python calls), so that scores, distances
and coordinates come out as the same doubles. Integer steps follow C's 64-bit unsigned
arithmetic, including the conversion of an arbitrary double score to an integer
(:func:`score_bits`), so even a sorted set whose scores were not written by GEOADD decodes as
in Redis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

LONG_MIN: Final = -180.0
LONG_MAX: Final = 180.0
LAT_MIN: Final = -85.05112878
LAT_MAX: Final = 85.05112878
STEP_MAX: Final = 26  # 26 bits per coordinate: 52-bit scores, exact in a double

EARTH_RADIUS_M: Final = 6372797.560856  # Redis's quadratic mean radius of WGS-84
MERCATOR_MAX: Final = 20037726.37
_D_R: Final = math.pi / 180.0

# Units of distance Redis accepts, in metres.
UNITS: Final = {b"m": 1.0, b"km": 1000.0, b"ft": 0.3048, b"mi": 1609.34}

_U64: Final = (1 << 64) - 1
_EVEN: Final = 0x5555555555555555
_ODD: Final = 0xAAAAAAAAAAAAAAAA
_GEOALPHABET: Final = b"0123456789bcdefghjkmnpqrstuvwxyz"


# -- bits ----------------------------------------------------------------------------------


def _spread(v: int) -> int:
    """The 32 bits of ``v`` moved to the even bit positions of a 64-bit word."""
    v = (v | (v << 16)) & 0x0000FFFF0000FFFF
    v = (v | (v << 8)) & 0x00FF00FF00FF00FF
    v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0F
    v = (v | (v << 2)) & 0x3333333333333333
    return (v | (v << 1)) & _EVEN


def _squeeze(v: int) -> int:
    """The even bits of ``v`` gathered into a 32-bit integer (the inverse of _spread)."""
    v &= _EVEN
    v = (v | (v >> 1)) & 0x3333333333333333
    v = (v | (v >> 2)) & 0x0F0F0F0F0F0F0F0F
    v = (v | (v >> 4)) & 0x00FF00FF00FF00FF
    v = (v | (v >> 8)) & 0x0000FFFF0000FFFF
    return (v | (v >> 16)) & 0xFFFFFFFF


def interleave(lat_bits: int, long_bits: int) -> int:
    """Latitude in the even bits, longitude in the odd ones."""
    return _spread(lat_bits) | (_spread(long_bits) << 1)


def deinterleave(bits: int) -> tuple[int, int]:
    """(latitude bits, longitude bits) of an interleaved word."""
    return _squeeze(bits), _squeeze(bits >> 1)


def _c_to_u32(value: float) -> int:
    """C's conversion of a non-negative double below 2^63 to ``uint32_t`` (truncation)."""
    return int(value) & 0xFFFFFFFF


def score_bits(score: float) -> int:
    """C's ``(uint64_t)score`` as x86-64 compilers emit it: truncation towards zero, wrapping
    negative values, and 0 or 2^63 where the conversion overflows."""
    if score < 9.2233720368547758e18:  # 2^63
        if score > -9.2233720368547758e18:
            return int(score) & _U64
        return 1 << 63
    if score < 1.8446744073709552e19:  # 2^64
        return int(score)
    return 0  # the conversion of (score - 2^63) overflows to 2^63, then flips back to 0


# -- encoding and decoding -----------------------------------------------------------------


def encode(longitude: float, latitude: float, step: int = STEP_MAX,
           long_range: tuple[float, float] = (LONG_MIN, LONG_MAX),
           lat_range: tuple[float, float] = (LAT_MIN, LAT_MAX)) -> int | None:
    """The ``2 * step``-bit geohash of a position, or None outside Redis's limits."""
    if (longitude > LONG_MAX or longitude < LONG_MIN or latitude > LAT_MAX
            or latitude < LAT_MIN):
        return None
    long_min, long_max = long_range
    lat_min, lat_max = lat_range
    if latitude < lat_min or latitude > lat_max or longitude < long_min or longitude > long_max:
        return None
    lat_offset = (latitude - lat_min) / (lat_max - lat_min)
    long_offset = (longitude - long_min) / (long_max - long_min)
    scale = float(1 << step)
    return interleave(_c_to_u32(lat_offset * scale), _c_to_u32(long_offset * scale))


def position_score(longitude: float, latitude: float) -> int:
    """The score GEOADD stores for a position already within the limits."""
    bits = encode(longitude, latitude)
    assert bits is not None
    return bits  # at the full precision the 52-bit alignment shifts by nothing


@dataclass(frozen=True, slots=True)
class Area:
    """A geohash cell: its longitude and latitude ranges."""

    long_min: float
    long_max: float
    lat_min: float
    lat_max: float


def decode(bits: int, step: int,
           long_range: tuple[float, float] = (LONG_MIN, LONG_MAX),
           lat_range: tuple[float, float] = (LAT_MIN, LAT_MAX)) -> Area:
    """The cell a geohash of ``step`` bits per coordinate stands for."""
    ilat, ilong = deinterleave(bits)
    lat_scale = lat_range[1] - lat_range[0]
    long_scale = long_range[1] - long_range[0]
    cells = float(1 << step)
    return Area(
        long_min=long_range[0] + (ilong * 1.0 / cells) * long_scale,
        long_max=long_range[0] + ((ilong + 1) * 1.0 / cells) * long_scale,
        lat_min=lat_range[0] + (ilat * 1.0 / cells) * lat_scale,
        lat_max=lat_range[0] + ((ilat + 1) * 1.0 / cells) * lat_scale,
    )


def decode_score(score: float) -> tuple[float, float]:
    """The position (longitude, latitude) a score stands for: the centre of its cell, kept
    within the limits."""
    area = decode(score_bits(score), STEP_MAX)
    x = (area.long_min + area.long_max) / 2
    x = min(max(x, LONG_MIN), LONG_MAX)
    y = (area.lat_min + area.lat_max) / 2
    y = min(max(y, LAT_MIN), LAT_MAX)
    return x, y


def geohash_string(score: float) -> bytes:
    """GEOHASH's 11 characters: the position re-encoded over the standard latitude range
    (-90..90), 52 bits in base 32 and a final ``0``."""
    x, y = decode_score(score)
    bits = encode(x, y, STEP_MAX, (-180.0, 180.0), (-90.0, 90.0)) or 0
    chars = bytes(_GEOALPHABET[(bits >> (52 - (i + 1) * 5)) & 0x1F] for i in range(10))
    return chars + b"0"


# -- distance ------------------------------------------------------------------------------


def lat_distance(lat1: float, lat2: float) -> float:
    """The distance in metres between two latitudes on one meridian."""
    return EARTH_RADIUS_M * abs(lat2 * _D_R - lat1 * _D_R)


def distance(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """The haversine great-circle distance in metres, as Redis computes it."""
    lon1r = lon1 * _D_R
    lon2r = lon2 * _D_R
    v = math.sin((lon2r - lon1r) / 2)
    if v == 0.0:
        return lat_distance(lat1, lat2)
    lat1r = lat1 * _D_R
    lat2r = lat2 * _D_R
    u = math.sin((lat2r - lat1r) / 2)
    a = u * u + math.cos(lat1r) * math.cos(lat2r) * v * v
    return 2.0 * EARTH_RADIUS_M * math.asin(math.sqrt(a))


def format_distance(value: float) -> bytes:
    """A distance with four decimals, as Redis's ``fixedpoint_d2string`` prints it: the value
    times 10^4 rounded to the nearest integer (ties to even), then the point put back."""
    if value == 0:
        return b"0.0000"
    scaled = round(value * 10000.0)  # llrint in the default rounding mode
    sign = b"-" if scaled < 0 else b""
    digits = b"%05d" % abs(scaled)
    return sign + digits[:-4] + b"." + digits[-4:]


# -- searching -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shape:
    """What a search covers: a circle (``radius``) or a box (``width`` x ``height``) around
    (``longitude``, ``latitude``), sizes in the unit that ``conversion`` turns into metres."""

    longitude: float
    latitude: float
    conversion: float
    radius: float = 0.0
    width: float = 0.0
    height: float = 0.0
    box: bool = False

    def bounds(self) -> tuple[float, float, float, float]:
        """(min longitude, min latitude, max longitude, max latitude) of the search: the
        longitude span taken at the edge nearer the pole."""
        half_height = self.conversion * (self.height / 2 if self.box else self.radius)
        half_width = self.conversion * (self.width / 2 if self.box else self.radius)
        lat_delta = (half_height / EARTH_RADIUS_M) / _D_R
        long_delta_top = (half_width / EARTH_RADIUS_M
                          / math.cos((self.latitude + lat_delta) * _D_R)) / _D_R
        long_delta_bottom = (half_width / EARTH_RADIUS_M
                             / math.cos((self.latitude - lat_delta) * _D_R)) / _D_R
        delta = long_delta_bottom if self.latitude < 0 else long_delta_top
        return (self.longitude - delta, self.latitude - lat_delta,
                self.longitude + delta, self.latitude + lat_delta)

    def reach_m(self) -> float:
        """The farthest the search reaches from its centre, in metres (a box's half
        diagonal)."""
        if self.box:
            half_w, half_h = self.width / 2, self.height / 2
            reach = math.sqrt(half_w * half_w + half_h * half_h)
        else:
            reach = self.radius
        return reach * self.conversion

    def contains(self, longitude: float, latitude: float) -> float | None:
        """The distance in metres from the centre to a position inside the shape, or None."""
        if not self.box:
            d = distance(self.longitude, self.latitude, longitude, latitude)
            return None if d > self.radius * self.conversion else d
        # The cheaper latitude test first, then the longitude one along the position's
        # parallel; the distance reported is the direct one.
        if lat_distance(latitude, self.latitude) > self.height * self.conversion / 2:
            return None
        if distance(longitude, latitude, self.longitude, latitude) > (
                self.width * self.conversion / 2):
            return None
        return distance(self.longitude, self.latitude, longitude, latitude)


def estimate_step(range_m: float, latitude: float) -> int:
    """The precision whose cells roughly cover ``range_m`` metres (one less near the poles,
    where cells are narrower), between 1 and 26."""
    if range_m == 0:
        return 26
    step = 1
    while range_m < MERCATOR_MAX:
        range_m *= 2
        step += 1
    step -= 2
    if latitude > 66 or latitude < -66:
        step -= 1
        if latitude > 80 or latitude < -80:
            step -= 1
    return min(max(step, 1), 26)


def _move(bits: int, step: int, d: int, mask: int) -> int:
    """Add ``d`` (+1 or -1) to the coordinate whose bits ``mask`` selects (the odd bits:
    longitude, east; the even bits: latitude, north), wrapping around within ``step`` bits:
    the other coordinate's bits are filled with ones (or left empty, going up) so the carry
    runs through them, and cleared again afterwards."""
    mine = bits & mask
    other = bits & ~mask & _U64
    fill = (~mask & _U64) >> (64 - step * 2)
    moved = mine + (fill + 1) if d > 0 else (mine | fill) - (fill + 1)
    return (moved & _U64 & (mask >> (64 - step * 2))) | other


def _move_x(bits: int, step: int, d: int) -> int:
    """One cell east (``d`` > 0) or west."""
    return _move(bits, step, d, _ODD)


def _move_y(bits: int, step: int, d: int) -> int:
    """One cell north (``d`` > 0) or south."""
    return _move(bits, step, d, _EVEN)


# A cell: (bits, step). The nine cells of a search, None where one is left out.
Cell = tuple[int, int]


def search_boxes(shape: Shape) -> list[Cell | None]:
    """The cells to read for a search, in Redis's order: centre, north, south, east, west,
    north-east, north-west, south-east, south-west (None: not needed)."""
    min_lon, min_lat, max_lon, max_lat = shape.bounds()
    step = estimate_step(shape.reach_m(), shape.latitude)
    bits = encode(shape.longitude, shape.latitude, step) or 0
    north = _move_y(bits, step, 1)
    south = _move_y(bits, step, -1)
    east = _move_x(bits, step, 1)
    west = _move_x(bits, step, -1)
    # A step is one too fine when a neighbour does not reach the edge of the search.
    if step > 1 and (decode(north, step).lat_max < max_lat
                     or decode(south, step).lat_min > min_lat
                     or decode(east, step).long_max < max_lon
                     or decode(west, step).long_min > min_lon):
        step -= 1
        bits = encode(shape.longitude, shape.latitude, step) or 0
        north = _move_y(bits, step, 1)
        south = _move_y(bits, step, -1)
        east = _move_x(bits, step, 1)
        west = _move_x(bits, step, -1)
    cells: list[Cell | None] = [
        (bits, step), (north, step), (south, step), (east, step), (west, step),
        (_move_y(east, step, 1), step), (_move_y(west, step, 1), step),
        (_move_y(east, step, -1), step), (_move_y(west, step, -1), step),
    ]
    if step >= 2:
        area = decode(bits, step)
        # Neighbours on a side that the search does not reach are left out.
        if area.lat_min < min_lat:
            cells[2] = cells[7] = cells[8] = None
        if area.lat_max > max_lat:
            cells[1] = cells[5] = cells[6] = None
        if area.long_min < min_lon:
            cells[4] = cells[8] = cells[6] = None
        if area.long_max > max_lon:
            cells[3] = cells[7] = cells[5] = None
    return cells


def cell_scores(cell: Cell) -> tuple[int, int]:
    """The scores [min, max) of the positions inside a cell."""
    bits, step = cell
    shift = 52 - step * 2
    return bits << shift, (bits + 1) << shift
