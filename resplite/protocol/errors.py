"""Errors raised by the sans-IO protocol layer.

A :class:`ProtocolError` means the client broke request framing. Redis answers it with one
``-ERR Protocol error: ...`` reply and closes the connection once the replies already due are
written; the reader stays broken afterwards and raises the same error again on every call.

Invariant: ``message`` is Redis's text without the ``ERR `` prefix. Redis may echo one raw
byte of the offending request (``expected '$', got '\\xff'``), so ``message`` is a ``str``
whose characters are bytes: encode it as Latin-1 (or use :attr:`ProtocolError.reply`) to get
the exact wire bytes.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """The client sent bytes that Redis would refuse to frame as a request."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def reply(self) -> bytes:
        """The exact error reply Redis sends before closing the connection."""
        return error_reply(self.message)


def error_reply(message: str) -> bytes:
    """The error reply of a :class:`ProtocolError` whose message is ``message``. (Compiled
    callers use this rather than the property: mypyc's native access to a property of an
    Exception subclass compiled in another module crashed the server.)"""
    return b"-ERR " + message.encode("latin-1") + b"\r\n"
