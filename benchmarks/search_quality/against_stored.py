"""Searches of a search_efficiency run read against a stored run of the same setting.

The peers take hours (Ax on classification); their fractions and work are stored in the
JSON a search_efficiency run writes (`--out`). This reads the studies of another run
(`--storage`, `--tag`: e.g. a new option of the product) against that JSON's reference
point and best hypervolume, so their fractions compare with the stored ones exactly, and
reports the work each study spent to reach the stored best peer's 40-trial fraction on
its seed, as a share of that peer's work (issue 30's compute target), without running
the peers again (docs/benchmarks.md §19, "A cheap start"):

    python -m benchmarks.search_quality.search_efficiency --settings hourglass-conventional --grid-trials 0 \\
        --samplers "gp+pareto,gp+pareto^last=ramp" --storage sqlite:///new.db --tag new --out new.json
    python -m benchmarks.search_quality.against_stored --stored docs/data/efficiency-peers5-hourglass-conventional.json \\
        --setting hourglass-conventional --storage sqlite:///new.db --tag new \\
        --searches "gp+pareto,gp+pareto^last=ramp" --json against.json

The peer is the stored peer (benchmarks/search_quality/peers.py) with the best median fraction, or
`--peer NAME` (any search of the stored run). A study's fraction can pass 1 where it
found more than the stored run's union front.

Held-out seeds: a run of `--seeds 5-9` (search_efficiency.py) beside a stored run of seeds
0-4 is read with `--seeds 0-9` (or `5-9`); the peer's figures on a seed the stored JSON does
not hold come from the peer's own studies of that seed in `--storage`, named by
`--peer-tag` (the same run: `--samplers "...,ax"`), read against the stored reference and
best hypervolume as the searches are. The peer is still the stored run's best (chosen on
its seeds before the held-out ones ran):

    python -m benchmarks.search_quality.search_efficiency --settings hourglass --seeds 5-9 --grid-trials 0 \
        --samplers "gp+pareto,ax" --storage sqlite:///h.db --tag h10 --out h.json
    python -m benchmarks.search_quality.against_stored --stored docs/data/efficiency-peers5-hourglass.json \
        --setting hourglass --storage sqlite:///h.db --tag h10 --searches gp+pareto --seeds 5-9 --peer-tag h10

`--base NAME` (one of `--searches`, e.g. `gp`: the unpruned default) also prints each
search's hypervolume and work against that search's, seed by seed (issue 25's target: at
least 0.97 of the unpruned default's hypervolume with at most half its training;
docs/benchmarks.md §14, "Checked rungs after a cheap start"), and the two at equal
compute: the fraction the base search had reached when it had spent this search's whole
work (`reports.efficiency.fraction_at_work`), and the target read the other way round: the
fraction this search had reached at half the base's work, as a share of the base's. `--base-tag TAG` reads the base from
another run of the same storage (e.g. 40 trials of the default against 60 of an option).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

from benchmarks.bench_util import fail
from benchmarks.search_quality.search_efficiency import best_peer, seed_list, seed_ratios, study_frame, trial_work
from core.errors import UserError
from reports.efficiency import fraction_at, fraction_at_work, fraction_curve, work_to_reach
from storage import Store


def _fmt(v: float) -> str:
    return "never" if math.isinf(v) else f"{v:.2f}"


def _read(store: Store, name: str, ref, best: float):
    """A study's fraction curve against the stored reference point and best hypervolume,
    and its work by trial number: how every study here is read, the searches' and the
    peer's held-out seeds alike."""
    record, frame = store.get_study(name), study_frame(store, name)
    return fraction_curve(frame, record.metric, record.direction, ref, best), trial_work(frame)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stored", required=True, help="a search_efficiency JSON (--out) holding the setting")
    ap.add_argument("--setting", required=True)
    ap.add_argument("--storage", required=True, help="the SQLAlchemy URL of the run to read")
    ap.add_argument("--tag", required=True, help="that run's --tag")
    ap.add_argument("--searches", required=True, help="comma list of that run's --samplers entries")
    ap.add_argument("--seeds", help="seeds to read: N (0 .. N-1) or A-B (default: the stored run's)")
    ap.add_argument("--peer", help="the stored search to reach (default: the stored peer with the best median)")
    ap.add_argument(
        "--base",
        help="one of --searches (or of --base-tag's run): each search's hypervolume and work "
        "as a share of its, by seed, and its fraction at each search's work",
    )
    ap.add_argument(
        "--base-tag",
        help="the --tag of the run holding --base, when another run of the same storage "
        "(e.g. one with another --trials; default: --tag)",
    )
    ap.add_argument(
        "--peer-tag",
        help="the --tag under which --storage holds the peer's studies of the seeds "
        "the stored JSON does not hold (held-out seeds)",
    )
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    if a.base_tag is not None and a.base is None:
        fail("--base-tag needs --base")
    if a.base is not None and a.base_tag is None and a.base not in a.searches.split(","):
        fail(f"--base {a.base} is not one of --searches ({a.searches})")
    try:
        report = json.loads(Path(a.stored).read_text())
    except (OSError, ValueError) as e:
        fail(f"--stored {a.stored}: {e}")
    if a.setting not in report.get("settings", {}):
        fail(f"--stored {a.stored} holds no setting {a.setting!r}; it holds {', '.join(report.get('settings', {}))}")
    stored = report["settings"][a.setting]
    summary = stored["summary"]
    peer = a.peer or best_peer(summary, list(summary))
    if peer is None or "fractions" not in summary.get(peer, {}):
        fail(
            f"no peer to reach in {a.stored}: give --peer, one of {', '.join(k for k in summary if 'fractions' in summary[k])}"
        )
    stored_ids = report.get("seed_ids") or list(range(len(summary[peer]["fractions"])))
    try:
        seeds = seed_list(a.seeds) if a.seeds else stored_ids
    except UserError as e:
        fail(str(e))
    if a.storage.startswith("sqlite:///") and not Path(a.storage[len("sqlite:///") :]).is_file():
        fail(f"--storage {a.storage}: no such database")  # Store would create an empty one
    store = Store(a.storage)
    names = {s: [f"eff-{a.tag}-{a.setting}-{s}-{seed}" for seed in seeds] for s in a.searches.split(",")}
    if a.base_tag is not None:  # the base from another run: read first, under its own name
        names = {a.base: [f"eff-{a.base_tag}-{a.setting}-{a.base}-{seed}" for seed in seeds]} | {
            s: v for s, v in names.items() if s != a.base or a.base_tag == a.tag
        }
    held = {s.name for s in store.list_studies()}
    # the peer's own studies of the seeds the stored JSON does not hold (held-out seeds)
    peer_names = (
        {seed: f"eff-{a.peer_tag}-{a.setting}-{peer}-{seed}" for seed in seeds if seed not in stored_ids}
        if a.peer_tag
        else {}
    )
    missing = [n for ns in [*names.values(), peer_names.values()] for n in ns if n not in held]
    if missing:
        fail(
            f"{a.storage} holds no study {missing[0]} ({len(missing)} missing); check --tag, --peer-tag, "
            "--setting, --searches"
        )
    lacking = [seed for seed in seeds if seed not in stored_ids and seed not in peer_names]
    if lacking:
        fail(
            f"--stored {a.stored} holds no seed {lacking[0]} of {peer} (it holds {', '.join(map(str, stored_ids))}); "
            "give --peer-tag, the tag under which --storage holds the peer's studies of the other seeds"
        )
    ref, best = stored["reference"], stored["best_hypervolume"]
    goals, peer_work = [], []
    for seed in seeds:  # the peer's fraction and work on each seed: stored, or read as the searches are
        if seed in peer_names:
            curve, w = _read(store, peer_names[seed], ref, best)
            goals.append(float(curve["fraction"].iloc[-1]))
            peer_work.append(sum(w.values()))
        else:
            i = stored_ids.index(seed)
            goals.append(summary[peer]["fractions"][i])
            peer_work.append(summary[peer]["parameter_epochs"][i])
    out = {
        "stored": a.stored,
        "setting": a.setting,
        "peer": peer,
        "seeds": seeds,
        "peer_fractions": goals,
        "peer_work": peer_work,
        "peer_read": sorted(peer_names),
        "searches": {},
    }
    print(
        f"## {a.setting}, read against {a.stored}: best peer {peer}, median {statistics.median(goals):.3f}, "
        f"work {statistics.median(peer_work) / 1e6:.1f}M parameter-epochs; seeds {', '.join(map(str, seeds))}"
        + (
            f" ({', '.join(map(str, sorted(peer_names)))}: the peer's own studies of tag {a.peer_tag})"
            if peer_names
            else ""
        )
    )
    print(
        f"{peer} by seed: {' / '.join(f'{g:.3f}' for g in goals)}; work (M) "
        f"{' / '.join(f'{w / 1e6:.1f}' for w in peer_work)}"
    )
    print(
        "| search | fraction by seed | median | worst | @10 trials | work (M parameter-epochs) | work to reach "
        f"{peer}'s fraction, share of its work: by seed (median) |\n|---|---|---|---|---|---|---|"
    )
    paths = {}  # search -> [(curve, work by trial number)] by seed
    for search, studies in names.items():
        fractions, at10, work, reach = [], [], [], []
        paths[search] = []
        for name, goal, pw in zip(studies, goals, peer_work):
            curve, w = _read(store, name, ref, best)
            paths[search].append((curve, w))
            fractions.append(float(curve["fraction"].iloc[-1]))
            at10.append(fraction_at(curve, trials=10))
            work.append(sum(w.values()))
            reach.append(work_to_reach(curve, w, goal) / pw if pw > 0 else math.nan)
        out["searches"][search] = {
            "fractions": fractions,
            "at10": at10,
            "work": work,
            "reach": [None if math.isinf(v) else v for v in reach],
        }  # None: never
        print(
            f"| {search} | {' / '.join(f'{f:.3f}' for f in fractions)} | {statistics.median(fractions):.3f} | "
            f"{min(fractions):.3f} | {statistics.median(at10):.3f} | {statistics.median(work) / 1e6:.1f} | "
            f"{' / '.join(_fmt(v) for v in reach)} ({_fmt(statistics.median(reach))}) |"
        )
    store.close()
    if a.base is not None:
        out["base"] = a.base
        base = out["searches"][a.base]
        print(
            f"\n| search | hypervolume ratio to {a.base}, by seed | median | worst | work ratio by seed | median | "
            f"{a.base} with this search's work: fraction median (worst); this search minus it, by seed | "
            f"this search at half {a.base}'s work, share of {a.base}'s hypervolume: median (worst) |"
            "\n|---|---|---|---|---|---|---|---|"
        )
        for search, got in out["searches"].items():
            hv, wr = seed_ratios(got["fractions"], base["fractions"]), seed_ratios(got["work"], base["work"])
            # equal compute: what the base had reached when it had spent this search's whole work
            same = [fraction_at_work(c, w, spent) for (c, w), spent in zip(paths[a.base], got["work"])]
            # issue 25's first target read the other way: this search stopped at half the base's work
            half = seed_ratios(
                [fraction_at_work(c, w, bw / 2) for (c, w), bw in zip(paths[search], base["work"])], base["fractions"]
            )
            got["hv_ratio"], got["work_ratio"], got["base_at_same_work"], got["at_half_base_work"] = hv, wr, same, half
            print(
                f"| {search} | {' / '.join(f'{v:.3f}' for v in hv)} | {statistics.median(hv):.3f} | {min(hv):.3f} | "
                f"{' / '.join(f'{v:.2f}' for v in wr)} | {statistics.median(wr):.2f} | "
                f"{statistics.median(same):.3f} ({min(same):.3f}); "
                f"{' / '.join(f'{f - b:+.3f}' for f, b in zip(got['fractions'], same))} | "
                f"{statistics.median(half):.3f} ({min(half):.3f}) |"
            )
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
