"""Compute as it costs: a search's training in seconds beside its parameter-epochs (issue 62).

benchmarks/search_quality/search_efficiency.py counts a study's training two ways: parameter-epochs
(params x epochs trained: load-free, and the unit of the compute figures in
docs/benchmarks.md) and training seconds (the trials' `duration_s`, summed). A deep,
narrow model costs more seconds per parameter than a shallow, wide one, on a CPU and on a
GPU, so a saving in parameter-epochs need not be a saving in seconds. This script reads
the summaries that search_efficiency.py stored (docs/data/*.json: per search, its
`compute_s`, `parameter_epochs` and `fractions` by seed) and sets each search against a
base search of the same file and setting, seed by seed, in both units:

    python -m benchmarks.search_quality.seconds_vs_work docs/data/pruner-gp-*.json            # pruned vs unpruned twin
    python -m benchmarks.search_quality.seconds_vs_work docs/data/ramp-start-10-seeds-*.json --base gp+pareto

Without --base a pruned search (NAME+PRUNER..., e.g. gp+pareto&modelled) is set against
its unpruned twin (gp&modelled), where the file has it. Medians over the seeds both searches ran; `--json` writes the rows.
Nothing is trained: the seconds are those the stored runs measured, on their machine.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

# the efficiency benchmark's own, as against_stored.py
from benchmarks.search_quality.search_efficiency import seed_ratios


def unpruned_twin(name: str) -> str | None:
    """The search a pruned one is set against by default: the same entry without its
    +PRUNER[:GRACE] (search_efficiency.py's `Search` grammar: gp+pareto&modelled against
    gp&modelled); None for an unpruned search."""
    twin = re.sub(r"\+[^/@^%=~#&]*", "", name, count=1)
    return None if twin == name else twin


def compare(summary: dict, search: str, base: str) -> dict:
    """One search against its base, seed by seed: median ratios of training seconds,
    parameter-epochs and hypervolume fraction, and how many seeds."""
    mine, theirs = summary[search], summary[base]
    seconds = seed_ratios(mine["compute_s"], theirs["compute_s"])
    work = seed_ratios(mine["parameter_epochs"], theirs["parameter_epochs"])
    front = seed_ratios(mine["fractions"], theirs["fractions"])
    return {
        "search": search,
        "base": base,
        "seeds": min(len(seconds), len(work)),
        "seconds_ratio": statistics.median(seconds),
        "work_ratio": statistics.median(work),
        "hypervolume_ratio": statistics.median(front),
        "seconds_ratio_by_seed": [round(r, 3) for r in seconds],
        "work_ratio_by_seed": [round(r, 3) for r in work],
    }


def rows_of(report: dict, base: str | None) -> list[dict]:
    """Every (setting, search) of one stored report that has a base to be set against."""
    out = []
    for setting, part in (report.get("settings") or {}).items():
        summary = {
            name: s
            for name, s in (part.get("summary") or {}).items()
            if isinstance(s, dict) and s.get("compute_s") and s.get("parameter_epochs")
        }
        for name in summary:
            against = base if base is not None else unpruned_twin(name)
            if against is None or against == name or against not in summary:
                continue
            out.append({"setting": setting, **compare(summary, name, against)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="search_efficiency.py reports (JSON)")
    ap.add_argument("--base", help="set every search against this one (default: its unpruned twin)")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args(argv)
    rows = []
    for f in a.files:
        try:
            report = json.loads(Path(f).read_text())
        except (OSError, ValueError) as e:
            print(f"error: {f}: {e}", file=sys.stderr)
            return 2
        rows += [{"file": Path(f).name, **r} for r in rows_of(report, a.base)]
    if not rows:
        print("error: no search with a base to be set against in these files", file=sys.stderr)
        return 2
    print(
        "| file | setting | search | against | seeds | training seconds, ratio | parameter-epochs, ratio "
        "| front hypervolume, ratio |\n|---|---|---|---|---|---|---|---|"
    )
    for r in rows:
        print(
            f"| {r['file']} | {r['setting']} | {r['search']} | {r['base']} | {r['seeds']} | "
            f"{r['seconds_ratio']:.3f} | {r['work_ratio']:.3f} | {r['hypervolume_ratio']:.3f} |"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
