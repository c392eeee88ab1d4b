"""Image data sets as CPU tensors (uint8 or float32), split into train/val/test."""

from tasks.datasets.digits import load_digits
from tasks.datasets.imagenet32 import load_imagenet32
from tasks.datasets.mnist import load_mnist, read_mnist
from tasks.datasets.splits import ImageSplits, split_indices

__all__ = ["ImageSplits", "load_digits", "load_imagenet32", "load_mnist", "read_mnist", "split_indices"]
