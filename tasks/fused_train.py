"""Train a pack of supervised runs in lock-step, as one program (issues 62 and 81).

A run is one seed of one trial. Runs whose `pack_key`s are equal (a family's fusion key,
or "ragged" on a device of RAGGED_DEVICES, where any families share a pack; task,
epochs, batch size, training samples, optimiser, device) train together: their models
are built exactly as alone (`torch.manual_seed(seed)`, then `family.build`), then joined
(`fuse_members`): stacked by the family (`Family.fuse`, models/fused.py) where they are of
one family that stacks and, on a CPU, of one shape; otherwise as a `RaggedPack`
(models/ragged_pack.py), each member its own module, nothing padded. Each run keeps what
makes it itself:
    its initialisation, its data order and noise (its own generator, drawn in the same
    order as alone), its learning rate and weight decay (per-member AdamW,
    tasks/optimizers.py: StackedAdamW, or GroupedAdamW for a RaggedPack), its own loss
    (the pack's loss is the sum of the members' losses, so each member's gradient is its
    own), its random draws (a RaggedPack's streams), its non-finite check, its
    evaluations, its test-at-best-validation state (BestValidation, on the member module
    the family built) and its stopping: a diverged, pruned or failed run leaves the pack
    (its rate becomes 0 and its result is final; a RaggedPack no longer runs it) while
    the others go on.
A stacked run's metrics equal those of the same run trained alone up to floating-point
rounding (batched matrix products sum in another order); a RaggedPack's member's weights
and metrics equal them exactly. tests/tasks/test_fused_train.py states the tolerance
per family.

The pack shares one clock: a run's `duration_s` and epoch times are the pack's.

`train_runs` splits a pack that does not fit: on a CUDA out-of-memory error it says so on
stderr, halves the pack and trains each half.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import torch

import models
from core.errors import one_line
from core.trials import EpochRecord, RunResult, TrialSpec, TrialStopped
from models.ragged_pack import RaggedPack, capture_rng
from tasks.base import Task
from tasks.loading import device_type
from tasks.optimizers import FUSED_OPTIMIZERS, GroupedAdamW, StackedAdamW
from tasks.train import GPU_CHECK_EVERY, BestValidation, Hyper, OnEpoch, RunLog, _CallbackError, batch_bounds, evaluate

Outcome = tuple["RunResult | None", "str | None"]  # a run's result (None: dropped) and traceback


@dataclass
class PackRun:
    """One run of a pack: `on_epoch(index, record)` after each of its epochs; runs of one
    `group` (a trial's seeds) stop together when one of them is pruned, as a trial trained
    alone stops at its pruned seed and never trains the later ones."""

    spec: TrialSpec
    seed: int
    index: int
    on_epoch: OnEpoch | None = None
    group: Hashable = None


# Device types on which runs of different shapes (or of a family that does not stack)
# pack without padding, each member its own module (models/ragged_pack.py): where that
# measured faster than one run after another (docs/benchmarks.md, "Packs without
# padding"). Elsewhere a pack is one family's stacked model (`Family.fuse`), as before.
RAGGED_DEVICES = frozenset({"cpu"})


def packs_raggedly(device: str | None, task: Task) -> bool:
    """Whether runs of `task` on `device` (a setting: "auto", "cpu", "cuda:1") pack
    without padding, whatever their families and shapes."""
    return device_type(device) in RAGGED_DEVICES and task.ragged_packs


def pack_key(spec: TrialSpec, task: Task) -> Hashable | None:
    """What runs must share to train as one pack, or None when this run trains alone: the
    supervised trainer, no --ema or --compile, an optimiser of FUSED_OPTIMIZERS, and
    either a device of RAGGED_DEVICES and a task whose runs pack raggedly
    (`Task.ragged_packs`), where runs of any valid configuration of any family pack, or a
    family that stacks (`Family.fusion_key`); None also for a config the family refuses,
    so that the run fails alone with its own message."""
    try:
        hyper = Hyper.resolve(spec, task)
        family = models.get_family(spec.family)
        family.parse(spec.config, task.io())
        fusion = family.fusion_key(spec.config, task.io())
    except Exception:  # a bad config or setting: the run trains alone and fails with its message
        return None
    if _settings_alone(spec.train, task, hyper.optimizer):
        return None
    if packs_raggedly(spec.train.device, task):
        fusion = "ragged"
    elif fusion is None:
        return None
    return (
        fusion,
        spec.task,
        repr(sorted(spec.task_options.items())),
        spec.data_dir,
        spec.train.device,
        hyper.epochs,
        hyper.batch_size,
        hyper.max_train_samples,
        hyper.optimizer,
    )


def fuse_members(
    runs: list[PackRun], members: list[torch.nn.Module], io: Any, states: list, device: torch.device
) -> torch.nn.Module:
    """The pack's model: the family's stacked one (`Family.fuse`) where every member is of
    one family with one fusion key and, on a device of RAGGED_DEVICES, of identical
    parameter shapes (nothing padded: a trial's seeds); otherwise a RaggedPack of the
    members as they are, each with its random stream (`states`)."""
    names = {r.spec.family for r in runs}
    if len(names) == 1:
        family = models.get_family(names.pop())
        keys = {family.fusion_key(r.spec.config, io) for r in runs}
        shapes = {tuple(tuple(p.shape) for p in m.parameters()) for m in members}
        if None not in keys and len(keys) == 1 and (device.type not in RAGGED_DEVICES or len(shapes) == 1):
            return family.fuse(members, [r.spec.config for r in runs], io)
    return RaggedPack(members, states)


def _settings_alone(train: Any, task: Task, optimizer: str) -> list[str]:
    """The training settings that keep a run out of any pack, one line each: a trainer of
    the task's own, --ema, --compile, an optimiser the fused trainer does not run."""
    why = []
    if task.trainer != "supervised":
        why.append(f"task {task.name!r} has its own trainer ({task.trainer}): its runs train one at a time")
    for flag, on in (("--ema", train.ema), ("--compile", train.compile)):
        if on:
            why.append(f"{flag}: runs train one at a time")
    if optimizer not in FUSED_OPTIMIZERS:
        why.append(f"optimizer {optimizer}: runs train one at a time (packs train with {', '.join(FUSED_OPTIMIZERS)})")
    return why


def alone_reasons(families: list[str], train: Any, task: Task) -> list[str]:
    """Why trials of these families, with these training settings, would not share a pack
    (`--pack K`): one line per reason, none where they can. `pack_key`'s rules
    (`_settings_alone`), said without a configuration."""
    if not train.fuse:
        return ["--fuse off: every run trains alone"]
    why = _settings_alone(train, task, train.optimizer or task.defaults.optimizer)
    if packs_raggedly(train.device, task):
        return why
    for name in families:
        kind = models.get_family(name).fuses
        if kind is None:
            why.append(f"family {name!r} does not fuse: its trials train one at a time")
        elif kind == "identical shapes":
            why.append(f"family {name!r} fuses identical shapes only: trials that differ only in lr or weight decay")
    return why


class _Pack:
    """The state of a pack in training: members, generators, optimiser, results."""

    def __init__(self, runs: list[PackRun], task: Task, data: Any) -> None:
        self.runs, self.task, self.data = runs, task, data
        self.device = data.device
        self.hypers = [Hyper.resolve(r.spec, task) for r in runs]
        self.logs = [RunLog(r.seed) for r in runs]
        self.outcomes: list[Outcome | None] = [None] * len(runs)  # set when a run ends
        io = task.io()
        self.members, states = [], []
        for r in runs:  # each member built by its own family, exactly as alone
            torch.manual_seed(r.seed)
            self.members.append(models.get_family(r.spec.family).build(r.spec.config, io, seed=r.seed).to(self.device))
            states.append(capture_rng(self.device))  # its random stream goes on from here
        self.generators = [torch.Generator(device=self.device).manual_seed(r.seed) for r in runs]
        self.fused = fuse_members(runs, self.members, io, states, self.device).to(self.device)
        h = self.hypers[0]
        self.n_train = min(data.n_train, h.max_train_samples or data.n_train)
        self.bounds = batch_bounds(self.n_train, h.batch_size)
        total = len(self.bounds) * h.epochs
        rule = FUSED_OPTIMIZERS[h.optimizer]
        self.schedule = rule.schedule(total, round(task.defaults.warmup * total))
        if isinstance(self.fused, RaggedPack):
            self.optimizer: GroupedAdamW | StackedAdamW = GroupedAdamW(
                self.fused.member_parameters(),
                [x.lr for x in self.hypers],
                [x.weight_decay for x in self.hypers],
                rule.betas,
            )
        else:
            as_tensor = lambda values: torch.tensor(values, dtype=torch.float32, device=self.device)  # noqa: E731
            self.optimizer = StackedAdamW(
                self.fused.stacked(),
                as_tensor([x.lr for x in self.hypers]),
                as_tensor([x.weight_decay for x in self.hypers]),
                rule.betas,
            )
        self.best = [BestValidation(task) for _ in runs]
        self.regularizer = getattr(self.fused, "member_regularization", None)  # () -> (K,) or None
        self.check_every = 1 if self.device.type == "cpu" else GPU_CHECK_EVERY

    def active(self) -> list[int]:
        return [k for k, o in enumerate(self.outcomes) if o is None]

    def end(self, k: int, result: RunResult | None, tb: str | None = None) -> None:
        self.outcomes[k] = (result, tb)
        if isinstance(self.fused, RaggedPack):  # a member that has left is not run again
            self.fused.set_live(self.active())

    def epoch(self, epoch: int) -> list[torch.Tensor | None]:
        """One epoch of every active member in lock-step; each member's per-step losses
        (None for a member that ended during the epoch)."""
        live = self.active()
        perms = {k: torch.randperm(self.n_train, generator=self.generators[k], device=self.device) for k in live}
        losses = torch.empty(len(self.runs), len(self.bounds), device=self.device)
        step0 = (epoch - 1) * len(self.bounds)
        checked = 0
        self.fused.train()
        for step, (start, stop) in enumerate(self.bounds):
            inputs, targets = self._batches([perms[k][start:stop] for k in live], live)
            pred = self.fused(inputs)
            member_losses = self.task.member_losses(pred if len(live) == len(self.runs) else pred[live], targets)
            penalty = self.regularizer() if self.regularizer is not None else None
            if penalty is not None:  # each member's own term, as the alone trainer adds `regularization()`
                member_losses = member_losses + (penalty if len(live) == len(self.runs) else penalty[live])
            self.optimizer.zero_grad()
            member_losses.sum().backward()
            self.optimizer.step_members(self.schedule(step0 + step), live)
            losses[live, step] = member_losses.detach()
            if (step + 1) % self.check_every == 0 or step + 1 == len(self.bounds):
                finite = torch.isfinite(losses[live, checked : step + 1])
                if not bool(finite.all()):
                    for row, k in enumerate(list(live)):
                        bad = (~finite[row]).nonzero()
                        if len(bad):
                            where = f"non-finite loss at epoch {epoch} step {checked + int(bad[0, 0]) + 1}"
                            self.end(k, self.logs[k].result("diverged", where))
                    live = self.active()
                    if not live:
                        break
                checked = step + 1
        sizes = torch.tensor([b - a for a, b in self.bounds], device=self.device, dtype=losses.dtype)
        means = (losses * sizes).sum(dim=1) / sizes.sum()
        return [means[k] if self.outcomes[k] is None else None for k in range(len(self.runs))]

    def _batches(self, idxs: list[torch.Tensor], live: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """The live members' batches: inputs for every member (zeros for one that ended:
        its rate is 0, so it does not move), targets of the live ones, member axis first."""
        generators = [self.generators[k] for k in live]
        if hasattr(self.data, "train_batches"):  # all members in one pass (tasks/images.py)
            x, y = self.data.train_batches(idxs, generators)
        else:
            pairs = [self.data.train_batch(i, g) for i, g in zip(idxs, generators)]
            x, y = torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])
        if len(live) == len(self.runs):
            return x, y
        inputs = x.new_zeros((len(self.runs), *x.shape[1:]))
        inputs[live] = x
        return inputs, y

    def observe(self, epoch: int, means: list[torch.Tensor | None]) -> None:
        """After an epoch: each active member's evaluation, best state and on_epoch."""
        self.fused.write_members()
        metrics = self.evaluate_all("val")
        for k in self.active():
            if self.outcomes[k] is not None:  # dropped by a pruned run of its group above
                continue
            run, log = self.runs[k], self.logs[k]
            record = EpochRecord(epoch, float(means[k]), metrics[k], log.elapsed())
            log.epochs.append(record)
            try:
                self.best[k].observe(self.members[k], record, run.index, run.on_epoch)
            except _CallbackError as e:
                if not isinstance(e.original, TrialStopped):
                    raise
                self.end(k, log.result("pruned", str(e.original)))
                for j in self.active():  # the trial's later seeds are never trained alone
                    if self.runs[j].group == run.group:
                        self.end(j, None)

    def evaluate_all(self, split: str) -> dict[int, dict[str, float]]:
        """Each active member's metrics on a split, from one fused forward per evaluation
        batch: the first member's evaluation runs the pack on each batch (every member
        sees the same inputs) and keeps the outputs, up to EVAL_CACHE_ELEMENTS values;
        the others' evaluations read theirs when their batch is the same (checked), and
        run their own module otherwise (a data set whose evaluation draws new inputs)."""
        live = self.active()
        cache: list[tuple[torch.Tensor, torch.Tensor]] = []
        kept = 0

        def first(x: torch.Tensor) -> torch.Tensor:
            nonlocal kept
            y = self.fused(x.unsqueeze(0).expand(len(self.runs), *x.shape))
            if kept + y.numel() <= EVAL_CACHE_ELEMENTS:
                cache.append((x, y))
                kept += y.numel()
            return y[live[0]]

        def other(k: int):
            calls = iter(range(len(cache) + 10**9))

            def predict(x: torch.Tensor) -> torch.Tensor:
                i = next(calls)
                if i < len(cache) and cache[i][0].shape == x.shape and torch.equal(cache[i][0], x):
                    return cache[i][1][k]
                return self.members[k](x)

            return predict

        was = self.fused.training
        self.fused.eval()
        try:
            out = {live[0]: evaluate(self.members[live[0]], self.data, split, first)}
            for k in live[1:]:
                out[k] = evaluate(self.members[k], self.data, split, other(k))
        finally:
            self.fused.train(was)
        return out

    def finish(self) -> None:
        for k in self.active():
            self.end(
                k, self.best[k].finish(self.members[k], self.data, self.logs[k].result, "epoch", self.runs[k].seed)
            )


# The most output values a pack's evaluation keeps for its other members (256 MB in fp32).
EVAL_CACHE_ELEMENTS = 2**26


def train_pack(runs: list[PackRun], task: Task, data: Any) -> list[Outcome]:
    """Train `runs` (equal `pack_key`s) as one pack; each run's (result or None, traceback).
    Exceptions raised by a caller's on_epoch (other than TrialStopped) leave as
    `_CallbackError`; a CUDA out-of-memory error leaves as is (see `train_runs`); any other
    error fails every run still training, with its one-line message."""
    pack: _Pack | None = None
    try:
        pack = _Pack(runs, task, data)
        epochs = pack.hypers[0].epochs
        for epoch in range(1, epochs + 1):
            means = pack.epoch(epoch)
            if not pack.active():
                break
            pack.observe(epoch, means)
        pack.finish()
        return [o if o is not None else (None, None) for o in pack.outcomes]
    except (_CallbackError, torch.cuda.OutOfMemoryError):
        raise
    except Exception as e:
        message, tb = one_line(e, with_type=True), traceback.format_exc()
        if pack is None:
            return [(RunLog(r.seed).result("failed", message), tb) for r in runs]
        for k in pack.active():
            pack.end(k, pack.logs[k].result("failed", message), tb)
        return [o if o is not None else (None, None) for o in pack.outcomes]


def train_runs(runs: list[PackRun], task: Task, data: Any) -> list[Outcome]:
    """`train_pack`, halving a pack that runs out of device memory (said on stderr)."""
    try:
        return train_pack(runs, task, data)
    except torch.cuda.OutOfMemoryError:
        if len(runs) == 1:
            raise
        torch.cuda.empty_cache()
        half = len(runs) // 2
        print(
            f"pack of {len(runs)} runs out of device memory: training it as {half} + {len(runs) - half}",
            file=sys.stderr,
            flush=True,
        )
        return train_runs(runs[:half], task, data) + train_runs(runs[half:], task, data)
