"""What a policy buys: acquisition pictures built from ``model.trace(X)``.

Every figure here reads only the ``acquired`` column of a trace (the sensors
bought, in order), so they work for any model that traces: a full DAG, a
sparse one, a DAG over sensor subsets or a per-example policy.

Where sensors sit on an image (a 2-D array of column names, ``grid``), one
example is drawn as its image with the bought cells numbered in order, and a
set of examples as how often and how early each cell is bought. Without a
grid, a sensor x step chart and a Sankey diagram of the first steps say the
same for any number of sensors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..validation import check_params, int_in
from ._style import (
    ACQUIRE_COLOR,
    MAX_FIGURE_PIXELS,
    MODEBAR_PX,
    PATH_COLOR,
    STOP_COLOR,
    UNVISITED_COLOR,
    title_under_modebar,
)

OTHER = "other"
ROW_PX = 16  # height of one sensor row of the step chart


def _check_grid(grid: Any) -> np.ndarray:
    cells = np.asarray(grid, dtype=object)
    if cells.ndim != 2 or cells.size == 0:
        raise ValueError(
            f"grid must be a 2-D array of column names; got shape {cells.shape}."
        )
    return cells


def sensor_cells(
    groups: Mapping[str, Sequence[str]], grid: Any
) -> dict[str, list[tuple[int, int]]]:
    """Each sensor's cells of ``grid`` (row, column), for sensors that have any.

    Parameters
    ----------
    groups : mapping sensor -> its columns
        ``spec.groups``.
    grid : 2-D array-like of column names
        Where each column sits on the image (``None`` for an empty cell).

    Examples
    --------
    >>> sensor_cells({"a": ["p00", "p01"], "b": ["p10"], "c": ["x"]},
    ...              [["p00", "p01"], ["p10", None]])
    {'a': [(0, 0), (0, 1)], 'b': [(1, 0)]}
    """
    cells = _check_grid(grid)
    where = {
        str(cells[r, c]): (r, c)
        for r in range(cells.shape[0])
        for c in range(cells.shape[1])
        if cells[r, c] is not None
    }
    out: dict[str, list[tuple[int, int]]] = {}
    for sensor, columns in groups.items():
        found = [where[col] for col in columns if col in where]
        if found:
            out[sensor] = found
    return out


def _step_lists(trace: pd.DataFrame) -> list[list[tuple[str, ...]]]:
    """Per example its steps, each the sensors one decision bought.

    A trace's ``acquired`` entry is a sequence of sensor names (a step each)
    or of tuples of names (a step that bought several: a DAG over subsets).
    """
    if "acquired" not in trace:
        raise ValueError("trace needs an 'acquired' column (from model.trace(X)).")
    return [
        [(s,) if isinstance(s, str) else tuple(map(str, s)) for s in bought]
        for bought in trace["acquired"]
    ]


def _step_label(step: tuple[str, ...]) -> str:
    return step[0] if len(step) == 1 else f"{step[0]} +{len(step) - 1}"


def _grid_axes(fig: go.Figure, shape: tuple[int, int], **where: Any) -> None:
    h, w = shape
    fig.update_xaxes(
        tickvals=list(range(w)),
        range=[-0.5, w - 0.5],
        showgrid=False,
        zeroline=False,
        constrain="domain",
        title_text="column",
        **where,
    )
    fig.update_yaxes(
        tickvals=list(range(h)),
        range=[h - 0.5, -0.5],  # row 0 on top, as an image
        showgrid=False,
        zeroline=False,
        scaleanchor="x" if not where else f"x{where.get('col', '')}",
        constrain="domain",
        title_text="row",
        **where,
    )


def _outline_trace(cells: set[tuple[int, int]]) -> go.Scatter:
    """A red outline around each bought cell."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for r, c in sorted(cells):
        xs += [c - 0.5, c + 0.5, c + 0.5, c - 0.5, c - 0.5, None]
        ys += [r - 0.5, r - 0.5, r + 0.5, r + 0.5, r - 0.5, None]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        name="bought",
        line={"color": PATH_COLOR, "width": 2},
        hoverinfo="skip",
        showlegend=False,
    )


