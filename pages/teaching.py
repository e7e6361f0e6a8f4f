"""Teaching page: Graph-Reduce step by step, leaf to root, with shareable links."""

from __future__ import annotations

import functools
import time
import uuid
from urllib.parse import urlencode

import streamlit as st

from budgetdag_core.explain import state_label
from budgetdag_core.plotting import decision_regions_figure
from budgetdag_core.teaching import graph_reduce_steps, pending_states
from ui import dag_view, links, state, widgets
from ui.data import demo_dataset
from ui.estimate import roughly, training_seconds
from ui.teaching import (
    action_summary,
    arrivals_table,
    costs_styler,
    refit_out_of_fold,
    renamed_actions,
    replay_data,
    replay_model,
    replay_problem,
    step_summary,
)
from ui.training import TrainedRun

widgets.enter_page()
ss = st.session_state
SAMPLE_ROWS = 6
MAX_TABLE_ACTIONS = 8  # beyond: no table with a column per action
SMALL = (2000, 4)  # at most these training rows and sensors: train on arrival
MAX_DRAWN_STATES = 64  # beyond: states no example reaches are left out

st.title("Teaching: Graph-Reduce step by step")
st.markdown(
    "Graph-Reduce learns the policy **from the full set of sensors back to the "
    "empty one**, one node at a time. Step through it: each node's policy learns "
    "to pick, for every training example, the cheapest of *stop* or *buy one more "
    "sensor*."
)
_numeric = getattr(state.get_dataset(), "task", "") == "regression"
with st.expander("How a node is reduced"):
    st.markdown(
        "At a node, every training example gets one cost per action (in loss "
        + (
            "units: the squared error, in the target's units squared):\n"
            "- **stop**: the squared error of its prediction with the sensors "
            "held (from regressors that did not train on it);\n"
            if _numeric
            else "units, a mistake costs 1):\n"
            "- **stop**: its classification loss with the sensors held (from "
            "classifiers that did not train on it);\n"
        )
        + "- **buy a sensor**: the cost scale x the sensor's price, **plus the "
        "cost-to-go of the child node**, what the policies already learned "
        "further right will spend and lose on this example.\n\n"
        "The node's policy is a classifier trained to pick the cheapest action. "
        "The cost of the action it picks becomes the example's cost-to-go at "
        "this node, which its parents use in turn: the node is *reduced*."
    )
widgets.show_notice()
widgets.pending_replace()
dataset = widgets.need_dataset()


@widgets.guarded("loading the toy dataset")
def _switch_to_toy() -> None:
    ss[state.W_SOURCE] = "demo"
    ss[state.W_DEMO] = "toy"
    state.set_dataset(
        demo_dataset(widgets.cached_demo("toy")), headline="Loaded the toy dataset."
    )


def _use_toy() -> None:
    widgets.replace_data(_switch_to_toy, "the toy demo")


if dataset.name != "toy" or dataset.kind != "demo":
    # Wrapping rows, not columns, here and below: narrow columns cut button
    # labels and squeeze the tables and figures at 900 px.
    toy_box = st.container(border=True, horizontal=True, vertical_alignment="center")
    with toy_box:
        toy_box.markdown(
            "**Toy dataset**: two cheap but noisy sensors and one expensive but "
            "clean one, one column each, so each node's decisions can be drawn.",
            width=560,  # leaves the button beside it at 1280 px
        )
        toy_box.button(
            "Use the toy data",
            key=state.W_TEACH_TOY,
            on_click=_use_toy,
            icon=":material/school:",
            width="content",
        )


def _attach_replay(run: TrainedRun, bank: object) -> str:
    """Keep the refitted bank with the model it was refitted for."""
    if state.get_run() is not run:
        raise ValueError(
            "The model changed meanwhile: the refitted predictions were not kept."
        )
    run.replay_bank = bank
    run.cache.pop("reduce_steps", None)
    return "Out-of-fold predictions refitted: the walk is on the Teaching page."


