"""Trade-off page: error against cost for the DAG and every fixed sensor subset."""

from __future__ import annotations

import functools
from dataclasses import replace

import streamlit as st

from budgetdag_core import TradeoffResult
from budgetdag_core.plotting import tradeoff_figure
from ui import dag_view, state, sweep, widgets
from ui.formatting import error_column
from ui.reports import baseline_table
from ui.training import reusable_bank, uses_subsets

widgets.enter_page()
ss = st.session_state

st.title("Trade-off")
current_data = state.get_dataset()
regression = current_data is not None and current_data.task == "regression"
st.markdown(
    ("The error (MSE) of the predicted numbers" if regression else "Error")
    + " against what is paid for sensors. A fixed subset buys the same sensors "
    "for every example; the policy buys them example by example, and its **cost "
    "scale** moves it along a curve from buying nothing to buying what helps. "
    + (
        "The **expected-error cascade** (on the traced curve) is what one builds "
        "first: buy the "
        "sensors in one fixed order and stop once the error expected from the "
        "prediction so far is small (the training rows' out-of-fold error of "
        "similar predictions). The **oracle bound** picks the best stop for "
        "every example knowing its true value: no policy does better."
        if regression
        else "The **confidence cascade** (on the traced curve) is what one builds "
        "first: buy the sensors in one fixed order and stop once the classifier "
        "is sure."
    )
)
widgets.show_notice()
run, dataset = widgets.need_model(
    "the trade-off compares a trained policy with fixed subsets."
)
spec = run.spec
sc = run.scoring
params = run.params  # the model's own: a sweep re-runs it at other cost scales
X_LABELS = {"avg_cost": "Average cost", "avg_sensors": "Number of sensors"}
SPLITS = {
    "test": "Test set",
    "train": "Training set (out of fold)",
    "both": "Both",
}


def policy_summary() -> str:
    """The current model against the fixed subsets, on the test set."""
    table = baseline_table(run.metrics, run.states)
    fixed = table[table["kind"] == "fixed subset"]
    beaten = int(fixed["policy_dominates"].sum())
    policy = table[table["kind"] == "policy"].iloc[0]
    text = (
        f"The current model has **{sc.fmt(policy['error'])}** test {sc.name} at "
        "average "
        f"cost **{policy['avg_cost']:.3g}**; it beats **{beaten} of {len(fixed)}** "
        "fixed subsets on both counts."
    )
    as_good = fixed[fixed["error"] <= policy["error"]]
    if len(as_good):
        cheapest = as_good.sort_values("avg_cost").iloc[0]
        text += (
            f" The cheapest fixed subset at least as accurate, {cheapest['sensors']}, "
            f"costs {cheapest['avg_cost']:.3g}."
        )
    else:
        text += " No fixed subset is as accurate."
    return text


# ---------------------------------------------------- controls, the sweep
n_points = int(ss[state.W_TRADE_POINTS])
key = sweep.sweep_key(dataset, spec, params, n_points)
result = state.get_sweep(key)
reused = reusable_bank(run, dataset, spec, params) is not None

# A wrapping row, not columns: at 900 px four columns cut the button's label.
controls = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")
x_axis = widgets.choice(controls.radio, "x-axis", X_LABELS, state.W_TRADE_X)
if result is None:
    frame = run.memo("tradeoff_frame", lambda: sweep.current_frame(run, dataset))
    splits = ["test"]
    controls.caption(
        "Now: the current model (test set). **Trace the curve** to see the policy "
        "at every cost scale, on the training and the test set."
    )
else:
    frame = result.frame
    chosen_split = widgets.choice(
        controls.radio, "Examples", SPLITS, state.W_TRADE_SPLIT
    )
    splits = ["test", "train"] if chosen_split == "both" else [chosen_split]
widgets.persisted(
    controls.slider,
    "Cost scales",
    state.W_TRADE_POINTS,
    min_value=4,
    max_value=20,
    width=200,
)
busy = widgets.running_job()
go_sweep = controls.button(
    "Recompute" if result is not None else "Trace the curve",
    key=state.W_TRADE_RUN,
    type="primary" if result is None else "secondary",
    icon=":material/show_chart:",
    width="content",
    disabled=busy is not None,
)
# A caption, not the button's tooltip: a tooltip stays on screen when the
# button it belongs to is redrawn (disabled, then renamed) under the pointer.
st.caption(
    f"**{'Recompute' if result is not None else 'Trace the curve'}**: same data, "
    "sensors and settings as the current model; only the cost scale changes. "
    + (
        f"The {'regressor' if sc.regression else 'classifier'} bank of the current "
        "model is reused."
        if reused
        else f"The {'regressor' if sc.regression else 'classifier'} bank is fitted "
        "first (as long as a training)."
    )
)


def _traced(
    traced: TradeoffResult, key: tuple = key, token: str = dataset.token
) -> str:
    """Keep the finished curve (the next script run, on whichever page)."""
    state.set_sweep(key, token, traced)
    return f"Traced the curve: {len(traced.cost_scales)} cost scales."


if go_sweep:
    busy = widgets.long_work(
        functools.partial(
            sweep.compute_sweep,
            dataset,
            spec,
            params,
            n_points,
            replace(run, cache={}),  # without the page's memo of figures
        ),
        what="sweep",
        label="Tracing the trade-off curve...",
        failed="The curve could not be traced",
        doing="tracing the trade-off curve",
        fix="check the settings on the Train page.",
        apply=_traced,
        bank_reused=reused,
        subsets=uses_subsets(params),
        shared=(run.model.bank_,) if reused else (),
    )
