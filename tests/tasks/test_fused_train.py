"""The fused trainer (tasks/fused_train.py): a trial's seeds, or several trials, trained as
one pack give each run the result it gets alone, up to rounding; each run stops on its own.

Tolerance: over 3 epochs of the tiny digits models here, a fused run's test metrics and
validation curve equal its alone run's to a relative 1e-5 (measured: about 1e-8 on
psnr; batched products sum in another order, and rounding differences grow with depth
and epochs: 1e-3 on a 40-block model after 3 epochs)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import models
import tasks
from core.trials import TrainSettings, TrialSpec, TrialStopped
from tasks.fused_train import PackRun, pack_key, train_pack, train_runs

REL = 1e-5
FAMILY_CASES = [
    ("hourglass", "digits-denoise", {"d_z": 96, "d_h": 8, "L": 2}),
    ("hourglass", "digits-sr", {"d_z": 80, "d_h": 4, "L": 3, "fixed_w_in": True}),
    ("conventional", "digits-classify", {"d_z": 16, "d_h": 48, "L": 2}),
    ("conventional-noproj", "digits-genclass", {"d_z": 64, "d_h": 80, "L": 1}),
    ("conventional-narrow", "digits-denoise", {"d_z": 12, "d_h": 40, "L": 2}),
    ("han", "digits-classify", {"width": 16, "depth": 4}),
    ("han", "digits-denoise", {"width": 64, "depth": 3, "input_layer": False}),
    ("han", "digits-classify", {"width": 10, "depth": 4, "dense_layers": "authors", "activation": "groupsort"}),
    ("fcnet", "digits-classify", {"width": 24, "depth": 3}),
    ("fcnet", "digits-genclass", {"width": 16, "depth": 2, "activation": "abs"}),
]


def spec(family="hourglass", task="digits-denoise", config=None, seeds=(0, 1, 2), number=3, **train) -> TrialSpec:
    train = {"epochs": 3, "device": "cpu", **train}
    return TrialSpec(
        "fused",
        number,
        family,
        dict(config or {"d_z": 96, "d_h": 8, "L": 2}),
        task,
        tuple(seeds),
        TrainSettings(**train),
    )


def assert_same_run(fused, alone):
    assert (fused.seed, fused.status, fused.best_epoch) == (alone.seed, alone.status, alone.best_epoch)
    assert set(fused.metrics) == set(alone.metrics)
    for name, value in alone.metrics.items():
        assert fused.metrics[name] == pytest.approx(value, rel=REL, abs=1e-9), name
    assert len(fused.epochs) == len(alone.epochs)
    for a, b in zip(fused.epochs, alone.epochs):
        assert a.train_loss == pytest.approx(b.train_loss, rel=REL)
        assert a.metrics == pytest.approx(b.metrics, rel=REL)


@pytest.mark.parametrize("family,task,config", FAMILY_CASES)
def test_a_trials_seeds_fused_equal_the_seeds_trained_alone(family, task, config):
    seen = []
    fused = tasks.run_trial(spec(family, task, config), on_epoch=lambda i, r: seen.append((i, r.epoch)))
    alone = tasks.run_trial(spec(family, task, config, fuse=False))
    assert pack_key(spec(family, task, config), tasks.get_task(task)) is not None
    assert fused.status == alone.status == "complete" and [r.seed for r in fused.runs] == [0, 1, 2]
    for f, a in zip(fused.runs, alone.runs):
        assert_same_run(f, a)
    assert seen == [(i, e) for e in (1, 2, 3) for i in (0, 1, 2)]  # in lock-step, each seed every epoch


def test_an_fcnets_orthogonal_penalty_is_each_seeds_own_as_alone():
    """The penalty (Yu & Zhang Sec. 4.2) enters each member's loss: fused equals alone, and
    both differ from the same net without it. A large penalty makes the training
    sensitive to rounding: relative 1e-4 here."""
    config = {"width": 24, "depth": 3, "orth_reg": 0.1, "activation": "abs"}
    fused = tasks.run_trial(spec("fcnet", "digits-classify", config))
    alone = tasks.run_trial(spec("fcnet", "digits-classify", config, fuse=False))
    plain = tasks.run_trial(spec("fcnet", "digits-classify", {**config, "orth_reg": 0.0}))
    for f, a, p in zip(fused.runs, alone.runs, plain.runs):
        assert [e.train_loss for e in f.epochs] == pytest.approx([e.train_loss for e in a.epochs], rel=1e-4)
        assert f.metrics == pytest.approx(a.metrics, rel=1e-4)
        assert f.epochs[0].train_loss > p.epochs[0].train_loss + 0.1  # the penalty counted


def test_a_pack_of_different_trials_keeps_each_ones_shape_learning_rate_and_seed():
    """Three trials of different widths, depths and learning rates in one pack."""
    task = tasks.get_task("digits-denoise")
    data = tasks.load_data(task, None, "cpu")
    specs = [
        spec(config={"d_z": 96, "d_h": 8, "L": 2, "lr": 1e-2}, seeds=(0,), number=1),
        spec(config={"d_z": 72, "d_h": 12, "L": 4, "lr": 3e-3}, seeds=(5,), number=2),
        spec(config={"d_z": 120, "d_h": 4, "L": 1, "lr": 1e-3, "weight_decay": 0.1}, seeds=(9,), number=3),
    ]
    assert len({pack_key(s, task) for s in specs}) == 1
    out = train_pack([PackRun(s, s.seeds[0], 0, None, s.number) for s in specs], task, data)
    for s, (run, tb) in zip(specs, out):
        assert tb is None
        assert_same_run(run, tasks.run_trial(s).runs[0])


def test_a_diverged_run_leaves_the_pack_and_the_others_go_on():
    task = tasks.get_task("digits-denoise")
    data = tasks.load_data(task, None, "cpu")
    good = spec(config={"d_z": 96, "d_h": 8, "L": 2, "lr": 1e-2}, seeds=(0,), number=1)
    bad = spec(config={"d_z": 96, "d_h": 8, "L": 2, "lr": 1e30}, seeds=(1,), number=2)
    out = train_pack([PackRun(good, 0, 0, None, 1), PackRun(bad, 1, 0, None, 2)], task, data)
    alone_bad = tasks.run_trial(bad).runs[0]
    assert out[1][0].status == alone_bad.status == "diverged"
    assert out[1][0].error == alone_bad.error  # the same epoch and step
    assert_same_run(out[0][0], tasks.run_trial(good).runs[0])


def test_a_pruned_first_seed_stops_its_trial_as_alone():
    """The pruner judges a trial on its first seed: stopped there, the trial is one pruned
    run, as alone (where the later seeds never start); another trial in the pack goes on."""
    task = tasks.get_task("digits-denoise")
    data = tasks.load_data(task, None, "cpu")

    def stop_at_two(index, record):
        if record.epoch == 2:
            raise TrialStopped("dominated at epoch 2")

    pruned, other = spec(number=1), spec(seeds=(7,), number=2)
    runs = [PackRun(pruned, s, i, stop_at_two, 1) for i, s in enumerate(pruned.seeds)] + [PackRun(other, 7, 0, None, 2)]
    out = train_pack(runs, task, data)
    assert out[0][0].status == "pruned" and out[0][0].error == "dominated at epoch 2" and len(out[0][0].epochs) == 2
    assert out[1] == (None, None) and out[2] == (None, None)
    assert out[3][0].status == "complete" and len(out[3][0].epochs) == 3
    result = tasks.run_trial(pruned, on_epoch=stop_at_two)
    alone = tasks.run_trial(
        dataclasses.replace(pruned, train=dataclasses.replace(pruned.train, fuse=False)), on_epoch=stop_at_two
    )
    assert [r.status for r in result.runs] == [r.status for r in alone.runs] == ["pruned"]
    assert result.status == alone.status == "pruned"


def test_an_error_in_on_epoch_leaves_run_trial():
    def boom(index, record):
        raise RuntimeError("the caller's own bug")

    with pytest.raises(RuntimeError, match="the caller's own bug"):
        tasks.run_trial(spec(), on_epoch=boom)


def test_kept_weights_are_each_seeds_own_best_state():
    kept = {}

    def keep(s, run, state):
        kept[run.seed] = state
        return {"key": f"seed-{run.seed}"}

    fused = tasks.run_trial(spec(), keep=keep)
    alone_kept = {}
    tasks.run_trial(spec(fuse=False), keep=lambda s, run, state: alone_kept.setdefault(run.seed, state) and {})
    assert [r.artifacts["weights"]["key"] for r in fused.runs] == ["seed-0", "seed-1", "seed-2"]
    for seed in (0, 1, 2):
        assert kept[seed].keys() == alone_kept[seed].keys()
        for name, value in alone_kept[seed].items():
            torch.testing.assert_close(kept[seed][name], value, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "change",
    [
        {"family": "mixer", "config": {"patch": 2, "d_c": 8, "d_s": 8, "L": 1}},  # a config the family refuses
        # a family that does not stack, on a device without ragged packs
        {"family": "mixer", "config": {"patch": 2, "S": 8, "C": 8, "L": 1}, "train": {"device": "cuda"}},
        {"train": {"optimizer": "sgd-step"}},
        {"train": {"ema": 0.9}},
        {"train": {"fuse": False}},
    ],
)
def test_who_trains_alone(change):
    s = spec(change.get("family", "hourglass"), config=change.get("config"), **change.get("train", {}))
    task = tasks.get_task(s.task)
    assert pack_key(s, task) is None or not s.train.fuse


def test_out_of_memory_halves_the_pack_and_says_so(monkeypatch, capsys):
    """A pack that does not fit trains as two halves (here: a pack over 2 runs 'does not fit')."""
    import tasks.fused_train as ft

    real = ft.train_pack

    def small_memory(runs, task, data):
        if len(runs) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(runs, task, data)

    monkeypatch.setattr(ft, "train_pack", small_memory)
    task = tasks.get_task("digits-denoise")
    s = spec(seeds=(0, 1, 2, 3, 4))
    out = train_runs(
        [PackRun(s, seed, i, None, 3) for i, seed in enumerate(s.seeds)], task, tasks.load_data(task, None, "cpu")
    )
    assert [run.seed for run, _ in out] == [0, 1, 2, 3, 4] and all(run.status == "complete" for run, _ in out)
    err = capsys.readouterr().err
    assert "pack of 5 runs out of device memory: training it as 2 + 3" in err
    assert "pack of 3 runs out of device memory: training it as 1 + 2" in err


@pytest.mark.parametrize("task", ["digits-denoise", "digits-sr", "digits-genclass", "digits-classify"])
def test_a_packs_batches_and_losses_are_each_members_own(task):
    """ImageData.train_batches gives each member what train_batch gives it (its examples,
    flips and noise from its own generator), and Task.member_losses each member's loss."""
    t = tasks.get_task(task)
    data = tasks.load_data(t, None, "cpu")
    idxs = [torch.randperm(data.n_train, generator=torch.Generator().manual_seed(s))[:17] for s in (1, 2, 3)]
    x, y = data.train_batches(idxs, [torch.Generator().manual_seed(s) for s in (4, 5, 6)])
    assert x.shape[:2] == (3, 17) and y.shape[:2] == (3, 17)
    for k, s in enumerate((4, 5, 6)):
        xk, yk = data.train_batch(idxs[k], torch.Generator().manual_seed(s))
        assert torch.equal(x[k], xk) and torch.equal(y[k], yk)
    pred = torch.randn(3, 17, t.io().d_out)
    want = torch.stack([t.loss(pred[k], y[k]) for k in range(3)])
    torch.testing.assert_close(t.member_losses(pred, y), want, rtol=1e-6, atol=1e-7)


