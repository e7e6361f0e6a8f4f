"""The DAG figure: states in layers, flow as edge widths, classify sinks per layer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..validation import check_params, int_in
from ._dag_layout import (
    CHAR_PX,
    LABEL_FONT_PX,
    LABEL_H_PX,
    PLOT_WIDTH_PX,
    ROW_GAP_PX,
    Box,
    abbreviate,
    figure_height,
    merge_rare,
    node_label,
    order_layers,
    place_labels,
    stop_lanes,
    text_width_px,
)
from ._style import (
    ACQUIRE_COLOR,
    HOVER,
    LEGEND_TOP,
    MAX_FIGURE_PIXELS,
    MODEBAR_PX,
    PATH_COLOR,
    PENDING_COLOR,
    SINK_COLOR,
    STOP_COLOR,
    UNREACHED_COLOR,
    UNVISITED_COLOR,
    title_under_modebar,
)

COLORSCALES = {"stop_share": "Blues", "error": "OrRd"}
#: Most edge-width bins (``edge_bins``): each bin is one plotly trace.
MAX_EDGE_BINS = 20
MARGIN = {"l": 30, "r": 30, "t": 70, "b": 50}
NOTE_PX = 18  # height of one note line under the figure
NOTE_CHAR_PX = 6.2  # average glyph width of the 11 px note font
KEY_SEP = "  ·  "
LABEL_PAD_PX = 10  # free space between the labels of neighbouring layers
BIG_GRAPH = 16  # more states than this: "all−x" labels
SHORT_CHARS = 8  # a "+x" label up to this long keeps sensor names whole
COLORBAR_PX = 80  # room right of the drawing for the colour bar and its title
X_LEFT, X_RIGHT = -0.6, 0.9  # the x axis: first layer - 0.6 .. last + 0.9
MAX_LABEL_ROWS = 6  # rows of staggered labels above (and below) a node
GROWN_HEIGHT_PX = 1600  # tallest a crowded DAG is drawn to give labels room
LABELLED_SHARE = 0.95  # labels placed before the drawing stops growing
MAX_LABEL_CHARS = 16  # a label cut with "…" beyond this when nothing fits
HOVER_CHARS = 60  # longest line of sensor names in a node's hover
MAX_LABELS = 80  # most node labels placed (the most visited nodes')

Point = tuple[float, float]


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


@dataclass
class _View:
    """Everything the traces need: counts, what is shown, and the geometry."""

    g: nx.DiGraph
    names: tuple[str, ...]
    node_cost: dict[int, float] | None
    has_flow: bool
    err_key: str | None  # "errors" (classifier), "loss" (regressor) or None
    arrived: dict[int, int]
    stopped: dict[int, int]
    edge_count: dict[tuple[int, int], int]
    must_show: set[int]
    layers: dict[int, list[int]]
    short: dict[str, str]
    big: bool
    notes: list[str]
    pos: dict[int, Point]
    lanes: dict[int, float]  # stopping node -> x of its lane down to a sink
    sinks: dict[int, Point]  # layer -> its classify sink
    y_range: tuple[float, float]
    height: int
    margin: dict[str, int]
    px_per_y: float
    px_per_x: float
    width_px: int  # the width the drawing was laid out for
    d_max: float
    fixed_height: bool = False  # the caller chose the height
    # States drawn without their flow (greyed: e.g. not reduced yet).
    pending: set[int] = field(default_factory=set)
    # Placed labels: node -> (x, y) in data units, and each node's text.
    label_at: dict[int, Point] = field(default_factory=dict)
    label_text: dict[int, str] = field(default_factory=dict)

    def scale(self, px_per_y: float, band_px: float) -> None:
        """Set the vertical scale and a band of ``band_px`` pixels above the
        top node (room for labels); the height follows unless fixed."""
        low = min(y for _, y in self.sinks.values()) - 0.7
        high = max(y for _, y in self.pos.values())
        span = high - low
        if self.fixed_height:
            px_per_y = max(self.plot_h - band_px, 0.3 * self.plot_h) / span
        else:
            self.height = int(np.ceil(span * px_per_y + band_px)) + (
                self.margin["t"] + self.margin["b"]
            )
        self.px_per_y = px_per_y
        self.y_range = (low, low + self.plot_h / px_per_y)
        self.d_max = float(np.clip(min(0.8 * px_per_y, 0.45 * self.px_per_x), 9, 60))

    def to_px(self, x: float, y: float) -> Point:
        """Data units to pixels from the drawing's top-left corner."""
        return (
            (x - X_LEFT) * self.px_per_x,
            (self.y_range[1] - y) * self.px_per_y,
        )

    def to_data(self, px: float, py: float) -> Point:
        return (px / self.px_per_x + X_LEFT, self.y_range[1] - py / self.px_per_y)

    @property
    def nodes(self) -> list[int]:
        return [k for x in sorted(self.layers) for k in self.layers[x]]

    @property
    def plot_h(self) -> float:
        return self.height - self.margin["t"] - self.margin["b"]

    @property
    def plot_w(self) -> float:
        return self.width_px - self.margin["l"] - self.margin["r"]

    @property
    def edge_w_max(self) -> float:
        """Width (px) of the widest acquire edge."""
        return float(np.clip(self.d_max / 3.5, 4, 14))

    def marker_sizes(self) -> dict[int, float]:
        """Each node's marker diameter (px): area proportional to arrivals."""
        if not self.has_flow:
            return dict.fromkeys(self.nodes, 0.6 * self.d_max)
        d_min = min(7.0, self.d_max)
        top = max([self.arrived[k] for k in self.nodes] + [1])
        return {
            k: d_min + (self.d_max - d_min) * float(np.sqrt(self.arrived[k] / top))
            for k in self.nodes
        }

    def sensors(self, k: int) -> tuple[str, ...]:
        return tuple(self.g.nodes[k].get("sensors", ()))

    def merged(self, k: int) -> int:
        """How many rarely reached states node ``k`` stands for (0: a state)."""
        return int(self.g.nodes[k].get("merged", 0))

    def sink_of(self, k: int) -> Point:
        """The sink a stop at node ``k`` runs to (its layer's)."""
        return self.sinks[int(round(self.pos[k][0]))]

    def stop_route(self, k: int) -> list[tuple[Point, Point]]:
        """Node ``k``'s stop edge: right to its lane, down to the row of
        sinks, along it to its layer's sink (segments that pass no node)."""
        x, y = self.pos[k]
        lane = self.lanes.get(k, x + 0.35)
        sink = self.sink_of(k)
        corner = (lane, sink[1])
        return [((x, y), (lane, y)), ((lane, y), corner), (corner, sink)]

    def error_sum(self, k: int) -> float:
        return float(self.g.nodes[k].get(self.err_key, 0.0)) if self.err_key else 0.0


