"""benchmarks/speed/pack_shapes.py: 8 residual MLPs of different shapes, per training step
alone, padded and unpadded (issue 81 item 2)."""

from __future__ import annotations

import json

import torch

from benchmarks.speed import pack_shapes as bench
from tests.bench_scripts import run_benchmark


def test_a_smoke_run_times_every_form_on_both_inputs(tmp_path):
    out = tmp_path / "p.json"
    r = run_benchmark("speed.pack_shapes", "--repeats", 1, "--steps", 2, "--out", out)
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())["rows"]
    assert {(x["inputs"], x["family"], x["form"]) for x in rows} == {
        (i, f, form) for i in bench.INPUTS for f in bench.SHAPES for form in bench.FORMS
    }
    assert all(x["median_ms"] > 0 for x in rows)
    assert all(abs(x["throughput_vs_alone"] - 1) < 1e-9 for x in rows if x["form"] == "alone")


def test_the_unpadded_forms_train_each_member_as_alone_first_step():
    """A member's loss at the first step is the same whichever form computes it (its own
    weights and batch): the prototypes time the same work, not a cheaper one."""
    io = bench.io_of(64)
    x = torch.rand(8, 1, 4, 64, generator=torch.Generator().manual_seed(0))
    alone = [
        float(torch.nn.functional.mse_loss(m(x[k, 0]), x[k, 0])) for k, m in enumerate(bench.build("hourglass", io))
    ]
    ragged = [float(bench.member_loss(bench.weights(m), x[k, 0])) for k, m in enumerate(bench.build("hourglass", io))]
    assert max(abs(a - b) for a, b in zip(ragged, alone)) < 1e-6
