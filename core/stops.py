"""How a pruned trial's reason says where it stopped: written by the pruner
(search/engine/pruners.py), read back by the reports' compute figures
(reports/compute.py), so that a trials frame alone tells how much training early stopping
saved. One format, here."""

from __future__ import annotations

import re

_STOPPED = re.compile(r"^stopped at epoch (\d+) of (\d+)\b")


def stop_reason(epoch: int, epochs: int, why: str) -> str:
    """A pruned trial's reason: "stopped at epoch 3 of 10: <why>"."""
    return f"stopped at epoch {epoch} of {epochs}: {why}"


def stopped_at(reason: str | None) -> tuple[int, int] | None:
    """(epoch, epochs) of a reason made by `stop_reason`; None for any other text (and for
    the reasons of studies pruned before the epochs were written: "stopped at epoch 3:")."""
    m = _STOPPED.match(reason or "")
    if m is None:
        return None
    epoch, epochs = int(m.group(1)), int(m.group(2))
    return (epoch, epochs) if 0 < epoch <= epochs else None
