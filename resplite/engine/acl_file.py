"""Users from the configuration file's ``user`` lines and from the ACL file (``aclfile``):
loaded at start when either is set, by ACL LOAD and written by ACL SAVE.

Apart from :mod:`resplite.engine.acl` so that a server configured with neither does not
import it; the rules themselves are applied by :class:`~resplite.engine.acl.Acl`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from resplite.engine.acl import (
    DUPLICATE_USER,
    UNKNOWN_COMMAND,
    Acl,
    AclError,
    User,
    has_spaces,
    merge_selector_args,
)

NOT_CONFIGURED_FOR_FILE = (
    "This Redis instance is not configured to use an ACL file. You may want to specify users "
    "via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
    "configuration file set) in order to store users in the Redis configuration."
)
BOTH_SOURCES = (
    "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
    "path is invalid. This setup is very likely to lead to configuration errors and security "
    "holes, please define either an ACL file or declare users directly in your redis.conf, but "
    "not both."
)


def load_configured_users(acl: Acl, lines: Sequence[Sequence[str]], aclfile: str) -> None:
    """Users of the configuration file's ``user`` lines, then of the ACL file, at start
    (ACLLoadUsersAtStartup); raises AclError with the reason the server must not start."""
    if aclfile and lines:
        raise AclError(BOTH_SOURCES)
    seen: set[str] = set()
    for words in lines:
        name, rules = words[0], [w.encode("utf-8", "surrogateescape") for w in words[1:]]
        if name in seen:
            raise AclError(f"Error in user declaration '{name}': {DUPLICATE_USER}")
        seen.add(name)
        raw_name = name.encode("utf-8", "surrogateescape")
        if has_spaces(raw_name):
            raise AclError("Spaces not allowed in ACL usernames")
        merged = merge_selector_args(rules)
        if isinstance(merged, int):
            raise AclError(f"Error in user declaration '{words[merged + 1]}': Unmatched "
                           "parenthesis in acl selector")
        user = acl.users.get(name)
        if user is None:
            user = acl.users[name] = acl.new_user(name)
        else:
            acl.apply(user, b"reset")
        for op in merged:
            try:
                acl.apply(user, op)
            except AclError as exc:
                raise AclError(f"Error loading ACL rule '{op.decode('utf-8', 'replace')}' for "
                               f"the user named '{name}': {exc.message}") from None
    if aclfile:
        problems = load_acl_file(acl, aclfile)
        if problems is not None:
            raise AclError(f"Aborting Redis startup because of ACL errors: {problems}")


def load_acl_file(acl: Acl, path: str) -> str | None:
    """ACL LOAD: replace every user with the file's, or change nothing and answer Redis's
    description of every problem found. The default user keeps its identity (clients hold
    it); a file without it gives the default user its initial rules."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return f"Error loading ACLs, opening file '{path}': {exc.strerror}"
    errors: list[str] = []
    users: dict[str, User] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.strip(b" \t\r\n")
        if not line:
            continue
        words = line.split(b" ")
        if words[0] != b"user" or len(words) < 2:
            errors.append(f"{path}:{number} should start with user keyword followed by the "
                          "username. ")
            continue
        name = words[1].decode("utf-8", "surrogateescape")
        if has_spaces(words[1]):
            errors.append(f"'{path}:{number}: username '{name}' contains invalid characters. ")
            continue
        if name in users:
            errors.append(f"WARNING: Duplicate user '{name}' found on line {number}. ")
            continue
        user = users[name] = acl.new_user(name)
        merged = merge_selector_args(words[2:])
        if isinstance(merged, int):
            errors.append(f"{path}:{number}: Unmatched parenthesis in selector definition.")
            continue
        syntax_error = False
        for op in merged:
            op = op.strip(b"\t\r\n")
            try:
                acl.apply(user, op)
            except AclError as exc:
                if exc.message == UNKNOWN_COMMAND:
                    errors.append(f"{path}:{number}: Error in applying operation "
                                  f"'{op.decode('utf-8', 'surrogateescape')}': {exc.message}. ")
                elif not syntax_error:
                    errors.append(f"{path}:{number}: {exc.message}. ")
                    syntax_error = True
    if errors:
        return "".join(errors) + ("WARNING: ACL errors detected, no change to the previously "
                                  "active ACL rules was performed")
    new_default = users.pop("default", None) or acl._new_default()
    acl.default.copy_from(new_default)
    users["default"] = acl.default
    acl.users = users
    return None


def save_acl_file(acl: Acl, path: str) -> None:
    """ACL SAVE: every user as a ``user`` line, written to a temporary file renamed over
    the old one; raises OSError."""
    text = "".join(f"user {line}\n" for line in acl.lines())
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(text.encode("utf-8", "surrogateescape"))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
