"""An S-Mixer beside its SW-MLP twin, pair by pair: pure statistics on a trials frame.

Hayase & Karakida ("MLP-Mixer as a wide and sparse MLP", sec. 3) write an S-Mixer with S
tokens, C channels and L blocks as a wide MLP of width S*C: its token mixing is I_C (x) W
(density 1/C), its channel mixing V^T (x) I_S (density 1/S), so it is 2L sparse layers of
mean density (1/S + 1/C)/2. `models/sw_mlp.py` builds that twin with `p = "s-mixer"` (the
paper's SW-MLP of appendix A.2.5, same patches, width P*C). Their claim: the Mixer
performs like its twin. A pair here is

    an S-Mixer with S = P (its tokens are the patches; no SkipLayer) and patch, C, L, lr
    an SW-MLP with stem "patch", p = "s-mixer" and the same patch, C, lr, and 2L layers,

both with the same connections per layer, (C*S^2 + S*C^2)/2. Shapes: a frame as
`storage.frames` builds it (family, number, params, status, config, the metric `m`,
`m_std`, n_runs) -> one row per pair. Each side's mean is redrawn as in
`verdicts.compare` (m + s/sqrt(R) * t(R-1), parametric bootstrap), so the difference of a
pair, signed so that > 0 means the S-Mixer is better, gets a percentile interval, and so
does the mean difference over all pairs (seed noise only: the pairs themselves are the
grid's, not a sample).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from verdicts.candidates import Candidates, candidates, redraw_means
from verdicts.compare import DEFAULT_CONFIDENCE, DEFAULT_DRAWS, percentile_interval

MIXER, TWIN = "s-mixer", "sw-mlp"
TWIN_DENSITY = "s-mixer"  # the SW-MLP's p that takes its S-Mixer twin's density
PAIR_COLUMNS = [
    "patch",
    "C",
    "blocks",
    "lr",
    "omega",
    "mixer_trial",
    "twin_trial",
    "mixer",
    "twin",
    "runs",
    "difference",
    "low",
    "high",
    "verdict",
]


def twin_key(family: str, config: dict[str, Any], tokens: Callable[[int], int]) -> tuple | None:
    """(patch, C, blocks, lr, readout) of an S-Mixer with S = P or of an SW-MLP S-Mixer twin
    (even L); None for any other configuration. `tokens(patch)` is P, the patches of the
    input. The readout (default "pool", the papers' for both) is part of the key, so a
    pair never mixes a pooled head with a flattened one."""
    try:
        patch, C, L, lr = int(config["patch"]), int(config["C"]), int(config["L"]), float(config["lr"])
    except (KeyError, TypeError, ValueError):
        return None
    if family == MIXER and int(config.get("S", -1)) == tokens(patch):
        return patch, C, L, lr, config.get("readout", "pool")
    if family == TWIN and config.get("p") == TWIN_DENSITY and config.get("stem") == "patch" and L % 2 == 0:
        return patch, C, L // 2, lr, config.get("readout", "pool")
    return None


def _index(c: Candidates, tokens: Callable[[int], int]) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for j, cfg in enumerate(c.configs):
        key = twin_key(c.family, cfg, tokens)
        if key is not None:
            out.setdefault(key, j)
    return out


@dataclass(frozen=True)
class TwinSummary:
    pairs: int
    mean_difference: float | None  # mean over pairs of (S-Mixer - twin), signed: > 0 = S-Mixer better
    low: float | None  # its percentile interval (None when a pair has a single run)
    high: float | None
    mixer_better: int  # pairs whose interval lies above 0
    twin_better: int  # pairs whose interval lies below 0
    correlation: float | None  # Pearson correlation of the two sides' means over pairs


def twin_pairs(
    df: pd.DataFrame,
    metric: str,
    direction: str,
    tokens: Callable[[int], int],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
) -> tuple[pd.DataFrame, TwinSummary]:
    """Every complete S-Mixer with a complete twin, side by side (PAIR_COLUMNS), sorted by
    (patch, C, blocks, lr), and the summary over the pairs."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    sign = 1.0 if direction == "maximize" else -1.0
    cands = candidates(df, metric, [MIXER, TWIN])
    mix, twin = cands[MIXER], cands[TWIN]
    mix_at, twin_at = _index(mix, tokens), _index(twin, tokens)
    keys = sorted(set(mix_at) & set(twin_at))
    if not keys:
        return pd.DataFrame(columns=PAIR_COLUMNS), TwinSummary(0, None, None, None, 0, 0, None)
    boot_mix, boot_twin = redraw_means(mix, seed, draws), redraw_means(twin, seed, draws)
    rows, diffs = [], []
    for key in keys:
        i, j = mix_at[key], twin_at[key]
        known = mix.known_noise(np.array([i])) and twin.known_noise(np.array([j]))
        d = sign * (boot_mix[:, i] - boot_twin[:, j])
        diffs.append(d)
        lo, hi = percentile_interval(d, confidence) if known else (None, None)
        verdict = (
            "single run"
            if lo is None
            else "S-Mixer better"
            if lo > 0
            else "twin better"
            if hi < 0
            else "not distinguishable"
        )
        rows.append(
            {
                "patch": key[0],
                "C": key[1],
                "blocks": key[2],
                "lr": key[3],
                "omega": float(mix.params[i]),
                "mixer_trial": int(mix.numbers[i]),
                "twin_trial": int(twin.numbers[j]),
                "mixer": float(mix.means[i]),
                "twin": float(twin.means[j]),
                "runs": int(min(mix.runs[i], twin.runs[j])),
                "difference": sign * float(mix.means[i] - twin.means[j]),
                "low": lo,
                "high": hi,
                "verdict": verdict,
            }
        )
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    all_known = pairs["low"].notna().all()
    lo, hi = percentile_interval(np.mean(diffs, axis=0), confidence) if all_known else (None, None)
    corr = float(np.corrcoef(pairs["mixer"], pairs["twin"])[0, 1]) if len(pairs) >= 3 else None
    summary = TwinSummary(
        len(pairs),
        float(pairs["difference"].mean()),
        lo,
        hi,
        int((pairs["verdict"] == "S-Mixer better").sum()),
        int((pairs["verdict"] == "twin better").sum()),
        None if corr is None or not np.isfinite(corr) else corr,
    )
    return pairs, summary
