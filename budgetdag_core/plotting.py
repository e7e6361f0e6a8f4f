"""Plotly figures of a fitted policy: the DAG with its flow, trade-off curves and a
node's decision regions.

Pure functions that return ``plotly.graph_objects.Figure``; no Streamlit, so they
work in a notebook too. Clickable points carry ``customdata``: the DAG's node
trace (named ``"states"``) holds the state index in ``customdata[:, 0]``, the
trade-off points hold the row label of their frame (see :func:`clicked_states`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from ._dag_layout import (
    CHAR_PX,
    LABEL_FONT_PX,
    PLOT_WIDTH_PX,
    abbreviate,
    figure_height,
    order_layers,
    state_label,
    thin_labels,
)
from .validation import check_labels

ACQUIRE_COLOR = "#4a6fa5"
STOP_COLOR = "#e07b39"
PATH_COLOR = "#d62728"
UNVISITED_COLOR = "#c8c8c8"
SINK_COLOR = "#333333"
# Acquire actions in decision-region maps: Set2 without its orange (= stop).
ACTION_COLORS = ["#66c2a5", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f", "#e5c494"]
CLASS_COLORS = ["#1f3b73", "#8b1a1a", "#2d6a2d", "#6a3d9a", "#7a4a12", "#111111"]
CLASS_SYMBOLS = ["circle", "x", "diamond", "triangle-up", "square", "cross"]
COLORSCALES = {"stop_share": "Blues", "error": "OrRd"}
MARGIN = {"l": 30, "r": 30, "t": 70, "b": 50}


# ---------------------------------------------------------------- DAG figure
def _graph_data(
    model_or_flow: Any, X: Any, y: Any, costs: Mapping[str, float] | None
) -> tuple[nx.DiGraph, tuple[str, ...], dict[int, float] | None]:
    """The flow graph, the sensor names in order and each state's cost."""
    if isinstance(model_or_flow, nx.DiGraph):
        if X is not None or y is not None:
            raise ValueError("Pass X and y with a fitted model, not with a graph.")
        g = model_or_flow
        names = g.graph.get("sensor_names")
        if names is None:
            seen: dict[str, None] = {}
            for k in sorted(g.nodes):
                seen.update(dict.fromkeys(g.nodes[k].get("sensors", ())))
            names = tuple(seen)
        if all("cost" in g.nodes[k] for k in g.nodes):
            node_cost = {k: float(g.nodes[k]["cost"]) for k in g.nodes}
        elif costs is not None:
            node_cost = {
                k: float(sum(costs[s] for s in g.nodes[k]["sensors"])) for k in g.nodes
            }
        else:
            node_cost = None
        return g, tuple(names), node_cost
    model = model_or_flow
    if not hasattr(model, "sensor_dag_"):
        raise ValueError(
            "dag_figure needs a fitted BudgetDAGClassifier (call fit first) or a "
            "flow graph from model.flow(X, y)."
        )
    if X is None and y is not None:
        raise ValueError("y was given without X: pass both to draw the flow.")
    g = model.flow(X, y) if X is not None else model.dag_.copy()
    dag = model.sensor_dag_
    unit_cost = np.asarray(model.spec_.cost_vector, dtype=float)
    if costs is not None:
        unit_cost = np.array([float(costs[n]) for n in dag.sensor_names])
    state_cost = dag.membership() @ unit_cost
    return g, tuple(dag.sensor_names), {k: float(state_cost[k]) for k in g.nodes}


def _bins(counts: np.ndarray, n_bins: int) -> np.ndarray:
    """Width bin (0..n_bins-1) of each positive count, linear in the count."""
    top = counts.max() if counts.size else 1
    return np.clip(
        np.ceil(counts / max(top, 1) * n_bins).astype(int) - 1, 0, n_bins - 1
    )


def _segments(pairs: Iterable[tuple[tuple[float, float], tuple[float, float]]]):
    xs: list[float | None] = []
    ys: list[float | None] = []
    for (x0, y0), (x1, y1) in pairs:
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    return xs, ys


def _pct(num: float, den: float) -> str:
    return f"{num / den:.1%}" if den else "–"


