"""Random points and random searches sent to a real redis-server and to resplite, compared.

Hypothesis draws a geo index (points scattered around a centre at a random spread, from a few
metres to the whole globe, some of them at the same position, so that distances tie), then
searches: GEOSEARCH and GEORADIUS / GEORADIUSBYMEMBER by radius or by box, in every unit,
sorted or not, with COUNT (ANY) and the WITH options, plus GEODIST, GEOPOS, GEOHASH and
GEOSEARCHSTORE. Replies must be byte-equal, coordinates compared through
:func:`support.normalize.coordinates` (Redis 7.0 and 8.0+ print them differently).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.normalize import coordinates
from support.pair import Pair

LAT_MAX = 85.05112878
Cmd = tuple[bytes | str | int, ...]
Case = tuple[list[tuple[float, float]], list[Cmd]]
UNITS = ("m", "km", "ft", "mi")


@st.composite
def index(draw: st.DrawFn) -> tuple[tuple[float, float], list[tuple[float, float]]]:
    """A centre and points around it (longitude, latitude), within Redis's limits."""
    lon0 = draw(st.floats(-180, 180))
    lat0 = draw(st.floats(-LAT_MAX, LAT_MAX))
    spread = draw(st.sampled_from([0.0001, 0.01, 0.5, 5.0, 60.0, 360.0]))
    points: list[tuple[float, float]] = []
    for _ in range(draw(st.integers(1, 60))):
        if points and draw(st.integers(0, 9)) == 0:
            points.append(draw(st.sampled_from(points)))  # the same position again
            continue
        lon = lon0 + draw(st.floats(-spread, spread))
        lat = lat0 + draw(st.floats(-spread, spread))
        points.append((min(max(lon, -180.0), 180.0), min(max(lat, -LAT_MAX), LAT_MAX)))
    return (lon0, lat0), points


@st.composite
def search(draw: st.DrawFn, n: int, center: tuple[float, float]) -> Cmd:
    member = f"m{draw(st.integers(0, n - 1))}"
    unit = draw(st.sampled_from(UNITS))
    size = draw(st.sampled_from(["0", "1", "15", "250", "3000", "40000"]))
    lon = f"{center[0] + draw(st.floats(-0.2, 0.2)):.6f}"
    lat = f"{max(min(center[1] + draw(st.floats(-0.2, 0.2)), LAT_MAX), -LAT_MAX):.6f}"
    lon = f"{min(max(float(lon), -180), 180):.6f}"
    options: list[bytes | str | int] = []
    if draw(st.booleans()):
        options.append(draw(st.sampled_from(["ASC", "DESC"])))
    if draw(st.booleans()):
        options += ["COUNT", draw(st.integers(1, n + 2))]
        if draw(st.integers(0, 2)) == 0:
            options.append("ANY")
    for with_ in ("WITHDIST", "WITHHASH", "WITHCOORD"):
        if draw(st.booleans()):
            options.append(with_)
    kind = draw(st.sampled_from(["radius", "box", "georadius", "bymember", "store"]))
    if kind == "georadius":
        return ("GEORADIUS", "g", lon, lat, size, unit, *options)
    if kind == "bymember":
        return ("GEORADIUSBYMEMBER", "g", member, size, unit, *options)
    origin = ("FROMMEMBER", member) if draw(st.booleans()) else ("FROMLONLAT", lon, lat)
    if kind == "box":
        height = draw(st.sampled_from(["0", "2", "30", "500", "6000"]))
        return ("GEOSEARCH", "g", *origin, "BYBOX", size, height, unit, *options)
    if kind == "store":
        plain = [o for o in options if o not in ("WITHDIST", "WITHHASH", "WITHCOORD")]
        return ("GEOSEARCHSTORE", "d", "g", *origin, "BYRADIUS", size, unit, *plain,
                *(["STOREDIST"] if draw(st.booleans()) else []))
    return ("GEOSEARCH", "g", *origin, "BYRADIUS", size, unit, *options)


@st.composite
def scenario(draw: st.DrawFn) -> Case:
    center, points = draw(index())
    n = len(points)
    commands: list[Cmd] = []
    for _ in range(draw(st.integers(3, 12))):
        pick = draw(st.integers(0, 5))
        if pick == 0:
            a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
            commands.append(("GEODIST", "g", f"m{a}", f"m{b}", draw(st.sampled_from(UNITS))))
        elif pick == 1:
            picks = draw(st.lists(st.integers(0, n), min_size=1, max_size=4))
            commands.append((draw(st.sampled_from(["GEOPOS", "GEOHASH"])), "g",
                             *[f"m{i}" for i in picks]))
        else:
            commands.append(draw(search(n, center)))
            if commands[-1][0] == "GEOSEARCHSTORE":
                commands.append(("ZRANGE", "d", "0", "-1"))
    return points, commands


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=scenario())
def test_random_geo_searches_match_redis(pair: Pair, case: Case) -> None:
    points, commands = case
    for conn in (pair.ref, pair.ours):
        conn.call("FLUSHALL")
    add: list[bytes | str | int] = ["GEOADD", "g"]
    for i, (lon, lat) in enumerate(points):
        add += [repr(lon), repr(lat), f"m{i}"]
    pair.check(*add)
    for cmd in commands:
        pair.check(*cmd, normalize=coordinates)
