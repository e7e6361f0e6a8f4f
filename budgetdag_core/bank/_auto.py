"""The any-subset bank of a sparse DAG, by kind, and ``"auto"``'s choice among
the kinds on validation rows.

Beyond the full DAG's sensors the estimator grows a sparse DAG on one masked
model per fold (:class:`~budgetdag_core.bank.SparseMaskedBank`). Which model
learns every subset best depends on the data: boosting (``"masked"``) on
thousands of rows, a network on the mask encoding (``"masked_mlp"``) or a
logistic regression on it (``"masked_logistic"``) on a few hundred rows with
many sensors, where boosted trees learn interactions poorly (issue 30).
:class:`AutoMaskedBank` carves validation rows from the training rows
(seeded, stratified), fits each candidate once on the rest under random
subsets (at most ``TRIAL_PAIRS`` pairs), scores them on the validation rows
under other random subsets, and then fits the bank of the best kind as
:class:`SparseMaskedBank` does, recording the choice (``kind_``) and the
numbers behind it (``validation_``).
With ``validation_fraction=None`` the bank's first fold is held out instead
and the chosen kind's fit kept as that fold's model (one fit fewer).

Log loss at random subsets underrates interactions, which a routed policy
needs (a routing sensor's value, then the sensors it points to): when an
additive kind wins by little, the kind that learns interactions is a
*rival* (:meth:`AutoMaskedBank.rival_kind`), its bank is fitted too
(:meth:`AutoMaskedBank.fit_rival`) and the estimator lets the policies
judge (see ``budgetdag_core.strategies``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._integrity import fail
from .._threads import map_in_threads, single_threaded, threads_for
from .._weighted import weighted_mean_se
from ..validation import int_seed
from ._base import Progress
from ._calibration import apply_temperature, fit_temperature, fit_temperatures
from ._encoded import MASKED_KINDS, masked_template
from ._masked import fit_fold, masked_proba, stack_masked
from ._sparse import SparseMaskedBank

#: Share of the training rows ``"auto"`` holds out to compare the kinds.
AUTO_VALIDATION_FRACTION = 0.2
#: Random subsets each validation row is scored at.
VALIDATION_MASKS = 8
#: Most (row, random subset) pairs a kind's trial fit learns from: a long
#: table's rows get fewer subsets each (spam, 3 450 rows: 4 instead of 16).
#: The trials only rank the kinds: on spam, dna, digits and CUBE-NM (5 000
#: rows), 3 seeds, every choice held, and the choice ran 3 to 4 times faster
#: on spam and CUBE-NM (it was about a third of spam's fit).
TRIAL_PAIRS = 16_000
#: Training rows above which ``"auto"`` does not try the network (its epochs
#: over the mask stack grow with the rows). Not lower: on thousands of rows
#: the network can still learn an interaction boosting misses (CUBE-NM,
#: 5 000 rows: the context and its block).
AUTO_NEURAL_MAX_ROWS = 20_000
#: Kinds a sparse DAG's bank can be (``"auto"``: :class:`AutoMaskedBank`).
SPARSE_BANK_KINDS = ("auto", *MASKED_KINDS)
#: Kinds additive in the encoded values: they cannot learn that one sensor's
#: value says which other sensor matters (CUBE-NM's context and its block).
ADDITIVE_KINDS = ("masked_logistic",)
#: Standard errors (of the per-row excess log loss) within which a kind that
#: learns interactions is a *rival* to an additive winner
#: (:meth:`AutoMaskedBank.rival_kind`). Random subsets seldom hold a routing
#: sensor with the sensors it points to, so their log loss underrates what an
#: interaction buys a routed policy: on CUBE-NM (600 rows, split seed 1) the
#: logistic bank won by 2.3 standard errors, yet with the network's routed
#: DAG kept the default erred 0.51 / 0.34 against 0.63 / 0.48 at 10 / 25 %
#: of the cost.
RIVAL_MAX_SE = 3.0


def validation_split(
    y: np.ndarray, fraction: float, seed: int | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """(fit rows, validation rows): about ``fraction`` of each class held out.

    None when a class has fewer than two rows, or the split would hold out
    fewer than two rows per class (nothing sound to compare on).
    """
    rng = np.random.default_rng([int_seed(seed) or 0, 37])
    classes, counts = np.unique(y, return_counts=True)
    if counts.min() < 2:
        return None
    held = []
    for c, count in zip(classes, counts, strict=True):
        rows = np.flatnonzero(y == c)
        take = min(count - 1, max(1, int(round(fraction * count))))
        held.append(rng.choice(rows, size=take, replace=False))
    val = np.sort(np.concatenate(held))
    if len(val) < 2 * len(classes):
        return None
    return np.setdiff1d(np.arange(len(y)), val), val


class AutoMaskedBank(SparseMaskedBank):
    """A sparse DAG's any-subset bank whose kind is chosen on validation rows.

    Parameters
    ----------
    candidates : sequence of str, default=MASKED_KINDS
        The kinds to compare (:data:`MASKED_KINDS`), in order of preference
        on ties; beyond ``AUTO_NEURAL_MAX_ROWS`` training rows
        ``"masked_mlp"`` is left out.
    validation_fraction : float or None, default=0.2
        Share of each class held out to compare the kinds. None: the bank's
        first fold is held out instead, each kind fitted on its other rows
        (stopped early on a share of them), and the chosen kind's model kept
        as that fold's: one fit fewer, but that fold's model learns from
        fewer rows than the others (on breast cancer, 400 rows, the default
        then erred more: 0.047 against 0.030 at 25 % of the cost, 3 seeds).
    cv, random_state, n_jobs, calibrate, serve, masks_per_row, growth
        As in :class:`~budgetdag_core.bank.SparseMaskedBank`; the chosen
        kind's bank is fitted with them on all training rows.

    Attributes
    ----------
    kind_ : str
        The chosen kind: least log loss on the validation rows at random
        subsets (each candidate's probabilities under one fitted temperature,
        as the bank calibrates its own); on a rival's bank
        (:meth:`fit_rival`) the rival kind (``validation_`` then still
        shows the log loss's pick: ``excess`` 0).
    validation_ : dict
        Per candidate tried: ``log_loss`` (after its temperature),
        ``log_loss_raw``, ``error`` and ``temperature`` on the validation
        (row, subset) pairs, ``excess`` (its log loss less the chosen
        kind's) and ``excess_se`` (the standard error of that difference
        over the validation rows); also ``"rows"`` (fit rows, validation rows,
        validation pairs). Empty when the training rows are too few to hold
        any out (then ``kind_`` is the first candidate). ``"rows"`` also
        counts the (fit row, subset) pairs the trials learned from
        (``fit_pairs``; at most about ``TRIAL_PAIRS``).
    n_fit_rows_ : int
        The training rows the bank was fitted on: from
        ``LARGE_TABLE_ROWS`` on, the network kind is penalised less
        (``masked_neural_classifier``).
    (the others)
        As in :class:`~budgetdag_core.bank.SparseMaskedBank`.
    """

    kind = "auto_masked"

    def __init__(
        self,
        *,
        candidates: Sequence[str] = MASKED_KINDS,
        validation_fraction: float | None = AUTO_VALIDATION_FRACTION,
        cv: int = 5,
        random_state: int | None = None,
        n_jobs: int | None = None,
        calibrate: bool = True,
        serve: str = "folds",
        masks_per_row: int = 16,
        growth: dict | None = None,
    ) -> None:
        super().__init__(
            None,
            cv=cv,
            random_state=random_state,
            n_jobs=n_jobs,
            calibrate=calibrate,
            serve=serve,
            masks_per_row=masks_per_row,
            growth=growth,
        )
        self.candidates = tuple(candidates)
        self.validation_fraction = validation_fraction

    def template(self) -> Any:
        """The chosen kind's model (before the choice: the first candidate's),
        for the rows the bank is fitted on (``n_fit_rows_``; see
        ``masked_neural_classifier``)."""
        kind = getattr(self, "kind_", None) or self.candidates[0]
        rows = getattr(self, "n_fit_rows_", None)
        return masked_template(kind, self.random_state, rows)

    def _settings(self) -> tuple:
        # What the fingerprint hashes: the candidates, not the choice (an
        # unfitted bank must give the fingerprint the fitted one has).
        seed = int_seed(self.random_state)
        return (
            self.kind,
            self.cv,
            seed,
            tuple((k, repr(masked_template(k, seed))) for k in self.candidates),
            self.validation_fraction,
            self.calibrate,
            self.cross_fit,
            self.serve,
            self.masks_per_row,
            "sparse",
            tuple(sorted((self.growth or {}).items())),
        )

    def fit_models(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        progress: Progress | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> AutoMaskedBank:
        """Choose the kind on validation rows (``kind_``, ``validation_``),
        then fit its fold models on all rows as
        :meth:`SparseMaskedBank.fit_models` does (with
        ``validation_fraction=None`` but for the first fold: the chosen
        kind's model fitted for the choice is kept). ``sample_weight``
        weighs the rows in the trials' fits, their validation log losses
        and the folds."""
        self.n_fit_rows_ = int(len(X))
        plan = self._plan(X, y, sensor_columns, n_classes, "AutoMaskedBank.fit")
        # Each kind fitted once before the folds, a step of "bank kind".
        self.kind_, self.validation_, first = self._choose(
            X, y, n_classes, plan, sample_weight, progress
        )
        plan = (self.template(), *plan[1:])
        return self.fit_planned(
            X, y, n_classes, plan, progress, first, sample_weight=sample_weight
        )

    def choose_kind(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
    ) -> str:
        """Choose the kind on validation rows, as :meth:`fit_models` does
        first (sets ``kind_`` and ``validation_``); the chosen kind.
        Timing it (:func:`~budgetdag_core.estimates.probe_fit`) measures the
        choice's fits on the data."""
        self.n_fit_rows_ = int(len(X))
        plan = self._plan(X, y, sensor_columns, n_classes, "AutoMaskedBank.fit")
        self.kind_, self.validation_, _ = self._choose(X, y, n_classes, plan)
        return self.kind_

    def rival_kind(self) -> str | None:
        """The kind whose policies a fit should also try, or None.

        Log loss at random subsets underrates interactions: a random subset
        seldom holds a routing sensor together with the sensors its value
        points to, yet a routed policy visits exactly such subsets. So when
        the chosen kind is additive (:data:`ADDITIVE_KINDS`), the tried kind
        that learns interactions of least validation log loss is a rival
        when its excess is within :data:`RIVAL_MAX_SE` standard errors; the
        policies then judge (:meth:`fit_rival`). Never otherwise: a kind
        that learns interactions and wins the log loss needs no rival, and
        trying more kinds costs a bank fit each (a rival for any close
        kind would have been tried on nearly every table measured).
        """
        scores = getattr(self, "validation_", None) or {}
        if getattr(self, "kind_", None) not in ADDITIVE_KINDS:
            return None
        tried = [k for k in MASKED_KINDS if k in scores and k not in ADDITIVE_KINDS]
        if not tried:
            return None
        best = min(tried, key=lambda k: scores[k]["log_loss"])
        numbers = scores[best]
        if numbers["excess"] > RIVAL_MAX_SE * numbers["excess_se"]:
            return None
        return best

    def fit_rival(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sensor_columns: Sequence[np.ndarray],
        n_classes: int,
        progress: Progress | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> AutoMaskedBank | None:
        """The :meth:`rival_kind`'s bank, fitted as this one was (the same
        random subsets, folds and seeds) but with that kind's model, or
        None without a rival. It keeps this bank's settings and choice
        numbers (so the same fingerprint) with ``kind_`` the rival's."""
        kind = self.rival_kind()
        if kind is None:
            return None
        # This bank's plan (its settings are the rival's): the same subsets,
        # folds and seeds, so the kinds differ in their models only.
        plan = self._plan(X, y, sensor_columns, n_classes, "AutoMaskedBank.fit")
        rival = copy.copy(self)
        rival.kind_ = kind
        plan = (rival.template(), *plan[1:])
        return rival.fit_planned(
            X, y, n_classes, plan, progress, sample_weight=sample_weight
        )

    def _check_choice_settings(self) -> None:
        unknown = [k for k in self.candidates if k not in MASKED_KINDS]
        if not self.candidates or unknown:
            raise ValueError(
                f"candidates must be masked bank kinds {list(MASKED_KINDS)}; "
                f"got {list(self.candidates)!r}."
            )
        fraction = self.validation_fraction
        if fraction is not None and not 0.0 < float(fraction) < 1.0:
            raise ValueError(
                f"validation_fraction must be None or in (0, 1); got {fraction!r}."
            )

    def _choose(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        plan: tuple,
        sample_weight: np.ndarray | None = None,
        progress: Progress | None = None,
    ) -> tuple[str, dict, tuple | None]:
        """The kind of least calibrated validation log loss, the numbers, and
        the chosen kind's first-fold ``fit_fold`` result when it is the
        bank's own (``validation_fraction=None``), else None; ``progress``
        is told ``("bank kind", done, kinds)`` as each kind is judged."""
        self._check_choice_settings()
        kinds = [
            k
            for k in self.candidates
            if k != "masked_mlp" or len(X) <= AUTO_NEURAL_MAX_ROWS
        ] or list(self.candidates[:1])
        step = kind_steps(progress, len(kinds))
        _, pair_rows, pair_states, masks, jobs, seeds = plan
        own = self.validation_fraction is None
        if own:
            split, seed = jobs[0], int(seeds[0])
        else:
            split = validation_split(y, self.validation_fraction, self.random_state)
        if split is None or len(kinds) == 1:
            step(len(kinds))
            return kinds[0], {}, None
        fit_rows, val_rows = split
        rng = np.random.default_rng([int_seed(self.random_state) or 0, 38])
        if not own:  # random subsets of the fit rows' own, as before folds
            per_row = min(self.masks_per_row, max(1, TRIAL_PAIRS // len(X)))
            pair_rows = np.repeat(np.arange(len(X)), per_row)
            pair_states = np.arange(len(pair_rows))
            masks = self._columns_of(
                self.random_subsets(len(pair_rows), len(self.sensor_matrix_), rng)
            )
        val_pairs = np.repeat(val_rows, VALIDATION_MASKS)
        val_masks = self._columns_of(
            self.random_subsets(len(val_pairs), len(self.sensor_matrix_), rng)
        )
        if not own:
            seed = int(rng.integers(0, 2**31 - 1))
        scores: dict[str, Any] = {
            "rows": {
                "fit": int(len(fit_rows)),
                "fit_pairs": int(np.isin(pair_rows, fit_rows).sum()),
                "validation": int(len(val_rows)),
                "pairs": int(len(val_pairs)),
            }
        }
        pair_weight = None if sample_weight is None else sample_weight[val_pairs]

        def trial(kind: str) -> tuple[tuple, np.ndarray]:
            # Early stopping on a share of the fit rows, not on the validation
            # rows: stopped on them, boosting and the network would be
            # judged on the rows that picked their rounds (on breast cancer
            # that favoured boosting over the network, which tested better).
            fit = fit_fold(
                masked_template(kind, self.random_state, len(X)),
                X, y, pair_rows, pair_states, masks,
                fit_rows, val_rows if own else None, n_classes, seed, False, False,
                sample_weight,
            )  # fmt: skip
            model, _, used = fit
            Xv = stack_masked(
                X[:, used], val_pairs, np.arange(len(val_pairs)), val_masks[:, used]
            )
            with single_threaded():
                return fit, masked_proba(model, Xv, n_classes)

        trials = kind_trials(trial, kinds, self.n_jobs, step)
        fitted, pair_losses = {}, {}
        for kind, (fit, proba) in zip(kinds, trials, strict=True):
            fitted[kind] = fit
            scores[kind], pair_losses[kind] = validation_numbers(
                proba, y[val_pairs], pair_weight
            )
        best = min(kinds, key=lambda k: scores[k]["log_loss"])
        row_weight = None if sample_weight is None else sample_weight[val_rows]
        for kind in kinds:
            scores[kind].update(
                _excess(pair_losses[kind], pair_losses[best], row_weight)
            )
        return best, scores, fitted[best] if own else None

    def check_integrity(self) -> None:
        """:meth:`SparseMaskedBank.check_integrity`, and a known ``kind_``."""
        super().check_integrity()
        if getattr(self, "kind_", None) not in MASKED_KINDS:
            raise fail("bank_.kind_", f"expected one of {list(MASKED_KINDS)}")


def kind_trials(
    trial: Callable[[str], Any],
    kinds: Sequence[str],
    n_jobs: int | None,
    step: Callable[[int], None],
) -> list[Any]:
    """``[trial(kind) for kind in kinds]``, ``step`` told as each is in (a
    bank's choice of kind). Each kind's trial is its own seeded fit: with
    ``n_jobs``, in threads (the models' kernels release the GIL), the same
    numbers."""
    with single_threaded():
        return map_in_threads(trial, kinds, min(threads_for(n_jobs), len(kinds)), step)


def kind_steps(progress: Progress | None, n_kinds: int) -> Any:
    """``step(done)``: ``progress("bank kind", done, n_kinds)`` (nothing
    without ``progress``), told 0 at once, then once per kind judged (in the
    kinds' order, whatever threads fit them)."""

    def step(done: int) -> None:
        if progress is not None:
            progress("bank kind", done, n_kinds)

    step(0)
    return step


def validation_numbers(
    proba: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None
) -> tuple[dict[str, float], np.ndarray]:
    """Log loss (raw and under one fitted temperature) and error of ``proba``,
    and the per-pair log losses under the temperature (``weight``: the
    pairs' row weights, in the temperature and the means)."""
    if weight is None:
        t = fit_temperature(proba, y)
    else:
        t = float(fit_temperatures(proba[:, None, :], y, sample_weight=weight)[0])
    picked = np.arange(len(y)), y

    def losses(p: np.ndarray) -> np.ndarray:
        return -np.log(np.clip(p[picked], 1e-15, 1.0))

    calibrated = losses(apply_temperature(proba, t))
    numbers = {
        "log_loss": float(np.average(calibrated, weights=weight)),
        "log_loss_raw": float(np.average(losses(proba), weights=weight)),
        "error": float(np.average(proba.argmax(axis=1) != y, weights=weight)),
        "temperature": float(t),
    }
    return numbers, calibrated


def _excess(
    losses: np.ndarray, best: np.ndarray, weight: np.ndarray | None = None
) -> dict[str, float]:
    """Mean excess of per-pair ``losses`` over the ``best`` kind's and its
    standard error over the validation rows (each row's
    ``VALIDATION_MASKS`` pairs averaged first: a row's subsets share its
    values, so its pairs are not independent; ``weight``: the rows'
    weights, a row of weight w as w copies)."""
    per_row = (losses - best).reshape(-1, VALIDATION_MASKS).mean(axis=1)
    if weight is not None:
        return dict(zip(("excess", "excess_se"), weighted_mean_se(per_row, weight)))
    se = float(per_row.std(ddof=1) / np.sqrt(len(per_row))) if len(per_row) > 1 else 0.0
    return {"excess": float(per_row.mean()), "excess_se": se}
