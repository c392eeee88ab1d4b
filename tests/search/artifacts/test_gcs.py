"""Weights in a Google Cloud Storage bucket (Optuna's GCSArtifactStore), against a local
GCS emulator the test starts itself (gcp-storage-emulator, in memory, over HTTP on
127.0.0.1; google-cloud-storage talks to it through STORAGE_EMULATOR_HOST)."""

import logging
import socket
import sys

import pytest

from core.errors import UserError
from search.artifacts import location
from search.artifacts.location import normalize, open_location
from tests.search.artifacts.buckets import BUCKET, check_round_trip


@pytest.fixture
def fresh_clients():
    location._open_gcs.cache_clear()  # one client per URL and process: not one from another test's server
    yield
    location._open_gcs.cache_clear()


@pytest.fixture
def gcs(monkeypatch, fresh_clients):
    emulator = pytest.importorskip("gcp_storage_emulator.server")
    storage = pytest.importorskip("google.cloud.storage")
    monkeypatch.setattr(logging.getLogger("gcp_storage_emulator"), "level", logging.CRITICAL)  # its 404s: not on stderr
    server = emulator.create_server("127.0.0.1", 0, in_memory=True, default_bucket=BUCKET)
    server.start()
    host, port = server._api._httpd.server_address[:2]
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://{host}:{port}")
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    yield storage.Client().bucket(BUCKET)
    server.stop()


def test_gs_urls_are_normalised_and_bad_ones_refused():
    assert normalize("gs://bucket/some/prefix/") == "gs://bucket/some/prefix"
    assert normalize("gs://bucket") == "gs://bucket"
    for url in ("gs://", "gs:///x"):
        with pytest.raises(UserError, match="names no bucket; use gs://BUCKET/PREFIX"):
            normalize(url)


def test_gs_without_the_library_is_one_clear_error(monkeypatch, fresh_clients):
    monkeypatch.setitem(sys.modules, "google.cloud.storage", None)  # import fails
    if "google.cloud" in sys.modules:  # and `from google.cloud import storage` finds no attribute either
        monkeypatch.delattr(sys.modules["google.cloud"], "storage", raising=False)
    with pytest.raises(
        UserError,
        match=r"^--artifacts gs://b/p needs google-cloud-storage "
        r"\(pip install google-cloud-storage\)$",
    ):
        open_location("gs://b/p")


@pytest.mark.slow  # over 10 s here: the README's test command leaves it to `-m slow`
def test_a_bucket_that_does_not_answer_is_one_line(monkeypatch, fresh_clients):
    pytest.importorskip("google.cloud.storage")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{port}")
    with pytest.raises(UserError, match="^the artifact store gs://b/p cannot be reached: ") as e:
        open_location("gs://b/p")
    assert "\n" not in str(e.value)


def test_a_gcs_store_round_trip(gcs):
    with pytest.raises(UserError, match="the artifact store gs://no-such-bucket cannot be reached.*NotFound"):
        open_location("gs://no-such-bucket")
    loc = open_location(f"gs://{BUCKET}/a/b/", create=True)
    assert loc.url == f"gs://{BUCKET}/a/b" and loc.prefix == "a/b/"
    loc.write("k.bin", b"abc")
    assert loc.read("k.bin") == b"abc" and gcs.blob("a/b/k.bin").download_as_bytes() == b"abc"
    loc.remove("k.bin")
    loc.remove("k.bin")  # already gone: no error
    with pytest.raises(UserError, match="missing from the artifact store"):
        loc.read("k.bin")


@pytest.mark.slow
def test_weights_go_to_a_gcs_bucket_and_come_back(cli, tmp_path, gcs):
    check_round_trip(
        cli,
        tmp_path,
        "gs",
        lambda: {b.name for b in gcs.client.list_blobs(BUCKET)},
        lambda key, data: gcs.blob(key).upload_from_string(data),
    )
