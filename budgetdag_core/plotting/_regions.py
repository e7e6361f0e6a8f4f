"""Decision regions: what one node's policy does over a grid of its inputs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..explain import action_names
from ..validation import check_features, check_labels, check_params, int_in
from ._style import (
    ACTION_COLORS,
    CLASS_COLORS,
    CLASS_SYMBOLS,
    LEGEND_TOP,
    STOP_COLOR,
    title_under_modebar,
)

#: Most grid points per axis (``grid``): the policy is asked at grid ** 2
#: points (a million at most).
MAX_GRID = 1000
#: Most examples drawn on a decision-region map (``max_points``).
MAX_DRAWN_POINTS = 100_000


def decision_regions_figure(
    model: Any,
    state: int,
    X: pd.DataFrame | None = None,
    y: Any = None,
    *,
    grid: int = 150,
    ranges: Mapping[str, tuple[float, float]] | None = None,
    max_points: int = 600,
    title: str | None = None,
) -> go.Figure:
    """A node's policy action over a grid of its inputs (1 or 2 columns).

    Parameters
    ----------
    model : fitted BudgetDAGClassifier
    state : int
        The node; its policy sees the columns of its sensors.
    X, y : optional
        Examples: the grid spans their range (padded) and those reaching the
        node are drawn on top, coloured by class.
    grid : int, default=150
        Grid points per axis, 2 to ``MAX_GRID`` (1000): the policy is
        asked at ``grid ** 2`` points.
    ranges : mapping column -> (low, high), optional
        The grid range per column (needed without ``X``).
    max_points : int
        At most this many examples are drawn (a fixed sample), at most
        ``MAX_DRAWN_POINTS`` (100 000).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        A heatmap ``"policy"`` of action indices (0 = stop, a = a-th child,
        names on the colour bar) and one scatter trace per class.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0,
    ...                             policy_features="sensors")
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> state = model.sensor_dag_.index[0b011]  # holding cheap_a and cheap_b
    >>> fig = decision_regions_figure(model, state, demo.X_test, demo.y_test)
    >>> type(fig).__name__
    'Figure'
    """
    dag = model.sensor_dag_
    if not isinstance(state, int | np.integer) or not 0 <= state < dag.n_states:
        raise ValueError(f"state must be a state index in 0..{dag.n_states - 1}.")
    state = int(state)
    check_params(
        "decision_regions_figure",
        {"grid": [int_in(2, MAX_GRID)], "max_points": [int_in(0, MAX_DRAWN_POINTS)]},
        grid=grid,
        max_points=max_points,
    )
    cols = list(model.state_columns_[state])
    col_names = [model.spec_.columns[i] for i in cols]
    names = action_names(model, state)
    policy = model.policies_[state]
    held = ", ".join(dag.state_names(state)) or "no sensors"
    title = title or f"policy at state {state} ({held})"
    colors = [STOP_COLOR] + [
        ACTION_COLORS[a % len(ACTION_COLORS)] for a in range(len(names) - 1)
    ]
    if len(cols) == 0 or policy.learner is None:
        return _one_action_figure(policy, len(cols), names, colors, title)
    if len(cols) > 2:
        raise ValueError(
            f"State {state} has {len(cols)} input columns ({col_names}); decision "
            "regions can be drawn for 1 or 2 columns only."
        )
    Xv = check_features(X, model.spec_) if X is not None else None
    axes = _grid_axes(Xv, cols, col_names, ranges, grid)
    classes = list(getattr(model, "classes_", [None]))

    def predict(Z: np.ndarray) -> np.ndarray:
        return policy.predict(model.inputs_at(Z, state))

    traces = [_policy_heatmap(predict, axes, names, colors, len(classes))]
    if Xv is not None:
        reach, _ = model.node_actions(X, state)
        if reach.size > max_points:
            reach = np.sort(np.random.default_rng(0).choice(reach, max_points, False))
        y_arr = None if y is None else check_labels(y, len(Xv), None)[reach]
        traces += _example_traces(Xv, reach, y_arr, cols, col_names, classes)
    return _regions_layout(go.Figure(traces), title, col_names, classes)


def _one_action_figure(
    policy: Any, n_cols: int, names: list[str], colors: list[str], title: str
) -> go.Figure:
    """A node without inputs, or a leaf: one bar, the action every example gets."""
    action = int(policy.predict(np.zeros((1, n_cols)))[0])
    why = "no inputs" if n_cols == 0 else "a leaf"
    fig = go.Figure(
        go.Bar(
            x=[1.0],
            y=[names[action]],
            orientation="h",
            name="policy",
            marker={"color": colors[action]},
            hoverinfo="skip",
        )
    )
    fig.update_layout(
        title=title_under_modebar(f"{title}: {why}, one action for every example"),
        height=260,
        plot_bgcolor="white",
        xaxis={
            "title": {"text": "share of examples"},
            "tickformat": ".0%",
            "range": [0, 1],
        },
        yaxis={"automargin": True},
        margin={"l": 140, "r": 30, "t": 80, "b": 60},
    )
    return fig


def _grid_axes(
    Xv: np.ndarray | None,
    cols: list[int],
    col_names: list[str],
    ranges: Mapping[str, tuple[float, float]] | None,
    grid: int,
) -> list[np.ndarray]:
    """The grid points of each input column: ``ranges``, else the padded
    range of the examples."""
    axes = []
    for j, c in zip(cols, col_names, strict=True):
        if ranges is not None and c in ranges:
            lo, hi = map(float, ranges[c])
        elif Xv is not None:
            lo, hi = float(Xv[:, j].min()), float(Xv[:, j].max())
            pad = 0.04 * (hi - lo or 1.0)
            lo, hi = lo - pad, hi + pad
        else:
            raise ValueError(f"Give X or ranges[{c!r}] for the grid range.")
        if not lo < hi:
            raise ValueError(f"The range of column {c!r} is empty: ({lo}, {hi}).")
        axes.append(np.linspace(lo, hi, grid))
    return axes


def _policy_heatmap(
    predict: Callable[[np.ndarray], np.ndarray],
    axes: list[np.ndarray],
    names: list[str],
    colors: list[str],
    n_classes: int,
) -> go.Heatmap:
    """The policy's action over the grid (one column: one band per class row);
    ``predict`` maps grid points (values of the state's columns) to actions."""
    A = len(names)
    scale = []
    for a, col in enumerate(colors):
        scale += [[a / A, col], [(a + 1) / A, col]]
    style = {
        "name": "policy",
        "colorscale": scale,
        "zmin": -0.5,
        "zmax": A - 0.5,
        "colorbar": {
            "tickvals": list(range(A)),
            "ticktext": names,
            "title": {"text": "action", "side": "top"},
            "thickness": 14,
        },
        "opacity": 0.55,
        "hoverinfo": "skip",
    }
    if len(axes) == 2:
        gx, gy = np.meshgrid(axes[0], axes[1])
        Z = np.column_stack([gx.ravel(), gy.ravel()])
        acts = predict(Z).reshape(gx.shape)
        return go.Heatmap(x=axes[0], y=axes[1], z=acts, **style)
    acts = predict(axes[0].reshape(-1, 1))
    n_rows = max(n_classes, 1)
    return go.Heatmap(
        x=axes[0], y=[-0.5, n_rows - 0.5], z=np.vstack([acts, acts]), **style
    )


def _example_traces(
    Xv: np.ndarray,
    reach: np.ndarray,
    y_arr: np.ndarray | None,
    cols: list[int],
    col_names: list[str],
    classes: list[Any],
) -> list[go.Scatter]:
    """The examples reaching the node, one trace per class (one column: jittered
    around the class's row)."""
    traces = []
    rng = np.random.default_rng(1)
    for ci, c in enumerate(classes):
        mask = np.ones(reach.size, bool) if y_arr is None else y_arr == c
        pts = reach[mask]
        if pts.size == 0:
            continue
        px = Xv[pts, cols[0]]
        if len(cols) == 2:
            py = Xv[pts, cols[1]]
        else:
            py = ci + rng.uniform(-0.3, 0.3, pts.size)
        label = "examples" if y_arr is None else f"class {c}"
        traces.append(
            go.Scatter(
                x=px,
                y=py,
                mode="markers",
                name=label,
                marker={
                    "size": 6,
                    "color": CLASS_COLORS[ci % len(CLASS_COLORS)],
                    "symbol": CLASS_SYMBOLS[ci % len(CLASS_SYMBOLS)],
                    "line": {"width": 0.6, "color": "white"},
                },
                hovertemplate=f"{label}<br>{col_names[0]}=%{{x:.3g}}<extra></extra>",
            )
        )
    return traces


def _regions_layout(
    fig: go.Figure, title: str, col_names: list[str], classes: list[Any]
) -> go.Figure:
    """Axes and title: the second column, or one row per class, upwards."""
    y_title = col_names[1] if len(col_names) == 2 else "class"
    yaxis: dict[str, Any] = {"title": {"text": y_title}, "zeroline": False}
    if len(col_names) == 1:
        yaxis.update(
            tickvals=list(range(len(classes))),
            ticktext=[str(c) for c in classes],
            range=[-0.5, len(classes) - 0.5],
        )
    fig.update_layout(
        title=title_under_modebar(title),
        height=480,
        plot_bgcolor="white",
        legend=LEGEND_TOP,
        margin={"l": 70, "r": 30, "t": 80, "b": 60},
        xaxis={"title": {"text": col_names[0]}, "zeroline": False},
        yaxis=yaxis,
    )
    return fig
