"""Byte-level language-modelling tasks: `lm-shakespeare` and `lm-text` (any UTF-8 file).

Vocabulary: the 256 byte values (no tokenizer). A model maps token ids (B, T) to
next-token logits (B, T, 256); IOSpec(d_in=256, d_out=256, output="lm",
input_shape=(context,)). Splits: contiguous 90% / 5% / 5% of the file
(tasks/datasets/text.py). Metrics (tasks/lm_data.py): validation cross-entropy `loss`
(nats/token, minimised), `perplexity`, `bpb`; test values at the best validation point.
Training (tasks/lm_train.py, trainer "lm") is measured in tokens, so every trial of a
study sees the same data whatever its size.

Options (`--task-option k=v`; `--data FILE` sets `data`):
  context      tokens per training/evaluation window (default 128)
  eval_tokens  cap on the tokens of the fixed evaluation windows per split (default 16384)
  compile      torch.compile the model for training (default false)
  data         lm-text only: the text file (required to load, not to count parameters)
  corpus       lm-shakespeare only: "auto" (default: the Gutenberg works when found, else
               tiny-shakespeare, downloaded on first use), "shakespeare" or "tiny-shakespeare"
               (tasks/datasets/text.py)

Every completed run stores which text it trained on: a run artifact "data" (JSON: corpus,
file, sha256, bytes; `Store.artifacts(study, number, "data")`), since "auto" may read
either corpus and the two give different losses.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from core.errors import DataError, UserError
from core.io import IOSpec
from tasks.base import Task, TrainDefaults
from tasks.by_name import TASKS
from tasks.datasets.text import CORPORA, TextSplits, load_shakespeare, load_text_file
from tasks.lm_data import LMData

VOCAB = 256  # bytes
DATA_ARTIFACT = "data"  # the run artifact naming the text a run trained on


@dataclass(frozen=True)
class LMTrainDefaults(TrainDefaults):
    """`epochs` is the number of evaluations during training (one EpochRecord each);
    `tokens` the training tokens of a run; `warmup` the fraction of steps of linear
    warm-up before the cosine decay."""

    tokens: int = 524_288
    warmup: float = 0.05


class LMTask(Task):
    """A byte-level corpus. Subclasses give the corpus (`load_splits`)."""

    metric = "loss"
    direction = "minimize"
    metrics: ClassVar[tuple[str, ...]] = ("loss", "perplexity", "bpb")
    trainer = "lm"
    # Ours (the papers train far longer, on GPUs): 2^19 tokens (128 steps of 32 windows
    # of 128 bytes) and 4 evaluations keep a small model's trial to a minute or two on a
    # CPU; pass --tokens on a GPU. AdamW weight decay 0.1 as in the papers; lr 1e-3 when
    # the space does not search it.
    defaults = LMTrainDefaults(epochs=4, batch_size=32, lr=1e-3, weight_decay=0.1)
    # z_loss: the coefficient of the auxiliary softmax ("z") loss added to the training
    # cross-entropy (tasks/lm_train.py `lm_loss`). Liao et al. train with one (Sec. 4 setup:
    # "cross-entropy loss augmented with an auxiliary softmax loss") without giving its
    # weight; PaLM's 1e-4 is what their recipes set. 0 (default): plain cross-entropy.
    own_options: ClassVar[dict[str, Any]] = {"context": 128, "eval_tokens": 16384, "compile": False, "z_loss": 0.0}

    def _check_options(self) -> None:
        for key in ("context", "eval_tokens"):
            v = self.options[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UserError(f"{key} must be a positive integer, got {v!r}")
        if not isinstance(self.options["compile"], bool):
            raise UserError(f"compile must be true or false, got {self.options['compile']!r}")
        z = self.options["z_loss"]
        if isinstance(z, bool) or not isinstance(z, (int, float)) or not math.isfinite(z) or z < 0:
            raise UserError(f"z_loss must be a number >= 0 (the auxiliary softmax loss's weight, e.g. 1e-4), got {z!r}")

    @property
    def context(self) -> int:
        return int(self.options["context"])

    def io(self) -> IOSpec:
        return IOSpec(VOCAB, VOCAB, "lm", None, (self.context,))

    def load_splits(self, data_dir: str | None) -> TextSplits:
        raise NotImplementedError

    def load(self, data_dir: str | None, device: Any) -> LMData:
        splits = self.load_splits(data_dir)
        return LMData(splits, self.context, int(self.options["eval_tokens"]), torch.device(device))

    def after_run(self, model: Any, data: LMData, seed: int) -> tuple[dict[str, float], dict[str, Any]]:
        """The record of the text the run trained on, as the run artifact "data"."""
        text = json.dumps(data.source, sort_keys=True).encode()
        return {}, {DATA_ARTIFACT: {"media_type": "application/json", "data": base64.b64encode(text).decode("ascii")}}


@TASKS.register("lm-shakespeare")
class ShakespeareLM(LMTask):
    name = "lm-shakespeare"
    description = (
        "byte-level LM on Shakespeare (the Gutenberg works, 5 MB, when found; else tiny-shakespeare, "
        "downloaded), validation loss in nats/token"
    )
    own_options: ClassVar[dict[str, Any]] = {"corpus": "auto"}

    def _check_options(self) -> None:
        super()._check_options()
        if self.options["corpus"] not in CORPORA:
            raise UserError(f"corpus must be one of {', '.join(CORPORA)}, got {self.options['corpus']!r}")

    def data_sets(self) -> tuple[str, ...]:
        corpus = self.options["corpus"]
        return ("shakespeare", "tiny-shakespeare") if corpus == "auto" else (corpus,)

    def load_splits(self, data_dir: str | None) -> TextSplits:
        return load_shakespeare(self.options["corpus"], data_dir)


@TASKS.register("lm-text")
class TextLM(LMTask):
    name = "lm-text"
    description = "byte-level LM on any UTF-8 text file given with --data FILE"
    own_options = {"data": None}
    data_note = "your text file: --data FILE"

    def _check_options(self) -> None:
        super()._check_options()
        data = self.options["data"]
        if data is not None and not isinstance(data, str):
            raise UserError(f"data must be a file path, got {data!r}")

    def load_splits(self, data_dir: str | None) -> TextSplits:
        if self.options["data"] is None:
            raise DataError("lm-text needs a text file: pass --data FILE (or --task-option data=FILE)")
        return load_text_file(self.options["data"])
