"""Small files with one job each: no product module over MAX_LINES lines (a module that
grows past it is split by job, as the verdicts' compare.py was into compare, combined,
front_volumes and verdict_tables)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "models", "tasks", "storage", "verdicts", "reports", "search")
MAX_LINES = 450


def test_no_product_module_is_over_the_cap():
    sizes = {
        str(p.relative_to(REPO)): len(p.read_text().splitlines())
        for package in PACKAGES
        for p in (REPO / package).rglob("*.py")
    }
    assert {f: n for f, n in sizes.items() if n > MAX_LINES} == {}
