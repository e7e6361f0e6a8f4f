"""Colours and sizes shared by the figures (one place, so they agree)."""

from __future__ import annotations

ACQUIRE_COLOR = "#4a6fa5"
STOP_COLOR = "#e07b39"
PATH_COLOR = "#d62728"
UNVISITED_COLOR = "#c8c8c8"  # a node without a value (no example stops there)
UNREACHED_COLOR = "#ffffff"  # a node no example reaches (drawn faded)
PENDING_COLOR = "#8a8a8a"  # a node Graph-Reduce has not reduced yet
SINK_COLOR = "#333333"
# Acquire actions in decision-region maps: Set2 without its orange (= stop).
ACTION_COLORS = ["#66c2a5", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f", "#e5c494"]
CLASS_COLORS = ["#1f3b73", "#8b1a1a", "#2d6a2d", "#6a3d9a", "#7a4a12", "#111111"]
CLASS_SYMBOLS = ["circle", "x", "diamond", "triangle-up", "square", "cross"]
HOVER = "%{hovertext}<extra></extra>"
LEGEND_TOP = {"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0.0}
#: Largest figure size in pixels (``height``, ``width`` of the figures):
#: beyond any screen, and plotly lays out every pixel row.
MAX_FIGURE_PIXELS = 20_000
#: Height of plotly's tool bar (mode bar), drawn over a figure's top right
#: corner on hover: titles go below it.
MODEBAR_PX = 30


def title_under_modebar(title: str | None) -> dict | None:
    """A figure title placed below the mode bar (``None`` without a title)."""
    if not title:
        return None
    return {
        "text": title,
        "x": 0.0,
        "xanchor": "left",
        "y": 1.0,
        "yref": "container",
        "yanchor": "top",
        "pad": {"t": MODEBAR_PX, "l": 10},
    }
