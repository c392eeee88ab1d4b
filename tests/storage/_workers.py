"""Process entry points for the concurrency tests (importable under spawn)."""

from __future__ import annotations


def add_trials(url: str, study: str, n: int) -> list[int]:
    from storage import Store

    with Store(url) as store:
        return [store.add_trial(study, family="f", config={"i": i}, params=1, seeds=[0]) for i in range(n)]


def open_and_add(url: str, n: int) -> list[int]:
    """Open a possibly empty database (racing to create it), then add trials."""
    from storage import Store

    with Store(url) as store:
        store.create_or_load_study("race", task="t", families=["f"], metric="m", direction="maximize", budget=1)
        return [store.add_trial("race", family="f", config={}, params=1, seeds=[0]) for _ in range(n)]


def add_and_finish(url: str, study: str, n: int, tag: str, barrier, queue) -> None:  # type: ignore[no-untyped-def]
    """Wait for the other workers, then add and finish `n` trials; put (tag, numbers)."""
    from storage import Store
    from tests.storage.helpers import make_result, make_run

    try:
        with Store(url) as store:
            barrier.wait(timeout=120)
            got = []
            for i in range(n):
                number = store.add_trial(
                    study, family="f", config={"worker": tag, "i": i}, params=1, seeds=[0], owner=tag
                )
                store.finish_trial(study, number, make_result(number, [make_run(0, {"psnr": float(i)}, n_epochs=2)]))
                got.append(number)
        queue.put((tag, got))
    except BaseException as exc:  # report it instead of hanging the test
        queue.put((tag, f"{type(exc).__name__}: {exc}"))
        raise
