"""Language-model tasks: options, corpus loading and splits, windows, evaluation."""

from __future__ import annotations

import gzip
import math

import pytest
import torch

import tasks
from core.errors import DataError, UserError
from tasks.datasets import sources
from tasks.datasets.text import split_bytes
from tasks.lm_data import LMData, eval_starts
from tests.tasks.conftest import SHARED_DATA

HAVE_SHAKESPEARE = (SHARED_DATA / "shakespeare" / "shakespeare.txt.gz").is_file()
needs_shakespeare = pytest.mark.skipif(
    not HAVE_SHAKESPEARE, reason=f"needs the Gutenberg corpus shakespeare.txt.gz in {SHARED_DATA}/shakespeare"
)


def text_file(tmp_path, n=4000, name="t.txt"):
    body = "".join(f"line {i}: to be or not to be, é\n" for i in range(n))
    path = tmp_path / name
    data = body.encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path, data


@pytest.mark.parametrize("name", ["lm-shakespeare", "lm-text"])
def test_task_description(name):
    task = tasks.get_task(name)
    io = task.io()
    assert (io.d_in, io.d_out, io.output, io.input_shape) == (256, 256, "lm", (128,))
    assert (task.metric, task.direction, task.metrics) == ("loss", "minimize", ("loss", "perplexity", "bpb"))
    assert task.trainer == "lm" and task.defaults.weight_decay == 0.1 and task.defaults.tokens > 0
    assert tasks.get_task(name, {"context": 64}).io().input_shape == (64,)


def test_options_are_checked_in_one_line():
    with pytest.raises(UserError, match="unknown option 'noise' for task lm-shakespeare; known: compile, context"):
        tasks.get_task("lm-shakespeare", {"noise": 1})
    with pytest.raises(UserError, match="context must be a positive integer"):
        tasks.get_task("lm-text", {"context": 0})
    with pytest.raises(UserError, match="compile must be true or false"):
        tasks.get_task("lm-text", {"compile": "yes"})
    with pytest.raises(UserError, match="corpus must be one of auto, shakespeare, tiny-shakespeare, got 'gutenberg'"):
        tasks.get_task("lm-shakespeare", {"corpus": "gutenberg"})
    assert "data" in tasks.get_task("lm-text").options


def test_missing_corpus_names_the_file_and_where_to_put_it(tmp_path):
    with pytest.raises(DataError) as e:
        tasks.get_task("lm-shakespeare").load(str(tmp_path), "cpu")
    msg = str(e.value)
    assert "shakespeare.txt.gz" in msg and str(tmp_path / "shakespeare") in msg and "\n" not in msg


def test_lm_text_needs_an_existing_utf8_file(tmp_path):
    with pytest.raises(DataError, match="pass --data FILE"):
        tasks.get_task("lm-text").load(None, "cpu")
    with pytest.raises(DataError, match="not found"):
        tasks.get_task("lm-text", {"data": str(tmp_path / "nope.txt")}).load(None, "cpu")
    (tmp_path / "bin.txt").write_bytes(b"ok" * 1000 + b"\xff\xfe" + b"ok" * 1000)
    with pytest.raises(DataError, match="not UTF-8 text \\(bad byte at offset 2000\\)"):
        tasks.get_task("lm-text", {"data": str(tmp_path / "bin.txt")}).load(None, "cpu")
    (tmp_path / "short.txt").write_text("too short for a window\n" * 20)
    with pytest.raises(DataError, match="fewer than context \\+ 1 = 129"):
        tasks.get_task("lm-text", {"data": str(tmp_path / "short.txt")}).load(None, "cpu")


@pytest.mark.parametrize("name", ["t.txt", "t.txt.gz"])
def test_lm_text_splits_contiguously(tmp_path, name):
    path, raw = text_file(tmp_path, name=name)
    data = tasks.get_task("lm-text", {"data": str(path)}).load(None, "cpu")
    parts = [data.tokens[k] for k in ("train", "val", "test")]
    assert [len(p) for p in parts] == [
        int(len(raw) * 0.9),
        int(len(raw) * 0.05),
        len(raw) - int(len(raw) * 0.9) - int(len(raw) * 0.05),
    ]
    assert bytes(torch.cat(parts).tolist()) == raw and all(p.dtype == torch.uint8 for p in parts)


@needs_shakespeare
def test_shakespeare_from_the_data_dir():
    data = tasks.get_task("lm-shakespeare").load(str(SHARED_DATA), "cpu")
    assert sum(len(v) for v in data.tokens.values()) == 5_057_198
    # the local Gutenberg corpus wins over the download, and runs record which text it was
    assert data.source["corpus"] == "shakespeare" and data.source["sha256"] == sources.SHAKESPEARE_SHA256
    assert bytes(data.tokens["train"][:20].tolist()).isascii()
    assert data.eval_tokens("val") == 16384


def test_training_windows_are_shifted_by_one(tmp_path):
    splits = split_bytes(bytes(range(256)) * 40, source="x")
    data = LMData(splits, context=16, eval_tokens=1024, device=torch.device("cpu"))
    x, y = data.train_batch(64, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (64, 16) and x.dtype == torch.long
    assert torch.equal(x[:, 1:], y[:, :-1]) and torch.equal((x + 1) % 256, y)  # consecutive bytes
    x2, _ = data.train_batch(64, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)


def test_evaluation_windows_are_fixed_spread_and_capped():
    starts = eval_starts(10_000, 100, 2_000)
    assert len(starts) == 20 and starts[0] == 0 and starts[-1] == 10_000 - 101
    assert bool((starts.diff() >= 100).all())  # no token is scored twice
    assert len(eval_starts(350, 100, 10_000)) == 3  # all that fit without overlap
    assert eval_starts(101, 100, 10_000).tolist() == [0]


def test_uniform_predictions_score_8_bits_per_byte(tmp_path):
    path, _ = text_file(tmp_path)
    data = tasks.get_task("lm-text", {"data": str(path), "context": 32, "eval_tokens": 640}).load(None, "cpu")
    m = data.evaluate(lambda x: torch.zeros(*x.shape, 256), "val")
    assert m["loss"] == pytest.approx(math.log(256)) and m["bpb"] == pytest.approx(8.0)
    assert m["perplexity"] == pytest.approx(256.0, rel=1e-5)
    assert data.eval_tokens("val") == 640

    counting = LMData(split_bytes(bytes(range(256)) * 40, source="x"), 16, 256, torch.device("cpu"))
    knows_next = lambda x: 50.0 * torch.nn.functional.one_hot((x + 1) % 256, 256).float()  # noqa: E731
    assert counting.evaluate(knows_next, "test")["loss"] < 1e-15 < m["loss"]


def test_cli_run_with_a_missing_text_file_fails_in_one_line(tmp_path, monkeypatch, capsys):
    from search.cli import main

    monkeypatch.chdir(tmp_path)
    code = main(["run", "--space", "transformer", "--task", "lm-text", "--data", "missing.txt", "--budget", "1M"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: text file 'missing.txt' not found") and err.count("\n") == 1
    assert not (tmp_path / "search.db").exists()
