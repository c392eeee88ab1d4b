"""Reports of studies: Pareto math (`pareto`), front and hypervolume data (`fronts`), tables
(`tables`), plotly figures drawn from the data (`figures`), display text (`formatting`) and
static HTML pages (`html`, `site`)."""

from core.pareto import hypervolume_2d, pareto_mask
from reports.site import write_site

__all__ = ["write_site", "pareto_mask", "hypervolume_2d"]
