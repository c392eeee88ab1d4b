"""search/engine/sampling/gp_sampler.py: Optuna's GP proposals, without torch's function
modes where the default device is the CPU and with gp_acquisition.py's functions."""

import optuna
import optuna._gp.acqf as acqf_module
import pytest
import torch

import search.engine.sampling.gp_acquisition as gp_acquisition
from search.engine.sampling.gp_sampler import GPSampler, default_device_is_cpu


def objective(t):
    lr = t.suggest_float("lr", 1e-4, 1e-1, log=True)
    depth = t.suggest_int("depth", 1, 40)
    width = t.suggest_int("width", 4, 200, log=True)
    act = t.suggest_categorical("act", ["relu", "gelu"])
    size = depth * width * width
    return float(size), (lr - 0.01) ** 2 + 1.0 / (1 + size) + (0.1 if act == "gelu" else 0.0)


def proposals(sampler, trials=14):
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    study.optimize(objective, n_trials=trials)
    return [t.params for t in study.trials]


def test_the_proposals_are_optunas_up_to_rounding():
    ours = proposals(GPSampler(seed=5, n_startup_trials=8))
    theirs = proposals(optuna.samplers.GPSampler(seed=5, n_startup_trials=8))
    assert [sorted(p) for p in ours] == [sorted(p) for p in theirs]
    for mine, optunas in zip(ours, theirs, strict=True):
        for key, value in optunas.items():
            assert mine[key] == (value if isinstance(value, str) else pytest.approx(value, rel=1e-6)), key


def modes_during_acquisition(sampler, monkeypatch) -> list[bool]:
    """Whether a torch function mode was on at each evaluation of the acquisition function."""
    seen = []

    real = gp_acquisition.OPTUNA["logehvi"]

    def spy(*args, **kwargs):
        on = torch._C._is_torch_function_enabled() and torch.overrides._get_current_function_mode() is not None
        seen.append(on)
        return real(*args, **kwargs)

    monkeypatch.setattr(acqf_module, "logehvi", spy)  # Optuna's sampler calls it
    monkeypatch.setitem(gp_acquisition.OPTUNA, "logehvi", spy)  # ours would swap it for log_ehvi: keep the spy
    monkeypatch.setattr(gp_acquisition, "SWAPS", gp_acquisition.SWAPS[1:])
    proposals(sampler, trials=9)
    return seen


def test_no_function_mode_while_it_proposes_on_the_cpu(monkeypatch):
    assert default_device_is_cpu()
    assert any(modes_during_acquisition(optuna.samplers.GPSampler(seed=1, n_startup_trials=8), monkeypatch))
    ours = modes_during_acquisition(GPSampler(seed=1, n_startup_trials=8), monkeypatch)
    assert ours and not any(ours)


@pytest.fixture
def meta_default_device():
    torch.set_default_device("meta")
    try:
        yield
    finally:
        torch.set_default_device(None)


def test_another_default_device_keeps_optunas_context(meta_default_device, monkeypatch):
    assert not default_device_is_cpu()
    seen = modes_during_acquisition(GPSampler(seed=1, n_startup_trials=8), monkeypatch)
    assert seen and all(seen)  # Optuna's torch.device("cpu") context, so the GP still fits on the CPU
