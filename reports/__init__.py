"""Reports of studies: front and hypervolume data (`fronts`, on `core.pareto`), tables
(`tables`, and the verdicts' `verdict_tables`: the statistics behind them are the
`verdicts` package's), plotly figures drawn from the data (`figures`), display text
(`formatting`), static HTML pages (`html`, `site`, `write_site`) and the live server
(`server`)."""

from core.pareto import hypervolume_2d, pareto_mask
from reports.write_site import write_site

__all__ = ["write_site", "pareto_mask", "hypervolume_2d"]
