"""The DAG figure on a page: flow per data part, clicks, and one node's details.

Shared by the Explore DAG, What-if and Teaching pages. The figures and numbers
come from ``budgetdag_core`` (``dag_figure``, ``node_details``); this module
only caches them on the run and lays them out.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import plotly.graph_objects as go
import streamlit as st

from budgetdag_core import clicked_states, node_details

from . import subsets
from .data import Dataset
from .training import TrainedRun

PARTS = {"test": "Test set", "train": "Training set"}
# The figure as a chart: no plotly logo, a PNG button in the mode bar.
CHART_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"scale": 2}}
# Width of the main column on a 1280 px wide screen with the sidebar open: node
# sizes and labels of the DAG figure are fitted to it (the chart still stretches).
PAGE_WIDTH_PX = 820


def flow(run: TrainedRun, dataset: Dataset, part: str) -> nx.DiGraph:
    """The run's flow graph of the ``part`` examples (cached on the run)."""
    X, y = dataset.X(part, run.spec), dataset.y(part)
    return run.memo(f"flow_{part}", lambda: run.model.flow(X, y))


def sensor_costs(run: TrainedRun) -> dict[str, float]:
    spec = run.spec
    return {name: float(spec.costs[name]) for name in spec.names}


def state_label(run: TrainedRun, state: int) -> str:
    """``start (no sensors)``, the held sensors joined by `` + ``, or for a wide
    state of a model over sensor subsets the subsets it holds."""
    return subsets.state_label(run.model, state)


def auto_min_arrived(graph: nx.DiGraph, max_nodes: int = 30) -> int:
    """The smallest arrival count that leaves at most ``max_nodes`` states shown."""
    counts = sorted(
        (int(graph.nodes[k].get("arrived", 0)) for k in graph.nodes), reverse=True
    )
    if len(counts) <= max_nodes or counts[max_nodes] == 0:
        return 1
    # Strictly above the count of the first state left out.
    return counts[max_nodes] + 1


def rename_trace(fig: go.Figure, old: str, new: str) -> go.Figure:
    """Give a trace a clearer legend name (e.g. the core's "selected")."""
    return fig.update_traces(name=new, selector={"name": old})


def clickable_chart(fig: go.Figure, key: str) -> int | None:
    """Draw ``fig`` so that a click on a node reruns; the clicked state or None."""
    event = st.plotly_chart(
        fig,
        on_select="rerun",
        selection_mode="points",
        key=key,
        config=CHART_CONFIG,
        width="stretch",
    )
    clicked = [s for s in clicked_states(event) if isinstance(s, int)]
    return clicked[0] if clicked else None


def node_panel(run: TrainedRun, dataset: Dataset, part: str, node: int) -> None:
    """What happens at ``node``: counts, the policy's actions, the class mix."""
    X, y = dataset.X(part, run.spec), dataset.y(part)
    details: dict[str, Any] = run.memo(
        f"node_{part}_{node}", lambda: node_details(run.model, X, y, node)
    )
    arrived, stopped = details["arrived"], details["stopped"]
    st.markdown(
        f"#### Node {node}: {state_label(run, node)}\n"
        f"{PARTS[part]}: **{arrived:,}** examples arrive here (cost so far "
        f"**{details['cost']:g}**)."
    )
    c1, c2, c3 = st.columns(3)
    c1.metric(
        "Stop here",
        f"{stopped:,}",
        delta=f"{stopped / arrived:.0%} of arrivals" if arrived else None,
        delta_color="off",
        delta_arrow="off",
        border=True,
    )
    c2.metric(
        "Error of those stopping",
        f"{details['error_of_stops']:.1%}" if stopped else "–",
        border=True,
        help="Share of the examples the policy stops here that this node's "
        "classifier gets wrong.",
    )
    c3.metric(
        "Error if all stopped",
        f"{details['error_if_stopped']:.1%}" if arrived else "–",
        border=True,
        help="If every arriving example were classified here, with the sensors "
        "held so far: what buying more sensors is weighed against.",
    )
    if not arrived:
        st.caption("No example of this set reaches this node.")
        return
    left, right = st.columns(2)
    with left:
        st.markdown("**What the node's policy does**")
        actions = details["actions"][["action", "count", "share"]]
        st.dataframe(
            actions,
            hide_index=True,
            width="stretch",
            column_config={
                "count": st.column_config.NumberColumn("examples"),
                "share": st.column_config.ProgressColumn(
                    "share", format="percent", min_value=0.0, max_value=1.0
                ),
            },
        )
    with right:
        st.markdown("**Classes of the arriving examples**")
        classes = details["classes"]
        if classes is None:
            st.caption("No labels for this set.")
        else:
            st.dataframe(
                classes[classes["arrived"] > 0],
                hide_index=True,
                width="stretch",
                column_config={
                    "class": st.column_config.TextColumn("class"),
                    "arrived": st.column_config.NumberColumn("examples"),
                    "share": st.column_config.ProgressColumn(
                        "share", format="percent", min_value=0.0, max_value=1.0
                    ),
                    "error_if_stopped": st.column_config.NumberColumn(
                        "error if stopped", format="percent"
                    ),
                },
            )