def _order_trace(
    steps: list[tuple[str, ...]],
    where: Mapping[str, list[tuple[int, int]]],
    font_px: int,
) -> tuple[go.Scatter, list[str]]:
    """The step numbers at the bought sensors' cells, and the steps that
    bought a sensor without a cell (``"3: ctx"``)."""
    xs, ys, text, names = [], [], [], []
    off_grid = []
    for i, step in enumerate(steps):
        for sensor in step:
            spots = where.get(sensor)
            if not spots:
                off_grid.append(f"{i + 1}: {sensor}")
                continue
            xs.append(float(np.mean([c for _, c in spots])))
            ys.append(float(np.mean([r for r, _ in spots])))
            text.append(str(i + 1))
            names.append(sensor)
    trace = go.Scatter(
        x=xs,
        y=ys,
        mode="markers+text",
        name="order",
        text=text,
        customdata=names,
        marker={"size": font_px * 1.5, "color": PATH_COLOR, "opacity": 0.9},
        textfont={"color": "white", "size": font_px},
        hovertemplate="step %{text}: %{customdata}<extra></extra>",
        showlegend=False,
    )
    return trace, off_grid


def acquisition_grid_figure(
    values: Mapping[str, float] | pd.Series,
    acquired: Sequence[str],
    grid: Any,
    groups: Mapping[str, Sequence[str]],
    *,
    title: str | None = None,
    height: int = 460,
) -> go.Figure:
    """One example's image with the cells the policy bought numbered in order.

    Parameters
    ----------
    values : mapping column -> value
        The example (a row of ``X``). Cells never bought are drawn faded: the
        policy did not see them.
    acquired : sequence of str or of sensor tuples
        Sensors bought, in order (``path_of(...).acquired`` or a trace's
        ``acquired``); an item that is a tuple is one step buying several
        sensors (a DAG over sensor subsets), its cells share a number.
    grid : 2-D array-like of column names
        Where each column sits on the image.
    groups : mapping sensor -> columns
        ``spec.groups``; a sensor of several cells is numbered at its centre.
    title, height : optional

    Returns
    -------
    plotly.graph_objects.Figure
        Traces ``values`` (heatmap), ``bought`` (outlined cells) and
        ``order`` (the numbers: ``text`` "1", "2", ...; ``customdata`` the
        sensor names). A note names sensors bought that have no cell.

    Examples
    --------
    >>> grid = [["a", "b"], ["c", "d"]]
    >>> groups = {n: [n] for n in "abcd"}
    >>> fig = acquisition_grid_figure(dict(a=0, b=1, c=2, d=3), ["d", "a"], grid,
    ...                               groups)
    >>> list(fig.data[-1].text)
    ['1', '2']
    """
    check_params(
        "acquisition_grid_figure",
        {"height": [int_in(1, MAX_FIGURE_PIXELS)]},
        height=height,
    )
    cells = _check_grid(grid)
    where = sensor_cells(groups, cells)
    h, w = cells.shape
    z = np.full((h, w), np.nan)
    for r in range(h):
        for c in range(w):
            name = cells[r, c]
            if name is not None and name in values:
                z[r, c] = float(values[name])
    steps = [(s,) if isinstance(s, str) else tuple(map(str, s)) for s in acquired]
    bought_cells = {rc for step in steps for s in step for rc in where.get(s, [])}
    seen = np.array([[(r, c) in bought_cells for c in range(w)] for r in range(h)])
    fig = go.Figure(
        go.Heatmap(
            z=z,
            name="values",
            colorscale="Greys",
            showscale=True,
            colorbar={"title": {"text": "value", "side": "right"}, "thickness": 12},
            customdata=np.where(seen, "bought", "not bought"),
            hovertemplate="row %{y}, column %{x}: %{z:.4g} (%{customdata})"
            "<extra></extra>",
        )
    )
    # Not-bought cells under a white veil: the policy never saw them.
    veil = np.where(seen | np.isnan(z), np.nan, 1.0)
    fig.add_trace(
        go.Heatmap(
            z=veil,
            name="not seen",
            colorscale=[[0, "rgba(255,255,255,0.55)"], [1, "rgba(255,255,255,0.55)"]],
            showscale=False,
            hoverinfo="skip",
        )
    )
    font_px = int(np.clip(0.45 * (height - 120) / max(h, w), 9, 22))
    fig.add_trace(_outline_trace(bought_cells))
    order, off_grid = _order_trace(steps, where, font_px)
    fig.add_trace(order)
    _grid_axes(fig, (h, w))
    note = f"Also bought (no cell): {', '.join(off_grid)}" if off_grid else ""
    fig.update_layout(
        title=title_under_modebar(title),
        height=height,
        margin={"l": 50, "r": 20, "t": MODEBAR_PX + (50 if title else 20), "b": 50},
        plot_bgcolor="white",
    )
    if note:
        fig.add_annotation(
            text=note,
            xref="paper",
            yref="paper",
            x=0,
            y=-0.12,
            showarrow=False,
            xanchor="left",
            font={"size": 11, "color": "#555555"},
        )
    return fig


