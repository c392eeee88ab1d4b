"""Writing a run's weights: one safetensors file per seed, in the process that trained it.

The file holds the state the run's metrics come from (the best-validation epoch's,
`tasks.train.BestValidation`) and, in its metadata (text, as safetensors allows), the
family, the configuration (JSON), the exact parameter count (`Family.count_params`), the
task and its options, the study, the trial and the seed. Its key is unique (a random
token), so a process killed mid-write can leave at most an unrecorded file: the record
(`weights_record`: store, key, size, sha256) travels back with the run's result and is
stored with it in one transaction (`Store.finish_trial`), never before the file is whole.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any

from core.trials import RunResult, TrialSpec
from search.artifacts.location import open_location

WEIGHTS = "weights"  # the artifact's name (run_artifacts.name)
MEDIA_TYPE = "application/vnd.safetensors"  # not registered with IANA; a label only
FAULT_ENV = "SEARCH_FAULT_WEIGHTS"  # tests: "crash" exits the process halfway through a write


def weights_key(spec: TrialSpec, seed: int) -> str:
    """`<study>.trial<N>.seed<S>.<token>.safetensors` (the study name made file-safe)."""
    study = re.sub(r"[^A-Za-z0-9._-]+", "_", spec.study).strip(".") or "study"
    return f"{study}.trial{spec.number}.seed{seed}.{uuid.uuid4().hex[:12]}.safetensors"


def weights_metadata(spec: TrialSpec, seed: int) -> dict[str, str]:
    """The metadata written into the file: what rebuilds the module without the database."""
    from models import get_family
    from tasks import get_task

    io_spec = get_task(spec.task, spec.task_options).io()
    return {
        "format": "pt",
        "family": spec.family,
        "config": json.dumps(spec.config, sort_keys=True),
        "params": str(get_family(spec.family).count_params(spec.config, io_spec)),
        "task": spec.task,
        "task_options": json.dumps(spec.task_options, sort_keys=True),
        "study": spec.study,
        "trial": str(spec.number),
        "seed": str(seed),
    }


def encode(state: dict[str, Any], metadata: dict[str, str]) -> bytes:
    """The safetensors bytes of a state dict (tensors copied to the CPU, contiguous)."""
    from safetensors.torch import save

    return save({k: v.detach().to("cpu").contiguous() for k, v in state.items()}, metadata=metadata)


def write_weights(url: str, spec: TrialSpec, seed: int, state: dict[str, Any]) -> dict[str, Any]:
    """Write one run's state to the store at `url`; return its artifact record
    (`RunResult.artifacts["weights"]`): media_type, store, store_key, size, sha256."""
    data = encode(state, weights_metadata(spec, seed))
    location = open_location(url, create=True)
    key = weights_key(spec, seed)
    _inject_fault(location, key, data)
    location.write(key, data)
    return {
        "media_type": MEDIA_TYPE,
        "store": location.url,
        "store_key": key,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def weights_sink(url: str):
    """The `keep` of `tasks.run_trial` that writes each complete run's state to `url`."""

    def keep(spec: TrialSpec, run: RunResult, state: dict[str, Any]) -> dict[str, Any]:
        return write_weights(url, spec, run.seed, state)

    return keep


def _inject_fault(location: Any, key: str, data: bytes) -> None:
    """With SEARCH_FAULT_WEIGHTS=crash (tests only): write half the file, then exit at
    once (as kill -9 during the write would leave it)."""
    import os

    if os.environ.get(FAULT_ENV) == "crash":
        location.write(key, data[: len(data) // 2])
        os._exit(137)
