"""The classifier bank: one classifier per DAG state, with out-of-fold predictions.

The bank does not depend on acquisition costs, so one fitted bank serves every
``cost_scale`` (a trade-off sweep, the app's cost slider, budget targeting).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import joblib
import numpy as np
from sklearn.base import clone
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.parallel import Parallel, delayed

from .dag import SensorDAG

Progress = Callable[[str, int, int], None]


def default_classifier() -> Any:
    """Standardised multinomial logistic regression."""
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))


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
) -> tuple[Any, np.ndarray | None]:
    """Fit on ``train`` rows (all when None); return the model and test outputs.

    A state without columns fits ``empty`` (class priors or the mean).
    """
    if len(cols) == 0:
        estimator = empty
    Xs = X[:, cols] if len(cols) else np.zeros((len(X), 1))
    rows = slice(None) if train is None else train
    model = clone(estimator).fit(Xs[rows], y[rows])
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
) -> tuple[np.ndarray, list[Any]]:
    """Out-of-fold outputs (n, K, width) float32 and full-data models per state.

    The shared loop of all banks: every (state, fold) fit and every state's
    full-data refit is one joblib task.
    """
    n, K = len(X), len(state_columns)
    jobs = [
        (k, train, test) for k in range(K) for train, test in [*folds, (None, None)]
    ]
    results = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_fit_predict)(
            template, X, y, state_columns[k], train, test, outputs, empty
        )
        for k, train, test in jobs
    )
    oof = np.zeros((n, K, width), dtype=np.float32)
    models: list[Any] = [None] * K
    for done, ((k, _, test), (model, out)) in enumerate(
        zip(jobs, results, strict=True), start=1
    ):
        if test is None:
            models[k] = model
        else:
            oof[test, k] = out.reshape(len(test), width)
        if progress is not None:
            progress("bank", done, len(jobs))
    return oof, models


def _proba(model: Any, Xs: np.ndarray, n_classes: int) -> np.ndarray:
    """Class probabilities over all ``n_classes`` (encoded labels 0..C-1)."""
    known = np.asarray(model.classes_, dtype=int)
    out = np.zeros((len(Xs), n_classes))
    if hasattr(model, "predict_proba"):
        out[:, known] = model.predict_proba(Xs)
    else:
        out[np.arange(len(Xs)), np.asarray(model.predict(Xs), dtype=int)] = 1.0
    return out


class ClassifierBank:
    """One classifier per DAG state, cloned from ``classifier``.

    Parameters
    ----------
    classifier : scikit-learn classifier, optional
        Template cloned per state; default :func:`default_classifier`. The empty
        state always predicts the training class priors.
    cv : int
        Stratified folds for the out-of-fold predictions.
    random_state : int or None
        Seeds the fold split.
    n_jobs : int or None
        Parallel fits through joblib (honours the active joblib backend).

    Attributes
    ----------
    oof_proba_ : ndarray (n_samples, n_states, n_classes), float32
        Out-of-fold class probabilities of each state's classifier.
    models_ : list
        Per state, the classifier refit on all rows (used at predict time).
    fingerprint_ : str
        Hash of the training data and settings; guards reuse.
    """

    def __init__(
        self,
        classifier: Any = None,
        *,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.classifier = classifier
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs

    @staticmethod
    def make_fingerprint(X: np.ndarray, y: np.ndarray, *settings: Any) -> str:
        return joblib.hash((np.ascontiguousarray(X), np.asarray(y), settings))

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        progress: Progress | None = None,
    ) -> ClassifierBank:
        """Fit out-of-fold and full-data classifiers for every state of ``dag``.

        ``X`` holds all spec columns; ``sensor_columns[m]`` are the positions of
        sensor m's columns; ``y`` is encoded as 0..n_classes-1.
        """
        template = (
            self.classifier if self.classifier is not None else (default_classifier())
        )
        self.n_classes_ = n_classes
        self.state_columns_ = dag.state_columns(sensor_columns)
        folds = list(
            StratifiedKFold(
                self.cv, shuffle=True, random_state=self.random_state
            ).split(X, y)
        )
        self.oof_proba_, self.models_ = _fit_states(
            template,
            X,
            y,
            self.state_columns_,
            folds,
            partial(_proba, n_classes=n_classes),
            DummyClassifier(strategy="prior"),
            n_classes,
            self.n_jobs,
            progress,
        )
        self.fingerprint_ = self.make_fingerprint(
            X, y, self.cv, self.random_state, repr(template), dag.states
        )
        return self

    @property
    def n_states(self) -> int:
        return len(self.models_)

    def oof_predictions(self) -> np.ndarray:
        """Out-of-fold predicted class index, shape (n_samples, n_states)."""
        return self.oof_proba_.argmax(axis=2)

    def oof_losses(
        self, y: np.ndarray, loss_matrix: np.ndarray | None = None
    ) -> np.ndarray:
        """Stop-and-classify loss per example and state: 0/1, or ``loss_matrix``.

        ``loss_matrix[i, j]`` is the loss of predicting class j when the truth is i.
        """
        pred = self.oof_predictions()
        if loss_matrix is None:
            return (pred != np.asarray(y)[:, None]).astype(float)
        return np.asarray(loss_matrix, dtype=float)[np.asarray(y)[:, None], pred]

    def predict_proba(self, X: np.ndarray, state: int) -> np.ndarray:
        """Class probabilities of the full-data classifier of ``state``."""
        cols = self.state_columns_[state]
        Xs = X[:, cols] if len(cols) else np.zeros((len(X), 1))
        return _proba(self.models_[state], Xs, self.n_classes_)


def _predict(model: Any, Xs: np.ndarray) -> np.ndarray:
    return np.asarray(model.predict(Xs), dtype=float)


class RegressorBank:
    """One regressor per DAG state, cloned from ``regressor``: the regression twin
    of :class:`ClassifierBank` (same fitting loop, ``KFold`` instead of stratified
    folds, predictions instead of probabilities).

    Parameters
    ----------
    regressor : scikit-learn regressor, optional
        Template cloned per state; default :func:`default_regressor`. The empty
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

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sensor_columns: Sequence[np.ndarray],
        progress: Progress | None = None,
    ) -> RegressorBank:
        """Fit out-of-fold and full-data regressors for every state of ``dag``."""
        template = self.regressor if self.regressor is not None else default_regressor()
        y = np.asarray(y, dtype=float)
        self.state_columns_ = dag.state_columns(sensor_columns)
        folds = list(
            KFold(self.cv, shuffle=True, random_state=self.random_state).split(X)
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
        )
        self.oof_pred_ = oof[:, :, 0]
        self.fingerprint_ = self.make_fingerprint(
            X, y, self.cv, self.random_state, repr(template), dag.states
        )
        return self

    @property
    def n_states(self) -> int:
        return len(self.models_)

    def oof_losses(self, y: np.ndarray, loss: str = "squared") -> np.ndarray:
        """Stop loss per example and state: squared or absolute error."""
        diff = self.oof_pred_ - np.asarray(y, dtype=float)[:, None]
        return diff**2 if loss == "squared" else np.abs(diff)

    def predict(self, X: np.ndarray, state: int) -> np.ndarray:
        """Predictions of the full-data regressor of ``state``."""
        cols = self.state_columns_[state]
        Xs = X[:, cols] if len(cols) else np.zeros((len(X), 1))
        return _predict(self.models_[state], Xs)
