"""Geo commands against a real Redis 7.0, byte for byte, in RESP2 and RESP3.

Scenarios are short command sequences on freshly flushed servers whose replies must be
identical, errors included: GEOADD (NX, XX, CH), GEOPOS, GEODIST (every unit), GEOHASH,
GEOSEARCH and GEOSEARCHSTORE (FROMMEMBER / FROMLONLAT, BYRADIUS / BYBOX, ASC / DESC, COUNT
[ANY], WITHCOORD / WITHDIST / WITHHASH, STOREDIST), GEORADIUS, GEORADIUSBYMEMBER and their
``_RO`` forms, with the scores, encodings and keyspace the sorted-set commands see.

Coordinates (GEOPOS, WITHCOORD) are compared through :func:`support.normalize.coordinates`:
Redis 7.0 prints them with ``%.17Lf`` (``13.36138933897018433``), Redis 8.0+ as doubles
(``13.361389338970184``); they must be the same doubles, and the 8.0 test below asserts
resplite's bytes. Distances, hashes, scores and members are compared exactly.
"""

from __future__ import annotations

import pytest
from compat_helpers import decode, ref_version, run
from support.normalize import coordinates, doubles
from support.pair import Pair

Scenario = list[tuple[bytes | str | int, ...]]

SICILY = ("GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
          "Catania")
# Points around Rome: a few km apart, two of them at the same position (equal distances).
ROME = ("GEOADD", "rome", "12.496365", "41.902782", "colosseum", "12.453389", "41.902916",
        "vatican", "12.476873", "41.898611", "pantheon", "12.476873", "41.898611", "rotonda",
        "12.483082", "41.893055", "campidoglio", "12.582780", "41.799440", "ciampino",
        "12.250000", "41.800278", "fiumicino", "12.476873", "41.898611", "pantheon2")
UNITS = ("m", "km", "ft", "mi", "M", "KM", "Ft", "mI")


def grid(key: str, n: int, lon0: float, lat0: float, step: float) -> tuple[bytes | str | int, ...]:
    """GEOADD of an n x n grid of points from (lon0, lat0), ``step`` degrees apart."""
    args: list[bytes | str | int] = ["GEOADD", key]
    for i in range(n):
        for j in range(n):
            args += [f"{lon0 + i * step:.6f}", f"{lat0 + j * step:.6f}", f"p{i}:{j}"]
    return tuple(args)


