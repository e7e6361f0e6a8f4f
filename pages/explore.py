"""Explore DAG page: how examples flow through the sensor DAG (tables for now)."""

from __future__ import annotations

import streamlit as st

from budgetdag_core.reports import edge_table, flow_table, path_table
from ui import state, widgets

widgets.enter_page()
ss = st.session_state

st.title("Explore DAG")
st.markdown(
    "Each state of the DAG is a set of acquired sensors. Every example starts with "
    "no sensor; at each state its policy either buys one more sensor or stops and "
    "classifies. Below: where the examples go."
)
st.info(
    "Coming next: the DAG drawn as a graph (states in layers by number of sensors, "
    "edges as wide as the flow), node details on click, and one example's path "
    "step by step.",
    icon=":material/construction:",
)
run = widgets.need_run("the flow through the DAG comes from a trained policy.")
widgets.need_results(run)
dataset = widgets.need_dataset()

part = st.radio(
    "Examples",
    options=["test", "train"],
    key=state.W_FLOW_PART,
    persist_state=state.PERSIST,
    horizontal=True,
    format_func={"test": "Test set", "train": "Training set"}.get,
)
X, y = dataset.X(part, run.spec), dataset.y(part)
graph = run.memo(f"flow_{part}", lambda: run.model.flow(X, y))
trace = run.memo(f"trace_{part}", lambda: run.model.trace(X))

st.subheader("Acquisition sequences")
st.caption("The sensors bought, in order, and how those examples fared.")
st.dataframe(
    path_table(trace, y),
    hide_index=True,
    column_config={
        "share": st.column_config.ProgressColumn(format="percent", min_value=0.0),
        "cost": st.column_config.NumberColumn("avg cost", format="%.3g"),
        "error": st.column_config.NumberColumn(format="percent"),
    },
)

st.subheader("States")
nodes = flow_table(graph)
if not st.checkbox(
    "Show states that no example reaches",
    key=state.W_FLOW_ALL,
    persist_state=state.PERSIST,
):
    nodes = nodes[nodes["arrived"] > 0]
st.dataframe(
    nodes,
    hide_index=True,
    column_config={
        "stop_share": st.column_config.ProgressColumn(
            "stops here", format="percent", min_value=0.0, max_value=1.0
        ),
        "error_rate": st.column_config.NumberColumn(
            "error of those stopping", format="percent"
        ),
    },
)
with st.expander("Edges taken"):
    st.dataframe(edge_table(graph), hide_index=True)
