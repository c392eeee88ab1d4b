"""Do `search compare`'s verdicts survive a second search? (issue 35)

Runs the same question several times, the search seed the only difference (replicate
searches), and reads every replicate with each interval method of verdicts/uncertainty.py
at a few budgets. It reports, per setting and method:

- contradict: the share of replicate pairs x budgets whose confident verdicts name
  different winners (target: none);
- disjoint: the share of pairs x budgets, both with an interval, whose intervals of the
  difference do not overlap (target <= 10%);
- coverage: the share of single-search intervals of the difference that hold the pooled
  answer, the mean over the replicates of each one's difference (target 85-98%);
- power_real: where the pooled difference's own t interval (over the replicates) excludes 0,
  the share of single searches that decide it in the right direction (issue 61: >= 50%);
- power_real_ideal: what an exactly calibrated interval of one search would decide there
  (`ideal_power`: the half-width z times the spread between searches, about the truth);
- power: where the pooled difference is clear (beyond three times its spread between
  replicates), the share of replicates that call the right winner (target >= 80%);
- A/A: one family of replicate s against the same family of replicate t, as if two
  families: the share of pairs x budgets answered "not distinguishable" or "too thin"
  (target >= 95%);
- thin: the share of (replicate, budget) answers that are "too thin to tell".

    python -m benchmarks.verdicts.verdict_calibration --dir /tmp/cal            # run what is missing, then read
    python -m benchmarks.verdicts.verdict_calibration --dir /tmp/cal --no-run   # read only
    python -m benchmarks.verdicts.verdict_calibration --dir /tmp/cal --settings sr --json out.json
    python -m benchmarks.verdicts.verdict_calibration --dir /tmp/cal-gp --search-flags="--sampler gp"   # another search
    python -m benchmarks.verdicts.verdict_calibration --dir /tmp/cal --no-run --export reps.json  # keep the replicates
    python -m benchmarks.verdicts.verdict_calibration --frames reps.json --methods default  # read them again

Every search is `search run` with its setting's trials and repeats (24 and 3; the
quickstart setting qs 40 and 1, with the default seed checks) and `--no-report`, one thread, in
`DIR/NAME.db` as study NAME-SEED; a study already complete is not run again.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from verdicts.uncertainty import DEFAULT_WINDOW

REPO = Path(__file__).resolve().parents[2]

FIRST_SEED = 11  # every setting's replicate searches are seeds 11, 12, ...


@dataclass(frozen=True)
class Setting:
    name: str
    flags: tuple[str, ...]
    families: tuple[str, str]
    budgets: tuple[float, ...]
    seeds: tuple[int, ...]
    trials: int = 24  # each search's --trials
    repeats: int = 3  # and --repeats


def default_search(s: Setting, seeds: int = 8) -> Setting:
    """The setting searched as a new user runs it: 40 trials, one seed each (with the
    default seed checks); named NAME-d."""
    return replace(s, name=f"{s.name}-d", trials=40, repeats=1, seeds=tuple(range(FIRST_SEED, FIRST_SEED + seeds)))


SETTINGS = {
    s.name: s
    for s in (
        # the setting of issue 35's report (seeds 11-14 there)
        Setting(
            "sr",
            ("--space", "hourglass,conventional", "--task", "digits-sr", "--budget", "60K"),
            ("hourglass", "conventional"),
            (5e3, 1e4, 2e4, 4e4, 6e4),
            tuple(range(FIRST_SEED, FIRST_SEED + 6)),
        ),
        Setting(
            "gc",
            ("--space", "hourglass,conventional", "--task", "digits-genclass", "--budget", "100K"),
            ("hourglass", "conventional"),
            (2e4, 3e4, 5e4, 7e4, 1e5),
            tuple(range(FIRST_SEED, FIRST_SEED + 8)),
        ),
        Setting(
            "dn",
            ("--space", "hourglass,fcnet", "--task", "digits-denoise", "--budget", "60K"),
            ("hourglass", "fcnet"),
            (5e3, 1e4, 2e4, 4e4, 6e4),
            tuple(range(FIRST_SEED, FIRST_SEED + 8)),
        ),
        # classification, whose front is at the cheap end (issue 25: where `--pruner checked-rungs
        # --start ramp` is the better search for its compute, docs/benchmarks.md §14)
        Setting(
            "cls",
            ("--space", "han,sw-mlp", "--task", "digits-classify", "--budget", "100K"),
            ("han", "sw-mlp"),
            (1e3, 3e3, 1e4, 3e4, 1e5),
            tuple(range(FIRST_SEED, FIRST_SEED + 8)),
        ),
        # the README's quickstart search as a new user runs it: 40 trials, one seed each (with the
        # default seed checks), at issue 61's budgets
        Setting(
            "qs",
            ("--space", "hourglass,conventional", "--task", "digits-denoise", "--budget", "100K"),
            ("hourglass", "conventional"),
            (2e4, 4e4, 6e4, 1e5),
            tuple(range(FIRST_SEED, FIRST_SEED + 8)),
            trials=40,
            repeats=1,
        ),
        # synthetic searches whose truth is known (`synthetic`): family "a" 2 dB above "b" at every size
        Setting("syn", (), ("a", "b"), (5e3, 1e4, 2e4, 4e4, 6e4), tuple(range(FIRST_SEED, FIRST_SEED + 12))),
    )
}
SETTINGS |= {d.name: d for d in (default_search(SETTINGS[k]) for k in ("sr", "gc", "dn", "cls"))}
SYNTHETIC_GAP = 2.0  # dB between the synthetic families' true fronts


def synthetic(store, name: str, seed: int, families: tuple[str, str], gap: float = SYNTHETIC_GAP) -> None:
    """A stored synthetic search: TRIALS trials, the families in turns, at log-uniform sizes
    between 1K and 60K parameters; a trial's true value is its family's front
    20 + log10(params) (minus `gap` for the second family) less an exponential shortfall
    (mean 0.8: the shape or learning rate the search drew was not the best at that size),
    measured REPEATS times with seed noise 0.1 (about what the digits tasks show)."""
    from core.trials import RunResult, TrialResult

    rng = np.random.default_rng(seed)
    store.create_or_load_study(
        name, task="digits-denoise", families=list(families), metric="psnr", direction="maximize", budget=60_000
    )
    for i in range(TRIALS):
        fam = families[i % 2]
        params = int(np.exp(rng.uniform(np.log(1000), np.log(60_000))))
        true = 20.0 + np.log10(params) - (gap if fam == families[1] else 0.0) - rng.exponential(0.8)
        n = store.add_trial(name, family=fam, config={"i": i}, params=params, seeds=list(range(REPEATS)))
        runs = [RunResult(k, "complete", {"psnr": true + rng.normal(0, 0.1)}, 1, [], 0.1) for k in range(REPEATS)]
        store.finish_trial(name, n, TrialResult(n, "complete", runs, 0.1, "cpu"))


TRIALS, REPEATS = 24, 3


def run_missing(setting: Setting, folder: Path, extra: tuple[str, ...] = ()) -> None:
    from storage import Store

    db = f"sqlite:///{folder / setting.name}.db"
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    # the replicates whose trials are there (complete, failed or pruned: a pruned search's too)
    done = set(finished(Store(db), setting)) if (folder / f"{setting.name}.db").exists() else set()
    for seed in setting.seeds:
        study = f"{setting.name}-{seed}"
        if not setting.flags:  # synthetic
            store = Store(db)
            if study not in {r.name for r in store.list_studies()}:
                synthetic(store, study, seed, setting.families)
            continue
        if seed in done:
            continue
        print(f"running {study}", file=sys.stderr, flush=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "search.cli",
                "run",
                *setting.flags,
                "--trials",
                str(setting.trials),
                "--repeats",
                str(setting.repeats),
                "--seed",
                str(seed),
                "--storage",
                db,
                "--study",
                study,
                "--no-report",
                *extra,
            ],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )


# the columns of a trials frame the readings use (verdicts/candidates.py), kept by `--export`
FRAME_COLUMNS = ("study", "number", "status", "family", "params", "config", "seeds", "n_runs", "note", "duration_s")


@dataclass(frozen=True)
class StudyRead:
    """What a reading needs of one stored replicate search."""

    name: str
    metric: str
    direction: str
    settings: dict | None


class Source:
    """The replicate searches of the settings: a folder of SQLite files (`DIR/NAME.db`, as
    `run_missing` writes them) or a file that `--export` wrote (`--frames`), whose trials
    are the readings' columns only (FRAME_COLUMNS and the metric's two), so that the
    replicates can be read again without the databases."""

    def __init__(self, folder: Path | None = None, frames: Path | None = None) -> None:
        self.folder, self.data = folder, json.loads(frames.read_text()) if frames else None
        self.stores: dict = {}  # setting name -> its opened Store, opened once

    def store(self, setting: Setting):
        from storage import Store

        if setting.name not in self.stores:
            self.stores[setting.name] = Store(f"sqlite:///{self.folder / setting.name}.db")
        return self.stores[setting.name]

    def finished(self, setting: Setting) -> list[int]:
        if self.data is not None:
            have = self.data.get(setting.name, {})
            return [seed for seed in setting.seeds if f"{setting.name}-{seed}" in have]
        return finished(self.store(setting), setting)

    def study(self, setting: Setting, seed: int) -> tuple[StudyRead, object]:
        """(the study, its trials frame)."""
        import pandas as pd

        name = f"{setting.name}-{seed}"
        if self.data is not None:
            rec = self.data[setting.name][name]
            return StudyRead(name, rec["metric"], rec["direction"], rec["settings"]), pd.DataFrame(rec["trials"])
        store = self.store(setting)
        rec = store.get_study(name)
        return StudyRead(name, rec.metric, rec.direction, rec.settings), store.trials_frame(name)


def export(source: Source, settings: list[Setting], path: Path) -> None:
    """Write the settings' finished replicate searches as `Source` reads them back: per
    setting and study its metric, direction and stored settings and its trials' columns
    that the readings use."""
    out = {}
    for setting in settings:
        for seed in source.finished(setting):
            rec, df = source.study(setting, seed)
            cols = [c for c in (*FRAME_COLUMNS, rec.metric, f"{rec.metric}_std") if c in df.columns]
            rows = [{c: _plain(v) for c, v in zip(cols, row, strict=True)} for row in df[cols].itertuples(index=False)]
            out.setdefault(setting.name, {})[rec.name] = {
                "metric": rec.metric,
                "direction": rec.direction,
                "settings": rec.settings,
                "trials": rows,
            }
    path.write_text(json.dumps(out, separators=(",", ":")))


def _plain(value):
    """A frame's cell as JSON writes it exactly (floats by their repr): numpy scalars as
    Python's, missing values (NaN, NA, None) as None."""
    import pandas as pd

    if isinstance(value, (list, tuple, dict, str)):
        return value
    if value is None or pd.isna(value):
        return None
    return value.item() if isinstance(value, np.generic) else value


