"""Redis Cluster's key hash slot: CRC16 (XMODEM) of the key, or of its hash tag, mod 16384.

A hash tag is the part of the key between the first ``{`` and the first ``}`` after it, when
that part is not empty: ``{user:1}:cart`` and ``{user:1}:orders`` share a slot, so multi-key
commands may take both. ``foo{}{bar}`` has an empty first tag and hashes whole.
"""

from __future__ import annotations

SLOTS = 16384


def _table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_TABLE = _table()


def crc16(data: bytes) -> int:
    """CRC16-CCITT as XMODEM computes it (polynomial 0x1021, initial value 0)."""
    crc = 0
    table = _TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ byte) & 0xFF]
    return crc


def key_slot(key: bytes) -> int:
    """The hash slot of ``key`` (0 .. 16383)."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    return crc16(key) & (SLOTS - 1)