def dag_figure(
    model_or_flow: Any,
    X: pd.DataFrame | None = None,
    y: Any = None,
    *,
    color: str = "stop_share",
    highlight_path: Sequence[int] | None = None,
    selected: int | None = None,
    hide_unvisited: bool = True,
    min_arrived: int = 1,
    costs: Mapping[str, float] | None = None,
    edge_bins: int = 4,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """Draw the sensor DAG with how examples flow through it.

    Layers left to right by the number of sensors acquired; a node per state
    (marker area ∝ examples arriving, colour = share that stops there or error
    rate of those stopping), acquire edges with width ∝ examples moving
    (binned), dashed stop edges to a single "classify" sink.

    Parameters
    ----------
    model_or_flow : fitted BudgetDAGClassifier or networkx.DiGraph
        A model (then ``X``, ``y`` give the flow) or the graph returned by
        ``model.flow(X, y)``.
    X, y : DataFrame and labels, optional
        Examples to route. Without ``X`` the bare DAG is drawn; without ``y``
        there are no error rates.
    color : {"stop_share", "error"}
        Node colour: share of arriving examples that stop at the node, or error
        rate of the examples that stop there (needs ``y``).
    highlight_path : sequence of int, optional
        State indices of one example's path (e.g. ``path_of(...).states``),
        drawn as an overlay trace named ``"path"`` ending at the sink.
    selected : int, optional
        A state to ring (trace ``"selected"``), e.g. the clicked node.
    hide_unvisited : bool, default=True
        Leave out states and edges no example reaches (the layers close up);
        with False they are drawn faded.
    min_arrived : int, default=1
        With ``hide_unvisited``, also leave out states reached by fewer
        examples than this (a note under the figure says how many are hidden).
    costs : mapping sensor -> cost, optional
        Costs for "cost so far" in hover (default: the model's spec).
    edge_bins : int, default=4
        Number of edge widths (a plotly line has one width per trace).
    title, height : optional
        Figure title and pixel height (default grows with the widest layer).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: ``acquire`` edge bins, ``stop`` edge bins, ``unused edges``,
        ``edge info`` (hover at edge midpoints), ``states`` (the nodes:
        ``customdata`` columns state, arrived, stopped, moved on, errors with
        -1 when unknown), ``classify`` (the sink), then ``path``/``path stop``
        and ``selected`` when asked.

    Examples
    --------
    >>> from budgetdag_core import SensorDAG
    >>> g = SensorDAG(["a", "b"]).to_networkx()
    >>> fig = dag_figure(g)
    >>> [t.name for t in fig.data if t.name == "states"]
    ['states']
    """
    if color not in COLORSCALES:
        raise ValueError(f"color must be one of {sorted(COLORSCALES)}; got {color!r}.")
    if edge_bins < 1:
        raise ValueError(f"edge_bins must be at least 1; got {edge_bins}.")
    g, names, node_cost = _graph_data(model_or_flow, X, y, costs)
    K = g.number_of_nodes()
    has_flow = all("arrived" in g.nodes[k] for k in g.nodes)
    err_key = next(
        (key for key in ("errors", "loss") if all(key in g.nodes[k] for k in g.nodes)),
        None,
    )
    if color == "error" and (not has_flow or err_key is None):
        raise ValueError("color='error' needs the flow with labels: pass X and y.")
    path = [int(s) for s in highlight_path] if highlight_path is not None else []
    for s in [*path, *([selected] if selected is not None else [])]:
        if not 0 <= int(s) < K:
            raise ValueError(f"State {s} is not in the DAG (0..{K - 1}).")

    def attr(k: int, key: str) -> int:
        return int(g.nodes[k].get(key, 0))

    arrived = {k: attr(k, "arrived") for k in g.nodes}
    stopped = {k: attr(k, "stopped") for k in g.nodes}
    threshold = max(int(min_arrived), 1)
    visited = (
        {k for k in g.nodes if arrived[k] >= threshold} if has_flow else set(g.nodes)
    )
    must_show = set(path) | ({int(selected)} if selected is not None else set())
    shown = (visited | must_show | {0}) if hide_unvisited else set(g.nodes)
    n_hidden = K - len(shown)
    layer_of = {k: len(g.nodes[k].get("sensors", ())) for k in g.nodes}
    layers = order_layers(
        g, shown, layer_of, "count" if has_flow else None, visited | must_show
    )
    max_per_layer = max(len(v) for v in layers.values())
    big = K > 16
    # Small graphs show full names; big ones short codes with a key below.
    short = abbreviate(names, 3) if big else {n: n for n in names}
    notes = []
    if any(short[n] != n for n in names):
        notes.append("  ·  ".join(f"{short[n]} = {n}" for n in names))
    if n_hidden:
        why = (
            "no example reaches"
            if threshold == 1
            else f"fewer than {threshold} examples reach"
        )
        notes.append(f"{n_hidden} of {K} states hidden ({why})")
    margin = {**MARGIN, "b": MARGIN["b"] + 18 * len(notes)}
    height = height or figure_height(max_per_layer) + 18 * len(notes)

    # Geometry: data units are one layer apart in x and one node apart in y.
    pos = {
        k: (float(x), i - (len(ks) - 1) / 2)
        for x, ks in layers.items()
        for i, k in enumerate(ks)
    }
    last_layer = max(layers)
    y_low = min(p[1] for p in pos.values())
    y_high = max(p[1] for p in pos.values())
    sink = (last_layer + 1.0, y_low - 0.6 if len(pos) > 1 else 0.0)
    y_range = (min(y_low, sink[1]) - 0.7, y_high + 0.7)
    plot_h = height - margin["t"] - margin["b"]
    px_per_y = plot_h / (y_range[1] - y_range[0])
    px_per_x = PLOT_WIDTH_PX / (last_layer + 2.6)
    d_max = float(np.clip(min(0.8 * px_per_y, 0.45 * px_per_x), 9, 60))
    d_min = min(7.0, d_max)

    # Edges, binned by flow; stop edges to the sink.
    edge_count = {(u, v): int(g.edges[u, v].get("count", 0)) for u, v in g.edges}
    drawn = [(u, v) for (u, v) in g.edges if u in shown and v in shown]
    used = [e for e in drawn if edge_count[e] > 0] if has_flow else drawn
    unused = [e for e in drawn if edge_count[e] == 0] if has_flow else []
    stops = [k for k in sorted(shown) if stopped[k] > 0] if has_flow else []
    top_flow = max([edge_count[e] for e in used] + [stopped[k] for k in stops] + [1])
    w_max = float(np.clip(d_max / 3.5, 4, 14))
    traces: list[go.Scatter] = []
    if unused:
        xs, ys = _segments((pos[u], pos[v]) for u, v in unused)
        traces.append(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name="unused edges",
                legendgroup="unused",
                line={"color": UNVISITED_COLOR, "width": 0.7, "dash": "dot"},
                hoverinfo="skip",
                showlegend=False,
            )
        )

    def binned(kind: str, items: list, ends, counts: np.ndarray, style: dict) -> None:
        if not items:
            return
        bins = _bins(counts, edge_bins) if has_flow else np.zeros(len(items), int)
        for b in range(edge_bins):
            members = [it for it, bb in zip(items, bins, strict=True) if bb == b]
            if not members:
                continue
            lo = int(np.floor(top_flow * b / edge_bins)) + 1
            hi = int(np.floor(top_flow * (b + 1) / edge_bins))
            scale = w_max if kind == "acquire" else 0.6 * w_max
            frac = (b + 1) / edge_bins
            # Thin edges carry little flow: fading them keeps a busy graph legible.
            if has_flow:
                width = scale * frac
                opacity = (
                    (0.35 + 0.65 * frac) if kind == "acquire" else 0.4 + 0.4 * frac
                )
            else:
                width, opacity = (0.8, 0.45) if len(items) > 40 else (1.2, 0.9)
            xs, ys = _segments(ends(it) for it in members)
            label = "acquire a sensor" if kind == "acquire" else "stop & classify"
            traces.append(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    legendgroup=kind,
                    name=f"{kind}: {lo}–{hi} examples" if has_flow else kind,
                    legendgrouptitle=None,
                    line={**style, "width": max(width, 0.8)},
                    hoverinfo="skip",
                    showlegend=False,
                    opacity=opacity,
                    meta={"kind": kind, "label": label, "bin": b},
                )
            )

    acquire_style = {"color": ACQUIRE_COLOR}
    stop_style = {"color": STOP_COLOR, "dash": "dot"}
    binned(
        "acquire",
        used,
        lambda e: (pos[e[0]], pos[e[1]]),
        np.array([edge_count[e] for e in used]),
        acquire_style,
    )
    binned(
        "stop",
        stops,
        lambda k: (pos[k], sink),
        np.array([stopped[k] for k in stops]),
        stop_style,
    )
    # One legend entry per kind: the widest trace of the kind shows it.
    for kind in ("acquire", "stop"):
        of_kind = [t for t in traces if t.meta and t.meta["kind"] == kind]
        if of_kind:
            of_kind[-1].showlegend = True
            of_kind[-1].name = of_kind[-1].meta["label"] + (
                " (width ∝ examples)" if has_flow else ""
            )

    # Hover for edges at their midpoints (lines themselves do not hover).
    mid_x, mid_y, mid_text = [], [], []
    for u, v in used:
        added = g.edges[u, v].get("added", ())
        mid_x.append((pos[u][0] + pos[v][0]) / 2)
        mid_y.append((pos[u][1] + pos[v][1]) / 2)
        text = "acquire " + ", ".join(added)
        if has_flow:
            n_e = edge_count[(u, v)]
            text += f"<br>{n_e} examples ({_pct(n_e, arrived[u])} of those at the node)"
        mid_text.append(text)
    for k in stops:
        mid_x.append((pos[k][0] + sink[0]) / 2)
        mid_y.append((pos[k][1] + sink[1]) / 2)
        mid_text.append(
            f"stop at {state_label(g.nodes[k]['sensors'], names, short)} and classify"
            f"<br>{stopped[k]} examples ({_pct(stopped[k], arrived[k])} of those "
            "at the node)"
        )
    if mid_x:
        traces.append(
            go.Scatter(
                x=mid_x,
                y=mid_y,
                mode="markers",
                name="edge info",
                showlegend=False,
                marker={"size": 10, "opacity": 0, "color": SINK_COLOR},
                hovertext=mid_text,
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )

    # Nodes: one trace, customdata[:, 0] = state index.
    nodes = [k for x in sorted(layers) for k in layers[x]]
    max_arr = max([arrived[k] for k in nodes] + [1])
    errors = {k: float(g.nodes[k].get(err_key, 0.0)) if err_key else 0.0 for k in nodes}
    sizes, colors, opac, hover, custom = [], [], [], [], []
    for k in nodes:
        sens = tuple(g.nodes[k].get("sensors", ()))
        moved = arrived[k] - stopped[k]
        if has_flow:
            sizes.append(d_min + (d_max - d_min) * np.sqrt(arrived[k] / max_arr))
        else:
            sizes.append(0.6 * d_max)
        if not has_flow:
            colors.append(ACQUIRE_COLOR)
        elif arrived[k] == 0 or (color == "error" and stopped[k] == 0):
            colors.append(UNVISITED_COLOR)
        elif color == "stop_share":
            colors.append(stopped[k] / arrived[k])
        else:
            colors.append(errors[k] / stopped[k])
        opac.append(1.0 if (not has_flow or arrived[k] > 0) else 0.35)
        lines = [f"<b>{', '.join(sens) if sens else 'no sensors yet'}</b>  (state {k})"]
        if has_flow:
            lines += [
                f"arrived: {arrived[k]}",
                f"stopped: {stopped[k]} ({_pct(stopped[k], arrived[k])})",
                f"moved on: {moved}",
            ]
            for _, v in sorted(g.out_edges(k), key=lambda e: -edge_count[e])[:6]:
                if edge_count[(k, v)]:
                    added = ", ".join(g.edges[k, v].get("added", ()))
                    lines.append(f"  → +{added}: {edge_count[(k, v)]}")
            if err_key == "errors":
                lines.append(
                    f"error of those stopping: {_pct(errors[k], stopped[k])}"
                    f" ({int(errors[k])}/{stopped[k]})"
                )
            elif err_key == "loss" and stopped[k]:
                lines.append(
                    f"mean loss of those stopping: {errors[k] / stopped[k]:.4g}"
                )
        if node_cost is not None:
            lines.append(f"cost so far: {node_cost[k]:.4g}")
        hover.append("<br>".join(lines))
        custom.append([k, arrived[k], stopped[k], moved, errors[k] if err_key else -1])

    # Labels: full names on small graphs, abbreviations on big ones; thinned so
    # that no two labels of one layer overlap.
    labels = {
        k: state_label(tuple(g.nodes[k].get("sensors", ())), names, short, big)
        for k in nodes
    }
    above = px_per_y >= d_max + LABEL_FONT_PX + 6
    gap = LABEL_FONT_PX + 3 if not above else d_max + LABEL_FONT_PX
    priority = {k: arrived[k] + (1e9 if k in must_show else 0) for k in nodes}
    keep = thin_labels(layers, {k: pos[k][1] for k in nodes}, priority, px_per_y, gap)
    if has_flow:
        keep = {k for k in keep if arrived[k] > 0 or k in must_show}
    label_room = px_per_x - d_max / 2 - 6
    text = []
    for k in nodes:
        lab = labels[k] if k in keep else ""
        if not above and len(lab) * CHAR_PX > label_room:
            lab = lab[: max(int(label_room / CHAR_PX) - 1, 3)] + "…"
        text.append(lab)

    cs = COLORSCALES[color]
    numeric = [c for c in colors if not isinstance(c, str)]
    cmax = 1.0 if color == "stop_share" else max([0.05, *numeric])
    # Mixed numbers and colour strings: plotly maps numbers through the scale
    # and draws the strings as given (grey for nodes without a value).
    marker = {
        "size": sizes,
        "color": colors,
        "opacity": opac,
        "line": {"color": "#555555", "width": 1},
    }
    if has_flow:
        marker.update(
            colorscale=cs,
            cmin=0.0,
            cmax=cmax,
            showscale=True,
            colorbar={
                "title": {
                    "text": "share stopping"
                    if color == "stop_share"
                    else ("error of stops" if err_key == "errors" else "loss of stops"),
                    "side": "right",
                },
                "tickformat": ".0%"
                if err_key != "loss" or color == "stop_share"
                else None,
                "thickness": 14,
                "len": 0.75,
                "x": 1.0,
                "xanchor": "left",
            },
        )
    traces.append(
        go.Scatter(
            x=[pos[k][0] for k in nodes],
            y=[pos[k][1] for k in nodes],
            mode="markers+text",
            name="states",
            showlegend=False,
            marker=marker,
            text=text,
            textposition="top center" if above else "top right",
            textfont={
                "size": LABEL_FONT_PX if not big else LABEL_FONT_PX - 1,
                "color": "#222222",
                "shadow": "auto",
            },
            customdata=np.array(custom, dtype=float),
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
            cliponaxis=False,
        )
    )
    total_stop = sum(stopped[k] for k in g.nodes)
    sink_hover = "<b>classify</b>"
    if has_flow:
        sink_hover += f"<br>{total_stop} examples classified"
        if err_key == "errors":
            total_err = sum(errors.values())
            sink_hover += f"<br>error: {_pct(total_err, total_stop)}"
    traces.append(
        go.Scatter(
            x=[sink[0]],
            y=[sink[1]],
            mode="markers+text",
            name="classify",
            showlegend=False,
            text=["classify"],
            textposition="bottom center",
            textfont={"size": LABEL_FONT_PX + 1, "color": SINK_COLOR},
            marker={"symbol": "square", "size": min(d_max, 26), "color": SINK_COLOR},
            hovertext=[sink_hover],
            hovertemplate="%{hovertext}<extra></extra>",
            cliponaxis=False,
        )
    )

    if path:
        traces.append(
            go.Scatter(
                x=[pos[s][0] for s in path],
                y=[pos[s][1] for s in path],
                mode="lines+markers",
                name="path",
                line={"color": PATH_COLOR, "width": 4},
                marker={"color": PATH_COLOR, "size": 9, "symbol": "circle"},
                customdata=np.array([[s] for s in path], dtype=float),
                hovertext=[f"path step {i}: state {s}" for i, s in enumerate(path)],
                hovertemplate="%{hovertext}<extra></extra>",
                opacity=0.85,
            )
        )
        end = pos[path[-1]]
        traces.append(
            go.Scatter(
                x=[end[0], sink[0]],
                y=[end[1], sink[1]],
                mode="lines",
                name="path stop",
                showlegend=False,
                hoverinfo="skip",
                line={"color": PATH_COLOR, "width": 3, "dash": "dash"},
                opacity=0.85,
            )
        )
    if selected is not None:
        s = int(selected)
        ring = next(sz for k, sz in zip(nodes, sizes, strict=True) if k == s)
        traces.append(
            go.Scatter(
                x=[pos[s][0]],
                y=[pos[s][1]],
                mode="markers",
                name="selected",
                marker={
                    "symbol": "circle-open",
                    "size": ring + 12,
                    "color": "#111111",
                    "line": {"width": 3},
                },
                customdata=np.array([[s]], dtype=float),
                hoverinfo="skip",
            )
        )

    fig = go.Figure(traces)
    for i, note in enumerate(notes):
        fig.add_annotation(
            text=note,
            xref="paper",
            yref="paper",
            x=0.0,
            xanchor="left",
            y=-(MARGIN["b"] + 18 * i) / plot_h,
            yanchor="top",
            showarrow=False,
            font={"size": 11, "color": "#555555"},
        )
    ticks = sorted(layers)
    fig.update_layout(
        title={"text": title} if title else None,
        height=height,
        margin=margin,
        plot_bgcolor="white",
        hovermode="closest",
        dragmode="pan",
        clickmode="event+select",
        legend={
            "orientation": "h",
            "yanchor": "bottom",
            "y": 1.0,
            "x": 0.0,
            "font": {"size": 12},
        },
        xaxis={
            "tickvals": [*ticks, sink[0]],
            "ticktext": [str(t) for t in ticks] + [""],
            "title": {"text": "sensors acquired"},
            "range": [-0.6, sink[0] + 0.5],
            "showgrid": False,
            "zeroline": False,
            "fixedrange": False,
        },
        yaxis={"visible": False, "range": list(y_range), "fixedrange": False},
    )
    return fig


def clicked_states(selection: Any) -> list[int]:
    """State indices of the DAG nodes in a plotly selection event.

    Accepts what ``st.plotly_chart(..., on_select="rerun")`` returns (a dict with
    ``selection.points``), the ``points`` list itself, or ``None``; points
    without a state (edges, sink) are ignored.

    Examples
    --------
    >>> clicked_states({"selection": {"points": [{"customdata": [3, 10, 2]}]}})
    [3]
    """
    if selection is None:
        return []
    points = selection
    if isinstance(selection, Mapping) or hasattr(selection, "selection"):
        sel = (
            selection["selection"]
            if isinstance(selection, Mapping)
            else (selection.selection)
        )
        points = sel["points"] if isinstance(sel, Mapping) else sel.points
    out: list[int] = []
    for p in points or []:
        data = p.get("customdata") if isinstance(p, Mapping) else None
        if data is None:
            continue
        value = data[0] if isinstance(data, Sequence | np.ndarray) else data
        if value is not None and float(value) >= 0 and int(value) not in out:
            out.append(int(value))
    return out


# ------------------------------------------------------------ trade-off figure
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
    "hull": {
        "label": "fixed-subset hull",
        "color": "#9a9a9a",
        "mode": "lines",
        "dash": "dash",
        "width": 2,
    },
}
SPLIT_DASH = {"test": "solid", "train": "dot", "validation": "dash"}


