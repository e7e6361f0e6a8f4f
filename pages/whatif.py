"""What-if page: one example walked through the policy, with editable values."""

from __future__ import annotations

import streamlit as st

from budgetdag_core import path_of
from ui import acquisition, dag_view, state, stepper, subsets, widgets
from ui.formatting import percent_column, percent_table
from ui.whatif import decisions_table, edited_values, editor_table, probability_table

widgets.enter_page()
ss = st.session_state

st.title("What-if: one example")
st.markdown(
    "Pick a test example and change its measurements. The policy runs as it would "
    "in deployment: it asks for one sensor at a time, reads only the sensors it "
    "bought, and stops when more are not worth their cost. Edit a value to see "
    "whether the path or the prediction changes."
)
widgets.show_notice()
run, dataset = widgets.need_model("the path comes from a trained policy.")
X, y = dataset.X("test", run.spec), dataset.y("test")
regression = run.task == "regression"
dag_view.subsets_note(run)


@widgets.guarded("resetting the values")
def _reset() -> None:
    ss[state.WHATIF_VERSION] = ss.get(state.WHATIF_VERSION, 0) + 1


c1, c2 = st.columns([2, 3], vertical_alignment="bottom")
if not 0 <= ss[state.W_WHATIF_ROW] < len(X):
    ss[state.W_WHATIF_ROW] = 0
row = widgets.persisted(
    c1.number_input,
    f"Test example (0 to {len(X) - 1})",
    state.W_WHATIF_ROW,
    min_value=0,
    max_value=len(X) - 1,
    step=1,
)
c2.button(
    "Back to the test values",
    key=state.W_WHATIF_RESET,
    on_click=_reset,
    icon=":material/undo:",
)

original = X.iloc[row]
one_column = all(list(run.spec.groups[n]) == [n] for n in run.spec.names)
# One above the other, not side by side: names and numbers keep their full width
# on a narrow window too (the sidebar takes 300 px of a 900 px one).
st.markdown("**Sensor values** (edit the *value* column, then apply)")
table = editor_table(run.spec, original)
# In a form: edits wait in the browser until "Apply". Each edit rerunning the
# page let an edit typed during that rerun go missing (the grid was redrawn
# from the run in flight).
with st.form(key=state.W_WHATIF_FORM, border=False, enter_to_submit=False):
    edited = st.data_editor(
        table,
        key=f"{state.W_WHATIF_EDITOR}{ss.get(state.WHATIF_VERSION, 0)}_{row}",
        hide_index=True,
        disabled=["sensor", "column", "test value"],
        width="stretch",
        height=min(36 * (len(table) + 1) + 3, 320),
        # One-column sensors named as their column: one name is enough.
        column_order=(["sensor"] if not one_column else [])
        + ["column", "value", "test value"],
        column_config={
            # No fixed width: names are shown whole, the numbers share the rest.
            "sensor": st.column_config.TextColumn(),
            "column": st.column_config.TextColumn(),
            "value": st.column_config.NumberColumn("value", format="%.4g"),
            "test value": st.column_config.NumberColumn(format="%.4g"),
        },
    )
    st.form_submit_button(
        "Apply the values", key=state.W_WHATIF_APPLY, icon=":material/done:"
    )
try:
    values, changed = edited_values(edited)
    result = path_of(run.model, values)
except ValueError as exc:
    widgets.show_error(str(exc), "enter a number in every value cell.")
    st.stop()
base = run.memo(f"path_{row}", lambda: path_of(run.model, original))

st.subheader("Step by step")
st.caption(
    "Buy one sensor at a time, the policy's pick or one of yours, and see what "
    "the model believes after each and whether the policy would stop. Edit "
    "values above, apply them and step on: the steps taken replay with the new "
    "values."
)
stepper.stepper(run, values, row, ss.get(state.WHATIF_VERSION, 0))

st.subheader("The whole path")
st.caption("The policy left to itself, from the first sensor to its stop.")

m1, m3, m4 = st.columns(3)
moved = result.prediction != base.prediction


def _said(value: object) -> str:
    """A prediction as the page shows it (a number: 4 significant digits)."""
    return f"{float(value):.4g}" if regression else str(value)


was = f"was {_said(base.prediction)}" if moved else None
widgets.context_metric(m1, "Prediction", _said(result.prediction), was)
m3.metric(
    "Cost paid",
    f"{result.cost:g}",
    delta=f"{result.cost - base.cost:+g}" if result.cost != base.cost else None,
    delta_color="inverse",
    border=True,
)
m4.metric(
    "Sensors bought",
    f"{len(result.acquired)}"
    + (f" of {n}" if (n := run.spec.n_sensors) < 10 else f"/{n}"),
    border=True,
)
bought = " → ".join(result.acquired[:12]) or "none"
if len(result.acquired) > 12:
    bought += f" → … ({len(result.acquired)} in all)"
truth = (
    f"**True value:** {_said(y.iloc[row])} (error "
    f"{float(result.prediction) - float(y.iloc[row]):+.4g})"
    if regression
    else f"**True label:** {y.iloc[row]}"
)
st.markdown(
    f"{truth} · **bought, in order:** {bought}"
    + (
        f"  \n{len(changed)} value(s) edited: {', '.join(changed[:6])}"
        + ("…" if len(changed) > 6 else "")
        if changed
        else ""
    )
)
grid = run.memo("sensor_grid", lambda: acquisition.sensor_grid(run.spec))
if grid is None:
    grid = acquisition.user_grid(run.spec)
if grid is not None:
    acquisition.example_grid(run, grid, values, result)
config = {
    "cost so far": st.column_config.NumberColumn(
        format="%g", help="Paid after this step."
    ),
    "predicts now": st.column_config.TextColumn(
        help="The prediction with the sensors held after this step."
    ),
    "confidence": percent_column(help="Of that prediction."),
}
st.dataframe(
    percent_table(
        decisions_table(
            result.decisions,
            subsets.path_subsets(run.model, result.states),
            regression=regression,
        ),
        config,
    ),
    hide_index=True,
    width="stretch",
    column_config=config,
)
acquisition.scores_section(run, result)
if result.proba:
    probs = probability_table(result.proba)
    st.markdown("**Final class probabilities**")
    st.dataframe(
        probs,
        hide_index=True,
        width="stretch",
        column_config={
            "class": st.column_config.TextColumn(),
            "probability": percent_column(progress=True),
        },
    )

fig = dag_view.figure(
    run,
    dag_view.flow(run, dataset, "test"),
    highlight_path=result.states,
    min_arrived=dag_view.auto_min_arrived(dag_view.flow(run, dataset, "test")),
    width=dag_view.PAGE_WIDTH_PX,
)
st.markdown("**The example's path** (red) over the flow of the test set")
dag_view.dag_chart(fig, state.W_WHATIF_CHART)
acquisition.purchases_section(
    run, dataset, grid, acquisition.group_of(run, y, y.iloc[row])
)
