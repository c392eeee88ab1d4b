"""Upgrading an existing database keeps its rows (every backend, see conftest)."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

from storage import Store, migrate
from storage.schema import JSONData, UTCDateTime
from tests.storage.helpers import make_result, make_run

T0 = datetime(2025, 3, 1, 12, 30, 15, 123456, tzinfo=UTC)

# The tables as revision 0002 left them (only the columns these rows fill).
STUDIES = sa.table(
    "studies",
    sa.column("id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("task", sa.String),
    sa.column("families", JSONData),
    sa.column("metric", sa.String),
    sa.column("direction", sa.String),
    sa.column("budget", sa.BigInteger),
    sa.column("settings", JSONData),
    sa.column("created_at", UTCDateTime()),
)
TRIALS = sa.table(
    "trials",
    sa.column("id", sa.Integer),
    sa.column("study_id", sa.Integer),
    sa.column("number", sa.Integer),
    sa.column("family", sa.String),
    sa.column("status", sa.String),
    sa.column("params", sa.BigInteger),
    sa.column("config", JSONData),
    sa.column("d_z", sa.Integer),
    sa.column("width", sa.Integer),
    sa.column("objective", sa.Float),
    sa.column("seeds", JSONData),
    sa.column("started_at", UTCDateTime()),
    sa.column("finished_at", UTCDateTime()),
)
RUNS = sa.table(
    "runs",
    sa.column("id", sa.Integer),
    sa.column("trial_id", sa.Integer),
    sa.column("repeat", sa.Integer),
    sa.column("seed", sa.BigInteger),
    sa.column("status", sa.String),
    sa.column("metrics", JSONData),
)
EPOCHS = sa.table(
    "epochs",
    sa.column("run_id", sa.Integer),
    sa.column("epoch", sa.Integer),
    sa.column("train_loss", sa.Float),
    sa.column("metrics", JSONData),
)
METRICS = sa.table(
    "trial_metrics",
    sa.column("trial_id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("mean", sa.Float),
    sa.column("std", sa.Float),
    sa.column("n", sa.Integer),
)


def upgrade_to(url: str, revision: str) -> None:
    """Bring the database at `url` to `revision` with alembic (as an older release would)."""
    from alembic import command

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            command.upgrade(migrate._config(conn), revision)
            conn.commit()
    finally:
        engine.dispose()


def test_0002_database_upgrades_to_head_keeping_its_rows(url: str) -> None:
    upgrade_to(url, "0002")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        assert migrate.current_version(conn) == "0002"
        assert "owner" not in {c["name"] for c in sa.inspect(conn).get_columns("trials")}
        conn.execute(
            STUDIES.insert(),
            [
                dict(
                    id=1,
                    name="old",
                    task="digits-denoise",
                    families=["hourglass", "lmlp"],
                    metric="psnr",
                    direction="maximize",
                    budget=100_000,
                    settings={"seed": 3},
                    created_at=T0,
                )
            ],
        )
        conn.execute(
            TRIALS.insert(),
            [
                dict(
                    id=1,
                    study_id=1,
                    number=0,
                    family="hourglass",
                    status="complete",
                    params=90,
                    config={"d_z": 100},
                    d_z=100,
                    width=None,
                    objective=21.5,
                    seeds=[7],
                    started_at=T0,
                    finished_at=T0,
                ),
                dict(
                    id=2,
                    study_id=1,
                    number=1,
                    family="lmlp",
                    status="failed",
                    params=80,
                    config={"width": 64},
                    d_z=None,
                    width=64,
                    objective=None,
                    seeds=[8],
                    started_at=T0,
                    finished_at=T0,
                ),
                dict(
                    id=3,
                    study_id=1,
                    number=2,
                    family="hourglass",
                    status="running",
                    params=70,
                    config={"d_z": 90},
                    d_z=90,
                    width=None,
                    objective=None,
                    seeds=[9],
                    started_at=T0,
                    finished_at=None,
                ),
            ],
        )
        conn.execute(
            RUNS.insert(), [dict(id=1, trial_id=1, repeat=0, seed=7, status="complete", metrics={"psnr": 21.5})]
        )
        conn.execute(
            EPOCHS.insert(),
            [dict(run_id=1, epoch=e, train_loss=0.1 / e, metrics={"val_psnr": 20.0 + e}) for e in (1, 2)],
        )
        conn.execute(METRICS.insert(), [dict(trial_id=1, name="psnr", mean=21.5, std=None, n=1)])
    if engine.dialect.name == "postgresql":  # rows inserted with explicit ids: move the sequences on
        with engine.begin() as conn:
            for table in ("studies", "trials", "runs"):
                conn.execute(
                    sa.text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT MAX(id) FROM {table}))")
                )
    engine.dispose()

    with Store(url) as store:  # opening it upgrades it
        with store._engine.connect() as conn:
            assert migrate.current_version(conn) == migrate.SCHEMA_HEAD
        rec = store.get_study("old")
        assert (rec.families, rec.budget, rec.settings, rec.created_at) == (
            ["hourglass", "lmlp"],
            100_000,
            {"seed": 3},
            T0,
        )
        trials = store.trials("old")
        assert [(t.number, t.family, t.status, t.config, t.seeds) for t in trials] == [
            (0, "hourglass", "complete", {"d_z": 100}, [7]),
            (1, "lmlp", "failed", {"width": 64}, [8]),
            (2, "hourglass", "running", {"d_z": 90}, [9]),
        ]
        assert all((t.owner, t.heartbeat_at, t.attempt, t.retry_of) == (None, None, 0, None) for t in trials)
        assert trials[0].metrics == {"psnr": (21.5, None, 1)} and trials[0].started_at == T0
        assert [e["val_psnr"] for e in store.epochs("old", 0)] == [21.0, 22.0]
        for table, n in (("studies", 1), ("trials", 3), ("runs", 1), ("epochs", 2), ("trial_metrics", 1)):
            assert store.query_readonly(f"SELECT COUNT(*) FROM {table}")[1] == [(n,)], table
        # The upgraded database takes new trials, with the new columns.
        assert store.progress("old") == (2, 1)
        assert [t.number for t in store.retry_candidates("old", ["failed"], 1)] == [1]
        n = store.add_trial(
            "old", family="hourglass", config={"d_z": 100}, params=90, seeds=[7], owner="me", attempt=1, retry_of=1
        )
        store.finish_trial("old", n, make_result(n, [make_run(7, {"psnr": 22.0})]))
        assert n == 3 and store.progress("old") == (2, 1)
        assert store.retry_candidates("old", ["failed"], 1) == []
        assert [t.number for t in store.interrupt_running("old", lambda t: t.owner is None)] == [2]


ARTIFACTS = sa.table(
    "run_artifacts",
    sa.column("id", sa.Integer),
    sa.column("run_id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("media_type", sa.String),
    sa.column("data", sa.Text),
)


def test_0006_database_upgrades_keeping_its_artifacts_and_takes_stored_ones(url: str) -> None:
    """0007: a sample grid stored inline before keeps its data; a file kept in an artifact
    store (no data; store, key, size, sha256) is recorded after, and marked removed."""
    upgrade_to(url, "0006")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            STUDIES.insert(),
            [
                dict(
                    id=1,
                    name="old",
                    task="digits-diffusion",
                    families=["lmlp"],
                    metric="fid",
                    direction="minimize",
                    budget=10,
                    settings={},
                    created_at=T0,
                )
            ],
        )
        conn.execute(
            TRIALS.insert(),
            [
                dict(
                    id=1,
                    study_id=1,
                    number=0,
                    family="lmlp",
                    status="complete",
                    params=9,
                    config={"width": 8},
                    d_z=None,
                    width=8,
                    objective=1.0,
                    seeds=[7],
                    started_at=T0,
                    finished_at=T0,
                )
            ],
        )
        conn.execute(RUNS.insert(), [dict(id=1, trial_id=1, repeat=0, seed=7, status="complete", metrics={"fid": 1.0})])
        conn.execute(ARTIFACTS.insert(), [dict(id=1, run_id=1, name="samples", media_type="image/png", data="iVBOR")])
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            for table in ("studies", "trials", "runs", "run_artifacts"):
                conn.execute(
                    sa.text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT MAX(id) FROM {table}))")
                )
    engine.dispose()

    with Store(url) as store:
        (old,) = store.artifacts("old", 0)
        assert (old["data"], old["store_key"], old["removed_at"]) == ("iVBOR", None, None)
        n = store.add_trial("old", family="lmlp", config={"width": 8}, params=9, seeds=[8])
        run = make_run(8, {"fid": 2.0})
        run.artifacts = {
            "weights": {
                "media_type": "application/vnd.safetensors",
                "store": "/w",
                "store_key": "k",
                "size": 12,
                "sha256": "ab" * 32,
            }
        }
        store.finish_trial("old", n, make_result(n, [run]))
        (new,) = store.artifacts("old", n, "weights")
        assert (new["data"], new["store"], new["store_key"], new["size"], new["sha256"]) == (
            None,
            "/w",
            "k",
            12,
            "ab" * 32,
        )
        assert store.remove_artifacts("old", [0, n], "weights") == [
            {"number": n, "repeat": 0, "store": "/w", "store_key": "k"}
        ]
        assert store.artifacts("old", n)[0]["removed_at"] is not None
        assert store.remove_artifacts("old", [n], "weights") == []  # marked once


def test_0007_database_upgrades_keeping_its_runs_and_takes_retrainings(url: str) -> None:
    """0008: the runs stored before are the search's (retraining 0); a retraining of the
    same trial may reuse their repeat numbers, and the search's runs stay as they were."""
    upgrade_to(url, "0007")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            STUDIES.insert(),
            [
                dict(
                    id=1,
                    name="old",
                    task="digits-denoise",
                    families=["hourglass"],
                    metric="psnr",
                    direction="maximize",
                    budget=10,
                    settings={},
                    created_at=T0,
                )
            ],
        )
        conn.execute(
            TRIALS.insert(),
            [
                dict(
                    id=1,
                    study_id=1,
                    number=0,
                    family="hourglass",
                    status="complete",
                    params=9,
                    config={"d_z": 8},
                    d_z=8,
                    width=None,
                    objective=1.0,
                    seeds=[7],
                    started_at=T0,
                    finished_at=T0,
                )
            ],
        )
        conn.execute(
            RUNS.insert(), [dict(id=1, trial_id=1, repeat=0, seed=7, status="complete", metrics={"psnr": 1.0})]
        )
        conn.execute(EPOCHS.insert(), [dict(run_id=1, epoch=1, train_loss=0.5, metrics={"psnr": 1.0})])
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            for table in ("studies", "trials", "runs", "epochs"):
                conn.execute(
                    sa.text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT MAX(id) FROM {table}))")
                )
    engine.dispose()

    with Store(url) as store:
        before = store.epochs("old", 0)
        assert [r["seed"] for r in before] == [7]
        assert (
            store.add_retraining("old", 0, {"epochs": 4}, make_result(0, [make_run(7, {"psnr": 3.0}, n_epochs=4)])) == 1
        )
        assert store.epochs("old", 0) == before
        (r,) = store.retrainings("old")
        assert (r.runs[0]["repeat"], r.runs[0]["epochs"], r.metrics["psnr"][0]) == (0, 4, 3.0)


def test_0008_downgrade_drops_the_retrainings_and_keeps_the_searchs_runs(url: str) -> None:
    with Store(url) as store:
        store.create_or_load_study(
            "s",
            task="digits-denoise",
            families=["hourglass"],
            metric="psnr",
            direction="maximize",
            budget=10,
            settings={},
        )
        n = store.add_trial("s", family="hourglass", config={"d_z": 8}, params=9, seeds=[7])
        store.finish_trial("s", n, make_result(n, [make_run(7, {"psnr": 1.0})]))
        store.add_retraining("s", n, {"epochs": 4}, make_result(n, [make_run(7, {"psnr": 3.0}, n_epochs=4)]))
    from alembic import command

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            command.downgrade(migrate._config(conn), "0007")
            conn.commit()
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT seed FROM runs")).all() == [(7,)]
            assert conn.execute(sa.text("SELECT COUNT(*) FROM epochs")).scalar() == 3
            assert "retrainings" not in sa.inspect(conn).get_table_names()
    finally:
        engine.dispose()
