"""Weights in an S3 bucket (Optuna's Boto3ArtifactStore), against a local S3-compatible
server the test starts itself (moto's server mode, over HTTP on 127.0.0.1)."""

import pytest

from tests.search.artifacts.buckets import BUCKET, check_round_trip

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")


@pytest.fixture
def s3(monkeypatch):
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    for k, v in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
    }.items():
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
    check_round_trip(
        cli,
        tmp_path,
        "s3",
        lambda: {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]},
        lambda key, data: s3.put_object(Bucket=BUCKET, Key=key, Body=data),
    )
