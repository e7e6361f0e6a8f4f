"""The DAG figure on a page: flow per data part, clicks, and one node's details.

Shared by the Explore DAG, What-if and Teaching pages. The figures and numbers
come from ``budgetdag_core`` (``dag_figure``, ``node_details``); this module
only caches them on the run and lays them out.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import plotly.graph_objects as go
import streamlit as st

from budgetdag_core import Dataset
from budgetdag_core.explain import node_details, state_label, subsets_in
from budgetdag_core.plotting import clicked_states, dag_figure

from . import subsets, widgets
from .formatting import pct, percent_column, percent_table
from .training import TrainedRun

PARTS = {"test": "Test set", "train": "Training set"}
# The figure as a chart: no plotly logo, a PNG button in the mode bar.
CHART_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"scale": 2}}
# The DAG figure's node sizes and label places are fitted to this width: a
# little under the main column of a 1280 px wide screen with the sidebar open
# (about 810 px), as the chart may stretch (labels only move apart) but not
# shrink (they would move onto each other).
PAGE_WIDTH_PX = 800


def flow(run: TrainedRun, dataset: Dataset, part: str) -> nx.DiGraph:
    """The run's flow graph of the ``part`` examples (cached on the run)."""
    X, y = dataset.X(part, run.spec), dataset.y(part)
    return run.memo(f"flow_{part}", lambda: run.model.flow(X, y))


def subset_graph(run: TrainedRun, graph: nx.DiGraph) -> nx.DiGraph:
    """``graph`` as the figure draws it; for a model over sensor subsets, each
    state named by the subsets it holds (S1, S2, ... as on the Train page),
    layered by their number, with its real cost; edges by the subset bought.

    Naming states by their 10-50 sensors would make labels no one can read.
    """
    model = run.model
    if getattr(model, "subset_selection_", None) is None:
        return graph
    dag = model.sensor_dag_
    g = graph.copy()
    cost = dag.membership() @ np.asarray(run.spec.cost_vector, dtype=float)
    for k in g.nodes:
        g.nodes[k]["sensors"] = tuple(f"S{j}" for j in subsets_in(model, k))
        g.nodes[k]["cost"] = float(cost[k])
    for _, _, data in g.edges(data=True):
        n_new = len(data.get("added", ()))
        data["added"] = (f"S{data['unit'] + 1} ({n_new} new sensors)",)
    g.graph["sensor_names"] = tuple(f"S{j + 1}" for j in range(len(dag.units)))
    return g


def figure(run: TrainedRun, graph: nx.DiGraph, **kwargs: Any) -> go.Figure:
    """``dag_figure`` of the run's flow ``graph`` (see :func:`subset_graph`); the
    hover of a subset state also names its real sensors."""
    fig = dag_figure(subset_graph(run, graph), costs=sensor_costs(run), **kwargs)
    if getattr(run.model, "subset_selection_", None) is None:
        return fig
    fig.update_xaxes(title_text="sensor subsets held")
    fig.for_each_trace(
        lambda t: (
            t.update(name=t.name.replace("acquire a sensor", "buy a subset"))
            if t.name
            else None
        )
    )
    for trace in fig.data:
        if trace.name != "states" or trace.customdata is None:
            continue
        hover = list(trace.hovertext)
        for i, row in enumerate(trace.customdata):
            if row[0] < 0:  # rarely reached states merged: no one state
                continue
            names = run.model.sensor_dag_.state_names(int(row[0]))
            head, _, rest = hover[i].partition("<br>")
            hover[i] = "<br>".join([head, sensor_lines(names), rest])
        trace.hovertext = hover
    return fig


def sensor_lines(names: tuple[str, ...], per_line: int = 4, most: int = 12) -> str:
    """Sensor names for a hover box: a few per line, at most ``most``."""
    if not names:
        return "no sensors"
    shown = list(names[:most])
    lines = [", ".join(shown[i : i + per_line]) for i in range(0, len(shown), per_line)]
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return f"{len(names)} sensors: " + "<br>".join(lines) + more


def subsets_note(run: TrainedRun) -> None:
    """A caption for a model over sensor subsets: how to read its DAG."""
    if getattr(run.model, "subset_selection_", None) is None:
        return
    st.caption(
        ":material/info: This model's DAG is built over sensor subsets (Alg. 2): a "
        "node holds the subsets S1, S2, ... listed on the Train page, and each step "
        "buys a whole subset (all of its sensors not held yet). Hover a node for "
        "its sensors."
    )


def sensor_costs(run: TrainedRun) -> dict[str, float]:
    spec = run.spec
    return {name: float(spec.costs[name]) for name in spec.names}


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


