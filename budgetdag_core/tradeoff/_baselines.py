"""Non-adaptive baselines and bounds, with the same cost accounting as the DAG.

Everything here starts from one table: every state's classifier applied to every
row of a data split (:class:`StatePredictions`). From it come the fixed-subset
points, their lower convex hull (what randomly mixing fixed subsets achieves), the
oracle frontier (per row, the cheapest subset whose classifier is right) and the
DAG's own operating point (its stop state per row). A row's cost is the cost of the
sensors of the state where it stops, per example when costs vary by example.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..bank import ClassifierBank, proba_at_every_state
from ..dag import SensorDAG
from ..decisions import check_loss_matrix, decide, encode_labels, matrix_loss
from ..estimator import model_inputs, route_rows, uses_model_inputs
from ..validation import check_features, check_labels, check_sample_costs

if TYPE_CHECKING:
    from ..estimator import BudgetDAGClassifier

FRAME_COLUMNS = [
    "method",
    "split",
    "cost_scale",
    "avg_cost",
    "avg_sensors",
    "error",
    "loss",
    "state",
    "sensors",
    "threshold",
]


@dataclass
class StatePredictions:
    """Every state's classifier on the rows of one data split.

    Attributes
    ----------
    split : str
        Name of the split ("train" for out-of-fold training predictions).
    Xv : ndarray (n, n_columns)
        The spec's columns.
    y : ndarray (n,)
        Labels encoded as class indices; -1 for a class unseen in training.
    pred : ndarray (n, n_states)
        Predicted class index of each state's classifier.
    costs : ndarray (n, n_states)
        What each row pays for each state's sensors (a broadcast view when costs
        are fixed).
    n_sensors : ndarray (n_states,)
        Number of real sensors in each state.
    sensor_names : list of tuple of str
        The sensors of each state.
    conf : ndarray (n, n_states, d) or None
        What policies see of each state's classifier (``estimator.model_inputs``:
        3 confidences, or probabilities + confidences), when given precomputed.
    loss : ndarray (n, n_states) or None
        Each state's stop loss on the row under the model's ``loss_matrix``
        (None without one: the 0/1 loss, see :attr:`stop_loss`).
    proba : ndarray (n, n_states, n_classes) or None
        Each state's class probabilities, kept when policies read them (the
        bank's own ``oof_proba_`` array for out-of-fold views, not a copy).
        A route computes the policy inputs of the rows at a state from them
        when it gets there: a full (n, n_states, d) float64 table of inputs
        would be the largest array of a sweep on a DAG of hundreds of states.
    policy_features : str or None
        The :func:`~budgetdag_core.estimator._inputs.model_inputs` kind of
        :meth:`model_inputs` (None: the view has no policy inputs).
    """

    split: str
    Xv: np.ndarray
    y: np.ndarray
    pred: np.ndarray
    costs: np.ndarray
    n_sensors: np.ndarray
    sensor_names: list[tuple[str, ...]]
    conf: np.ndarray | None = None
    loss: np.ndarray | None = None
    proba: np.ndarray | None = None
    policy_features: str | None = None

    @property
    def n_samples(self) -> int:
        return len(self.y)

    def model_inputs(self) -> np.ndarray | None:
        """(n, n_states, d): what policies see of each state's classifier
        (``conf`` when given, else computed from ``proba``); None without
        either. Builds the whole table: routes read it per state instead."""
        if self.conf is not None:
            return self.conf
        if self.proba is None or self.policy_features is None:
            return None
        return model_inputs(np.asarray(self.proba), self.policy_features)

    @property
    def stop_loss(self) -> np.ndarray:
        """(n, n_states) loss of stopping at each state: the matrix's, else 0/1."""
        return (~self.correct).astype(float) if self.loss is None else self.loss

    @property
    def correct(self) -> np.ndarray:
        """Boolean (n, n_states): the state's classifier is right on the row."""
        return self.pred == self.y[:, None]


