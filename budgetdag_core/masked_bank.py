"""The masked bank: one missing-value-capable model predicts at every DAG state.

Training rows are replicated once per state ("mask") with the columns of the
unacquired sensors set to NaN, and one model is fitted on the stack. At a state,
the model sees the row with the same columns blanked. Out-of-fold predictions
need one model per fold, not one per state per fold, so a 256-state DAG costs
``cv`` fits cross-fitted, ``cv + 1`` with a refit (the paper's "missing
feature capable classification system").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.dummy import DummyClassifier
from sklearn.utils import get_tags
from sklearn.utils.parallel import Parallel, delayed

from ._bank_base import BaseBank, Progress, prior_proba, single_threaded
from ._bank_models import masked_classifier, stops_on_given_rows
from ._integrity import check_bank_arrays, check_model
from .dag import SensorDAG

# Rows per predict call when scoring many states at once (bounds memory).
PREDICT_CHUNK_ROWS = 200_000
# Cap on the stacked training rows (float64: 1e6 rows x 50 columns = 400 MB per
# fit); long tables get fewer masks per row instead.
MAX_STACK_ROWS = 1_000_000


def _proba(model: Any, Xs: np.ndarray, n_classes: int) -> np.ndarray:
    out = np.zeros((len(Xs), n_classes))
    out[:, np.asarray(model.classes_, dtype=int)] = model.predict_proba(Xs)
    return out


def _stack(
    X: np.ndarray,
    rows: np.ndarray,
    states: np.ndarray,
    column_masks: np.ndarray,
) -> np.ndarray:
    """Rows ``X[rows]`` with the columns outside ``states``' sensors set to NaN."""
    Xs = X[rows].astype(float, copy=True)
    Xs[~column_masks[states]] = np.nan
    return Xs


