"""The DAG figure with many sensors fits its box and its labels are readable.

Flows of models fitted with the app's defaults on tables of 13 (wine), 30
(breast cancer) and 64 (digits) one-column sensors
(``tests/data/make_flow_fixtures.py``), drawn as the Explore DAG page draws
them: 820 px wide, the states reached by fewer examples than the 31st most
visited state merged. The checks read the figure object only: each label's
box is estimated from its font size and length, and placed with the axes'
ranges and the margins, independently of the code that laid it out.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import networkx as nx
import plotly.graph_objects as go
import pytest

from budgetdag_core.plotting import dag_figure

FLOWS = Path(__file__).parents[1] / "data" / "flows"
WIDTH = 800  # the Explore page's drawing width (ui.dag_view.PAGE_WIDTH_PX)
EM = 0.58  # average glyph width of the label font, in font sizes
CASES = ["wine13", "cancer30", "digits64"]


def load_flow(name: str) -> nx.DiGraph:
    data = json.loads(gzip.decompress((FLOWS / f"{name}.json.gz").read_bytes()))
    g = nx.node_link_graph(data, edges="edges")
    g.graph["sensor_names"] = tuple(g.graph["sensor_names"])
    for k in g.nodes:
        g.nodes[k]["sensors"] = tuple(g.nodes[k]["sensors"])
    for _, _, d in g.edges(data=True):
        d["added"] = tuple(d["added"])
    return g


def explore_threshold(g: nx.DiGraph, most: int = 30) -> int:
    """The Explore page's first threshold: about ``most`` states shown."""
    counts = sorted((g.nodes[k]["arrived"] for k in g.nodes), reverse=True)
    if len(counts) <= most or counts[most] == 0:
        return 1
    return counts[most] + 1


def explore_figure(name: str, **kwargs) -> go.Figure:
    g = load_flow(name)
    return dag_figure(g, min_arrived=explore_threshold(g), width=WIDTH, **kwargs)


class Pixels:
    """Data units to pixels of the drawing area (``y`` down), from the layout."""

    def __init__(self, fig: go.Figure, width: int) -> None:
        m = fig.layout.margin
        self.margin = m
        self.w = width - m.l - m.r
        self.h = fig.layout.height - m.t - m.b
        self.x0, self.x1 = fig.layout.xaxis.range
        self.y0, self.y1 = fig.layout.yaxis.range

    def __call__(self, x: float, y: float) -> tuple[float, float]:
        return (
            (x - self.x0) / (self.x1 - self.x0) * self.w,
            (self.y1 - y) / (self.y1 - self.y0) * self.h,
        )


def label_boxes(fig: go.Figure, px: Pixels) -> list[tuple[str, tuple]]:
    """Every drawn text of the node labels as (text, (left, top, right, bottom))."""
    out = []
    for t in fig.data:
        if not t.mode or "text" not in t.mode or t.name == "classify":
            continue
        assert t.textposition == "middle center", t.name
        size = t.textfont.size
        for x, y, text in zip(t.x, t.y, t.text, strict=True):
            if not text:
                continue
            cx, cy = px(x, y)
            half_w, half_h = len(text) * EM * size / 2, 0.6 * size
            out.append((text, (cx - half_w, cy - half_h, cx + half_w, cy + half_h)))
    return out


def drawn_segments(fig: go.Figure, px: Pixels) -> list[tuple]:
    """Every drawn line piece in pixels, with half its width."""
    out = []
    for t in fig.data:
        if not t.mode or "lines" not in t.mode:
            continue
        half = (t.line.width or 2) / 2
        pts = list(zip(t.x, t.y, strict=True))
        for (a, b), (c, d) in zip(pts, pts[1:], strict=False):
            if None not in (a, b, c, d):
                out.append((*px(a, b), *px(c, d), half))
    return out


def crosses(box: tuple, seg: tuple) -> bool:
    """Whether a segment (grown by its half width) passes through a box:
    sampled densely, independent of the layout's clipping code."""
    left, top, right, bottom = box
    x0, y0, x1, y1, half = seg
    n = int(max(abs(x1 - x0), abs(y1 - y0)) / 0.5) + 2
    for i in range(n + 1):
        x = x0 + (x1 - x0) * i / n
        y = y0 + (y1 - y0) * i / n
        if left - half < x < right + half and top - half < y < bottom + half:
            return True
    return False


def overlap(a: tuple, b: tuple) -> bool:
    return not (a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1])