def test_evaluation_without_the_packs_outputs_falls_back_to_each_member(monkeypatch):
    """With no room to keep the pack's outputs, each member evaluates with its own module:
    the same numbers."""
    import tasks.fused_train as ft

    kept = tasks.run_trial(spec())
    monkeypatch.setattr(ft, "EVAL_CACHE_ELEMENTS", 0)
    own = tasks.run_trial(spec())
    for a, b in zip(kept.runs, own.runs):
        assert_same_run(a, b)


def test_the_reasons_a_packs_trials_train_alone_are_said():
    from tasks.fused_train import alone_reasons

    task = tasks.get_task("digits-classify")
    assert alone_reasons(["hourglass", "conventional"], TrainSettings(), task) == []
    assert alone_reasons(["han", "sw-mlp"], TrainSettings(device="cpu"), task) == []  # ragged packs
    lines = alone_reasons(["han", "sw-mlp"], TrainSettings(device="cuda"), task)
    assert lines == [
        "family 'han' fuses identical shapes only: trials that differ only in lr or weight decay",
        "family 'sw-mlp' does not fuse: its trials train one at a time",
    ]
    assert alone_reasons(["hourglass"], TrainSettings(ema=0.9, optimizer="sgd-step"), task) == [
        "--ema: runs train one at a time",
        "optimizer sgd-step: runs train one at a time (packs train with adamw, adamw-uvit)",
    ]
    assert alone_reasons(["hourglass"], TrainSettings(fuse=False), task) == ["--fuse off: every run trains alone"]
    lm = tasks.get_task("lm-shakespeare")
    assert any("its own trainer" in line for line in alone_reasons(["transformer"], TrainSettings(), lm))
    # every family that says it fuses has a fused model, and the others none
    import models

    for name in models.FAMILIES.names():
        family = models.get_family(name)
        overridden = type(family).fusion_key is not models.base.Family.fusion_key
        assert (family.fuses is not None) == overridden, name


