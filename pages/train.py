"""Train page: parameters in plain words, training with progress, results."""

from __future__ import annotations

import streamlit as st

from budgetdag_core import estimate_fit_seconds
from budgetdag_core.spec_table import suggested_cost_scale
from ui import state, subsets, widgets
from ui.training import (
    CLASSIFIERS,
    CORE_BANKS,
    LEARNERS,
    ProgressReporter,
    TrainedRun,
    TrainSettings,
    bank_kind_of,
    budget_targeting_available,
    comparison_table,
    reusable_bank,
    train,
)

widgets.enter_page()
ss = st.session_state

st.title("Train")
st.markdown(
    "Training fits the **classifier bank** (one classifier per subset of sensors, "
    "with cross-validated predictions), then learns a **policy** at each subset, "
    "from the full one back to the empty one: buy one more sensor, or stop and "
    "classify."
)
dataset = widgets.need_dataset()
check = widgets.need_spec()
spec = check.spec
widgets.show_notice()
subset_fields = state.subset_settings(check)
n_subsets = subset_fields["n_subsets"]
n_states = 2**spec.n_sensors if n_subsets is None else 2**n_subsets
st.caption(
    f"**{dataset.name}**: {len(dataset.train):,} training rows · {spec.n_sensors} "
    "sensors · "
    + (
        f"{n_states} DAG states"
        if n_subsets is None
        else f"{n_subsets} sensor subsets (Alg. 2), at most {n_states} DAG states"
    )
    + f" · buying every sensor costs {spec.total_cost:g}"
)


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value >= 1 else f"{value:.2f} s"


def cost_inputs() -> None:
    st.markdown("**What a sensor is worth**")
    if budget_targeting_available():
        st.radio(
            "Set the trade-off by",
            options=["scale", "budget"],
            key=state.W_COST_MODE,
            persist_state=state.PERSIST,
            horizontal=True,
            format_func={
                "scale": "Cost scale",
                "budget": "Target average cost",
            }.get,
        )
    if budget_targeting_available() and ss[state.W_COST_MODE] == "budget":
        st.number_input(
            "Target average cost per example",
            min_value=0.0,
            max_value=float(spec.total_cost),
            key=state.W_BUDGET,
            persist_state=state.PERSIST,
            format="%g",
            help="The average acquisition cost you can afford per example, in the "
            "sensors' cost unit. The cost scale that meets it is searched for on a "
            f"held-out part of the training rows. Between 0 and {spec.total_cost:g} "
            "(every sensor for every example).",
        )
        return
    suggested = suggested_cost_scale(spec)
    if state.NEXT_COST_SCALE in ss:
        ss[state.W_COST_SCALE] = ss.pop(state.NEXT_COST_SCALE)
    st.number_input(
        "Cost scale",
        min_value=0.0,
        step=suggested / 2,
        key=state.W_COST_SCALE,
        persist_state=state.PERSIST,
        format="%g",
        help="How many misclassifications one unit of cost is worth. A sensor is "
        "bought for an example only if it is expected to remove more than "
        "(cost scale x its cost) errors. 0: buy every sensor that helps; large: "
        "buy nothing. Changing only this reuses the classifier bank, so "
        "retraining takes seconds.",
    )
    st.caption(
        f"Suggested for these costs: {suggested:g} (buying every sensor is worth 0.2 "
        f"errors). Try {suggested / 4:.2g} to {suggested * 5:.2g}: smaller values buy "
        "more sensors."
    )


