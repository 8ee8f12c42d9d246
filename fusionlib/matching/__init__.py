"""Statistical matching of two sources and what they identify (shared engine).

- :class:`HotDeckMatcher`: hot-deck matching under the conditional independence assumption
  (random within donation classes, nearest-neighbour distance, random among the k nearest),
  with the package's ``fit(sources)`` / ``sample(n, seed)`` surface.
- Bounds: Fréchet bounds of cross-source cells, correlation bounds (scalar, block and one
  missing entry of a correlation matrix).
"""

from fusionlib.matching.bounds import (
    completion_bounds,
    correlation_bounds,
    cross_correlation_bounds,
    frechet_bounds_from_sources,
    frechet_cell_bounds,
    is_psd,
)
from fusionlib.matching.hotdeck import METHODS, HotDeckMatcher

__all__ = ["HotDeckMatcher", "METHODS", "completion_bounds", "correlation_bounds",
           "cross_correlation_bounds", "frechet_bounds_from_sources", "frechet_cell_bounds",
           "is_psd"]
