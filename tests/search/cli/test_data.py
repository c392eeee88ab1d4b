"""`search data` answers for every task; `search data fetch NAME` (no network here: the
downloads themselves are tested against a local server in tests/tasks/datasets/)."""

from __future__ import annotations

import gzip
import json

import pytest

import tasks
from tasks.datasets import catalog, fetch, sources

pytestmark = pytest.mark.usefixtures("isolated_data")  # tests/conftest.py: fresh cache, no network


def test_every_task_names_registered_data_sets_and_every_download_has_an_installer():
    for name in tasks.TASKS.names():
        task = tasks.get_task(name)
        assert all(n in sources.DATASETS for n in task.data_sets()), name
        assert task.data_sets() or task.data_note, name
    assert set(catalog.INSTALLERS) == {n for n, d in sources.DATASETS.items() if d.downloadable}
    for d in sources.DATASETS.values():  # each is downloaded, bundled, or says how to get it
        assert d.downloadable + bool(d.bundled) + bool(d.manual) == 1, d.name
        assert all(len(r.sha256) == 64 and r.urls for r in d.downloads)


def test_data_lists_every_task_with_presence_where_size_and_how(cli, tmp_path):
    data = tmp_path / "data"
    (data / "mnist").mkdir(parents=True)
    for name in sources.MNIST_FILES:
        (data / "mnist" / f"{name}.gz").write_bytes(gzip.compress(b"x" * 100))
    code, out, err = cli("data", "--json", "--data-dir", str(data))
    assert code == 0, err
    rows = json.loads(out)
    assert {r["task"] for r in rows} - {""} == set(tasks.TASKS.names())
    by_task = {r["task"]: r for r in rows}
    mnist = by_task["mnist-denoise"]
    assert mnist["present"] and mnist["directory"] == str(data / "mnist") and mnist["origin"] == "--data-dir"
    assert mnist["bytes"] == sum(p.stat().st_size for p in (data / "mnist").iterdir())
    cifar = by_task["cifar10-classify"]
    assert not cifar["present"] and cifar["bytes"] == 170_498_071 and "search data fetch cifar10" in cifar["how"]
    assert by_task["imagenet32-sr"]["how"].startswith("by hand: needs an ImageNet account")
    assert by_task["digits-classify"]["present"] and by_task["digits-classify"]["how"] == "bundled with scikit-learn"
    assert by_task["checkerboard"]["data"] == "none: generated"
    lm = [r for r in rows[rows.index(by_task["lm-shakespeare"]) :][:2]]
    assert [r["data"] for r in lm] == ["shakespeare", "else tiny-shakespeare"]

    code, out, err = cli("data", "--data-dir", str(data))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["task", "data", "present", "where", "size", "how", "to", "get", "it"]
    assert any(line.startswith("mnist-denoise") and f"{data / 'mnist'} (--data-dir)" in line for line in lines)
    assert any(
        line.startswith("imagenet32: needs an ImageNet account: log in at https://image-net.org/") for line in lines
    )
    assert lines[-1].startswith(f"search order: {data} (--data-dir), then {fetch.cache_root()} (cache)")


def test_fetch_finds_what_is_present_and_says_why_it_cannot_download(cli, tmp_path, monkeypatch):
    (tmp_path / "env" / "shakespeare").mkdir(parents=True)
    (tmp_path / "env" / "shakespeare" / "shakespeare.txt").write_text("O Romeo\n" * 100)
    monkeypatch.setenv(fetch.ENV_DATA_DIR, str(tmp_path / "env"))
    code, out, err = cli("data", "fetch", "lm-shakespeare")  # the task's first corpus is there: nothing to do
    where = tmp_path / "env" / "shakespeare"
    assert code == 0 and out == f"shakespeare: present in {where} ($SEARCH_DATA_DIR), 800 bytes\n"
    assert cli("data", "fetch", "digits")[:2] == (0, "digits: bundled with scikit-learn; nothing to fetch\n")
    code, out, _ = cli("data", "fetch", "sines")
    assert code == 0 and "nothing to fetch" in out
    code, out, err = cli("data", "fetch", "cifar10")  # offline: one line, exit 2, nothing cached
    assert code == 2 and err.startswith("error: CIFAR-10: download failed (") and err.count("\n") == 1
    assert "network disabled in tests" in err and not fetch.cache_root().exists()
    code, out, err = cli("data", "fetch", "shakespeare", "--data-dir", str(tmp_path))  # only --data-dir counts
    assert code == 2 and "no download address" in err and str(tmp_path / "shakespeare") in err