def finished(store, setting: Setting) -> list[int]:
    """The seeds whose study has its trials (a study still running, or missing, is left out)."""
    done = {r.name: r.n_complete + r.n_failed + r.n_pruned for r in store.list_studies()}
    return [seed for seed in setting.seeds if done.get(f"{setting.name}-{seed}", 0) >= setting.trials]


@dataclass
class Read:
    """One replicate read with one method: per budget (b,), the difference first - second
    family (in the better direction), its interval, and each family's draws."""

    diff: np.ndarray
    low: np.ndarray
    high: np.ndarray
    thin: np.ndarray  # bool
    values: dict  # family -> (b,) values
    draws: dict  # family -> (d, b) draws


def read(
    cands,
    setting: Setting,
    sign: float,
    method: str,
    min_near: int,
    confidence: float,
    symmetric: bool,
    window: float = 2.0,
) -> Read:
    from verdicts.thin import thin_at
    from verdicts.uncertainty import draws_for, front_draws, interval

    b = np.array(setting.budgets)
    values, draws, thin = {}, {}, np.zeros(len(b), dtype=bool)
    # every family the same number of draws (the fewest any gets, as verdicts/compare.py), so
    # that two families' draws subtract draw by draw above 2,000 configurations too
    n = min(draws_for(len(cands[fam].params), 2000) for fam in setting.families)
    for fam in setting.families:
        c = cands[fam]
        values[fam] = _plain_best(c, b, sign)
        draws[fam] = front_draws(
            c.params, c.means, c.stds, c.runs, c.numbers, b, sign, method=method, draws=n, name=fam
        )
        if min_near:
            thin |= np.array([thin_at(c.params, x, window=window, min_near=min_near) is not None for x in b])
    first, second = setting.families
    diff = sign * (values[first] - values[second])
    low, high = np.full(len(b), np.nan), np.full(len(b), np.nan)
    for i in range(len(b)):
        iv = interval(sign * (draws[first][:, i] - draws[second][:, i]), confidence, diff[i] if symmetric else None)
        if iv is not None and not thin[i]:
            low[i], high[i] = iv
    return Read(diff, low, high, thin, values, draws)


