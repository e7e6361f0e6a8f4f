"""Tables of the What-if page: the editable row and one path (no Streamlit)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from budgetdag_core import PolicySession, SensorSpec

MAX_CLASSES = 5  # probabilities shown


def editor_table(spec: SensorSpec, row: pd.Series) -> pd.DataFrame:
    """One line per feature column: sensor, column, the test value, an editable copy."""
    lines = [
        (sensor, column, float(row[column]))
        for sensor in spec.names
        for column in spec.groups[sensor]
    ]
    table = pd.DataFrame(lines, columns=["sensor", "column", "test value"])
    table["value"] = table["test value"]
    return table


def edited_values(table: pd.DataFrame) -> tuple[dict[str, float], list[str]]:
    """Column -> value from the edited table, and the columns that were changed.

    Raises ``ValueError`` naming the column of an empty or non-numeric cell.
    """
    values: dict[str, float] = {}
    changed: list[str] = []
    for column, value, test_value in zip(
        table["column"], table["value"], table["test value"], strict=True
    ):
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number):
            raise ValueError(
                f"The value of column {column!r} is empty or not a number."
            )
        values[str(column)] = number
        if number != float(test_value):
            changed.append(str(column))
    return values, changed


def _names(sensors: Any) -> str:
    return ", ".join(map(str, sensors)) or "none"


def decisions_table(
    decisions: pd.DataFrame,
    subsets: Sequence[str | None] | None = None,
    *,
    regression: bool = False,
) -> pd.DataFrame:
    """``path_of(...).decisions`` in words, one line per decision.

    Each line shows the state *after* its decision: the cost paid so far
    beside what the policy would predict with the sensors held then (the
    library's rows give the prediction of the state the decision was taken
    in, before the purchase). ``subsets`` names the sensor subset bought at
    each acquire step (models over subsets, see
    :func:`ui.subsets.path_subsets`): ``buy S3 (6 sensors): ...``. A
    ``regression`` predicts numbers (4 significant digits) with no confidence.
    """
    subsets = list(subsets or [])
    # The state after decision i is the one decision i + 1 is taken in; the
    # last decision (stop) buys nothing.
    predictions, confidences = (
        list(decisions[c])[1:] + list(decisions[c])[-1:]
        for c in ("prediction", "confidence")
    )

    def buy(step: int, bought: Any) -> str:
        name = subsets[step] if step < len(subsets) else None
        if name is None:
            return f"buy {_names(bought)}"
        return f"buy {name} ({len(bought)} sensors): {_names(bought)}"

    stop = "stop and predict" if regression else "stop and classify"
    table = pd.DataFrame(
        {
            "step": decisions["step"],
            "decision": [
                buy(i, bought) if action == "acquire" else stop
                for i, (action, bought) in enumerate(
                    zip(decisions["action"], decisions["acquired"], strict=True)
                )
            ],
            "cost so far": decisions["cost_so_far"],
            "predicts now": [
                f"{float(p):.4g}" if regression else str(p) for p in predictions
            ],
            "confidence": confidences,
        }
    )
    return table.drop(columns="confidence") if regression else table


def probability_table(proba: Mapping[Any, float]) -> pd.DataFrame:
    """The most likely classes first (at most :data:`MAX_CLASSES`)."""
    table = pd.DataFrame(
        {"class": [str(c) for c in proba], "probability": list(proba.values())}
    )
    return (
        table.sort_values("probability", ascending=False, kind="stable")
        .head(MAX_CLASSES)
        .reset_index(drop=True)
    )


# ----------------------------------------------------------- the stepper
#: A step of the stepper's plan: ``None`` buys what the policy asks next (so
#: an edited value can change it), a sensor name buys that sensor.
Step = str | None


@dataclass
class Walk:
    """The stepper's example after its plan was replayed on the current values.

    ``session`` is the library's :class:`~budgetdag_core.PolicySession`,
    ``bought`` the sensors bought in order with whether the user chose them,
    ``next_sensor`` what the policy asks for now (``None``: it stops),
    ``dropped`` the planned steps that could not be replayed (a chosen sensor
    the policy bought itself after an edit, or a step after the policy's
    stop).
    """

    session: PolicySession
    bought: list[tuple[str, bool]] = field(default_factory=list)
    next_sensor: str | None = None
    dropped: int = 0

    @property
    def deciding(self) -> bool:
        """Whether the policy's next sensor starts a new decision (one may
        buy another instead), not the rest of a decision buying several."""
        last = self.session.decisions[-1] if self.session.decisions else None
        if last is None or last["action"] != "acquire":
            return True
        return not any(s in self.session.acquired for s in last["sensors"])


def _values_of(spec: SensorSpec, values: Mapping[str, float], sensor: str) -> dict:
    return {c: values[c] for c in spec.groups[sensor]}


def replay_walk(model: Any, values: Mapping[str, float], plan: Sequence[Step]) -> Walk:
    """Replay the stepper's ``plan`` on ``values`` (column -> value) with a
    fresh session of ``model``, then ask the policy for its next decision."""
    spec = model.spec_
    walk = Walk(model.start())
    session = walk.session
    for i, step in enumerate(plan):
        asked = session.next_sensor()
        sensor = asked if step is None else step
        if sensor is None or sensor in session.acquired:
            walk.dropped = len(plan) - i
            break
        try:
            if sensor == asked:
                session.observe(sensor, _values_of(spec, values, sensor))
            else:
                session.buy(sensor, _values_of(spec, values, sensor))
        except ValueError:
            walk.dropped = len(plan) - i
            break
        walk.bought.append((sensor, step is not None and step != asked))
    walk.next_sensor = session.next_sensor()
    return walk


def other_choices(model: Any, walk: Walk) -> list[str]:
    """The sensors one may buy instead of the policy's next: each adds one
    sensor to those held along an edge of the DAG (in the spec's order)."""
    if not walk.deciding:
        return []
    dag = model.sensor_dag_
    state = walk.session.state
    offered = set()
    for _, child in dag.children[state]:
        added = dag.added_sensors(state, child)
        if len(added) == 1:
            offered.add(dag.sensor_names[added[0]])
    return [n for n in model.spec_.names if n in offered and n != walk.next_sensor]
