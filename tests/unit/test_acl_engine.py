"""The ACL engine: descriptions rebuild the rules, checks follow the key specs, the open user
costs the dispatcher nothing, and files that Redis 7.0 would crash on are refused cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resplite.commands import command_table
from resplite.engine import acl, acl_file
from resplite.engine.acl import Acl, AclError
from resplite.engine.config import Config
from resplite.engine.state import ServerState

TABLE = command_table()
NAMES = sorted(acl.CommandIndex(TABLE).order)
RULES = st.one_of(
    st.sampled_from(["+@all", "-@all", "allcommands", "nocommands"]),
    st.builds(lambda sign, c: f"{sign}@{c}", st.sampled_from("+-"),
              st.sampled_from(acl.CATEGORIES)),
    st.builds(lambda sign, n: f"{sign}{n}", st.sampled_from("+-"), st.sampled_from(NAMES)),
    st.sampled_from(["+select|0", "+select|3", "+client|id", "+debug|sleep"]),
)


def _fresh() -> Acl:
    return Acl(TABLE, "resetchannels")


@pytest.mark.parametrize("version", [(7, 0), (8, 6)], ids=["7.0", "8.6"])
@settings(max_examples=80, deadline=None)
@given(st.lists(RULES, max_size=12))
def test_a_description_rebuilds_exactly_the_same_commands(
        version: tuple[int, int], rules: list[str]) -> None:
    """ACL LIST / SAVE / CONFIG REWRITE write what ACLDescribeSelectorCommandRules finds
    (7.0: rebuilt from categories; 7.2 and later: the rules as set): applying that text to a
    new user gives the very same permissions."""
    registry = Acl(TABLE, "resetchannels", version)
    registry.set_user(b"u", [r.encode() for r in rules])
    user = registry.get("u")
    assert user is not None
    text = registry.describe(user)
    again = Acl(TABLE, "resetchannels", version)
    again.set_user(b"u", text.encode().split(b" "))
    copy = again.get("u")
    assert copy is not None
    assert copy.root.allowed == user.root.allowed
    # A first argument of a command allowed whole changes nothing (and is not described);
    # the order of the allowed ones is no permission (7.2 describes them in the order set).
    def firstargs(sel: acl.Selector) -> dict[str, set[bytes]]:
        return {k: set(v) for k, v in sel.firstargs.items() if k not in sel.allowed}

    assert firstargs(copy.root) == firstargs(user.root)
    assert again.describe(copy) == text


def test_a_failed_setuser_changes_nothing() -> None:
    registry = _fresh()
    registry.set_user(b"u", [b"on", b">pw", b"+get", b"~k*"])
    before = registry.describe(registry.users["u"])
    with pytest.raises(AclError, match="Unknown command"):
        registry.set_user(b"u", [b"off", b"resetpass", b"+nosuch"])
    assert registry.describe(registry.users["u"]) == before
    assert registry.authenticate(b"u", b"pw") is registry.users["u"]


def test_key_permissions_follow_the_key_specs() -> None:
    registry = _fresh()
    registry.set_user(b"u", [b"on", b"nopass", b"+@all", b"%R~r*", b"%W~w*"])
    user = registry.users["u"]

    def check(*line: bytes) -> int:
        spec = TABLE[line[0]]
        if spec.subcommands:
            spec = spec.subcommands[line[1]]
        return acl.check_command(user, spec, list(line))[0]

    assert check(b"get", b"r1") == acl.OK
    assert check(b"get", b"w1") == acl.DENIED_KEY
    assert check(b"set", b"w1", b"v") == acl.OK
    assert check(b"set", b"w1", b"v", b"GET") == acl.DENIED_KEY  # GET reads the old value
    assert check(b"copy", b"r1", b"w1") == acl.OK
    assert check(b"copy", b"w1", b"r1") == acl.DENIED_KEY
    assert check(b"xread", b"STREAMS", b"r1", b"w1", b"0", b"0") == acl.DENIED_KEY
    # A selector stops at its first refused key; across selectors the last such key counts.
    assert acl.check_command(user, TABLE[b"mget"], [b"mget", b"r1", b"x", b"y"]) == (
        acl.DENIED_KEY, 2)
    registry.set_user(b"u", [b"(~r* ~x +mget)"])
    assert acl.check_command(user, TABLE[b"mget"], [b"mget", b"r1", b"x", b"y"]) == (
        acl.DENIED_KEY, 3)


def test_channel_check_for_pubsub() -> None:
    registry = _fresh()
    registry.set_user(b"u", [b"&news.*", b"&exact"])
    user = registry.users["u"]
    assert acl.channel_allowed(user, b"news.sport", is_pattern=False)
    assert not acl.channel_allowed(user, b"other", is_pattern=False)
    # A PSUBSCRIBE pattern is compared with the ACL's patterns literally.
    assert acl.channel_allowed(user, b"news.*", is_pattern=True)
    assert not acl.channel_allowed(user, b"news.s*", is_pattern=True)
    registry.set_user(b"v", [b"allchannels"])
    assert acl.channel_allowed(registry.users["v"], b"anything", is_pattern=True)


def test_only_restricted_users_reach_the_check() -> None:
    """The default user (+@all ~* &*) is unrestricted: its clients carry no ACL to check,
    so the dispatcher's common path is taken; a restricted user's clients carry it."""
    state = ServerState(Config(), table=TABLE)
    assert state.acl.default.unrestricted
    from resplite.engine.client import Client

    client = Client(state, state.new_client_id(), None)
    assert client.acl is None and client.authenticated
    state.clients[client.id] = client
    state.acl.set_user(b"default", [b"-debug"])
    state.users_changed(state.acl.default)
    assert client.acl is state.acl.default
    state.acl.set_user(b"default", [b"+@all"])
    state.users_changed(state.acl.default)
    assert client.acl is None


def test_an_unclosed_selector_in_an_acl_file_is_refused(tmp_path: Path) -> None:
    # Redis 7.0.15 crashes on this file; resplite reports it and keeps its users.
    path = tmp_path / "users.acl"
    path.write_text("user default on nopass ~* &* +@all\nuser y on (~a\n")
    registry = _fresh()
    problems = acl_file.load_acl_file(registry, str(path))
    assert problems is not None and "Unmatched parenthesis" in problems
    assert list(registry.users) == ["default"]


def test_genpass_lengths() -> None:
    for bits, chars in ((1, 1), (4, 1), (5, 2), (256, 64), (4096, 1024)):
        text = acl.genpass(bits)
        assert len(text) == chars and all(c in "0123456789abcdef" for c in text)


def test_every_key_after_migrates_keys_is_checked() -> None:
    registry = _fresh()
    registry.set_user(b"u", [b"on", b"nopass", b"+@read", b"+@write", b"~app:*"])
    user = registry.users["u"]
    head = [b"migrate", b"h", b"1", b"", b"0", b"5"]
    spec = TABLE[b"migrate"]
    assert acl.check_command(user, spec, [*head, b"KEYS", b"app:1", b"app:2"]) == (acl.OK, 0)
    assert acl.check_command(user, spec, [*head, b"KEYS", b"app:1", b"secret"]) == (
        acl.DENIED_KEY, 8)
    assert acl.check_command(user, spec, [*head, b"COPY", b"KEYS", b"secret"]) == (
        acl.DENIED_KEY, 8)
    # Read-only access is not enough: MIGRATE deletes what it moved.
    registry.set_user(b"r", [b"on", b"nopass", b"+@all", b"%R~*"])
    assert acl.check_command(registry.users["r"], spec, [*head, b"KEYS", b"a"])[0] == (
        acl.DENIED_KEY)


@pytest.mark.parametrize(
    ("rules", "full"),
    [
        ([b"+@all", b"~*"], True),
        ([b"+@all", b"allkeys"], True),
        ([b"+@all", b"%R~*"], True),
        ([b"+@all", b"%W~*"], False),
        ([b"+@all", b"~app:*"], False),
        ([b"+@all", b"~**"], False),  # matches everything, but is not "*": as in Redis
        ([b"+@all", b"~app:*", b"(~* +sort)"], True),
        ([b"+@all", b"~app:*", b"(~* +get)"], False),  # that selector does not allow SORT
        ([b"+@all", b"~app:*", b"(~x %R~* +sort)"], True),
        ([b"-sort", b"~*"], False),
    ],
)
def test_unrestricted_key_access(rules: list[bytes], full: bool) -> None:
    """What SORT asks before a BY or GET pattern (ACLUserCheckCmdWithUnrestrictedKeyAccess):
    some selector allows the line and reads every key."""
    registry = _fresh()
    registry.set_user(b"u", [b"on", b"nopass", *rules])
    argv = [b"sort", b"app:s", b"GET", b"#"]
    assert acl.unrestricted_key_access(registry.users["u"], TABLE[b"sort"], argv) is full
    assert acl.unrestricted_key_access(None, TABLE[b"sort"], argv)


def test_every_denial_is_counted_even_when_the_log_keeps_nothing() -> None:
    registry = _fresh()
    for reason, max_len in ((acl.DENIED_KEY, 128), (acl.DENIED_KEY, 128),
                            (acl.DENIED_CMD, 0), (acl.DENIED_AUTH, 0)):
        registry.add_log(reason, "toplevel", b"k", "u", 0, b"", max_len)
    assert registry.denials == {acl.DENIED_AUTH: 1, acl.DENIED_CMD: 1, acl.DENIED_KEY: 2,
                                acl.DENIED_CHANNEL: 0}
    assert registry.log == []  # the last max_len of 0 emptied it


def test_a_renamed_sort_still_guards_its_patterns() -> None:
    """SORT finds its own spec by name for the ACL check, whatever rename-command made of
    its name in the table."""
    from resplite.engine.client import Client
    from resplite.engine.errors import SORT_GET_DENIED
    from resplite.engine.table import renamed
    from resplite.protocol.replies import ErrorReply

    state = ServerState(Config(), table=renamed(TABLE, [("sort", "mysort")]))
    client = Client(state, state.new_client_id(), None)
    state.clients[client.id] = client
    state.acl.set_user(b"app", [b"on", b"nopass", b"+@all", b"~app:*"])
    client.log_in(state.acl.users["app"])
    run = state.dispatcher.execute
    assert run(client, [b"RPUSH", b"app:l", b"1"]) == 1
    assert run(client, [b"MYSORT", b"app:l", b"GET", b"x_*"]) == ErrorReply(SORT_GET_DENIED)
    assert run(client, [b"MYSORT", b"app:l"]) == [b"1"]
