#!/usr/bin/env python3
"""Regenerate the facts in ``resplite/commands/specs/*.json`` from a reference redis-server.

A developer tool, not part of the package. It asks the reference Redis (8.6.3:
``$RESPLITE_REFERENCE_SERVER``, ``tools/build-redis-reference.sh``) for ``COMMAND INFO`` and
``COMMAND DOCS`` (over RESP3, on a raw socket, so that sets, maps and their order arrive as Redis
sends them) for every command resplite implements, and writes one JSON file per command or
subcommand (``xgroup-create.json`` for ``XGROUP CREATE``).

What it copies and what it never touches:

* Facts are copied exactly: arity, command flags (COMMAND INFO's list and order, without the
  derived ``movablekeys``), ACL categories, hints, key specs, since, group, doc flags,
  deprecation versions, and the argument trees (names, types, tokens, flags, key-spec indexes,
  ``since``), in the field order COMMAND DOCS uses. ``display_text`` is added where Redis 7.2
  and later report it (every argument but ``oneof`` and ``block``).
* Prose is ours: summaries, history notes, argument summaries, ``replaced_by`` and any complexity
  line that is more than a bare big-O are kept from the existing file. A new file gets
  :data:`OWN_WORDS` in their place, which the table loader refuses, so that nobody ships it.
* Files whose ``since`` or a ``history`` entry is newer than the reference server (or that are
  resplite's own command, ``since`` 0.x) carry facts the server cannot give
  (:func:`hand_maintained`) and are never written; they are only validated.

Every file, generated or not, is then checked against Redis's rules: flags in COMMAND INFO's
order, the implicit ACL categories present and in Redis's order, key-spec indexes in range.

Usage::

    python tools/gen_specs.py                  # starts redis-server on a private unix socket
    python tools/gen_specs.py --port 23456     # uses a reference server already running
    python tools/gen_specs.py --check          # writes nothing; exit status 1 if anything is stale

Either way it then writes (or checks) ``resplite/commands/catalog.json``, which the server
reads its table from (``python -m resplite.commands.catalog``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT / "resplite" / "commands" / "specs"

# Placeholder for prose that still has to be written in our own words. The loader refuses it.
OWN_WORDS = "TODO(own words)"

# Redis 8.8's array type (commands/arrays.py), newer than the reference: written by hand.
ARRAY_COMMANDS = (
    "arset", "arget", "armset", "armget", "argetrange", "ardel", "ardelrange", "arlen",
    "arcount", "arinfo", "arnext", "arseek", "arinsert", "arring", "arlastitems", "arop",
    "argrep", "arscan",
)

# The one list of what resplite implements: command -> its subcommands (empty for a plain command).
COMMANDS: dict[str, tuple[str, ...]] = {
    **{name: () for name in ARRAY_COMMANDS},
    # connection
    "ping": (),
    "echo": (),
    "hello": (),
    "auth": (),
    "select": (),
    "quit": (),
    "reset": (),
    "client": (
        "id", "setname", "getname", "setinfo", "info", "list", "kill", "unblock", "no-evict",
        "no-touch", "pause", "unpause", "reply", "trackinginfo", "getredir", "help",
        "tracking", "caching",
    ),
    # server
    "info": (),
    "config": ("get", "set", "resetstat", "rewrite", "help"),
    "dbsize": (),
    "flushdb": (),
    "flushall": (),
    "swapdb": (),
    "time": (),
    "shutdown": (),
    "debug": (),
    "lastsave": (),
    "save": (),
    "bgsave": (),
    "bgrewriteaof": (),
    "role": (),
    "replicaof": (),
    "slaveof": (),
    "sync": (),
    "psync": (),
    "replconf": (),
    "command": ("count", "info", "docs", "list", "getkeys", "getkeysandflags", "help"),
    "memory": ("usage", "stats", "doctor", "help"),
    "lolwut": (),
    "slowlog": ("get", "len", "reset", "help"),
    "latency": ("latest", "history", "graph", "doctor", "reset", "histogram", "help"),
    "hotkeys": ("start", "stop", "get", "reset", "help"),
    "acl": (
        "whoami", "cat", "users", "help", "setuser", "getuser", "deluser", "list", "genpass",
        "log", "dryrun", "save", "load",
    ),
    "module": ("list", "load", "loadex", "unload", "help"),
    "wait": (),
    "waitaof": (),
    "readonly": (),
    "readwrite": (),
    "asking": (),
    "migrate": (),
    "cluster": ("slots", "shards", "nodes", "info", "myid", "myshardid", "keyslot",
                "countkeysinslot", "getkeysinslot", "setslot", "slot-stats", "help"),
    "resplite.clock": ("get", "freeze", "resume", "advance", "set", "help"),
    "resplite.fault": ("error", "delay", "close", "drop", "list", "clear", "help"),
    # generic (keyspace)
    "del": (),
    "unlink": (),
    "exists": (),
    "type": (),
    "keys": (),
    "scan": (),
    "randomkey": (),
    "rename": (),
    "renamenx": (),
    "copy": (),
    "move": (),
    "expire": (),
    "pexpire": (),
    "expireat": (),
    "pexpireat": (),
    "ttl": (),
    "pttl": (),
    "expiretime": (),
    "pexpiretime": (),
    "persist": (),
    "touch": (),
    "object": ("encoding", "idletime", "freq", "refcount", "help"),
    "dump": (),
    "restore": (),
    "restore-asking": (),
    # strings
    "get": (),
    "set": (),
    "setnx": (),
    "setex": (),
    "psetex": (),
    "getset": (),
    "getdel": (),
    "getex": (),
    "mget": (),
    "mset": (),
    "msetnx": (),
    "msetex": (),
    "incr": (),
    "decr": (),
    "incrby": (),
    "decrby": (),
    "incrbyfloat": (),
    "increx": (),
    "append": (),
    "strlen": (),
    "getrange": (),
    "setrange": (),
    "substr": (),
    "lcs": (),
    "delex": (),
    "digest": (),
    # hashes
    "hset": (),
    "hsetnx": (),
    "hmset": (),
    "hget": (),
    "hmget": (),
    "hgetall": (),
    "hdel": (),
    "hexists": (),
    "hlen": (),
    "hkeys": (),
    "hvals": (),
    "hstrlen": (),
    "hincrby": (),
    "hincrbyfloat": (),
    "hrandfield": (),
    "hscan": (),
    "hexpire": (),
    "hpexpire": (),
    "hexpireat": (),
    "hpexpireat": (),
    "httl": (),
    "hpttl": (),
    "hexpiretime": (),
    "hpexpiretime": (),
    "hpersist": (),
    "hgetdel": (),
    "hgetex": (),
    "hsetex": (),
    "himport": ("prepare", "set", "discard", "discardall"),
    # bitmaps
    "setbit": (),
    "getbit": (),
    "bitcount": (),
    "bitpos": (),
    "bitop": (),
    "bitfield": (),
    "bitfield_ro": (),
    # hyperloglog
    "pfadd": (),
    "pfcount": (),
    "pfmerge": (),
    "pfdebug": (),
    "pfselftest": (),
    # sorted sets
    "zadd": (),
    "zincrby": (),
    "zrem": (),
    "zcard": (),
    "zcount": (),
    "zlexcount": (),
    "zscore": (),
    "zmscore": (),
    "zrank": (),
    "zrevrank": (),
    "zrange": (),
    "zrangestore": (),
    "zrangebyscore": (),
    "zrevrangebyscore": (),
    "zrangebylex": (),
    "zrevrangebylex": (),
    "zrevrange": (),
    "zremrangebyrank": (),
    "zremrangebyscore": (),
    "zremrangebylex": (),
    "zpopmin": (),
    "zpopmax": (),
    "zmpop": (),
    "zrandmember": (),
    "zunion": (),
    "zinter": (),
    "zdiff": (),
    "zunionstore": (),
    "zinterstore": (),
    "zdiffstore": (),
    "zintercard": (),
    "zscan": (),
    "bzpopmin": (),
    "bzpopmax": (),
    "bzmpop": (),
    # sets
    "sadd": (),
    "srem": (),
    "smembers": (),
    "sismember": (),
    "smismember": (),
    "scard": (),
    "spop": (),
    "srandmember": (),
    "smove": (),
    "sinter": (),
    "sintercard": (),
    "sunioncard": (),
    "sdiffcard": (),
    "sinterstore": (),
    "sunion": (),
    "sunionstore": (),
    "sdiff": (),
    "sdiffstore": (),
    "sscan": (),
    # sort
    "sort": (),
    "sort_ro": (),
    # lists
    "lpush": (),
    "rpush": (),
    "lpushx": (),
    "rpushx": (),
    "lpop": (),
    "rpop": (),
    "llen": (),
    "lrange": (),
    "lindex": (),
    "lset": (),
    "linsert": (),
    "lrem": (),
    "ltrim": (),
    "lpos": (),
    "lmove": (),
    "lmovem": (),
    "blmovem": (),
    "rpoplpush": (),
    "lmpop": (),
    "blpop": (),
    "brpop": (),
    "blmove": (),
    "brpoplpush": (),
    "blmpop": (),
    # geo (on sorted sets)
    "geoadd": (),
    "geopos": (),
    "geodist": (),
    "geohash": (),
    "geosearch": (),
    "geosearchstore": (),
    "georadius": (),
    "georadius_ro": (),
    "georadiusbymember": (),
    "georadiusbymember_ro": (),
    # transactions
    "multi": (),
    "exec": (),
    "discard": (),
    "watch": (),
    "unwatch": (),
    # streams
    "xadd": (),
    "xrange": (),
    "xrevrange": (),
    "xlen": (),
    "xdel": (),
    "xdelex": (),
    "xtrim": (),
    "xread": (),
    "xreadgroup": (),
    "xack": (),
    "xackdel": (),
    "xpending": (),
    "xclaim": (),
    "xautoclaim": (),
    "xgroup": ("create", "setid", "destroy", "createconsumer", "delconsumer", "help"),
    "xinfo": ("stream", "groups", "consumers", "help"),
    "xsetid": (),
    "xcfgset": (),
    "xidmprecord": (),
    "xnack": (),
    # pub/sub
    "subscribe": (),
    "unsubscribe": (),
    "psubscribe": (),
    "punsubscribe": (),
    "ssubscribe": (),
    "sunsubscribe": (),
    "publish": (),
    "spublish": (),
    "pubsub": ("channels", "numsub", "numpat", "shardchannels", "shardnumsub", "help"),
    "monitor": (),
    # scripting
    "eval": (),
    "evalsha": (),
    "eval_ro": (),
    "evalsha_ro": (),
    "script": ("load", "exists", "flush", "kill", "help"),
    "function": ("load", "delete", "flush", "list", "dump", "restore", "stats", "kill", "help"),
    "fcall": (),
    "fcall_ro": (),
}

def version_of(text: str) -> tuple[int, int, int]:
    """``"8.10.0"`` as ``(8, 10, 0)``."""
    major, minor, patch = [*text.split("."), "0", "0"][:3]
    return int(major), int(minor), int(patch)


def hand_maintained(reference: tuple[int, int, int]) -> dict[str, str]:
    """Spec files (by stem) whose facts do not come from a reference server of version
    ``reference``, and why, read from the files themselves: resplite's own commands (a
    ``since`` below 1.0) and those whose ``since`` or newest ``history`` entry is newer
    than the reference. Their facts are written by hand from the newer Redis's
    documentation; they are validated, never generated."""
    found: dict[str, str] = {}
    for path in sorted(SPEC_DIR.glob("*.json")):
        spec = json.loads(path.read_text(encoding="utf-8"))
        since = version_of(spec["since"])
        newest = max([since, *(version_of(version) for version, _ in spec["history"])])
        if since[0] < 1:
            found[path.stem] = "resplite's own command"
        elif since > reference:
            found[path.stem] = f"added in Redis {spec['since']}"
        elif newest > reference:
            found[path.stem] = f"Redis {'.'.join(map(str, newest))} history"
    return found


# display_text values that Redis 7.2+ reports differently from the argument name, keyed by
# (full command name, argument name as the reference server names it).
DISPLAY_TEXT: dict[tuple[str, str], str] = {
    ("client|list", "addr"): "ip:port",
    ("client|list", "laddr"): "ip:port",
    ("xgroup|create", "entries_read"): "entries-read",
    ("xgroup|setid", "entries_read"): "entries-read",
}

# COMMAND INFO lists flags and ACL categories in these fixed orders (Redis's reply tables).
FLAG_ORDER = (
    "write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking",
    "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
    "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys", "allow_busy",
)
ACL_ORDER = (
    "@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash", "@string",
    "@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub", "@admin", "@fast", "@slow",
    "@blocking", "@dangerous", "@connection", "@transaction", "@scripting", "@array",
)
KEY_SPEC_FLAGS = (
    "RO", "RW", "OW", "RM", "ACCESS", "UPDATE", "INSERT", "DELETE", "NOT_KEY", "INCOMPLETE",
    "VARIABLE_FLAGS",
)
ARG_TYPES = (
    "string", "integer", "double", "key", "pattern", "unix-time", "pure-token", "oneof", "block",
)
ARG_FLAGS = ("optional", "multiple", "multiple_token")
BARE_BIG_O = re.compile(r"O\([^()]*\)")


def stem_of(name: str, container: str | None = None) -> str:
    return f"{container}-{name}" if container else name


# --------------------------------------------------------------------------------------------
# A minimal RESP3 client: enough to read COMMAND INFO / COMMAND DOCS without any decoding help.


class _Incomplete(Exception):
    pass


def _parse(buf: bytes, i: int) -> tuple[Any, int]:
    end = buf.find(b"\r\n", i)
    if end < 0:
        raise _Incomplete
    kind, line, i = buf[i : i + 1], buf[i + 1 : end], end + 2
    if kind in (b"+", b"-"):
        text = line.decode()
        if kind == b"-":
            raise RuntimeError(f"reference server answered an error: {text}")
        return text, i
    if kind == b":":
        return int(line), i
    if kind == b"_":
        return None, i
    if kind == b"$":
        n = int(line)
        if n < 0:
            return None, i
        if len(buf) < i + n + 2:
            raise _Incomplete
        return buf[i : i + n].decode(), i + n + 2
    if kind in (b"*", b"~", b"%"):
        n = int(line)
        if n < 0:
            return None, i
        items = []
        for _ in range(n * 2 if kind == b"%" else n):
            value, i = _parse(buf, i)
            items.append(value)
        if kind == b"%":
            return dict(zip(items[::2], items[1::2], strict=True)), i
        return items, i
    raise RuntimeError(f"unexpected RESP type {kind!r}")


class RespClient:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""
        self.hello: dict[str, Any] = self.call("HELLO", "3")

    def call(self, *args: str) -> Any:
        parts = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg.encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.sendall(b"".join(parts))
        while True:
            try:
                value, used = _parse(self.buf, 0)
            except _Incomplete:
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    raise ConnectionError("reference server closed the connection") from None
                self.buf += chunk
                continue
            self.buf = self.buf[used:]
            return value


def start_reference_server(binary: str, workdir: Path) -> tuple[subprocess.Popen[bytes], Path]:
    sock_path = workdir / "redis.sock"
    proc = subprocess.Popen(
        [binary, "--port", "0", "--unixsocket", str(sock_path), "--save", "", "--appendonly",
         "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not sock_path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"{binary} did not start")
        time.sleep(0.02)
    return proc, sock_path


# --------------------------------------------------------------------------------------------
# Conversion of the reference server's replies into our file format.


def convert_arguments(fullname: str, args: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for arg in args:
        converted: dict[str, Any] = {}
        for field, value in arg.items():
            if field == "arguments":
                value = convert_arguments(fullname, value)
            elif field == "flags":
                value = list(value)
            converted[field] = value
            if field == "type" and value not in ("oneof", "block"):
                converted["display_text"] = DISPLAY_TEXT.get((fullname, arg["name"]), arg["name"])
        out.append(converted)
    return out


def convert_key_spec(ks: dict[str, Any]) -> dict[str, Any]:
    # COMMAND INFO spells the access/operation flags in lower case; our files use Redis's
    # source spelling (RW, DELETE, INCOMPLETE ...), and COMMAND INFO is rebuilt from it.
    return {
        "flags": [f.upper() for f in ks["flags"]],
        "notes": ks.get("notes"),
        "begin_search": {"type": ks["begin_search"]["type"], "spec": ks["begin_search"]["spec"]},
        "find_keys": {"type": ks["find_keys"]["type"], "spec": ks["find_keys"]["spec"]},
    }


def build_spec(info: list[Any], doc: dict[str, Any]) -> dict[str, Any]:
    fullname: str = info[0]
    container, _, sub = fullname.rpartition("|")
    flags = [f for f in info[2] if f != "movablekeys"]
    spec: dict[str, Any] = {"name": (sub or fullname).upper()}
    if container:
        spec["container"] = container.upper()
    complexity = doc.get("complexity")
    spec.update(
        {
            "summary": OWN_WORDS,
            "since": doc["since"],
            "group": doc["group"],
            "complexity": complexity if complexity is None or BARE_BIG_O.fullmatch(complexity)
            else OWN_WORDS,
            "history": [[version, OWN_WORDS] for version, _ in doc.get("history", [])],
            "doc_flags": list(doc.get("doc_flags", [])),
            "deprecated_since": doc.get("deprecated_since"),
            "replaced_by": OWN_WORDS if doc.get("replaced_by") else None,
            "arity": info[1],
            "command_flags": flags,
            "acl_categories": list(info[6]),
            "hints": list(info[7]),
            "key_specs": [convert_key_spec(ks) for ks in info[8]],
            "arguments": convert_arguments(fullname, doc.get("arguments", [])),
            "reply_schema": None,
        }
    )
    return spec


def _argument_prose(args: list[dict[str, Any]], path: str = "") -> dict[str, str]:
    found = {}
    for arg in args:
        here = f"{path}/{arg['name']}"
        if "summary" in arg:
            found[here] = arg["summary"]
        found.update(_argument_prose(arg.get("arguments", []), here))
    return found


def _apply_argument_prose(
    args: list[dict[str, Any]], prose: dict[str, str], path: str = ""
) -> None:
    for arg in args:
        here = f"{path}/{arg['name']}"
        if "summary" in arg:
            arg["summary"] = prose.get(here, OWN_WORDS)
        _apply_argument_prose(arg.get("arguments", []), prose, here)


def keep_prose(new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """Carry our own words over from the existing file wherever the facts still match."""
    if old is None:
        return new
    new["summary"] = old.get("summary", OWN_WORDS)
    if new["complexity"] == OWN_WORDS and old.get("complexity"):
        new["complexity"] = old["complexity"]
    elif new["complexity"] is not None and old.get("complexity") not in (None, OWN_WORDS):
        # A bare big-O may still have been reworded by hand; the hand wins.
        new["complexity"] = old["complexity"]
    old_history = old.get("history") or []
    for i, entry in enumerate(new["history"]):
        if i < len(old_history) and old_history[i][0] == entry[0]:
            entry[1] = old_history[i][1]
    if new["replaced_by"] is not None and old.get("replaced_by"):
        new["replaced_by"] = old["replaced_by"]
    _apply_argument_prose(new["arguments"], _argument_prose(old.get("arguments") or []))
    return new


# --------------------------------------------------------------------------------------------
# Validation shared by generated and hand-maintained files.


def _in_order(values: list[str], order: tuple[str, ...]) -> bool:
    positions = [order.index(v) for v in values]
    return positions == sorted(positions) and len(set(positions)) == len(positions)


def implicit_categories(flags: list[str], acl: list[str] | None = None) -> set[str]:
    """The ACL categories Redis adds from a command's flags."""
    implied = set()
    if "write" in flags:
        implied.add("@write")
    # Redis keeps scripting commands (EVAL_RO, FCALL_RO...) out of @read.
    if "readonly" in flags and "@scripting" not in (acl or []):
        implied.add("@read")
    if "admin" in flags:
        implied |= {"@admin", "@dangerous"}
    if "pubsub" in flags:
        implied.add("@pubsub")
    implied.add("@fast" if "fast" in flags else "@slow")
    if "blocking" in flags:
        implied.add("@blocking")
    return implied


