"""Weights in an S3 bucket (Optuna's Boto3ArtifactStore), against a local S3-compatible
server the test starts itself (moto's server mode, over HTTP on 127.0.0.1)."""
import pytest

from tests.search.cli.test_cli import db_dump

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")

BUCKET = "weights-bucket"
RUN = ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "30K", "--trials", "2",
       "--epochs", "1", "--no-report", "--study", "s3", "--pruner", "none", "--keep", "all")


@pytest.fixture
def s3(monkeypatch):
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://{host}:{port}"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    from search.artifacts import location

    location._open_s3.cache_clear()  # one client per URL and process: not one from another test's server
    client = boto3.client("s3")
    client.create_bucket(Bucket=BUCKET)
    yield client
    location._open_s3.cache_clear()
    server.stop()


@pytest.mark.slow
def test_weights_go_to_a_bucket_and_come_back(cli, tmp_path, s3):
    from search import load_model
    from storage import Store

    code, _, err = cli(*RUN, "--artifacts", f"s3://{BUCKET}/runs/a")
    assert code == 0, err
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    with Store(f"sqlite:///{tmp_path / 'search.db'}") as store:
        kept = store.artifacts_of("s3", [0, 1], "weights")
    assert {f"runs/a/{rows[0]['store_key']}" for rows in kept.values()} == keys and len(keys) == 2
    assert all(rows[0]["store"] == f"s3://{BUCKET}/runs/a" for rows in kept.values())
    assert not (tmp_path / "search-artifacts").exists()  # nothing beside the database
    model = load_model("s3", 0, storage=str(tmp_path / "search.db"))
    assert not model.training
    code, out, err = cli("model", "s3", "1", "--out", "m")
    assert code == 0, err
    assert (tmp_path / "m" / "load.py").exists()

    # a changed object: its sha256 differs from the record
    key = f"runs/a/{kept[1][0]['store_key']}"
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"not the weights")
    before = db_dump(tmp_path / "search.db")
    code, _, err = cli("model", "s3", "1", "--out", "m2")
    assert code == 2 and "differs from its record" in err and len(err.strip().splitlines()) == 1, err
    # a bucket that does not answer: one line, exit 2, the database unchanged
    code, _, err = cli(*RUN, "--artifacts", "s3://no-such-bucket/x", "--study", "other")
    assert code == 2 and "the artifact store s3://no-such-bucket/x cannot be reached" in err, err
    assert len(err.strip().splitlines()) == 1
    assert db_dump(tmp_path / "search.db") == before
