"""The any-mask bank of a sparse DAG: one masked model for every sensor subset.

A :class:`~budgetdag_core.bank.MaskedBank` is fitted on the masks of its DAG's
states; a sparse DAG's states are only known once the DAG is grown, and growing
it needs a bank. :class:`SparseMaskedBank` therefore fits its fold models on
random sensor subsets (a size drawn uniformly, then a subset of that size), so
that each fold model serves any subset, and keeps them to score any (row,
subset) out of fold while the DAG grows. :meth:`SparseMaskedBank.bind` then
gives it the DAG's states, as a masked bank has them, with one temperature per
subset-size bin fitted on the out-of-fold probabilities of the (row, state)
pairs the growth visited: the states a policy visits, not random subsets.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._integrity import check_array, fail
from .._threads import single_threaded
from ..validation import int_seed
from ._base import Progress, check_bank_settings, refit_template
from ._calibration import apply_temperature, fit_temperatures
from ._encoded import MaskEncodedClassifier
from ._lgbm_trees import LightGBMTrees
from ._masked import (
    MASKED_CONSTRAINTS,
    MAX_STACK_ROWS,
    MaskedBank,
    fit_fold,
    fit_folds,
    masked_proba,
    stack_masked,
    subsets_per_row,
)
from ._models import weighted_prior

#: Upper edges of the subset-size bins (fractions of the sensors) that share a
#: temperature.
SIZE_BIN_EDGES = (0.04, 0.08, 0.15, 0.25, 0.4, 0.6, 0.8)
#: (row, state) pairs a size bin needs to fit its own temperature.
MIN_CALIBRATION_PAIRS = 50


def size_bins(sizes: np.ndarray, n_sensors: int) -> np.ndarray:
    """The temperature bin of subsets of ``sizes`` sensors out of ``n_sensors``."""
    fraction = np.asarray(sizes, dtype=float) / max(int(n_sensors), 1)
    return np.searchsorted(np.asarray(SIZE_BIN_EDGES), fraction, side="left")


def random_subsets(n: int, n_sensors: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random non-empty sensor subsets (n, n_sensors) of bool: a size
    uniform on 1..n_sensors, then a subset of that size (what an any-subset
    bank's fold models learn from)."""
    sizes = rng.integers(1, n_sensors + 1, size=n)
    ranks = rng.random((n, n_sensors)).argsort(axis=1).argsort(axis=1)
    return ranks < sizes[:, None]


