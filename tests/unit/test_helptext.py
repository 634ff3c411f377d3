"""help_reply: the shape of every HELP reply, and the lines it refuses."""

from __future__ import annotations

import pytest

from resplite.commands.helptext import INDENT, header, help_reply
from resplite.protocol.encoder import encode
from resplite.protocol.replies import Status


def test_reply_is_header_entries_then_help() -> None:
    reply = help_reply("FOO", [
        ("BAR <key>", ["Do one thing.", "* OPT", "  an option."]),
        ("BAZ", ["Do another."]),
    ])
    assert all(type(line) is Status for line in reply)
    assert reply == [
        header("FOO"),
        "BAR <key>", INDENT + "Do one thing.", INDENT + "* OPT", INDENT + "  an option.",
        "BAZ", INDENT + "Do another.",
        "HELP", reply[-1],
    ]
    assert reply[0].startswith("FOO <subcommand> ")
    assert reply[-1].startswith(INDENT) and reply[-1].strip()


@pytest.mark.parametrize("resp", [2, 3])
def test_encodes_as_an_array_of_simple_strings(resp: int) -> None:
    data = encode(help_reply("FOO", [("BAR", ["x"])]), resp)
    assert data == (
        b"*5\r\n+" + header("FOO").encode() + b"\r\n+BAR\r\n+    x\r\n+HELP\r\n+"
        + help_reply("FOO", [])[-1].encode() + b"\r\n"
    )


@pytest.mark.parametrize(
    "entries",
    [
        [("HELP", ["mine"])],
        [("help", ["mine"])],
        [(" BAR", ["indented syntax"])],
        [("", ["no syntax"])],
        [("BAR", ["two\r\nlines"])],
        [("BAR\n", ["x"])],
    ],
)
def test_refuses_lines_that_would_break_the_shape(entries: list[tuple[str, list[str]]]) -> None:
    with pytest.raises(ValueError):
        help_reply("FOO", entries)
