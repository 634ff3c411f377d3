"""Access control lists: users, their passwords and permissions, checked as Redis 7.0 checks them.

Theory of operation
-------------------
A :class:`User` has flags (``on``/``off``, ``nopass``, payload sanitising), SHA-256 password
hashes and a list of :class:`Selector`\\ s, the first of which is the *root* selector (the rules
written outside parentheses). A selector allows a set of commands (full names such as ``get``
or ``config|get``; Redis's command bitmap), optionally first arguments of commands it does not
allow whole (``+select|0``), key patterns each with read and/or write permission, and channel
patterns; ``allkeys``, ``allchannels`` and ``allcommands`` short-cut the lists. A command runs
when any selector allows the command itself, every key it names (read or write as the key
spec's flags say) and every channel it publishes or subscribes to.

Rules are applied one at a time (:meth:`Acl.apply`) exactly as Redis's ``ACLSetUser`` reads
them, and ``ACL SETUSER`` applies a whole list to a copy of the user first, so a bad rule
changes nothing. A user is described back (``ACL LIST``, ``CONFIG REWRITE``, ``ACL SAVE``) with
Redis's algorithm: start from ``+@all`` or ``-@all``, add the categories that fit best, then
single commands for what is left. Redis lists those single commands in the order of its own
hash table, which is random; resplite lists them in the command table's order.

Cost: the dispatcher calls :func:`check_command` only for a client whose user is restricted
(:attr:`User.unrestricted` is false), so a server whose users all may run everything (the
default user's ``+@all ~* &*``) pays one attribute test per command. A check costs a set
lookup for the command plus one glob match per key and pattern.

Pub/Sub commands are checked through :data:`CHANNEL_ARGS` (which arguments are channels, and
whether they are patterns) as soon as those commands exist in the table; code that needs to
check a channel itself calls :func:`channel_allowed`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from resplite.engine import compat, errors
from resplite.engine.keyspecs import command_keys, has_keys
from resplite.protocol.reader import split_inline
from resplite.store.glob import glob_match

if TYPE_CHECKING:
    from resplite.engine.table import CommandSpec

# Redis's categories, in the order ACL CAT lists them ("array" from Redis 8.8: it exists only
# while the table has the array commands, see CommandIndex).
CATEGORIES = (
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
    "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
    "dangerous", "connection", "transaction", "scripting", "array",
)

# Results of a permission check, with Redis's values (the highest is reported).
OK = 0
DENIED_CMD = 1
DENIED_KEY = 2
DENIED_AUTH = 3
DENIED_CHANNEL = 4

READ = 1
WRITE = 2
ALL_PERMISSIONS = READ | WRITE

# Which arguments of the Pub/Sub commands are channels: (first, last or -1 for the rest,
# is a pattern). Only publishing and subscribing are checked, as in Redis.
CHANNEL_ARGS: dict[str, tuple[int, int, bool]] = {
    "publish": (1, 1, False),
    "spublish": (1, 1, False),
    "subscribe": (1, -1, False),
    "ssubscribe": (1, -1, False),
    "psubscribe": (1, -1, True),
}

HASH_LEN = 64
GENPASS_MAX_BITS = 4096


class AclError(Exception):
    """A rule was refused; ``message`` is Redis's explanation (ACLSetUserStringError)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


UNKNOWN_COMMAND = "Unknown command or category name in ACL"
SYNTAX = "Syntax error"
KEYS_AFTER_ALL = (
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "
    "have any effect. Try 'resetkeys' to start with an empty list of patterns"
)
CHANNELS_AFTER_ALL = (
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does "
    "not have any effect. Try 'resetchannels' to start with an empty list of channels"
)
NO_SUCH_PASSWORD = "The password you are trying to remove from the user does not exist"
BAD_HASH = (
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
    "characters"
)
DUPLICATE_USER = "Duplicate user found. A user can only be defined once in config files"
FIRSTARG_OF_SUB = "Allowing first-arg of a subcommand is not supported"


def hash_password(password: bytes) -> str:
    import hashlib  # on first use: OpenSSL's start-up is not paid by a server without passwords

    return hashlib.sha256(password).hexdigest()


