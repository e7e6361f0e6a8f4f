"""The any-subset regressor bank of a sparse DAG: the regression twin of
:class:`~budgetdag_core.bank.SparseMaskedBank`.

Beyond the full DAG's sensors a :class:`~budgetdag_core.BudgetDAGRegressor`
grows its states (and the chain of one greedy order) on one masked regressor
per fold, fitted on random sensor subsets of every training row (unacquired
columns NaN), so that each fold model predicts at any subset and scores the
rows it did not train on while the DAG grows. The models (``model``):

- ``"boosting"``: :func:`masked_boosting_regressor`, LightGBM boosting with
  the regressor bank's settings (small trees, early stopping), kept as
  arrays and scored at many subsets at once by the compiled kernels of the
  classifier's banks (:class:`~budgetdag_core.bank._lgbm_trees.LightGBMTrees`);
  it routes NaN natively, and each fold's model stops on its held-out rows'
  masks, as the classifier's sparse bank does;
- ``"ridge"``: :class:`MaskEncodedRegressor`, a ridge regression on AFABench's
  encoding (standardised values times the mask, then the mask): cheap, and
  on a few hundred rows with a target close to linear better than trees
  learning every subset;
- ``"auto"`` (the estimator's default): both fitted once on part of the rows
  under random subsets, the one of least squared error on the held-out rows
  under other random subsets kept (``kind_``, ``validation_``), then its fold
  models fitted on all rows.

A regression has no probabilities to calibrate: the bank's "probabilities" at a
state are its prediction (one column), and :meth:`SparseRegressorBank.bind`
only takes the grown DAG's states.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold

from .._integrity import check_array, check_indices, check_state_columns, fail
from .._progress import Progress
from .._threads import single_threaded
from ..dag import SensorDAG
from ..validation import MAX_CV, check_index, int_in, int_seed, real_in
from ._auto import (
    AUTO_VALIDATION_FRACTION,
    VALIDATION_MASKS,
    kind_steps,
    kind_trials,
)
from ._base import BaseBank, check_bank_settings, weight_key
from ._encoded import check_standardisation, check_width, encode, observed_moments
from ._integrity import check_fitted_model
from ._lgbm_trees import LightGBMRegressionTrees, LightGBMTrees
from ._masked import (
    MAX_MASKS_PER_ROW,
    fit_fold,
    fit_folds,
    stack_masked,
    subsets_per_row,
)
from ._sparse import column_masks, exact_in_blocks, out_of_fold, random_subsets

#: The masked regressors an any-subset regressor bank can fit.
MASKED_REGRESSOR_MODELS = ("boosting", "ridge")
#: ``SparseRegressorBank(model=...)``: a model, or ``"auto"`` (chosen on
#: validation rows among :data:`MASKED_REGRESSOR_MODELS`, in that order of
#: preference on ties).
SPARSE_REGRESSOR_KINDS = ("auto", *MASKED_REGRESSOR_MODELS)
#: (row, subset) pairs predicted per call when scoring many subsets at once.
PREDICT_CHUNK_PAIRS = 200_000
#: Share of a fold's training rows a boosting model of ``"auto"``'s choice
#: early-stops on (the held-out rows stay unseen until they score it).
CHOICE_STOP_FRACTION = 0.1
#: What the bank checks before fitting (scikit-learn's vocabulary).
SPARSE_REGRESSOR_CONSTRAINTS: dict[str, list] = {
    "cv": [int_in(2, MAX_CV)],
    "random_state": ["random_state"],
    "n_jobs": [Integral, None],
    "masks_per_row": [int_in(1, MAX_MASKS_PER_ROW)],
    "validation_fraction": [real_in(0.0, 1.0, closed="neither")],
}


class MaskEncodedRegressor(RegressorMixin, BaseEstimator):
    """Ridge regression of partly observed rows (NaN = not acquired) on the
    standardised-values-times-mask encoding plus the mask (see
    :func:`~budgetdag_core.bank._encoded.encode`).

    Parameters
    ----------
    alpha : float, default=1.0
        The ridge penalty on the encoded inputs.

    Attributes
    ----------
    n_features_in_ : int
    center_, scale_ : ndarray (n_features,)
        Mean and standard deviation of each column's observed values.
    weights_ : ndarray (2 * n_features,)
        Weights of the encoded values, then of the mask.
    intercept_ : float

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = 2 * X[:, 0] + X[:, 1]
    >>> X[rng.random(X.shape) < 0.3] = np.nan  # unacquired values
    >>> model = MaskEncodedRegressor().fit(X, y)
    >>> model.predict(X[:2]).shape
    (2,)
    """

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def fit(
        self,
        X: Any,
        y: Any,
        X_val: Any = None,
        y_val: Any = None,
        sample_weight: Any = None,
    ) -> MaskEncodedRegressor:
        """Fit on rows ``X`` (NaN: not observed); ``X_val``/``y_val`` are
        accepted as the masked banks pass them, and not used (no early
        stopping). ``sample_weight``: row i counts that many times."""
        X = np.asarray(X, dtype=float)
        w = None if sample_weight is None else np.asarray(sample_weight, float)
        self.n_features_in_ = X.shape[1]
        self.center_, self.scale_ = observed_moments(X, w)
        fitted = Ridge(alpha=self.alpha).fit(
            encode(X, self.center_, self.scale_),
            np.asarray(y, dtype=float),
            sample_weight=w,
        )
        self.weights_ = np.asarray(fitted.coef_, dtype=float).ravel()
        self.intercept_ = float(fitted.intercept_)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predictions of rows ``X`` (NaN: not observed)."""
        X = np.asarray(X, dtype=float)
        check_width(X, self.n_features_in_)
        return encode(X, self.center_, self.scale_) @ self.weights_ + self.intercept_

    def check_integrity(self) -> None:
        """Raise ``ValueError`` unless the fitted arrays fit together: the
        standardisation of ``n_features_in_`` columns, twice as many finite
        weights, a finite intercept."""
        width = check_standardisation(self)
        check_array(
            getattr(self, "weights_", None),
            "weights_",
            shape=(2 * int(width),),
            kind="f",
            finite=True,
        )
        intercept = getattr(self, "intercept_", None)
        if not isinstance(intercept, float) or not np.isfinite(intercept):
            raise fail("intercept_", "expected a finite float")


