"""DAG strategies: how a fit's states are built on its bank, and the choice
among them (between the estimator and the bank: no bank module imports them).

- Alg. 2's subsets (``_subsets``: :func:`select_subsets`), whose unions make
  the DAG of a fit with ``n_subsets`` (every row reaches every state);
- many sensors (``_growth``, ``_routed``, ``_choice``): DAGs of one-sensor
  additions grown on an any-subset bank, each a :class:`SparseGrowth` (the
  grown DAG ``"grown"``, the ``"chain"``, the ``"routed"`` DAG), and the
  choice among them on held-out rows (:func:`choose_strategy`,
  :class:`StrategyChoice`) between the candidates a bank fit built
  (:class:`StrategyBanks`: one bank bound to each strategy's DAG).

Graph-Reduce (:func:`~budgetdag_core.graph_reduce.graph_reduce`) reduces
every one of them alike.
"""

from ._candidates import StrategyBanks, bound_strategy, strategy_key, strategy_name
from ._choice import (
    CHAIN_SCORE_ROWS,
    GROWN_MAX_ROWS,
    MAX_ROUTES,
    POSTERIOR_DEPTH,
    SIMPLEST_FIRST,
    STRATEGIES,
    VALIDATION_FOLDS,
    VALIDATION_SHARE,
    StrategyChoice,
    chain_growth,
    chain_order,
    choose_strategy,
    cross_entropy,
    greedy_order,
    keep_within_one_se,
    restricted,
    strategies_to_build,
    tail_length,
    validation_folds,
)
from ._growth import (
    MAX_SPARSE_STATES,
    GrowthSettings,
    RowLoss,
    RowTable,
    SparseGrowth,
    SparseRollout,
    SparseSensorDAG,
    beam_states,
    expected_loss,
    grow_sparse_dag,
    nearest_rows,
    neighbour_pick_gain,
    oof_tables,
    pick_gains,
    state_spreads,
)
from ._kinds import (
    REGISTRY,
    Chain,
    Grown,
    GrowthInputs,
    Routed,
    Strategy,
    grow_strategy,
    most_states,
)
from ._routed import (
    ROUTE_MIN_SE,
    ROUTE_SCORE_ROWS,
    ROUTE_TAIL_MIN_ROWS,
    class_halves,
    held_out_pick_gain,
    route_groupings,
    route_groups,
    routed_growth,
    routing_scores,
    tree_stands_clear,
)
from ._subsets import (
    EstimatorReward,
    RidgeReward,
    SubsetSelection,
    select_subsets,
    stratified_subsample,
)

__all__ = [
    "REGISTRY",
    "Chain",
    "Grown",
    "GrowthInputs",
    "Routed",
    "Strategy",
    "grow_strategy",
    "CHAIN_SCORE_ROWS",
    "GROWN_MAX_ROWS",
    "MAX_ROUTES",
    "MAX_SPARSE_STATES",
    "POSTERIOR_DEPTH",
    "ROUTE_MIN_SE",
    "ROUTE_SCORE_ROWS",
    "ROUTE_TAIL_MIN_ROWS",
    "SIMPLEST_FIRST",
    "STRATEGIES",
    "VALIDATION_FOLDS",
    "VALIDATION_SHARE",
    "EstimatorReward",
    "GrowthSettings",
    "RidgeReward",
    "RowLoss",
    "RowTable",
    "SparseGrowth",
    "SparseRollout",
    "SparseSensorDAG",
    "StrategyChoice",
    "SubsetSelection",
    "beam_states",
    "chain_growth",
    "chain_order",
    "choose_strategy",
    "class_halves",
    "cross_entropy",
    "expected_loss",
    "greedy_order",
    "grow_sparse_dag",
    "held_out_pick_gain",
    "keep_within_one_se",
    "most_states",
    "nearest_rows",
    "neighbour_pick_gain",
    "oof_tables",
    "pick_gains",
    "restricted",
    "route_groupings",
    "route_groups",
    "routed_growth",
    "routing_scores",
    "select_subsets",
    "state_spreads",
    "strategies_to_build",
    "strategy_key",
    "strategy_name",
    "bound_strategy",
    "StrategyBanks",
    "stratified_subsample",
    "tail_length",
    "tree_stands_clear",
    "validation_folds",
]
