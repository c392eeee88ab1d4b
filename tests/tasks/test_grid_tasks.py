"""The checkerboard and sines tasks: labels, values, seeded splits, options, training."""

from __future__ import annotations

import math

import pytest
import torch

import tasks
from core.errors import UserError
from core.trials import TrainSettings, TrialSpec

# Points of the authors' released checkerboard training set (x1, x2, label).
AUTHORS = [
    (0.5, 1.0, 0),
    (0.2, -0.2, 1),
    (0.25, -0.875, 1),
    (0.55, -0.175, 1),
    (-0.675, 0.5, 0),
    (-0.175, -0.525, 0),
    (-0.25, -0.675, 1),
    (-1.0, 0.9, 0),
    (0.675, -0.625, 1),
    (0.0, -0.1, 1),
    (-0.675, 0.175, 0),
    (0.7, 0.725, 0),
    (0.175, -0.025, 0),
    (-0.8, -0.75, 1),
    (0.025, 0.85, 1),
]


def label_at(task, x1, x2):
    x, i, j = task.points()
    y = task.values(x, i, j)
    k = int(((x - torch.tensor([x1, x2])).abs().sum(1)).argmin())
    return int(y[k])


def test_checkerboard_matches_the_authors_data():
    task = tasks.get_task("checkerboard")
    assert [label_at(task, a, b) for a, b, _ in AUTHORS] == [c for _, _, c in AUTHORS]
    x, i, j = task.points()
    assert x.shape == (81 * 81, 2) and x.min() == -1 and x.max() == 1
    board = task.values(x, i, j).view(81, 81)
    assert board[:4].sum() == 0 and board[76:].sum() == 0  # label 0 off the board
    assert board[4:76, 4:76].float().mean() == 0.5  # 12 x 12 squares of 6 x 6 points
    assert board[4, 4] == 0 and board[4, 10] == 1 and board[10, 10] == 0 and torch.equal(board, board.T)


def test_board_size_option_and_bad_options():
    coarse = tasks.get_task("checkerboard", {"board": 4})
    x, i, j = coarse.points()
    b = coarse.values(x, i, j).view(81, 81)
    assert b[4:76, 4:76].float().mean() == 0.5 and b[4, 21] == 0 and b[4, 22] == 1  # 18-point squares
    for bad in ({"board": 0}, {"board": 100}, {"grid": 2}, {"train_fraction": 1.0}, {"colour": 1}):
        with pytest.raises(UserError):
            tasks.get_task("checkerboard", bad)


def test_mse_loss_option_is_the_authors():
    """loss "mse" (yyy32/HanNet checkerboard_experiments: nn.MSELoss on [y, y], a point is
    right when the mean of the two outputs is on the label's side of 0.5)."""
    task = tasks.get_task("checkerboard", {"loss": "mse"})
    y = torch.tensor([0, 1, 1, 0])
    pred = torch.tensor([[0.1, 0.2], [0.9, 0.4], [0.3, 0.6], [0.7, 0.6]])
    assert task.loss(pred, y) == pytest.approx(float(((pred - y[:, None].float()) ** 2).mean()))
    assert task.predicted(pred).tolist() == [0, 1, 0, 1]
    assert task.split_metrics(pred, y)["accuracy"] == pytest.approx(0.5)
    with pytest.raises(UserError, match="loss must be"):
        tasks.get_task("checkerboard", {"loss": "hinge"})


def test_split_is_seeded_25_percent_with_disjoint_val_and_test():
    task = tasks.get_task("checkerboard")
    d = tasks.load_data(task, None, "cpu")
    assert (d.n_train, d.size("val"), d.size("test")) == (1640, 2460, 2461)
    all_x = torch.cat([d.x[s] for s in ("train", "val", "test")])
    assert len(torch.unique(all_x, dim=0)) == 81 * 81
    again = task.load(None, "cpu")
    assert torch.equal(again.x["train"], d.x["train"])
    other = tasks.get_task("checkerboard", {"split_seed": 1}).load(None, "cpu")
    assert not torch.equal(other.x["train"], d.x["train"])
    x, i, j = task.points()
    truth = {tuple(p): int(c) for p, c in zip(x.tolist(), task.values(x, i, j))}
    perfect = lambda pts: torch.nn.functional.one_hot(torch.tensor([truth[tuple(p)] for p in pts.tolist()]), 2).float()  # noqa: E731
    m = d.evaluate(perfect, "test")
    assert m == {"accuracy": 1.0, "error": 0.0}