def has_spaces(text: bytes) -> bool:
    """Redis's ACLStringHasSpaces: C isspace() or a NUL anywhere."""
    return any(c in b" \t\n\r\x0b\x0c\x00" for c in text)


class CommandIndex:
    """What the rules need to know about the command table, computed once per table."""

    def __init__(self, table: Mapping[bytes, CommandSpec]) -> None:
        # Top-level commands, then each one's subcommands, in table order.
        self.tops: list[CommandSpec] = list(table.values())
        self.by_name: dict[str, CommandSpec] = {}
        self.subs: dict[str, list[str]] = {}
        self.parent: dict[str, str] = {}
        self.category: dict[str, set[str]] = {c: set() for c in CATEGORIES}
        self.order: list[str] = []
        for spec in self.tops:
            self._add(spec)
            names = []
            for sub in spec.subcommands.values():
                self._add(sub)
                names.append(sub.fullname)
                self.parent[sub.fullname] = spec.fullname
            self.subs[spec.fullname] = names
        if not self.category["array"]:
            # Before Redis 8.8 (no array command in the table) there is no such category.
            del self.category["array"]
        self.all: frozenset[str] = frozenset(self.by_name)

    def _add(self, spec: CommandSpec) -> None:
        self.by_name[spec.fullname] = spec
        self.order.append(spec.fullname)
        for tag in spec.acl_categories:
            name = tag.lstrip("@").lower()
            if name in self.category:
                self.category[name].add(spec.fullname)

    def lookup(self, name: bytes) -> CommandSpec | None:
        """A command or ``container|sub`` by name, any case (ACLLookupCommand)."""
        return self.by_name.get(name.decode("utf-8", "surrogateescape").lower())


class KeyPattern:
    """A key pattern of a selector and the access it grants (READ, WRITE or both)."""

    __slots__ = ("flags", "pattern")

    def __init__(self, pattern: bytes, flags: int) -> None:
        self.pattern = pattern
        self.flags = flags

    def text(self) -> bytes:
        prefix = {ALL_PERMISSIONS: b"~", READ: b"%R~", WRITE: b"%W~"}[self.flags]
        return prefix + self.pattern


class Selector:
    """The commands, keys and channels one selector of a user allows."""

    __slots__ = ("allchannels", "allcommands", "allkeys", "allowed", "channels", "firstargs",
                 "future", "patterns", "root", "rules")

    def __init__(self, root: bool = False, allkeys: bool = False, allchannels: bool = False,
                 allcommands: bool = False, future: bool = False,
                 allowed: set[str] | None = None,
                 firstargs: dict[str, list[bytes]] | None = None,
                 patterns: list[KeyPattern] | None = None,
                 channels: list[bytes] | None = None,
                 rules: list[str] | None = None) -> None:
        self.root = root
        self.allkeys = allkeys
        self.allchannels = allchannels
        self.allcommands = allcommands
        # Redis's reserved bitmap bit: set by +@all / allcommands, cleared by -@all /
        # nocommands only. It decides whether a description starts with +@all or -@all.
        self.future = future
        self.allowed: set[str] = set() if allowed is None else allowed
        self.firstargs: dict[str, list[bytes]] = {} if firstargs is None else firstargs
        self.patterns: list[KeyPattern] = [] if patterns is None else patterns
        self.channels: list[bytes] = [] if channels is None else channels
        # The command and category rules since the last +@all / -@all, in the order given,
        # each once (Redis 7.2's command_rules): how Redis 7.2 and later describe them.
        self.rules: list[str] = [] if rules is None else rules

    def copy(self) -> Selector:
        return Selector(
            self.root, self.allkeys, self.allchannels, self.allcommands, self.future,
            set(self.allowed), {k: list(v) for k, v in self.firstargs.items()},
            [KeyPattern(p.pattern, p.flags) for p in self.patterns], list(self.channels),
            list(self.rules),
        )

    def add_rule(self, name: str, allow: bool) -> None:
        """ACLUpdateCommandRules: drop the earlier rules about ``name`` (and, for a command,
        about its subcommands and first arguments), then append this one."""
        name = name.lower()
        prefix = name + "|"
        self.rules = [r for r in self.rules if r[1:] != name and not r[1:].startswith(prefix)]
        self.rules.append(("+" if allow else "-") + name)


