"""Models of any shapes and families trained as one program, without padding (issue 81).

A `FusedModel` of a family (models/fused.py) stacks its members' parameters along a
member axis, padding each to the pack's widest shape: exact, but the padded arithmetic is
wasted where the members differ (docs/benchmarks.md, "Fused trials"). A `RaggedPack`
keeps each member's own module, its own units and nothing else:

    forward(x)   (K, B, *input) -> (K, B, *output), out[k] = member_k(x[k]) for the
                 live members (zeros, without a graph, for a member that has left)

so that one backward of the members' summed losses and one optimiser call serve all K
(tasks/optimizers.py `GroupedAdamW`: a parameter group a member). What a step saves is
the per-call overhead of the autograd engine and the optimiser, which dominates a small
trial's step on a CPU; each member's arithmetic is its own, as alone.

Each member draws its random numbers (dropout, a model's own noise) from a stream of its
own: the global generator's state right after the member was built (as alone, where
`torch.manual_seed(seed)` precedes `build`), swapped in around the member's forward and
saved after it. So a member's draws are those it makes when trained alone.

Members need not be of one family: any modules whose inputs and outputs have the pack's
shapes. `write_members()` has nothing to do (the members are the trained modules).
"""

from __future__ import annotations

import torch
from torch import nn

from models.fused import FusedModel


class RaggedPack(FusedModel):
    """K member modules in one program, each with its own weights and random stream.
    `rng_states[k]`: member k's generator state(s) to start from (`capture_rng()` right
    after building it); None leaves the global generator alone."""

    def __init__(self, members: list[nn.Module], rng_states: list[tuple[torch.Tensor, ...]] | None = None) -> None:
        super().__init__(members)
        self.ragged = nn.ModuleList(members)  # registered: train()/eval()/to() reach them
        self.rng_states = list(rng_states) if rng_states is not None else None
        self.live = list(range(len(members)))

    def set_live(self, live: list[int]) -> None:
        """The members still training; the others are not run."""
        self.live = list(live)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs: dict[int, torch.Tensor] = {}
        outer = capture_rng(x.device) if self.rng_states is not None else None
        try:
            for k in self.live:
                if outer is None:
                    outs[k] = self.ragged[k](x[k])
                    continue
                restore_rng(self.rng_states[k], x.device)
                outs[k] = self.ragged[k](x[k])
                self.rng_states[k] = capture_rng(x.device)
        finally:
            if outer is not None:
                restore_rng(outer, x.device)
        first = next(iter(outs.values()))
        return torch.stack([outs[k] if k in outs else first.detach().new_zeros(first.shape) for k in range(self.size)])

    def member_parameters(self) -> list[list[torch.Tensor]]:
        """Each member's trainable parameters (a parameter group each)."""
        return [[p for p in m.parameters() if p.requires_grad] for m in self.members]

    def member_regularization(self) -> torch.Tensor | None:
        """Each member's `regularization()` term, (K,) (0 for one without), or None when
        no member has one."""
        terms = [getattr(m, "regularization", None) for m in self.members]
        if all(t is None for t in terms):
            return None
        zero = next(p for p in self.parameters()).new_zeros(())
        return torch.stack([t() if t is not None and k in self.live else zero for k, t in enumerate(terms)])

    def write_members(self) -> None:
        """Nothing to copy: the members are the modules being trained."""


def capture_rng(device: torch.device) -> tuple[torch.Tensor, ...]:
    """The global generator's state on the CPU, and on `device` when it is a GPU."""
    if device.type == "cuda":
        return torch.get_rng_state(), torch.cuda.get_rng_state(device)
    return (torch.get_rng_state(),)


def restore_rng(state: tuple[torch.Tensor, ...], device: torch.device) -> None:
    torch.set_rng_state(state[0])
    if device.type == "cuda" and len(state) > 1:
        torch.cuda.set_rng_state(state[1], device)
