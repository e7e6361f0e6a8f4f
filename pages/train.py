"""Train page: parameters in plain words, training with progress, results."""

from __future__ import annotations

import streamlit as st

from ui import footprint, plan, state, subsets, widgets
from ui.estimate import (
    settings_probe,
)
from ui.formatting import error_column, pct, percent_column, percent_table
from ui.reports import comparison_table
from ui.spec_table import suggested_cost_scale
from ui.training import (
    DEFAULT_REGRESSOR,
    LEARNERS,
    REGRESSORS,
    TrainedRun,
    TrainSettings,
    budget_targeting_available,
    classifiers_for,
    describe_model,
    reusable_bank,
)

widgets.enter_page()
ss = st.session_state

st.title("Train")
dataset = widgets.need_dataset()
regression = dataset.task == "regression"
st.markdown(
    "Training fits the **regressor bank** (a prediction of the target at every "
    "subset of sensors the DAG holds, with cross-validated predictions), then "
    "learns a **policy** at each subset, from the fullest back to the empty one: "
    "buy one more sensor, or stop and predict."
    if regression
    else "Training fits the **classifier bank** (class probabilities at every "
    "subset of sensors the DAG holds, with cross-validated predictions), then "
    "learns a **policy** at each subset, from the fullest back to the empty one: "
    "buy one more sensor, or stop and classify."
)
check = widgets.need_spec()
spec = check.spec
state.follow_suggestions(spec)  # new data or costs: their cost scale and budget
widgets.show_notice()
n_subsets = state.subset_settings(check)["n_subsets"]
# The library's plan for the settings as they stand (its DAGs beyond 12
# sensors, the states Alg. 2's subsets make): the words below all follow it.
strategies = plan.strategies_of(spec, state.train_settings(check))
if regression and ss[state.W_CLASSIFIER] not in REGRESSORS:
    ss[state.W_CLASSIFIER] = DEFAULT_REGRESSOR
elif not regression and ss[state.W_CLASSIFIER] not in classifiers_for(bool(strategies)):
    # A fit of one-sensor-addition DAGs needs the library's any-subset bank.
    ss[state.W_CLASSIFIER] = state.MANY_SENSOR_CLASSIFIER
# The same words as the Sensors page's (ui.widgets.training_outlook).
planned = state.chosen_settings(check)
probe = settings_probe(dataset, spec, planned)
st.caption(
    f"**{dataset.name}**: {len(dataset.train):,} training rows · {spec.n_sensors} "
    f"sensors · {plan.dag_words(spec, planned, probe)}"
    f" · buying every sensor costs {spec.total_cost:g}"
)


def cost_inputs() -> None:
    st.markdown("**What a sensor is worth**")
    modes = {"auto": "Automatic", "scale": "Cost scale"}
    if budget_targeting_available() and not regression:
        # fit_for_budget searches a classifier's cost scale only.
        modes["budget"] = "Target average cost"
    elif ss[state.W_COST_MODE] == "budget":
        ss[state.W_COST_MODE] = state.DEFAULTS[state.W_COST_MODE]
    widgets.choice(
        st.radio, "Set the trade-off by", modes, state.W_COST_MODE, horizontal=True
    )
    if ss[state.W_COST_MODE] == "auto":
        st.caption(
            "The library's default (cost_scale='auto'): the least average cost "
            "whose out-of-fold error on the training rows is within one point "
            "of all sensors' (a tenth of their loss for a regressor)."
        )
        return
    if budget_targeting_available() and ss[state.W_COST_MODE] == "budget":
        widgets.budget_input(
            spec,
            "The average acquisition cost you can afford per example, in the "
            "sensors' cost unit. The cost scale that meets it is searched for on a "
            "held-out part of the training rows. ",
        )
        return
    suggested = suggested_cost_scale(spec, state.loss_unit(dataset))
    if state.NEXT_COST_SCALE in ss:
        ss[state.W_COST_SCALE] = ss.pop(state.NEXT_COST_SCALE)
    widgets.persisted(
        st.number_input,
        "Cost scale",
        state.W_COST_SCALE,
        min_value=0.0,
        step=suggested / 2,
        format="%g",
    )
    worth = (
        "0.2 times the target's variance (the squared error of predicting its "
        "mean): cost scale x cost is weighed against the squared error"
        if regression
        else "0.2 errors"
    )
    st.caption(
        f"Suggested for these costs: {suggested:g} (buying every sensor is worth "
        f"{worth}). Try {suggested / 4:.2g} to {suggested * 5:.2g}: smaller values "
        "buy more sensors."
    )


