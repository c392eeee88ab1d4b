"""How an Optuna proposer (search/engine/sampling/: `OptunaSampler`) places a study's
trials: the names and defaults of its two policies. They live here, apart from the
proposer, so that the spec, the sampler registry and the CLI can check a name without
importing Optuna, and so that the samplers need nothing from the registry that builds
them.

- spread (`--spread`): "size" draws a target size first and aims the configuration at it
  (the accepted models spread over the parameter axis); "none" does not.
- share (`--share`): "equal" gives the families of a multi-family study turns (each
  family's front is a result of its own); "free" lets the sampler choose the family like
  any other parameter; "uncertain" (issue 25 item 2) gives the next trial to the family
  whose front is still moving: the one whose last trials most often joined its front
  (`uncertain_turn`), with equal turns until each family has a few finished trials and a
  floor of half an equal share for every family.
- scope (`--sampler-scope`), with several families: "study" runs one Optuna study whose
  `family` is a parameter, so the sampler ranks every trial against every family's
  (multi-objective TPE's "good" trials are the study's best, and a family the other
  dominates is drawn as if at random); "family" runs one Optuna study per family under
  the turns, so each family's sampler ranks and models its own trials only. It needs
  turns (`--share equal` or `uncertain`): with "free" the sampler chooses the family.
- corners (`--corners`), with `--spread size`: what a new study visits first, before
  the sampler draws. "both" (the default): each family's smallest model, then a model
  at the budget; "smallest": the smallest models only; "none": neither. The budget corner
  is the slowest trial a search can train, and on classification it tops no front: there
  "none" finds a better front with less training; but without the corners `search
  compare` says "too thin to tell" far more often and its A/A rate falls below 95%, so
  the default keeps both (docs/benchmarks.md §19, "`--corners`: the option").
  "last": the smallest models first and each family's model at the budget last (the
  study's last trials, one per family, trained to the end whatever the pruner says), so
  the verdicts still have the size axis' ends but the search does not pay for the slowest
  trials before it knows where the front is.
- start (`--start`), with `--spread size`: the target sizes of a family's random start
  (the sampler's first trials, `startup_trials` of its share, before any model guides it).
  "spread" (the default): drawn log-uniformly over the family's whole size range, from
  its smallest model to the budget, as every later target is; "ramp": the k-th of n
  drawn log-uniformly under a cap that rises from the smallest model to the budget,
  log10 target ~ U[lo, lo + (hi - lo) (k + 1) / n] (`ramp_target`), so the first trials
  are small and cheap: with the hypervolume on a log-parameter axis most of a front lies
  at its small end (docs/benchmarks.md §19, "A cheap start").
- revisit (`--revisit`), with an Optuna sampler: what a proposal of a configuration
  the study has already trained to the end or stopped (pruned) gets. Seeds follow from
  the configuration (search.engine.study.run_seeds), so training it again recomputes the
  stored curve exactly. "answer" (the default): the sampler is told what it was told of
  the first and proposes again (after RANDOM_AFTER_REVISITS answers in a row at a target
  size drawn at random), so a study's trials are different models; "train": it is
  trained again, as the sampler proposed it (the behaviour before 2026-11-27). A GP told
  (target size, learning rate) proposes the bottom of the size axis again and again, and
  every target below the second smallest model gives the smallest: with "train" up to
  half a study's trials were copies (docs/benchmarks.md §19, "Repeated configurations",
  "Answering revisits").
- size scale (`--size-scale`): how an Optuna sampler is told a trial's parameter count,
  its first objective: "log" (the default) as log10 of it, the axis on which the pages
  draw the fronts and the efficiency benchmark measures their hypervolume; "linear" as
  counted. Non-dominated sorting (TPE's split, NSGA-II's ranks) sees the same order
  either way, their tie-breaks by hypervolume or crowding do not, and a GP's hypervolume
  improvement does not: on a linear axis every model far below the budget looks the same
  size (docs/benchmarks.md §19, "The compute target with hindsight").
- shape draw (`--shape-draw`), with an Optuna sampler: how a family's widths and depth
  are drawn. "random": each as an Optuna parameter over the range it may take; under a
  target size that range moves with the target and with the dims drawn before it, so its
  distribution differs from trial to trial, and Optuna's GPSampler, which models only the
  parameters every trial of its study shares, models the target size and the choices
  (learning rate) only and draws the shape at random within the size. "modelled": each
  as its position (0 to 1) in that range (search.engine.sampling.optuna_draw.PositionDraw), whose
  distribution never moves, so the sampler models the shape too, as Ax's GP does (docs/
  benchmarks.md §19, "Modelling the shape").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.limits import CORNER_SIZES

SPREADS = ("size", "none")
DEFAULT_SPREAD = "size"
SHARES = ("equal", "free", "uncertain")
DEFAULT_SHARE = "equal"
SCOPES = ("study", "family")
DEFAULT_SCOPE = "study"
# the corners a new study visits first, in order: the smallest model and one at the budget
# (core/limits.py CORNER_SIZES: the sizes each option visits)
CORNERS = tuple(CORNER_SIZES)
LAST_CORNERS = ("last",)  # corners whose budget models are the study's last trials
REVISITS = ("answer", "train")  # what a proposal of a configuration already trained (or pruned) gets
# "answer" since 2026-11-27: at 40 trials level or ahead on five settings
# in median and worst seed (super-resolution 0.963, worst 0.938, against 0.948 and 0.922;
# 10 seeds), level at equal training, and §16's verdicts the same as the default's once its
# recomputed copies are counted once (docs/benchmarks.md §19, "Answering revisits")
DEFAULT_REVISIT = "answer"
RANDOM_AFTER_REVISITS = 2  # answered revisits in a row after which the next target size is drawn at random
MAX_REVISITS = 10  # answered revisits in a row after which the next is trained after all
STARTS = ("spread", "ramp")  # the target sizes of a family's random start
DEFAULT_START = "spread"
DEFAULT_CORNERS = "both"
SIZE_SCALES = ("linear", "log")  # the parameter count as the sampler's first objective: as is, or log10
# log since 2026-11-27: level or ahead of linear on four settings in median and worst seed,
# the verdicts still calibrated (docs/benchmarks.md §19, "The compute target with hindsight")
DEFAULT_SIZE_SCALE = "log"
# how an Optuna proposer draws a family's widths and depth: as parameters over the range
# each may take ("random": under a target size the range moves with it, and Optuna's GP
# leaves such parameters to its random draw), or as positions in that range ("modelled")
SHAPE_DRAWS = ("random", "modelled")
DEFAULT_SHAPE_DRAW = "random"  # an OptunaSampler's own default; a study's is `shape_draw_for`'s
# The default of a study (`shape_draw_for`): "modelled" for a `gp` study of several
# families at any trial count (since 2026-11-27), or of one family given at
# least MODELLED_FROM trials (since 2026-11-27). One family at 40 trials: ahead in median and
# worst seed on every setting measured (hourglass denoising 0.991, worst 0.985, against 0.983
# and 0.976; super-resolution), and two families at 80. Several families at 20 trials a family
# (three settings, 10-20 seeds): each family's front better, the worst family's ahead in
# median and worst seed on all three, the union front level or ahead in median, and §16's
# verdicts at 12 trials a family calibrated on both settings (32 replicates) where the random
# draw under-searched one family and misstated the gap; one family at 20 trials stays "random"
# (20 seeds: +0.006 in median but a worse worst seed). docs/benchmarks.md §19, "Modelling the
# shape" and "Below 40 trials a family".
MODELLED_FROM = 40
# Samplers that model a study's shared parameters only: Optuna's GPSampler models only
# the parameters every trial of its study has, which in one multi-family study is `family`
# alone (it is then random search, docs/benchmarks.md §19). With turns they get a study per
# family (scope "family"), which models each; without turns (share "free") they are not
# the default (`sampler_for`).
FAMILY_SCOPED = ("gp", "gp-cond", "auto", "auto-cond")
# The default sampler: `gp`, one Gaussian process per family under the turns. Measured
# against `tpe` in one study (docs/benchmarks.md §14 "One sampler per family", 5 seeds):
# ahead or tied on five settings in median and ahead on every setting's worst seed; §16's
# verdicts hold on its searches. FREE_SHARE_SAMPLER where the default would be blind.
DEFAULT_SAMPLER = "gp"
# Samplers that model only the parameters every trial shares (Optuna's GPSampler draws the
# others at random, silently): a conditional space goes to the sampler CONDITIONAL_SAMPLERS
# names instead, said in the search's first lines (search/engine/prepare.py
# `route_sampler`): the GP over the shared keys with TPE drawing the conditional ones, which
# measured ahead of "tpe-group" (TPE over groups of trials sharing a space) on the
# conditional synthetic family (benchmarks/search_quality/plugin_quality.py;
# docs/results/search-quality.md).
CONDITIONAL_SAMPLERS = {"gp": "gp-cond", "auto": "auto-cond"}
# A space with free ranges (a learning rate, a dropout as ranges) draws its shape "random"
# by default: measured on the synthetic funnel family (benchmarks/search_quality/plugin_quality.py, 10 seeds,
# 40 trials): 0.987 (worst 0.985) against "modelled"'s 0.977 (0.950) and plain Optuna GP's
# 0.980 (0.973); docs/results/search-quality.md.
FREE_RANGES_DRAW_WHY = "measured ahead of positions where free ranges share the GP"
FREE_SHARE_SAMPLER = "tpe"
# `--seed-checks`: the share of a one-seed search's training time spent after its trials on a
# second seed of front configurations, so that its verdicts get intervals
# (search/engine/seed_checks.py; measured in docs/benchmarks.md §23). 0: none.
DEFAULT_SEED_CHECKS = 0.2
# `--seed-check-order`: which front configurations the checks take first. "cheapest": the
# front cheapest first (the most checks, so the most degrees of freedom for the pooled noise,
# for the time); "budgets": first the configuration that holds each family's value at each
# budget `search compare` reads by default, then the rest cheapest first (the noise of the
# configurations that decide the verdicts, measured on them). Measured: docs/benchmarks.md §29.
CHECK_ORDERS = ("cheapest", "budgets")
DEFAULT_CHECK_ORDER = "cheapest"


@dataclass(frozen=True)
class SamplerSettings:
    """How an Optuna proposer searches (`search run`'s flags of the same names), declared
    once: the study loop, the sampler registry and `OptunaSampler` take this object. Each
    value is one of its option tuple's (SPREADS, SHARES, SCOPES, CORNERS, SIZE_SCALES,
    STARTS, REVISITS, SHAPE_DRAWS); the grid ignores them."""

    spread: str = DEFAULT_SPREAD
    share: str = DEFAULT_SHARE
    scope: str = DEFAULT_SCOPE
    corners: str = DEFAULT_CORNERS
    size_scale: str = DEFAULT_SIZE_SCALE
    start: str = DEFAULT_START
    revisit: str = DEFAULT_REVISIT
    shape_draw: str = DEFAULT_SHAPE_DRAW

    def __post_init__(self) -> None:
        allowed = {
            "spread": SPREADS,
            "share": SHARES,
            "scope": SCOPES,
            "corners": CORNERS,
            "size_scale": SIZE_SCALES,
            "start": STARTS,
            "revisit": REVISITS,
            "shape_draw": SHAPE_DRAWS,
        }
        for name, options in allowed.items():
            if getattr(self, name) not in options:
                raise ValueError(f"{name} must be one of {', '.join(options)}, got {getattr(self, name)!r}")


def size_objective(params: float, scale: str) -> float:
    """A trial's parameter count as its sampler is told it on `scale` (SIZE_SCALES)."""
    return math.log10(max(1.0, float(params))) if scale == "log" else float(params)


