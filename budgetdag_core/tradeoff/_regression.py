"""A regressor's baselines, with the same cost accounting as the DAG.

The classifier's baselines (``_baselines``, ``_cascade``) read class
probabilities; a :class:`~budgetdag_core.BudgetDAGRegressor` has predicted
numbers and a row loss (squared or absolute error, its ``loss``). Its
baselines here are the same three, on that loss (the frame's ``error`` and
``loss`` columns both hold the mean row loss: MSE or MAE):

- **fixed subsets** and their lower convex hull (``fixed``, ``hull``,
  ``no_sensors``, ``all_sensors``; ``train_chosen_hull`` picks the hull's
  subsets on the out-of-fold training rows, as for a classifier);
- **the oracle bound** (``oracle``): per row, any state. For a multiplier
  ``lam``, every row takes the state of least ``loss + lam * cost``; no
  policy that stops each row at a state of these (the DAG, a fixed subset,
  any mix) does better than the line this gives at its own average cost, so
  the frontier traced as ``lam`` runs from infinity to 0 bounds them all
  (with the 0/1 loss it is the classifier's oracle, the cheapest right state
  per row);
- **the spread cascade** (``cascade``): buy the units in the greedy order of
  the confidence cascade (out-of-fold loss drop per unit of cost) and stop at
  the first prefix whose *expected loss of stopping* is at most ``tau``: the
  regression twin of "top-class probability at least tau" (a classifier's
  expected 0/1 loss of stopping is one minus it). The expected loss at a
  prefix is read from the prefix's own prediction: the mean out-of-fold loss
  of the training rows whose out-of-fold prediction fell in the same decile
  (:class:`SpreadCascade`). The order and the thresholds are chosen on the
  out-of-fold training rows; a test split is only evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..dag import SensorDAG
from ..validation import check_features, check_params, int_in
from ._baselines import FRAME_COLUMNS, lower_convex_hull
from ._cascade import greedy_order

#: Bins of a prefix's out-of-fold predictions whose mean loss is its spread.
SPREAD_BINS = 10


@dataclass
class RegressionView:
    """Some states' regressors on the rows of one split.

    Attributes
    ----------
    split : str
    y : ndarray (n,)
        The targets.
    states : ndarray (S,)
        The DAG states of the columns below.
    pred : ndarray (n, S)
        Each state's prediction (out of fold on the training rows).
    loss : ndarray (n, S)
        Each row's loss at each state (the model's ``loss``).
    costs : ndarray (n, S)
        What a row pays for each state's sensors.
    n_sensors : ndarray (S,)
    sensor_names : list of tuple of str
    """

    split: str
    y: np.ndarray
    states: np.ndarray
    pred: np.ndarray
    loss: np.ndarray
    costs: np.ndarray
    n_sensors: np.ndarray
    sensor_names: list[tuple[str, ...]]


def row_loss(pred: np.ndarray, y: np.ndarray, loss: str) -> np.ndarray:
    """Squared or absolute error of ``pred`` (n, S) against ``y`` (n,)."""
    diff = np.asarray(pred, dtype=float) - np.asarray(y, dtype=float)[:, None]
    return diff**2 if loss == "squared" else np.abs(diff)


def regression_view(
    model: Any,
    X: pd.DataFrame,
    y: Any,
    *,
    states: Any = None,
    out_of_fold: bool = False,
    split: str | None = None,
) -> RegressionView:
    """:class:`RegressionView` of a fitted regressor's ``states`` (default
    all) on ``X``, ``y``; with ``out_of_fold`` the bank's out-of-fold
    predictions (``X``, ``y`` must be its training rows).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGRegressor, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> y = 2 * demo.X_train["precise"]
    >>> model = BudgetDAGRegressor(demo.spec, cost_scale=0.01, cv=3,
    ...                            random_state=0).fit(demo.X_train, y)
    >>> view = regression_view(model, demo.X_train, y, out_of_fold=True)
    >>> view.split, view.pred.shape
    ('train', (200, 8))
    """
    check_is_fitted(model)
    Xv = check_features(X, model.spec_)
    try:
        y = np.asarray(y, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError("y must hold numbers (a regressor's targets).") from None
    if len(y) != len(Xv):
        raise ValueError(f"y has {len(y)} values for {len(Xv)} rows.")
    if not np.isfinite(y).all():
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        raise ValueError(f"y must be finite; row {row} is {y[row]}.")
    dag: SensorDAG = model.sensor_dag_
    chosen = np.asarray(model.state_indices(states), dtype=np.intp)
    bank = model.bank_
    if out_of_fold:
        if bank.fingerprint_for(Xv, y, dag) != getattr(bank, "fingerprint_", None):
            raise ValueError(
                "out_of_fold=True needs the exact training data of the model's bank."
            )
        if hasattr(bank, "oof_pred_"):
            pred = np.asarray(bank.oof_pred_, dtype=float)[:, chosen]
        else:  # an any-subset bank: its fold models at the states' sensors
            member = dag.membership(chosen)
            pred = bank.oof_at(Xv, np.arange(len(Xv)), member)[:, :, 0]
    else:
        pred = np.column_stack([bank.predict(Xv, int(k)) for k in chosen])
    member = dag.membership(chosen).astype(float)
    cost = member @ np.asarray(model.spec_.cost_vector, dtype=float)
    return RegressionView(
        split=split or ("train" if out_of_fold else "test"),
        y=y,
        states=chosen,
        pred=pred,
        loss=row_loss(pred, y, model.loss),
        costs=np.broadcast_to(cost, pred.shape),
        n_sensors=member.sum(axis=1).astype(int),
        sensor_names=[dag.state_names(int(k)) for k in chosen],
    )


def loss_frontier(
    loss: np.ndarray, costs: np.ndarray, n_sensors: np.ndarray | None = None
) -> pd.DataFrame:
    """The oracle bound on a row loss: each row at any of the states.

    For a multiplier ``lam`` every row takes its state of least ``loss + lam
    * cost``; as ``lam`` falls from infinity to 0 the rows move along their
    own lower convex hulls of (cost, loss), the steepest loss drop per unit
    of cost first. The vertices trace the lower bound of every policy that
    stops each row at one of these states.

    Parameters
    ----------
    loss, costs : ndarray (n, S)
        Each row's loss and cost at each state.
    n_sensors : ndarray (S,), optional
        Sensors of each state (for ``avg_sensors``; NaN without).

    Returns
    -------
    DataFrame
        ``avg_cost``, ``avg_sensors``, ``error`` and ``loss`` (the mean loss)
        at the vertices, cheapest first; the last is the least loss any
        choice of states reaches.

    Examples
    --------
    Two rows, three states: the empty one (cost 0), a cheap one that helps
    the first row, a dear one that helps both.

    >>> loss = np.array([[4.0, 0.0, 0.0], [4.0, 4.0, 0.0]])
    >>> costs = np.array([[0.0, 1.0, 3.0], [0.0, 1.0, 3.0]])
    >>> loss_frontier(loss, costs)[["avg_cost", "loss"]].to_numpy().tolist()
    [[0.0, 4.0], [0.5, 2.0], [2.0, 0.0]]
    """
    loss = np.asarray(loss, dtype=float)
    costs = np.asarray(costs, dtype=float)
    if loss.shape != costs.shape or loss.ndim != 2 or loss.size == 0:
        raise ValueError("loss and costs must be 2-d arrays of the same shape.")
    if not (np.isfinite(loss).all() and np.isfinite(costs).all()):
        raise ValueError("loss and costs must be finite.")
    n = len(loss)
    sensors = (
        np.full(loss.shape[1], np.nan)
        if n_sensors is None
        else np.asarray(n_sensors, dtype=float)
    )
    rows = np.arange(n)
    # Start: the cheapest state of each row, of least loss among those.
    cheapest = costs.min(axis=1, keepdims=True)
    here = np.argmin(np.where(costs == cheapest, loss, np.inf), axis=1)
    start = (costs[rows, here].sum(), sensors[here].sum(), loss[rows, here].sum())
    steps = []  # (slope, d_cost, d_sensors, d_loss) of each hull segment
    active = rows
    while active.size:
        c0 = costs[active, here[active]][:, None]
        l0 = loss[active, here[active]][:, None]
        gain, extra = l0 - loss[active], costs[active] - c0
        ok = (extra > 0) & (gain > 0)
        slope = np.where(ok, gain / np.where(ok, extra, 1.0), -np.inf)
        best = slope.max(axis=1)
        # A gain over a subnormal extra cost overflows to an infinite slope:
        # still a move (the steepest of all), not none.
        moving = best > -np.inf
        # Among the steepest, the farthest (a hull vertex, not a point on it).
        far = np.where(slope == best[:, None], extra, -np.inf).argmax(axis=1)
        rows_m, to = active[moving], far[moving]
        frm = here[rows_m]
        steps.append(
            np.column_stack(
                [
                    best[moving],
                    costs[rows_m, to] - costs[rows_m, frm],
                    sensors[to] - sensors[frm],
                    loss[rows_m, to] - loss[rows_m, frm],
                ]
            )
        )
        here[rows_m] = to
        active = rows_m
    table = np.concatenate(steps) if steps else np.empty((0, 4))
    table = table[np.argsort(-table[:, 0], kind="stable")]
    totals = np.vstack([start, start + np.cumsum(table[:, 1:], axis=0)]) / n
    # A vertex where the slope changes (equal slopes make one segment).
    keep = np.concatenate([[0], np.flatnonzero(np.diff(table[:, 0]) != 0) + 1])
    keep = np.unique(np.append(keep, len(table)))
    # A gain lost to rounding in the sums (a loss 1e-80 below another) is
    # no vertex: the loss falls strictly along the frontier.
    falls = np.ones(len(keep), dtype=bool)
    falls[1:] = np.diff(np.minimum.accumulate(totals[keep, 2])) < 0
    keep = keep[falls]
    # Likewise a cost step lost to rounding (a subnormal cost over n rows):
    # of vertices at one mean cost, only the last (least loss) is one.
    keep = keep[np.append(np.diff(totals[keep, 0]) > 0, True)]
    return pd.DataFrame(
        {
            "avg_cost": totals[keep, 0],
            "avg_sensors": totals[keep, 1],
            "error": totals[keep, 2],
            "loss": totals[keep, 2],
        }
    )


def _frame(parts: list[pd.DataFrame], split: str) -> pd.DataFrame:
    frame = pd.concat(parts, ignore_index=True)
    frame["split"] = split
    for column in ("cost_scale", "threshold"):
        if column not in frame:
            frame[column] = np.nan
    if "state" not in frame:
        frame["state"] = pd.NA
    frame["state"] = frame["state"].astype("Int64")
    if "sensors" not in frame:
        frame["sensors"] = None
    frame["sensors"] = [v if isinstance(v, tuple) else None for v in frame["sensors"]]
    return frame[FRAME_COLUMNS]


def regression_baseline_frame(view: RegressionView) -> pd.DataFrame:
    """Tidy rows of a regressor's baselines on one split (the frame columns
    of :func:`~budgetdag_core.tradeoff_curve`): ``fixed`` (every state of the
    view), ``hull``, ``no_sensors``, ``all_sensors`` (the view's first and
    last state) and ``oracle`` (:func:`loss_frontier`); ``error`` and
    ``loss`` are the mean row loss.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGRegressor, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGRegressor(demo.spec, cost_scale=0.01, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, 2 * demo.X_train["precise"])
    >>> view = regression_view(model, demo.X_test, 2 * demo.X_test["precise"])
    >>> frame = regression_baseline_frame(view)
    >>> sorted(frame["method"].unique())
    ['all_sensors', 'fixed', 'hull', 'no_sensors', 'oracle']
    """
    fixed = pd.DataFrame(
        {
            "state": view.states,
            "sensors": view.sensor_names,
            "avg_cost": view.costs.mean(axis=0),
            "avg_sensors": view.n_sensors.astype(float),
            "error": view.loss.mean(axis=0),
            "loss": view.loss.mean(axis=0),
        }
    )
    by_cost = fixed.sort_values("avg_cost", kind="stable")
    hull = by_cost.iloc[lower_convex_hull(by_cost["avg_cost"], by_cost["error"])]
    parts = [
        fixed.assign(method="fixed"),
        hull.assign(method="hull"),
        fixed.iloc[[0]].assign(method="no_sensors"),
        fixed.iloc[[-1]].assign(method="all_sensors"),
        loss_frontier(view.loss, view.costs, view.n_sensors).assign(method="oracle"),
    ]
    return _frame(parts, view.split)


# ------------------------------------------------------------ the cascade
@dataclass(eq=False)
class SpreadCascade:
    """A regressor's cascade: fixed order, stop once the expected loss of
    stopping is at most ``threshold`` (see the module doc).

    Attributes
    ----------
    bank : the regressor's bank (``predict(X, state)``).
    dag : SensorDAG
    spec : SensorSpec
    loss : {"squared", "absolute"}
    states : list of int
        The prefix states, from the empty state to every unit.
    edges : list of ndarray
        Per prefix, the inner edges of its prediction bins.
    spreads : list of ndarray
        Per prefix, the mean out-of-fold loss of each bin.
    thresholds : ndarray
        The swept thresholds (ascending), chosen on the training rows.
    threshold : float
        The operating threshold of :meth:`stops`.
    train_points : DataFrame or None
        The out-of-fold training points, one row per threshold.
    """

    bank: Any
    dag: SensorDAG
    spec: Any
    loss: str
    states: list[int]
    edges: list[np.ndarray]
    spreads: list[np.ndarray]
    thresholds: np.ndarray
    threshold: float = 0.0
    train_points: pd.DataFrame | None = None

    @property
    def sensor_order(self) -> tuple[str, ...]:
        """Every sensor in the order the cascade buys it."""
        return tuple(
            self.dag.sensor_names[i]
            for a, b in zip(self.states[:-1], self.states[1:], strict=True)
            for i in self.dag.added_sensors(a, b)
        )

    def at(self, threshold: float) -> SpreadCascade:
        """The same cascade at another ``threshold``."""
        return replace(self, threshold=float(threshold))

    def spread(self, pred: np.ndarray) -> np.ndarray:
        """(n, P) expected loss of stopping at each prefix, from the
        prefixes' predictions ``pred`` (n, P)."""
        pred = np.asarray(pred, dtype=float)
        return np.column_stack(
            [
                self.spreads[j][np.searchsorted(self.edges[j], pred[:, j])]
                for j in range(len(self.states))
            ]
        )

    def stops(self, spread: np.ndarray, threshold: float | None = None) -> np.ndarray:
        """Per row, the first prefix whose spread is at most the threshold
        (the last prefix when none is)."""
        tau = self.threshold if threshold is None else threshold
        reached = np.asarray(spread) <= tau
        reached[:, -1] = True
        return reached.argmax(axis=1)

    def curve(self, view: RegressionView, spread: np.ndarray) -> pd.DataFrame:
        """One frame row per threshold on the split of ``view`` (whose
        states include the prefixes), ``spread`` from :meth:`spread`."""
        cols = [int(np.flatnonzero(view.states == k)[0]) for k in self.states]
        loss, cost = view.loss[:, cols], view.costs[:, cols]
        n_sensors, rows = view.n_sensors[cols], np.arange(len(view.y))
        out = []
        for tau in self.thresholds:
            j = self.stops(spread, tau)
            mean_loss = float(loss[rows, j].mean())
            out.append(
                {
                    "method": "cascade",
                    "avg_cost": float(cost[rows, j].mean()),
                    "avg_sensors": float(n_sensors[j].mean()),
                    "error": mean_loss,
                    "loss": mean_loss,
                    "threshold": float(tau),
                    "sensors": self.sensor_order,
                }
            )
        return _frame([pd.DataFrame(out)], view.split)


