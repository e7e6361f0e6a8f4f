"""What the policy buys, on the What-if page: the example on its image, the
candidates' scores at each step, and a class's or the test set's purchases.

The figures come from ``budgetdag_core.plotting`` (built from
``model.trace(X)``, so any model works); this module finds the image the
sensors sit on, builds the score table and lays the pictures out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from budgetdag_core import PathResult, SensorSpec
from budgetdag_core.explain import action_names
from budgetdag_core.plotting import (
    acquisition_grid_figure,
    acquisition_heatmap_figure,
    acquisition_paths_figure,
    acquisition_steps_figure,
    sensor_cells,
)

from . import dag_view, state
from .data import Dataset
from .grouping import image_positions
from .training import TrainedRun

ALL = "all test examples"
RUNNERS_UP = 2  # candidates shown beside the chosen action at each step


def sensor_grid(spec: SensorSpec) -> np.ndarray | None:
    """The image the spec's columns form (an h x w array of names), or None.

    Only images the columns' names call one: a row and a column index
    (``pixel_0_0``, ``r0c0``) or a pixel number (``px12``, ``pixel12``). Numbered
    features (landsat's ``f0 .. f35``) or a square number of columns are no
    image (the user may still lay them out, :func:`user_grid`). At least half
    the sensors must have a cell.
    """
    try:
        grid, _ = image_positions(spec.columns)
    except ValueError:
        return None
    names = [str(n) for n in grid.ravel() if n is not None]
    if min(grid.shape) < 2 or not all(map(_pixel_name, names)):
        return None
    if len(sensor_cells(spec.groups, grid)) * 2 < spec.n_sensors:
        return None
    return grid


def _pixel_name(name: str) -> bool:
    """Whether a column name reads as an image pixel (two indices, or "px"/
    "pix" and a number)."""
    return len(re.findall(r"\d+", name)) >= 2 or bool(
        re.search(r"(px|pix)\D*\d+$", name, re.IGNORECASE)
    )


def user_grid(spec: SensorSpec) -> np.ndarray | None:
    """A grid the user lays out: the columns in order, ``width`` per row.

    For sensors that sit on an image whose column names do not say so; 0
    (the default) draws no grid.
    """
    with st.expander("Draw the sensors on a grid"):
        width = st.number_input(
            "Columns per row (0: no grid)",
            min_value=0,
            max_value=len(spec.columns),
            step=1,
            key=state.W_WHATIF_GRID_WIDTH,
            help="The feature columns in table order, this many per row: e.g. 8 "
            "for an 8 x 8 image stored row by row.",
        )
    return columns_grid(spec.columns, int(width or 0))


def columns_grid(columns: list[str], width: int) -> np.ndarray | None:
    """``columns`` in order as rows of ``width`` (the last row padded with
    None); None for width 0.

    Examples
    --------
    >>> columns_grid(["a", "b", "c"], 2).tolist()
    [['a', 'b'], ['c', None]]
    """
    if width <= 0:
        return None
    rows = -(-len(columns) // width)
    cells = list(columns) + [None] * (rows * width - len(columns))
    return np.array(cells, dtype=object).reshape(rows, width)


def path_steps(result: PathResult) -> list[tuple[str, ...]]:
    """The sensors each acquire decision of a path bought (a subset step buys
    several)."""
    return [
        tuple(bought)
        for action, bought in zip(
            result.decisions["action"], result.decisions["acquired"], strict=True
        )
        if action == "acquire"
    ]


def purchase_steps(model: Any, acquired: tuple[str, ...]) -> tuple[Any, ...]:
    """A trace's ``acquired`` sensors cut into the steps that bought them.

    A model over sensor subsets buys a subset's new sensors in one step: the
    trace lists them one after the other, the DAG says where each step ends.
    For a model without subsets the sensors are returned as they are.
    """
    if getattr(model, "subset_selection_", None) is None:
        return tuple(acquired)
    dag = model.sensor_dag_
    at, i, steps = 0, 0, []
    while i < len(acquired):
        for _, child in dag.children[at]:
            added = {dag.sensor_names[m] for m in dag.added_sensors(at, child)}
            if set(acquired[i : i + len(added)]) == added:
                steps.append(tuple(acquired[i : i + len(added)]))
                i, at = i + len(added), child
                break
        else:  # not a path of the DAG: one step per sensor
            return tuple(acquired)
    return tuple(steps)


def scores_table(
    result: PathResult, labels: dict[str, str] | None = None
) -> pd.DataFrame:
    """Per decision: the action taken and its score, the best other candidates.

    ``labels`` renames actions (``ui.subsets.action_names``). Empty when the
    policy had no scores at any step.
    """
    rows = []
    for (_, decision), scores in zip(
        result.decisions.iterrows(), result.scores, strict=True
    ):
        if scores is None or scores.empty:
            continue
        lower = "lower is better" in str(scores.name)
        ranked = scores.sort_values(ascending=lower, kind="stable")
        taken = (
            "stop"
            if decision["action"] == "stop"
            else "acquire " + ", ".join(decision["acquired"])
        )
        others = [a for a in ranked.index if a != taken][:RUNNERS_UP]
        row: dict[str, Any] = {
            "step": int(decision["step"]),
            "candidates": len(scores),
            "taken": _label(taken, labels),
            "score": float(scores.get(taken, np.nan)),
        }
        for i, action in enumerate(others, start=1):
            row[f"other {i}"] = _label(action, labels)
            row[f"score {i}"] = float(scores[action])
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["score_name"] = next(
        (str(s.name) for s in result.scores if s is not None), ""
    )
    return table


def _label(action: str, labels: dict[str, str] | None) -> str:
    if labels and action in labels:
        return labels[action]
    return action.replace("acquire ", "buy ", 1)


def example_grid(
    run: TrainedRun, grid: np.ndarray, values: Mapping[str, float], result: PathResult
) -> None:
    """The example's image with the purchases numbered in order."""
    fig = acquisition_grid_figure(
        values, path_steps(result), grid, run.spec.groups, height=420
    )
    st.markdown(
        f"**The example on its {grid.shape[0]} × {grid.shape[1]} grid**: the cells "
        "bought are outlined and numbered in order; the faded cells were never seen."
    )
    st.plotly_chart(fig, key="whatif_grid", config=dag_view.CHART_CONFIG)


def scores_section(run: TrainedRun, result: PathResult) -> None:
    """The candidates' scores at each step, where the policy has them."""
    labels: dict[str, str] = {}
    if getattr(run.model, "subset_selection_", None) is not None:
        # Over sensor subsets: "buy S3", not the subset's every sensor.
        for k in result.states:
            long = action_names(run.model, k)
            labels.update(zip(long, action_names(run.model, k, short=True)))
    table = scores_table(result, labels)
    if table.empty:
        st.caption("This policy gives no scores for its candidates.")
        return
    st.markdown(
        f"**The candidates at each step**: the action taken and the best others, "
        f"scored by the node's policy ({table.attrs['score_name']})."
    )
    number = st.column_config.NumberColumn(format="%.3g")
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=min(36 * (len(table) + 1) + 3, 320),
        column_config={c: number for c in table.columns if c.startswith("score")},
    )


