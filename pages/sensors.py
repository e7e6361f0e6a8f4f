"""Sensors page: which columns each sensor reveals and what it costs."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from budgetdag_core import SensorSpec
from budgetdag_core.spec_table import spec_in_blocks, spec_to_table
from ui import state, widgets

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
    # Issue 3 (sensor-subset selection) adds its n_subsets control here, for specs
    # with more sensors than a full DAG allows.
    if check.ok:
        spec = check.spec
        st.success(
            f"{spec.n_sensors} sensors, {2**spec.n_sensors} DAG states, total cost "
            f"{spec.total_cost:g}. Ready to train.",
            icon=":material/check_circle:",
        )
        st.page_link(
            widgets.PAGES["train"], label="Go to Train", icon=":material/arrow_forward:"
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
