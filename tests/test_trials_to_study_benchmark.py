"""benchmarks/trials_to_study.py: a kept trials file loaded into a new study reads the same
with `search compare` as the study it was written from."""

import json

import pytest

import benchmarks.trials_to_study as tts
from core.trials import RunResult, TrialResult
from search.cli.main import main
from storage import Store
from tests.bench_scripts import run_benchmark

# (family, params, psnr of each run, note): trials of one run with seed checks, and of three
TRIALS = [
    ("hourglass", 10_000, [20.0], None),
    ("conventional", 12_000, [15.0, 15.4, 14.9], None),
    ("hourglass", 50_000, [24.0], None),
    ("conventional", 60_000, [24.6], None),
    ("hourglass", 50_000, [24.3], "seed check of trial 2"),
    ("conventional", 60_000, [24.2, 24.0], "seed check of trial 3"),
    ("hourglass", 30_000, [22.5, 22.0, 22.9], None),
]


def _flags(url: str, name: str, seed: int) -> list[str]:
    """The `search run` command of a study (never run: its trials are written by hand)."""
    task = ["--task", "digits-denoise", "--space", "hourglass,conventional", "--budget", "100K"]
    return [*task, "--seed", str(seed), "--study", name, "--storage", url]


def _study(url: str, name: str, seed: int) -> None:
    store = Store(url)
    made, _, fields = tts.study_of(_flags(url, name, seed))
    assert made == name and fields["task"] == "digits-denoise" and fields["settings"]["seed"] == seed
    store.create_or_load_study(name, **fields)
    for i, (family, params, values, note) in enumerate(TRIALS):
        config = {"width": params // 1000}
        seeds = [seed * 100 + 10 * i + k for k in range(len(values))]
        n = store.add_trial(name, family=family, config=config, params=params, seeds=seeds, note=note)
        runs = [
            RunResult(s, "complete", {"psnr": v + seed / 10, "val_psnr": v - 1}, 1, [], 2.0)
            for s, v in zip(seeds, values)
        ]
        store.finish_trial(name, n, TrialResult(n, "complete", runs, 2.0, "cpu"))
    store.add_rejected(name, family="hourglass", config={"width": 900}, params=900_000, reason="over the budget")
    store.close()


def _cli(capsys, *args) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_a_loaded_file_compares_as_the_study_it_came_from(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SEARCH_STORAGE", raising=False)
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    _study(url, "origin", seed=0)
    _study(url, "replicate", seed=1)
    kept = tmp_path / "origin.json"
    kept.write_text(_cli(capsys, "trials", "origin", "--format", "json", "--storage", url))

    done = run_benchmark("trials_to_study", kept, "--", *_flags(url, "loaded", 0))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"study 'loaded': {len(TRIALS) + 1} trials from {kept}"

    def reading(*studies):  # the answer, without the studies' names, to 9 digits (the runs' sums round)
        out = _cli(capsys, "compare", *studies, "--budgets", "20K,60K", "--format", "json", "--storage", url)
        return json.loads(out.replace('"loaded"', '"origin"'), parse_float=lambda x: round(float(x), 9))

    assert reading("loaded") == reading("origin")
    assert reading("loaded", "replicate", "--replicates") == reading("origin", "replicate", "--replicates")
    again = json.loads(_cli(capsys, "trials", "loaded", "--format", "json", "--storage", url))
    assert [t["status"] for t in again] == ["complete"] * len(TRIALS) + ["rejected"]
    assert [t["n_runs"] for t in again[:-1]] == [len(values) for _, _, values, _ in TRIALS]
    assert again[1]["psnr_std"] == pytest.approx(json.loads(kept.read_text())[1]["psnr_std"])
    settings = Store(url).get_study("loaded").settings
    assert settings.pop("loaded_from") == str(kept) and settings == Store(url).get_study("origin").settings


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda ts: ts[0].update(n_runs=2), "trial 0 has 2 runs but 1 seeds"),
        (lambda ts: ts[0].update(family="mixer"), "trial 0: family 'mixer' is not one of hourglass, conventional"),
        (lambda ts: ts.pop(1), "the trials are not numbered 0, 1, 2, ... without gaps"),
        (lambda ts: ts[0].pop("config"), "not a trial of `search trials --format json`: "),
    ],
)
def test_a_file_that_cannot_be_loaded_is_one_line_exit_2_and_adds_nothing(tmp_path, capsys, monkeypatch, edit, message):
    monkeypatch.delenv("SEARCH_STORAGE", raising=False)
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    _study(url, "origin", seed=0)
    trials = json.loads(_cli(capsys, "trials", "origin", "--format", "json", "--storage", url))
    edit(trials)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(trials))
    done = run_benchmark("trials_to_study", bad, "--", *_flags(url, "loaded", 0))
    assert done.returncode == 2 and done.stderr.startswith(f"trials_to_study.py: {message}")
    assert len(done.stderr.strip().splitlines()) == 1
    assert [s.name for s in Store(url).list_studies()] == ["origin"]


def test_an_existing_study_or_a_bad_command_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SEARCH_STORAGE", raising=False)
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    _study(url, "origin", seed=0)
    kept = tmp_path / "origin.json"
    kept.write_text(_cli(capsys, "trials", "origin", "--format", "json", "--storage", url))
    taken = run_benchmark("trials_to_study", kept, "--", *_flags(url, "origin", 0))
    assert taken.returncode == 2 and "study 'origin' exists already" in taken.stderr
    flags = _flags(url, "new", 0)
    flags[flags.index("--space") + 1] = "hourglass,nothing"
    unknown = run_benchmark("trials_to_study", kept, "--", *flags)
    assert unknown.returncode == 2 and "nothing" in unknown.stderr and len(unknown.stderr.strip().splitlines()) == 1
    assert len(Store(url).trials("origin")) == len(TRIALS) + 1
