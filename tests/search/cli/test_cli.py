"""The `search` command end to end on the offline digits tasks."""

import json
import sqlite3

import pytest

from storage import load_trials

RUN = (
    "run",
    "--space",
    "hourglass,conventional",
    "--task",
    "digits-denoise",
    "--budget",
    "60K",
    "--trials",
    "4",
    "--epochs",
    "2",
    "--seed-checks",
    "0",  # these tests count the trials; tests/search/cli/test_seed_checks_cli.py runs the default
    "--no-report",
)


def db_dump(path):
    con = sqlite3.connect(path)
    try:
        return {
            t: con.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
            for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    finally:
        con.close()


@pytest.fixture
def study_db(cli, tmp_path):
    code, out, err = cli(*RUN)
    assert code == 0, err
    return tmp_path / "search.db"


def test_run_records_trials_within_budget_and_prints_front(cli, study_db, capsys):
    df = load_trials("digits-denoise-hourglass-conventional", f"sqlite:///{study_db}")
    done = df[df.status == "complete"]
    finished = df[df.status.isin(["complete", "pruned"])]  # the default pruner may stop some
    assert len(finished) == len(df) == 4 and len(done) >= 2 and (finished.params <= 60_000).all()
    assert set(done.family) <= {"hourglass", "conventional"}
    assert done.psnr.notna().all() and done.ssim.notna().all()
    # the Pareto table is printed (re-run: nothing to do, prints it again)
    code, out, err = cli(*RUN)
    assert code == 0 and "Pareto-optimal" in out and "nothing to do" in err


def test_run_says_how_it_searches_and_a_resume_what_it_changed(cli, study_db):
    """The start says the flags the study searches with, the defaults' choices included;
    a resume with other flags says which the study was created otherwise with."""
    code, out, err = cli(*RUN, "--trials", "5", "--pruner", "none", "--shape-draw", "random")
    assert code == 0, err
    lines = err.splitlines()
    assert lines[1] == (
        "searching with --sampler gp --sampler-scope family --share equal --spread size "
        "--size-scale log --shape-draw random --corners both --start spread --revisit answer "
        "--pruner none --seed-checks 0"
    )
    assert lines[2] == (
        "note: the study was created with --shape-draw modelled --pruner pareto; this run searches "
        "as above (its finished trials are kept, and told to the sampler)"
    )
    settings = json.loads(sqlite3.connect(study_db).execute("SELECT settings FROM studies").fetchone()[0])
    assert settings["pruner"] == "pareto" and settings["shape_draw"] == "modelled"  # kept as created


def test_trials_json_and_csv(cli, study_db):
    code, out, _ = cli("trials", "digits-denoise-hourglass-conventional", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 4
    for r in rows:
        assert {"number", "status", "family", "config", "params", "psnr", "ssim"} <= set(r)
        assert "psnr_std" not in r  # one run per config: no std
        assert r["params"] <= 60_000
    code, out, _ = cli("trials", "digits-denoise-hourglass-conventional", "--format", "csv", "--family", "hourglass")
    assert code == 0 and out.splitlines()[0].startswith("study,number,status")
    code, out, _ = cli("trials", "digits-denoise-hourglass-conventional", "--pareto", "--format", "json")
    assert code == 0 and 1 <= len(json.loads(out)) <= 4


def test_pareto_trials_are_sorted_by_params_and_flag_the_overall_front(cli, study_db):
    from reports.fronts import front_data

    df = load_trials("digits-denoise-hourglass-conventional", f"sqlite:///{study_db}")
    fronts = front_data(df, "psnr", "maximize")
    on_front = {int(n) for f in fronts.families for n in f.front_numbers}
    overall = {int(n) for n in fronts.overall_numbers}
    code, out, _ = cli("trials", "digits-denoise-hourglass-conventional", "--pareto", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and {r["number"] for r in rows} == on_front
    assert [r["params"] for r in rows] == sorted(r["params"] for r in rows)
    assert {r["number"] for r in rows if r["overall_front"]} == overall
    code, out, _ = cli("trials", "digits-denoise-hourglass-conventional", "--pareto")
    assert code == 0 and "overall_front" in out.splitlines()[0]
    code, out, _ = cli("trials", "digits-denoise-hourglass-conventional", "--pareto", "--format", "csv")
    assert code == 0 and "overall_front" in out.splitlines()[0]


def test_repeats_give_std(cli):
    code, _, err = cli(
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-sr",
        "--budget",
        "30K",
        "--trials",
        "2",
        "--repeats",
        "2",
        "--epochs",
        "1",
        "--no-report",
        "--study",
        "rep",
    )
    assert code == 0, err
    rows = json.loads(cli("trials", "rep", "--format", "json")[1])
    assert all(r["n_runs"] == 2 and r["psnr_std"] is not None and len(r["seeds"]) == 2 for r in rows)


def test_family_is_the_space_flag_by_its_name(cli):
    """`--family` is `--space` under the name the code uses (search run, search params)."""
    code, _, err = cli(
        "run",
        "--family",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "20K",
        "--trials",
        "1",
        "--epochs",
        "1",
        "--no-report",
        "--study",
        "fam",
    )
    assert code == 0, err
    rows = json.loads(cli("trials", "fam", "--format", "json")[1])
    assert [r["family"] for r in rows] == ["hourglass"]
    by_space = cli("params", "--space", "hourglass", "--task", "digits-denoise", "d_z=80", "d_h=8", "L=2", "--json")[1]
    by_family = cli("params", "--family", "hourglass", "--task", "digits-denoise", "d_z=80", "d_h=8", "L=2", "--json")[
        1
    ]
    assert json.loads(by_space) == json.loads(by_family)


def test_studies_sql_report(cli, study_db, tmp_path):
    code, out, _ = cli("studies")
    assert code == 0 and "digits-denoise-hourglass-conventional" in out and "hourglass,conventional" in out
    code, out, _ = cli("sql", "SELECT family, count(*) AS n FROM trials GROUP BY family", "--format", "json")
    assert code == 0 and sum(r["n"] for r in json.loads(out)) == 4
    code, out, _ = cli("report", "--out", str(tmp_path / "site"))
    assert code == 0 and (tmp_path / "site" / "index.html").exists()
    page = (tmp_path / "site" / "study-digits-denoise-hourglass-conventional.html").read_text()
    assert "hourglass" in page and "conventional" in page and 'src="plotly.min.js"' in page


TWO = ("run", "--space", "hourglass,conventional", "--task", "digits-denoise", "--budget", "100K")  # --decide's rows

# fmt: off  (a table: one row per bad input)
BAD_INPUT = [
    (("run", "--space", "resnet", "--budget", "1M"), "unknown family 'resnet'"),
    (
        ("run", "--plugin", "no/such_plugin.py", "--space", "hourglass", "--budget", "1M"),
        "plugin 'no/such_plugin.py': no such file",
    ),
    (
        ("run", "--plugin", "no_such_plugin_module", "--space", "hourglass", "--budget", "1M"),
        "plugin 'no_such_plugin_module': no module of that name",
    ),
    (("run", "--space", "hourglass", "--task", "cifar", "--budget", "1M"), "unknown task 'cifar'"),
    (("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "80Q"), "bad budget '80Q'"),
    (("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1K"), "below the smallest hourglass"),
    (
        ("run", "--space", "hourglass", "--task", "mnist-denoise", "--budget", "3M", "--data-dir", "/no/such/dir"),
        "does not exist",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--space-file", "bad.toml"),
        "malformed space file",
    ),
    (("sql", "DELETE FROM trials"), "refused"),
    (("sql", "SELECT 1; DROP TABLE trials"), "refused"),
    (("sql", "SELECT 1", "--timeout", "0"), "--timeout must be a positive number"),
    (
        (
            "sql",
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
            "--timeout",
            "0.2",
        ),
        "stopped after 0.2 s",
    ),
    (("trials", "nope"), "no study named 'nope'"),
    (("params", "--space", "hourglass", "--task", "digits-denoise", "d_z=100"), "missing d_h, L"),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--task-option", "bogus=1"),
        "bogus",
    ),
    (("run", "--space", "hourglass", "--budget", "1M", "--trials", "0"), "at least 1"),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--lr", "-1"),
        "--lr must be a positive number",
    ),
    (("run", "--space", "lmlp", "--task", "digits-denoise", "--budget", "1M"), "does not fit task"),
    (
        ("run", "--space", "lmlp", "--task", "digits-diffusion", "--budget", "1M", "--task-option", "guidance=-2"),
        "guidance must be a number",
    ),
    (("run", "--budget", "1M"), "needs --space and --budget"),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--executor", "nope"),
        "unknown executor 'nope'",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--sampler", "cmaes"),
        "unknown sampler",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--spread", "even"),
        "unknown --spread 'even'; known: size, none",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-sr", "--budget", "1M", "--task-option", "downsample=box"),
        "downsample must be one of bicubic, antialias",
    ),
    (
        ("run", "--space", "han", "--task", "checkerboard", "--budget", "5K", "--optimizer", "adam"),
        "unknown optimizer 'adam'; known: adamw, adamw-uvit, sgd-step",
    ),
    (
        ("run", "--space", "transformer", "--task", "lm-shakespeare", "--budget", "5M", "--optimizer", "sgd-step"),
        "--optimizer is for supervised tasks",
    ),
    (
        ("run", "--space", "lmlp", "--task", "digits-diffusion", "--budget", "1M", "--ema", "-0.1"),
        "--ema must be a decay in [0, 1) (0: off, e.g. 0.9999), got -0.1",
    ),
    (
        ("run", "--space", "lmlp", "--task", "digits-diffusion", "--budget", "1M", "--ema", "1"),
        "--ema must be a decay in [0, 1) (0: off, e.g. 0.9999), got 1.0",
    ),
    (("run", "--space", "lmlp", "--task", "digits-diffusion", "--budget", "1M", "--ema", "nan"), "got nan"),
    (
        ("run", "--space", "lmlp", "--task", "digits-diffusion", "--budget", "1M", "--ema", "fast"),
        "argument --ema: invalid float value: 'fast'",
    ),
    (
        ("run", "--space", "lmlp", "--task", "digits-diffusion", "--budget", "1M", "--ema-warmup"),
        "--ema-warmup needs --ema DECAY above 0",
    ),
    (
        ("run", "--space", "transformer", "--task", "lm-shakespeare", "--budget", "5M", "--ema", "0.99"),
        "--ema is for supervised tasks",
    ),
    (("run", "--recipe", "badema.toml"), "[run] ema must be float or int, got 'high'"),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--compile", "fast"),
        "--compile must be one of default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs, got 'fast'",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--storage-wait", "-1"),
        "--storage-wait must be a number of seconds, 0 or more, got -1.0",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--storage-wait", "nan"),
        "--storage-wait must be a number of seconds, 0 or more, got nan",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--pack", "0"),
        "--pack must be a whole number of trials of at least 1, or auto, got '0'",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--pack",
            "two",
            "--executor",
            "tune",
        ),
        "--pack must be a whole number of trials of at least 1, or auto, got 'two'",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--fuse", "maybe"),
        "argument --fuse: invalid choice: 'maybe'",
    ),
    (
        ("compare", "digits-denoise-hourglass-conventional", "--metric", "frechet"),
        "no metric 'frechet' in these studies; they have psnr, ",
    ),
    (
        ("run", "--space", "s-mixer", "--task", "digits-classify", "--budget", "10K", "--budget-of", "flops"),
        "unknown --budget-of 'flops'; known: params, omega",
    ),
    (
        ("run", "--space", "s-mixer,hourglass", "--task", "digits-classify", "--budget", "10K", "--budget-of", "omega"),
        "--budget-of omega: hourglass cannot be counted so",
    ),
    (
        ("run", "--space", "hourglass,conventional", "--task", "digits-denoise", "--budget", "1M", "--share", "fair"),
        "unknown --share 'fair'; known: equal, free, uncertain",
    ),
    (
        (
            "run",
            "--space",
            "hourglass,conventional",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--sampler-scope",
            "trial",
        ),
        "unknown --sampler-scope 'trial'; known: study, family",
    ),
    (
        (
            "run",
            "--space",
            "hourglass,conventional",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--sampler-scope",
            "family",
            "--share",
            "free",
        ),
        "--sampler-scope family gives each family its own sampler",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--corners", "largest"),
        "unknown --corners 'largest'; known: both, smallest, none, last",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--start", "small"),
        "unknown --start 'small'; known: spread, ramp",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--start",
            "ramp",
            "--spread",
            "none",
        ),
        "--start sets the target sizes of an Optuna sampler's random start; it needs --spread size",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--start",
            "ramp",
            "--sampler",
            "grid",
        ),
        "--start sets the target sizes of an Optuna sampler's random start; it needs --spread size",
    ),
    (
        (
            "run",
            "--space",
            "hourglass,conventional",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--start",
            "ramp",
            "--share",
            "free",
        ),
        "--start ramp draws each family's start in its turns; with several families it needs",
    ),
    (
        (
            "run",
            "--space",
            "hourglass,conventional",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--corners",
            "last",
            "--share",
            "free",
        ),
        "--corners last gives each family its budget model in the last turns; with several",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--corners",
            "last",
            "--sampler",
            "grid",
        ),
        "--corners sets the sizes an Optuna sampler visits first; it needs --spread size",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--corners",
            "none",
            "--spread",
            "none",
        ),
        "--corners sets the sizes an Optuna sampler visits first; it needs --spread size",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--corners",
            "smallest",
            "--sampler",
            "grid",
        ),
        "--corners sets the sizes an Optuna sampler visits first; it needs --spread size",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--size-scale", "ln"),
        "unknown --size-scale 'ln'; known: linear, log",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--size-scale",
            "linear",
            "--sampler",
            "grid",
        ),
        "--size-scale sets how an Optuna sampler sees the parameter count; the grid has no model",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--revisit", "skip"),
        "unknown --revisit 'skip'; known: answer, train",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--revisit",
            "train",
            "--sampler",
            "grid",
        ),
        "--revisit is for an Optuna sampler's proposals; the grid never proposes a point twice",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--shape-draw", "wide"),
        "unknown --shape-draw 'wide'; known: random, modelled",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--shape-draw",
            "modelled",
            "--sampler",
            "grid",
        ),
        "--shape-draw sets how an Optuna sampler draws widths and depth; the grid has no draw",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "ray",
            "--trial-timeout",
            "-1",
        ),
        "--trial-timeout must be positive",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "ray",
            "--max-concurrent",
            "0",
        ),
        "--max-concurrent must be at least 1",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "ray",
            "--cpus-per-trial",
            "0",
        ),
        "--cpus-per-trial > 0",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--gpus-per-trial", "1"),
        "the local executor takes no gpus_per_trial",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--workers", "0"),
        "--workers must be a whole number of at least 1, or auto, got '0'",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--workers", "-1"),
        "--workers must be a whole number of at least 1",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--workers", "999"),
        "--workers 999 is more than the",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--threads", "0"),
        "--threads must be a whole number of at least 1, got '0'",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--threads", "999"),
        "torch threads would oversubscribe the",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--trial-timeout", "0"),
        "--trial-timeout must be a positive number of seconds",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "ray",
            "--workers",
            "2",
        ),
        "--workers and --threads are for the local executor",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "tune",
            "--trial-timeout",
            "5",
        ),
        "--executor tune cannot honour --trial-timeout: a hung trial reports nothing for Tune",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "tune",
            "--max-concurrent",
            "0",
        ),
        "--max-concurrent must be at least 1",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "tune",
            "--cpus-per-trial",
            "0",
        ),
        "--cpus-per-trial > 0",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--tune-dir", "runs"),
        "--tune-dir is for --executor tune",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "tune",
            "--ray-address",
            "127.0.0.1:1",
        ),
        "the Ray cluster at 127.0.0.1:1 does not answer",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "tune",
            "--ray-address",
            "nohost",
        ),
        "--ray-address must be 'auto' or HOST:PORT, got 'nohost'",
    ),
    # on ray too, before the study is written (it was created first, then the join failed)
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "ray",
            "--ray-address",
            "127.0.0.1:1",
            "--study",
            "new-ray-study",
        ),
        "the Ray cluster at 127.0.0.1:1 does not answer",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--executor",
            "ray",
            "--ray-address",
            "nohost",
        ),
        "--ray-address must be 'auto' or HOST:PORT, got 'nohost'",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-sr",
            "--budget",
            "60K",
            "--study",
            "digits-denoise-hourglass-conventional",
        ),
        "exists with task",
    ),
    (("run", "--recipe", "nope"), "unknown recipe 'nope'; known: chen-denoise, "),
    (("run", "--recipe", "bad.toml"), "malformed recipe"),
    (("run", "--recipe", "norun.toml"), "needs a [run] table"),
    (("run", "--recipe", "chen-denoise-small", "--sampler", "cmaes"), "unknown sampler"),
    (("run", "--task", "digits-denoise"), "needs --space and --budget"),
    (("recipes", "nope"), "unknown recipe 'nope'"),
    (("spaces", "nope"), "unknown family 'nope'"),
    (
        ("run", "--space", "hourglass", "--task", "digits-sr", "--budget", "60K", "--task-option", "flips=3"),
        "flips must be true or false",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--pruner", "asha"),
        "unknown pruner 'asha'; known: checked-rungs, none, pareto, rungs",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--search-repeats", "0"),
        "--search-repeats must be at least 1, got 0",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--search-repeats", "two"),
        "argument --search-repeats: invalid int value: 'two'",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--prune-grace", "1.5"),
        "--prune-grace must be a fraction of the epochs between 0 and 1, got 1.5",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--prune-grace", "0"),
        "--prune-grace must be a fraction of the epochs between 0 and 1, got 0.0",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--seed-checks", "1.5"),
        "--seed-checks must be a share of the training time between 0 and 1, got 1.5",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--seed-checks", "-0.1"),
        "--seed-checks must be a share of the training time between 0 and 1, got -0.1",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--seed-checks", "some"),
        "argument --seed-checks: invalid float value: 'some'",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--seed-check-order", "best"),
        "argument --seed-check-order: invalid choice: 'best'",
    ),
    ((*TWO, "--decide", "200K"), "--decide 200K is above the search budget 100K"),
    (
        (*TWO, "--decide", "10K,60K"),
        "--decide 10K is below the smallest conventional model (16.5K): no verdict is possible there",
    ),
    ((*TWO, "--decide", "6Q"), "bad budget"),
    ((*TWO, "--decide", ","), "--decide needs at least one budget"),
    (
        (*TWO, "--decide", "60K", "--margin", "0"),
        "--margin must be a difference above 0 in the metric's units, got 0.0",
    ),
    ((*TWO, "--margin", "-1"), "--margin must be a difference above 0 in the metric's units, got -1.0"),
    ((*TWO, "--margin", "0.1"), "--margin is for --decide here"),
    ((*TWO, "--time-limit", "0"), "--time-limit '0': it must be a positive duration"),
    ((*TWO, "--time-limit", "soon"), "--time-limit 'soon': use a duration such as 90s, 45m, 2h"),
    ((*TWO, "--time-limit", "30m2h"), "--time-limit '30m2h': use a duration"),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "100K", "--decide", "60K"),
        "--decide needs two families or more",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--prune-grace", "third"),
        "invalid float value: 'third'",
    ),
    (("spaces", "hourglass", "--task", "nope"), "unknown task 'nope'"),
    (("report", "--predict-at", "1Q"), "bad budget '1Q'"),
    (("report", "--predict-at", "10K"), "--predict-at 10K is not above the search budget 60K"),
    (("report", "--predict-at", ","), "--predict-at needs at least one budget"),
    (("report", "nope", "--predict-at", "1M"), "no study named 'nope'"),
    (("serve", "--port", "0", "--allow-host", ""), "--allow-host takes a host name or address"),
    (("serve", "--port", "0", "--allow-host", "http://evil.example/"), "got 'http://evil.example/'"),
    (("data", "fetch", "nope"), "unknown data set or task 'nope'; data sets: mnist, cifar10, tiny-shakespeare"),
    (("data", "fetch"), "search data fetch needs a NAME"),
    (("data", "mnist"), "unknown data command 'mnist' (known: fetch); did you mean 'search data fetch mnist'?"),
    (("data", "--data-dir", "/no/such/dir"), "data directory '/no/such/dir' does not exist"),
    (("data", "fetch", "imagenet32-sr", "--data-dir", "."), "ImageNet-32 is not downloaded: needs an ImageNet account"),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--keep", "best"),
        "unknown --keep 'best'; known: pareto, all, none",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--artifacts", "ftp://host/w"),
        "--artifacts 'ftp://host/w': unknown scheme 'ftp'; use a folder, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--artifacts", "gs://"),
        "--artifacts 'gs://' names no bucket; use gs://BUCKET/PREFIX",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--artifacts", "gs:///w"),
        "--artifacts 'gs:///w' names no bucket; use gs://BUCKET/PREFIX",
    ),
    (
        (
            "run",
            "--space",
            "hourglass",
            "--task",
            "digits-denoise",
            "--budget",
            "1M",
            "--keep",
            "none",
            "--artifacts",
            "w",
        ),
        "--artifacts names where weights are kept, but --keep none keeps none",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--artifacts", "bad.toml/w"),
        "cannot make the artifact folder",
    ),
    (
        ("run", "--space", "hourglass", "--task", "digits-denoise", "--budget", "1M", "--storage", "sqlite://"),
        "is not a file, so its weights have no folder beside it: give --artifacts FOLDER, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX",
    ),
    (("model", "nope", "0", "--out", "m"), "no study named 'nope'"),
    (
        ("model", "digits-denoise-hourglass-conventional", "99", "--out", "m"),
        "study 'digits-denoise-hourglass-conventional' has no trial 99",
    ),
    (("model", "digits-denoise-hourglass-conventional", "0", "--seed", "5", "--out", "m"), "has no weights for seed 5"),
    (
        ("model", "digits-denoise-hourglass-conventional", "0", "--out", "m", "--artifacts", "/no/such/dir"),
        "the artifact folder /no/such/dir does not exist",
    ),
    (("model", "digits-denoise-hourglass-conventional", "first", "--out", "m"), "invalid int value: 'first'"),
    (("model", "digits-denoise-hourglass-conventional", "0"), "the following arguments are required: --out"),
    (
        ("model", "digits-denoise-hourglass-conventional", "0", "--retraining", "1", "--out", "m"),
        "has no retraining 1; it has none (search train makes one)",
    ),
    (
        ("model", "digits-denoise-hourglass-conventional", "0", "--retraining", "-1", "--out", "m"),
        "--retraining must be a retraining's number (1, 2, ...), got -1",
    ),
    (
        ("model", "digits-denoise-hourglass-conventional", "0", "--retraining", "one", "--out", "m"),
        "argument --retraining: invalid int value: 'one'",
    ),
    (("train", "nope", "0", "--epochs", "3"), "no study named 'nope'"),
    (
        ("train", "digits-denoise-hourglass-conventional", "99", "--epochs", "3"),
        "study 'digits-denoise-hourglass-conventional' has no trial 99",
    ),
    (("train", "digits-denoise-hourglass-conventional", "0"), "the following arguments are required: --epochs"),
    (("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "0"), "--epochs must be at least 1, got 0"),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "ten"),
        "argument --epochs: invalid int value: 'ten'",
    ),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "3", "--repeats", "0"),
        "--repeats must be at least 1, got 0",
    ),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "3", "--repeats", "-2"),
        "--repeats must be at least 1, got -2",
    ),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "3", "--recipe", "nope"),
        "unknown recipe 'nope'; known: chen-denoise, ",
    ),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "3", "--recipe", "bad.toml"),
        "malformed recipe",
    ),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "3", "--recipe", "yu-sines-small"),
        "recipe 'yu-sines-small' is for task sines; study 'digits-denoise-hourglass-conventional' is on digits-denoise",
    ),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "3", "--device", "tpu9"),
        "unknown device 'tpu9'",
    ),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "3", "--data-dir", "/no/such/dir"),
        "data directory '/no/such/dir' does not exist",
    ),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "3", "--artifacts", "ftp://host/w"),
        "--artifacts 'ftp://host/w': unknown scheme 'ftp'",
    ),
    (
        ("train", "digits-denoise-hourglass-conventional", "0", "--epochs", "3", "--artifacts", "bad.toml/w"),
        "cannot make the artifact folder",
    ),
]
# fmt: on


