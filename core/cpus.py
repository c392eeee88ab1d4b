"""How many CPU cores this process may use: the smallest of its affinity mask (taskset,
a scheduler's cpuset) and its cgroup's CPU quota (a container's `--cpus`), never
`os.cpu_count()` alone, which counts the machine's cores whatever the process is allowed.

cgroup v2 states the quota in `cpu.max` as "QUOTA PERIOD" (microseconds; "max" for none),
cgroup v1 in `cpu.cfs_quota_us` (-1 for none) and `cpu.cfs_period_us`. A quota of 1.5
cores counts as 1 (a second process would get half a core), at least 1 in all.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def quota_cores(cpu_max: str | None = None, cfs_quota: str | None = None, cfs_period: str | None = None) -> int | None:
    """Whole cores a cgroup quota allows (floor, at least 1), None when there is no quota.

    cpu_max: the text of cgroup v2's `cpu.max` ("200000 100000" -> 2, "max 100000" -> None);
    cfs_quota/cfs_period: cgroup v1's files ("150000", "100000" -> 1; quota "-1" -> None).
    Text that does not parse counts as no quota."""
    try:
        if cpu_max is not None:
            quota, _, period = cpu_max.strip().partition(" ")
            if quota == "max":
                return None
            q, p = float(quota), float(period or 100_000)
        elif cfs_quota is not None and cfs_period is not None:
            q, p = float(cfs_quota.strip()), float(cfs_period.strip())
            if q < 0:
                return None
        else:
            return None
    except ValueError:
        return None
    if q <= 0 or p <= 0:
        return None
    return max(1, math.floor(q / p + 1e-9))


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def cgroup_cores(root: Path = CGROUP_ROOT) -> int | None:
    """The quota of this process's cgroup under `root` (v2's cpu.max, else v1's cpu/ files),
    None when none is set or none can be read."""
    v2 = _read(root / "cpu.max")
    if v2 is not None:
        return quota_cores(cpu_max=v2)
    for folder in (root / "cpu", root / "cpu,cpuacct"):
        quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
        if quota is not None and period is not None:
            return quota_cores(cfs_quota=quota, cfs_period=period)
    return None


def usable_cpus(root: Path = CGROUP_ROOT) -> int:
    """Cores this process may use: min(affinity mask, cgroup quota), at least 1."""
    try:
        allowed = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        allowed = os.cpu_count() or 1
    quota = cgroup_cores(root)
    return max(1, min(allowed, quota) if quota is not None else allowed)
