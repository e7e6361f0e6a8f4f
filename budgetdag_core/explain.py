"""What a fitted policy does: one example's path, and what happens at one node.

Both are plain data (DataFrames, dicts) for the app's tables and for notebooks;
the figures live in :mod:`budgetdag_core.plotting`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._bounded_io import short_repr
from .graph_reduce import STOP
from .validation import check_features, check_index, check_labels

__all__ = [
    "PathResult",
    "action_names",
    "node_details",
    "path_of",
    "state_label",
    "subsets_in",
]


@dataclass
class PathResult:
    """One example walked through the policy, as deployment would do it.

    Attributes
    ----------
    states : list of int
        State indices visited, from the empty state to the stop state (feed it
        to ``dag_figure(..., highlight_path=...)``).
    decisions : DataFrame
        One row per decision: ``step``, ``state``, ``sensors_held`` (names),
        ``action`` ("acquire" or "stop"), ``acquired`` (sensor names bought
        by this decision), ``cost_so_far`` (after the decision),
        ``prediction`` and ``confidence`` of the state's classifier.
    acquired : tuple of str
        Sensors acquired, in order.
    cost : float
        Acquisition cost paid.
    prediction : Any
        Final prediction.
    proba : dict
        Final class probabilities (empty for a model without them).
    scores : list of Series or None
        Per decision, the candidates' scores the policy had then (see
        ``PolicySession.action_scores``), None where it had none.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core import path_of
    >>> result = path_of(model, demo.X_test.iloc[[0]])
    >>> result.acquired, result.cost
    (('precise',), 4.0)
    >>> list(result.decisions["action"])
    ['acquire', 'stop']
    """

    states: list[int]
    decisions: pd.DataFrame
    acquired: tuple[str, ...]
    cost: float
    prediction: Any
    proba: dict[Any, float] = field(default_factory=dict)
    scores: list[pd.Series | None] = field(default_factory=list)


def _row_values(model: Any, row: Any) -> dict[str, float]:
    """The spec's columns of a one-row DataFrame, a Series or a mapping."""
    if isinstance(row, pd.DataFrame):
        if len(row) != 1:
            raise ValueError(f"path_of needs one row; got {len(row)} rows.")
        row = row.iloc[0]
    if isinstance(row, pd.Series):
        row = row.to_dict()
    if not isinstance(row, Mapping):
        raise ValueError(
            "row must be a one-row DataFrame, a Series or a dict column -> value; "
            f"got {type(row).__name__}."
        )
    values = {str(k): v for k, v in row.items()}
    missing = [c for c in model.spec_.columns if c not in values]
    if missing:
        raise ValueError(f"The row lacks column(s) {missing[:10]}.")
    return values


def path_of(
    model: Any, row: Any, *, sample_costs: Mapping[str, float] | None = None
) -> PathResult:
    """Run one example through the one-at-a-time session, recording each step.

    Only the columns of acquired sensors are ever read, exactly as in
    deployment (``model.start()``, ``next_sensor``, ``observe``).

    Parameters
    ----------
    model : fitted BudgetDAGClassifier
    row : one-row DataFrame, Series or dict column -> value
        The example; values of sensors the policy never asks for may be
        anything (they are not read).
    sample_costs : dict sensor -> cost, optional
        This example's acquisition costs.

    Returns
    -------
    PathResult

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 10)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3,
    ...                             random_state=0).fit(demo.X_train, demo.y_train)
    >>> result = path_of(model, demo.X_test.iloc[[0]])
    >>> result.states[0], result.decisions["action"].iloc[-1]
    (0, 'stop')
    """
    values = _row_values(model, row)
    session = model.start(sample_costs)
    spec = model.spec_
    has_proba = hasattr(model, "classes_")
    states = [session.state]
    rows: list[dict[str, Any]] = []
    step_state = session.state
    held: tuple[str, ...] = ()

    def describe(state: int) -> tuple[Any, float]:
        if not has_proba:
            return session.predict(), float("nan")
        proba = model.bank_.predict_proba(session.values.reshape(1, -1), state)[0]
        return model.labels_from_proba(proba[None])[0], float(proba.max())

    # The hook for the candidates' scores: any session may define it.
    score_now = getattr(session, "action_scores", None)
    scores: list[pd.Series | None] = []
    while True:
        scores.append(score_now() if score_now is not None else None)
        sensor = session.next_sensor()
        decision = session.decisions[-1]
        prediction, confidence = describe(step_state)
        if sensor is None:
            rows.append(
                {
                    "step": len(rows) + 1,
                    "state": step_state,
                    "sensors_held": held,
                    "action": "stop",
                    "acquired": (),
                    "cost_so_far": session.cost,
                    "prediction": prediction,
                    "confidence": confidence,
                }
            )
            break
        bought = tuple(decision["sensors"])
        for name in bought:
            cols = spec.groups[name]
            session.observe(name, {c: values[c] for c in cols})
        rows.append(
            {
                "step": len(rows) + 1,
                "state": step_state,
                "sensors_held": held,
                "action": "acquire",
                "acquired": bought,
                "cost_so_far": session.cost,
                "prediction": prediction,
                "confidence": confidence,
            }
        )
        step_state = session.state
        held = tuple(session.acquired)
        states.append(step_state)
    proba = session.predict_proba() if has_proba else {}
    return PathResult(
        states=states,
        decisions=pd.DataFrame(rows),
        acquired=tuple(session.acquired),
        cost=float(session.cost),
        prediction=session.predict(),
        proba=proba,
        scores=scores,
    )


