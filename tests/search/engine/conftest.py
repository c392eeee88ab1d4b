"""Fixtures of the study loop's tests."""

import pytest

from storage import Store
from tests.search.fakes import MemoryStore


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    """The fake, and the real store: the loop's rules hold on both (the fake is faithful)."""
    if request.param == "memory":
        yield MemoryStore()
    else:
        with Store(f"sqlite:///{tmp_path / 'db.sqlite'}") as s:
            yield s
