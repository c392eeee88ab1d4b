"""Class-conditional diffusion tasks: `mnist-diffusion` and `digits-diffusion`.

DDPM (Ho et al., 2020) with epsilon prediction: x_t = sqrt(ab_t) x_0 + sqrt(1 - ab_t) eps,
t uniform over T = 1000 noise steps (linear betas 1e-4..0.02 by default, option
`schedule=cosine`), images scaled to [-1, 1], the loss the MSE between predicted and true
noise. Class-conditional with the class replaced by the "no class" label (index
num_classes) 10% of the time (option `cond_drop`), so one model serves conditional and
unconditional predictions for classifier-free guidance (Ho & Salimans, 2022), as in U-ViT
and the L-MLP authors' code. Models are called model(x_t, t, y) (IOSpec output "noise").

Searched metric, `loss` (minimised): the validation denoising loss averaged over
`eval_levels` noise levels t_k = floor((k + 1/2) T / K), on the first `eval_images`
images of the split, with noise fixed by seeds (the same for every epoch, trial and
device), conditional on the true class. It is cheap and comparable across trials; test
`loss` is the same on the test split, at the best validation epoch.

Sample quality (after training, on the kept best-validation state; not searched):
`samples` images (labels 0..9 in turn) from a deterministic DDIM sampler (Song et al.,
2021, eta = 0) with `sample_steps` steps and classifier-free guidance `guidance`
(eps = eps_c + w (eps_c - eps_u), U-ViT's convention), started from the same seeded noise
in every trial. A small CNN classifier, trained once per data set and cached
(tasks/diffusion/classifier.py), scores them: `sample_accuracy` (argmax == requested
class) and `frechet`, the Fréchet distance between its penultimate features of the
samples and of the real test images (FID's formula on this classifier's features, not
Inception's; biased upwards at small sample counts: compare at equal `samples`). The
first 100 samples are stored as a PNG grid (run artifact "samples", one column per class).

Training: the supervised trainer (tasks/train.py): AdamW, a linear warm-up over the first
5% of the steps (U-ViT warms up too), then a linear decay to 0; test at best validation.
Ours by default, not the paper's (Hu & Rostami Table 5, from U-ViT: AdamW lr 2e-4, betas
(0.9, 0.9), weight decay 0.03, a constant rate after a 5k-step warm-up, and an EMA of the
weights): our runs are a few thousand steps on a CPU. `--optimizer adamw-uvit`
(tasks/optimizers.py) is the paper's optimiser and schedule, which the hu recipes set;
`--ema DECAY` the EMA of the weights (tasks/train.py: WeightAverage, U-ViT's 0.9999 in the
paper-scale recipe), with which validation, the kept state and the sample quality below
are measured, as U-ViT samples from its EMA model. Weight decay 0.03 as U-ViT.

Options (`--task-option k=v`): split_seed, schedule (linear|cosine), cond_drop (0.1),
guidance (1.0), sample_steps (50), samples (200; 0 turns sample quality off),
eval_images (1000), eval_levels (10).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from core.errors import UserError
from core.io import IOSpec
from tasks.base import TrainDefaults
from tasks.by_name import TASKS
from tasks.datasets import ImageSplits
from tasks.image_tasks import DigitsImages, MnistImages
from tasks.images import EVAL_CHUNK, ImageTask, as_float, eval_noise
from tasks.sample_png import grid_png, png_artifact

T_STEPS = 1000
SAMPLE_SEED = 20260  # the start noise of the sampler: the same in every trial
GRID_IMAGES = 100
MAX_EVAL_CACHE = 64 * 2**20  # bytes of fixed evaluation noise kept on the device


def to_model_scale(x: torch.Tensor) -> torch.Tensor:
    """Images (uint8 0..255 or float [0, 1]) -> float32 in [-1, 1]."""
    return as_float(x).mul(2.0).sub_(1.0)


def eval_timesteps(levels: int, T: int = T_STEPS) -> list[int]:
    """The fixed noise levels of the validation loss: floor((k + 1/2) T / K), k < K."""
    return [int((k + 0.5) * T / levels) for k in range(levels)]


class DiffusionData:
    """One image data set on a device, for DDPM training and its fixed-seed evaluation.

    Trainer interface: `n_train`, `train_batch(idx, generator) -> ((x_t, t, y), noise)`,
    `evaluate(model, split) -> {"loss": ...}`.
    """

    def __init__(self, task: DiffusionTask, splits: ImageSplits, device: torch.device) -> None:
        from tasks.diffusion import SCHEDULES

        self.task = task
        self.device = torch.device(device)
        self.x, self.y = splits.on(self.device)
        self.num_classes = splits.num_classes
        self.schedule = SCHEDULES[task.options["schedule"]](T_STEPS)
        self.alpha_bar = self.schedule.alpha_bar.to(self.device, torch.float32)
        self._eval_noise: dict[str, torch.Tensor] = {}
        self.classifier = None
        if task.options["samples"] > 0:
            from tasks.diffusion import load_classifier

            self.classifier = load_classifier(
                f"{task.dataset}-split{task.options['split_seed']}",
                splits.train_x,
                splits.train_y,
                splits.test_x,
                splits.test_y,
                self.device,
            )

    @property
    def n_train(self) -> int:
        return len(self.x["train"])

    def noisy(self, x0: torch.Tensor, t: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        """q(x_t | x_0) for t (B,) int64 on the device: the schedule's q_sample without its
        host-side range check (a device sync per training step)."""
        from tasks.diffusion import noisy_mix

        return noisy_mix(x0, noise, self.alpha_bar[t])

    def train_batch(
        self, idx: torch.Tensor, generator: torch.Generator
    ) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """((x_t, t, y), noise) for training images `idx`: t uniform in [0, T), fresh
        noise, and each label replaced by "no class" with probability cond_drop."""
        x0 = to_model_scale(self.x["train"][idx])
        b = len(x0)
        t = torch.randint(0, T_STEPS, (b,), generator=generator, device=self.device)
        noise = torch.randn(x0.shape, generator=generator, device=self.device)
        drop = torch.rand(b, generator=generator, device=self.device) < float(self.task.options["cond_drop"])
        y = torch.where(drop, torch.full_like(self.y["train"][idx], self.num_classes), self.y["train"][idx])
        return (self.noisy(x0, t, noise), t.float(), y), noise

    def eval_size(self, split: str) -> int:
        return min(int(self.task.options["eval_images"]), len(self.x[split]))

    def fixed_noise(self, split: str, start: int, stop: int) -> torch.Tensor:
        """Fixed noise (n, K, C, H, W) of evaluation images start..stop (seeded by split
        and chunk on the CPU: the same on every device), kept on the device when small."""
        levels = int(self.task.options["eval_levels"])
        shape = (levels, *self.x[split].shape[1:])
        n = self.eval_size(split)
        if n * math.prod(shape) * 4 <= MAX_EVAL_CACHE:
            if split not in self._eval_noise:
                self._eval_noise[split] = eval_noise(split, 0, n, shape).to(self.device)
            return self._eval_noise[split][start:stop]
        return eval_noise(split, start, stop, shape).to(self.device)

    def evaluate(self, model: Any, split: str, batch_size: int = EVAL_CHUNK) -> dict[str, float]:
        """The denoising loss averaged over the fixed noise levels (call in inference mode)."""
        levels = eval_timesteps(int(self.task.options["eval_levels"]))
        n = self.eval_size(split)
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for start in range(0, n, batch_size):
            stop = min(start + batch_size, n)
            x0 = to_model_scale(self.x[split][start:stop])
            y = self.y[split][start:stop]
            noise = self.fixed_noise(split, start, stop)
            for k, level in enumerate(levels):
                t = torch.full((stop - start,), level, device=self.device)
                eps = noise[:, k]
                pred = model(self.noisy(x0, t, eps), t.float(), y)
                total += F.mse_loss(pred.float(), eps, reduction="sum").double()
        per_value = n * len(levels) * math.prod(self.x[split].shape[1:])
        return {"loss": float(total / per_value)}

    # -- sample quality ----------------------------------------------------------------
    def sample(self, model: Any, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """n images in [0, 1] for labels 0, 1, ..., K-1, 0, ... from the DDIM sampler."""
        from tasks.diffusion import ddim_sample

        o = self.task.options
        labels = torch.arange(n, device=self.device) % self.num_classes
        generator = torch.Generator(device=self.device).manual_seed(SAMPLE_SEED)
        x = ddim_sample(
            model,
            self.schedule,
            labels,
            (n, *self.x["test"].shape[1:]),
            steps=int(o["sample_steps"]),
            guidance=float(o["guidance"]),
            null_label=self.num_classes,
            generator=generator,
            device=self.device,
        )
        return x.add(1).div_(2).clamp_(0, 1), labels


class DiffusionTask(ImageTask):
    """Class-conditional DDPM on an image data set (see the module docstring)."""

    metric = "loss"
    direction = "minimize"
    metrics: ClassVar[tuple[str, ...]] = ("loss", "sample_accuracy", "frechet")
    ragged_packs = False  # inputs are (x_t, t, y): runs train alone
    dataset: ClassVar[str]
    num_classes: ClassVar[int] = 10
    own_options: ClassVar[dict[str, Any]] = {
        "schedule": "linear",
        "cond_drop": 0.1,
        "guidance": 1.0,
        "sample_steps": 50,
        "samples": 200,
        "eval_images": 1000,
        "eval_levels": 10,
    }

    def _check_options(self) -> None:
        super()._check_options()
        from tasks.diffusion import SCHEDULES

        o = self.options
        if o["schedule"] not in SCHEDULES:
            raise UserError(f"schedule must be one of {', '.join(SCHEDULES)}, got {o['schedule']!r}")
        for key, low, high in (
            ("sample_steps", 1, T_STEPS),
            ("samples", 0, None),
            ("eval_images", 1, None),
            ("eval_levels", 1, T_STEPS),
        ):
            v = o[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high):
                limit = f"between {low} and {high}" if high is not None else f">= {low}"
                raise UserError(f"{key} must be an integer {limit}, got {v!r}")
        for key, low, high in (("cond_drop", 0.0, 1.0), ("guidance", 0.0, math.inf)):
            v = o[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v < high or v != v:
                raise UserError(f"{key} must be a number in [{low}, {high}), got {v!r}")

    def io(self) -> IOSpec:
        c, h, w = self.image_shape
        return IOSpec(c * h * w, c * h * w, "noise", (c, h, w), (c, h, w), self.num_classes)

    def loss(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(pred, target)

    def load(self, data_dir: str | None, device: Any) -> DiffusionData:
        return DiffusionData(self, self.load_splits(data_dir), torch.device(device))

    def after_run(self, model: Any, data: DiffusionData, seed: int) -> tuple[dict[str, float], dict[str, Any]]:
        """Sample quality of the kept model and the PNG grid of its first samples."""
        n = int(self.options["samples"])
        if n == 0 or data.classifier is None:
            return {}, {}
        from tasks.diffusion import sample_quality

        images, labels = data.sample(model, n)
        mu, cov = data.classifier.real_stats(data.x["test"])
        quality = sample_quality(data.classifier, images, labels, mu, cov)
        grid = grid_png(images[:GRID_IMAGES], columns=self.num_classes)
        return dict(quality), {"samples": png_artifact(grid)}


@TASKS.register("mnist-diffusion")
class MnistDiffusion(DiffusionTask, MnistImages):
    name = "mnist-diffusion"
    description = "MNIST class-conditional DDPM (eps prediction, CFG): validation denoising loss, sample quality"
    dataset = "mnist"
    # Ours, for CPU-sized runs (U-ViT trains 500k steps at batch 128, lr 2e-4 after a
    # 5k-step warm-up): batch 128, AdamW lr 1e-3 with a linear warm-up over the first 5%
    # of the steps, then decayed linearly to 0; weight decay 0.03 (U-ViT's).
    defaults = TrainDefaults(epochs=10, batch_size=128, lr=1e-3, weight_decay=0.03, warmup=0.05)


@TASKS.register("digits-diffusion")
class DigitsDiffusion(DiffusionTask, DigitsImages):
    name = "digits-diffusion"
    description = "8x8 digits class-conditional DDPM (scikit-learn, no download): small and fast"
    dataset = "digits"
    # Ours: 1197 training images, so more epochs; small and fast for tests.
    defaults = TrainDefaults(epochs=40, batch_size=64, lr=2e-3, weight_decay=0.03, warmup=0.05)
    own_options = {"eval_images": 300}
