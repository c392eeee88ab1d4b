"""The trials frame built column by column (issue 33): JSON decoded per column, metrics pivoted."""

from __future__ import annotations

import math

from storage.frames import FIXED_COLUMNS, build_frame, json_column


def test_json_column_decodes_text_in_one_call_and_keeps_decoded_values():
    assert json_column(['{"a": 1}', None, "[1, 2]"]) == [{"a": 1}, None, [1, 2]]
    assert json_column([{"a": 1}, '{"b": 2}', None]) == [{"a": 1}, {"b": 2}, None]  # a driver that decodes
    assert json_column([]) == []


def _columns(numbers):
    n = len(numbers)
    cols = {c: [None] * n for c in FIXED_COLUMNS}
    cols.update(
        number=list(numbers),
        study=["s"] * n,
        status=["complete"] * n,
        family=["f"] * n,
        params=[10] * n,
        config=['{"d_z": 3}'] * n,
        seeds=["[0]"] * n,
        n_runs=[1] * n,
    )
    return cols


def test_metrics_are_pivoted_by_number_in_order_of_first_appearance():
    rows = [(0, "psnr", 20.0, None), (0, "ssim", 0.9, 0.1), (2, "lpips", 0.3, None), (2, "psnr", None, None)]
    df = build_frame(_columns([0, 1, 2]), rows)
    assert [c for c in df.columns if c not in FIXED_COLUMNS] == [
        "psnr",
        "psnr_std",
        "ssim",
        "ssim_std",
        "lpips",
        "lpips_std",
    ]
    assert df["psnr"].tolist()[0] == 20.0 and all(math.isnan(v) for v in df["psnr"].tolist()[1:])
    assert df["ssim_std"].tolist()[0] == 0.1 and math.isnan(df["ssim_std"].tolist()[2])
    assert df["lpips"].tolist()[2] == 0.3 and df["config"].tolist()[0] == {"d_z": 3}


def test_an_empty_frame_has_the_fixed_columns():
    df = build_frame(_columns([]), [])
    assert list(df.columns) == list(FIXED_COLUMNS) and len(df) == 0


def test_the_collector_is_paused_while_a_frame_is_built_and_back_on_after():
    import gc

    from storage.frames import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # a read inside another (or in another thread) leaves it to the outer one
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    try:
        with gc_paused():
            raise KeyError("boom")
    except KeyError:
        pass
    assert gc.isenabled()


def test_nullable_int_columns_keep_missing_values_and_reject_fractions():
    import pandas as pd
    import pytest

    from storage.frames import _nullable_ints

    pd.testing.assert_series_equal(_nullable_ints([1, None, 3]), pd.Series([1, None, 3], dtype="Int64"))
    pd.testing.assert_series_equal(_nullable_ints([None, None]), pd.Series([None, None], dtype="Int64"))
    pd.testing.assert_series_equal(_nullable_ints([]), pd.Series([], dtype="Int64"))
    with pytest.raises((TypeError, ValueError)):
        _nullable_ints([1.5, 2])


def test_config_columns_add_each_key_the_key_columns_do_not_hold():
    import pandas as pd

    from storage.frames import with_config_columns

    df = pd.DataFrame(
        {
            "number": [0, 1],
            "status": ["complete", "failed"],
            "config": [{"d_z": 8, "lr": 0.1, "status": "x"}, {"blocks": 2}],
            "d_z": [8, None],
            "seeds": [[0], [0]],
        }
    )
    out = with_config_columns(df)
    assert list(out.columns) == ["number", "status", "config", "d_z", "lr", "config.status", "blocks", "seeds"]
    assert out["lr"].tolist() == [0.1, None] and out["blocks"].tolist() == [None, 2]
    assert with_config_columns(df.iloc[:0]).columns.tolist() == df.columns.tolist()