def _view(
    g: nx.DiGraph,
    names: tuple[str, ...],
    node_cost: dict[int, float] | None,
    must_show: set[int],
    hide_unvisited: bool,
    min_arrived: int,
    height: int | None,
    width: int | None = None,
    path: Iterable[int] = (),
) -> _View:
    K = g.number_of_nodes()
    has_flow = all("arrived" in g.nodes[k] for k in g.nodes)
    err_key = next(
        (key for key in ("errors", "loss") if all(key in g.nodes[k] for k in g.nodes)),
        None,
    )
    arrived = {k: int(g.nodes[k].get("arrived", 0)) for k in g.nodes}
    stopped = {k: int(g.nodes[k].get("stopped", 0)) for k in g.nodes}
    threshold = max(int(min_arrived), 1)
    visited = (
        {k for k in g.nodes if arrived[k] >= threshold} if has_flow else set(g.nodes)
    )
    shown = (visited | must_show | {0}) if hide_unvisited else set(g.nodes)
    layer_of = {k: len(g.nodes[k].get("sensors", ())) for k in g.nodes}
    # States reached by a few examples: merged per layer, not dropped, so the
    # flow into every drawn node stays drawn.
    rare = {k for k in g.nodes if k not in shown and arrived[k] > 0}
    n_merged = len(rare)
    if rare:
        deepest = max(layer_of[k] for k in shown)
        g = merge_rare(g, rare, layer_of, deepest)
        for m in (m for m in g.nodes if g.nodes[m].get("merged")):
            layer_of[m] = g.nodes[m]["layer"]
            arrived[m] = int(g.nodes[m].get("arrived", 0))
            stopped[m] = int(g.nodes[m].get("stopped", 0))
            visited.add(m)
            shown.add(m)
            if node_cost is not None:
                node_cost = {**node_cost, m: float(g.nodes[m].get("cost", np.nan))}
    # The path joins the reached states' block; a selected node does not
    # move (figures of one DAG with another node selected keep its layout).
    layers = order_layers(
        g, shown, layer_of, "count" if has_flow else None, visited | set(path)
    )
    big = K > BIG_GRAPH
    last_layer = max(layers)
    # The drawing fits the width asked (the colour bar to its right): a deep
    # DAG gets narrower layers and staggered labels, never a wider figure.
    margin = {**MARGIN, "r": MARGIN["r"] + (COLORBAR_PX if has_flow else 0)}
    plot_w = (width - margin["l"] - margin["r"]) if width else PLOT_WIDTH_PX
    plot_w = max(plot_w, 100)
    px_per_x = plot_w / (last_layer + X_RIGHT - X_LEFT)
    short = _sensor_codes(g, layers, names, big, px_per_x)
    notes = _key_lines([f"{short[n]} = {n}" for n in names], plot_w)
    if all(short[n] == n for n in names):
        notes = []
    if _added_labels(g, shown, names, short, big, px_per_x):
        notes.append(
            "+x: the state before it plus sensor x (hover a node: its whole state)"
        )
    n_hidden = K - len([k for k in shown if k >= 0]) - n_merged
    if n_hidden:
        notes.append(f"{n_hidden} of {K} states hidden (no example reaches)")
    if n_merged:
        notes.append(
            f"{n_merged} states reached by fewer than {threshold} examples merged "
            "per depth into the diamond nodes 'other'"
        )
    margin["b"] += NOTE_PX * len(notes)
    max_per_layer = max(len(v) for v in layers.values())

    # Data units: one layer apart in x, one node apart in y. Each layer has
    # its own sink below the lowest node; a stop edge runs right to a lane
    # between the layers, then down to it, so it never crosses a node.
    pos = {
        k: (float(x), i - (len(ks) - 1) / 2)
        for x, ks in layers.items()
        for i, k in enumerate(ks)
    }
    y_low = min(p[1] for p in pos.values())
    y_high = max(p[1] for p in pos.values())
    sink_y = y_low - 0.8
    stopping = {k for k in pos if stopped[k] > 0} if has_flow else set()
    lanes = stop_lanes(layers, pos, stopping)
    sinks = {x: (float(x) + 0.35, sink_y) for x in layers}
    v = _View(
        g=g,
        names=names,
        node_cost=node_cost,
        has_flow=has_flow,
        err_key=err_key,
        arrived=arrived,
        stopped=stopped,
        edge_count={(u, v): int(c) for u, v, c in g.edges(data="count", default=0)},
        must_show=must_show,
        layers=layers,
        short=short,
        big=big,
        notes=notes,
        pos=pos,
        lanes=lanes,
        sinks=sinks,
        y_range=(sink_y - 0.7, y_high + 0.7),
        height=height or figure_height(max_per_layer) + NOTE_PX * len(notes),
        margin=margin,
        px_per_y=1.0,
        px_per_x=px_per_x,
        width_px=int(plot_w + margin["l"] + margin["r"]),
        d_max=9.0,
        fixed_height=height is not None,
    )
    px_per_y = v.plot_h / (v.y_range[1] - v.y_range[0])
    v.scale(px_per_y, band_px=0.7 * px_per_y)
    return v