#: A state's label lists at most this many sensors by name (models over
#: sensor subsets name the subsets of a wider state).
MAX_NAMES_IN_LABEL = 4


def _over_subsets(model: Any) -> bool:
    return getattr(model, "subset_selection_", None) is not None


def _state_index(model: Any, state: Any) -> int:
    """``state`` as an index of the model's DAG, or a ``ValueError`` naming it."""
    n_states = model.sensor_dag_.n_states
    if (
        isinstance(state, bool)
        or not isinstance(state, int | np.integer)
        or not 0 <= state < n_states
    ):
        raise ValueError(
            f"state must be a state index in 0..{n_states - 1}; got "
            f"{short_repr(state)}."
        )
    return int(state)


def subsets_in(model: Any, state: int) -> list[int]:
    """The selected sensor subsets (1-based, ``S1`` is 1) that ``state`` holds.

    Empty for a model over the full DAG, whose units are single sensors.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(100, 10)
    >>> model = BudgetDAGClassifier(demo.spec, cv=2, n_subsets=2).fit(
    ...     demo.X_train, demo.y_train)
    >>> subsets_in(model, model.sensor_dag_.n_states - 1)
    [1, 2]
    """
    state = _state_index(model, state)
    if not _over_subsets(model):
        return []
    dag = model.sensor_dag_
    mask = dag.states[state]
    return [j + 1 for j, um in enumerate(dag.unit_masks) if um & mask == um]


def state_label(model: Any, state: int) -> str:
    """A short name of a DAG state: its sensors, or its subsets when many.

    ``start (no sensors)``, the sensors held joined by `` + ``; for a model
    over sensor subsets, a state of more than :data:`MAX_NAMES_IN_LABEL`
    sensors is named by the subsets it holds (``subsets S1 + S3 (12
    sensors)``), the last one ``all 57 sensors``. The one wording of states:
    the app's pages and the teaching steps use it.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(100, 10)
    >>> model = BudgetDAGClassifier(demo.spec, cv=2).fit(demo.X_train, demo.y_train)
    >>> state_label(model, 0), state_label(model, 7)
    ('start (no sensors)', 'cheap_a + cheap_b + precise')
    """
    state = _state_index(model, state)
    dag = model.sensor_dag_
    names = dag.state_names(state)
    if not names:
        return "start (no sensors)"
    if not _over_subsets(model) or len(names) <= MAX_NAMES_IN_LABEL:
        return " + ".join(names)
    if len(names) == dag.n_sensors:
        return f"all {len(names)} sensors"
    held = " + ".join(f"S{j}" for j in subsets_in(model, state))
    return f"subsets {held} ({len(names)} sensors)"


def action_names(model: Any, state: int, *, short: bool = False) -> list[str]:
    """The names of the actions of the policy at ``state``, in action order.

    ``"stop"`` (action 0), then ``"acquire <sensors>"`` per child state, naming
    the real sensors the move adds. The one wording of actions: the trace,
    the Teaching tables, the decision regions and the app's labels use it.

    Parameters
    ----------
    model : fitted BudgetDAGClassifier
    state : int
        State index.
    short : bool
        Short names for narrow table columns: ``"buy <sensors>"``, or for a
        model over sensor subsets ``"buy S3"`` (the subset the move buys).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(100, 10)
    >>> X, y = demo.X_train, demo.y_train
    >>> model = BudgetDAGClassifier(demo.spec, cv=2).fit(X, y)
    >>> action_names(model, 0)
    ['stop', 'acquire cheap_a', 'acquire cheap_b', 'acquire precise']
    >>> action_names(model, 0, short=True)
    ['stop', 'buy cheap_a', 'buy cheap_b', 'buy precise']
    """
    state = _state_index(model, state)
    dag = model.sensor_dag_
    state = check_index("action_names", "state", state, len(model.policies_))
    names = ["stop"]
    for unit, child in model.policies_[state].children:
        if short and _over_subsets(model):
            names.append(f"buy S{unit + 1}")
            continue
        added = [dag.sensor_names[m] for m in dag.added_sensors(state, child)]
        names.append(("buy " if short else "acquire ") + ", ".join(added))
    return names


