"""Data page: a bundled demo or an uploaded CSV, checked and cleaned for training."""

from __future__ import annotations

import functools

import pandas as pd
import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from budgetdag_core.datasets import DEMO_HINTS, DEMOS
from budgetdag_core.tables import (
    FIXES,
    Fix,
    Problem,
    class_balance,
    column_summary,
    fix_for,
    guess_task,
    has_errors,
    suggest_label,
)
from ui import plan, state, widgets
from ui.data import Upload, demo_dataset
from ui.estimate import known_probe
from ui.formatting import percent_column, percent_table
from ui.training import TASKS
from ui.uploads import CSV_MAX_MB, table_from_upload

widgets.enter_page()
ss = st.session_state

st.title("BudgetDAG")
st.markdown(
    "Some predictions need measurements that cost money, time or risk: a lab test, "
    "a second scan, an extra spectral band. **BudgetDAG** learns a *policy* that "
    "decides, example by example, which measurement (*sensor*) to acquire next, or "
    "to stop and classify with what it already has. Easy examples get the cheap "
    "sensors only; hard ones get the expensive ones."
)
with st.expander("How it works, in four steps"):
    st.markdown(
        "1. **Data**: a table with a label column and feature columns (this page).\n"
        "2. **Sensors**: group the feature columns into sensors and give each an "
        "acquisition cost.\n"
        "3. **Train**: one classifier is fitted for every subset of sensors. Then, "
        "from the subsets with all sensors back to the empty one, a policy learns at "
        "each subset whether paying for one more sensor lowers *errors + cost scale "
        "x cost* for an example, or whether to stop and classify.\n"
        "4. **Use it**: download the trained policy; in deployment it asks for one "
        "sensor at a time and stops as soon as more measurements are not worth "
        "their cost."
    )
widgets.show_notice()
#: Whether the question of a data change that waits for a yes was asked next
#: to the control that asked it (else it is asked at the end of the page).
asked: list[bool] = []


def ask_here() -> None:
    """The question of a data change waiting for a yes, if any, here: next
    to the button or choice that asked it, not at the top of the page."""
    if not asked:
        asked.append(True)
        widgets.pending_replace(cancel=_keep_data)


def quick_start() -> None:
    """One click from the first screen to a trained model: train on the data
    in use with its suggested sensors and settings, and follow it on Train."""
    dataset, check = state.get_dataset(), state.spec_check()
    if dataset is None or state.get_run() is not None:
        return
    busy = widgets.running_job()
    row = st.container(horizontal=True, vertical_alignment="center")
    if check is None or not check.ok:
        row.page_link(
            widgets.PAGES["sensors"],
            label="Fix the sensor table, then train",
            icon=":material/sensors:",
        )
        return
    clicked = row.button(
        f"Train a model on {dataset.name}",
        key=state.W_QUICK_TRAIN,
        type="primary",
        icon=":material/play_arrow:",
        disabled=busy is not None,
        help="With the sensors and settings shown on the Sensors and Train "
        "pages (suggested for this data); change them there any time.",
    )
    spec, settings = check.spec, state.train_settings(check)
    row.caption(
        f"Trains on {spec.n_sensors} sensors ({plan.sensors_words(dataset, spec)}) "
        f"· {plan.states_words(spec, settings, known_probe(dataset, spec, settings))}"
        " · or choose other data below, then set up the sensors and training."
    )
    if clicked and widgets.train_with_progress(dataset, spec, settings):
        st.switch_page(widgets.PAGES["train"])


quick_start()


# ------------------------------------------------------------------- demos
@widgets.guarded("loading the demo")
def _switch_to_demo(name: str) -> None:
    try:
        state.set_dataset(
            demo_dataset(widgets.cached_demo(name)),
            headline=f"Loaded the {name} demo.",
        )
    except (OSError, ValueError) as exc:
        state.notice(f"The demo could not be loaded: {exc}", "error")


def _use_demo() -> None:
    name = ss[state.W_DEMO]
    current = state.get_dataset()
    if current is not None and current.token == f"demo:{name}":
        return
    widgets.replace_data(functools.partial(_switch_to_demo, name), f"the {name} demo")


def _keep_data() -> None:
    """The user kept the data in use: the choices above show it again."""
    current = state.get_dataset()
    if current is None:
        return
    if current.kind == "demo":
        ss[state.W_SOURCE], ss[state.W_DEMO] = "demo", current.name
    else:
        ss[state.W_SOURCE] = "upload"