def check_labels(fig: go.Figure) -> list[tuple[str, tuple]]:
    px = Pixels(fig, WIDTH)
    boxes = label_boxes(fig, px)
    assert boxes
    for text, (left, top, right, bottom) in boxes:
        # In the figure, left of the colour bar, inside the drawing's height.
        assert left >= -px.margin.l and right <= px.w, (text, left, right)
        assert top >= 0 and bottom <= px.h, (text, top, bottom)
    clashes = [
        (a, b)
        for i, (a, box_a) in enumerate(boxes)
        for b, box_b in boxes[i + 1 :]
        if overlap(box_a, box_b)
    ]
    assert not clashes, clashes
    segments = drawn_segments(fig, px)
    on_edges = [text for text, box in boxes if any(crosses(box, s) for s in segments)]
    assert not on_edges, on_edges
    return boxes


@pytest.mark.parametrize("name", CASES)
def test_explore_figure_fits_its_box_with_labels_off_edges(name) -> None:
    fig = explore_figure(name)
    # Laid out for the box it is shown in, never wider (the page would
    # scroll and hide the colour bar and the sensor key).
    assert fig.layout.meta["width_px"] == WIDTH
    px = Pixels(fig, WIDTH)
    states = next(t for t in fig.data if t.name == "states")
    for x, y in zip(states.x, states.y, strict=True):
        cx, cy = px(x, y)
        assert 0 <= cx <= px.w and 0 <= cy <= px.h
    # The colour bar has the right margin to itself; the key's lines fit
    # under the drawing.
    assert fig.layout.margin.r >= 80
    notes = list(fig.layout.annotations)
    assert fig.layout.margin.b >= 50 + 18 * len(notes)
    assert all(len(a.text) * 6.2 <= px.w for a in notes)
    boxes = check_labels(fig)
    # Nearly every drawn node is named.
    assert len(boxes) >= 0.8 * len(states.x), (len(boxes), len(states.x))


@pytest.mark.parametrize("name", CASES)
def test_hover_names_the_whole_state_on_short_lines(name) -> None:
    fig = explore_figure(name)
    labels = next(t for t in fig.data if t.name == "labels")
    states = next(t for t in fig.data if t.name == "states")
    g = load_flow(name)
    sensors_of = {k: g.nodes[k]["sensors"] for k in g.nodes}
    # Hovering a label is hovering its node.
    by_state = dict(zip((int(c[0]) for c in states.customdata), states.hovertext))
    for row, hover in zip(labels.customdata, labels.hovertext, strict=True):
        k = int(row[0])
        assert hover == by_state[k]
        if k < 0:
            continue
        assert all(s in hover for s in sensors_of[k]), (k, hover)
        lines = hover.replace("<b>", "").replace("</b>", "").split("<br>")
        assert max(map(len, lines)) <= 70, lines
        # Every way on is named: a sensor added, or the merged rare states.
        assert "→ +:" not in hover, hover


@pytest.mark.parametrize("name", CASES)
def test_a_label_naming_only_the_last_sensor_is_explained(name) -> None:
    """From depth 4 a label says what its node adds ("+s9"): the key under
    the figure says how to read it, and the label's hover names the whole
    state, every sensor of it."""
    fig = explore_figure(name)
    labels = next(t for t in fig.data if t.name == "labels")
    g = load_flow(name)
    added = [
        (int(row[0]), text, hover)
        for row, text, hover in zip(
            labels.customdata, labels.text, labels.hovertext, strict=True
        )
        if text.startswith("+")
    ]
    assert added, "no +x label at this size"
    notes = [a.text for a in fig.layout.annotations]
    assert any(n.startswith("+x: the state before it plus sensor x") for n in notes)
    px = Pixels(fig, WIDTH)
    assert all(len(n) * 6.2 <= px.w for n in notes)
    for k, text, hover in added:
        sensors = g.nodes[k]["sensors"]
        assert len(sensors) >= 2 and all(s in hover for s in sensors), (k, text)


def deepest_path(g: nx.DiGraph) -> list[int]:
    """The most travelled path from the start, as far as it goes."""
    path = [0]
    while True:
        out = [(d["count"], b) for _, b, d in g.out_edges(path[-1], data=True)]
        out = [o for o in out if o[0] > 0]
        if not out:
            return path
        path.append(max(out)[1])


@pytest.mark.parametrize("name", CASES)
def test_a_highlighted_path_runs_over_no_label(name) -> None:
    g = load_flow(name)
    path = deepest_path(g)
    fig = explore_figure(name, highlight_path=path, selected=path[len(path) // 2])
    assert {t.name for t in fig.data} >= {"path", "path stop", "selected"}
    check_labels(fig)
