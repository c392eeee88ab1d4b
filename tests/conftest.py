"""Fixtures shared by every test package."""

from __future__ import annotations

import pytest
import torch

from tasks.datasets import fetch


def pytest_collection_modifyitems(config, items):
    """Tests marked `cuda` skip, with the reason, where torch sees no CUDA GPU."""
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (torch.cuda.is_available() is false)")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def trials_in_this_process(monkeypatch):
    """The suite's searches run their trials in the test's own process ($SEARCH_WORKERS=1,
    `--workers`' default): a tiny search would spend more on starting worker processes than
    on its trials, and many tests replace functions in this process. The worker processes
    are tested where a test asks for them (tests/search/executors/test_workers.py)."""
    monkeypatch.setenv("SEARCH_WORKERS", "1")


@pytest.fixture
def isolated_data(tmp_path, monkeypatch):
    """A fresh data cache (XDG_CACHE_HOME under tmp_path), no SEARCH_DATA_DIR, and no network:
    a test sees only the data it writes itself, and a download fails as offline."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv(fetch.ENV_DATA_DIR, raising=False)

    def no_network(url, dest, timeout=None):
        raise OSError("network disabled in tests")

    monkeypatch.setattr(fetch, "download", no_network)
