"""The append-only file inside the engine, without a socket: what each write is logged as,
the fsync policies' timing through the scheduler seam, blocking pops, expiry, the parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from resplite.commands import command_table
from resplite.engine.aof import (
    BASE,
    HISTORY,
    INCR,
    MANIFEST_MAX_LINE,
    AofCorrupt,
    AofFile,
    AofTruncated,
    ManifestError,
    encode_command,
    parse_commands,
    parse_manifest,
)
from resplite.engine.client import Client
from resplite.engine.config import Config
from resplite.engine.scheduler import ManualScheduler
from resplite.engine.state import ServerState

Setup = tuple[ServerState, Client, ManualScheduler, Path]


def _make(tmp_path: Path, fsync: str = "everysec") -> Setup:
    config = Config()
    config.set("dir", str(tmp_path), at_startup=True)
    config.set("appendonly", "yes", at_startup=True)
    config.set("appendfsync", fsync, at_startup=True)
    scheduler = ManualScheduler()
    state = ServerState(config, table=command_table(), scheduler=scheduler)
    state.persistence.load_at_start()
    state.start_aof()
    return state, Client(state, 1, None), scheduler, tmp_path / "appendonlydir"


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return _make(tmp_path)


def _logged(state: ServerState) -> list[list[bytes]]:
    state.aof.before_reply()
    data = (Path(state.aof.folder) / "appendonly.aof.1.incr.aof").read_bytes()
    return parse_commands(data)


def test_writes_that_changed_something_are_logged(setup: Setup) -> None:
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"SET", b"k", b"v"])  # fast path
    run(client, [b"Set", b"k2", b"v"])  # general path
    run(client, [b"GET", b"k"])  # a read: not logged
    run(client, [b"SELECT", b"3"])
    run(client, [b"LPUSH", b"l", b"a"])
    run(client, [b"INCR", b"l"])  # an error: not logged
    assert _logged(state) == [
        [b"SELECT", b"0"], [b"SET", b"k", b"v"], [b"Set", b"k2", b"v"],
        [b"SELECT", b"3"], [b"LPUSH", b"l", b"a"],
    ]


def test_relative_expiry_and_xadd_ids_are_logged_resolved(setup: Setup) -> None:
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"SET", b"a", b"1", b"EX", b"100"])
    run(client, [b"SETEX", b"b", b"100", b"2"])
    run(client, [b"EXPIRE", b"b", b"200"])
    run(client, [b"EXPIRE", b"a", b"-1"])  # deletes the key
    sid = run(client, [b"XADD", b"s", b"MAXLEN", b"~", b"10", b"*", b"f", b"v"])
    logged = _logged(state)[1:]
    expires = state.keyspace[0].expires
    assert logged[0][:3] == [b"SET", b"a", b"1"] and logged[0][3] == b"PXAT"
    assert logged[1] == [b"SET", b"b", b"2", b"PXAT", logged[1][4]]
    assert logged[2] == [b"PEXPIREAT", b"b", b"%d" % expires[b"b"]]
    assert logged[3] == [b"DEL", b"a"]
    # An approximate trim is logged exact (where "~" stops depends on the node layout).
    assert logged[4] == [b"XADD", b"s", b"MAXLEN", b"=", b"1", sid, b"f", b"v"]


def test_approximate_stream_trims_are_logged_exact(setup: Setup) -> None:
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"CONFIG", b"SET", b"stream-node-max-entries", b"10"])
    for i in range(1, 31):
        run(client, [b"XADD", b"s", b"%d-1" % i, b"f", b"v"])
    run(client, [b"XADD", b"s", b"MAXLEN", b"~", b"15", b"LIMIT", b"100", b"31-1", b"f", b"v"])
    left = run(client, [b"XLEN", b"s"])
    run(client, [b"XTRIM", b"s", b"MINID", b"~", b"25-0"])
    entry = state.keyspace[0].data[b"s"].first_entry()
    assert entry is not None
    first = b"%d-%d" % (entry[0] >> 64, entry[0] & ((1 << 64) - 1))
    assert first != b"25-0"  # whole nodes only, here too
    logged = _logged(state)
    assert logged[-2] == [b"XADD", b"s", b"MAXLEN", b"=", b"%d" % left, b"31-1", b"f", b"v"]
    assert logged[-1] == [b"XTRIM", b"s", b"MINID", b"=", first]
    assert left > 15  # whole nodes only: the exact trim is not the one asked for


def test_a_transaction_is_wrapped_in_multi_exec(setup: Setup) -> None:
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"MULTI"])
    run(client, [b"SET", b"a", b"1"])
    run(client, [b"GET", b"a"])
    run(client, [b"INCR", b"n"])
    run(client, [b"EXEC"])
    assert _logged(state) == [[b"MULTI"], [b"SELECT", b"0"], [b"SET", b"a", b"1"],
                              [b"INCR", b"n"], [b"EXEC"]]


def test_a_blocking_pop_served_later_is_logged_as_its_plain_form(setup: Setup) -> None:
    state, client, _, _ = setup
    other = Client(state, 2, None)
    run = state.dispatcher.execute
    request = run(client, [b"BLPOP", b"q", b"0"])
    state.blocking.block(client, request)
    run(other, [b"RPUSH", b"q", b"x"])
    state.blocking.serve_ready()
    assert _logged(state)[1:] == [[b"RPUSH", b"q", b"x"], [b"LPOP", b"q"]]


def test_an_expired_key_is_logged_as_del(setup: Setup) -> None:
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"SET", b"k", b"v", b"PX", b"10"])
    db = state.keyspace[0]
    db.expires[b"k"] = 1  # long past
    assert run(client, [b"GET", b"k"]) is None
    assert _logged(state)[-1] == [b"DEL", b"k"]


def test_everysec_fsyncs_on_the_scheduler_timer(setup: Setup) -> None:
    state, client, scheduler, _ = setup
    state.dispatcher.execute(client, [b"SET", b"k", b"v"])
    state.aof.before_reply()
    assert state.aof.unsynced and scheduler.armed == 1
    scheduler.run_due(1.0)
    assert not state.aof.unsynced and scheduler.armed == 0


def test_always_fsyncs_before_the_reply(tmp_path: Path) -> None:
    state, client, scheduler, _ = _make(tmp_path, "always")
    state.dispatcher.execute(client, [b"SET", b"k", b"v"])
    state.aof.before_reply()
    assert not state.aof.unsynced and scheduler.armed == 0
    assert state.aof.buffer == []


def test_the_manifest_is_redis_s(setup: Setup) -> None:
    _, _, _, folder = setup
    assert (folder / "appendonly.aof.manifest").read_text() == (
        "file appendonly.aof.1.base.rdb seq 1 type b\n"
        "file appendonly.aof.1.incr.aof seq 1 type i\n")


def test_the_parser_tells_torn_from_corrupt() -> None:
    one = encode_command([b"SET", b"k", b"v"])
    assert parse_commands(one * 2) == [[b"SET", b"k", b"v"]] * 2
    for cut in range(1, len(one)):
        with pytest.raises(AofTruncated) as torn:
            parse_commands(one + one[:cut])
        assert torn.value.offset == len(one) and torn.value.commands == [[b"SET", b"k", b"v"]]
    with pytest.raises(AofCorrupt):
        parse_commands(one + b"+OK\r\n")
    with pytest.raises(AofCorrupt):
        parse_commands(b"*1\r\n$3\r\nabcXY")


def test_forms_recorded_where_the_write_happens(setup: Setup) -> None:
    """Each write logs what it did: XADD's generated id in its place, GETEX as the change
    it made, BLMOVE served at once as LMOVE, BZPOPMAX as ZPOPMAX, BLMPOP as LPOP with the
    count, INCRBYFLOAT as SET KEEPTTL, GETDEL as DEL; a write that changed nothing is not
    logged (GETEX without option, EXPIRE NX on a key with a TTL)."""
    state, client, _, _ = setup
    run = state.dispatcher.execute
    sid = run(client, [b"XADD", b"s", b"NOMKSTREAM", b"MINID", b"=", b"0", b"*", b"f", b"v"])
    assert sid is None  # NOMKSTREAM on no stream: nothing
    sid = run(client, [b"XADD", b"s", b"MINID", b"=", b"5", b"*", b"f", b"v"])
    run(client, [b"SET", b"k", b"v", b"EX", b"100"])
    run(client, [b"GETEX", b"k"])
    run(client, [b"EXPIRE", b"k", b"10", b"NX"])
    run(client, [b"GETEX", b"k", b"PERSIST"])
    run(client, [b"SET", b"k", b"v", b"KEEPTTL"])
    run(client, [b"RPUSH", b"a", b"1", b"2", b"3"])
    run(client, [b"BLMOVE", b"a", b"b", b"LEFT", b"RIGHT", b"0"])
    run(client, [b"BLMPOP", b"0", b"1", b"a", b"RIGHT", b"COUNT", b"5"])
    run(client, [b"ZADD", b"z", b"1", b"m"])
    run(client, [b"BZPOPMAX", b"y", b"z", b"0"])
    run(client, [b"INCRBYFLOAT", b"f", b"1.5"])
    run(client, [b"GETDEL", b"f"])
    logged = _logged(state)[1:]
    when = logged[1][4]
    assert logged == [
        [b"XADD", b"s", b"MINID", b"=", b"5", sid, b"f", b"v"],
        [b"SET", b"k", b"v", b"PXAT", when],
        [b"PERSIST", b"k"],
        [b"SET", b"k", b"v", b"KEEPTTL"],
        [b"RPUSH", b"a", b"1", b"2", b"3"],
        [b"LMOVE", b"a", b"b", b"LEFT", b"RIGHT"],
        [b"RPOP", b"a", b"2"],
        [b"ZADD", b"z", b"1", b"m"],
        [b"ZPOPMAX", b"z"],
        [b"SET", b"f", b"1.5", b"KEEPTTL"],
        [b"DEL", b"f"],
    ]


def test_increx_is_logged_as_the_state_it_left(setup: Setup) -> None:
    """Redis 8.8: a relative expiry must not be replayed relative to a later clock."""
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"INCREX", b"k", b"BYFLOAT", b"0.5", b"EX", b"10"])
    run(client, [b"INCREX", b"n"])
    run(client, [b"INCREX", b"g", b"EXAT", b"1"])
    logged = _logged(state)[1:]
    expires = state.keyspace[0].expires
    assert logged == [[b"SET", b"k", b"0.5", b"PXAT", b"%d" % expires[b"k"]],
                      [b"SET", b"n", b"1"], [b"DEL", b"g"]]


def test_himport_set_is_logged_as_del_and_hset_in_a_transaction(setup: Setup) -> None:
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"HIMPORT", b"PREPARE", b"fs", b"a", b"b"])
    run(client, [b"HIMPORT", b"SET", b"k", b"fs", b"1", b"2"])
    assert _logged(state) == [[b"MULTI"], [b"SELECT", b"0"], [b"DEL", b"k"],
                              [b"HSET", b"k", b"a", b"1", b"b", b"2"], [b"EXEC"]]


def test_a_command_logged_as_several_is_not_wrapped_twice(setup: Setup) -> None:
    """Inside MULTI/EXEC or a script, the forms of a command logged as several go inside
    the one transaction already open."""
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"HIMPORT", b"PREPARE", b"fs", b"a"])
    run(client, [b"MULTI"])
    run(client, [b"HIMPORT", b"SET", b"k", b"fs", b"1"])
    run(client, [b"SPOP", b"nokey"])  # changed nothing: not logged
    run(client, [b"EXEC"])
    run(client, [b"EVAL", b"redis.call('sadd', 's', 'a', 'b', 'c') "
                 b"return redis.call('spop', 's', 2)", b"0"])
    logged = _logged(state)
    assert logged[:5] == [[b"MULTI"], [b"SELECT", b"0"], [b"DEL", b"k"],
                          [b"HSET", b"k", b"a", b"1"], [b"EXEC"]]
    assert logged[5:7] == [[b"MULTI"], [b"sadd", b"s", b"a", b"b", b"c"]]
    assert logged[7][:2] == [b"SREM", b"s"] and len(logged[7]) == 4
    assert logged[8:] == [[b"EXEC"]]


def test_lmovem_blmovem_are_logged_with_the_number_moved(setup: Setup) -> None:
    """Redis 8.10: LMOVEM / BLMOVEM become ``LMOVEM ... EXACTLY n ordering``."""
    state, client, _, _ = setup
    other = Client(state, 2, None)
    run = state.dispatcher.execute
    run(client, [b"RPUSH", b"s", b"a", b"b"])
    run(client, [b"LMOVEM", b"s", b"d", b"LEFT", b"RIGHT", b"COUNT", b"9", b"BULK"])
    run(client, [b"LMOVEM", b"d", b"s", b"LEFT", b"RIGHT"])
    request = run(client, [b"BLMOVEM", b"x", b"d", b"RIGHT", b"LEFT", b"0", b"EXACTLY",
                           b"2", b"OBO"])
    state.blocking.block(client, request)
    run(other, [b"RPUSH", b"x", b"1", b"2", b"3"])
    state.blocking.serve_ready()
    assert _logged(state)[2:] == [
        [b"LMOVEM", b"s", b"d", b"LEFT", b"RIGHT", b"EXACTLY", b"2", b"BULK"],
        [b"LMOVEM", b"d", b"s", b"LEFT", b"RIGHT", b"EXACTLY", b"1", b"OBO"],
        [b"RPUSH", b"x", b"1", b"2", b"3"],
        [b"LMOVEM", b"x", b"d", b"RIGHT", b"LEFT", b"EXACTLY", b"2", b"OBO"],
    ]


def test_hash_field_expiry_restore_and_spop_are_logged_resolved(setup: Setup) -> None:
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"HSET", b"h", b"a", b"1", b"b", b"2", b"c", b"3"])
    run(client, [b"HEXPIRE", b"h", b"100", b"FIELDS", b"2", b"a", b"b"])
    run(client, [b"HPEXPIRE", b"h", b"0", b"FIELDS", b"1", b"c"])  # deletes c
    run(client, [b"HSETEX", b"h2", b"EX", b"50", b"FIELDS", b"1", b"x", b"y"])
    run(client, [b"SET", b"r", b"v"])
    payload = run(client, [b"DUMP", b"r"])
    run(client, [b"RESTORE", b"r2", b"5000", payload])
    run(client, [b"SADD", b"set", b"m"])
    run(client, [b"SPOP", b"set"])
    logged = _logged(state)[2:]
    h = state.keyspace[0].data[b"h"]
    when = h.ttl_of(b"a")
    assert logged[0] == [b"HPEXPIREAT", b"h", b"%d" % when, b"FIELDS", b"2", b"a", b"b"]
    assert logged[1] == [b"HDEL", b"h", b"c"]
    x_when = state.keyspace[0].data[b"h2"].ttl_of(b"x")
    assert logged[2] == [b"HSETEX", b"h2", b"PXAT", b"%d" % x_when, b"FIELDS", b"1", b"x",
                         b"y"]
    r2_when = state.keyspace[0].expires[b"r2"]
    assert logged[4] == [b"RESTORE", b"r2", b"%d" % r2_when, payload, b"ABSTTL"]
    assert logged[-1] == [b"SREM", b"set", b"m"]


def test_compare_and_set_delex_and_msetex_are_logged_as_what_they_did(setup: Setup) -> None:
    state, client, _, _ = setup
    run = state.dispatcher.execute
    run(client, [b"SET", b"k", b"v"])
    run(client, [b"SET", b"k", b"w", b"IFEQ", b"nope"])  # refused: not logged
    run(client, [b"SET", b"k", b"w", b"IFEQ", b"v", b"GET"])
    run(client, [b"SET", b"k", b"x", b"ifdne", b"0" * 16, b"KEEPTTL"])
    run(client, [b"SET", b"k", b"y", b"IFNE", b"EX", b"EX", b"100"])  # a value named EX
    run(client, [b"SET", b"k", b"z", b"NX"])  # refused: not logged
    run(client, [b"DELEX", b"k", b"IFEQ", b"nope"])  # refused: not logged
    run(client, [b"DELEX", b"k", b"IFEQ", b"y"])
    run(client, [b"MSETEX", b"2", b"a", b"1", b"b", b"2", b"NX", b"EX", b"100"])
    run(client, [b"MSETEX", b"1", b"a", b"3", b"XX", b"PXAT", b"99999999999999"])
    run(client, [b"MSETEX", b"1", b"c", b"4", b"KEEPTTL"])
    run(client, [b"MSETEX", b"1", b"a", b"5", b"NX"])  # refused: not logged
    run(client, [b"LPUSH", b"l", b"e"])
    run(client, [b"DELEX", b"l"])
    logged = _logged(state)[1:]
    expires = state.keyspace[0].expires
    assert logged == [
        [b"SET", b"k", b"v"],
        [b"SET", b"k", b"w"],
        [b"SET", b"k", b"x", b"KEEPTTL"],
        [b"SET", b"k", b"y", b"PXAT", logged[3][4]],
        [b"DEL", b"k"],
        [b"MSETEX", b"2", b"a", b"1", b"b", b"2", b"NX", b"PXAT", b"%d" % expires[b"b"]],
        [b"MSETEX", b"1", b"a", b"3", b"XX", b"PXAT", b"99999999999999"],
        [b"MSETEX", b"1", b"c", b"4", b"KEEPTTL"],
        [b"LPUSH", b"l", b"e"],
        [b"DEL", b"l"],
    ]
    assert int(logged[3][4]) > 0


def test_a_failed_write_refuses_writes_until_it_succeeds(setup: Setup) -> None:
    import os

    from resplite.protocol.replies import ErrorReply

    state, client, _, _ = setup
    run = state.dispatcher.execute
    good = state.aof.fd
    state.aof.fd = os.open(os.devnull, os.O_RDONLY)  # os.write fails: EBADF
    try:
        run(client, [b"SET", b"a", b"1"])
        state.aof.before_reply()
        refused = run(client, [b"SET", b"b", b"2"])
        assert isinstance(refused, ErrorReply)
        assert refused.message.startswith("MISCONF Errors writing to the AOF file: ")
        assert run(client, [b"GET", b"a"]) == b"1"  # reads go on
        info = dict(state.aof.info_lines())
        assert info["aof_last_write_status"] == "err"
    finally:
        os.close(state.aof.fd)
        state.aof.fd = good
    state.aof.before_reply()  # the cron's retry writes what was kept
    assert run(client, [b"SET", b"b", b"2"]) is not None
    assert not state.writes_refused
    assert [b"SET", b"a", b"1"] in _logged(state)


# -- the manifest, read by Redis's rules (aofLoadManifestFromFile) ---------------------------

_BASE = b"file appendonly.aof.2.base.rdb seq 2 type b\n"
_INCR = b"file appendonly.aof.2.incr.aof seq 2 type i\n"


def test_a_manifest_reads_as_redis_reads_it() -> None:
    text = (b"# a comment line\n"
            b'FILE "appendonly.aof.2.base.rdb" SEQ 2 Type base\r\n'  # any case, quotes, CRLF
            b"file appendonly.aof.1.incr.aof seq 1 type h\n"
            b"file appendonly.aof.2.incr.aof seq 2 type i startoffset 143 endoffset 297\n"
            b"file appendonly.aof.3.incr.aof seq +3x type i\n")  # atoll stops at the x
    assert parse_manifest(text) == [
        AofFile("appendonly.aof.2.base.rdb", 2, BASE),
        AofFile("appendonly.aof.1.incr.aof", 1, HISTORY),
        AofFile("appendonly.aof.2.incr.aof", 2, INCR),
        AofFile("appendonly.aof.3.incr.aof", 3, INCR),
    ]


@pytest.mark.parametrize(("text", "reason", "line"), [
    (b"", "Found an empty AOF manifest", None),
    (b"file /var/lib/redis/x seq 2 type b\n", "File can't be a path, just a filename", 1),
    (b"file ../x seq 2 type b\n", "File can't be a path, just a filename", 1),
    (_BASE + b"file dir/x seq 2 type i\n", "File can't be a path, just a filename", 2),
    (b"file a\\\\b seq 2 type b\n", "File can't be a path, just a filename", 1),
    (b"garbage\n", "Invalid AOF manifest file format", 1),
    (_BASE + b"\n" + _INCR, "Invalid AOF manifest file format", 2),
    (b"file a seq 2\n", "Invalid AOF manifest file format", 1),
    (_BASE.rstrip() + b" extra\n", "Invalid AOF manifest file format", 1),
    (b'file "a seq 2 type b\n', "Invalid AOF manifest file format", 1),
    (b"file a seq 0 type b\n", "Invalid AOF manifest file format", 1),
    (b"file a seq x type b\n", "Invalid AOF manifest file format", 1),
    (b"file a seq 1 type b other\n", "Invalid AOF manifest file format", 1),  # odd count
    (b"name a seq 1 type b\n", "Invalid AOF manifest file format", 1),
    (_BASE + _BASE + _INCR, "Found duplicate base file information", 2),
    (_BASE + _INCR + _INCR, "Found a non-monotonic sequence number", 3),
    (_BASE + b"file x seq -1 type i\n", "Found a non-monotonic sequence number", 2),
    (_BASE + b"file x seq 3 type z\n", "Unknown AOF file type", 2),
    (_BASE + _INCR.rstrip(b"\n"), "The AOF manifest file contains too long line", None),
    (b"file " + b"a" * 1020 + b" seq 1 type b\n", "The AOF manifest file contains too long line",
     None),
    (_BASE + b"file x\0 seq 3 type i\n", "The AOF manifest file contains too long line", None),
])
def test_a_manifest_redis_refuses(text: bytes, reason: str, line: int | None) -> None:
    with pytest.raises(ManifestError) as caught:
        parse_manifest(text)
    error = caught.value
    assert error.reason == reason
    assert error.lines[0] == "\n*** FATAL AOF MANIFEST FILE ERROR ***\n"
    assert error.lines[-1] == reason + "\n"
    if line is None:
        assert len(error.lines) == 2
    else:
        assert error.lines[1] == f"Reading the manifest file, at line {line}\n"
        shown = text.split(b"\n")[line - 1].strip(b" \t\r")
        assert error.lines[2] == f">>> '{shown.decode()}'\n"


def test_a_manifest_line_of_the_longest_size_is_read() -> None:
    name = b"a" * (MANIFEST_MAX_LINE - len(b"file  seq 1 type b\n"))
    assert parse_manifest(b"file " + name + b" seq 1 type b\n") == [
        AofFile(name.decode(), 1, BASE)]


def test_a_comment_only_manifest_names_no_file() -> None:
    assert parse_manifest(b"# nothing here\n") == []


def test_a_file_name_with_blanks_is_written_quoted(tmp_path: Path) -> None:
    """appendfilename may hold a space or a quote: the manifest quotes it as Redis's
    sdscatrepr does, and reads back the same name."""
    config = Config()
    config.set("dir", str(tmp_path), at_startup=True)
    config.set("appendonly", "yes", at_startup=True)
    config.set("appendfilename", "my \"log\".aof", at_startup=True)
    state = ServerState(config, table=command_table(), scheduler=ManualScheduler())
    state.persistence.load_at_start()
    state.start_aof()
    manifest = Path(state.aof.manifest_path).read_bytes()
    assert manifest.startswith(b'file "my \\"log\\".aof.1.base.rdb" seq 1 type b\n')
    assert parse_manifest(manifest) == state.aof.files
    state.aof.shutdown()
