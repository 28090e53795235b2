"""The smoothed terms of a dual with group caps, for the chunked fit (msvm/_dask_passes.py).

The chunked fit of WeightedRobustMSVM and AdaptiveWeightedSVM smooths each capped group by
the projection onto its capped box: :class:`msvm._capped_terms.CappedTerms`, shared with the
in-memory smoothed-primal start (msvm/_primal.py), where it lives with its Design note.
"""

from ._capped_terms import CappedTerms, curvature_sum

__all__ = ["CappedTerms", "curvature_sum"]
