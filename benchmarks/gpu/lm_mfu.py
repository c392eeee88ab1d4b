"""Tokens per second and model FLOP utilisation of the language-model trainer, as a search
runs it: `tasks.run_trial` of the conventional Transformer on lm-shakespeare (bf16
autocast, fused AdamW, fused SDPA; tasks/lm_train.py), with and without `compile=true`.

Each repeat is one trial of 5S steps with 5 evaluations (after steps S, 2S, ..., 5S);
its records' times since the run's start give
  tokens/s = 4 S batch context / (elapsed(eval 5) - elapsed(eval 1)),
the steady state of the trainer's loop: what a trial spends once (building and moving
the model, loading the corpus, compiling, the first steps) falls before evaluation 1,
and each interval holds S steps and one evaluation of `eval_tokens` (16384 tokens,
forward only), as in a search.
Model FLOPs per token are PaLM's (Chowdhery et al. 2022, App. B): 6 N + 12 L d_model T,
N the weights of every matrix product (embedding table excluded, the read-out included),
T the context. MFU = model FLOP/s over the GPU's dense bf16 peak (`--peak-tflops`;
989.4 for the H100 and H200 SXM, NVIDIA's datasheets); an 8192^3 bf16 matrix product is
timed beside it as what the chip reaches here.

    python -m benchmarks.gpu.lm_mfu --device cuda [--data-dir ../shared/data] [--d-model 1024,2048]
        [--layers 4] [--context 512] [--batch 32] [--steps 20] [--repeats 2] [--compile off,on]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import torch

import models
import tasks
from benchmarks.bench_util import device_sync, timed, write_json
from core.trials import TrainSettings, TrialSpec

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = str(REPO.parent / "shared" / "data") if (REPO.parent / "shared" / "data").is_dir() else None

DATASHEET_PEAK_TFLOPS = {"H100": 989.4, "H200": 989.4}  # dense bf16, SXM


def lm_config(d_model: int, layers: int) -> dict[str, int]:
    """Llama's shape: head size 128, d_h = 8/3 d_model rounded up to a multiple of 64."""
    return {
        "d_model": d_model,
        "L": layers,
        "K": 1,
        "d_h": -(-8 * d_model // 3 // 64) * 64,
        "n_heads": max(1, d_model // 128),
    }


def flops_per_token(config: dict[str, int], io, context: int) -> tuple[float, int]:
    model = models.get_family("transformer").build(config, io, seed=0)
    n = sum(p.numel() for name, p in model.named_parameters() if p.dim() >= 2 and "embed" not in name)
    return 6.0 * n + 12.0 * config["L"] * config["d_model"] * context, n


def steady_rate(config, context, batch, steps, compiled, device, data_dir) -> float:
    """Tokens/s of one trial between its first and its fifth evaluation."""
    spec = TrialSpec(
        "mfu",
        0,
        "transformer",
        {**config, "lr": 3e-4},
        "lm-shakespeare",
        (0,),
        TrainSettings(epochs=5, batch_size=batch, tokens=5 * steps * batch * context, device=device),
        data_dir=data_dir,
        task_options={"context": context, "compile": compiled},
    )
    result = tasks.run_trial(spec)
    if result.status != "complete":
        raise SystemExit(f"trial {config} compile={compiled} {result.status}: {result.error}\n{result.traceback}")
    epochs = result.runs[0].epochs
    assert len(epochs) == 5, len(epochs)
    return 4 * steps * batch * context / (epochs[4].elapsed_s - epochs[0].elapsed_s)


def matmul_tflops(device: torch.device) -> float:
    """TFLOP/s of an 8192^3 bf16 matrix product: 3 warm-ups, then the mean of 10."""
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    for _ in range(2):
        a @ a  # bench_util.timed adds the third warm-up
    return 2 * 8192**3 / timed(lambda: a @ a, 10, device_sync(device)) / 1e12


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--data-dir", default=SHARED_DATA)
    p.add_argument("--d-model", default="1024,2048")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--context", type=int, default=512)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=20, help="S: steps between two evaluations (a trial trains 5S)")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--compile", default="off,on")
    p.add_argument("--peak-tflops", type=float, default=None, help="dense bf16 peak (default: by GPU name)")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)

    device = tasks.resolve_device(args.device)
    label = tasks.device_label(device)
    peak = args.peak_tflops or next((v for k, v in DATASHEET_PEAK_TFLOPS.items() if k in label), None)
    measured = matmul_tflops(device) if device.type == "cuda" else None
    io = tasks.get_task("lm-shakespeare", {"context": args.context}).io()
    print(
        f"device {label}, torch {torch.__version__}; datasheet bf16 peak {peak} TFLOP/s"
        + (f", 8192^3 bf16 matmul here {measured:.0f} TFLOP/s" if measured else ""),
        flush=True,
    )
    print(
        "| d_model | L | params in matmuls | compile | tokens/s (median) | per repeat | model TFLOP/s | MFU (datasheet) | MFU (matmul here) |"
    )
    print("|---:|---:|---:|---|---:|---|---:|---:|---:|", flush=True)
    rows = []
    for d in (int(v) for v in args.d_model.split(",")):
        config = lm_config(d, args.layers)
        fpt, n = flops_per_token(config, io, args.context)
        for mode in args.compile.split(","):
            compiled = mode == "on"
            rates = [
                steady_rate(config, args.context, args.batch, args.steps, compiled, args.device, args.data_dir)
                for _ in range(args.repeats)
            ]
            rate = statistics.median(rates)
            tflops = rate * fpt / 1e12
            mfu = tflops / peak if peak else float("nan")
            mfu_here = tflops / measured if measured else float("nan")
            rows.append(
                {
                    "d_model": d,
                    "config": config,
                    "params_in_matmuls": n,
                    "compile": compiled,
                    "tokens_per_s": rates,
                    "median": rate,
                    "model_tflops": tflops,
                    "mfu": mfu,
                    "mfu_vs_matmul": mfu_here,
                }
            )
            print(
                f"| {d} | {args.layers} | {n / 1e6:.0f}M | {mode} | {rate:,.0f} | "
                f"{', '.join(f'{v:,.0f}' for v in rates)} | {tflops:.0f} | {mfu:.1%} | {mfu_here:.1%} |",
                flush=True,
            )
    if args.json:
        write_json(
            args.json,
            {
                "device": label,
                "torch": torch.__version__,
                "peak_tflops": peak,
                "matmul_tflops": measured,
                "context": args.context,
                "batch": args.batch,
                "steps_between_evaluations": args.steps,
                "rows": rows,
            },
        )


if __name__ == "__main__":
    main()
