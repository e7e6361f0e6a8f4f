"""BudgetDAG: adaptive sensor acquisition under a budget (Graph-Reduce on a DAG)."""

from ._version import __version__
from .bank import ClassifierBank, RegressorBank
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
from .policy import LossTablePolicy
from .reductions import CostRegression, FilterTree
from .regressor import BudgetDAGRegressor
from .sensors import SensorSpec
from .session import PolicySession
from .subsets import SubsetSelection, select_subsets

__all__ = [
    "DEMOS",
    "BudgetDAGClassifier",
    "BudgetDAGRegressor",
    "ClassifierBank",
    "CostRegression",
    "FilterTree",
    "LossTablePolicy",
    "PolicySession",
    "PolicyVersionWarning",
    "RegressorBank",
    "SensorDAG",
    "SensorSpec",
    "SubsetSelection",
    "__version__",
    "dumps_policy",
    "graph_reduce",
    "learn_policies_from_losses",
    "load_demo",
    "load_policy",
    "loads_policy",
    "save_policy",
    "select_subsets",
]
