"""Faults on demand: chosen commands misbehave for chosen clients, for testing clients' recovery.

A :class:`Fault` names a command (a glob over the command's name, ``xreadgroup``,
``xgroup|create``, ``x*``; a container's name matches all its subcommands), optionally a
client (a glob over CLIENT SETNAME's name), how many matching calls it affects (``times``,
or until cleared) and what happens to them:

``error``
    the command is not run; the client gets the given error reply (``LOADING ...``,
    ``READONLY ...``, ``BUSY ...``, ``OOM ...``), as Redis would send it;
``delay``
    the command runs, and its reply is held for ``delay_ms`` of the server's clock (a frozen
    clock holds it until advanced); the client's later requests wait behind it, as they
    would behind a slow command;
``close-before``
    the connection is closed without running the command;
``close-after``
    the command runs (its effect stays) and the connection is closed instead of answering:
    the "did my write happen?" case;
``drop``
    the command runs and its reply is never sent; the connection stays open, so the client
    sees a timeout.

Rules are checked in the order they were added; the first that matches applies. RESPLITE.FAULT
itself never matches, so a test can always list and clear. The dispatcher consults the set
only while it holds a rule: :attr:`Faults.on_change` sets the server's FAULTS gate, which
sends every command down the general path (see :mod:`resplite.engine.gates`), so a server
without faults pays nothing per command.

Invariants: ``remaining`` is None (until cleared) or at least 1; a rule is removed the moment
its last call is used; ids are never reused within a server's life.
"""

from __future__ import annotations

from collections.abc import Callable

from resplite.store.glob import glob_match

ACTIONS = ("error", "delay", "close-before", "close-after", "drop")


class Fault:
    """One rule: which calls it hits (``command`` and ``client`` globs), what it does to
    them, how many more it may hit (``remaining``, None for all) and how many it has."""

    __slots__ = ("action", "client", "command", "delay_ms", "error", "hits", "id", "remaining")

    def __init__(self, id: int, command: bytes, action: str, error: str = "",
                 delay_ms: int = 0, client: bytes | None = None,
                 remaining: int | None = None) -> None:
        self.id = id
        self.command = command  # glob, lower case
        self.action = action
        self.error = error
        self.delay_ms = delay_ms
        self.client = client  # glob over the client's name
        self.remaining = remaining
        self.hits = 0

    def matches(self, fullname: str, container: str | None, client_name: bytes) -> bool:
        pattern = self.command
        if not (glob_match(pattern, fullname.encode(), nocase=True)
                or (container is not None
                    and glob_match(pattern, container.encode(), nocase=True))):
            return False
        return self.client is None or glob_match(self.client, client_name)

    def describe(self) -> dict[bytes, object]:
        """LIST's map for this rule."""
        return {
            b"id": self.id,
            b"command": self.command,
            b"action": self.action.encode(),
            b"error": self.error.encode() if self.action == "error" else None,
            b"delay-ms": self.delay_ms if self.action == "delay" else None,
            b"client": self.client,
            b"remaining": self.remaining,
            b"hits": self.hits,
        }


class Faults:
    """The rules of one server."""

    __slots__ = ("_next_id", "on_change", "rules")

    def __init__(self) -> None:
        self.rules: list[Fault] = []
        self._next_id = 1
        # Called with whether any rule is set, after every change (the dispatcher's hook).
        self.on_change: Callable[[bool], None] | None = None

    def add(self, command: bytes, action: str, *, error: str = "", delay_ms: int = 0,
            client: bytes | None = None, times: int | None = None) -> Fault:
        if action not in ACTIONS:
            raise ValueError(f"unknown fault action {action!r}")
        if times is not None and times < 1:
            raise ValueError("times must be at least 1")
        fault = Fault(self._next_id, command.lower(), action, error, delay_ms, client, times)
        self._next_id += 1
        self.rules.append(fault)
        self._changed()
        return fault

    def clear(self, ids: list[int] | None = None) -> int:
        """Remove the rules with ``ids`` (all when None); returns how many went."""
        before = len(self.rules)
        if ids is None:
            self.rules.clear()
        else:
            wanted = set(ids)
            self.rules = [f for f in self.rules if f.id not in wanted]
        removed = before - len(self.rules)
        if removed:
            self._changed()
        return removed

    def take(self, fullname: str, container: str | None, client_name: bytes) -> Fault | None:
        """The rule that applies to this call, counting the call against it."""
        if container == "resplite.fault":
            return None
        for fault in self.rules:
            if fault.matches(fullname, container, client_name):
                fault.hits += 1
                if fault.remaining is not None:
                    fault.remaining -= 1
                    if fault.remaining == 0:
                        self.rules.remove(fault)
                        self._changed()
                return fault
        return None

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(bool(self.rules))
