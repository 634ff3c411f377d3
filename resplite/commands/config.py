"""CONFIG GET / SET / RESETSTAT / REWRITE / HELP over the directives of
:mod:`resplite.engine.config`.

CONFIG GET takes one or more names or glob patterns (case-insensitive) and answers a map of
every match once: an exact name (or an old alias) comes back spelled as it was asked, a
pattern's matches under their own names. As in Redis 7.0, a pattern also matches the old
alias names (``hash-max-*`` lists both ``hash-max-listpack-*`` and ``hash-max-ziplist-*``).

CONFIG SET takes several ``name value`` pairs and is atomic, in Redis 7's order of checks:
one pass over the names reports the first unknown name (``Unknown option or number of
arguments for CONFIG SET - 'x'``), immutable directive, protected one (``dir``,
``dbfilename``, unless ``enable-protected-configs`` allows this client) or name given twice
(reported as typed); then every value is parsed (reported under the directive's own name);
only when all parse are they stored, and their hooks run, which is how a SET takes effect at
once (proto-max-bulk-len on every connection's reader, maxmemory, slowlog limits...). A hook
that fails puts every value back.

CONFIG REWRITE writes the current values into the configuration file the server was started
with, as :func:`resplite.engine.config.rewrite_config` describes: every string quoted and
escaped, so no value can smuggle a directive into the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from resplite.commands.helptext import help_reply
from resplite.engine import errors
from resplite.engine.config import (
    ALIASES,
    DIRECTIVES,
    Config,
    ConfigError,
    canonical_name,
    protected_action_allowed,
    rewrite_config,
)
from resplite.engine.errors import CommandError
from resplite.engine.registry import command
from resplite.protocol.replies import OK
from resplite.store.glob import glob_match

if TYPE_CHECKING:
    from resplite.engine.client import Client
    from resplite.engine.state import ServerState

_GLOB_CHARS = frozenset(b"[*?")
# What a pattern is matched against: (name as listed, directive holding the value).
_PATTERN_NAMES = [(name, name) for name, d in DIRECTIVES.items() if not d.hidden] + [
    (alias, name) for alias, name in ALIASES.items()
    if name in DIRECTIVES and not DIRECTIVES[name].hidden
]

_HELP = help_reply("CONFIG", [
    ("GET <pattern>", [
        "Reply with each directive whose name matches the glob <pattern>, and its",
        "value. Several patterns may be given.",
    ]),
    ("SET <directive> <value>", [
        "Change <directive> to <value>. Several directive-value pairs may be given:",
        "they are applied together, or none is when one is refused.",
    ]),
    ("RESETSTAT", ["Zero the counters that INFO reports (commands, errors, hits, ...)."]),
    ("REWRITE", ["Save the running configuration into the file the server started with."]),
])


def _canonical(name: bytes) -> str | None:
    """The directive a name (any case, old aliases included) refers to, if resplite has it."""
    return canonical_name(name.decode("utf-8", "replace"))




@command("config|get")
def config_get(client: Client, argv: list[bytes]) -> Any:
    config = client.server.config
    # Keys are compared case-insensitively, as Redis's dictionary of matches does.
    matches: dict[bytes, str] = {}
    seen: set[bytes] = set()
    for pattern in argv[2:]:
        if not _GLOB_CHARS.intersection(pattern):
            name = _canonical(pattern)
            if name is not None and pattern.lower() not in seen:
                matches[pattern] = name
                seen.add(pattern.lower())
            continue
        for listed, name in _PATTERN_NAMES:
            key = listed.encode()
            if key not in seen and glob_match(pattern, key, nocase=True):
                matches[key] = name
                seen.add(key)
    return {key: config.get_text(name).encode("utf-8", "surrogateescape")
            for key, name in matches.items()}


def set_directives(client: Client, pairs: list[tuple[bytes, bytes]]) -> None:
    """Validate, parse and apply ``pairs`` all together, or raise with Redis's text."""
    config = client.server.config
    protected_ok = protected_action_allowed(config["enable-protected-configs"], client.local)
    unknown: bytes | None = None
    refusal: tuple[bytes, str] | None = None
    names: list[str] = []
    for raw_name, _ in pairs:
        name = _canonical(raw_name)
        if name is None:
            # The first refusal of any kind is the one reported, as Redis's single pass
            # over the names stops recording at the first.
            if unknown is None and refusal is None:
                unknown = raw_name
            continue
        if unknown is not None or refusal is not None:
            continue
        if not DIRECTIVES[name].mutable:
            refusal = (raw_name, "can't set immutable config")
        elif DIRECTIVES[name].protected and not protected_ok:
            refusal = (raw_name, "can't set protected config")
        elif name in names:
            refusal = (raw_name, "duplicate parameter")
        names.append(name)
    if unknown is not None:
        raise CommandError(errors.config_unknown_option(unknown))
    if refusal is not None:
        raise CommandError(errors.config_set_failed(errors.user_text(refusal[0], 1 << 20),
                                                    refusal[1]))
    parsed: list[tuple[str, Any]] = []
    for name, (raw_name, raw_value) in zip(names, pairs, strict=True):
        try:
            parsed.append((name, config.parse(name, raw_value.decode("utf-8",
                                                                      "surrogateescape"))))
        except ConfigError as exc:
            # Redis names the directive as typed, lower-cased (an old alias stays the alias).
            shown = raw_name.decode("utf-8", "surrogateescape").lower()
            raise CommandError(errors.config_set_failed(shown, str(exc))) from None
    _apply(config, parsed)