def lower_hull(x: Sequence[float], y: Sequence[float]) -> list[int]:
    """Positions of the points on the lower-left convex hull of (x, y).

    From the cheapest point to the most accurate one: the errors reachable by
    randomly mixing fixed subsets (Andrew's monotone chain, lower part).

    Examples
    --------
    >>> lower_hull([0, 1, 2, 3], [0.5, 0.2, 0.3, 0.1])
    [0, 1, 3]
    """
    pts = sorted(range(len(x)), key=lambda i: (x[i], y[i]))
    hull: list[int] = []
    for i in pts:
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a])
            if cross > 0:
                break
            hull.pop()
        hull.append(i)
    # Past the most accurate point, paying more only adds error.
    best = min(range(len(hull)), key=lambda j: (y[hull[j]], x[hull[j]]))
    return hull[: best + 1]


def _sensor_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Iterable):
        items = list(value)
        return ", ".join(map(str, items)) if items else "none"
    return str(value)


def tradeoff_figure(
    frame: pd.DataFrame,
    *,
    x: str = "avg_cost",
    split: str | Sequence[str] | None = "test",
    hull: bool | None = None,
    highlight: Any = None,
    title: str | None = None,
    height: int = 520,
) -> go.Figure:
    """Error against cost: the DAG curve, fixed subsets, hull, all sensors, oracle.

    Parameters
    ----------
    frame : DataFrame
        Tidy rows with ``method``, ``avg_cost``, ``avg_sensors``, ``error`` and
        optionally ``split``, ``cost_scale`` and ``sensors`` (names, shown in
        hover). Methods ``dag``, ``fixed``, ``all_sensors``, ``oracle`` and
        ``hull`` get their own styles; any other name is drawn as a curve.
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
    if x not in X_TITLES:
        raise ValueError(f"x must be one of {sorted(X_TITLES)}; got {x!r}.")
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a DataFrame; got {type(frame).__name__}.")
    missing = [c for c in ("method", x, "error") if c not in frame.columns]
    if missing:
        raise ValueError(f"The trade-off frame lacks column(s) {missing}.")
    data = frame
    if "split" in frame.columns and split is not None:
        wanted = [split] if isinstance(split, str) else list(split)
        data = frame[frame["split"].isin(wanted)]
        if data.empty:
            raise ValueError(
                f"No rows with split {wanted}; the frame has "
                f"{sorted(map(str, frame['split'].unique()))}."
            )
    splits = list(dict.fromkeys(data["split"])) if "split" in data.columns else [None]
    several = len(splits) > 1
    palette = qualitative.D3[2:] + qualitative.Set2
    traces: list[go.Scatter] = []
    for sp in splits:
        part = data if sp is None else data[data["split"] == sp]
        suffix = f" ({sp})" if several else ""
        methods = list(dict.fromkeys(part["method"]))
        if hull is False:
            methods = [m for m in methods if m != "hull"]
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
            traces.append(_method_trace(rows, x, style, sp, suffix))
        if hull and "hull" not in methods:
            base = part[part["method"].isin(["fixed", "all_sensors"])]
            if len(base):
                idx = lower_hull(base[x].tolist(), base["error"].tolist())
                rows = base.iloc[idx]
                traces.append(_method_trace(rows, x, METHOD_STYLE["hull"], sp, suffix))
    if highlight is not None:
        labels = [highlight] if np.isscalar(highlight) else list(highlight)
        absent = [lab for lab in labels if lab not in frame.index]
        if absent:
            raise ValueError(f"highlight row(s) {absent} are not in the frame.")
        sel = frame.loc[labels]
        traces.append(
            go.Scatter(
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
        )
    x_top = float(np.nanmax(data[x].to_numpy(dtype=float))) or 1.0
    fig = go.Figure(traces)
    fig.update_layout(
        title={"text": title} if title else None,
        height=height,
        plot_bgcolor="white",
        hovermode="closest",
        clickmode="event+select",
        margin={"l": 70, "r": 30, "t": 60, "b": 60},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0.0},
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


def _method_trace(
    rows: pd.DataFrame, x: str, style: dict[str, Any], split: Any, suffix: str
) -> go.Scatter:
    hover = []
    for _, r in rows.iterrows():
        lines = [f"<b>{style['label']}</b>" + (f" ({split})" if split else "")]
        if "sensors" in rows.columns:
            lines.append("sensors: " + _sensor_text(r["sensors"]))
        if "cost_scale" in rows.columns and pd.notna(r["cost_scale"]):
            lines.append(f"cost_scale: {r['cost_scale']:.4g}")
        lines += [f"error: {r['error']:.2%}"]
        for col, name in (("avg_cost", "avg cost"), ("avg_sensors", "avg sensors")):
            if col in rows.columns and pd.notna(r[col]):
                lines.append(f"{name}: {r[col]:.3g}")
        hover.append("<br>".join(lines))
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
        hovertemplate="%{hovertext}<extra></extra>",
        opacity=0.7 if train else 1.0,
    )


# ------------------------------------------------------- decision regions
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
        Grid points per axis.
    ranges : mapping column -> (low, high), optional
        The grid range per column (needed without ``X``).
    max_points : int
        At most this many examples are drawn (a fixed sample).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        A heatmap ``"policy"`` of action indices (0 = stop, a = a-th child,
        names on the colour bar) and one scatter trace per class.
    """
    from .explain import _action_names

    dag = model.sensor_dag_
    if not isinstance(state, int | np.integer) or not 0 <= state < dag.n_states:
        raise ValueError(f"state must be a state index in 0..{dag.n_states - 1}.")
    state = int(state)
    if grid < 2:
        raise ValueError(f"grid must be at least 2; got {grid}.")
    cols = list(model.state_columns_[state])
    col_names = [model.spec_.columns[i] for i in cols]
    names = _action_names(model, state)
    policy = model.policies_[state]
    held = ", ".join(dag.state_names(state)) or "no sensors"
    title = title or f"policy at state {state} ({held})"
    colors = [STOP_COLOR] + [
        ACTION_COLORS[a % len(ACTION_COLORS)] for a in range(len(names) - 1)
    ]
    if len(cols) == 0 or policy.learner is None:
        # No inputs, or a leaf: one action for every example.
        action = int(policy.predict(np.zeros((1, len(cols))))[0])
        why = "no inputs" if len(cols) == 0 else "a leaf"
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
            title={"text": f"{title}: {why}, one action for every example"},
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
    if len(cols) > 2:
        raise ValueError(
            f"State {state} has {len(cols)} input columns ({col_names}); decision "
            "regions can be drawn for 1 or 2 columns only."
        )
    Xv = model._features(X) if X is not None else None
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
    A = len(names)
    scale = []
    for a, col in enumerate(colors):
        scale += [[a / A, col], [(a + 1) / A, col]]
    colorbar = {
        "tickvals": list(range(A)),
        "ticktext": names,
        "title": {"text": "action", "side": "top"},
        "thickness": 14,
    }
    heat_common = {
        "name": "policy",
        "colorscale": scale,
        "zmin": -0.5,
        "zmax": A - 0.5,
        "colorbar": colorbar,
        "opacity": 0.55,
        "hoverinfo": "skip",
    }
    classes = list(getattr(model, "classes_", [None]))
    if len(cols) == 2:
        gx, gy = np.meshgrid(axes[0], axes[1])
        Z = np.column_stack([gx.ravel(), gy.ravel()])
        acts = policy.predict(Z).reshape(gx.shape)
        traces: list[Any] = [go.Heatmap(x=axes[0], y=axes[1], z=acts, **heat_common)]
        y_title = col_names[1]
    else:
        acts = policy.predict(axes[0].reshape(-1, 1))
        n_rows = max(len(classes), 1)
        traces = [
            go.Heatmap(
                x=axes[0],
                y=[-0.5, n_rows - 0.5],
                z=np.vstack([acts, acts]),
                **heat_common,
            )
        ]
        y_title = "class"
    if Xv is not None:
        routing = model._route(Xv)
        reach = np.flatnonzero((routing.path == state).any(axis=1))
        if reach.size > max_points:
            reach = np.sort(np.random.default_rng(0).choice(reach, max_points, False))
        y_arr = None if y is None else check_labels(y, len(Xv), None)[reach]
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
    fig = go.Figure(traces)
    yaxis: dict[str, Any] = {"title": {"text": y_title}, "zeroline": False}
    if len(cols) == 1:
        yaxis.update(
            tickvals=list(range(len(classes))),
            ticktext=[str(c) for c in classes],
            range=[-0.5, len(classes) - 0.5],
        )
    fig.update_layout(
        title={"text": title},
        height=480,
        plot_bgcolor="white",
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0.0},
        margin={"l": 70, "r": 30, "t": 80, "b": 60},
        xaxis={"title": {"text": col_names[0]}, "zeroline": False},
        yaxis=yaxis,
    )
    return fig
