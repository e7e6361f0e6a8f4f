"""The fit the classifier and the regressor share, one sequence for every
DAG (see ``estimator._plans``): checked data, the plan, its bank, its policy
problem, Graph-Reduce.

A subclass supplies the task through the hooks of ``FitHooks`` (fitting) and
``InferenceMixin`` (predictions, losses, metrics).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._compiled import warm_up
from .._progress import Progress, progress_for
from ..graph_reduce import GraphReduceResult, NodePolicy, graph_reduce
from ..sensors import SensorSpec
from ..strategies import StrategyChoice
from ..validation import (
    MAX_CV,
    MAX_N_SUBSETS,
    align_rows,
    as_spec,
    check_features,
    check_sample_costs,
    check_sensor_count,
    spec_for,
)
from ._auto_scale import AutoScaleMixin
from ._inference import InferenceMixin
from ._inputs import PolicyInputs
from ._plans import (
    FitHooks,
    FitPlan,
    PolicyProblem,
    TrainingData,
    fitted_plan,
    plan_for,
)
from ._policy import POLICY_LEARNERS, PolicyRoutingMixin
from ._small_data import SmallDataMixin, lowered_cv
from ._weights import fit_sample_weight

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


class BudgetDAGBase(
    FitHooks,
    InferenceMixin,
    AutoScaleMixin,
    SmallDataMixin,
    PolicyRoutingMixin,
    BaseEstimator,
):
    """Shared machinery of :class:`BudgetDAGClassifier` and
    :class:`BudgetDAGRegressor` (not for direct use)."""

    def _prepare_target(self, y: Any, n_rows: int) -> tuple[np.ndarray, dict]:
        """Checked target as used for fitting, and fitted attributes to set."""
        raise NotImplementedError

    def _record_target(self, y: Any, n_rows: int) -> np.ndarray:
        """The training target of a fitted model as its fit used it (for
        :meth:`graph_reduce_record`)."""
        raise NotImplementedError

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

    def fit_plan(self, spec: SensorSpec, n_rows: int | None = None) -> FitPlan:
        """How a fit with ``spec`` on ``n_rows`` rows builds its states: the
        plan whose steps ``fit`` runs (``fit_bank``, ``problem``), and which
        the sweeps and the fit-time estimate call alike.

        Parameters
        ----------
        spec : SensorSpec
        n_rows : int, optional
            The training rows (None: the rule on the number of sensors only).

        Returns
        -------
        FitPlan
            ``EveryRowPlan`` (every subset, or the unions of Alg. 2's
            subsets: every row reaches every state) or ``GrownPlan`` (many
            sensors: DAGs grown on an any-subset bank, see
            :meth:`builds_sparse_dag`); ``strategies()`` names what it grows.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGClassifier, SensorSpec
        >>> spec = SensorSpec.per_column([f"x{i}" for i in range(20)])
        >>> BudgetDAGClassifier(spec).fit_plan(spec).strategies()
        {'chain': 21, 'routed': 684}
        >>> BudgetDAGClassifier(spec, dag="sparse").fit_plan(spec).strategies()
        {'grown': 1000}
        >>> BudgetDAGClassifier(spec, dag="chain").fit_plan(spec).strategies()
        {'chain': 21}
        >>> type(BudgetDAGClassifier(spec, n_subsets=4).fit_plan(spec)).__name__
        'EveryRowPlan'
        """
        return plan_for(self, spec, n_rows)

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
        return self.fit_plan(spec, n_rows).grows_states

    @property
    def policy_degree_(self) -> int:
        """The polynomial degree of policy features (``None`` resolved): 2 on
        sensor values (the paper, and ``"sensors+confidence"``), 1 where the
        inputs hold the classifier's probabilities (chosen by measurement: as
        accurate, and the inputs are already nonlinear)."""
        if self.policy_degree is not None:
            return int(self.policy_degree)
        return 2 if self._input_kind() in ("sensors", "sensors+confidence") else 1

    def _fit_reporting(
        self, X: Any, y: Any, sample_costs: Any, bank: Any, progress: Any, **kw: Any
    ) -> BudgetDAGBase:
        """``_fit``, drawing ``verbose``'s progress bar when no ``progress``
        callback is given (the bar reaches its end with the fit)."""
        self._validate_params()
        progress, bar = progress_for(self.verbose, progress, "fit")
        if bar is None:
            return self._fit(
                X, y, sample_costs=sample_costs, bank=bank, progress=progress, **kw
            )
        with bar:
            return self._fit(
                X, y, sample_costs=sample_costs, bank=bank, progress=bar, **kw
            )

    def _nan_refused(self, spec: SensorSpec | None) -> str | None:
        """Why this estimator refuses missing values (NaN) in ``X``, or None:
        the default banks take them (boosting routes a NaN to a learned side,
        a masked bank reads it as a sensor not acquired) and the policies see
        a missing value as 0 (``PolicyInputs``). ``spec`` None: not yet known
        (scikit-learn's tags)."""
        return plan_for(self, spec).nan_refused()

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
        data = self._training_data(X, y, None)
        classes = data.target_attrs.get("classes_")
        return data.spec, data.Xv, data.y_fit, classes

    def _training_data(
        self, X: Any, y: Any, sample_costs: Any, sample_weight: Any = None
    ) -> TrainingData:
        """:meth:`check_fit_data`, with the example-dependent costs and the
        row weights."""
        spec = self._fit_spec(X)
        Xv = check_features(X, spec, nan_refused=self._nan_refused(spec))
        y_fit, target_attrs = self._prepare_target(align_rows(X, y, "y"), len(Xv))
        sample_costs = align_rows(X, sample_costs, "sample_costs")
        costs = check_sample_costs(sample_costs, spec, len(Xv))
        weights = fit_sample_weight(self, X, sample_weight, spec, y_fit)
        return TrainingData(spec, Xv, y_fit, target_attrs, costs, weights)

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
            :class:`~budgetdag_core.bank.RegressorBank`, as ``fit`` would build;
            beyond 12 sensors a
            ``budgetdag_core.strategies.StrategyBanks``: each
            strategy's DAG, bound to a copy of the any-subset bank
            (``SparseMaskedBank``, ``SparseRegressorBank``), among which
            ``fit`` chooses at its cost scale.

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
        data = self._training_data(X, y, None)
        return self.fit_plan(data.spec, data.n_rows).fit_bank(data, progress)

    @property
    def inputs_(self) -> PolicyInputs:
        """What the policy at each state sees (see ``PolicyInputs``)."""
        check_is_fitted(self)
        n_classes = len(self.classes_) if hasattr(self, "classes_") else 0
        return self._inputs(
            self.state_columns_,
            n_classes,
            self.value_states_,
            fitted_plan(self).value_kind,
            getattr(self, "route_states_", None),
        )

    def _fit(
        self,
        X: pd.DataFrame,
        y: Any,
        *,
        sample_costs: Any,
        bank: Any,
        progress: Progress | None,
        dag: Any = None,
        selection: Any = None,
        sample_weight: Any = None,
        data: TrainingData | None = None,
        incumbent: str | None = None,
    ) -> BudgetDAGBase:
        """The fit: checked data → the plan → its bank (or ``bank``) → its
        policy problem (states, stop losses, inputs) → Graph-Reduce. ``dag``,
        ``selection``, ``incumbent``: a fitted model's own (``refit_policies``;
        a close call keeps the candidate ``incumbent``); ``data``: ``X``,
        ``y``, the costs and weights checked (the auto-scale search's trials)."""
        self._validate_params()
        cv = lowered_cv(self, y)  # small data: see estimator._small_data
        if cv is not None:
            return self._fit_with_cv(
                cv, X, y, sample_costs=sample_costs, bank=bank,
                progress=progress, dag=dag, selection=selection,
                sample_weight=sample_weight, incumbent=incumbent,
            )  # fmt: skip
        if data is None:
            data = self._training_data(X, y, sample_costs, sample_weight)
        if isinstance(self.cost_scale, str):  # "auto": see estimator._auto_scale
            return self._fit_auto_scale(
                X, y, sample_costs=sample_costs, bank=bank,
                progress=progress, dag=dag, selection=selection,
                sample_weight=sample_weight, data=data,
            )  # fmt: skip
        warm_up()  # the kernels the fit will need, compiled meanwhile if missing
        top = float(np.sum(data.acquisition_costs, axis=-1).max())
        if not np.isfinite(self.cost_scale * top):
            raise ValueError(
                f"cost_scale={self.cost_scale} times the largest total cost ({top:g}) "
                "is not a finite number: lower cost_scale or rescale the costs."
            )
        plan = self.fit_plan(data.spec, data.n_rows)
        if bank is None:
            bank = plan.fit_bank(data, progress)
        else:
            plan.check_bank(bank, data, dag)
        problem = plan.problem(data, bank, progress, dag, selection, incumbent)
        result = graph_reduce(
            problem.state_inputs,
            problem.stop_loss,
            data.acquisition_costs,
            problem.walk,
            self._make_learner(data.n_rows),
            cost_scale=self.cost_scale,
            n_jobs=self.n_jobs,
            progress=progress,
            sample_weight=data.sample_weight,
        )
        # Only now, with everything computed, touch the estimator's state.
        return self._set_fitted(data, problem, result)

    def _fit_warned(
        self, X: Any, y: Any, *, sample_costs: Any, bank: Any, progress: Any, **kw: Any
    ) -> BudgetDAGBase:
        """``fit``: :meth:`_fit`, then a ``NothingBoughtWarning`` where the
        policies buy nothing although a sensor helps (only where the fit made
        its bank: a sweep's policies on a given bank buy nothing at high
        scales by design). ``verbose`` draws its bar (:meth:`_fit_reporting`);
        ``feature_names_in_`` as scikit-learn sets it."""
        self._fit_reporting(X, y, sample_costs, bank, progress, **kw)
        self._strip_held_out()
        if bank is None:
            self._warn_if_nothing_bought(X, y, sample_costs)
        return self._keep_feature_names(X)

    def _strip_held_out(self) -> None:
        """The choice's held-out DAGs kept with what a refit reuses of their
        tables (``StrategyBanks.strip_held_out``)."""
        candidates = getattr(self, "strategy_banks_", None)
        if candidates is not None:
            candidates.strip_held_out()

    # ------------------------------------------------------------ strategy
    @property
    def strategy_choice_(self) -> StrategyChoice:
        """The choice behind ``strategy_``: with ``dag="auto"`` and many
        sensors, each strategy's held-out stop loss, cost and loss at this
        model's cost scale; where one strategy was built (or a full DAG),
        that strategy alone, without validation numbers (its ``table()``
        has one row)."""
        check_is_fitted(self)
        saved = getattr(self, "strategy_validation_", None)
        if saved is None:
            return StrategyChoice(self.strategy_)
        return StrategyChoice.from_dict(saved)

    def _set_fitted(
        self, data: TrainingData, problem: PolicyProblem, result: GraphReduceResult
    ) -> BudgetDAGBase:
        """Set the fitted attributes at once, after everything is computed (a
        failed fit leaves the estimator as it was)."""
        self.spec_ = data.spec
        for name, value in data.target_attrs.items():
            setattr(self, name, value)
        self.feature_names_in_ = np.asarray(data.spec.columns, dtype=object)
        self.n_features_in_ = len(data.spec.columns)
        self.subset_selection_ = problem.selection
        self.sensor_dag_ = problem.dag
        self.dag_ = problem.dag.to_networkx()
        self.state_columns_ = problem.state_columns
        self.bank_ = problem.bank
        self.value_states_ = problem.value_states
        self.policies_: list[NodePolicy] = result.policies
        self.train_cost_to_go_ = result.root_cost_to_go()
        self.strategy_ = problem.strategy
        self.strategy_banks_ = problem.candidates
        self.strategy_validation_ = problem.choice
        self.route_states_ = problem.route_states
        self.cost_scale_ = float(self.cost_scale)  # "auto" resolves on a clone
        self.cost_scale_search_ = None
        self.cv_ = self.cv  # fewer on small data: estimator._small_data
        return self

    def refit_policies(
        self,
        X: pd.DataFrame,
        y: Any,
        cost_scale: float,
        *,
        sample_costs: Any = None,
        progress: Progress | None = None,
        sample_weight: Any = None,
    ) -> BudgetDAGBase:
        """A new model with another ``cost_scale``, reusing this model's bank and
        DAG (so also its selected sensor subsets; many sensors: its candidate
        DAGs, ``strategy_banks_``, chosen among again at the new scale, where
        a close call keeps this model's strategy if it is within one
        standard error on the first held-out split: ``kept_incumbent`` in
        ``strategy_choice_``).

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
        sample_weight : array-like of shape (n_samples,), optional
            The row weights given to ``fit``, if any (the bank was fitted
            with them).

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
        other._fit(
            X,
            y,
            sample_costs=sample_costs,
            # Many sensors: every candidate DAG, chosen among at this scale.
            bank=self.strategy_banks_ or self.bank_,
            progress=progress,
            dag=self.sensor_dag_,
            selection=self.subset_selection_,
            sample_weight=sample_weight,
            incumbent=fitted_plan(self).refit_incumbent(self),
        )
        other._strip_held_out()
        return other

    def graph_reduce_record(
        self, X: pd.DataFrame, y: Any, *, sample_costs: Any = None
    ) -> GraphReduceResult:
        """Graph-Reduce on the training data again, with the fitted policies.

        Replays the leaf-to-root walk of ``fit`` (:func:`graph_reduce` with
        ``replay=self.policies_, record=True``) on the model's own DAG, of
        whatever strategy: each state's action cost table, each row's
        cost-to-go and the action each policy picks, on the policy inputs the
        model was trained on (a classifier's confidence features included;
        the stop column is the out-of-fold loss of the state's model).
        Nothing is refitted; the bank must keep its out-of-fold outputs (a
        fitted model's does, a slim saved one's not).

        Parameters
        ----------
        X, y : the training data the model was fitted on.
        sample_costs : optional
            The example-dependent costs given to ``fit``, if any.

        Returns
        -------
        GraphReduceResult
            With ``tables``; ``cost_to_go[:, 0]`` equals ``train_cost_to_go_``.

        Examples
        --------
        >>> import numpy as np
        >>> from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor
        >>> from budgetdag_core import toy_dataset
        >>> demo = toy_dataset(200, 10)
        >>> record = (
        ...     BudgetDAGClassifier(demo.spec, cv=3, random_state=0)
        ...     .fit(demo.X_train, demo.y_train)
        ...     .graph_reduce_record(demo.X_train, demo.y_train)
        ... )
        >>> [table.shape[1] for table in record.tables]  # stop + one per child
        [4, 3, 3, 3, 2, 2, 2, 1]
        >>> y = 2 * demo.X_train["precise"]
        >>> model = BudgetDAGRegressor(demo.spec, regressor="ridge", cost_scale=0.01,
        ...                            cv=3, random_state=0).fit(demo.X_train, y)
        >>> record = model.graph_reduce_record(demo.X_train, y)
        >>> bool(np.allclose(record.cost_to_go[:, 0], model.train_cost_to_go_))
        True
        """
        Xv = self._features(X)
        plan = fitted_plan(self)
        plan.check_replay(self, Xv)
        y_fit = self._record_target(align_rows(X, y, "y"), len(Xv))
        sample_costs = align_rows(X, sample_costs, "sample_costs")
        costs = check_sample_costs(sample_costs, self.spec_, len(Xv))
        state_inputs, stop_loss, walk = plan.replay_problem(self, Xv, y_fit)
        return graph_reduce(
            state_inputs,
            stop_loss,
            self.spec_.cost_vector if costs is None else costs,
            walk,
            None,
            cost_scale=self.cost_scale_,
            replay=self.policies_,
            record=True,
        )

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        # Whether X may hold NaN (a value not measured): the fitted spec's
        # answer once fitted (beyond 12 sensors any bank takes them).
        spec = getattr(self, "spec_", None)
        tags.input_tags.allow_nan = self._nan_refused(spec) is None
        return tags
