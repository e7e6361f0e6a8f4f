"""What-if's stepper: one sensor at a time, the policy's pick or the user's.

The walk is the library's :class:`~budgetdag_core.PolicySession`
(``model.start()``), replayed on every run from a plan kept in the session
(:func:`ui.whatif.replay_walk`), so an edited value takes effect on the steps
already taken: a policy step buys what the policy now asks for.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import streamlit as st

from . import state
from .formatting import percent_column
from .training import TrainedRun
from .whatif import Step, Walk, other_choices, probability_table, replay_walk


def _plan(walk_id: str) -> list[Step]:
    """The plan of this example's walk (a new example starts empty)."""
    held = st.session_state.get(state.WHATIF_PLAN)
    if not held or held[0] != walk_id:
        st.session_state[state.WHATIF_PLAN] = (walk_id, [])
    return st.session_state[state.WHATIF_PLAN][1]


def _push(walk_id: str, step: Step) -> None:
    _plan(walk_id).append(step)


def _push_other(walk_id: str) -> None:
    chosen = st.session_state.get(state.W_WHATIF_OTHER)
    if chosen:
        _plan(walk_id).append(chosen)


def _pop(walk_id: str) -> None:
    plan = _plan(walk_id)
    if plan:
        plan.pop()


def _restart(walk_id: str) -> None:
    _plan(walk_id).clear()


def _bought_line(walk: Walk) -> str:
    if not walk.bought:
        return "**Bought:** nothing yet (cost 0)"
    steps = " → ".join(
        f"{sensor} ({'yours' if chosen else 'policy'})"
        for sensor, chosen in walk.bought
    )
    return f"**Bought:** {steps} · cost so far **{walk.session.cost:g}**"


def stepper(
    run: TrainedRun, values: Mapping[str, float], row: int, version: int
) -> Walk:
    """Draw the stepper for test example ``row`` with the edited ``values``."""
    model = run.model
    walk_id = f"{run.memo('whatif_id', lambda: uuid.uuid4().hex)}:{row}:{version}"
    plan = _plan(walk_id)
    walk = replay_walk(model, values, plan)
    if walk.dropped:
        del plan[len(plan) - walk.dropped :]  # steps an edit made impossible
    session = walk.session
    st.markdown(_bought_line(walk))
    left, right = st.columns([3, 2])
    with left:
        prediction = session.predict()
        st.markdown(f"**Predicts now:** {prediction}")
        if hasattr(model, "classes_"):
            st.dataframe(
                probability_table(session.predict_proba()),
                hide_index=True,
                width="stretch",
                column_config={
                    "class": st.column_config.TextColumn(),
                    "probability": percent_column(progress=True),
                },
            )
    with right:
        if walk.next_sensor is None:
            st.success(
                f"The policy **stops here** and predicts **{prediction}**: more "
                "sensors are not worth their cost.",
                icon=":material/check_circle:",
            )
        else:
            cost = run.spec.costs[walk.next_sensor]
            st.info(
                f"The policy would buy **{walk.next_sensor}** next (cost {cost:g}).",
                icon=":material/arrow_forward:",
            )
    _buttons(run, walk, walk_id, plan)
    return walk


def _buttons(run: TrainedRun, walk: Walk, walk_id: str, plan: list[Step]) -> None:
    bar = st.container(horizontal=True, vertical_alignment="bottom")
    bar.button(
        f"Buy {walk.next_sensor}" if walk.next_sensor else "Buy the policy's pick",
        key=state.W_WHATIF_BUY_NEXT,
        on_click=_push,
        args=(walk_id, None),
        disabled=walk.next_sensor is None,
        type="primary",
        icon=":material/add_shopping_cart:",
    )
    others = other_choices(run.model, walk)
    if st.session_state.get(state.W_WHATIF_OTHER) not in others:
        st.session_state[state.W_WHATIF_OTHER] = others[0] if others else None
    bar.selectbox(
        "Or buy another sensor",
        options=others,
        key=state.W_WHATIF_OTHER,
        disabled=not others,
        placeholder="no other sensor can be bought here",
        width=260,
    )
    bar.button(
        "Buy it",
        key=state.W_WHATIF_BUY_OTHER,
        on_click=_push_other,
        args=(walk_id,),
        disabled=not others,
    )
    bar.button(
        "Back",
        key=state.W_WHATIF_STEP_BACK,
        on_click=_pop,
        args=(walk_id,),
        disabled=not plan,
        icon=":material/undo:",
    )
    bar.button(
        "Start over",
        key=state.W_WHATIF_RESTART,
        on_click=_restart,
        args=(walk_id,),
        disabled=not plan,
    )


def walk_states(walk: Walk) -> list[int]:
    """The DAG states the stepper's walk went through (for the figure)."""
    states = [d["state"] for d in walk.session.decisions]
    return [*dict.fromkeys([0, *states, walk.session.state])]
