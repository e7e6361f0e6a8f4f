"""The strategies as objects: how a fit's states are built, one registry.

Two families, told apart by what comes first:

- every row at every state (:class:`EveryRowStrategy`, :data:`EVERY_ROW`):
  the paper's full DAG (``"full"``) and the unions of Alg. 2's subsets
  (``"subsets"``). The DAG is built first (:meth:`EveryRowStrategy.build`),
  then a bank is fitted per state of it;
- many sensors (:class:`Strategy`, :data:`REGISTRY`): a DAG of one-sensor
  additions grown on a fit's any-subset bank (:meth:`Strategy.grow`, a
  :class:`~budgetdag_core.strategies.SparseGrowth`), the bank first.

Each says how many states it can hold (``most_states``). The estimator's
plans ask the registries by name (:data:`ALL_STRATEGIES` lists every name);
adding a strategy is a class here (and its name in ``STRATEGIES``) and a
test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._bounded_io import short_repr
from ..dag import SensorDAG, build_dag
from ..sensors import SensorSpec
from ._choice import (
    MAX_ROUTES,
    POSTERIOR_DEPTH,
    STRATEGIES,
    chain_growth,
    chain_order,
    tail_length,
)
from ._growth import GrowthSettings, RowLoss, SparseGrowth, grow_sparse_dag
from ._routed import routed_growth
from ._subsets import SubsetSelection, select_subsets


@dataclass
class EveryRowInputs:
    """What an every-row strategy builds its DAG from: the spec, and for
    Alg. 2 the training rows, their target and :func:`select_subsets`'s
    settings (``selection``: its keyword arguments, ``n_subsets`` among
    them)."""

    spec: SensorSpec
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    selection: dict[str, Any] = field(default_factory=dict)


class EveryRowStrategy:
    """The protocol of a DAG every training row reaches at every state: a
    ``name``, :meth:`build` and :meth:`most_states`."""

    name: ClassVar[str]

    def build(self, given: EveryRowInputs) -> tuple[SensorDAG, SubsetSelection | None]:
        """The DAG, and the Alg. 2 subsets it is the unions of (None where
        none are selected)."""
        raise NotImplementedError

    def most_states(self, n_sensors: int, max_states: int) -> int:
        """The most states its DAG can have with ``n_sensors`` sensors."""
        raise NotImplementedError


class Full(EveryRowStrategy):
    """Every subset of the sensors (the paper's DAG)."""

    name = "full"

    def build(self, given: EveryRowInputs) -> tuple[SensorDAG, None]:
        return build_dag(given.spec, None), None

    def most_states(self, n_sensors: int, max_states: int) -> int:
        return 2**n_sensors


class Subsets(EveryRowStrategy):
    """The unions of the subsets Alg. 2 selects greedily
    (:func:`~budgetdag_core.strategies.select_subsets`)."""

    name = "subsets"

    def build(self, given: EveryRowInputs) -> tuple[SensorDAG, SubsetSelection]:
        selection = select_subsets(given.X, given.y, given.spec, **given.selection)
        return build_dag(given.spec, selection.units), selection

    def most_states(self, n_sensors: int, max_states: int) -> int:
        return 2**n_sensors  # unions of the subsets: at most every subset


@dataclass
class GrowthInputs:
    """What every strategy grows its DAG from: the bank's out-of-fold
    outputs on the training rows, the sensors and their (mean) costs.

    ``grown`` holds the growths of the strategies grown before in the same
    fit (the routed DAG joins its groups' orders to the chain's);
    ``required``: the fit builds this strategy only, so it must grow a DAG
    (a strategy among others may find nothing to grow and give None);
    ``rows``: the training rows (sorted) it is grown on, default every row
    (the choice among strategies grows each on its fit rows alone).
    """

    bank: Any
    X: np.ndarray
    y: np.ndarray
    sensor_names: Sequence[str]
    sensor_columns: Sequence[np.ndarray]
    costs: np.ndarray
    settings: GrowthSettings = field(default_factory=GrowthSettings)
    random_state: int | None = 0
    row_loss: RowLoss | None = None
    grown: dict[str, SparseGrowth] = field(default_factory=dict)
    required: bool = False
    progress: Any = None  # callable(done, total) of a growth that tells
    rows: np.ndarray | None = None


class Strategy:
    """The protocol: a ``name``, :meth:`grow` and :meth:`most_states`."""

    name: ClassVar[str]
    #: Whether its search ranks sensors by blocks of row losses
    #: (``strategies.block_losses``): a fit keeps them in a ``LossMemo``.
    searches_blocks: ClassVar[bool] = False

    def grow(self, given: GrowthInputs) -> SparseGrowth | None:
        """The DAG grown on ``given.bank``, or None where this strategy
        finds nothing to grow (only when not ``given.required``)."""
        raise NotImplementedError

    def most_states(self, n_sensors: int, max_states: int) -> int:
        """The most states its DAG can have with ``n_sensors`` sensors and
        the growth's ``max_states``."""
        raise NotImplementedError


class Grown(Strategy):
    """States grown where rows gain most (per-row branching):
    :func:`~budgetdag_core.strategies.grow_sparse_dag`."""

    name = "grown"

    def grow(self, given: GrowthInputs) -> SparseGrowth:
        return grow_sparse_dag(
            given.bank, given.X, given.sensor_names, given.sensor_columns,
            given.costs, given.settings, random_state=given.random_state,
            row_loss=given.row_loss, progress=given.progress, rows=given.rows,
        )  # fmt: skip

    def most_states(self, n_sensors: int, max_states: int) -> int:
        return max_states  # the growth stops there


class Chain(Strategy):
    """The confidence cascade's order as a chain:
    :func:`~budgetdag_core.strategies.chain_growth`."""

    name = "chain"
    searches_blocks = True

    def grow(self, given: GrowthInputs) -> SparseGrowth:
        return chain_growth(
            given.bank, given.X, given.y, given.sensor_names, given.costs,
            random_state=given.random_state, row_loss=given.row_loss,
            rows=given.rows,
        )  # fmt: skip

    def most_states(self, n_sensors: int, max_states: int) -> int:
        return n_sensors + 1  # every sensor in one order


class Routed(Strategy):
    """The chain plus a per-example route:
    :func:`~budgetdag_core.strategies.routed_growth` (its groups' orders
    join the chain's where the same fit grew one)."""

    name = "routed"
    searches_blocks = True

    def grow(self, given: GrowthInputs) -> SparseGrowth | None:
        chain = given.grown.get("chain")
        return routed_growth(
            given.bank, given.X, given.y, given.sensor_names,
            given.sensor_columns, given.costs, random_state=given.random_state,
            row_loss=given.row_loss,
            common_order=None if chain is None else chain_order(chain.dag),
            require=given.required, rows=given.rows,
        )  # fmt: skip

    def most_states(self, n_sensors: int, max_states: int) -> int:
        # The chain, the routing sensor and one order of the others per
        # route; the posterior tree: 2 + 4 + ... splits' states, then each
        # leaf's order of tail_length(M) sensors.
        leaves = 1 << POSTERIOR_DEPTH
        tree = 2 * (leaves - 1) + leaves * tail_length(n_sensors)
        return n_sensors + 2 + MAX_ROUTES * (n_sensors - 1) + tree


#: The strategies by name (the one place they are registered): every row at
#: every state, and grown on an any-subset bank.
EVERY_ROW: dict[str, EveryRowStrategy] = {s.name: s for s in (Full(), Subsets())}
REGISTRY: dict[str, Strategy] = {s.name: s for s in (Grown(), Chain(), Routed())}
assert tuple(REGISTRY) == STRATEGIES  # noqa: S101  (one list of names)
#: Every strategy's name (what a fitted model's ``strategy_`` can be).
ALL_STRATEGIES: tuple[str, ...] = (*EVERY_ROW, *REGISTRY)


def most_states(strategy: str, n_sensors: int, max_states: int) -> int:
    """The most states the DAG of ``strategy`` can have with ``n_sensors``
    sensors and the growth's ``max_states``: the chain holds every sensor in
    one order (``n_sensors + 1`` states), the routed DAG the chain, the
    routing sensor and one order of the others per route, the grown DAG
    stops at ``max_states``.

    Examples
    --------
    >>> most_states("chain", 64, 1000), most_states("grown", 64, 1000)
    (65, 1000)
    >>> most_states("routed", 64, 1000)
    1720
    """
    if strategy not in REGISTRY:
        raise ValueError(
            f"Unknown strategy {short_repr(strategy)}; choose from {STRATEGIES}."
        )
    return REGISTRY[strategy].most_states(n_sensors, max_states)


def grow_strategy(name: str, given: GrowthInputs) -> SparseGrowth | None:
    """The growth of the strategy ``name`` (see :data:`REGISTRY`); it joins
    ``given.grown``, where the strategies grown after it find it."""
    growth = REGISTRY[name].grow(given)
    if growth is not None:
        growth.strategy = name  # what a bank bound to it says it holds
        given.grown[name] = growth
    return growth