def _plain_best(c, budgets, sign):
    from verdicts.front_reading import best_within

    return best_within(c.means[None, :], c.params, budgets, sign)[0]


def verdict(low: float, high: float) -> int:
    """+1 first better, -1 second better, 0 not distinguishable or no interval."""
    if not np.isfinite(low):
        return 0
    return 1 if low > 0 else -1 if high < 0 else 0


def parse_method(text: str) -> tuple[str, bool, int, float]:
    """ "trials:sym+thin2w3" -> ("trials", symmetric, min_near 2, window 3)."""
    head, _, rule = text.partition("+thin")
    method, _, kind = head.partition(":")
    near, _, window = rule.partition("w")
    return method, kind == "sym", int(near) if near else 0, float(window) if window else DEFAULT_WINDOW


def signed(v, first: str) -> tuple[float, float, float, bool]:
    """(difference first - second, low, high, thin) of a `verdicts.compare.Verdict`."""
    if v.margin is None:
        return np.nan, np.nan, np.nan, v.status == "too thin"
    flip = v.winner != first
    d = -v.margin if flip else v.margin
    if v.margin_low is None:
        return d, np.nan, np.nan, v.status == "too thin"
    lo, hi = (-v.margin_high, -v.margin_low) if flip else (v.margin_low, v.margin_high)
    return d, lo, hi, False


