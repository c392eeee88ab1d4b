"""The Mixer, SW-MLP and Han families through the `search` command: searchable side by
side on a classification task, fitting tasks listed, clear errors where they do not fit."""

import json

from reports.fronts import front_data
from storage import load_trials

FAMILIES = ["mixer", "s-mixer", "rp-mixer", "sw-mlp", "han", "han-mixer", "hourglass"]


# One small grid point per family, so the grid sampler gives each family one trial.
SPACE_FILE = """
[mixer]
S = [8]
C = [8]
L = [1]
gamma = [1]
patch = [2]
lr = [0.005]
[s-mixer]
S = [8]
C = [8]
L = [1]
patch = [2]
[rp-mixer]
S = [8]
C = [8]
L = [1]
gamma = [1]
patch = [4]
[sw-mlp]
patch = [2]
C = [8]
L = [1]
p = [0.1]
[han]
width = [16]
depth = [4]
[han-mixer]
C = [8]
L = [1]
mixer_L = [1]
patch = [2]
[hourglass]
L = [1]
d_z = [80]
d_h = [8]
"""


def test_all_families_search_side_by_side_on_digits_classify(cli, tmp_path):
    (tmp_path / "space.toml").write_text(SPACE_FILE)
    code, out, err = cli(
        "run",
        "--space",
        ",".join(FAMILIES),
        "--task",
        "digits-classify",
        "--budget",
        "40K",
        "--trials",
        "7",
        "--sampler",
        "grid",
        "--epochs",
        "1",
        "--max-train-samples",
        "256",
        "--space-file",
        str(tmp_path / "space.toml"),
        "--seed-checks",
        "0",
        "--no-report",
    )
    assert code == 0, err
    df = load_trials(f"digits-classify-{'-'.join(FAMILIES)}", f"sqlite:///{tmp_path / 'search.db'}")
    done = df[df.status == "complete"]
    assert len(done) == 7 and set(done.family) == set(FAMILIES)  # the grid interleaves families
    assert (done.params <= 40_000).all() and done.accuracy.between(0, 1).all()
    assert (done.metric_error - (1 - done.accuracy)).abs().max() < 1e-9  # "error" clashes with the column
    mixers = done[done.family.isin(["mixer", "s-mixer", "rp-mixer"])]
    assert mixers.S.notna().all() and mixers.C.notna().all() and mixers.patch.notna().all()
    assert done[done.family == "han"].width.notna().all() and done[done.family == "han"].depth.notna().all()
    fronts = front_data(df, "accuracy", "maximize")
    assert {f.family for f in fronts.families} == set(FAMILIES)  # one front per family, side by side
    assert "Pareto-optimal" in out


def test_spaces_lists_the_tasks_each_family_fits(cli):
    code, out, _ = cli("spaces")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines()}
    for fam in ("mixer", "s-mixer", "rp-mixer", "han-mixer"):
        fits = lines[fam].split("tasks: ")[1].split("; from: ")[0].split(", ")
        assert set(fits) == {"mnist-classify", "digits-classify", "cifar10-classify"}
    for fam in ("han", "sw-mlp", "hourglass", "conventional"):
        assert {"checkerboard", "sines", "digits-classify"} <= set(
            lines[fam].split("tasks: ")[1].split("; from: ")[0].split(", ")
        )


def test_a_family_that_does_not_fit_is_refused(cli):
    code, _, err = cli("run", "--space", "mixer", "--task", "checkerboard", "--budget", "10K")
    assert code == 2 and "does not fit" in err and "mixer" in err


def test_params_shows_non_zero_and_tensor_size(cli):
    code, out, _ = cli("params", "--space", "sw-mlp", "--task", "checkerboard", "width=40", "L=3", "p=0.1", "--json")
    d = json.loads(out)
    assert code == 0 and d["params"] == 802 and d["convention"] == "non-zero parameters"
    assert d["breakdown"]["tensor size (all weight entries + biases)"] == 802 + 3 * 1440
    code, out, _ = cli(
        "params", "--space", "mixer", "--task", "digits-classify", "S=16", "C=16", "gamma=2", "L=2", "patch=2"
    )
    assert code == 0 and out.startswith("4698 trainable parameters") and "connections: 66720" in out
    code, _, err = cli("params", "--space", "mixer", "--task", "digits-classify", "S=16", "C=16", "L=2", "patch=3")
    assert code == 2 and "does not tile" in err


def test_checkerboard_board_option(cli):
    code, out, err = cli(
        "run",
        "--space",
        "han",
        "--task",
        "checkerboard",
        "--task-option",
        "board=2",
        "--budget",
        "3K",
        "--trials",
        "1",
        "--epochs",
        "1",
        "--no-report",
    )
    assert code == 0, err
    code, _, err = cli("run", "--space", "han", "--task", "checkerboard", "--task-option", "board=0", "--budget", "3K")
    assert code == 2 and "board" in err
