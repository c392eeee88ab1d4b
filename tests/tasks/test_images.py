"""Image task inputs/targets on digits: noise, downsampling, prototypes, accuracy."""

from __future__ import annotations

import pytest
import torch

import tasks
from core.errors import UserError
from tasks.images import EVAL_CHUNK, downsample, eval_noise, nearest_prototype


def data(name: str, **options):
    return tasks.load_data(tasks.get_task(name, options), None, "cpu")


def eval_inputs(d, split="val", batch_size=4096):
    return torch.cat([inp for inp, _, _ in d.eval_batches(split, batch_size)])


def test_eval_noise_is_fixed_and_train_noise_fresh():
    d = data("digits-denoise")
    first = eval_inputs(d)
    assert torch.equal(first, eval_inputs(d))  # every epoch
    assert torch.equal(first, eval_inputs(data("digits-denoise", split_seed=0)))  # every trial
    assert not torch.equal(first[:100], eval_inputs(d, "test")[:100])  # val != test noise
    clean = d.x["val"].flatten(1)
    assert not torch.equal(first, clean) and first.min() >= 0 and first.max() <= 1
    # The noise is the same whatever the evaluation batch size.
    assert torch.equal(
        eval_noise("val", 0, 3000, (4,)),
        torch.cat([eval_noise("val", 0, 2 * EVAL_CHUNK, (4,)), eval_noise("val", 2 * EVAL_CHUNK, 3000, (4,))]),
    )
    idx = torch.arange(50)
    g = torch.Generator().manual_seed(0)
    a, target = d.train_batch(idx, g)
    b, _ = d.train_batch(idx, g)
    assert not torch.equal(a, b)  # fresh noise per batch
    assert torch.equal(target, d.x["train"][idx].flatten(1))
    # Same generator state -> same noise (reproducible runs).
    assert torch.equal(a, d.train_batch(idx, torch.Generator().manual_seed(0))[0])


def test_noise_level_option():
    x = data("digits-denoise", noise=0.0)
    inp, target, _ = next(x.eval_batches("val"))
    assert torch.equal(inp, target)
    strong = data("digits-denoise", noise=1.0)
    weak = data("digits-denoise", noise=0.1)
    err = lambda d: next(d.eval_batches("val"))[0].sub(d.x["val"].flatten(1)).abs().mean()  # noqa: E731
    assert err(strong) > 3 * err(weak)


