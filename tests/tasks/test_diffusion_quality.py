"""Diffusion sample quality: the Fréchet distance and the cached sample-quality classifier
(the schedules, DDIM and guidance: tests/tasks/test_diffusion_math.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from core.errors import UserError
from tasks.datasets import fetch, load_digits, load_mnist
from tasks.diffusion import (
    DigitClassifier,
    clear_memory_cache,
    feature_stats,
    frechet_distance,
    load_classifier,
    sample_quality,
)
from tests.tasks.conftest import SHARED_DATA, needs_mnist

REPO = Path(__file__).parents[2]


def test_frechet_identical_is_zero_and_diagonal_closed_form():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(50, 8, dtype=torch.float64, generator=g)
    cov = a.T @ a / 49
    mu = torch.randn(8, dtype=torch.float64, generator=g)
    assert abs(frechet_distance(mu, cov, mu, cov)) < 1e-6
    s1, s2 = torch.rand(8, generator=g) + 0.1, torch.rand(8, generator=g) + 0.1
    m1, m2 = torch.randn(8, generator=g), torch.randn(8, generator=g)
    expected = float((m1 - m2).pow(2).sum() + (s1.sqrt() - s2.sqrt()).pow(2).sum())
    assert frechet_distance(m1, torch.diag(s1), m2, torch.diag(s2)) == pytest.approx(expected, rel=1e-6)


def test_frechet_symmetric_nonnegative_and_matches_scipy():
    g = torch.Generator().manual_seed(1)
    for _ in range(5):
        x1 = torch.randn(40, 6, generator=g) * torch.rand(6, generator=g)
        x2 = torch.randn(30, 6, generator=g) @ torch.randn(6, 6, generator=g) + 1
        (m1, c1), (m2, c2) = feature_stats(x1), feature_stats(x2)
        d = frechet_distance(m1, c1, m2, c2)
        assert d >= 0 and d == pytest.approx(frechet_distance(m2, c2, m1, c1), rel=1e-9, abs=1e-12)
        linalg = pytest.importorskip("scipy.linalg")  # reference only; the code has no scipy
        c1n, c2n = c1.numpy(), c2.numpy()
        ref = float(((m1 - m2) ** 2).sum()) + np.trace(c1n + c2n - 2 * linalg.sqrtm(c1n @ c2n).real)
        assert d == pytest.approx(ref, rel=1e-6, abs=1e-9)
    # rank-deficient covariances (fewer samples than features) stay finite and >= 0
    (m1, c1), (m2, c2) = feature_stats(torch.randn(3, 10, generator=g)), feature_stats(torch.randn(4, 10, generator=g))
    assert 0 <= frechet_distance(m1, c1, m2, c2) < float("inf")


def test_feature_stats_known_data():
    x = torch.tensor([[1.0, 2.0], [3.0, 6.0], [5.0, 4.0]])
    mu, cov = feature_stats(x)
    assert mu.dtype == torch.float64 and torch.allclose(mu, torch.tensor([3.0, 4.0], dtype=torch.float64))
    assert torch.allclose(cov, torch.from_numpy(np.cov(x.numpy().T)))  # N - 1
    assert torch.allclose(cov, torch.tensor([[4.0, 2.0], [2.0, 4.0]], dtype=torch.float64))
    with pytest.raises(UserError):
        feature_stats(torch.zeros(1, 3))
    with pytest.raises(UserError):
        frechet_distance(mu, cov, torch.zeros(3), torch.eye(3))


# ---------------------------------------------------------- sample-quality classifier


def test_digit_classifier_shapes():
    for size in (8, 28):
        m = DigitClassifier(1, size, 10)
        x = torch.rand(5, 1, size, size)
        assert m.features(x).shape == (5, 128) and m(x).shape == (5, 10)
    assert DigitClassifier(3, 32, 4)(torch.rand(2, 3, 32, 32)).shape == (2, 4)


@pytest.fixture
def digits():
    clear_memory_cache()
    yield load_digits(split_seed=0)
    clear_memory_cache()


def test_classifier_trains_once_then_loads(digits, tmp_path, capsys):
    d = digits
    args = ("digits", d.train_x, d.train_y, d.test_x, d.test_y, "cpu")
    first = load_classifier(*args, epochs=8, cache_dir=tmp_path)
    err = capsys.readouterr()
    assert first.trained and first.path.is_file() and first.path.parent == tmp_path
    assert err.out == "" and err.err.count("\n") == 1 and str(first.path) in err.err
    assert first.test_accuracy > 0.8  # chance is 0.1
    assert not first.model.training
    meta = __import__("json").loads(first.path.with_suffix(".json").read_text())
    assert meta["key"] == "digits" and meta["epochs"] == 8 and meta["torch"] == torch.__version__
    assert meta["test_accuracy"] == pytest.approx(first.test_accuracy)
    mtime = first.path.stat().st_mtime_ns

    assert load_classifier(*args, epochs=8, cache_dir=tmp_path) is first  # in-memory cache
    clear_memory_cache()
    again = load_classifier(*args, epochs=8, cache_dir=tmp_path)
    assert not again.trained and again is not first
    assert capsys.readouterr().err == ""
    assert again.path.stat().st_mtime_ns == mtime and again.test_accuracy == first.test_accuracy
    x = d.test_x[:16]
    assert torch.equal(again.model(x), first.model(x))

    # other epochs or other data: another file
    less = (d.train_x[:-1], d.train_y[:-1], d.test_x, d.test_y)
    other = load_classifier("digits", *less, "cpu", epochs=1, cache_dir=tmp_path)
    assert other.trained and other.path != first.path
    with pytest.raises(UserError):
        load_classifier("../evil", *args[1:], cache_dir=tmp_path)


def test_classifier_default_cache_dir_and_uint8(digits):
    d = digits
    u8 = lambda x: (x * 255).round().to(torch.uint8)  # noqa: E731
    tc = load_classifier("digits-u8", u8(d.train_x), d.train_y, u8(d.test_x), d.test_y, "cpu", epochs=1)
    assert tc.path.parent == fetch.cache_root() / "classifiers" and tc.path.is_file()


def test_sample_quality_real_vs_noise(digits, tmp_path):
    d = digits
    tc = load_classifier("digits", d.train_x, d.train_y, d.test_x, d.test_y, "cpu", epochs=8, cache_dir=tmp_path)
    mu, cov = tc.real_stats(d.test_x)
    assert tc.real_stats(d.test_x) is tc.real_stats(d.test_x)  # cached
    assert mu.shape == (128,) and cov.shape == (128, 128) and mu.dtype == torch.float64
    real = sample_quality(tc, d.val_x, d.val_y, mu, cov)
    noise = sample_quality(tc, torch.rand(300, 1, 8, 8, generator=torch.Generator().manual_seed(0)), d.val_y, mu, cov)
    assert set(real) == {"sample_accuracy", "frechet"}
    assert real["sample_accuracy"] > 0.8 and noise["sample_accuracy"] < 0.4
    assert real["frechet"] < 0.1 * noise["frechet"]
    assert sample_quality(tc, d.test_x, d.test_y, mu, cov)["frechet"] < 1e-6  # the same images


@pytest.mark.slow
def test_classifier_concurrent_processes_train_once(tmp_path):
    """Two processes asking at once: one trains, the other waits on the lock and loads."""
    code = (
        "import sys, torch; torch.set_num_threads(1)\n"
        "from tasks.datasets import load_digits\n"
        "from tasks.diffusion import load_classifier\n"
        "d = load_digits()\n"
        "data = (d.train_x, d.train_y, d.test_x, d.test_y)\n"
        "tc = load_classifier('digits', *data, 'cpu', epochs=3, cache_dir=sys.argv[1])\n"
        "print(int(tc.trained), tc.test_accuracy)\n"
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    flags = sorted(o.split()[0] for o, _ in outs)
    assert flags == ["0", "1"]
    assert len({o.split()[1] for o, _ in outs}) == 1
    assert len(list(tmp_path.glob("*.pt"))) == 1 and not list(tmp_path.glob("*.tmp"))


@pytest.mark.slow
@pytest.mark.mnist
@needs_mnist
def test_classifier_on_real_mnist():
    clear_memory_cache()
    s = load_mnist(str(SHARED_DATA), split_seed=0)
    tc = load_classifier("mnist", s.train_x, s.train_y, s.test_x, s.test_y, "cpu", epochs=2)
    assert tc.trained and tc.test_accuracy >= 0.985
    mu, cov = tc.real_stats(s.test_x)
    q = sample_quality(tc, s.val_x[:2000].float() / 255, s.val_y[:2000], mu, cov)
    assert q["sample_accuracy"] >= 0.98 and q["frechet"] < 10
    noise = sample_quality(tc, torch.rand(2000, 1, 28, 28), s.val_y[:2000], mu, cov)
    assert noise["frechet"] > 100 * q["frechet"]
    clear_memory_cache()
