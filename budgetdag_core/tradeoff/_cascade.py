"""The confidence cascade: the baseline an engineer builds before a learned policy.

Buy the units (sensors, or the selected subsets of a DAG built with
``n_subsets``) in one fixed order and stop as soon as the current state's
classifier is sure enough: its calibrated top-class probability reaches a
threshold tau (or every unit is bought). Sweeping tau traces a cost-error curve.

Everything comes from the model's classifier bank, with the DAG's cost
accounting (per-example costs included):

- the order is greedy on the bank's out-of-fold stop loss (0/1 error, or the
  ``loss_matrix`` loss): the next unit is the one whose addition lowers the
  out-of-fold loss of the prefix state the most per unit of added average cost;
  the prefixes (unions of the first units) are states of the DAG;
- the thresholds are chosen on the out-of-fold confidences of the training rows
  (their quantiles, plus 0 and 1), so a test split is only ever evaluated;
- a row's prediction is its stop state's decision (most probable class, or the
  Bayes decision under ``loss_matrix``), as everywhere in the library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..dag import SensorDAG
from ..decisions import check_loss_matrix, decide
from ..sensors import SensorSpec
from ..validation import (
    check_features,
    check_params,
    check_sample_costs,
    int_in,
    real_in,
)
from ._baselines import FRAME_COLUMNS, StatePredictions, state_predictions

if TYPE_CHECKING:
    from ..estimator import BudgetDAGClassifier

#: Number of threshold quantiles swept by default (0 and 1 come on top).
DEFAULT_N_THRESHOLDS = 20
#: Most threshold quantiles (``n_thresholds``): each is a point evaluated on
#: every row of every split, and 1000 quantiles resolve any curve drawn.
MAX_N_THRESHOLDS = 1000


# ------------------------------------------------------------------ the parts
def greedy_order(
    dag: SensorDAG, state_loss: np.ndarray, state_cost: np.ndarray
) -> tuple[list[int], list[int]]:
    """Acquisition order of the units, greedy on loss drop per unit of cost.

    Parameters
    ----------
    dag : SensorDAG
    state_loss : ndarray (n_states,)
        Mean out-of-fold stop loss of each state's classifier.
    state_cost : ndarray (n_states,)
        Mean cost of each state's sensors.

    Returns
    -------
    units : list of int
        Unit indices in acquisition order.
    states : list of int
        The prefix states: ``states[0]`` is the empty state, ``states[i]`` the
        union of the first ``i`` units.

    Notes
    -----
    From the current prefix, each unit that adds a sensor scores
    ``(loss[prefix] - loss[child]) / (cost[child] - cost[prefix])``; a free unit
    scores +inf when it lowers the loss (0 when it changes nothing). Ties go to
    the cheaper addition, then the lower unit index. The order runs until no
    unit adds anything, so the last prefix holds every unit.

    Examples
    --------
    >>> dag = SensorDAG(["a", "b"])  # states {}, {a}, {b}, {a, b}
    >>> greedy_order(dag, np.array([0.5, 0.4, 0.2, 0.1]),
    ...              np.array([0.0, 1.0, 2.0, 3.0]))
    ([1, 0], [0, 2, 3])
    """
    state_loss = np.asarray(state_loss, dtype=float)
    state_cost = np.asarray(state_cost, dtype=float)
    units: list[int] = []
    states = [0]
    while dag.children[states[-1]]:
        here = states[-1]
        best: tuple[tuple[float, float, int], int, int] | None = None
        for unit, child in dag.children[here]:
            gain = state_loss[here] - state_loss[child]
            added = state_cost[child] - state_cost[here]
            if added > 0:
                score = gain / added
            else:
                score = math.inf if gain > 0 else (0.0 if gain == 0 else -math.inf)
            key = (score, -added, -unit)
            if best is None or key > best[0]:
                best = (key, unit, child)
        assert best is not None
        units.append(best[1])
        states.append(best[2])
    return units, states


def stop_positions(confidence: np.ndarray, threshold: float) -> np.ndarray:
    """Per row, the first prefix whose confidence reaches ``threshold``.

    ``confidence`` is (n_rows, n_prefixes); rows that never reach it stop at
    the last prefix.

    Examples
    --------
    >>> stop_positions(np.array([[0.9, 0.95], [0.5, 0.7], [0.5, 0.99]]), 0.8)
    array([0, 1, 1])
    """
    reached = np.asarray(confidence) >= threshold
    reached[:, -1] = True
    return reached.argmax(axis=1)


def threshold_grid(confidence: np.ndarray, n_thresholds: int) -> np.ndarray:
    """0, 1 and ``n_thresholds`` quantiles of the confidences that can stop a row.

    ``confidence`` is the (n_rows, n_prefixes) out-of-fold confidence; the last
    prefix is left out (every row stops there anyway). Quantiles are taken among
    the observed values, so each threshold is a confidence some row has.
    """
    pool = np.asarray(confidence, dtype=float)[:, :-1].ravel()
    levels = np.linspace(0.0, 1.0, n_thresholds)
    inner = np.quantile(pool, levels, method="inverted_cdf") if pool.size else []
    return np.unique(np.concatenate([[0.0, 1.0], inner]))


def _top_proba(proba: np.ndarray) -> np.ndarray:
    return np.asarray(proba, dtype=float).max(axis=-1)


# ----------------------------------------------------------------- the object
@dataclass(eq=False)
class ConfidenceCascade:
    """A fitted confidence cascade that can be deployed like a policy.

    Build it with :func:`fit_cascade` (or take ``TradeoffResult.cascade``);
    pick the operating threshold with :meth:`at` or :meth:`for_budget`.

    Attributes
    ----------
    bank : fitted classifier bank
        The model's bank: ``predict_proba(X, state)`` and ``oof_proba_``.
    dag : SensorDAG
        The model's DAG; the prefixes are its states.
    spec : SensorSpec
    classes : ndarray
        The class labels (the bank's class indices map to them).
    units : list of int
        Unit indices of ``dag`` in acquisition order.
    states : list of int
        Prefix states, from the empty state to all units.
    thresholds : ndarray
        The swept thresholds, ascending (chosen on out-of-fold confidences).
    threshold : float
        The operating threshold of :meth:`trace` and :meth:`predict`: a row
        stops at the first prefix whose top-class probability is >= it.
    loss_matrix : ndarray or None
        With it, predictions are the Bayes decision (least expected loss).
    train_points : DataFrame or None
        The out-of-fold training points (one row per threshold, frame columns).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core.tradeoff import fit_cascade
    >>> cascade = fit_cascade(model, demo.X_train, demo.y_train)
    >>> cascade.spec.names == demo.spec.names, len(cascade.states)
    (True, 4)
    >>> sure = cascade.at(0.9)  # stop once the top class has probability >= 0.9
    >>> trace = sure.trace(demo.X_test)
    >>> bool(trace["cost"].mean() <= demo.spec.total_cost)
    True
    """

    bank: Any
    dag: SensorDAG
    spec: SensorSpec
    classes: np.ndarray
    units: list[int]
    states: list[int]
    thresholds: np.ndarray
    threshold: float = 1.0
    loss_matrix: np.ndarray | None = None
    train_points: pd.DataFrame | None = None

    # ------------------------------------------------------------ reading
    @property
    def order(self) -> list[tuple[str, ...]]:
        """The sensor names each step buys, in acquisition order."""
        return [
            self.dag.state_names(b)
            if a == 0
            else tuple(self.dag.sensor_names[i] for i in self.dag.added_sensors(a, b))
            for a, b in zip(self.states[:-1], self.states[1:], strict=True)
        ]

    @property
    def sensor_order(self) -> tuple[str, ...]:
        """Every real sensor in the order the cascade buys it."""
        return tuple(name for step in self.order for name in step)

    def describe(self) -> str:
        """The cascade in words."""
        steps = " -> ".join("+".join(step) for step in self.order) or "nothing"
        return (
            f"Buys {steps}; stops once the top-class probability is >= "
            f"{self.threshold:.3g}."
        )

    def __post_init__(self) -> None:
        check_threshold(self.threshold, "ConfidenceCascade")

    def at(self, threshold: float) -> ConfidenceCascade:
        """The same cascade operating at another ``threshold`` (any float)."""
        check_threshold(threshold, "ConfidenceCascade.at")
        return replace(self, threshold=float(threshold))

    def for_budget(self, avg_cost: float) -> ConfidenceCascade:
        """The cascade at the swept threshold of least out-of-fold error whose
        out-of-fold average cost is <= ``avg_cost``."""
        check_params(
            "ConfidenceCascade.for_budget",
            {"avg_cost": [real_in(None, closed="neither")]},  # below all: said below
            avg_cost=avg_cost,
        )
        pts = self.train_points
        if pts is None or pts.empty:
            raise ValueError("This cascade has no training points to choose from.")
        ok = pts[pts["avg_cost"] <= avg_cost + 1e-12]
        if ok.empty:
            raise ValueError(
                f"No threshold has an average cost <= avg_cost={avg_cost} on the "
                f"training rows; the cheapest costs {pts['avg_cost'].min():.4g}."
            )
        best = ok.sort_values(["error", "avg_cost"], kind="stable").iloc[0]
        return self.at(float(best["threshold"]))

    # ------------------------------------------------------------ curves
    def confidences(self, Xv: np.ndarray) -> np.ndarray:
        """(n_rows, n_prefixes) top-class probability of each prefix's classifier
        on the spec-ordered feature array ``Xv`` (refit bank)."""
        return np.column_stack(
            [_top_proba(self.bank.predict_proba(Xv, k)) for k in self.states]
        )

    def split_confidences(self, sp: StatePredictions) -> np.ndarray:
        """(n_rows, n_prefixes) top-class probability of each prefix's
        classifier on the rows of ``sp`` (a view of the cascade's bank and
        DAG): from the view's kept probabilities where it holds them (its
        bank's ``predict_proba`` at every state: the same numbers, without
        asking the bank again), else :meth:`confidences` of its rows."""
        proba = sp.proba
        if proba is not None and proba.shape[:2] == (sp.n_samples, self.dag.n_states):
            return _top_proba(np.asarray(proba)[:, self.states])
        return self.confidences(sp.Xv)

    def oof_confidences(self, proba: np.ndarray | None = None) -> np.ndarray:
        """(n_train, n_prefixes) top-class out-of-fold probability of each
        prefix: of ``proba`` (n_train, n_states, n_classes; an out-of-fold
        view's) if given, else of the bank's ``oof_proba_``."""
        if proba is None:
            proba = self.bank.oof_proba_
        return _top_proba(np.asarray(proba)[:, self.states])

    def curve(
        self, sp: StatePredictions, confidence: np.ndarray | None = None
    ) -> pd.DataFrame:
        """One frame row per threshold on a split.

        Parameters
        ----------
        sp : StatePredictions
            Every state's predictions and costs on the split (the same DAG).
        confidence : ndarray (n_rows, n_prefixes), optional
            The prefixes' confidences on the same rows (:meth:`oof_confidences`
            for the bank's training rows); default :meth:`split_confidences`
            of ``sp``.
        """
        if confidence is None:
            confidence = self.split_confidences(sp)
        n = sp.n_samples
        if confidence.shape != (n, len(self.states)):
            raise ValueError(
                f"confidence must have shape ({n}, {len(self.states)}); got "
                f"{confidence.shape}."
            )
        rows = np.arange(n)
        cols = np.asarray(self.states)
        wrong = ~sp.correct[:, cols]
        loss = sp.stop_loss[:, cols]
        cost = sp.costs[:, cols]
        n_sensors = sp.n_sensors[cols]
        out = []
        for tau in self.thresholds:
            j = stop_positions(confidence, tau)
            out.append(
                {
                    "avg_cost": float(cost[rows, j].mean()),
                    "avg_sensors": float(n_sensors[j].mean()),
                    "error": float(wrong[rows, j].mean()),
                    "loss": float(loss[rows, j].mean()),
                    "threshold": float(tau),
                }
            )
        frame = pd.DataFrame(out)
        frame["method"] = "cascade"
        frame["split"] = sp.split
        frame["cost_scale"] = np.nan
        frame["state"] = pd.array([pd.NA] * len(frame), dtype="Int64")
        frame["sensors"] = [self.sensor_order] * len(frame)
        return frame[FRAME_COLUMNS]

    # ---------------------------------------------------------- deployment
    def trace(self, X: pd.DataFrame, *, sample_costs: Any = None) -> pd.DataFrame:
        """One row per example: what the cascade bought, paid and predicted.

        Rows are processed as in deployment: a prefix's classifier runs only on
        the rows still undecided, reading only the sensors bought so far.

        Returns
        -------
        DataFrame with ``prediction``, ``acquired`` (sensor names in order),
        ``n_sensors``, ``cost`` (per example with ``sample_costs``),
        ``stop_state`` (DAG state index) and ``confidence`` (top-class
        probability at the stop), indexed like ``X``.
        """
        Xv = check_features(X, self.spec)
        n = len(Xv)
        costs = check_sample_costs(sample_costs, self.spec, n)
        stop = np.zeros(n, dtype=np.intp)
        conf = np.zeros(n)
        pred = np.zeros(n, dtype=np.intp)
        active = np.arange(n)
        last = len(self.states) - 1
        for j, k in enumerate(self.states):
            if active.size == 0:
                break
            proba = self.bank.predict_proba(Xv[active], k)
            top = _top_proba(proba)
            done = np.ones(len(active), bool) if j == last else top >= self.threshold
            rows = active[done]
            stop[rows], conf[rows] = j, top[done]
            pred[rows] = decide(proba[done], self.loss_matrix)
            active = active[~done]
        member = self.dag.membership(self.states).astype(float)  # (P, M)
        if costs is None:
            row_cost = (member @ self.spec.cost_vector)[stop]
        else:
            row_cost = np.einsum("nm,nm->n", costs, member[stop])
        acquired = [
            tuple(self.sensor_order[: int(member[j].sum())]) for j in range(last + 1)
        ]
        return pd.DataFrame(
            {
                "prediction": self.classes[pred],
                "acquired": [acquired[j] for j in stop],
                "n_sensors": member.sum(axis=1).astype(int)[stop],
                "cost": row_cost,
                "stop_state": np.asarray(self.states)[stop],
                "confidence": conf,
            },
            index=X.index,
        )

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Class labels of the rows of ``X`` at the operating threshold."""
        return self.trace(X)["prediction"].to_numpy()


# ------------------------------------------------------------------ building
def check_threshold(threshold: Any, caller: str) -> None:
    """Refuse a ``threshold`` that is not a number (any real, not NaN)."""
    if isinstance(threshold, bool) or not isinstance(threshold, Real):
        raise TypeError(f"{caller}: threshold must be a number; got {threshold!r}.")
    if math.isnan(threshold):
        raise ValueError(f"{caller}: threshold must be a number; got {threshold!r}.")


def check_n_thresholds(
    n_thresholds: Any, name: str = "n_thresholds", caller: str = "fit_cascade"
) -> int:
    """``n_thresholds`` as an int in 2..``MAX_N_THRESHOLDS``, or a
    TypeError/ValueError naming it (``name``, of ``caller``)."""
    check_params(caller, {name: [int_in(2, MAX_N_THRESHOLDS)]}, **{name: n_thresholds})
    return int(n_thresholds)


def cascade_from_view(
    bank: Any,
    dag: SensorDAG,
    spec: SensorSpec,
    classes: np.ndarray,
    train: StatePredictions,
    *,
    loss_matrix: np.ndarray | None = None,
    n_thresholds: int = DEFAULT_N_THRESHOLDS,
) -> ConfidenceCascade:
    """A :class:`ConfidenceCascade` from the out-of-fold view of the bank's
    training rows (as made by ``state_predictions(..., out_of_fold=True)``).

    The order and the thresholds are chosen on ``train``; thresholds that give
    the same training stops as a smaller one are dropped (they repeat a point).
    """
    n_thresholds = check_n_thresholds(n_thresholds)
    units, states = greedy_order(
        dag, train.stop_loss.mean(axis=0), train.costs.mean(axis=0)
    )
    cascade = ConfidenceCascade(
        bank=bank,
        dag=dag,
        spec=spec,
        classes=np.asarray(classes),
        units=units,
        states=states,
        thresholds=np.empty(0),
        loss_matrix=loss_matrix,
    )
    # The view's out-of-fold probabilities: a many-sensor bank keeps none
    # of its own (the view asked its states for them).
    conf = cascade.oof_confidences(train.proba)
    kept: list[float] = []
    previous = None
    for tau in threshold_grid(conf, n_thresholds):
        stops = stop_positions(conf, tau)
        if previous is None or not np.array_equal(stops, previous):
            kept.append(float(tau))
            previous = stops
    cascade.thresholds = np.asarray(kept)
    cascade.threshold = kept[-1]
    cascade.train_points = cascade.curve(train, conf)
    return cascade


def fit_cascade(
    model: BudgetDAGClassifier,
    X: pd.DataFrame,
    y: Any,
    *,
    sample_costs: Any = None,
    n_thresholds: int = DEFAULT_N_THRESHOLDS,
) -> ConfidenceCascade:
    """The confidence cascade of a fitted model's classifier bank.

    Parameters
    ----------
    model : fitted BudgetDAGClassifier
    X, y : the model's training data (the bank's out-of-fold predictions on
        them choose the order and the thresholds).
    sample_costs : DataFrame or array (rows x sensors), optional
        Example-dependent costs of the training rows.
    n_thresholds : int, default=20
        Quantiles of the out-of-fold confidences used as thresholds (0 and 1
        are added; thresholds repeating a point are dropped), at most
        ``MAX_N_THRESHOLDS`` (1000).

    Returns
    -------
    ConfidenceCascade
        Operating at its largest threshold; see :meth:`ConfidenceCascade.at`
        and :meth:`ConfidenceCascade.for_budget`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from budgetdag_core import BudgetDAGClassifier, SensorSpec
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(300, 2)), columns=["a", "b"])
    >>> y = (X["a"] + 0.2 * X["b"] > 0).astype(int)
    >>> spec = SensorSpec({"a": ["a"], "b": ["b"]}, {"a": 1.0, "b": 1.0})
    >>> model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    >>> cascade = fit_cascade(model, X, y)
    >>> cascade.sensor_order
    ('a', 'b')
    >>> cascade.at(0.9).trace(X.head(3))["acquired"].tolist()
    [('a', 'b'), ('a',), ('a',)]
    """
    check_n_thresholds(n_thresholds)
    check_is_fitted(model)
    train = state_predictions(model, X, y, sample_costs=sample_costs, out_of_fold=True)
    return cascade_from_view(
        model.bank_,
        model.sensor_dag_,
        model.spec_,
        model.classes_,
        train,
        loss_matrix=check_loss_matrix(model.loss_matrix, len(model.classes_)),
        n_thresholds=n_thresholds,
    )


def cascade_points(
    model: BudgetDAGClassifier,
    X: pd.DataFrame,
    y: Any,
    *,
    X_test: pd.DataFrame | None = None,
    y_test: Any = None,
    sample_costs: Any = None,
    test_sample_costs: Any = None,
    n_thresholds: int = DEFAULT_N_THRESHOLDS,
) -> pd.DataFrame:
    """The confidence cascade's cost-error points, as trade-off frame rows.

    Parameters
    ----------
    model : fitted BudgetDAGClassifier
    X, y : the model's training data: order and thresholds are chosen on the
        bank's out-of-fold predictions (split "train").
    X_test, y_test : optional
        A test split: each threshold applied with the refit bank (split "test").
    sample_costs, test_sample_costs : example-dependent costs, optional.
    n_thresholds : int, default=20
        As for :func:`fit_cascade` (at most ``MAX_N_THRESHOLDS``).

    Returns
    -------
    DataFrame
        Method ``cascade``, one row per threshold and split, with the frame
        columns of :func:`budgetdag_core.tradeoff_curve` (``threshold`` holds
        tau, ``sensors`` the acquisition order).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core.tradeoff import cascade_points
    >>> points = cascade_points(model, demo.X_train, demo.y_train,
    ...                         X_test=demo.X_test, y_test=demo.y_test)
    >>> list(points["method"].unique()), sorted(points["split"].unique())
    (['cascade'], ['test', 'train'])
    """
    if (X_test is None) != (y_test is None):
        raise ValueError("Give both X_test and y_test, or neither.")
    check_n_thresholds(n_thresholds, caller="cascade_points")
    cascade = fit_cascade(
        model, X, y, sample_costs=sample_costs, n_thresholds=n_thresholds
    )
    parts = [cascade.train_points]
    if X_test is not None:
        sp = state_predictions(model, X_test, y_test, sample_costs=test_sample_costs)
        parts.append(cascade.curve(sp))
    return pd.concat(parts, ignore_index=True)
