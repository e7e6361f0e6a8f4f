"""Explore DAG page: the sensor DAG with how examples flow through it."""

from __future__ import annotations

import streamlit as st

from budgetdag_core.explain import state_label
from ui import dag_view, state, widgets
from ui.formatting import error_column, percent_column, percent_table
from ui.reports import edge_table, flow_table, path_table

widgets.enter_page()
ss = st.session_state

st.title("Explore DAG")
current = state.get_dataset()
regression = current is not None and current.task == "regression"
st.markdown(
    "Nodes are sets of acquired sensors, from none (left) to all (right). At each "
    "node the policy buys one more sensor (blue edges, as wide as the examples "
    "taking them) or stops and "
    + ("predicts the number" if regression else "classifies")
    + " (dotted orange edges down to a sink under each depth). "
    "**Click a node** to see what its policy does."
)
widgets.show_notice()
run, dataset = widgets.need_model(
    "the flow through the DAG comes from a trained policy."
)
dag_view.subsets_note(run)
sc = run.scoring
n_states = run.model.sensor_dag_.n_states

c1, c2 = st.columns([4, 5], vertical_alignment="bottom")
part = widgets.choice(
    c1.radio, "Examples", dag_view.PARTS, state.W_FLOW_PART, horizontal=True
)
COLOURS = {
    "stop_share": "Share stopping",
    "error": f"{sc.name} when stopping" if sc.regression else "Error when stopping",
}
color = widgets.choice(
    c2.radio, "Node colour", COLOURS, state.W_DAG_COLOR, horizontal=True
)
# On a row of its own: beside the radios its label is cut on narrow windows.
show_all = widgets.persisted(st.toggle, "Show unreached states", state.W_FLOW_ALL)
graph = dag_view.flow(run, dataset, part)
min_arrived = 1
if n_states > 16 and not show_all:
    # A fresh model or data part starts at a threshold that keeps the figure
    # readable (about 30 states); the slider then belongs to the user.
    top = max(int(graph.nodes[0].get("arrived", 1)) // 10, 2)
    fresh = f"dag_min_{part}" not in run.cache
    if fresh or not 1 <= ss[state.W_DAG_MIN] <= top:
        run.cache[f"dag_min_{part}"] = True
        ss[state.W_DAG_MIN] = min(dag_view.auto_min_arrived(graph), top)
    min_arrived = widgets.persisted(
        st.slider,
        "Hide states reached by fewer examples than",
        state.W_DAG_MIN,
        min_value=1,
        max_value=top,
        help=f"With {n_states} states many are reached by a handful of examples; "
        "hiding them leaves the main routes. Set 1 to see every reached state.",
    )

# The node whose details are shown: chosen in the list or by a click.
visible = [
    k
    for k in sorted(graph.nodes)
    if show_all or graph.nodes[k]["arrived"] >= min_arrived or k == 0
]
if ss[state.W_DAG_NODE] not in visible:
    ss[state.W_DAG_NODE] = None
fig = dag_view.figure(
    run,
    graph,
    color=color,
    selected=ss[state.W_DAG_NODE],
    hide_unvisited=not show_all,
    min_arrived=min_arrived,
    width=dag_view.PAGE_WIDTH_PX,
)
dag_view.rename_trace(fig, "selected", "clicked node")
clicked = dag_view.clickable_chart(fig, state.W_DAG_CHART, dag_view.PAGE_WIDTH_PX)
if clicked is not None and clicked != ss[state.W_DAG_NODE] and clicked in visible:
    ss[state.W_DAG_NODE] = clicked
    st.rerun()  # redraw the figure with the clicked node ringed

st.selectbox(
    "Node",
    options=visible,
    key=state.W_DAG_NODE,
    format_func=lambda k: (
        f"{k}: {state_label(run.model, k)} ({graph.nodes[k]['arrived']:,} examples)"
    ),
    placeholder="Click a node in the figure, or choose one here",
)
node = ss[state.W_DAG_NODE]
with st.container(border=True):
    if node is None:
        st.caption(
            "Node details appear here: what the policy does with the examples "
            "arriving, "
            + (
                f"their targets and the {sc.name} if they stopped."
                if sc.regression
                else "their classes and the error if they stopped."
            )
        )
    else:
        dag_view.node_panel(run, dataset, part, node)

with st.expander("Tables: acquisition sequences, states, edges"):
    X, y = dataset.X(part, run.spec), dataset.y(part)
    trace = run.memo(f"trace_{part}", lambda: run.model.trace(X))
    st.markdown("**Acquisition sequences**: the sensors bought, in order.")
    config = {
        "share": percent_column(progress=True),
        "cost": st.column_config.NumberColumn("avg cost", format="%.3g"),
        "error": error_column(sc, sc.name if sc.regression else None),
    }
    loss = run.model.loss if sc.regression else None
    st.dataframe(
        percent_table(path_table(trace, y, loss=loss), config),
        hide_index=True,
        width="stretch",
        column_config=config,
    )
    st.markdown("**States**")
    nodes = flow_table(graph)
    if not show_all:
        nodes = nodes[nodes["arrived"] > 0]
    config = {
        "stop_share": percent_column("stops here", progress=True),
        "error_rate": error_column(
            sc,
            f"{sc.name} of stops",
            help=f"The {sc.long} of the examples that stop here.",
        ),
    }
    st.dataframe(
        percent_table(nodes, config),
        hide_index=True,
        width="stretch",
        # Counts and shares first: long sensor lists would push them out of
        # view. n_sensors repeats the sensors column.
        column_order=[
            *(c for c in nodes.columns if c not in ("state", "sensors", "n_sensors")),
            "state",
            "sensors",
        ],
        column_config=config,
    )
    st.markdown("**Edges taken**")
    st.dataframe(edge_table(graph), hide_index=True, width="stretch")
