"""Function libraries: what FUNCTION LOAD / LIST / DELETE / DUMP / RESTORE manage.

A library is its code (``#!lua name=<lib>`` then Lua) and the functions its code registered
with ``redis.register_function``. Library names are case-sensitive; function names are
unique across all libraries regardless of case (FCALL finds ``F1`` for ``f1``), as in Redis.
Names allow letters, digits and underscores only.

:class:`LibraryContext` is one set of libraries: the server's, or a scratch set that a
RESTORE fills before joining it to the server's (so a payload that fails to load changes
nothing). Loading compiles and runs the library code in the functions' Lua state
(:class:`~resplite.engine.scripting.vm.LuaVM`); the callbacks it registers are kept as Lua
function references.

FUNCTION DUMP's payload is Redis's: for each library the RDB opcode 245 followed by the
code as an RDB string (LZF-compressed when longer than 20 bytes and compressible, as Redis
writes it), then the RDB version in two little-endian bytes and a CRC-64 of everything before
it. The version is 10, the first that knows opcode 245 (what Redis 7.0 writes; 7.4 writes
12), as resplite's key DUMP payloads carry the oldest version able to hold them: a payload
restores into every Redis from 7.0 on. RESTORE accepts payloads of RDB version 12 and below.
"""

from __future__ import annotations

import struct
from typing import Any

from resplite.engine.errors import CommandError
from resplite.protocol.reader import split_inline

NAME_RULES = (
    "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
    "least one character long"
)


def valid_name(name: bytes) -> bool:
    return bool(name) and all(
        48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 95 for c in name
    )


class FunctionInfo:
    """One registered function of a library."""

    __slots__ = ("callback", "description", "flags", "library", "name")

    def __init__(self, name: bytes, callback: Any, description: bytes | None,
                 flags: tuple[str, ...], library: Library) -> None:
        self.name = name
        self.callback = callback  # the Lua function
        self.description = description
        self.flags = flags
        self.library = library


class Library:
    """One library: its name, its code as loaded, and the functions it registered."""

    __slots__ = ("code", "functions", "name")

    def __init__(self, name: bytes, code: bytes) -> None:
        self.name = name
        self.code = code
        self.functions: dict[bytes, FunctionInfo] = {}


class LibraryContext:
    """Libraries by name and their functions by lower-cased name."""

    __slots__ = ("functions", "libraries")

    def __init__(self) -> None:
        self.libraries: dict[bytes, Library] = {}
        self.functions: dict[bytes, FunctionInfo] = {}

    def link(self, lib: Library) -> None:
        for fn in lib.functions.values():
            self.functions.setdefault(fn.name.lower(), fn)
        self.libraries[lib.name] = lib

    def unlink(self, lib: Library) -> None:
        for fn in lib.functions.values():
            if self.functions.get(fn.name.lower()) is fn:
                del self.functions[fn.name.lower()]
        self.libraries.pop(lib.name, None)

    def clear(self) -> None:
        self.libraries.clear()
        self.functions.clear()

    @property
    def code_bytes(self) -> int:
        return sum(len(lib.code) + len(lib.name) for lib in self.libraries.values())


def _split_args(line: bytes) -> list[bytes] | None:
    """sdssplitargs of the shebang line (which holds no NUL byte): words, with Redis's
    quoting (a backslash outside quotes is an ordinary character); None when unbalanced."""
    return split_inline(line)


def extract_metadata(code: bytes) -> tuple[bytes, bytes, bytes]:
    """(engine, library name, code after the shebang line) or CommandError as Redis words it."""
    if not code.startswith(b"#!"):
        raise CommandError("ERR Missing library metadata")
    end = code.find(b"\n")
    # Redis looks for the newline in a C string: a NUL byte before it ends the search.
    if end < 0 or b"\0" in code[:end]:
        raise CommandError("ERR Invalid library metadata")
    parts = _split_args(code[:end])
    if not parts:
        raise CommandError("ERR Invalid library metadata")
    engine = parts[0][2:]
    name: bytes | None = None
    for part in parts[1:]:
        if part[:5].lower() == b"name=":
            if name is not None:
                raise CommandError(
                    "ERR Invalid metadata value, name argument was given multiple times"
                )
            name = part[5:]
            continue
        raise CommandError(
            "ERR Invalid metadata value given: " + part.decode("utf-8", "surrogateescape")
        )
    if name is None:
        raise CommandError("ERR Library name was not given")
    return engine, name, code[end:]


# -- the DUMP payload ---------------------------------------------------------------------------


# The RDB codecs are imported by the three functions below, on first use: a server that never
# dumps or restores functions does not load them.


def dump_payload(libraries: list[Library], rdb_version: int) -> bytes:
    """FUNCTION DUMP's payload, stamped with ``rdb_version`` (the one the Redis answered as
    writes: :func:`resplite.engine.compat.rdb_version`)."""
    from resplite.algorithms.crc64 import crc64
    from resplite.formats import rdb_format
    from resplite.formats.rdb_format import OPCODE_FUNCTION2

    body = bytearray()
    for lib in libraries:
        body.append(OPCODE_FUNCTION2)
        rdb_format.write_string(body, lib.code, compress=True)
    body += struct.pack("<H", rdb_version)
    return bytes(body) + struct.pack("<Q", crc64(0, body))


def verify_payload(payload: bytes, rdb_version: int, zero_crc: bool = False) -> bool:
    """Whether ``payload`` ends with a version up to ``rdb_version`` and its checksum
    (``zero_crc``: a checksum of 0 stands for none, as Redis 8 reads it)."""
    from resplite.algorithms.crc64 import crc64

    if len(payload) < 10:
        return False
    version = payload[-10] | (payload[-9] << 8)
    if version > rdb_version:
        return False
    if zero_crc and payload[-8:] == bytes(8):
        return True
    return struct.pack("<Q", crc64(0, payload[:-8])) == payload[-8:]


def read_payload(payload: bytes) -> list[bytes]:
    """The library codes of a verified payload, or CommandError with Redis's words."""
    from resplite.formats import rdb_format
    from resplite.formats.rdb_format import OPCODE_FUNCTION2, OPCODE_FUNCTION_PRE_GA

    reader = rdb_format.Reader(memoryview(payload)[:-10])
    codes: list[bytes] = []
    while not reader.at_end():
        kind = reader.byte()
        if kind == OPCODE_FUNCTION_PRE_GA:
            raise CommandError("ERR Pre-GA function format not supported")
        if kind != OPCODE_FUNCTION2:
            raise CommandError("ERR given type is not a function")
        try:
            codes.append(reader.string())
        except rdb_format.RdbError:
            raise CommandError("ERR Failed loading library payload") from None
    return codes