def bank_state_predictions(
    bank: ClassifierBank,
    Xv: np.ndarray,
    y_enc: np.ndarray,
    dag: SensorDAG,
    costs: np.ndarray,
    *,
    out_of_fold: bool,
    with_confidence: bool | str,
    split: str,
    loss_matrix: np.ndarray | None = None,
) -> StatePredictions:
    """:class:`StatePredictions` from a fitted bank.

    Each state predicts the most probable class, or with ``loss_matrix`` the
    class of least expected loss (as the model does).

    ``costs`` is the (n_sensors,) cost vector or (n, n_sensors) example costs.
    With ``out_of_fold`` the bank's out-of-fold probabilities are used, so
    ``Xv``/``y_enc`` must be the bank's training rows.
    """
    n, K = len(Xv), dag.n_states
    if out_of_fold and (
        not hasattr(bank, "oof_proba_") or bank.oof_proba_.shape[0] != n
    ):
        raise ValueError(
            "Out-of-fold predictions need the bank's training rows "
            f"({getattr(bank, 'oof_proba_', np.empty(0)).shape[:1]} rows) and a "
            f"bank that kept them; got {n} rows."
        )
    pred = np.empty((n, K), dtype=np.intp)
    # True: the three confidences; a string: that policy_features kind's inputs.
    mode = "sensors+confidence" if with_confidence is True else with_confidence
    keep = bool(mode) and uses_model_inputs(mode)
    if out_of_fold:
        proba = bank.oof_proba_
    elif hasattr(bank, "predict_proba_states"):
        proba = bank.predict_proba_states(Xv)
    else:  # a bank-like object with predict_proba only
        proba = proba_at_every_state(bank, Xv, K)
    for k in range(K):
        pred[:, k] = decide(np.ascontiguousarray(proba[:, k]), loss_matrix)
    kept = proba if keep else None
    member = dag.membership().astype(float)  # (K, M)
    costs = np.asarray(costs, dtype=float)
    if costs.ndim == 1:
        state_costs = np.broadcast_to(member @ costs, (n, K))
    else:
        state_costs = costs @ member.T
    return StatePredictions(
        split=split,
        Xv=Xv,
        y=np.asarray(y_enc, dtype=np.intp),
        pred=pred,
        costs=state_costs,
        n_sensors=member.sum(axis=1).astype(int),
        sensor_names=[dag.state_names(k) for k in range(K)],
        loss=None if loss_matrix is None else matrix_loss(loss_matrix, y_enc, pred),
        proba=kept,
        policy_features=mode if keep else None,
    )


def state_predictions(
    model: BudgetDAGClassifier,
    X: pd.DataFrame,
    y: Any,
    *,
    sample_costs: Any = None,
    out_of_fold: bool = False,
    split: str | None = None,
) -> StatePredictions:
    """Every state's classifier of a fitted model on ``X`` (see the module doc).

    Parameters
    ----------
    model : fitted BudgetDAGClassifier
    X, y : the rows and their labels.
    sample_costs : DataFrame or array (rows x sensors), optional
        Example-dependent costs; default the spec's costs.
    out_of_fold : bool
        Use the bank's out-of-fold predictions: ``X``/``y`` must then be the
        training data of the model's bank. This is the honest view of training
        rows (the refit bank has seen them).
    split : str, optional
        Name recorded in frames; default "train" with ``out_of_fold``, else "test".
    """
    check_is_fitted(model)
    Xv = check_features(X, model.spec_)
    y = check_labels(y, len(Xv), None)
    y_enc = encode_labels(y, model.classes_)
    if out_of_fold:
        bank = model.bank_
        expected = bank.fingerprint_for(Xv, y_enc, model.sensor_dag_)
        if (y_enc < 0).any() or getattr(bank, "fingerprint_", None) != expected:
            raise ValueError(
                "out_of_fold=True needs the exact training data of the model's bank."
            )
    costs = check_sample_costs(sample_costs, model.spec_, len(Xv))
    return bank_state_predictions(
        model.bank_,
        Xv,
        y_enc,
        model.sensor_dag_,
        model.spec_.cost_vector if costs is None else costs,
        out_of_fold=out_of_fold,
        with_confidence=model.policy_features_,
        split=split or ("train" if out_of_fold else "test"),
        loss_matrix=check_loss_matrix(model.loss_matrix, len(model.classes_)),
    )