def validate(stem: str, spec: dict[str, Any]) -> list[str]:
    problems = []
    flags = spec.get("command_flags", [])
    unknown = [f for f in flags if f not in FLAG_ORDER or f == "movablekeys"]
    if unknown:
        problems.append(f"unknown or derived command flags {unknown}")
    elif not _in_order(flags, FLAG_ORDER):
        problems.append(f"command flags {flags} not in COMMAND INFO order")
    acl = spec.get("acl_categories", [])
    if any(c not in ACL_ORDER for c in acl):
        problems.append(f"unknown ACL categories in {acl}")
    elif not _in_order(acl, ACL_ORDER):
        problems.append(f"ACL categories {acl} not in COMMAND INFO order")
    missing = implicit_categories(flags, acl) - set(acl)
    if missing:
        problems.append(f"ACL categories lack the implicit {sorted(missing)}")
    n_specs = len(spec.get("key_specs") or [])
    for ks in spec.get("key_specs") or []:
        bad = [f for f in ks["flags"] if f not in KEY_SPEC_FLAGS]
        if bad:
            problems.append(f"unknown key-spec flags {bad}")

    def walk(args: list[dict[str, Any]]) -> None:
        for arg in args:
            if arg.get("type") not in ARG_TYPES:
                problems.append(f"argument {arg.get('name')!r} has type {arg.get('type')!r}")
            idx = arg.get("key_spec_index")
            if idx is not None and not 0 <= idx < n_specs:
                problems.append(f"argument {arg['name']!r} names key spec {idx} of {n_specs}")
            if any(f not in ARG_FLAGS for f in arg.get("flags", [])):
                problems.append(f"argument {arg['name']!r} has flags {arg['flags']}")
            if arg.get("type") in ("oneof", "block"):
                if "display_text" in arg or not arg.get("arguments"):
                    problems.append(f"container argument {arg['name']!r} is malformed")
                walk(arg.get("arguments", []))
            elif "display_text" not in arg:
                problems.append(f"argument {arg['name']!r} has no display_text")

    walk(spec.get("arguments") or [])

    def prose(value: Any) -> bool:
        if isinstance(value, str):
            return OWN_WORDS in value
        if isinstance(value, list):
            return any(prose(v) for v in value)
        if isinstance(value, dict):
            return any(prose(v) for v in value.values())
        return False

    if prose(spec):
        problems.append("prose still to be written in our own words")
    return [f"{stem}.json: {p}" for p in problems]


