"""The GPU checklist's benchmark scripts (benchmarks/gpu/gpu_checklist.sh) run on the CPU too:
tiny settings, real output."""

import json

import pytest

from tests.bench_scripts import run_benchmark
from tests.tasks.test_lm import SHARED_DATA, needs_shakespeare


@pytest.mark.slow
@needs_shakespeare
def test_lm_mfu_measures_the_trainers_steady_rate_on_the_cpu(tmp_path):
    out = tmp_path / "mfu.json"
    r = run_benchmark(
        "gpu.lm_mfu",
        "--device",
        "cpu",
        "--d-model",
        "128",
        "--layers",
        "1",
        "--context",
        "32",
        "--batch",
        "2",
        "--steps",
        "2",
        "--repeats",
        "2",
        "--compile",
        "off",
        "--json",
        out,
        "--data-dir",
        SHARED_DATA,
    )
    assert r.returncode == 0, r.stderr
    assert "| 128 | 1 |" in r.stdout
    data = json.loads(out.read_text())
    (row,) = data["rows"]
    assert row["config"] == {"d_model": 128, "L": 1, "K": 1, "d_h": 384, "n_heads": 1}
    assert len(row["tokens_per_s"]) == 2 and all(v > 0 for v in row["tokens_per_s"])
    assert data["peak_tflops"] is None  # no datasheet peak for a CPU: MFU is not made up


@pytest.mark.slow
def test_gpu_pack_runs_k_processes_on_one_study(tmp_path):
    out = tmp_path / "pack.json"
    r = run_benchmark(
        "gpu.gpu_pack",
        "--task",
        "digits-denoise",
        "--k",
        "1,2",
        "--packs",
        "2",
        "--trials",
        "2",
        "--epochs",
        "1",
        "--json",
        out,
        timeout=240,
    )
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())["rows"]
    assert [(row["k"], row["pack"]) for row in rows] == [(1, 1), (2, 1), (1, 2)]
    assert all(row["complete"] == 2 and row["exit_codes"] == [0] * row["k"] for row in rows)
    assert "| 2 |" in r.stdout