def dag_point(model: BudgetDAGClassifier, sp: StatePredictions) -> dict[str, float]:
    """Error, average cost and sensors of the model's policy on a split."""
    inputs = None  # without the view's probabilities: ask the bank
    if sp.proba is not None or sp.conf is not None:
        inputs = model.inputs_.given(sp.Xv, state_proba=sp.proba, model_part=sp.conf)
    routing = route_rows(model, sp.Xv, inputs)
    rows = np.arange(sp.n_samples)
    stop = routing.stop_state
    return {
        "avg_cost": float(sp.costs[rows, stop].mean()),
        "avg_sensors": float(sp.n_sensors[stop].mean()),
        "error": float((sp.pred[rows, stop] != sp.y).mean()),
        "loss": float(sp.stop_loss[rows, stop].mean()),
    }


def fixed_points(
    sp: StatePredictions, states: Sequence[int] | None = None
) -> pd.DataFrame:
    """One row per state: everyone pays for its sensors and uses its classifier."""
    states = range(sp.pred.shape[1]) if states is None else states
    correct, loss = sp.correct, sp.stop_loss
    return pd.DataFrame(
        {
            "state": list(states),
            "sensors": [sp.sensor_names[k] for k in states],
            "avg_cost": [float(sp.costs[:, k].mean()) for k in states],
            "avg_sensors": [float(sp.n_sensors[k]) for k in states],
            "error": [float((~correct[:, k]).mean()) for k in states],
            "loss": [float(loss[:, k].mean()) for k in states],
        }
    )


def lower_convex_hull(cost: Sequence[float], error: Sequence[float]) -> np.ndarray:
    """Indices of the lower-left convex hull of (cost, error) points.

    The vertices run from the cheapest point to the first point of lowest
    error, with slopes increasing (the part that pays more and errs more is
    dropped). Between two vertices, a random mix of the two achieves the line.

    Examples
    --------
    >>> lower_convex_hull([0, 1, 2, 3], [0.5, 0.45, 0.1, 0.1]).tolist()
    [0, 2]
    """
    points = {"cost": cost, "error": error}
    for name, values in points.items():
        try:
            points[name] = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers; got {values!r:.60}.") from None
    cost, error = points["cost"], points["error"]
    if cost.shape != error.shape or cost.ndim != 1 or len(cost) == 0:
        raise ValueError("cost and error must be 1-d arrays of the same length.")
    for name, values in points.items():
        if not np.isfinite(values).all():  # a NaN would silently drop points
            first = int(np.flatnonzero(~np.isfinite(values))[0])
            raise ValueError(
                f"{name} must be finite; got {values[first]} at position {first}."
            )
    hull: list[int] = []
    for i in np.lexsort((error, cost)):
        if hull and cost[hull[-1]] == cost[i]:
            continue  # same cost, higher error
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (cost[b] - cost[a]) * (error[i] - error[a]) - (
                error[b] - error[a]
            ) * (cost[i] - cost[a])
            if cross > 0:
                break
            hull.pop()
        hull.append(int(i))
    best = int(np.argmin(error[hull]))
    return np.asarray(hull[: best + 1], dtype=np.intp)


def curve_at(
    curve_cost: np.ndarray, curve_error: np.ndarray, cost: np.ndarray | float
) -> np.ndarray:
    """Piecewise-linear curve through sorted vertices, flat beyond its ends."""
    return np.interp(cost, curve_cost, curve_error)