def acquisition_frequency(trace: pd.DataFrame, sensors: Sequence[str]) -> pd.DataFrame:
    """Per sensor: the share of examples buying it and its mean step then.

    Columns ``sensor``, ``share`` (0..1), ``mean_step`` (1 = bought first;
    NaN when never bought), ``n`` (examples buying it).

    Examples
    --------
    >>> trace = pd.DataFrame({"acquired": [("a", "b"), ("b",), ()]})
    >>> acquisition_frequency(trace, ["a", "b", "c"]).round(2).to_dict("list")
    {'sensor': ['a', 'b', 'c'], 'share': [0.33, 0.67, 0.0], 'mean_step': [1.0, 1.5, nan], 'n': [1, 2, 0]}
    """  # noqa: E501
    lists = _step_lists(trace)
    count: Counter[str] = Counter()
    steps: Counter[str] = Counter()
    for bought in lists:
        for i, step in enumerate(bought):
            for s in step:
                count[s] += 1
                steps[s] += i + 1
    n = max(len(lists), 1)
    return pd.DataFrame(
        {
            "sensor": list(sensors),
            "share": [count[s] / n for s in sensors],
            "mean_step": [steps[s] / count[s] if count[s] else np.nan for s in sensors],
            "n": [count[s] for s in sensors],
        }
    )


def _cell_text(value: float, kind: str) -> str:
    """A heatmap cell's text: a percentage, or a step with one decimal below 10."""
    if np.isnan(value):
        return ""
    if kind == "share":
        return f"{value:.0%}" if value > 0 else ""
    return f"{value:.1f}" if value < 9.95 else f"{value:.0f}"