# --------------------------------------------------------------------------------------------


def render(spec: dict[str, Any]) -> str:
    """JSON with two-space indentation and short scalar lists kept on one line."""
    text = json.dumps(spec, indent=2, ensure_ascii=False)
    scalar = r'(?:"(?:[^"\\]|\\.)*"|-?\d+|null|true|false)'
    pattern = re.compile(r"\[\s*(" + scalar + r"(?:,\s*" + scalar + r")*)\s*\]")

    def collapse(m: re.Match[str]) -> str:
        items = re.findall(scalar, m.group(1))
        one_line = "[" + ", ".join(items) + "]"
        return one_line if len(one_line) <= 90 else m.group(0)

    return pattern.sub(collapse, text) + "\n"


def expected_stems() -> dict[str, tuple[str, str | None]]:
    stems: dict[str, tuple[str, str | None]] = {}
    for name, subs in COMMANDS.items():
        stems[stem_of(name)] = (name, None)
        for sub in subs:
            stems[stem_of(sub, name)] = (sub, name)
    return stems


def generate(client: RespClient, check: bool) -> int:
    stems = expected_stems()
    by_hand = hand_maintained(version_of(client.hello["version"]))
    wanted = [s for s in stems if s not in by_hand]
    tops = sorted({stems[s][1] or stems[s][0] for s in wanted})
    infos = dict(zip(tops, client.call("COMMAND", "INFO", *tops), strict=True))
    docs = client.call("COMMAND", "DOCS", *tops)
    missing = [t for t in tops if infos[t] is None]
    if missing:
        print(f"reference server lacks {missing}: write their spec files by hand, with the "
              "Redis version that added them as `since`", file=sys.stderr)
        return 2

    stale = 0
    problems: list[str] = []
    for stem in sorted(stems):
        path = SPEC_DIR / f"{stem}.json"
        old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        if stem in by_hand:
            if old is None:
                problems.append(f"{stem}.json: hand-maintained spec is missing")
            else:
                problems.extend(validate(stem, old))
            continue
        name, container = stems[stem]
        if container:
            info = next(
                (s for s in infos[container][9] if s[0] == f"{container}|{name}"), None
            )
            doc = docs[container]["subcommands"].get(f"{container}|{name}")
            if info is None or doc is None:
                problems.append(f"reference server lacks {container}|{name}")
                continue
        else:
            info, doc = infos[name], docs[name]
        spec = keep_prose(build_spec(info, doc), old)
        problems.extend(validate(stem, spec))
        text = render(spec)
        if old is None or path.read_text(encoding="utf-8") != text:
            stale += 1
            print(f"{'stale' if check else 'wrote'} {path.relative_to(ROOT)}")
            if not check:
                path.write_text(text, encoding="utf-8")

    known = set(stems)
    for path in sorted(SPEC_DIR.glob("*.json")):
        if path.stem not in known:
            problems.append(f"{path.name}: not in COMMANDS (remove it or list the command)")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    return 1 if check and stale else 0


