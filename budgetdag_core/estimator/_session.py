"""One example at a time, as in deployment: sensor values exist only once acquired."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sklearn.utils import get_tags

from .._bounded_io import short_repr
from ..graph_reduce import STOP
from ..sensors import checked_cost
from ..validation import MAX_ABS_VALUE

if TYPE_CHECKING:
    from ._base import BudgetDAGBase


class PolicySession:
    """Walk one example through a fitted policy.

    Call :meth:`next_sensor`; acquire that sensor in the real world and pass its
    values to :meth:`observe`; repeat until ``next_sensor()`` returns ``None``,
    then :meth:`predict`. When the DAG is built over sensor subsets, one decision
    may ask for several sensors, which ``next_sensor`` names one at a time.

    Parameters
    ----------
    model : fitted BudgetDAGClassifier or BudgetDAGRegressor
    sample_costs : dict sensor -> cost, optional
        This example's acquisition costs (default: the spec's costs).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> row = demo.X_test.iloc[0]
    >>> session = model.start()
    >>> while (sensor := session.next_sensor()) is not None:
    ...     columns = model.spec_.groups[sensor]  # what this sensor measures
    ...     session.observe(sensor, {c: row[c] for c in columns})
    >>> session.acquired, session.cost
    (['precise'], 4.0)
    >>> bool(session.predict() == model.predict(demo.X_test.iloc[[0]])[0])
    True
    """

    def __init__(
        self, model: BudgetDAGBase, sample_costs: Mapping[str, float] | None
    ) -> None:
        self.model = model
        self._policy_inputs = model.inputs_
        spec = model.spec_
        self._costs = dict(spec.costs)
        if sample_costs is not None:
            if not isinstance(sample_costs, Mapping):
                raise ValueError(
                    "sample_costs of a session must map sensor names to this example's "
                    f"costs; got {type(sample_costs).__name__} "
                    f"{short_repr(sample_costs)}."
                )
            unknown = set(sample_costs) - set(spec.names)
            if unknown:
                raise ValueError(f"sample_costs names unknown sensor(s) {unknown}.")
            for name, value in sample_costs.items():
                self._costs[name] = checked_cost(name, value, "sample_costs")
        self._row = np.full(len(spec.columns), np.nan)
        self._col_pos = {c: i for i, c in enumerate(spec.columns)}
        self.state = 0
        self._target: int | None = None
        self._pending: list[str] = []
        self.acquired: list[str] = []
        self.cost = 0.0
        self.stopped = False
        self.decisions: list[dict[str, Any]] = []

    def _inputs(self, state: int) -> np.ndarray:
        row = self._row.reshape(1, -1)
        return self._policy_inputs.predicted(self.model.bank_, row, state, [0])[0]

    def next_sensor(self) -> str | None:
        """The sensor to acquire next, or ``None`` to stop and classify."""
        if self._pending:
            return self._pending[0]
        if self.stopped:
            return None
        policy = self.model.policies_[self.state]
        action = int(policy.predict(self._inputs(self.state))[0])
        dag = self.model.sensor_dag_
        if action == STOP:
            self.stopped = True
            self.decisions.append({"state": self.state, "action": "stop"})
            return None
        child = int(policy.child_of(np.array([action]))[0])
        self._target = child
        self._pending = [
            dag.sensor_names[m] for m in dag.added_sensors(self.state, child)
        ]
        self.decisions.append(
            {"state": self.state, "action": "acquire", "sensors": tuple(self._pending)}
        )
        return self._pending[0]

    def action_scores(self) -> pd.Series | None:
        """The candidates' scores at the current state, before a decision.

        A Series indexed by action name (``"stop"``, ``"acquire <sensors>"``,
        the wording of :func:`~budgetdag_core.explain.action_names`), named
        after what the node's learner scores (e.g. "chance to win the
        tournament"); None when the learner gives no scores or a decision is
        under way. This is the hook :func:`~budgetdag_core.path_of` reads at
        every step: another policy's session supplies its own scores by
        defining the same method.
        """
        if self._pending or self.stopped:
            return None
        policy = self.model.policies_[self.state]
        found = policy.action_scores(self._inputs(self.state))
        if found is None:
            return None
        scores, name = found
        from ..explain import action_names

        names = action_names(self.model, self.state)
        return pd.Series(scores[0], index=names, name=name)

    def observe(self, sensor: str, values: Mapping[str, float] | float) -> None:
        """Record the measured values of ``sensor`` (column -> value).

        A sensor with a single column also takes its value as a plain number.
        """
        spec = self.model.spec_
        if sensor not in spec.groups:
            raise ValueError(
                f"Unknown sensor {short_repr(sensor)}; known: {list(spec.names)}."
            )
        if sensor not in self._pending:
            asked = self._pending[0] if self._pending else "none (call next_sensor)"
            raise ValueError(
                f"Sensor {short_repr(sensor)} was not requested; the policy asks for "
                f"{asked}."
            )
        columns = spec.groups[sensor]
        if not isinstance(values, Mapping):
            if len(columns) != 1 or np.ndim(values) != 0:
                raise ValueError(
                    f"Sensor {short_repr(sensor)} has columns {list(columns)}: pass "
                    "its values "
                    "as a mapping column -> value."
                )
            values = {columns[0]: values}
        missing = [c for c in columns if c not in values]
        if missing:
            raise ValueError(
                f"Values for sensor {short_repr(sensor)} lack column(s) {missing}."
            )
        foreign = [c for c in values if c not in columns]
        if foreign:
            # A caller's acquisition code that mixes up sensors would otherwise
            # go unnoticed: the policy reads only the named sensor's columns.
            owners = {c: self._owner(c) for c in foreign}
            raise ValueError(
                f"values holds column(s) that are not sensor {short_repr(sensor)}'s "
                f"(its columns: {list(columns)}): "
                + ", ".join(f"{short_repr(c)} ({owner})" for c, owner in owners.items())
                + ". Pass only the named sensor's values."
            )
        # As the model's predict: its tags say whether its bank takes NaN.
        refused = (
            None
            if get_tags(self.model).input_tags.allow_nan
            else ("this model's bank needs every value (the default bank takes NaN)")
        )
        checked = [self._checked_value(c, values[c], refused) for c in columns]
        for c, v in zip(columns, checked, strict=True):
            self._row[self._col_pos[c]] = v
        self._pending.remove(sensor)
        self.acquired.append(sensor)
        self.cost += self._costs[sensor]
        if not self._pending:
            self.state = int(self._target)  # type: ignore[arg-type]
            self._target = None

    def buy(self, sensor: str, values: Mapping[str, float] | float) -> None:
        """Acquire ``sensor``, the caller's choice rather than the policy's,
        with its measured values; the policy decides on from the state that
        adds it to the sensors held.

        A decision the policy made but whose sensors were not observed yet
        (:meth:`next_sensor` just called), or its stop, is set aside.

        Raises ``ValueError`` when the sensor is held already, when a
        decision buying several sensors is half observed, or when the DAG
        has no state adding just this sensor (a DAG over sensor subsets, or a
        sparse DAG that did not grow that way).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(200, 50)
        >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3,
        ...                             random_state=0).fit(demo.X_train, demo.y_train)
        >>> row = demo.X_test.iloc[0]
        >>> session = model.start()
        >>> session.next_sensor()  # the policy's pick
        'precise'
        >>> session.buy("cheap_a", row["cheap_a"])  # ours instead
        >>> session.acquired, session.cost
        (['cheap_a'], 1.0)
        """
        dag = self.model.sensor_dag_
        if sensor not in dag.sensor_names:
            raise ValueError(
                f"Unknown sensor {sensor!r}; known: {list(dag.sensor_names)}."
            )
        if sensor in self.acquired:
            raise ValueError(f"Sensor {sensor!r} is held already.")
        last = self.decisions[-1] if self.decisions else None
        if self._pending:
            if last is None or list(last.get("sensors", ())) != self._pending:
                raise ValueError(
                    f"A decision buying several sensors is under way: observe "
                    f"{self._pending[0]!r} first."
                )
            self.decisions.pop()  # the policy's pick, set aside
            self._pending, self._target = [], None
        elif self.stopped and last is not None and last["action"] == "stop":
            self.decisions.pop()
            self.stopped = False
        j = dag.sensor_names.index(sensor)
        child = next(
            (
                c
                for _, c in dag.children[self.state]
                if dag.added_sensors(self.state, c) == [j]
            ),
            None,
        )
        if child is None:
            held = ", ".join(self.acquired) or "no sensor"
            raise ValueError(
                f"The DAG has no state adding just {sensor!r} to {held}: this "
                "model cannot buy it next."
            )
        self._target, self._pending = child, [sensor]
        self.decisions.append(
            {
                "state": self.state,
                "action": "acquire",
                "sensors": (sensor,),
                "chosen": True,
            }
        )
        self.observe(sensor, values)

    def _owner(self, column: Any) -> str:
        """Who a column passed to :meth:`observe` belongs to, in words."""
        spec = self.model.spec_
        if isinstance(column, str) and column in self._col_pos:
            return f"sensor {short_repr(spec.sensor_of(column))}'s"
        return "not a column of the spec"

    @staticmethod
    def _checked_value(column: str, value: Any, nan_refused: str | None) -> float:
        """``value`` of ``column`` as a float, or a ``ValueError`` naming it
        (text such as ``"3"`` is refused rather than guessed at). NaN (a
        value not measured) is kept where ``nan_refused`` is None."""
        if isinstance(value, str | bytes):
            raise ValueError(
                f"values[{short_repr(column)}] is the text {short_repr(value)}, not a "
                "number."
            )
        try:
            v = float(value)
        except OverflowError:  # an int or fraction beyond float64
            raise ValueError(
                f"values[{short_repr(column)}] is {short_repr(value)}: magnitudes "
                f">= {MAX_ABS_VALUE:g} are too large (rescale the column)."
            ) from None
        except (TypeError, ValueError):
            raise ValueError(
                f"values[{short_repr(column)}] is not a number: {short_repr(value)}."
            ) from None
        if np.isnan(v) and nan_refused is not None:
            raise ValueError(
                f"values[{short_repr(column)}] is NaN (missing), but {nan_refused}."
            )
        if np.isinf(v):
            raise ValueError(f"values[{short_repr(column)}] is not finite: {v}.")
        if abs(v) >= MAX_ABS_VALUE:
            raise ValueError(
                f"values[{short_repr(column)}] is {v:g}: magnitudes >= "
                f"{MAX_ABS_VALUE:g} are too large (rescale the column)."
            )
        return v

    @property
    def sensors(self) -> tuple[str, ...]:
        """Sensors whose values are in hand."""
        return tuple(self.acquired)

    @property
    def values(self) -> np.ndarray:
        """The feature row observed so far (spec column order, NaN where not
        observed yet): a copy."""
        return self._row.copy()

    def predict_proba(self) -> dict[Any, float]:
        """Class probabilities of the classifier at the current state."""
        if not hasattr(self.model, "classes_"):
            raise ValueError("predict_proba needs a classifier; use predict().")
        Xs = self._row.reshape(1, -1)
        proba = self.model.bank_.predict_proba(Xs, self.state)[0]
        return {c: float(p) for c, p in zip(self.model.classes_, proba, strict=True)}

    def predict(self) -> Any:
        """The label (or value) predicted with the sensors acquired so far."""
        stops = np.array([self.state])
        return self.model.predict_at(self._row.reshape(1, -1), stops)[0]

    def run(self, values: Mapping[str, float]) -> Any:
        """Drive the whole loop from a dict holding every column (for testing)."""
        while (sensor := self.next_sensor()) is not None:
            cols = self.model.spec_.groups[sensor]
            self.observe(sensor, {c: values[c] for c in cols})
        return self.predict()
