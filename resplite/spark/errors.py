"""Errors raised by the Spark connector.

Every failure that reaches a Spark user names what went wrong in the user's terms: the option,
the stream key, the group or the entry. Spark wraps these in its own exception types on the way
back to the driver, so the message text is what the user actually sees; it always starts with
``redis-streams:`` to make the origin obvious in a long Java stack trace.
"""

from __future__ import annotations

PREFIX = "redis-streams: "


class StreamsConnectorError(Exception):
    """Base class: the message is complete and meant for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(PREFIX + message)


class OptionError(StreamsConnectorError, ValueError):
    """An option is missing, unknown or has a value that cannot be used."""


class ServerError(StreamsConnectorError):
    """The server is unreachable or answered in a way the connector cannot work with."""


class EntryError(StreamsConnectorError, ValueError):
    """An entry's fields cannot be converted to the requested schema."""
