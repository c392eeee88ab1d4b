"""A plugin's study on SQLite and, when the suite has one, PostgreSQL (issue 60, item 5):
searched through `search.run`, opened again, compared, its model loaded, and its pages
served by `search serve` (the index and the study page answer 200 and name the
plugin's family)."""

import os
import threading
import urllib.request
import uuid

import pytest
import torch

import search
from reports.server import make_server
from reports.site import study_filename
from storage import Store
from tests.search.plugins.sources import GOOD, write

BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get("SEARCH_TEST_POSTGRES_URL") else [])


@pytest.fixture(params=BACKENDS)
def url(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}" if request.param == "sqlite" else os.environ["SEARCH_TEST_POSTGRES_URL"]
    names = []
    yield url, names
    if request.param == "postgresql":
        store = Store(url)
        for name in names:
            store.delete_study(name)
        store.close()


def test_a_plugin_study_is_stored_read_back_and_served(url, tmp_path, monkeypatch):
    url, names = url
    monkeypatch.chdir(tmp_path)
    plugin = str(write(tmp_path, "stored_plugin", GOOD))
    name = f"plugin-{uuid.uuid4().hex[:6]}"
    names.append(name)
    study = search.run(
        space="tiny-mlp",
        budget="2K",
        trials=4,
        repeats=2,
        epochs=2,
        study=name,
        storage=url,
        plugins=[plugin],
        report=False,
        artifacts=str(tmp_path / "weights"),
    )
    again = search.open(name, storage=url)
    df = again.trials()
    assert len(df) == 4 and (df.params <= 2000).all() and set(df.family) == {"tiny-mlp"}
    rows = [f for level in again.compare().to_dict()["levels"] for f in level["families"] if f["value"] is not None]
    best = max(rows, key=lambda f: f["value"])
    model = study.load_model(best["trial"], artifacts=str(tmp_path / "weights"))
    assert isinstance(model, torch.nn.Module) and sum(p.numel() for p in model.parameters()) == best["params"]
    store = Store(url)
    server = make_server(store, "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        for page in ("", study_filename(name)):  # the index and the study page
            with urllib.request.urlopen(base + page, timeout=60) as r:
                assert r.status == 200 and "tiny-mlp" in r.read().decode()
    finally:
        server.shutdown()
        server.server_close()
        store.close()
