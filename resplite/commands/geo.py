"""Geo commands on sorted sets: GEOADD, GEOPOS, GEODIST, GEOHASH, GEOSEARCH, GEOSEARCHSTORE,
GEORADIUS, GEORADIUSBYMEMBER and their ``_RO`` forms.

A geo index is an ordinary sorted set whose scores are 52-bit geohashes
(:mod:`resplite.algorithms.geohash`): GEOADD turns each position into its score and hands
the work to ZADD (options, replies, encodings and the ``zadd`` keyspace event are ZADD's),
and every other sorted-set command works on the same key. The handlers follow Redis's
``geo.c`` step by step, so that of several problems the one Redis reports first is the one
reported: for the searches, the key's type first, then the centre and the size of a
GEORADIUS, then the options in order, then the checks between them.

Searches read the nine cells around the centre in Redis's order, keep the members inside
the shape, and sort them by distance when asked (or when COUNT asks for the nearest ones):
a full sort is stable, as glibc's ``qsort`` is; COUNT below the number found sorts only the
first COUNT with Redis's own partial quicksort (:mod:`resplite.algorithms.pqsort`), whose
order among equal distances is repeated exactly. COUNT ANY stops reading as soon as it has
COUNT members, unsorted unless ASC or DESC is given.

Printing follows Redis 8.4: distances with four decimals (``fixedpoint_d2string``),
coordinates (GEOPOS, WITHCOORD) as doubles printed by
:func:`~resplite.algorithms.scores.d2string` (Redis 8.0 changed them from 7.0's
``%.17Lf`` with trailing zeros cut), hashes (WITHHASH) as integers.

GEOSEARCHSTORE and GEORADIUS STORE / STOREDIST write the result as a sorted set (of
geohashes, or of distances in the unit asked), listpack-encoded when it fits the limits, and
publish ``geosearchstore`` / ``georadiusstore`` (``del`` when an empty result removes the
destination), as Redis does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from resplite.algorithms import geohash
from resplite.algorithms.pqsort import pqsort
from resplite.algorithms.scores import d2string, parse_score
from resplite.commands.args import c_option, parse_int
from resplite.commands.generic import lookup_read
from resplite.commands.sorted_sets import store_entries, zadd
from resplite.engine import errors
from resplite.engine.errors import CommandError
from resplite.engine.notify import GENERIC
from resplite.engine.registry import command
from resplite.protocol.replies import NULL_ARRAY, Double
from resplite.store.zset import ZSet

if TYPE_CHECKING:
    from resplite.engine.client import Client

UNSUPPORTED_UNIT = "ERR unsupported unit provided. please use M, KM, FT, MI"
NOT_DECODABLE = "ERR could not decode requested zset member"
ANY_NEEDS_COUNT = "ERR the ANY argument requires COUNT argument"


def _read_zset(client: Client, key: bytes) -> ZSet | None:
    value = lookup_read(client, key)
    if value is None or value.__class__ is ZSet:
        return value
    raise CommandError(errors.WRONGTYPE)


def _double(arg: bytes, error: str = errors.NOT_FLOAT) -> float:
    value = parse_score(arg)  # Redis's getDoubleFromObject: strtod, the whole argument
    if value is None:
        raise CommandError(error)
    return value


def _lonlat(lon_arg: bytes, lat_arg: bytes) -> tuple[float, float]:
    """A position argument pair, within Redis's limits."""
    lon = _double(lon_arg)
    lat = _double(lat_arg)
    if (lon < geohash.LONG_MIN or lon > geohash.LONG_MAX or lat < geohash.LAT_MIN
            or lat > geohash.LAT_MAX):
        raise CommandError(f"ERR invalid longitude,latitude pair {lon:f},{lat:f}")
    return lon, lat


def _unit(arg: bytes) -> float:
    """Metres per unit of M, KM, FT or MI."""
    to_meters = geohash.UNITS.get(c_option(arg))
    if to_meters is None:
        raise CommandError(UNSUPPORTED_UNIT)
    return to_meters


def _radius(value_arg: bytes, unit_arg: bytes) -> tuple[float, float]:
    """(radius, metres per unit)."""
    radius = _double(value_arg, "ERR need numeric radius")
    if radius < 0:
        raise CommandError("ERR radius cannot be negative")
    return radius, _unit(unit_arg)


def _box(width_arg: bytes, height_arg: bytes, unit_arg: bytes) -> tuple[float, float, float]:
    """(width, height, metres per unit)."""
    width = _double(width_arg, "ERR need numeric width")
    height = _double(height_arg, "ERR need numeric height")
    if height < 0 or width < 0:
        raise CommandError("ERR height or width cannot be negative")
    return width, height, _unit(unit_arg)


def _member_position(zs: ZSet, member: bytes) -> tuple[float, float]:
    score = zs.scores.get(member)
    if score is None:
        raise CommandError(NOT_DECODABLE)
    return geohash.decode_score(score)


def _coordinate(value: float) -> Double:
    return Double(d2string(value))


# -- GEOADD, GEOPOS, GEODIST, GEOHASH -------------------------------------------------------


