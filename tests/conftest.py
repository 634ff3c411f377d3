"""Suite-wide settings: markers and the `support` helpers on the import path."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "/compat/" in str(item.fspath):
            item.add_marker(pytest.mark.compat)


def pytest_report_header(config: pytest.Config) -> str:
    import shutil
    import subprocess

    exe = shutil.which("redis-server")
    if exe is None:
        return "reference redis-server: not installed (compat tests will skip)"
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    return f"reference redis-server: {version} (CI={os.environ.get('CI', '')})"
