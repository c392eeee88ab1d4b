"""The registered image tasks: {mnist, digits, imagenet32} x {denoise, sr, genclass} and
classification on {mnist, digits, cifar10}.

Each data set is a mixin giving the image shape, the default training settings and the
loader; each task kind (tasks/images.py) gives inputs, targets and metrics.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.errors import UserError
from tasks.base import TrainDefaults
from tasks.by_name import TASKS
from tasks.datasets import ImageSplits, load_digits, load_imagenet32, load_mnist
from tasks.datasets.cifar10 import load_cifar10
from tasks.images import ClassifyTask, DenoiseTask, GenClassTask, ImageTask, SuperResolutionTask


class MnistImages(ImageTask):
    """MNIST 28x28: 50k train / 10k validation (seeded) / official 10k test."""

    needs = ("mnist",)
    image_shape = (1, 28, 28)
    # Paper (Chen et al.): batch 128, AdamW, linear decay to 0; lr 1e-3 is one of the
    # paper's searched values; epochs per task as its appendix (denoising 30, super-
    # resolution and generative classification 50; set on each task below; 20 for plain
    # classification, ours). Weight decay 0.01 (AdamW's default, the paper gives none).
    defaults = TrainDefaults(epochs=20, batch_size=128, lr=1e-3, weight_decay=0.01)

    def load_splits(self, data_dir: str | None) -> ImageSplits:
        return load_mnist(data_dir, split_seed=self.options["split_seed"])


class DigitsImages(ImageTask):
    """scikit-learn digits 8x8 (bundled, no download): 1197 / 300 / 300, seeded."""

    needs = ("digits",)
    image_shape = (1, 8, 8)
    # Ours (no paper uses this set): small and fast for tests and smoke runs; a small
    # model trains in a few seconds on 2 CPU cores.
    defaults = TrainDefaults(epochs=30, batch_size=64, lr=3e-3, weight_decay=0.01)

    def load_splits(self, data_dir: str | None) -> ImageSplits:
        return load_digits(split_seed=self.options["split_seed"])


class ImageNet32Images(ImageTask):
    """Downsampled ImageNet 32x32 (official npz batches); val_data.npz is the test set."""

    needs = ("imagenet32",)
    image_shape = (3, 32, 32)
    own_options: dict[str, Any] = {"train_batches": None, "val_size": None, "val_from": "official"}
    # Paper (Chen et al., A.3): batch 512, 2 epochs (with the super-resolution task's 4x
    # flips), lr searched in {1, 3, 5, 7}e-4 (`search_lrs`: every space's lr choice on
    # these tasks), and the official validation set split 25k/25k into validation and test
    # (`val_from`, default "official").
    defaults = TrainDefaults(epochs=2, batch_size=512, lr=5e-4, weight_decay=0.01)
    search_lrs = (1e-4, 3e-4, 5e-4, 7e-4)

    def _check_options(self) -> None:
        super()._check_options()
        if self.options["val_from"] not in ("official", "train"):
            raise UserError(f"val_from must be 'official' or 'train', got {self.options['val_from']!r}")
        if self.options["val_from"] == "official" and self.options["val_size"] is not None:
            raise UserError("val_size needs val_from='train' (the official validation set is split in halves)")
        for key, hi in (("train_batches", 10), ("val_size", None)):
            v = self.options[key]
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < 1 or (hi is not None and v > hi):
                bound = f" between 1 and {hi}" if hi else " positive"
                raise UserError(f"{key} must be an integer{bound}, got {v!r}")

    def load_splits(self, data_dir: str | None) -> ImageSplits:
        o = self.options
        return load_imagenet32(
            data_dir,
            train_batches=o["train_batches"],
            val_size=o["val_size"],
            split_seed=o["split_seed"],
            val_from=o["val_from"],
        )


@TASKS.register("mnist-denoise")
class MnistDenoise(DenoiseTask, MnistImages):
    name = "mnist-denoise"
    description = "MNIST denoising: clamp(x + 0.25 N(0,1)) -> x, PSNR (Chen et al.)"
    defaults = replace(MnistImages.defaults, epochs=30)  # the paper's appendix: 30 epochs


@TASKS.register("mnist-sr")
class MnistSR(SuperResolutionTask, MnistImages):
    name = "mnist-sr"
    description = "MNIST super-resolution: bicubic 14x14 -> 28x28, PSNR (Chen et al.)"
    defaults = replace(MnistImages.defaults, epochs=50)  # the paper's appendix: 50 epochs (with 4x flips)


@TASKS.register("mnist-genclass")
class MnistGenClass(GenClassTask, MnistImages):
    name = "mnist-genclass"
    description = "MNIST generative classification: x -> its class prototype image, PSNR + accuracy"
    defaults = replace(MnistImages.defaults, epochs=50)  # the paper's appendix: 50 epochs


@TASKS.register("digits-denoise")
class DigitsDenoise(DenoiseTask, DigitsImages):
    name = "digits-denoise"
    description = "8x8 digits denoising (scikit-learn, no download): small and fast"


@TASKS.register("digits-sr")
class DigitsSR(SuperResolutionTask, DigitsImages):
    name = "digits-sr"
    description = "8x8 digits super-resolution: bicubic 4x4 -> 8x8 (scikit-learn, no download)"


@TASKS.register("digits-genclass")
class DigitsGenClass(GenClassTask, DigitsImages):
    name = "digits-genclass"
    description = "8x8 digits generative classification: x -> class prototype, PSNR + accuracy"


@TASKS.register("imagenet32-denoise")
class ImageNet32Denoise(DenoiseTask, ImageNet32Images):
    name = "imagenet32-denoise"
    description = "ImageNet 32x32 denoising: clamp(x + 0.25 N(0,1)) -> x, PSNR (Chen et al.)"
    own_options = {"flips": True}  # the paper's ImageNet-32 denoising flips 4x (A.3.2)


@TASKS.register("imagenet32-sr")
class ImageNet32SR(SuperResolutionTask, ImageNet32Images):
    name = "imagenet32-sr"
    description = "ImageNet 32x32 super-resolution: bicubic 16x16 -> 32x32, PSNR (Chen et al.)"


class Cifar10Images(ImageTask):
    """CIFAR-10 32x32x3 (python pickle batches): 45k train / 5k validation (seeded) / 10k test."""

    needs = ("cifar10",)
    image_shape = (3, 32, 32)
    # Ours: batch 128 and AdamW lr 1e-3 as for MNIST; 20 epochs (no data augmentation).
    defaults = TrainDefaults(epochs=20, batch_size=128, lr=1e-3, weight_decay=0.01)

    def load_splits(self, data_dir: str | None) -> ImageSplits:
        return load_cifar10(data_dir, split_seed=self.options["split_seed"])


@TASKS.register("mnist-classify")
class MnistClassify(ClassifyTask, MnistImages):
    name = "mnist-classify"
    description = "MNIST classification: 10 classes, cross-entropy, accuracy and test error"


@TASKS.register("digits-classify")
class DigitsClassify(ClassifyTask, DigitsImages):
    name = "digits-classify"
    description = "8x8 digits classification (scikit-learn, no download): accuracy and error"


@TASKS.register("cifar10-classify")
class Cifar10Classify(ClassifyTask, Cifar10Images):
    name = "cifar10-classify"
    description = "CIFAR-10 classification (python pickle batches, downloaded on first use): accuracy and error"
