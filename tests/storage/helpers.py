"""Builders of search.engine.specs results for the storage tests."""

from __future__ import annotations

from core.trials import EpochRecord, RunResult, TrialResult

PG_ENV = "SEARCH_TEST_POSTGRES_URL"


def make_run(
    seed: int, metrics: dict[str, float], *, n_epochs: int = 3, status: str = "complete", loss: float = 0.5
) -> RunResult:
    epochs = [
        EpochRecord(epoch=e, train_loss=loss / e, metrics={"val_psnr": 10.0 + e + seed}, elapsed_s=0.1 * e)
        for e in range(1, n_epochs + 1)
    ]
    return RunResult(
        seed=seed,
        status=status,
        metrics=metrics,  # type: ignore[arg-type]
        best_epoch=n_epochs if n_epochs else None,
        epochs=epochs,
        duration_s=1.0 + seed,
    )


def make_result(
    number: int, runs: list[RunResult], *, status: str = "complete", error: str | None = None
) -> TrialResult:
    return TrialResult(
        number=number,
        status=status,
        runs=runs,  # type: ignore[arg-type]
        duration_s=sum(r.duration_s for r in runs),
        device="cpu",
        error=error,
        traceback="Traceback: ..." if error else None,
    )