SCENARIOS: dict[str, Scenario] = {
    # GEOADD
    "GEOADD: adds positions as geohash scores, counts new members": [
        SICILY, ("GEOADD", "Sicily", "13.361389", "38.115556", "Palermo"),
        ("GEOADD", "Sicily", "13.5", "38.1", "Palermo", "12.758489", "38.788135", "edge"),
        ("ZRANGE", "Sicily", "0", "-1", "WITHSCORES"), ("ZCARD", "Sicily"), ("TYPE", "Sicily"),
        ("OBJECT", "ENCODING", "Sicily"), ("ZSCORE", "Sicily", "Catania"),
    ],
    "GEOADD: NX, XX and CH as ZADD reads them": [
        SICILY,
        ("GEOADD", "Sicily", "NX", "1", "1", "Palermo", "2", "2", "new"),
        ("GEOADD", "Sicily", "XX", "3", "3", "Palermo", "4", "4", "nope"),
        ("GEOADD", "Sicily", "CH", "5", "5", "Palermo", "6", "6", "other", "5", "5", "Palermo"),
        ("GEOADD", "Sicily", "XX", "CH", "7", "7", "Catania", "8", "8", "missing"),
        ("GEOADD", "Sicily", "ch", "nx", "ch", "9", "9", "Catania", "9", "9", "third"),
        ("GEOADD", "nokey", "XX", "1", "1", "a"), ("EXISTS", "nokey"),
        ("ZRANGE", "Sicily", "0", "-1", "WITHSCORES"),
    ],
    "GEOADD: errors and their order": [
        ("GEOADD", "g", "NX", "XX", "1", "1", "a"), ("GEOADD", "g", "1", "1"),
        ("GEOADD", "g", "1", "1", "a", "2"), ("GEOADD", "g", "1", "1", "a", "2", "2"),
        ("GEOADD", "g", "NX", "1", "1"), ("GEOADD", "g", "GT", "1", "1", "a"),
        ("GEOADD", "g", "GT", "1", "a"), ("GEOADD", "g", "INCR", "1", "1"),
        ("GEOADD", "g", "CH", "CH", "CH"), ("GEOADD", "g", "NX", "XX", "CH"),
        ("GEOADD", "g", "x", "1", "a"), ("GEOADD", "g", "1", "y", "a"),
        ("GEOADD", "g", "", "1", "a"), ("GEOADD", "g", " 1", "1", "a"),
        ("GEOADD", "g", "nan", "1", "a"), ("GEOADD", "g", "1e400", "1", "a"),
        ("GEOADD", "g", "180.0000001", "0", "a"), ("GEOADD", "g", "-180.0000001", "0", "a"),
        ("GEOADD", "g", "0", "85.05112879", "a"), ("GEOADD", "g", "0", "-85.0511288", "a"),
        ("GEOADD", "g", "inf", "0", "a"), ("GEOADD", "g", "-inf", "-inf", "a"),
        ("GEOADD", "g", "1e300", "1e-300", "a"), ("GEOADD", "g", "-200.5", "100.25", "a"),
        ("GEOADD", "g", "1", "1", "a", "500", "1", "b"), ("EXISTS", "g"),
        ("GEOADD", "g"), ("GEOADD", "g", "1", "1", "a", "2", "2", "b", "x"),
        ("SET", "s", "x"), ("GEOADD", "s", "1", "1", "a"), ("GEOADD", "s", "500", "1", "a"),
        ("GEOADD", "s", "NX", "XX", "1", "1", "a"), ("GEOADD", "g", b"nx\x00junk", "1", "1", "a"),
    ],
    "GEOADD: the limits of the grid": [
        ("GEOADD", "g", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw",
         "180", "-85.05112878", "se", "-180", "85.05112878", "nw", "0", "0", "origin",
         "-0", "-0", "negzero", "0x10", "1e1", "hex", "179.9999999", "85.0511287", "near"),
        ("ZRANGE", "g", "0", "-1", "WITHSCORES"), ("GEOPOS", "g", "ne", "sw", "se", "nw",
        "origin", "negzero", "hex", "near"),
        ("GEOHASH", "g", "ne", "sw", "se", "nw", "origin", "negzero", "hex", "near"),
        ("GEODIST", "g", "ne", "sw"), ("GEODIST", "g", "se", "nw", "km"),
        ("GEODIST", "g", "origin", "near", "mi"),
    ],
    "GEOADD: a wide GEOADD converts to a skiplist": [
        grid("big", 12, 10.0, 45.0, 0.01), ("OBJECT", "ENCODING", "big"), ("ZCARD", "big"),
        ("GEOPOS", "big", "p0:0", "p11:11", "p5:7"), ("GEOHASH", "big", "p3:3"),
        ("GEODIST", "big", "p0:0", "p11:11", "km"),
    ],
    # GEOPOS, GEOHASH, GEODIST
    "GEOPOS / GEOHASH: members, missing members, missing keys, wrong types": [
        SICILY,
        ("GEOPOS", "Sicily", "Palermo", "nope", "Catania", "Palermo"), ("GEOPOS", "Sicily"),
        ("GEOPOS", "nokey", "a", "b"), ("GEOPOS", "nokey"),
        ("GEOHASH", "Sicily", "Palermo", "nope", "Catania"), ("GEOHASH", "Sicily"),
        ("GEOHASH", "nokey", "a", "b"), ("GEOHASH", "nokey"),
        ("SET", "s", "x"), ("GEOPOS", "s", "a"), ("GEOHASH", "s", "a"), ("GEOPOS", "s"),
        ("GEOPOS",), ("GEOHASH",),
    ],
    "GEOPOS / GEOHASH / GEODIST on scores GEOADD never writes": [
        ("ZADD", "z", "0", "zero", "-1", "minus", "1.5", "frac", "4503599627370495", "max52",
         "4503599627370496", "past52", "1e17", "big", "1e19", "huge", "-1e19", "neghuge",
         "inf", "pinf", "-inf", "ninf", "-0", "negzero", "12345678901.5", "mid"),
        ("GEOPOS", "z", "zero", "minus", "frac", "max52", "past52", "big", "huge", "neghuge",
         "pinf", "ninf", "negzero", "mid"),
        ("GEOHASH", "z", "zero", "minus", "frac", "max52", "past52", "big", "huge", "neghuge",
         "pinf", "ninf", "negzero", "mid"),
        ("GEODIST", "z", "zero", "max52"), ("GEODIST", "z", "minus", "huge", "km"),
        ("GEODIST", "z", "pinf", "ninf"), ("GEODIST", "z", "frac", "mid", "ft"),
    ],
    "GEODIST: units, same member, missing members and keys, errors": [
        SICILY,
        *[("GEODIST", "Sicily", "Palermo", "Catania", unit) for unit in UNITS],
        ("GEODIST", "Sicily", "Palermo", "Catania"), ("GEODIST", "Sicily", "Catania", "Palermo"),
        ("GEODIST", "Sicily", "Palermo", "Palermo"), ("GEODIST", "Sicily", "Palermo", "nope"),
        ("GEODIST", "Sicily", "nope", "Palermo", "km"), ("GEODIST", "nokey", "a", "b"),
        ("GEODIST", "nokey", "a", "b", "km"), ("GEODIST", "nokey", "a", "b", "parsec"),
        ("GEODIST", "Sicily", "Palermo", "Catania", "parsec"),
        ("GEODIST", "Sicily", "Palermo", "Catania", "km", "extra"),
        ("GEODIST", "Sicily", "Palermo", "Catania", b"km\x00x"),
        ("GEODIST", "Sicily", "Palermo"), ("SET", "s", "x"), ("GEODIST", "s", "a", "b"),
        ("GEODIST", "s", "a", "b", "lightyear"), ("GEODIST", "s", "a", "b", "km", "x"),
    ],
    "GEODIST: distances across the globe": [
        ("GEOADD", "w", "0", "0", "a", "179.9", "0", "b", "-179.9", "0", "c", "0", "85", "d",
         "0", "-85", "e", "0.0001", "0", "f", "0.00001", "0.00001", "g", "90", "45", "h"),
        *[("GEODIST", "w", x, y, u) for x, y in (("a", "b"), ("b", "c"), ("d", "e"), ("a", "f"),
          ("a", "g"), ("h", "d"), ("c", "h")) for u in ("m", "km", "ft", "mi")],
    ],
    # GEOSEARCH
    "GEOSEARCH: FROMLONLAT / FROMMEMBER with BYRADIUS and every option": [
        ROME,
        ("GEOSEARCH", "rome", "FROMLONLAT", "12.48", "41.90", "BYRADIUS", "2", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12.48", "41.90", "BYRADIUS", "2", "km", "ASC"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12.48", "41.90", "BYRADIUS", "2", "km", "DESC"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "3000", "m", "ASC",
         "WITHDIST", "WITHHASH", "WITHCOORD"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "30", "km", "DESC",
         "WITHCOORD"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "ciampino", "BYRADIUS", "20", "mi", "WITHDIST"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "vatican", "BYRADIUS", "10000", "ft", "WITHHASH",
         "ASC"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12.48", "41.90", "BYRADIUS", "0", "m"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "rotonda", "BYRADIUS", "0", "m", "WITHDIST"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "0", "0", "BYRADIUS", "100", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12.48", "41.90", "BYRADIUS", "5000", "km",
         "WITHDIST", "ASC"),
        ("geosearch", "rome", "fromlonlat", "12.48", "41.90", "byradius", "2", "KM", "asc",
         "withdist"),
    ],
    "GEOSEARCH: BYBOX in every unit": [
        ROME,
        ("GEOSEARCH", "rome", "FROMLONLAT", "12.48", "41.90", "BYBOX", "4", "2", "km", "ASC",
         "WITHDIST"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "pantheon", "BYBOX", "1", "1", "km", "WITHCOORD"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "pantheon", "BYBOX", "50", "30", "km", "DESC",
         "WITHDIST", "WITHHASH"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "colosseum", "BYBOX", "10000", "2000", "ft"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "colosseum", "BYBOX", "20", "20", "mi", "ASC"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12.48", "41.90", "BYBOX", "0", "0", "m"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "rotonda", "BYBOX", "0", "0", "m", "WITHDIST"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12.48", "41.90", "BYBOX", "6000", "3000", "km",
         "ASC", "WITHDIST"),
    ],
    "GEOSEARCH: COUNT, COUNT ANY and ties": [
        ROME,
        *[("GEOSEARCH", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "50", "km", *opts)
          for opts in (
              ("COUNT", "1"), ("COUNT", "2"), ("COUNT", "3", "WITHDIST"), ("COUNT", "100"),
              ("COUNT", "3", "DESC"), ("COUNT", "3", "ASC"), ("COUNT", "2", "ANY"),
              ("COUNT", "2", "ANY", "ASC"), ("COUNT", "2", "ANY", "DESC", "WITHDIST"),
              ("ANY", "COUNT", "5"), ("COUNT", "1", "COUNT", "4"), ("COUNT", "9", "ANY"),
              ("COUNT", "8", "WITHDIST"), ("COUNT", "7", "DESC", "WITHDIST"),
          )],
    ],
    "GEOSEARCH: errors and their order": [
        ROME, ("SET", "s", "x"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "BYBOX", "1", "1",
         "km"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "pantheon", "FROMLONLAT", "12", "41", "BYRADIUS",
         "1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "FROMMEMBER", "pantheon", "BYRADIUS",
         "1", "km"),
        ("GEOSEARCH", "rome", "BYRADIUS", "1", "km", "ASC"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "ASC", "WITHDIST"),
        ("geosearch", "rome", "BYRADIUS", "1", "km", "WITHDIST"),
        ("GEOSEARCH", "rome", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "200", "41", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "x", "41", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "x", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "-1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "parsec"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYBOX", "x", "1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYBOX", "1", "x", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYBOX", "-1", "1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYBOX", "1", "-1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYBOX", "1", "1", "yd"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYBOX", "1", "1"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "rome", "FROMMEMBER"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "COUNT", "0"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "COUNT", "-3"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "COUNT", "x"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "COUNT"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "ANY"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "STORE", "d"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "STOREDIST"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "BOGUS"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "1", "km", "COUNT", "0",
         "BOGUS"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", "-1", "km", "COUNT", "0"),
        ("GEOSEARCH", "nokey", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "nokey", "FROMMEMBER", "nope", "BYRADIUS", "1", "km", "ANY"),
        ("GEOSEARCH", "nokey", "FROMLONLAT", "200", "0", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "nokey", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "s", "FROMLONLAT", "200", "0", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "s", "FROMMEMBER", "a", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", "BYRADIUS", b"1\x00", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41", b"byradius\x00x", "1", "km"),
        ("GEOSEARCH", "rome", "FROMLONLAT", "12", "41"),
    ],
    # GEOSEARCHSTORE
    "GEOSEARCHSTORE: geohashes or distances, encodings, empty results": [
        ROME,
        ("GEOSEARCHSTORE", "dst", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "2", "km"),
        ("ZRANGE", "dst", "0", "-1", "WITHSCORES"), ("OBJECT", "ENCODING", "dst"),
        ("GEOSEARCHSTORE", "dst", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "2", "km",
         "COUNT", "2"),
        ("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
        ("GEOSEARCHSTORE", "dst", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "2", "km",
         "COUNT", "2", "ANY", "DESC"),
        ("ZRANGE", "dst", "0", "-1"),
        ("GEOSEARCHSTORE", "dst", "rome", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("EXISTS", "dst"),
        ("GEOSEARCHSTORE", "dst", "rome", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("SET", "dst", "string"),
        ("GEOSEARCHSTORE", "dst", "rome", "FROMMEMBER", "pantheon", "BYBOX", "3", "3", "km",
         "ASC"),
        ("TYPE", "dst"), ("ZRANGE", "dst", "0", "-1"),
        ("GEOSEARCHSTORE", "dst", "nokey", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("EXISTS", "dst"),
        ("GEOSEARCHSTORE", "dst", "nokey", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
        ("GEOSEARCHSTORE", "rome", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "1", "km"),
        ("ZRANGE", "rome", "0", "-1"),
    ],
    "GEOSEARCHSTORE: errors and their order": [
        ROME, ("SET", "s", "x"),
        ("GEOSEARCHSTORE", "d", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "1", "km",
         "WITHDIST"),
        ("GEOSEARCHSTORE", "d", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "1", "km",
         "WITHCOORD", "STOREDIST"),
        ("GEOSEARCHSTORE", "d", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "1", "km",
         "STORE", "x"),
        ("GEOSEARCHSTORE", "d", "rome", "BYRADIUS", "1", "km"),
        ("GEOSEARCHSTORE", "d", "rome", "FROMMEMBER", "pantheon", "WITHHASH"),
        ("GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "pantheon", "BYRADIUS", "1", "km"),
        ("GEOSEARCHSTORE", "s", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "1", "km"),
        ("TYPE", "s"),
        ("GEOSEARCHSTORE", "d", "rome", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"),
        ("GEOSEARCHSTORE", "d", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "1", "km",
         "COUNT", "0"),
        ("GEOSEARCHSTORE", "d", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "1", "km", "ANY"),
        ("GEOSEARCHSTORE", "d", "rome", "FROMMEMBER", "pantheon"),
        ("EXISTS", "d"),
    ],
    # GEORADIUS and GEORADIUSBYMEMBER
    "GEORADIUS: every option, STORE and STOREDIST": [
        SICILY, ("GEOADD", "Sicily", "12.758489", "38.788135", "edge1", "17.241510", "38.788135",
                 "edge2"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "ASC", "WITHDIST"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "DESC", "WITHCOORD", "WITHHASH"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHHASH", "WITHCOORD",
         "COUNT", "1"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "ANY"),
        ("GEORADIUS", "Sicily", "15", "37", "100", "mi", "WITHDIST"),
        ("GEORADIUS", "Sicily", "15", "37", "400000", "ft", "DESC"),
        ("GEORADIUS", "Sicily", "15", "37", "200000", "M", "ASC"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "st"),
        ("ZRANGE", "st", "0", "-1", "WITHSCORES"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "2", "DESC", "STORE", "st"),
        ("ZRANGE", "st", "0", "-1", "WITHSCORES"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "a", "STORE", "b"),
        ("EXISTS", "a"), ("EXISTS", "b"),
        ("GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "st"), ("EXISTS", "st"),
        ("GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "b"), ("EXISTS", "b"),
        ("GEORADIUS", "nokey", "15", "37", "200", "km"),
    ],
    "GEORADIUS: errors and their order": [
        SICILY, ("SET", "s", "x"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "d", "WITHDIST"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHHASH", "STOREDIST", "d"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "FROMMEMBER", "Palermo"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "BYBOX", "1", "1", "km"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "ANY"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "0"),
        ("GEORADIUS", "Sicily", "15", "37", "-1", "km"),
        ("GEORADIUS", "Sicily", "15", "37", "x", "km"),
        ("GEORADIUS", "Sicily", "15", "37", "200", "lightyear"),
        ("GEORADIUS", "Sicily", "500", "37", "x", "lightyear"),
        ("GEORADIUS", "Sicily", "x", "37", "200", "km"),
        ("GEORADIUS", "s", "500", "37", "200", "km"),
        ("GEORADIUS", "nokey", "500", "37", "200", "km"),
        ("GEORADIUS", "nokey", "15", "37", "-200", "km"),
        ("GEORADIUS", "nokey", "15", "37", "200", "km", "COUNT", "0"),
        ("GEORADIUS", "nokey", "15", "37", "200", "km", "BOGUS"),
        ("GEORADIUS", "Sicily", "15", "37", "200"),
        ("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STORE", "d"),
        ("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "STOREDIST", "d"),
        ("GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "WITHDIST", "ASC"),
        ("GEORADIUS_RO", "nokey", "15", "37", "200", "km"),
    ],
    "GEORADIUSBYMEMBER: options, STORE, missing keys and members": [
        SICILY, ("GEOADD", "Sicily", "13.583333", "37.316667", "Agrigento"), ("SET", "s", "x"),
        ("GEORADIUSBYMEMBER", "Sicily", "Agrigento", "100", "km"),
        ("GEORADIUSBYMEMBER", "Sicily", "Agrigento", "200", "km", "WITHDIST", "ASC"),
        ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "WITHCOORD", "DESC", "COUNT",
         "2"),
        ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "STOREDIST", "d"),
        ("ZRANGE", "d", "0", "-1"), ("GEODIST", "Sicily", "Palermo", "Catania", "km"),
        ("GEORADIUSBYMEMBER", "Sicily", "nope", "200", "km"),
        ("GEORADIUSBYMEMBER", "Sicily", "nope", "x", "km"),
        ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "x", "km"),
        ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "1", "parsec"),
        ("GEORADIUSBYMEMBER", "nokey", "nope", "x", "parsec"),
        ("GEORADIUSBYMEMBER", "nokey", "nope", "x", "parsec", "STORE", "d"), ("EXISTS", "d"),
        ("GEORADIUSBYMEMBER", "nokey", "nope", "x", "parsec", "COUNT", "0"),
        ("GEORADIUSBYMEMBER", "nokey", "nope", "x", "parsec", "WITHDIST", "STORE", "d"),
        ("GEORADIUSBYMEMBER", "s", "nope", "1", "km"),
        ("GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "200", "km", "WITHDIST", "COUNT", "1"),
        ("GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "200", "km", "STORE", "d"),
        ("GEORADIUSBYMEMBER_RO", "nokey", "Palermo", "200", "km"),
        ("GEORADIUSBYMEMBER", "Sicily", "Palermo", "200"),
    ],
    # Large indexes and the poles
    "Searches over a skiplist with many cells": [
        grid("big", 15, 8.0, 44.0, 0.05), grid("big", 6, -0.1, -0.1, 0.04),
        *[("GEOSEARCH", "big", "FROMLONLAT", lon, lat, by, *size, "ASC", "WITHDIST", "COUNT",
           "25")
          for lon, lat in (("8.3", "44.3"), ("8", "44"), ("8.71", "44.69"), ("0", "0"))
          for by, size in (("BYRADIUS", ("20", "km")), ("BYBOX", ("40", "10", "km")),
                           ("BYRADIUS", ("3", "mi")), ("BYBOX", ("8000", "30000", "ft")))],
        ("GEOSEARCH", "big", "FROMMEMBER", "p7:7", "BYRADIUS", "1000", "km", "COUNT", "30",
         "DESC", "WITHHASH"),
        ("GEORADIUSBYMEMBER", "big", "p0:0", "15", "km", "WITHDIST", "ASC"),
    ],
    "Searches near the poles and across the antimeridian": [
        ("GEOADD", "edges", "179.99", "0", "e1", "-179.99", "0", "w1", "179.5", "10", "e2",
         "-179.5", "-10", "w2", "0", "85", "n1", "90", "84.9", "n2", "-90", "-84.9", "s2",
         "180", "85.05112878", "corner", "0", "-85.05112878", "south", "45", "70", "arctic",
         "-45", "-80", "antarctic"),
        *[("GEOSEARCH", "edges", "FROMLONLAT", lon, lat, by, *size, "ASC", "WITHDIST")
          for lon, lat in (("180", "0"), ("-180", "0"), ("0", "85"), ("0", "-85"), ("45", "70"),
                           ("179.9", "5"))
          for by, size in (("BYRADIUS", ("100", "km")), ("BYRADIUS", ("3000", "km")),
                           ("BYBOX", ("500", "500", "km")), ("BYRADIUS", ("20000", "km")))],
    ],
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_geo_scenario(pair: Pair, scenario: str) -> None:
    for cmd in SCENARIOS[scenario]:
        pair.check(*cmd, normalize=coordinates)


def test_storedist_stores_distances_in_the_unit_asked(pair: Pair) -> None:
    """STOREDIST's scores are distances, fractional: compared as doubles."""
    run(pair, ROME)
    for unit in UNITS:
        for cmd in (("GEOSEARCHSTORE", "d", "rome", "FROMMEMBER", "pantheon", "BYRADIUS", "40",
                     unit, "STOREDIST"),
                    ("GEORADIUSBYMEMBER", "rome", "pantheon", "25", unit, "STOREDIST", "d2"),
                    ("GEORADIUS", "rome", "12.5", "41.9", "30", unit, "COUNT", "3", "STOREDIST",
                     "d3")):
            pair.check(*cmd)
        for key in ("d", "d2", "d3"):
            pair.check("ZRANGE", key, "0", "-1", "WITHSCORES", normalize=doubles)
            pair.check("OBJECT", "ENCODING", key)


def test_ties_sorted_partially_as_redis_does(pair: Pair) -> None:
    """Many members at a handful of positions: equal distances, in the order Redis's partial
    quicksort leaves them (COUNT below the number found) or its stable full sort."""
    args: list[bytes | str | int] = ["GEOADD", "ties"]
    for i in range(90):
        spot = i % 4
        args += [f"{10 + spot * 0.01:.6f}", f"{50 + spot * 0.003:.6f}", f"m{i:02d}"]
    run(pair, tuple(args))
    for count in (1, 2, 5, 7, 8, 30, 41, 60, 89, 90, 200):
        for order in ("ASC", "DESC"):
            pair.check("GEOSEARCH", "ties", "FROMLONLAT", "10", "50", "BYRADIUS", "50", "km",
                       "COUNT", count, order, "WITHDIST")
    pair.check("GEOSEARCH", "ties", "FROMLONLAT", "10", "50", "BYRADIUS", "50", "km", "DESC")
    pair.check("GEOSEARCH", "ties", "FROMLONLAT", "10", "50", "BYRADIUS", "50", "km", "ASC")
    pair.check("GEORADIUS", "ties", "10", "50", "50", "km", "COUNT", "13", "STORE", "st")
    pair.check("ZRANGE", "st", "0", "-1")


def test_sorted_set_commands_work_on_a_geo_index(pair: Pair) -> None:
    run(pair, SICILY, ("ZREM", "Sicily", "Palermo"), ("GEOPOS", "Sicily", "Palermo"),
        ("ZINCRBY", "Sicily", "1", "Catania"), ("GEOHASH", "Sicily", "Catania"),
        ("ZUNIONSTORE", "copy", "1", "Sicily"), ("GEOHASH", "copy", "Catania"),
        ("COPY", "Sicily", "c2"), ("GEODIST", "c2", "Catania", "Catania"),
        ("RENAME", "c2", "c3"), ("GEOSEARCH", "c3", "FROMMEMBER", "Catania", "BYRADIUS", "1",
                                 "km", "WITHDIST"),
        ("DEL", "Sicily"), ("GEOPOS", "Sicily", "Catania"))


def test_a_transaction_of_geo_commands(pair: Pair) -> None:
    run(pair, ("MULTI",), SICILY, ("GEODIST", "Sicily", "Palermo", "Catania", "km"),
        ("GEOSEARCHSTORE", "d", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "500", "km"),
        ("GEOADD", "Sicily", "500", "0", "bad"), ("EXEC",), ("ZCARD", "d"))


def _double(pair: Pair, text: bytes) -> bytes:
    return b"," + text + b"\r\n" if pair.resp == 3 else b"$%d\r\n%s\r\n" % (len(text), text)


@pytest.mark.redis_version("8.0")
def test_coordinates_print_as_doubles_since_redis_8(pair: Pair) -> None:
    """Redis 8.0 prints GEOPOS and WITHCOORD coordinates with addReplyDouble (7.0: %.17Lf with
    trailing zeros cut)."""
    ours = pair.ours
    run(pair, SICILY, ("GEOADD", "Sicily", "180", "85.05112878", "corner"))
    lon, lat = _double(pair, b"13.361389338970184"), _double(pair, b"38.1155563954963")
    assert ours.call("GEOPOS", "Sicily", "Palermo") == b"*1\r\n*2\r\n" + lon + lat
    assert ours.call("GEOPOS", "Sicily", "corner") == (
        b"*1\r\n*2\r\n" + _double(pair, b"180") + _double(pair, b"85.05112878"))
    reply = ours.call("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km",
                      "WITHCOORD", "WITHDIST")
    assert reply == b"*1\r\n*3\r\n$7\r\nPalermo\r\n$6\r\n0.0000\r\n*2\r\n" + lon + lat
    if ref_version(pair) >= (8, 0):
        pair.check("GEOPOS", "Sicily", "Palermo", "corner")
        pair.check("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km",
                   "WITHCOORD", "WITHDIST")
        return
    # Redis 7.0's text for the same position reads back as the same pair of doubles.
    ref = decode(pair.ref.call("GEOPOS", "Sicily", "Palermo"))
    assert ref == [[b"13.36138933897018433", b"38.11555639549629859"]]
    assert float(b"13.36138933897018433") == float(b"13.361389338970184")
