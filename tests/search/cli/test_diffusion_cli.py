"""The diffusion families through the `search` command (issue 6's done-when, on digits):
three families in one study, three fronts, a sample grid per Pareto-optimal model."""

import re

from reports.fronts import front_data
from reports.site import study_filename
from storage import Store, load_trials

FAMILIES = ["lmlp", "uvit", "mixer-block"]
SPACE_FILE = """
[lmlp]
patch = [2]
depth = [1]
D = [64]
mlp_ratio = [2]
[uvit]
patch = [4]
depth = [3]
D = [64]
mlp_ratio = [2]
[mixer-block]
patch = [2]
depth = [3]
D = [64]
mlp_ratio = [2]
"""


def test_three_diffusion_families_three_fronts_and_sample_grids(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the classifier is cached here
    (tmp_path / "space.toml").write_text(SPACE_FILE)
    code, out, err = cli(
        "run",
        "--space",
        ",".join(FAMILIES),
        "--task",
        "digits-diffusion",
        "--budget",
        "200K",
        "--trials",
        "3",
        "--sampler",
        "grid",
        "--epochs",
        "2",
        "--lr",
        "3e-3",
        "--space-file",
        "space.toml",
        "--task-option",
        "samples=20",
        "--task-option",
        "sample_steps=5",
        "--task-option",
        "eval_levels=2",
        "--out",
        "site",
        "--pruner",
        "none",
        "--seed-checks",
        "0",  # three trials, whatever the timings (a check's share is measured in time)
    )  # every family's trial must finish: three fronts
    assert code == 0, err
    name = f"digits-diffusion-{'-'.join(FAMILIES)}"
    url = f"sqlite:///{tmp_path / 'search.db'}"
    df = load_trials(name, url)
    done = df[df.status == "complete"]
    assert len(done) == 3 and set(done.family) == set(FAMILIES)
    assert done.loss.between(0, 1.5).all() and done.sample_accuracy.between(0, 1).all()
    assert (done.frechet >= 0).all()
    data = front_data(df, "loss", "minimize")
    assert sorted(f.family for f in data.families) == sorted(FAMILIES)
    page = (tmp_path / "site" / study_filename(name)).read_text()
    assert len(re.findall(r'<img src="data:image/png;base64,', page)) == 3
    store = Store(url)
    assert store.get_study(name).settings["train"]["lr"] == 3e-3
    assert all(len(store.artifacts(name, int(n), "samples")) == 1 for n in done.number)
    assert "report:" in out
