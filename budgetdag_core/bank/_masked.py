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
from functools import partial
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.utils import get_tags
from sklearn.utils.parallel import delayed

from .._integrity import check_array, check_indices, check_int, fail
from .._threads import map_in_threads, single_threaded, threads_for
from ..dag import SensorDAG
from ..validation import int_in, int_seed
from ._base import (
    BANK_CONSTRAINTS,
    BaseBank,
    Progress,
    check_bank_settings,
    check_serve,
    fold_average,
    parallel_fits,
    prior_proba,
    refit_template,
    row_chunked,
)
from ._integrity import check_classifier_bank, check_fitted_model
from ._lgbm_trees import LightGBMTrees, shared_walk_order
from ._models import (
    fit_weighted,
    masked_classifier,
    stops_on_given_rows,
    unstopped,
    weighted_prior,
)
from ._row_order import scored_in_order

# Rows per predict call when scoring many states at once (bounds memory).
PREDICT_CHUNK_ROWS = 200_000
# Cap on the stacked training rows (float64: 1e6 rows x 50 columns = 400 MB per
# fit); long tables get fewer masks per row instead.
MAX_STACK_ROWS = 1_000_000
#: Most (row, random subset) pairs a many-sensor bank's fold models learn
#: from together (:func:`subsets_per_row`). Their fits' time grows with the
#: pairs, while on a long table a few random subsets per row already give
#: every subset size thousands of rows (``benchmarks/bench_sparse_pairs.py``
#: measures the time and the errors, e.g. on shuttle's 20 003 rows). Tables
#: of up to 6 250 rows keep their 16 subsets per row.
SPARSE_FIT_PAIRS = 100_000
#: Most masks per training row (``masks_per_row``): each is a copy of the row
#: in the stack, so a short table's stack grows with it (up to
#: ``MAX_STACK_ROWS``); 1024 covers every state of a 10-sensor DAG per row.
MAX_MASKS_PER_ROW = 1024
#: What a masked bank checks before fitting (see ``BANK_CONSTRAINTS``).
MASKED_CONSTRAINTS = {
    **BANK_CONSTRAINTS,
    "masks_per_row": [int_in(1, MAX_MASKS_PER_ROW)],
}


