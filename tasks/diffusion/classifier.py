"""A small digit classifier used to score generated samples, trained once and cached.

`DigitClassifier` is a small LeNet-style CNN (LeCun et al. 1998) with batch normalisation
(Ioffe & Szegedy 2015): [conv3x3(16) BN ReLU] maxpool2 [conv3x3(32) BN ReLU] maxpool2
[conv3x3(64) BN ReLU] -> flatten -> Linear(FEATURES) -> ReLU -> Linear(classes), sized to
train in well under a minute on two CPU cores (about 99% MNIST test accuracy after 2
epochs). Its FEATURES-d
penultimate activations are the features of the Fréchet distance
(tasks/diffusion/frechet.py), so that distance is an MNIST-classifier analogue of FID,
not FID.

`load_classifier` trains it once per (key, data, epochs, architecture) with a fixed seed
(Adam, lr 1e-3 decayed linearly to 0 per step, batch 128, data held on the device, no
DataLoader; the decay is worth ~0.7 points of MNIST accuracy at 2 epochs) and caches the
state_dict plus a JSON sidecar under cache_root()/classifiers; later calls (in any
process) load it. An exclusive fcntl lock per cache entry serialises concurrent
callers; files are written to a temporary name and renamed into place.

`sample_quality` scores generated images: the classifier's accuracy on the labels they were
generated for, and the Fréchet distance of their features to the real test images'.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from core.errors import DataError, UserError
from tasks.datasets.fetch import cache_root
from tasks.diffusion.frechet import feature_stats, frechet_distance

ARCH_VERSION = 1  # bump when DigitClassifier or the training recipe changes
WIDTHS = (16, 32, 64)
FEATURES = 128
SEED = 0
LR = 1e-3
BATCH = 128
EVAL_BATCH = 1000
KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class DigitClassifier(nn.Module):
    """CNN for (B, in_channels, image_size, image_size) images in [0, 1]; image_size >= 4."""

    def __init__(self, in_channels: int = 1, image_size: int = 28, num_classes: int = 10):
        super().__init__()
        if image_size < 4:
            raise UserError(f"DigitClassifier needs images of at least 4x4, got {image_size}")
        c1, c2, c3 = WIDTHS

        def block(cin: int, cout: int) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

        self.body = nn.Sequential(
            *block(in_channels, c1), nn.MaxPool2d(2), *block(c1, c2), nn.MaxPool2d(2), *block(c2, c3)
        )
        side = image_size // 4
        self.fc = nn.Linear(c3 * side * side, FEATURES)
        self.head = nn.Linear(FEATURES, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """(B, C, H, W) in [0, 1] -> (B, FEATURES) penultimate (post-ReLU) activations."""
        return F.relu(self.fc(self.body((x - 0.5) / 0.5).flatten(1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, C, H, W) in [0, 1] -> (B, num_classes) logits."""
        return self.head(self.features(x))


def to_unit(x: torch.Tensor) -> torch.Tensor:
    """uint8 images (0..255) or float images in [0, 1] -> float32 in [0, 1]."""
    if x.dtype == torch.uint8:
        return x.float().div_(255.0)
    if x.is_floating_point():
        return x.float()
    raise DataError(f"images must be uint8 or floating point, got {x.dtype}")


