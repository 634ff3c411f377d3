"""Compare two HELP replies by their structure, not their prose.

resplite explains its subcommands in its own words, so a HELP reply cannot equal Redis's byte
for byte. What clients and people rely on can still be compared: the reply is an array of
simple strings; the first line names the command; each subcommand has a syntax line at column
0 (its name and argument syntax, which are facts) followed by indented explanation lines; the
HELP entry comes last. :func:`assert_same_shape` checks that resplite lists exactly the
subcommands it implements, each with Redis's syntax lines when Redis lists it too.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache

from resplite.commands import command_table
from support.resptree import parse


class HelpReply:
    """A parsed HELP reply: its header and, per subcommand, the syntax lines listing it."""

    def __init__(self, raw: bytes) -> None:
        kind, items = parse(raw)
        assert kind == b"*" and items, f"not a non-empty array: {raw[:60]!r}"
        assert all(item[0] == b"+" for item in items), f"not only simple strings: {raw[:200]!r}"
        lines = [item[1].decode() for item in items]
        self.header = lines[0]
        self.lines = lines
        self.syntax: dict[str, list[str]] = {}
        for line in lines[1:]:
            if not line[:1].isspace():
                self.syntax.setdefault(subcommand_of(line), []).append(line)
        last_syntax = max(i for i, line in enumerate(lines) if not line[:1].isspace())
        assert lines[last_syntax] == "HELP", f"the HELP entry is not last: {lines[-3:]}"
        assert all(line.startswith("    ") for line in lines[last_syntax + 1 :]), lines[-3:]


def subcommand_of(syntax: str) -> str:
    """The subcommand a syntax line lists: its first word, or the whole of ``(no subcommand)``."""
    return syntax if syntax.startswith("(") else syntax.split(" ", 1)[0].upper()


@cache
def implemented(container: str) -> frozenset[str]:
    """The subcommands resplite's command table has under ``container``, HELP included."""
    spec = command_table()[container.lower().encode()]
    return frozenset(name.decode().upper() for name in spec.subcommands)


def assert_same_shape(
    ref: bytes,
    ours: bytes,
    *,
    ours_has: Collection[str],
    newer: Collection[str] = (),
) -> None:
    """Assert that resplite's HELP reply ``ours`` has the shape of Redis's ``ref``.

    ``ours_has`` names the subcommands resplite implements; ``newer`` those among them that the
    reference Redis (7.0) does not list because a later Redis added them.
    """
    redis, ours_help = HelpReply(ref), HelpReply(ours)
    command = redis.header.split(" ", 1)[0]
    assert ours_help.header.split(" ", 1)[0] == command
    assert " <subcommand> " in ours_help.header
    assert set(ours_help.syntax) == set(ours_has), (
        f"{command} HELP should list exactly the implemented subcommands"
    )
    assert set(ours_help.syntax) - set(redis.syntax) == set(newer)
    for name, lines in redis.syntax.items():
        if name in ours_help.syntax:
            assert ours_help.syntax[name] == lines, f"{command} {name}: syntax differs"
    # The explanations are ours: none repeats a line of Redis's, apart from the option
    # bullets ("* TYPE (NORMAL|...)"), which state syntax.
    copied = _explanations(ours_help) & _explanations(redis)
    assert not copied, f"{command} HELP repeats Redis's explanations: {sorted(copied)}"
    # Each of our syntax lines is followed by at least one explanation line.
    for i, line in enumerate(ours_help.lines[1:], start=1):
        if not line[:1].isspace():
            assert i + 1 < len(ours_help.lines), line
            assert ours_help.lines[i + 1].startswith("    "), f"{line!r} is not explained"


def _explanations(reply: HelpReply) -> set[str]:
    return {
        line.strip()
        for line in reply.lines[1:]
        if line[:1].isspace() and not line.lstrip().startswith("*")
    }
