"""The trainers on a GPU (`pytest -m cuda`; skipped without CUDA): where tensors live,
bf16 autocast against fp32, the fused optimiser, and the peak memory a trial reports."""

from __future__ import annotations

import pytest
import torch

import models
import tasks
from core.trials import TrainSettings, TrialSpec
from tasks.lm_data import autocast
from tasks.lm_train import lm_loss, make_lm_optimizer
from tasks.optimizers import make_adamw

pytestmark = pytest.mark.cuda

LM = {"d_model": 128, "L": 2, "K": 1, "d_h": 344, "n_heads": 2}


def test_auto_device_is_the_gpu_and_a_trial_trains_there():
    assert tasks.resolve_device("auto").type == "cuda"
    spec = TrialSpec(
        "t",
        0,
        "hourglass",
        {"d_z": 128, "d_h": 32, "L": 2, "lr": 1e-2},
        "digits-denoise",
        (0,),
        TrainSettings(epochs=2, device="auto"),
    )
    result = tasks.run_trial(spec)
    assert result.status == "complete", result.error
    assert result.device.startswith("cuda:0 (")
    assert result.peak_gpu_mib is not None and result.peak_gpu_mib > 0
    data = tasks.load_data(tasks.get_task("digits-denoise"), None, tasks.resolve_device("cuda"))
    x, _ = data.train_batch(torch.arange(4, device="cuda"), torch.Generator(device="cuda").manual_seed(0))
    assert x.device.type == "cuda"


def test_a_cuda_trial_beats_the_noisy_input_like_on_the_cpu():
    """The same trial on both devices reaches a PSNR within 0.5 dB (different kernels and
    random streams, so not bit-equal; a device bug would cost far more)."""
    config = {"d_z": 128, "d_h": 32, "L": 2, "lr": 1e-2}
    psnr = {}
    for device in ("cpu", "cuda"):
        spec = TrialSpec("t", 0, "hourglass", config, "digits-denoise", (0,), TrainSettings(epochs=8, device=device))
        result = tasks.run_trial(spec)
        assert result.status == "complete", result.error
        psnr[device] = result.metrics["psnr"]
    assert abs(psnr["cuda"] - psnr["cpu"]) < 0.5, psnr


def test_bf16_autocast_logits_and_loss_match_fp32():
    """bf16 has an 8-bit mantissa (relative rounding 2^-8 = 0.4%): the LM's logits under
    autocast stay within 5% of the fp32 logits' scale, and the loss within 1%."""
    task = tasks.get_task("lm-shakespeare")
    model = models.get_family("transformer").build(LM, task.io(), seed=0).cuda()
    idx = torch.randint(0, 256, (8, 128), device="cuda", generator=torch.Generator(device="cuda").manual_seed(0))
    with torch.no_grad():
        ref = model(idx).float()
        with autocast(torch.device("cuda")):
            low = model(idx)
    assert low.dtype == torch.bfloat16
    err = (low.float() - ref).abs().max() / ref.abs().max()
    assert err < 0.05, float(err)
    loss_ref, loss_low = lm_loss(ref, idx), lm_loss(low, idx)
    assert abs(float(loss_low) - float(loss_ref)) / float(loss_ref) < 0.01


@pytest.mark.parametrize("make", ["supervised", "lm"])
def test_the_optimiser_is_fused_on_the_gpu_and_steps_like_the_plain_one(make):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.LayerNorm(64)).cuda()
    twin = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.LayerNorm(64)).cuda()
    twin.load_state_dict(model.state_dict())
    if make == "supervised":
        fused = make_adamw(list(model.parameters()), 1e-2, 0.1)
        plain = torch.optim.AdamW(twin.parameters(), lr=1e-2, weight_decay=0.1, foreach=False)
    else:
        fused = make_lm_optimizer(model, 1e-2, 0.1)
        plain = torch.optim.AdamW(
            [
                {"params": [twin[0].weight], "weight_decay": 0.1},
                {"params": [twin[0].bias, *twin[1].parameters()], "weight_decay": 0.0},
            ],
            lr=1e-2,
            betas=(0.9, 0.95),
            foreach=False,
        )
    assert fused.defaults["fused"] is True
    start = [p.detach().clone() for p in model.parameters()]
    x = torch.randn(32, 64, device="cuda")
    for _ in range(3):
        for m, opt in ((model, fused), (twin, plain)):
            opt.zero_grad()
            m(x).square().mean().backward()
            opt.step()
    # An update is ~lr (1e-2) per step; float32 rounding differs between the kernels, and
    # Adam's m / sqrt(v) magnifies it where a gradient is ~0: agree to a tenth of a step.
    for a, b, a0 in zip(model.parameters(), twin.parameters(), start):
        assert (a - a0).abs().max() > 1e-3
        torch.testing.assert_close(a, b, rtol=0, atol=1e-3)


def test_a_compiled_trial_with_cuda_graphs_trains_like_the_eager_one():
    """`--compile reduce-overhead` (CUDA graphs): the same trial, within 0.5 dB."""
    config = {"d_z": 128, "d_h": 32, "L": 2, "lr": 1e-2}
    psnr = {}
    for mode in (None, "reduce-overhead"):
        spec = TrialSpec(
            "t", 0, "hourglass", config, "digits-denoise", (0,), TrainSettings(epochs=8, device="cuda", compile=mode)
        )
        result = tasks.run_trial(spec)
        assert result.status == "complete", result.error
        psnr[mode] = result.metrics["psnr"]
    assert abs(psnr["reduce-overhead"] - psnr[None]) < 0.5, psnr
