"""Process entry points for the concurrency tests (importable under spawn)."""
from __future__ import annotations


def add_trials(url: str, study: str, n: int) -> list[int]:
    from storage import Store

    with Store(url) as store:
        return [store.add_trial(study, family="f", config={"i": i}, params=1, seeds=[0])
                for i in range(n)]


def open_and_add(url: str, n: int) -> list[int]:
    """Open a possibly empty database (racing to create it), then add trials."""
    from storage import Store

    with Store(url) as store:
        store.create_or_load_study("race", task="t", families=["f"], metric="m",
                                   direction="maximize", budget=1)
        return [store.add_trial("race", family="f", config={}, params=1, seeds=[0])
                for _ in range(n)]
