"""`search --help` stays fast: building the parser imports none of the heavy libraries
(torch, pandas, scipy, SQLAlchemy, Optuna, plotly, Ray), which the commands import when they
run. About 0.4 s on the 2 cores here (2026-11-29), against 2.25 s when the engine's pruner
pulled in the report pages through the Pareto maths."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.search.conftest import REPO

HEAVY = ("torch", "pandas", "scipy", "sqlalchemy", "optuna", "plotly", "ray")


def test_the_parser_imports_no_heavy_library():
    code = (
        "import json, sys; from search.cli.main import build_parser; build_parser(); "
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
