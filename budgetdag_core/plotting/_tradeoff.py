"""The trade-off figure: error against cost for the DAG and the baselines."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from ..tradeoff import lower_convex_hull
from ..validation import check_params, int_in
from ._style import (
    HOVER,
    MAX_FIGURE_PIXELS,
    MODEBAR_PX,
    PATH_COLOR,
    title_under_modebar,
)

X_TITLES = {
    "avg_cost": "average acquisition cost per example (spec cost units)",
    "avg_sensors": "average number of sensors acquired per example",
}
METHOD_STYLE: dict[str, dict[str, Any]] = {
    "dag": {
        "label": "DAG policy",
        "color": "#1f77b4",
        "mode": "lines+markers",
        "symbol": "circle",
        "size": 8,
    },
    "fixed": {
        "label": "fixed subsets",
        "color": "#7f7f7f",
        "mode": "markers",
        "symbol": "circle",
        "size": 8,
    },
    "all_sensors": {
        "label": "all sensors",
        "color": "#111111",
        "mode": "markers",
        "symbol": "star",
        "size": 15,
    },
    "oracle": {
        "label": "oracle bound",
        "color": "#2ca02c",
        "mode": "lines+markers",
        "symbol": "x",
        "size": 9,
        "dash": "dashdot",
    },
    "cascade": {
        "label": "confidence cascade",
        "color": "#ff7f0e",
        "mode": "lines+markers",
        "symbol": "triangle-up",
        "size": 7,
        "dash": "dash",
        # On the curve: buy in this order, stop when the classifier is sure.
        "sensors_label": "buys in order",
    },
    "hull": {
        "label": "fixed-subset hull",
        "color": "#9a9a9a",
        "mode": "lines",
        "dash": "dash",
        "width": 2,
    },
    "hull_oof": {
        "label": "fixed-subset hull, subsets chosen on training rows",
        "color": "#5a5a5a",
        "mode": "lines",
        "dash": "dot",
        "width": 2,
    },
}
SPLIT_DASH = {"test": "solid", "train": "dot", "validation": "dash"}


def lower_hull(x: Sequence[float], y: Sequence[float]) -> list[int]:
    """Positions of the points on the lower-left convex hull of (x, y).

    From the cheapest point to the most accurate one: the errors reachable by
    randomly mixing fixed subsets. The figures' name for
    :func:`budgetdag_core.tradeoff.lower_convex_hull` (one hull for the
    library), as a list.

    Examples
    --------
    >>> lower_hull([0, 1, 2, 3], [0.5, 0.2, 0.3, 0.1])
    [0, 1, 3]
    """
    return lower_convex_hull(x, y).tolist()


def _sensor_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Iterable):
        items = list(value)
        return ", ".join(map(str, items)) if items else "none"
    return str(value)


def _hover_text(row: pd.Series, style: dict[str, Any], split: Any) -> str:
    """One point's hover in words: method, sensors bought, cost, error."""
    title = f"<b>{style['label']}</b>" + (f" ({split})" if split else "")
    scale = row.get("cost_scale")
    if scale is not None and pd.notna(scale):
        title += f" · cost scale {scale:.3g}"
    lines = [title]
    sensors = row.get("sensors")
    listed = isinstance(sensors, str | tuple | list | np.ndarray)
    order = style.get("sensors_label")
    if order and listed and not isinstance(sensors, str):
        lines.append(f"{order}: " + " → ".join(map(str, sensors)))
    elif listed:
        lines.append("sensors bought: " + _sensor_text(sensors))
    elif pd.notna(row.get("avg_sensors", np.nan)):
        lines.append(
            f"sensors bought: {row['avg_sensors']:.2f} on average, chosen per example"
        )
    threshold = row.get("threshold")
    if threshold is not None and pd.notna(threshold):
        lines.append(
            f"stops once the classifier's top-class probability is ≥ {threshold:.3g}"
        )
    cost = row.get("avg_cost")
    if cost is not None and pd.notna(cost):
        lines.append(f"average cost: {cost:.3g}")
    lines.append(f"error: {row['error']:.1%}")
    return "<br>".join(lines)