def _regression_node(
    model: Any,
    Xv: np.ndarray,
    y: Any,
    rows: np.ndarray,
    stops: np.ndarray,
    out: dict[str, Any],
) -> dict[str, Any]:
    """:func:`node_details`' losses and targets of a regressor's state."""
    y = np.asarray(y, dtype=float).ravel()
    if len(y) != len(Xv):
        raise ValueError(f"X has {len(Xv)} rows but y has {len(y)} targets.")
    arriving = y[rows]
    pred = model.bank_.predict(Xv[rows], out["state"]) if rows.size else arriving
    diff = np.asarray(pred, dtype=float) - arriving
    loss = np.abs(diff) if getattr(model, "loss", "squared") == "absolute" else diff**2
    if rows.size:
        out["error_if_stopped"] = float(loss.mean())
        if stops.any():
            out["error_of_stops"] = float(loss[stops].mean())
    nan = float("nan")
    out["targets"] = pd.DataFrame(
        [
            {
                "mean": float(arriving.mean()) if rows.size else nan,
                "std": float(arriving.std()) if rows.size else nan,
                "min": float(arriving.min()) if rows.size else nan,
                "max": float(arriving.max()) if rows.size else nan,
                "predicted_mean": float(np.mean(pred)) if rows.size else nan,
            }
        ]
    )
    return out


def node_details(model: Any, X: pd.DataFrame, y: Any, state: int) -> dict[str, Any]:
    """What happens at one DAG state for the examples of ``X`` that reach it.

    Parameters
    ----------
    model : fitted BudgetDAGClassifier or BudgetDAGRegressor
    X : DataFrame
        Examples to route (train or test).
    y : labels (a regressor's targets) or None
        Needed for the class mix and the errors.
    state : int
        State index (e.g. from ``clicked_states``).

    Returns
    -------
    dict
        ``state``, ``sensors`` (names), ``cost`` (spec cost of the state),
        ``arrived``, ``stopped``; ``actions``: DataFrame (``action``,
        ``child`` state or -1, ``count``, ``share``) of what the node's policy
        does with the arriving examples; ``classes``: DataFrame (``class``,
        ``arrived``, ``share``, ``error_if_stopped``) or None without ``y``;
        ``error_if_stopped``: error of this state's classifier on all arriving
        examples; ``error_of_stops``: error on those the policy stops here.
        For a regressor, these two are the mean loss (squared or absolute
        error, the model's ``loss``) of the state's regressor, ``classes``
        is None and ``targets`` (with ``y``) is a one-row DataFrame of the
        arriving examples' targets and this state's predictions of them
        (``mean``, ``std``, ``min``, ``max``, ``predicted_mean``).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core.explain import node_details
    >>> info = node_details(model, demo.X_test, demo.y_test, state=0)  # the root
    >>> info["sensors"], info["arrived"]
    ((), 50)
    >>> list(info["actions"].columns)
    ['action', 'child', 'count', 'share']
    """
    dag = model.sensor_dag_
    state = _state_index(model, state)
    rows, act = model.node_actions(X, state)
    Xv = check_features(X, model.spec_)
    policy = model.policies_[state]
    names = action_names(model, state)
    counts = np.bincount(act, minlength=len(names))
    children = [-1] + [c for _, c in policy.children]
    actions = pd.DataFrame(
        {
            "action": names,
            "child": children,
            "count": counts,
            "share": counts / max(rows.size, 1),
        }
    )
    stops_here = rows[act == STOP]
    out: dict[str, Any] = {
        "state": state,
        "sensors": dag.state_names(state),
        "cost": float(dag.membership([state])[0] @ model.spec_.cost_vector),
        "arrived": int(rows.size),
        "stopped": int(stops_here.size),
        "actions": actions,
        "classes": None,
        "error_if_stopped": float("nan"),
        "error_of_stops": float("nan"),
    }
    if y is not None and not hasattr(model, "classes_"):
        return _regression_node(model, Xv, y, rows, act == STOP, out)
    if y is None or not hasattr(model, "classes_"):
        return out
    y = np.asarray(check_labels(y, len(Xv), None))
    y_rows = y[rows]
    if rows.size:
        proba = model.bank_.predict_proba(Xv[rows], state)
        wrong = model.labels_from_proba(proba) != y_rows
        out["error_if_stopped"] = float(wrong.mean())
        if stops_here.size:
            out["error_of_stops"] = float(wrong[act == STOP].mean())
    else:
        wrong = np.zeros(0, dtype=bool)
    class_rows = []
    for c in model.classes_:
        mask = y_rows == c
        class_rows.append(
            {
                "class": c,
                "arrived": int(mask.sum()),
                "share": float(mask.mean()) if rows.size else 0.0,
                "error_if_stopped": float(wrong[mask].mean())
                if mask.any()
                else float("nan"),
            }
        )
    out["classes"] = pd.DataFrame(class_rows)
    return out
