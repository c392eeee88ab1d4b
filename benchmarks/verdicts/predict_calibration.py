"""How often is `search predict` right? (issue 24, item 4)

Each real study is cut in two along its log-parameter axis: per family, the law of
reports/scaling.py is fitted to the configurations of the smaller part only (params at most
`cut`, by default the geometric midpoint of the family's smallest and largest
configuration: `--cut 0.5` of the log range), then read at the larger budgets that the
study did measure: every point of the family's full front above the cut, whose measured
value is the front read there (the best mean within that budget). Reported per study and
family, and over all of them:

- coverage: the share of the 90% intervals that hold the measured value (target 80-98%);
- error: the median of |log(predicted error / measured error)| on the metric's error scale
  (0.1 = about 10% off), beside the same for a "flat" guess (the best value measured up
  to the cut, as if the front stopped improving), so that the law has a baseline;
- declined: the share of predictions `search predict` would not give (its trust rules:
  reports/scaling.py MIN_FRONT, MIN_SPAN, MAX_FAILED). Coverage and error are given for
  the trusted predictions ("shipped") and for every fit the law could make ("any fit"),
  which shows what the trust rules buy;
- winners: at budgets above every family's cut where the measured difference between two
  families is beyond seed noise (`search compare --interval seed`, 95%), whether the
  predicted leader is the measured one.

Sources are SQLite files of recipe runs (`search run --recipe NAME --storage
sqlite:///DIR/NAME.db`, as docs/reproductions.md runs them) or any studies:

    python -m benchmarks.verdicts.predict_calibration --dir /work/runs --recipes chen-denoise-small,yu-han-small
    python -m benchmarks.verdicts.predict_calibration --source dn=/tmp/cal/dn.db --json out.json

Every study of each file is one source; replicate searches stay separate sources.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

CONFIDENCE = 0.9
DRAWS = 400
WINNER_POINTS = 3  # log-spaced budgets per study where winners are checked


@dataclass(frozen=True)
class Row:
    """One family of one study read at one budget above its cut."""

    source: str
    study: str
    family: str
    cut: float  # the largest parameter count the fit saw
    budget: float
    measured: float
    predicted: float  # the law read at `budget` (NaN: no fit at all)
    low: float
    high: float
    flat: float  # the best value measured up to the cut
    trust: str  # "" when search predict would give the number
    log_error: float  # |log(pred error / measured error)|
    flat_log_error: float

    @property
    def covered(self) -> bool:
        return bool(self.low <= self.measured <= self.high)


def best_within(c, budget: float, sign: float) -> float:
    mask = c.params <= budget
    return float(c.means[mask][np.argmax(sign * c.means[mask])]) if mask.any() else float("nan")


def family_rows(source: str, study: str, c, scale, sign: float, cut_fraction: float, seed: int) -> list[Row]:
    """Fit family `c` (verdicts.candidates.Candidates) below its cut and read it at its front
    points above the cut."""
    from reports.scaling import front_mask, predict_family

    lo, hi = np.log(c.params.min()), np.log(c.params.max())
    cut = float(np.exp(lo + cut_fraction * (hi - lo)))
    below = c.params <= cut
    front = front_mask(c.params, scale.to_error(c.means))
    targets = np.sort(c.params[front & ~below])
    if below.sum() < 2 or not len(targets):
        return []
    p = predict_family(
        c.family,
        c.params[below],
        c.means[below],
        c.stds[below],
        c.runs[below],
        c.numbers[below],
        targets,
        scale,
        confidence=CONFIDENCE,
        draws=DRAWS,
        seed=seed,
    )
    if p.law is not None:
        values = scale.from_error(p.law(targets))
    else:
        values = np.full(len(targets), np.nan)
    tail = (1 - CONFIDENCE) / 2 * 100
    ok = np.isfinite(p.draws).all(axis=1)
    if ok.sum() >= 10:
        low, high = np.percentile(p.draws[ok], tail, axis=0), np.percentile(p.draws[ok], 100 - tail, axis=0)
    else:
        low = high = np.full(len(targets), np.nan)
    flat = best_within(c, cut, sign)
    rows = []
    for i, budget in enumerate(targets):
        measured = best_within(c, budget, sign)
        err = float(scale.to_error(measured))
        rows.append(
            Row(
                source,
                study,
                c.family,
                cut,
                float(budget),
                measured,
                float(values[i]),
                float(low[i]),
                float(high[i]),
                flat,
                p.trust or "",
                abs(float(np.log(scale.to_error(values[i]) / err))) if np.isfinite(values[i]) else np.nan,
                abs(float(np.log(scale.to_error(flat) / err))),
            )
        )
    return rows


def winner_checks(
    source: str, study: str, cands: dict, scale, direction: str, cut_fraction: float, seed: int
) -> list[dict]:
    """At a few budgets above every family's cut and within every family's range: the
    measured verdict (seed noise, 95%) against the predicted leader."""
    from reports.scaling import predict_family, race
    from verdicts.compare import compare_at

    if len(cands) < 2:
        return []
    cuts = {
        f: float(np.exp(np.log(c.params.min()) + cut_fraction * np.log(c.params.max() / c.params.min())))
        for f, c in cands.items()
    }
    start, stop = max(cuts.values()), min(float(c.params.max()) for c in cands.values())
    if stop <= start * 1.05:
        return []
    budgets = list(np.geomspace(start * 1.05, stop, WINNER_POINTS))
    measured = compare_at(cands, budgets, direction, method="seed", min_near=0, seed=seed, estimate="best")
    preds = []
    for f, c in cands.items():
        below = c.params <= cuts[f]
        preds.append(
            predict_family(
                f,
                c.params[below],
                c.means[below],
                c.stds[below],
                c.runs[below],
                c.numbers[below],
                budgets,
                scale,
                confidence=CONFIDENCE,
                draws=DRAWS,
                seed=seed,
            )
        )
    sign = 1.0 if direction == "maximize" else -1.0
    races = race(preds, budgets, sign, CONFIDENCE)
    out = []
    for i, (v, r) in enumerate(zip(measured, races)):
        laws = [p for p in preds if p.law is not None]
        any_leader = (
            max(laws, key=lambda p: sign * float(scale.from_error(p.law(np.array([budgets[i]])))[0])).family
            if len(laws) >= 2
            else None
        )
        out.append(
            {
                "source": source,
                "study": study,
                "budget": float(budgets[i]),
                "measured_status": v.status,
                "measured_winner": v.winner,
                "predicted_leader": r.leader if len(r.p_win) >= 2 else None,
                "any_fit_leader": any_leader,
            }
        )
    return out


def calibrate(sources: dict[str, str], cut_fraction: float, seed: int = 0) -> tuple[list[Row], list[dict]]:
    """Every study of every source file: the rows and the winner checks."""
    from reports.scaling import error_scale
    from storage import Store
    from verdicts.candidates import candidates

    rows, winners = [], []
    for label, path in sources.items():
        store = Store(f"sqlite:///{path}")
        for rec in store.list_studies():
            try:
                scale = error_scale(rec.metric, rec.direction)
            except ValueError:
                print(f"{label}/{rec.name}: no error scale for {rec.metric}, skipped", file=sys.stderr)
                continue
            sign = 1.0 if rec.direction == "maximize" else -1.0
            cands = {
                f: c for f, c in candidates(store.trials_frame(rec.name), rec.metric).items() if len(c.params) >= 2
            }
            for c in cands.values():
                rows += family_rows(label, rec.name, c, scale, sign, cut_fraction, seed)
            winners += winner_checks(label, rec.name, cands, scale, rec.direction, cut_fraction, seed)
        store.close()
    return rows, winners


def summary(rows: list[Row], winners: list[dict]) -> dict:
    def part(rs: list[Row]) -> dict:
        fitted = [r for r in rs if np.isfinite(r.predicted) and np.isfinite(r.low)]
        return {
            "predictions": len(fitted),
            "coverage": float(np.mean([r.covered for r in fitted])) if fitted else float("nan"),
            "median_log_error": float(np.median([r.log_error for r in fitted])) if fitted else float("nan"),
            "median_flat_log_error": float(np.median([r.flat_log_error for r in fitted])) if fitted else float("nan"),
        }

    clear = [w for w in winners if w["measured_status"] == "better"]
    shipped = [w for w in clear if w["predicted_leader"]]
    anyfit = [w for w in clear if w["any_fit_leader"]]
    return {
        "rows": len(rows),
        "declined": float(np.mean([bool(r.trust) for r in rows])) if rows else float("nan"),
        "shipped": part([r for r in rows if not r.trust]),
        "any_fit": part(rows),
        "clear_budgets": len(clear),
        "winner_right_shipped": [sum(w["predicted_leader"] == w["measured_winner"] for w in shipped), len(shipped)],
        "winner_right_any_fit": [sum(w["any_fit_leader"] == w["measured_winner"] for w in anyfit), len(anyfit)],
    }


def pct(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{100 * x:.0f}%"


def table(rows: list[Row], winners: list[dict]) -> str:
    """Markdown: one line per source, then the total."""
    head = (
        "| source | rows | declined | coverage (shipped) | coverage (any fit) | error law / flat (any fit) "
        "| winner right (shipped / any fit) |"
    )
    lines = [head, "|---|---|---|---|---|---|---|"]
    for label in list(dict.fromkeys(r.source for r in rows)) + ["all"]:
        rs = rows if label == "all" else [r for r in rows if r.source == label]
        ws = winners if label == "all" else [w for w in winners if w["source"] == label]
        s = summary(rs, ws)
        a, sh = s["any_fit"], s["shipped"]
        lines.append(
            f"| {label} | {s['rows']} | {pct(s['declined'])} | {pct(sh['coverage'])} ({sh['predictions']}) "
            f"| {pct(a['coverage'])} ({a['predictions']}) | {a['median_log_error']:.3f} / "
            f"{a['median_flat_log_error']:.3f} | {s['winner_right_shipped'][0]}/{s['winner_right_shipped'][1]}"
            f" / {s['winner_right_any_fit'][0]}/{s['winner_right_any_fit'][1]} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", help="folder of recipe runs' SQLite files (NAME.db)")
    ap.add_argument("--recipes", default="", help="comma list of recipe names whose DIR/NAME.db to read")
    ap.add_argument(
        "--source", action="append", default=[], metavar="LABEL=PATH.db", help="any SQLite file of studies (repeatable)"
    )
    ap.add_argument("--cut", type=float, default=0.5, help="fraction of each family's log-parameter range fitted")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the rows, winner checks and summary here")
    a = ap.parse_args(argv)
    if not 0 < a.cut < 1:
        ap.error(f"--cut must be between 0 and 1, got {a.cut:g}")
    sources = {}
    for name in filter(None, (x.strip() for x in a.recipes.split(","))):
        if not a.dir:
            ap.error("--recipes needs --dir")
        sources[name] = str(Path(a.dir) / f"{name}.db")
    for text in a.source:
        label, sep, path = text.partition("=")
        if not sep or not label or not path:
            ap.error(f"--source must be LABEL=PATH.db, got {text!r}")
        sources[label] = path
    missing = [p for p in sources.values() if not Path(p).is_file()]
    if not sources or missing:
        ap.error(f"no such file: {', '.join(missing)}" if missing else "give --recipes with --dir, or --source")
    rows, winners = calibrate(sources, a.cut, a.seed)
    print(table(rows, winners))
    if a.json:
        Path(a.json).write_text(
            json.dumps(
                {
                    "cut": a.cut,
                    "confidence": CONFIDENCE,
                    "summary": summary(rows, winners),
                    "rows": [asdict(r) | {"covered": r.covered} for r in rows],
                    "winners": winners,
                },
                indent=1,
                default=float,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
