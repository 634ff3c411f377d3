"""What a start costs, checked by what it imports rather than by a clock.

Each check runs in a fresh interpreter (a subprocess), so that nothing this test process
already imported hides an import. ``resplite-server --version`` and ``--help`` import
nothing of the server; a started server has not imported the Lua runtime, the RDB codecs,
the scripting engine or the command modules it was not asked for until a command needs
them; a data file present at start is the one reason to load the codecs then.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from resplite.engine.config import implemented_directives
from resplite.engine.config_names import IMPLEMENTED

ROOT = Path(__file__).resolve().parents[2]

# Loaded by a command, never by a start (unless a data file is there: the codecs).
HEAVY = (
    "lupa",
    "resplite.formats",
    "resplite.engine.acl_file",
    "resplite.engine.scripting.engine",
    "resplite.engine.scripting.vm",
    "resplite.engine.scripting.natives",
    "resplite.engine.cluster",
    "resplite.server.cluster",
    "resplite.algorithms.geohash",
    "resplite.commands.geo",
    "resplite.commands.cluster",
    "resplite.commands.migrate",
    "resplite.commands.latency",
    "resplite.commands.hotkeys",
    "resplite.commands.dump",
    "resplite.commands.scripting",
    "resplite.commands.admin",
)


def _run(code: str, *args: str) -> dict[str, list[str]]:
    """Run ``code`` in a fresh interpreter; it prints one JSON object of module lists."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_version_and_help_import_nothing_of_the_server() -> None:
    found = _run("""
        import contextlib, io, json, sys
        from resplite.server.cli import main
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert main(["--version"]) == 0
            assert main(["--help"]) == 0
        assert out.getvalue().startswith("resplite server v=")
        print(json.dumps({"modules": sorted(sys.modules)}))
    """)
    ours = sorted(m for m in found["modules"] if m.startswith("resplite"))
    assert ours == ["resplite", "resplite.build", "resplite.engine",
                    "resplite.engine.config_names", "resplite.server", "resplite.server.cli",
                    "resplite.version"]
    assert "asyncio" not in found["modules"]
    assert "lupa" not in found["modules"]
    assert "typing" not in found["modules"]  # most of what is left to import, here


def test_the_help_lists_the_directives_the_configuration_implements() -> None:
    assert list(IMPLEMENTED) == implemented_directives()


_SERVER = """
    import json, socket, sys, tempfile
    import resplite

    def call(port, *argv):
        payload = b"*%d\\r\\n" % len(argv) + b"".join(
            b"$%d\\r\\n%s\\r\\n" % (len(a), a) for a in argv)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(payload)
            return sock.recv(65536)

    def loaded():
        return sorted(sys.modules)

    directory = sys.argv[1]
    seen = {}
    with resplite.serve(dir=directory, save="") as handle:
        assert call(handle.port, b"PING") == b"+PONG\\r\\n"
        seen["started"] = loaded()
        from resplite import build
        seen["build"] = [build.kind()]
        assert call(handle.port, b"SET", b"k", b"v") == b"+OK\\r\\n"
        assert call(handle.port, b"EVAL", b"return redis.call('GET', KEYS[1])", b"1",
                    b"k") == b"$1\\r\\nv\\r\\n"
        seen["after_eval"] = loaded()
        if sys.argv[2] == "save":
            assert call(handle.port, b"SAVE") == b"+OK\\r\\n"
        seen["after_save"] = loaded()
    print(json.dumps(seen))
"""


def test_a_server_loads_lua_and_the_codecs_only_when_a_command_needs_them(
    tmp_path: Path,
) -> None:
    found = _run(_SERVER, str(tmp_path), "save")
    assert _heavy(found["started"]) == []
    # Processing a dataclass or a NamedTuple costs about a millisecond per class at import,
    # and OpenSSL's start-up several: records the server builds to start are plain
    # classes, and password hashing imports hashlib on first use. (A compiled build hashes
    # its sources once, to load compiled modules only while they match: resplite.build.)
    costly = ("dataclasses",) if found["build"] == ["compiled"] else (
        "dataclasses", "hashlib", "_hashlib")
    assert [m for m in costly if m in found["started"]] == []
    after_eval = _heavy(found["after_eval"])
    assert "lupa" in after_eval and "resplite.engine.scripting.engine" in after_eval
    assert not any(m.startswith("resplite.formats") for m in after_eval)
    assert any(m.startswith("resplite.formats") for m in found["after_save"])
    assert (tmp_path / "dump.rdb").exists()


def test_a_data_file_at_start_is_loaded_with_the_codecs(tmp_path: Path) -> None:
    _run(_SERVER, str(tmp_path), "save")  # leaves dump.rdb behind
    found = _run(_SERVER, str(tmp_path), "no-save")
    assert "resplite.formats.rdb_file" in found["started"]
    assert "lupa" not in found["started"]
