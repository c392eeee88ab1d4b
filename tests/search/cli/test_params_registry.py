"""`search params` agrees with the family's count (and so with the built model) for
every family on every task it fits."""

import json

import pytest

from models import get_family
from tasks import get_task
from tests.models.test_registry import PAIRS, drawn_configs


@pytest.mark.parametrize("family,task", PAIRS)
def test_params_command_equals_family_count(cli, family, task):
    io = get_task(task).io()
    cfg = drawn_configs(family, io, 1, seed=1)[0]
    args = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in cfg.items()]
    code, out, _ = cli("params", "--space", family, "--task", task, *args, "--json")
    assert code == 0
    assert json.loads(out)["params"] == get_family(family).count_params(cfg, io)