def tradeoff_figure(
    frame: pd.DataFrame,
    *,
    x: str = "avg_cost",
    split: str | Sequence[str] | None = "test",
    hull: bool | None = None,
    highlight: Any = None,
    title: str | None = None,
    height: int = 560,
) -> go.Figure:
    """Error against cost: the DAG curve, fixed subsets, hull, all sensors, oracle
    and the confidence cascade.

    Parameters
    ----------
    frame : DataFrame
        Tidy rows with ``method``, ``avg_cost``, ``avg_sensors``, ``error`` and
        optionally ``split``, ``cost_scale`` and ``sensors`` (names, shown in
        hover). Methods ``dag``, ``fixed``, ``all_sensors``, ``oracle``,
        ``hull`` and ``cascade`` (its hover gives the acquisition order and the
        ``threshold``) get their own styles; any other name is drawn as a curve.
    x : {"avg_cost", "avg_sensors"}
        The cost axis.
    split : str, sequence of str or None, default="test"
        Which splits to draw (None: all); several are told apart by dash.
    hull : bool or None
        None: draw ``hull`` rows if present. True: also compute the lower
        convex hull of the fixed subsets (and all sensors) if there are none.
        False: no hull.
    highlight : row label or list of row labels, optional
        Rows of ``frame`` to ring (trace ``"selected"``), e.g. the chosen model.
    title, height : optional
        Figure title and pixel height (at most ``MAX_FIGURE_PIXELS``, 20 000).

    Returns
    -------
    plotly.graph_objects.Figure
        Every point trace has ``customdata[:, 0]`` = the row label in
        ``frame`` (what :func:`clicked_states` returns for a click), so a
        click on the DAG curve selects that row's model.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({
    ...     "method": ["dag", "dag", "fixed"], "cost_scale": [0.0, 0.1, None],
    ...     "avg_cost": [3.0, 1.0, 2.0], "avg_sensors": [3, 1, 2],
    ...     "error": [0.1, 0.2, 0.25], "split": "test"})
    >>> [t.name for t in tradeoff_figure(frame).data]
    ['DAG policy', 'fixed subsets']
    """
    check_params(
        "tradeoff_figure",
        {"height": [int_in(1, MAX_FIGURE_PIXELS)]},
        height=height,
    )
    data = _rows_to_draw(frame, x, split)
    splits = list(dict.fromkeys(data["split"])) if "split" in data.columns else [None]
    several = len(splits) > 1
    traces: list[go.Scatter] = []
    for sp in splits:
        part = data if sp is None else data[data["split"] == sp]
        traces += _split_traces(part, x, sp, f" ({sp})" if several else "", hull)
    if highlight is not None:
        traces.append(_highlight_trace(frame, x, highlight))
    x_top = float(np.nanmax(data[x].to_numpy(dtype=float))) or 1.0
    fig = go.Figure(traces)
    fig.update_layout(
        title=title_under_modebar(title),
        height=height,
        plot_bgcolor="white",
        hovermode="closest",
        clickmode="event+select",
        # The legend sits under the plot: with train and test it takes two
        # rows, which would run into a title above the plot.
        # A title starts under plotly's tool bar (it covers the top right).
        margin={"l": 70, "r": 30, "t": MODEBAR_PX + 40 if title else 20, "b": 130},
        legend={
            "orientation": "h",
            "yref": "container",
            "y": 0.0,
            "yanchor": "bottom",
            "x": 0.0,
        },
        xaxis={
            "title": {"text": X_TITLES[x]},
            "gridcolor": "#e5e5e5",
            "zeroline": False,
            # Start a little left of 0 so the 0 ticks of both axes do not touch.
            "range": [-0.03 * x_top, 1.04 * x_top],
        },
        yaxis={
            "title": {"text": "error rate"},
            "tickformat": ".0%",
            "gridcolor": "#e5e5e5",
            "zeroline": False,
            "rangemode": "tozero",
        },
    )
    return fig


