"""Suite-wide settings: markers, Hypothesis's profile, and the `support` helpers on the import
path."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# No example database: a counterexample an earlier run saved in .hypothesis/ (against older code
# or an older test) is never replayed, so the suite's result depends on the checkout alone; a
# failure prints what reproduces it. In CI the examples are derandomized too, so that a run can
# be repeated exactly. HYPOTHESIS_PROFILE picks another profile.
settings.register_profile("resplite", database=None, print_blob=True)
settings.register_profile("resplite-ci", settings.get_profile("resplite"), derandomize=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("resplite-ci" if os.environ.get("CI") else "resplite")
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "/compat/" in str(item.fspath):
            item.add_marker(pytest.mark.compat)


def pytest_report_header(config: pytest.Config) -> str:
    from support.servers import missing_reference, reference_path, server_version

    exe = reference_path()
    if exe is None:
        return f"reference redis-server: none (compat tests will skip): {missing_reference()}"
    return (f"reference redis-server: {server_version(exe)} at {exe} "
            f"(CI={os.environ.get('CI', '')})")