class User:
    """One ACL user. ``unrestricted`` is what the dispatcher reads on every command."""

    __slots__ = ("description", "enabled", "name", "nopass", "passwords", "sanitize",
                 "selectors", "unrestricted")

    def __init__(self, name: str) -> None:
        self.name = name
        self.enabled = False
        self.nopass = False
        self.sanitize = ""  # "", "skip-sanitize-payload" or "sanitize-payload"
        self.passwords: list[str] = []
        self.selectors: list[Selector] = [Selector(root=True)]
        self.unrestricted = False
        self.description: str | None = None

    @property
    def root(self) -> Selector:
        return self.selectors[0]

    def flag_names(self) -> list[str]:
        """The flags in Redis's order (ACLUserFlags)."""
        names = ["on" if self.enabled else "off"]
        if self.nopass:
            names.append("nopass")
        if self.sanitize:
            names.append(self.sanitize)
        return names

    def copy_from(self, other: User) -> None:
        self.enabled = other.enabled
        self.nopass = other.nopass
        self.sanitize = other.sanitize
        self.passwords = list(other.passwords)
        self.selectors = [s.copy() for s in other.selectors]
        self.refresh()

    def refresh(self) -> None:
        """Recompute the cached facts after a change."""
        self.description = None
        root = self.root
        self.unrestricted = root.allcommands and root.allkeys and root.allchannels


class LogEntry:
    """One ACL LOG entry; ``count`` grows while the same denial repeats (Redis groups
    them for 60 s)."""

    __slots__ = ("client_info", "context", "count", "created_ms", "ctime_ms", "entry_id",
                 "object", "reason", "username")

    def __init__(self, count: int, reason: int, context: str, object: bytes, username: str,
                 ctime_ms: int, client_info: bytes, entry_id: int, created_ms: int) -> None:
        self.count = count
        self.reason = reason
        self.context = context
        self.object = object
        self.username = username
        self.ctime_ms = ctime_ms  # the last time it happened
        self.client_info = client_info
        self.entry_id = entry_id
        self.created_ms = created_ms


_REASONS = {DENIED_CMD: "command", DENIED_KEY: "key", DENIED_CHANNEL: "channel",
            DENIED_AUTH: "auth"}
_LOG_GROUPING_MS = 60_000


_NEWEST = compat.parse(compat.DEFAULT)


