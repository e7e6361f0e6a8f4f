"""BudgetDAG: adaptive sensor acquisition under a budget (Graph-Reduce on a DAG).

The package's root holds what most code needs: the estimators, the sensor
spec and DAG, saving and loading a policy, the trade-off curve and the budget
search, and the data types. The rest is grouped in documented subpackages:
``budgetdag_core.plotting`` (figures), ``budgetdag_core.tradeoff`` (baselines,
bounds and the cascade), ``budgetdag_core.estimates`` (fit time),
``budgetdag_core.datasets`` (demos), ``budgetdag_core.bank`` (classifier
banks), ``budgetdag_core.reductions`` (node learners),
``budgetdag_core.explain`` and ``budgetdag_core.teaching``.

Names the root exported before the subpackages were documented still import
from it, with a ``DeprecationWarning`` that names their home (``_MOVED``).
``dir(budgetdag_core)`` leaves them out: tools that list a module and read
every name (pytest's collection, completion in a shell) would warn for each.
"""

# Private aliases: dir(budgetdag_core) lists the API, not these helpers.
import importlib as _importlib
import warnings as _warnings

from . import (
    _compiled,
    bank,
    datasets,
    estimates,
    explain,
    plotting,
    reductions,
    teaching,
    tradeoff,
)
from ._compiled import kernels_ready, warm_up
from ._progress import Progress
from ._version import __version__
from .dag import SensorDAG
from .datasets import Dataset, load_demo, toy_dataset
from .estimator import (
    BudgetDAGClassifier,
    BudgetDAGRegressor,
    LossTablePolicy,
    NothingBoughtWarning,
    PolicySession,
)
from .explain import PathResult, path_of
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
from .sensors import SensorSpec
from .strategies import SubsetSelection, select_subsets
from .tables import Table, read_table
from .tradeoff import BudgetReport, TradeoffResult, fit_for_budget, tradeoff_curve

__all__ = [
    "BudgetDAGClassifier",
    "BudgetDAGRegressor",
    "BudgetReport",
    "Dataset",
    "LossTablePolicy",
    "NothingBoughtWarning",
    "PathResult",
    "PolicySession",
    "PolicyVersionWarning",
    "Progress",
    "SensorDAG",
    "SensorSpec",
    "SubsetSelection",
    "Table",
    "TradeoffResult",
    "__version__",
    "dumps_policy",
    "dumps_policy_skops",
    "fit_for_budget",
    "graph_reduce",
    "kernels_ready",
    "learn_policies_from_losses",
    "load_demo",
    "load_policy",
    "load_policy_skops",
    "loads_policy",
    "loads_policy_skops",
    "path_of",
    "read_table",
    "save_policy",
    "save_policy_skops",
    "select_subsets",
    "toy_dataset",
    "tradeoff_curve",
    "warm_up",
    # The documented subpackages.
    "bank",
    "datasets",
    "estimates",
    "explain",
    "plotting",
    "reductions",
    "teaching",
    "tradeoff",
]

#: The names the root exported before they moved to a subpackage (0.1.0), by
#: their home. They still import from the root, with a DeprecationWarning.
_MOVED_TO = {
    "budgetdag_core.bank": (
        "BANK_KINDS",
        "ClassifierBank",
        "MaskedBank",
        "RegressorBank",
        "make_bank",
    ),
    "budgetdag_core.datasets": ("DEMOS", "DEMO_HINTS"),
    "budgetdag_core.estimates": (
        "FitProbe",
        "estimate_fit_seconds",
        "estimate_fit_seconds_for",
        "probe_fit",
    ),
    "budgetdag_core.explain": (
        "action_names",
        "node_details",
        "state_label",
        "subsets_in",
    ),
    "budgetdag_core.plotting": (
        "acquisition_grid_figure",
        "acquisition_heatmap_figure",
        "acquisition_paths_figure",
        "acquisition_steps_figure",
        "clicked_states",
        "dag_figure",
        "decision_regions_figure",
        "tradeoff_figure",
    ),
    "budgetdag_core.reductions": ("CostRegression", "FilterTree"),
    "budgetdag_core.teaching": (
        "ReduceStep",
        "cost_tables",
        "graph_reduce_steps",
        "pending_states",
    ),
    "budgetdag_core.tradeoff": (
        "ConfidenceCascade",
        "DominanceSummary",
        "baseline_points",
        "cascade_points",
        "dominance_summary",
        "fit_cascade",
        "lower_convex_hull",
        "oracle_frontier",
    ),
}
#: Moved name -> the module that holds it now.
_MOVED = {name: home for home, names in _MOVED_TO.items() for name in names}


def __getattr__(name: str) -> object:
    """A moved name, from its new home, with a ``DeprecationWarning``.

    Only names missing from the module's namespace get here (PEP 562), so the
    names the root holds cost nothing.
    """
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _warnings.warn(
        f"budgetdag_core.{name} moved to {home}: import it from there "
        f"(from {home} import {name}).",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(_importlib.import_module(home), name)


# After an install, the compiled kernels start compiling in a child process
# now, while the importer loads its data (see budgetdag_core._compiled).
_compiled.warm_up_on_import()
