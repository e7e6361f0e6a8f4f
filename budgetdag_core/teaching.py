"""Graph-Reduce, node by node: the cost tables a fitted model learned from.

Graph-Reduce (Alg. 1 of the paper) visits the states leaf to root. At state k
each training example has one cost per action: stopping costs its out-of-fold
loss there, acquiring costs ``cost_scale`` x the sensor cost plus the
cost-to-go of the child, i.e. what the already-learned policies below will
spend and lose on it. The node's policy is a cost-sensitive classifier fitted
on that table. :func:`graph_reduce_steps` replays that walk on a fitted
model's training data (``graph_reduce(..., replay=..., record=True)``, the one
implementation) so a teacher can step through the tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .explain import action_names
from .validation import check_params, int_in

__all__ = [
    "ReduceStep",
    "cost_tables",
    "graph_reduce_steps",
    "pending_states",
]


@dataclass
class ReduceStep:
    """One node of the leaf-to-root walk.

    Attributes
    ----------
    state : int
    sensors : tuple of str
        Sensors held at the state.
    order : int
        Position in the walk (0 = first node reduced, a leaf).
    actions : list of str
        "stop", then "acquire <sensors>" per child.
    costs : DataFrame
        For the sample rows (index = labels of ``X``): one column per action
        (loss units: stop loss, or ``cost_scale`` x cost + child's
        cost-to-go), then ``picked`` (the learned policy's action), ``best``
        (the cheapest action) and ``cost_to_go`` (cost of the picked action).
    agreement : float
        Share of all training rows where the policy picks a cheapest action.
    mean_cost_to_go : float
        Average cost-to-go at this state over the training rows.
    action_shares : dict
        Action name -> share of training rows the policy sends that way.
    arrived : int
        Training rows that reach the state under the fitted policies.
    arrivals : DataFrame
        Up to ``rows`` of those (index = labels of ``X``), one line each:
        ``stop`` (its stop cost), ``picked`` and ``picked_cost``,
        ``cheapest`` and ``cheapest_cost``, ``cost_to_go``; readable with
        any number of actions.
    action_summary : DataFrame
        One line per action over the arriving rows: ``action``, ``picked``
        (rows the policy sends there), ``cheapest`` (rows for which it is
        the cheapest), ``mean_cost``; most picked first.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core.teaching import graph_reduce_steps
    >>> steps = graph_reduce_steps(model, demo.X_train, demo.y_train, rows=3)
    >>> root = steps[-1]  # the walk ends at the root, the empty state
    >>> root.order, root.sensors, root.actions[0]
    (7, (), 'stop')
    >>> list(root.costs.columns[-3:])
    ['picked', 'best', 'cost_to_go']
    """

    state: int
    sensors: tuple[str, ...]
    order: int
    actions: list[str]
    costs: pd.DataFrame
    agreement: float
    mean_cost_to_go: float
    action_shares: dict[str, float]
    arrived: int = 0
    arrivals: pd.DataFrame = field(default_factory=pd.DataFrame)
    action_summary: pd.DataFrame = field(default_factory=pd.DataFrame)


def cost_tables(
    model: Any, X: pd.DataFrame, y: Any, *, sample_costs: Any = None
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Graph-Reduce's per-state cost tables of a fitted model.

    The record of ``model.graph_reduce_record`` (the fitted policies replayed
    through :func:`~budgetdag_core.graph_reduce`), as a tuple.

    Parameters
    ----------
    model : fitted BudgetDAGClassifier
    X, y : the training data the model was fitted on.
    sample_costs : optional
        The example-dependent costs given to ``fit``, if any.

    Returns
    -------
    tables : list of ndarray
        Per state, the (n_samples, 1 + n_children) cost table (on a grown DAG
        the rows that reached the state: ``model.graph_reduce_record``'s
        ``rows``).
    cost_to_go : ndarray (n_samples, n_states)
        Each row's cost-to-go at each state under the learned policies; the
        root column equals ``model.train_cost_to_go_``.
    actions : ndarray (n_samples, n_states)
        The action each state's policy picks for each row.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> import numpy as np
    >>> from budgetdag_core.teaching import cost_tables
    >>> tables, cost_to_go, actions = cost_tables(model, demo.X_train, demo.y_train)
    >>> len(tables), tables[0].shape  # the root: stop, then one column per child
    (8, (200, 4))
    >>> bool(np.allclose(cost_to_go[:, 0], model.train_cost_to_go_))
    True
    """
    record = model.graph_reduce_record(X, y, sample_costs=sample_costs)
    return record.tables, record.cost_to_go, record.actions


def graph_reduce_steps(
    model: Any,
    X: pd.DataFrame,
    y: Any,
    *,
    rows: int | list[int] = 5,
    random_state: int | None = 0,
    sample_costs: Any = None,
) -> list[ReduceStep]:
    """The Graph-Reduce walk of a fitted model, leaf to root, one step per state.

    Parameters
    ----------
    model : fitted BudgetDAGClassifier
    X, y : the training data the model was fitted on.
    rows : int or list of int, default=5
        How many sample rows to show (drawn with ``random_state``), or their
        positions in ``X``.
    random_state : int or None
        Seed of the sample.
    sample_costs : optional
        The example-dependent costs given to ``fit``, if any.

    Returns
    -------
    list of ReduceStep
        In the order Graph-Reduce reduces the states (deepest layer first).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 10)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3,
    ...                             random_state=0).fit(demo.X_train, demo.y_train)
    >>> steps = graph_reduce_steps(model, demo.X_train, demo.y_train, rows=3)
    >>> steps[-1].state, steps[-1].costs.shape[0]
    (0, 3)
    """
    check_params(
        "graph_reduce_steps",
        {"rows": [int_in(1), "array-like"], "random_state": [int_in(0), None]},
        rows=rows,
        random_state=random_state,
    )
    record = model.graph_reduce_record(X, y, sample_costs=sample_costs)
    n = len(X)
    if isinstance(rows, int | np.integer):
        rng = np.random.default_rng(random_state)
        picked_rows = np.sort(rng.choice(n, size=min(int(rows), n), replace=False))
    else:
        picked_rows = np.asarray(rows).reshape(-1)
        if picked_rows.dtype.kind not in "iu":  # 1.5 or "3" is no position
            raise ValueError(
                f"rows must be a count or a list of row positions; got {rows!r:.60}."
            )
        bad = picked_rows[(picked_rows < 0) | (picked_rows >= n)]
        if bad.size:
            raise ValueError(f"Row position {int(bad[0])} is outside 0..{n - 1}.")
    dag = model.sensor_dag_
    path = model.route(X).path
    order = [k for layer in reversed(dag.layers()) for k in layer]
    return [
        _step(record, model, X, k, i, picked_rows, path, random_state)
        for i, k in enumerate(order)
    ]


def _step(
    record: Any,
    model: Any,
    X: pd.DataFrame,
    k: int,
    order: int,
    picked_rows: np.ndarray,
    path: np.ndarray,
    random_state: int | None,
) -> ReduceStep:
    """The :class:`ReduceStep` of state ``k``. Its table holds every training
    row, or on a grown DAG the rows that reached the state (``record.rows``):
    the sample rows shown are those of them, or a sample of its own when none
    of them reached it."""
    n = len(X)
    everyone = record.rows is None
    rows_k = np.arange(n) if everyone else np.asarray(record.rows[k], dtype=np.intp)
    at = np.full(n, -1, dtype=np.intp)  # a row's place in the state's table
    at[rows_k] = np.arange(len(rows_k))
    C = record.tables[k]
    names = action_names(model, k)
    act = record.actions[rows_k, k]
    shown = picked_rows[at[picked_rows] >= 0]
    if not len(shown) and len(rows_k):
        rng = np.random.default_rng(random_state)
        size = min(len(picked_rows), len(rows_k))
        shown = np.sort(rng.choice(rows_k, size=size, replace=False))
    C_shown, act_shown = C[at[shown]], record.actions[shown, k]
    frame = pd.DataFrame(C_shown, columns=names, index=X.index[shown])
    frame["picked"] = [names[a] for a in act_shown]
    frame["best"] = [names[a] for a in C_shown.argmin(axis=1)]
    frame["cost_to_go"] = record.cost_to_go[shown, k]
    m = max(len(rows_k), 1)
    shares = np.bincount(act, minlength=len(names)) / m
    picked_cost = C[np.arange(len(rows_k)), act]
    arriving = np.flatnonzero((path == k).any(axis=1) & (at >= 0))
    ctg = np.full(n, np.nan)
    ctg[rows_k] = record.cost_to_go[rows_k, k]
    full_C = C if everyone else _spread(C, at)
    full_act = record.actions[:, k].clip(0)
    return ReduceStep(
        state=k,
        sensors=model.sensor_dag_.state_names(k),
        order=order,
        actions=names,
        costs=frame,
        agreement=float(np.mean(np.isclose(picked_cost, C.min(axis=1))))
        if len(rows_k)
        else 1.0,
        mean_cost_to_go=float(record.cost_to_go[rows_k, k].mean())
        if len(rows_k)
        else float("nan"),
        action_shares=dict(zip(names, map(float, shares), strict=True)),
        **_arrivals(
            arriving,
            full_C,
            full_act,
            ctg,
            names,
            X.index,
            len(picked_rows),
            random_state,
        ),
    )


def _spread(C: np.ndarray, at: np.ndarray) -> np.ndarray:
    """A state's table over all rows (NaN where a row has none), from its
    table over some rows (``at``: each row's place in it, -1 if absent)."""
    out = np.full((len(at), C.shape[1]), np.nan)
    out[at >= 0] = C[at[at >= 0]]
    return out


def pending_states(steps: list[ReduceStep], current: int) -> set[int]:
    """The states not reduced yet when the walk is at step ``current``.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 10)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3,
    ...                             random_state=0).fit(demo.X_train, demo.y_train)
    >>> steps = graph_reduce_steps(model, demo.X_train, demo.y_train, rows=3)
    >>> sorted(pending_states(steps, 5))  # a one-sensor state and the root
    [0, 3]
    """
    check_params(
        "pending_states", {"current": [int_in(0, max(len(steps) - 1, 0))]},
        current=current,
    )  # fmt: skip
    return {step.state for step in steps[current + 1 :]}


def _arrivals(
    arriving: np.ndarray,
    C: np.ndarray,
    act: np.ndarray,
    cost_to_go: np.ndarray,
    names: list[str],
    index: pd.Index,
    n_rows: int,
    random_state: int | None,
) -> dict[str, Any]:
    """The arriving rows of one state: a sample of them and, per action, how
    many the policy sends there and for how many it is the cheapest."""
    cheapest = C[arriving].argmin(axis=1) if len(arriving) else np.array([], int)
    picked = act[arriving]
    summary = pd.DataFrame(
        {
            "action": names,
            "picked": np.bincount(picked, minlength=len(names)),
            "cheapest": np.bincount(cheapest, minlength=len(names)),
            "mean_cost": C[arriving].mean(axis=0) if len(arriving) else np.nan,
        }
    ).sort_values(["picked", "cheapest"], ascending=False, kind="stable")
    rng = np.random.default_rng(random_state)
    sample = np.sort(
        rng.choice(len(arriving), size=min(n_rows, len(arriving)), replace=False)
    )
    rows = arriving[sample]
    frame = pd.DataFrame(
        {
            "stop": C[rows, 0],
            "picked": [names[a] for a in act[rows]],
            "picked_cost": C[rows, act[rows]],
            "cheapest": [names[a] for a in cheapest[sample]],
            "cheapest_cost": C[rows].min(axis=1),
            "cost_to_go": cost_to_go[rows],
        },
        index=index[rows],
    )
    return {
        "arrived": len(arriving),
        "arrivals": frame,
        "action_summary": summary.reset_index(drop=True),
    }