def test_sr_inputs():
    d = data("digits-sr")
    inp, target = d.train_batch(torch.arange(20), torch.Generator())
    assert inp.shape == (20, 16) and target.shape == (20, 64)
    const = torch.full((2, 1, 28, 28), 0.7)
    for how in ("bicubic", "antialias"):
        assert torch.allclose(downsample(const, 2, how), torch.full((2, 1, 14, 14), 0.7), atol=1e-6)
    x = torch.rand(3, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    # The default is the authors' call (Hourglass_LM hourglass_mlp/utils/ds.py): plain
    # bicubic, no antialiasing, no clamp, so noise-like content overshoots [0, 1].
    y = downsample(x)
    assert torch.equal(
        y, torch.nn.functional.interpolate(x, size=(16, 16), mode="bicubic", align_corners=False, antialias=False)
    )
    assert y.min() < 0 or y.max() > 1
    # Antialiased (the option): clamped, and close to 2x2 block means.
    z = downsample(x, 2, "antialias")
    assert z.shape == (3, 3, 16, 16) and z.min() >= 0 and z.max() <= 1
    assert (z.mean() - x.mean()).abs() < 0.01 and not torch.allclose(y, z, atol=1e-3)
    anti = data("digits-sr", downsample="antialias")
    inp2, _ = anti.train_batch(torch.arange(20), torch.Generator())
    assert inp2.min() >= 0 and inp2.max() <= 1 and not torch.allclose(inp, inp2)


def test_genclass_prototypes_and_accuracy():
    d = data("digits-genclass")
    train_x, train_y = d.x["train"], d.y["train"]
    # One training image of each class, drawn with the split seed: the same draw every
    # time for one seed, another draw for another seed.
    flat = train_x.flatten(1).float()
    for k in range(10):
        same = (flat == d.prototypes[k]).all(1)
        assert same.any() and bool((train_y[same] == k).all())
    assert torch.equal(d.prototypes, data("digits-genclass").prototypes)
    other = data("digits-genclass", split_seed=1)
    assert not torch.equal(other.prototypes, d.prototypes)
    _, target = d.train_batch(torch.arange(30), torch.Generator())
    assert torch.equal(target, d.prototypes[train_y[:30]])
    # A perfect model (outputs the prototype) has accuracy 1; a shifted one points elsewhere.
    labels = d.y["val"]
    assert torch.equal(nearest_prototype(d.prototypes[labels], d.prototypes), labels)
    # (The 300 validation images form one evaluation batch, so labels[:len(inp)] lines up.)
    oracle = d.evaluate(lambda inp: d.prototypes[labels[: len(inp)]], "val")
    assert oracle["accuracy"] == 1.0 and oracle["psnr"] == pytest.approx(100.0)
    wrong = d.evaluate(lambda inp: d.prototypes[(labels[: len(inp)] + 1) % 10], "val")
    assert wrong["accuracy"] == 0.0


def test_identity_metrics_on_denoise():
    d = data("digits-denoise")
    m = d.evaluate(lambda inp: inp, "val")
    assert set(m) == {"psnr", "ssim"}
    assert 10 < m["psnr"] < 20 and 0 < m["ssim"] < 1
    clean = d.evaluate(lambda inp: d.x["val"][: len(inp)].flatten(1), "val")
    assert clean["psnr"] == pytest.approx(100.0) and clean["ssim"] == pytest.approx(1.0)


def test_load_data_is_cached():
    t = tasks.get_task("digits-sr")
    assert tasks.load_data(t, None, "cpu") is tasks.load_data(tasks.get_task("digits-sr"), None, "cpu")
    assert tasks.load_data(t, None, "cpu") is not tasks.load_data(
        tasks.get_task("digits-sr", {"split_seed": 1}), None, "cpu"
    )


def test_sr_trains_on_four_flips_of_each_image_by_default():
    """Chen et al.'s appendix: super-resolution trains with 4x flip augmentation (the
    image, flipped horizontally, vertically and both); flips=false is the short setting."""
    d = data("digits-sr")
    n = len(d.x["train"])
    assert d.n_train == 4 * n
    _, t = d.train_batch(torch.tensor([5, n + 5, 2 * n + 5, 3 * n + 5]), torch.Generator())
    img = t[0].view(8, 8)
    assert torch.equal(t[1].view(8, 8), img.flip(-1)) and torch.equal(t[2].view(8, 8), img.flip(-2))
    assert torch.equal(t[3].view(8, 8), img.flip(-1).flip(-2))
    assert data("digits-sr", flips=False).n_train == n
    assert data("digits-denoise").n_train == n  # MNIST-style denoising does not flip
    assert data("digits-denoise", flips=True).n_train == 4 * n
    with pytest.raises(UserError, match="flips must be true or false"):
        tasks.get_task("digits-sr", {"flips": 3})
    with pytest.raises(UserError, match="flips must be true or false"):
        tasks.get_task("digits-denoise", {"flips": "yes"})


def test_denoising_flips_as_the_paper_per_data_set():
    """A.3.2: ImageNet-32 denoising trains on the four flips, MNIST denoising does not."""
    assert tasks.get_task("imagenet32-denoise").options["flips"] is True
    assert tasks.get_task("imagenet32-denoise").train_copies() == 4
    assert tasks.get_task("mnist-denoise").train_copies() == 1
    assert tasks.get_task("imagenet32-denoise", {"flips": False}).train_copies() == 1