class Acl:
    """Every user of one server, the ACL log, and the rules' grammar."""

    def __init__(self, table: Mapping[bytes, CommandSpec], pubsub_default: str,
                 version: compat.Version = _NEWEST) -> None:
        self.index = CommandIndex(table)
        self.pubsub_default = pubsub_default
        # Redis 7.2 and later create every user (the default one too) with sanitize-payload,
        # and describe command rules in the order given; 7.0 with neither flag, and rebuilds
        # the rules from categories (the compat DIFFERENCES "acl-sanitize-payload" and
        # "acl-command-rules").
        self.sanitize_default = compat.follows(version, "acl-sanitize-payload")
        self.ordered_rules = compat.follows(version, "acl-command-rules")
        self.users: dict[str, User] = {}
        self.log: list[LogEntry] = []
        self.next_log_id = 0
        # Denials by reason since the start (INFO's acl_access_denied_*): every denial is
        # logged, so add_log counts them; CONFIG RESETSTAT leaves them, as in Redis.
        self.denials = dict.fromkeys((DENIED_AUTH, DENIED_CMD, DENIED_KEY, DENIED_CHANNEL), 0)
        self.default = self._new_default()
        self.users["default"] = self.default

    def _new_default(self) -> User:
        user = User("default")
        if self.sanitize_default:
            user.sanitize = "sanitize-payload"
        for op in (b"+@all", b"~*", b"&*", b"on", b"nopass"):
            self.apply(user, op)
        user.refresh()
        return user

    # -- users -------------------------------------------------------------------------------

    def new_user(self, name: str) -> User:
        user = User(name)
        if self.sanitize_default:
            user.sanitize = "sanitize-payload"
        if self.pubsub_default == "allchannels":
            user.root.allchannels = True
        user.refresh()
        return user

    def get(self, name: bytes | str) -> User | None:
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        return self.users.get(name)

    def sorted_users(self) -> list[User]:
        """Users in Redis's order (its radix tree: bytewise by name)."""
        return [self.users[n] for n in sorted(
            self.users, key=lambda n: n.encode("utf-8", "surrogateescape"))]

    def set_user(self, name: bytes, rules: Sequence[bytes]) -> None:
        """ACL SETUSER: apply every rule to a copy, then to the user (created if new)."""
        merged = merge_selector_args(rules)
        if isinstance(merged, int):
            raise AclError(
                "Unmatched parenthesis in acl selector starting at "
                f"'{rules[merged].decode('utf-8', 'surrogateescape')}'.")
        text = name.decode("utf-8", "surrogateescape")
        existing = self.users.get(text)
        staged = self.new_user(text)
        if existing is not None:
            staged.copy_from(existing)
        for op in merged:
            try:
                self.apply(staged, op)
            except AclError as exc:
                raise AclError(
                    f"Error in ACL SETUSER modifier '{op.decode('utf-8', 'surrogateescape')}': "
                    f"{exc.message}") from None
        if existing is None:
            existing = self.users[text] = User(text)
        existing.copy_from(staged)

    def apply(self, user: User, op: bytes) -> None:
        """One rule (Redis's ACLSetUser); raises AclError with Redis's reason."""
        user.description = None
        try:
            self._apply(user, op)
        finally:
            user.refresh()

    def _apply(self, user: User, op: bytes) -> None:
        if not op:
            return
        word = op.lower()
        if word == b"on":
            user.enabled = True
        elif word == b"off":
            user.enabled = False
        elif word == b"skip-sanitize-payload":
            user.sanitize = "skip-sanitize-payload"
        elif word == b"sanitize-payload":
            user.sanitize = "sanitize-payload"
        elif word == b"nopass":
            user.nopass = True
            user.passwords.clear()
        elif word == b"resetpass":
            user.nopass = False
            user.passwords.clear()
        elif op[:1] in (b">", b"#"):
            digest = hash_password(op[1:]) if op[:1] == b">" else _checked_hash(op[1:])
            if digest not in user.passwords:
                user.passwords.append(digest)
            user.nopass = False
        elif op[:1] in (b"<", b"!"):
            digest = hash_password(op[1:]) if op[:1] == b"<" else _checked_hash(op[1:])
            if digest not in user.passwords:
                raise AclError(NO_SUCH_PASSWORD)
            user.passwords.remove(digest)
        elif op[:1] == b"(" and op[-1:] == b")":
            user.selectors.append(self._selector_from(op))
        elif word == b"clearselectors":
            del user.selectors[1:]
        elif word == b"reset":
            for step in (b"resetpass", b"resetkeys", b"resetchannels"):
                self._apply(user, step)
            if self.pubsub_default == "allchannels":
                self._apply(user, b"allchannels")
            for step in (b"off", b"sanitize-payload", b"clearselectors", b"-@all"):
                self._apply(user, step)
        else:
            self.apply_selector(user.root, op)

    def _selector_from(self, op: bytes) -> Selector:
        selector = Selector(allchannels=self.pubsub_default == "allchannels")
        for part in split_inline(op[1:-1]) or []:
            self.apply_selector(selector, part)
        return selector

    def apply_selector(self, sel: Selector, op: bytes) -> None:
        """A rule about commands, keys or channels (Redis's ACLSetSelector)."""
        word = op.lower()
        index = self.index
        if word in (b"allkeys", b"~*"):
            sel.allkeys = True
            sel.patterns.clear()
        elif word == b"resetkeys":
            sel.allkeys = False
            sel.patterns.clear()
        elif word in (b"allchannels", b"&*"):
            sel.allchannels = True
            sel.channels.clear()
        elif word == b"resetchannels":
            sel.allchannels = False
            sel.channels.clear()
        elif word in (b"allcommands", b"+@all"):
            sel.allowed = set(index.all)
            sel.allcommands = True
            sel.future = True
            sel.firstargs.clear()
            sel.rules.clear()
        elif word in (b"nocommands", b"-@all"):
            sel.allowed = set()
            sel.allcommands = False
            sel.future = False
            sel.firstargs.clear()
            sel.rules.clear()
        elif op[:1] in (b"~", b"%"):
            self._add_key_pattern(sel, op)
        elif op[:1] == b"&":
            if sel.allchannels:
                raise AclError(CHANNELS_AFTER_ALL)
            if has_spaces(op[1:]):
                raise AclError(SYNTAX)
            if op[1:] not in sel.channels:
                sel.channels.append(op[1:])
            sel.allchannels = False
        elif op[:1] == b"+" and op[1:2] != b"@":
            self._allow(sel, op[1:])
        elif op[:1] == b"-" and op[1:2] != b"@":
            spec = index.lookup(op[1:])
            if spec is None:
                raise AclError(UNKNOWN_COMMAND)
            self._change(sel, spec.fullname, False)
            sel.add_rule(spec.fullname, False)
        elif op[:1] in (b"+", b"-") and op[1:2] == b"@":
            category = op[2:].decode("utf-8", "surrogateescape").lower()
            if category not in index.category:
                raise AclError(UNKNOWN_COMMAND)
            self._set_category(sel, category, op[:1] == b"+")
            sel.add_rule("@" + category, op[:1] == b"+")
        else:
            raise AclError(SYNTAX)

    def _add_key_pattern(self, sel: Selector, op: bytes) -> None:
        if sel.allkeys:
            raise AclError(KEYS_AFTER_ALL)
        flags = 0
        offset = 1
        if op[:1] == b"%":
            while offset < len(op):
                c = op[offset:offset + 1].upper()
                if c == b"R" and not flags & READ:
                    flags |= READ
                elif c == b"W" and not flags & WRITE:
                    flags |= WRITE
                elif c == b"~":
                    offset += 1
                    break
                else:
                    raise AclError(SYNTAX)
                offset += 1
        else:
            flags = ALL_PERMISSIONS
        pattern = op[offset:]
        if has_spaces(pattern):
            raise AclError(SYNTAX)
        for existing in sel.patterns:
            if existing.pattern == pattern:
                existing.flags |= flags
                break
        else:
            sel.patterns.append(KeyPattern(pattern, flags))
        sel.allkeys = False

    def _allow(self, sel: Selector, name: bytes) -> None:
        index = self.index
        if b"|" not in name:
            spec = index.lookup(name)
            if spec is None:
                raise AclError(UNKNOWN_COMMAND)
            self._change(sel, spec.fullname, True)
            sel.add_rule(spec.fullname, True)
            return
        head, _, sub = name.rpartition(b"|")
        spec = index.lookup(head)
        if spec is None:
            raise AclError(UNKNOWN_COMMAND)
        if spec.container is not None:
            raise AclError(FIRSTARG_OF_SUB)
        if not sub:
            raise AclError(SYNTAX)
        if spec.subcommands:
            target = index.lookup(name)
            if target is None:
                raise AclError(UNKNOWN_COMMAND)
            self._change(sel, target.fullname, True)
        else:
            # The first argument of a command without subcommands (+select|0): deprecated in
            # Redis, still honoured.
            allowed = sel.firstargs.setdefault(spec.fullname, [])
            if not any(sub.lower() == a.lower() for a in allowed):
                allowed.append(sub)
        # Redis records this rule as written (lowercased), not by the command's full name.
        sel.add_rule(name.decode("utf-8", "surrogateescape"), True)

    def _set_bit(self, sel: Selector, fullname: str, allow: bool) -> None:
        if allow:
            sel.allowed.add(fullname)
        else:
            sel.allowed.discard(fullname)
            sel.allcommands = False

    def _change(self, sel: Selector, fullname: str, allow: bool) -> None:
        """ACLChangeSelectorPerm: a command, and a container's subcommands with it."""
        self._set_bit(sel, fullname, allow)
        sel.firstargs.pop(fullname, None)
        for sub in self.index.subs.get(fullname, ()):
            self._set_bit(sel, sub, allow)

    def _set_category(self, sel: Selector, category: str, allow: bool) -> None:
        members = self.index.category[category]
        for name in self.index.order:
            if name in members:
                self._change(sel, name, allow)

    # -- descriptions ------------------------------------------------------------------------

    def describe_commands(self, sel: Selector) -> str:
        """ACLDescribeSelectorCommandRules: +@all/-@all, then (Redis 7.2 and later) the
        rules as given, or (7.0) the best-fitting categories and single commands; either way
        applying the rules rebuilds exactly ``sel.allowed``."""
        if self.ordered_rules:
            return self._describe_ordered(sel)
        index = self.index
        additive = not sel.future
        rules = ["-@all" if additive else "+@all"]
        fake = Selector()
        self.apply_selector(fake, rules[0].encode())
        temp = Selector(allowed=set(sel.allowed))
        applied: set[str] = set()
        while True:
            best = None
            mindiff = 1 << 31
            maxsame = 0
            for category in CATEGORIES:
                if category in applied or category not in index.category:
                    continue
                members = index.category[category]
                on = sum(1 for name in index.order if name in members and name in temp.allowed)
                off = sum(1 for name in index.order if name in members) - on
                diff, same = (off, on) if additive else (on, off)
                if same > diff and (diff < mindiff or (diff == mindiff and same > maxsame)):
                    best, mindiff, maxsame = category, diff, same
            if best is None:
                break
            sign, inverse = ("+", "-") if additive else ("-", "+")
            self._set_category(fake, best, sign == "+")
            self._set_category(temp, best, inverse == "+")
            rules.append(f"{sign}@{best}")
            applied.add(best)
        for spec in index.tops:
            rules.extend(self._single_rules(sel, fake, spec.fullname))
            for sub in index.subs.get(spec.fullname, ()):
                rules.extend(self._single_rules(sel, fake, sub))
        if fake.allowed != sel.allowed:  # the description must rebuild the very same set
            raise AssertionError(f"ACL description does not rebuild the rules: {rules}")
        return " ".join(rules)

    def _describe_ordered(self, sel: Selector) -> str:
        rules = ["+@all" if sel.future else "-@all", *sel.rules]
        fake = Selector()
        for rule in rules:
            self.apply_selector(fake, rule.encode("utf-8", "surrogateescape"))
        if fake.allowed != sel.allowed:  # the description must rebuild the very same set
            raise AssertionError(f"ACL description does not rebuild the rules: {rules}")
        return " ".join(rules)

    def _single_rules(self, sel: Selector, fake: Selector, name: str) -> list[str]:
        out = []
        mine = name in sel.allowed
        if mine != (name in fake.allowed):
            out.append(("+" if mine else "-") + name)
            self._change(fake, name, mine)
        if not mine:
            for arg in sel.firstargs.get(name, ()):
                out.append(f"+{name}|{arg.decode('utf-8', 'surrogateescape')}")
        return out

    def describe_selector(self, sel: Selector) -> str:
        parts: list[str] = []
        if sel.allkeys:
            parts.append("~*")
        else:
            parts.extend(p.text().decode("utf-8", "surrogateescape") for p in sel.patterns)
        if sel.allchannels:
            parts.append("&*")
        else:
            parts.append("resetchannels")
            parts.extend("&" + c.decode("utf-8", "surrogateescape") for c in sel.channels)
        parts.append(self.describe_commands(sel))
        return " ".join(parts)

    def describe(self, user: User) -> str:
        """ACLDescribeUser: flags, password hashes, root rules, then (selectors)."""
        if user.description is None:
            parts = list(user.flag_names())
            parts.extend("#" + p for p in user.passwords)
            text = " ".join([*parts, self.describe_selector(user.root)])
            for sel in user.selectors[1:]:
                text += f" ({self.describe_selector(sel)})"
            user.description = text
        return user.description

    def lines(self) -> list[str]:
        """``<name> <description>`` for every user, as ACL LIST and config files hold them."""
        return [f"{u.name} {self.describe(u)}" for u in self.sorted_users()]

    # -- authentication ----------------------------------------------------------------------

    def authenticate(self, name: bytes, password: bytes) -> User | None:
        """The user if the name and password match and the user is on (ACLCheckUserCredentials)."""
        user = self.get(name)
        if user is None or not user.enabled:
            return None
        if user.nopass:
            return user
        import hmac

        digest = hash_password(password)
        matched = False
        for candidate in user.passwords:
            matched |= hmac.compare_digest(candidate, digest)
        return user if matched else None

    def set_default_password(self, password: str) -> None:
        """requirepass: the default user's only password, or nopass when empty."""
        self.apply(self.default, b"resetpass")
        if password:
            self.apply(self.default, b">" + password.encode("utf-8", "surrogateescape"))
        else:
            self.apply(self.default, b"nopass")

    # -- log ---------------------------------------------------------------------------------

    def add_log(self, reason: int, context: str, obj: bytes, username: str, now_ms: int,
                client_info: bytes, max_len: int) -> None:
        """addACLLogEntry: count the denial, then group it with a recent matching entry,
        else add it, trimmed to max_len (counted even when the log keeps nothing)."""
        self.denials[reason] += 1
        for i, entry in enumerate(self.log[:10]):
            if (entry.reason == reason and entry.context == context
                    and abs(entry.ctime_ms - now_ms) <= _LOG_GROUPING_MS
                    and entry.object == obj and entry.username == username):
                entry.count += 1
                entry.ctime_ms = now_ms
                entry.client_info = client_info
                self.log.insert(0, self.log.pop(i))
                return
        self.log.insert(0, LogEntry(1, reason, context, obj, username, now_ms, client_info,
                                    self.next_log_id, now_ms))
        self.next_log_id += 1
        del self.log[max_len:]

    @staticmethod
    def reason_name(reason: int) -> str:
        return _REASONS.get(reason, "unknown")


