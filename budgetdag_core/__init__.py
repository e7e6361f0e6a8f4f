"""BudgetDAG: adaptive sensor acquisition under a budget (Graph-Reduce on a DAG)."""

from ._version import __version__
from .bank import ClassifierBank, RegressorBank
from .dag import SensorDAG
from .datasets import DEMOS, load_demo, toy_dataset
from .estimator import BudgetDAGClassifier
from .explain import PathResult, node_details, path_of
from .graph_reduce import graph_reduce, learn_policies_from_losses
from .persist import (
    PolicyVersionWarning,
    dumps_policy,
    load_policy,
    loads_policy,
    save_policy,
)
from .plotting import (
    clicked_states,
    dag_figure,
    decision_regions_figure,
    tradeoff_figure,
)
from .policy import LossTablePolicy
from .reductions import CostRegression, FilterTree
from .regressor import BudgetDAGRegressor
from .sensors import SensorSpec
from .session import PolicySession
from .subsets import SubsetSelection, select_subsets
from .teaching import ReduceStep, cost_tables, graph_reduce_steps

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
    "PathResult",
    "PolicySession",
    "PolicyVersionWarning",
    "ReduceStep",
    "SensorDAG",
    "SensorSpec",
    "SubsetSelection",
    "__version__",
    "clicked_states",
    "cost_tables",
    "dag_figure",
    "decision_regions_figure",
    "dumps_policy",
    "graph_reduce",
    "graph_reduce_steps",
    "learn_policies_from_losses",
    "load_demo",
    "load_policy",
    "loads_policy",
    "node_details",
    "path_of",
    "save_policy",
    "select_subsets",
    "toy_dataset",
    "tradeoff_figure",
]
