"""An any-subset bank with a dedicated model for the all-sensor state (issue 55).

One masked model learns every sensor subset; at the all-sensor state, which
every long path ends at, it can err more than one model of the same family
trained on all the features alone (a 32-class table: 10.7 % against 6.1 %).
:class:`DedicatedMaskedBank` fits, beside each fold's masked model, one
boosted model on that fold's training rows with every column (cross-fitted:
the same folds, so its out-of-fold probabilities stay out of fold), and
serves at the all-sensor subset the blend ``(1 - w) masked + w dedicated``
whose weight ``w`` (one of :data:`BLEND_WEIGHTS`) has the least calibrated
out-of-fold log loss on the training rows, when its gain over the masked
model alone exceeds :data:`BLEND_MIN_SE` standard errors: else 0 keeps the
masked model. ``full_masks`` also puts the all-sensor mask among each
training row's random subsets, so the masked model itself sees that state
more often (masks sampled toward the state every path can end at).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._integrity import check_array, fail
from .._threads import single_threaded
from ._auto import SPARSE_BANK_KINDS, AutoMaskedBank, validation_numbers
from ._base import Progress
from ._encoded import MASKED_KINDS, masked_template
from ._integrity import check_fitted_model
from ._masked import fit_folds, masked_proba
from ._models import boosting_classifier
from ._sparse import SparseMaskedBank

#: Weights of the dedicated model in the all-sensor blend, tried on the
#: out-of-fold rows (0: the masked model alone).
BLEND_WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Standard errors (of the per-row log-loss gain over the masked model
#: alone) a blend must gain by to be used.
BLEND_MIN_SE = 2.0


class DedicatedMaskedBank(AutoMaskedBank):
    """:class:`~budgetdag_core.bank.AutoMaskedBank` with a dedicated model for
    the all-sensor state, blended in where the out-of-fold rows say so.

    Parameters
    ----------
    dedicated : bool, default=True
        Fit the dedicated all-sensor models (one per fold) and choose their
        blend weight (``full_weight_``) on the out-of-fold rows.
    full_masks : bool, default=False
        Make the first of each training row's random subsets the all-sensor
        subset (the fold models then learn that state from every row).
    candidates, validation_fraction, cv, random_state, n_jobs, calibrate, \
