"""The Redis version a server answers as (``redis-compat-version``), and every behaviour that
differs between the versions it can answer as.

Users test against the Redis they run in production, and clients pinned to an older Redis
fail on replies that gained fields since (go-redis 9.7 on XINFO STREAM's 8.6 fields and on
SLOWLOG GET's 8.10 argument count). ``redis-compat-version`` picks one of :data:`VERSIONS`
at start (the config file, the command line, ``resplite.serve(redis_version=...)``); it
cannot change while the server runs. The server then:

* reports it: INFO's ``redis_version``, HELLO's ``version``, LOLWUT, Lua's
  ``redis.REDIS_VERSION`` and the snapshot's ``redis-ver`` (:func:`reported`);
* has only the commands and subcommands that version has: one added later (its spec's
  ``since``) answers Redis's unknown-command or unknown-subcommand error, and COMMAND lists
  it not (:func:`available`);
* shapes each reply listed in :data:`DIFFERENCES` as that version does.

Invariants: :data:`DIFFERENCES` is the one list of gated reply differences (the code asks
:func:`follows` with a key of it, never a bare version), and docs/compatibility.md's table of
them is checked against it by the tests; the newest version is the default, so a server
nobody configured answers as resplite's ``REDIS_VERSION``.
"""

from __future__ import annotations

from typing import Final

from resplite.version import REDIS_VERSION

Version = tuple[int, int]

#: The versions a server can answer as, oldest first; the last is the default.
VERSIONS: Final = ("7.0", "7.2", "7.4", "8.0", "8.2", "8.4", "8.6", "8.8", "8.10")
DEFAULT: Final = VERSIONS[-1]

#: Reply differences by the version that introduced them: key -> (version, what changed).
DIFFERENCES: Final[dict[str, tuple[str, str]]] = {
    "xinfo-active-time": (
        "7.2", "XINFO STREAM FULL gives each consumer active-time, XINFO CONSUMERS inactive"),
    "xinfo-stream-idmp": (
        "8.6", "XINFO STREAM has the idempotency fields (idmp-duration, idmp-maxsize, "
        "pids-tracked, iids-tracked, iids-added, iids-duplicates)"),
    # 8.0's source still adds the suffix; 8.6.3 does not (the release between is not
    # pinned down: 8.6 is the first line compared byte for byte).
    # Redis 7.0.15 writes DEBUG PROTOCOL's push before the reply; 8.6.3 defers push messages
    # made while a command runs until after its reply (the release between is not pinned
    # down: 8.6 is the first line compared byte for byte).
    "push-after-reply": (
        "8.6", "DEBUG PROTOCOL push sends its reply first and the push after it, as pushes made "
        "while a command runs are sent after its reply"),
    "unknown-command-bare": (
        "8.6", "an unknown command given no arguments is refused without \", with args "
        "beginning with: \""),
    # Both first seen in the 8.6.3 reference (Redis 8.0's October 2024 source has neither);
    # the release between that added them is not pinned down.
    "info-fields-8.6": (
        "8.6", "INFO stats gives expired_subkeys before expired_keys, each followed by the "
        "share the active cycle deleted (expired_subkeys_active, expired_keys_active); INFO "
        "memory has used_memory_peak_time and INFO persistence "
        "rdb_saves_consecutive_failures"),
    # 7.0.15 does not; first compared in 8.6.3 (the release between is not pinned down).
    "flush-sync-in-background": (
        "8.6", "FLUSHALL / FLUSHDB SYNC by a client (outside MULTI and scripts) runs as a "
        "blocking ASYNC flush: its keys count in INFO lazyfreed_objects"),
    "memory-stats-8.6": (
        "8.6", "MEMORY STATS has replica.fullsync.buffer and script.VMs"),
    "lrm-policies": (
        "8.6", "maxmemory-policy has volatile-lrm and allkeys-lrm (least recently modified: "
        "reads leave a key's idle time alone)"),
    "info-hotkeys": (
        "8.6", "INFO has a Hotkeys section, with the state of a HOTKEYS session"),
    "xinfo-nacked-count": (
        "8.8", "XINFO STREAM FULL gives each group nacked-count"),
    "slowlog-argc": (
        "8.10", "SLOWLOG GET entries have a 7th element, the command's whole argument count"),
    "acl-sanitize-payload": (
        "7.2", "new users (the default user too) have the sanitize-payload flag (ACL LIST, "
        "ACL GETUSER)"),
    "acl-command-rules": (
        "7.2", "ACL LIST / GETUSER give a user's command and category rules in the order "
        "they were set, each once, instead of rebuilding them from categories"),
    "client-name-c-string": (
        "7.2", "CLIENT SETNAME / SETINFO and HELLO SETNAME check a name only up to its first "
        "NUL byte"),
    "client-list-lib": (
        "7.2", "CLIENT LIST / INFO have lib-name and lib-ver"),
    "client-list-watch": (
        "7.4", "CLIENT LIST / INFO have watch, the number of keys the client watches"),
    "multi-oom-denyoom-only": (
        "7.4", "over maxmemory, a command queued in MULTI is refused only if it could grow "
        "memory (denyoom), as outside MULTI; 7.0 refuses every queued command"),
    "memory-stats-7.4": (
        "7.4", "MEMORY STATS has overhead.db.hashtable.lut, overhead.db.hashtable.rehashing, "
        "db.dict.rehashing.count and allocator.muzzy"),
    "client-list-io": (
        "8.0", "CLIENT LIST / INFO have io-thread, tot-net-in, tot-net-out and tot-cmds"),
    # Redis 8.0's I/O threads (iothread.c) report per thread in INFO threads.
    "info-threads": (
        "8.0", "INFO has a Threads section (io_thread_N: clients, reads, writes)"),
    "info-keysizes": (
        "8.0", "INFO has a Keysizes section (per database and type, the keys by length in "
        "power-of-two bins)"),
    "client-list-reads": (
        "8.8", "CLIENT LIST / INFO have read-events, parse-batch-cmd-sum and "
        "parse-batch-cnt"),
    "scan-cursor-string2ull": (
        "7.4", "SCAN cursors are read by string2ull: a negative or empty cursor is invalid, "
        "one with leading blanks is taken"),
    "kvobj": (
        "8.0", "a key and its value share one object: OBJECT REFCOUNT is 1 for every value "
        "(small integers are not shared), and a string is embstr only while value and key "
        "together take at most 41 bytes"),
    "lua-os-clock": (
        "7.4", "scripts have the os library, with os.clock alone"),
    "fast-float-strtod": (
        "8.0", "SORT scores and score range bounds (ZRANGEBYSCORE, ZCOUNT...) are read by "
        "fast_float: no leading blank, no hexadecimal, and an out-of-range SORT score is "
        "taken"),
    # Redis's pull request 14296, merged in August 2025, after 8.2.0.
    "cjson-array-mt": (
        "8.4", "scripts have cjson.decode_array_with_array_mt; cjson.encode writes a table "
        "whose metatable has __is_cjson_array as an array"),
    "double-d2string": (
        "7.2", "a script's {double=...} reply is printed as d2string prints doubles (0.1, "
        "1e+300, nan) where 7.0 printed %.17g (0.10000000000000001, -nan for 0/0)"),
    "local-loopback": (
        "7.2", "every 127.x.x.x client is local (protected mode, local-only settings), not "
        "127.0.0.1 alone; protected mode's -DENIED text says \"Set up an\" where 7.0 had "
        "\"Setup a an\""),
    "rdb-11": (
        "7.2", "FUNCTION DUMP payloads carry RDB version 11 (7.0: 10), and FUNCTION RESTORE "
        "takes payloads up to the version it writes"),
    "rdb-12": (
        "7.4", "FUNCTION DUMP payloads carry RDB version 12"),
    "rdb-13": (
        "8.6", "FUNCTION DUMP payloads carry RDB version 13"),
    # Absent from the source of October 2024, present in 8.6.3; taken as 8.0's.
    "payload-crc-zero": (
        "8.0", "RESTORE and FUNCTION RESTORE take a payload whose checksum is 0 as one "
        "without a checksum"),
    "lset-int-index": (
        "7.2", "LSET keeps the low 32 bits of its index (-9223372036854775808 is 0)"),
}