def _apply(config: Config, parsed: list[tuple[str, Any]]) -> None:
    previous = [(name, config.values[name]) for name, _ in parsed]
    for name, value in parsed:
        config.values[name] = value
    done: list[str] = []
    try:
        for name, value in parsed:
            for hook in config.hooks.get(name, ()):
                hook(name, value)
            done.append(name)
    except (ConfigError, ValueError) as exc:
        failed = parsed[len(done)][0]
        for name, value in previous:
            config.values[name] = value
        for name, value in previous:
            for hook in config.hooks.get(name, ()):
                hook(name, value)
        raise CommandError(errors.config_set_failed(failed, str(exc))) from None


@command("config|set")
def config_set(client: Client, argv: list[bytes]) -> Any:
    if len(argv) % 2:
        raise CommandError(errors.SYNTAX)
    pairs = [(argv[i], argv[i + 1]) for i in range(2, len(argv), 2)]
    set_directives(client, pairs)
    return OK


def reset_statistics(server: ServerState) -> None:
    """What CONFIG RESETSTAT zeroes: counters, command and error statistics, peaks."""
    server.reset_stats()
    server.peak_memory = 0
    server.measure_clients()


@command("config|resetstat")
def config_resetstat(client: Client, argv: list[bytes]) -> Any:
    reset_statistics(client.server)
    return OK


def rewrite_file(config: Config, path: Path, users: list[str] | None) -> None:
    """Rewrite ``path`` so that it states the current configuration (see module docstring).

    The new text goes to a temporary file renamed over the old one, so a failure leaves the
    old file whole.
    """
    try:
        old = path.read_bytes()
    except FileNotFoundError:
        old = b""
    new = rewrite_config(config, old, users)
    tmp = path.with_name(f".{path.name}.rewrite-{os.getpid()}")
    try:
        tmp.write_bytes(new)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@command("config|rewrite")
def config_rewrite(client: Client, argv: list[bytes]) -> Any:
    config = client.server.config
    if not config.config_file:
        raise CommandError(errors.NO_CONFIG_FILE)
    try:
        # Users go into the file unless an ACL file keeps them (then "user" lines go).
        users = None if config["aclfile"] else client.server.acl.lines()
        rewrite_file(config, Path(config.config_file), users)
    except OSError as exc:
        raise CommandError(f"ERR Rewriting config file: {exc.strerror}") from None
    return OK


@command("config|help")
def config_help(client: Client, argv: list[bytes]) -> Any:
    return _HELP
