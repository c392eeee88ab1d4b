"""Reading kept weights back: find a trial's record, read the file, check it, build the model.

`read_weights` finds the record of one run's weights (`Store.artifacts(..., "weights")`),
reads the file from its store (or `artifacts=`, where the store has moved), and checks its
size and sha256 against the record and its metadata against the trial. `load_model`
builds the family's module from the trial's configuration (`models`), loads the state
(every key, `strict`), checks its trainable-parameter count against the record, and
returns it in eval mode. Everything a user can get wrong is a one-line `UserError`, and
nothing here writes to the database.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from typing import Any

from core.errors import UserError
from search.artifacts.location import open_location
from search.artifacts.weights import WEIGHTS


@dataclass(frozen=True)
class KeptWeights:
    """One run's weights file, read and checked, with what rebuilds its module."""

    study: str
    trial: int
    seed: int
    repeat: int
    family: str
    config: dict[str, Any]
    task: str
    task_options: dict[str, Any]
    params: int  # the exact count written in the file (`Family.count_params`)
    data: bytes  # the safetensors file
    record: dict[str, Any]  # the database's record: store, store_key, size, sha256
    retraining: int = 0  # 0: the search's run; k: of the trial's retraining k (`search train`)

    @property
    def filename(self) -> str:
        again = f"-retraining{self.retraining}" if self.retraining else ""
        return f"trial{self.trial}{again}-seed{self.seed}.safetensors"


def metadata_of(data: bytes) -> dict[str, str]:
    """The metadata of a safetensors file (its header's `__metadata__`): 8 bytes of
    little-endian header length, then the JSON header."""
    try:
        (n,) = struct.unpack("<Q", data[:8])
        return dict(json.loads(data[8 : 8 + n]).get("__metadata__") or {})
    except (struct.error, ValueError, AttributeError) as e:
        raise UserError(f"not a safetensors file: {e}") from e


def read_weights(
    study: str,
    trial: int,
    *,
    storage: str | None = None,
    seed: int = 0,
    artifacts: str | None = None,
    retraining: int = 0,
) -> KeptWeights:
    """The checked weights of trial `trial` of `study`, run `seed` (its index among the
    trial's seeds, 0 the first; or one of the seeds themselves). `artifacts` reads the
    file from that store instead of the recorded one (e.g. a folder that moved).
    `retraining` k > 0: a run of the trial's retraining k (`search train`) instead."""
    from storage import Store

    with Store(storage) as store:
        record = store.get_study(study)  # an unknown study: one line naming the known ones
        trials = {t.number: t for t in store.trials(study)}
        if trial not in trials:
            raise UserError(f"study {study!r} has no trial {trial}")
        t = trials[trial]
        if retraining:
            kept = _retrained(store, study, trial, retraining)
        else:
            kept = [a for a in store.artifacts(study, trial, WEIGHTS) if a["store_key"]]
    if not kept:
        keep = record.settings.get("keep")
        why = (
            f"it is {t.status}"
            if t.status != "complete"
            else "the study keeps none (--keep none)"
            if keep == "none"
            else "the study was created before weights were kept"
            if keep is None
            else "none were recorded for it"
        )
        raise UserError(f"trial {trial} of study {study!r} has no weights: {why}")
    run = _pick(kept, seed, study, trial)
    if run["removed_at"] is not None:
        raise UserError(
            f"the weights of trial {trial} of study {study!r} were removed when it fell off its "
            "family's Pareto front (--keep pareto; --keep all keeps every trial's)"
        )
    location = open_location(artifacts or run["store"])
    data = location.read(run["store_key"])
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != run["size"] or digest != run["sha256"]:
        raise UserError(
            f"the weights file {run['store_key']} in {location.url} differs from its record "
            f"(sha256 {digest[:12]}..., {len(data):,} bytes; recorded {str(run['sha256'])[:12]}..., "
            f"{run['size']:,} bytes)"
        )
    meta = metadata_of(data)
    config = json.loads(meta.get("config", "null"))
    if meta.get("family") != t.family or config != t.config:
        raise UserError(
            f"the weights file {run['store_key']} is of another model "
            f"({meta.get('family')!r}) than trial {trial} ({t.family!r})"
        )
    if record.settings.get("budget_of", "params") == "params" and int(meta["params"]) != t.params:
        raise UserError(
            f"the weights file {run['store_key']} counts {int(meta['params']):,} parameters, trial {trial} {t.params:,}"
        )
    return KeptWeights(
        study,
        trial,
        int(run["seed"]),
        int(run["repeat"]),
        t.family,
        t.config,
        meta["task"],
        json.loads(meta.get("task_options", "{}")),
        int(meta["params"]),
        data,
        run,
        int(retraining),
    )