def read_product(cands, setting: Setting, direction: str, confidence: float, how: dict | None = None) -> Read:
    """One replicate read by `search compare`'s own code with its defaults."""
    from verdicts.compare import compare_at

    b = list(setting.budgets)
    first = setting.families[0]
    verdicts = compare_at({f: cands[f] for f in setting.families}, b, direction, confidence=confidence, **(how or {}))
    rows = np.array([signed(v, first)[:3] for v in verdicts])
    thin = np.array([signed(v, first)[3] for v in verdicts])
    sign = 1.0 if direction == "maximize" else -1.0
    values = {f: _plain_best(cands[f], np.array(b), sign) for f in setting.families}
    return Read(rows[:, 0], rows[:, 1], rows[:, 2], thin, values, {})


def pooled_excludes_zero(diffs: np.ndarray, confidence: float) -> bool:
    """Whether the replicates' mean difference differs from 0 by more than its own t interval."""
    from verdicts.uncertainty import t_interval

    t = t_interval(diffs, confidence)
    return t is not None and (t[1] > 0 or t[2] < 0)


def evaluate(
    setting: Setting, source: Source | Path, text: str, confidence: float, resample_corners: bool = False
) -> dict:
    """Read the setting's stored replicate searches with method `text` and score the
    readings against each other (see the module docstring); `resample_corners`: the
    "default" methods resample each family's smallest model too (`search compare
    --resample-corners`)."""
    from verdicts.candidates import candidates, smallest_by_design
    from verdicts.uncertainty import interval

    source = source if isinstance(source, Source) else Source(Path(source))
    product = text == "default" or text.startswith("default:")  # "default:METHOD": compare's code, another method
    # "default:METHOD[:NOISE[:ESTIMATE[:GAP[:FORM[:untried]]]]]": compare's code with another interval method, noise
    # model, estimate of a family's value (verdicts/uncertainty.py estimate_at), "rests on one" rule and
    # interval form (verdicts/uncertainty.py `interval`)
    how = (
        dict(zip(("method", "noise", "estimate", "max_gap", "form", "untried"), text.split(":")[1:])) if product else {}
    )
    how = {k: v for k, v in how.items() if v}
    if "untried" in how:  # ":untried": `search compare --untried` (verdicts/thin.py untried_at)
        if how["untried"] != "untried":
            raise ValueError(f"unknown rule {how['untried']!r} in method {text!r} (untried)")
        how["untried"] = True
    if "max_gap" in how:  # ":GAP" in seed-noise stds (verdicts/uncertainty.py rests_on_one), "none": no such rule
        how["max_gap"] = None if how["max_gap"] == "none" else float(how["max_gap"])
    method, symmetric, min_near, window = parse_method("trials" if product else text)
    reads, sign, all_cands, direction = [], None, [], "maximize"
    for seed in source.finished(setting):
        rec, frame = source.study(setting, seed)
        direction = rec.direction
        sign = 1.0 if rec.direction == "maximize" else -1.0
        fixed = product and not resample_corners and smallest_by_design(rec.settings)
        cands = candidates(frame, rec.metric, list(setting.families), smallest_fixed=fixed)
        all_cands.append(cands)
        reads.append(
            read_product(cands, setting, direction, confidence, how)
            if product
            else read(cands, setting, sign, method, min_near, confidence, symmetric, window)
        )
    n, nb = len(reads), len(setting.budgets)
    diffs = np.array([r.diff for r in reads])  # (n, b)
    pooled = np.nanmean(diffs, axis=0)
    spread = np.nanstd(diffs, axis=0, ddof=1)
    calls = np.array([[verdict(r.low[i], r.high[i]) for i in range(nb)] for r in reads])  # (n, b)
    pairs = list(itertools.combinations(range(n), 2))
    contradict = np.mean([calls[s, i] * calls[t, i] < 0 for s, t in pairs for i in range(nb)])
    both = [
        (s, t, i) for s, t in pairs for i in range(nb) if np.isfinite(reads[s].low[i]) and np.isfinite(reads[t].low[i])
    ]
    disjoint = (
        np.mean([reads[s].high[i] < reads[t].low[i] or reads[t].high[i] < reads[s].low[i] for s, t, i in both])
        if both
        else float("nan")
    )
    with_iv = [(s, i) for s in range(n) for i in range(nb) if np.isfinite(reads[s].low[i])]
    coverage = (
        np.mean([reads[s].low[i] <= pooled[i] <= reads[s].high[i] for s, i in with_iv]) if with_iv else float("nan")
    )
    clear = [i for i in range(nb) if abs(pooled[i]) > 3 * spread[i]]
    power = np.mean([calls[s, i] == np.sign(pooled[i]) for s in range(n) for i in clear]) if clear else float("nan")
    # issue 61's power: budgets where the pooled answer differs from 0 by more than its own
    # interval (the t interval of the mean over the replicates), the share a single search decides
    # in the right direction
    real = [i for i in range(nb) if pooled_excludes_zero(diffs[:, i], confidence)]
    decided = [calls[s, i] == np.sign(pooled[i]) for s in range(n) for i in real]
    # A/A: family f of replicate s against family f of replicate t
    aa = []
    for fam in setting.families:
        if product:
            from verdicts.compare import compare_at

            for s, t in pairs:
                two = {
                    k: replace(c, family=k)  # the same configurations (and fixed ones), named apart
                    for k, c in (("s", all_cands[s][fam]), ("t", all_cands[t][fam]))
                }
                aa.extend(
                    v.status != "better"
                    for v in compare_at(two, list(setting.budgets), direction, confidence=confidence, **how)
                )
            continue
        for s, t in pairs:
            for i in range(nb):
                if reads[s].thin[i] or reads[t].thin[i]:
                    aa.append(True)
                    continue
                centre = sign * (reads[s].values[fam][i] - reads[t].values[fam][i]) if symmetric else None
                iv = interval(sign * (reads[s].draws[fam][:, i] - reads[t].draws[fam][:, i]), confidence, centre)
                aa.append(iv is None or iv[0] <= 0 <= iv[1])
    half = np.nanmedian([(r.high - r.low) / 2 for r in reads]) if len(with_iv) else float("nan")
    # each interval's half-width against the spread (std) of the replicates' estimates at its budget
    with_iv_spread = [(s, i) for s, i in with_iv if spread[i] > 0]
    ratios = [(reads[s].high[i] - reads[s].low[i]) / 2 / spread[i] for s, i in with_iv_spread]
    return {
        "setting": setting.name,
        "method": text,
        "replicates": n,
        "budgets": list(setting.budgets),
        "contradict": float(contradict),
        "disjoint": float(disjoint),
        "coverage": float(coverage),
        "power": float(power),
        "clear_budgets": len(clear),
        "power_real": float(np.mean(decided)) if decided else float("nan"),
        "power_real_ideal": ideal_power(pooled[real], spread[real], confidence) if real else float("nan"),
        "real_budgets": len(real),
        "aa_not_distinguishable": float(np.mean(aa)),
        "thin": float(np.mean([r.thin for r in reads])),
        "answered": len(with_iv) / (n * nb),
        "median_half_width": float(half),
        "width_to_spread": [float(np.median(ratios)), float(np.max(ratios))] if ratios else [np.nan, np.nan],
        "width_to_spread_by_budget": [
            float(np.median(r))
            if (r := [x for (s, j), x in zip(with_iv_spread, ratios, strict=True) if j == i])
            else None
            for i in range(nb)
        ],
        # per budget: the share of replicates with an interval, and the share "too thin"
        "answered_by_budget": [float(np.mean([np.isfinite(r.low[i]) for r in reads])) for i in range(nb)],
        "thin_by_budget": [float(np.mean([r.thin[i] for r in reads])) for i in range(nb)],
        "spread_between_replicates": [float(x) for x in spread],
        "pooled_difference": [float(x) for x in pooled],
        "differences": diffs.tolist(),
        "intervals": [
            [(None, None) if not np.isfinite(r.low[i]) else (float(r.low[i]), float(r.high[i])) for i in range(nb)]
            for r in reads
        ],
        "calls": calls.tolist(),
    }