def _label_room(px_per_x: float) -> float:
    """Pixels a node's label may take between its layer and the next."""
    return max(px_per_x - LABEL_PAD_PX, MAX_LABEL_CHARS * CHAR_PX / 2)


def _added_labels(
    g: nx.DiGraph,
    shown: set[int],
    names: tuple[str, ...],
    short: Mapping[str, str],
    big: bool,
    px_per_x: float,
) -> bool:
    """Whether some drawn node's whole label is too wide, so that it says
    only what its incoming edge adds (``+x``, :func:`_added_label`)."""
    room = _label_room(px_per_x)
    return any(
        text_width_px(
            node_label(tuple(g.nodes[k].get("sensors", ())), names, short, big)
        )
        > room
        for k in shown
        if k in g.nodes and not g.nodes[k].get("merged") and g.nodes[k].get("sensors")
    )


def _added_label(
    g: nx.DiGraph, k: int, names: tuple[str, ...], short: Mapping[str, str]
) -> str:
    """A node's shortest label: ``+x``, the sensor(s) its main incoming edge
    adds (``start``, ``other`` and ``all`` as they are)."""
    if g.nodes[k].get("merged"):
        return "other"
    sensors = tuple(g.nodes[k].get("sensors", ()))
    parents = [p for p in g.predecessors(k) if not g.nodes[p].get("merged")]
    if not sensors or not parents or len(sensors) == len(names):
        return node_label(sensors, names, short) if sensors else "start"
    main = max(parents, key=lambda p: (g.edges[p, k].get("count", 0), -p))
    held = set(g.nodes[main].get("sensors", ()))
    return "+" + "+".join(short.get(s, s) for s in sensors if s not in held)


def _sensor_codes(
    g: nx.DiGraph,
    layers: dict[int, list[int]],
    names: tuple[str, ...],
    big: bool,
    room_px: float,
) -> dict[str, str]:
    """Sensor names as the labels use them: whole when every label (or, for
    a deep DAG, every ``+x`` label) fits ``room_px`` or is at most
    :data:`SHORT_CHARS` long, else codes of at most 5, then 3 characters (a
    key under the figure spells them out). Big graphs label states by what
    they add, so their names stay whole when short."""
    options = [{n: n for n in names}, abbreviate(names, 5), abbreviate(names, 3)]
    shown = [k for ks in layers.values() for k in ks]

    def whole(short: dict[str, str], k: int) -> bool:
        sensors = tuple(g.nodes[k].get("sensors", ()))
        label = node_label(sensors, names, short, big)
        return len(label) * CHAR_PX <= room_px - LABEL_PAD_PX

    # Whole labels first (codes if need be); else "+x" labels of whole names
    # when short (no key to look up); else, of the codes whose "+x" labels are
    # short, those leaving the most labels whole.
    for short in options:
        if all(whole(short, k) for k in shown):
            return short
    if all(len(_added_label(g, k, names, options[0])) <= SHORT_CHARS for k in shown):
        return options[0]
    usable = [
        (-sum(whole(short, k) for k in shown), i)
        for i, short in enumerate(options)
        if all(len(_added_label(g, k, names, short)) <= SHORT_CHARS for k in shown)
    ]
    return options[min(usable)[1]] if usable else options[-1]


def _key_lines(items: list[str], plot_w: float) -> list[str]:
    """The code key as note lines that each fit the drawing's width."""
    most = max(int(plot_w / NOTE_CHAR_PX), 20)
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + len(KEY_SEP) + len(item) <= most:
            lines[-1] += KEY_SEP + item
        else:
            lines.append(item)
    return lines


def _segments(pairs: Iterable[tuple[Point, Point]]) -> tuple[list, list]:
    """Line segments as one x and one y list with None separators."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for (x0, y0), (x1, y1) in pairs:
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    return xs, ys


def _pct(num: float, den: float) -> str:
    return f"{num / den:.1%}" if den else "–"


def _used_edges(v: _View) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Drawn edges with flow (or all, without flow) and those without flow."""
    drawn = [(a, b) for (a, b) in v.g.edges if a in v.pos and b in v.pos]
    if not v.has_flow:
        return drawn, []
    used = [e for e in drawn if v.edge_count[e] > 0 and e[0] not in v.pending]
    return used, [e for e in drawn if e not in set(used)]