def model_inputs() -> None:
    st.markdown("**How to learn**")
    widgets.choice(
        st.selectbox,
        "Regressor for each sensor subset"
        if regression
        else "Classifier for each sensor subset",
        REGRESSORS if regression else classifiers_for(bool(strategies)),
        state.W_CLASSIFIER,
    )
    if strategies and not regression:
        st.caption(
            "Beyond the full DAG's sensors the library's DAGs need one model "
            "that serves any sensor subset: the other classifiers need sensor "
            "subsets (Alg. 2, Sensors page)."
        )
    left, right = st.columns(2)
    widgets.choice(left.selectbox, "Policy learner", LEARNERS, state.W_LEARNER)
    widgets.persisted(
        right.slider, "Policy degree", state.W_DEGREE, min_value=1, max_value=3
    )
    widgets.persisted(
        left.number_input,
        "Cross-validation folds",
        state.W_CV,
        min_value=2,
        max_value=10,
    )
    widgets.persisted(
        right.number_input, "Random seed", state.W_SEED, min_value=0, step=1
    )


def settings() -> TrainSettings:
    return state.chosen_settings(check)


def trained(run: TrainedRun) -> str:
    """What the finished training says (the next run of any page)."""
    if chosen.target_budget is not None or chosen.cost_scale == "auto":
        # Show the scale found when the user switches back to it.
        ss[state.NEXT_COST_SCALE] = float(run.model.cost_scale_)
    return widgets.trained_label(run, dataset.name)


def how_long(chosen: TrainSettings) -> str:
    """The training's estimated time in words, with what it counts (the
    Sensors page says the same: :func:`ui.widgets.how_long`)."""
    return widgets.how_long(dataset, spec, chosen)


def run_training(chosen: TrainSettings) -> None:
    widgets.train_with_progress(
        dataset,
        spec,
        chosen,
        fix="change the settings above, or fix the data (Data page) or the "
        "sensors (Sensors page), then train again.",
        done=trained,
    )


def show_subsets(run: TrainedRun) -> None:
    """The sensor subsets Alg. 2 selected (models over subsets only)."""
    table = subsets.subset_table(run.model)
    if table is None:
        return
    st.subheader("Selected sensor subsets")
    st.markdown(subsets.subset_summary(run.model))
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        # The long sensor list last: on a narrow page it runs off, not the counts.
        column_order=["subset", "n sensors", "cost", "sensors"],
        column_config={
            "subset": st.column_config.TextColumn("subset #", width="small"),
            "sensors": st.column_config.TextColumn("sensors", width="large"),
            "n sensors": st.column_config.NumberColumn(width="small"),
            "cost": st.column_config.NumberColumn(format="%g", width="small"),
        },
    )
    st.caption(
        "A DAG state is a union of these subsets (named S1, S2, ... on the other "
        "pages); each policy step buys one more subset, that is all of its "
        "sensors not held yet."
    )