def _fingerprint(*tensors: torch.Tensor) -> str:
    """A cheap content hash: shapes, dtypes and about 64k evenly strided elements of each."""
    h = hashlib.sha256()
    for t in tensors:
        flat = t.detach().reshape(-1)
        step = max(1, flat.numel() // 65536)
        sample = flat[::step].to("cpu").contiguous()
        h.update(f"{tuple(t.shape)}|{t.dtype}|".encode())
        h.update(sample.numpy().tobytes())
    return h.hexdigest()


@torch.inference_mode()
def batched_features(model: DigitClassifier, images: torch.Tensor, batch_size: int = EVAL_BATCH) -> torch.Tensor:
    """(N, C, H, W) uint8 or [0, 1] float images -> (N, FEATURES) float32 on the model's device."""
    device = next(model.parameters()).device
    out = [model.features(to_unit(images[i : i + batch_size].to(device))) for i in range(0, len(images), batch_size)]
    return torch.cat(out)


@torch.inference_mode()
def predict(model: DigitClassifier, images: torch.Tensor, batch_size: int = EVAL_BATCH) -> torch.Tensor:
    """(N, C, H, W) images -> (N,) int64 predicted classes on the model's device."""
    device = next(model.parameters()).device
    out = [model(to_unit(images[i : i + batch_size].to(device))).argmax(1) for i in range(0, len(images), batch_size)]
    return torch.cat(out)


@dataclass
class TrainedClassifier:
    """A cached classifier in eval mode, with its test accuracy and where it is stored."""

    model: DigitClassifier
    test_accuracy: float
    path: Path
    key: str
    trained: bool  # True when this call trained it, False when it was loaded
    _stats: dict = field(default_factory=dict, repr=False)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def real_stats(self, split_images: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mu (F,), cov (F, F)) float64 of the features of real images (N, C, H, W), cached
        per image content (shape, dtype and a strided fingerprint)."""
        fp = _fingerprint(split_images)
        if fp not in self._stats:
            self._stats[fp] = feature_stats(batched_features(self.model, split_images))
        return self._stats[fp]


_MEMORY: dict[tuple[str, str], TrainedClassifier] = {}


def clear_memory_cache() -> None:
    """Forget the classifiers loaded in this process (the files on disk stay)."""
    _MEMORY.clear()


def _train(model: DigitClassifier, x: torch.Tensor, y: torch.Tensor, epochs: int) -> None:
    """Adam(lr LR, decayed linearly to 0 over all steps), batch BATCH, `epochs` passes,
    shuffled by a CPU generator seeded SEED."""
    device = next(model.parameters()).device
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    gen = torch.Generator().manual_seed(SEED)
    total = epochs * -(-len(x) // BATCH)
    step = 0
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=gen).to(device)
        for i in range(0, len(x), BATCH):
            for group in opt.param_groups:
                group["lr"] = LR * (1 - step / total)
            idx = perm[i : i + BATCH]
            loss = F.cross_entropy(model(to_unit(x[idx])), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
    model.eval()


def _atomic_write(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _load(path: Path, meta_path: Path, model: DigitClassifier, device: torch.device) -> float | None:
    """The cached test accuracy after loading the weights into model, None if unusable."""
    try:
        meta = json.loads(meta_path.read_text())
        model.load_state_dict(torch.load(path, map_location=device, weights_only=True))
        return float(meta["test_accuracy"])
    except (OSError, ValueError, KeyError, RuntimeError, TypeError):
        return None


def load_classifier(
    key: str,
    train_x: torch.Tensor,
    train_y: torch.Tensor,
    test_x: torch.Tensor,
    test_y: torch.Tensor,
    device: torch.device | str,
    *,
    epochs: int = 2,
    cache_dir: str | os.PathLike | None = None,
    num_classes: int | None = None,
) -> TrainedClassifier:
    """The classifier for this data, trained once (deterministically) and cached.

    train_x/test_x: (N, C, H, W) uint8 or [0, 1] float images (square); *_y: (N,) int64.
    num_classes defaults to 1 + the largest label. The cache file is
    `<cache_dir or cache_root()/classifiers>/<key>-<hash>.pt` (+ `.json` sidecar), the hash
    covering the architecture version, epochs, data shapes and a data fingerprint.
    """
    if not KEY_RE.match(key):
        raise UserError(f"classifier key must be letters, digits, '_', '.' or '-', got {key!r}")
    shapes_ok = train_x.ndim == 4 and test_x.ndim == 4 and train_x.shape[1:] == test_x.shape[1:]
    if not shapes_ok or train_x.shape[2] != train_x.shape[3]:
        raise DataError(
            "classifier images must be square (N, C, H, H) of one shape, "
            f"got {tuple(train_x.shape)} and {tuple(test_x.shape)}"
        )
    if len(train_y) != len(train_x) or len(test_y) != len(test_x):
        raise DataError("classifier images and labels differ in length")
    if epochs < 1:
        raise UserError(f"classifier epochs must be >= 1, got {epochs}")
    device = torch.device(device)
    if num_classes is None:
        num_classes = int(max(int(train_y.max()), int(test_y.max()))) + 1
    c, size = int(train_x.shape[1]), int(train_x.shape[2])
    ident = json.dumps(
        {
            "arch": ARCH_VERSION,
            "widths": WIDTHS,
            "features": FEATURES,
            "recipe": [SEED, LR, "linear-decay", BATCH],
            "epochs": epochs,
            "classes": num_classes,
            "shapes": [list(t.shape) for t in (train_x, train_y, test_x, test_y)],
            "data": _fingerprint(train_x, train_y, test_x, test_y),
        },
        sort_keys=True,
    )
    digest = hashlib.sha256(ident.encode()).hexdigest()[:12]
    root = Path(cache_dir) if cache_dir is not None else cache_root() / "classifiers"
    path = root / f"{key}-{digest}.pt"
    meta_path = path.with_suffix(".json")
    mem_key = (str(path.resolve()), str(device))
    if mem_key in _MEMORY:
        return _MEMORY[mem_key]

    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DataError(f"cannot create the classifier cache directory {root}: {e.strerror}") from None
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            model = DigitClassifier(c, size, num_classes).to(device)
            accuracy = _load(path, meta_path, model, device) if meta_path.is_file() else None
            trained = accuracy is None
            if trained:
                print(f"training the sample-quality classifier once (cached at {path})...", file=sys.stderr)
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(SEED)
                    model = DigitClassifier(c, size, num_classes)
                model = model.to(device)
                start = time.perf_counter()
                _train(model, train_x.to(device), train_y.to(device=device, dtype=torch.long), epochs)
                seconds = time.perf_counter() - start
                pred = predict(model, test_x)
                accuracy = float((pred == test_y.to(device)).float().mean())
                meta = {
                    "key": key,
                    "test_accuracy": accuracy,
                    "epochs": epochs,
                    "train_seconds": round(seconds, 2),
                    "arch_version": ARCH_VERSION,
                    "in_channels": c,
                    "image_size": size,
                    "num_classes": num_classes,
                    "device": str(device),
                    "torch": torch.__version__,
                }
                state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
                _atomic_write(path, lambda f: torch.save(state, f))
                _atomic_write(meta_path, lambda f: f.write((json.dumps(meta, indent=1) + "\n").encode()))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    result = TrainedClassifier(model=model, test_accuracy=accuracy, path=path, key=key, trained=trained)
    _MEMORY[mem_key] = result
    return result


def sample_quality(
    classifier: TrainedClassifier | DigitClassifier,
    images: torch.Tensor,
    labels: torch.Tensor,
    real_mu: torch.Tensor,
    real_cov: torch.Tensor,
) -> dict[str, float]:
    """Score images (B, C, H, W) in [0, 1] generated for `labels` (B,), B >= 2.

    sample_accuracy: fraction whose classifier argmax equals the requested label.
    frechet: Fréchet distance of their features to N(real_mu, real_cov) (see real_stats).
    """
    model = classifier.model if isinstance(classifier, TrainedClassifier) else classifier
    if images.ndim != 4 or labels.shape != (images.shape[0],):
        raise UserError(
            f"need images (B, C, H, W) and labels (B,), got {tuple(images.shape)} and {tuple(labels.shape)}"
        )
    feats = batched_features(model, images)
    with torch.inference_mode():
        pred = model.head(feats).argmax(1)
    accuracy = float((pred.cpu() == labels.cpu().long()).float().mean())
    mu, cov = feature_stats(feats)
    return {"sample_accuracy": accuracy, "frechet": frechet_distance(mu, cov, real_mu, real_cov)}
