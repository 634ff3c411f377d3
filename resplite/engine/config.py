"""Configuration the way Redis does it: directives with Redis's names, from a file and argv.

``resplite-server [redis.conf] [--directive value ...]`` reads the file first, then the
command-line directives, which override it. A bad directive stops the server with the file
name and line (or the argument) and the reason. CONFIG GET / SET read and change the same
:class:`Config` object; a SET calls the directive's hook so that it takes effect at once.

Each directive is declared once in :data:`DIRECTIVES` with its type, default and whether it
may change at runtime. Types parse and format values exactly as Redis does (``yes``/``no``
booleans, memory sizes with ``k``/``kb``/``mb``/``gb`` suffixes, integers with bounds).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resplite.engine import notify


class ConfigError(Exception):
    """A directive or value was refused; the message says which and why."""


Parser = Callable[[str], Any]
Formatter = Callable[[Any], str]


def parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered == "yes":
        return True
    if lowered == "no":
        return False
    raise ConfigError("argument must be 'yes' or 'no'")


def format_bool(value: bool) -> str:
    return "yes" if value else "no"


_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1024,
    "m": 1000**2,
    "mb": 1024**2,
    "g": 1000**3,
    "gb": 1024**3,
}


def parse_memory(text: str) -> int:
    lowered = text.lower()
    digits = lowered.rstrip("kmgb")
    unit = lowered[len(digits) :]
    if unit not in _UNITS or not digits or not digits.lstrip("-").isdigit():
        raise ConfigError("argument must be a memory value")
    value = int(digits) * _UNITS[unit]
    if value < 0:
        raise ConfigError("argument must be a memory value")
    return value


def format_memory(value: int) -> str:
    return str(value)


def _strict_int(text: str) -> int | None:
    """Redis's string2ll: plain decimal, optional '-', no '+', spaces or leading zeros."""
    body = text[1:] if text.startswith("-") else text
    if not body or not body.isascii() or not body.isdigit() or (body[0] == "0" and text != "0"):
        return None
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 63) else None


def int_parser(low: int, high: int) -> Parser:
    def parse(text: str) -> int:
        value = _strict_int(text)
        if value is None:
            raise ConfigError("argument couldn't be parsed into an integer")
        if not low <= value <= high:
            raise ConfigError(f"argument must be between {low} and {high} inclusive")
        return value

    return parse


def memory_parser(low: int, high: int) -> Parser:
    """A memory value (with units) that must also lie within bounds."""

    def parse(text: str) -> int:
        value = parse_memory(text)
        if not low <= value <= high:
            raise ConfigError(f"argument must be between {low} and {high} inclusive")
        return value

    return parse


def clamped_int_parser(low: int, high: int, floor: int, ceiling: int) -> Parser:
    """An integer accepted within [low, high] and stored within [floor, ceiling] (Redis's hz)."""
    accept = int_parser(low, high)

    def parse(text: str) -> int:
        return min(max(accept(text), floor), ceiling)

    return parse


def enum_parser(*choices: str) -> Parser:
    def parse(text: str) -> str:
        lowered = text.lower()
        if lowered not in choices:
            raise ConfigError(f"argument(s) must be one of the following: {', '.join(choices)}")
        return lowered

    return parse


def parse_string(text: str) -> str:
    return text


def parse_bind(text: str) -> tuple[str, ...]:
    addrs = tuple(text.split())
    if not addrs:
        raise ConfigError("Too many bind addresses specified.")
    return addrs


# client-output-buffer-limit: Redis's client classes, in CONFIG GET's order.
LIMIT_CLASSES = ("normal", "slave", "pubsub")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_CLASS_NAMES = {"normal": "normal", "slave": "slave", "replica": "slave", "pubsub": "pubsub"}


@dataclass(frozen=True, slots=True)
class BufferLimit:
    hard: int
    soft: int
    soft_seconds: int


Limits = dict[str, BufferLimit]

DEFAULT_LIMITS: Limits = {
    "normal": BufferLimit(0, 0, 0),
    "slave": BufferLimit(256 * 1024 * 1024, 64 * 1024 * 1024, 60),
    "pubsub": BufferLimit(32 * 1024 * 1024, 8 * 1024 * 1024, 60),
}


def _whole_int(text: str) -> int | None:
    """C's strtoll with the whole word consumed: optional sign, then digits."""
    return int(text) if _INTEGER.fullmatch(text) else None