def _fit_fold(
    template: Any,
    X: np.ndarray,
    y: np.ndarray,
    pair_rows: np.ndarray,
    pair_states: np.ndarray,
    column_masks: np.ndarray,
    train: np.ndarray,
    test: np.ndarray | None,
    n_classes: int,
    seed: int,
    stop_on_test: bool = False,
) -> tuple[Any, np.ndarray | None]:
    """Fit on the mask stack of ``train`` rows; score ``test`` rows at every state.

    An early-stopping model validates on whole rows: the ``test`` rows' masks
    with ``stop_on_test`` (cross-fitting), else a random fraction of ``train``.
    """
    model = clone(template)
    in_train = np.zeros(len(X), dtype=bool)
    in_train[train] = True
    fit_kwargs: dict[str, Any] = {}
    stops = stops_on_given_rows(model)
    if stops and stop_on_test and test is not None:
        in_val = np.zeros(len(X), dtype=bool)
        in_val[test] = True
        sel = in_val[pair_rows]
        fit_kwargs = {
            "X_val": _stack(X, pair_rows[sel], pair_states[sel], column_masks),
            "y_val": y[pair_rows[sel]],
        }
    elif stops:
        rng = np.random.default_rng(seed)
        fraction = model.get_params()["validation_fraction"]
        n_val = max(1, int(round(fraction * len(train))))
        val = rng.choice(train, n_val, replace=False)
        in_train[val] = False
        in_val = np.zeros(len(X), dtype=bool)
        in_val[val] = True
        sel = in_val[pair_rows]
        fit_kwargs = {
            "X_val": _stack(X, pair_rows[sel], pair_states[sel], column_masks),
            "y_val": y[pair_rows[sel]],
        }
    sel = in_train[pair_rows]
    Xs = _stack(X, pair_rows[sel], pair_states[sel], column_masks)
    with single_threaded():
        model.fit(Xs, y[pair_rows[sel]], **fit_kwargs)
        if test is None:
            return model, None
        K = len(column_masks)
        proba = np.zeros((len(test), K, n_classes), dtype=np.float32)
        proba[:, 0] = prior_proba(y[train], len(test), n_classes)
        per_chunk = max(1, PREDICT_CHUNK_ROWS // len(test))
        for start in range(1, K, per_chunk):
            states = np.arange(start, min(K, start + per_chunk))
            rows = np.tile(test, len(states))
            st = np.repeat(states, len(test))
            p = _proba(model, _stack(X, rows, st, column_masks), n_classes)
            proba[:, states] = p.reshape(len(states), len(test), n_classes).swapaxes(
                0, 1
            )
    return model, proba


class MaskedBank(BaseBank):
    """One missing-value-capable classifier for all DAG states.

    Parameters
    ----------
    classifier : scikit-learn classifier accepting NaN, optional
        Default: LightGBM boosting, which routes missing values natively
        (:func:`~budgetdag_core.bank.boosting_classifier` with up to 150
        rounds). When it early-stops on a validation fraction, the validation
        rows are split by original row, so no replica of a training row scores
        the stopping rule.
    cv : int
        Stratified folds for the out-of-fold predictions (one model per fold).
    random_state : int or None
        Seeds the fold split and the mask sampling.
    n_jobs : int or None
        Parallel fold fits through joblib.
    calibrate : bool, default=True
        Temperature-scale each state's probabilities (see ``ClassifierBank``).
    cross_fit : bool, default=False
        Average the fold models at predict time instead of refitting on all
        rows; each fold's model early-stops on its held-out rows' masks.
    masks_per_row : int, default=16
        When the DAG has at most this many non-empty states, every training row
        is replicated under every state's mask. Otherwise each row gets this many
        masks drawn at random (with replacement): a state size is drawn uniformly,
        then a state of that size, so the few small states (which every policy
        visits first) and the full state are covered far more densely than the
        many mid-sized ones. Long tables get fewer masks per row so that the
        stack stays under ``MAX_STACK_ROWS`` (one million) rows.

    Attributes
    ----------
    model_ : classifier, or list of classifiers with ``cross_fit``
        The model refit on all training rows' masks; with ``cross_fit`` the
        fold models, whose probabilities are averaged at predict time.
    models_ : list
        Per state, the model used there (the class prior at the empty state,
        ``model_`` elsewhere).
    column_masks_ : ndarray (n_states, n_columns) of bool
        The columns each state sees.
    oof_proba_, state_columns_, temperatures_, calibration_, fingerprint_
        As in :class:`~budgetdag_core.bank.ClassifierBank`.
    """

    kind = "masked"

    def __init__(
        self,
        classifier: Any = None,
        *,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
        calibrate: bool = True,
        cross_fit: bool = False,
        masks_per_row: int = 16,
    ) -> None:
        super().__init__(
            classifier,
            cv=cv,
            random_state=random_state,
            n_jobs=n_jobs,
            calibrate=calibrate,
            cross_fit=cross_fit,
        )
        self.masks_per_row = masks_per_row

    def template(self) -> Any:
        if self.classifier is not None:
            return self.classifier
        return masked_classifier(self.random_state)

    def _settings(self) -> tuple:
        return (*super()._settings(), self.masks_per_row)

    def _check_template(self, template: Any) -> None:
        try:
            allow_nan = get_tags(template).input_tags.allow_nan
        except Exception:  # third-party estimators without sklearn tags
            allow_nan = True
        if not allow_nan:
            raise ValueError(
                f"The masked bank needs a classifier that accepts missing values "
                f"(NaN); {type(template).__name__} does not. Use "
                "the default boosting, HistGradientBoostingClassifier, a decision "
                "tree, or a pipeline "
                "that starts with SimpleImputer(add_indicator=True)."
            )
        if not isinstance(self.masks_per_row, int | np.integer) or (
            self.masks_per_row < 1
        ):
            raise ValueError(
                f"masks_per_row must be a positive integer; got {self.masks_per_row!r}."
            )

    def mask_pairs(
        self, dag: SensorDAG, n_rows: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Which (row, state) pairs the stack holds: all, or a sample per row."""
        states = np.arange(1, dag.n_states)
        per_row = min(self.masks_per_row, max(1, MAX_STACK_ROWS // n_rows))
        if len(states) <= per_row:
            return np.repeat(np.arange(n_rows), len(states)), np.tile(states, n_rows)
        sizes = np.array([dag.states[k].bit_count() for k in states])
        _, inverse, counts = np.unique(sizes, return_inverse=True, return_counts=True)
        weights = 1.0 / (len(counts) * counts[inverse])
        drawn = rng.choice(states, size=(n_rows, per_row), p=weights)
        return np.repeat(np.arange(n_rows), per_row), drawn.ravel()

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        progress: Progress | None = None,
    ) -> MaskedBank:
        """Fit one model per fold and one on all rows, each on the mask stack.

        Same arguments as :meth:`ClassifierBank.fit`.
        """
        template = self.template()
        self._check_template(template)
        n, K = len(X), dag.n_states
        self.n_classes_ = n_classes
        self.state_columns_ = dag.state_columns(sensor_columns)
        masks = np.zeros((K, X.shape[1]), dtype=bool)
        for k, cols in enumerate(self.state_columns_):
            masks[k, cols] = True
        self.column_masks_ = masks
        rng = np.random.default_rng(self.random_state)
        pair_rows, pair_states = self.mask_pairs(dag, n, rng)
        jobs = self._folds(X, y)
        if not self.cross_fit:
            jobs.append((np.arange(n), None))
        seeds = rng.integers(0, 2**31 - 1, size=len(jobs))
        results = Parallel(n_jobs=self.n_jobs, return_as="generator")(
            delayed(_fit_fold)(
                template,
                X,
                y,
                pair_rows,
                pair_states,
                masks,
                train,
                test,
                n_classes,
                int(seed),
                self.cross_fit,
            )
            for (train, test), seed in zip(jobs, seeds, strict=True)
        )
        self.oof_proba_ = np.zeros((n, K, n_classes), dtype=np.float32)
        fold_models = []
        for done, ((_, test), (model, proba)) in enumerate(
            zip(jobs, results, strict=True), start=1
        ):
            if test is None:
                self.model_ = model
            else:
                self.oof_proba_[test] = proba
                fold_models.append(model)
            if progress is not None:
                progress("bank", done, len(jobs))
        if self.cross_fit:
            self.model_ = fold_models
        self.n_columns_ = X.shape[1]
        self.prior_ = np.bincount(y, minlength=n_classes) / n
        self.prior_model_ = DummyClassifier(strategy="prior").fit(np.zeros((n, 1)), y)
        self._finish(X, y, dag)
        return self

    @property
    def models_(self) -> list[Any]:
        return [self.prior_model_] + [self.model_] * (self.n_states - 1)

    def _raw_proba(self, X: np.ndarray, state: int) -> np.ndarray:
        if state == 0:
            return np.tile(self.prior_, (len(X), 1))
        Xm = X.astype(float, copy=True)
        Xm[:, ~self.column_masks_[state]] = np.nan
        if isinstance(self.model_, list):  # cross-fitted: the fold models' average
            return np.mean([_proba(m, Xm, self.n_classes_) for m in self.model_], 0)
        return _proba(self.model_, Xm, self.n_classes_)

    def check_integrity(self) -> None:
        """Raise ValueError when the fitted arrays and models disagree.

        As :meth:`ClassifierBank.check_integrity`, plus ``column_masks_``
        against ``state_columns_`` and ``prior_`` against ``n_classes_``.
        """
        check_bank_arrays(self)
        K, n_columns = self.n_states, int(self.n_columns_)
        masks = np.asarray(self.column_masks_)
        if masks.shape != (K, n_columns) or masks.dtype != bool:
            raise ValueError(
                f"Inconsistent classifier bank: column_masks_ of shape "
                f"{masks.shape} ({masks.dtype}), expected ({K}, {n_columns}) bool."
            )
        for k, cols in enumerate(self.state_columns_):
            if not np.array_equal(np.flatnonzero(masks[k]), np.sort(cols)):
                raise ValueError(
                    f"Inconsistent classifier bank: column_masks_[{k}] does not "
                    f"match state_columns_[{k}]."
                )
        if np.shape(self.prior_) != (self.n_classes_,):
            raise ValueError(
                f"Inconsistent classifier bank: prior_ of shape "
                f"{np.shape(self.prior_)}, expected ({self.n_classes_},)."
            )
        fitted = self.model_ if isinstance(self.model_, list) else [self.model_]
        for f, model in enumerate(fitted):
            check_model(model, n_columns, self.n_classes_, f"model {f}")
