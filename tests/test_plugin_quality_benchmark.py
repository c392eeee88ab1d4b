"""benchmarks/search_quality/plugin_quality.py end to end at a small size: the synthetic family registered
through the public API, the product's default proposer and the Optuna peers at the same
trials, each share of the exactly known front in (0, 1] (no search can pass the truth)."""

import json

import pytest

from search.engine.sampling.policies import CONDITIONAL_SAMPLERS, DEFAULT_SAMPLER
from tests.bench_scripts import run_benchmark


def test_the_search_quality_of_a_users_family_is_measured_against_the_truth(tmp_path):
    out = tmp_path / "q.json"
    done = run_benchmark(
        "search_quality.plugin_quality",
        "--seeds",
        "1",
        "--trials",
        "12",
        "--variants",
        "plain,conditional",
        "--samplers",
        "default,gp",
        "--out",
        out,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    plain, conditional = result["variants"]["syn-plain"], result["variants"]["syn-conditional"]
    default, routed = DEFAULT_SAMPLER, CONDITIONAL_SAMPLERS[DEFAULT_SAMPLER]
    assert list(plain)[:2] == [f"product ({default}, default)", "product (gp)"]
    assert list(conditional)[:2] == [f"product ({routed}, default)", "product (gp-cond)"]
    for rows in (plain, conditional):
        assert set(rows) >= {"optuna-tpe", "optuna-random", "optuna-gp", "optuna-nsga2"}
        for row in rows.values():
            assert 0.0 < row["worst"] <= row["median"] <= 1.0 + 1e-9


@pytest.mark.parametrize("args", [("--variants", "nope"), ("--samplers", "cma"), ("--samplers", "")])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, args):
    done = run_benchmark("search_quality.plugin_quality", *args)
    assert done.returncode == 2 and done.stderr.startswith("error:") and done.stderr.count("\n") == 1