# -- packs without padding (models/ragged_pack.py) -------------------------------------
RAGGED = [  # different shapes and families, one that does not stack (mixer)
    ("hourglass", {"d_z": 96, "d_h": 8, "L": 2, "lr": 1e-2}, 0),
    ("conventional", {"d_z": 40, "d_h": 60, "L": 3, "lr": 3e-3}, 5),
    ("hourglass", {"d_z": 120, "d_h": 4, "L": 1, "lr": 1e-3, "weight_decay": 0.1}, 9),
    ("mixer", {"patch": 2, "S": 8, "C": 8, "L": 1}, 3),
]


def ragged_specs(rows=RAGGED):
    return [spec(family, config=config, seeds=(seed,), number=i + 1) for i, (family, config, seed) in enumerate(rows)]


def test_runs_of_different_shapes_and_families_pack_without_padding_and_equal_alone():
    """On the CPU, runs of any shapes and families share a pack, each member its own module
    and optimiser group: its weights and metrics equal the run trained alone to the last
    bit (the same operations in the same order, the same random draws); its mean
    training loss to rounding (averaged over a table of every member's steps)."""
    from models.ragged_pack import RaggedPack
    from tasks.fused_train import _Pack

    task = tasks.get_task("digits-denoise")
    data = tasks.load_data(task, None, "cpu")
    specs = ragged_specs()
    assert len({pack_key(s, task) for s in specs}) == 1
    runs = [PackRun(s, s.seeds[0], 0, None, s.number) for s in specs]
    assert isinstance(_Pack(runs, task, data).fused, RaggedPack)
    for s, (run, tb) in zip(specs, train_pack(runs, task, data)):
        alone = tasks.run_trial(s).runs[0]
        assert tb is None and run.status == alone.status == "complete"
        assert run.metrics == alone.metrics
        assert [e.metrics for e in run.epochs] == [e.metrics for e in alone.epochs]
        assert [e.train_loss for e in run.epochs] == pytest.approx([e.train_loss for e in alone.epochs], rel=1e-6)


