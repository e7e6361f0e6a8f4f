"""Tables that summarise a fitted model for people: flow, paths, baselines, traces.

Pure pandas over the estimator's outputs (``flow``, ``trace``, ``evaluate``,
``evaluate_states``), shared by the app and notebooks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

NO_SENSOR = "(none)"


def _names(sensors: Sequence[str]) -> str:
    return " + ".join(sensors) if len(sensors) else NO_SENSOR


def flow_table(graph: nx.DiGraph) -> pd.DataFrame:
    """One row per DAG state of a ``model.flow(X, y)`` graph.

    Columns: ``state``, ``sensors`` (names joined by ``+``), ``n_sensors``,
    ``arrived`` (examples that reach the state), ``stopped`` (classified there),
    ``stop_share`` (stopped / arrived) and, when the graph has them, ``errors``
    and ``error_rate`` (among the examples that stop there; a regressor's
    graph: their mean loss).
    """
    rows = []
    for k, data in graph.nodes(data=True):
        sensors = tuple(data.get("sensors", ()))
        row = {
            "state": int(k),
            "sensors": _names(sensors),
            "n_sensors": len(sensors),
            "arrived": int(data.get("arrived", 0)),
            "stopped": int(data.get("stopped", 0)),
        }
        if "errors" in data:
            row["errors"] = int(data["errors"])
        elif "loss" in data:  # a regressor's summed loss of the stops
            row["loss"] = float(data["loss"])
        rows.append(row)
    table = pd.DataFrame(rows).sort_values(["n_sensors", "state"], ignore_index=True)
    arrived = table["arrived"].replace(0, np.nan)
    table["stop_share"] = table["stopped"] / arrived
    stopped = table["stopped"].replace(0, np.nan)
    if "errors" in table:
        table["error_rate"] = table["errors"] / stopped
    elif "loss" in table:  # a regressor's: the mean loss of the stops
        table["error_rate"] = table.pop("loss") / stopped
    return table


def edge_table(graph: nx.DiGraph) -> pd.DataFrame:
    """One row per DAG edge that examples took: from, to, sensor(s) bought, count."""
    rows = []
    for u, v, data in graph.edges(data=True):
        count = int(data.get("count", 0))
        if not count:
            continue
        bought = data.get("added")
        if bought is None:
            before = set(graph.nodes[u].get("sensors", ()))
            bought = [s for s in graph.nodes[v].get("sensors", ()) if s not in before]
        rows.append(
            {
                "from": _names(tuple(graph.nodes[u].get("sensors", ()))),
                "to": _names(tuple(graph.nodes[v].get("sensors", ()))),
                "bought": _names(bought),
                "examples": count,
            }
        )
    columns = ["from", "to", "bought", "examples"]
    return pd.DataFrame(rows, columns=columns).sort_values(
        "examples", ascending=False, ignore_index=True
    )


def path_table(
    trace: pd.DataFrame, y_true: Sequence | None = None, loss: str | None = None
) -> pd.DataFrame:
    """How often each acquisition sequence occurs in a ``trace``, most frequent first.

    Columns: ``sequence`` (sensors in acquisition order, ``" > "``-joined),
    ``examples``, ``share``, ``cost`` (mean) and, with ``y_true``, ``error``:
    the error rate, or with ``loss`` (a regressor's ``"squared"`` or
    ``"absolute"``) the mean loss of the predictions.
    """
    frame = pd.DataFrame(
        {
            "sequence": [
                " > ".join(a) if len(a) else NO_SENSOR for a in trace["acquired"]
            ],
            "cost": trace["cost"].to_numpy(),
        }
    )
    if y_true is not None and loss is not None:
        diff = trace["prediction"].to_numpy(float) - np.asarray(y_true, dtype=float)
        frame["error"] = diff**2 if loss == "squared" else np.abs(diff)
    elif y_true is not None:
        frame["error"] = trace["prediction"].to_numpy() != np.asarray(y_true)
    agg = {"examples": ("cost", "size"), "cost": ("cost", "mean")}
    if y_true is not None:
        agg["error"] = ("error", "mean")
    out = frame.groupby("sequence", sort=False).agg(**agg).reset_index()
    out.insert(2, "share", out["examples"] / max(len(frame), 1))
    return out.sort_values(
        ["examples", "sequence"], ascending=[False, True], ignore_index=True
    )


def baseline_table(metrics: Mapping[str, float], states: pd.DataFrame) -> pd.DataFrame:
    """The policy and every fixed sensor subset, by average cost.

    The one policy-vs-baselines table: the Trade-off page's summary and the
    Train page's :func:`comparison_table` are read from it.

    ``metrics`` is ``model.evaluate(X, y)``, ``states`` is
    ``model.evaluate_states(X, y)`` on the same rows. Columns: ``model``,
    ``sensors``, ``avg_cost``, ``error``, ``n_sensors`` (average for the
    policy), ``kind`` ("policy" or "fixed subset") and ``policy_dominates``:
    the policy is at most as costly and at most as wrong, and strictly better
    in one of the two.
    """
    fixed = pd.DataFrame(
        {
            "model": [f"fixed: {_names(s)}" for s in states["sensors"]],
            "sensors": [_names(s) for s in states["sensors"]],
            "avg_cost": states["avg_cost"].astype(float),
            "error": states["error"].astype(float),
            "n_sensors": [len(s) for s in states["sensors"]],
            "kind": "fixed subset",
        }
    )
    cost, error = float(metrics["avg_cost"]), float(metrics["error"])
    fixed["policy_dominates"] = (
        (cost <= fixed["avg_cost"])
        & (error <= fixed["error"])
        & ((cost < fixed["avg_cost"]) | (error < fixed["error"]))
    )
    policy = pd.DataFrame(
        [
            {
                "model": "BudgetDAG policy",
                "sensors": "adaptive",
                "avg_cost": cost,
                "error": error,
                "n_sensors": float(metrics.get("avg_sensors", float("nan"))),
                "kind": "policy",
                "policy_dominates": False,
            }
        ]
    )
    return pd.concat([policy, fixed], ignore_index=True).sort_values(
        ["avg_cost", "error"], ignore_index=True, kind="stable"
    )


def comparison_table(
    metrics: Mapping[str, float], states: pd.DataFrame, n_sensors: int
) -> pd.DataFrame:
    """The policy against the no-sensor and the largest fixed subset, from
    :func:`baseline_table` (same arguments; ``n_sensors``: the spec's count).

    Indexed by ``model``; columns ``test error``, ``avg cost``, ``avg sensors``
    and ``cost vs all sensors``.
    """
    table = baseline_table(metrics, states)
    fixed = table[table["kind"] == "fixed subset"]
    full = fixed.loc[fixed["n_sensors"].idxmax()]
    none = fixed.loc[fixed["n_sensors"].idxmin()]
    # Over sensor subsets without the all-sensor one, the largest state is the
    # union of the subsets, which may leave sensors out.
    everything = (
        "All sensors"
        if int(full["n_sensors"]) == n_sensors
        else f"All selected subsets ({int(full['n_sensors'])} sensors)"
    )
    policy = table[table["kind"] == "policy"].iloc[0]
    names = ["BudgetDAG policy", everything, "No sensor (class priors)"]
    rows = pd.DataFrame([policy, full, none]).assign(model=names)
    out = rows.set_index("model")[["error", "avg_cost", "n_sensors"]].astype(float)
    out = out.rename(
        columns={
            "error": "test error",
            "avg_cost": "avg cost",
            "n_sensors": "avg sensors",
        }
    )
    all_cost = float(full["avg_cost"])
    out["cost vs all sensors"] = (
        out["avg cost"] / all_cost if all_cost > 0 else float("nan")
    )
    return out


def trace_for_export(
    trace: pd.DataFrame, y_true: Sequence | None = None, *, regression: bool = False
) -> pd.DataFrame:
    """A model's ``trace`` made CSV-friendly: acquired sensors as ``"a > b"``.

    The first column, ``row``, is the trace's index (the row id of the table
    traced), so each line can be matched to its example. With ``y_true``,
    adds ``label`` and ``correct`` columns after ``prediction`` (a
    ``regression``'s: ``target`` and ``error``, prediction minus target).
    """
    out = trace.copy()
    out["acquired"] = [" > ".join(a) for a in out["acquired"]]
    if y_true is not None and regression:
        y = np.asarray(y_true, dtype=float)
        out.insert(1, "target", y)
        out.insert(2, "error", out["prediction"].to_numpy(dtype=float) - y)
    elif y_true is not None:
        y = np.asarray(y_true)
        out.insert(1, "label", y)
        out.insert(2, "correct", out["prediction"].to_numpy() == y)
    out.insert(0, "row", trace.index.to_numpy())
    return out


# Spreadsheets run a cell that starts with one of these as a formula
# (``=HYPERLINK(...)``, ``=cmd|...``); tab and CR hide such a start.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _escape_cell(value: Any) -> Any:
    if (
        isinstance(value, str)
        and value.startswith(_FORMULA_STARTS)
        and not _PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` safe to open in a spreadsheet.

    String cells (and column names) that start with ``=``, ``+``, ``-``, ``@``,
    a tab or a carriage return get a leading ``'``, so a spreadsheet shows them
    as text instead of running them as formulas. Numbers stay numbers, and so
    do strings that are plain numbers (``"-1.5"``): a negative number is not a
    formula.

    Examples
    --------
    >>> frame = pd.DataFrame({"label": ["=cmd|' /C calc'!A0", "-1", "ok"],
    ...                       "cost": [-1.0, 2.0, 3.0]})
    >>> escape_formulas(frame)["label"].tolist()
    ["'=cmd|' /C calc'!A0", '-1', 'ok']
    >>> escape_formulas(frame)["cost"].tolist()
    [-1.0, 2.0, 3.0]
    """
    out = frame.copy()
    out.columns = [_escape_cell(c) for c in out.columns]
    for i in range(out.shape[1]):
        column = out.iloc[:, i]
        if column.dtype == object or isinstance(
            column.dtype, (pd.StringDtype, pd.CategoricalDtype)
        ):
            out.isetitem(i, column.astype(object).map(_escape_cell))
    return out


def to_csv_safe(frame: pd.DataFrame) -> str:
    """``frame.to_csv(index=False)`` after :func:`escape_formulas` (for downloads)."""
    return escape_formulas(frame).to_csv(index=False)
