"""`IOSpec`: the shapes a model maps between (what a task offers, what a family needs).

Models and tasks both use it, so it lives below both: a family's `build`/`count_params`
take it, a task's `io()` returns it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class IOSpec:
    """Shapes a model must map between.

    d_in/d_out: flattened input and output sizes. `output` tells the model's head:
    "image" -> sigmoid outputs in [0, 1] (the MLP paper's image tasks), "logits" ->
    raw class scores, "regression" -> raw values, "lm" -> next-token logits of a language
    model (input: token ids of shape (B, T); d_in = d_out = vocabulary size;
    input_shape = (context length,)). `image_shape` is (C, H, W) of the target image when
    the output is an image, `input_shape` the shape of one input, e.g. (C, H, W) for
    images a model patchifies.

    "noise" -> a class-conditional diffusion denoiser (epsilon prediction), called as
    `model(x_t, t, y)`: noisy images x_t (B, C, H, W) in the [-1, 1] data scale,
    timesteps t (B,) float in [0, T), class labels y (B,) int64 in [0, num_classes]
    where the value `num_classes` means "no class" (classifier-free guidance); it
    returns the predicted noise (B, C, H, W). image_shape = input_shape = (C, H, W),
    d_in = d_out = C*H*W.
    """

    d_in: int
    d_out: int
    output: Literal["image", "logits", "regression", "lm", "noise"] = "image"
    image_shape: tuple[int, int, int] | None = None
    input_shape: tuple[int, ...] | None = None
    num_classes: int | None = None  # class-conditional models ("noise"): labels 0..num_classes-1