def parse_limits(text: str) -> Limits:
    """Parse ``<class> <hard> <soft> <seconds> ...`` (client-output-buffer-limit).

    Returns the classes named; the directive merges them into the current limits, so the
    others keep theirs (:attr:`Directive.merge`). The whole text is refused on any error,
    with Redis's messages.
    """
    words = text.split()
    if len(words) % 4:
        raise ConfigError("Wrong number of arguments in buffer limit configuration.")
    result: Limits = {}
    for i in range(0, len(words), 4):
        cls = _CLASS_NAMES.get(words[i].lower())
        if cls is None:
            raise ConfigError("Invalid client class specified in buffer limit configuration.")
        try:
            hard = parse_memory(words[i + 1])
            soft = parse_memory(words[i + 2])
        except ConfigError:
            hard = soft = -1
        seconds = _whole_int(words[i + 3])
        if hard < 0 or soft < 0 or seconds is None or seconds < 0:
            raise ConfigError(
                "Error in hard, soft or soft_seconds setting in buffer limit configuration."
            )
        result[cls] = BufferLimit(hard, soft, seconds)
    return result


def format_limits(limits: Limits) -> str:
    return " ".join(
        f"{cls} {limits[cls].hard} {limits[cls].soft} {limits[cls].soft_seconds}"
        for cls in LIMIT_CLASSES
    )



def _parse_notify(text: str) -> int:
    try:
        return notify.parse_flags(text)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class Directive:
    name: str
    default: Any
    parse: Parser
    format: Formatter = str
    mutable: bool = True
    sensitive: bool = False
    # The parsed value is a dict merged into the current one (client-output-buffer-limit
    # names only the classes it changes).
    merge: bool = False


_INT_MAX = (1 << 31) - 1
_UINT_MAX = (1 << 32) - 1
_LONG_MAX = (1 << 63) - 1

DIRECTIVES: dict[str, Directive] = {
    d.name: d
    for d in (
        Directive("port", 6379, int_parser(0, 65535)),
        Directive("bind", ("127.0.0.1",), parse_bind, " ".join),
        Directive("unixsocket", "", parse_string, mutable=False),
        Directive("unixsocketperm", 0, lambda t: int(t, 8), lambda v: f"{v:o}", mutable=False),
        Directive("requirepass", "", parse_string, sensitive=True),
        Directive("maxclients", 10000, int_parser(1, _UINT_MAX)),
        Directive("timeout", 0, int_parser(0, _INT_MAX)),
        Directive("tcp-keepalive", 300, int_parser(0, _INT_MAX)),
        Directive("tcp-backlog", 511, int_parser(0, _INT_MAX), mutable=False),
        Directive("maxmemory", 0, parse_memory, format_memory),
        Directive(
            "maxmemory-policy",
            "noeviction",
            enum_parser(
                "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction",
            ),
        ),
        Directive("lfu-log-factor", 10, int_parser(0, _INT_MAX)),
        Directive("lfu-decay-time", 1, int_parser(0, _INT_MAX)),
        Directive("databases", 16, int_parser(1, _INT_MAX), mutable=False),
        Directive("proto-max-bulk-len", 512 * 1024 * 1024, memory_parser(1 << 20, _LONG_MAX),
                  format_memory),
        Directive("client-query-buffer-limit", 1024 * 1024 * 1024,
                  memory_parser(1 << 20, _LONG_MAX), format_memory),
        Directive("enable-debug-command", "no", enum_parser("no", "yes", "local"), mutable=False),
        Directive("enable-clock-command", "no", enum_parser("no", "yes", "local"), mutable=False),
        Directive("stream-node-max-entries", 100, int_parser(0, _LONG_MAX)),
        Directive("stream-node-max-bytes", 4096, parse_memory, format_memory),
        # Redis 8.6: the idempotency settings a stream starts with (XCFGSET changes them).
        Directive("stream-idmp-duration", 100, int_parser(1, 86_400)),
        Directive("stream-idmp-maxsize", 100, int_parser(1, 10_000)),
        Directive("hash-max-listpack-entries", 512, int_parser(0, _LONG_MAX)),
        Directive("hash-max-listpack-value", 64, parse_memory, format_memory),
        Directive("hll-sparse-max-bytes", 3000, parse_memory, format_memory),
        Directive("zset-max-listpack-entries", 128, int_parser(0, _LONG_MAX)),
        Directive("zset-max-listpack-value", 64, parse_memory, format_memory),
        Directive("set-max-intset-entries", 512, int_parser(0, _LONG_MAX)),
        Directive("set-max-listpack-entries", 128, int_parser(0, _LONG_MAX)),
        Directive("set-max-listpack-value", 64, int_parser(0, _LONG_MAX)),
        Directive("hz", 10, clamped_int_parser(0, _INT_MAX, 1, 500)),
        Directive(
            "loglevel", "notice", enum_parser("debug", "verbose", "notice", "warning", "nothing")
        ),
        Directive("logfile", "", parse_string, mutable=False),
        Directive("daemonize", False, parse_bool, format_bool, mutable=False),
        Directive("protected-mode", False, parse_bool, format_bool),
        Directive("save", "", parse_string),
        Directive("appendonly", False, parse_bool, format_bool),
        Directive("dir", ".", parse_string),
        Directive("dbfilename", "dump.rdb", parse_string),
        Directive("lazyfree-lazy-user-del", False, parse_bool, format_bool),
        Directive("lazyfree-lazy-user-flush", False, parse_bool, format_bool),
        Directive("io-threads", 1, int_parser(1, 128), mutable=False),
        Directive("slowlog-log-slower-than", 10000, int_parser(-1, _LONG_MAX)),
        Directive("slowlog-max-len", 128, int_parser(0, _LONG_MAX)),
        Directive("latency-tracking", True, parse_bool, format_bool),
        Directive("notify-keyspace-events", 0, _parse_notify, notify.format_flags),
        Directive("client-output-buffer-limit", DEFAULT_LIMITS, parse_limits, format_limits,
                  merge=True),
        Directive("busy-reply-threshold", 5000, int_parser(0, _LONG_MAX)),
        Directive("lua-time-limit", 5000, int_parser(0, _LONG_MAX)),
        Directive("replica-read-only", True, parse_bool, format_bool),
        Directive("cluster-enabled", False, parse_bool, format_bool, mutable=False),
        Directive("active-expire-enabled", True, parse_bool, format_bool),
        Directive("uvloop", True, parse_bool, format_bool, mutable=False),
    )
}
# Old names Redis still accepts.
ALIASES = {
    "slaveof": "replicaof",
    "hash-max-ziplist-entries": "hash-max-listpack-entries",
    "hash-max-ziplist-value": "hash-max-listpack-value",
    "zset-max-ziplist-entries": "zset-max-listpack-entries",
    "zset-max-ziplist-value": "zset-max-listpack-value",
}

