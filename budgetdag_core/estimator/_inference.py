"""What a fitted model answers about examples: trace, evaluation, flow,
state lookups and one-example sessions (the task supplies predictions,
losses and metrics through the hooks below)."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..graph_reduce import Routing
from ..validation import align_rows, check_sample_weight
from ._integrity import check_estimator


def _finite_mean(values: np.ndarray, weight: np.ndarray | None = None) -> float:
    """Mean of non-negative finite values without overflow in the sum
    (``weight``: value i counts that many times)."""
    top = float(values.max(initial=0.0))
    if top <= 0:
        return 0.0
    return top * float(np.average(values / top, weights=weight))


class InferenceMixin:
    """Trace, evaluate, flow, state lookups and sessions of a fitted model."""

    # ----------------------------------------------------------- task hooks
    def predict_at(self, Xv: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """Prediction of each row by the bank's model of a given state,
        wherever the policies would have stopped it.

        Parameters
        ----------
        Xv : ndarray of shape (n_samples, n_columns)
            The spec's columns, in spec order (``X[model.spec_.columns]``).
        stops : ndarray of int, shape (n_samples,)
            The state of each row (an index into ``dag_``).

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels (classifier) or values (regressor).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> import numpy as np
        >>> Xv = demo.X_test[model.spec_.columns].to_numpy()
        >>> all_sensors = np.full(len(Xv), model.sensor_dag_.n_states - 1)
        >>> model.predict_at(Xv, all_sensors).shape
        (20,)
        """
        raise NotImplementedError

    def _check_eval_target(self, y: Any, n_rows: int) -> np.ndarray:
        raise NotImplementedError

    def _row_loss(self, pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-row stop loss of predictions (the loss the policies minimise)."""
        raise NotImplementedError

    def _metrics(
        self, pred: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None
    ) -> dict[str, float]:
        """The task's metrics, means over the rows (``weight``: row i
        counting that many times)."""
        raise NotImplementedError

    def _trace_columns(self, Xv: np.ndarray, routing: Routing) -> dict[str, np.ndarray]:
        """``prediction`` and any task-specific columns of :meth:`trace`."""
        return {"prediction": self.predict_at(Xv, routing.stop_state)}

    def _flow_annotations(self, pred: np.ndarray, y: np.ndarray) -> dict[str, Any]:
        """Per-row values summed per stop state into node attributes of flow."""
        return {"loss": self._row_loss(pred, y)}

    # -------------------------------------------------------------- inference
    def trace(self, X: pd.DataFrame, *, sample_costs: Any = None) -> pd.DataFrame:
        """One row per example: what the policy acquired, paid and predicted.

        Parameters
        ----------
        X : DataFrame
            Examples with the spec's columns (all of them: ``trace`` replays the
            policy on complete rows; see :meth:`start` for one example whose
            sensors are acquired one at a time).
        sample_costs : DataFrame (rows x sensor names), optional
            Each example's acquisition costs; default the spec's.

        Returns
        -------
        DataFrame
            Indexed like ``X``. Columns: ``prediction``, ``acquired`` (real
            sensor names in acquisition order, also when the DAG is over sensor
            subsets), ``n_sensors``, ``cost`` (spec units, without
            ``cost_scale``; per example with ``sample_costs``), ``stop_state``
            (state index) and, for classifiers, ``confidence`` (top class
            probability).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> table = model.trace(demo.X_test)
        >>> list(table.columns)
        ['prediction', 'acquired', 'n_sensors', 'cost', 'stop_state', 'confidence']
        >>> table.loc[1, "acquired"]
        ('cheap_a', 'precise')
        """
        Xv, routing, frame = self._route_frame(X, sample_costs)
        extra = self._trace_columns(Xv, routing)
        out = pd.DataFrame({"prediction": extra.pop("prediction")}, index=frame.index)
        out = pd.concat([out, frame], axis=1)
        for name, values in extra.items():
            out[name] = values
        return out

    def evaluate(
        self,
        X: pd.DataFrame,
        y: Any,
        *,
        sample_costs: Any = None,
        sample_weight: Any = None,
    ) -> dict[str, float]:
        """Task metrics, average acquisition cost and number of sensors.

        Parameters
        ----------
        X : DataFrame
            Test examples with the spec's columns.
        y : array-like of shape (n_samples,)
            Their labels (classifier) or targets (regressor).
        sample_costs : DataFrame (rows x sensor names), optional
            Each example's acquisition costs; default the spec's.
        sample_weight : array-like of shape (n_samples,), optional
            Row weights, finite and >= 0, not all 0 (a Series goes by X's
            index): every mean below counts row i that many times, as that
            many copies of it would (integer weights give the numbers of
            the table with its rows copied, up to rounding).

        Returns
        -------
        dict of str to float
            - ``error`` (classifier): the fraction of misclassified examples;
            - ``mse`` and ``mae`` (regressor): mean squared and absolute error;
            - ``avg_cost``: the mean acquisition cost per example (spec units,
              without ``cost_scale``);
            - ``avg_sensors``: the mean number of sensors acquired;
            - ``n_samples``: the number of examples (an int; the rows, also
              with weights);
            - ``avg_loss``: the objective the policies minimise, mean stop loss
              + ``cost_scale`` x ``avg_cost`` (the stop loss is the 0-1 error,
              or ``loss_matrix``'s; squared or absolute error for a regressor).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> scores = model.evaluate(demo.X_test, demo.y_test)
        >>> sorted(scores)
        ['avg_cost', 'avg_loss', 'avg_sensors', 'error', 'n_samples']
        >>> scores["avg_cost"], scores["avg_sensors"]
        (2.8, 1.45)
        """
        tr = self.trace(X, sample_costs=sample_costs)
        y = self._check_eval_target(align_rows(X, y, "y"), len(tr))
        labels = getattr(X, "index", None)
        w = check_sample_weight(
            align_rows(X, sample_weight, "sample_weight"),
            len(tr),
            None if labels is None else list(labels),
        )
        pred = tr["prediction"].to_numpy()
        out: dict[str, float] = {
            **(self._metrics(pred, y) if w is None else self._metrics(pred, y, w)),
            "avg_cost": _finite_mean(tr["cost"].to_numpy(), w),
            "avg_sensors": float(
                tr["n_sensors"].mean()
                if w is None
                else np.average(tr["n_sensors"], weights=w)
            ),
            "n_samples": len(tr),
        }
        stop_loss = np.average(self._row_loss(pred, y), weights=w)
        out["avg_loss"] = float(stop_loss + self.cost_scale_ * out["avg_cost"])
        return out

    def evaluate_states(
        self,
        X: pd.DataFrame,
        y: Any,
        *,
        sample_costs: Any = None,
        states: Any = None,
    ) -> pd.DataFrame:
        """Non-adaptive baselines: every state's model applied to all rows.

        Parameters
        ----------
        X : DataFrame
            Test examples with the spec's columns.
        y : array-like of shape (n_samples,)
            Their labels or targets.
        sample_costs : DataFrame (rows x sensor names), optional
            Each example's acquisition costs; default the spec's.
        states : list of int or of collections of sensor names, optional
            Only these states (indices, or sensor subsets such as greedily
            selected ones); each must be a state of the DAG. Default all.

        Returns
        -------
        DataFrame
            One row per state with ``state``, ``sensors`` (names),
            ``n_sensors``, ``avg_cost`` (everyone pays for all of the state's
            sensors) and the task metrics (``error``; ``mse`` and ``mae``).
            State 0 is the no-sensor baseline, the last state all sensors.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> subsets = [0, ["precise"]]
        >>> table = model.evaluate_states(demo.X_test, demo.y_test, states=subsets)
        >>> table[["sensors", "avg_cost"]].to_dict("records")
        [{'sensors': (), 'avg_cost': 0.0}, {'sensors': ('precise',), 'avg_cost': 4.0}]
        """
        Xv = self._features(X)
        y = self._check_eval_target(align_rows(X, y, "y"), len(Xv))
        sample_costs = align_rows(X, sample_costs, "sample_costs")
        dag = self.sensor_dag_
        rows = []
        for k in self.state_indices(states):
            stops = np.full(len(Xv), k)
            rows.append(
                {
                    "state": k,
                    "sensors": dag.state_names(k),
                    "n_sensors": len(dag.sensors_in(k)),
                    "avg_cost": float(
                        self._costs_of(stops, sample_costs, len(Xv)).mean()
                    ),
                    **self._metrics(self.predict_at(Xv, stops), y),
                }
            )
        return pd.DataFrame(rows)

    def state_indices(self, states: Any = None) -> list[int]:
        """DAG state indices of ``states`` (indices or sensor-name collections).

        Parameters
        ----------
        states : list of int or of collections of sensor names, optional
            The states; ``None`` gives all of them.

        Returns
        -------
        list of int
            Their indices into ``dag_``.

        Raises
        ------
        ValueError
            For an index out of range, an unknown sensor, or a sensor subset
            that is not a state of the DAG (possible when the DAG is built over
            selected subsets).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> model.state_indices([0, ["cheap_a", "precise"], "precise"])
        [0, 5, 3]
        """
        check_is_fitted(self)
        dag = self.sensor_dag_
        if states is None:
            return list(range(dag.n_states))
        position = {name: i for i, name in enumerate(dag.sensor_names)}
        out = []
        for state in states:
            if isinstance(state, Integral):
                if not 0 <= int(state) < dag.n_states:
                    raise ValueError(
                        f"State index {state} is out of range (0..{dag.n_states - 1})."
                    )
                out.append(int(state))
                continue
            names = [state] if isinstance(state, str) else list(state)
            unknown = [n for n in names if n not in position]
            if unknown:
                raise ValueError(
                    f"Unknown sensor(s) {unknown} in subset {tuple(names)}; known: "
                    f"{list(dag.sensor_names)}."
                )
            mask = 0
            for n in names:
                mask |= 1 << position[n]
            if mask not in dag.index:
                raise ValueError(
                    f"The subset {tuple(names)} is not a state of this model's DAG."
                )
            out.append(dag.index[mask])
        return out

    def flow(self, X: pd.DataFrame, y: Any = None) -> nx.DiGraph:
        """The DAG annotated with how examples of ``X`` flow through it.

        Parameters
        ----------
        X : DataFrame
            Examples with the spec's columns.
        y : array-like of shape (n_samples,), optional
            Their labels or targets, to count errors (or sum losses) per state.

        Returns
        -------
        networkx.DiGraph
            A copy of ``dag_``. Node attributes: ``arrived``, ``stopped`` and,
            when ``y`` is given, the task's sums over those stopping there
            (classifier: ``errors``, misclassified rows; regressor: ``loss``,
            total squared/absolute error). Edge attribute: ``count``.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> graph = model.flow(demo.X_test, demo.y_test)
        >>> stopped = [graph.nodes[k]["stopped"] for k in graph.nodes]
        >>> graph.nodes[0]["arrived"], sum(stopped)
        (20, 20)
        """
        Xv = self._features(X)
        routing = self._route(Xv)
        g = self._flow_graph(routing)
        if y is not None:
            y = self._check_eval_target(align_rows(X, y, "y"), len(Xv))
            pred = self.predict_at(Xv, routing.stop_state)
            K = self.sensor_dag_.n_states
            for name, values in self._flow_annotations(pred, y).items():
                sums = np.bincount(routing.stop_state, weights=values, minlength=K)
                cast = int if np.asarray(values).dtype == bool else float
                for k in range(K):
                    g.nodes[k][name] = cast(sums[k])
        return g

    def start(self, sample_costs: dict[str, float] | None = None) -> Any:
        """A session that decides for one example at a time, as in deployment.

        Parameters
        ----------
        sample_costs : dict of str to float, optional
            This example's acquisition costs (sensor -> cost); default the
            spec's.

        Returns
        -------
        PolicySession
            Ask :meth:`~budgetdag_core.PolicySession.next_sensor`, pass the
            values acquired to :meth:`~budgetdag_core.PolicySession.observe`,
            and :meth:`~budgetdag_core.PolicySession.predict` once it says stop
            (``None``).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> row = demo.X_test.iloc[1]
        >>> session = model.start()
        >>> while (sensor := session.next_sensor()) is not None:
        ...     session.observe(sensor, {sensor: row[sensor]})
        >>> session.acquired, int(session.predict())
        (['cheap_a', 'precise'], 1)
        """
        from ._session import PolicySession

        check_is_fitted(self)
        return PolicySession(self, sample_costs)

    def check_integrity(self) -> None:
        """Check that the fitted attributes agree with each other.

        The loaders call it: compiled prediction code trusts the model's index
        arrays.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            Naming the first fitted attribute found inconsistent with the rest
            of the model.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> model.check_integrity()  # silent: the model is consistent
        """
        check_estimator(self)
