"""The round trip every bucket store must pass (test_s3.py, test_gcs.py): `search run
--keep all --artifacts SCHEME://BUCKET/runs/a` writes one object per trial and records it,
`load_model` and `search model` read it back, a changed object is refused as differing from
its record, and a bucket that cannot be reached is one line, exit 2, the database unchanged."""

from collections.abc import Callable

from tests.search.cli.test_cli import db_dump

BUCKET = "weights-bucket"


def run_args(study: str) -> tuple[str, ...]:
    return (
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "30K",
        "--trials",
        "2",
        "--epochs",
        "1",
        "--no-report",
        "--study",
        study,
        "--pruner",
        "none",
        "--keep",
        "all",
        "--seed-checks",
        "0",  # two trials' weights, counted below
    )


def check_round_trip(
    cli, tmp_path, scheme: str, keys: Callable[[], set[str]], overwrite: Callable[[str, bytes], None]
) -> None:
    """`keys()`: the bucket's object keys; `overwrite(key, data)`: replace one object. The
    study is named after the scheme."""
    from search import load_model
    from storage import Store

    run = run_args(scheme)
    code, _, err = cli(*run, "--artifacts", f"{scheme}://{BUCKET}/runs/a")
    assert code == 0, err
    stored = keys()
    with Store(f"sqlite:///{tmp_path / 'search.db'}") as store:
        kept = store.artifacts_of(scheme, [0, 1], "weights")
    assert {f"runs/a/{rows[0]['store_key']}" for rows in kept.values()} == stored and len(stored) == 2
    assert all(rows[0]["store"] == f"{scheme}://{BUCKET}/runs/a" for rows in kept.values())
    assert not (tmp_path / "search-artifacts").exists()  # nothing beside the database
    model = load_model(scheme, 0, storage=str(tmp_path / "search.db"))
    assert not model.training
    code, _, err = cli("model", scheme, "1", "--out", "m")
    assert code == 0, err
    assert (tmp_path / "m" / "load.py").exists()

    # a changed object: its sha256 differs from the record
    overwrite(f"runs/a/{kept[1][0]['store_key']}", b"not the weights")
    before = db_dump(tmp_path / "search.db")
    code, _, err = cli("model", scheme, "1", "--out", "m2")
    assert code == 2 and "differs from its record" in err and len(err.strip().splitlines()) == 1, err
    # a bucket that does not exist or answer: one line, exit 2, the database unchanged
    code, _, err = cli(*run, "--artifacts", f"{scheme}://no-such-bucket/x", "--study", "other")
    assert code == 2 and f"the artifact store {scheme}://no-such-bucket/x cannot be reached" in err, err
    assert len(err.strip().splitlines()) == 1
    assert db_dump(tmp_path / "search.db") == before