def _checked_hash(text: bytes) -> str:
    if len(text) != HASH_LEN or any(c not in b"0123456789abcdef" for c in text):
        raise AclError(BAD_HASH)
    return text.decode()


def merge_selector_args(args: Sequence[bytes]) -> list[bytes] | int:
    """ACLMergeSelectorArguments: join ``(a``, ``b``, ``c)`` into one ``(a b c)`` rule; the
    index of an unclosed ``(`` when one is left open."""
    merged: list[bytes] = []
    current: bytes | None = None
    start = -1
    for i, op in enumerate(args):
        if current is None and op[:1] == b"(" and op[-1:] != b")":
            current, start = op, i
            continue
        if current is not None:
            current += b" " + op
            if op[-1:] == b")":
                merged.append(current)
                current = None
            continue
        merged.append(op)
    if current is not None:
        return start
    return merged


# -- permission checks ------------------------------------------------------------------------


def _key_flags(flags: Iterable[str]) -> int:
    needed = 0
    for flag in flags:
        if flag == "ACCESS":
            needed |= READ
        elif flag in ("INSERT", "DELETE", "UPDATE"):
            needed |= WRITE
    return needed


def _key_allowed(sel: Selector, key: bytes, needed: int) -> bool:
    if sel.allkeys:
        return True
    for pattern in sel.patterns:
        if pattern.flags & needed == needed and glob_match(pattern.pattern, key):
            return True
    return False


