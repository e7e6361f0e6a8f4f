"""DAG strategies for many sensors, and the choice among them on validation rows.

With more sensors than a full DAG can hold, the states come from a *strategy*
run on the any-mask bank's out-of-fold probabilities, each yielding a sparse
DAG of one-sensor additions and the training rows that reach each state (a
:class:`~budgetdag_core.sparse_dag.SparseGrowth`); Graph-Reduce then learns
the policies on it as on any DAG:

- ``"grown"``: :func:`~budgetdag_core.sparse_dag.grow_sparse_dag`, states
  grown where rows gain most (per-row branching);
- ``"chain"``: :func:`chain_growth`, the confidence cascade's order as a chain
  (every row may stop after each sensor of one greedy order): few states, each
  with every row, so its policies are learned from all the data;
- ``"routed"``: :func:`routed_growth`, the chain plus a per-example route: a
  *routing* sensor whose value tells which sensor helps next (CUBE-NM's
  context, worthless alone), then one greedy order per group of its values.
  Graph-Reduce learns, per example and from its values, whether to buy the
  routing sensor and which order to follow; it exists only where some
  sensor's value measurably changes the best next sensor on held-out rows.

``dag="auto"`` does not trust any blindly: the bank is bound to every
strategy's DAG (sharing its fold models), and each fit, at its own cost scale,
learns each strategy's policies on part of the training rows, compares their
losses (stop loss + ``cost_scale`` x cost) on the others
(:func:`choose_strategy`) and keeps the simplest (chain, then routed, then
grown) whose loss is within one standard error of the paired per-row
difference from the least: a few hundred held-out rows cannot tell close
strategies apart, and the chain's policies, each learned from every row, are
the safer guess. On small tables the chain usually wins (the grown states
hold too few rows for their policies); where rows need different sensors (a
context that says where to look) the routed or grown DAG can.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.model_selection import StratifiedShuffleSplit

from .dag import bits_of
from .sparse_dag import (
    RowLoss,
    RowTable,
    SparseGrowth,
    SparseRollout,
    SparseSensorDAG,
    graph_reduce_sparse,
)

#: The strategies of a many-sensor fit (``dag="auto"`` chooses among them).
STRATEGIES = ("grown", "chain", "routed")
#: ``dag="auto"``'s order of preference: the first strategy whose held-out
#: loss is within one standard error of the best is kept.
SIMPLEST_FIRST = ("chain", "routed", "grown")
#: Training rows scored per candidate while the chain's order is chosen.
CHAIN_SCORE_ROWS = 2000
#: Most groups a routing sensor's values split the rows into (``"routed"``).
MAX_ROUTES = 8
#: Training rows that score the candidate routing sensors.
ROUTE_SCORE_ROWS = 600
#: Standard errors a routing score must exceed (see :func:`routed_growth`).
ROUTE_MIN_SE = 3.0
#: Share of the common pick's gain a routing score must exceed.
ROUTE_MIN_SHARE = 0.1
#: How many groups of a routing sensor's values are tried (each scored on
#: held-out rows: a few hundred rows support fewer, larger groups).
ROUTE_GROUP_COUNTS = (2, 3, 5, 8)
#: Share of the training rows held out to compare strategies.
VALIDATION_SHARE = 0.25


def _cross_entropy(proba: np.ndarray, y: np.ndarray) -> np.ndarray:
    picked = proba[np.arange(len(y)), y]
    return -np.log(np.clip(picked, 1e-12, None))


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
    570
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown strategy {strategy!r}; choose from {STRATEGIES}.")
    if strategy == "routed":
        return n_sensors + 2 + MAX_ROUTES * (n_sensors - 1)
    return n_sensors + 1 if strategy == "chain" else max_states


def chain_growth(
    bank: Any,
    X: np.ndarray,
    y: np.ndarray,
    sensor_names: Sequence[str],
    costs: np.ndarray,
    *,
    max_rows: int = CHAIN_SCORE_ROWS,
    random_state: int | None = 0,
    row_loss: RowLoss | None = None,
) -> SparseGrowth:
    """The chain DAG of one greedy acquisition order, every row at every state.

    The order is the confidence cascade's, on the any-mask bank: from the
    current prefix, the sensor whose addition lowers the out-of-fold
    cross-entropy of the (at most ``max_rows``, seeded) scored rows the most
    per unit of mean cost comes next (cross-entropy rather than 0/1 error:
    smooth on a few hundred rows).

    Parameters
    ----------
    bank : SparseMaskedBank
        With fitted fold models (``bank.oof_at``).
    X : ndarray (n_samples, n_columns)
    y : ndarray (n_samples,) of class indices
    sensor_names : sequence of str
    costs : ndarray (n_sensors,)
        Mean acquisition cost of each sensor.
    max_rows : int, default=2000
    random_state : int or None, default=0
    row_loss : callable(rows, values) -> ndarray, optional
        Each scored row's loss at the bank's out-of-fold outputs (a
        :data:`~budgetdag_core.sparse_dag.RowLoss`); default the
        cross-entropy of ``y`` (a regressor's: its squared or absolute error).

    Returns
    -------
    SparseGrowth
        States ``{}, {o1}, {o1, o2}, ...`` (each with one child), all rows
        flowing through every state.
    """
    n, M = len(X), len(sensor_names)
    costs = np.asarray(costs, dtype=float)
    rng = np.random.default_rng(random_state)
    rows = np.arange(n)
    scored = rows if n <= max_rows else np.sort(rng.choice(n, max_rows, replace=False))
    held = np.zeros(M, dtype=bool)
    if row_loss is None:

        def row_loss(rows: np.ndarray, proba: np.ndarray) -> np.ndarray:
            return _cross_entropy(proba, y[rows])

    current = row_loss(scored, np.tile(bank.prior_, (len(scored), 1))).mean()
    order = greedy_order(bank, X, scored, held, costs, row_loss, current)
    masks = [0]
    for j in order:
        masks.append(masks[-1] | 1 << j)
    children = [[(j, k + 1)] for k, j in enumerate(order)] + [[]]
    dag = SparseSensorDAG(sensor_names, masks, children)
    tables = []
    for k in range(len(masks)):
        table = RowTable(len(bank.prior_))
        if k == 0:
            table.add(rows, np.tile(bank.prior_, (n, 1)))
        else:
            mask = np.zeros((1, M), dtype=bool)
            mask[0, order[:k]] = True
            table.add(rows, bank.oof_at(X, rows, mask)[:, 0])
        tables.append(table)
    return SparseGrowth(dag, [rows] * len(masks), tables, bank, X)


def greedy_order(
    bank: Any,
    X: np.ndarray,
    scored: np.ndarray,
    held: np.ndarray,
    costs: np.ndarray,
    row_loss: RowLoss,
    current: float,
) -> list[int]:
    """The cascade's order of the sensors not in ``held`` (bool, n_sensors):
    from the held ones, the sensor whose addition lowers the mean
    ``row_loss`` of the ``scored`` rows the most per unit cost comes next;
    ``current`` is their mean loss at ``held``."""
    held = held.copy()
    order: list[int] = []
    while not held.all():
        cand = np.flatnonzero(~held)
        trial = np.repeat(held[None], len(cand), axis=0)
        trial[np.arange(len(cand)), cand] = True
        P = bank.oof_at(X, scored, trial)
        after = np.array([row_loss(scored, P[:, a]).mean() for a in range(len(cand))])
        best = int(np.argmax((current - after) / np.maximum(costs[cand], 1e-12)))
        order.append(int(cand[best]))
        held[cand[best]] = True
        current = after[best]
    return order


def route_groups(
    values: np.ndarray, max_groups: int, floor: int, random_state: int | None = 0
) -> np.ndarray:
    """Each row's group by its values of a routing sensor (n_rows, n_columns):
    one group per distinct value pattern when there are at most
    ``max_groups``; else, for one column, its quantile bins (at most
    ``max_groups``), and for several, ``max_groups`` k-means clusters of the
    standardised values. A missing value counts as a value below the others.
    Groups of fewer than ``floor`` rows are -1: their rows keep the common
    order.

    Examples
    --------
    >>> route_groups(np.array([[0.0], [1.0], [1.0], [2.0]]), 8, 2).tolist()
    [-1, 0, 0, -1]
    """
    values = np.asarray(values, dtype=float)
    finite = np.where(np.isfinite(values), values, np.nan)
    low = np.nan_to_num(
        np.nanmin(np.vstack([finite, np.zeros((1, values.shape[1]))]), axis=0)
    )
    filled = np.where(np.isnan(finite), low - 1.0, finite)
    patterns, groups = np.unique(filled, axis=0, return_inverse=True)
    groups = groups.ravel()
    if len(patterns) > max_groups and filled.shape[1] == 1:
        inner = np.linspace(0, 1, max_groups + 1)[1:-1]
        edges = np.unique(np.quantile(filled[:, 0], inner))
        groups = np.searchsorted(edges, filled[:, 0], side="right")
    elif len(patterns) > max_groups:
        spread = filled.std(axis=0)
        Z = (filled - filled.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
        groups = KMeans(max_groups, n_init=3, random_state=random_state).fit_predict(Z)
    counts = np.bincount(groups, minlength=1)
    small = counts[groups] < floor
    groups = np.where(small, -1, groups)
    # Number the kept groups 0, 1, ... in the order of their labels.
    kept = np.unique(groups[groups >= 0])
    renumber = np.full(int(groups.max(initial=0)) + 1, -1)
    renumber[kept] = np.arange(len(kept))
    return np.where(groups >= 0, renumber[np.maximum(groups, 0)], -1)


def routing_scores(
    bank: Any,
    X: np.ndarray,
    scored: np.ndarray,
    groupings: dict[int, list[np.ndarray]],
    costs: np.ndarray,
    row_loss: RowLoss,
    rng: np.random.Generator,
) -> dict[tuple[int, int], tuple[float, float]]:
    """What knowing sensor r's group is worth for choosing the next sensor,
    per unit of r's cost, for each candidate r and each of its groupings
    ``groupings[r][i]`` (each row's group, :func:`route_groups`), keyed
    ``(r, i)``: the mean over the scored rows, its standard error, and the
    mean gain of the common pick (per unit cost) it adds to.

    At the state {r}, each scored row's gain of every other sensor j is the
    drop of its out-of-fold ``row_loss`` per unit of j's cost. Half the
    scored rows pick, per group, the sensor of most mean gain in that group,
    and one sensor for all; the other half is scored by how much more its
    rows gain from their group's pick than from the common one, and the
    halves swap (picks are not scored on the rows that made them, so many
    small groups earn nothing by chance, and a grouping too fine for its
    rows scores less than a coarser one). Zero in expectation when r's
    value says nothing about which sensor helps a row, as for any sensor
    informative alone; CUBE-NM's context, which says where to look, scores
    high.
    """
    M = len(costs)
    halves = np.array_split(rng.permutation(len(scored)), 2)
    out: dict[tuple[int, int], float] = {}
    for r, options in groupings.items():
        held = np.zeros((1, M), dtype=bool)
        held[0, r] = True
        base = row_loss(scored, bank.oof_at(X, scored, held)[:, 0])
        cand = np.flatnonzero(np.arange(M) != r)
        trial = np.repeat(held, len(cand), axis=0)
        trial[np.arange(len(cand)), cand] = True
        after = row_loss(scored, bank.oof_at(X, scored, trial))
        gain = (base[:, None] - after) / np.maximum(costs[cand], 1e-12)
        for i, row_groups in enumerate(options):
            g = row_groups[scored]
            per_row, base_gain = [], []
            for pick_rows, judged in ((halves[0], halves[1]), (halves[1], halves[0])):
                common = int(gain[pick_rows].mean(axis=0).argmax())
                pick = np.full(len(judged), common)
                for group in np.unique(g[judged]):
                    mine = pick_rows[g[pick_rows] == group]
                    if group >= 0 and len(mine):
                        chosen = int(gain[mine].mean(axis=0).argmax())
                        pick[g[judged] == group] = chosen
                per_row.append(gain[judged, pick] - gain[judged, common])
                base_gain.append(gain[judged, common])
            own = np.concatenate(per_row) / max(float(costs[r]), 1e-12)
            se = float(own.std(ddof=1) / np.sqrt(len(own))) if len(own) > 1 else 0.0
            common_gain = float(np.concatenate(base_gain).mean())
            out[int(r), i] = (float(own.mean()), se, common_gain)
    return out


def route_groupings(
    values: np.ndarray, max_routes: int, floor: int, random_state: int | None = 0
) -> list[np.ndarray]:
    """The candidate groupings of the rows by a sensor's values: its
    :func:`route_groups` into each of ``ROUTE_GROUP_COUNTS`` (at most
    ``max_routes``) groups, without repeats and without those of fewer than
    two groups."""
    out: list[np.ndarray] = []
    for count in sorted({min(c, max_routes) for c in ROUTE_GROUP_COUNTS}):
        groups = route_groups(values, count, floor, random_state)
        if groups.max() >= 1 and not any(np.array_equal(groups, g) for g in out):
            out.append(groups)
    return out


def routed_growth(
    bank: Any,
    X: np.ndarray,
    y: np.ndarray,
    sensor_names: Sequence[str],
    sensor_columns: Sequence[np.ndarray],
    costs: np.ndarray,
    *,
    max_routes: int = MAX_ROUTES,
    max_rows: int = CHAIN_SCORE_ROWS,
    random_state: int | None = 0,
    row_loss: RowLoss | None = None,
    common_order: Sequence[int] | None = None,
    require: bool = False,
) -> SparseGrowth | None:
    """The cascade's chain plus, after a *routing* sensor, one chain per group
    of its values: each example may buy the routing sensor and then follow
    the order its group needs (CUBE-NM: the context, then its block's
    sensors), or keep the common order; Graph-Reduce learns which, per
    example, from the example's values.

    The routing sensor and the grouping of its values are those of highest
    :func:`routing_scores` (each candidate's groupings from
    :func:`route_groupings`, at most ``max_routes`` groups); each group's
    order is :func:`greedy_order` from the routing sensor on that group's
    rows. None when no sensor's values tell which sensor helps
    next (no score above ``ROUTE_MIN_SE`` standard errors and
    ``ROUTE_MIN_SHARE`` of the common pick's gain; with ``require``, the best
    one all the same).

    Parameters
    ----------
    bank, X, y, sensor_names, costs, max_rows, random_state, row_loss
        As :func:`chain_growth`.
    sensor_columns : sequence of ndarray
        The columns of each sensor (its values group the rows).
    max_routes : int, default=MAX_ROUTES
    common_order : sequence of int, optional
        The common chain's order (:func:`chain_growth`'s), if already known.
    require : bool, default=False

    Returns
    -------
    SparseGrowth or None
        Root -> the common chain and root -> {r} -> each group's chain; the
        common chain's states and {r} with every row flowing, a group's
        states with the group's rows.
    """
    n, M = len(X), len(sensor_names)
    costs = np.asarray(costs, dtype=float)
    rng = np.random.default_rng(random_state)
    rows = np.arange(n)
    if row_loss is None:

        def row_loss(rows: np.ndarray, proba: np.ndarray) -> np.ndarray:
            ce = -np.log(np.clip(np.take_along_axis(
                proba, y[rows].reshape((-1,) + (1,) * (proba.ndim - 1)), axis=-1
            ), 1e-12, None))  # fmt: skip
            return ce[..., 0]

    floor = max(10, n // 60)
    scored = rows if n <= ROUTE_SCORE_ROWS else np.sort(
        rng.choice(n, ROUTE_SCORE_ROWS, replace=False)
    )  # fmt: skip
    groupings = {
        r: route_groupings(X[:, cols], max_routes, floor, random_state)
        for r, cols in enumerate(sensor_columns)
    }
    groupings = {r: g for r, g in groupings.items() if g}
    if not groupings:
        return None
    scores = routing_scores(bank, X, scored, groupings, costs, row_loss, rng)
    # Many sensors and groupings are tried: a route must stand clear of the
    # noise (ROUTE_MIN_SE standard errors) and be worth a share of what the
    # common pick gains (not a sliver of it) before a strategy is built on it.
    clear = {
        key: (mean, se, common)
        for key, (mean, se, common) in scores.items()
        if mean > ROUTE_MIN_SE * se and mean > ROUTE_MIN_SHARE * max(common, 0.0)
    }
    if not clear and not require:
        return None
    pool = clear or scores
    best = max(pool, key=lambda key: (pool[key][0], -key[0], -key[1]))
    route, groups = best[0], groupings[best[0]][best[1]]
    if common_order is None:
        common = chain_growth(
            bank, X, y, sensor_names, costs, max_rows=max_rows,
            random_state=random_state, row_loss=row_loss,
        )  # fmt: skip
        common_order = chain_order(common.dag)
    paths = [(0, list(common_order), rows), (0, [route], rows)]
    held = np.zeros(M, dtype=bool)
    held[route] = True
    for group in range(int(groups.max()) + 1):
        members = np.flatnonzero(groups == group)
        sub = members if len(members) <= max_rows else np.sort(
            rng.choice(members, max_rows, replace=False)
        )  # fmt: skip
        current = float(row_loss(sub, bank.oof_at(X, sub, held)[:, 0]).mean())
        order = greedy_order(bank, X, sub, held, costs, row_loss, current)
        paths.append((1 << route, order, members))
    return _growth_of_paths(bank, X, sensor_names, paths)


def chain_order(dag: SparseSensorDAG) -> list[int]:
    """The sensors of a chain DAG (:func:`chain_growth`'s) in their order."""
    return [dag.children[k][0][0] for k in range(dag.n_states - 1)]


def _growth_of_paths(
    bank: Any,
    X: np.ndarray,
    sensor_names: Sequence[str],
    paths: list[tuple[int, list[int], np.ndarray]],
) -> SparseGrowth:
    """The DAG of some paths of one-sensor additions, each (start mask,
    sensors in order, the rows that follow it); a state's rows are those of
    every path through it, its probabilities their out-of-fold ones."""
    M = len(sensor_names)
    index: dict[int, int] = {0: 0}
    masks, kids = [0], [set()]
    flow: list[list[np.ndarray]] = [[np.arange(len(X))]]

    def state_of(mask: int) -> int:
        if mask not in index:
            index[mask] = len(masks)
            masks.append(mask)
            kids.append(set())
            flow.append([])
        return index[mask]

    for start, order, rows in paths:
        k = state_of(start)
        for j in order:
            child = state_of(masks[k] | 1 << j)
            kids[k].add((j, child))
            flow[child].append(rows)
            k = child
    order = sorted(range(len(masks)), key=lambda k: (masks[k].bit_count(), masks[k]))
    new = np.empty(len(masks), dtype=np.intp)
    new[order] = np.arange(len(order))
    dag = SparseSensorDAG(
        sensor_names,
        [masks[k] for k in order],
        [sorted((j, int(new[c])) for j, c in kids[k]) for k in order],
    )
    flows = [np.unique(np.concatenate(flow[k])) for k in order]
    tables = []
    for k, rows in zip(order, flows, strict=True):
        table = RowTable(len(bank.prior_))
        if masks[k] == 0:
            table.add(rows, np.tile(bank.prior_, (len(rows), 1)))
        else:
            mask = np.zeros((1, M), dtype=bool)
            mask[0, bits_of(masks[k])] = True
            table.add(rows, bank.oof_at(X, rows, mask)[:, 0])
        tables.append(table)
    return SparseGrowth(dag, flows, tables, bank, X)


def restricted(growth: SparseGrowth, rows: np.ndarray) -> SparseGrowth:
    """The same DAG and probabilities, with only ``rows`` flowing (sorted)."""
    flow = [np.intersect1d(f, rows) for f in growth.flow]
    return SparseGrowth(growth.dag, flow, growth.proba, growth.bank, growth.X)


@dataclass
class StrategyChoice:
    """Which strategy a many-sensor fit kept, and the validation behind it.

    ``scores[name]`` lists, per validation cost scale (``cost_scales``), the
    held-out rows' mean stop loss, mean cost and loss (stop loss +
    cost scale x cost) under that strategy's policies, and ``excess_se``: the
    standard error of the paired per-row excess of its loss over the
    strategy of least mean loss (0 for that one).
    """

    strategy: str
    cost_scales: list[float] = field(default_factory=list)
    scores: dict[str, list[dict[str, float]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain types (a skops file keeps them); :meth:`from_dict` inverts."""
        return {
            "strategy": self.strategy,
            "cost_scales": [float(c) for c in self.cost_scales],
            "scores": {
                name: [{k: float(v) for k, v in row.items()} for row in rows]
                for name, rows in self.scores.items()
            },
        }

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> StrategyChoice:
        return cls(
            str(saved["strategy"]),
            list(saved.get("cost_scales", [])),
            dict(saved.get("scores", {})),
        )

    def table(self) -> pd.DataFrame:
        """The validation numbers as a frame: one row per strategy and cost
        scale (``stop_loss``, ``cost``, ``loss``), and ``chosen``."""
        rows = [
            {"strategy": name, "cost_scale": scale, **row}
            for name, part in self.scores.items()
            for scale, row in zip(self.cost_scales, part, strict=True)
        ]
        frame = pd.DataFrame(rows)
        if len(frame):
            frame["chosen"] = frame["strategy"] == self.strategy
        return frame

    def mean_loss(self, name: str) -> float:
        """Mean held-out loss of strategy ``name`` over the cost scales,
        each scale's losses divided by the best strategy's there (so that
        every scale counts alike)."""
        per_scale = []
        for i in range(len(self.cost_scales)):
            best = min(s[i]["loss"] for s in self.scores.values())
            per_scale.append(self.scores[name][i]["loss"] / max(best, 1e-12))
        return float(np.mean(per_scale))


def choose_strategy(
    growths: dict[str, SparseGrowth],
    y: np.ndarray,
    inputs_for: Callable[[SparseGrowth], Callable[..., np.ndarray]],
    stop_loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
    judged_loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
    costs: np.ndarray,
    learner: Any,
    cost_scales: Sequence[float],
    *,
    random_state: int | None = 0,
) -> StrategyChoice:
    """Compare strategies on held-out training rows (see the module docstring).

    Each strategy's policies are learned (Graph-Reduce) on
    ``1 - VALIDATION_SHARE`` of the rows, a seeded stratified split, at each
    of ``cost_scales`` (a fit: its own); the held-out rows are then rolled
    out under them, with their out-of-fold probabilities. Each row's losses
    are divided, per scale, by the best strategy's mean loss there and
    averaged over the scales; the first strategy in ``growths`` (put the
    simplest first) whose mean is within one standard error of the paired
    per-row difference from the least mean is kept.

    ``inputs_for(growth)`` gives the ``state_inputs(k, rows, proba)`` of the
    policies on that growth's DAG. The policies learn from ``stop_loss``
    (e.g. the expected losses); the held-out rows are judged by
    ``judged_loss`` (e.g. the 0/1 loss of the prediction against the label:
    what a test reports).
    """
    names = list(growths)
    if len(names) == 1:
        return StrategyChoice(names[0])
    n = len(y)
    split = StratifiedShuffleSplit(
        1, test_size=VALIDATION_SHARE, random_state=random_state
    )
    stratify = np.zeros(n, dtype=int)  # a regression's targets: no strata
    if np.asarray(y).dtype.kind in "iub":
        counts = np.bincount(y)
        stratify = y if counts[counts > 0].min() >= 2 else stratify
    fit_rows, val_rows = next(split.split(np.zeros((n, 1)), stratify))
    fit_rows, val_rows = np.sort(fit_rows), np.sort(val_rows)
    scales = [float(c) for c in cost_scales]
    choice = StrategyChoice(names[0], scales, {})
    # per_row[name][i]: the held-out rows' losses at scale i
    per_row: dict[str, list[np.ndarray]] = {}
    for name in names:
        part = restricted(growths[name], fit_rows)
        state_inputs = inputs_for(growths[name])
        rows, losses = [], []
        for scale in scales:
            rollout = SparseRollout(part, state_inputs, stop_loss, costs, scale)
            graph_reduce_sparse(
                part, state_inputs, stop_loss, costs, learner,
                cost_scale=scale, rollout=rollout,
            )  # fmt: skip
            judge = SparseRollout(part, state_inputs, judged_loss, costs, scale)
            judge.policies = rollout.policies
            p = judge.parts(0, val_rows)
            losses.append(p[:, 0] + scale * p[:, 1])
            loss, cost = float(p[:, 0].mean()), float(p[:, 1].mean())
            rows.append({"stop_loss": loss, "cost": cost, "loss": loss + scale * cost})
        choice.scores[name], per_row[name] = rows, losses
    choice.strategy = keep_within_one_se(names, per_row, choice)
    return choice


def keep_within_one_se(
    names: list[str], per_row: dict[str, list[np.ndarray]], choice: StrategyChoice
) -> str:
    """The first of ``names`` whose mean relative loss is within one standard
    error (of the paired per-row difference) of the least; sets each
    strategy's ``excess_se`` in ``choice.scores``."""
    n_scales = len(choice.cost_scales)
    best_at = [
        max(min(choice.scores[name][i]["loss"] for name in names), 1e-12)
        for i in range(n_scales)
    ]
    relative = {
        name: np.mean([per_row[name][i] / best_at[i] for i in range(n_scales)], axis=0)
        for name in names
    }
    best = min(names, key=choice.mean_loss)  # the least mean relative loss
    within = []
    for name in names:
        excess = relative[name] - relative[best]
        se = (
            float(excess.std(ddof=1) / np.sqrt(len(excess))) if len(excess) > 1 else 0.0
        )
        for row in choice.scores[name]:
            row["excess_se"] = se * float(np.mean(best_at))
        if excess.mean() <= se:
            within.append(name)
    return within[0]


__all__ = [
    "CHAIN_SCORE_ROWS",
    "MAX_ROUTES",
    "ROUTE_GROUP_COUNTS",
    "ROUTE_MIN_SE",
    "ROUTE_MIN_SHARE",
    "ROUTE_SCORE_ROWS",
    "SIMPLEST_FIRST",
    "STRATEGIES",
    "StrategyChoice",
    "chain_growth",
    "chain_order",
    "choose_strategy",
    "greedy_order",
    "keep_within_one_se",
    "restricted",
    "route_groupings",
    "route_groups",
    "routed_growth",
    "routing_scores",
]