def _stopping(v: _View) -> list[int]:
    if not v.has_flow:
        return []
    return [k for k in sorted(v.pos) if v.stopped[k] > 0 and k not in v.pending]


def _edge_traces(v: _View, edge_bins: int) -> list[go.Scatter]:
    """Acquire and stop edges, one trace per width bin (plus unused edges)."""
    used, unused = _used_edges(v)
    stops = _stopping(v)
    traces: list[go.Scatter] = []
    if unused:
        xs, ys = _segments((v.pos[a], v.pos[b]) for a, b in unused)
        traces.append(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name="unused edges",
                line={"color": UNVISITED_COLOR, "width": 0.7, "dash": "dot"},
                hoverinfo="skip",
                showlegend=False,
            )
        )
    top = max([v.edge_count[e] for e in used] + [v.stopped[k] for k in stops] + [1])
    w_max = v.edge_w_max
    kinds = (
        ("acquire", used, lambda e: [(v.pos[e[0]], v.pos[e[1]])], v.edge_count.get),
        ("stop", stops, v.stop_route, v.stopped.get),
    )
    for kind, items, ends, count in kinds:
        if not items:
            continue
        counts = np.array([count(it) for it in items])
        # Bins are linear in the count: width stays proportional to flow.
        bins = (
            np.clip(np.ceil(counts / top * edge_bins).astype(int) - 1, 0, edge_bins - 1)
            if v.has_flow
            else np.zeros(len(items), dtype=int)
        )
        of_kind = []
        for b in range(edge_bins):
            members = [it for it, bb in zip(items, bins, strict=True) if bb == b]
            if not members:
                continue
            frac = (b + 1) / edge_bins
            if v.has_flow:
                width = (w_max if kind == "acquire" else 0.6 * w_max) * frac
                # Thin edges carry little flow: fading them keeps a busy
                # graph legible.
                opacity = 0.35 + 0.65 * frac if kind == "acquire" else 0.4 + 0.4 * frac
            else:
                width, opacity = (0.8, 0.45) if len(items) > 40 else (1.2, 0.9)
            lo = int(np.floor(top * b / edge_bins)) + 1
            hi = int(np.floor(top * frac))
            xs, ys = _segments(pair for it in members for pair in ends(it))
            style = (
                {"color": ACQUIRE_COLOR}
                if kind == "acquire"
                else {"color": STOP_COLOR, "dash": "dot"}
            )
            of_kind.append(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    legendgroup=kind,
                    name=f"{kind}: {lo}–{hi} examples" if v.has_flow else kind,
                    line={**style, "width": max(width, 0.8)},
                    hoverinfo="skip",
                    showlegend=False,
                    opacity=opacity,
                    meta={"kind": kind, "bin": b, "min": lo, "max": hi},
                )
            )
        # One legend entry per kind, shown by its widest trace.
        label = "acquire a sensor" if kind == "acquire" else "stop & classify"
        of_kind[-1].showlegend = True
        of_kind[-1].name = label + (" (width ∝ examples)" if v.has_flow else "")
        traces += of_kind
    return traces


def _edge_info_trace(v: _View) -> go.Scatter | None:
    """Invisible markers at edge midpoints: plotly lines themselves do not hover."""
    used, _ = _used_edges(v)
    xs, ys, text = [], [], []
    for a, b in used:
        xs.append((v.pos[a][0] + v.pos[b][0]) / 2)
        ys.append((v.pos[a][1] + v.pos[b][1]) / 2)
        line = "acquire " + ", ".join(v.g.edges[a, b].get("added", ()))
        if v.has_flow:
            n = v.edge_count[(a, b)]
            line += f"<br>{n} examples ({_pct(n, v.arrived[a])} of those at the node)"
        text.append(line)
    for k in _stopping(v):
        (x0, y0), (lane, _) = v.stop_route(k)[0]
        xs.append((x0 + lane) / 2)
        ys.append(y0)
        label = node_label(v.sensors(k), v.names, v.short)
        text.append(
            f"stop at {label} and classify<br>{v.stopped[k]} examples "
            f"({_pct(v.stopped[k], v.arrived[k])} of those at the node)"
        )
    if not xs:
        return None
    return go.Scatter(
        x=xs,
        y=ys,
        mode="markers",
        name="edge info",
        showlegend=False,
        marker={"size": 10, "opacity": 0, "color": SINK_COLOR},
        hovertext=text,
        hovertemplate=HOVER,
    )


def _wrap(names: Sequence[str], most: int) -> list[str]:
    """``names`` joined by commas on lines of at most ``most`` characters
    (a longer name has a line of its own)."""
    lines: list[str] = []
    for name in names:
        if lines and len(lines[-1]) + 2 + len(name) <= most:
            lines[-1] += ", " + name
        else:
            lines.append(name)
    return lines


