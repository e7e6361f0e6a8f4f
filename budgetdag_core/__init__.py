"""BudgetDAG: adaptive sensor acquisition under a budget (Graph-Reduce on a DAG)."""

from ._version import __version__
from .bank import ClassifierBank
from .baselines import baseline_points, lower_convex_hull, oracle_frontier
from .budget import BudgetReport, fit_for_budget
from .dag import SensorDAG
from .datasets import DEMOS, load_demo
from .estimator import BudgetDAGClassifier
from .graph_reduce import graph_reduce, learn_policies_from_losses
from .persist import (
    PolicyVersionWarning,
    dumps_policy,
    load_policy,
    loads_policy,
    save_policy,
)
from .reductions import CostRegression, FilterTree
from .sensors import SensorSpec
from .session import PolicySession
from .tradeoff import (
    DominanceSummary,
    TradeoffResult,
    dominance_summary,
    tradeoff_curve,
)

__all__ = [
    "DEMOS",
    "BudgetDAGClassifier",
    "BudgetReport",
    "ClassifierBank",
    "CostRegression",
    "DominanceSummary",
    "FilterTree",
    "PolicySession",
    "PolicyVersionWarning",
    "SensorDAG",
    "SensorSpec",
    "TradeoffResult",
    "__version__",
    "baseline_points",
    "dominance_summary",
    "dumps_policy",
    "fit_for_budget",
    "graph_reduce",
    "learn_policies_from_losses",
    "load_demo",
    "load_policy",
    "loads_policy",
    "lower_convex_hull",
    "oracle_frontier",
    "save_policy",
    "tradeoff_curve",
]
