"""Cost-sensitive learners: reductions from a cost matrix to base learners.

Graph-Reduce fits one at every DAG state (the estimators' ``policy_learner``):
:class:`FilterTree` (the default) or :class:`CostRegression`.
"""

from ._base import CostSensitiveLearner, PolicyFeatures, effective_degree
from ._cost_regression import CostRegression
from ._filter_tree import FilterTree

__all__ = [
    "CostRegression",
    "FilterTree",
]