def test_which_form_a_pack_takes():
    """A trial's seeds of a family that stacks: its stacked model (nothing is padded);
    different shapes, or a family that does not stack: a pack without padding."""
    from models.ragged_pack import RaggedPack
    from tasks.fused_train import _Pack

    task = tasks.get_task("digits-denoise")
    data = tasks.load_data(task, None, "cpu")

    def form(specs):
        return _Pack([PackRun(s, seed, i, None, s.number) for s in specs for i, seed in enumerate(s.seeds)], task, data)

    assert not isinstance(form([spec()]).fused, RaggedPack)
    assert isinstance(form([spec("mixer", config={"patch": 2, "S": 8, "C": 8, "L": 1})]).fused, RaggedPack)
    assert isinstance(form(ragged_specs(RAGGED[:1] + RAGGED[2:3])).fused, RaggedPack)


def test_a_diverged_or_pruned_run_leaves_a_pack_without_padding():
    task = tasks.get_task("digits-denoise")
    data = tasks.load_data(task, None, "cpu")
    rows = [RAGGED[0], ("conventional", {"d_z": 40, "d_h": 60, "L": 3, "lr": 1e30}, 5), RAGGED[3]]
    good, bad, pruned = ragged_specs(rows)

    def stop_at_two(index, record):
        if record.epoch == 2:
            raise TrialStopped("dominated at epoch 2")

    runs = [PackRun(good, 0, 0, None, 1), PackRun(bad, 5, 0, None, 2), PackRun(pruned, 3, 0, stop_at_two, 3)]
    out = train_pack(runs, task, data)
    alone_bad = tasks.run_trial(bad).runs[0]
    assert out[1][0].status == alone_bad.status == "diverged" and out[1][0].error == alone_bad.error
    assert out[2][0].status == "pruned" and len(out[2][0].epochs) == 2
    assert out[0][0].metrics == tasks.run_trial(good).runs[0].metrics


