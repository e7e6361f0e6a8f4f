"""Every ``st.session_state`` key of the app, with defaults and typed accessors.

Pages read and write session state only through the names defined here. Two
kinds of keys:

- app state (``DATASET``, ``RUN``, ...): Python objects the pages share;
- widget keys (``W_*``): widgets are created with ``key=W_...`` and no default
  value; :func:`init` sets the defaults in :data:`DEFAULTS`. Widgets whose value
  matters on other pages are created with ``persist_state=PERSIST`` so that
  Streamlit keeps their value while another page is shown.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from budgetdag_core import Dataset, SensorSpec, TradeoffResult
from budgetdag_core.validation import MAX_FULL_DAG_SENSORS
from ui.spec_table import (
    SpecCheck,
    check_spec_table,
    spec_to_table,
    suggested_cost_scale,
)

from . import plan
from .data import Upload
from .training import (
    DEFAULT_REGRESSOR,
    TrainedRun,
    TrainSettings,
    budget_targeting_available,
    classifiers_for,
)

# ----------------------------------------------------------------- app state
DATASET = "dataset"  # Dataset: what training uses
UPLOAD = "upload"  # Upload: uploaded table(s), cleaning recipe, cleaned table
SPEC_TABLE = "spec_table"  # DataFrame: the sensor table as last edited
SPEC_BASE = "spec_base"  # DataFrame: the sensor editor's input table
SPEC_VERSION = "spec_version"  # int: bumped to give the editor a fresh key
SPEC_JSON_ID = "spec_json_id"  # str: file id of the last spec JSON applied
RUN = "run"  # TrainedRun: the current model and its test results
MODEL_NOT_KEPT = "model_not_kept"  # str | None: why a reload brought no model back
TOKEN = "session_token"  # str: this session's random token (ui.session, URL)
JOB_SLOT = "job_slot"  # st.empty in the sidebar for the running job (ui.widgets)
JOB_OUTCOME = "job_outcome"  # (kind, text): how the last job ended (sidebar)
KEPT = "kept"  # tuple: what ui.session.keep saved last (a fingerprint)
STORE_PROBLEM = "store_problem"  # str | None: why the work could not be kept
STORE_PARTIAL = "store_partial"  # str | None: what of the work was not kept
JOB_RETRY = "job_retry"  # Job: a job whose worker process was lost, to retry
LOADED = "loaded_policy"  # dict: a policy file read on the Export page
NEXT_COST_SCALE = "next_cost_scale"  # float: put into the cost-scale widget next
STATUS_SLOT = "status_slot"  # st.empty in the sidebar for the status lines
NOTICE = "notice"  # [(kind, text)]: messages for the next page that is drawn
PENDING_DATA = "pending_data"  # (words, apply): a data change waiting for a yes
SUGGESTED = "suggested"  # (data token, total cost): what the cost scale follows
UPLOAD_ERROR = "upload_error"  # (file_id, text): why the last upload was refused
IN_APP = "in_app"  # bool: app.py's navigation drew this run (see widgets.enter_page)
WHATIF_VERSION = "whatif_version"  # int: bumped to reset the what-if editor
WHATIF_PLAN = "whatif_plan"  # (walk id, list of ui.whatif.Step): the stepper's
SWEEP = "sweep"  # {"key", "dataset" (token), "result": TradeoffResult}: last curve
LINK_READ = "link_read"  # bool: this session has applied its URL's set-up once
TEACH_STEP = "teach_step"  # int: the Teaching page's position in the walk
TEACH_PLAYING = "teach_playing"  # bool: the walk advances by itself
TEACH_AUTO = "teach_auto"  # str: token of the data the Teaching page trained on arrival
TEACH_RUN = "teach_run"  # str: the id of the model whose walk TEACH_STEP is in
TYPED_COSTS = "typed_costs"  # {columns: cost}: costs typed for sensors (regroupings)

# --------------------------------------------------------------- widget keys
# Data page
W_SOURCE = "w_source"
W_DEMO = "w_demo"
W_UPLOAD = "w_upload"
W_UPLOAD_TEST = "w_upload_test"
W_LABEL = "w_label"
W_TASK = "w_task"  # "classification" or "regression" (ui.training.TASKS)
TASK_GUESSED = "task_guessed"  # (file id, label): what W_TASK was guessed for
W_SPLIT = "w_split"
W_TEST_FRACTION = "w_test_fraction"
W_SPLIT_SEED = "w_split_seed"
W_FIX_COLUMNS = "w_fix_columns_"  # + problem kind
W_FIX = "w_fix_"  # + problem kind + "_" + fix operation
W_DROP_COLUMNS = "w_drop_columns"
W_DROP_SELECTED = "w_drop_selected"
W_UNDO_LAST = "w_undo_last"
W_UNDO_ALL = "w_undo_all"
W_USE_DEMO = "w_use_demo"
W_USE_UPLOAD = "w_use_upload"
W_QUICK_TRAIN = "w_quick_train"
W_REPLACE_YES = "w_replace_yes"
W_REPLACE_NO = "w_replace_no"
# Sensors page
W_SPEC_EDITOR = "w_spec_editor_"  # + SPEC_VERSION
W_PRESET_COST = "w_preset_cost"
W_PREFIX_SEP = "w_prefix_sep"  # word separator of the name groupings
W_BLOCKS = "w_blocks"
W_GROUP_MODE = "w_group_mode"  # a key of ui.grouping.GROUP_MODES
W_GROUP_PATTERN = "w_group_pattern"
W_GRID_BLOCKS = "w_grid_blocks"  # blocks per image side (2: quadrants)
W_SPEC_JSON = "w_spec_json"
W_NEW_SENSOR = "w_new_sensor"  # its name; custom groups, one sensor at a time
W_NEW_SENSOR_COLUMNS = "w_new_sensor_columns"
W_NEW_SENSOR_COST = "w_new_sensor_cost"
W_NEW_SENSOR_MAKE = "w_new_sensor_make"
W_NEW_SENSOR_BOX = "w_new_sensor_box"  # its container
W_PRESET = "w_preset_"  # + preset name
W_SUBSETS_ON = "w_subsets_on"
W_N_SUBSETS = "w_n_subsets"
W_SUBSET_ALL = "w_subset_include_all"
W_SUBSET_BUDGET = "w_subset_budget"
W_SUBSET_REWARD = "w_subset_reward"
# Train page
W_COST_MODE = "w_cost_mode"
W_COST_SCALE = "w_cost_scale"
W_BUDGET = "w_budget"
W_CLASSIFIER = "w_classifier"
W_LEARNER = "w_learner"
W_DEGREE = "w_degree"
W_CV = "w_cv"
W_SEED = "w_seed"
W_TRAIN = "w_train"
W_STOP = "w_stop"
W_JOB_DISMISS = "w_job_dismiss"
W_JOB_RETRY = "w_job_retry"
# Explore DAG page
W_FLOW_PART = "w_flow_part"
W_FLOW_ALL = "w_flow_all"
W_DAG_COLOR = "w_dag_color"
W_DAG_MIN = "w_dag_min_arrived"
W_DAG_NODE = "w_dag_node"  # selectbox of the node whose details are shown
W_DAG_CHART = "w_dag_chart"  # the clickable DAG figure
# What-if page
W_WHATIF_ROW = "w_whatif_row"
W_WHATIF_EDITOR = "w_whatif_editor_"  # + WHATIF_VERSION + row
W_WHATIF_RESET = "w_whatif_reset"
W_WHATIF_CHART = "w_whatif_chart"
W_WHATIF_CLASS = "w_whatif_class"
W_WHATIF_GRID_WIDTH = "w_whatif_grid_width"
W_WHATIF_FORM = "w_whatif_form"  # the sensor values' editor and its Apply
W_WHATIF_APPLY = "w_whatif_apply"
W_WHATIF_BUY_NEXT = "w_whatif_buy_next"  # stepper: buy the policy's pick
W_WHATIF_OTHER = "w_whatif_other"  # stepper: another sensor to buy
W_WHATIF_BUY_OTHER = "w_whatif_buy_other"
W_WHATIF_STEP_BACK = "w_whatif_step_back"
W_WHATIF_RESTART = "w_whatif_restart"
# Trade-off page
W_TRADE_POINTS = "w_trade_points"
W_TRADE_RUN = "w_trade_run"
W_TRADE_X = "w_trade_x"
W_TRADE_SPLIT = "w_trade_split"
W_TRADE_CHART = "w_trade_chart"
W_TRADE_USE_CURVE = "w_trade_use_curve"
W_TRADE_FIT_BUDGET = "w_trade_fit_budget"
# Teaching page
W_TEACH_TOY = "w_teach_toy"
W_TEACH_TRAIN = "w_teach_train"
W_TEACH_REFIT = "w_teach_refit"
W_TEACH_RESET = "w_teach_reset"
W_TEACH_BACK = "w_teach_back"
W_TEACH_STEP = "w_teach_step"
W_TEACH_PLAY = "w_teach_play"
W_TEACH_SPEED = "w_teach_speed"
W_TEACH_CHART = "w_teach_chart"
# Export page
W_TRUST = "w_trust"
W_POLICY_FILE = "w_policy_file"
W_SKOPS_FILE = "w_skops_file"
W_HTML_OFFLINE = "w_html_offline"
W_USE_LOADED = "w_use_loaded"
W_DOWNLOAD = "w_download_"  # + what: policy, spec, traces

PERSIST = "session"  # persist_state of widgets whose value other pages use
#: The bank beyond the full DAG's sensors: the library's own choice.
MANY_SENSOR_CLASSIFIER = "auto"

DEFAULTS: dict[str, Any] = {
    W_SOURCE: "demo",
    W_DEMO: "landsat",
    W_SPLIT: "random",
    W_TEST_FRACTION: 0.25,
    W_SPLIT_SEED: 0,
    W_PRESET_COST: 1.0,
    W_NEW_SENSOR_COST: 1.0,
    W_PREFIX_SEP: "",
    W_BLOCKS: 4,
    W_GROUP_MODE: "word",
    W_GROUP_PATTERN: "",
    W_GRID_BLOCKS: 2,
    W_SUBSETS_ON: False,
    W_N_SUBSETS: 8,
    W_SUBSET_ALL: True,
    W_SUBSET_BUDGET: None,
    W_SUBSET_REWARD: "soft",
    # The library's and the CLI's default (cost_scale="auto"); a link with a
    # cost scale opens in "scale" (ui.links.apply_once).
    W_COST_MODE: "auto",
    W_COST_SCALE: 0.05,
    W_BUDGET: 1.0,
    W_CLASSIFIER: "hist_gradient_boosting",
    W_LEARNER: "filter_tree",
    W_DEGREE: 1,  # the library's default on probability inputs
    W_CV: 5,
    W_SEED: 0,
    W_FLOW_PART: "test",
    W_FLOW_ALL: False,
    W_DAG_COLOR: "stop_share",
    W_DAG_MIN: 1,
    W_DAG_NODE: None,
    W_WHATIF_ROW: 0,
    W_TEACH_SPEED: 1.5,
    W_TRADE_POINTS: 10,
    W_TRADE_X: "avg_cost",
    W_TRADE_SPLIT: "test",
    W_TRUST: False,
    # Not a widget: kept with the settings, so that a restored session knows
    # which data its cost scale and budget were suggested for.
    SUGGESTED: None,
}


def init(default_dataset: Any) -> None:
    """Defaults for keys not set yet; the data to open on.

    ``default_dataset`` is a callable returning the :class:`Dataset` to open on.
    """
    ss = st.session_state
    for key, value in DEFAULTS.items():
        if key not in ss:
            ss[key] = value
    ss.setdefault(SPEC_VERSION, 0)
    if ss.get(DATASET) is None:
        set_dataset(default_dataset())


# ------------------------------------------------------------------- dataset
def get_dataset() -> Dataset | None:
    return st.session_state.get(DATASET)


def set_dataset(
    dataset: Dataset, *, first: bool = False, headline: str | None = None
) -> bool:
    """Make ``dataset`` current; reset the sensors and drop a model of other data.

    ``first``: the session's first data of the user's choosing (a link's
    demo), whose settings change without a notice. ``headline`` (e.g.
    "Loaded the letter demo."): what happened, said in the one notice that
    also tells what the switch reset. Returns False (and changes nothing)
    when it is already current.
    """
    ss = st.session_state
    current = ss.get(DATASET)
    if current is not None and current.token == dataset.token:
        return False
    ss[DATASET] = dataset
    set_spec_table(spec_to_table(dataset.spec))
    said = [] if headline is None else [headline]
    reset = follow_suggestions(
        dataset.spec, first=first or current is None, announce=False
    )
    if reset:
        said.append(reset)
    many = dataset.spec.n_sensors > MAX_FULL_DAG_SENSORS
    was_many = current is not None and current.spec.n_sensors > MAX_FULL_DAG_SENSORS
    regression = dataset.task == "regression"
    was_regression = current is not None and current.task == "regression"
    if regression:  # the form offers regressors (ui.training.REGRESSORS)
        ss[W_CLASSIFIER] = DEFAULT_REGRESSOR
        if ss.get(W_COST_MODE) == "budget":  # searched for classes only
            ss[W_COST_MODE] = DEFAULTS[W_COST_MODE]
    elif was_regression:
        ss[W_CLASSIFIER] = MANY_SENSOR_CLASSIFIER if many else DEFAULTS[W_CLASSIFIER]
    if many:
        # The library's default beyond the full DAG (its DAGs of one-sensor
        # additions on one any-subset bank); Alg. 2's subsets stay an option
        # on the Sensors page.
        ss[W_SUBSETS_ON] = False
        ss[W_DEGREE] = 1
        if not regression:
            ss[W_CLASSIFIER] = MANY_SENSOR_CLASSIFIER
    elif was_many:
        ss[W_DEGREE] = DEFAULTS[W_DEGREE]
        if not regression:
            ss[W_CLASSIFIER] = DEFAULTS[W_CLASSIFIER]
    ss.pop(MODEL_NOT_KEPT, None)  # other data: the reload's model is moot
    run = ss.get(RUN)
    if run is not None and run.dataset_token != dataset.token:
        ss[RUN] = None
        said.append("The model trained on the previous data was cleared: train again.")
    # How the last job on the previous data ended ("Trained in 8.5 s on
    # landsat") no longer describes what the pages show.
    ss.pop(JOB_OUTCOME, None)
    ss.pop(JOB_RETRY, None)
    ss.pop(TYPED_COSTS, None)
    if said:
        notice(" ".join(said), "success" if headline is not None else "info")
    return True


def loss_unit(dataset: Dataset | None) -> float:
    """One unit of the data's loss, for suggested cost scales: a
    misclassification, or a regression target's variance (the squared
    error of predicting its mean)."""
    if dataset is None or dataset.task != "regression":
        return 1.0
    variance = float(dataset.y("train").astype(float).var())
    return variance if variance > 0 else 1.0


def suggested_budget(spec: SensorSpec) -> float:
    """The target average cost suggested for ``spec``: half of every sensor."""
    return float(f"{spec.total_cost / 2:.3g}")


def follow_suggestions(
    spec: SensorSpec, *, first: bool = False, announce: bool = True
) -> str | None:
    """Reset the cost scale and target cost to their suggestions for ``spec``
    when the data or the sensors' total cost changed since they were set.

    The values depend on the data's costs: carried over to other data they
    would silently train at another point of the trade-off. The seed and the
    other choices stay. One line says what changed (none when ``first``: the
    session's first data): returned, and shown as a notice when
    ``announce``. A session restored from before this was recorded keeps
    its values.
    """
    ss = st.session_state
    dataset = get_dataset()
    basis = (None if dataset is None else dataset.token, round(spec.total_cost, 9))
    last = ss.get(SUGGESTED)
    if last == basis:
        return None
    ss[SUGGESTED] = basis
    if last is None and not first:
        return None
    changes = []
    for key, value, name in (
        (W_COST_SCALE, suggested_cost_scale(spec, loss_unit(dataset)), "cost scale"),
        (W_BUDGET, suggested_budget(spec), "target average cost"),
    ):
        old = ss.get(key)
        if old != value:
            if old is not None:
                changes.append(f"{name} {old:g} → {value:g}")
            ss[key] = value
    if not changes or first:
        return None
    what = "New data" if last is None or last[0] != basis[0] else "New costs"
    line = (
        f"{what}: {', '.join(changes)} (suggested for them); the seed "
        f"({ss.get(W_SEED)}) and the other choices are kept."
    )
    if announce:
        notice(line, "info")
    return line


def get_upload() -> Upload | None:
    return st.session_state.get(UPLOAD)


def set_upload(upload: Upload | None) -> None:
    st.session_state[UPLOAD] = upload


# ------------------------------------------------------------------- sensors
def spec_editor_key() -> str:
    return f"{W_SPEC_EDITOR}{st.session_state.get(SPEC_VERSION, 0)}"


def set_spec_table(table: pd.DataFrame) -> None:
    """Replace the sensor table (presets, JSON upload, new data)."""
    ss = st.session_state
    ss[SPEC_BASE] = table
    ss[SPEC_TABLE] = table
    ss[SPEC_VERSION] = ss.get(SPEC_VERSION, 0) + 1


def spec_check() -> SpecCheck | None:
    """The current sensor table checked against the current data.

    A spec with more sensors than a full DAG allows is fine: the library's
    default then builds DAGs of one-sensor additions (or, when asked for,
    the DAG over Alg. 2's sensor subsets: :func:`subsets_in_use`).
    """
    dataset, table = get_dataset(), st.session_state.get(SPEC_TABLE)
    if dataset is None or table is None:
        return None
    return check_spec_table(table, dataset.features, label=dataset.label)


def subsets_in_use(check: SpecCheck | None = None) -> bool:
    """Whether training selects sensor subsets (Alg. 2): only when asked for
    (``check`` is accepted for the callers that have one)."""
    return bool(st.session_state.get(W_SUBSETS_ON, False))


def subset_settings(check: SpecCheck | None = None) -> dict[str, Any]:
    """The sensor-subset fields of :class:`TrainSettings` as they stand."""
    ss = st.session_state
    if not subsets_in_use(check):
        return {"n_subsets": None}
    budget = ss.get(W_SUBSET_BUDGET)
    return {
        "n_subsets": int(ss[W_N_SUBSETS]),
        "include_all": bool(ss[W_SUBSET_ALL]),
        "subset_budget": None if budget is None else float(budget),
        "subset_reward": ss[W_SUBSET_REWARD],
    }


# --------------------------------------------------------------------- sweep
def get_sweep(key: tuple) -> TradeoffResult | None:
    """The last traced curve if it was traced with ``key`` (``ui.sweep.sweep_key``)."""
    cached = st.session_state.get(SWEEP)
    return cached["result"] if cached is not None and cached["key"] == key else None


def set_sweep(key: tuple, dataset_token: str, result: TradeoffResult) -> None:
    st.session_state[SWEEP] = {"key": key, "dataset": dataset_token, "result": result}


def sweep_of_dataset(dataset_token: str) -> TradeoffResult | None:
    """The last traced curve if it was traced on the dataset ``dataset_token``."""
    cached = st.session_state.get(SWEEP)
    if cached is None or cached.get("dataset") != dataset_token:
        return None
    return cached["result"]


# --------------------------------------------------------------------- model
def get_run() -> TrainedRun | None:
    return st.session_state.get(RUN)


def set_run(run: TrainedRun | None) -> None:
    st.session_state[RUN] = run
    st.session_state.pop(MODEL_NOT_KEPT, None)  # a model again, or a fresh start


def chosen_settings(check: SpecCheck | None = None) -> TrainSettings:
    """:func:`train_settings` with the Train page's target average cost when
    it is set by one, and the any-subset bank when the sensors make DAGs of
    one-sensor additions: what the Train button trains (and both the
    Sensors and the Train page estimate)."""
    form = train_settings(check)
    ss = st.session_state
    check = spec_check() if check is None else check
    if check is not None and check.ok:
        # The Train page's switch: DAGs of one-sensor additions need the
        # library's any-subset bank.
        sparse = bool(plan.strategies_of(check.spec, form))
        if form.classifier not in classifiers_for(sparse):
            form = replace(form, classifier=MANY_SENSOR_CLASSIFIER)
    if budget_targeting_available() and ss[W_COST_MODE] == "budget":
        return replace(form, target_budget=float(ss[W_BUDGET]))
    if ss[W_COST_MODE] == "auto":
        return replace(form, cost_scale="auto")
    return form


def train_settings(check: SpecCheck | None = None) -> TrainSettings:
    """The Train page's settings as they stand (cost scale mode)."""
    ss = st.session_state
    dataset = get_dataset()
    return TrainSettings(
        task="classification" if dataset is None else dataset.task,
        cost_scale=float(ss[W_COST_SCALE]),
        classifier=ss[W_CLASSIFIER],
        policy_learner=ss[W_LEARNER],
        policy_degree=int(ss[W_DEGREE]),
        cv=int(ss[W_CV]),
        random_state=int(ss[W_SEED]),
        **subset_settings(check),
    )


# ------------------------------------------------------------------ messages
def notice(message: str, kind: str = "info") -> None:
    """Show ``message`` once, on the next page drawn (kind: info, success, error).

    Messages left before that page is drawn are all shown, in order.
    """
    st.session_state.setdefault(NOTICE, []).append((kind, message))


def pop_notice() -> list[tuple[str, str]]:
    return st.session_state.pop(NOTICE, [])
