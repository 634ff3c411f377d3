"""The spec files hold exactly the facts the reference Redis reports (tools/gen_specs.py --check).

A hand edit of a fact (an arity, a flag, a key spec, an argument) in a generated file, or a
Redis upgrade that changes one, fails here; prose and hand-maintained files are left alone.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from support.servers import ServerProcess

ROOT = Path(__file__).resolve().parents[2]


def test_generated_specs_match_the_reference_server(
    redis_ref: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("gen_specs", ROOT / "tools" / "gen_specs.py")
    assert spec is not None and spec.loader is not None
    gen_specs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_specs)
    status = gen_specs.main(["--port", str(redis_ref.port), "--check"])
    out = capsys.readouterr()
    assert status == 0, out.out + out.err