spec = widgets.need_spec().spec
run = state.get_run()
if run is None or run.dataset_token != dataset.token:
    small = len(dataset.train) <= SMALL[0] and spec.n_sensors <= SMALL[1]
    busy = widgets.running_job()
    # Small data trains on arrival, once per dataset (not again after a Stop).
    auto = small and ss.get(state.TEACH_AUTO) != dataset.token
    if busy is None and (
        auto
        or st.button(
            "Train with the current settings",
            key=state.W_TEACH_TRAIN,
            type="primary",
            icon=":material/play_arrow:",
        )
    ):
        ss[state.TEACH_AUTO] = dataset.token
        busy = widgets.train_with_progress(dataset, spec, state.train_settings())
    if busy is not None:
        st.info(
            f"{busy.label} The walk appears here when it is done (progress and "
            "Stop in the sidebar).",
            icon=":material/hourglass_top:",
        )
    else:
        st.info(
            "The walk replays the training of a model: train one here or on the "
            "Train page.",
            icon=":material/model_training:",
        )
    st.stop()

widgets.need_results(run)  # a loaded model on data without its columns
X, y = replay_data(run, dataset)
dag_view.subsets_note(run)
problem = replay_problem(run, X)
if problem is not None:
    busy = widgets.running_job()
    seconds = training_seconds(dataset, run.spec, run.params)
    st.info(
        f"{problem} The fix: refit them on the {len(dataset.train):,} training rows "
        f"of {dataset.name}, with the model's own settings (about "
        f"{roughly(seconds)}); the walk then replays this model's policies on "
        "them. Its predictions elsewhere do not change.",
        icon=":material/school:",
    )
    if busy is not None:
        st.caption(f":material/hourglass_top: {busy.label} (sidebar)")
    elif st.button(
        "Refit the out-of-fold predictions",
        key=state.W_TEACH_REFIT,
        type="primary",
        icon=":material/replay:",
    ):
        widgets.long_work(
            functools.partial(refit_out_of_fold, run.model, dataset),
            what="replay",
            label="Refitting out-of-fold predictions...",
            failed="The out-of-fold predictions could not be refitted",
            doing="refitting out-of-fold predictions",
            fix="train a model on the Train page: its walk needs nothing more.",
            apply=functools.partial(_attach_replay, run),
            bank_reused=False,
            subsets=False,
            estimate=seconds,
        )
        st.rerun()
    st.stop()
try:
    steps = run.memo(
        "reduce_steps",
        lambda: graph_reduce_steps(
            replay_model(run), X, y, rows=SAMPLE_ROWS, random_state=0
        ),
    )
except (ValueError, AttributeError) as exc:
    widgets.show_error(
        f"This model cannot be replayed: {exc}",
        "train a model on the Train page: its walk needs nothing more.",
    )
    st.stop()
if run.replay_bank is not None:
    st.caption(
        "Replayed on out-of-fold predictions refitted on the current training "
        "rows (the model's file did not keep its own)."
    )

last = len(steps) - 1
# A step belongs to the walk of one model: other data or another training starts
# at step 0. The first model a session walks keeps the step a shared link set.
walked = run.memo("teach_id", lambda: uuid.uuid4().hex)
if ss.get(state.TEACH_RUN, walked) != walked:
    ss[state.TEACH_STEP] = 0
    ss[state.TEACH_PLAYING] = False
    links.sync(0)  # app.py wrote the URL before this page ran
ss[state.TEACH_RUN] = walked
ss[state.TEACH_STEP] = min(max(int(ss.get(state.TEACH_STEP, 0)), 0), last)
ss.setdefault(state.TEACH_PLAYING, False)


def _move(to: int) -> None:
    ss[state.TEACH_STEP] = min(max(to, 0), last)
    ss[state.TEACH_PLAYING] = False


def _play() -> None:
    if ss[state.TEACH_STEP] >= last:
        ss[state.TEACH_STEP] = 0
    ss[state.TEACH_PLAYING] = not ss[state.TEACH_PLAYING]


i = ss[state.TEACH_STEP]
playing = ss[state.TEACH_PLAYING]
walk = st.container(horizontal=True, vertical_alignment="bottom")
walk.button("Reset", key=state.W_TEACH_RESET, on_click=_move, args=(0,))
walk.button(
    "Back",
    key=state.W_TEACH_BACK,
    on_click=_move,
    args=(i - 1,),
    disabled=i == 0,
)
walk.button(
    "Step",
    key=state.W_TEACH_STEP,
    on_click=_move,
    args=(i + 1,),
    disabled=i == last,
    type="primary",
)
walk.button(
    "Pause" if playing else "Play",
    key=state.W_TEACH_PLAY,
    on_click=_play,
    icon=":material/pause:" if playing else ":material/play_arrow:",
)
widgets.persisted(
    walk.slider,
    "Seconds per step (Play)",
    state.W_TEACH_SPEED,
    min_value=0.2,
    max_value=4.0,
    step=0.1,
    width=260,
)

