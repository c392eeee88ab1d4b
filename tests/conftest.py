"""Fixtures shared by every test package."""
from __future__ import annotations

import pytest

from tasks.datasets import fetch


@pytest.fixture
def isolated_data(tmp_path, monkeypatch):
    """A fresh data cache (XDG_CACHE_HOME under tmp_path), no SEARCH_DATA_DIR, and no network:
    a test sees only the data it writes itself, and a download fails as offline."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv(fetch.ENV_DATA_DIR, raising=False)

    def no_network(url, dest, timeout=None):
        raise OSError("network disabled in tests")

    monkeypatch.setattr(fetch, "download", no_network)