def oracle_frontier(sp: StatePredictions) -> pd.DataFrame:
    """The oracle bound: per row, the cheapest state whose classifier is right.

    Rows the empty state already gets right cost nothing; rows no state gets
    right stay errors at no cost. Fixing the remaining rows cheapest first traces
    the frontier: for any policy that picks a state per row (the DAG, a fixed
    subset, any mix), the error at its average cost is at least the frontier's.
    The last vertex is the lowest error reachable with these classifiers.

    Returns
    -------
    DataFrame with ``avg_cost``, ``avg_sensors``, ``error`` at the vertices, and
    ``loss``: the same as ``error`` under 0/1 loss, NaN under a ``loss_matrix``
    (the bound is about being right, not about the matrix).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)

    The oracle rows of :func:`baseline_points` (and of
    :func:`~budgetdag_core.tradeoff_curve`'s frame) are this frontier on the
    model's classifiers:

    >>> from budgetdag_core.tradeoff import baseline_points
    >>> frame = baseline_points(model, demo.X_test, demo.y_test)
    >>> oracle = frame[frame["method"] == "oracle"]
    >>> bool(oracle["error"].is_monotonic_decreasing)
    True
    >>> bool(oracle["error"].min() <= frame["error"].min())
    True
    """
    n = sp.n_samples
    correct = sp.correct
    costs = np.where(correct, sp.costs, np.inf)
    # Cheapest right state; among equal costs the one with fewer sensors.
    cheapest = costs.min(axis=1, initial=np.inf)
    best_state = np.argmin(
        np.where(costs == cheapest[:, None], sp.n_sensors[None, :], np.iinfo(int).max),
        axis=1,
    )
    rows = np.arange(n)
    fixable = correct.any(axis=1) & ~correct[:, 0]
    fix_cost = sp.costs[rows, best_state][fixable]
    fix_sensors = sp.n_sensors[best_state][fixable]
    by_cost = np.argsort(fix_cost, kind="stable")
    fix_cost, fix_sensors = fix_cost[by_cost], fix_sensors[by_cost]
    e0 = 1.0 - correct[:, 0].mean()
    cum_cost = np.concatenate([[0.0], np.cumsum(fix_cost)]) / n
    cum_sensors = np.concatenate([[0.0], np.cumsum(fix_sensors)]) / n
    error = e0 - np.arange(len(fix_cost) + 1) / n
    # Vertices: the start and the last row of each run of equal costs.
    last_of_run = np.flatnonzero(np.diff(np.append(fix_cost, np.inf)) != 0) + 1
    keep = np.concatenate([[0], last_of_run])
    return pd.DataFrame(
        {
            "avg_cost": cum_cost[keep],
            "avg_sensors": cum_sensors[keep],
            "error": np.clip(error[keep], 0.0, 1.0),
            "loss": np.clip(error[keep], 0.0, 1.0) if sp.loss is None else np.nan,
        }
    )


def baseline_frame(
    sp: StatePredictions,
    subsets: Mapping[str, Sequence[int]] | None = None,
) -> pd.DataFrame:
    """Tidy rows of every baseline on one split.

    Methods: ``fixed`` (every state), ``hull`` (their lower convex hull),
    ``no_sensors``, ``all_sensors``, ``oracle`` (frontier vertices; the last is
    the oracle's lowest error) and one method per entry of ``subsets`` (name ->
    state indices, e.g. greedily selected subsets).
    """
    fixed = fixed_points(sp)
    parts = [fixed.assign(method="fixed")]
    hull = fixed.iloc[lower_convex_hull(fixed["avg_cost"], fixed["error"])]
    parts.append(hull.assign(method="hull"))
    parts.append(fixed.iloc[[0]].assign(method="no_sensors"))
    parts.append(fixed.iloc[[len(fixed) - 1]].assign(method="all_sensors"))
    parts.append(oracle_frontier(sp).assign(method="oracle"))
    for name, states in (subsets or {}).items():
        parts.append(fixed_points(sp, list(states)).assign(method=name))
    frame = pd.concat(parts, ignore_index=True)
    frame["split"] = sp.split
    frame["cost_scale"] = np.nan
    frame["threshold"] = np.nan
    frame["state"] = frame["state"].astype("Int64")
    frame["sensors"] = [v if isinstance(v, tuple) else None for v in frame["sensors"]]
    return frame[FRAME_COLUMNS]


