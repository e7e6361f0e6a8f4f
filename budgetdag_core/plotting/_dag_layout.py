"""Geometry and labels of the DAG figure: layer positions, sizes, label thinning.

Kept apart from :mod:`budgetdag_core.plotting` so the plotly code only draws.
Everything is in data units except where a name ends in ``_px``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

LABEL_FONT_PX = 12
CHAR_PX = 7.0  # average glyph width at LABEL_FONT_PX
PLOT_WIDTH_PX = 1100  # assumed drawing width when the figure width is not fixed
LABEL_H_PX = LABEL_FONT_PX + 3  # height of a label's box
LABEL_GAP_PX = 2.0  # least free space between two labels
ROW_GAP_PX = LABEL_GAP_PX + 1  # between stacked rows of labels


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[_\-\s.]+", name) if w]


def abbreviate(names: Sequence[str], max_len: int = 5) -> dict[str, str]:
    """Short, unique labels for sensor names.

    Candidates: the names themselves; the first letter of a common prefix plus
    the rest (``band1`` -> ``b1``); the first word cut to 3 letters plus the
    initials of the other words (``moments_y`` -> ``mom_y``); prefixes of 3 to
    ``max_len`` letters. Of those giving unique labels of at most ``max_len``
    characters the shortest wins; failing all, the initials of multi-word
    names (``top-left`` -> ``tl``), then ``s1, s2, ...``.

    Examples
    --------
    >>> abbreviate(["band1", "band2"], max_len=4)
    {'band1': 'b1', 'band2': 'b2'}
    >>> abbreviate(["box", "moments", "edges"], max_len=4)
    {'box': 'box', 'moments': 'mom', 'edges': 'edg'}
    >>> abbreviate(["moments_x", "moments_y", "edges_x"])
    {'moments_x': 'mom_x', 'moments_y': 'mom_y', 'edges_x': 'edg_x'}
    >>> abbreviate(["top-left", "top-right", "bottom-left"], max_len=3)
    {'top-left': 'tl', 'top-right': 'tr', 'bottom-left': 'bl'}
    """
    names = [str(n) for n in names]
    prefix = os.path.commonprefix(names) if len(names) > 1 else ""
    while prefix and prefix[-1].isdigit():  # keep "band1"/"band10" apart as 1/10
        prefix = prefix[:-1]
    candidates = [list(names)]
    if prefix:
        candidates.append([prefix[0] + n[len(prefix) :] for n in names])
    candidates.append(
        [
            "_".join([w[0][:3], *(x[0] for x in w[1:])])
            if len(w) > 1
            else (n if len(n) <= max_len else n[:3])
            for n, w in ((n, _words(n)) for n in names)
        ]
    )
    candidates.append([n if len(n) <= max_len else n[:3] for n in names])
    candidates += [[n[:length] for n in names] for length in range(3, max_len + 1)]
    valid = [short for short in candidates if _fits(short, max_len)]
    initials = [
        "".join(x[0] for x in w) if len(w) > 1 else n[:max_len]
        for n, w in ((n, _words(n)) for n in names)
    ]
    if not valid and _fits(initials, max_len):
        valid = [initials]
    if valid:
        best = min(valid, key=lambda short: max(map(len, short)))
        return dict(zip(names, best, strict=True))
    return {n: f"s{i + 1}" for i, n in enumerate(names)}


def _fits(short: Sequence[str], max_len: int) -> bool:
    """Unique, non-empty labels of at most ``max_len`` characters."""
    return all(0 < len(s) <= max_len for s in short) and len(set(short)) == len(short)


def node_label(
    members: Sequence[str],
    all_names: Sequence[str],
    short: Mapping[str, str],
    allow_minus: bool = True,
) -> str:
    """A state's label inside the DAG figure, in the codes of ``short``:
    ``a+b``, or ``all−c`` when shorter and allowed; ``start`` and ``all``.

    Where there is little room (a node of a drawing); the wording of states in
    sentences and tables is :func:`budgetdag_core.explain.state_label`.
    """
    if not members:
        return "start"
    if len(members) == len(all_names):
        return "all"
    plus = "+".join(short[m] for m in members)
    missing = [n for n in all_names if n not in set(members)]
    minus = "all−" + "−".join(short[m] for m in missing)
    return minus if allow_minus and len(minus) < len(plus) else plus


def order_layers(
    g: nx.DiGraph,
    shown: set[int],
    layer_of: Mapping[int, int],
    weight: str | None,
    primary: set[int] | None = None,
) -> dict[int, list[int]]:
    """Shown nodes per layer, ordered by the barycentre of their parents.

    One top-down barycentre pass (Sugiyama-style) is enough to untangle the
    flow of a layered lattice; ties keep the state order. Nodes in
    ``primary`` (the visited ones) form a block in the middle of their layer,
    the others are split evenly above and below it.
    """
    layers: dict[int, list[int]] = {}
    for k in sorted(shown):
        layers.setdefault(layer_of[k], []).append(k)
    pos: dict[int, float] = {}
    for x in sorted(layers):
        nodes = layers[x]
        bary = {}
        for k in nodes:
            parents = [p for p in g.predecessors(k) if p in pos]
            if not parents:
                bary[k] = 0.0
                continue
            w = np.array(
                [
                    (g.edges[p, k].get(weight, 0) if weight else 0) + 1e-3
                    for p in parents
                ]
            )
            bary[k] = float(np.average([pos[p] for p in parents], weights=w))
        if primary is None or all(k in primary for k in nodes):
            nodes.sort(key=lambda k: (bary[k], k))
        else:
            core = sorted(
                (k for k in nodes if k in primary), key=lambda k: (bary[k], k)
            )
            rest = sorted(
                (k for k in nodes if k not in primary), key=lambda k: (bary[k], k)
            )
            half = len(rest) // 2
            nodes[:] = rest[:half] + core + rest[half:]
        for i, k in enumerate(nodes):
            pos[k] = i - (len(nodes) - 1) / 2
    return layers


@dataclass(frozen=True)
class Box:
    """A rectangle in screen pixels (``y`` grows downwards)."""

    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Box, pad: float = 0.0) -> bool:
        """Whether the two boxes, ``other`` grown by ``pad``, share area."""
        return not (
            self.right <= other.left - pad
            or other.right + pad <= self.left
            or self.bottom <= other.top - pad
            or other.bottom + pad <= self.top
        )

    def inside(self, area: Box) -> bool:
        return (
            self.left >= area.left
            and self.right <= area.right
            and self.top >= area.top
            and self.bottom <= area.bottom
        )


def text_width_px(text: str) -> float:
    """Estimated width of ``text`` at :data:`LABEL_FONT_PX` (a little generous)."""
    return len(text) * CHAR_PX + 2.0


def label_box(cx: float, cy: float, text: str) -> Box:
    """The box of a label centred at pixel ``(cx, cy)``."""
    half_w, half_h = text_width_px(text) / 2, LABEL_H_PX / 2
    return Box(cx - half_w, cy - half_h, cx + half_w, cy + half_h)


def segments_hit(box: Box, segments: np.ndarray) -> np.ndarray:
    """Which segments (rows ``x0, y0, x1, y1, half_width``, pixels) pass
    through ``box`` grown by their half width (Liang-Barsky clipping)."""
    if len(segments) == 0:
        return np.zeros(0, dtype=bool)
    x0, y0, x1, y1, half = segments.T
    dx, dy = x1 - x0, y1 - y0
    left, right = box.left - half, box.right + half
    top, bottom = box.top - half, box.bottom + half
    t0 = np.zeros(len(segments))
    t1 = np.ones(len(segments))
    hit = np.ones(len(segments), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in (
            (-dx, x0 - left),
            (dx, right - x0),
            (-dy, y0 - top),
            (dy, bottom - y0),
        ):
            parallel = p == 0
            hit &= ~(parallel & (q < 0))
            t = q / p
            t0 = np.where(~parallel & (p < 0), np.maximum(t0, t), t0)
            t1 = np.where(~parallel & (p > 0), np.minimum(t1, t), t1)
    return hit & (t0 <= t1)


def label_candidates(
    cx: float, cy: float, radius: float, text: str, rows: int, far: float = 0.0
) -> list[tuple[float, float]]:
    """Where a node's label may go, best first: centres of boxes just above,
    below, right and left of the marker, then ``rows`` rows stacked above
    and below, clear of markers up to ``far`` px in radius (staggered labels
    of a deep DAG whose layers sit closer than a label is wide), then the
    same shifted sideways."""
    w, h = text_width_px(text), LABEL_H_PX
    gap = radius + 2.0
    side = gap + w / 2
    out = [(cx, cy - gap - h / 2), (cx, cy + gap + h / 2), (cx + side, cy)]
    out.append((cx - side, cy))
    up = cy - max(gap, far + 3.0) - h / 2
    down = cy + max(gap, far + 3.0) + h / 2
    for row in range(rows):
        step = row * (h + ROW_GAP_PX)
        out += [(cx, up - step), (cx, down + step)]
    # Then boxes shifted sideways (a quarter, a half of their width) above
    # and below, and beside the marker a half line up or down.
    for shift in (w / 4, w / 2, 3 * w / 4):
        for row in range(rows):
            step = row * (h + ROW_GAP_PX)
            out += [(cx + shift, up - step), (cx - shift, up - step)]
            out += [(cx + shift, down + step), (cx - shift, down + step)]
    for dy in (h / 2, h):
        out += [(cx + side, cy - dy), (cx - side, cy - dy)]
        out += [(cx + side, cy + dy), (cx - side, cy + dy)]
    return out


class _CellIndex:
    """Boxes (rows ``left, top, right, bottom``, pixels) by the grid cells
    they cover, to find those near a box without looking at all."""

    CELL_PX = 40.0

    def __init__(self, boxes: np.ndarray) -> None:
        self.cells: dict[tuple[int, int], list[int]] = {}
        span = np.floor(boxes / self.CELL_PX).astype(int)
        for i, (left, top, right, bottom) in enumerate(span):
            for cx in range(left, right + 1):
                for cy in range(top, bottom + 1):
                    self.cells.setdefault((cx, cy), []).append(i)

    def near(self, box: Box) -> np.ndarray:
        """Indices of the boxes sharing a cell with ``box``."""
        c = self.CELL_PX
        found: set[int] = set()
        for cx in range(int(np.floor(box.left / c)), int(np.floor(box.right / c)) + 1):
            for cy in range(
                int(np.floor(box.top / c)), int(np.floor(box.bottom / c)) + 1
            ):
                found.update(self.cells.get((cx, cy), ()))
        return np.fromiter(found, dtype=int, count=len(found))


def _hits(box: Box, boxes: np.ndarray, pad: float) -> bool:
    """Whether ``box`` shares area with any of ``boxes`` grown by ``pad``."""
    if len(boxes) == 0:
        return False
    return bool(
        np.any(
            (box.right > boxes[:, 0] - pad)
            & (boxes[:, 2] + pad > box.left)
            & (box.bottom > boxes[:, 1] - pad)
            & (boxes[:, 3] + pad > box.top)
        )
    )


def place_labels(
    labels: Sequence[tuple[int, float, float, float, str]],
    segments: np.ndarray,
    blocks: Sequence[Box],
    area: Box,
    rows: int,
) -> dict[int, tuple[float, float]]:
    """Label centres (pixels) of the nodes that get one, greedily in the
    order given (``node, x, y, marker radius, text``, pixels).

    A label goes to the first of its :func:`label_candidates` that lies in
    ``area`` and touches no other label, no segment (edges: rows ``x0, y0,
    x1, y1, half_width``) and no box of ``blocks`` (markers); a node with
    no such place gets none (its hover still names it).
    """
    placed: dict[int, tuple[float, float]] = {}
    # A DAG drawn whole has thousands of edges and hundreds of markers: each
    # candidate is checked against those in the grid cells it covers only.
    fixed = np.array([(b.left, b.top, b.right, b.bottom) for b in blocks], float)
    fixed = fixed.reshape(-1, 4)
    x0, y0, x1, y1, half = segments.reshape(-1, 5).T
    lines = _CellIndex(
        np.column_stack(
            [
                np.minimum(x0, x1) - half,
                np.minimum(y0, y1) - half,
                np.maximum(x0, x1) + half,
                np.maximum(y0, y1) + half,
            ]
        )  # fmt: skip
    )
    markers = _CellIndex(fixed)
    taken = np.empty((len(labels), 4))
    n_taken = 0
    far = max((radius for *_, radius, _ in labels), default=0.0)
    for k, cx, cy, radius, text in labels:
        for px, py in label_candidates(cx, cy, radius, text, rows, far):
            box = label_box(px, py, text)
            if (
                box.inside(area)
                and not _hits(box, fixed[markers.near(box)], 0.0)
                and not _hits(box, taken[:n_taken], LABEL_GAP_PX)
                and not segments_hit(box, segments[lines.near(box)]).any()
            ):
                placed[k] = (px, py)
                taken[n_taken] = (box.left, box.top, box.right, box.bottom)
                n_taken += 1
                break
    return placed


def figure_height(max_per_layer: int) -> int:
    """Pixel height that gives a crowded layer about 11 px per node."""
    return int(np.clip(160 + 60 * max_per_layer, 440, 900))


def merge_rare(
    g: nx.DiGraph,
    rare: set[int],
    layer_of: Mapping[int, int],
    deepest: int | None = None,
) -> nx.DiGraph:
    """``g`` with the ``rare`` states of each layer merged into one node.

    The node of layer ``d`` is ``-(d + 1)`` (negative: no state index, so
    clicks ignore it), with attributes ``layer``, ``merged`` (how many states),
    ``sensors`` ``()`` and the sums of the flow counts (``arrived``,
    ``stopped``, ``errors`` or ``loss``); edges to and from merged states add
    up their ``count``. Every drawn state keeps its parents' flow in view, so
    no drawn node is left without an incoming edge. Rare states deeper than
    layer ``deepest + 1`` join that layer's node (attribute ``tail``: a few
    examples that go on buying would otherwise stretch the figure).
    """
    if not rare:
        return g
    cap = {
        k: layer_of[k] if deepest is None else min(layer_of[k], deepest + 1)
        for k in rare
    }
    into = {k: -(cap[k] + 1) for k in rare}
    out = nx.DiGraph(**g.graph)
    sums = ("arrived", "stopped", "errors", "loss")
    for k, data in g.nodes(data=True):
        if k not in rare:
            out.add_node(k, **data)
            continue
        m = into[k]
        if m not in out:
            out.add_node(m, layer=cap[k], merged=0, sensors=(), tail=False)
        node = out.nodes[m]
        node["merged"] += 1
        node["tail"] = node["tail"] or cap[k] != layer_of[k]
        for key in sums:
            if key in data:
                node[key] = node.get(key, 0) + data[key]
        if "cost" in data:
            node.setdefault("costs", []).append(float(data["cost"]))
    for u, v, data in g.edges(data=True):
        a, b = into.get(u, u), into.get(v, v)
        if a == b:  # within the folded tail
            continue
        if out.has_edge(a, b):
            out.edges[a, b]["count"] = out.edges[a, b].get("count", 0) + data.get(
                "count", 0
            )
            out.edges[a, b]["added"] = ()
        else:
            out.add_edge(a, b, **data)
            if a != u or b != v:
                out.edges[a, b]["added"] = ()
    for m in set(into.values()):
        costs = out.nodes[m].pop("costs", None)
        if costs is not None:
            out.nodes[m]["cost"] = float(np.mean(costs))
    return out


def stop_lanes(
    layers: Mapping[int, list[int]],
    pos: Mapping[int, tuple[float, float]],
    stopping: set[int],
    first: float = 0.28,
    last: float = 0.42,
) -> dict[int, float]:
    """The x of each stopping node's vertical lane down to its layer's sink.

    Lanes lie between a layer and the next, where no node is; the top node
    gets the outermost lane, so no node's horizontal stub crosses the lane of
    a node above it.
    """
    lanes: dict[int, float] = {}
    for x, nodes in layers.items():
        mine = sorted((k for k in nodes if k in stopping), key=lambda k: pos[k][1])
        for j, k in enumerate(mine):
            share = j / (len(mine) - 1) if len(mine) > 1 else 0.5
            lanes[k] = float(x) + first + (last - first) * share
    return lanes
