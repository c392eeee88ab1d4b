"""`search model STUDY TRIAL --out DIR`: a trial's weights, configuration and a loader.

Writes `trial<N>-seed<S>.safetensors` (the file as kept, checked by `read_weights`),
`config.json` (family, configuration, task and its options, exact parameter count, the
trial's metrics) and `load.py`, a short script that rebuilds the module with the family's
own code (`models`) and loads the weights into it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.errors import UserError, one_line
from search.artifacts.load import KeptWeights

SNIPPET = '''"""Trial {trial} of study {study!r} (seed {seed}): its {family} model with the kept weights.

    python load.py        # builds the model and prints its parameter count
Needs this project installed (the family's code builds the module). From the database
instead: from search import load_model; load_model({study!r}, {trial}, seed={seed}{again}).
"""
import json
from pathlib import Path

from safetensors.torch import load_file

from models import get_family
from tasks import get_task

here = Path(__file__).resolve().parent
info = json.loads((here / "config.json").read_text())
io = get_task(info["task"], info["task_options"]).io()
model = get_family(info["family"]).build(info["config"], io, seed=info["seed"])
model.load_state_dict(load_file(here / info["weights"]))
model.eval()
assert sum(p.numel() for p in model.parameters() if p.requires_grad) == info["params"]

if __name__ == "__main__":
    print(f"{{info['family']}}: {{info['params']:,}} parameters, {{info['config']}}")
'''


def write_model_folder(weights: KeptWeights, out: str | Path, metrics: dict[str, Any] | None = None) -> list[Path]:
    """Write the three files into `out` (made if missing); return their paths."""
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        info = {
            "study": weights.study,
            "trial": weights.trial,
            "retraining": weights.retraining,
            "seed": weights.seed,
            "family": weights.family,
            "config": weights.config,
            "task": weights.task,
            "task_options": weights.task_options,
            "params": weights.params,
            "weights": weights.filename,
            "sha256": weights.record["sha256"],
            "metrics": metrics or {},
        }
        paths = [folder / weights.filename, folder / "config.json", folder / "load.py"]
        paths[0].write_bytes(weights.data)
        paths[1].write_text(json.dumps(info, indent=2) + "\n")
        again = f", retraining={weights.retraining}" if weights.retraining else ""
        paths[2].write_text(
            SNIPPET.format(
                study=weights.study, trial=weights.trial, seed=weights.seed, family=weights.family, again=again
            )
        )
    except OSError as e:
        raise UserError(f"cannot write the model to {str(out)!r}: {one_line(e)}") from e
    return paths
