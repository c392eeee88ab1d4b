"""`--pack K|auto`: how many trials the local executor trains at once as one program
(tasks/fused_train.py; a trial's own seeds fuse whatever K is). `auto` is chosen per
device by measurement (docs/benchmarks.md, "Fused trials"; on a CPU, packs without
padding: docs/results/speed.md, "Different shapes in one program"): AUTO_PACK."""

from __future__ import annotations

from typing import Any

from core.errors import UserError

# device type -> trials per pack under `--pack auto`
AUTO_PACK: dict[str, int] = {"cpu": 1, "cuda": 1}


def whole_number(value: Any, flag: str, allow_auto: bool, noun: str = "") -> int | str:
    """A count flag's value: a whole number of at least 1 (or "auto" where allowed);
    UserError (one line) naming `flag` otherwise. The one rule of --pack, --workers and
    --threads."""
    if allow_auto and value == "auto":
        return value
    try:
        k = int(value)
    except (TypeError, ValueError):
        k = 0
    if isinstance(value, bool) or k < 1 or str(k) != str(value).strip():
        auto = ", or auto" if allow_auto else ""
        raise UserError(f"{flag} must be a whole number {noun}of at least 1{auto}, got {value!r}")
    return k


def check_pack(value: Any) -> int | str:
    """`--pack`'s value: a positive whole number or "auto"; UserError (one line) otherwise."""
    return whole_number(value, "--pack", allow_auto=True, noun="of trials ")


def describe_pack(k: int, device_type: str) -> str:
    """The first line's words for packs of `k` trials on a device of `device_type` ("" for
    one trial a pack): how a pack trains there (tasks/fused_train.py RAGGED_DEVICES)."""
    if k <= 1:
        return ""
    from tasks.fused_train import RAGGED_DEVICES  # torch: only when a search runs

    how = "each its own model, nothing padded" if device_type in RAGGED_DEVICES else "stacked where a family stacks"
    return f", in packs of up to {k} trials ({how})"


def resolve_pack(value: Any, device: str = "auto") -> int:
    """Trials per pack: `value`, or for "auto" AUTO_PACK of the device the trials train on."""
    value = check_pack(value)
    if value != "auto":
        return int(value)
    from tasks.loading import device_type  # torch: only when a search runs

    return AUTO_PACK.get(device_type(device), 1)
