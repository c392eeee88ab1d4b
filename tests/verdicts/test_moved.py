"""The statistics of verdicts moved from reports/ to verdicts/: each old path still imports,
with a DeprecationWarning, and hands on the new module's objects. No other module of the
repository imports an old path."""

from __future__ import annotations

import importlib
import sys

import pytest

# old module -> a name it hands on
MOVED = {
    "compare": "compare_at",
    "uncertainty": "interval",
    "candidates": "Candidates",
    "thin": "thin_at",
    "front_fit": "front_fit",
    "front_reading": "estimate_at",
    "undecided": "what_it_takes",
    "subsampling": "subsample_draws",
}


@pytest.mark.parametrize("module", sorted(MOVED))
def test_an_old_path_warns_and_hands_on_the_same_objects(module, monkeypatch):
    monkeypatch.delitem(sys.modules, f"reports.{module}", raising=False)  # its warning comes on first import
    with pytest.warns(DeprecationWarning, match=f"reports.{module} moved to verdicts.{module}"):
        old = importlib.import_module(f"reports.{module}")
    new = importlib.import_module(f"verdicts.{module}")
    name = MOVED[module]
    assert getattr(old, name) is getattr(new, name)


@pytest.mark.parametrize("name", ["merge_runs", "recomputed"])
def test_the_merging_of_a_configurations_trials_moved_out_of_reports_combined(name):
    from reports import combined
    from verdicts import repeats

    with pytest.warns(DeprecationWarning, match=f"reports.combined.{name} moved to verdicts.repeats.{name}"):
        assert getattr(combined, name) is getattr(repeats, name)
    with pytest.raises(AttributeError):
        combined.nothing_of_the_kind  # noqa: B018