def test_sines_values_domain_and_mse():
    """Sec. 4.3: g on [0, 1]^2, on the checkerboard's 81 x 81 grid, 25% for training; the
    primary metric is the test MSE (the paper's "test loss"), RMSE beside it."""
    task = tasks.get_task("sines")
    assert task.options["domain"] == "unit"
    assert (task.metric, task.direction, task.metrics) == ("mse", "minimize", ("mse", "rmse"))
    assert (task.io().d_out, task.io().output) == (1, "regression")
    x = torch.tensor([[0.25, 0.25], [0.05, 0.05], [0.0, 0.3], [0.75, 0.25], [0.1, 0.9]])
    g = task.values(x, None, None).squeeze(1)
    expected = [
        math.sin(math.pi / 2) ** 2 + math.sin(2.5 * math.pi) ** 2,  # 1 + 1
        math.sin(0.1 * math.pi) ** 2 + 1.0,
        0.0,  # sin(0) = 0 on the edge x1 = 0
        -1.0 - 1.0,  # sin(3pi/2) sin(pi/2) + sin(7.5pi) sin(2.5pi)
        math.sin(0.2 * math.pi) * math.sin(1.8 * math.pi) + 0.0,  # sin(pi) = 0, sin(9pi) = 0
    ]
    assert torch.allclose(g, torch.tensor(expected), atol=1e-6)
    pts, _, _ = task.points()
    assert pts.shape == (81 * 81, 2) and pts.min() == 0 and pts.max() == 1
    assert torch.allclose(pts[1], torch.tensor([0.0, 0.0125]))  # grid spacing 1/80
    d = tasks.load_data(task, None, "cpu")
    assert (d.n_train, d.size("val"), d.size("test")) == (1640, 2460, 2461)  # 25% of 6561
    zero = d.evaluate(lambda x: torch.zeros(len(x), 1), "val")
    assert zero["mse"] == pytest.approx(float(d.y["val"].pow(2).mean()), rel=1e-6)
    assert zero["mse"] == pytest.approx(zero["rmse"] ** 2, rel=1e-6)
    assert 0.4 < zero["mse"] < 0.55  # E[g^2] = 1/4 + 1/4 on the unit square
    one = d.evaluate(lambda x: torch.ones(len(x), 1), "test")
    assert one["mse"] == pytest.approx(float((d.y["test"] - 1).pow(2).mean()), rel=1e-6)
    assert one["rmse"] == pytest.approx(one["mse"] ** 0.5, rel=1e-6)
    ones, zeros = torch.ones(2, 1), torch.zeros(2, 1)
    assert torch.nn.functional.mse_loss(ones, zeros) == task.loss(ones, zeros)


def test_sines_symmetric_domain_option():
    """domain "symmetric": the former [-1, 1]^2 grid (a deviation from the paper). g is
    1-periodic, so it is the unit square's function tiled four times."""
    sym = tasks.get_task("sines", {"domain": "symmetric"})
    pts, i, j = sym.points()
    assert pts.min() == -1 and pts.max() == 1 and torch.allclose(pts[1], torch.tensor([-1.0, -0.975]))
    g = sym.values(pts, i, j).view(81, 81)
    assert torch.allclose(g[:41, :41], g[40:, 40:], atol=1e-5)  # [-1, 0]^2 and [0, 1]^2 agree
    unit = tasks.get_task("sines")
    upts, ui, uj = unit.points()
    assert torch.allclose(g[40:, 40:], unit.values(upts, ui, uj).view(81, 81)[::2, ::2], atol=1e-5)
    with pytest.raises(UserError, match="domain must be one of unit, symmetric"):
        tasks.get_task("sines", {"domain": "square"})
    with pytest.raises(UserError, match="unknown option 'domain' for task checkerboard"):
        tasks.get_task("checkerboard", {"domain": "unit"})


@pytest.mark.parametrize(
    "task,family,config",
    [
        ("checkerboard", "han", {"width": 30, "depth": 10, "lr": 5e-3}),
        ("sines", "hourglass", {"d_z": 64, "d_h": 16, "L": 2, "lr": 5e-3}),
        ("checkerboard", "sw-mlp", {"width": 64, "L": 2, "p": 0.2, "lr": 5e-3}),
        ("sines", "fcnet", {"width": 60, "depth": 3, "orth_reg": 0.1, "lr": 5e-3}),
    ],
)
def test_training_runs_on_the_grid_tasks(task, family, config):
    """A few epochs learn a coarse 2 x 2 board and start on the sines (the default 12 x 12
    board takes hundreds of epochs: see benchmarks/reproductions/checkerboard_han_vs_mlp.py)."""
    options = {"board": 2} if task == "checkerboard" else {}
    result = tasks.run_trial(
        TrialSpec("t", 1, family, config, task, (0,), TrainSettings(epochs=8), task_options=options)
    )
    assert result.status == "complete", result.error
    m = result.runs[0].metrics
    if task == "checkerboard":
        assert m["accuracy"] > 0.8  # always answering 0 scores about 0.6
    else:
        assert m["mse"] < 0.47 and m["rmse"] == pytest.approx(m["mse"] ** 0.5)  # predicting 0: about 0.48