#: A regression's examples grouped by their target, for "what the policy buys".
TARGET_THIRDS = ("lowest third", "middle third", "highest third")


def target_thirds(y: pd.Series) -> pd.Series:
    """Each example's third of the target's values (:data:`TARGET_THIRDS`)."""
    ranks = y.rank(method="first", pct=True).to_numpy()
    return pd.Series(
        [TARGET_THIRDS[min(int(r * 3 - 1e-9), 2)] for r in ranks], index=y.index
    )


def group_of(run: TrainedRun, y: pd.Series, value: Any) -> Any:
    """The purchases' group of an example of target ``value``: its class, or
    a regression's third of the target (:func:`target_thirds`)."""
    if run.task != "regression":
        return value
    return target_thirds(y)[y == value].iloc[0] if (y == value).any() else ALL


def purchases_section(
    run: TrainedRun,
    dataset: Dataset,
    grid: np.ndarray | None,
    default_class: Any,
) -> None:
    """What the policy buys for one class or the whole test set."""
    X, y = dataset.X("test", run.spec), dataset.y("test")
    trace = run.memo(
        "trace_test_steps",
        lambda: run.model.trace(X).assign(
            acquired=lambda t: [purchase_steps(run.model, a) for a in t["acquired"]]
        ),
    )
    regression = run.task == "regression"
    if regression:  # a number per example: by thirds of the target
        y = target_thirds(y)
        classes = [ALL, *TARGET_THIRDS]
    else:
        classes = [ALL, *sorted(pd.unique(y).tolist(), key=str)]
    if st.session_state.get(state.W_WHATIF_CLASS) not in classes:
        # First visit (or other data): the example's own class.
        start = default_class if default_class in classes else ALL
        st.session_state[state.W_WHATIF_CLASS] = start
    st.markdown("#### What the policy buys")
    chosen = st.selectbox(
        "Examples",
        classes,
        key=state.W_WHATIF_CLASS,
        format_func=lambda c: c if c == ALL or regression else f"class {c}",
    )
    rows = trace if chosen == ALL else trace[(y == chosen).to_numpy()]
    if chosen == ALL:
        who = "the test set"
    else:
        who = f"the {chosen} of the target" if regression else f"class {chosen}"
    st.caption(f"{len(rows):,} examples of {who}.")
    if grid is not None:
        fig = acquisition_heatmap_figure(rows, grid, run.spec.groups, height=400)
        st.plotly_chart(fig, key="whatif_heatmap", config=dag_view.CHART_CONFIG)
        return
    steps = acquisition_steps_figure(rows, run.spec.names, max_sensors=40)
    st.markdown("**Which sensor is bought at which step** (share of the examples)")
    st.plotly_chart(steps, key="whatif_steps", config=dag_view.CHART_CONFIG)
    st.markdown("**The most common paths** (first three steps)")
    paths = acquisition_paths_figure(rows, depth=3)
    st.plotly_chart(paths, key="whatif_paths", config=dag_view.CHART_CONFIG)
