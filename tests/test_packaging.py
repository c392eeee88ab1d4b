"""What the wheel ships: the product's packages only, test tools as an extra, a true
Python floor (space files are read with tomllib, new in 3.11)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PRODUCT = {"core", "models", "tasks", "storage", "verdicts", "reports", "search"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = out.glob("*.whl")
    return zipfile.ZipFile(path)


@pytest.mark.slow
def test_the_wheel_ships_the_product_packages_and_no_tests(wheel):
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == PRODUCT
    assert "storage/migrations/versions/0005_mlp_ratio_column.py" in wheel.namelist()
    assert "storage/alembic.ini" in wheel.namelist()


@pytest.mark.slow
def test_pytest_is_an_extra_and_the_python_floor_is_true(wheel):
    (meta,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    lines = wheel.read(meta).decode().splitlines()
    assert "Requires-Python: >=3.11" in lines
    requires = [line for line in lines if line.startswith("Requires-Dist: pytest")]
    assert requires and all('extra == "test"' in line for line in requires)
    import tomllib  # noqa: F401  (the reason for the floor)
