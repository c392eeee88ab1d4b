"""`predict` as Python: each family's front read at budgets above the search's, and the
configuration to train there (reports/scaling.py, search/spaces/extrapolate.py). It returns
a frozen `Prediction` whose `to_dict()` is `search predict --format json` and whose
`frame()` is its `--format csv` table; the CLI only prints it.

Bad input raises `core.errors.UserError` with a one-line message (the CLI's exit 2); a
study that is not stored raises its subclass `StorageError`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import UserError
from search.api.readings import budget_text, families_in, opened

if TYPE_CHECKING:
    import pandas as pd

    from reports.scaling import ErrorScale, Race
    from reports.scaling import Prediction as FamilyPrediction
    from search.spaces.extrapolate import Proposal
    from storage import Store
    from storage.records import StudyRecord


@dataclass(frozen=True, eq=False)
class Prediction:
    """What `predict` found: per family the saturating power law error(N) = E + A * N^(-alpha)
    fitted to its front on the metric's error scale, or why a fit is not trusted
    (`families`, reports/scaling.py's per-family `Prediction`); per target its readings
    with bootstrap intervals and each family's chance to be best (`races`); and per family
    and target the configuration to train there (`proposals`). `to_dict()` is
    `search predict --format json`'s object, `frame()` its csv table. Compared by identity
    (it holds arrays)."""

    records: tuple[StudyRecord, ...]  # the studies read
    families: tuple[FamilyPrediction, ...]  # one per family: its law, readings at the targets, intervals, trust
    races: tuple[Race, ...]  # one per target: the leader, its margin and interval, each family's p(best)
    targets: tuple[int, ...]  # the budgets predicted at, ascending, all above `search_budget`
    proposals: dict[tuple[str, float], Proposal] = field(repr=False)  # (family, target) -> configuration
    metric: str
    direction: str  # "minimize" or "maximize"
    scale: ErrorScale  # the error scale the law is fitted on
    confidence: float  # the intervals' level
    search_budget: int  # the largest of the studies' budgets
    measure: str  # what the studies' sizes count: "params", or the task's own measure

    def proposal(self, family: str, target: float) -> Proposal:
        """The configuration to train for `family` at `target` (search/spaces/extrapolate.py)."""
        return self.proposals[(family, float(target))]

    def frame(self) -> pd.DataFrame:
        """One row per target and family: the predicted metric, its interval, the chance to
        be best, the law, why a fit is not trusted, and the configuration to train there
        (its JSON, exact size and notes) (`search predict --format csv`)."""
        from reports.scaling import predictions_frame

        frame = predictions_frame(list(self.families), list(self.races), list(self.targets), self.metric)
        got = [self.proposal(f, t) for f, t in zip(frame["family"], frame["budget"])]
        return frame.assign(
            config=[json.dumps(p.config) if p.config else "" for p in got],
            config_params=[p.count for p in got],
            config_notes=["; ".join(p.notes) for p in got],
        )

    def to_dict(self) -> dict[str, Any]:
        """`search predict --format json`'s object: the studies, metric, direction, error
        scale, confidence, search budget, law and measure; per family its law (E, A,
        alpha), front points, span and trust; per target each family's value, interval,
        chance to be best and configuration, with the leader, runner-up and margin (its
        interval). Non-finite numbers are None."""
        return {
            "studies": [r.name for r in self.records],
            "metric": self.metric,
            "direction": self.direction,
            "error_scale": self.scale.name,
            "confidence": self.confidence,
            "search_budget": self.search_budget,
            "law": "error(N) = E + A * N^(-alpha)",
            "measure": self.measure,
            "families": [
                {
                    "family": p.family,
                    "front_points": p.front_points,
                    "span": p.span,
                    "trust": p.trust,
                    "E": _num(p.law.E) if p.law else None,
                    "A": _num(p.law.A) if p.law else None,
                    "alpha": _num(p.law.alpha) if p.law else None,
                }
                for p in self.families
            ],
            "targets": [
                {
                    "budget": r.target,
                    "families": [
                        {
                            "family": p.family,
                            "value": _num(p.values[i]),
                            "low": _num(p.low[i]),
                            "high": _num(p.high[i]),
                            "p_best": _num(r.p_win.get(p.family)),
                            "configuration": _configuration(self.proposal(p.family, r.target)),
                        }
                        for p in self.families
                    ],
                    "leader": r.leader,
                    "runner_up": r.runner_up,
                    "margin": _num(r.margin),
                    "margin_low": _num(r.low),
                    "margin_high": _num(r.high),
                }
                for i, r in enumerate(self.races)
            ],
        }


def predict(
    store: Store | str | None,
    studies: Sequence[str],
    *,
    at: str | Sequence[float | str],
    families: Sequence[str] | None = None,
    confidence: float = 0.9,
) -> Prediction:
    """Each family's front read at budgets above the search's (`search predict`): a
    `Prediction`.

    The law error(N) = E + A * N^(-alpha) is fitted to each family's front on the metric's
    error scale and read at the targets; the `confidence` intervals are a bootstrap over
    the configurations and their seed noise, the law refitted in every draw. With each
    reading comes the configuration to train there: the front's shape trends read at the
    target, rounded into the family's space within it.

    `store`: a `storage.Store`, or a storage URL (None: $SEARCH_STORAGE or search.db)
    opened once the arguments are checked and closed before returning. `studies`: study
    names of one task and metric. `at`: the targets, a comma list ("1M,10M") or a list of
    numbers or strings, each above the studies' largest budget. `families`: those to read
    (default: every family of the studies; at least two).

    Raises UserError (one line) for a confidence outside (0, 1), no target, a bad target
    or one not above the search budget, a metric of no error scale, an unknown family,
    fewer than two families, studies of different tasks, or too few complete trials to fit
    any front; StorageError for a study that is not stored.
    """
    from core.budget import parse_targets
    from reports.combined import combined_frame
    from reports.scaling import ERROR_SCALES, error_scale, predict_study
    from search.spaces.extrapolate import study_proposals

    if not 0 < confidence < 1:
        raise UserError(f"--confidence must be between 0 and 1, got {confidence:g}")
    text = at if isinstance(at, str) else ",".join(budget_text(b) for b in at)
    if not any(b.strip() for b in text.split(",")):
        raise UserError("--at needs at least one budget")
    if isinstance(studies, str):
        studies = [studies]
    with opened(store) as st:
        records = [st.get_study(name) for name in studies]
        rec = records[0]
        try:
            scale = error_scale(rec.metric, rec.direction)
        except ValueError:
            raise UserError(
                f"cannot predict {rec.metric}: no error scale for it (known: loss-like minimised "
                f"metrics, {', '.join(ERROR_SCALES)})"
            ) from None
        budget = max(r.budget for r in records)
        targets = parse_targets(text, budget, "--at")
        df = combined_frame([(r, st.trials_frame(r.name)) for r in records])
    fams = families_in(df, families)
    if len(fams) < 2:
        raise UserError(
            f"predict compares families: {', '.join(r.name for r in records)} "
            f"{'has' if len(records) == 1 else 'have'} {len(fams)} ({', '.join(fams) or 'none'})"
        )
    preds, races = predict_study(df, rec.metric, rec.direction, targets, fams, confidence=confidence)
    if all(p.front_points < 3 for p in preds):
        raise UserError(
            "too few complete trials to fit any family's front (a fit needs 4 front points spanning "
            "a factor 10 in parameters)"
        )
    proposals = {(p.family, p.target): p for p in study_proposals(records, df, targets, fams)}
    return Prediction(
        tuple(records),
        tuple(preds),
        tuple(races),
        tuple(targets),
        proposals,
        rec.metric,
        rec.direction,
        scale,
        confidence,
        budget,
        (rec.settings or {}).get("budget_of") or "params",
    )


# -- shared ----------------------------------------------------------------------------------


def _num(x) -> Any:
    """A JSON number: None for None, NaN or infinity."""
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)


def _configuration(p: Proposal) -> dict[str, Any]:
    """A `Proposal` (search/spaces/extrapolate.py) as JSON: the config, its exact count."""
    return {
        "config": p.config,
        "params": p.count,
        "width_factor": _num(p.factor),
        "trends": {t.key: round(t.slope, 4) for t in p.trends if t.kind == "power"},
        "notes": list(p.notes),
    }