def train_chosen_hull(frame: pd.DataFrame) -> pd.DataFrame:
    """The fixed-subset hull of honest selection: on each evaluation split,
    the lower hull of the fixed points of the states on the out-of-fold
    ``"train"`` split's hull (method ``"hull_oof"``).

    The ``"hull"`` of a test split picks its subsets by their test errors: of
    many subsets, the luckiest on those rows (an optimistic baseline, as a
    default picked by its test score would be). Here the subsets are picked
    where a user would pick them, on the training rows' out-of-fold
    predictions, and only reported on the split.

    Parameters
    ----------
    frame : DataFrame
        :func:`baseline_frame` rows of a ``"train"`` split and of others.

    Returns
    -------
    DataFrame
        ``hull_oof`` rows of every split but ``"train"`` (none without a
        ``"train"`` split), the columns of ``frame``.
    """
    train = frame[(frame["split"] == "train") & (frame["method"] == "hull")]
    if train.empty:
        return frame.iloc[:0]
    chosen = set(train["state"].dropna().astype(int))
    parts = []
    for split in frame["split"].unique():
        if split == "train":
            continue
        fixed = frame[(frame["split"] == split) & (frame["method"] == "fixed")]
        fixed = fixed[fixed["state"].isin(chosen)].sort_values("avg_cost")
        keep = lower_convex_hull(fixed["avg_cost"], fixed["error"])
        parts.append(fixed.iloc[keep].assign(method="hull_oof"))
    return pd.concat(parts) if parts else frame.iloc[:0]


def baseline_points(
    model: BudgetDAGClassifier,
    X: pd.DataFrame,
    y: Any,
    *,
    sample_costs: Any = None,
    subsets: Mapping[str, Sequence[Any]] | None = None,
    out_of_fold: bool = False,
    split: str | None = None,
) -> pd.DataFrame:
    """All baselines of a fitted model on ``X`` as a tidy frame.

    Parameters
    ----------
    model : fitted BudgetDAGClassifier
    X, y : rows and labels (the training data with ``out_of_fold=True``).
    sample_costs : example-dependent costs, optional.
    subsets : dict name -> list of sensor subsets, optional
        Extra fixed baselines, e.g. ``{"greedy": selected_subsets}``; each subset
        (sensor names or a state index) must be a state of the model's DAG.
    out_of_fold : bool
        Evaluate the bank's out-of-fold predictions (training data only).
    split : str, optional
        Name written in the ``split`` column.

    Returns
    -------
    DataFrame
        Columns ``method, split, cost_scale, avg_cost, avg_sensors, error,
        state, sensors`` (see ``baseline_frame()`` for the methods).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core.tradeoff import baseline_points
    >>> frame = baseline_points(model, demo.X_test, demo.y_test, split="test")
    >>> sorted(frame["method"].unique())
    ['all_sensors', 'fixed', 'hull', 'no_sensors', 'oracle']
    >>> len(frame[frame["method"] == "fixed"])  # one row per sensor subset
    8
    """
    sp = state_predictions(
        model,
        X,
        y,
        sample_costs=sample_costs,
        out_of_fold=out_of_fold,
        split=split,
    )
    resolved = {name: model.state_indices(s) for name, s in (subsets or {}).items()}
    return baseline_frame(sp, resolved)