def show_results(run: TrainedRun) -> None:
    st.subheader("Results on the test set")
    if run.metrics is None:
        st.warning(run.note or "This model has no results on the current data.")
        return
    m, states = run.metrics, run.states
    full, none = states.iloc[-1], states.iloc[0]
    n = run.spec.n_sensors
    sc = run.scoring
    # A wrapping row: four fixed columns cut the numbers short below ~1100 px.
    row = st.container(horizontal=True)
    if sc.regression:  # a loss in the target's units: compared in percent
        change = m["error"] / full["error"] - 1 if full["error"] > 0 else 0.0
        change = round(change, 3) + 0.0
        delta = f"{pct(change, signed=True)} vs all sensors"
    else:  # error rates: compared in points
        change = round(100 * (m["error"] - full["error"]), 1) + 0.0  # no "-0.0"
        delta = f"{change:+.1f} pts vs all sensors"
    row.metric(
        f"Test {sc.name}",
        sc.fmt(m["error"]),
        delta=delta if change else "same as all sensors",
        border=True,
        help=f"The {sc.long} on the test rows." if sc.regression else None,
        **widgets.lower_is_better(change),
    )
    share = m["avg_cost"] / full["avg_cost"] if full["avg_cost"] > 0 else float("nan")
    row.metric(
        "Average cost",
        f"{m['avg_cost']:.3g}",
        delta=f"{pct(share - 1, signed=True)} vs all sensors",
        border=True,
        **widgets.lower_is_better(round(share - 1, 3)),
    )
    row.metric("Average sensors", f"{m['avg_sensors']:.2f} of {n}", border=True)
    row.metric(
        f"No-sensor {sc.name}",
        sc.fmt(none["error"]),
        help="Always predicting the training rows' mean: the floor any model must beat."
        if sc.regression
        else "Always predicting by class frequencies: the floor any model must beat.",
        border=True,
    )
    column = f"test {sc.name}"
    config = {
        column: error_column(sc),
        "avg cost": st.column_config.NumberColumn(format="%.3g"),
        "avg sensors": st.column_config.NumberColumn(format="%.2f"),
        "cost vs all sensors": percent_column(),
    }
    table = comparison_table(run.metrics, run.states, run.spec.n_sensors)
    table = table.rename(columns={"test error": column})
    if sc.regression:
        table = table.rename(index={"No sensor (class priors)": "No sensor (the mean)"})
    st.dataframe(percent_table(table, config), column_config=config)
    st.markdown(
        f"The policy {'predicts' if sc.regression else 'classifies'} "
        f"{m['n_samples']:,} test examples with **{sc.fmt(m['error'])}** "
        f"{sc.name} while paying **{pct(share)}** of the all-sensor cost on "
        f"average (all sensors: {sc.fmt(full['error'])} {sc.name})."
    )
    trained = (
        ""
        if run.seconds is None
        else f" · trained in {widgets.seconds(run.seconds)}, from Train to the "
        "result"
        + (
            f" ({'regressor' if sc.regression else 'classifier'} bank reused)"
            if run.bank_reused
            else ""
        )
    )
    st.caption(describe_model(run.model) + trained)
    kept = plan.model_words(run.model)
    if kept:
        st.caption(kept)
    if run.note:
        st.caption(run.note)
    if run.spec.to_json() != spec.to_json():
        st.caption(
            "This model was trained with an earlier sensor table: train again to use "
            "the current one."
        )
    elif run.settings.subset_params() != chosen.subset_params():
        st.caption(
            "This model was trained with other sensor-subset settings (Sensors "
            "page): train again to use the current ones."
        )
    st.page_link(
        widgets.PAGES["export"],
        label="Download the policy (Export)",
        icon=":material/download:",
    )
    show_subsets(run)


left, right = st.columns(2, gap="large")
with left:
    cost_inputs()
with right:
    model_inputs()

chosen = settings()
previous = state.get_run()
if chosen.target_budget is not None:
    st.caption(
        "Training fits the classifier bank on 75% of the training rows, then tries "
        "cost scales (policies only) until the other 25% spend the target on "
        f"average ({how_long(chosen)})."
    )
elif reusable_bank(previous, dataset, spec, chosen) is not None:
    model = "regressor" if regression else "classifier"
    st.info(
        f"The {model} bank for this data, sensors, {model}, folds and seed is "
        "already fitted: training relearns the policies only (seconds).",
        icon=":material/bolt:",
    )
else:
    # The probe behind the estimate counts the selected subsets' unions.
    reused = (
        "bank and its DAGs"
        if strategies
        else ("subsets and " if n_subsets is not None else "")
        + ("regressors" if regression else "classifiers")
    )
    st.caption(
        f"{plan.training_plan(spec, chosen, settings_probe(dataset, spec, chosen))} "
        f"({how_long(chosen)}). Later changes of the cost scale, policy learner or "
        f"degree reuse the {reused}."
    )
if n_subsets is not None and chosen.policy_degree > 1 and len(spec.columns) > 20:
    st.caption(
        f":material/schedule: Policy degree {chosen.policy_degree} over subsets "
        f"holding up to {len(spec.columns)} columns can take minutes; degree 1 "
        "is several times faster."
    )

too_big = footprint.reload_warning(dataset, spec, chosen)
if too_big is not None:
    st.warning(too_big, icon=":material/save:")

busy = widgets.running_job()
# A wrapping row, not columns: a narrow column hides the button's label.
train_row = st.container(horizontal=True, vertical_alignment="center")
clicked = train_row.button(
    "Train",
    type="primary",
    key=state.W_TRAIN,
    icon=":material/play_arrow:",
    disabled=busy is not None,
)
if clicked:
    run_training(chosen)
    busy = widgets.running_job()
run = state.get_run()
if busy is not None:
    train_row.caption(
        f":material/hourglass_top: {busy.label} Follow it (or stop it) in the "
        "sidebar; you can switch pages meanwhile. "
        + (
            "Its results show here when it finishes."
            if run is None
            else "The results below are the previous model's until it finishes."
        )
    )

if run is not None:
    show_results(run)
