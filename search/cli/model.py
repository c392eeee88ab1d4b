"""`search model STUDY TRIAL [--seed K] --out DIR`: a trial's kept model, ready to load."""

from __future__ import annotations

import argparse

from search.cli.common import storage_arg


def add_parser(sub) -> None:
    m = sub.add_parser("model", help="write a trial's trained weights, configuration and a loader script")
    m.add_argument("study", help="study name")
    m.add_argument("trial", type=int, help="trial number")
    m.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="K",
        help="which run: its index among the trial's seeds (default 0, the first) or the seed itself",
    )
    m.add_argument(
        "--retraining",
        type=int,
        default=0,
        metavar="K",
        help="a run of the trial's retraining K ('search train') instead of the search's (default 0: the search's)",
    )
    m.add_argument("--out", required=True, metavar="DIR", help="folder to write into (made if missing)")
    m.add_argument(
        "--artifacts",
        metavar="URL",
        help="read the weights from this store instead of the recorded one (e.g. a moved folder)",
    )
    storage_arg(m)
    m.set_defaults(func=cmd_model)


def cmd_model(a: argparse.Namespace) -> int:
    from search.artifacts.load import read_weights
    from search.artifacts.model_folder import write_model_folder
    from storage import Store

    weights = read_weights(
        a.study, a.trial, storage=a.storage, seed=a.seed, artifacts=a.artifacts, retraining=a.retraining
    )
    with Store(a.storage) as store:
        if a.retraining:
            metrics = {
                k: v[0]
                for r in store.retrainings(a.study, [a.trial])
                if r.number == a.retraining
                for k, v in r.metrics.items()
            }
        else:
            t = next(r for r in store.trials(a.study) if r.number == a.trial)
            metrics = {k: v[0] for k, v in t.metrics.items()}
    paths = write_model_folder(weights, a.out, metrics)
    again = f", retraining {a.retraining}" if a.retraining else ""
    print(
        f"trial {a.trial} of {a.study!r}{again}, seed {weights.seed}: {weights.family} {weights.config}, "
        f"{weights.params:,} parameters"
    )
    for p in paths:
        print(f"  {p}")
    print(
        f"load it: python {paths[2]}   or   from search import load_model; "
        f"load_model({a.study!r}, {a.trial}, seed={weights.seed}"
        + (f", retraining={a.retraining})" if a.retraining else ")")
    )
    return 0