class VersionError(ValueError):
    """Not a version a server can answer as."""


def parse(text: str) -> Version:
    """``"8.6"`` (or ``"8.6.3"``: the patch is ignored) as ``(8, 6)``, if it is one of
    :data:`VERSIONS`."""
    parts = text.strip().split(".")
    key = ".".join(parts[:2])
    if key not in VERSIONS or len(parts) > 3 or not all(p.isdigit() for p in parts):
        raise VersionError(
            f"redis-compat-version must be one of {', '.join(VERSIONS)} (got {text!r})")
    return int(parts[0]), int(parts[1])


def text(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def reported(version: Version, newest: str = REDIS_VERSION) -> str:
    """The ``redis_version`` a server answering as ``version`` reports: ``newest``
    (resplite's REDIS_VERSION) for the newest line, else that line's ``.0`` release."""
    if text(version) == DEFAULT:
        return newest
    return f"{text(version)}.0"


def version_num(version_text: str) -> int:
    """``"8.6.0"`` as Redis's ``REDIS_VERSION_NUM`` (0x080600)."""
    return sum(int(part) << shift
               for part, shift in zip(version_text.split("."), (16, 8, 0), strict=False))


def since(spec_since: str) -> Version:
    """A spec's ``since`` (``"7.2.0"``) as a version to compare with."""
    parts = spec_since.split(".")
    return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0


def available(spec_since: str, version: Version) -> bool:
    """Whether a command added in ``spec_since`` exists in ``version`` (resplite's own
    commands, ``since`` 0.x, always do)."""
    added = since(spec_since)
    return added[0] < 1 or added <= version


_INTRODUCED: Final = {key: parse(first) for key, (first, _) in DIFFERENCES.items()}


def rdb_version(version: Version) -> int:
    """The RDB version a Redis of ``version`` writes in its payloads (FUNCTION DUMP) and
    reads up to (10 for 7.0, 11 for 7.2, 12 from 7.4, 13 from 8.6)."""
    for key, rdb in (("rdb-13", 13), ("rdb-12", 12), ("rdb-11", 11)):
        if follows(version, key):
            return rdb
    return 10


def follows(version: Version, key: str) -> bool:
    """Whether a server answering as ``version`` has the difference ``key``."""
    return version >= _INTRODUCED[key]
