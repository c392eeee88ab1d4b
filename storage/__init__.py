"""Storage of studies and trials: `Store` is the one interface the app uses.

from storage import load_trials
df = load_trials("my-study")            # SEARCH_STORAGE or ./search.db
df = load_trials("my-study", "runs.db")  # a SQLite file, or any SQLAlchemy URL
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storage.store import Store, default_url

if TYPE_CHECKING:
    import pandas as pd


def load_trials(study: str, url: str | None = None) -> pd.DataFrame:
    """The trials of `study` as a DataFrame (columns: see `storage.frames`)."""
    with Store(url) as store:
        return store.trials_frame(study)


__all__ = ["Store", "default_url", "load_trials"]