step = steps[i]
st.progress((i + 1) / len(steps), text=f"Step {i + 1} of {len(steps)}")
names = renamed_actions(run.model, step)
st.markdown(step_summary(step, state_label(run.model, step.state), names))

pending = pending_states(steps, i)
fig = dag_view.figure(
    run,
    dag_view.flow(run, dataset, "train"),
    selected=step.state,
    # Nodes not reduced yet have no policy: grey, without the final flow.
    pending=pending,
    # Every state drawn at every step (up to a readable number), so that no
    # node moves as the walk goes on.
    hide_unvisited=run.model.sensor_dag_.n_states > MAX_DRAWN_STATES,
    height=400,
    width=dag_view.PAGE_WIDTH_PX,
)
dag_view.rename_trace(fig, "selected", "node being reduced")
st.caption(
    (
        f"Grey nodes ({len(pending)}) are not reduced yet: Graph-Reduce learns "
        "their policies in a later step. "
        if pending
        else "Every node is reduced. "
    )
    + "Faded white nodes are reduced, but the final policy sends no training "
    "example there; the others show how it routes the training set."
)
dag_view.dag_chart(fig, state.W_TEACH_CHART)

# Side by side at 1280 px when the table fits in 440 px (a few actions), one
# under the other when narrower or with more actions: a table narrower than its
# columns hides the last ones (the cost-to-go) behind a scrollbar.
TABLE_PX = 440
needed_px = 70 + 100 * len(step.actions) + 110 + 100  # rows, actions, pick, cost
if needed_px <= TABLE_PX:
    row = st.container(horizontal=True, gap="medium")
    left, right = row.container(width=TABLE_PX), row.container(width=300)
else:
    left, right = st.container(), st.container(width=440)
with left:
    if len(step.actions) <= MAX_TABLE_ACTIONS:
        st.markdown(
            f"**Action costs of {len(step.costs)} training examples** (loss units; "
            "green: the cheapest action, red bold: what the learned policy picks)"
        )
        st.dataframe(costs_styler(step, names), width="stretch")
    else:
        st.caption(
            f"This node has {len(step.actions)} actions: the tables above show "
            "the picks and the cheapest actions rather than every action's cost."
        )
with right:
    st.markdown("**The node's decisions** over its inputs (training examples)")
    try:
        regions = run.memo(
            f"regions_{step.state}",
            lambda: decision_regions_figure(
                run.model, step.state, X, y, grid=80, max_points=300
            ),
        )
    except ValueError:
        n_cols = len(run.model.state_columns_[step.state])
        st.info(
            f"This node's policy reads {n_cols} columns: decisions can be drawn "
            "for nodes with one or two columns, as in the toy dataset.",
            icon=":material/grid_on:",
        )
    else:
        regions.update_layout(title=None, height=340, margin={"t": 40})
        st.plotly_chart(regions, config=dag_view.CHART_CONFIG)

st.markdown(
    f"**{step.arrived:,} of {len(X):,} training examples arrive here** under the "
    "learned policies: a sample of them with the cost of stopping, the policy's "
    "pick and the cheapest action (loss units; red: the pick is not a cheapest "
    "action), and what the policy does with all of them."
)
if step.arrived:
    row = st.container(horizontal=True, gap="medium")
    with row.container():
        st.dataframe(arrivals_table(step, names), width="stretch")
    with row.container():
        summary, more = action_summary(step, names)
        st.dataframe(
            summary,
            hide_index=True,
            width="stretch",
            column_config={
                "mean_cost": st.column_config.NumberColumn("mean cost", format="%.3f")
            },
        )
        if more:
            st.caption(f"and {more} more actions, each picked or cheapest less often.")

with st.expander("Share this demo"):
    params = links.current(step=i)
    if not params:
        st.caption(
            "Links carry a bundled demo's set-up; uploaded data is not in the URL."
        )
    else:
        base = (st.context.url or "").split("?")[0]
        st.code(f"{base}?{urlencode(params)}", language=None)
        st.caption(
            "This link holds the dataset, sensors, training settings and this "
            "step: opening it sets the app up the same way. Share this one, not "
            "the address bar: there, `session=...` is your private key to the "
            "work kept for you."
        )

if playing:
    if i < last:
        time.sleep(float(ss[state.W_TEACH_SPEED]))
        ss[state.TEACH_STEP] = i + 1
        st.rerun()
    ss[state.TEACH_PLAYING] = False
    st.rerun()