def _node_hover(v: _View, k: int) -> str:
    sens = v.sensors(k)
    if v.merged(k):
        head = f"<b>other: {v.merged(k)} rarely reached states</b>"
    elif len(", ".join(sens)) <= HOVER_CHARS:
        head = f"<b>{', '.join(sens) if sens else 'no sensors yet'}</b>  (state {k})"
    else:
        # Every sensor of a deep state, a few per line: one long line would
        # run out of the figure.
        head = f"<b>state {k}: {len(sens)} sensors</b><br>" + "<br>".join(
            _wrap(sens, HOVER_CHARS)
        )
    lines = [head]
    if k in v.pending:
        return head + "<br>not reduced yet: its policy is learned later"
    if v.has_flow:
        arrived, stopped = v.arrived[k], v.stopped[k]
        lines += [
            f"arrived: {arrived}",
            f"stopped: {stopped} ({_pct(stopped, arrived)})",
            f"moved on: {arrived - stopped}",
        ]
        out = sorted(v.g.out_edges(k), key=lambda e: -v.edge_count[e])[:6]
        for e in out:
            if v.edge_count[e]:
                added = ", ".join(v.g.edges[e].get("added", ()))
                to = f"+{added}" if added else "other (rarely reached states)"
                lines.append(f"  → {to}: {v.edge_count[e]}")
        err = v.error_sum(k)
        if v.err_key == "errors":
            lines.append(
                f"error of those stopping: {_pct(err, stopped)} ({int(err)}/{stopped})"
            )
        elif v.err_key == "loss" and stopped:
            lines.append(f"mean loss of those stopping: {err / stopped:.4g}")
    if v.node_cost is not None and np.isfinite(v.node_cost.get(k, np.nan)):
        mean = "mean " if v.merged(k) else ""
        lines.append(f"{mean}cost so far: {v.node_cost[k]:.4g}")
    return "<br>".join(lines)


def _label_texts(v: _View) -> dict[int, str]:
    """Each node's label text, most visited first: its whole label when it
    fits between its layer and the next, else what the node adds (``+x``),
    cut with "…" as a last resort; of two nodes of a layer whose labels
    would read the same, only the most visited keeps it."""
    room = _label_room(v.px_per_x)
    texts: dict[int, str] = {}
    seen: set[tuple[float, str]] = set()
    for k in sorted(v.nodes, key=lambda k: _label_rank(v, k)):
        if v.has_flow and v.arrived[k] == 0 and k not in v.must_show:
            continue
        if v.merged(k):
            text = "other"
        else:
            text = node_label(v.sensors(k), v.names, v.short, v.big)
            if text_width_px(text) > room:
                text = _added_label(v.g, k, v.names, v.short)
        if len(text) > MAX_LABEL_CHARS:
            text = text[: MAX_LABEL_CHARS - 1] + "…"
        if (v.pos[k][0], text) not in seen:
            seen.add((v.pos[k][0], text))
            texts[k] = text
    return texts


def _label_rank(v: _View, k: int) -> tuple[float, int]:
    """Labels are placed in this order: the path and the selected node, then
    the most visited; "other" nodes last among equals."""
    priority = v.arrived[k] + (1e9 if k in v.must_show else 0)
    return (-(priority - (0.5 if v.merged(k) else 0)), k)


def _obstacles(v: _View, traces: Sequence[go.Scatter]) -> tuple[np.ndarray, list[Box]]:
    """What a label may not touch, in pixels, read from the drawn traces:
    lines as segments (``x0, y0, x1, y1, half_width``), markers as boxes."""
    rows: list[tuple[float, ...]] = []
    blocks: list[Box] = []
    for t in traces:
        mode = t.mode or ""
        xs, ys = list(t.x), list(t.y)
        if "lines" in mode:
            half = float(t.line.width or 2) / 2 + 1
            for a, b, c, d in zip(xs, ys, xs[1:], ys[1:], strict=False):
                if None not in (a, b, c, d):
                    rows.append((*v.to_px(a, b), *v.to_px(c, d), half))
        if "markers" in mode and t.name != "edge info":
            sizes = t.marker.size
            ring = float((t.marker.line.width or 0) if t.marker.line else 0)
            for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
                size = sizes[i] if isinstance(sizes, tuple | list) else sizes
                half = float(size or 6) / 2 + ring + 1
                px, py = v.to_px(x, y)
                blocks.append(Box(px - half, py - half, px + half, py + half))
        if "text" in mode and t.name == "classify":
            px, py = v.to_px(xs[-1], ys[-1])
            half_w = text_width_px(t.text[-1]) / 2
            top = py + float(t.marker.size) / 2
            blocks.append(Box(px - half_w, top, px + half_w, top + LABEL_H_PX + 2))
    return np.array(rows, dtype=float).reshape(-1, 5), blocks


def _placed_labels(
    v: _View, traces: Sequence[go.Scatter], rows: int
) -> dict[int, tuple[float, float]]:
    """Label centres (pixels) of the nodes of ``v.label_text`` that have room."""
    segments, blocks = _obstacles(v, traces)
    sizes = v.marker_sizes()
    area = Box(2 - v.margin["l"], 2, v.plot_w - 2, v.plot_h - 2)
    # The most visited first; beyond MAX_LABELS nodes the drawing has no
    # room for more (and each costs a search): the others keep their hover.
    order = sorted(v.label_text, key=lambda k: _label_rank(v, k))[:MAX_LABELS]
    todo = [(k, *v.to_px(*v.pos[k]), sizes[k] / 2, v.label_text[k]) for k in order]
    return place_labels(todo, segments, blocks, area, rows)