serve, masks_per_row, growth
        As in :class:`~budgetdag_core.bank.AutoMaskedBank`.

    Attributes
    ----------
    dedicated_models_ : list
        Each fold's all-sensor model (LightGBM boosting on every column),
        fitted on that fold's training rows; empty without ``dedicated``.
    full_weight_ : float
        The dedicated models' weight at the all-sensor subset.
    full_validation_ : dict
        Calibrated out-of-fold log loss, error and mean per-row log-loss
        gain over the masked model alone (``gain``) of each weight tried.
    (the others)
        As in :class:`~budgetdag_core.bank.AutoMaskedBank`.

    Examples
    --------
    >>> import numpy as np
    >>> from budgetdag_core.bank import DedicatedMaskedBank
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4))
    >>> y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    >>> bank = DedicatedMaskedBank(cv=3, random_state=0, candidates=["masked"])
    >>> bank = bank.fit_models(X, y, [np.array([c]) for c in range(4)], 2)
    >>> bank.full_weight_ in (0.0, 0.25, 0.5, 0.75, 1.0)
    True
    >>> p = bank.oof_at(X, np.arange(5), np.ones((1, 4), dtype=bool))
    >>> p.shape
    (5, 1, 2)
    """

    kind = "dedicated_masked"

    def __init__(
        self,
        *,
        dedicated: bool = True,
        full_masks: bool = False,
        candidates: Sequence[str] = MASKED_KINDS,
        validation_fraction: float | None = 0.2,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
        calibrate: bool = True,
        serve: str = "folds",
        masks_per_row: int = 16,
        growth: dict | None = None,
    ) -> None:
        super().__init__(
            candidates=candidates,
            validation_fraction=validation_fraction,
            cv=cv,
            random_state=random_state,
            n_jobs=n_jobs,
            calibrate=calibrate,
            serve=serve,
            masks_per_row=masks_per_row,
            growth=growth,
        )
        self.dedicated = dedicated
        self.full_masks = full_masks

    def _settings(self) -> tuple:
        return (*super()._settings(), "dedicated", self.dedicated, self.full_masks)

    # ------------------------------------------------------------------ fit
    def _plan(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        where: str,
    ) -> tuple:
        """:meth:`SparseMaskedBank._plan`; with ``full_masks`` each row's first
        subset is the all-sensor one."""
        plan = super()._plan(X, y, sensor_columns, n_classes, where)
        if not self.full_masks:
            return plan
        template, pair_rows, pair_states, masks, jobs, seeds = plan
        first = np.r_[True, pair_rows[1:] != pair_rows[:-1]]
        masks = masks.copy()
        masks[first] = self.sensor_matrix_.any(axis=0)
        return template, pair_rows, pair_states, masks, jobs, seeds

    def fit_planned(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        plan: tuple,
        progress: Progress | None = None,
        first_fold: tuple | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> DedicatedMaskedBank:
        """:meth:`SparseMaskedBank.fit_planned`, then the dedicated models on
        the same folds and their blend weight (out of fold; rows weighted by
        ``sample_weight``)."""
        super().fit_planned(
            X, y, n_classes, plan, progress, first_fold, sample_weight=sample_weight
        )
        self.dedicated_models_: list[Any] = []
        self.full_weight_ = 0.0
        self.full_validation_: dict[str, Any] = {}
        if self.dedicated:
            self._fit_dedicated(X, y, n_classes, plan[4], plan[5], sample_weight)
        return self

    def _fit_dedicated(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        jobs: Sequence[tuple[np.ndarray, np.ndarray]],
        seeds: np.ndarray,
        sample_weight: np.ndarray | None = None,
    ) -> None:
        n, n_columns = X.shape
        masks = np.zeros((2, n_columns), dtype=bool)
        masks[1] = self.sensor_matrix_.any(axis=0)
        # Stopped on a share of each fold's training rows (not its held-out
        # rows): its out-of-fold probabilities choose the weight and feed
        # Graph-Reduce, so they must not have picked its rounds.
        results = fit_folds(
            boosting_classifier(self.random_state), self.n_jobs, X, y,
            np.arange(n), np.ones(n, dtype=np.intp), masks,
            list(zip(jobs, seeds, strict=True)), n_classes, False, True,
            sample_weight,
        )  # fmt: skip
        dedicated = np.empty((n, n_classes))
        for (_, test), (model, proba, used) in zip(jobs, results, strict=True):
            if not used.all():  # every column is revealed: it reads them all
                raise fail("bank_.dedicated_models_", "expected every column")
            self.dedicated_models_.append(model)
            dedicated[test] = proba[:, 1]
        self.full_weight_ = 0.0  # the masked model's own out-of-fold values
        member = np.ones((1, len(self.sensor_matrix_)), dtype=bool)
        masked = self.oof_at(X, np.arange(n), member)[:, 0]
        self.full_weight_, scores = blend_weight(masked, dedicated, y, sample_weight)
        self.full_validation_ = {str(w): s for w, s in scores.items()}

    # ------------------------------------------------------------- predict
    def _dedicated_proba(self, models: Sequence[Any], Xr: np.ndarray) -> np.ndarray:
        """The mean of ``models``' probabilities of full-width rows ``Xr``."""
        out = np.zeros((len(Xr), self.n_classes_))
        for model in models:
            out += masked_proba(model, Xr, self.n_classes_)
        return out / len(models)

    def _blended(self, out: np.ndarray, full: np.ndarray, ded: Any) -> np.ndarray:
        w = float(getattr(self, "full_weight_", 0.0))
        if w == 0.0 or not full.any():
            return out
        out[:, full] = (1.0 - w) * out[:, full] + w * ded()[:, None]
        return out

    def _model_proba(
        self,
        model: Any,
        cols: np.ndarray,
        prior: np.ndarray,
        Xr: np.ndarray,
        cmasks: np.ndarray,
        empty: np.ndarray,
    ) -> np.ndarray:
        """One fold model's probabilities (:meth:`SparseMaskedBank._model_proba`)
        with that fold's dedicated model blended in at the all-sensor subset
        (a refitted served model: the dedicated models' mean)."""
        out = super()._model_proba(model, cols, prior, Xr, cmasks, empty)
        full = cmasks.all(axis=1) & ~empty
        if float(getattr(self, "full_weight_", 0.0)) == 0.0 or not full.any():
            return out  # nothing blended in (_blended)
        models = self._dedicated_for(model)
        with single_threaded():
            return self._blended(out, full, lambda: self._dedicated_proba(models, Xr))

    def _dedicated_for(self, model: Any) -> list[Any]:
        """The dedicated model of fold ``model``'s fold (a served model that
        is no fold's: every dedicated model, averaged by the caller)."""
        # A slim saved bank keeps the fold models as its served ones only.
        folds = getattr(self, "fold_models_", None)
        if folds is None:
            folds = self.model_ if isinstance(self.model_, list) else []
        fold = [i for i, m in enumerate(folds) if m is model]
        models = self.dedicated_models_
        return [models[fold[0]]] if fold and models else models

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
        """:meth:`SparseMaskedBank._pairs_proba` with the fold's dedicated
        model blended in at the pairs of the all-sensor subset (as
        :meth:`_model_proba` blends)."""
        out = super()._pairs_proba(model, cols, prior, Xr, cmasks, which, empty)
        full = (cmasks.all(axis=1) & ~empty)[which]
        w = float(getattr(self, "full_weight_", 0.0))
        if w == 0.0 or not full.any():
            return out
        with single_threaded():
            ded = self._dedicated_proba(self._dedicated_for(model), Xr[full])
        out[full] = (1.0 - w) * out[full] + w * ded
        return out

    def _raw_proba(self, X: np.ndarray, state: int) -> np.ndarray:
        out = super()._raw_proba(X, state)
        if state == 0 or not self.column_masks_[state].all():
            return out
        models = self.dedicated_models_
        full = np.ones(1, dtype=bool)
        return self._blended(
            out[:, None], full, lambda: self._dedicated_proba(models, X)
        )[:, 0]

    def predict_proba_states(self, X: np.ndarray) -> np.ndarray:
        """:meth:`MaskedBank.predict_proba_states`, the all-sensor state's
        column as :meth:`predict_proba` gives it (blended)."""
        out = super().predict_proba_states(X)
        if float(getattr(self, "full_weight_", 0.0)) != 0.0:
            for k in np.flatnonzero(self.column_masks_.all(axis=1)):
                if k:
                    out[:, k] = self.predict_proba(X, int(k))
        return out

    def check_integrity(self) -> None:
        """:meth:`AutoMaskedBank.check_integrity`, the weight and one dedicated
        model per fold when it is used."""
        super().check_integrity()
        w = check_array(
            np.asarray([getattr(self, "full_weight_", np.nan)], dtype=float),
            "bank_.full_weight_",
            kind="f",
            finite=True,
        )
        if not 0.0 <= float(w[0]) <= 1.0:
            raise fail("bank_.full_weight_", "expected a weight in [0, 1]")
        models = getattr(self, "dedicated_models_", None)
        if not isinstance(models, list):
            raise fail("bank_.dedicated_models_", "expected a list")
        folds = getattr(self, "fold_models_", None)  # None: a slim saved bank
        if float(w[0]) > 0 and (
            not models or (folds is not None and len(models) != len(folds))
        ):
            raise fail("bank_.dedicated_models_", "expected one model per fold")
        for f, model in enumerate(models):
            name = f"bank_.dedicated_models_[{f}]"
            check_fitted_model(model, name, self.n_columns_, self.n_classes_)


