"""A plugin's family and task on Ray workers (issue 60, item 5): the trial's spec carries
the plugin's path and each worker loads it before it builds the model; a family
registered in __main__, which no worker can import, is refused before any write."""

import pytest

from core.errors import UserError
from core.trials import TrainSettings
from search.api.progress import ConsoleProgress
from search.engine.specs import RunSpec
from search.engine.study import prepare, run_study
from search.plugins import load_plugins
from storage import Store
from tests.search.plugins.sources import GOOD, PRELUDE, write

pytestmark = pytest.mark.slow


def spec(executor, **kw):
    base = dict(
        spaces=("tiny-mlp",),
        task="tiny-data",
        budget=2_000,
        trials=4,
        executor=executor,
        study=executor,
        train=TrainSettings(epochs=2),
        pruner="none",
    )
    if executor == "ray":
        base["executor_options"] = {"num_cpus": 2, "max_concurrent": 2}
    return RunSpec(**{**base, **kw})


def test_ray_workers_load_the_plugin_and_train_its_trials(tmp_path):
    plugin = write(tmp_path, "ray_plugin", GOOD)
    load_plugins([str(plugin)])
    assert prepare(spec("ray")).plugins == (str(plugin.resolve()),)
    assert prepare(spec("local")).plugins == ()  # the local executor trains in this process
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    out = run_study(spec("ray"), store, ConsoleProgress(live=False))
    df = store.trials_frame("ray")
    assert out.finished == 4 and (df.status == "complete").all(), df[["status", "error"]]
    assert (df.params <= 2000).all() and df.accuracy.between(0, 1).all()


def test_a_family_registered_in_main_is_refused_for_ray(tmp_path):
    namespace = {"__name__": "__main__"}
    exec(compile(PRELUDE + GOOD.removeprefix(PRELUDE), "<notebook>", "exec"), namespace)
    with pytest.raises(UserError, match="cannot reach other processes"):
        prepare(spec("ray"))
    assert prepare(spec("local")).plugins == ()


def test_tune_workers_load_the_plugin_and_train_its_trials(tmp_path):
    import ray

    from search.tune import run_tune_study

    plugin = write(tmp_path, "tune_plugin", GOOD)
    load_plugins([str(plugin)])
    ray.init(
        num_cpus=2,
        num_gpus=0,
        include_dashboard=False,
        configure_logging=False,
        runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}},
    )
    try:
        store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
        out = run_tune_study(
            spec("tune", trials=3, executor_options={"max_concurrent": 2}), store, ConsoleProgress(live=False)
        )
    finally:
        ray.shutdown()
    df = store.trials_frame("tune")
    assert out.finished == 3 and (df.status == "complete").all(), df[["status", "error"]]
    assert (df.params <= 2000).all()


DRIVER = """
import ray
import search

import os
import sys

ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, configure_logging=False,
         runtime_env={"working_dir": ".", "env_vars": {"OMP_NUM_THREADS": "1"}})
search.load_plugins(["my_shapes"])  # this process knows the family and the task
os.replace("my_shapes.py", sys.argv[1])  # from now on only the shipped copy can reach a worker
study = search.run(space="tiny-mlp", budget="2K", trials=3, epochs=1, executor="ray", plugins=["my_shapes"],
                   storage="sqlite:///db.sqlite", report=False, max_concurrent=2, seed_checks=0)
df = study.trials()
print("complete:", int((df.status == "complete").sum()))
"""


def test_a_plugin_module_reaches_ray_workers_through_the_runtime_environments_working_dir(tmp_path):
    """The documented route for a cluster without the plugin installed: the user's own
    `ray.init(runtime_env={"working_dir": "."})` ships the folder, the plugin is named as a
    module (`plugins=["my_shapes"]`), and each worker imports it from its copy: the file is
    moved out of the folder after `ray.init`, so no worker finds it on this disk."""
    import os
    import subprocess
    import sys

    project = tmp_path / "project"
    project.mkdir()
    write(project, "my_shapes", GOOD)
    (project / "drive.py").write_text(DRIVER)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SEARCH_PLUGINS")}
    out = subprocess.run(
        [sys.executable, "drive.py", str(tmp_path / "moved.py")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "OMP_NUM_THREADS": "1"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "complete: 3" in out.stdout, out.stderr[-3000:]