def _laid_out_traces(
    v: _View, color: str, edge_bins: int, path: list[int], selected: int | None
) -> list[go.Scatter]:
    """The figure's traces with the nodes' labels placed where they touch no
    drawn line, marker or other label and stay in the figure; a crowded
    drawing grows taller (unless its height is fixed) while that places
    more labels (a deep chain's layers need width, not height)."""
    v.label_text = _label_texts(v)
    widest = max([text_width_px(t) for t in v.label_text.values()] + [0])
    rows = int(np.clip(np.ceil((widest + 4) / v.px_per_x), 1, MAX_LABEL_ROWS))
    tried: list[tuple[int, float, float, dict[int, Point], list[go.Scatter]]] = []
    px_per_y = v.px_per_y
    while True:
        band = max(0.7 * px_per_y, rows * (LABEL_H_PX + ROW_GAP_PX) + v.d_max / 2 + 6)
        v.scale(px_per_y, band)
        traces = _dag_traces(v, color, edge_bins, path, selected)
        placed = _placed_labels(v, traces, rows)
        tried.append((len(placed), -v.height, px_per_y, placed, traces))
        done = len(placed) >= LABELLED_SHARE * min(len(v.label_text), MAX_LABELS)
        # A drawing of hundreds of states does not grow: no height names them.
        crowded = len(v.nodes) > MAX_LABELS
        if done or crowded or v.fixed_height or v.height * 1.3 > GROWN_HEIGHT_PX:
            break
        px_per_y *= 1.3
    # The most labels; of equals, the shortest drawing.
    _, _, px_per_y, placed, traces = max(tried, key=lambda t: t[:2])
    band = max(0.7 * px_per_y, rows * (LABEL_H_PX + ROW_GAP_PX) + v.d_max / 2 + 6)
    v.scale(px_per_y, band)
    v.label_at = {k: v.to_data(*p) for k, p in placed.items()}
    nodes = next(t for t in traces if t.name == "states")
    nodes.text = [v.label_text[k] if k in v.label_at else "" for k in v.nodes]
    custom = {k: list(row) for k, row in zip(v.nodes, nodes.customdata, strict=True)}
    return [*traces, _label_trace(v, custom)]


def _label_trace(v: _View, custom: dict[int, list[float]]) -> go.Scatter:
    """The placed labels as a text trace; hovering or clicking one is as
    the node (same hover, same ``customdata``)."""
    nodes = [k for k in v.nodes if k in v.label_at]
    # As wide as the nodes' customdata even when no label found room (a
    # fixed-height drawing can place none): reshape(0, -1) cannot infer it.
    width = len(next(iter(custom.values()), []))
    return go.Scatter(
        x=[v.label_at[k][0] for k in nodes],
        y=[v.label_at[k][1] for k in nodes],
        mode="text",
        name="labels",
        showlegend=False,
        text=[v.label_text[k] for k in nodes],
        textposition="middle center",
        textfont={"size": LABEL_FONT_PX, "color": "#222222"},
        customdata=np.array([custom[k] for k in nodes], dtype=float).reshape(
            len(nodes), width
        ),
        hovertext=[_node_hover(v, k) for k in nodes],
        hovertemplate=HOVER,
        cliponaxis=False,
    )


def _node_trace(v: _View, color: str) -> go.Scatter:
    """All shown states as one marker trace; ``customdata[:, 0]`` = state."""
    nodes = v.nodes
    size_of = v.marker_sizes()
    sizes = [size_of[k] for k in nodes]
    colors, opacity, custom = [], [], []
    for k in nodes:
        arrived, stopped = v.arrived[k], v.stopped[k]
        if not v.has_flow:
            colors.append(ACQUIRE_COLOR)
        else:
            if k in v.pending:
                colors.append(PENDING_COLOR)
            elif arrived == 0:
                colors.append(UNREACHED_COLOR)
            elif color == "error" and stopped == 0:
                colors.append(UNVISITED_COLOR)
            elif color == "stop_share":
                colors.append(stopped / arrived)
            else:
                colors.append(v.error_sum(k) / stopped)
        # Pending: solid grey; reduced but reached by no example: faded white.
        if not v.has_flow or (arrived > 0 and k not in v.pending):
            opacity.append(1.0)
        else:
            opacity.append(0.8 if k in v.pending else 0.45)
        err = v.error_sum(k) if v.err_key else -1.0
        custom.append([k, arrived, stopped, arrived - stopped, err])
    # Numbers go through the colour scale, colour strings are drawn as given
    # (grey: no value), so one trace holds every node.
    marker: dict[str, Any] = {
        "symbol": ["diamond" if v.merged(k) else "circle" for k in nodes],
        "size": sizes,
        "color": colors,
        "opacity": opacity,
        "line": {"color": "#555555", "width": 1},
    }
    if v.has_flow:
        numeric = [c for c in colors if not isinstance(c, str)]
        if color == "stop_share":
            bar_title, tickformat = "share stopping", ".0%"
        elif v.err_key == "errors":
            bar_title, tickformat = "error of stops", ".0%"
        else:
            bar_title, tickformat = "mean loss of stops", None
        marker.update(
            colorscale=COLORSCALES[color],
            cmin=0.0,
            cmax=1.0 if color == "stop_share" else max([0.05, *numeric]),
            showscale=True,
            colorbar={
                "title": {"text": bar_title, "side": "right"},
                "tickformat": tickformat,
                "thickness": 14,
                "len": min(300, 0.75 * v.plot_h),
                "lenmode": "pixels",
                "x": 1.0,
                "xanchor": "left",
            },
        )
    return go.Scatter(
        x=[v.pos[k][0] for k in nodes],
        y=[v.pos[k][1] for k in nodes],
        mode="markers",
        name="states",
        showlegend=False,
        marker=marker,
        # Each node's label, drawn by the "labels" trace where it has room.
        text=[""] * len(nodes),
        customdata=np.array(custom, dtype=float),
        hovertext=[_node_hover(v, k) for k in nodes],
        hovertemplate=HOVER,
        cliponaxis=False,
    )


