"""BudgetDAG: adaptive sensor acquisition under a budget (Graph-Reduce on a DAG)."""

from . import _compiled
from ._compiled import kernels_ready, warm_up
from ._progress import Progress
from ._version import __version__
from .bank import BANK_KINDS, ClassifierBank, MaskedBank, RegressorBank, make_bank
from .dag import SensorDAG
from .datasets import DEMO_HINTS, DEMOS, Dataset, load_demo, toy_dataset
from .estimator import (
    BudgetDAGClassifier,
    BudgetDAGRegressor,
    LossTablePolicy,
    PolicySession,
)
from .explain import (
    PathResult,
    action_names,
    node_details,
    path_of,
    state_label,
    subsets_in,
)
from .graph_reduce import graph_reduce, learn_policies_from_losses
from .persist import (
    PolicyVersionWarning,
    dumps_policy,
    dumps_policy_skops,
    load_policy,
    load_policy_skops,
    loads_policy,
    loads_policy_skops,
    save_policy,
    save_policy_skops,
)
from .plotting import (
    acquisition_grid_figure,
    acquisition_heatmap_figure,
    acquisition_paths_figure,
    acquisition_steps_figure,
    clicked_states,
    dag_figure,
    decision_regions_figure,
    tradeoff_figure,
)
from .reductions import CostRegression, FilterTree
from .sensors import SensorSpec
from .subsets import SubsetSelection, select_subsets
from .tables import Table, read_table
from .teaching import ReduceStep, cost_tables, graph_reduce_steps, pending_states
from .tradeoff import (
    BudgetReport,
    ConfidenceCascade,
    DominanceSummary,
    FitProbe,
    TradeoffResult,
    baseline_points,
    cascade_points,
    dominance_summary,
    estimate_fit_seconds,
    estimate_fit_seconds_for,
    fit_cascade,
    fit_for_budget,
    lower_convex_hull,
    oracle_frontier,
    probe_fit,
    tradeoff_curve,
)

__all__ = [
    "BANK_KINDS",
    "BudgetDAGClassifier",
    "BudgetDAGRegressor",
    "BudgetReport",
    "ClassifierBank",
    "ConfidenceCascade",
    "MaskedBank",
    "CostRegression",
    "DEMOS",
    "DEMO_HINTS",
    "Dataset",
    "DominanceSummary",
    "FilterTree",
    "LossTablePolicy",
    "PathResult",
    "PolicySession",
    "PolicyVersionWarning",
    "Progress",
    "ReduceStep",
    "RegressorBank",
    "SensorDAG",
    "SensorSpec",
    "SubsetSelection",
    "Table",
    "TradeoffResult",
    "__version__",
    "acquisition_grid_figure",
    "acquisition_heatmap_figure",
    "acquisition_paths_figure",
    "acquisition_steps_figure",
    "action_names",
    "baseline_points",
    "cascade_points",
    "clicked_states",
    "cost_tables",
    "dag_figure",
    "decision_regions_figure",
    "dominance_summary",
    "dumps_policy",
    "dumps_policy_skops",
    "fit_cascade",
    "fit_for_budget",
    "graph_reduce",
    "graph_reduce_steps",
    "kernels_ready",
    "learn_policies_from_losses",
    "load_demo",
    "load_policy",
    "load_policy_skops",
    "loads_policy",
    "loads_policy_skops",
    "lower_convex_hull",
    "make_bank",
    "estimate_fit_seconds",
    "estimate_fit_seconds_for",
    "probe_fit",
    "read_table",
    "FitProbe",
    "node_details",
    "oracle_frontier",
    "path_of",
    "pending_states",
    "save_policy",
    "save_policy_skops",
    "select_subsets",
    "state_label",
    "subsets_in",
    "toy_dataset",
    "tradeoff_curve",
    "tradeoff_figure",
    "warm_up",
]

# After an install, the compiled kernels start compiling in a child process
# now, while the importer loads its data (see budgetdag_core._compiled).
_compiled.warm_up_on_import()