def _retrained(store: Any, study: str, trial: int, retraining: int) -> list[dict[str, Any]]:
    """The weights records of the runs of retraining `retraining` of a trial (with their
    repeat and seed), or UserError naming the retrainings it has."""
    if isinstance(retraining, bool) or not isinstance(retraining, int) or retraining < 0:
        raise UserError(f"--retraining must be a retraining's number (1, 2, ...), got {retraining!r}")
    found = store.retrainings(study, [trial])
    chosen = [r for r in found if r.number == retraining]
    if not chosen:
        have = ", ".join(str(r.number) for r in found) or "none (search train makes one)"
        raise UserError(f"trial {trial} of study {study!r} has no retraining {retraining}; it has {have}")
    kept = [
        {**a, "repeat": run["repeat"], "seed": run["seed"]}
        for run in chosen[0].runs
        for a in run["artifacts"]
        if a["name"] == WEIGHTS and a["store_key"]
    ]
    if not kept:
        raise UserError(
            f"retraining {retraining} of trial {trial} of study {study!r} has no weights: it is {chosen[0].status}"
        )
    return kept


def _pick(kept: list[dict[str, Any]], seed: int, study: str, trial: int) -> dict[str, Any]:
    """The run `seed` names: an index among the runs, else a seed value."""
    by_repeat = {int(a["repeat"]): a for a in kept}
    seeds = {int(a["seed"]): a for a in kept}
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UserError(f"--seed must be an integer, got {seed!r}")
    if seed in by_repeat:
        return by_repeat[seed]
    if seed in seeds:
        return seeds[seed]
    have = ", ".join(f"{a['repeat']} (seed {a['seed']})" for a in kept)
    raise UserError(f"trial {trial} of study {study!r} has no weights for seed {seed}; it has {have}")


def build_model(weights: KeptWeights, device: str = "cpu") -> Any:
    """The family's module with the kept state, in eval mode, its trainable-parameter
    count checked against the file's (and so the family's exact count)."""
    from safetensors.torch import load

    from models import get_family
    from tasks import get_task

    family = get_family(weights.family)
    io_spec = get_task(weights.task, weights.task_options).io()
    model = family.build(weights.config, io_spec, seed=weights.seed)
    try:
        model.load_state_dict(load(weights.data), strict=True)
    except RuntimeError as e:
        raise UserError(
            f"the weights of trial {weights.trial} do not fit its {weights.family} model: {str(e).splitlines()[0]}"
        ) from e
    counted = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if not counted == weights.params == family.count_params(weights.config, io_spec):
        raise UserError(
            f"trial {weights.trial}: the model has {counted:,} trainable parameters, its record {weights.params:,}"
        )
    return model.to(device).eval()


def load_model(
    study: str,
    trial: int,
    *,
    storage: str | None = None,
    seed: int = 0,
    artifacts: str | None = None,
    device: str = "cpu",
    retraining: int = 0,
) -> Any:
    """The trained model of trial `trial` of `study` (run `seed`, the first by default):
    the family's torch module with the weights its test metrics come from, in eval mode.

        from search import load_model
        model = load_model("digits-denoise-hourglass-conventional", 3, storage="search.db")
    """
    return build_model(
        read_weights(study, trial, storage=storage, seed=seed, artifacts=artifacts, retraining=retraining), device
    )
