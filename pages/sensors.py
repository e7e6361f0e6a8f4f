"""Sensors page: which columns each sensor reveals and what it costs."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from budgetdag_core import SensorSpec
from budgetdag_core.validation import MAX_FULL_DAG_SENSORS
from ui import state, widgets
from ui.spec_table import SpecCheck, spec_in_blocks, spec_to_table
from ui.training import MAX_APP_SUBSETS, SUBSET_REWARDS

widgets.enter_page()
ss = st.session_state

st.title("Sensors")
st.markdown(
    "A **sensor** is one measurement: acquiring it reveals a group of feature "
    "columns at once, for a **cost** (money, minutes, risk: any unit, as long as "
    "all sensors use the same one). The policy decides per example which sensors "
    "to pay for. Columns that are in no sensor are not used."
)
dataset = widgets.need_dataset()
widgets.show_notice()
features = dataset.features


@widgets.guarded("applying the preset")
def _preset(make: Callable[[], SensorSpec]) -> None:
    try:
        spec = make()
    except ValueError as exc:
        state.notice(f"That preset does not apply: {exc}", "error")
        return
    state.set_spec_table(spec_to_table(spec))


def _cost() -> float:
    return float(ss[state.W_PRESET_COST])


def presets() -> None:
    default_label = "Demo groups" if dataset.kind == "demo" else "Suggested groups"
    with st.container(border=True):
        head, cost = st.columns([3, 1], vertical_alignment="bottom")
        head.markdown(
            "**Start from a preset** (replaces the table below). The last three give "
            "every sensor the cost on the right."
        )
        cost.number_input(
            "Cost per sensor",
            min_value=0.0,
            key=state.W_PRESET_COST,
            persist_state=state.PERSIST,
            help="Used by the presets; edit single costs in the table afterwards.",
        )
        c1, c2, c3, c4 = st.columns(4, vertical_alignment="bottom")
        c1.caption(
            "The groups and costs that come with the demo."
            if dataset.kind == "demo"
            else "A suggestion for this table (at most 8 sensors)."
        )
        c1.button(
            default_label,
            key=f"{state.W_PRESET}default",
            on_click=_preset,
            args=(lambda: dataset.default_spec,),
            width="stretch",
        )
        c2.caption(f"Each of the {len(features)} columns is its own sensor.")
        c2.button(
            "One sensor per column",
            key=f"{state.W_PRESET}per_column",
            on_click=_preset,
            args=(lambda: SensorSpec.per_column(features, cost=_cost()),),
            width="stretch",
        )
        c3.text_input(
            "Name separator",
            key=state.W_PREFIX_SEP,
            persist_state=state.PERSIST,
            max_chars=3,
            help="band1_x and band1_y form sensor band1 with separator _",
        )
        c3.button(
            "Group by name prefix",
            key=f"{state.W_PRESET}prefix",
            on_click=_preset,
            args=(
                lambda: SensorSpec.by_prefix(
                    features, ss[state.W_PREFIX_SEP] or "_", cost=_cost()
                ),
            ),
            width="stretch",
        )
        c4.number_input(
            "Number of blocks",
            min_value=1,
            max_value=max(1, len(features)),
            key=state.W_BLOCKS,
            persist_state=state.PERSIST,
        )
        c4.button(
            "Consecutive blocks",
            key=f"{state.W_PRESET}blocks",
            on_click=_preset,
            args=(
                lambda: spec_in_blocks(features, int(ss[state.W_BLOCKS]), cost=_cost()),
            ),
            width="stretch",
        )


def editor() -> None:
    key = state.spec_editor_key()
    if key not in ss:
        # Back on this page: the editor's own state is gone; start from the last edit.
        ss[state.SPEC_BASE] = ss[state.SPEC_TABLE]
    edited = st.data_editor(
        ss[state.SPEC_BASE],
        key=key,
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        column_config={
            "sensor": st.column_config.TextColumn(
                "Sensor", help="A unique name, e.g. 'glucose test'.", width="small"
            ),
            "columns": st.column_config.MultiselectColumn(
                "Columns",
                options=features,
                help="The feature columns this sensor reveals.",
                width="large",
            ),
            "cost": st.column_config.NumberColumn(
                "Cost", help="Acquisition cost (0 or more).", format="%g", width="small"
            ),
        },
    )
    ss[state.SPEC_TABLE] = edited
    widgets.refresh_status()


def messages() -> None:
    check = state.spec_check()
    for error in check.errors:
        st.error(error, icon=":material/error:")
    for note in check.notes:
        st.info(note, icon=":material/info:")
    subset_controls(check)
    if check.ok:
        spec = check.spec
        t = int(ss[state.W_N_SUBSETS])
        states = (
            f"at most 2^{t} = {2**t} DAG states (over {t} sensor subsets)"
            if state.subsets_in_use(check)
            else f"{2**spec.n_sensors} DAG states"
        )
        st.success(
            f"{spec.n_sensors} sensors, {states}, total cost "
            f"{spec.total_cost:g}. Ready to train.",
            icon=":material/check_circle:",
        )
        st.page_link(
            widgets.PAGES["train"], label="Go to Train", icon=":material/arrow_forward:"
        )


def subset_controls(check: SpecCheck) -> None:
    """Alg. 2 of the paper: a DAG over unions of t selected sensor subsets."""
    required = check.needs_subsets
    with st.container(border=True):
        st.markdown("**Sensor subsets (Alg. 2)**")
        if required:
            st.caption(
                f"Required: more than {MAX_FULL_DAG_SENSORS} sensors make too many "
                "DAG states. Training first picks sensor subsets greedily (each "
                "subset is chosen to classify the training rows the others get "
                "wrong), then builds the DAG over their unions; each policy step "
                "buys a whole subset."
            )
        else:
            st.toggle(
                "Select sensor subsets instead of the full DAG",
                key=state.W_SUBSETS_ON,
                persist_state=state.PERSIST,
                help="Optional with this many sensors. The full DAG has a state "
                "for every combination of sensors (2^sensors); with subsets, "
                "training first picks t sensor subsets greedily and builds the "
                "DAG over their unions (at most 2^t states). Fewer states train "
                "faster; each policy step then buys a whole subset.",
            )
        used = state.subsets_in_use(check)
        c1, c2, c3, c4 = st.columns([2, 3, 2, 3], vertical_alignment="bottom")
        c1.number_input(
            "Number of subsets t",
            min_value=1,
            max_value=MAX_APP_SUBSETS,
            step=1,
            key=state.W_N_SUBSETS,
            persist_state=state.PERSIST,
            disabled=not used,
            help="How many sensor subsets to select. The DAG has at most 2^t "
            f"states (t = 8: 256). The app allows up to {MAX_APP_SUBSETS}, what "
            "the DAG figure can draw; the paper used 8.",
        )
        c2.checkbox(
            "All sensors as last subset",
            key=state.W_SUBSET_ALL,
            persist_state=state.PERSIST,
            disabled=not used,
            help="Include all sensors as the last subset, as in the paper: t - 1 "
            "subsets are chosen greedily and the last one is every sensor, so the "
            "policy can always buy everything for the hardest examples.",
        )
        c3.number_input(
            "Subset budget",
            min_value=0.5,
            step=1.0,
            key=state.W_SUBSET_BUDGET,
            persist_state=state.PERSIST,
            disabled=not used,
            placeholder="no limit",
            format="%g",
            help="Limits the total size of the greedy subsets: the sum of their "
            "costs may not exceed this many times the average sensor cost (with "
            "unit costs: the total number of sensors over all subsets; a sensor "
            "in two subsets counts twice). Optional; empty: as many as there are "
            "sensors. "
            "Smaller budgets give smaller, cheaper subsets.",
        )
        c4.radio(
            "Reward of a subset",
            options=list(SUBSET_REWARDS),
            key=state.W_SUBSET_REWARD,
            persist_state=state.PERSIST,
            disabled=not used,
            format_func=SUBSET_REWARDS.get,
            help="How the greedy selection scores a subset on a training row, with "
            "a quick cross-validated linear model. Soft: the predicted probability "
            "of the row's true class; it keeps telling subsets apart when many "
            "classes make every row 'covered' by some subset after a few steps. "
            "Correct (the paper): 1 if the row is classified right, else 0.",
        )


def json_io() -> None:
    check = state.spec_check()
    left, right = st.columns(2)
    with left:
        st.markdown("**Save the spec**")
        st.download_button(
            "Download spec (JSON)",
            data=check.spec.to_json() if check.ok else "",
            file_name=f"{dataset.name}_sensors.json",
            mime="application/json",
            key=f"{state.W_DOWNLOAD}spec_json",
            on_click="ignore",
            disabled=not check.ok,
            icon=":material/download:",
        )
        st.caption('Format: `{"sensors": [{"name", "columns", "cost"}, ...]}`')
    with right:
        file = st.file_uploader(
            "Load a spec (JSON)",
            type=["json"],
            key=state.W_SPEC_JSON,
            max_upload_size=1,
        )
        if file is not None and ss.get(state.SPEC_JSON_ID) != file.file_id:
            ss[state.SPEC_JSON_ID] = file.file_id
            try:
                spec = SensorSpec.from_json(file.getvalue().decode("utf-8", "replace"))
                spec.check_columns(features)
            except ValueError as exc:
                widgets.show_error(
                    f"The spec in {file.name!r} cannot be used: {exc}",
                    "fix the file, or edit the table here.",
                )
            else:
                state.set_spec_table(spec_to_table(spec))
                state.notice(f"Loaded the sensors from {file.name}.", "success")
                st.rerun()


presets()
editor()
messages()
st.divider()
json_io()