def acquisition_heatmap_figure(
    trace: pd.DataFrame,
    grid: Any,
    groups: Mapping[str, Sequence[str]],
    *,
    title: str | None = None,
    height: int = 420,
) -> go.Figure:
    """How often and how early each cell of the image is bought.

    Two heatmaps side by side over ``grid``: the share of the traced examples
    that buy the cell's sensor, and its mean step when bought (1 = first).

    Parameters
    ----------
    trace : DataFrame
        ``model.trace(X)`` of the examples to summarise (e.g. one class).
        An ``acquired`` entry may also list steps, each a tuple of the
        sensors one decision bought (a DAG over subsets): then a step counts
        once for all its sensors.
    grid : 2-D array-like of column names
    groups : mapping sensor -> columns
        ``spec.groups``.
    title, height : optional

    Returns
    -------
    plotly.graph_objects.Figure
        Traces ``how often`` and ``how early`` (``z``: share, mean step; NaN
        where the cell is never bought or belongs to no sensor).

    Examples
    --------
    >>> trace = pd.DataFrame({"acquired": [("b", "a"), ("b",)]})
    >>> fig = acquisition_heatmap_figure(trace, [["a", "b"]], {"a": ["a"], "b": ["b"]})
    >>> fig.data[0].z.tolist(), fig.data[1].z.tolist()
    ([[0.5, 1.0]], [[2.0, 1.0]])
    """
    check_params(
        "acquisition_heatmap_figure",
        {"height": [int_in(1, MAX_FIGURE_PIXELS)]},
        height=height,
    )
    cells = _check_grid(grid)
    where = sensor_cells(groups, cells)
    freq = acquisition_frequency(trace, list(where)).set_index("sensor")
    h, w = cells.shape
    share = np.full((h, w), np.nan)
    early = np.full((h, w), np.nan)
    for sensor, spots in where.items():
        for r, c in spots:
            share[r, c] = freq.at[sensor, "share"]
            if freq.at[sensor, "n"]:
                early[r, c] = freq.at[sensor, "mean_step"]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("how often: share of examples", "how early: mean step"),
        horizontal_spacing=0.14,
    )
    text_px = int(np.clip(0.3 * (height - 120) / max(h, w), 7, 14))
    fig.add_trace(
        go.Heatmap(
            z=share,
            name="how often",
            colorscale="Blues",
            zmin=0,
            zmax=1,
            text=[[_cell_text(v, "share") for v in row] for row in share],
            texttemplate="%{text}" if max(h, w) <= 12 else None,
            textfont={"size": text_px},
            colorbar={"x": 0.43, "thickness": 10, "tickformat": ".0%", "len": 0.9},
            hovertemplate="row %{y}, column %{x}: bought by %{z:.0%}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Heatmap(
            z=early,
            name="how early",
            colorscale="Viridis",
            reversescale=True,
            zmin=1,
            text=[[_cell_text(v, "step") for v in row] for row in early],
            texttemplate="%{text}" if max(h, w) <= 12 else None,
            textfont={"size": text_px},
            colorbar={"x": 1.0, "thickness": 10, "len": 0.9},
            hovertemplate="row %{y}, column %{x}: mean step %{z:.1f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    for col in (1, 2):
        _grid_axes(fig, (h, w), row=1, col=col)
    fig.update_yaxes(scaleanchor="x", row=1, col=1)
    fig.update_yaxes(scaleanchor="x2", row=1, col=2)
    fig.update_layout(
        title=title_under_modebar(title),
        height=height,
        margin={"l": 50, "r": 20, "t": MODEBAR_PX + (70 if title else 40), "b": 40},
        plot_bgcolor="white",
    )
    return fig


def acquisition_steps_figure(
    trace: pd.DataFrame,
    sensors: Sequence[str],
    *,
    max_sensors: int = 64,
    max_steps: int = 12,
    title: str | None = None,
) -> go.Figure:
    """Which sensor is bought at which step: a sensor x step heatmap.

    Cell (s, t) is the share of the examples that buy sensor ``s`` as their
    ``t``-th purchase; a last row ``stop`` gives the share stopping after
    ``t - 1`` purchases. Sensors never bought are left out, the others sorted
    by their mean step (the first bought on top); beyond ``max_sensors`` the
    least bought ones are merged into one ``other`` row, beyond ``max_steps``
    steps into one last column. The height grows with the rows (readable with
    64 sensors).

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap trace ``steps`` (``y``: sensor names, then ``stop``).

    Examples
    --------
    >>> trace = pd.DataFrame({"acquired": [("a", "b"), ("b",), ()]})
    >>> fig = acquisition_steps_figure(trace, ["a", "b", "c"])
    >>> list(fig.data[0].y), list(fig.data[0].x)
    (['a', 'b', 'stop'], ['1', '2', '3'])
    """
    check_params(
        "acquisition_steps_figure",
        {"max_sensors": [int_in(1, 1000)], "max_steps": [int_in(1, 1000)]},
        max_sensors=max_sensors,
        max_steps=max_steps,
    )
    if max_sensors < 1 or max_steps < 1:
        raise ValueError("max_sensors and max_steps must be at least 1.")
    lists = _step_lists(trace)
    n = max(len(lists), 1)
    longest = max([len(b) for b in lists] + [0])
    n_cols = min(longest + 1, max_steps)
    freq = acquisition_frequency(trace, list(sensors))
    bought = freq[freq["n"] > 0]
    top = bought.nlargest(max_sensors, "n", keep="first")
    kept = list(top.sort_values(["mean_step", "sensor"], kind="stable")["sensor"])
    merged = len(bought) > len(kept)
    rows = [*kept, *([OTHER] if merged else []), "stop"]
    at = {s: i for i, s in enumerate(rows)}
    z = np.zeros((len(rows), n_cols))
    for b in lists:
        for i, step in enumerate(b):
            for s in step:
                z[at.get(s, at.get(OTHER, 0)), min(i, n_cols - 1)] += 1
        z[at["stop"], min(len(b), n_cols - 1)] += 1
    z /= n
    cols = [str(t + 1) for t in range(n_cols)]
    if longest + 1 > max_steps:
        cols[-1] = f"{max_steps}+"
    fig = go.Figure(
        go.Heatmap(
            z=np.where(z > 0, z, np.nan),
            x=cols,
            y=rows,
            name="steps",
            colorscale="Blues",
            zmin=0,
            colorbar={"title": {"text": "share", "side": "right"}, "tickformat": ".0%"},
            xgap=1,
            ygap=1,
            hovertemplate="%{y} at step %{x}: %{z:.1%} of examples<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", tickfont={"size": 10}, type="category")
    fig.update_xaxes(title_text="step (1 = first sensor bought)", type="category")
    fig.update_layout(
        title=title_under_modebar(title),
        height=int(np.clip(120 + ROW_PX * len(rows), 260, 1300)),
        margin={"l": 90, "r": 20, "t": MODEBAR_PX + (50 if title else 20), "b": 50},
        plot_bgcolor="white",
    )
    return fig


def acquisition_paths_figure(
    trace: pd.DataFrame,
    *,
    depth: int = 3,
    max_per_step: int = 6,
    title: str | None = None,
) -> go.Figure:
    """The most common acquisition paths: a Sankey diagram of the first steps.

    A column per step (1 to ``depth``): the sensor bought then, the
    ``max_per_step`` most bought ones by name and the rest as ``other``, plus
    ``stop`` for examples that stopped before that step. Flows join the
    sensor bought at one step to the next step's, so the widest bands are the
    common paths. Readable with any number of sensors.

    Returns
    -------
    plotly.graph_objects.Figure
        One ``go.Sankey`` trace ``paths`` (node labels ``"2: name"``).

    Examples
    --------
    >>> trace = pd.DataFrame({"acquired": [("a", "b"), ("a",), ()]})
    >>> fig = acquisition_paths_figure(trace, depth=2)
    >>> sorted(fig.data[0].node.label)
    ['1: a', '1: stop', '2: b', '2: stop']
    """
    check_params(
        "acquisition_paths_figure",
        {"depth": [int_in(1, 20)], "max_per_step": [int_in(1, 100)]},
        depth=depth,
        max_per_step=max_per_step,
    )
    if depth < 1 or max_per_step < 1:
        raise ValueError("depth and max_per_step must be at least 1.")
    lists = [[_step_label(step) for step in b] for b in _step_lists(trace)]
    names_at: list[set[str]] = []
    for t in range(depth):
        counts = Counter(b[t] for b in lists if len(b) > t)
        names_at.append({s for s, _ in counts.most_common(max_per_step)})

    def node_name(b: tuple[str, ...], t: int) -> str:
        if len(b) <= t:
            return "stop"
        return b[t] if b[t] in names_at[t] else OTHER

    labels: dict[tuple[int, str], int] = {}
    flows: Counter[tuple[int, int]] = Counter()
    for b in lists:
        previous = None
        for t in range(depth):
            key = (t, node_name(b, t))
            labels.setdefault(key, len(labels))
            if previous is not None:
                flows[(previous, labels[key])] += 1
            if key[1] == "stop":
                break
            previous = labels[key]
    keys = sorted(labels, key=labels.get)
    colour = {"stop": STOP_COLOR, OTHER: UNVISITED_COLOR}
    links = sorted(flows.items())
    fig = go.Figure(
        go.Sankey(
            name="paths",
            arrangement="snap",
            node={
                "label": [f"{t + 1}: {s}" for t, s in keys],
                "color": [colour.get(s, ACQUIRE_COLOR) for _, s in keys],
                "pad": 12,
                "thickness": 14,
            },
            link={
                "source": [a for (a, _), _ in links],
                "target": [b for (_, b), _ in links],
                "value": [v for _, v in links],
                "color": "rgba(74,111,165,0.25)",
            },
        )
    )
    fig.update_layout(
        title=title_under_modebar(title),
        height=int(np.clip(90 + 40 * (max_per_step + 2), 320, 700)),
        margin={"l": 10, "r": 10, "t": MODEBAR_PX + (40 if title else 15), "b": 15},
        font={"size": 11},
    )
    return fig