def demo_section() -> None:
    widgets.persisted(
        st.selectbox,
        "Demo dataset",
        state.W_DEMO,
        options=list(DEMOS),
        format_func=str.capitalize,
        on_change=_use_demo,
    )
    st.caption(DEMOS[ss[state.W_DEMO]])
    st.caption(DEMO_HINTS[ss[state.W_DEMO]].replace("\n", "  \n"))
    current = state.get_dataset()
    if current is None or current.token != f"demo:{ss[state.W_DEMO]}":
        st.button(
            f"Use the {ss[state.W_DEMO]} demo",
            type="primary",
            on_click=_use_demo,
            key=state.W_USE_DEMO,
        )
    ask_here()


# ------------------------------------------------------------------ upload
def _read_new_file(file: UploadedFile) -> Upload | None:
    """Parse a newly uploaded file; remember a refusal so it is shown, not re-read."""
    failed = ss.get(state.UPLOAD_ERROR)
    if failed is not None and failed[0] == file.file_id:
        widgets.show_error(failed[1], _UPLOAD_HELP)
        return None
    try:
        table = table_from_upload(file)
    except ValueError as exc:
        ss[state.UPLOAD_ERROR] = (file.file_id, str(exc))
        widgets.show_error(str(exc), _UPLOAD_HELP)
        return None
    ss.pop(state.UPLOAD_ERROR, None)
    upload = Upload(file.name, table.frame, table.description, file_id=file.file_id)
    state.set_upload(upload)
    ss[state.W_LABEL] = table.label
    return upload


_UPLOAD_HELP = (
    "upload a CSV file: one row per example, a header row with column names, "
    "a label column and numeric feature columns."
)


@widgets.guarded("cleaning the table")
def _apply(fix: Fix) -> None:
    state.get_upload().add_fix(fix)


@widgets.guarded("undoing a cleaning step")
def _undo(all_steps: bool) -> None:
    upload = state.get_upload()
    del upload.fixes[0 if all_steps else -1 :]
    upload.rebuild()


def _use_upload(label: str, task: str) -> None:
    upload = state.get_upload()
    widgets.replace_data(functools.partial(_switch_to_upload, label, task), upload.name)


@widgets.guarded("preparing the uploaded table")
def _switch_to_upload(label: str, task: str = "classification") -> None:
    upload = state.get_upload()
    dataset = upload.to_dataset(
        label,
        test_fraction=ss[state.W_TEST_FRACTION],
        random_state=int(ss[state.W_SPLIT_SEED]),
        task=task,
    )
    headline = (
        f"Now using {upload.name}: {len(dataset.train)} training and "
        f"{len(dataset.test)} test rows. Check the sensors next."
    )
    if not state.set_dataset(dataset, headline=headline):
        state.notice("This table is already the one in use.")


def _task_reason(y: pd.Series, task: str) -> str:
    """Why :func:`guess_task` reads ``y`` as ``task``, in a few words."""
    values = y.dropna()
    distinct = f"{values.nunique():,} distinct value(s) in {len(values):,} rows"
    if task == "classification":
        kind = "text or categories" if values.dtype == object else "few values"
        return f"{kind}: {distinct}"
    numbers = pd.to_numeric(values, errors="coerce")
    if (numbers != numbers.round()).any():
        return f"numbers with fractions, {distinct}"
    return f"whole numbers, {distinct}"


def task_choice(upload: Upload, label: str) -> str:
    """Classification or regression for ``label``: guessed once per file and
    label column (:func:`guess_task`), said with its reason, switchable."""
    y = upload.work[label]
    guess = guess_task(y)
    if ss.get(state.TASK_GUESSED) != (upload.file_id, label):
        ss[state.TASK_GUESSED] = (upload.file_id, label)
        ss[state.W_TASK] = guess
    widgets.choice(st.radio, "Task", TASKS, state.W_TASK, horizontal=True)
    task = ss[state.W_TASK]
    said = f"`{label}` looks like **{guess}** ({_task_reason(y, guess)})"
    st.caption(
        said
        + ("." if task == guess else f"; you chose {task}.")
        + (
            " A regression predicts the number and reports the mean squared error."
            if task == "regression"
            else ""
        )
    )
    return task


def problem_box(problem: Problem, label: str) -> None:
    show = {"error": st.error, "warning": st.warning, "info": st.info}[problem.severity]
    show(problem.message)
    if not problem.fixes:
        return
    columns = list(problem.columns)
    several = ("non_numeric", "missing", "leak", "strong_column")
    if problem.kind in several and len(columns) > 1:
        columns = st.multiselect(
            "Columns to fix",
            options=list(problem.columns),
            default=list(problem.columns),
            key=f"{state.W_FIX_COLUMNS}{problem.kind}",
        )
    chosen = Problem(problem.kind, problem.severity, problem.message, tuple(columns))
    cols = st.columns(len(problem.fixes))
    for col, op in zip(cols, problem.fixes, strict=True):
        col.button(
            FIXES[op],
            key=f"{state.W_FIX}{problem.kind}_{op}",
            on_click=_apply,
            args=(fix_for(chosen, op, label, int(ss[state.W_CV])),),
            disabled=not columns,
            width="stretch",
        )