@command("geoadd")
def geoadd(client: Client, argv: list[bytes]) -> Any:
    first = 2  # the first longitude, past the options
    nx = xx = False
    n = len(argv)
    while first < n:
        option = c_option(argv[first])
        if option == b"nx":
            nx = True
        elif option == b"xx":
            xx = True
        elif option != b"ch":
            break
        first += 1
    if (n - first) % 3 or (nx and xx):
        raise CommandError(errors.SYNTAX)
    # ZADD key [options] score member ..., each score the position's geohash.
    zadd_argv = [b"zadd", *argv[1:first]]
    for i in range(first, n, 3):
        lon, lat = _lonlat(argv[i], argv[i + 1])
        zadd_argv.append(b"%d" % geohash.position_score(lon, lat))
        zadd_argv.append(argv[i + 2])
    return zadd(client, zadd_argv)


@command("geopos")
def geopos(client: Client, argv: list[bytes]) -> list[Any]:
    zs = _read_zset(client, argv[1])
    out: list[Any] = []
    for member in argv[2:]:
        score = None if zs is None else zs.scores.get(member)
        if score is None:
            out.append(NULL_ARRAY)
        else:
            lon, lat = geohash.decode_score(score)
            out.append([_coordinate(lon), _coordinate(lat)])
    return out


@command("geodist")
def geodist(client: Client, argv: list[bytes]) -> bytes | None:
    to_meters = 1.0
    if len(argv) == 5:
        to_meters = _unit(argv[4])
    elif len(argv) > 5:
        raise CommandError(errors.SYNTAX)
    zs = _read_zset(client, argv[1])
    if zs is None:
        return None
    first = zs.scores.get(argv[2])
    second = zs.scores.get(argv[3])
    if first is None or second is None:
        return None
    lon1, lat1 = geohash.decode_score(first)
    lon2, lat2 = geohash.decode_score(second)
    return geohash.format_distance(geohash.distance(lon1, lat1, lon2, lat2) / to_meters)


@command("geohash")
def geohash_command(client: Client, argv: list[bytes]) -> list[bytes | None]:
    zs = _read_zset(client, argv[1])
    out: list[bytes | None] = []
    for member in argv[2:]:
        score = None if zs is None else zs.scores.get(member)
        out.append(None if score is None else geohash.geohash_string(score))
    return out


# -- searches --------------------------------------------------------------------------------

_COORDS, _MEMBER, _NOSTORE, _SEARCH, _SEARCHSTORE = 1, 2, 4, 8, 16
_NONE, _ASC, _DESC = 0, 1, 2


@dataclass(slots=True)
class _Point:
    """One search result: a member, its position, its distance from the centre (metres,
    then in the unit asked) and its score."""

    member: bytes
    longitude: float
    latitude: float
    dist: float
    score: float


def _points_in(zs: ZSet, shape: geohash.Shape, limit: int) -> list[_Point]:
    """The members inside ``shape``, cell by cell in Redis's order; with ``limit`` (COUNT
    ANY), stop once that many are found."""
    found: list[_Point] = []
    cells = geohash.search_boxes(shape)
    last = 0  # the last cell read, 0 while only the centre has been (as in Redis)
    for i, cell in enumerate(cells):
        if cell is None:
            continue
        # With a huge radius neighbours can be the same cell: one read is enough. As in
        # Redis, a cell is compared with the last one read after the centre.
        if last and cell == cells[last]:
            continue
        if found and limit and len(found) >= limit:
            break
        low, high = geohash.cell_scores(cell)
        for score, member in zs.score_range(float(low), False, float(high), True):
            lon, lat = geohash.decode_score(score)
            dist = shape.contains(lon, lat)
            if dist is not None:
                found.append(_Point(member, lon, lat, dist, score))
            if found and limit and len(found) >= limit:
                break
        last = i
    return found


def _by_distance(a: _Point, b: _Point) -> int:
    return (a.dist > b.dist) - (a.dist < b.dist)


def _by_distance_desc(a: _Point, b: _Point) -> int:
    return (a.dist < b.dist) - (a.dist > b.dist)


