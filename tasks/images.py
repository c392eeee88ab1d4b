"""Image tasks of Chen et al. (denoising, super-resolution, generative classification)
and plain classification (cross-entropy on logits; accuracy and error).

An `ImageTask` turns clean images x in [0, 1] into (input, target) pairs:
  denoise: input clamp(x + noise * N(0, 1), 0, 1), target x           (noise = 0.25)
  sr:      input bicubic-downsampled x (factor 2, as the authors' code), target x
  genclass: input x, target the fixed prototype image of x's class (one training image
           per class, drawn with the split seed); `accuracy` = nearest prototype by MSE.
  classify: input x, target its class label; `accuracy` of the arg-max logit, `error`.
Inputs and targets are flattened. `ImageData` holds a data set on the device (uint8 or
float images, the whole set as tensors) and builds batches by index with tensor ops.

Noise: training noise is drawn fresh for every batch from the run's generator (data
augmentation: each epoch sees new noisy versions). Evaluation noise is fixed: it is drawn
on the CPU from generators seeded by (split, chunk of EVAL_CHUNK images), so every epoch,
every trial and every device sees the same noisy validation and test inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from core.errors import UserError
from core.io import IOSpec
from tasks.base import Task
from tasks.datasets.splits import ImageSplits
from tasks.metrics import psnr, ssim

EVAL_CHUNK = 1024  # images per fixed-noise chunk; eval batches are multiples of it
EVAL_BATCH = 4096
EVAL_NOISE_SEED = {"val": 1, "test": 2}


def as_float(x: torch.Tensor) -> torch.Tensor:
    """uint8 0..255 -> float32 [0, 1]; float images pass through as float32."""
    return x.float().div_(255.0) if x.dtype == torch.uint8 else x.float()


def eval_noise(split: str, start: int, stop: int, shape: tuple[int, ...]) -> torch.Tensor:
    """The fixed N(0, 1) noise of images start..stop of an evaluation split (CPU).

    `start` must be a multiple of EVAL_CHUNK; chunk k of split s uses seed (s << 32) + k.
    """
    assert start % EVAL_CHUNK == 0
    parts = []
    for k in range(start // EVAL_CHUNK, (stop + EVAL_CHUNK - 1) // EVAL_CHUNK):
        g = torch.Generator().manual_seed((EVAL_NOISE_SEED[split] << 32) + k)
        n = min(EVAL_CHUNK, stop - k * EVAL_CHUNK)
        parts.append(torch.randn((n, *shape), generator=g))
    return torch.cat(parts)


class ImageData:
    """One image data set on a device; the `TaskData` the trainer uses.

    Trainer interface: `n_train`, `train_batch(idx, generator) -> (inputs, targets)`,
    `evaluate(predict, split) -> {metric: value}`.
    """

    def __init__(self, task: ImageTask, splits: ImageSplits, device: torch.device) -> None:
        self.task = task
        self.device = torch.device(device)
        self.x, self.y = splits.on(self.device)
        self.num_classes = splits.num_classes
        self.prototypes = task.prototypes(self.x["train"], self.y["train"], splits.num_classes)

    @property
    def n_train(self) -> int:
        """Training examples: each image once, or in `task.train_copies()` versions."""
        return len(self.x["train"]) * self.task.train_copies()

    def size(self, split: str) -> int:
        return len(self.x[split])

    def train_batch(self, idx: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs and targets of training examples `idx` (fresh noise from `generator`).
        With 4 copies, example i is image i mod N flipped by i div N: 0 as is, 1
        horizontally, 2 vertically, 3 both."""
        x, idx = self._examples(idx)
        noise = None
        if self.task.uses_noise:
            noise = torch.randn(x.shape, generator=generator, device=self.device, dtype=x.dtype)
        return self.task.inputs(x, noise), self.task.targets(x, self.y["train"][idx], self.prototypes)

    def train_batches(
        self, idxs: list[torch.Tensor], generators: list[torch.Generator]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`train_batch` of the members of a pack at once (tasks/fused_train.py), each with
        its own examples and its own noise, drawn from its generator as `train_batch`
        draws it: inputs and targets with a leading member axis (K, B, ...)."""
        k, b = len(idxs), len(idxs[0])
        x, idx = self._examples(torch.cat(idxs))
        noise = None
        if self.task.uses_noise:
            noise = torch.cat(
                [torch.randn((b, *x.shape[1:]), generator=g, device=self.device, dtype=x.dtype) for g in generators]
            )
        inputs = self.task.inputs(x, noise)
        targets = self.task.targets(x, self.y["train"][idx], self.prototypes)
        return inputs.view(k, b, *inputs.shape[1:]), targets.view(k, b, *targets.shape[1:])

    def _examples(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The images of training examples `idx` (flipped copies resolved) and their indices
        into the stored images."""
        n = len(self.x["train"])
        x = as_float(self.x["train"][idx % n])
        if self.task.train_copies() > 1:
            kind = (idx // n).view(-1, 1, 1, 1)
            x = torch.where((kind % 2) == 1, x.flip(-1), x)
            x = torch.where(kind >= 2, x.flip(-2), x)
            idx = idx % n
        return x, idx

    def eval_batches(
        self, split: str, batch_size: int = EVAL_BATCH
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """(inputs, targets, labels) of a val/test split in order, with the fixed noise."""
        batch_size = max(EVAL_CHUNK, batch_size - batch_size % EVAL_CHUNK)
        xs, ys = self.x[split], self.y[split]
        for start in range(0, len(xs), batch_size):
            stop = min(start + batch_size, len(xs))
            x, y = as_float(xs[start:stop]), ys[start:stop]
            noise = None
            if self.task.uses_noise:
                noise = eval_noise(split, start, stop, tuple(x.shape[1:])).to(self.device)
            yield self.task.inputs(x, noise), self.task.targets(x, y, self.prototypes), y

    def evaluate(
        self, predict: Callable[[torch.Tensor], torch.Tensor], split: str, batch_size: int = EVAL_BATCH
    ) -> dict[str, float]:
        """Mean per-image metrics of `predict` on a split (call under inference mode)."""
        shape = self.task.io().image_shape
        sums: dict[str, torch.Tensor] = {}
        n = 0
        for inputs, targets, labels in self.eval_batches(split, batch_size):
            pred = predict(inputs)
            for name, values in self.task.batch_metrics(pred, targets, labels, self.prototypes, shape).items():
                total = values.double().sum()
                sums[name] = sums[name] + total if name in sums else total
            n += len(inputs)
        names = list(sums)
        values = torch.stack([sums[k] for k in names]).div(n).tolist()  # one sync
        return dict(zip(names, values))


class ImageTask(Task):
    """A task over one image data set. Subclasses set the data set and the task kind."""

    metric = "psnr"
    direction = "maximize"
    metrics: ClassVar[tuple[str, ...]] = ("psnr", "ssim")
    image_shape: ClassVar[tuple[int, int, int]]  # (C, H, W) of the clean images
    uses_noise: ClassVar[bool] = False
    own_options: ClassVar[dict[str, Any]] = {"split_seed": 0}

    def _check_options(self) -> None:
        seed = self.options["split_seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise UserError(f"split_seed must be a non-negative integer, got {seed!r}")

    # -- the task kind --------------------------------------------------------------
    def input_shape(self) -> tuple[int, int, int]:
        return self.image_shape

    def io(self) -> IOSpec:
        c, h, w = self.image_shape
        ic, ih, iw = self.input_shape()
        return IOSpec(ic * ih * iw, c * h * w, "image", (c, h, w), (ic, ih, iw))

    def train_copies(self) -> int:
        """Versions of each training image an epoch sees (augmentation); 1: the image only."""
        return 1

    def inputs(self, x: torch.Tensor, noise: torch.Tensor | None) -> torch.Tensor:
        """(B, C, H, W) clean images in [0, 1] -> (B, d_in) model inputs."""
        return x.flatten(1)

    def targets(self, x: torch.Tensor, y: torch.Tensor, prototypes: torch.Tensor | None) -> torch.Tensor:
        """(B, d_out) regression targets."""
        return x.flatten(1)

    def prototypes(self, train_x: torch.Tensor, train_y: torch.Tensor, num_classes: int) -> torch.Tensor | None:
        return None

    def batch_metrics(
        self,
        pred: torch.Tensor,
        targets: torch.Tensor,
        labels: torch.Tensor,
        prototypes: torch.Tensor | None,
        shape: tuple[int, int, int],
    ) -> dict[str, torch.Tensor]:
        """Per-image metric values (B,) of one evaluation batch."""
        p, t = pred.reshape(-1, *shape), targets.reshape(-1, *shape)
        return {"psnr": psnr(p, t), "ssim": ssim(p, t)}

    # -- data ---------------------------------------------------------------------------
    def load_splits(self, data_dir: str | None) -> ImageSplits:
        raise NotImplementedError

    def load(self, data_dir: str | None, device: Any) -> ImageData:
        return ImageData(self, self.load_splits(data_dir), torch.device(device))


class FlipAugmented(ImageTask):
    """Option `flips`: 4x flip augmentation (Chen et al., A.3.2: "original, horizontal
    flip, vertical flip, and combined horizontal-vertical flip"), every training image
    also flipped horizontally, vertically and both, so an epoch sees the four versions of
    each (an epoch is 4x longer). Default true; a task whose paper setting has no flips
    sets it false."""

    own_options = {"flips": True}

    def _check_options(self) -> None:
        super()._check_options()
        if not isinstance(self.options["flips"], bool):
            raise UserError(f"flips must be true or false, got {self.options['flips']!r}")

    def train_copies(self) -> int:
        return 4 if self.options["flips"] else 1


class DenoiseTask(FlipAugmented):
    """Input clamp(x + noise * N(0, 1), 0, 1); option `noise` (std, default 0.25).

    Option `flips` (FlipAugmented) defaults to false here: the paper's MNIST denoising
    trains without them (A.3.2, "batch size 128 for 30 epochs"); its ImageNet-32
    denoising flips (imagenet32-denoise sets it true)."""

    uses_noise = True
    own_options = {"noise": 0.25, "flips": False}

    def _check_options(self) -> None:
        super()._check_options()
        noise = self.options["noise"]
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise < float("inf"):
            raise UserError(f"noise must be a non-negative number, got {noise!r}")

    def inputs(self, x: torch.Tensor, noise: torch.Tensor | None) -> torch.Tensor:
        return (x + float(self.options["noise"]) * noise).clamp_(0.0, 1.0).flatten(1)


DOWNSAMPLES = ("bicubic", "antialias")  # SR's `downsample` option; the first is the default


def downsample(x: torch.Tensor, factor: int = 2, how: str = "bicubic") -> torch.Tensor:
    """Bicubic downsampling by `factor`: (B,C,H,W) -> (B,C,H/f,W/f).

    how "bicubic" (the default): as the authors' code (mtkresearch/Hourglass_LM,
    hourglass_mlp/utils/ds.py `_downsample_image`), F.interpolate(mode="bicubic",
    align_corners=False, antialias=False), not clamped (the cubic kernel may overshoot
    [0, 1] a little). how "antialias": antialiased bicubic (a wider kernel, as PIL's
    resize), clamped to [0, 1]; ours before we checked the authors' code."""
    h, w = x.shape[-2:]
    y = F.interpolate(
        x, size=(h // factor, w // factor), mode="bicubic", antialias=how == "antialias", align_corners=False
    )
    return y.clamp_(0.0, 1.0) if how == "antialias" else y


class SuperResolutionTask(FlipAugmented):
    """Input the bicubic 2x-downsampled image (flattened), target the full image.

    Option `flips` (FlipAugmented, default true: the paper's SR flips on MNIST and
    ImageNet-32, A.3.2); `flips=false` is the short setting.
    Option `downsample` (`downsample()`): "bicubic" as the authors' code (default) or
    "antialias"."""

    factor: ClassVar[int] = 2
    own_options = {"downsample": DOWNSAMPLES[0]}

    def _check_options(self) -> None:
        super()._check_options()
        if self.options["downsample"] not in DOWNSAMPLES:
            raise UserError(f"downsample must be one of {', '.join(DOWNSAMPLES)}, got {self.options['downsample']!r}")

    def input_shape(self) -> tuple[int, int, int]:
        c, h, w = self.image_shape
        return (c, h // self.factor, w // self.factor)

    def inputs(self, x: torch.Tensor, noise: torch.Tensor | None) -> torch.Tensor:
        return downsample(x, self.factor, self.options["downsample"]).flatten(1)


class GenClassTask(ImageTask):
    """Target the prototype of the input's class; also reports nearest-prototype accuracy."""

    metrics = ("psnr", "ssim", "accuracy")

    def prototypes(self, train_x: torch.Tensor, train_y: torch.Tensor, num_classes: int) -> torch.Tensor:
        """(K, d_out): one training image of each class, drawn with the split seed (a CPU
        generator seeded by `split_seed`, so every trial and device of a study targets the
        same prototypes, and another split seed draws others)."""
        g = torch.Generator().manual_seed(int(self.options["split_seed"]))
        labels = train_y.cpu()
        picks = []
        for k in range(num_classes):
            (idx,) = torch.nonzero(labels == k, as_tuple=True)
            if not len(idx):
                raise UserError(f"{self.name}: no training image of class {k}")
            picks.append(int(idx[torch.randint(len(idx), (1,), generator=g)]))
        return as_float(train_x[torch.tensor(picks, device=train_x.device)]).flatten(1)

    def targets(self, x: torch.Tensor, y: torch.Tensor, prototypes: torch.Tensor | None) -> torch.Tensor:
        return prototypes[y]

    def batch_metrics(self, pred, targets, labels, prototypes, shape):
        out = super().batch_metrics(pred, targets, labels, prototypes, shape)
        out["accuracy"] = (nearest_prototype(pred, prototypes) == labels).float()
        return out


class ClassifyTask(ImageTask):
    """Plain classification: input the flattened image, output raw class scores (logits)
    trained with cross-entropy; metrics `accuracy` (primary) and `error` = 1 - accuracy.
    `io().input_shape` is (C, H, W), so patch-based models (Mixers) can un-flatten it."""

    metric = "accuracy"
    direction = "maximize"
    metrics = ("accuracy", "error")
    num_classes: ClassVar[int] = 10

    def io(self) -> IOSpec:
        c, h, w = self.image_shape
        return IOSpec(c * h * w, self.num_classes, "logits", None, (c, h, w))

    def targets(self, x: torch.Tensor, y: torch.Tensor, prototypes: torch.Tensor | None) -> torch.Tensor:
        return y  # (B,) int64 class labels

    def loss(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(pred, target)

    def member_losses(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:  # (K, B, C), (K, B) -> (K,)
        k, b = target.shape
        return F.cross_entropy(pred.reshape(k * b, -1), target.reshape(-1), reduction="none").view(k, b).mean(1)

    def batch_metrics(self, pred, targets, labels, prototypes, shape):
        correct = (pred.argmax(1) == labels).float()
        return {"accuracy": correct, "error": 1.0 - correct}


def nearest_prototype(pred: torch.Tensor, prototypes: torch.Tensor) -> torch.Tensor:
    """(B,) index of the prototype with the smallest MSE to each prediction."""
    p = pred.float()
    d = p.pow(2).sum(1, keepdim=True) - 2 * p @ prototypes.t() + prototypes.pow(2).sum(1)
    return d.argmin(1)
