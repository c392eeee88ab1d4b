"""Fixtures: one conformance suite run against every storage backend.

SQLite always; PostgreSQL when SEARCH_TEST_POSTGRES_URL is set (each test gets its own
schema through `search_path`, dropped afterwards, and a session time zone that is not
UTC). Without it, one test in test_open.py reports the PostgreSQL run as skipped
(instead of one skip per test), or fails in CI.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from storage import Store
from tests.storage.helpers import PG_ENV

PG_SESSION_TIMEZONE = "America/St_Johns"  # UTC-03:30 (or -02:30 in summer)


def _postgres_url() -> Iterator[str]:
    base = os.environ[PG_ENV]
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    schema = f"search_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    # A session time zone far from UTC, so that any naive/aware mix-up shows.
    url = make_url(base).update_query_dict({"options": f"-csearch_path={schema} -cTimeZone={PG_SESSION_TIMEZONE}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get(PG_ENV) else [])


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A URL to an empty database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'search.db'}"
    else:
        yield from _postgres_url()


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    with Store(url) as s:
        yield s


@pytest.fixture
def study(store: Store) -> str:
    """A maximising study named 's' with primary metric psnr."""
    store.create_or_load_study(
        "s",
        task="mnist-denoise",
        families=["hourglass"],
        metric="psnr",
        direction="maximize",
        budget=1_000_000,
        settings={"repeats": 2},
    )
    return "s"