def startup_trials(trials: int) -> int:
    """The random start of an Optuna sampler built for `trials` trials (tpe's and gp's
    `n_startup_trials`): a quarter of them, at least 4 and at most 10."""
    return min(10, max(4, trials // 4))


def ramp_target(low: float, high: float, k: int, n: int, u: float) -> float:
    """The k-th (0-based) of a ramped start's n target sizes, on the log10 axis: `low` +
    (`high` - `low`) x `u` x min(1, (k + 1) / n), `u` uniform in [0, 1) (`--start ramp`)."""
    if n < 1 or k < 0 or not 0.0 <= u <= 1.0 or high < low:
        raise ValueError(f"need n >= 1, k >= 0, 0 <= u <= 1 and high >= low, got n={n}, k={k}, u={u}, {low}..{high}")
    return low + (high - low) * u * min(1.0, (k + 1) / n)


def shape_draw_for(shape_draw: str | None, sampler: str, trials: int, families: int) -> str:
    """A study's shape draw (SHAPE_DRAWS): `shape_draw` as given, else "modelled" for a
    FAMILY_SCOPED sampler (the GP) in a study of several `families` (a comparison, whose
    answer needs each family's front found alike), or of one family given at least
    MODELLED_FROM of the study's `trials`; "random" otherwise."""
    if shape_draw is not None:
        return shape_draw
    if sampler not in FAMILY_SCOPED:
        return "random"
    return "modelled" if families > 1 or trials >= MODELLED_FROM else "random"


def has_turns(share: str) -> bool:
    """Whether the families of a study take turns under `share` ("equal", "uncertain"); with
    "free" the sampler draws the family, so all families need the one study."""
    return share != "free"


def sampler_for(sampler: str | None, share: str, families: int) -> str:
    """A study's sampler: `sampler` as given, else DEFAULT_SAMPLER, unless several families
    share one study without turns and it is FAMILY_SCOPED (FREE_SHARE_SAMPLER then)."""
    if sampler is not None:
        return sampler
    blind = families > 1 and DEFAULT_SAMPLER in FAMILY_SCOPED and not has_turns(share)
    return FREE_SHARE_SAMPLER if blind else DEFAULT_SAMPLER


def scope_for(sampler: str, share: str, scope: str | None) -> str:
    """The sampler scope of a study: `scope` as given, else "family" for a FAMILY_SCOPED
    sampler under turns and "study" otherwise (with share "free" the sampler draws the
    family, so it needs the one study)."""
    if scope:
        return scope
    return "family" if sampler in FAMILY_SCOPED and has_turns(share) else DEFAULT_SCOPE


UNCERTAIN_WINDOW = 4  # a family's last finished trials that say whether its front still moves


def uncertain_turn(turns: dict[str, int], hits: dict[str, list[bool]], window: int = UNCERTAIN_WINDOW) -> str:
    """The family to propose next under share "uncertain".

    turns: family -> trials proposed so far (in `--space` order); hits: family -> for each
    of its finished trials in order, whether it joined the family's front when it finished
    (a failed or pruned trial never does). A family below half an equal share of the
    proposals goes first (the one with fewest turns); so does every family while any has
    fewer than `window` finished trials (equal turns to start). Then the family with the
    most front hits among its last `window` finished trials goes; ties go to the family
    with fewer turns, then to the first in `--space` order."""
    families = list(turns)
    fewest = min(families, key=turns.__getitem__)
    floor = sum(turns.values()) / (2 * len(families))
    if turns[fewest] < floor or any(len(hits.get(f, ())) < window for f in families):
        return fewest
    rate = {f: sum(hits[f][-window:]) for f in families}
    return max(families, key=lambda f: (rate[f], -turns[f], -families.index(f)))


# What a search setting (keyed as search/engine/search_flags.py FLAGS) needs to mean
# something: one table for `search run`'s summary line (search_flags.applies) and its
# refusals (search/engine/specs.py RunSpec), via `unmet_need`.
SEVERAL_FAMILIES = ("scope", "share")  # say something only in a study of several families
MODEL_SAMPLERS_ONLY = ("spread", "size_scale", "shape_draw", "corners", "start", "revisit")  # not for the grid
SPREAD_SIZE_ONLY = ("corners", "start")  # need --spread size


def unmet_need(key: str, sampler: str | None, spread: str | None, families: int) -> str | None:
    """What the setting `key` lacks in a study of `families` families searched by `sampler`
    with `spread`: "families" (it needs several), "grid" (it needs an Optuna sampler), "spread"
    (it needs --spread size), or None when nothing is missing."""
    if key in SEVERAL_FAMILIES and families < 2:
        return "families"
    if key in MODEL_SAMPLERS_ONLY and sampler == "grid":
        return "grid"
    if key in SPREAD_SIZE_ONLY and spread != "size":
        return "spread"
    return None