def test_a_task_whose_inputs_are_not_one_tensor_packs_no_ragged_runs():
    task = tasks.get_task("digits-diffusion")
    assert not task.ragged_packs
    s = spec("uvit", task="digits-diffusion", config={"D": 64, "depth": 1, "patch": 4})
    models.get_family("uvit").parse(s.config, task.io())  # a config the family takes
    assert pack_key(s, task) is None


def ragged_families():
    """Every built-in family whose default task trains with the supervised trainer on
    inputs of one tensor (those that can share a pack without padding)."""
    out = []
    for name in models.FAMILIES.names():
        t = tasks.get_task(models.get_family(name).default_task)
        if t.trainer == "supervised" and t.ragged_packs:
            out.append(name)
    return out


@pytest.mark.parametrize("family", ragged_families())
def test_each_familys_drawn_shapes_pack_without_padding_and_equal_alone(family):
    """Two shapes drawn from the family's default space (random sampler) train as one pack
    on the CPU, and each gives exactly what it gives alone."""
    import optuna

    from search.engine.sampling.optuna_draw import TrialDraw
    from search.spaces import Infeasible, default_space, min_params, suggest_config

    task = tasks.get_task("digits-classify")
    io, fam = task.io(), models.get_family(family)
    space = default_space(family, io)
    count = lambda c: fam.count_params(c, io)  # noqa: E731
    budget = max(4 * min_params(space, io, count), 20_000)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    configs = []
    while len(configs) < 2:
        t = study.ask()
        cfg = suggest_config(space, io, budget, count, TrialDraw(t, family))
        study.tell(t, 0.0)
        if not isinstance(cfg, Infeasible) and cfg not in configs:
            configs.append(cfg)
    specs = [
        spec(family, "digits-classify", c, seeds=(i,), number=i + 1, epochs=1, max_train_samples=128, batch_size=32)
        for i, c in enumerate(configs)
    ]
    assert len({pack_key(s, task) for s in specs}) == 1
    data = tasks.load_data(task, None, "cpu")
    out = train_pack([PackRun(s, s.seeds[0], 0, None, s.number) for s in specs], task, data)
    for s, (run, tb) in zip(specs, out):
        alone = tasks.run_trial(s).runs[0]
        assert tb is None and run.status == alone.status == "complete", tb
        assert run.metrics == alone.metrics  # the same weights to the last bit
        # the epoch's mean loss is summed over a (members, steps) table: rounding only
        assert [e.train_loss for e in run.epochs] == pytest.approx([e.train_loss for e in alone.epochs], rel=1e-6)
