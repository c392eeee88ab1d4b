"""The search-efficiency benchmark's quick mode runs end to end (issue 11's CI check)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_search_efficiency_quick_mode(tmp_path):
    out = tmp_path / "eff.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "search_efficiency.py"), "--quick",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())["settings"]["hourglass-conventional"]
    summary = report["summary"]
    searches = ("tpe", "tpe/none", "tpe@free", "tpe+pareto", "grid")
    assert set(summary) == {"full grid", *searches} and report["best_hypervolume"] > 0
    for sampler in searches:
        assert all(0 < f <= 1 + 1e-9 for f in summary[sampler]["fractions"])
        curve = report["curves"][sampler][0]
        assert curve["trials"] == [1, 2, 3, 4] and curve["fraction"] == sorted(curve["fraction"])
        assert all(0 <= f <= 1 + 1e-9 for f in summary[sampler]["worst_family"])
    # families take turns by default: the 4 trials are the two families' corners
    assert summary["tpe"]["family_trials"] == {"hourglass": [2], "conventional": [2]}
    assert summary["full grid"]["trials"] == 8 and "| tpe | 4 |" in done.stdout
