"""A budget in connections per layer (`--budget-of omega`, issue 12): Hayase & Karakida
hold Omega = gamma (C S^2 + S C^2) / 2 fixed for a Mixer, and round(p * width^2) for an
SW-MLP; a study so budgeted stores and draws every size in that measure."""

import pytest

from core.io import IOSpec
from models import get_family
from models.mixer_net import OMEGA_LABEL
from storage import load_trials

IMG = IOSpec(64, 10, "logits", None, (1, 8, 8))


@pytest.mark.parametrize(
    "family,config,omega",
    [
        ("mixer", {"S": 16, "C": 8, "gamma": 4, "L": 2, "patch": 2}, 4 * (8 * 256 + 16 * 64) // 2),
        ("s-mixer", {"S": 10, "C": 6, "L": 3, "patch": 2}, (6 * 100 + 10 * 36) // 2),
        ("rp-mixer", {"S": 4, "C": 4, "gamma": 1, "L": 1, "patch": 4}, (4 * 16 + 4 * 16) // 2),
        ("sw-mlp", {"stem": "patch", "patch": 2, "C": 8, "L": 5, "p": 0.1}, round(0.1 * 128**2)),
        ("sw-mlp", {"stem": "patch", "patch": 2, "C": 8, "L": 5, "p": "s-mixer"}, (8 * 256 + 16 * 64) // 2),
    ],
)
def test_omega_is_the_papers_connections_per_layer(family, config, omega):
    fam = get_family(family)
    assert fam.count_as("omega", config, IMG) == omega and fam.budget_measures == {"omega": OMEGA_LABEL}
    assert fam.count_as("params", config, IMG) == fam.count_params(config, IMG)
    more = dict(config, L=config["L"] + 1)  # depth does not change the connections per layer
    assert fam.count_as("omega", more, IMG) == omega < fam.count_as("omega", dict(config, C=config["C"] + 4), IMG)


def test_a_study_budgeted_in_omega(cli, tmp_path):
    code, out, err = cli(
        "run",
        "--space",
        "s-mixer,sw-mlp",
        "--task",
        "digits-classify",
        "--budget",
        "3K",
        "--budget-of",
        "omega",
        "--trials",
        "6",
        "--epochs",
        "1",
        "--max-train-samples",
        "128",
        "--seed-checks",
        "0",
    )
    assert code == 0, err
    df = load_trials("digits-classify-s-mixer-sw-mlp", f"sqlite:///{tmp_path / 'search.db'}")
    done = df[df.status == "complete"]
    assert len(done) == 6 and set(done.family) == {"s-mixer", "sw-mlp"}
    for _, row in done.iterrows():  # the stored size is the omega, within the budget
        assert row.params == get_family(row.family).count_as("omega", row.config, IMG) <= 3000
    assert (done.params < done.apply(lambda r: get_family(r.family).count_params(r.config, IMG), axis=1)).any()
    assert f"vs. {OMEGA_LABEL}" in out and "budget 3K omega" in err and " omega | " in err  # progress lines
    from storage import Store

    with Store(f"sqlite:///{tmp_path / 'search.db'}") as store:  # the pages label their axis with it
        settings = store.get_study("digits-classify-s-mixer-sw-mlp").settings
    assert settings["budget_of"] == "omega" and settings["param_convention"] == OMEGA_LABEL


def test_studies_budgeted_in_different_measures_are_not_compared():
    from core.errors import UserError
    from reports.combined import check_comparable
    from storage.records import StudyRecord

    def rec(name, measure):
        return StudyRecord(name, "digits-classify", ["s-mixer"], "accuracy", "maximize", 1000, {"budget_of": measure})

    check_comparable([rec("a", "omega"), rec("b", "omega")])
    with pytest.raises(UserError, match="budgeted in omega and params"):
        check_comparable([rec("a", "omega"), rec("b", "params")])
