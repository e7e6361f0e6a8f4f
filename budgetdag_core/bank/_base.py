"""What every classifier bank shares: folds, out-of-fold losses, calibration.

A bank maps (rows, DAG state) to class probabilities using only the columns of
the state's sensors. Subclasses fill ``oof_proba_`` (raw out-of-fold
probabilities) and implement ``_raw_proba``; :meth:`BaseBank._finish` then fits
one temperature per state on those out-of-fold probabilities and fingerprints
the fit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from numbers import Integral
from typing import Any, ClassVar

import joblib
import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.parallel import Parallel

from .._progress import Progress
from .._threads import map_in_threads, single_threaded, threads_for
from ..dag import SensorDAG
from ..decisions import decide, matrix_loss
from ..validation import (
    MAX_CV,
    check_index,
    check_params,
    int_in,
    int_seed,
    short_repr,
)
from ._calibration import (
    apply_temperature,
    apply_temperatures,
    expected_calibration_errors,
    fit_temperatures,
)

#: Rows from which a cross-fitted bank scores its fold models in parallel threads
#: (below it, starting threads costs more than it saves).
PARALLEL_PREDICT_ROWS = 2_000
#: What a cross-fitted bank predicts with (see ``BaseBank``'s ``serve``).
SERVE_MODES = ("folds", "refit")


def fold_average(
    predict: Callable[[Any], np.ndarray],
    models: Sequence[Any],
    n_rows: int,
    n_jobs: int | None,
) -> np.ndarray:
    """The mean of ``predict(model)`` over the fold models of a cross-fitted bank.

    With ``n_jobs`` above one and at least ``PARALLEL_PREDICT_ROWS`` rows, the
    models are scored in threads (LightGBM and NumPy release the GIL while they
    compute), each limited to one OpenMP/BLAS thread so that the threads do not
    oversubscribe the cores. Every model's output is the same as in one thread
    and the mean is taken in fold order, so the result does not depend on
    ``n_jobs``.
    """
    workers = min(threads_for(n_jobs), len(models))
    if n_rows < PARALLEL_PREDICT_ROWS:
        workers = 1
    return np.mean(map_in_threads(predict, models, workers), axis=0)


def row_blocks(n_rows: int, n_jobs: int | None) -> list[np.ndarray]:
    """Contiguous row blocks to score in threads: one block below
    ``PARALLEL_PREDICT_ROWS`` rows per worker, else up to ``n_jobs`` blocks."""
    workers = min(threads_for(n_jobs), n_rows // PARALLEL_PREDICT_ROWS)
    if workers <= 1:
        return [np.arange(n_rows)]
    return np.array_split(np.arange(n_rows), workers)


def row_chunked(
    predict: Callable[[np.ndarray], np.ndarray], X: np.ndarray, n_jobs: int | None
) -> np.ndarray:
    """``predict(X)``, on large batches as row chunks scored in threads.

    The one-model counterpart of :func:`fold_average`: with ``n_jobs`` above
    one and at least ``PARALLEL_PREDICT_ROWS`` rows, each of up to ``n_jobs``
    threads scores a contiguous block of rows (one OpenMP/BLAS thread each).
    Only for models that score every row on its own (trees: a matrix product
    may round differently by block size), so the output does not depend on
    ``n_jobs``.
    """
    blocks = row_blocks(len(X), n_jobs)
    if len(blocks) == 1:
        return predict(X)
    # Slices (views) keep X's memory layout, which the tree kernels rely on.
    spans = [slice(rows[0], rows[-1] + 1) for rows in blocks]
    return np.concatenate(
        map_in_threads(lambda rows: predict(X[rows]), spans, len(spans))
    )


def parallel_fits(template: Any, n_jobs: int | None, tasks: Iterable[Any]) -> Iterator:
    """The results of a bank's fit ``tasks`` (joblib ``delayed`` calls), in order.

    The bank's own LightGBM models train in C++ with the GIL released, so they
    prefer threads: no worker start-up (on two cores it can cost more than the
    second core gains on a small bank) and no copies of the data. A
    backend set with ``joblib.parallel_config`` (e.g. Dask) still wins; other
    classifiers use joblib's default processes. This thread holds
    :func:`single_threaded` meanwhile, so that the threads' limits nest in it
    and the original limits come back here, in the thread that set them.
    """
    from ._lgbm_trees import LightGBMTrees

    prefer = "threads" if isinstance(template, LightGBMTrees) else None
    with single_threaded():
        yield from Parallel(n_jobs=n_jobs, return_as="generator", prefer=prefer)(tasks)


#: The settings every bank checks before fitting (scikit-learn's vocabulary),
#: and ``fit``'s ``n_classes``. ``cv`` is at most :data:`MAX_CV`: each
#: state's model is fitted once per fold.
BANK_CONSTRAINTS: dict[str, list] = {
    "cv": [int_in(2, MAX_CV)],
    "random_state": ["random_state"],
    "n_jobs": [Integral, None],
    "n_classes": [int_in(2)],
}


def check_bank_settings(
    bank: Any, caller: str, constraints: dict[str, list] | None = None, **values: Any
) -> None:
    """Check ``bank``'s settings named in ``constraints`` (default
    :data:`BANK_CONSTRAINTS`) and the call's ``values``, naming the parameter
    and ``caller`` as the estimators do."""
    constraints = BANK_CONSTRAINTS if constraints is None else constraints
    settings = {
        name: getattr(bank, name)
        for name in constraints
        if name not in values and hasattr(bank, name)
    }
    check_params(caller, constraints, **settings, **values)


def check_serve(serve: Any) -> None:
    """Raise ``ValueError`` unless ``serve`` is one of :data:`SERVE_MODES`."""
    if serve not in SERVE_MODES:
        raise ValueError(f"serve must be one of {list(SERVE_MODES)}; got {serve!r}.")


def refit_template(template: Any, fold_models: Sequence[Any]) -> Any:
    """``template`` for the refit on all rows after cross-fitting.

    A model that early-stopped on its fold's held-out rows (it has ``n_iter_``)
    runs the fold models' mean number of rounds, without a validation split.
    """
    params = template.get_params(deep=False) if hasattr(template, "get_params") else {}
    rounds = [getattr(m, "n_iter_", None) for m in fold_models]
    if params.get("early_stopping") is not True or None in rounds:
        return clone(template)
    return clone(template).set_params(
        early_stopping=False, max_iter=max(1, int(round(float(np.mean(rounds)))))
    )


def weight_key(sample_weight: np.ndarray | None) -> tuple:
    """What row weights add to a bank's fingerprint: nothing without them
    (an unweighted bank's fingerprint is as before weights existed)."""
    if sample_weight is None:
        return ()
    return ("sample_weight", np.asarray(sample_weight, dtype=float))


def _check_rows(rows: Any, n_rows: int) -> np.ndarray:
    """``rows`` as positions of an ``n_rows``-row array, or a ``ValueError``."""
    positions = np.asarray(rows)
    if positions.ndim != 1 or (
        positions.size
        and (
            positions.dtype.kind not in "iu"
            or positions.min() < 0
            or positions.max() >= n_rows
        )
    ):
        raise ValueError(
            f"rows must be a 1-d array of row positions from 0 to {n_rows - 1}; "
            f"got {short_repr(rows)}."
        )
    return positions


def proba_at_every_state(bank: Any, X: np.ndarray, n_states: int) -> np.ndarray:
    """``bank.predict_proba(X, k)`` for every state k, as (n_rows, n_states,
    n_classes): one call per state, for any object with that method."""
    return np.stack([bank.predict_proba(X, k) for k in range(n_states)], axis=1)


def prior_proba(y: np.ndarray, n_rows: int, n_classes: int) -> np.ndarray:
    """Training class frequencies repeated for ``n_rows`` rows (the empty state)."""
    prior = np.bincount(y, minlength=n_classes) / len(y)
    return np.tile(prior, (n_rows, 1))


class BaseBank:
    """Common fitted state and methods of the classifier banks.

    Parameters
    ----------
    classifier : scikit-learn classifier or None
        The model template; each bank kind documents its default.
    cv : int
        Stratified folds for the out-of-fold predictions.
    random_state : int or None
        Seeds the fold split (and the bank's own sampling).
    n_jobs : int or None
        Parallel fits through joblib (honours the active joblib backend). A
        cross-fitted bank also scores its fold models in up to ``n_jobs``
        threads on batches of ``PARALLEL_PREDICT_ROWS`` rows or more (same
        probabilities as with one thread; see :func:`fold_average`).
    calibrate : bool
        Fit a temperature per state on the out-of-fold probabilities and apply it
        to ``oof_proba_`` and :meth:`predict_proba`. It never changes the
        predicted class.
    cross_fit : bool
        Predict with the average of the fold models instead of a model refit on
        all rows (as ``CalibratedClassifierCV(ensemble=True)`` does): one fit
        fewer per state, and the probabilities at predict time come from the
        models whose out-of-fold predictions the policies learned from. Models
        that early-stop on a validation split then stop on their fold's
        held-out rows.
    serve : {"folds", "refit"}, default="folds"
        With ``cross_fit``, what :meth:`predict_proba` uses: ``"folds"``, the
        fold models' average; ``"refit"``, one model per state refit on all
        rows after the folds (an early-stopping model runs the fold models'
        mean number of rounds, so it needs no validation split). ``"refit"``
        predicts ``cv`` times faster (one model instead of ``cv``), which the
        policies' routing feels at every state it visits.
    """

    kind: ClassVar[str] = "base"

    def __init__(
        self,
        classifier: Any = None,
        *,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
        calibrate: bool = True,
        cross_fit: bool = False,
        serve: str = "folds",
    ) -> None:
        self.classifier = classifier
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.calibrate = calibrate
        self.cross_fit = cross_fit
        self.serve = serve

    # ------------------------------------------------------------ fingerprint
    @staticmethod
    def make_fingerprint(X: np.ndarray, y: np.ndarray, *settings: Any) -> str:
        return joblib.hash((np.ascontiguousarray(X), np.asarray(y), settings))

    def template(self) -> Any:
        """The classifier this bank fits (``classifier`` or the kind's default)."""
        raise NotImplementedError

    def _settings(self) -> tuple:
        return (
            self.kind,
            self.cv,
            int_seed(self.random_state),
            repr(self.template()),
            self.calibrate,
            self.cross_fit,
            self.serve,
        )

    def fingerprint_for(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sample_weight: np.ndarray | None = None,
    ) -> str:
        """The ``fingerprint_`` this bank would have after ``fit(X, y, dag, ...)``.

        Lets an estimator check that a bank handed to it was fitted on the same
        rows, labels, weights, DAG and settings before reusing it.
        """
        return self.make_fingerprint(
            X, y, *self._settings(), dag.states, *weight_key(sample_weight)
        )

    # ------------------------------------------------------------------ fit
    def _folds(self, X: np.ndarray, y: np.ndarray) -> list[tuple[np.ndarray, ...]]:
        splitter = StratifiedKFold(
            self.cv, shuffle=True, random_state=int_seed(self.random_state)
        )
        return list(splitter.split(X, y))

    def _finish(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        """Calibrate per state on the out-of-fold probabilities (weighted by
        ``sample_weight``); fingerprint. The calibration errors reported
        (``oof_ece_``) are over the rows, unweighted."""
        K = self.oof_proba_.shape[1]
        rng = np.random.default_rng(int_seed(self.random_state))
        self.oof_ece_raw_ = expected_calibration_errors(self.oof_proba_, y)
        self.temperatures_ = np.ones(K)
        if self.calibrate:
            self.temperatures_ = fit_temperatures(
                self.oof_proba_, y, rng, self.n_jobs, sample_weight
            )
            apply_temperatures(self.oof_proba_, self.temperatures_, self.n_jobs)
        self.oof_ece_ = expected_calibration_errors(self.oof_proba_, y)
        self.fingerprint_ = self.fingerprint_for(X, y, dag, sample_weight)

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        progress: Progress | None = None,
    ) -> BaseBank:
        raise NotImplementedError

    # ------------------------------------------------------------ inference
    @property
    def calibration_(self) -> pd.DataFrame:
        """Per state: ``temperature``, ``ece_raw`` and ``ece``.

        The expected calibration error (top label, 15 bins) of the out-of-fold
        probabilities before and after temperature scaling. Built on demand from
        plain arrays, so the bank stays storable by skops (no pandas inside).
        """
        return pd.DataFrame(
            {
                "state": np.arange(len(self.temperatures_)),
                "temperature": self.temperatures_,
                "ece_raw": self.oof_ece_raw_,
                "ece": self.oof_ece_,
            }
        )

    @property
    def n_states(self) -> int:
        return len(self.state_columns_)

    def oof_predictions(self, loss_matrix: np.ndarray | None = None) -> np.ndarray:
        """Out-of-fold predicted class index, shape (n_samples, n_states).

        With ``loss_matrix`` the class of least expected loss, else the most
        probable one.
        """
        return decide(self.oof_proba_, loss_matrix)

    def oof_losses(
        self, y: np.ndarray, loss_matrix: np.ndarray | None = None
    ) -> np.ndarray:
        """Stop-and-classify loss per example and state: 0/1, or ``loss_matrix``.

        ``loss_matrix[i, j]`` is the loss of predicting class j when the truth is i.
        """
        pred = self.oof_predictions(loss_matrix)
        if loss_matrix is None:
            return (pred != np.asarray(y)[:, None]).astype(float)
        return matrix_loss(loss_matrix, y, pred)

    def _raw_proba(self, X: np.ndarray, state: int) -> np.ndarray:
        raise NotImplementedError

    def predict_proba(
        self, X: np.ndarray, state: int, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """Calibrated class probabilities at ``state``, shape (n_rows, n_classes).

        ``X`` holds all spec columns; only the columns of the state's sensors are
        read (others may hold anything, NaN included). ``rows``: the positions
        of the rows of ``X`` to score (None: all), as ``X[rows]`` gives them
        without copying the columns that are not read (routing asks for the
        rows at a state).
        """
        state = check_index("predict_proba", "state", state, self.n_states)
        X = np.asarray(X, dtype=float)
        with single_threaded():
            if rows is None:
                proba = self._raw_proba(X, state)
            else:
                proba = self._raw_proba_of_rows(X, _check_rows(rows, len(X)), state)
        return self._calibrated(proba, state)

    def _raw_proba_of_rows(
        self, X: np.ndarray, rows: np.ndarray, state: int
    ) -> np.ndarray:
        """``_raw_proba(X[rows], state)``; a bank may read only what it needs."""
        return self._raw_proba(X[rows], state)

    def _calibrated(self, proba: np.ndarray, state: int) -> np.ndarray:
        """``proba`` of ``state`` under its fitted temperature."""
        temperatures = getattr(self, "temperatures_", None)
        if temperatures is None:  # banks pickled before calibration existed
            return proba
        return apply_temperature(proba, float(temperatures[state]))

    def predict_proba_states(self, X: np.ndarray) -> np.ndarray:
        """:meth:`predict_proba` at every state, shape (n_rows, n_states, n_classes).

        What the trade-off baselines need of a test split. The masked bank
        computes it in one walk per row and tree (the same numbers).
        """
        return proba_at_every_state(self, np.asarray(X, dtype=float), self.n_states)
