"""Every family's key dims are stored as their own columns (a test over the registry)."""

import math

import pytest

from models import FAMILIES, get_family
from search.spaces import default_space, grid_configs
from storage import Store
from storage.convert import dims
from storage.schema import DIM_COLUMNS, FLOAT_DIM_COLUMNS, Trial
from tasks import get_task


@pytest.mark.parametrize("family", FAMILIES.names())
def test_key_dims_are_columns_of_the_trials_table(family):
    fam = get_family(family)
    missing = [k for k in fam.key_dims if k not in DIM_COLUMNS]
    assert missing == [], f"{family}: key dims without a column (add one with a migration): {missing}"
    assert all(k in Trial.__table__.columns for k in fam.key_dims)


@pytest.mark.parametrize("family", FAMILIES.names())
def test_a_stored_trial_of_each_family_has_its_key_dims_in_the_frame(tmp_path, family):
    fam = get_family(family)
    io = get_task(fam.default_task).io()
    config = next(grid_configs(default_space(family, io), seed=0))
    with Store(f"sqlite:///{tmp_path / 'db.sqlite'}") as store:
        store.create_or_load_study(
            "s", task=fam.default_task, families=[family], metric="m", direction="maximize", budget=10**9
        )
        store.add_trial("s", family=family, config=config, params=1, seeds=[0])
        row = store.trials_frame("s").iloc[0]
    for key in fam.key_dims:
        assert row[key] == config[key], (family, key)


def test_dims_keep_float_columns_and_integral_ints():
    got = dims({"mlp_ratio": 2.5, "d_z": 8.0, "d_h": 7.5, "L": True, "width": "12"})
    assert got["mlp_ratio"] == 2.5 and got["d_z"] == 8 and isinstance(got["d_z"], int)
    assert got["d_h"] is None and got["L"] is None and got["width"] is None
    assert dims({"mlp_ratio": math.inf})["mlp_ratio"] is None and set(dims({})) == set(DIM_COLUMNS)
    assert FLOAT_DIM_COLUMNS == ("mlp_ratio",)