def _rows_to_draw(frame: Any, x: str, split: Any) -> pd.DataFrame:
    """The checked frame's rows of the wanted splits."""
    if x not in X_TITLES:
        raise ValueError(f"x must be one of {sorted(X_TITLES)}; got {x!r}.")
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a DataFrame; got {type(frame).__name__}.")
    missing = [c for c in ("method", x, "error") if c not in frame.columns]
    if missing:
        raise ValueError(f"The trade-off frame lacks column(s) {missing}.")
    if "split" not in frame.columns or split is None:
        return frame
    wanted = [split] if isinstance(split, str) else list(split)
    data = frame[frame["split"].isin(wanted)]
    if data.empty:
        raise ValueError(
            f"No rows with split {wanted}; the frame has "
            f"{sorted(map(str, frame['split'].unique()))}."
        )
    return data


def _split_traces(
    part: pd.DataFrame, x: str, split: Any, suffix: str, hull: bool | None
) -> list[go.Scatter]:
    """One trace per method of one split (and its hull when asked for)."""
    palette = qualitative.D3[2:] + qualitative.Set2
    traces = []
    methods = list(dict.fromkeys(part["method"]))
    if hull is False:
        methods = [m for m in methods if m not in ("hull", "hull_oof")]
    for i, method in enumerate(methods):
        rows = part[part["method"] == method].sort_values(x)
        style = METHOD_STYLE.get(
            str(method),
            {
                "label": str(method),
                "color": palette[i % len(palette)],
                "mode": "lines+markers",
                "symbol": "diamond",
                "size": 8,
            },
        )
        traces.append(_method_trace(rows, x, style, split, suffix))
    if hull and "hull" not in methods:
        base = part[part["method"].isin(["fixed", "all_sensors"])]
        if len(base):
            idx = lower_hull(base[x].tolist(), base["error"].tolist())
            rows = base.iloc[idx]
            traces.append(_method_trace(rows, x, METHOD_STYLE["hull"], split, suffix))
    return traces


def _highlight_trace(frame: pd.DataFrame, x: str, highlight: Any) -> go.Scatter:
    """Rings around the ``highlight`` rows of ``frame``."""
    labels = [highlight] if np.isscalar(highlight) else list(highlight)
    absent = [lab for lab in labels if lab not in frame.index]
    if absent:
        raise ValueError(f"highlight row(s) {absent} are not in the frame.")
    sel = frame.loc[labels]
    return go.Scatter(
        x=sel[x],
        y=sel["error"],
        mode="markers",
        name="selected",
        marker={
            "symbol": "circle-open",
            "size": 20,
            "color": PATH_COLOR,
            "line": {"width": 3},
        },
        customdata=np.array([[lab] for lab in labels], dtype=object),
        hoverinfo="skip",
    )


def _method_trace(
    rows: pd.DataFrame, x: str, style: dict[str, Any], split: Any, suffix: str
) -> go.Scatter:
    hover = [_hover_text(r, style, split) for _, r in rows.iterrows()]
    train = split == "train"
    line = {
        "color": style["color"],
        "width": style.get("width", 2),
        "dash": style.get("dash", SPLIT_DASH.get(str(split), "solid")),
    }
    if train and "dash" not in style:
        line["dash"] = "dot"
    symbol = style.get("symbol", "circle")
    return go.Scatter(
        x=rows[x],
        y=rows["error"],
        mode=style["mode"],
        name=style["label"] + suffix,
        legendgroup=f"{style['label']}{suffix}",
        line=line,
        marker={
            "color": style["color"],
            "size": style.get("size", 8),
            "symbol": symbol + ("-open" if train else ""),
            "line": {"color": style["color"], "width": 1.5},
        },
        customdata=np.array([[lab] for lab in rows.index], dtype=object),
        hovertext=hover,
        hovertemplate=HOVER,
        opacity=0.7 if train else 1.0,
    )