def _bins(pred: np.ndarray, loss: np.ndarray, n_bins: int) -> tuple:
    """Inner edges of ``pred``'s quantile bins and each bin's mean loss."""
    edges = np.unique(np.quantile(pred, np.linspace(0, 1, n_bins + 1)[1:-1]))
    where = np.searchsorted(edges, pred)
    sums = np.bincount(where, weights=loss, minlength=len(edges) + 1)
    counts = np.bincount(where, minlength=len(edges) + 1)
    # An empty bin (ties at an edge) takes the prefix's mean loss.
    spread = np.where(counts > 0, sums / np.maximum(counts, 1), loss.mean())
    return edges, spread


def fit_spread_cascade(
    model: Any,
    train: RegressionView,
    *,
    n_thresholds: int = 20,
    n_bins: int = SPREAD_BINS,
) -> SpreadCascade:
    """A :class:`SpreadCascade` of a fitted regressor from the out-of-fold
    view of its training rows over every state (:func:`regression_view`
    with ``out_of_fold=True``).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGRegressor, toy_dataset
    >>> demo = toy_dataset(300, 50)
    >>> y = 2 * demo.X_train["precise"]
    >>> model = BudgetDAGRegressor(demo.spec, cost_scale=0.01, cv=3,
    ...                            random_state=0).fit(demo.X_train, y)
    >>> train = regression_view(model, demo.X_train, y, out_of_fold=True)
    >>> cascade = fit_spread_cascade(model, train)
    >>> cascade.sensor_order[0]  # the most loss drop per unit of cost: cheap
    'cheap_b'
    >>> sorted(cascade.sensor_order) == sorted(demo.spec.names)
    True
    >>> points = cascade.train_points
    >>> bool(points["avg_cost"].min() < points["avg_cost"].max())
    True
    """
    check_params(
        "fit_spread_cascade",
        {"n_thresholds": [int_in(2, 1000)], "n_bins": [int_in(1, 1000)]},
        n_thresholds=n_thresholds,
        n_bins=n_bins,
    )
    dag = model.sensor_dag_
    if len(train.states) != dag.n_states or train.split != "train":
        raise ValueError(
            "fit_spread_cascade needs the out-of-fold view of every state."
        )
    _, states = greedy_order(dag, train.loss.mean(axis=0), train.costs.mean(axis=0))
    edges, spreads = zip(
        *(_bins(train.pred[:, k], train.loss[:, k], n_bins) for k in states),
        strict=True,
    )
    cascade = SpreadCascade(
        bank=model.bank_,
        dag=dag,
        spec=model.spec_,
        loss=model.loss,
        states=states,
        edges=list(edges),
        spreads=list(spreads),
        thresholds=np.empty(0),
    )
    spread = cascade.spread(train.pred[:, states])
    pool = spread[:, :-1].ravel()
    inner = np.quantile(pool, np.linspace(0, 1, n_thresholds)) if pool.size else []
    kept, previous = [], None
    # From the largest threshold (stop at once) down: keep the first of
    # each run of thresholds that stop the training rows alike.
    for tau in np.unique(np.concatenate([[0.0], inner]))[::-1]:
        stops = cascade.stops(spread, tau)
        if previous is None or not np.array_equal(stops, previous):
            kept.append(float(tau))
            previous = stops
    cascade.thresholds = np.asarray(sorted(kept))
    cascade.threshold = float(cascade.thresholds[0])
    cascade.train_points = cascade.curve(train, spread)
    return cascade


def regression_cascade_points(
    model: Any, cascade: SpreadCascade, X: pd.DataFrame, y: Any, split: str = "test"
) -> pd.DataFrame:
    """The cascade's rows (one per threshold) on a split other than the
    training rows: its prefixes' predictions by the refit bank.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGRegressor, toy_dataset
    >>> demo = toy_dataset(300, 50)
    >>> y = 2 * demo.X_train["precise"]
    >>> model = BudgetDAGRegressor(demo.spec, cost_scale=0.01, cv=3,
    ...                            random_state=0).fit(demo.X_train, y)
    >>> cascade = fit_spread_cascade(
    ...     model, regression_view(model, demo.X_train, y, out_of_fold=True))
    >>> test = regression_cascade_points(
    ...     model, cascade, demo.X_test, 2 * demo.X_test["precise"])
    >>> len(test) == len(cascade.thresholds), test["split"].iloc[0]
    (True, 'test')
    """
    view = regression_view(model, X, y, states=cascade.states, split=split)
    return cascade.curve(view, cascade.spread(view.pred))