def ideal_power(truth: np.ndarray, spread: np.ndarray, confidence: float) -> float:
    """The share of budgets (each (r,): the pooled difference and the spread of single
    searches' differences) that a single search decides in the right direction if its
    estimate is normal about the truth with that spread and its interval is exactly
    calibrated (half-width z * spread): the mean of Phi(|truth| / spread - z). What an
    interval exactly as wide as calibration needs decides there (issue 61's power target
    is 50%); one that knew more from a single search than the spread could decide more."""
    from scipy.stats import norm

    z = norm.ppf(0.5 + confidence / 2)
    return float(np.mean(norm.cdf(np.abs(truth) / spread - z)))


def evaluate_pooled(setting: Setting, source: Source | Path, group: int, confidence: float) -> dict:
    """Replicates in disjoint groups of `group` searches, each group pooled as `search
    compare` pools replicate searches: contradictions between groups' confident verdicts,
    coverage of the mean over all replicates, and power where the difference is clear."""
    from verdicts.candidates import candidates
    from verdicts.compare import compare_replicates

    source = source if isinstance(source, Source) else Source(Path(source))
    first, _ = setting.families
    reps, direction = [], "maximize"
    for seed in source.finished(setting):
        rec, frame = source.study(setting, seed)
        direction = rec.direction
        reps.append(candidates(frame, rec.metric, list(setting.families)))
    sign = 1.0 if direction == "maximize" else -1.0
    b = np.array(setting.budgets)
    diffs = np.array(
        [
            sign * (_plain_best(r[setting.families[0]], b, sign) - _plain_best(r[setting.families[1]], b, sign))
            for r in reps
        ]
    )
    pooled, spread = np.nanmean(diffs, axis=0), np.nanstd(diffs, axis=0, ddof=1)
    groups = [reps[i : i + group] for i in range(0, len(reps) - group + 1, group)]
    calls, covered = [], []
    for g in groups:
        row = []
        for i, v in enumerate(compare_replicates(g, list(b), direction, confidence=confidence)):
            call = 0
            if v.status == "better":
                call = 1 if v.winner == first else -1
            row.append(call)
            if v.margin_low is not None:
                d = v.margin if v.winner == first else -v.margin
                lo, hi = (v.margin_low, v.margin_high) if v.winner == first else (-v.margin_high, -v.margin_low)
                covered.append(lo <= pooled[i] <= hi and np.isfinite(d))
        calls.append(row)
    calls = np.array(calls)
    nb = len(b)
    pairs = list(itertools.combinations(range(len(groups)), 2))
    clear = [i for i in range(nb) if abs(pooled[i]) > 3 * spread[i]]
    return {
        "setting": setting.name,
        "method": f"pooled, {group} searches",
        "replicates": len(groups),
        "contradict": float(np.mean([calls[s, i] * calls[t, i] < 0 for s, t in pairs for i in range(nb)]))
        if pairs
        else float("nan"),
        "disjoint": float("nan"),
        "coverage": float(np.mean(covered)) if covered else float("nan"),
        "power": float(np.mean([calls[s, i] == np.sign(pooled[i]) for s in range(len(groups)) for i in clear]))
        if clear
        else float("nan"),
        "clear_budgets": len(clear),
        "aa_not_distinguishable": float("nan"),
        "thin": float("nan"),
        "answered": float("nan"),
        "median_half_width": float("nan"),
        "width_to_spread": [float("nan"), float("nan")],
        "calls": calls.tolist(),
    }


