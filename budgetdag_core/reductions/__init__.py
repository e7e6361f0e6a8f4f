"""Cost-sensitive learners: reductions from a cost matrix to base learners."""

from ._base import CostSensitiveLearner, PolicyFeatures, effective_degree
from ._cost_regression import CostRegression
from ._filter_tree import FilterTree

__all__ = [
    "CostRegression",
    "FilterTree",
]