def _wide_box(key: str, min_width: int | None) -> Any:
    """Where a chart goes: as is, or at least ``min_width`` px wide.

    The DAG figure fits its labels to :data:`PAGE_WIDTH_PX`; in a narrower
    column (a 900 px window with the sidebar open leaves about 430 px) plotly
    would squeeze it until labels overlap. The box keeps that width and
    scrolls sideways instead.
    """
    if min_width is None:
        return st.container()
    box = f"chart_box_{key}"
    st.html(
        f"<style>.st-key-{box}{{overflow-x:auto}}"
        f".st-key-{box}>div{{min-width:{int(min_width)}px}}</style>"
    )
    return st.container(key=box)


def laid_out_width(fig: go.Figure, min_width: int | None) -> int | None:
    """The width a DAG figure was laid out for: ``min_width``, or wider for a
    deep DAG (``dag_figure`` widens it so that its labels fit)."""
    meta = fig.layout.meta
    wide = meta.get("width_px") if isinstance(meta, dict) else None
    if min_width is None or wide is None:
        return min_width
    return max(int(min_width), int(wide))


def dag_chart(fig: go.Figure, key: str) -> None:
    """Draw a DAG figure made for :data:`PAGE_WIDTH_PX` (scrolls when narrower)."""
    with _wide_box(key, laid_out_width(fig, PAGE_WIDTH_PX)):
        st.plotly_chart(fig, key=key, config=CHART_CONFIG, width="stretch")


def clickable_chart(
    fig: go.Figure, key: str, min_width: int | None = None
) -> int | None:
    """Draw ``fig`` so that a click on a node reruns; the clicked state or None.

    ``min_width``: see :func:`dag_chart` (the DAG figure passes
    :data:`PAGE_WIDTH_PX`).
    """
    with _wide_box(key, laid_out_width(fig, min_width)):
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
        f"#### Node {node}: {state_label(run.model, node)}\n"
        f"{PARTS[part]}: **{arrived:,}** examples arrive here (cost so far "
        f"**{details['cost']:g}**)."
    )
    c1, c2, c3 = st.columns(3)
    share = f"{pct(stopped / arrived)} of arrivals" if arrived else None
    widgets.context_metric(c1, "Stop here", f"{stopped:,}", share)
    sc = run.scoring
    errors = [
        (
            c2,
            "Error of those stopping",
            pct(details["error_of_stops"]) if stopped else "–",
            "Share of the examples the policy stops here that this node's "
            "classifier gets wrong.",
        ),
        (
            c3,
            "Error if all stopped",
            pct(details["error_if_stopped"]) if arrived else "–",
            "If every arriving example were classified here, with the sensors "
            "held so far: what buying more sensors is weighed against.",
        ),
    ]
    if sc.regression:
        errors = [
            (
                c2,
                f"{sc.name} of those stopping",
                sc.fmt(details["error_of_stops"]) if stopped else "–",
                f"The {sc.long} of this node's regressor on the examples the "
                "policy stops here.",
            ),
            (
                c3,
                f"{sc.name} if all stopped",
                sc.fmt(details["error_if_stopped"]) if arrived else "–",
                "If every arriving example were predicted here, with the "
                "sensors held so far: what buying more sensors is weighed "
                "against.",
            ),
        ]
    for column, label, value, help_text in errors:
        column.metric(label, value, border=True, help=help_text)
    if not arrived:
        st.caption("No example of this set reaches this node.")
        return
    left, right = st.columns(2)
    with left:
        st.markdown("**What the node's policy does**")
        actions = details["actions"].assign(
            action=lambda t: [
                subsets.action_label(run.model, node, int(c), a)
                for a, c in zip(t["action"], t["child"], strict=True)
            ]
        )[["count", "share", "action"]]  # counts first: names can be long
        st.dataframe(
            actions,
            hide_index=True,
            width="stretch",
            column_config={
                "count": st.column_config.NumberColumn("examples"),
                "share": percent_column("share", progress=True),
            },
        )
    with right:
        if sc.regression:
            _targets(details.get("targets"))
            return
        st.markdown("**Classes of the arriving examples**")
        classes = details["classes"]
        if classes is None:
            st.caption("No labels for this set.")
        else:
            config = {
                "class": st.column_config.TextColumn("class"),
                "arrived": st.column_config.NumberColumn("examples"),
                "share": percent_column("share", progress=True),
                "error_if_stopped": percent_column("error if stopped"),
            }
            st.dataframe(
                percent_table(classes[classes["arrived"] > 0], config),
                hide_index=True,
                width="stretch",
                column_config=config,
            )


def _targets(targets: Any) -> None:
    """A regressor node's arriving targets and their predictions."""
    st.markdown("**Targets of the arriving examples**")
    if targets is None:
        st.caption("No targets for this set.")
        return
    config = {
        name: st.column_config.NumberColumn(label, format="%.4g")
        for name, label in (
            ("mean", "mean"),
            ("std", "std"),
            ("min", "min"),
            ("max", "max"),
            ("predicted_mean", "mean predicted here"),
        )
    }
    st.dataframe(targets, hide_index=True, width="stretch", column_config=config)