def test_set_section(upload: Upload) -> None:
    widgets.choice(
        st.radio,
        "Test set",
        {"random": "Random split of this table", "file": "A second file"},
        state.W_SPLIT,
        horizontal=True,
    )
    if ss[state.W_SPLIT] == "random":
        if upload.raw_test is not None:
            upload.set_test(None, None)
        left, right = st.columns(2)
        widgets.persisted(
            left.slider,
            "Share of rows held out for testing",
            state.W_TEST_FRACTION,
            min_value=0.1,
            max_value=0.5,
            step=0.05,
        )
        widgets.persisted(
            right.number_input, "Split seed", state.W_SPLIT_SEED, min_value=0, step=1
        )
        return
    test_file = st.file_uploader(
        "Test CSV (same columns as the training file)",
        key=state.W_UPLOAD_TEST,
        max_upload_size=CSV_MAX_MB,
    )
    if test_file is not None and test_file.file_id != upload.test_file_id:
        try:
            table = table_from_upload(test_file)
            upload.set_test(test_file.name, table.frame, test_file.file_id)
        except ValueError as exc:
            widgets.show_error(str(exc), "upload a test file with the same columns.")
    if upload.raw_test is not None:
        st.caption(
            f"Test rows from {upload.test_name}; cleaning steps apply to both files."
        )
    else:
        st.info("Upload the test file, or switch back to a random split.")


def upload_section() -> None:
    file = st.file_uploader(
        f"CSV file (up to {CSV_MAX_MB} MB)",
        key=state.W_UPLOAD,
        max_upload_size=CSV_MAX_MB,
        help="One row per example with a header row. Comma, semicolon, tab or pipe "
        "separated (detected), any common encoding, optionally gzip-compressed "
        "(.csv.gz). Missing values may be empty, NA or '?'.",
    )
    upload = state.get_upload()
    if file is not None and (upload is None or upload.file_id != file.file_id):
        new = _read_new_file(file)
        if new is None:
            return
        upload = new
    if upload is None:
        st.info(f"Choose a CSV file to start. {_UPLOAD_HELP.capitalize()}")
        return
    kept = (
        ""
        if file is not None
        else " The file box above is empty because the page was reloaded "
        "(a browser does not hand a file back): the table is kept here, with "
        "its cleaning steps. Choose a file only to replace it."
    )
    st.caption(f"**{upload.name}**: read as {upload.description}.{kept}")
    columns = [str(c) for c in upload.work.columns]
    if ss.get(state.W_LABEL) not in columns:
        ss[state.W_LABEL] = suggest_label(upload.work)
    label = widgets.persisted(
        st.selectbox, "Label column (what to predict)", state.W_LABEL, options=columns
    )
    task = task_choice(upload, label)
    test_set_section(upload)

    # No note on many columns: the Sensors page groups them, the library's
    # default trains any number, and the one-click button says what it trains.
    problems = upload.findings(label, int(ss[state.W_CV]), task)
    if problems:
        st.subheader("Checks")
        for problem in problems:
            problem_box(problem, label)
    else:
        st.success("The table is ready for training.", icon=":material/check_circle:")

    with st.expander(f"Look at the table ({len(upload.work):,} rows)"):
        table_tabs(upload.work, label, task)
    with st.expander("Drop columns"):
        drop = st.multiselect(
            "Columns to leave out",
            options=[c for c in columns if c != label],
            key=state.W_DROP_COLUMNS,
            help="E.g. identifiers, or to keep only a subset of many columns.",
        )
        st.button(
            "Drop them",
            key=state.W_DROP_SELECTED,
            on_click=_apply,
            args=(
                fix_for(
                    Problem("drop", "info", "", tuple(drop)), "drop_columns", label
                ),
            ),
            disabled=not drop,
        )
    if upload.fixes:
        steps = "\n".join(
            f"{i}. {fix.describe()}" for i, fix in enumerate(upload.fixes, start=1)
        )
        st.markdown(f"**Cleaning steps**\n\n{steps}")
        left, right = st.columns(2, width=360)
        left.button(
            "Undo last step", key=state.W_UNDO_LAST, on_click=_undo, args=(False,)
        )
        right.button(
            "Undo all steps", key=state.W_UNDO_ALL, on_click=_undo, args=(True,)
        )
    blocked = has_errors(problems) or (
        ss[state.W_SPLIT] == "file" and upload.raw_test is None
    )
    st.button(
        "Use this table for training",
        type="primary",
        key=state.W_USE_UPLOAD,
        on_click=_use_upload,
        args=(label, task),
        disabled=blocked,
        help="Fix the errors above first." if blocked else None,
    )
    ask_here()