def column_masks(sensor_matrix: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """Column masks (..., n_columns) of sensor subsets (..., n_sensors), given
    which columns each sensor reads (``sensor_matrix``, n_sensors x
    n_columns)."""
    subsets = np.asarray(subsets, dtype=bool)
    if (sensor_matrix.sum(axis=0) == 1).all():  # each column of one sensor
        return subsets[..., sensor_matrix.argmax(axis=0)]
    return (subsets.astype(np.int32) @ sensor_matrix.astype(np.int32)) > 0


def out_of_fold(
    fold_of: np.ndarray,
    rows: np.ndarray,
    shape: tuple[int, int],
    fold_values: Callable[[int, np.ndarray], np.ndarray],
) -> np.ndarray:
    """(n_rows, *shape): each of ``rows`` valued by its own fold,
    ``fold_values(f, positions)`` giving the values of the rows at those
    positions of ``rows`` by fold ``f``'s model (single-threaded: the
    callers' kernels run in their own threads)."""
    out = np.empty((len(rows), *shape))
    folds = fold_of[rows]
    with single_threaded():
        for f in np.flatnonzero(np.bincount(folds)):  # np.unique costs more per call
            sel = np.flatnonzero(folds == f)
            out[sel] = fold_values(int(f), sel)
    return out


def exact_in_blocks(models: Sequence[Any]) -> bool:
    """Whether one ``oof_at`` call for many subsets gives fold ``models``'
    outputs at each subset exactly as a call for that subset alone: true of
    tree models (each (row, subset) pair sums its own leaves, in tree
    order); not of the mask-encoded models, whose products in one call share
    the columns its subsets have in common (in float32)."""
    return all(isinstance(model, LightGBMTrees) for model in models)


class SparseMaskedBank(MaskedBank):
    """A masked bank fitted on random sensor subsets, for sparse DAGs.

    Parameters
    ----------
    classifier, cv, random_state, n_jobs, serve
        As in :class:`~budgetdag_core.bank.MaskedBank` (the fold models are
        always kept: they score the growth's out-of-fold probabilities, and
        with ``serve="folds"`` they also serve).
    masks_per_row : int, default=16
        Random sensor subsets per training row in the fold models' stack;
        fewer on a table of more than 6 250 rows, so that the stack holds at
        most ``SPARSE_FIT_PAIRS`` (row, subset) pairs (``subsets_per_row``
        in ``budgetdag_core.bank``).
    growth : dict, optional
        ``strategies.GrowthSettings`` fields (part of the
        fingerprint: a bank serves the DAG it grew).

    Attributes
    ----------
    fold_models_, fold_columns_ : list
        Each fold's model and the columns it reads.
    fold_of_ : ndarray (n_samples,)
        The fold holding each training row out.
    sensor_matrix_ : ndarray (n_sensors, n_columns) of bool
    size_temperatures_ : ndarray
        The temperature of each subset-size bin (:data:`SIZE_BIN_EDGES`).
    sparse_growth_ : SparseGrowth
        The grown DAG (``sparse_growth_.dag``), its rows and probabilities.
    """

    def __init__(
        self,
        classifier: Any = None,
        *,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
        calibrate: bool = True,
        serve: str = "folds",
        masks_per_row: int = 16,
        growth: dict | None = None,
    ) -> None:
        super().__init__(
            classifier,
            cv=cv,
            random_state=random_state,
            n_jobs=n_jobs,
            calibrate=calibrate,
            cross_fit=True,
            serve=serve,
            masks_per_row=masks_per_row,
        )
        self.growth = growth

    def _settings(self) -> tuple:
        return (
            *super()._settings(),
            "sparse",
            tuple(sorted((self.growth or {}).items())),
        )

    # ------------------------------------------------------------------ fit
    def random_subsets(
        self, n: int, n_sensors: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``n`` random non-empty sensor subsets (:func:`random_subsets`)."""
        return random_subsets(n, n_sensors, rng)

    def _plan(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        where: str,
    ) -> tuple:
        """What :meth:`fit_models` fits: the template, the (row, random
        subset) pairs with their column masks, the folds and their seeds."""
        check_bank_settings(self, where, MASKED_CONSTRAINTS, n_classes=n_classes)
        template = self.template()
        self._check_template(template)
        n, M = len(X), len(sensor_columns)
        S = np.zeros((M, X.shape[1]), dtype=bool)
        for m, cols in enumerate(sensor_columns):
            S[m, np.asarray(cols, dtype=int)] = True
        self.sensor_matrix_ = S
        rng = np.random.default_rng(int_seed(self.random_state))
        per_row = subsets_per_row(self.masks_per_row, n)
        subsets = self.random_subsets(n * per_row, M, rng)
        column_masks = self._columns_of(subsets)
        pair_rows = np.repeat(np.arange(n), per_row)
        pair_states = np.arange(len(pair_rows))
        jobs = self._folds(X, y)
        seeds = rng.integers(0, 2**31 - 1, size=len(jobs))
        return template, pair_rows, pair_states, column_masks, jobs, seeds

    def fit_first_fold(
        self,
        X: np.ndarray,
        y: np.ndarray,
        dag: Any,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
    ) -> Any:
        """The first fold's model, fitted as :meth:`fit_models` fits it (same
        random subsets, seed and early stopping); ``dag`` is not used (the
        states come later). Timing it measures the rounds early stopping
        runs on the data (:func:`~budgetdag_core.probe_fit`)."""
        template, pair_rows, pair_states, column_masks, jobs, seeds = self._plan(
            X, y, sensor_columns, n_classes, "SparseMaskedBank.fit_first_fold"
        )
        train, test = jobs[0]
        model, _, _ = fit_fold(
            template, X, y, pair_rows, pair_states, column_masks,
            train, test, n_classes, int(seeds[0]), True, False,
        )  # fmt: skip
        return model

    def fit_models(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        progress: Progress | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> SparseMaskedBank:
        """Fit the fold models (and with ``serve="refit"`` one more on all rows)
        on random subsets of each row's sensors (``sample_weight``: each of a
        row's subsets weighs the row's weight; the priors too)."""
        plan = self._plan(X, y, sensor_columns, n_classes, "SparseMaskedBank.fit")
        return self.fit_planned(
            X, y, n_classes, plan, progress, sample_weight=sample_weight
        )

    def fit_planned(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        plan: tuple,
        progress: Progress | None = None,
        first_fold: tuple | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> SparseMaskedBank:
        """:meth:`fit_models` on a plan of :meth:`_plan` (the template, the
        (row, subset) pairs, the folds, their seeds); ``first_fold``: the
        first fold's ``fit_fold`` result when already fitted on this plan
        (an ``"auto"`` bank's choice of kind fits it), reused as it is."""
        template, pair_rows, pair_states, column_masks, jobs, seeds = plan
        todo = list(zip(jobs, seeds, strict=True))[first_fold is not None :]
        n = len(X)
        self.n_classes_ = n_classes
        self.n_columns_ = X.shape[1]
        results = fit_folds(
            template, self.n_jobs, X, y, pair_rows, pair_states, column_masks,
            todo, n_classes, True, False, sample_weight,
        )  # fmt: skip
        if first_fold is not None:
            results = itertools.chain([first_fold], results)
        self.fold_of_ = np.zeros(n, dtype=np.intp)
        self.fold_models_, self.fold_columns_ = [], []
        self.fold_priors_ = []
        for f, ((train, test), (model, _, used)) in enumerate(
            zip(jobs, results, strict=True)
        ):
            self.fold_of_[test] = f
            self.fold_models_.append(model)
            self.fold_columns_.append(np.flatnonzero(used))
            self.fold_priors_.append(
                weighted_prior(
                    y[train],
                    n_classes,
                    None if sample_weight is None else sample_weight[train],
                )[0]
            )
            if progress is not None:
                progress("bank", f + 1, len(jobs) + 1)
        if self.serve == "refit":
            model, _, used = fit_fold(
                refit_template(template, self.fold_models_),
                X, y, pair_rows, pair_states, column_masks,
                np.arange(n), None, n_classes, int(seeds[0]),
                sample_weight=sample_weight,
            )  # fmt: skip
            self.model_, self.model_columns_ = model, np.flatnonzero(used)
        else:
            self.model_ = list(self.fold_models_)
            self.model_columns_ = list(self.fold_columns_)
        self.prior_, self.prior_model_ = weighted_prior(y, n_classes, sample_weight)
        self.size_temperatures_ = np.ones(len(SIZE_BIN_EDGES) + 1)
        if progress is not None:
            progress("bank", len(jobs) + 1, len(jobs) + 1)
        return self

    def _columns_of(self, subsets: np.ndarray) -> np.ndarray:
        """Column masks (n, n_columns) of sensor subsets (n, n_sensors)."""
        return column_masks(self.sensor_matrix_, subsets)

    @property
    def exact_in_blocks(self) -> bool:
        """Whether :meth:`oof_at` gives each subset's outputs exactly as a
        call for it alone (:func:`exact_in_blocks`): callers then may ask
        many subsets at once without changing a result."""
        return exact_in_blocks(self.fold_models_)

    def oof_at(
        self,
        X: np.ndarray,
        rows: np.ndarray,
        subsets: np.ndarray,
        state: int | None = None,
    ) -> np.ndarray:
        """Out-of-fold probabilities of ``rows`` of ``X`` at each sensor subset
        (rows x subsets x classes): each row scored by the fold model that did
        not train on it. Raw, or with ``state`` under that state's temperature
        (after :meth:`bind`)."""
        rows = np.asarray(rows, dtype=np.intp)
        subsets = np.atleast_2d(np.asarray(subsets, dtype=bool))
        empty = ~subsets.any(axis=1)
        cmasks = self._columns_of(subsets)
        out = out_of_fold(
            self.fold_of_, rows, (len(subsets), self.n_classes_),
            lambda f, sel: self._fold_proba(f, X[rows[sel]], cmasks, empty),
        )  # fmt: skip
        if state is not None:
            t = float(self.temperatures_[state])
            out = apply_temperature(out, t)
        return out

    def oof_pairs(
        self,
        X: np.ndarray,
        rows: np.ndarray,
        subsets: np.ndarray,
        which: np.ndarray,
        states: np.ndarray | None = None,
    ) -> np.ndarray:
        """Out-of-fold probabilities of each of ``rows`` of ``X`` at its own
        sensor subset ``subsets[which[i]]`` (pairs x classes): what
        :meth:`oof_at` gives each (row, subset) pair, in one call per fold for
        pairs of many subsets (a rollout's rows at the states they reached).
        Raw, or with ``states`` (one per subset) under those states'
        temperatures (after :meth:`bind`). Tree models score each pair
        exactly as :meth:`oof_at` does; mask-encoded ones within float32
        rounding (:meth:`MaskEncodedClassifier.proba_of_pairs`).
        """
        rows = np.asarray(rows, dtype=np.intp)
        which = np.asarray(which, dtype=np.intp)
        subsets = np.atleast_2d(np.asarray(subsets, dtype=bool))
        empty = ~subsets.any(axis=1)
        cmasks = self._columns_of(subsets)
        out = out_of_fold(
            self.fold_of_, rows, (self.n_classes_,),
            lambda f, sel: self._pairs_proba(
                self.fold_models_[f], self.fold_columns_[f], self.fold_priors_[f],
                X[rows[sel]], cmasks, which[sel], empty,
            ),
        )  # fmt: skip
        if states is not None:
            t = self.temperatures_[np.asarray(states, dtype=np.intp)][which]
            scaled = np.flatnonzero(t != 1.0)  # (at 1: raw, as oof_at leaves them)
            if scaled.size:
                out[scaled] = apply_temperature(out[scaled], t[scaled, None])
        return out

    def _pairs_proba(
        self,
        model: Any,
        cols: np.ndarray,
        prior: np.ndarray,
        Xr: np.ndarray,
        cmasks: np.ndarray,
        which: np.ndarray,
        empty: np.ndarray,
    ) -> np.ndarray:
        """One model's probabilities of each row of ``Xr`` at its column mask
        ``cmasks[which[i]]`` (``prior`` where that subset is ``empty``)."""
        out = np.zeros((len(Xr), self.n_classes_))  # (classes a fold never saw)
        out[empty[which]] = prior
        todo = np.flatnonzero(~empty[which])
        if not todo.size:
            return out
        known = np.asarray(model.classes_, dtype=int)
        Xc = Xr[todo][:, cols]
        if isinstance(model, LightGBMTrees):  # exact per subset: a call each
            for s in np.unique(which[todo]):
                at = np.flatnonzero(which[todo] == s)
                raw = model.state_decision_function(Xc[at], cmasks[s : s + 1, cols])
                out[np.ix_(todo[at], known)] = model.proba_from_scores(raw)[:, 0]
            return out
        pair_masks = cmasks[which[todo]][:, cols]
        if isinstance(model, MaskEncodedClassifier):
            proba = model.proba_of_pairs(Xc, pair_masks)
        else:
            Xs = Xc.astype(float, copy=True)
            Xs[~pair_masks] = np.nan
            proba = model.predict_proba(Xs)
        out[np.ix_(todo, known)] = proba
        return out

    def predict_proba_subsets(self, X: np.ndarray, subsets: np.ndarray) -> np.ndarray:
        """Probabilities of new rows ``X`` at each sensor subset (rows x
        subsets x classes) by the served model (the fold models' average with
        ``serve="folds"``): what a policy choosing any sensor per example
        asks of the bank. After :meth:`bind` under the temperature of each
        subset's size bin; before, raw."""
        X = np.asarray(X, dtype=float)
        subsets = np.atleast_2d(np.asarray(subsets, dtype=bool))
        empty = ~subsets.any(axis=1)
        cmasks = self._columns_of(subsets)
        with single_threaded():
            out = np.mean(
                [
                    self._model_proba(model, cols, self.prior_, X, cmasks, empty)
                    for model, cols in self._model_pairs(X.shape[1])
                ],
                axis=0,
            )
        if hasattr(self, "temperatures_"):
            sizes = subsets.sum(axis=1)
            bins = size_bins(sizes, subsets.shape[1])
            for b in np.unique(bins[sizes > 0]):
                t = float(self.size_temperatures_[b])
                sel = np.flatnonzero((bins == b) & (sizes > 0))
                out[:, sel] = apply_temperature(out[:, sel], t)
        return out

    def _fold_proba(
        self, f: int, Xr: np.ndarray, cmasks: np.ndarray, empty: np.ndarray
    ) -> np.ndarray:
        model, cols = self.fold_models_[f], self.fold_columns_[f]
        return self._model_proba(model, cols, self.fold_priors_[f], Xr, cmasks, empty)

    def _model_proba(
        self,
        model: Any,
        cols: np.ndarray,
        prior: np.ndarray,
        Xr: np.ndarray,
        cmasks: np.ndarray,
        empty: np.ndarray,
    ) -> np.ndarray:
        """One model's probabilities of rows ``Xr`` at column masks ``cmasks``
        (``prior`` where the subset is ``empty``)."""
        out = np.empty((len(Xr), len(cmasks), self.n_classes_))
        out[:, empty] = prior
        todo = np.flatnonzero(~empty)
        if not todo.size:
            return out
        Xc = Xr[:, cols]
        if isinstance(model, LightGBMTrees):
            raw = model.state_decision_function(Xc, cmasks[todo][:, cols])
            proba = model.proba_from_scores(raw)
            full = np.zeros((len(Xr), len(todo), self.n_classes_))
            full[:, :, np.asarray(model.classes_, dtype=int)] = proba
            out[:, todo] = full
            return out
        if isinstance(model, MaskEncodedClassifier):
            proba = model.proba_under_masks(Xc, cmasks[todo][:, cols])
            if len(todo) == len(cmasks) and proba.shape[2] == self.n_classes_:
                return proba  # every subset, every class: what out would copy
            full = np.zeros((len(Xr), len(todo), self.n_classes_))
            full[:, :, np.asarray(model.classes_, dtype=int)] = proba
            out[:, todo] = full
            return out
        rows = np.tile(np.arange(len(Xr)), len(todo))
        states = np.repeat(np.arange(len(todo)), len(Xr))
        p = masked_proba(
            model,
            stack_masked(Xc, rows, states, cmasks[todo][:, cols]),
            self.n_classes_,
        )
        out[:, todo] = p.reshape(len(todo), len(Xr), -1).swapaxes(0, 1)
        return out

    # ------------------------------------------------------------------ bind
    def bind(
        self,
        growth: Any,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
    ) -> SparseMaskedBank:
        """Take the grown DAG's states: column masks, one temperature per
        subset-size bin (fitted on the growth's out-of-fold probabilities of
        its flow rows, weighted by ``sample_weight``), the growth's
        probabilities calibrated with them."""
        dag = growth.dag
        K = dag.n_states
        M = dag.n_sensors
        member = dag.membership()
        self.state_columns_ = [
            np.flatnonzero(self._columns_of(member[k : k + 1])[0]) for k in range(K)
        ]
        masks = np.zeros((K, self.n_columns_), dtype=bool)
        for k, cols in enumerate(self.state_columns_):
            masks[k, cols] = True
        self.column_masks_ = masks
        sizes = member.sum(axis=1)
        bins = size_bins(sizes, M)
        self.size_temperatures_ = np.ones(len(SIZE_BIN_EDGES) + 1)
        if self.calibrate:
            for b in range(len(self.size_temperatures_)):
                states = np.flatnonzero((bins == b) & (sizes > 0))
                parts = [
                    (growth.proba[k].get(growth.flow[k]), y[growth.flow[k]])
                    for k in states
                    if len(growth.flow[k])
                ]
                if sum(len(p[1]) for p in parts) < MIN_CALIBRATION_PAIRS:
                    continue
                proba = np.concatenate([p[0] for p in parts])
                labels = np.concatenate([p[1] for p in parts])
                weights = None
                if sample_weight is not None:
                    weights = np.concatenate(
                        [sample_weight[growth.flow[k]] for k in states]
                    )
                self.size_temperatures_[b] = fit_temperatures(
                    proba[:, None, :], labels, sample_weight=weights
                )[0]
        self.temperatures_ = np.where(sizes > 0, self.size_temperatures_[bins], 1.0)
        for k, table in enumerate(growth.proba):
            t = float(self.temperatures_[k])
            if t != 1.0 and len(table.rows):
                table.values = apply_temperature(table.values, t)
        self.oof_ece_raw_ = np.full(K, np.nan)
        self.oof_ece_ = np.full(K, np.nan)
        self.sparse_growth_ = growth
        self.fingerprint_ = self.fingerprint_for(X, y, dag, sample_weight)
        return self

    def state_oof_proba(self, X: np.ndarray) -> np.ndarray:
        """Out-of-fold probabilities of every training row at every state of the
        bound DAG (rows x states x classes), calibrated as the states are: what
        a full DAG's bank keeps as ``oof_proba_`` (here computed on demand:
        sweeps and baselines need it, a single fit does not)."""
        growth = self.sparse_growth_
        member = growth.dag.membership()
        n, K = len(X), len(member)
        out = np.empty((n, K, self.n_classes_))
        step = max(1, MAX_STACK_ROWS // max(n, 1))
        for start in range(0, K, step):
            states = np.arange(start, min(K, start + step))
            out[:, states] = self.oof_at(X, np.arange(n), member[states])
        for k in range(K):
            t = float(self.temperatures_[k])
            if t != 1.0:
                out[:, k] = apply_temperature(out[:, k], t)
        return out

    def check_integrity(self) -> None:
        """:meth:`MaskedBank.check_integrity`, and the size temperatures."""
        super().check_integrity()
        arr = check_array(
            getattr(self, "size_temperatures_", None),
            "bank_.size_temperatures_",
            shape=(len(SIZE_BIN_EDGES) + 1,),
            kind="f",
            finite=True,
        )
        if (arr <= 0).any():
            raise fail("bank_.size_temperatures_", "temperatures must be positive")