def blend_weight(
    base: np.ndarray,
    other: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> tuple[float, dict[float, dict[str, float]]]:
    """The weight of ``other`` in a blend with ``base`` (out-of-fold
    probabilities of the same rows, rows x classes): of ``BLEND_WEIGHTS``,
    the least calibrated log loss on ``y`` (:func:`validation_numbers`),
    kept only where its gain over ``base`` alone exceeds ``BLEND_MIN_SE``
    standard errors of the rows' gains, else 0; and each weight's numbers
    with its mean gain (``"gain"``)."""
    scores, losses = {}, {}
    for w in BLEND_WEIGHTS:
        blend = (1.0 - w) * base + w * other
        scores[w], losses[w] = validation_numbers(blend, y, sample_weight)
    best = min(BLEND_WEIGHTS, key=lambda w: scores[w]["log_loss"])
    # Against the base alone, per row: a gain within BLEND_MIN_SE standard
    # errors is noise (wine, 120 rows: w 0.25 won the log loss and erred one
    # test row more of 58).
    gain = losses[0.0] - losses[best]
    se = gain.std(ddof=1) / np.sqrt(len(gain)) if len(gain) > 1 else np.inf
    for w in BLEND_WEIGHTS:
        scores[w]["gain"] = float((losses[0.0] - losses[w]).mean())
    if not gain.mean() > BLEND_MIN_SE * se:
        best = 0.0
    return float(best), scores


def make_sparse_bank(
    kind: str = "auto",
    *,
    cv: int = 5,
    random_state: int | None = None,
    n_jobs: int | None = None,
    serve: str = "folds",
    growth: dict | None = None,
) -> SparseMaskedBank:
    """An unfitted any-subset bank for a sparse DAG.

    Parameters
    ----------
    kind : {"auto", "masked", "masked_mlp", "masked_logistic"}
        ``"auto"``: :class:`DedicatedMaskedBank` (the kind chosen on
        validation rows, as :class:`~budgetdag_core.bank.AutoMaskedBank`
        chooses it, and a dedicated all-sensor model blended in where the
        out-of-fold rows say so; issue 55); the others:
        :class:`~budgetdag_core.bank.SparseMaskedBank` with that kind's
        model (``"masked"``: LightGBM boosting, as before the other kinds
        existed).
    cv, random_state, n_jobs, serve, growth
        Passed to the bank.

    Examples
    --------
    >>> from budgetdag_core.bank import make_sparse_bank
    >>> type(make_sparse_bank("auto")).__name__
    'DedicatedMaskedBank'
    >>> type(make_sparse_bank("masked_mlp").template()).__name__
    'MaskEncodedClassifier'
    """
    common = {
        "cv": cv,
        "random_state": random_state,
        "n_jobs": n_jobs,
        "serve": serve,
        "growth": growth,
    }
    if kind == "auto":
        return DedicatedMaskedBank(**common)
    if kind == "masked":
        return SparseMaskedBank(**common)
    if kind in MASKED_KINDS:
        return SparseMaskedBank(masked_template(kind, random_state), **common)
    raise ValueError(
        f"A sparse DAG needs an any-subset masked bank: bank_kind must be one of "
        f"{list(SPARSE_BANK_KINDS)}; got {kind!r}."
    )
