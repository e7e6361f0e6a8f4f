"""Sensors page: which columns each sensor reveals and what it costs."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from budgetdag_core import SensorSpec
from budgetdag_core.validation import MAX_FULL_DAG_SENSORS
from ui import state, widgets
from ui.grouping import GROUP_MODES, Grouping, describe_grouping, propose
from ui.spec_table import (
    SpecCheck,
    spec_costs,
    spec_in_blocks,
    spec_to_table,
    typed_costs,
    with_sensor,
    with_typed_costs,
)
from ui.training import MAX_APP_SUBSETS, SUBSET_REWARDS
from ui.uploads import SPEC_MAX_MB, spec_from_upload

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
    # Costs the user typed survive a regrouping of the same columns.
    spec, kept = with_typed_costs(spec, ss.get(state.TYPED_COSTS, {}))
    state.set_spec_table(spec_to_table(spec))
    if kept:
        state.notice(
            f"{kept} sensor(s) kept the cost typed for their columns; the others "
            "cost what the preset gives.",
            "info",
        )


def _remember_costs(typed: dict) -> None:
    """Add costs the user gave (by columns) to what regroupings keep."""
    ss[state.TYPED_COSTS] = {**ss.get(state.TYPED_COSTS, {}), **typed}


def _cost() -> float:
    return float(ss[state.W_PRESET_COST])


def presets() -> None:
    default_label = "Demo groups" if dataset.kind == "demo" else "Suggested"
    with st.container(border=True):
        head, cost = st.columns([3, 1], vertical_alignment="bottom")
        head.markdown(
            "**Start from a preset** (replaces the table below). All but the "
            "first give every sensor the cost on the right, except sensors "
            "whose columns had a cost typed in the table."
        )
        cost.number_input(
            "Cost per sensor",
            min_value=0.0,
            key=state.W_PRESET_COST,
            persist_state=state.PERSIST,
            help="Used by the presets; edit single costs in the table afterwards.",
        )
        c1, c2, c4 = st.columns(3, vertical_alignment="bottom")
        how = describe_grouping(dataset.spec, features)
        c1.caption(
            "The groups and costs that come with the demo."
            if dataset.kind == "demo"
            else f"Suggested for this table: {how or 'its own grouping'} "
            f"({dataset.spec.n_sensors} sensors)."
        )
        c1.button(
            default_label,
            key=f"{state.W_PRESET}default",
            on_click=_preset,
            args=(lambda: dataset.spec,),
            width="stretch",
        )
        c2.caption(f"Each of the {len(features)} columns is its own sensor.")
        c2.button(
            "Per column",
            key=f"{state.W_PRESET}per_column",
            on_click=_preset,
            args=(lambda: SensorSpec.per_column(features, cost=_cost()),),
            width="stretch",
        )
        c4.number_input(
            "Consecutive blocks",
            min_value=1,
            max_value=max(1, len(features)),
            key=state.W_BLOCKS,
            persist_state=state.PERSIST,
        )
        c4.button(
            "In blocks",
            key=f"{state.W_PRESET}blocks",
            on_click=_preset,
            args=(
                lambda: spec_in_blocks(features, int(ss[state.W_BLOCKS]), cost=_cost()),
            ),
            width="stretch",
        )


def _proposal() -> Grouping:
    """The grouping the name/image controls describe (ValueError if none)."""
    return propose(
        features,
        ss.get(state.W_GROUP_MODE, state.DEFAULTS[state.W_GROUP_MODE]),
        separator=ss.get(state.W_PREFIX_SEP) or "",
        pattern=ss.get(state.W_GROUP_PATTERN) or "",
        blocks=int(ss.get(state.W_GRID_BLOCKS, state.DEFAULTS[state.W_GRID_BLOCKS])),
    )


def _code(text: str) -> str:
    """``text`` as inline code: column names may hold Markdown characters."""
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def grouping() -> None:
    """Group the columns by a shared name token or as an image, previewed live."""
    with st.container(border=True):
        st.markdown(
            "**Group columns by name or as an image** (replaces the table below; "
            "every sensor gets the cost per sensor above)."
        )
        mode = st.radio(
            "Group by",
            options=list(GROUP_MODES),
            format_func=GROUP_MODES.get,
            key=state.W_GROUP_MODE,
            persist_state=state.PERSIST,
            horizontal=True,
            help="Shared word: the word most columns share, anywhere in the name, "
            "names a sensor ('mean radius', 'radius error', 'worst radius' -> "
            "mean, error, worst). Prefix/suffix: the first/last word. Pattern: "
            "columns with the same match of a regular expression (or of its "
            "first group) form a sensor. Image grid: columns that form an image "
            "(pixel_0_0 .. pixel_7_7) cut into blocks.",
        )
        left, right = st.columns([2, 1], vertical_alignment="bottom")
        if mode == "pattern":
            left.text_input(
                "Pattern (regular expression)",
                key=state.W_GROUP_PATTERN,
                persist_state=state.PERSIST,
                placeholder="e.g. (mean|error|worst) or ^(band\\d+)",
                help="Searched anywhere in each column name. Columns with the same "
                "match form one sensor, named by the match (or by the pattern's "
                "first group). Columns it does not match become sensors of their "
                "own.",
            )
        elif mode == "grid":
            left.number_input(
                "Blocks per side",
                min_value=1,
                max_value=16,
                step=1,
                key=state.W_GRID_BLOCKS,
                persist_state=state.PERSIST,
                help="2 cuts the image into 4 quadrants, 3 into 9 blocks, ...",
            )
        else:
            left.text_input(
                "Word separator",
                key=state.W_PREFIX_SEP,
                persist_state=state.PERSIST,
                max_chars=3,
                placeholder="any space or punctuation",
                help="Where column names split into words. Empty: at any space, "
                "punctuation or underscore.",
            )
        try:
            found: Grouping | None = _proposal()
        except (TypeError, ValueError) as exc:
            found, problem = None, str(exc)
        right.button(
            "Apply grouping",
            key=f"{state.W_PRESET}name",
            on_click=_preset,
            args=(lambda: _proposal().to_spec(cost=_cost()),),
            disabled=found is None,
            type="primary",
            width="stretch",
        )
        if found is None:
            st.warning(problem, icon=":material/warning:")
            return
        items = list(found.groups.items())
        shown = ", ".join(f"{_code(name)} ({len(cols)})" for name, cols in items[:12])
        more = f" and {len(items) - 12} more" if len(items) > 12 else ""
        sensors = "sensor" if found.n_sensors == 1 else "sensors"
        st.caption(
            f"Preview: {found.n_sensors} {sensors} (columns each): {shown}{more}"
        )
        if len(found.leftover) == len(features):
            st.caption(
                ":material/info: No two columns share a group under this rule: "
                "each column would be a sensor of its own."
            )
        elif found.leftover:
            st.caption(
                f"{len(found.leftover)} column(s) match no group and become "
                "sensors of their own."
            )


@widgets.guarded("making the sensor")
def _make_sensor() -> None:
    try:
        table = with_sensor(
            ss[state.SPEC_TABLE],
            ss.get(state.W_NEW_SENSOR) or "",
            ss.get(state.W_NEW_SENSOR_COLUMNS) or [],
            float(ss.get(state.W_NEW_SENSOR_COST) or 0.0),
        )
    except ValueError as exc:
        state.notice(str(exc), "error")
        return
    chosen = tuple(sorted(ss[state.W_NEW_SENSOR_COLUMNS]))
    _remember_costs({chosen: float(ss.get(state.W_NEW_SENSOR_COST) or 0.0)})
    state.set_spec_table(table)
    state.notice(
        f"Sensor {ss[state.W_NEW_SENSOR].strip()!r} now reveals "
        f"{len(ss[state.W_NEW_SENSOR_COLUMNS])} column(s).",
        "success",
    )
    ss[state.W_NEW_SENSOR], ss[state.W_NEW_SENSOR_COLUMNS] = "", []


def custom_sensor() -> None:
    """Custom groups in the page: choose columns, name them, one sensor a click."""
    with st.container(border=True, key=state.W_NEW_SENSOR_BOX):
        st.markdown(
            "**Make a sensor from chosen columns** (they leave the sensors that "
            "had them; a sensor left without columns goes). Repeat for each group."
        )
        row = st.container(horizontal=True, vertical_alignment="bottom")
        row.multiselect(
            "Columns",
            options=features,
            key=state.W_NEW_SENSOR_COLUMNS,
            placeholder="choose the columns one measurement reveals",
            width=420,
        )
        row.text_input(
            "Sensor name",
            key=state.W_NEW_SENSOR,
            placeholder="e.g. lab panel",
            width=180,
        )
        row.number_input(
            "Cost", min_value=0.0, key=state.W_NEW_SENSOR_COST, format="%g", width=110
        )
        row.button(
            "Make sensor",
            key=state.W_NEW_SENSOR_MAKE,
            on_click=_make_sensor,
            icon=":material/add:",
        )


def _listed(cell: object) -> list[str]:
    """A ``columns`` cell of the editor: a list, an array, text, or empty."""
    if cell is None or isinstance(cell, float):
        return []
    if isinstance(cell, str):
        return [c.strip() for c in cell.split(",") if c.strip()]
    return [str(c) for c in cell]  # type: ignore[union-attr]


def column_lists() -> None:
    """Each sensor's column count and full column list, on demand."""
    table = ss[state.SPEC_TABLE]
    rows = [
        (name, _listed(cols))
        for name, cols in zip(table["sensor"], table["columns"], strict=True)
        if isinstance(name, str) and name.strip()
    ]
    with st.expander(f"Columns of each sensor ({len(rows)} sensors)"):
        for name, cols in rows:
            listed = ", ".join(_code(c) for c in cols) or "none"
            st.markdown(f"**{_code(name)}** · {len(cols)} column(s): {listed}")


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
            # The name fits itself; the column lists take what is left (all
            # of each list is in the expander below the table).
            "sensor": st.column_config.TextColumn(
                "Sensor", help="A unique name, e.g. 'glucose test'."
            ),
            "columns": st.column_config.MultiselectColumn(
                "Columns",
                options=features,
                help="The feature columns this sensor reveals.",
                width="medium",
            ),
            "cost": st.column_config.NumberColumn(
                "Cost", help="Acquisition cost (0 or more).", format="%g", width="small"
            ),
        },
    )
    ss[state.SPEC_TABLE] = edited
    _remember_costs(typed_costs(ss[state.SPEC_BASE], edited))
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
        # The Train page's words and estimate, from the same function.
        states, time = widgets.training_outlook(
            dataset, spec, state.chosen_settings(check)
        )
        st.success(
            f"{spec.n_sensors} sensors, {states}, total cost "
            f"{spec.total_cost:g}. Ready to train: {time}.",
            icon=":material/check_circle:",
        )
        st.page_link(
            widgets.PAGES["train"], label="Go to Train", icon=":material/arrow_forward:"
        )


