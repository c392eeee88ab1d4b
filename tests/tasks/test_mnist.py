"""MNIST: finding, verifying, downloading (faked) and splitting; the real files if present."""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from core.errors import DataError
from tasks.datasets import fetch, load_mnist, mnist, read_mnist
from tests.tasks.conftest import SHARED_DATA, idx_bytes, needs_mnist

N_TRAIN, N_TEST = 12, 5


def fake_files() -> dict[str, bytes]:
    """Tiny valid MNIST-shaped IDX contents (uncompressed) by file name."""
    rng = np.random.default_rng(0)
    return {
        "train-images-idx3-ubyte": idx_bytes(rng.integers(0, 256, (N_TRAIN, 28, 28), dtype=np.uint8)),
        "train-labels-idx1-ubyte": idx_bytes(np.arange(N_TRAIN, dtype=np.uint8) % 10),
        "t10k-images-idx3-ubyte": idx_bytes(rng.integers(0, 256, (N_TEST, 28, 28), dtype=np.uint8)),
        "t10k-labels-idx1-ubyte": idx_bytes(np.arange(N_TEST, dtype=np.uint8)),
    }


@pytest.fixture
def fake_mnist(monkeypatch):
    """Make the tiny fake files the 'official' ones (their checksums, a 3-image val split)."""
    files = fake_files()
    monkeypatch.setattr(mnist, "SHA256", {k: hashlib.sha256(v).hexdigest() for k, v in files.items()})
    monkeypatch.setattr(mnist, "N_VAL", 3)
    return files