def _search(client: Client, argv: list[bytes], src: int, flags: int) -> Any:
    """GEORADIUS, GEORADIUSBYMEMBER, their _RO forms, GEOSEARCH and GEOSEARCHSTORE."""
    zs = _read_zset(client, argv[src])
    storekey: bytes | None = None
    storedist = False
    center: tuple[float, float] | None = None
    radius = width = height = 0.0
    conversion = 1.0
    box = False
    if flags & _COORDS:
        base = 6
        center = _lonlat(argv[2], argv[3])
        radius, conversion = _radius(argv[4], argv[5])
    elif flags & _MEMBER:
        base = 5
        if zs is not None:  # a missing key: the options still decide the reply
            center = _member_position(zs, argv[2])
            radius, conversion = _radius(argv[3], argv[4])
    else:
        base = 2
        if flags & _SEARCHSTORE:
            base = 3
            storekey = argv[1]

    withdist = withhash = withcoord = any_ = False
    frommember = fromloc = byradius = bybox = False
    sort = _NONE
    count = 0
    n = len(argv)
    remaining = n - base
    i = 0
    while i < remaining:
        at = base + i
        option = c_option(argv[at])
        if option == b"withdist":
            withdist = True
        elif option == b"withhash":
            withhash = True
        elif option == b"withcoord":
            withcoord = True
        elif option == b"any":
            any_ = True
        elif option == b"asc":
            sort = _ASC
        elif option == b"desc":
            sort = _DESC
        elif option == b"count" and i + 1 < remaining:
            parsed = parse_int(argv[at + 1])
            if parsed is None:
                raise CommandError(errors.NOT_INTEGER)
            if parsed <= 0:
                raise CommandError(errors.COUNT_MUST_BE_ABOVE_0)
            count = parsed
            i += 1
        elif (option in (b"store", b"storedist") and i + 1 < remaining
              and not flags & (_NOSTORE | _SEARCH)):
            storekey = argv[at + 1]
            storedist = option == b"storedist"
            i += 1
        elif option == b"storedist" and flags & _SEARCH and flags & _SEARCHSTORE:
            storedist = True
        elif option == b"frommember" and i + 1 < remaining and flags & _SEARCH and not fromloc:
            if zs is not None:
                center = _member_position(zs, argv[at + 1])
            frommember = True
            i += 1
        elif option == b"fromlonlat" and i + 2 < remaining and flags & _SEARCH and not frommember:
            center = _lonlat(argv[at + 1], argv[at + 2])
            fromloc = True
            i += 2
        elif option == b"byradius" and i + 2 < remaining and flags & _SEARCH and not bybox:
            radius, conversion = _radius(argv[at + 1], argv[at + 2])
            box = False
            byradius = True
            i += 2
        elif option == b"bybox" and i + 3 < remaining and flags & _SEARCH and not byradius:
            width, height, conversion = _box(argv[at + 1], argv[at + 2], argv[at + 3])
            box = True
            bybox = True
            i += 3
        else:
            raise CommandError(errors.SYNTAX)
        i += 1

    if storekey is not None and (withdist or withhash or withcoord):
        what = "GEOSEARCHSTORE" if flags & _SEARCHSTORE else "STORE option in GEORADIUS"
        raise CommandError(
            f"ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
    name = errors.user_text(argv[0])
    if flags & _SEARCH and not (frommember or fromloc):
        raise CommandError(
            f"ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}")
    if flags & _SEARCH and not (byradius or bybox):
        raise CommandError(
            f"ERR exactly one of BYRADIUS and BYBOX can be specified for {name}")
    if any_ and not count:
        raise CommandError(ANY_NEEDS_COUNT)

    if zs is None:
        if storekey is None:
            return []
        db = client.db
        if db.delete(storekey):
            db.signal_modified(storekey)
            client.server.notify(GENERIC, b"del", storekey, db.index)
        return 0

    # COUNT alone asks for the nearest ones; COUNT ANY for any of them.
    if count and sort == _NONE and not any_:
        sort = _ASC
    assert center is not None
    shape = geohash.Shape(center[0], center[1], conversion, radius=radius, width=width,
                          height=height, box=box)
    points = _points_in(zs, shape, count if any_ else 0)
    if not points and storekey is None:
        return []
    returned = len(points) if not count or len(points) < count else count
    if sort != _NONE:
        if returned == len(points):
            points.sort(key=lambda p: p.dist, reverse=sort == _DESC)  # stable, as glibc's
        else:
            pqsort(points, _by_distance if sort == _ASC else _by_distance_desc, 0, returned - 1)
    del points[returned:]

    if storekey is not None:
        entries = [((p.dist / conversion) if storedist else p.score, p.member) for p in points]
        event = b"geosearchstore" if flags & _SEARCH else b"georadiusstore"
        return store_entries(client, storekey, entries, event)

    if not (withdist or withhash or withcoord):
        return [p.member for p in points]
    out: list[Any] = []
    for p in points:
        item: list[Any] = [p.member]
        if withdist:
            item.append(geohash.format_distance(p.dist / conversion))
        if withhash:
            item.append(int(p.score))
        if withcoord:
            item.append([_coordinate(p.longitude), _coordinate(p.latitude)])
        out.append(item)
    return out


@command("georadius")
def georadius(client: Client, argv: list[bytes]) -> Any:
    return _search(client, argv, 1, _COORDS)


@command("georadiusbymember")
def georadiusbymember(client: Client, argv: list[bytes]) -> Any:
    return _search(client, argv, 1, _MEMBER)


@command("georadius_ro")
def georadius_ro(client: Client, argv: list[bytes]) -> Any:
    return _search(client, argv, 1, _COORDS | _NOSTORE)


@command("georadiusbymember_ro")
def georadiusbymember_ro(client: Client, argv: list[bytes]) -> Any:
    return _search(client, argv, 1, _MEMBER | _NOSTORE)


@command("geosearch")
def geosearch(client: Client, argv: list[bytes]) -> Any:
    return _search(client, argv, 1, _SEARCH)


@command("geosearchstore")
def geosearchstore(client: Client, argv: list[bytes]) -> Any:
    return _search(client, argv, 2, _SEARCH | _SEARCHSTORE)
