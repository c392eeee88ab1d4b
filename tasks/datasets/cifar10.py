"""CIFAR-10 (Krizhevsky 2009) from the official "python version" pickle batches.

Files: data_batch_1 .. data_batch_5 and test_batch (the contents of
cifar-10-python.tar.gz), looked for in `data_dir`, `data_dir/cifar-10-batches-py/`, then
SEARCH_DATA_DIR and the user cache in the same way (tasks/datasets/fetch.py). Found
nowhere, the archive (170 MB, tasks/datasets/sources.py) is downloaded, checked against its
SHA-256 and unpacked into the cache's cifar-10-batches-py/: only the expected member names,
read as regular files (no path of the archive is used), in a temporary folder renamed into
place when whole; the archive is then deleted. Each file is a pickled dict with b"data", a
(10000, 3072) uint8 array (channel-major rows: the 1024 red pixels, then green, then blue)
and b"labels" (0..9).

Unpickling is restricted to the numpy array constructors these files use, so a file
that is not a CIFAR batch cannot run code. Split: 45k train / 5k validation drawn from
the 50k training images with a fixed `split_seed` (10% of a smaller set); the official
10k test set.
"""

from __future__ import annotations

import pickle
import tarfile
import zlib
from pathlib import Path

import numpy as np
import torch

from core.errors import DataError, one_line
from tasks.datasets import fetch, sources
from tasks.datasets.splits import ImageSplits, split_indices

FOLDER = sources.CIFAR10_FOLDER
FILES = sources.CIFAR10_FILES
TRAIN_FILES = FILES[:5]
TEST_FILE = FILES[5]
EXTRA_FILES = ("batches.meta", "readme.html")  # unpacked when the archive has them; not read
REMOTE = sources.CIFAR10_REMOTE
N_VAL = 5000

# (module, name) pairs a CIFAR batch pickle may reference: numpy array reconstruction.
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("_codecs", "encode"),
}


class _BatchUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):  # noqa: D401 - pickle API
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}")
        return super().find_class(module, name)


def _find(data_dir: str | None) -> dict[str, Path] | None:
    for d in fetch.candidate_dirs(FOLDER, data_dir):
        if all((d / n).is_file() for n in FILES):
            return {n: d / n for n in FILES}
    return None


def find_cifar10(data_dir: str | None = None) -> dict[str, Path]:
    """name -> path of the six batch files, from the first directory holding all of them;
    downloaded into the cache when found nowhere."""
    found = _find(data_dir)
    if found:
        return found
    try:
        folder = install(fetch.cache_root())
    except OSError as e:
        where = Path(data_dir) if data_dir is not None else fetch.cache_root()
        raise DataError(
            f"CIFAR-10 not found: put {', '.join(FILES)} (cifar-10-python.tar.gz, extracted) "
            f"in {where / FOLDER} or pass --data-dir (download failed: {one_line(e)})"
        ) from None
    return {n: folder / n for n in FILES}


def install(root: Path) -> Path:
    """Download the archive, check it and unpack its batches into root/cifar-10-batches-py
    (the folder). OSError when the download fails, DataError when the archive is not the
    expected one; nothing is left behind either way."""
    folder = root / FOLDER
    with fetch.staged(folder) as tmp:
        archive = fetch.fetch_remote(REMOTE, tmp)
        unpack(archive, tmp)
        archive.unlink()
    return folder


def unpack(archive: Path, dest: Path) -> None:
    """Write the archive's cifar-10-batches-py/ members of the expected names into dest:
    regular files only, each read from the archive and written under its bare name, so no
    member can write outside dest. DataError when a batch is missing or unreadable."""
    wanted = {f"{FOLDER}/{n}": n for n in (*FILES, *EXTRA_FILES)}
    written: set[str] = set()
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                name = wanted.get(member.name.removeprefix("./"))
                if name is None or not member.isfile() or name in written:
                    continue
                src = tar.extractfile(member)
                if src is None:
                    continue
                with src, open(dest / name, "wb") as out:
                    while block := src.read(fetch.CHUNK):
                        out.write(block)
                written.add(name)
    except (OSError, EOFError, tarfile.TarError, zlib.error) as e:
        raise DataError(f"cannot unpack {archive.name}: {one_line(e)}") from None
    missing = [n for n in FILES if n not in written]
    if missing:
        raise DataError(f"{archive.name} lacks {FOLDER}/{missing[0]}: not the CIFAR-10 python archive")


def read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(images (N, 3, 32, 32) uint8, labels (N,) int64) of one pickle batch."""
    try:
        with open(path, "rb") as f:
            d = _BatchUnpickler(f, encoding="bytes").load()
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError) as e:
        raise DataError(f"cannot read {path}: {' '.join(str(e).split())}") from None
    if not isinstance(d, dict) or b"data" not in d or b"labels" not in d:
        raise DataError(f"{path} is not a CIFAR-10 batch (no data/labels)")
    data, labels = np.asarray(d[b"data"]), np.asarray(d[b"labels"], dtype=np.int64)
    if data.ndim != 2 or data.shape[1] != 3072 or data.dtype != np.uint8:
        raise DataError(f"{path}: data has shape {data.shape} {data.dtype}, expected (N, 3072) uint8")
    if labels.shape != (len(data),) or (len(labels) and (labels.min() < 0 or labels.max() > 9)):
        raise DataError(f"{path}: expected {len(data)} labels in 0..9")
    return data.reshape(-1, 3, 32, 32), labels


def load_cifar10(data_dir: str | None = None, split_seed: int = 0, val_size: int = N_VAL) -> ImageSplits:
    """CIFAR-10 as uint8 (N, 3, 32, 32) tensors: 45k train / 5k val (seeded) / 10k test."""
    paths = find_cifar10(data_dir)
    parts = [read_batch(paths[n]) for n in TRAIN_FILES]
    x = torch.from_numpy(np.concatenate([p[0] for p in parts]))
    y = torch.from_numpy(np.concatenate([p[1] for p in parts]))
    test_x, test_y = read_batch(paths[TEST_FILE])
    n_val = min(val_size, len(x) // 10)  # 5k of the official 50k; 10% of a smaller set
    if not 0 < n_val < len(x):
        raise DataError(f"CIFAR-10 training batches hold {len(x)} images: too few to split")
    val_idx, train_idx = split_indices(len(x), (n_val,), split_seed)
    return ImageSplits(
        train_x=x[train_idx],
        train_y=y[train_idx],
        val_x=x[val_idx],
        val_y=y[val_idx],
        test_x=torch.from_numpy(test_x),
        test_y=torch.from_numpy(test_y),
        num_classes=10,
    )