def _sink_trace(v: _View, path_end: int | None) -> go.Scatter:
    """A "classify" sink under each layer where examples stop (the path's
    too); a bare DAG gets one, right of the last layer."""
    at_layer: dict[int, list[int]] = {}
    for k in _stopping(v):
        at_layer.setdefault(int(round(v.pos[k][0])), []).append(k)
    if path_end is not None:
        at_layer.setdefault(int(round(v.pos[path_end][0])), [])
    if not at_layer:
        at_layer[max(v.layers)] = []
    xs, ys, hover = [], [], []
    for x in sorted(at_layer):
        xs.append(v.sinks[x][0])
        ys.append(v.sinks[x][1])
        line = f"<b>classify</b> after {x} step{'s' if x != 1 else ''}"
        if v.has_flow:
            total = sum(v.stopped[k] for k in at_layer[x])
            line += f"<br>{total} examples classified here"
            if v.err_key == "errors":
                errors = sum(v.error_sum(k) for k in at_layer[x])
                line += f"<br>error: {_pct(errors, total)}"
        hover.append(line)
    # One label, under the last sink: one per layer would crowd a deep DAG.
    text = [""] * (len(xs) - 1) + ["classify"]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="markers+text",
        name="classify",
        showlegend=False,
        text=text,
        textposition="bottom center",
        textfont={"size": LABEL_FONT_PX + 1, "color": SINK_COLOR},
        marker={
            "symbol": "square",
            "size": float(np.clip(0.5 * v.d_max, 7, 16)),
            "color": SINK_COLOR,
        },
        hovertext=hover,
        hovertemplate=HOVER,
        cliponaxis=False,
    )