def pct(x) -> str:
    return "—" if np.isnan(x) else f"{100 * x:.0f}%"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", help="folder of the settings' SQLite files")
    ap.add_argument("--settings", default=",".join(SETTINGS), help=f"comma list of {', '.join(SETTINGS)}")
    ap.add_argument(
        "--methods",
        default="default,seed,trials,trials:sym,trials:sym+thin1w2,trials:sym+thin1w3,trials:sym+thin2w2",
        help="methods to read with: default (search compare's own code and defaults), seed or trials, "
        "':sym' for the symmetric interval, '+thinNwW' for the thin rule with N configurations "
        f"needed within a factor W below a budget (W defaults to {DEFAULT_WINDOW:g})",
    )
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument(
        "--resample-corners",
        action="store_true",
        help="the default methods resample each family's smallest model too (search compare --resample-corners)",
    )
    ap.add_argument("--pool", type=int, default=3, help="also pool disjoint groups of this many replicates (0: no)")
    ap.add_argument("--no-run", action="store_true", help="read the stored studies only")
    ap.add_argument(
        "--search-flags",
        default="",
        help='more `search run` flags for the searches it runs, e.g. "--sampler gp" (use a DIR of '
        "their own: a stored study is read whatever flags ran it)",
    )
    ap.add_argument(
        "--replicates",
        type=int,
        help="replicate searches per setting: seeds 11, 12, ... (default: the setting's own, 6 for sr, "
        "8 for gc and dn, 12 for syn)",
    )
    ap.add_argument("--json", help="write the results here")
    ap.add_argument(
        "--export", help="also write the settings' replicate searches (the trials' columns the readings use) here"
    )
    ap.add_argument("--frames", help="read the replicate searches from a file --export wrote (implies --no-run)")
    a = ap.parse_args(argv)
    if a.replicates is not None and not 2 <= a.replicates <= 100:
        print(f"error: --replicates must be between 2 and 100, got {a.replicates}", file=sys.stderr)
        return 2
    names = [s.strip() for s in a.settings.split(",") if s.strip()]
    unknown = [s for s in names if s not in SETTINGS]
    if unknown:
        print(f"error: unknown setting(s) {', '.join(unknown)}; known: {', '.join(SETTINGS)}", file=sys.stderr)
        return 2
    folder = Path(a.dir) if a.dir else None
    if folder is None and not a.frames:
        print("error: give --dir or --frames", file=sys.stderr)
        return 2
    if a.frames and not Path(a.frames).is_file():
        print(f"error: --frames {a.frames}: no such file", file=sys.stderr)
        return 2
    source = Source(folder, Path(a.frames) if a.frames else None)
    results, used = [], []
    for name in names:
        setting = SETTINGS[name]
        if a.replicates is not None:
            setting = replace(setting, seeds=tuple(range(FIRST_SEED, FIRST_SEED + a.replicates)))
        used.append(setting)
        if not (a.no_run or a.frames):
            folder.mkdir(parents=True, exist_ok=True)
            run_missing(setting, folder, tuple(shlex.split(a.search_flags)))
        for m in a.methods.split(","):
            results.append(evaluate(setting, source, m, a.confidence, a.resample_corners))
        if a.pool:
            results.append(evaluate_pooled(setting, source, a.pool, a.confidence))
    if a.export:
        export(source, used, Path(a.export))
    print(
        "| setting | replicates | method | contradict | disjoint | coverage | power (clear budgets) | "
        "decided where real (budgets) | a calibrated interval's | A/A n.d. | too thin | median half-width | "
        "half-width / spread (median, max) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        ratio = r.get("width_to_spread", [float("nan")] * 2)
        print(
            f"| {r['setting']} | {r['replicates']} | {r['method']} | {pct(r['contradict'])} | {pct(r['disjoint'])} | "
            f"{pct(r['coverage'])} | {pct(r['power'])} ({r['clear_budgets']}) | "
            f"{pct(r.get('power_real', float('nan')))} ({r.get('real_budgets', 0)}) | "
            f"{pct(r.get('power_real_ideal', float('nan')))} | {pct(r['aa_not_distinguishable'])} | "
            f"{pct(r['thin'])} | {r['median_half_width']:.3g} | "
            f"{ratio[0]:.2g}, {ratio[1]:.2g} |".replace("| nan |", "| — |").replace("nan, nan", "—")
        )
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
