"""`compare` as Python: which family wins at each budget within the search, with
intervals (verdicts/compare.py), and what the reading commands share (`resolve`,
`families_in`, `opened`; `predict` is search/api/predictions.py). `compare` returns a
frozen `Comparison` whose `to_dict()` is `search compare --format json` and whose
`frame()` is its `--format csv` table; the CLI only prints it.

Bad input raises `core.errors.UserError` with a one-line message (the CLI's exit 2);
a study that is not stored raises its subclass `StorageError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import StorageError, UserError
from core.limits import (
    DEFAULT_ESTIMATE,
    DEFAULT_FORM,
    DEFAULT_MIN_NEAR,
    DEFAULT_NOISE,
    ESTIMATES,
    INTERVAL_FORMS,
    NOISE_MODELS,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from reports.front_volumes import FrontDifference, FrontVolume
    from storage import Store
    from storage.records import StudyRecord
    from verdicts.compare import Verdict

INTERVALS = ("trials", "seed", "subsample")  # `compare`'s interval methods (verdicts/uncertainty.py's METHOD_TEXT)


# -- compare -------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Comparison:
    """What `compare` found: per budget, each family's best value within it with its
    interval and the verdict (`verdicts`, verdicts/compare.py's `Verdict`), and each
    family's front hypervolume with the two largest fronts' difference (not for pooled
    replicate searches). `to_dict()` is `search compare --format json`'s object, `frame()`
    its csv table. Compared by identity (it holds a frame and arrays)."""

    records: tuple[StudyRecord, ...]  # the studies compared (replicate searches: each one)
    trials: pd.DataFrame = field(repr=False)  # their trials, one frame (reports.combined.combined_frame)
    verdicts: tuple[Verdict, ...]  # one per budget, ascending
    volumes: tuple[FrontVolume, ...]  # each family's front hypervolume (empty when pooled)
    reference: np.ndarray | None = field(repr=False)  # the hypervolumes' reference point (log10 size, metric)
    difference: FrontDifference | None  # the two largest fronts' difference (None: fewer than two, or pooled)
    metric: str  # the trials frame's column compared on
    direction: str  # "minimize" or "maximize": the metric's
    interval: str  # what the intervals carry, in words (verdicts/uncertainty.py)
    pooled: bool  # the studies are replicate searches, pooled: each value a mean over them
    confidence: float  # the intervals' level
    measure: str  # what the studies' sizes count: "params", or the task's own measure
    method: str = ""  # the intervals' method in a few words (`interval` says it in full)

    @property
    def budgets(self) -> list[float]:
        """The budgets compared at, ascending."""
        return [v.budget for v in self.verdicts]

    def origin(self, number: int | None) -> tuple[str | None, int | None]:
        """(study, trial number) of a row of `trials` (a `FamilyAtLevel.number`); (None,
        None) for None (no model that small)."""
        if number is None:
            return None, None
        row = self.trials.iloc[int(number)]
        return str(row["study"]), int(row["trial"])

    def frame(self) -> pd.DataFrame:
        """One row per budget and family: the value, its interval, the trial (a row of
        `trials`), its size and runs, and the verdict on the winner's row
        (`search compare --format csv`)."""
        from reports.verdict_tables import verdicts_frame

        return verdicts_frame(list(self.verdicts), self.metric)

    def next_step(self) -> list[str]:
        """What `search compare` says after one study's undecided answers
        (verdicts/undecided.py `next_step`): about what deciding each undecided budget would
        take and the `search run --decide` that searches on for it. Empty for pooled
        replicate searches or several studies read apart (`--decide` searches one study
        on), and when nothing is left."""
        from verdicts.undecided import next_step

        if self.pooled or len(self.records) != 1:
            return []
        return next_step(self.verdicts, most=float(self.records[0].budget))

    def to_dict(self) -> dict[str, Any]:
        """`search compare --format json`'s object: the studies, task, metric, direction,
        confidence and interval text; per budget ("levels") each family's value, interval,
        study, trial, size, config, runs and why it is too thin to read, with the winner,
        the margin and its interval, the status and the verdict; the front hypervolumes,
        their reference and the two largest fronts' difference; the next step where a budget
        is undecided (`next_step`)."""
        levels = []
        for v in self.verdicts:
            fams = []
            for r in v.families:
                study, trial = self.origin(r.number)
                fams.append(
                    {
                        "family": r.family,
                        "value": r.value,
                        "best": r.best,
                        "low": r.low,
                        "high": r.high,
                        "study": study,
                        "trial": trial,
                        "params": r.params,
                        "config": r.config,
                        "runs": r.runs,
                        "searches": r.searches,
                        "thin": None
                        if r.thin is None
                        else {
                            "kind": r.thin.kind,
                            "near": r.thin.near,
                            "needed": r.thin.needed,
                            "more_trials": r.thin.more_trials,
                            "window": [r.thin.low, r.thin.budget],
                            "untried": [dict(u) for u in r.thin.untried],
                        },
                    }
                )
            levels.append(
                {
                    "budget": v.budget,
                    "families": fams,
                    "winner": v.winner,
                    "runner_up": v.runner_up,
                    "margin": v.margin,
                    "margin_low": v.margin_low,
                    "margin_high": v.margin_high,
                    "status": v.status,
                    "equivalence": v.equivalence,
                    "verdict": v.text,
                }
            )
        d = self.difference
        return {
            "studies": [r.name for r in self.records],
            "task": self.records[0].task,
            "metric": self.metric,
            "direction": self.direction,
            "confidence": self.confidence,
            "interval": self.interval,
            "levels": levels,
            "fronts": [
                {"family": f.family, "hypervolume": f.value, "low": f.low, "high": f.high} for f in self.volumes
            ],
            "hypervolume_reference": None if self.reference is None else [float(x) for x in self.reference],
            "front_difference": None
            if d is None
            else {"first": d.first, "second": d.second, "difference": d.difference, "low": d.low, "high": d.high},
            "next_step": self.next_step(),
        }


def compare(
    store: Store | str | None,
    studies: Sequence[str],
    *,
    families: Sequence[str] | None = None,
    metric: str | None = None,
    budgets: Sequence[float | str] | None = None,
    levels: int | None = None,
    confidence: float = 0.95,
    interval: str = "trials",
    min_near: int = DEFAULT_MIN_NEAR,
    replicates: bool = False,
    margin: float | None = None,
    noise: str = DEFAULT_NOISE,
    estimate: str = DEFAULT_ESTIMATE,
    resample_corners: bool = False,
    form: str = DEFAULT_FORM,
    untried: bool = False,
) -> Comparison:
    """Which family wins at each budget, with intervals (`search compare`): a `Comparison`.

    `store`: a `storage.Store`, or a storage URL (None: $SEARCH_STORAGE or search.db)
    opened once the arguments are checked and closed before returning. `studies`: study
    names of one task; a name that is no study but the name of replicate searches
    (`search run --search-repeats`) stands for all of them, and they are pooled, as they
    are with `replicates=True`: each value is then the mean over the searches, with the
    Student t interval of that mean (and no front hypervolumes).

    `families`: those to compare (default: every family of the studies). `metric`: a
    metric of the trials, compared in its own direction (default: the searched one).
    `budgets` (numbers, or strings such as "100K"), else `levels` log-spaced budgets from
    the smallest to the largest model (default 5). `confidence`: the intervals' level;
    `interval`: what they carry, "trials" (bootstrap over which configurations a search
    finds and over seed noise) or "seed" (seed noise of the configurations found only).
    `min_near`: configurations a family needs within a factor 3 below a budget, else it is
    "too thin to tell" there (0: never). `margin` D (in the metric's units): a budget whose
    difference's interval lies inside (-D, D) is answered "equivalent within ±D". `noise`:
    a configuration's seed noise, "pooled" (its family's, pooled over every configuration
    run twice or more, seed checks included), "near" (pooled over the three such
    configurations that scored nearest it), "own" (its own runs' std only) or "trend" (read
    at its mean from how every family's checked configurations' noise changes with the mean). `estimate`:
    how a family's value at a budget is read, "best" (its best configuration within the
    budget) or "fit" (the local linear fit of its front against log parameters,
    verdicts/front_fit.py); the trial shown is the best within the budget either way.
    Where every study trained each family's smallest model by design (its corners,
    verdicts/candidates.py `smallest_by_design`), the "trials" bootstrap keeps that model's
    configurations in every resample; `resample_corners` resamples them like the others.
    `form`: how an interval is read off the bootstrap draws, "percentile" (their
    percentiles, made symmetric about the estimate for "trials") or "normal" (the estimate
    ± z times their standard deviation: verdicts/uncertainty.py `interval`). `untried`: a
    family is also "too thin" at a budget where a training setting (learning rate) of its
    front configurations was never tried within a factor 3 below it (verdicts/thin.py
    `untried_at`). `form` and `untried` apply to one search's verdicts; pooled replicate
    searches keep the t interval of their mean.

    Raises UserError (one line) for bad arguments (levels < 1, confidence outside (0, 1),
    min_near < 0, margin <= 0, an unknown interval, form, noise or estimate, a bad budget,
    budgets and levels both given), an unknown family or metric, studies of different tasks, fewer than two replicate
    searches, or no complete trial; StorageError for a study that is not stored.
    """
    from core.budget import parse_budget
    from core.limits import DEFAULT_LEVELS
    from reports.combined import combined_frame
    from reports.front_volumes import front_difference, front_volumes
    from verdicts.candidates import candidates, default_levels, smallest_by_design, with_noise
    from verdicts.compare import compare_at, compare_replicates
    from verdicts.uncertainty import (
        ESTIMATE_TEXT,
        FIXED_TEXT,
        FORM_TEXT,
        METHOD_TEXT,
        NOISE_TEXT,
        POOLED_SHORT,
        POOLED_TEXT,
        SHORT_TEXT,
        UNTRIED_TEXT,
    )

    if budgets is not None and levels is not None:
        raise UserError("give budgets or levels, not both")
    if levels is not None and levels < 1:
        raise UserError("--levels must be at least 1")
    if not 0 < confidence < 1:
        raise UserError(f"--confidence must be between 0 and 1, got {confidence:g}")
    if min_near < 0:
        raise UserError(f"--min-near must be at least 0, got {min_near}")
    if margin is not None and not (
        isinstance(margin, (int, float)) and not isinstance(margin, bool) and 0 < margin < float("inf")
    ):
        raise UserError(f"--margin must be a difference above 0 in the metric's units, got {margin!r}")
    if interval not in INTERVALS:
        raise UserError(f"unknown interval {interval!r}; known: {', '.join(INTERVALS)}")
    if form not in INTERVAL_FORMS:
        raise UserError(f"unknown interval form {form!r}; known: {', '.join(INTERVAL_FORMS)}")
    if noise not in NOISE_MODELS:
        raise UserError(f"unknown noise {noise!r}; known: {', '.join(NOISE_MODELS)}")
    if estimate not in ESTIMATES:
        raise UserError(f"unknown estimate {estimate!r}; known: {', '.join(ESTIMATES)}")
    if isinstance(studies, str):
        studies = [studies]
    wanted = [parse_budget(budget_text(b)) for b in budgets] if budgets is not None else None
    with opened(store) as st:
        records, grouped = resolve(st, list(studies))
        pooled = replicates or grouped
        if pooled and len(records) < 2:
            raise UserError(f"replicate searches need at least two studies, got {len(records)}")
        df = combined_frame([(rec, st.trials_frame(rec.name)) for rec in records], label_shared=not pooled)
    fams = families_in(df, families)
    rec = records[0]
    metric, direction = chosen_metric(rec, df, metric)
    fixed = not resample_corners and all(smallest_by_design(r.settings) for r in records)
    cands = candidates(df, metric, fams, smallest_fixed=fixed)  # every search's trials, for the levels
    at = wanted or default_levels(cands, levels or DEFAULT_LEVELS)
    if not at:
        raise UserError("these studies have no complete trial yet: nothing to compare")
    at = [float(b) for b in at]
    if pooled:
        reps = [candidates(df[df["study"] == r.name], metric, fams, smallest_fixed=fixed) for r in records]
        verdicts = compare_replicates(
            reps, at, direction, confidence=confidence, min_near=min_near, equivalence=margin, estimate=estimate
        )
        volumes, reference, difference = [], None, None
        text = f"{POOLED_TEXT} ({len(records)} searches){ESTIMATE_TEXT[estimate]}"
    else:
        verdicts = compare_at(
            cands,
            at,
            direction,
            confidence=confidence,
            method=interval,
            min_near=min_near,
            equivalence=margin,
            noise=noise,
            estimate=estimate,
            form=form,
            untried=untried,
        )
        volumes, reference = front_volumes(with_noise(cands, noise), direction, confidence=confidence, method=interval)
        difference = front_difference(volumes, confidence=confidence)
        kept = FIXED_TEXT if fixed and interval in ("trials", "subsample") else ""
        text = METHOD_TEXT[interval] + kept + NOISE_TEXT[noise] + ESTIMATE_TEXT[estimate] + FORM_TEXT[form]
        text += UNTRIED_TEXT if untried else ""
    return Comparison(
        tuple(records),
        df,
        tuple(verdicts),
        tuple(volumes),
        reference,
        difference,
        metric,
        direction,
        text,
        pooled,
        confidence,
        (rec.settings or {}).get("budget_of", "params"),
        f"{POOLED_SHORT} ({len(records)} searches)" if pooled else SHORT_TEXT[interval],
    )


def resolve(store: Store, names: Sequence[str]) -> tuple[list[StudyRecord], bool]:
    """The study records of `names`; a name that is no study but the name of replicate
    searches (`search run --search-repeats`) stands for them all. True when the names
    were replicate searches. StorageError for a name that is neither."""
    records, grouped = [], False
    for name in names:
        try:
            records.append(store.get_study(name))
            continue
        except StorageError:
            group = [
                r
                for r in (store.get_study(s.name) for s in store.list_studies() if s.name.startswith(f"{name}-r"))
                if (r.settings or {}).get("replicate_of") == name
            ]
            if not group:
                raise
        records.extend(sorted(group, key=lambda r: r.settings.get("replicate", 0)))
        grouped = True
    return records, grouped


def chosen_metric(rec: StudyRecord, df: pd.DataFrame, name: str | None) -> tuple[str, str]:
    """(metric, direction) to compare on: the studies' searched metric and direction, or
    `name`, a metric their trials hold (`storage.frames.metric_columns`), with its
    direction from `core.directions.METRIC_DIRECTIONS`. UserError for a metric the trials
    lack or one of no known direction."""
    from core.directions import metric_direction
    from storage.frames import metric_column, metric_columns

    if name is None or name == rec.metric:
        return rec.metric, rec.direction
    have = metric_columns(df)
    if metric_column(name) not in have:
        raise UserError(f"no metric {name!r} in these studies; they have {', '.join(have) or 'none yet'}")
    direction = metric_direction(name)
    if direction is None:
        raise UserError(f"metric {name!r} has no known direction (core/directions.py: METRIC_DIRECTIONS)")
    return metric_column(name), direction


# -- predict -------------------------------------------------------------------------------


def families_in(df: pd.DataFrame, families: Sequence[str] | None) -> list[str]:
    """The families asked for (default: every family of the trials frame); UserError
    naming those it lacks."""
    known = sorted(set(df["family"].astype(str))) if len(df) else []
    fams = known if families is None else [families] if isinstance(families, str) else list(families)
    missing = [f for f in fams if f not in known]
    if missing:
        raise UserError(f"no family {', '.join(missing)} in these studies; they have {', '.join(known) or 'none'}")
    return fams


def budget_text(b: float | str) -> str:
    """A budget for `core.budget.parse_budget`: a string as given, a number in full."""
    return b if isinstance(b, str) else f"{float(b):.0f}"


class opened:
    """A context giving a store: the one given, or one opened from a URL (closed on exit)."""

    def __init__(self, store: Store | str | None) -> None:
        self.given, self.own = store, None

    def __enter__(self) -> Store:
        if self.given is None or isinstance(self.given, str):
            from storage import Store

            self.own = Store(self.given)
            return self.own
        return self.given

    def __exit__(self, *exc) -> None:
        if self.own is not None:
            self.own.close()
