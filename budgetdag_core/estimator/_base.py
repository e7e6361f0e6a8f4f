"""What the classifier and the regressor share: fitting (subset selection, bank,
Graph-Reduce), routing, trace, evaluation, flow and sessions.

A subclass supplies the task: how to check the target, which bank to fit, the
stop loss of each state, what to predict at a stop state and which metrics to
report.
"""

from __future__ import annotations

import copy
import functools
from numbers import Integral, Real
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._bounded_io import short_repr
from .._compiled import warm_up
from .._progress import Progress, progress_for
from ..dag import SensorDAG, build_dag
from ..graph_reduce import NodePolicy, Routing, graph_reduce
from ..sensors import SensorSpec
from ..strategies import (
    SIMPLEST_FIRST,
    GrowthInputs,
    GrowthSettings,
    SparseSensorDAG,
    StrategyChoice,
    SubsetSelection,
    choose_strategy,
    grow_strategy,
    most_states,
    select_subsets,
    state_spreads,
    strategies_to_build,
    strategy_key,
)
from ..validation import (
    MAX_CV,
    MAX_FULL_DAG_SENSORS,
    MAX_N_SUBSETS,
    align_rows,
    as_spec,
    check_features,
    check_sample_costs,
    check_sensor_count,
    int_seed,
    spec_for,
)
from ._auto_scale import AutoScaleMixin
from ._dag_choice import check_n_rows, few_sensor_strategies, full_dag_too_slow
from ._inputs import CONSTANT_STATE_SPREAD, PolicyInputs
from ._integrity import check_estimator
from ._policy import POLICY_LEARNERS, PolicyRoutingMixin, make_learner
from ._small_data import SmallDataMixin, lowered_cv

#: Rows scored per candidate subset by the estimators' subset selection.
SUBSET_MAX_ROWS = 20_000


