"""`search params` agrees with the built model for every family on every task it fits."""
import json

import pytest

from models import FAMILIES, get_family, trainable_params
from tasks import TASKS, get_task


@pytest.mark.parametrize("task", TASKS.names())
@pytest.mark.parametrize("family", FAMILIES.names())
def test_params_command_equals_built_model(cli, family, task):
    io = get_task(task).io()
    fam = get_family(family)
    if not fam.fits(io):
        pytest.skip(f"{family} does not fit {task}")
    cfg = {"d_z": io.d_in + 3, "d_h": 5, "L": 2}
    code, out, _ = cli("params", "--space", family, "--task", task, *(f"{k}={v}" for k, v in cfg.items()), "--json")
    assert code == 0
    assert json.loads(out)["params"] == trainable_params(fam.build(cfg, io, seed=0))