def _channel_listed(sel: Selector, channel: bytes, is_pattern: bool) -> bool:
    for pattern in sel.channels:
        if (pattern == channel) if is_pattern else glob_match(pattern, channel):
            return True
    return False


def channel_allowed(user: User, channel: bytes, is_pattern: bool) -> bool:
    """ACLUserCheckChannelPerm: whether any selector lets ``user`` use the channel (a
    PSUBSCRIBE pattern is compared literally with the ACL's patterns)."""
    for sel in user.selectors:
        if sel.allchannels or _channel_listed(sel, channel, is_pattern):
            return True
    return False


def _check_selector(sel: Selector, spec: CommandSpec, argv: Sequence[bytes],
                    keys: list[tuple[int, int]] | None) -> tuple[int, int]:
    if not sel.allcommands and not spec.is_noauth and spec.fullname not in sel.allowed:
        allowed = sel.firstargs.get(spec.fullname)
        at = 2 if spec.container else 1
        if not allowed or len(argv) <= at or not any(
                argv[at].lower() == a.lower() for a in allowed):
            return DENIED_CMD, 0
    if not sel.allkeys and keys:
        for pos, needed in keys:
            if not _key_allowed(sel, argv[pos], needed):
                return DENIED_KEY, pos
    channels = CHANNEL_ARGS.get(spec.fullname)
    if channels is not None and not sel.allchannels:
        first, last, is_pattern = channels
        end = len(argv) if last < 0 else last + 1
        for pos in range(first, min(end, len(argv))):
            if not _channel_listed(sel, argv[pos], is_pattern):
                return DENIED_CHANNEL, pos
    return OK, 0