def masked_boosting_regressor(random_state: int | None = None) -> Any:
    """The ``"boosting"`` any-subset regressor: LightGBM with the per-state
    bank's boosting settings
    (:func:`~budgetdag_core.bank._regressor_models.boosting_regressor`: up to
    500 rounds, trees of 8 leaves of at least 20 rows, L2 penalty 1, learning
    rate 0.1) stopped after 10 rounds without progress. One model learns
    every subset from each row's mask copies, so its rounds are the bank's
    main cost: a lower rate (0.05, 20 rounds of patience) took about twice
    the rounds for about the same held-out error at random subsets, a little
    lower on Friedman #1 and higher on landsat's centre pixel
    (``benchmarks/bench_regressor_bank.py``). LightGBM rather than
    scikit-learn's histogram boosting: its trees are scored at every
    candidate subset in one compiled walk, where the growth's many small
    prediction calls spent most of a fit in scikit-learn's per-tree loop."""
    return LightGBMRegressionTrees(
        learning_rate=0.1,
        max_iter=500,
        num_leaves=8,
        min_child_samples=20,
        l2_regularization=1.0,
        early_stopping=True,
        validation_fraction=0.1,
        n_iter_no_change=10,
        max_bins=255,
        random_state=random_state,
    )


def masked_regressor(kind: str, random_state: int | None = None) -> Any:
    """The model of a masked regressor ``kind`` (:data:`MASKED_REGRESSOR_MODELS`).

    Examples
    --------
    >>> type(masked_regressor("ridge")).__name__
    'MaskEncodedRegressor'
    """
    if kind == "boosting":
        return masked_boosting_regressor(random_state)
    if kind == "ridge":
        return MaskEncodedRegressor()
    raise ValueError(
        f"Unknown masked regressor {kind!r}; choose from "
        f"{list(MASKED_REGRESSOR_MODELS)}."
    )