Hook = Callable[[str, Any], None]


class Config:
    """Current directive values plus hooks called when CONFIG SET changes one."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {name: d.default for name, d in DIRECTIVES.items()}
        self.hooks: dict[str, list[Hook]] = {}
        self.config_file: str | None = None

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def on_change(self, name: str, hook: Hook) -> None:
        self.hooks.setdefault(name, []).append(hook)

    def set(self, name: str, text: str, *, at_startup: bool = False) -> None:
        """Parse and apply one directive; raises ConfigError with Redis's wording."""
        name = ALIASES.get(name.lower(), name.lower())
        directive = DIRECTIVES.get(name)
        if directive is None:
            raise ConfigError("Bad directive or wrong number of arguments")
        if not at_startup and not directive.mutable:
            raise ConfigError("can't set immutable config")
        value = self.parse(name, text)
        self.values[name] = value
        if not at_startup:
            for hook in self.hooks.get(name, ()):
                hook(name, value)

    def parse(self, name: str, text: str) -> Any:
        """The value ``text`` gives directive ``name`` (ConfigError when refused); a
        merging directive keeps the parts of its current value that ``text`` leaves out."""
        directive = DIRECTIVES[name]
        value = directive.parse(text)
        if directive.merge:
            value = {**self.values[name], **value}
        return value

    def get_text(self, name: str) -> str:
        directive = DIRECTIVES[name]
        return directive.format(self.values[name])

    def names(self) -> Iterable[str]:
        return DIRECTIVES.keys()


def parse_args(argv: list[str]) -> Config:
    """Build a Config from ``[config-file] [--name value ...]`` as redis-server accepts them."""
    config = Config()
    args = list(argv)
    if args and not args[0].startswith("--"):
        path = args.pop(0)
        if path == "-":
            raise ConfigError("reading a config from stdin is not supported")
        load_file(config, Path(path))
        config.config_file = str(Path(path).resolve())
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--"):
            raise ConfigError(f"'{arg}': expected a --directive")
        name = arg[2:]
        values: list[str] = []
        i += 1
        while i < len(args) and not args[i].startswith("--"):
            values.append(args[i])
            i += 1
        try:
            config.set(name, " ".join(values), at_startup=True)
        except ConfigError as exc:
            raise ConfigError(f"'--{name} {' '.join(values)}': {exc}") from exc
    return config


def load_file(config: Config, path: Path) -> None:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"Fatal error, can't open config file '{path}': {exc.strerror}") from exc
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: unbalanced quotes in '{line}'") from exc
        name, values = words[0], words[1:]
        if name.lower() == "include":
            for value in values:
                load_file(config, (path.parent / value))
            continue
        try:
            config.set(name, " ".join(values), at_startup=True)
        except ConfigError as exc:
            raise ConfigError(f"{path}:{number}: '{line}': {exc}") from exc