#: Parameter constraints the classifier and the regressor share.
COMMON_CONSTRAINTS: dict = {
    "sensors": [SensorSpec, dict, str, None],
    "cost_scale": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
    "policy_learner": [
        StrOptions(set(POLICY_LEARNERS)),
        HasMethods(["fit", "predict"]),
    ],
    "policy_degree": [Interval(Integral, 1, 3, closed="both"), None],
    "cv": [Interval(Integral, 2, MAX_CV, closed="both")],
    "random_state": ["random_state"],
    "n_jobs": [Integral, None],
    "verbose": ["verbose"],
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


class BudgetDAGBase(AutoScaleMixin, SmallDataMixin, PolicyRoutingMixin, BaseEstimator):
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

    def _metrics(self, pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
        raise NotImplementedError

    def _trace_columns(self, Xv: np.ndarray, routing: Routing) -> dict[str, np.ndarray]:
        """``prediction`` and any task-specific columns of :meth:`trace`."""
        return {"prediction": self.predict_at(Xv, routing.stop_state)}

    def _flow_annotations(self, pred: np.ndarray, y: np.ndarray) -> dict[str, Any]:
        """Per-row values summed per stop state into node attributes of flow."""
        return {"loss": self._row_loss(pred, y)}

    # ---------------------------------------------------------------- fitting
    def check_params(self) -> BudgetDAGBase:
        """Check the parameters as :meth:`fit` does (``ValueError`` or
        ``TypeError`` naming the first bad one) and return the estimator.

        Returns
        -------
        self

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> BudgetDAGClassifier(toy_dataset(50, 10).spec, cv=1).check_params()
        Traceback (most recent call last):
        ...
        sklearn.utils._param_validation.InvalidParameterError: The 'cv' ...
        """
        self._validate_params()
        return self

    def build_dag(
        self,
        spec: SensorSpec,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        *,
        costs: np.ndarray | None = None,
        progress: Progress | None = None,
    ) -> tuple[SensorDAG, SubsetSelection | None]:
        """The DAG a fit builds before its bank: every subset, or with
        ``n_subsets`` the unions of Alg. 2's subsets (selected here).

        Parameters
        ----------
        spec, Xv, y_fit :
            As :meth:`check_fit_data` gives them.
        costs : ndarray (n_samples, n_sensors), optional
            Example-dependent costs.
        progress : callable, optional

        Returns
        -------
        dag : SensorDAG
        selection : SubsetSelection or None

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(100, 10)
        >>> model = BudgetDAGClassifier(demo.spec)
        >>> spec, Xv, y_fit, _ = model.check_fit_data(demo.X_train, demo.y_train)
        >>> dag, selection = model.build_dag(spec, Xv, y_fit)
        >>> dag.n_states, selection is None
        (8, True)
        """
        if self.builds_sparse_dag(spec, len(Xv)):
            raise ValueError(
                "This estimator builds its DAGs on its any-subset bank "
                "(builds_sparse_dag): fit_bank builds them."
            )
        return self._build_dag(spec, Xv, y_fit, costs, progress)

    def new_bank(self, dag: SensorDAG | None = None, *, sparse: bool = False) -> Any:
        """The unfitted bank a fit would fit for ``dag`` (its kind may depend
        on the number of states), or with ``sparse`` the any-subset bank of a
        fit that :meth:`builds_sparse_dag`.

        Parameters
        ----------
        dag : SensorDAG, optional
        sparse : bool, default=False

        Returns
        -------
        bank

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> type(BudgetDAGClassifier(toy_dataset(50, 10).spec).new_bank()).__name__
        'ClassifierBank'
        >>> model = BudgetDAGClassifier(toy_dataset(50, 10).spec)
        >>> type(model.new_bank(sparse=True)).__name__
        'DedicatedMaskedBank'
        """
        return self._new_sparse_bank() if sparse else self._new_bank(dag)

    def sparse_strategies(
        self, spec: SensorSpec, n_rows: int | None = None
    ) -> dict[str, int]:
        """The DAGs of one-sensor additions a fit with ``spec`` builds, each
        with the most states it can have (``dag="auto"``: each, one kept on
        validation rows; beyond ``GROWN_MAX_ROWS`` training rows not the
        grown DAG, see ``strategies.strategies_to_build``);
        empty when the fit builds the full DAG or the DAG over Alg. 2's
        subsets.

        Parameters
        ----------
        spec : SensorSpec
        n_rows : int, optional
            The training rows of the fit; None: a fit on few enough rows to
            build every strategy.

        Returns
        -------
        dict
            Strategy name (``"chain"``, ``"routed"``, ``"grown"``) -> most
            states.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, SensorSpec
        >>> spec = SensorSpec.per_column([f"x{i}" for i in range(20)])
        >>> BudgetDAGClassifier(spec).sparse_strategies(spec)
        {'chain': 21, 'routed': 684, 'grown': 1000}
        >>> BudgetDAGClassifier(spec).sparse_strategies(spec, n_rows=5000)
        {'chain': 21, 'routed': 684}
        >>> BudgetDAGClassifier(spec, dag="chain").sparse_strategies(spec)
        {'chain': 21}
        >>> BudgetDAGClassifier(spec, n_subsets=4).sparse_strategies(spec)
        {}
        """
        check_n_rows(n_rows)
        if not self.builds_sparse_dag(spec, n_rows):
            return {}
        max_states = self._growth_settings()["max_states"]
        names = self._strategies()
        if n_rows is not None:
            names = strategies_to_build(names, n_rows)
        names = few_sensor_strategies(names, spec.n_sensors)
        return {name: most_states(name, spec.n_sensors, max_states) for name in names}

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
        the same ones (a bank serves one DAG only), else a new one.

        Parameters
        ----------
        bank : fitted bank or None
            A bank to reuse (its DAG, or its selected subsets).
        spec : SensorSpec
            The sensors (see :meth:`check_fit_data`).
        Xv : ndarray of shape (n_samples, n_columns)
            The spec's columns.
        y_fit : ndarray of shape (n_samples,)
            The target as fitted.
        costs : ndarray of shape (n_samples, n_sensors) or None
            Per-example costs; None for the spec's.
        progress : callable(stage, done, total) or None
            Told how subset selection progresses.

        Returns
        -------
        dag : SensorDAG
            The full DAG, the DAG over selected subsets, or a bank's sparse DAG.
        selection : SubsetSelection or None
            The selected subsets (with ``n_subsets``), else None.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(demo.spec)
        >>> spec, Xv, y_fit, _ = model.check_fit_data(demo.X_train, demo.y_train)
        >>> dag, selection = model.dag_for(None, spec, Xv, y_fit, None, None)
        >>> dag.n_states, selection is None
        (8, True)
        """
        if bank is not None and self.builds_sparse_dag(spec, len(Xv)):
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

    def _fit_reporting(
        self, X: Any, y: Any, sample_costs: Any, bank: Any, progress: Any
    ) -> BudgetDAGBase:
        """``_fit``, drawing ``verbose``'s progress bar when no ``progress``
        callback is given (the bar reaches its end with the fit)."""
        self._validate_params()
        progress, bar = progress_for(self.verbose, progress, "fit")
        if bar is None:
            return self._fit(
                X, y, sample_costs=sample_costs, bank=bank, progress=progress
            )
        with bar:
            return self._fit(X, y, sample_costs=sample_costs, bank=bank, progress=bar)

    def _nan_refused(self, spec: SensorSpec | None) -> str | None:
        """Why this estimator refuses missing values (NaN) in ``X``, or None:
        the default banks take them (boosting routes a NaN to a learned side,
        a masked bank reads it as a sensor not acquired) and the policies see
        a missing value as 0 (``PolicyInputs``). ``spec`` None: not yet known
        (scikit-learn's tags)."""
        if self.n_subsets is not None:
            return (
                "n_subsets's subset selection (Alg. 2) scores subsets with a "
                "ridge regression, which needs every value"
            )
        return self._bank_nan_refused(spec)

    def _bank_nan_refused(self, spec: SensorSpec | None) -> str | None:
        """:meth:`_nan_refused` of the bank this estimator fits."""
        return None

    def _keep_feature_names(self, X: Any) -> BudgetDAGBase:
        """scikit-learn's convention after a fit on ``X``: ``feature_names_in_``
        (the spec's columns) only when ``X``'s columns are all strings (a
        table), not after a fit on an array."""
        columns = getattr(X, "columns", None)
        if columns is None or not all(isinstance(c, str) for c in columns):
            self.__dict__.pop("feature_names_in_", None)
        return self

    def _fit_spec(self, X: Any) -> SensorSpec:
        """The spec to fit: ``sensors``, or one unit-cost sensor per column
        (at most ``MAX_SENSORS``: refused before any work)."""
        spec = spec_for(X) if self.sensors is None else as_spec(self.sensors)
        check_sensor_count(spec.n_sensors)
        return spec

    def check_fit_data(
        self, X: pd.DataFrame, y: Any
    ) -> tuple[SensorSpec, np.ndarray, np.ndarray, np.ndarray | None]:
        """The checked inputs ``fit`` works on, for sweeps that fit many
        models on one bank.

        Parameters
        ----------
        X : DataFrame
            The training table (the spec's columns; others are ignored).
        y : array-like of shape (n_samples,)
            Labels (classifier) or numeric targets (regressor).

        Returns
        -------
        spec : SensorSpec
            ``sensors`` as a spec (one unit-cost sensor per column if None).
        Xv : ndarray of shape (n_samples, n_columns)
            The spec's columns, checked (finite numbers).
        y_fit : ndarray of shape (n_samples,)
            The target as fitted (class indices for a classifier).
        classes : ndarray or None
            The sorted classes; None for a regressor.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> spec, Xv, y_fit, classes = BudgetDAGClassifier(demo.spec).check_fit_data(
        ...     demo.X_train, demo.y_train
        ... )
        >>> spec.names, Xv.shape, classes.tolist()
        (('cheap_a', 'cheap_b', 'precise'), (300, 3), [0, 1])
        """
        spec = self._fit_spec(X)
        Xv = check_features(X, spec, nan_refused=self._nan_refused(spec))
        y_fit, attrs = self._prepare_target(align_rows(X, y, "y"), len(Xv))
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

        Parameters
        ----------
        X : DataFrame
            The training table (the spec's columns).
        y : array-like of shape (n_samples,)
            Labels (classifier) or numeric targets (regressor).
        progress : callable(stage, done, total), optional
            Told how the subsets (``"subsets"``) and the bank (``"bank"``)
            progress.

        Returns
        -------
        bank
            The fitted bank: a :class:`~budgetdag_core.bank.ClassifierBank`,
            :class:`~budgetdag_core.bank.MaskedBank` or
            :class:`~budgetdag_core.bank.RegressorBank`, as ``fit`` would build
            (beyond 12 sensors an any-subset bank: ``SparseMaskedBank``,
            ``SparseRegressorBank``).

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(demo.spec, cv=2, random_state=0)
        >>> bank = model.fit_bank(demo.X_train, demo.y_train)
        >>> cheap = model.set_params(cost_scale=0.2).fit(
        ...     demo.X_train, demo.y_train, bank=bank
        ... )
        >>> cheap.bank_ is bank  # only the policies were learned
        True
        """
        self._validate_params()
        warm_up()  # the kernels the fit will need, compiled meanwhile if missing
        spec, Xv, y_fit, _ = self.check_fit_data(X, y)
        if self.builds_sparse_dag(spec, len(Xv)):
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
        route_states: np.ndarray | None = None,
    ) -> PolicyInputs:
        """The policies' inputs (``sparse``: on a sparse DAG; None: this fitted
        model's DAG)."""
        if sparse is None:
            sparse = isinstance(getattr(self, "sensor_dag_", None), SparseSensorDAG)
        value_kind = "sensors" if sparse else "sensors+proba"
        return PolicyInputs(
            self._input_kind(),
            state_columns,
            n_classes,
            value_states,
            value_kind,
            route_states,
        )

    def _value_states(self, bank: Any) -> np.ndarray | None:
        """Per state, whether its policy also sees the acquired values (the
        ``"auto"`` inputs; computed from the bank before Graph-Reduce)."""
        return None

    @property
    def inputs_(self) -> PolicyInputs:
        """What the policy at each state sees (see ``PolicyInputs``)."""
        check_is_fitted(self)
        n_classes = len(self.classes_) if hasattr(self, "classes_") else 0
        return self._inputs(
            self.state_columns_,
            n_classes,
            self.value_states_,
            route_states=getattr(self, "route_states_", None),
        )

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
        cv = lowered_cv(self, y)  # small data: see estimator._small_data
        if cv is not None:
            return self._fit_with_cv(
                cv, X, y, sample_costs=sample_costs, bank=bank,
                progress=progress, dag=dag, selection=selection,
            )  # fmt: skip
        if isinstance(self.cost_scale, str):  # "auto": see estimator._auto_scale
            return self._fit_auto_scale(
                X, y, sample_costs=sample_costs, bank=bank,
                progress=progress, dag=dag, selection=selection,
            )  # fmt: skip
        warm_up()  # the kernels the fit will need, compiled meanwhile if missing
        spec = self._fit_spec(X)
        Xv = check_features(X, spec, nan_refused=self._nan_refused(spec))
        y_fit, target_attrs = self._prepare_target(align_rows(X, y, "y"), len(Xv))
        sample_costs = align_rows(X, sample_costs, "sample_costs")
        costs = check_sample_costs(sample_costs, spec, len(Xv))
        top = spec.total_cost if costs is None else float(costs.sum(axis=1).max())
        if not np.isfinite(self.cost_scale * top):
            raise ValueError(
                f"cost_scale={self.cost_scale} times the largest total cost ({top:g}) "
                "is not a finite number: lower cost_scale or rescale the costs."
            )
        if self.builds_sparse_dag(spec, len(Xv)):
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

    def _fit_warned(
        self, X: Any, y: Any, *, sample_costs: Any, bank: Any, progress: Any
    ) -> BudgetDAGBase:
        """``fit``: :meth:`_fit`, then a ``NothingBoughtWarning`` where the
        policies buy nothing although a sensor helps (only where the fit made
        its bank: a sweep's policies on a given bank buy nothing at high
        scales by design). ``verbose`` draws its bar (:meth:`_fit_reporting`);
        ``feature_names_in_`` as scikit-learn sets it."""
        self._fit_reporting(X, y, sample_costs, bank, progress)
        if bank is None:
            self._warn_if_nothing_bought(X, y, sample_costs)
        return self._keep_feature_names(X)

    # ------------------------------------------------------------ sparse DAG
    def builds_sparse_dag(self, spec: SensorSpec, n_rows: int | None = None) -> bool:
        """Whether a fit with ``spec`` builds DAGs of one-sensor additions on
        an any-subset bank (``dag="sparse"``, ``"chain"`` or ``"routed"``, or ``"auto"``
        without ``n_subsets`` beyond 12 sensors, or where the full DAG's
        estimated bank fit on ``n_rows`` rows is long: a regressor's bank of
        one model per state, see ``estimator._dag_choice``) rather than the
        full DAG or the DAG over Alg. 2's subsets.

        Parameters
        ----------
        spec : SensorSpec
        n_rows : int, optional
            The training rows (None: the rule on the number of sensors only).

        Returns
        -------
        bool

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, SensorSpec
        >>> spec = SensorSpec.per_column([f"x{i}" for i in range(20)])
        >>> BudgetDAGClassifier(spec).builds_sparse_dag(spec)
        True
        >>> BudgetDAGClassifier(spec, n_subsets=4).builds_sparse_dag(spec)
        False
        """
        check_n_rows(n_rows)
        kind = getattr(self, "dag", "full")
        if kind in ("sparse", "chain", "routed"):
            if self.n_subsets is not None:
                raise ValueError(
                    f"dag={short_repr(kind)} builds its own states: leave "
                    "n_subsets=None."
                )
            return True
        return (
            kind == "auto"
            and self.n_subsets is None
            and (
                spec.n_sensors > MAX_FULL_DAG_SENSORS
                or full_dag_too_slow(self, spec.n_sensors, n_rows)
            )
        )

    def _strategies(self) -> tuple[str, ...]:
        """The many-sensor strategies this fit builds (``"auto"``: both,
        one kept on validation rows, simplest first; see
        ``budgetdag_core.strategies``)."""
        kind = getattr(self, "dag", "full")
        forced = {"sparse": ("grown",), "chain": ("chain",), "routed": ("routed",)}
        return forced.get(kind, SIMPLEST_FIRST)

    @property
    def strategy_(self) -> str:
        """How this model's states were built: ``"full"`` (every subset),
        ``"subsets"`` (unions of Alg. 2's subsets), ``"grown"``, ``"chain"``
        or ``"routed"`` (many sensors; with ``dag="auto"`` the one kept on
        validation rows, see :attr:`strategy_choice_`)."""
        check_is_fitted(self)
        if isinstance(self.sensor_dag_, SparseSensorDAG):
            return str(getattr(self.bank_, "strategy_", "grown"))
        return "full" if self.subset_selection_ is None else "subsets"

    @property
    def strategy_choice_(self) -> StrategyChoice:
        """The choice behind :attr:`strategy_`: with ``dag="auto"`` and many
        sensors, each strategy's held-out stop loss, cost and loss at this
        model's cost scale; where one strategy was built (or a full DAG),
        that strategy alone, without validation numbers (its ``table()``
        has one row)."""
        check_is_fitted(self)
        saved = getattr(self, "strategy_validation_", None)
        if saved is None:
            return StrategyChoice(self.strategy_)
        return StrategyChoice.from_dict(saved)

    def _growth_settings(self) -> dict:
        """The ``strategies.GrowthSettings`` of this
        estimator (part of its sparse bank's fingerprint)."""
        return {"max_states": int(getattr(self, "max_states", 1000))}

    def _new_sparse_bank(self) -> Any:
        """The unfitted any-subset bank of a many-sensor fit."""
        raise NotImplementedError

    def _fit_sparse_models(
        self,
        bank: Any,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        spec: SensorSpec,
        progress: Progress | None,
    ) -> Any:
        """Fit the any-subset bank's fold models (before any DAG is built)."""
        raise NotImplementedError

    def _growth_row_loss(self, y_fit: np.ndarray) -> Any:
        """The ``row_loss(rows, values)`` the strategies rank sensors by
        (see ``strategies.RowLoss``); None: their
        defaults (a classifier's expected loss and cross-entropy)."""
        return None

    def _fit_sparse_bank(
        self,
        spec: SensorSpec,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        costs: np.ndarray | None,
        progress: Progress | None,
    ) -> Any:
        """Fit the any-mask models and build each strategy's DAG on them: one
        bank per strategy (sharing the fold models), each bound to its DAG and
        knowing the others (``strategy_banks_``): a fit keeps one of them on
        validation rows at its own cost scale. ``dag="auto"`` leaves the
        grown DAG out on long tables
        (``strategies.strategies_to_build``). Where an
        ``"auto"`` bank's log loss leaves a rival kind close (``fit_rival``),
        that kind's bank is fitted too and its routed DAG joins the candidates (key
        ``strategies.strategy_key``): the policies,
        not the log loss at random subsets, then judge the kinds. Only the
        routed DAG: it is where an interaction the log loss missed pays
        (a routing sensor, then the sensors it points to); a rival's chain
        and grown DAG doubled the fit's time for no measured gain."""
        bank = self._fit_sparse_models(
            self._new_sparse_bank(), Xv, y_fit, spec, progress
        )
        banks = self._strategy_banks(bank, spec, Xv, y_fit, costs, progress)
        rival = None
        # Only where strategies are compared, and the routed DAG among them.
        compared = self._strategies()
        if hasattr(bank, "fit_rival") and len(compared) > 1 and "routed" in compared:
            rival = bank.fit_rival(
                Xv, y_fit, spec.column_indices(), bank.n_classes_, progress
            )
        if rival is not None:
            more = self._strategy_banks(
                rival, spec, Xv, y_fit, costs, progress, only=("routed",)
            )
            for name, one in more.items():
                one.strategy_key_ = strategy_key(name, rival.kind_)
                banks[one.strategy_key_] = one
        for one in banks.values():
            one.strategy_banks_ = banks
        return next(iter(banks.values()))

    def _strategy_banks(
        self,
        bank: Any,
        spec: SensorSpec,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        costs: np.ndarray | None,
        progress: Progress | None,
        only: tuple[str, ...] | None = None,
    ) -> dict[str, Any]:
        """Each strategy's DAG (``only`` these) built on ``bank``'s fold
        models: a copy of the bank bound to it, per strategy name (none for
        a routed DAG where no sensor's value says where to look)."""
        given = GrowthInputs(
            bank, Xv, y_fit, spec.names, spec.column_indices(),
            spec.cost_vector if costs is None else costs.mean(axis=0),
            GrowthSettings(**self._growth_settings()), self._seed,
            self._growth_row_loss(y_fit),
            required=self._strategies() == ("routed",),
            progress=None if progress is None
            else functools.partial(progress, "grown"),
        )  # fmt: skip
        banks = {}
        strategies = (
            strategies_to_build(self._strategies(), len(Xv)) if only is None else only
        )
        strategies = few_sensor_strategies(strategies, spec.n_sensors)
        if progress is not None:
            progress("strategies", 0, len(strategies))
        for done, name in enumerate(strategies, start=1):
            growth = grow_strategy(name, given)
            if growth is not None:  # None: no sensor's value says where to look
                banks[name] = copy.copy(bank).bind(growth, Xv, y_fit)
                growth.bank = banks[name]
                banks[name].strategy_ = name
            if progress is not None:
                progress("strategies", done, len(strategies))
        return banks

    def _choose_sparse_bank(
        self,
        bank: Any,
        spec: SensorSpec,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        costs: np.ndarray | None,
        progress: Progress | None = None,
    ) -> tuple[Any, dict | None]:
        """The bank of the strategy to fit (validation rows decide among the
        bank's strategies at this cost scale, the chosen bank kind's simplest
        first, then a rival kind's), and the validation numbers."""
        banks = getattr(bank, "strategy_banks_", None) or {
            getattr(bank, "strategy_", "grown"): bank
        }
        strategies = self._strategies()
        # A rival kind's banks are keyed "strategy@kind" (strategy_key).
        rivals = [
            key
            for name in strategies
            for key, one in banks.items()
            if key != name and getattr(one, "strategy_", None) == name
        ]
        wanted = [n for n in strategies if n in banks] + rivals
        if not wanted:
            raise ValueError(
                f"This bank holds the {sorted(banks)} DAG(s); "
                f"dag={short_repr(self.dag)} needs {list(self._strategies())}: refit "
                "the bank with it."
            )
        if len(wanted) == 1:
            return banks[wanted[0]], None
        n_classes = int(getattr(bank, "n_classes_", 0))  # 0: a regressor's
        choice = choose_strategy(
            {name: banks[name].sparse_growth_ for name in wanted},
            y_fit,
            self._sparse_inputs_for(spec, Xv, n_classes),
            self._sparse_stop_loss(bank, y_fit),
            self._sparse_stop_loss(bank, y_fit, kind="zero_one"),
            spec.cost_vector if costs is None else costs,
            self._make_learner(len(Xv)),
            [self.cost_scale],
            random_state=self._seed,
            progress=progress,
        )
        return banks[choice.strategy], choice.to_dict()

    def _sparse_inputs_for(self, spec: SensorSpec, Xv: np.ndarray, n_classes: int):
        """``inputs_for(growth)``: the ``state_inputs(k, rows, proba)`` of the
        policies on a grown DAG (its states, its ``"auto"`` value states)."""

        def inputs_for(growth: Any) -> Any:
            inputs = self._sparse_policy_inputs(growth, spec, n_classes)[-1]
            return lambda k, rows, proba: inputs.of_rows(Xv, k, rows, proba=proba)

        return inputs_for

    def _sparse_policy_inputs(
        self, growth: Any, spec: SensorSpec, n_classes: int
    ) -> tuple[Any, np.ndarray | None, np.ndarray | None, PolicyInputs]:
        """State columns, ``"auto"`` value and route states, and policy inputs
        of a grown DAG."""
        state_cols = growth.dag.state_columns(spec.column_indices())
        value_states = route_states = None
        if self._input_kind() == "auto":
            spreads = state_spreads(growth)
            value_states = np.nan_to_num(spreads, nan=1.0) < CONSTANT_STATE_SPREAD
            value_states[0] = False
            # A routing sensor's state picks its route by the sensor's values,
            # which the probabilities alone need not show: an any-subset
            # network's posterior there can spread with noise (CUBE-NM's
            # context), or with what the sensor says of the class (a pixel).
            route_states = np.zeros(growth.dag.n_states, dtype=bool)
            route_states[list(growth.route_states)] = True
            route_states &= ~value_states
        inputs = self._inputs(
            state_cols, n_classes, value_states, sparse=True, route_states=route_states
        )
        return state_cols, value_states, route_states, inputs

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
        bank, choice = self._choose_sparse_bank(bank, spec, Xv, y_fit, costs, progress)
        growth = bank.sparse_growth_
        dag = growth.dag
        state_cols, value_states, route_states, inputs = self._sparse_policy_inputs(
            growth, spec, len(target_attrs.get("classes_", ()))
        )
        if progress is not None:
            progress("policies", 0, dag.n_states)
        result = graph_reduce(
            lambda k, rows, proba: inputs.of_rows(Xv, k, rows, proba=proba),
            self._sparse_stop_loss(bank, y_fit),
            spec.cost_vector if costs is None else costs,
            growth,
            self._make_learner(len(Xv)),
            cost_scale=self.cost_scale,
            n_jobs=self.n_jobs,
            progress=progress,
        )
        self._set_fitted(
            spec, target_attrs, None, dag, state_cols, bank, value_states, result,
            route_states=route_states,
        )  # fmt: skip
        self.strategy_validation_ = choice
        return self

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
        route_states: Any = None,
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
        self.strategy_validation_ = None
        self.route_states_ = route_states
        self.cost_scale_ = float(self.cost_scale)  # "auto" resolves on a clone
        self.cost_scale_search_ = None
        self.cv_ = self.cv  # fewer on small data: estimator._small_data
        return self

    def _sparse_stop_loss(
        self, bank: Any, y_fit: np.ndarray, kind: str | None = None
    ) -> Any:
        """``stop_loss(rows, proba)`` of Graph-Reduce on a sparse DAG (``kind``:
        another stop loss than the policies', e.g. ``"zero_one"`` to judge
        them on validation rows)."""
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
        DAG (so also its selected sensor subsets).

        Parameters
        ----------
        X : DataFrame
            The training table this model was fitted on.
        y : array-like of shape (n_samples,)
            Its target.
        cost_scale : float
            The new weight of acquisition cost against one unit of loss.
        sample_costs : DataFrame (rows x sensor names), optional
            Example-dependent costs, as in ``fit``.
        progress : callable(stage, done, total), optional
            Told how the policies (``"policies"``) progress.

        Returns
        -------
        BudgetDAGClassifier or BudgetDAGRegressor
            A new fitted model; this one is unchanged.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
        >>> demo = toy_dataset(300, 20)
        >>> model = BudgetDAGClassifier(
        ...     demo.spec, cost_scale=0.05, cv=2, random_state=0
        ... ).fit(demo.X_train, demo.y_train)
        >>> frugal = model.refit_policies(demo.X_train, demo.y_train, cost_scale=1.0)
        >>> frugal.cost_scale, frugal.bank_ is model.bank_
        (1.0, True)
        >>> frugal.evaluate(demo.X_test, demo.y_test)["avg_cost"]
        0.0
        """
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
        self, X: pd.DataFrame, y: Any, *, sample_costs: Any = None
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

        Returns
        -------
        dict of str to float
            - ``error`` (classifier): the fraction of misclassified examples;
            - ``mse`` and ``mae`` (regressor): mean squared and absolute error;
            - ``avg_cost``: the mean acquisition cost per example (spec units,
              without ``cost_scale``);
            - ``avg_sensors``: the mean number of sensors acquired;
            - ``n_samples``: the number of examples (an int);
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
        pred = tr["prediction"].to_numpy()
        out: dict[str, float] = {
            **self._metrics(pred, y),
            "avg_cost": _finite_mean(tr["cost"].to_numpy()),
            "avg_sensors": float(tr["n_sensors"].mean()),
            "n_samples": len(tr),
        }
        out["avg_loss"] = float(
            self._row_loss(pred, y).mean() + self.cost_scale_ * out["avg_cost"]
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

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        # Whether X may hold NaN (a value not measured): the fitted spec's
        # answer once fitted (beyond 12 sensors any bank takes them).
        spec = getattr(self, "spec_", None)
        tags.input_tags.allow_nan = self._nan_refused(spec) is None
        return tags