@pytest.mark.parametrize("args,match", BAD_INPUT)
def test_bad_input_one_line_exit_2_database_unchanged(cli, study_db, tmp_path, args, match):
    (tmp_path / "bad.toml").write_text("[hourglass\n")
    (tmp_path / "norun.toml").write_text('description = "no run table"\n')
    (tmp_path / "badema.toml").write_text('description = "d"\n[run]\nspace = "lmlp"\nbudget = "1M"\nema = "high"\n')
    before = db_dump(study_db)
    code, out, err = cli(*args)
    assert code == 2
    assert err.startswith("error: ") and match in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert db_dump(study_db) == before


def test_params_matches_paper_formula(cli):
    code, out, _ = cli(
        "params", "--space", "hourglass", "--task", "mnist-denoise", "d_z=1150", "d_h=115", "L=10", "--json"
    )
    info = json.loads(out)
    assert code == 0 and info["params"] == 784 * 1150 + 2 * 10 * 1150 * 115 + 1150 * 784 and info["shape_ok"]
    code, out, _ = cli(
        "params", "--space", "conventional", "--task", "mnist-sr", "d_z=256", "d_h=1024", "L=2", "fixed_w_in=true"
    )
    assert code == 0 and out.split()[0] == str(2 * 2 * 256 * 1024 + 256 * 784)