# ---------------------------------------------------------------- overview
def _selection_pending() -> bool:
    """Whether the table chosen above is not the one training uses (yet)."""
    current = state.get_dataset()
    if ss[state.W_SOURCE] == "demo":
        return current is None or current.token != f"demo:{ss[state.W_DEMO]}"
    upload = state.get_upload()
    return upload is not None and (
        current is None
        or current.kind != "upload"
        or current.name != upload.name
        or current.task != ss.get(state.W_TASK, current.task)
    )


def in_use_banner() -> None:
    """Which table the other pages train on, and whether the choice above differs."""
    dataset = state.get_dataset()
    if dataset is None:
        st.info("No table is in use yet: choose a demo or upload a CSV.")
        return
    kind = "bundled demo" if dataset.kind == "demo" else "uploaded table"
    text = (
        f"**In use for training:** {dataset.name} ({kind}) · "
        f"{len(dataset.train):,} training / {len(dataset.test):,} test rows · "
        f"label column `{dataset.label}` ({dataset.task})"
    )
    if _selection_pending():
        st.warning(
            f"{text}\n\nThe table chosen below is **not in use yet**: click its "
            "*Use ...* button to train on it.",
            icon=":material/swap_horiz:",
        )
    else:
        st.info(text, icon=":material/table_chart:")


def overview() -> None:
    dataset = state.get_dataset()
    if dataset is None:
        return
    kind = "bundled demo" if dataset.kind == "demo" else "uploaded table"
    st.subheader(f"In use for training: {dataset.name} ({kind})")
    if dataset.description:
        st.caption(dataset.description)
    y = dataset.y("train")
    cols = st.columns(4)
    cols[0].metric("Training rows", f"{len(dataset.train):,}")
    cols[1].metric("Test rows", f"{len(dataset.test):,}")
    cols[2].metric("Feature columns", len(dataset.features))
    if dataset.task == "regression":
        cols[3].metric(
            "Target range",
            f"{y.min():.4g} to {y.max():.4g}",
            help=f"Regression: mean {y.mean():.4g}, standard deviation {y.std():.4g}.",
        )
    else:
        cols[3].metric("Classes", y.nunique())
    table_tabs(dataset.train, dataset.label, dataset.task)


def table_tabs(frame: pd.DataFrame, label: str, task: str = "classification") -> None:
    """Rows, class balance (a regression: the target's spread) of ``label``
    and column types of ``frame``."""
    second = "Target values" if task == "regression" else "Class balance"
    preview, balance, types = st.tabs(["Preview", second, "Columns"])
    with preview:
        st.dataframe(frame.head(20), height=300)
    if task == "regression":
        with balance:
            target_spread(frame[label])
        with types:
            st.dataframe(column_summary(frame), hide_index=True, height=300)
        return
    with balance:
        table = class_balance(frame[label])
        st.bar_chart(table, x="class", y="rows", height=260)
        config = {"share": percent_column()}
        st.dataframe(
            percent_table(table, config), hide_index=True, column_config=config
        )
    with types:
        st.dataframe(column_summary(frame), hide_index=True, height=300)


def target_spread(y: pd.Series) -> None:
    """A regression target's histogram and summary."""
    numbers = pd.to_numeric(y, errors="coerce").dropna()
    if numbers.empty:
        st.info("The target has no numbers.")
        return
    bins = pd.cut(numbers, bins=min(20, max(1, numbers.nunique())))
    counts = bins.value_counts(sort=False)
    table = pd.DataFrame(
        {
            "range": [f"{b.left:.4g} to {b.right:.4g}" for b in counts.index],
            "rows": counts.to_numpy(),
        }
    )
    st.bar_chart(table, x="range", y="rows", height=260, sort=False)
    st.dataframe(numbers.describe().to_frame("target").T, hide_index=True)


SOURCES = {"demo": "Bundled demo", "upload": "Upload a CSV"}
widgets.choice(st.radio, "Data source", SOURCES, state.W_SOURCE, horizontal=True)
# Filled after the sections below, which may read a new upload in this run.
banner = st.empty()
if ss[state.W_SOURCE] == "demo":
    demo_section()
else:
    upload_section()
ask_here()  # when the section shown is not the one that asked
with banner.container():
    in_use_banner()
st.divider()
overview()
