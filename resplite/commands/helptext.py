"""The replies of the ``<COMMAND> HELP`` subcommands, built from (syntax, explanation) pairs.

Every HELP reply has the same shape, which redis-cli users and a few tools rely on: an array of
simple strings whose first line names the command and says that subcommands follow; then, for
each subcommand, its syntax line starting at column 0 and the lines explaining it indented by
four spaces; and last the entry for HELP itself. The syntax lines are facts (subcommand names
and argument syntax exactly as Redis writes them) and are what the compatibility tests compare;
the header and the explanations are ours.

Replies are built once, when the command module is imported, and returned as they are: the
encoder never mutates a reply value.

Usage::

    _HELP = help_reply("OBJECT", [
        ("ENCODING <key>", ["Name the internal representation of the value at <key>."]),
        ...
    ])

    @command("object|help")
    def object_help(client: Client, argv: list[bytes]) -> list[Status]:
        return _HELP
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from resplite.protocol.replies import Status

__all__ = ["INDENT", "HelpEntry", "header", "help_reply"]

# How far explanation lines are indented below their syntax line.
INDENT = "    "

# One subcommand: its syntax line and the explanation lines under it (without the indent;
# a nested list of options indents its own continuation lines further).
HelpEntry = tuple[str, Sequence[str]]

_HELP_ENTRY: HelpEntry = ("HELP", ["Show this list of subcommands."])


def header(command: str) -> str:
    """The first line of ``command``'s HELP reply."""
    return f"{command} <subcommand> [<arg> [value] [opt] ...], where <subcommand> is one of:"


def help_reply(command: str, entries: Iterable[HelpEntry]) -> list[Status]:
    """The HELP reply of ``command`` (as written by users, e.g. ``"XGROUP"``).

    ``entries`` lists every subcommand but HELP, which is appended last. Raises ``ValueError``
    for a line a simple string cannot carry (CR or LF), a syntax line that starts with a space
    (it would read as an explanation) or an entry for HELP itself.
    """
    lines = [header(command)]
    for syntax, explanation in entries:
        if syntax.split(" ", 1)[0].upper() == "HELP":
            raise ValueError("help_reply appends the HELP entry itself; do not list it")
        _add(lines, syntax, explanation)
    _add(lines, *_HELP_ENTRY)
    return [Status(line) for line in lines]


def _add(lines: list[str], syntax: str, explanation: Sequence[str]) -> None:
    if not syntax or syntax[0].isspace():
        raise ValueError(f"a syntax line starts at column 0: {syntax!r}")
    lines.append(syntax)
    lines.extend(INDENT + line for line in explanation)
    for line in (syntax, *explanation):
        if "\r" in line or "\n" in line:
            raise ValueError(f"a simple string cannot hold CR or LF: {line!r}")