def check_command(user: User, spec: CommandSpec, argv: Sequence[bytes]) -> tuple[int, int]:
    """ACLCheckAllUserCommandPerm: ``(OK, 0)`` when some selector allows the command line,
    else the most telling denial and the position of the key or channel it concerns."""
    keys: list[tuple[int, int]] | None = None
    if has_keys(spec) and not all(s.allkeys for s in user.selectors):
        keys = [(ref.pos, _key_flags(ref.flags)) for ref in command_keys(spec, argv)]
    relevant, last = DENIED_CMD, 0
    for sel in user.selectors:
        result, pos = _check_selector(sel, spec, argv, keys)
        if result == OK:
            return OK, 0
        if result > relevant or (result == relevant and pos > last):
            relevant, last = result, pos
    return relevant, last


def _selector_reads_everything(sel: Selector, needed: int) -> bool:
    # ACLSelectorHasUnrestrictedKeyAccess: allkeys, or a pattern that is exactly "*" with
    # the permissions needed (~* or %R~*); a pattern that happens to match everything
    # (such as "**") does not count, as in Redis.
    if sel.allkeys:
        return True
    return any(p.flags & needed == needed and p.pattern == b"*" for p in sel.patterns)


def unrestricted_key_access(user: User | None, spec: CommandSpec, argv: Sequence[bytes],
                            needed: int = READ) -> bool:
    """ACLUserCheckCmdWithUnrestrictedKeyAccess: whether some selector of ``user`` allows
    this command line and may reach every key with the ``needed`` permissions (None, an
    unrestricted client, may). SORT asks it before it reads keys that BY and GET patterns
    build, which no key spec names."""
    if user is None:
        return True
    keys: list[tuple[int, int]] | None = None
    if has_keys(spec) and not all(s.allkeys for s in user.selectors):
        keys = [(ref.pos, _key_flags(ref.flags)) for ref in command_keys(spec, argv)]
    return any(_check_selector(sel, spec, argv, keys)[0] == OK
               and _selector_reads_everything(sel, needed) for sel in user.selectors)


def denial_message(result: int, user: User, spec: CommandSpec, obj: bytes,
                   verbose: bool = False) -> str:
    """getAclErrorMessage: Redis's words for a denial (``result`` is not OK); ``verbose``
    (ACL DRYRUN) names the key or channel ``obj`` that was refused."""
    if result == DENIED_CMD:
        return errors.acl_denied_command(user.name, spec.fullname)
    if result == DENIED_KEY:
        return (errors.acl_denied_object(user.name, obj, "key") if verbose
                else errors.ACL_DENIED_KEY)
    return (errors.acl_denied_object(user.name, obj, "channel") if verbose
            else errors.ACL_DENIED_CHANNEL)


def genpass(bits: int) -> str:
    """ACL GENPASS: ``bits`` of randomness as lower-case hex (rounded up to whole digits)."""
    chars = (bits + 3) // 4
    return os.urandom((chars + 1) // 2).hex()[:chars]
