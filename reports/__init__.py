"""Reports of studies: Pareto math (`pareto`), plotly figures (`plots`), static HTML (`site`)."""
from reports.pareto import hypervolume_2d, pareto_mask
from reports.site import write_site

__all__ = ["write_site", "pareto_mask", "hypervolume_2d"]