def write_all(directory: Path, files: dict[str, bytes], gz: bool = True) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        if gz:
            (directory / f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            (directory / name).write_bytes(data)
    return directory


@pytest.mark.parametrize("sub, gz", [("", True), ("mnist", True), ("mnist", False)])
def test_loads_from_data_dir(tmp_path, fake_mnist, sub, gz):
    write_all(tmp_path / "data" / sub, fake_mnist, gz)
    s = load_mnist(str(tmp_path / "data"))
    assert s.sizes() == (N_TRAIN - 3, 3, N_TEST)
    assert s.train_x.shape == (N_TRAIN - 3, 1, 28, 28) and s.train_x.dtype == torch.uint8
    assert s.test_y.tolist() == list(range(N_TEST)) and s.train_y.dtype == torch.int64


def test_env_dir_then_cache(tmp_path, monkeypatch, fake_mnist):
    write_all(tmp_path / "env" / "mnist", fake_mnist)
    monkeypatch.setenv(fetch.ENV_DATA_DIR, str(tmp_path / "env"))
    assert load_mnist().sizes() == (N_TRAIN - 3, 3, N_TEST)
    monkeypatch.delenv(fetch.ENV_DATA_DIR)
    write_all(fetch.cache_root() / "mnist", fake_mnist)
    assert load_mnist().sizes() == (N_TRAIN - 3, 3, N_TEST)


def test_explicit_dir_must_exist(tmp_path):
    with pytest.raises(DataError, match=f"data directory '{tmp_path / 'nope'}' does not exist"):
        load_mnist(str(tmp_path / "nope"))


def test_offline_error_is_one_line(tmp_path):
    with pytest.raises(DataError) as err:
        load_mnist(str(tmp_path))
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("MNIST not found: put train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, ")
    assert f"in {tmp_path / 'mnist'} or pass --data-dir (download failed: " in msg
    assert "network disabled in tests" in msg


def test_download_into_cache(monkeypatch, fake_mnist):
    urls = []

    def fake_download(url, dest, timeout=None):
        urls.append(url)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(gzip.compress(fake_mnist[Path(url).name[:-3]]))

    monkeypatch.setattr(fetch, "download", fake_download)
    s = load_mnist()
    assert s.sizes() == (N_TRAIN - 3, 3, N_TEST)
    assert len(urls) == 4 and all(u.startswith(mnist.MIRRORS[0]) for u in urls)
    assert sorted(p.name for p in (fetch.cache_root() / "mnist").iterdir()) == sorted(f"{n}.gz" for n in fake_mnist)


def test_download_checksum_mismatch_removes_file(monkeypatch, fake_mnist):
    def bad_download(url, dest, timeout=None):
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(gzip.compress(b"not the file"))

    monkeypatch.setattr(fetch, "download", bad_download)
    with pytest.raises(DataError, match="does not match its SHA-256; removed it"):
        load_mnist()
    assert list((fetch.cache_root() / "mnist").glob("*.gz")) == []


def test_falls_back_to_second_mirror(monkeypatch, fake_mnist):
    def flaky(url, dest, timeout=None):
        if url.startswith(mnist.MIRRORS[0]):
            raise OSError("mirror down")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(gzip.compress(fake_mnist[Path(url).name[:-3]]))

    monkeypatch.setattr(fetch, "download", flaky)
    assert load_mnist().sizes() == (N_TRAIN - 3, 3, N_TEST)


def test_local_checksum_mismatch(tmp_path, fake_mnist, monkeypatch):
    write_all(tmp_path, fake_mnist)
    monkeypatch.setitem(mnist.SHA256, "t10k-labels-idx1-ubyte", "0" * 64)
    with pytest.raises(DataError, match="t10k-labels-idx1-ubyte.gz is corrupt: SHA-256"):
        load_mnist(str(tmp_path))


def test_verification_is_cached_until_the_file_changes(tmp_path, fake_mnist, monkeypatch):
    write_all(tmp_path, fake_mnist)
    load_mnist(str(tmp_path))
    assert (fetch.cache_root() / fetch.STAMP_FILE).is_file()

    def no_hashing(*a, **k):
        raise AssertionError("re-hashed a verified file")

    monkeypatch.setattr(fetch.hashlib, "sha256", no_hashing)
    load_mnist(str(tmp_path))  # stamped: no hashing
    path = tmp_path / "t10k-labels-idx1-ubyte.gz"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(AssertionError, match="re-hashed"):
        load_mnist(str(tmp_path))


def test_wrong_shapes_are_data_errors(tmp_path, monkeypatch):
    files = fake_files()
    files["t10k-labels-idx1-ubyte"] = idx_bytes(np.arange(N_TEST + 1, dtype=np.uint8))
    monkeypatch.setattr(mnist, "SHA256", {k: hashlib.sha256(v).hexdigest() for k, v in files.items()})
    write_all(tmp_path, files)
    with pytest.raises(DataError, match="labels have shape"):
        load_mnist(str(tmp_path))


def test_split_is_fixed_by_split_seed(tmp_path, fake_mnist):
    write_all(tmp_path, fake_mnist)
    a, b, c = (load_mnist(str(tmp_path), split_seed=s) for s in (0, 0, 1))
    assert torch.equal(a.val_x, b.val_x) and torch.equal(a.train_y, b.train_y)
    assert not torch.equal(a.val_y, c.val_y)


@needs_mnist
@pytest.mark.mnist
def test_real_mnist():
    s = load_mnist(str(SHARED_DATA))
    assert s.sizes() == (50_000, 10_000, 10_000)
    assert s.train_x.shape[1:] == (1, 28, 28) and s.train_x.dtype == torch.uint8
    x = torch.cat([s.train_x, s.val_x]).double() / 255
    assert x.mean().item() == pytest.approx(0.1307, abs=5e-5)
    assert x.std().item() == pytest.approx(0.3081, abs=5e-5)
    counts = torch.bincount(torch.cat([s.train_y, s.val_y]), minlength=10).tolist()
    assert counts == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert torch.bincount(s.test_y).sum() == 10_000
    # train + val is exactly the 60k training file, split into two parts (as a multiset):
    full = torch.from_numpy(read_mnist(str(SHARED_DATA))[0].copy()).flatten(1).long()
    w = torch.randint(0, 2**20, (784,))  # exact integer fingerprints of the images
    parts = torch.cat([s.train_x, s.val_x]).flatten(1).long()
    assert torch.equal((parts @ w).sort().values, (full @ w).sort().values)
