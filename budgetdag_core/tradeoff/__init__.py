"""The cost-error trade-off and what it is compared with.

One bank, Graph-Reduce per cost scale (:func:`~budgetdag_core.tradeoff_curve`),
budget targeting (:func:`~budgetdag_core.fit_for_budget`), the non-adaptive
baselines and bounds, the confidence cascade, and an estimate of the fit time
(public in :mod:`budgetdag_core.estimates`). The curve and the budget's
functions are also exported from ``budgetdag_core`` itself.
"""

from ._baselines import (
    FRAME_COLUMNS,
    baseline_points,
    lower_convex_hull,
    oracle_frontier,
    train_chosen_hull,
)
from ._budget import BudgetReport, fit_for_budget
from ._cascade import ConfidenceCascade, cascade_points, fit_cascade
from ._curve import (
    DominanceSummary,
    TradeoffResult,
    dominance_summary,
    initial_scales,
    refine_scales,
    tradeoff_curve,
)
from ._fit_time import (
    AUTO_SCALE_TRIALS,
    FitProbe,
    dag_states_at_most,
    estimate_fit_seconds,
    estimate_fit_seconds_for,
    estimate_policy_seconds,
    probe_fit,
    selected_dag_states,
    strategy_states,
)
from ._regression import (
    RegressionView,
    SpreadCascade,
    fit_spread_cascade,
    loss_frontier,
    regression_baseline_frame,
    regression_cascade_points,
    regression_view,
)

__all__ = [
    "BudgetReport",
    "ConfidenceCascade",
    "DominanceSummary",
    "TradeoffResult",
    "baseline_points",
    "cascade_points",
    "dominance_summary",
    "fit_cascade",
    "fit_for_budget",
    "lower_convex_hull",
    "oracle_frontier",
    "tradeoff_curve",
]
