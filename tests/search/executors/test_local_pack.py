"""`--pack K` with the local executor: K trials train as one batched program where they
fuse, and the study records each as if it had trained alone (its own row, runs, curves
and weights); faults stay with their trial; a killed pack resumes with nothing twice."""

import json

import pytest

from search.executors.packs import AUTO_PACK, check_pack, describe_pack, resolve_pack
from storage import Store
from tests.search.conftest import run_subprocess

GRID = "[hourglass]\nd_z = [72, 100]\nd_h = [7, 8]\nL = [1, 3]\nlr = [0.005]\n"


def run_grid(cli, tmp_path, study, *extra):
    (tmp_path / "grid.toml").write_text(GRID)
    return cli(
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "100K",
        "--sampler",
        "grid",
        "--space-file",
        "grid.toml",
        "--trials",
        "8",
        "--epochs",
        "2",
        "--repeats",
        "2",
        "--no-report",
        "--study",
        study,
        *extra,
    )


def by_config(store, study):
    return {json.dumps(r.config, sort_keys=True): r for r in store.trials(study)}


def test_a_packed_study_records_each_trial_as_alone(cli, tmp_path):
    code, out, err = run_grid(cli, tmp_path, "packed", "--pack", "3")
    assert code == 0, err
    code, _, err = run_grid(cli, tmp_path, "alone", "--pack", "1", "--fuse", "off")
    assert code == 0, err
    store = Store("sqlite:///search.db")
    packed, alone = by_config(store, "packed"), by_config(store, "alone")
    assert packed.keys() == alone.keys() and len(packed) == 8
    assert len({r.number for r in packed.values()}) == 8  # each trial its own row
    for key, a in alone.items():
        p = packed[key]
        assert p.status == a.status == "complete"
        for name, (mean, _std, n) in a.metrics.items():
            assert p.metrics[name][0] == pytest.approx(mean, rel=1e-5) and p.metrics[name][2] == n == 2
    curves_p = store.epochs_of("packed", ("complete",), repeat=0)
    curves_a = store.epochs_of("alone", ("complete",), repeat=0)
    number = {r.number: k for k, r in packed.items()}
    alone_number = {k: r.number for k, r in alone.items()}
    for n, rows in curves_p.items():
        other = curves_a[alone_number[number[n]]]
        assert [r["psnr"] for r in rows] == pytest.approx([r["psnr"] for r in other], rel=1e-5)
    weights = tmp_path / "search-artifacts"
    assert weights.is_dir()  # kept weights (--keep pareto) written by the pack


def test_a_fault_in_one_trial_of_a_pack_stays_with_it(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCH_FAULT", "raise:d_h=7")
    code, _, err = run_grid(cli, tmp_path, "f", "--pack", "4", "--retries", "0")
    assert code == 0, err
    recs = Store("sqlite:///search.db").trials("f")
    assert {r.status for r in recs if r.config["d_h"] == 7} == {"failed"}
    assert {r.status for r in recs if r.config["d_h"] == 8} == {"complete"}
    assert all("injected fault" in r.error for r in recs if r.config["d_h"] == 7)


@pytest.mark.slow
def test_a_killed_pack_resumes_with_nothing_recorded_twice(tmp_path):
    """The process dies while a pack trains (kill -9 of the driver, local executor): the
    next run marks the pack's trials interrupted and runs them again; every configuration
    ends complete once."""
    (tmp_path / "grid.toml").write_text(GRID)
    args = [
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "100K",
        "--sampler",
        "grid",
        "--space-file",
        "grid.toml",
        "--trials",
        "8",
        "--epochs",
        "1",
        "--no-report",
        "--study",
        "k",
        "--pack",
        "4",
        "--seed-checks",
        "0",  # the trials counted below
    ]
    p = run_subprocess(args, cwd=tmp_path, env_extra={"SEARCH_FAULT": "crash:d_z=100"})
    p.communicate(timeout=300)
    assert p.returncode == 137
    p = run_subprocess(args, cwd=tmp_path)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    recs = Store(f"sqlite:///{tmp_path / 'search.db'}").trials("k")
    complete = [json.dumps(r.config, sort_keys=True) for r in recs if r.status == "complete"]
    assert len(complete) == len(set(complete)) == 8
    assert {r.status for r in recs} <= {"complete", "interrupted"}
    assert sum(r.status == "interrupted" for r in recs) <= 4  # at most the pack in flight


@pytest.mark.parametrize("value,expected", [("1", 1), ("8", 8), (3, 3), ("auto", "auto")])
def test_pack_values(value, expected):
    assert check_pack(value) == expected


@pytest.mark.parametrize("value", ["0", "-2", "1.5", "many", "", True])
def test_bad_pack_values(value):
    from core.errors import UserError

    with pytest.raises(UserError, match="--pack must be a whole number of trials of at least 1, or auto"):
        check_pack(value)


def test_auto_pack_by_device():
    assert resolve_pack("auto", "cpu") == AUTO_PACK["cpu"] and resolve_pack("auto", "cuda:1") == AUTO_PACK["cuda"]
    assert resolve_pack("5", "cpu") == 5


@pytest.mark.parametrize(
    "extra,notes",
    [
        ([], []),  # on the CPU a family that does not stack packs without padding
        (["--ema", "0.9"], ["--pack 3: --ema: runs train one at a time"]),
    ],
)
def test_a_pack_says_once_which_trials_train_alone(cli, tmp_path, extra, notes):
    # no seed checks: whether one fits their share depends on the measured durations
    code, out, err = cli(
        "run", "--space", "sw-mlp", "--task", "digits-classify", "--budget", "20K", "--trials", "3",
        "--epochs", "1", "--max-train-samples", "128", "--pack", "3", "--no-report", "--study", "swm",
        "--seed-checks", "0", "--device", "cpu", *extra,
    )  # fmt: skip
    assert code == 0, err
    assert [line for line in err.splitlines() if line.startswith("--pack")] == notes
    first = next(line for line in err.splitlines() if line.startswith("study 'swm'"))
    assert first.endswith("in packs of up to 3 trials (each its own model, nothing padded)")
    assert [r.status for r in Store(f"sqlite:///{tmp_path}/search.db").trials("swm")].count("complete") == 3


def test_the_first_line_says_how_packs_train():
    assert describe_pack(1, "cpu") == ""
    assert describe_pack(4, "cpu") == ", in packs of up to 4 trials (each its own model, nothing padded)"
    assert describe_pack(4, "cuda") == ", in packs of up to 4 trials (stacked where a family stacks)"
