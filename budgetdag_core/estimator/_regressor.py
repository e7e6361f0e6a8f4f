"""``BudgetDAGRegressor``: adaptive sensor acquisition for regression (section 2.4).

The stop loss D(x, y, s) of the paper's eq. 9 is the squared or absolute error of
the state's regressor (out-of-fold); everything else is the classifier's machinery,
beyond 12 sensors too: the same DAG strategies (chain and routed, one kept on
validation rows) on an any-subset regressor bank
(``budgetdag_core.bank.SparseRegressorBank``), then Graph-Reduce.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import RegressorMixin
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import column_or_1d

from .._bounded_io import short_repr
from .._progress import Progress
from ..bank import (
    REGRESSOR_KINDS,
    SPARSE_REGRESSOR_KINDS,
    RegressorBank,
    SparseRegressorBank,
    regressor_template,
)
from ..dag import SensorDAG
from ..sensors import SensorSpec
from ..strategies import MAX_SPARSE_STATES
from ._base import COMMON_CONSTRAINTS, BudgetDAGBase

#: Largest target magnitude accepted. The boosting bank keeps gradients in
#: float32 (at most 3.4e38: larger targets gave constant predictions) and the
#: policies learn from squared losses and their differences (targets of 1e38
#: overflowed there); 1e30 leaves room for both.
MAX_ABS_TARGET = 1e30


def check_targets(y: Any, n_rows: int) -> np.ndarray:
    """Regression targets as a finite float vector, or a ``ValueError``."""
    if y is None:
        raise ValueError(
            "This estimator requires y to be passed, but the target y is None."
        )
    y = column_or_1d(y, warn=True)
    if len(y) != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {len(y)} targets.")
    try:
        values = y.astype(float)
    except (TypeError, ValueError):
        i = next(i for i, v in enumerate(y) if not _is_number(v))
        raise ValueError(
            f"Target at row {i} is not a number: {short_repr(y[i])}."
        ) from None
    finite = np.isfinite(values)
    if not finite.all():
        first = int(np.flatnonzero(~finite)[0])
        raise ValueError(
            f"{int((~finite).sum())} target(s) are missing or infinite (first at "
            f"row {first}): drop or impute them."
        )
    huge = np.abs(values) > MAX_ABS_TARGET
    if huge.any():
        first = int(np.flatnonzero(huge)[0])
        raise ValueError(
            f"The target y has {int(huge.sum())} value(s) of magnitude above "
            f"{MAX_ABS_TARGET:g} (first at row {first}: {values[first]:g}), too "
            "large for the regressor bank and the squared losses: rescale it "
            "(e.g. other units)."
        )
    return values


def _is_number(v: Any) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


class BudgetDAGRegressor(RegressorMixin, BudgetDAGBase):
    """Learn which sensor to acquire next, or to stop and predict, per example.

    The regression counterpart of :class:`~budgetdag_core.BudgetDAGClassifier`:
    a bank of regressors, one per sensor subset, whose out-of-fold squared or
    absolute errors are the stop losses Graph-Reduce trades against acquisition
    costs. Beyond 12 sensors (without ``n_subsets``) it builds its states as the
    classifier does: DAGs of one-sensor additions (the chain of one greedy
    order, and the chain routed by a sensor's value) on one any-subset masked
    regressor per fold, one of them kept on validation rows (``dag="auto"``).

    Parameters
    ----------
    sensors : SensorSpec, dict, JSON text or None, default=None
        As in :class:`BudgetDAGClassifier` (None: one unit-cost sensor per
        column).
    cost_scale : float or "auto", default="auto"
        Weight of acquisition cost against one unit of loss (y units squared for
        ``loss="squared"``, y units for ``"absolute"``).
        ``"auto"``: the bank is fitted once and the policies learned at a
        few scales on it; the one kept has the least average cost on the
        training rows, with the bank's out-of-fold predictions, among those
        whose out-of-fold error is within 10 % of the richest state's (all
        sensors on a full DAG); see ``budgetdag_core.estimator._auto_scale``.
        The chosen number is in ``cost_scale_``, the scales tried and the
        reason in ``cost_scale_search_``. A ``fit`` whose policy buys nothing
        although a first sensor lowers the out-of-fold error warns
        (:class:`~budgetdag_core.NothingBoughtWarning`).
    regressor : {"boosting", "ridge"}, scikit-learn regressor or None, default=None
        Cloned per state for the bank. None or ``"boosting"``: early-stopped
        gradient boosting with small trees, fitted single-threaded
        (``boosting_regressor()``, seeded by
        ``random_state``); ``"ridge"``: standardised ridge regression (the
        default before boosting; much faster, weaker on nonlinear targets).
        With many sensors (a sparse DAG) the bank is one masked model per fold
        for every sensor subset (``budgetdag_core.bank.SparseRegressorBank``):
        ``"boosting"`` LightGBM boosting (the same small early-stopped trees)
        on rows whose unacquired columns are missing, ``"ridge"`` a ridge
        regression on the values times the mask and the mask, and None the
        one of the two of least squared error on validation rows carved from
        the training rows (``bank_.kind_``, ``bank_.validation_``); an
        estimator is refused there.
    loss : {"squared", "absolute"}, default="squared"
        Stop loss of a state's prediction.
    policy_learner, policy_degree, random_state, n_jobs, max_policy_features
        As in :class:`~budgetdag_core.BudgetDAGClassifier`.
    cv : int, default=5
        Folds (``KFold``, shuffled) of the out-of-fold predictions, 2 to
        ``MAX_CV`` (20); on fewer rows (at least 2), that many (``cv_``).
    n_subsets, subset_budget, include_all, subset_scorer
        Subset selection for many sensors (Alg. 2), as in the classifier; the
        reward of a subset on a row is how much it lowers the row's loss below
        the mean predictor's. ``subset_scorer`` is ``"ridge"`` or a regressor.
        Not needed beyond 12 sensors: without it the default builds a sparse
        DAG (``dag``).
    dag : {"auto", "full", "sparse", "chain", "routed"}, default="auto"
        The states, as in :class:`~budgetdag_core.BudgetDAGClassifier`:
        ``"full"``, every sensor subset (at most 12 sensors), or with
        ``n_subsets`` the unions of Alg. 2's subsets; ``"sparse"``, a DAG of
        one-sensor additions grown where the training rows' out-of-fold
        squared (or absolute) error drops most per unit cost; ``"chain"``, the
        prefixes of one greedy order (each sensor next that lowers the
        out-of-fold error most per unit cost); ``"routed"``, the chain plus a
        routing sensor and one greedy order per group of its values;
        ``"auto"``: beyond 12 sensors without ``n_subsets``, the simpler of
        the chain and the routed DAG whose held-out loss
        (``loss`` + ``cost_scale`` x cost) is within one standard error of
        the best on validation rows carved from the training data
        (``strategy_``, :attr:`strategy_choice_`), else ``"full"``;
        with at most 12 sensors, the chain and routed DAGs where the full
        DAG's bank of one model per state and fold would take over a
        second (estimated: ``budgetdag_core.estimator._dag_choice``; from 4
        sensors on a few dozen rows).
    max_states : int, default=1000
        Most states a sparse DAG grows, 2 to ``MAX_SPARSE_STATES`` (20 000).
    verbose : int, default=0
        As in the classifier: 1 or more draws a progress bar through ``fit``.

    Attributes
    ----------
    spec_, dag_, sensor_dag_, policies_, feature_names_in_, subset_selection_
        As in the classifier.
    cost_scale_, cost_scale_search_, cv_
        As in the classifier (the margin of ``"auto"``: 10 % of the richest
        state's out-of-fold loss).
    bank_ : RegressorBank or SparseRegressorBank
        A regressor per state, or (a sparse DAG) the any-subset masked
        regressors of its folds.
    strategy_, strategy_banks_
        As in the classifier.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    >>> y = 3 * X["a"] + rng.normal(scale=0.1, size=200)
    >>> spec = SensorSpec.per_column(["a", "b"], cost=0.1)
    >>> model = BudgetDAGRegressor(spec, random_state=0).fit(X, y)
    >>> model.trace(X)["acquired"].iloc[0]
    ('a',)

    Beyond 12 sensors the default builds a sparse DAG (here 14 sensors, only
    ``x0`` matters):

    >>> X = pd.DataFrame(rng.normal(size=(300, 14))).add_prefix("x")
    >>> y = 2 * X["x0"] + rng.normal(scale=0.1, size=300)
    >>> model = BudgetDAGRegressor(cost_scale=0.01, cv=3, random_state=0).fit(X, y)
    >>> model.strategy_ in ("chain", "routed", "grown")
    True
    >>> model.trace(X)["acquired"].iloc[0]
    ('x0',)
    """

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "regressor": [
            StrOptions(set(REGRESSOR_KINDS)),
            HasMethods(["fit", "predict"]),
            None,
        ],
        "loss": [StrOptions({"squared", "absolute"})],
        "subset_scorer": [StrOptions({"ridge"}), HasMethods(["fit", "predict"])],
        "dag": [StrOptions({"auto", "full", "sparse", "chain", "routed"})],
        "max_states": [Interval(Integral, 2, MAX_SPARSE_STATES, closed="both")],
    }

    def __init__(
        self,
        sensors: SensorSpec | dict | str | None = None,
        *,
        cost_scale: float | str = "auto",
        regressor: Any = None,
        loss: str = "squared",
        policy_learner: str | Any = "filter_tree",
        policy_degree: int = 2,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
        max_policy_features: int = 1000,
        n_subsets: int | None = None,
        subset_budget: float | None = None,
        include_all: bool = False,
        subset_scorer: Any = "ridge",
        dag: str = "auto",
        max_states: int = 1000,
        verbose: int = 0,
    ) -> None:
        self.sensors = sensors
        self.cost_scale = cost_scale
        self.regressor = regressor
        self.loss = loss
        self.policy_learner = policy_learner
        self.policy_degree = policy_degree
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.max_policy_features = max_policy_features
        self.n_subsets = n_subsets
        self.subset_budget = subset_budget
        self.include_all = include_all
        self.subset_scorer = subset_scorer
        self.dag = dag
        self.max_states = max_states
        self.verbose = verbose

    # ---------------------------------------------------------------- hooks
    def _selection_task(self) -> dict[str, str]:
        return {"task": "regression", "loss": self.loss, "reward": "correct"}

    def _prepare_target(self, y: Any, n_rows: int) -> tuple[np.ndarray, dict]:
        y = check_targets(y, n_rows)
        if n_rows < self.cv:
            raise ValueError(
                f"n_samples={n_rows} rows are fewer than cv={self.cv} folds."
            )
        return y, {}

    def _record_target(self, y: Any, n_rows: int) -> np.ndarray:
        return check_targets(y, n_rows)

    def _bank_template(self) -> Any:
        return regressor_template(self.regressor, self._seed)

    def _bank_nan_refused(self, spec: SensorSpec | None) -> str | None:
        regressor = self.regressor
        if regressor == "ridge":
            return (
                'regressor="ridge" fits a ridge regression per state, which '
                "needs every value"
            )
        custom = regressor is not None and not isinstance(regressor, str)
        if custom and not get_tags(regressor).input_tags.allow_nan:
            return f"regressor={type(regressor).__name__} does not accept NaN"
        return None

    def _new_bank(self, dag: SensorDAG | None = None) -> RegressorBank:
        return RegressorBank(
            self._bank_template(),
            cv=self.cv,
            random_state=self._seed,
            n_jobs=self.n_jobs,
        )

    def _fit_bank(
        self,
        bank: RegressorBank,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        dag: SensorDAG,
        spec: SensorSpec,
        progress: Progress | None,
        sample_weight: np.ndarray | None = None,
    ) -> RegressorBank:
        return bank.fit(
            Xv, y_fit, dag, spec.column_indices(), progress, sample_weight=sample_weight
        )

    def _stop_losses(self, bank: RegressorBank, y_fit: np.ndarray) -> np.ndarray:
        return bank.oof_losses(y_fit, self.loss)

    def _new_sparse_bank(self) -> SparseRegressorBank:
        kind = "auto" if self.regressor is None else self.regressor
        if not isinstance(kind, str) or kind not in SPARSE_REGRESSOR_KINDS:
            raise ValueError(
                "A sparse DAG needs an any-subset masked regressor bank: leave "
                "regressor=None (the masked model chosen on validation rows) or use "
                f"one of {list(SPARSE_REGRESSOR_KINDS[1:])}; got {short_repr(kind)}."
            )
        return SparseRegressorBank(
            kind,
            cv=self.cv,
            random_state=self._seed,
            n_jobs=self.n_jobs,
            growth=self._growth_settings(),
        )

    def _fit_sparse_models(
        self,
        bank: SparseRegressorBank,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        spec: SensorSpec,
        progress: Progress | None,
        sample_weight: np.ndarray | None = None,
    ) -> SparseRegressorBank:
        return bank.fit_models(
            Xv, y_fit, spec.column_indices(), progress, sample_weight=sample_weight
        )

    def _sparse_stop_loss(
        self, bank: Any, y_fit: np.ndarray, kind: str | None = None
    ) -> Any:
        # One loss both teaches the policies and judges them (``kind`` names
        # a classifier's other losses): what ``evaluate`` reports.
        def stop_loss(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
            return self._row_loss(values[:, 0], y_fit[rows])

        return stop_loss

    def _growth_row_loss(self, y_fit: np.ndarray) -> Any:
        """The out-of-fold error of the bank's predictions (``loss``), by row:
        the strategies rank sensors by how much they lower it."""

        def row_loss(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
            target = y_fit[rows].reshape((-1,) + (1,) * (values.ndim - 2))
            return self._row_loss(values[..., 0], target)

        return row_loss

    def predict_at(self, Xv: np.ndarray, stops: np.ndarray) -> np.ndarray:
        pred = np.zeros(len(Xv))
        for k in np.unique(stops):
            rows = np.flatnonzero(stops == k)
            pred[rows] = self.bank_.predict(Xv[rows], int(k))
        return pred

    def _check_eval_target(self, y: Any, n_rows: int) -> np.ndarray:
        return check_targets(y, n_rows)

    def _growth_loss_key(self) -> Any:
        return ("regression", self.loss)

    def _row_loss(self, pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        diff = np.asarray(pred, dtype=float) - y
        return diff**2 if self.loss == "squared" else np.abs(diff)

    def _metrics(
        self, pred: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None
    ) -> dict[str, float]:
        diff = np.asarray(pred, dtype=float) - y
        return {
            "mse": float(np.average(diff**2, weights=weight)),
            "mae": float(np.average(np.abs(diff), weights=weight)),
        }

    # ------------------------------------------------------------ public API
    def fit(
        self,
        X: pd.DataFrame,
        y: Any,
        *,
        sample_costs: pd.DataFrame | np.ndarray | None = None,
        bank: RegressorBank | None = None,
        progress: Progress | None = None,
        sample_weight: Any = None,
    ) -> BudgetDAGRegressor:
        """Fit the regressor bank (unless ``bank`` is given) and the policies.

        With ``n_subsets`` the sensor subsets are selected first; beyond 12
        sensors without it, the any-subset bank is fitted, the chain and routed
        DAGs built on it and one of them kept on validation rows (``dag``).

        Parameters
        ----------
        X : DataFrame with the spec's columns.
        y : array-like of shape (n_samples,)
            Numeric targets (finite).
        sample_costs : DataFrame (rows x sensor names), optional
            Example-dependent acquisition costs (eq. 9 of the paper); default
            the spec's costs. Subset selection uses their column means.
        bank : fitted RegressorBank or SparseRegressorBank, optional
            A bank fitted on the same data (e.g. ``other_model.bank_``): reused
            instead of refitted, so only the policies are learned. Beyond 12
            sensors also a ``StrategyBanks`` (``fit_bank``'s, or
            ``other_model.strategy_banks_``): the strategy is chosen among
            its DAGs at this cost scale.
        progress : callable(stage, done, total), optional
            Called as the subsets (``"subsets"``, with ``n_subsets`` only), the
            bank (``"bank"``) and the policies (``"policies"``) progress.
        sample_weight : array-like of shape (n_samples,), optional
            Row weights, finite and >= 0, not all 0 (a Series goes by X's
            index, as ``y`` does): a row of weight w counts as w copies of it,
            in every model of the bank (out-of-fold models, calibration,
            prior) and in Graph-Reduce's node problems (its action costs count
            w times), and in the ``cost_scale="auto"`` search. Rows of weight
            0 are left out of every fit. The folds are those of the rows. Also
            in ``n_subsets``'s subset selection (weighted ridge scores and
            rewards) and in the many-sensor DAGs (the any-subset bank, the
            strategies' gains, the validation choice among them). Refused
            (ValueError naming it) only by a bank model or ``subset_scorer``
            whose ``fit`` takes no ``sample_weight``.

        Returns
        -------
        BudgetDAGRegressor
            This estimator, fitted.

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGRegressor, toy_dataset
        >>> demo = toy_dataset(300, 20)  # predict 2 x the precise sensor's value
        >>> model = BudgetDAGRegressor(demo.spec, cost_scale=0.01, cv=2, random_state=0)
        >>> model = model.fit(demo.X_train, 2 * demo.X_train["precise"])
        >>> sorted(model.evaluate(demo.X_test, 2 * demo.X_test["precise"]))
        ['avg_cost', 'avg_loss', 'avg_sensors', 'mae', 'mse', 'n_samples']
        """
        return self._fit_warned(
            X, y, sample_costs=sample_costs, bank=bank, progress=progress,
            sample_weight=sample_weight,
        )  # fmt: skip

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Prediction of the regressor of each example's stop state.

        Parameters
        ----------
        X : DataFrame
            Examples with the spec's columns.

        Returns
        -------
        ndarray of float, shape (n_samples,)

        Examples
        --------
        >>> from budgetdag_core import BudgetDAGRegressor, toy_dataset
        >>> demo = toy_dataset(300, 20)  # predict 2 x the precise sensor's value
        >>> model = BudgetDAGRegressor(demo.spec, cost_scale=0.01, cv=2, random_state=0)
        >>> model = model.fit(demo.X_train, 2 * demo.X_train["precise"])
        >>> model.predict(demo.X_test).shape
        (20,)
        """
        Xv = self._features(X)
        return self.predict_at(Xv, self._route(Xv).stop_state)
