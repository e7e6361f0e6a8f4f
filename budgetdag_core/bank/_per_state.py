"""Classifier banks: class probabilities for every DAG state, with out-of-fold copies.

The bank does not depend on acquisition costs, so one fitted bank serves every
``cost_scale`` (a trade-off sweep, the app's cost slider, budget targeting).

Three kinds (:data:`BANK_KINDS`, built by :func:`make_bank`):

- ``"per_subset"``: :class:`ClassifierBank` cloning any scikit-learn classifier
  once per state (default: standardised logistic regression);
- ``"hgb"``: the same with ``boosting_classifier()``, short early-stopped
  LightGBM boosting per state, cross-fitted (the fold models are averaged at
  predict time; no refit);
- ``"masked"``: :class:`~budgetdag_core.bank.MaskedBank`, one
  missing-value-capable model for all states, trained on rows replicated under
  sensor masks (unacquired columns set to NaN), cross-fitted likewise unless a
  ``classifier`` is given;
- ``"masked_mlp"``, ``"masked_logistic"``: the same bank with a network or a
  logistic regression on the mask encoding
  (:class:`~budgetdag_core.bank.MaskEncodedClassifier`), for few rows and many
  sensors.

Every bank has ``check_integrity()``, which raises ``ValueError`` naming what is
inconsistent (for model files: see :mod:`budgetdag_core.persist._integrity`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.parallel import delayed

from .._integrity import check_array, check_state_columns, fail
from ..dag import SensorDAG
from ..validation import check_index, int_seed
from ._base import (
    BaseBank,
    Progress,
    check_bank_settings,
    check_serve,
    fold_average,
    parallel_fits,
    refit_template,
    row_chunked,
    single_threaded,
    weight_key,
)
from ._encoded import MASKED_KINDS, masked_template
from ._integrity import check_classifier_bank, check_fitted_model
from ._lgbm_trees import LightGBMTrees, shared_walk_order
from ._masked import MaskedBank
from ._models import (
    boosting_classifier,
    default_classifier,
    fit_ready,
    fit_weighted,
    stops_on_given_rows,
)
from ._row_order import scored_in_order

__all__ = [
    "BANK_KINDS",
    "DEFAULT_BANK_KIND",
    "BaseBank",
    "ClassifierBank",
    "MaskedBank",
    "Progress",
    "RegressorBank",
    "boosting_classifier",
    "default_classifier",
    "default_regressor",
    "make_bank",
    "resolve_bank_kind",
]

BANK_KINDS = ("per_subset", "hgb", *MASKED_KINDS)
#: What ``bank_kind="auto"`` picks without a ``classifier`` (the measurements
#: behind it: docs/user_guide/banks.rst, "Why hgb is the default").
DEFAULT_BANK_KIND = "hgb"
#: With more DAG states than this, ``"auto"`` switches to the masked bank: its
#: cost is ``cv`` fits (``cv + 1`` with a ``classifier``) whatever the number of
#: states.
AUTO_MASKED_MIN_STATES = 33


def resolve_bank_kind(
    bank_kind: str, classifier: Any = None, n_states: int | None = None
) -> str:
    """The concrete bank kind for ``bank_kind`` (resolves ``"auto"``).

    ``"auto"`` means ``"per_subset"`` when a ``classifier`` is given, the masked
    bank when the DAG has at least ``AUTO_MASKED_MIN_STATES`` states, and
    ``DEFAULT_BANK_KIND`` otherwise.
    """
    if bank_kind != "auto":
        return bank_kind
    if classifier is not None:
        return "per_subset"
    if n_states is not None and n_states >= AUTO_MASKED_MIN_STATES:
        return "masked"
    return DEFAULT_BANK_KIND


def default_regressor() -> Any:
    """Standardised ridge regression."""
    return make_pipeline(StandardScaler(), Ridge(alpha=1.0))


def _fit_predict(
    estimator: Any,
    X: np.ndarray,
    y: np.ndarray,
    cols: np.ndarray,
    train: np.ndarray | None,
    test: np.ndarray | None,
    outputs: Callable[[Any, np.ndarray], np.ndarray],
    empty: Any,
    stop_on_test: bool = False,
    sample_weight: np.ndarray | None = None,
) -> tuple[Any, np.ndarray | None]:
    """Fit on ``train`` rows (all when None); return the model and test outputs.

    A state without columns fits ``empty`` (class priors or the mean). With
    ``stop_on_test`` a model that early-stops on a validation split stops on the
    ``test`` rows instead (see :func:`stops_on_given_rows`). ``sample_weight``:
    every row's weight (see :func:`fit_weighted`).
    """
    if len(cols) == 0:
        estimator = empty
    Xs = X[:, cols] if len(cols) else np.zeros((len(X), 1))
    rows = slice(None) if train is None else train
    kwargs: dict[str, Any] = {}
    if (
        stop_on_test
        and test is not None
        and train is not None
        and stops_on_given_rows(estimator)
        and np.isin(y[test], y[train]).all()
    ):
        kwargs = {"X_val": Xs[test], "y_val": y[test]}
    w = val_w = None
    if sample_weight is not None:
        w = sample_weight[rows]
        val_w = sample_weight[test] if kwargs else None
    with single_threaded():
        model = fit_weighted(clone(estimator), Xs[rows], y[rows], w, val_w, **kwargs)
        out = None if test is None else outputs(model, Xs[test])
    return model, out


def _fit_states(
    template: Any,
    X: np.ndarray,
    y: np.ndarray,
    state_columns: Sequence[np.ndarray],
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
    outputs: Callable[[Any, np.ndarray], np.ndarray],
    empty: Any,
    width: int,
    n_jobs: int | None,
    progress: Progress | None,
    cross_fit: bool = False,
    serve: str = "folds",
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, list[Any]]:
    """Out-of-fold outputs (n, K, width) float32 and the models per state.

    The shared loop of all banks: every (state, fold) fit, and without
    ``cross_fit`` every state's full-data refit, is one joblib task. With
    ``cross_fit`` each fold's model early-stops on its held-out rows, and a
    state's models are its fold models (a list, averaged at predict time), or
    with ``serve="refit"`` one model refit on all rows afterwards (see
    :func:`refit_template`).
    """
    n, K = len(X), len(state_columns)
    # Widest states first, so the longest fits do not trail at the end.
    by_width = sorted(range(K), key=lambda k: -len(state_columns[k]))
    splits = list(folds) if cross_fit else [*folds, (None, None)]
    jobs = [
        (k, f, train, test) for k in by_width for f, (train, test) in enumerate(splits)
    ]
    refit = cross_fit and serve == "refit"
    total = len(jobs) + (K if refit else 0)
    results = parallel_fits(
        template,
        n_jobs,
        (
            delayed(_fit_predict)(
                template,
                X,
                y,
                state_columns[k],
                train,
                test,
                outputs,
                empty,
                cross_fit,
                sample_weight,
            )  # fmt: skip
            for k, _, train, test in jobs
        ),
    )
    oof = np.zeros((n, K, width), dtype=np.float32)
    models: list[Any] = [[None] * len(folds) if cross_fit else None for _ in range(K)]
    done = 0
    for (k, f, _, test), (model, out) in zip(jobs, results, strict=True):
        if test is not None:
            oof[test, k] = out.reshape(len(test), width)
        if cross_fit:
            models[k][f] = model
        elif test is None:
            models[k] = model
        done += 1
        if progress is not None:
            progress("bank", done, total)
    if refit:
        refits = parallel_fits(
            template,
            n_jobs,
            (
                delayed(_fit_predict)(
                    refit_template(template, models[k]),
                    X,
                    y,
                    state_columns[k],
                    None,
                    None,
                    outputs,
                    empty,
                    sample_weight=sample_weight,
                )
                for k in by_width
            ),
        )
        for k, (model, _) in zip(by_width, refits, strict=True):
            models[k] = model
            done += 1
            if progress is not None:
                progress("bank", done, total)
    return oof, models


def _fold_mean_proba(
    models: list[LightGBMTrees], X: np.ndarray, n_classes: int
) -> np.ndarray:
    """The fold models' mean probabilities of ``X`` (fold order), their trees
    walking the rows in one shared similarity order where that pays."""
    walk = shared_walk_order(models, X)

    def mean(rows: np.ndarray) -> np.ndarray:
        # Without a shared order each model may still sort for itself.
        proba = [_proba(m, rows, n_classes, sort_rows=walk is None) for m in models]
        return np.mean(proba, axis=0)

    return scored_in_order(mean, X, walk)


def _proba(model: Any, Xs: np.ndarray, n_classes: int, **trees: Any) -> np.ndarray:
    """Class probabilities over all ``n_classes`` (encoded labels 0..C-1);
    ``trees`` are options of :meth:`LightGBMTrees.predict_proba`."""
    known = np.asarray(model.classes_, dtype=int)
    if hasattr(model, "predict_proba") and np.array_equal(known, np.arange(n_classes)):
        return model.predict_proba(Xs, **trees)
    out = np.zeros((len(Xs), n_classes))
    if hasattr(model, "predict_proba"):
        out[:, known] = model.predict_proba(Xs, **trees)
    else:
        out[np.arange(len(Xs)), np.asarray(model.predict(Xs), dtype=int)] = 1.0
    return out


class ClassifierBank(BaseBank):
    """One classifier per DAG state, cloned from ``classifier``.

    Parameters
    ----------
    classifier : scikit-learn classifier, optional
        Template cloned per state; default ``default_classifier()``. The empty
        state always predicts the training class priors.
    cv : int
        Stratified folds for the out-of-fold predictions.
    random_state : int or None
        Seeds the fold split.
    n_jobs : int or None
        Parallel fits through joblib (honours the active joblib backend). All
        ``n_states * (cv + 1)`` fits (``n_states * cv`` with ``cross_fit``) are
        independent jobs, widest states first. With ``cross_fit``, large
        prediction batches score the fold models in up to ``n_jobs`` threads.
    calibrate : bool, default=True
        Temperature-scale each state's probabilities, fitted on its out-of-fold
        probabilities (see ``calibration_``).
    cross_fit : bool, default=False
        Keep the fold models and average them at predict time instead of
        refitting on all rows (the ``"hgb"`` bank does; see ``BaseBank``).
    serve : {"folds", "refit"}, default="folds"
        With ``cross_fit``: predict with the fold models' average, or with one
        model per state refit on all rows after the folds (see ``BaseBank``).

    Attributes
    ----------
    oof_proba_ : ndarray (n_samples, n_states, n_classes), float32
        Out-of-fold class probabilities of each state's classifier (calibrated
        when ``calibrate``).
    models_ : list
        Per state, the classifier refit on all rows (used at predict time); with
        ``cross_fit``, the list of its fold models, averaged at predict time.
    state_columns_ : list of ndarray
        Per state, the positions of its columns in ``X``.
    temperatures_ : ndarray (n_states,)
        Calibration temperature per state (1.0 = unchanged).
    calibration_ : DataFrame
        Per state: ``temperature``, ``ece_raw`` and ``ece`` (expected calibration
        error of the out-of-fold probabilities before and after scaling).
    fingerprint_ : str
        Hash of the training data and settings; guards reuse.

    Examples
    --------
    >>> import numpy as np
    >>> from budgetdag_core import SensorDAG
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 2)); y = (X[:, 0] > 0).astype(int)
    >>> dag = SensorDAG(["a", "b"])
    >>> bank = ClassifierBank(cv=3, random_state=0).fit(
    ...     X, y, dag, [np.array([0]), np.array([1])], n_classes=2)
    >>> bank.oof_losses(y).shape
    (120, 4)
    """

    kind = "per_subset"

    def template(self) -> Any:
        return self.classifier if self.classifier is not None else default_classifier()

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        progress: Progress | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> ClassifierBank:
        """Fit out-of-fold and full-data classifiers for every state of ``dag``.

        ``X`` holds all spec columns; ``sensor_columns[m]`` are the positions of
        sensor m's columns; ``y`` is encoded as 0..n_classes-1.
        ``sample_weight`` (n_samples,), >= 0: row i counts that many times in
        every model's fit (its model's ``sample_weight``; rows of weight 0
        left out) and in the calibration; the folds are those of the rows.
        """
        check_bank_settings(self, "ClassifierBank.fit", n_classes=n_classes)
        check_serve(self.serve)
        self.n_classes_ = n_classes
        self.state_columns_ = dag.state_columns(sensor_columns)
        folds = self._folds(X, y)
        smallest = min(len(train) for train, _ in folds)
        rarest = min(
            int(np.bincount(y[train], minlength=n_classes).min()) for train, _ in folds
        )
        self.oof_proba_, self.models_ = _fit_states(
            fit_ready(self.template(), smallest, n_classes, rarest),
            X,
            y,
            self.state_columns_,
            folds,
            partial(_proba, n_classes=n_classes),
            DummyClassifier(strategy="prior"),
            n_classes,
            self.n_jobs,
            progress,
            cross_fit=self.cross_fit,
            serve=self.serve,
            sample_weight=sample_weight,
        )
        self.n_columns_ = X.shape[1]
        self._finish(X, y, dag, sample_weight)
        return self

    def fit_state_fold(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        state: int,
    ) -> Any:
        """State ``state``'s first-fold model, fitted (and its held-out rows
        scored) as :meth:`fit` does; the bank stays unfitted.

        A few states' fits, timed and measured, tell the fit-time and size
        estimates what early stopping makes of this data
        (:func:`~budgetdag_core.estimates.probe_fit`).
        """
        check_bank_settings(self, "ClassifierBank.fit_state_fold", n_classes=n_classes)
        state = check_index(
            "ClassifierBank.fit_state_fold", "state", state, dag.n_states
        )
        folds = self._folds(X, y)
        train, test = folds[0]
        template = fit_ready(
            self.template(),
            min(len(t) for t, _ in folds),
            n_classes,
            min(int(np.bincount(y[t], minlength=n_classes).min()) for t, _ in folds),
        )
        model, _ = _fit_predict(
            template,
            X,
            y,
            dag.columns_of(state, sensor_columns),
            train,
            test,
            partial(_proba, n_classes=n_classes),
            DummyClassifier(strategy="prior"),
            self.cross_fit,
        )
        return model

    def _raw_proba(self, X: np.ndarray, state: int) -> np.ndarray:
        cols = self.state_columns_[state]
        Xs = X[:, cols] if len(cols) else np.zeros((len(X), 1))
        model = self.models_[state]
        if isinstance(model, list) and all(
            isinstance(m, LightGBMTrees) for m in model
        ):  # cross-fitted trees: row blocks in threads, each averaging the folds
            return row_chunked(
                partial(_fold_mean_proba, model, n_classes=self.n_classes_),
                Xs,
                self.n_jobs,
            )
        if isinstance(model, list):  # cross-fitted: the fold models' average
            return fold_average(
                partial(_proba, Xs=Xs, n_classes=self.n_classes_),
                model,
                len(Xs),
                self.n_jobs,
            )
        if not isinstance(model, LightGBMTrees):
            return _proba(model, Xs, self.n_classes_)
        return row_chunked(
            partial(_proba, model, n_classes=self.n_classes_),
            Xs,
            self.n_jobs,
        )

    def check_integrity(self) -> None:
        """Raise ``ValueError`` if the fitted arrays are inconsistent.

        Checks the state columns, calibration, and every state's model against
        its input width and the classes (boosting trees node by node); see
        ``check_model_integrity()``.
        """

        state_columns = check_classifier_bank(self)
        models = getattr(self, "models_", None)
        if not isinstance(models, list) or len(models) != len(state_columns):
            raise fail("bank_.models_", f"expected {len(state_columns)} models")
        for k, (model, cols) in enumerate(zip(models, state_columns, strict=True)):
            check_fitted_model(
                model, f"bank_.models_[{k}]", max(len(cols), 1), self.n_classes_
            )


def make_bank(
    kind: str = "hgb",
    classifier: Any = None,
    *,
    cv: int = 5,
    random_state: int | None = None,
    n_jobs: int | None = None,
    calibrate: bool = True,
    cross_fit: bool | None = None,
    serve: str = "folds",
) -> BaseBank:
    """An unfitted bank of the given kind.

    Parameters
    ----------
    kind : {"per_subset", "hgb", "masked", "masked_mlp", "masked_logistic"}
        ``"per_subset"`` clones ``classifier`` (default logistic regression) per
        state; ``"hgb"`` is per-subset with ``boosting_classifier()`` (no
        ``classifier`` allowed); ``"masked"`` fits one model on mask-replicated
        rows (``classifier`` must accept NaN; default gradient boosting);
        ``"masked_mlp"`` and ``"masked_logistic"`` are masked banks of their
        own mask-encoded model (no ``classifier`` allowed).
    classifier, cv, random_state, n_jobs, calibrate
        Passed to the bank.
    cross_fit : bool, optional
        Average the fold models at predict time instead of refitting (see
        ``BaseBank``). Default: on for the bank's own boosting (``"hgb"``,
        and ``"masked"`` without a ``classifier``), off for a given classifier.
    serve : {"folds", "refit"}
        What a cross-fitted bank predicts with (see ``BaseBank``).

    Examples
    --------
    >>> from budgetdag_core.bank import make_bank
    >>> bank = make_bank("hgb", cv=3, random_state=0)
    >>> type(bank).__name__, bank.cross_fit
    ('ClassifierBank', True)
    >>> make_bank("per_subset").cross_fit  # a given classifier is refit on all rows
    False
    >>> type(make_bank("masked")).__name__
    'MaskedBank'

    An estimator builds its bank from ``bank_kind``; ``fit_bank`` fits one to
    share between models (``fit(X, y, bank=...)``).
    """
    if kind not in BANK_KINDS:
        raise ValueError(f"Unknown bank kind {kind!r}; choose from {list(BANK_KINDS)}.")
    if cross_fit is None:
        cross_fit = classifier is None and kind != "per_subset"
    common = {
        "cv": cv,
        "random_state": random_state,
        "n_jobs": n_jobs,
        "calibrate": calibrate,
        "cross_fit": cross_fit,
        "serve": serve,
    }
    if kind == "hgb":
        if classifier is not None:
            raise ValueError(
                "bank kind 'hgb' uses its own gradient-boosting model; pass "
                "classifier=... with bank kind 'per_subset' or 'masked' instead."
            )
        return ClassifierBank(boosting_classifier(random_state), **common)
    if kind in ("masked_mlp", "masked_logistic"):
        if classifier is not None:
            raise ValueError(
                f"bank kind {kind!r} uses its own mask-encoded model; pass "
                "classifier=... with bank kind 'per_subset' or 'masked' instead."
            )
        return MaskedBank(masked_template(kind, random_state), **common)
    if kind == "masked":
        return MaskedBank(classifier, **common)
    return ClassifierBank(classifier, **common)


def _predict(model: Any, Xs: np.ndarray) -> np.ndarray:
    return np.asarray(model.predict(Xs), dtype=float)


class RegressorBank:
    """One regressor per DAG state, cloned from ``regressor``: the regression twin
    of :class:`ClassifierBank` (same fitting loop, ``KFold`` instead of stratified
    folds, predictions instead of probabilities).

    Parameters
    ----------
    regressor : scikit-learn regressor, optional
        Template cloned per state; default ``default_regressor()``. The empty
        state always predicts the training mean.
    cv, random_state, n_jobs
        As in :class:`ClassifierBank`.

    Attributes
    ----------
    oof_pred_ : ndarray (n_samples, n_states), float32
        Out-of-fold predictions of each state's regressor.
    models_ : list
        Per state, the regressor refit on all rows.
    fingerprint_ : str

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from budgetdag_core import BudgetDAGRegressor, SensorSpec
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    >>> y = 3 * X["a"] + rng.normal(scale=0.1, size=200)
    >>> spec = SensorSpec.per_column(["a", "b"], cost=0.1)
    >>> model = BudgetDAGRegressor(spec, regressor="ridge", cv=3).fit(X, y)
    >>> type(model.bank_).__name__, model.bank_.oof_pred_.shape
    ('RegressorBank', (200, 4))
    """

    def __init__(
        self,
        regressor: Any = None,
        *,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.regressor = regressor
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs

    make_fingerprint = staticmethod(ClassifierBank.make_fingerprint)

    def template(self) -> Any:
        """The regressor cloned per state."""
        return self.regressor if self.regressor is not None else default_regressor()

    def fingerprint_for(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sample_weight: np.ndarray | None = None,
    ) -> str:
        """The ``fingerprint_`` this bank would have after ``fit(X, y, dag, ...)``."""
        y = np.asarray(y, dtype=float)
        settings = (self.cv, int_seed(self.random_state), repr(self.template()))
        return self.make_fingerprint(
            X, y, *settings, dag.states, *weight_key(sample_weight)
        )

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sensor_columns: Sequence[np.ndarray],
        progress: Progress | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> RegressorBank:
        """Fit out-of-fold and full-data regressors for every state of ``dag``
        (``sample_weight``: as :meth:`ClassifierBank.fit`)."""
        check_bank_settings(self, "RegressorBank.fit")
        template = self.template()
        y = np.asarray(y, dtype=float)
        self.state_columns_ = dag.state_columns(sensor_columns)
        folds = list(
            KFold(
                self.cv, shuffle=True, random_state=int_seed(self.random_state)
            ).split(X)
        )
        oof, self.models_ = _fit_states(
            template,
            X,
            y,
            self.state_columns_,
            folds,
            _predict,
            DummyRegressor(strategy="mean"),
            1,
            self.n_jobs,
            progress,
            sample_weight=sample_weight,
        )
        self.oof_pred_ = oof[:, :, 0]
        self.fingerprint_ = self.fingerprint_for(X, y, dag, sample_weight)
        return self

    @property
    def n_states(self) -> int:
        return len(self.models_)

    def oof_losses(self, y: np.ndarray, loss: str = "squared") -> np.ndarray:
        """Stop loss per example and state: squared or absolute error."""
        diff = self.oof_pred_ - np.asarray(y, dtype=float)[:, None]
        return diff**2 if loss == "squared" else np.abs(diff)

    def check_integrity(self) -> None:
        """Raise ``ValueError`` if the fitted arrays are inconsistent (state
        columns, each state's regressor against its input width)."""

        state_columns = check_state_columns(
            getattr(self, "state_columns_", None), "bank_.state_columns_", None
        )
        models = getattr(self, "models_", None)
        if not isinstance(models, list) or len(models) != len(state_columns):
            raise fail("bank_.models_", f"expected {len(state_columns)} models")
        if not state_columns or len(state_columns[0]):
            raise fail("bank_.state_columns_", "state 0 must be the empty state")
        for k, (model, cols) in enumerate(zip(models, state_columns, strict=True)):
            check_fitted_model(model, f"bank_.models_[{k}]", max(len(cols), 1))
        if getattr(self, "oof_pred_", None) is not None:
            check_array(
                self.oof_pred_,
                "bank_.oof_pred_",
                shape=(None, len(state_columns)),
                kind="f",
            )

    def predict(self, X: np.ndarray, state: int) -> np.ndarray:
        """Predictions of the full-data regressor of ``state``."""
        state = check_index("RegressorBank.predict", "state", state, self.n_states)
        cols = self.state_columns_[state]
        Xs = X[:, cols] if len(cols) else np.zeros((len(X), 1))
        # As predict_proba's: OpenMP threads spin-waiting on a busy machine
        # made a one-row prediction (a session's) ~10 ms per tree.
        with single_threaded():
            return _predict(self.models_[state], Xs)
