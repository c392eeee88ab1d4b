"""An S-Mixer beside its SW-MLP twin (reports/twins.py): Hayase & Karakida's pairing rule
(S = P tokens, same patch and C, 2L twin layers at density (1/S + 1/C)/2) on hand frames."""

from __future__ import annotations

import pytest

from reports.twins import twin_key, twin_pairs
from tests.reports.frames import make_trials, trial


def tokens(patch: int) -> int:  # 8x8 images
    return (8 // patch) ** 2


def mixer(n, C, L, mean, std=0.01, runs=3, S=16, patch=2, lr=1e-3, omega=None):
    cfg = {"patch": patch, "skip": "linear", "L": L, "S": S, "C": C, "lr": lr}
    return trial(n, "s-mixer", omega or (C * S * S + S * C * C) // 2, mean, psnr_std=std, n_runs=runs, config=cfg)


def twin(n, C, L, mean, std=0.01, runs=3, patch=2, lr=1e-3, p="s-mixer"):
    cfg = {"stem": "patch", "patch": patch, "p": p, "L": L, "C": C, "lr": lr}
    S = tokens(patch)
    return trial(n, "sw-mlp", (C * S * S + S * C * C) // 2, mean, psnr_std=std, n_runs=runs, config=cfg)


def test_the_pairing_rule_is_the_papers():
    # an L-block S-Mixer with S = P pairs with the 2L-layer SW-MLP of the same patch, C, lr
    assert twin_key("s-mixer", {"patch": 2, "S": 16, "C": 8, "L": 3, "lr": 1e-3}, tokens) == (2, 8, 3, 1e-3, "pool")
    assert twin_key("sw-mlp", {"stem": "patch", "patch": 2, "p": "s-mixer", "C": 8, "L": 6, "lr": 1e-3}, tokens) == (
        2,
        8,
        3,
        1e-3,
        "pool",
    )
    # a flattened head pairs only with a flattened head
    flat = twin_key("s-mixer", {"patch": 2, "S": 16, "C": 8, "L": 3, "lr": 1e-3, "readout": "flatten"}, tokens)
    assert (
        flat
        == (2, 8, 3, 1e-3, "flatten")
        != twin_key(
            "sw-mlp",
            {"stem": "patch", "patch": 2, "p": "s-mixer", "C": 8, "L": 6, "lr": 1e-3, "readout": "pool"},
            tokens,
        )
    )
    # S != P: the token count changes (SkipLayer), no twin of that width exists
    assert twin_key("s-mixer", {"patch": 2, "S": 32, "C": 8, "L": 3, "lr": 1e-3}, tokens) is None
    # a free density, an odd depth or the dense stem is not an S-Mixer twin
    assert twin_key("sw-mlp", {"stem": "patch", "patch": 2, "p": 0.1, "C": 8, "L": 6, "lr": 1e-3}, tokens) is None
    assert twin_key("sw-mlp", {"stem": "patch", "patch": 2, "p": "s-mixer", "C": 8, "L": 5, "lr": 1e-3}, tokens) is None
    assert twin_key("sw-mlp", {"stem": "dense", "p": 0.1, "width": 64, "L": 2, "lr": 1e-3}, tokens) is None
    assert twin_key("mixer", {"patch": 2, "S": 16, "C": 8, "L": 3, "lr": 1e-3}, tokens) is None


def test_pairs_meet_and_verdicts_follow_the_intervals():
    df = make_trials(
        [
            mixer(0, 8, 1, 0.90),
            twin(1, 8, 2, 0.70),  # S-Mixer clearly better
            mixer(2, 16, 1, 0.60),
            twin(3, 16, 2, 0.80),  # twin clearly better
            mixer(4, 16, 2, 0.85, std=0.2),
            twin(5, 16, 4, 0.84, std=0.2),  # within noise
            mixer(6, 32, 1, 0.95),  # no twin trained
            twin(7, 8, 2, 0.99, lr=5e-3),  # other lr: no S-Mixer partner
            mixer(8, 8, 1, 0.5, S=32),  # S != P: not paired
        ]
    )
    pairs, s = twin_pairs(df, "psnr", "maximize", tokens)
    assert list(zip(pairs["C"], pairs["blocks"])) == [(8, 1), (16, 1), (16, 2)]
    assert list(pairs["verdict"]) == ["S-Mixer better", "twin better", "not distinguishable"]
    assert list(zip(pairs["mixer_trial"], pairs["twin_trial"])) == [(0, 1), (2, 3), (4, 5)]
    assert pairs["difference"].tolist() == pytest.approx([0.20, -0.20, 0.01])
    assert (pairs["omega"] == [(8 * 256 + 16 * 64) // 2, (16 * 256 + 16 * 256) // 2, (16 * 256 + 16 * 256) // 2]).all()
    assert (s.pairs, s.mixer_better, s.twin_better) == (3, 1, 1)
    assert s.mean_difference == pytest.approx(0.01 / 3)
    assert s.low < s.mean_difference < s.high
    for lo, d, hi in zip(pairs["low"], pairs["difference"], pairs["high"]):
        assert lo < d < hi


def test_minimize_flips_the_sign_and_single_runs_give_no_interval():
    df = make_trials(
        [mixer(0, 8, 1, 0.2), twin(1, 8, 2, 0.3), mixer(2, 16, 1, 0.2, runs=1, std=float("nan")), twin(3, 16, 2, 0.1)]
    )
    pairs, s = twin_pairs(df, "psnr", "minimize", tokens)
    assert pairs["difference"].tolist() == pytest.approx([0.1, -0.1])  # lower is better: S-Mixer ahead in the first
    assert list(pairs["verdict"]) == ["S-Mixer better", "single run"]
    assert s.low is None and s.high is None and s.correlation is None  # fewer than 3 pairs: no correlation


def test_correlation_over_pairs_and_no_pairs():
    df = make_trials(
        [mixer(2 * k, 8 * 2**k, 1, 0.6 + 0.1 * k) for k in range(3)]
        + [twin(2 * k + 1, 8 * 2**k, 2, 0.5 + 0.1 * k) for k in range(3)]
    )
    pairs, s = twin_pairs(df, "psnr", "maximize", tokens)
    assert s.pairs == 3 and s.correlation == pytest.approx(1.0) and s.mixer_better == 3
    empty, s0 = twin_pairs(make_trials([mixer(0, 8, 1, 0.9)]), "psnr", "maximize", tokens)
    assert len(empty) == 0 and s0.pairs == 0 and s0.mean_difference is None