def test_spaces_shows_one_familys_default_space(cli):
    code, out, _ = cli("spaces", "conventional", "--task", "digits-denoise")
    assert code == 0
    assert "d_z            int 64..367, log" in out  # the paper's [784, 4500] scaled by 64/784, from d_x (Table 1)
    assert "shape: d_h > d_z" in out and "smallest model: 16.5K parameters" in out


def test_spaces_and_tasks_list(cli):
    code, out, _ = cli("spaces")
    names = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and {"hourglass", "conventional"} <= set(names)
    code, out, _ = cli("tasks")
    names = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and {
        "mnist-denoise",
        "mnist-sr",
        "mnist-genclass",
        "digits-denoise",
        "digits-sr",
        "digits-genclass",
        "imagenet32-denoise",
        "imagenet32-sr",
    } <= set(names)


def test_grid_sampler_rejects_over_budget_points(cli, tmp_path):
    (tmp_path / "grid.toml").write_text(
        "[hourglass]\nd_z = {low = 65, high = 300, grid = [100, 300]}\nd_h = [8, 64]\nL = [1, 4]\nlr = [0.005]\n"
    )
    code, _, err = cli(
        "run",
        "--space",
        "hourglass",
        "--task",
        "digits-denoise",
        "--budget",
        "60K",
        "--sampler",
        "grid",
        "--space-file",
        "grid.toml",
        "--trials",
        "50",
        "--epochs",
        "1",
        "--no-report",
        "--study",
        "g",
    )
    assert code == 0, err
    df = load_trials("g", "sqlite:///search.db")
    trained = df[df.status == "complete"]
    assert (trained.params <= 60_000).all() and len(trained) + (df.status == "rejected").sum() == 8
    assert (df[df.status == "rejected"].params > 60_000).all()
    assert df[df.status == "rejected"].note.str.contains("over budget").all()


def test_grid_with_two_families_labels_each_config_with_its_family(cli, tmp_path):
    (tmp_path / "g2.toml").write_text(
        "[hourglass]\nd_z = [100]\nd_h = [8]\nL = [1]\nlr = [0.005]\n"
        "[conventional]\nd_z = [16]\nd_h = [64]\nL = [1]\nlr = [0.005]\n"
    )
    code, _, err = cli(
        "run",
        "--space",
        "hourglass,conventional",
        "--task",
        "digits-denoise",
        "--budget",
        "60K",
        "--sampler",
        "grid",
        "--space-file",
        "g2.toml",
        "--trials",
        "2",
        "--epochs",
        "1",
        "--no-report",
        "--study",
        "g2",
        "--seed-checks",
        "0",  # a check fits the checks' share or not by the trials' timings: the rows counted below
    )
    assert code == 0, err
    df = load_trials("g2", "sqlite:///search.db")
    assert sorted(zip(df.family, df.d_z)) == [("conventional", 16), ("hourglass", 100)]
