"""Where the default interval's excess width comes from (issue 61, item 3).

Reads replicate searches that `verdict_calibration.py --export` kept and, per setting,
family and budget, sets three spreads of a family's value (its best configuration within
the budget) side by side:

- A, real: the standard deviation of the value over the replicate searches;
- B, iid: the same over simulated searches that draw as many configurations as a real
  search (its fixed ones, the family's smallest model, kept) independently from the pooled
  configurations of all the replicates: the spread if a search's configurations were
  independent draws from what the searches find;
- B_strata: as B, but drawing within `--bins` log-spaced size bins, each bin as many as a
  real search has there (the size-covering spread puts every search's trials across the
  sizes);

and two half-widths of one search's interval (the median over the searches):

- C: `search compare`'s default (configurations resampled with replacement, seed noise
  redrawn, the smallest model kept, the symmetric percentile about the estimate);
- C_strata: the same with the configurations resampled within the size bins.

A calibrated 95% interval has a half-width of about 1.96 times the spread it must cover,
so C / A about 2 is the target (issue 61: median 1.5-3, maximum 4); C / B says how far the
bootstrap of one search is from calibrated for independent draws (the bootstrap of a
maximum), B / A how far independent draws are from the real searches.

    python -m benchmarks.verdicts.width_sources --frames docs/data/verdict-replicates-2026-12-02.json \\
        --settings qs,sr-d,gc-d,syn --json docs/data/width-sources.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from benchmarks.verdicts.verdict_calibration import SETTINGS, Source
from verdicts.candidates import Candidates, candidates, smallest_by_design
from verdicts.front_reading import best_within
from verdicts.uncertainty import front_draws, interval, seed_noise

CONFIDENCE = 0.95


def value(params: np.ndarray, means: np.ndarray, budgets: np.ndarray, sign: float) -> np.ndarray:
    """(b,) the best of the configurations within each budget."""
    return best_within(np.asarray(means, float)[None, :], np.asarray(params, float), budgets, sign)[0]


def fixed_of(c: Candidates) -> np.ndarray:
    return c.fixed if c.fixed is not None else np.zeros(len(c.params), dtype=bool)


def simulated_spread(cs: list[Candidates], budgets, sign, bins, rng, sims: int) -> np.ndarray:
    """(b,) the spread of the value over `sims` searches drawn from the pooled free
    configurations: each copies a real search's fixed configurations and its count per
    size bin (`bins` maps parameter counts to bins; a single bin: independent draws)."""
    free = [~fixed_of(c) for c in cs]
    pp = np.concatenate([c.params[f] for c, f in zip(cs, free)])
    pm = np.concatenate([c.means[f] for c, f in zip(cs, free)])
    pool_bin = bins(pp)
    out = np.empty((sims, len(budgets)))
    for k in range(sims):
        s = rng.integers(len(cs))
        c, f = cs[s], free[s]
        counts = np.bincount(bins(c.params[f]), minlength=pool_bin.max() + 1)
        picks = [rng.choice(np.flatnonzero(pool_bin == j), n) for j, n in enumerate(counts) if n]
        pick = np.concatenate(picks) if picks else np.zeros(0, dtype=int)
        out[k] = value(np.concatenate([c.params[~f], pp[pick]]), np.concatenate([c.means[~f], pm[pick]]), budgets, sign)
    return np.nanstd(out, axis=0, ddof=1)


def default_half_width(c: Candidates, fam: str, budgets, sign) -> np.ndarray:
    """(b,) `search compare`'s default interval of the family's value: its half-width."""
    d = front_draws(c.params, c.means, c.stds, c.runs, c.numbers, budgets, sign, dof=c.dof, fixed=c.fixed, name=fam)
    v = value(c.params, c.means, budgets, sign)
    out = np.full(len(budgets), np.nan)
    for i in range(len(budgets)):
        iv = interval(d[:, i], CONFIDENCE, v[i]) if np.isfinite(v[i]) else None
        if iv is not None:
            out[i] = (iv[1] - iv[0]) / 2
    return out


def strata_half_width(c: Candidates, fam: str, budgets, sign, bins, rng, draws: int = 2000) -> np.ndarray:
    """(b,) the same interval with the free configurations resampled within their size bin."""
    fixed = fixed_of(c)
    b_of = bins(c.params)
    noisy = seed_noise(c.means, c.stds, c.runs, c.numbers, 0, draws, fam, c.dof)  # (d, k)
    groups = [np.flatnonzero((b_of == j) & ~fixed) for j in np.unique(b_of)]
    v = value(c.params, c.means, budgets, sign)
    d = np.empty((len(noisy), len(budgets)))
    for r in range(len(noisy)):
        idx = np.concatenate([np.flatnonzero(fixed)] + [rng.choice(g, len(g)) for g in groups if len(g)])
        d[r] = value(c.params[idx], noisy[r, idx], budgets, sign)
    return np.array(
        [np.nanquantile(np.abs(d[:, i] - v[i]), CONFIDENCE) if np.isfinite(v[i]) else np.nan for i in range(len(v))]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", required=True, help="replicate searches that verdict_calibration.py --export wrote")
    ap.add_argument("--settings", default="qs,sr-d,gc-d,syn")
    ap.add_argument("--bins", type=int, default=6, help="log-spaced size bins of the strata")
    ap.add_argument("--sims", type=int, default=3000, help="simulated searches per family")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    if not Path(a.frames).exists():
        sys.exit(f"error: --frames {a.frames}: no such file")
    source = Source(frames=Path(a.frames))
    rng = np.random.default_rng(0)
    out: dict[str, dict] = {}
    print("family: per budget; spreads and half-widths over the real spread A")
    for name in a.settings.split(","):
        setting = SETTINGS[name]
        budgets = np.array(setting.budgets, dtype=float)
        reads, sign = [], 1.0
        for seed in source.finished(setting):
            rec, frame = source.study(setting, seed)
            sign = 1.0 if rec.direction == "maximize" else -1.0
            fixed = smallest_by_design(rec.settings)
            reads.append(candidates(frame, rec.metric, list(setting.families), smallest_fixed=fixed))
        for fam in setting.families:
            cs = [r[fam].pooled() for r in reads]
            edges = np.geomspace(min(c.params.min() for c in cs), max(c.params.max() for c in cs) * 1.0001, a.bins + 1)

            def strata(p: np.ndarray, edges=edges) -> np.ndarray:
                return np.clip(np.searchsorted(edges, p, side="right") - 1, 0, a.bins - 1)

            def one(p: np.ndarray) -> np.ndarray:
                return np.zeros(len(p), dtype=int)

            real = np.nanstd(np.array([value(c.params, c.means, budgets, sign) for c in cs]), axis=0, ddof=1)
            row = {
                "budgets": budgets.tolist(),
                "searches": len(cs),
                "A": real,
                "B": simulated_spread(cs, budgets, sign, one, rng, a.sims),
                "B_strata": simulated_spread(cs, budgets, sign, strata, rng, a.sims),
                "C": np.nanmedian([default_half_width(c, fam, budgets, sign) for c in cs], axis=0),
                "C_strata": np.nanmedian([strata_half_width(c, fam, budgets, sign, strata, rng) for c in cs], axis=0),
            }
            ratios = {k: row[k] / real for k in ("B", "B_strata", "C", "C_strata")}
            ratios["C/B"] = row["C"] / row["B"]
            print(
                f"{name} {fam}: A {np.round(real, 3).tolist()}; "
                + "; ".join(f"{k}/A {np.round(v, 2).tolist()}" for k, v in ratios.items() if k != "C/B")
                + f"; C/B {np.round(ratios['C/B'], 2).tolist()}",
                flush=True,
            )
            out[f"{name}/{fam}"] = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in row.items()}
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1, default=float))


if __name__ == "__main__":
    main()
