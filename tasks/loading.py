"""Devices and the per-process data cache (a study of many trials loads its data once)."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import torch

from core.errors import UserError
from tasks.base import Task
from tasks.datasets.fetch import ENV_DATA_DIR

_CACHE: OrderedDict[tuple, Any] = OrderedDict()
CACHE_SIZE = 2  # data sets kept per process (least recently used dropped first)


def device_type(name: str | torch.device | None) -> str:
    """The type of device a setting names ("cpu", "cuda"; "auto" and None: cuda where
    available), whether or not it is available here."""
    if name in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(name).split(":")[0]


def resolve_device(name: str | torch.device = "auto") -> torch.device:
    """ "auto" -> cuda when available, else cpu; "cuda" must be available (UserError)."""
    if isinstance(name, torch.device):
        dev = name
    elif name == "auto":
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            dev = torch.device(name)
        except (RuntimeError, ValueError):
            raise UserError(f"unknown device {name!r}; use auto, cpu, cuda or cuda:N") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise UserError(f"device {name!r} requested but CUDA is not available")
        dev = torch.device("cuda", dev.index if dev.index is not None else torch.cuda.current_device())
    return dev


def device_label(device: torch.device) -> str:
    """'cpu' or e.g. 'cuda:0 (NVIDIA H100 80GB HBM3)'."""
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)})"
    return str(device)


def load_data(task: Task, data_dir: str | None, device: str | torch.device = "auto") -> Any:
    """The task's data on `device`, loaded once per process (key: task name, options,
    data_dir, SEARCH_DATA_DIR and device). Raises DataError/UserError with one line, so
    a CLI can call it before starting a study to fail fast."""
    dev = resolve_device(device)
    key = (
        task.name,
        json.dumps(task.options, sort_keys=True, default=str),
        str(Path(data_dir).expanduser().resolve()) if data_dir is not None else None,
        os.environ.get(ENV_DATA_DIR),
        str(dev),
    )
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    data = task.load(data_dir, dev)
    _CACHE[key] = data
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return data


def clear_data_cache() -> None:
    """Forget the data sets this process has loaded (tests; a data folder that changed)."""
    _CACHE.clear()