def model_inputs() -> None:
    st.markdown("**How to learn**")
    st.selectbox(
        "Classifier for each sensor subset",
        options=list(CLASSIFIERS),
        key=state.W_CLASSIFIER,
        persist_state=state.PERSIST,
        format_func=CLASSIFIERS.get,
        help="The bank fits one of these per subset of sensors (and per fold). "
        "Logistic regression is fast; the tree ensembles can be more accurate but "
        "take several times longer. Gradient boosting is the library's default "
        "bank (early-stopped, calibrated): on landsat 10.3 % test error against "
        "16.1 % for logistic regression, in 29 s against 6.5 s. The masked "
        "option fits one gradient-boosting "
        "model that sees unacquired sensors as missing and serves every subset: "
        "with many sensor subsets it is about as fast as logistic regression and "
        "more accurate (Spambase demo, cost scale 0.0035: 4.7 % test error at an "
        "average cost of 17, against 6.3 % for logistic regression; 16 s against "
        "15 s).",
    )
    left, right = st.columns(2)
    left.selectbox(
        "Policy learner",
        options=list(LEARNERS),
        key=state.W_LEARNER,
        persist_state=state.PERSIST,
        format_func=LEARNERS.get,
        help="How each subset learns its decision. Filter tree: a tournament of "
        "weighted logistic regressions between the actions (stop, or buy sensor "
        "k). Cost regression: predicts the cost of each action and takes the "
        "cheapest.",
    )
    right.slider(
        "Policy degree",
        min_value=1,
        max_value=3,
        key=state.W_DEGREE,
        persist_state=state.PERSIST,
        help="Polynomial degree of the features the policies see: 1 = linear "
        "decisions, 2-3 = curved ones (slower; wide subsets fall back to a lower "
        "degree automatically). With sensor subsets (Alg. 2) the states hold many "
        "columns and degree 2 is slow: on Spambase (57 sensors, 129 states) "
        "training takes about 12 s at degree 1 and over 2 minutes at degree 2, "
        "so the many-sensor demo starts at 1.",
    )
    left.number_input(
        "Cross-validation folds",
        min_value=2,
        max_value=10,
        key=state.W_CV,
        persist_state=state.PERSIST,
        help="The policies learn from predictions on rows each classifier did not "
        "train on. More folds: more reliable, slower (folds + 1 fits per subset). "
        "Every class needs at least this many rows.",
    )
    right.number_input(
        "Random seed",
        min_value=0,
        step=1,
        key=state.W_SEED,
        persist_state=state.PERSIST,
        help="Fixes the folds and the randomised classifiers: the same seed gives "
        "the same model.",
    )


def settings() -> TrainSettings:
    budget = (
        float(ss[state.W_BUDGET])
        if budget_targeting_available() and ss[state.W_COST_MODE] == "budget"
        else None
    )
    return TrainSettings(
        cost_scale=float(ss[state.W_COST_SCALE]),
        classifier=ss[state.W_CLASSIFIER],
        policy_learner=ss[state.W_LEARNER],
        policy_degree=int(ss[state.W_DEGREE]),
        cv=int(ss[state.W_CV]),
        random_state=int(ss[state.W_SEED]),
        target_budget=budget,
        **subset_fields,
    )


