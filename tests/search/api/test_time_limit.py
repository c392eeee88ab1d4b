"""`search run --time-limit`: the whole command's wall time, replicate searches included;
what ran is kept and the same command goes on (the loop's side: tests/search/engine/test_study_loop.py)."""

from storage import Store

FLAGS = ("--space", "hourglass", "--task", "digits-denoise", "--budget", "20K", "--epochs", "1")
FLAGS += ("--max-train-samples", "128", "--no-report", "--study", "tl")


def test_replicate_searches_share_the_commands_time_limit_and_a_resume_goes_on(cli, tmp_path):
    code, out, err = cli("run", *FLAGS, "--trials", "3", "--search-repeats", "2", "--time-limit", "0.001")
    assert code == 0, err
    assert "(stopped at the time limit, 0.001s: the same command goes on)" in out
    assert "time limit reached: replicate searches 2 to 2 not started" in out
    store = Store(f"sqlite:///{tmp_path}/search.db")
    assert [s.name for s in store.list_studies()] == ["tl-r1"] and len(store.trials("tl-r1")) <= 1  # at most the first
    code, out, err = cli("run", *FLAGS, "--trials", "3", "--search-repeats", "2", "--seed-checks", "0")
    assert code == 0, err
    assert {s.name for s in store.list_studies()} == {"tl-r1", "tl-r2"}
    assert all(len(store.trials(n)) == 3 for n in ("tl-r1", "tl-r2"))
