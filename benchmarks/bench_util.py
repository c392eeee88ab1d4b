"""Small helpers shared by the benchmark scripts of every folder (run as
`python -m benchmarks.GROUP.NAME` from the repository's root; they
`from benchmarks.bench_util import ...`)."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch


def device_sync(device: torch.device) -> Callable[[], None]:
    """A function that waits for the device's queued work (a no-op on the CPU)."""
    return (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)


def timed(step: Callable[[], object], iters: int, sync: Callable[[], None]) -> float:
    """Seconds per iteration of `step` (after one warm-up call)."""
    step()
    sync()
    t = time.perf_counter()
    for _ in range(iters):
        step()
    sync()
    return (time.perf_counter() - t) / iters


def cpu_name() -> str:
    """The processor's model name (from /proc/cpuinfo where there is one)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class Quiet:
    """A study's progress (search.engine.study.Progress) that prints nothing: a benchmark
    running many studies reports its own figures instead."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *a, **k: None


def fail(message: str) -> None:
    """Bad input to a benchmark script: one line on stderr naming the script, exit status 2
    (the CLI's convention)."""
    print(f"{os.path.basename(sys.argv[0])}: {message}", file=sys.stderr)
    sys.exit(2)


def write_json(path: str | Path, data: object, indent: int = 1, **dumps: object) -> None:
    """A benchmark's results as JSON at `path` (its folder made first), ending in a newline."""
    import json

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=indent, **dumps) + "\n")


def screenshot(fig, out: str | Path, width: int, height: int) -> None:
    """A plotly figure as a PNG at `out`: its page drawn by headless Chromium in a window of
    `width` x `height` pixels (Chromium must be installed: `apt-get install chromium`)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "figure.html"
        fig.write_html(page, include_plotlyjs=True, full_html=True, config={"displayModeBar": False})
        subprocess.run(
            [
                "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--window-size={width},{height}",
                "--virtual-time-budget=8000",
                f"--screenshot={Path(out).resolve()}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