def write_catalog(check: bool) -> int:
    """Regenerate (or with ``check``, verify) resplite/commands/catalog.json, the one file a
    server reads its command table from, after the specs it is made of."""
    argv = [sys.executable, "-m", "resplite.commands.catalog", *(["--check"] if check else [])]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    return subprocess.run(argv, cwd=ROOT, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, help="port of a running reference redis-server")
    parser.add_argument(
        "--server", default=os.environ.get("RESPLITE_REFERENCE_SERVER") or "redis-server",
        help="redis-server binary to start (default: $RESPLITE_REFERENCE_SERVER, else the "
             "one on PATH)")
    parser.add_argument("--check", action="store_true", help="write nothing, report staleness")
    args = parser.parse_args(argv)
    return _generate_specs(args) or write_catalog(args.check)


def _generate_specs(args: argparse.Namespace) -> int:
    SPEC_DIR.mkdir(parents=True, exist_ok=True)

    if args.port:
        with socket.create_connection(("127.0.0.1", args.port)) as sock:
            return generate(RespClient(sock), args.check)
    binary = shutil.which(args.server)
    if binary is None:
        print(f"{args.server} not found; build Redis 8.6.3 with "
              "tools/build-redis-reference.sh, or pass --port", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="gen-specs-"))
    proc, sock_path = start_reference_server(binary, workdir)
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(os.fspath(sock_path))
            return generate(RespClient(sock), args.check)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
