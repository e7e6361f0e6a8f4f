"""Figures as files: standalone HTML always, PNG when an exporter works.

Plotly writes PNG through the optional ``kaleido`` package (which itself drives a
Chrome); without it the app says so and points to the figure toolbar's camera
button, which saves a PNG in the browser.
"""

from __future__ import annotations

import functools
import importlib.util

import plotly.graph_objects as go

PLOTLY_JS_MB = 4.6  # what embedding plotly.js adds to an HTML file


def html_bytes(fig: go.Figure, *, offline: bool = False) -> bytes:
    """The figure as a standalone HTML page.

    ``offline`` embeds plotly.js (the file then works without internet);
    otherwise the page loads it from the plotly CDN.
    """
    return fig.to_html(
        include_plotlyjs=True if offline else "cdn", full_html=True
    ).encode()


@functools.cache
def png_problem() -> str | None:
    """Why PNG export does not work here, or None when it does (checked once)."""
    if importlib.util.find_spec("kaleido") is None:
        return "PNG files need the kaleido package, which is not installed here."
    try:
        go.Figure(go.Scatter(x=[0, 1], y=[0, 1])).to_image(
            format="png", width=50, height=50
        )
    except Exception as exc:  # kaleido present but without a browser, etc.
        return f"PNG export does not work here ({type(exc).__name__}: {exc})."
    return None


def png_bytes(fig: go.Figure, *, width: int = 1280, scale: float = 2.0) -> bytes:
    """The figure as PNG (see :func:`png_problem` first)."""
    return fig.to_image(format="png", width=width, scale=scale)
