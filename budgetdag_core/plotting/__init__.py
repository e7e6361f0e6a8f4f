"""Plotly figures of a fitted policy: the DAG with its flow, the cost-error
trade-off, a node's decision regions and what the policy buys (acquisition
pictures from ``model.trace(X)``).

Pure functions returning ``plotly.graph_objects.Figure``; no Streamlit, so they
work in a notebook too. Clickable points carry ``customdata``: the DAG's node
trace (named ``"states"``) holds the state index in ``customdata[:, 0]``, the
trade-off points the row label of their frame; :func:`clicked_states` reads
them back from a ``st.plotly_chart(..., on_select="rerun")`` event.
"""

from __future__ import annotations

from ._acquisition import (
    acquisition_frequency,
    acquisition_grid_figure,
    acquisition_heatmap_figure,
    acquisition_paths_figure,
    acquisition_steps_figure,
    sensor_cells,
)
from ._dag import clicked_states, dag_figure
from ._regions import decision_regions_figure
from ._tradeoff import lower_hull, tradeoff_figure

__all__ = [
    "acquisition_grid_figure",
    "acquisition_heatmap_figure",
    "acquisition_paths_figure",
    "acquisition_steps_figure",
    "clicked_states",
    "dag_figure",
    "decision_regions_figure",
    "tradeoff_figure",
]
