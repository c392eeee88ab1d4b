"""`search export-optuna`: the study loads back with optuna.load_study, every value checked."""

import json
import math

import optuna
import pytest

from storage import Store
from tests.search.cli.test_cli import RUN, db_dump

STUDY = "digits-denoise-hourglass-conventional"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A real two-family study (with a rejected and a failed trial added), exported."""
    from search.cli import main

    d = tmp_path_factory.mktemp("export")
    url = f"sqlite:///{d / 'search.db'}"
    assert main([*RUN, "--storage", url]) == 0
    with Store(url) as store:
        store.add_rejected(
            STUDY,
            family="hourglass",
            config={"d_z": 900, "d_h": 8, "L": 40, "lr": 0.001, "fixed_w_in": False},
            params=600_000,
            reason="over budget: 600000 > 60000 parameters",
        )
        n = store.add_trial(
            STUDY,
            family="conventional",
            config={"d_z": 70, "d_h": 90, "L": 1, "lr": 0.001, "fixed_w_in": False},
            params=21_460,
            seeds=[3],
        )
        from core.trials import TrialResult

        store.finish_trial(STUDY, n, TrialResult(n, "failed", [], 0.1, "cpu", error="RuntimeError: boom"))
        store.add_trial(
            STUDY,
            family="hourglass",
            config={"d_z": 66, "d_h": 4, "L": 1, "lr": 0.001, "fixed_w_in": False},
            params=9_000,
            seeds=[1],
        )  # running
        ours = store.trials(STUDY)
    to = f"sqlite:///{d / 'optuna.db'}"
    assert main(["export-optuna", STUDY, "--to", to, "--storage", url]) == 0
    return url, to, ours


def test_the_export_loads_back_with_every_value(exported):
    url, to, ours = exported
    study = optuna.load_study(study_name=STUDY, storage=to)
    assert [d.name for d in study.directions] == ["MINIMIZE", "MAXIMIZE"]
    assert study.metric_names == ["params", "psnr"]
    kept = [t for t in ours if t.status != "running"]
    assert len(study.trials) == len(kept) == len(ours) - 1
    for ot, t in zip(study.trials, kept):
        assert ot.user_attrs["search_number"] == t.number and ot.user_attrs["status"] == t.status
        assert ot.params["family"] == t.family
        assert {k.split(".", 1)[1]: v for k, v in ot.params.items() if k != "family"} == t.config
        assert ot.user_attrs["params"] == t.params
        if t.status == "complete":
            assert ot.state == optuna.trial.TrialState.COMPLETE
            assert ot.values == [float(t.params), t.metrics["psnr"][0]]
            assert ot.user_attrs["ssim"] == t.metrics["ssim"][0]
        else:
            assert ot.values is None
            assert (
                ot.state
                == {
                    "failed": optuna.trial.TrialState.FAIL,
                    "pruned": optuna.trial.TrialState.PRUNED,
                    "rejected": optuna.trial.TrialState.PRUNED,
                }[t.status]
            )
    rejected = [ot for ot in study.trials if ot.user_attrs["status"] == "rejected"]
    assert rejected[0].user_attrs["note"].startswith("over budget")
    # one distribution per name, covering every value; d_z drawn on a log scale in the space
    dist = next(t for t in study.trials if t.params["family"] == "hourglass").distributions["hourglass.d_z"]
    values = [t.config["d_z"] for t in kept if t.family == "hourglass"]
    assert (dist.low, dist.high, dist.log) == (min(values), max(values), True)


def test_optunas_own_plots_open_it(exported):
    _, to, _ = exported
    study = optuna.load_study(study_name=STUDY, storage=to)
    fig = optuna.visualization.plot_pareto_front(study, target_names=["params", "psnr"])
    assert len(fig.data) >= 1 and sum(len(t.x) for t in fig.data) == sum(
        t.state == optuna.trial.TrialState.COMPLETE for t in study.trials
    )


def test_exporting_again_is_refused_and_writes_nothing(exported, cli, tmp_path):
    url, to, _ = exported
    path = to.removeprefix("sqlite:///")
    before = db_dump(path)
    code, _, err = cli("export-optuna", STUDY, "--to", to, "--storage", url)
    assert code == 2 and "already has a study named" in err and len(err.strip().splitlines()) == 1
    assert db_dump(path) == before
    code, out, err = cli("export-optuna", STUDY, "--to", to, "--storage", url, "--name", "copy")
    assert code == 0 and "as Optuna study 'copy'" in out
    assert len(optuna.load_study(study_name="copy", storage=to).trials) == len(
        optuna.load_study(study_name=STUDY, storage=to).trials
    )


@pytest.mark.parametrize(
    "args,match",
    [
        (("export-optuna", "nope", "--to", "sqlite:///o.db"), "no study named 'nope'"),
        (("export-optuna", STUDY, "--to", "nosuchdb://x"), "cannot open Optuna storage"),
        (("export-optuna", STUDY), "--to"),
    ],
)
def test_bad_export_input_is_one_line_exit_2(exported, cli, args, match):
    url = exported[0]
    code, _, err = cli(*args, "--storage", url)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_single_family_study_uses_the_same_names_as_a_multi_family_one():
    """One naming rule: `family` and `family.key` whether one family was searched or two,
    so both export `hourglass.d_z` and the dashboard can compare them."""
    from search.integrations.optuna_export import frozen_trials
    from storage.records import StudyRecord, TrialRecord

    rec = StudyRecord("s", "digits-denoise", ["hourglass"], "psnr", "maximize", 10**5)
    trials = [
        TrialRecord(0, "hourglass", {"d_z": 80, "flag": True}, 500, "complete", [0], {"psnr": (20.0, None, 1)}),
        TrialRecord(1, "hourglass", {"d_z": 90, "flag": False}, 600, "complete", [0], {"psnr": (math.nan, None, 1)}),
    ]
    a, b = frozen_trials(rec, trials, lambda f, k: f == "hourglass" and k == "d_z")
    assert a.params == {"family": "hourglass", "hourglass.d_z": 80, "hourglass.flag": True}
    assert a.values == [500.0, 20.0]
    assert b.state == optuna.trial.TrialState.FAIL  # complete without a finite metric
    assert json.dumps(a.distributions["hourglass.flag"].choices) == "[false, true]"
    assert a.distributions["hourglass.d_z"].log and a.distributions["family"].choices == ("hourglass",)
    two = StudyRecord("t", "digits-denoise", ["hourglass", "conventional"], "psnr", "maximize", 10**5)
    (c,) = frozen_trials(two, trials[:1], lambda f, k: False)
    assert set(c.params) == set(a.params)


def test_optuna_dashboard_loads_the_exported_study(exported):
    """optuna-dashboard's own WSGI app (no server) lists the study and serves its trials."""
    import io

    dashboard = pytest.importorskip("optuna_dashboard")
    _, to, ours = exported
    app = dashboard.wsgi(to)

    def call(path):
        env = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "x",
            "SERVER_PORT": "80",
            "wsgi.input": io.BytesIO(),
            "wsgi.url_scheme": "http",
        }
        status = []
        body = b"".join(app(env, lambda s, h, *a: status.append(s)))
        return status[0], json.loads(body)

    status, listing = call("/api/studies")
    assert status.startswith("200")
    (summary,) = [s for s in listing["study_summaries"] if s["study_name"] == STUDY]
    status, detail = call(f"/api/studies/{summary['study_id']}")
    assert status.startswith("200") and len(detail["trials"]) == len([t for t in ours if t.status != "running"])
    assert detail["objective_names"] == ["params", "psnr"]


def test_every_finished_status_has_an_optuna_state():
    """Every trial status but `running` is exported (a pruned trial as PRUNED), so a new
    status cannot silently drop trials from the export."""
    from core.statuses import TRIAL_STATUSES
    from search.integrations.optuna_export import STATES

    assert set(STATES) == set(TRIAL_STATUSES) - {"running"}
    assert STATES["pruned"] == optuna.trial.TrialState.PRUNED
