"""BudgetDAG: adaptive sensor acquisition under a budget (Graph-Reduce on a DAG)."""

from ._version import __version__
from .bank import BANK_KINDS, ClassifierBank, MaskedBank, make_bank
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

__all__ = [
    "BANK_KINDS",
    "DEMOS",
    "BudgetDAGClassifier",
    "ClassifierBank",
    "MaskedBank",
    "CostRegression",
    "FilterTree",
    "PolicySession",
    "PolicyVersionWarning",
    "SensorDAG",
    "SensorSpec",
    "__version__",
    "dumps_policy",
    "graph_reduce",
    "learn_policies_from_losses",
    "load_demo",
    "load_policy",
    "loads_policy",
    "make_bank",
    "save_policy",
]
