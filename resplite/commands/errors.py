"""Every error text a command can answer, in one place, exactly as Redis words it.

Handlers raise :class:`CommandError`; the dispatcher turns it into one error reply and
nothing else about the connection or the keyspace changes. The message carries its own
code: ``ERR ...`` for generic errors, and bare codes such as ``WRONGTYPE``, ``NOGROUP``,
``BUSYGROUP``, ``EXECABORT``, ``NOAUTH`` and ``WRONGPASS`` without an ``ERR`` prefix, as
Redis sends them. Module-level constants hold the texts that are used verbatim in many
places; functions build the ones that embed arguments.
"""

from __future__ import annotations


class CommandError(Exception):
    """A command failed with a Redis error reply. ``message`` includes the error code."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def code(self) -> str:
        """The error code, the first word of the message (``ERR``, ``WRONGTYPE`` ...)."""
        return self.message.split(" ", 1)[0]


WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX = "ERR syntax error"
NOT_INTEGER = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
OVERFLOW = "ERR increment or decrement would overflow"
NO_SUCH_KEY = "ERR no such key"
DB_INDEX_OUT_OF_RANGE = "ERR DB index is out of range"
INVALID_EXPIRE = "ERR invalid expire time in '{}' command"
NOAUTH = "NOAUTH Authentication required."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
OOM = "OOM command not allowed when used memory > 'maxmemory'."
EXECABORT = "EXECABORT Transaction discarded because of previous errors."
MULTI_NESTED = "ERR MULTI calls can not be nested"
EXEC_WITHOUT_MULTI = "ERR EXEC without MULTI"
DISCARD_WITHOUT_MULTI = "ERR DISCARD without MULTI"
WATCH_INSIDE_MULTI = "ERR WATCH inside MULTI is not allowed"
MAX_CLIENTS = "ERR max number of clients reached"
TIMEOUT_NEGATIVE = "ERR timeout is negative"
TIMEOUT_NOT_FLOAT = "ERR timeout is not a float or out of range"
TIMEOUT_OUT_OF_RANGE = "ERR timeout is out of range"
UNBLOCKED = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
LOADING = "LOADING Redis is loading the dataset in memory"


def wrong_arity(fullname: str) -> str:
    return f"ERR wrong number of arguments for '{fullname}' command"


def user_text(arg: bytes, limit: int = 128) -> str:
    """User input echoed in an error: at most ``limit`` bytes, byte-exact on the wire.

    Undecodable bytes survive as surrogates and the encoder turns them back into the
    original bytes, as Redis echoes input unchanged (only CR and LF become spaces).
    """
    return arg[:limit].decode("utf-8", "surrogateescape")


def unknown_command(name: bytes, args: list[bytes]) -> str:
    shown = " ".join(f"'{user_text(a)}'" for a in args[:128])
    return f"ERR unknown command '{user_text(name)}', with args beginning with: " + (
        shown + " " if shown else ""
    )


def unknown_subcommand(sub: bytes, container: str) -> str:
    return (
        f"ERR unknown subcommand '{user_text(sub)}'. "
        f"Try {container.upper()} HELP."
    )


def command_in_subscribe_context(name: str) -> str:
    return (
        f"ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
        "RESET are allowed in this context"
    )


# RESPLITE.CLOCK (resplite's own command; the wording is ours).
CLOCK_DISABLED = (
    "ERR RESPLITE.CLOCK is disabled on this server: start it with 'enable-clock-command yes' "
    "(or 'local' to allow it from local connections only)"
)
CLOCK_BACKWARDS = (
    "ERR ADVANCE only moves the clock forwards; use RESPLITE.CLOCK SET to set an earlier time"
)
CLOCK_OUT_OF_RANGE = "ERR clock time out of range: it must stay between 0 and 253402300799999 ms"
