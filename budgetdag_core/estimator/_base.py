"""What the classifier and the regressor share: fitting (subset selection, bank,
Graph-Reduce), routing, trace, evaluation, flow and sessions.

A subclass supplies the task: how to check the target, which bank to fit, the
stop loss of each state, what to predict at a stop state and which metrics to
report.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._compiled import warm_up
from .._progress import Progress
from ..dag import SensorDAG, build_dag
from ..graph_reduce import NodePolicy, Routing, graph_reduce
from ..sensors import SensorSpec
from ..sparse_dag import (
    GrowthSettings,
    SparseSensorDAG,
    graph_reduce_sparse,
    grow_sparse_dag,
    state_spreads,
)
from ..subsets import SubsetSelection, select_subsets
from ..validation import (
    MAX_CV,
    MAX_FULL_DAG_SENSORS,
    MAX_N_SUBSETS,
    as_spec,
    check_features,
    check_sample_costs,
    int_seed,
    spec_for,
)
from ._inputs import CONSTANT_STATE_SPREAD, PolicyInputs
from ._integrity import check_estimator
from ._policy import POLICY_LEARNERS, PolicyRoutingMixin, make_learner

#: Rows scored per candidate subset by the estimators' subset selection.
SUBSET_MAX_ROWS = 20_000


#: Parameter constraints the classifier and the regressor share.
COMMON_CONSTRAINTS: dict = {
    "sensors": [SensorSpec, dict, str, None],
    "cost_scale": [Interval(Real, 0, None, closed="left")],
    "policy_learner": [
        StrOptions(set(POLICY_LEARNERS)),
        HasMethods(["fit", "predict"]),
    ],
    "policy_degree": [Interval(Integral, 1, 3, closed="both"), None],
    "cv": [Interval(Integral, 2, MAX_CV, closed="both")],
    "random_state": ["random_state"],
    "n_jobs": [Integral, None],
    "max_policy_features": [Interval(Integral, 1, None, closed="left")],
    "n_subsets": [Interval(Integral, 1, MAX_N_SUBSETS, closed="both"), None],
    "subset_budget": [Interval(Real, 0, None, closed="neither"), None],
    "include_all": ["boolean"],
    "subset_scorer": [StrOptions({"ridge"}), HasMethods(["fit", "predict"])],
}


def _finite_mean(values: np.ndarray) -> float:
    """Mean of non-negative finite values without overflow in the sum."""
    top = float(values.max(initial=0.0))
    return top * float(np.mean(values / top)) if top > 0 else 0.0


class BudgetDAGBase(PolicyRoutingMixin, BaseEstimator):
    """Shared machinery of :class:`BudgetDAGClassifier` and
    :class:`BudgetDAGRegressor` (not for direct use)."""

    # ----------------------------------------------------------- task hooks
    def _prepare_target(self, y: Any, n_rows: int) -> tuple[np.ndarray, dict]:
        """Checked target as used for fitting, and fitted attributes to set."""
        raise NotImplementedError

    def _bank_template(self) -> Any:
        raise NotImplementedError

    def _new_bank(self, dag: SensorDAG | None = None) -> Any:
        """The unfitted bank (``dag`` lets the bank kind depend on its size)."""
        raise NotImplementedError

    def _bank_fingerprint(
        self, Xv: np.ndarray, y_fit: np.ndarray, dag: SensorDAG
    ) -> str:
        """The fingerprint a bank fitted by this estimator on this data has."""
        return self._new_bank(dag).fingerprint_for(Xv, y_fit, dag)

    def _fit_bank(
        self,
        bank: Any,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        dag: SensorDAG,
        spec: SensorSpec,
        progress: Progress | None,
    ) -> Any:
        raise NotImplementedError

    def _stop_losses(self, bank: Any, y_fit: np.ndarray) -> np.ndarray:
        """(n_samples, n_states) loss of stopping each training row at each state."""
        raise NotImplementedError

    def predict_at(self, Xv: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """Prediction of each row of ``Xv`` (the spec's columns, as an array)
        by the bank's model of its state in ``stops``, wherever the policies
        would have stopped it."""
        raise NotImplementedError

    def _check_eval_target(self, y: Any, n_rows: int) -> np.ndarray:
        raise NotImplementedError

    def _row_loss(self, pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-row stop loss of predictions (the loss the policies minimise)."""
        raise NotImplementedError

    def _metrics(self, pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
        raise NotImplementedError

    def _trace_columns(self, Xv: np.ndarray, routing: Routing) -> dict[str, np.ndarray]:
        """``prediction`` and any task-specific columns of :meth:`trace`."""
        return {"prediction": self.predict_at(Xv, routing.stop_state)}

    def _flow_annotations(self, pred: np.ndarray, y: np.ndarray) -> dict[str, Any]:
        """Per-row values summed per stop state into node attributes of flow."""
        return {"loss": self._row_loss(pred, y)}

    # ---------------------------------------------------------------- fitting
    @property
    def _seed(self) -> int | None:
        """``random_state`` as the one int seed every part of a fit uses
        (see :func:`~budgetdag_core.validation.int_seed`)."""
        return int_seed(self.random_state)

    @property
    def policy_degree_(self) -> int:
        """The polynomial degree of policy features (``None`` resolved): 2 on
        sensor values (the paper, and ``"sensors+confidence"``), 1 where the
        inputs hold the classifier's probabilities (chosen by measurement: as
        accurate, and the inputs are already nonlinear)."""
        if self.policy_degree is not None:
            return int(self.policy_degree)
        return 2 if self._input_kind() in ("sensors", "sensors+confidence") else 1

    def _make_learner(self, n_rows: int | None = None) -> Any:
        return make_learner(
            self.policy_learner, self.policy_degree_, self.max_policy_features, n_rows
        )

    def _select_subsets(
        self,
        spec: SensorSpec,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        costs: np.ndarray | None,
        progress: Progress | None,
    ) -> SubsetSelection:
        return select_subsets(
            Xv,
            y_fit,
            spec,
            self.n_subsets,
            self.subset_budget,
            include_all=self.include_all,
            costs=None if costs is None else costs.mean(axis=0),
            **self._selection_task(),
            scorer=self.subset_scorer,
            max_rows=SUBSET_MAX_ROWS,
            cv=min(self.cv, 3),
            random_state=self._seed,
            n_jobs=self.n_jobs,
            progress=progress,
        )

    def _build_dag(
        self,
        spec: SensorSpec,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        costs: np.ndarray | None,
        progress: Progress | None,
    ) -> tuple[SensorDAG, SubsetSelection | None]:
        """The full DAG, or with ``n_subsets`` the DAG over selected subsets."""
        if self.n_subsets is None:
            return build_dag(spec, None), None
        selection = self._select_subsets(spec, Xv, y_fit, costs, progress)
        return build_dag(spec, selection.units), selection

    def dag_for(
        self,
        bank: Any,
        spec: SensorSpec,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        costs: np.ndarray | None,
        progress: Progress | None,
    ) -> tuple[SensorDAG, SubsetSelection | None]:
        """The DAG to fit: a given bank's subsets when this estimator would select
        the same ones (a bank serves one DAG only), else :meth:`_build_dag`."""
        if bank is not None and self._sparse_dag(spec):
            growth = getattr(bank, "sparse_growth_", None)
            if growth is None:
                raise ValueError(
                    "This bank did not grow a sparse DAG here, or was saved "
                    "without its growth (slim): refit it."
                )
            return growth.dag, None  # the DAG the bank grew
        reused = self._reusable_selection(bank, costs)
        if reused is not None:
            return build_dag(spec, reused.units), reused
        return self._build_dag(spec, Xv, y_fit, costs, progress)

    def _fit_spec(self, X: Any) -> SensorSpec:
        """The spec to fit: ``sensors``, or one unit-cost sensor per column."""
        if self.sensors is None:
            return spec_for(X)
        return as_spec(self.sensors)

    def check_fit_data(
        self, X: pd.DataFrame, y: Any
    ) -> tuple[SensorSpec, np.ndarray, np.ndarray, np.ndarray | None]:
        """Checked spec, features, fit target, classes (None for regression):
        what ``fit`` works on, for sweeps that fit many models on one bank."""
        spec = self._fit_spec(X)
        Xv = check_features(X, spec)
        y_fit, attrs = self._prepare_target(y, len(Xv))
        return spec, Xv, y_fit, attrs.get("classes_")

    def fit_bank(
        self, X: pd.DataFrame, y: Any, *, progress: Progress | None = None
    ) -> Any:
        """Fit only the bank, for reuse by ``fit(X, y, bank=...)``.

        The bank does not depend on costs, ``cost_scale`` or the policy settings:
        fit it once and learn policies for many cost scales (see
        :func:`budgetdag_core.tradeoff_curve`). The estimator itself is unchanged.
        With ``n_subsets`` the bank also keeps the selected subsets
        (``bank.subset_selection_``): a later ``fit(X, y, bank=bank)`` with the
        same selection settings reuses them instead of selecting again.
        """
        self._validate_params()
        warm_up()  # the kernels the fit will need, compiled meanwhile if missing
        spec, Xv, y_fit, _ = self.check_fit_data(X, y)
        if self._sparse_dag(spec):
            return self._fit_sparse_bank(spec, Xv, y_fit, None, progress)
        dag, selection = self._build_dag(spec, Xv, y_fit, None, progress)
        bank = self._fit_bank(self._new_bank(dag), Xv, y_fit, dag, spec, progress)
        self._attach_selection(bank, selection, None)
        return bank

    def _selection_key(self, costs: np.ndarray | None) -> tuple:
        """What a subset selection depends on besides the data."""
        mean_costs = None if costs is None else tuple(costs.mean(axis=0).round(12))
        return (
            self.n_subsets,
            self.subset_budget,
            self.include_all,
            self._selection_task()["reward"],
            repr(self.subset_scorer),
            min(self.cv, 3),
            self._seed,
            mean_costs,
        )

    def _attach_selection(
        self, bank: Any, selection: SubsetSelection | None, costs: np.ndarray | None
    ) -> None:
        """Keep the subsets on the bank (a bank serves their DAG only)."""
        bank.subset_selection_ = selection
        bank.subset_key_ = None if selection is None else self._selection_key(costs)

    def _reusable_selection(
        self, bank: Any, costs: np.ndarray | None
    ) -> SubsetSelection | None:
        """The given bank's subsets, when this estimator would select the same."""
        selection = getattr(bank, "subset_selection_", None)
        if self.n_subsets is None or selection is None:
            return None
        if getattr(bank, "subset_key_", None) != self._selection_key(costs):
            return None
        return selection

    def _input_kind(self) -> str:
        """What the node policies see (a ``POLICY_FEATURES`` kind): the
        regressor's see the values of their sensors."""
        return "sensors"

    def _inputs(
        self,
        state_columns: list[np.ndarray],
        n_classes: int,
        value_states: np.ndarray | None = None,
        *,
        sparse: bool | None = None,
    ) -> PolicyInputs:
        """The policies' inputs (``sparse``: on a sparse DAG; None: this fitted
        model's DAG)."""
        if sparse is None:
            sparse = isinstance(getattr(self, "sensor_dag_", None), SparseSensorDAG)
        value_kind = "sensors" if sparse else "sensors+proba"
        return PolicyInputs(
            self._input_kind(), state_columns, n_classes, value_states, value_kind
        )

    def _value_states(self, bank: Any) -> np.ndarray | None:
        """Per state, whether its policy also sees the acquired values (the
        ``"auto"`` inputs; computed from the bank before Graph-Reduce)."""
        return None

    @property
    def inputs_(self) -> PolicyInputs:
        """What the policy at each state sees (see :class:`PolicyInputs`)."""
        check_is_fitted(self)
        n_classes = len(self.classes_) if hasattr(self, "classes_") else 0
        return self._inputs(self.state_columns_, n_classes, self.value_states_)

    def _selection_task(self) -> dict[str, str]:
        """``task``, ``loss`` and ``reward`` of the greedy subset selection."""
        raise NotImplementedError

    def _fit(
        self,
        X: pd.DataFrame,
        y: Any,
        *,
        sample_costs: Any,
        bank: Any,
        progress: Progress | None,
        dag: SensorDAG | None = None,
        selection: SubsetSelection | None = None,
    ) -> BudgetDAGBase:
        self._validate_params()
        warm_up()  # the kernels the fit will need, compiled meanwhile if missing
        spec = self._fit_spec(X)
        Xv = check_features(X, spec)
        y_fit, target_attrs = self._prepare_target(y, len(Xv))
        costs = check_sample_costs(sample_costs, spec, len(Xv))
        top = spec.total_cost if costs is None else float(costs.sum(axis=1).max())
        if not np.isfinite(self.cost_scale * top):
            raise ValueError(
                f"cost_scale={self.cost_scale} times the largest total cost ({top:g}) "
                "is not a finite number: lower cost_scale or rescale the costs."
            )
        if self._sparse_dag(spec):
            return self._fit_sparse(
                spec, Xv, y_fit, target_attrs, costs, bank, progress
            )
        if dag is None:  # the same data is checked by the bank's fingerprint below
            dag, selection = self.dag_for(bank, spec, Xv, y_fit, costs, progress)
        if bank is not None:
            expected = self._bank_fingerprint(Xv, y_fit, dag)
            if getattr(bank, "fingerprint_", None) != expected:
                raise ValueError(
                    "The given bank was fitted on other data or settings (rows, "
                    "columns, cv, random_state, bank kind, model or sensor subsets "
                    "differ): refit it."
                )
        else:
            bank = self._fit_bank(self._new_bank(dag), Xv, y_fit, dag, spec, progress)
            self._attach_selection(bank, selection, costs)
        state_cols = dag.state_columns(spec.column_indices())
        value_states = self._value_states(bank)
        inputs = self._inputs(
            state_cols, len(target_attrs.get("classes_", ())), value_states
        )
        result = graph_reduce(
            inputs.training(Xv, getattr(bank, "oof_proba_", None)),
            self._stop_losses(bank, y_fit),
            spec.cost_vector if costs is None else costs,
            dag,
            self._make_learner(len(Xv)),
            cost_scale=self.cost_scale,
            n_jobs=self.n_jobs,
            progress=progress,
        )
        # Only now, with everything computed, touch the estimator's state.
        return self._set_fitted(
            spec, target_attrs, selection, dag, state_cols, bank, value_states, result
        )

    # ------------------------------------------------------------ sparse DAG
    def _sparse_dag(self, spec: SensorSpec) -> bool:
        """Whether this fit grows a sparse DAG (``dag="sparse"``, or ``"auto"``
        beyond the full DAG's sensors when no subsets are asked for)."""
        kind = getattr(self, "dag", "full")
        if kind == "sparse":
            if self.n_subsets is not None:
                raise ValueError(
                    "dag='sparse' grows its own states: leave n_subsets=None."
                )
            return True
        return (
            kind == "auto"
            and self.n_subsets is None
            and spec.n_sensors > MAX_FULL_DAG_SENSORS
        )

    def _growth_settings(self) -> dict:
        """The :class:`~budgetdag_core.sparse_dag.GrowthSettings` of this
        estimator (part of its sparse bank's fingerprint)."""
        return {"max_states": int(getattr(self, "max_states", 1000))}

    def _new_sparse_bank(self) -> Any:
        raise ValueError(
            f"{type(self).__name__} has no sparse DAG: group the columns into at "
            f"most {MAX_FULL_DAG_SENSORS} sensors or use n_subsets."
        )

    def _fit_sparse_bank(
        self,
        spec: SensorSpec,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        costs: np.ndarray | None,
        progress: Progress | None,
    ) -> Any:
        """Fit the any-mask models, grow the sparse DAG, bind the bank to it."""
        bank = self._new_sparse_bank()
        n_classes = int(y_fit.max()) + 1
        bank.fit_models(Xv, y_fit, spec.column_indices(), n_classes, progress)
        mean_costs = spec.cost_vector if costs is None else costs.mean(axis=0)
        growth = grow_sparse_dag(
            bank,
            Xv,
            spec.names,
            spec.column_indices(),
            mean_costs,
            GrowthSettings(**self._growth_settings()),
            random_state=self._seed,
        )
        return bank.bind(growth, Xv, y_fit)

    def _fit_sparse(
        self,
        spec: SensorSpec,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        target_attrs: dict,
        costs: np.ndarray | None,
        bank: Any,
        progress: Progress | None,
    ) -> BudgetDAGBase:
        """:meth:`_fit` on a sparse DAG: Graph-Reduce on the grown states."""
        if bank is None:
            bank = self._fit_sparse_bank(spec, Xv, y_fit, costs, progress)
        else:
            growth = getattr(bank, "sparse_growth_", None)
            expected = (
                None
                if growth is None
                else self._new_sparse_bank().fingerprint_for(Xv, y_fit, growth.dag)
            )
            if getattr(bank, "fingerprint_", None) != expected:
                raise ValueError(
                    "The given bank was not grown on this data with these "
                    "settings (or is a saved bank without its growth): refit it."
                )
        growth = bank.sparse_growth_
        dag = growth.dag
        state_cols = dag.state_columns(spec.column_indices())
        value_states = None
        if self._input_kind() == "auto":
            spreads = state_spreads(growth)
            value_states = np.nan_to_num(spreads, nan=1.0) < CONSTANT_STATE_SPREAD
            value_states[0] = False
        inputs = self._inputs(
            state_cols,
            len(target_attrs.get("classes_", ())),
            value_states,
            sparse=True,
        )
        result = graph_reduce_sparse(
            growth,
            lambda k, rows, proba: inputs.of_rows(Xv, k, rows, proba=proba),
            self._sparse_stop_loss(bank, y_fit),
            spec.cost_vector if costs is None else costs,
            self._make_learner(len(Xv)),
            cost_scale=self.cost_scale,
        )
        if progress is not None:
            progress("policies", dag.n_states, dag.n_states)
        return self._set_fitted(
            spec, target_attrs, None, dag, state_cols, bank, value_states, result
        )

    def _set_fitted(
        self,
        spec: Any,
        target_attrs: dict[str, Any],
        selection: Any,
        dag: Any,
        state_cols: Any,
        bank: Any,
        value_states: Any,
        result: Any,
    ) -> Any:
        """Set the fitted attributes at once, after everything is computed (a
        failed fit leaves the estimator as it was)."""
        self.spec_ = spec
        for name, value in target_attrs.items():
            setattr(self, name, value)
        self.feature_names_in_ = np.asarray(spec.columns, dtype=object)
        self.n_features_in_ = len(spec.columns)
        self.subset_selection_ = selection
        self.sensor_dag_ = dag
        self.dag_ = dag.to_networkx()
        self.state_columns_ = state_cols
        self.bank_ = bank
        self.value_states_ = value_states
        self.policies_: list[NodePolicy] = result.policies
        self.train_cost_to_go_ = result.root_cost_to_go()
        return self

    def _sparse_stop_loss(self, bank: Any, y_fit: np.ndarray) -> Any:
        """``stop_loss(rows, proba)`` of Graph-Reduce on a sparse DAG."""
        raise NotImplementedError

    def refit_policies(
        self,
        X: pd.DataFrame,
        y: Any,
        cost_scale: float,
        *,
        sample_costs: Any = None,
        progress: Progress | None = None,
    ) -> BudgetDAGBase:
        """A new model with another ``cost_scale``, reusing this model's bank and
        DAG (so also its selected sensor subsets)."""
        check_is_fitted(self)
        other = clone(self).set_params(cost_scale=cost_scale)
        return other._fit(
            X,
            y,
            sample_costs=sample_costs,
            bank=self.bank_,
            progress=progress,
            dag=self.sensor_dag_,
            selection=self.subset_selection_,
        )

    # -------------------------------------------------------------- inference
    def trace(self, X: pd.DataFrame, *, sample_costs: Any = None) -> pd.DataFrame:
        """One row per example: what the policy acquired, paid and predicted.

        Columns: ``prediction``, ``acquired`` (real sensor names in acquisition
        order, also when the DAG is over sensor subsets), ``n_sensors``,
        ``cost`` (spec units, without ``cost_scale``; per example with
        ``sample_costs``), ``stop_state`` (state index) and, for classifiers,
        ``confidence`` (top class probability).
        """
        Xv, routing, frame = self._route_frame(X, sample_costs)
        extra = self._trace_columns(Xv, routing)
        out = pd.DataFrame({"prediction": extra.pop("prediction")}, index=frame.index)
        out = pd.concat([out, frame], axis=1)
        for name, values in extra.items():
            out[name] = values
        return out

    def evaluate(
        self, X: pd.DataFrame, y: Any, *, sample_costs: Any = None
    ) -> dict[str, float]:
        """Task metrics, average acquisition cost and number of sensors.

        ``avg_loss`` is the objective the policies minimise: mean stop loss +
        ``cost_scale`` x ``avg_cost``.
        """
        tr = self.trace(X, sample_costs=sample_costs)
        y = self._check_eval_target(y, len(tr))
        pred = tr["prediction"].to_numpy()
        out: dict[str, float] = {
            **self._metrics(pred, y),
            "avg_cost": _finite_mean(tr["cost"].to_numpy()),
            "avg_sensors": float(tr["n_sensors"].mean()),
            "n_samples": len(tr),
        }
        out["avg_loss"] = float(
            self._row_loss(pred, y).mean() + self.cost_scale * out["avg_cost"]
        )
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

        One row per DAG state with ``state``, ``sensors`` (names), ``n_sensors``,
        ``avg_cost`` (everyone pays for all of the state's sensors) and the task
        metrics. State 0 is the no-sensor baseline, the last state all sensors.

        ``states`` restricts the rows to some states, given as state indices or
        as collections of sensor names (e.g. greedily selected subsets); each
        must be a state of the DAG.
        """
        Xv = self._features(X)
        y = self._check_eval_target(y, len(Xv))
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

        ``None`` gives all states. A sensor subset that is not a state of the DAG
        (possible when the DAG is built over selected subsets) is a ``ValueError``.
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

        Node attributes: ``arrived``, ``stopped`` and, when ``y`` is given, the
        task's sums over those stopping there (classifier: ``errors``,
        misclassified rows; regressor: ``loss``, total squared/absolute error).
        Edge attribute: ``count``.
        """
        Xv = self._features(X)
        routing = self._route(Xv)
        g = self._flow_graph(routing)
        if y is not None:
            y = self._check_eval_target(y, len(Xv))
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

        ``sample_costs`` (sensor -> cost) are this example's acquisition costs.
        """
        from ._session import PolicySession

        check_is_fitted(self)
        return PolicySession(self, sample_costs)

    def check_integrity(self) -> None:
        """Raise ``ValueError`` naming the first fitted attribute found
        inconsistent with the rest of the model (the loaders call it: compiled
        prediction code trusts the model's index arrays)."""
        check_estimator(self)

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
