"""A real CUDA out-of-memory error (`pytest -m cuda`; skipped without CUDA): the trial is
recorded as failed with the reason, and `--oom-retry` runs it once more with half the
batch, which fits. The GPU's memory is capped for this process halfway between what the
half batch and the full batch were measured to allocate at most, so the error is the
allocator's own. (Capped between the two runs' peak *reserved* memory, the full batch
still fitted on an H200: the allocator frees its cache before it gives up.)"""

from __future__ import annotations

import pytest
import torch

import tasks
from core.trials import TrainSettings, TrialSpec
from storage import load_trials

pytestmark = pytest.mark.cuda

CONFIG = {"d_z": 16384, "d_h": 64, "L": 6, "lr": 1e-3}  # activations dominate: they scale with the batch
GRID = "[hourglass]\nd_z = [16384]\nd_h = [64]\nL = [6]\nlr = [0.001]\n"
BATCH = 1024


def peak_allocated(batch: int) -> int:
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    spec = TrialSpec(
        "t", 0, "hourglass", CONFIG, "digits-denoise", (0,), TrainSettings(epochs=1, batch_size=batch, device="cuda")
    )
    result = tasks.run_trial(spec)
    assert result.status == "complete", result.error
    return torch.cuda.max_memory_allocated()


@pytest.fixture
def capped_memory():
    half, full = peak_allocated(BATCH // 2), peak_allocated(BATCH)
    assert full > 1.2 * half, (half, full)  # else the cap could not separate them (H200: 1.40)
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction((half + full) / 2 / total)
    yield half, full
    torch.cuda.set_per_process_memory_fraction(1.0)
    torch.cuda.empty_cache()


def test_a_real_out_of_memory_fails_and_is_retried_with_half_the_batch(cli, tmp_path, capped_memory):
    (tmp_path / "grid.toml").write_text(GRID)
    code, out, err = cli(
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "100M",
        "--sampler",
        "grid",
        "--space-file",
        "grid.toml",
        "--trials",
        "1",
        "--epochs",
        "1",
        "--batch-size",
        str(BATCH),
        "--retries",
        "0",
        "--oom-retry",
        "--device",
        "cuda",
        "--no-report",
        "--study",
        "oom",
    )
    assert code == 0, err
    df = load_trials("oom", f"sqlite:///{tmp_path / 'search.db'}").sort_values("number")
    assert list(df.status) == ["failed", "complete"], df[["status", "error"]]
    assert "CUDA out of memory" in df.iloc[0].error
    assert "out of memory; batch size" in df.iloc[1].note
    assert "peak GPU" in err