def run_training(chosen: TrainSettings) -> None:
    previous = state.get_run()
    reused = reusable_bank(previous, dataset, spec, chosen) is not None
    ss[state.TRAINING] = True
    stop = stop_slot.empty()
    stop.button(
        "Stop",
        key=state.W_STOP,
        icon=":material/stop_circle:",
        help="Stops training at the next progress step; the previous model is kept.",
    )
    with st.status("Training...", expanded=True) as status:
        bar = st.progress(0.0, text="Starting")
        reporter = ProgressReporter(
            lambda fraction, text: bar.progress(fraction, text=text),
            bank_reused=reused,
            subsets=chosen.n_subsets is not None,
        )
        try:
            run = train(dataset, spec, chosen, previous, progress=reporter)
        except ValueError as exc:
            status.update(label="Training failed", state="error")
            widgets.show_error(
                str(exc),
                "change the settings above, or fix the data (Data page) or the "
                "sensors (Sensors page), then train again.",
            )
        except Exception as exc:
            status.update(label="Training failed", state="error")
            widgets.show_unexpected(exc, "training")
        else:
            state.set_run(run)
            widgets.refresh_status()
            if chosen.target_budget is not None:
                # Show the scale found when the user switches back to it.
                ss[state.NEXT_COST_SCALE] = run.settings.cost_scale
            how = (
                "policies only, bank reused" if run.bank_reused else "bank and policies"
            )
            status.update(
                label=f"Trained in {_seconds(run.seconds)} ({how})",
                state="complete",
                expanded=False,
            )
    stop.empty()
    ss[state.TRAINING] = False


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
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(
        "Test error",
        f"{m['error']:.1%}",
        delta=f"{100 * (m['error'] - full['error']):+.1f} pts vs all sensors",
        delta_color="inverse",
        border=True,
    )
    share = m["avg_cost"] / full["avg_cost"] if full["avg_cost"] > 0 else float("nan")
    c2.metric(
        "Average cost",
        f"{m['avg_cost']:.3g}",
        delta=f"{share - 1:+.0%} vs all sensors",
        delta_color="inverse",
        border=True,
    )
    c3.metric("Average sensors", f"{m['avg_sensors']:.2f} of {n}", border=True)
    c4.metric(
        "No-sensor error",
        f"{none['error']:.1%}",
        help="Always predicting by class frequencies: the floor any model must beat.",
        border=True,
    )
    st.dataframe(
        comparison_table(run),
        column_config={
            "test error": st.column_config.NumberColumn(format="percent"),
            "avg cost": st.column_config.NumberColumn(format="%.3g"),
            "avg sensors": st.column_config.NumberColumn(format="%.2f"),
            "cost vs all sensors": st.column_config.NumberColumn(format="percent"),
        },
    )
    st.markdown(
        f"The policy classifies {m['n_samples']:,} test examples with "
        f"**{m['error']:.1%}** error while paying **{share:.0%}** of the all-sensor "
        f"cost on average (all sensors: {full['error']:.1%} error)."
    )
    if run.settings is not None and run.seconds is not None:
        s = run.settings
        classifier = CLASSIFIERS.get(s.classifier, s.classifier)
        st.caption(
            f"Cost scale {s.cost_scale:g} · {classifier}"
            f" · {LEARNERS.get(s.policy_learner, s.policy_learner)}, degree "
            f"{s.policy_degree} · {s.cv} folds · seed {s.random_state} · "
            f"trained in {_seconds(run.seconds)}"
            + (" (classifier bank reused)" if run.bank_reused else "")
        )
    if run.note:
        st.caption(run.note)
    if run.spec.to_json() != spec.to_json():
        st.caption(
            "This model was trained with an earlier sensor table: train again to use "
            "the current one."
        )
    elif run.settings is not None and (
        run.settings.subset_params() != chosen.subset_params()
    ):
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
        "average."
    )
elif reusable_bank(previous, dataset, spec, chosen) is not None:
    st.info(
        "The classifier bank for this data, sensors, classifier, folds and seed is "
        "already fitted: training relearns the policies only (seconds).",
        icon=":material/bolt:",
    )
else:
    selecting = (
        ""
        if n_subsets is None
        else f"selects {n_subsets} sensor subsets (Alg. 2, seconds), then "
    )
    at_most = "" if n_subsets is None else "at most "
    # The boosting banks are cross-fitted (fold models averaged): no refit.
    per_state = chosen.cv + (0 if chosen.classifier in CORE_BANKS else 1)
    fits = (
        f"{chosen.cv} boosting models (one per fold) that serve all "
        f"{at_most}{n_states} states"
        if chosen.classifier == "masked_boosting"
        else f"{at_most}{n_states * per_state:,} classifiers ({n_states} "
        f"states x {per_state})"
    )
    seconds = estimate_fit_seconds(
        len(dataset.train),
        n_states,
        max(2, dataset.train[dataset.label].nunique()),
        bank_kind_of(chosen.classifier),
        cv=chosen.cv,
    )
    st.caption(
        f"Training {selecting}fits {fits}, then learns a policy per state "
        "(roughly "
        + (f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min")
        + " on 2 cores). Later "
        "changes of the cost scale, policy learner or degree reuse the "
        + ("subsets and " if n_subsets is not None else "")
        + "classifiers."
    )
if n_subsets is not None and chosen.policy_degree > 1 and len(spec.columns) > 20:
    st.caption(
        f":material/schedule: Policy degree {chosen.policy_degree} over subsets "
        f"holding up to {len(spec.columns)} columns can take minutes; degree 1 "
        "is several times faster."
    )

train_slot, stop_slot = st.columns([1, 8], vertical_alignment="center")
clicked = train_slot.button(
    "Train", type="primary", key=state.W_TRAIN, icon=":material/play_arrow:"
)
if clicked:
    run_training(chosen)
elif ss.get(state.TRAINING):
    st.warning(
        "Training was stopped before it finished (Stop, or you left the page). "
        "The previous model, if any, is kept.",
        icon=":material/stop_circle:",
    )
    ss[state.TRAINING] = False

run = state.get_run()
if run is not None:
    show_results(run)