if busy is not None:
    st.caption(
        f":material/hourglass_top: {busy.label} (sidebar). The figure below stays "
        "as it is until the new one is ready."
    )

# ------------------------------------------------------------ the figure
current = sweep.current_rows(frame, run, result)
drawn = sweep.figure_frame(frame, run, current)
highlight = [
    label
    for label in current or sweep.current_rows(drawn, run, result)
    if drawn.loc[label, "split"] in splits
]
fig = tradeoff_figure(
    drawn,
    x=x_axis,
    split=splits,
    hull=True,
    highlight=highlight or None,
    height=520,
)
dag_view.rename_trace(fig, "selected", "current model")
if sc.regression:
    sweep.loss_axis(fig, drawn, sc)
# The ring is the current model's one legend entry, on or off the curve.
fig.update_traces(showlegend=False, selector={"name": "this model"})
clicked = dag_view.clickable_chart(fig, state.W_TRADE_CHART)
if result is not None:
    st.caption(
        "**Click a point of the DAG curve** to make that model the current one "
        "(Explore DAG, What-if and Export then use it). The ring marks the "
        "current model."
    )
    if sweep.CURRENT in drawn.index:
        st.caption(
            f"The current model (cost scale {run.model.cost_scale_:.3g}) is not a "
            "point of this curve: it was "
            + (
                "fitted for a budget on part of the training rows."
                if run.bank_key is None
                else "trained after the curve was traced. **Recompute** adds it."
            )
        )
    if clicked is not None and clicked in frame.index:
        row = frame.loc[clicked]
        if row["method"] == "dag" and clicked not in current:
            state.set_run(
                sweep.run_from_sweep(result, result.model_index(clicked), dataset)
            )
            state.notice(
                f"Now using the model with cost scale {row['cost_scale']:.3g} "
                "from the curve.",
                "success",
            )
            st.rerun()
        elif row["method"] != "dag":
            name = sweep.method_name(row["method"], sc.regression)
            st.caption(
                f"That point is a baseline ({name}): "
                "click a point of the DAG curve to pick a model."
            )

# ---------------------------------------------------------- in words
st.markdown(policy_summary())
if result is not None:
    for split in ("test", "train"):
        if split in result.summaries:
            words = sweep.summary_words(result.summaries[split])
            st.markdown(f"**{SPLITS[split]}.** {words}")

# ------------------------------------------------------------- budget
st.subheader("A model for a budget")


@widgets.guarded("picking the model on the curve")
def _use_curve_model(point: int) -> None:
    picked = sweep.run_from_sweep(result, point, dataset)
    state.set_run(picked)
    state.notice(
        f"Now using the curve's model at cost scale {picked.model.cost_scale_:.3g}.",
        "success",
    )


budget = widgets.budget_input(spec)
# Side by side at 1280 px, one under the other when narrower (two columns
# at 900 px squeeze the worse-model warning into a tall strip).
cards = st.container(horizontal=True, gap="medium")
with cards.container(border=True, width=380):
    st.markdown("**From the curve** (instant)")
    if result is None:
        st.caption("Trace the curve first.")
    else:
        try:
            point = result.index_for_budget(budget, split="train")
        except ValueError as exc:
            st.caption(str(exc))
        else:
            picked = result.models[point]
            rows = result.frame.loc[result.model_rows(point)]
            test = rows[rows["split"] == "test"].iloc[0]
            st.markdown(
                f"The most accurate policy of the curve spending at most {budget:g} "
                f"on the training set: cost scale **{picked.cost_scale:.3g}**, test "
                f"{sc.name} **{sc.fmt(test['error'])}** at average cost "
                f"**{test['avg_cost']:.3g}**."
            )
            now = run.metrics["error"]
            if sweep.curve_point(run, result) != point and test["error"] > now:
                st.warning(
                    f"This model errs more on the test set than the current one "
                    f"({sc.fmt(test['error'])} against {sc.fmt(now)}): it is picked "
                    "on the training set, which the test set does not always agree "
                    "with.",
                    icon=":material/warning:",
                )
            st.button(
                "Use this model",
                key=state.W_TRADE_USE_CURVE,
                on_click=_use_curve_model,
                args=(point,),
                disabled=sweep.curve_point(run, result) == point,
            )
with cards.container(border=True, width=380):
    st.markdown("**Fitted for this budget** (a training)")
    if sc.regression:
        st.caption(
            "A cost scale searched for a budget (`fit_for_budget`) is for "
            "classification only: pick a regression's model from the curve."
        )
    st.caption(
        "Searches the cost scale on a held-out quarter of the training rows until "
        "the policy spends the target on average (`fit_for_budget`)."
    )
    if st.button(
        "Fit for this budget",
        key=state.W_TRADE_FIT_BUDGET,
        disabled=busy is not None or sc.regression,
    ):
        widgets.train_with_progress(
            dataset,
            spec,
            params,
            target_budget=budget,
            done=lambda fitted: fitted.note or "Fitted for the budget.",
        )

with st.expander("All points as a table"):
    for split in splits:
        st.markdown(f"**{SPLITS[split]}**")
        st.dataframe(
            sweep.table(frame, split, sc.regression),
            hide_index=True,
            column_config={
                "cost scale": st.column_config.NumberColumn(format="%.3g"),
                "avg cost": st.column_config.NumberColumn(format="%.3g"),
                "avg sensors": st.column_config.NumberColumn(format="%.2f"),
                "error": error_column(sc, sc.name if sc.regression else None)
                if sc.regression
                else st.column_config.NumberColumn(format="percent"),
            },
        )