def _overlay_traces(
    v: _View, path: list[int], selected: int | None, ring_size: float
) -> list[go.Scatter]:
    traces = []
    if path:
        traces.append(
            go.Scatter(
                x=[v.pos[s][0] for s in path],
                y=[v.pos[s][1] for s in path],
                mode="lines+markers",
                name="path",
                line={"color": PATH_COLOR, "width": 4},
                marker={"color": PATH_COLOR, "size": 9},
                customdata=np.array([[s] for s in path], dtype=float),
                hovertext=[f"path step {i}: state {s}" for i, s in enumerate(path)],
                hovertemplate=HOVER,
                opacity=0.85,
            )
        )
        route = v.stop_route(path[-1])
        points = [route[0][0], *(b for _, b in route)]
        traces.append(
            go.Scatter(
                x=[p[0] for p in points],
                y=[p[1] for p in points],
                mode="lines",
                name="path stop",
                showlegend=False,
                hoverinfo="skip",
                line={"color": PATH_COLOR, "width": 3, "dash": "dash"},
                opacity=0.85,
            )
        )
    if selected is not None:
        traces.append(
            go.Scatter(
                x=[v.pos[selected][0]],
                y=[v.pos[selected][1]],
                mode="markers",
                name="selected",
                marker={
                    "symbol": "circle-open",
                    "size": ring_size + 12,
                    "color": "#111111",
                    "line": {"width": 3},
                },
                customdata=np.array([[selected]], dtype=float),
                hoverinfo="skip",
            )
        )
    return traces


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
    width: int | None = None,
    pending: Iterable[int] | None = None,
) -> go.Figure:
    """Draw the sensor DAG with how examples flow through it.

    Layers left to right by the number of sensors acquired; a node per state
    (marker area ∝ examples arriving, colour = share that stops there or error
    rate of those stopping), acquire edges with width ∝ examples moving
    (binned), dotted stop edges to a "classify" sink under their layer (one
    per number of sensors acquired, so that no stop edge crosses a node;
    one trace, labelled once).

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
        Number of edge widths (a plotly line has one width per trace), at
        most ``MAX_EDGE_BINS`` (20).
    title, height : optional
        Figure title and pixel height (default grows with the widest layer;
        at most ``MAX_FIGURE_PIXELS``, 20 000, as ``width``).
    width : int, optional
        Pixel width the figure will be shown at: node sizes and label lengths
        are fitted to it; default: a 1100 px wide drawing area. A deep DAG
        is laid out wider so that its labels fit. ``layout.width`` (and
        ``layout.meta["width_px"]``) says how wide the figure was laid out,
        so that ``fig.write_image(...)`` draws it so; a page may stretch it.
    pending : iterable of int, optional
        States drawn solid grey without their flow (no stop edge, edges out
        unused), e.g. :func:`~budgetdag_core.teaching.pending_states`;
        states no example reaches are faded white. Neither ``pending`` nor
        ``selected`` moves a node (a walk's steps keep their positions).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: ``unused edges`` (faded, when shown), edge-width bins with
        ``meta["kind"]`` "acquire" or "stop", ``edge info`` (hover at edge
        midpoints), ``states`` (the nodes: ``customdata`` columns state,
        arrived, stopped, moved on, errors, -1 when unknown), ``classify``
        (the sinks, one per layer where examples stop), then
        ``path``/``path stop`` and ``selected`` when asked.
        With more than 16 states, labels use short sensor codes and a key is
        written under the figure.

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
    check_params(
        "dag_figure",
        {
            "selected": [int_in(0), None],
            "min_arrived": [int_in(0)],
            "edge_bins": [int_in(1, MAX_EDGE_BINS)],
            "height": [int_in(1, MAX_FIGURE_PIXELS), None],
            "width": [int_in(1, MAX_FIGURE_PIXELS), None],
        },
        selected=selected,
        min_arrived=min_arrived,
        edge_bins=edge_bins,
        height=height,
        width=width,
    )
    g, names, node_cost = _graph_data(model_or_flow, X, y, costs)
    path, selected = _checked_states(g.number_of_nodes(), highlight_path, selected)
    must_show = set(path) | ({selected} if selected is not None else set())
    v = _view(
        g, names, node_cost, must_show, hide_unvisited, min_arrived, height, width, path
    )
    if color == "error" and (not v.has_flow or v.err_key is None):
        raise ValueError("color='error' needs the flow with labels: pass X and y.")
    v.pending = {int(k) for k in pending or ()}
    if title:  # below the mode bar, above the legend
        v.margin["t"] += MODEBAR_PX
    traces = _laid_out_traces(v, color, edge_bins, path, selected)
    return _dag_layout(go.Figure(traces), v, title)


def _checked_states(
    K: int, highlight_path: Sequence[int] | None, selected: int | None
) -> tuple[list[int], int | None]:
    """``highlight_path`` and ``selected`` as ints, each a state of the DAG."""
    path = [int(s) for s in highlight_path] if highlight_path is not None else []
    for s in [*path, *([selected] if selected is not None else [])]:
        if not 0 <= int(s) < K:
            raise ValueError(f"State {s} is not in the DAG (0..{K - 1}).")
    return path, None if selected is None else int(selected)


def _dag_traces(
    v: _View, color: str, edge_bins: int, path: list[int], selected: int | None
) -> list[go.Scatter]:
    """The DAG figure's traces: edges, their hover points, nodes, sinks,
    then the path and the ring."""
    nodes = _node_trace(v, color)
    traces = _edge_traces(v, edge_bins)
    info = _edge_info_trace(v)
    traces += [info] if info is not None else []
    traces += [nodes, _sink_trace(v, path[-1] if path else None)]
    ring = nodes.marker.size[v.nodes.index(selected)] if selected is not None else 0
    return traces + _overlay_traces(v, path, selected, ring)


def _dag_layout(fig: go.Figure, v: _View, title: str | None) -> go.Figure:
    """The DAG figure's notes, axes and legend."""
    for i, note in enumerate(v.notes):
        fig.add_annotation(
            text=note,
            xref="paper",
            yref="paper",
            x=0.0,
            xanchor="left",
            y=-(MARGIN["b"] + NOTE_PX * i) / v.plot_h,
            yanchor="top",
            showarrow=False,
            font={"size": 11, "color": "#555555"},
        )
    # Every depth on the axis, also one without a drawn node; a folded tail
    # of rare deep states is "n+".
    ticks = list(range(max(v.layers) + 1))
    tail = any(v.g.nodes[k].get("tail") for k in v.layers[ticks[-1]])
    ticktext = [str(t) for t in ticks[:-1]] + [f"{ticks[-1]}{'+' if tail else ''}"]
    fig.update_layout(
        title=title_under_modebar(title),
        height=v.height,
        # The width it was laid out for: write_image and a notebook draw it
        # so (plotly's default 700 px would overlap its labels); a page may
        # stretch it (the app does).
        width=v.width_px,
        margin=v.margin,
        plot_bgcolor="white",
        hovermode="closest",
        clickmode="event+select",
        # The width the drawing was laid out for (labels placed for it).
        meta={"width_px": v.width_px},
        legend={**LEGEND_TOP, "font": {"size": 12}},
        xaxis={
            "tickvals": ticks,
            "ticktext": ticktext,
            "title": {"text": "sensors acquired"},
            # As wide as the layout's px_per_x assumes.
            "range": [X_LEFT, max(v.layers) + X_RIGHT],
            "showgrid": False,
            "zeroline": False,
        },
        yaxis={"visible": False, "range": list(v.y_range)},
    )
    return fig


def clicked_states(selection: Any) -> list[Any]:
    """Ids in ``customdata[0]`` of the clicked points of a plotly selection event.

    For :func:`dag_figure` these are state indices, for ``tradeoff_figure``
    row labels of its frame. Accepts what ``st.plotly_chart(...,
    on_select="rerun")`` returns (a dict with ``selection.points``), the
    ``points`` list itself, or ``None``; points without ``customdata`` (edges,
    the sink) or with a negative id are ignored.

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
            else selection.selection
        )
        points = sel["points"] if isinstance(sel, Mapping) else sel.points
    out: list[Any] = []
    for p in points or []:
        data = p.get("customdata") if isinstance(p, Mapping) else None
        if isinstance(data, Mapping):
            # A numeric customdata row reaches the browser as a typed array,
            # which Streamlit's frontend sends back as {"0": v0, "1": v1, ...}.
            data = data.get("0", data.get(0))
        if data is None:
            continue
        value = (
            data[0]
            if isinstance(data, Sequence | np.ndarray) and not isinstance(data, str)
            else data
        )
        if isinstance(value, int | float | np.number):
            if value < 0:
                continue
            value = int(value)
        if value is not None and value not in out:
            out.append(value)
    return out
