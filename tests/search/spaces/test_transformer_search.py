"""The transformer spaces (ratio constraints, budget-aware sampling) and a real two-family
study on Shakespeare (or, with no ../shared/data, a generated stand-in) through the CLI."""

from __future__ import annotations

import json

import optuna
import pytest

from core.shape_rules import Constraint
from models import get_family
from search.engine.sampling.optuna_draw import TrialDraw
from search.spaces import Dim, Infeasible, Space, check_config, default_space, grid_configs, suggest_config
from tasks import get_task
from tests.search.conftest import data_dir_for_mechanics

IO = get_task("lm-shakespeare").io()


def draw(family, budget, n=40, seed=0):
    fam, space = get_family(family), default_space(family, IO)
    count = lambda c: fam.count_params(c, IO)  # noqa: E731
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    out = []
    for _ in range(n):
        t = study.ask()
        cfg = suggest_config(space, IO, budget, count, TrialDraw(t, family))
        study.tell(t, 0.0)
        assert not isinstance(cfg, Infeasible), cfg
        out.append(cfg)
    return out


@pytest.mark.parametrize("family,ratio", [("transformer-hourglass", (0.1, 1.0)), ("transformer", (2.0, 4.0))])
def test_drawn_configs_keep_the_papers_shape_rules_and_the_budget(family, ratio):
    fam = get_family(family)
    configs = draw(family, 5_000_000)
    for c in configs:
        assert c["d_model"] == 64 * c["n_heads"] and c["d_model"] % c["n_heads"] == 0
        assert 32 <= c["d_model"] / c["L"] <= 256, c
        assert ratio[0] <= c["d_h"] / c["d_model"] <= ratio[1] and (c["d_h"] != c["d_model"]), c
        assert 1 <= c["K"] <= 10 and (family == "transformer-hourglass" or c["K"] == 1)
        assert fam.shape_violation(c, IO) is None
        assert fam.count_params(c, IO) <= 5_000_000
    sizes = sorted(fam.count_params(c, IO) for c in configs)
    assert sizes[0] < 200_000 and sizes[-1] > 1_000_000  # spread from tiny up towards the budget
    if family == "transformer-hourglass":
        assert len({c["K"] for c in configs}) >= 4


def test_ratio_constraints_are_exact_fractions():
    c = Constraint("d_h", ">=", "d_model", scale=0.1)
    assert c.holds({"d_h": 64, "d_model": 640}) and not c.holds({"d_h": 63, "d_model": 640})
    assert str(c) == "d_h >= 0.1 * d_model" and str(Constraint("a", "<", "b")) == "a < b"
    space = Space(
        "x",
        (Dim("d_model", "int", 640, 640), Dim("d_h", "int", 1, 10_000)),
        (c, Constraint("d_h", "<", "d_model", scale=0.5)),
    )

    class Edges:  # draws the lowest or the highest allowed value
        def __init__(self, high):
            self.high = high

        def int(self, name, low, high, log, step=1):
            return high if self.high else low

    assert suggest_config(space, IO, 10**9, lambda cfg: 1, Edges(False))["d_h"] == 64
    assert suggest_config(space, IO, 10**9, lambda cfg: 1, Edges(True))["d_h"] == 319  # < 320
    assert check_config(space, IO, {"d_model": 640, "d_h": 320}) == "breaks d_h < 0.5 * d_model"


def test_grid_points_of_the_default_spaces_include_valid_shapes():
    for family in ("transformer", "transformer-hourglass"):
        space = default_space(family, IO)
        valid = [g for g in grid_configs(space, 0) if check_config(space, IO, g) is None]
        assert valid and all(g["d_model"] == 64 * g["n_heads"] for g in valid)


def test_params_command_prints_the_breakdown(cli):
    code, out, _ = cli(
        "params",
        "--space",
        "transformer-hourglass",
        "--task",
        "lm-shakespeare",
        "d_model=512",
        "L=8",
        "K=4",
        "d_h=204",
        "n_heads=8",
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("18436608 non-embedding parameters (18.4M) for transformer-hourglass")
    for part in (
        "total: 18698752",
        "embedding: 262144",
        "non-embedding: 18436608",
        "attention: 8388608",
        "ffn: 10027008",
        "norms: 20992",
    ):
        assert any(line.strip().startswith(part) for line in lines), part


@pytest.mark.slow
def test_both_families_in_one_study_with_two_fronts(cli, tmp_path):
    code, out, err = cli(
        "run",
        "--space",
        "transformer,transformer-hourglass",
        "--task",
        "lm-shakespeare",
        "--budget",
        "300K",
        "--trials",
        "4",
        "--tokens",
        "8192",
        "--epochs",
        "2",
        "--sampler",
        "random",
        "--seed",
        "0",
        "--data-dir",
        str(data_dir_for_mechanics(tmp_path)),
        "--task-option",
        "eval_tokens=1024",
        "--seed-checks",
        "0",  # the four trials counted below
    )
    assert code == 0, err
    assert "Pareto-optimal configurations (loss vs. non-embedding parameters, per family)" in out
    assert "report: search-reports/study-" in out

    from reports.fronts import front_data
    from storage import Store

    store = Store(None)
    df = store.trials_frame("lm-shakespeare-transformer-transformer-hourglass")
    done = df[df.status == "complete"]
    assert len(done) == 4 and set(done.family) == {"transformer", "transformer-hourglass"}
    for r in done.itertuples():
        assert r.params == get_family(r.family).count_params(r.config, IO) <= 300_000
        assert r.d_model == r.config["d_model"] and r.d_h == r.config["d_h"] and r.n_heads == r.config["n_heads"]
        assert 1.0 < r.loss < 5.6 and r.bpb == pytest.approx(r.loss / 0.6931471805599453)
    fronts = front_data(df, "loss", "minimize")
    assert sorted(f.family for f in fronts.families) == ["transformer", "transformer-hourglass"]
    assert all(len(f.front_index) >= 1 for f in fronts.families)
    page = (tmp_path / "search-reports").glob("study-*.html")
    assert any("transformer-hourglass" in p.read_text() for p in page)
    code, out, _ = cli("trials", "lm-shakespeare-transformer-transformer-hourglass", "--format", "json")
    assert code == 0 and {t["family"] for t in json.loads(out)} == {"transformer", "transformer-hourglass"}