def subset_controls(check: SpecCheck) -> None:
    """Alg. 2 of the paper: a DAG over unions of t selected sensor subsets."""
    many = check.ok and check.spec.n_sensors > MAX_FULL_DAG_SENSORS
    with st.container(border=True):
        st.markdown("**Sensor subsets (Alg. 2)**")
        instead = (
            "Select sensor subsets instead of the library's default"
            if many
            else "Select sensor subsets instead of the full DAG"
        )
        st.toggle(
            instead,
            key=state.W_SUBSETS_ON,
            persist_state=state.PERSIST,
            help="Optional. Without it, up to "
            f"{MAX_FULL_DAG_SENSORS} sensors make the full DAG (a state for every "
            "combination of sensors, 2^sensors), and more sensors the library's "
            "default: DAGs that buy one sensor per step. With subsets, training "
            "first picks t sensor subsets greedily (the paper's Alg. 2) and "
            "builds the DAG over their unions (at most 2^t states); each policy "
            "step then buys a whole subset.",
        )
        used = state.subsets_in_use(check)
        # Two rows of two: four in a row cut the labels short at 1280 px and less.
        c1, c3 = st.columns(2, vertical_alignment="bottom")
        c2, c4 = st.columns(2)
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
            horizontal=True,
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
            max_upload_size=SPEC_MAX_MB,  # the browser's; the server checks too
        )
        if file is not None and ss.get(state.SPEC_JSON_ID) != file.file_id:
            ss[state.SPEC_JSON_ID] = file.file_id
            try:
                spec = spec_from_upload(file)
                spec.check_columns(features)
            except ValueError as exc:
                widgets.show_error(
                    f"The spec in {file.name!r} cannot be used: {exc}",
                    "fix the file, or edit the table here.",
                )
            else:
                _remember_costs(spec_costs(spec))
                state.set_spec_table(spec_to_table(spec))
                state.notice(f"Loaded the sensors from {file.name}.", "success")
                st.rerun()


presets()
grouping()
custom_sensor()
editor()
column_lists()
messages()
st.divider()
json_io()