def subsets_per_row(masks_per_row: int, n_rows: int) -> int:
    """Random subsets per training row of a many-sensor bank's stack:
    ``masks_per_row``, fewer on a long table so that the stack holds at most
    :data:`SPARSE_FIT_PAIRS` pairs (at least one per row).

    Examples
    --------
    >>> subsets_per_row(16, 1_000), subsets_per_row(16, 20_000)
    (16, 5)
    >>> subsets_per_row(16, 500_000)
    1
    """
    return min(masks_per_row, max(1, SPARSE_FIT_PAIRS // max(n_rows, 1)))


def masked_proba(model: Any, Xs: np.ndarray, n_classes: int) -> np.ndarray:
    out = np.zeros((len(Xs), n_classes))
    out[:, np.asarray(model.classes_, dtype=int)] = model.predict_proba(Xs)
    return out


def _state_proba(
    model: LightGBMTrees,
    X: np.ndarray,
    column_masks: np.ndarray,
    n_classes: int,
    out: np.ndarray,
) -> None:
    """``out[:, k]``: the model's probabilities of rows ``X`` at every state
    k >= 1 (the compiled kernel walks each tree once per pattern of the columns
    it reads, instead of scoring a NaN-masked copy of the rows per state).

    Rows go in blocks of about ``PREDICT_CHUNK_ROWS`` (row, state) pairs, each
    block with every state: a row then walks each tree once, where blocks of
    states would make it walk each tree once per block."""
    known = np.asarray(model.classes_, dtype=int)
    states = np.arange(1, len(column_masks))
    size = max(1, PREDICT_CHUNK_ROWS // max(len(states), 1))
    for start in range(0, len(X), size):
        rows = slice(start, start + size)
        raw = model.state_decision_function(X[rows], column_masks[states])
        proba = model.proba_from_scores(raw)  # (rows, states, classes)
        out[rows, states[:, None], known[None, :]] = proba


def _shared_tree_columns(pairs: Sequence[tuple[Any, np.ndarray]]) -> bool:
    """Whether ``pairs`` are several boosted-tree fold models that read the
    same columns (then :func:`_fold_tree_proba` scores them together)."""
    return len(pairs) > 1 and all(
        isinstance(model, LightGBMTrees) and np.array_equal(cols, pairs[0][1])
        for model, cols in pairs
    )


def _present_columns(
    X: np.ndarray, cols: np.ndarray, present: np.ndarray, rows: np.ndarray | None
) -> tuple[np.ndarray, bool]:
    """``X[rows][:, cols]`` (``rows`` None: all) laid out by column (the tree
    kernels' layout) with only the ``present`` columns copied: the kernels
    score an absent column as missing whatever it holds, so it stays zero
    (uncopied). Also whether the copied values hold a NaN."""
    n = len(X) if rows is None else len(rows)
    out = np.zeros((len(cols), n))
    where = np.flatnonzero(present)
    if not len(where):
        return out.T, False
    part = X[:, cols[where]] if rows is None else X[np.ix_(rows, cols[where])]
    out[where] = part.T
    return out.T, bool(np.isnan(part).any())


def _fold_tree_proba(
    models: Sequence[LightGBMTrees],
    cols: np.ndarray,
    present: np.ndarray,
    n_classes: int,
    X: np.ndarray,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """The fold models' mean probabilities (fold order) of rows ``rows`` of
    ``X`` (None: all) at a state whose columns ``cols`` are ``present``: the
    rows' columns copied and checked for NaN once, and walked in one shared
    similarity order where that pays, for all the folds (each model scoring
    them alone copied, checked and weighed sorting them again).
    Equal bit for bit to the mean of each model's ``predict_proba``."""
    Xc, has_nan = _present_columns(X, cols, present, rows)
    walk = shared_walk_order(models, Xc, present)

    def mean(ordered: np.ndarray) -> np.ndarray:
        per_model = []
        for model in models:
            out = np.zeros((len(ordered), n_classes))
            known = np.asarray(model.classes_, dtype=int)
            out[:, known] = model.predict_proba(
                ordered, present=present, sort_rows=False, has_nan=has_nan
            )
            per_model.append(out)
        return np.mean(per_model, axis=0)

    return scored_in_order(mean, Xc, walk)


def stack_masked(
    X: np.ndarray,
    rows: np.ndarray,
    states: np.ndarray,
    column_masks: np.ndarray,
) -> np.ndarray:
    """Rows ``X[rows]`` with the columns outside ``states``' sensors set to NaN."""
    Xs = X[rows].astype(float, copy=True)
    Xs[~column_masks[states]] = np.nan
    return Xs


def fit_fold(
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
    score: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[Any, np.ndarray | None, np.ndarray]:
    """Fit on the mask stack of ``train`` rows; score ``test`` rows at every state.

    An early-stopping model validates on whole rows: the ``test`` rows' masks
    with ``stop_on_test`` (cross-fitting), else a random fraction of ``train``.
    Returns the model, the out-of-fold probabilities (None without ``test``, or
    with ``score=False``: :func:`_score_fold` then scores them) and the columns
    the model reads (a boolean mask over ``X``'s columns). ``sample_weight``
    (per row of ``X``): each mask copy of row i weighs ``sample_weight[i]``.
    """
    model = clone(template)
    in_train = np.zeros(len(X), dtype=bool)
    in_train[train] = True
    val = np.zeros(0, dtype=int)
    stops = stops_on_given_rows(model)
    if stops and stop_on_test and test is not None:
        val = np.asarray(test)
    elif stops:
        rng = np.random.default_rng(seed)
        fraction = model.get_params()["validation_fraction"]
        n_val = max(1, int(round(fraction * len(train))))
        val = rng.choice(train, n_val, replace=False)
        in_train[val] = False
        # A class whose rows all went to validation would be unseen by the fit
        # (tiny tables): keep its rows for training.
        lost = np.setdiff1d(y[train], y[in_train])
        if lost.size:
            val = val[~np.isin(y[val], lost)]
            in_train[train] = True
            in_train[val] = False
        if not val.size:
            unstopped(model)
    # Columns no training mask reveals would be all NaN, which histogram boosting
    # cannot bin (sensors outside every selected subset): the model does not get
    # them; they are blank at every state it serves anyway.
    used = column_masks[np.unique(pair_states[in_train[pair_rows]])].any(axis=0)
    if not used.all():
        X, column_masks = X[:, used], column_masks[:, used]
    fit_kwargs: dict[str, Any] = {}
    w = val_w = None
    if val.size:
        in_val = np.zeros(len(X), dtype=bool)
        in_val[val] = True
        sel = in_val[pair_rows]
        fit_kwargs = {
            "X_val": stack_masked(X, pair_rows[sel], pair_states[sel], column_masks),
            "y_val": y[pair_rows[sel]],
        }
        if sample_weight is not None:
            val_w = sample_weight[pair_rows[sel]]
    sel = in_train[pair_rows]
    Xs = stack_masked(X, pair_rows[sel], pair_states[sel], column_masks)
    if sample_weight is not None:
        w = sample_weight[pair_rows[sel]]
    with single_threaded():
        fit_weighted(model, Xs, y[pair_rows[sel]], w, val_w, **fit_kwargs)
    if test is None or not score:
        return model, None, used
    return model, _score_fold(model, X, y, column_masks, train, test, n_classes), used


def fit_folds(
    template: Any,
    n_jobs: int | None,
    X: np.ndarray,
    y: np.ndarray,
    pair_rows: np.ndarray,
    pair_states: np.ndarray,
    column_masks: np.ndarray,
    folds: Any,
    n_classes: int,
    stop_on_test: bool,
    score: bool,
    sample_weight: np.ndarray | None = None,
) -> Any:
    """:func:`fit_fold` on each ``((train, test), seed)`` of ``folds``, in
    parallel (``n_jobs``): its results, in the folds' order."""
    return parallel_fits(
        template,
        n_jobs,
        (
            delayed(fit_fold)(
                template,
                X,
                y,
                pair_rows,
                pair_states,
                column_masks,
                train,
                test,
                n_classes,
                int(seed),
                stop_on_test,
                score,
                sample_weight,
            )  # fmt: skip
            for (train, test), seed in folds
        ),
    )


def _score_fold(
    model: Any,
    X: np.ndarray,
    y: np.ndarray,
    column_masks: np.ndarray,
    train: np.ndarray,
    test: np.ndarray,
    n_classes: int,
) -> np.ndarray:
    """The fold model's probabilities of its ``test`` rows at every state
    (the class prior of its ``train`` rows at the empty state); ``X`` and
    ``column_masks`` hold the model's columns only."""
    K = len(column_masks)
    proba = np.zeros((len(test), K, n_classes), dtype=np.float32)
    proba[:, 0] = prior_proba(y[train], len(test), n_classes)
    with single_threaded():
        if isinstance(model, LightGBMTrees):
            _state_proba(model, X[test], column_masks, n_classes, proba)
            return proba
        per_chunk = max(1, PREDICT_CHUNK_ROWS // len(test))
        for start in range(1, K, per_chunk):
            states = np.arange(start, min(K, start + per_chunk))
            rows = np.tile(test, len(states))
            st = np.repeat(states, len(test))
            p = masked_proba(model, stack_masked(X, rows, st, column_masks), n_classes)
            proba[:, states] = p.reshape(len(states), len(test), n_classes).swapaxes(
                0, 1
            )
    return proba


class MaskedBank(BaseBank):
    """One missing-value-capable classifier for all DAG states.

    Parameters
    ----------
    classifier : scikit-learn classifier accepting NaN, optional
        Default: LightGBM boosting, which routes missing values natively
        (``boosting_classifier()``). When it early-stops
        on a validation fraction, the validation rows are split by original
        row, so no replica of a training row scores the stopping rule.
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
    serve : {"folds", "refit"}, default="folds"
        With ``cross_fit``: predict with the fold models' average, or with one
        model refit on all rows' masks after the folds (the fold models' mean
        number of rounds; see ``BaseBank``).
    masks_per_row : int, default=16
        When the DAG has at most this many non-empty states, every training row
        is replicated under every state's mask. Otherwise each row gets this many
        masks drawn at random (with replacement): a state size is drawn uniformly,
        then a state of that size, so the few small states (which every policy
        visits first) and the full state are covered far more densely than the
        many mid-sized ones. Long tables get fewer masks per row so that the
        stack stays under ``MAX_STACK_ROWS`` (one million) rows. At most
        ``MAX_MASKS_PER_ROW`` (1024): each mask is a copy of the row.

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
    model_columns_ : ndarray of int
        The columns ``model_`` reads: those some state sees (the others, of
        sensors in no DAG state, would be all missing).
    oof_proba_, state_columns_, temperatures_, calibration_, fingerprint_
        As in :class:`~budgetdag_core.bank.ClassifierBank`.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, bank_kind="masked", cv=3,
    ...                             random_state=0).fit(demo.X_train, demo.y_train)
    >>> type(model.bank_).__name__, model.bank_.column_masks_.shape
    ('MaskedBank', (8, 3))
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
        serve: str = "folds",
        masks_per_row: int = 16,
    ) -> None:
        super().__init__(
            classifier,
            cv=cv,
            random_state=random_state,
            n_jobs=n_jobs,
            calibrate=calibrate,
            cross_fit=cross_fit,
            serve=serve,
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

    def mask_pairs(
        self, dag: SensorDAG, n_rows: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Which (row, state) pairs the stack holds: all, or a sample per row."""
        check_bank_settings(
            self,
            "MaskedBank.mask_pairs",
            {**MASKED_CONSTRAINTS, "n_rows": [int_in(1)]},
            n_rows=n_rows,
        )
        states = np.arange(1, dag.n_states)
        per_row = min(self.masks_per_row, max(1, MAX_STACK_ROWS // n_rows))
        if len(states) <= per_row:
            return np.repeat(np.arange(n_rows), len(states)), np.tile(states, n_rows)
        sizes = np.array([dag.states[k].bit_count() for k in states])
        _, inverse, counts = np.unique(sizes, return_inverse=True, return_counts=True)
        weights = 1.0 / (len(counts) * counts[inverse])
        drawn = rng.choice(states, size=(n_rows, per_row), p=weights)
        return np.repeat(np.arange(n_rows), per_row), drawn.ravel()

    def _plan(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        state_columns: Sequence[np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list, np.ndarray]:
        """What :meth:`fit` fits: the states' column masks, the stack's
        (row, state) pairs, the (train, test) folds (and the all-rows refit
        without ``cross_fit``) and each fit's seed."""
        n = len(X)
        masks = np.zeros((dag.n_states, X.shape[1]), dtype=bool)
        for k, cols in enumerate(state_columns):
            masks[k, cols] = True
        rng = np.random.default_rng(int_seed(self.random_state))
        pair_rows, pair_states = self.mask_pairs(dag, n, rng)
        jobs = self._folds(X, y)
        if not self.cross_fit:
            jobs.append((np.arange(n), None))
        seeds = rng.integers(0, 2**31 - 1, size=len(jobs))
        return masks, pair_rows, pair_states, jobs, seeds

    def fit_first_fold(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
    ) -> Any:
        """The first fold's model, fitted as :meth:`fit` fits it (same stack,
        seed and early stopping), unscored; the bank stays unfitted.

        One fold is a known share of the bank's work, so timing it on the
        user's data measures what no formula knows before fitting: how many
        rounds early stopping runs (fit-time estimates,
        :func:`~budgetdag_core.estimates.probe_fit`).
        """
        check_bank_settings(
            self, "MaskedBank.fit_first_fold", MASKED_CONSTRAINTS, n_classes=n_classes
        )
        template = self.template()
        self._check_template(template)
        masks, pair_rows, pair_states, jobs, seeds = self._plan(
            X, y, dag, dag.state_columns(sensor_columns)
        )
        train, test = jobs[0]
        model, _, _ = fit_fold(
            template,
            X,
            y,
            pair_rows,
            pair_states,
            masks,
            train,
            test,
            n_classes,
            int(seeds[0]),
            self.cross_fit,
            score=False,
        )
        return model

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: SensorDAG,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        progress: Progress | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> MaskedBank:
        """Fit one model per fold and one on all rows, each on the mask stack.

        Same arguments as :meth:`ClassifierBank.fit` (``sample_weight``: each
        mask copy of a row weighs the row's weight; the prior too).
        """
        check_bank_settings(
            self, "MaskedBank.fit", MASKED_CONSTRAINTS, n_classes=n_classes
        )
        template = self.template()
        self._check_template(template)
        check_serve(self.serve)
        n, K = len(X), dag.n_states
        self.n_classes_ = n_classes
        self.state_columns_ = dag.state_columns(sensor_columns)
        masks, pair_rows, pair_states, jobs, seeds = self._plan(
            X, y, dag, self.state_columns_
        )
        self.column_masks_ = masks
        # Boosted trees' folds are scored in this thread as their models come
        # back, while the workers fit the next folds (the core the last fold
        # leaves idle scores instead); other models score in their workers.
        here = isinstance(template, LightGBMTrees)
        total = len(jobs) + int(self.cross_fit and self.serve == "refit")
        results = fit_folds(
            template, self.n_jobs, X, y, pair_rows, pair_states, masks,
            zip(jobs, seeds, strict=True), n_classes, self.cross_fit, not here,
            sample_weight,
        )  # fmt: skip
        self.oof_proba_ = np.zeros((n, K, n_classes), dtype=np.float32)
        fold_models, fold_columns = [], []
        for done, ((train, test), (model, proba, used)) in enumerate(
            zip(jobs, results, strict=True), start=1
        ):
            if test is None:
                self.model_ = model
                self.model_columns_ = np.flatnonzero(used)
            else:
                if proba is None:  # scored here (see `here`)
                    own = slice(None) if used.all() else used
                    proba = _score_fold(
                        model, X[:, own], y, masks[:, own], train, test, n_classes
                    )
                self.oof_proba_[test] = proba
                fold_models.append(model)
                fold_columns.append(np.flatnonzero(used))
            if progress is not None:
                progress("bank", done, total)
        if self.cross_fit and self.serve == "refit":
            model, _, used = fit_fold(
                refit_template(template, fold_models),
                X,
                y,
                pair_rows,
                pair_states,
                masks,
                np.arange(n),
                None,
                n_classes,
                int(seeds[0]),
                sample_weight=sample_weight,
            )
            self.model_, self.model_columns_ = model, np.flatnonzero(used)
            if progress is not None:
                progress("bank", total, total)
        elif self.cross_fit:
            self.model_ = fold_models
            self.model_columns_ = fold_columns
        self.n_columns_ = X.shape[1]
        self.prior_, self.prior_model_ = weighted_prior(y, n_classes, sample_weight)
        self._finish(X, y, dag, sample_weight)
        return self

    @property
    def models_(self) -> list[Any]:
        return [self.prior_model_] + [self.model_] * (self.n_states - 1)

    def check_integrity(self) -> None:
        """Raise ``ValueError`` if the fitted arrays are inconsistent: state
        columns against the column masks, the prior, and the shared model
        against the full width (boosting trees node by node)."""

        state_columns = check_classifier_bank(self)
        masks = check_array(
            getattr(self, "column_masks_", None),
            "bank_.column_masks_",
            shape=(len(state_columns), getattr(self, "n_columns_", None)),
            kind="b",
        )
        n_columns = masks.shape[1]
        for k, cols in enumerate(state_columns):
            if cols.size and cols.max() >= n_columns:
                raise fail(f"bank_.state_columns_[{k}]", "column out of range")
            if not np.array_equal(np.flatnonzero(masks[k]), np.sort(cols)):
                raise fail(f"bank_.column_masks_[{k}]", "differs from its columns")
        prior = check_array(
            getattr(self, "prior_", None),
            "bank_.prior_",
            shape=(self.n_classes_,),
            kind="f",
            finite=True,
        )
        if (prior < 0).any():
            raise fail("bank_.prior_", "negative class frequencies")
        check_int(n_columns, "bank_.column_masks_ width", 1)
        models = self.model_ if isinstance(self.model_, list) else [self.model_]
        columns = getattr(self, "model_columns_", None)
        if columns is None:  # banks saved before model_columns_ existed
            columns = [np.arange(n_columns)] * len(models)
        elif not isinstance(columns, list):
            columns = [columns]
        if len(columns) != len(models):
            raise fail("bank_.model_columns_", f"expected {len(models)} entries")
        for f, (model, cols) in enumerate(zip(models, columns, strict=True)):
            where = "bank_.model_columns_" + (f"[{f}]" if len(models) > 1 else "")
            used = check_indices(cols, where, n_columns)
            if used.size > 1 and (np.diff(used) <= 0).any():
                raise fail(where, "not strictly increasing")
            name = "bank_.model_" + (f"[{f}]" if len(models) > 1 else "")
            check_fitted_model(model, name, used.size, self.n_classes_)
        check_fitted_model(self.prior_model_, "bank_.prior_model_", 1, self.n_classes_)

    def predict_proba_states(self, X: np.ndarray) -> np.ndarray:
        """:meth:`predict_proba` at every state, (n_rows, n_states, n_classes).

        With boosted trees, each row walks each tree once for all states (the
        kernel of the out-of-fold scores), in row blocks scored in threads
        (``n_jobs``), instead of one walk per state: the same sums in the same
        order, the fold models averaged in fold order and each state calibrated
        as :meth:`predict_proba` does, so the numbers are equal bit for bit.
        """
        X = np.asarray(X, dtype=float)
        pairs = self._model_pairs(X.shape[1])
        if not all(isinstance(model, LightGBMTrees) for model, _ in pairs):
            return super().predict_proba_states(X)
        n, K = len(X), self.n_states
        out = np.empty((n, K, self.n_classes_))
        out[:, 0] = self.predict_proba(X, 0)
        if K == 1:
            return out
        # Rows per block: about PREDICT_CHUNK_ROWS (row, state) pairs at a time.
        size = max(1, PREDICT_CHUNK_ROWS // K)
        blocks = [np.arange(i, min(n, i + size)) for i in range(0, n, size)]

        def score(rows: np.ndarray) -> None:
            per_model = []
            for model, cols in pairs:
                proba = np.zeros((len(rows), K, self.n_classes_))
                _state_proba(
                    model, X[np.ix_(rows, cols)], self.column_masks_[:, cols],
                    self.n_classes_, proba,
                )  # fmt: skip
                per_model.append(proba[:, 1:])
            # As _raw_proba: one model as it is, folds averaged in fold order.
            raw = per_model[0] if len(per_model) == 1 else np.mean(per_model, axis=0)
            for k in range(1, K):
                out[rows, k] = self._calibrated(np.ascontiguousarray(raw[:, k - 1]), k)

        workers = min(threads_for(self.n_jobs), len(blocks))
        with single_threaded():
            map_in_threads(score, blocks, workers)
        return out

    def _model_pairs(self, n_columns: int) -> list[tuple[Any, np.ndarray]]:
        """(model, the columns it reads) for the served model or each fold model."""
        models = self.model_ if isinstance(self.model_, list) else [self.model_]
        # Banks saved before model_columns_ existed fed the model every column.
        columns = getattr(self, "model_columns_", None)
        if columns is None:
            columns = [np.arange(n_columns)] * len(models)
        elif not isinstance(columns, list):
            columns = [columns]
        return list(zip(models, columns, strict=True))

    def _fold_trees_proba(
        self,
        X: np.ndarray,
        state: int,
        pairs: list[tuple[Any, np.ndarray]],
        rows: np.ndarray | None,
    ) -> np.ndarray:
        """:func:`_fold_tree_proba` of ``rows`` of ``X`` (None: all), large
        batches in row blocks scored in threads (up to ``n_jobs``)."""
        score = partial(
            _fold_tree_proba,
            [model for model, _ in pairs],
            pairs[0][1],
            self.column_masks_[state, pairs[0][1]],
            self.n_classes_,
        )
        if rows is None:
            return row_chunked(score, X, self.n_jobs)
        return row_chunked(lambda block: score(X, block), rows, self.n_jobs)

    def _raw_proba_of_rows(
        self, X: np.ndarray, rows: np.ndarray, state: int
    ) -> np.ndarray:
        pairs = self._model_pairs(X.shape[1])
        if state == 0 or not _shared_tree_columns(pairs):
            return self._raw_proba(X[rows], state)
        return self._fold_trees_proba(X, state, pairs, rows)

    def _raw_proba(self, X: np.ndarray, state: int) -> np.ndarray:
        if state == 0:
            return np.tile(self.prior_, (len(X), 1))

        def proba(pair: tuple[Any, np.ndarray], X: np.ndarray = X) -> np.ndarray:
            model, cols = pair
            present = self.column_masks_[state, cols]
            if isinstance(model, LightGBMTrees):  # absent columns scored as missing
                out = np.zeros((len(X), self.n_classes_))
                known = np.asarray(model.classes_, dtype=int)
                out[:, known] = model.predict_proba(X[:, cols], present=present)
                return out
            if hasattr(model, "proba_of_columns"):  # reads the present columns only
                out = np.zeros((len(X), self.n_classes_))
                known = np.asarray(model.classes_, dtype=int)
                out[:, known] = model.proba_of_columns(X[:, cols[present]], present)
                return out
            Xm = X[:, cols].astype(float, copy=True)
            Xm[:, ~present] = np.nan
            return masked_proba(model, Xm, self.n_classes_)

        pairs = self._model_pairs(X.shape[1])
        if _shared_tree_columns(pairs):  # fold trees reading the same columns
            return self._fold_trees_proba(X, state, pairs, None)
        if len(pairs) == 1:
            model, cols = pairs[0]
            if not isinstance(model, LightGBMTrees):
                return proba(pairs[0])
            return row_chunked(
                lambda rows: proba((model, cols), rows),
                X,
                self.n_jobs,
            )
        # Cross-fitted: the fold models' average.
        return fold_average(proba, pairs, len(X), self.n_jobs)
