"""The grid sampler: a paper-style grid of every family's values."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from search.engine.sampling.base import Proposal, Rejection, Sampler, config_key
from search.spaces import check_config, grid_configs


class GridSampler(Sampler):
    """Paper-style grid: every family's cartesian product of grid values, shuffled with the
    seed, families interleaved. Points that break a family's shape rule are not part of
    its space and are skipped; points over budget are rejected (recorded)."""

    def __init__(self, spaces, io, budget, count, *, seed: int) -> None:
        super().__init__(spaces, io, budget, count)
        self._done: set[str] = set()
        iters = [zip(itertools.repeat(f), grid_configs(s, seed)) for f, s in spaces.items()]
        self._points: Iterator[tuple[str, dict[str, Any]]] = (
            p for group in itertools.zip_longest(*iters) for p in group if p is not None
        )

    def replay(self, past, objective) -> None:
        self._done |= {config_key(r.family, r.config) for r in past}

    def ask(self) -> Proposal | Rejection | None:
        for fam, cfg in self._points:
            if config_key(fam, cfg) in self._done or check_config(self.spaces[fam], self.io, cfg):
                continue
            self._done.add(config_key(fam, cfg))
            n = self.count(fam, cfg)
            if n > self.budget:
                return Rejection(fam, cfg, n, f"over budget: {n} > {self.budget} parameters")
            return Proposal(fam, cfg, n)
        return None