class SparseRegressorBank:
    """A masked regressor per fold, fitted on random sensor subsets, for
    sparse DAGs (see the module docstring).

    Parameters
    ----------
    model : {"auto", "boosting", "ridge"}, default="auto"
        The masked regressor (``"auto"``: chosen on validation rows).
    cv : int, default=5
        Folds (``KFold``, shuffled): each training row is predicted by the fold
        model that did not train on it.
    random_state : int or None
        Seeds the folds, the random subsets and the models.
    n_jobs : int or None
        Parallel fold fits (joblib).
    masks_per_row : int, default=16
        Random subsets per training row in the fold models' stack (fewer on
        long tables: at most ``SPARSE_FIT_PAIRS`` stacked rows, see
        ``subsets_per_row``).
    validation_fraction : float, default=0.2
        Share of the rows ``"auto"`` holds out to compare the models.
    growth : dict, optional
        ``strategies.GrowthSettings`` fields (part of the
        fingerprint: a bank serves the DAG it grew).

    Attributes
    ----------
    kind_ : str
        The masked regressor fitted (``"auto"`` resolved).
    validation_ : dict
        With ``"auto"``: per model tried, ``mse`` and ``mae`` on the held-out
        (row, subset) pairs, and ``"rows"``; else empty.
    fold_models_, fold_columns_, fold_means_ : list
        Each fold's model, the columns it reads and its training rows' mean
        target (its prediction with no sensor).
    fold_of_ : ndarray (n_samples,)
        The fold holding each training row out.
    model_, model_columns_ : list
        The models that serve (the fold models, averaged) and their columns.
    prior_ : ndarray (1,)
        The training mean: the prediction with no sensor.
    state_columns_, column_masks_ : the bound DAG's states' columns.
    sparse_growth_ : SparseGrowth
        The grown DAG, its rows and out-of-fold predictions.
    fingerprint_ : str

    Examples
    --------
    >>> import numpy as np
    >>> from budgetdag_core.bank import SparseRegressorBank
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = X[:, 0] + 0.1 * rng.normal(size=200)
    >>> bank = SparseRegressorBank("ridge", cv=3, random_state=0)
    >>> bank = bank.fit_models(X, y, [np.array([0]), np.array([1]), np.array([2])])
    >>> subsets = np.array([[True, False, False], [False, True, True]])
    >>> values = bank.oof_at(X, np.arange(200), subsets)[:, :, 0]
    >>> bool(np.mean((values[:, 0] - y) ** 2) < np.mean((values[:, 1] - y) ** 2))
    True
    """

    kind = "sparse_regressor"

    def __init__(
        self,
        model: str = "auto",
        *,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
        masks_per_row: int = 16,
        validation_fraction: float = AUTO_VALIDATION_FRACTION,
        growth: dict | None = None,
    ) -> None:
        self.model = model
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.masks_per_row = masks_per_row
        self.validation_fraction = validation_fraction
        self.growth = growth

    # ------------------------------------------------------------ settings
    def candidates(self) -> tuple[str, ...]:
        """The masked regressors :meth:`fit_models` may fit."""
        if self.model not in SPARSE_REGRESSOR_KINDS:
            raise ValueError(
                f"model must be one of {list(SPARSE_REGRESSOR_KINDS)}; got "
                f"{self.model!r}."
            )
        return MASKED_REGRESSOR_MODELS if self.model == "auto" else (self.model,)

    def template(self) -> Any:
        """The fitted kind's model (before the fit: the first candidate's)."""
        kind = getattr(self, "kind_", None) or self.candidates()[0]
        return masked_regressor(kind, int_seed(self.random_state))

    def _settings(self) -> tuple:
        seed = int_seed(self.random_state)
        return (
            self.kind,
            self.cv,
            seed,
            tuple((k, repr(masked_regressor(k, seed))) for k in self.candidates()),
            float(self.validation_fraction),
            self.masks_per_row,
            tuple(sorted((self.growth or {}).items())),
        )

    def fingerprint_for(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sample_weight: np.ndarray | None = None,
    ) -> str:
        """The ``fingerprint_`` this bank has once fitted on ``X``, ``y``
        (weighted by ``sample_weight``) and bound to ``dag``."""
        y = np.asarray(y, dtype=float)
        return BaseBank.make_fingerprint(
            X, y, *self._settings(), dag.states, *weight_key(sample_weight)
        )

    def _columns_of(self, subsets: np.ndarray) -> np.ndarray:
        """Column masks (n, n_columns) of sensor subsets (n, n_sensors)."""
        return column_masks(self.sensor_matrix_, subsets)

    def _set_sensors(self, X: np.ndarray, sensor_columns: Sequence[np.ndarray]) -> None:
        S = np.zeros((len(sensor_columns), X.shape[1]), dtype=bool)
        for m, cols in enumerate(sensor_columns):
            S[m, np.asarray(cols, dtype=int)] = True
        self.sensor_matrix_ = S

    # ------------------------------------------------------------------ fit
    def fit_models(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sensor_columns: Sequence[np.ndarray],
        progress: Progress | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> SparseRegressorBank:
        """Choose the model (``"auto"``), then fit one per fold on random
        subsets of each training row's sensors (``sample_weight``: row i
        counts that many times, in the choice, the folds and the means)."""
        check_bank_settings(
            self, "SparseRegressorBank.fit_models", SPARSE_REGRESSOR_CONSTRAINTS
        )
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        n, seed = len(X), int_seed(self.random_state)
        self._set_sensors(X, sensor_columns)
        # Each kind fitted once before the folds, a step of "bank kind".
        self.kind_, self.validation_ = self._choose(X, y, sample_weight, progress)
        template = self.template()
        rng = np.random.default_rng(seed)
        per_row = subsets_per_row(self.masks_per_row, n)
        subsets = random_subsets(n * per_row, len(sensor_columns), rng)
        column_masks = self._columns_of(subsets)
        pair_rows = np.repeat(np.arange(n), per_row)
        pair_states = np.arange(len(pair_rows))
        jobs = list(KFold(self.cv, shuffle=True, random_state=seed).split(X))
        seeds = rng.integers(0, 2**31 - 1, size=len(jobs))
        results = fit_folds(
            template, self.n_jobs, X, y, pair_rows, pair_states, column_masks,
            zip(jobs, seeds, strict=True), 0, True, False, sample_weight,
        )  # fmt: skip
        self.fold_of_ = np.zeros(n, dtype=np.intp)
        self.fold_models_, self.fold_columns_, self.fold_means_ = [], [], []
        for f, ((train, test), (model, _, used)) in enumerate(
            zip(jobs, results, strict=True)
        ):
            self.fold_of_[test] = f
            self.fold_models_.append(model)
            self.fold_columns_.append(np.flatnonzero(used))
            self.fold_means_.append(_mean(y[train], sample_weight, train))
            if progress is not None:
                progress("bank", f + 1, len(jobs))
        self.model_ = list(self.fold_models_)
        self.model_columns_ = list(self.fold_columns_)
        self.prior_ = np.array([_mean(y, sample_weight)])
        self.n_columns_ = X.shape[1]
        return self

    def _choose(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        progress: Progress | None = None,
    ) -> tuple[str, dict]:
        """The candidate of least squared error on held-out rows at random
        subsets (each fitted on the other rows' random subsets), and the
        numbers; the only candidate, or the first when the rows are too few
        to hold any out (``progress``: as ``kind_steps`` says)."""
        kinds = self.candidates()
        step = kind_steps(progress, len(kinds))
        n = len(X)
        n_val = int(round(float(self.validation_fraction) * n))
        if len(kinds) == 1 or n_val < 2 or n - n_val < 10:
            step(len(kinds))
            return kinds[0], {}
        seed = int_seed(self.random_state) or 0
        order = np.random.default_rng([seed, 37]).permutation(n)
        val_rows, fit_rows = np.sort(order[:n_val]), order[n_val:]
        # A boosting model early-stops on a share of the fit rows: the
        # validation rows judge it, they do not stop it.
        n_stop = max(1, int(round(CHOICE_STOP_FRACTION * len(fit_rows))))
        stop_rows, fit_rows = np.sort(fit_rows[:n_stop]), np.sort(fit_rows[n_stop:])
        rng = np.random.default_rng([seed, 38])
        M = len(self.sensor_matrix_)
        per_row = subsets_per_row(self.masks_per_row, n)
        pair_rows = np.repeat(np.arange(n), per_row)
        masks = self._columns_of(random_subsets(len(pair_rows), M, rng))
        val_pairs = np.repeat(val_rows, VALIDATION_MASKS)
        val_masks = self._columns_of(random_subsets(len(val_pairs), M, rng))
        fit_seed = int(rng.integers(0, 2**31 - 1))
        scores: dict[str, Any] = {
            "rows": {
                "fit": int(len(fit_rows)),
                "validation": int(len(val_rows)),
                "pairs": int(len(val_pairs)),
            }
        }

        def trial(kind: str) -> np.ndarray:
            model, _, used = fit_fold(
                masked_regressor(kind, seed), X, y, pair_rows,
                np.arange(len(pair_rows)), masks, fit_rows, stop_rows, 0,
                fit_seed, True, False, sample_weight,
            )  # fmt: skip
            stacked = stack_masked(
                X[:, used], val_pairs, np.arange(len(val_pairs)), val_masks[:, used]
            )
            with single_threaded():
                return model.predict(stacked) - y[val_pairs]

        diffs = kind_trials(trial, kinds, self.n_jobs, step)
        w = None if sample_weight is None else sample_weight[val_pairs]
        for kind, diff in zip(kinds, diffs, strict=True):
            scores[kind] = {
                "mse": float(np.average(diff**2, weights=w)),
                "mae": float(np.average(np.abs(diff), weights=w)),
            }
        return min(kinds, key=lambda k: scores[k]["mse"]), scores

    # ------------------------------------------------------------ scoring
    def _model_values(
        self,
        model: Any,
        cols: np.ndarray,
        mean: float,
        Xr: np.ndarray,
        cmasks: np.ndarray,
        empty: np.ndarray,
    ) -> np.ndarray:
        """One model's predictions (rows x subsets) of rows ``Xr`` at column
        masks ``cmasks`` (``mean`` where the subset is ``empty``)."""
        out = np.empty((len(Xr), len(cmasks)))
        out[:, empty] = mean
        todo = np.flatnonzero(~empty)
        if not todo.size or not len(Xr):
            return out
        Xc = Xr[:, cols]
        if isinstance(model, LightGBMTrees):  # every subset in one tree walk
            raw = model.state_decision_function(Xc, cmasks[todo][:, cols])
            out[:, todo] = raw[:, :, 0]
            return out
        step = max(1, PREDICT_CHUNK_PAIRS // len(Xr))
        for start in range(0, len(todo), step):
            part = todo[start : start + step]
            rows = np.tile(np.arange(len(Xr)), len(part))
            states = np.repeat(np.arange(len(part)), len(Xr))
            pred = model.predict(stack_masked(Xc, rows, states, cmasks[part][:, cols]))
            out[:, part] = np.asarray(pred, dtype=float).reshape(len(part), -1).T
        return out

    @property
    def exact_in_blocks(self) -> bool:
        """Whether :meth:`oof_at` gives each subset's outputs exactly as a
        call for it alone (:func:`~budgetdag_core.bank._sparse.exact_in_blocks`)."""
        return exact_in_blocks(self.fold_models_)

    def oof_at(
        self,
        X: np.ndarray,
        rows: np.ndarray,
        subsets: np.ndarray,
        state: int | None = None,
    ) -> np.ndarray:
        """Out-of-fold predictions of ``rows`` of ``X`` at each sensor subset,
        (rows x subsets x 1): each row predicted by the fold model that did
        not train on it. ``state`` is accepted as the classifier's bank takes
        it (a regression has no temperature)."""
        rows = np.asarray(rows, dtype=np.intp)
        subsets = np.atleast_2d(np.asarray(subsets, dtype=bool))
        empty = ~subsets.any(axis=1)
        cmasks = self._columns_of(subsets)

        def fold_values(f: int, sel: np.ndarray) -> np.ndarray:
            return self._model_values(
                self.fold_models_[f], self.fold_columns_[f], self.fold_means_[f],
                X[rows[sel]], cmasks, empty,
            )[:, :, None]  # fmt: skip

        return out_of_fold(self.fold_of_, rows, (len(subsets), 1), fold_values)

    def predict(self, X: np.ndarray, state: int) -> np.ndarray:
        """Predictions at ``state`` of the bound DAG: the served models'
        average with the state's columns (the training mean at a state
        without sensors)."""
        state = check_index(
            "SparseRegressorBank.predict", "state", state, self.n_states
        )
        X = np.asarray(X, dtype=float)
        mask = self.column_masks_[state]
        if not mask.any():
            return np.full(len(X), float(self.prior_[0]))
        empty = np.zeros(1, dtype=bool)
        with single_threaded():
            values = [
                self._model_values(model, cols, 0.0, X, mask[None], empty)[:, 0]
                for model, cols in zip(self.model_, self.model_columns_, strict=True)
            ]
        return np.mean(values, axis=0)

    # ------------------------------------------------------------------ bind
    def bind(
        self,
        growth: Any,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
    ) -> SparseRegressorBank:
        """Take the grown DAG's states (their columns) and fingerprint (with
        the fit's ``sample_weight``)."""
        dag = growth.dag
        member = dag.membership()
        masks = self._columns_of(member)
        self.column_masks_ = masks
        self.state_columns_ = [np.flatnonzero(m) for m in masks]
        self.sparse_growth_ = growth
        self.fingerprint_ = self.fingerprint_for(X, y, dag, sample_weight)
        return self

    @property
    def n_states(self) -> int:
        return len(self.state_columns_)

    # ------------------------------------------------------------ integrity
    def check_integrity(self) -> None:
        """Raise ``ValueError`` if the fitted arrays are inconsistent: state
        columns against the column masks, the training mean, each served model
        against the columns it reads."""
        n_columns = getattr(self, "n_columns_", None)
        if not isinstance(n_columns, int) or n_columns < 1:
            raise fail("bank_.n_columns_", "expected a positive integer")
        state_columns = check_state_columns(
            getattr(self, "state_columns_", None), "bank_.state_columns_", n_columns
        )
        masks = check_array(
            getattr(self, "column_masks_", None),
            "bank_.column_masks_",
            shape=(len(state_columns), n_columns),
            kind="b",
        )
        for k, cols in enumerate(state_columns):
            if not np.array_equal(np.flatnonzero(masks[k]), np.sort(cols)):
                raise fail(f"bank_.column_masks_[{k}]", "differs from its columns")
        check_array(
            getattr(self, "prior_", None), "bank_.prior_", shape=(1,), kind="f",
            finite=True,
        )  # fmt: skip
        models, columns = (
            getattr(self, "model_", None),
            getattr(self, "model_columns_", None),
        )
        if not isinstance(models, list) or not models:
            raise fail("bank_.model_", "expected a list of fold models")
        if not isinstance(columns, list) or len(columns) != len(models):
            raise fail("bank_.model_columns_", f"expected {len(models)} entries")
        for f, (model, cols) in enumerate(zip(models, columns, strict=True)):
            used = check_indices(cols, f"bank_.model_columns_[{f}]", n_columns)
            if used.size > 1 and (np.diff(used) <= 0).any():
                raise fail(f"bank_.model_columns_[{f}]", "not strictly increasing")
            _check_model(model, f"bank_.model_[{f}]", used.size)
        if getattr(self, "kind_", None) not in MASKED_REGRESSOR_MODELS:
            raise fail(
                "bank_.kind_", f"expected one of {list(MASKED_REGRESSOR_MODELS)}"
            )


def _mean(
    values: np.ndarray, weight: np.ndarray | None, rows: np.ndarray | None = None
) -> float:
    """The mean of ``values`` (the ``rows`` of ``weight`` weighing them;
    None: each once)."""
    if weight is None:
        return float(values.mean())
    w = weight if rows is None else weight[rows]
    return float(np.average(values, weights=w)) if w.sum() > 0 else 0.0


def _check_model(model: Any, where: str, n_features: int) -> None:
    """A served model of the bank: a mask-encoded ridge or a fitted regressor."""
    if isinstance(model, MaskEncodedRegressor):
        try:
            model.check_integrity()
        except (ValueError, TypeError, AttributeError) as exc:
            raise fail(where, f"{type(exc).__name__}: {exc}") from None
        if model.n_features_in_ != n_features:
            raise fail(where, f"{model.n_features_in_} inputs, expected {n_features}")
        return
    check_fitted_model(model, where, n_features)
