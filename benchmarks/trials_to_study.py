"""Load a kept trials file (`search trials STUDY --format json`, as docs/data holds them)
into a new study, so that `search compare` can read it again, alone or pooled with
replicate searches (`--replicates`), without training anything.

After the file come the `search run` flags of the command that made it (after `--`): the
new study is the one that command would create (its name, `--study`; its task, families,
metric, direction, budget and settings, recipe version included; `--storage`), with
`loaded_from` added to its settings. Each trial is stored with its status, configuration,
size, seeds, note, device and duration. The file holds each metric's mean and sample std
over a trial's runs, not the runs: a trial of n > 1 runs is written as n runs whose values
are mean + std * z_i (z: n evenly spaced values of mean 0 and sample std 1), so every
metric's mean, std and count, all that `search compare` reads of a configuration's runs
(seed checks merged in too), are the file's.

    python -m benchmarks.trials_to_study docs/data/chen-sr-short-10M.json -- \
        --recipe chen-sr-short --budget 10M --study mnist-sr-10M --storage sqlite:///chen10m.db
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.bench_util import fail
from core.errors import StorageError, UserError
from core.trials import RunResult, TrialResult
from storage import Store

# The fields of `search trials --format json` that are not metrics.
NOT_METRICS = {"number", "status", "family", "config", "params", "n_runs", "seeds", "note", "error", "device"}
NOT_METRICS |= {"duration_s", "overall_front"}


def checked_trials(trials: Any, families: list[str]) -> list[dict]:
    """The file's trials in number order, or ValueError naming the first that cannot be loaded."""
    if not isinstance(trials, list) or not trials:
        raise ValueError("the file holds no list of trials")
    for t in trials:
        if not isinstance(t, dict) or not {"number", "status", "family", "config", "params"} <= set(t):
            raise ValueError(f"not a trial of `search trials --format json`: {str(t)[:80]}")
        if t["family"] not in families:
            raise ValueError(f"trial {t['number']}: family {t['family']!r} is not one of {', '.join(families)}")
        if (t.get("n_runs") or 0) > max(1, len(t.get("seeds") or [])):
            raise ValueError(f"trial {t['number']} has {t['n_runs']} runs but {len(t.get('seeds') or [])} seeds")
    numbers = sorted(t["number"] for t in trials)
    if numbers != list(range(len(trials))):
        raise ValueError("the trials are not numbered 0, 1, 2, ... without gaps")
    return sorted(trials, key=lambda t: t["number"])


def metrics_of(t: dict) -> dict[str, float]:
    """The trial's metrics (test and val_*), without their `_std` columns and missing values."""
    return {
        k: float(v)
        for k, v in t.items()
        if k not in NOT_METRICS and not k.endswith("_std") and isinstance(v, (int, float)) and v == v
    }


def spread(n: int) -> list[float]:
    """n evenly spaced values of mean 0 and sample std 1 ([0.0] for one)."""
    if n == 1:
        return [0.0]
    scale = (n * (n + 1) / 12) ** 0.5
    return [(i - (n - 1) / 2) / scale for i in range(n)]


def runs_of(t: dict) -> list[RunResult]:
    """The trial's runs: one holding its metrics, or n of the same mean and sample std."""
    seeds = t.get("seeds") or [0]
    n = max(1, t.get("n_runs") or 0)
    means = metrics_of(t)
    duration = float(t.get("duration_s") or 0.0) / n
    status = "complete" if n > 1 else t["status"]
    return [
        RunResult(
            seeds[i],
            status,
            {k: m + (t.get(f"{k}_std") or 0.0) * z for k, m in means.items()},
            None,
            [],
            duration,
            t.get("error"),
        )
        for i, z in enumerate(spread(n))
    ]


def load(store: Store, path: Path, name: str, study: dict[str, Any]) -> int:
    """Write the trials of `path` into a new study `name` (`study`: the keyword arguments of
    `Store.create_or_load_study`); returns how many."""
    if name in {s.name for s in store.list_studies()}:
        raise ValueError(f"study {name!r} exists already; name a new one with --study")
    trials = checked_trials(json.loads(path.read_text()), list(study["families"]))
    store.create_or_load_study(name, **dict(study, settings=dict(study["settings"], loaded_from=str(path))))
    for t in trials:
        seeds = t.get("seeds") or []
        if t["status"] == "rejected":
            store.add_rejected(name, family=t["family"], config=t["config"], params=t["params"], reason=t.get("note"))
            continue
        n = store.add_trial(
            name, family=t["family"], config=t["config"], params=t["params"], seeds=seeds, note=t.get("note")
        )
        duration = float(t.get("duration_s") or 0.0)
        result = TrialResult(n, t["status"], runs_of(t), duration, t.get("device") or "cpu", t.get("error"))
        store.finish_trial(name, n, result)
    return len(trials)


def study_of(run_flags: list[str]) -> tuple[str, str | None, dict[str, Any]]:
    """(study name, storage URL, the study's fields) that `search run RUN_FLAGS` would create."""
    from search.api.run import run_spec
    from search.cli.main import build_parser
    from search.engine.prepare import prepare, study_fields

    a = build_parser().parse_args(["run", *run_flags])
    spec = run_spec(a)
    return spec.study_name, a.storage, study_fields(spec, prepare(spec))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", type=Path, help="a `search trials --format json` file")
    p.add_argument("run", nargs=argparse.REMAINDER, help="-- and the `search run` flags of the command that made it")
    a = p.parse_args()
    flags = a.run[1:] if a.run[:1] == ["--"] else a.run
    if not a.file.is_file():
        fail(f"no such file: {a.file}")
    try:
        name, storage, fields = study_of(flags)
        n = load(Store(storage), a.file, name, fields)
    except (ValueError, KeyError, StorageError, UserError) as e:
        fail(str(e))
    print(f"study {name!r}: {n} trials from {a.file}")


if __name__ == "__main__":
    main()
