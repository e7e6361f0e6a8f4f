"""Shared steps of sweeps and budget searches: one bank, policies per cost scale."""

from __future__ import annotations

import contextlib
import copy
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..bank import ClassifierBank
from ..decisions import check_loss_matrix
from ..estimator import BudgetDAGClassifier, TrainingData
from ..sensors import SensorSpec
from ..strategies import StrategyBanks, StrategyChoice, kept_by_neighbours
from ..validation import (
    align_rows,
    check_features,
    check_labels,
    check_sample_costs,
)
from ._baselines import (
    StatePredictions,
    bank_state_predictions,
    dag_point,
    encode_labels,
)


def _quiet(stage: str, done: int, total: int) -> None:
    """A progress callback that reports nothing."""


def make_template(
    spec_or_model: Any, params: Mapping[str, Any], n_jobs: int | None
) -> BudgetDAGClassifier:
    """An unfitted estimator from a spec (+ parameters) or an estimator."""
    if isinstance(spec_or_model, BudgetDAGClassifier):
        template = clone(spec_or_model).set_params(**params)
    else:
        template = BudgetDAGClassifier(spec_or_model, **params)
    if n_jobs is not None:
        template.set_params(n_jobs=n_jobs)
    template.check_params()
    return template


@dataclass
class FitData:
    """Checked training data and the cost facts that set the scale range."""

    X: pd.DataFrame
    y: np.ndarray
    sample_costs: np.ndarray | None
    spec: SensorSpec
    Xv: np.ndarray
    y_enc: np.ndarray
    classes: np.ndarray
    costs: np.ndarray  # (n_sensors,) or (n, n_sensors)
    max_loss: float

    @property
    def min_positive_cost(self) -> float:
        positive = self.costs[self.costs > 0]
        if positive.size == 0:
            raise ValueError(
                "Every sensor costs 0: acquiring is free at every cost_scale, so "
                "there is no trade-off to trace. Give the sensors costs."
            )
        return float(positive.min())

    @property
    def mean_total_cost(self) -> float:
        return float(self.costs.sum(axis=-1).mean())

    def scale_range(self) -> tuple[float, float]:
        """Where the curve lives: (low, high) cost scales.

        Above ``high`` every acquisition costs more than the largest possible
        loss, so nothing is bought; below ``low`` buying every sensor costs less
        than 1% of one mistake, which is as good as free.
        """
        high = 1.01 * self.max_loss / self.min_positive_cost
        low = min(0.01 * self.max_loss / self.mean_total_cost, high / 100)
        return low, high


def check_fit_data(
    template: BudgetDAGClassifier, X: pd.DataFrame, y: Any, sample_costs: Any
) -> FitData:
    y = align_rows(X, y, "y")  # by label when both have one, as fit does
    spec, Xv, y_enc, classes = template.check_fit_data(X, y)
    costs = check_sample_costs(
        align_rows(X, sample_costs, "sample_costs"), spec, len(Xv)
    )
    loss_matrix = check_loss_matrix(template.loss_matrix, len(classes))
    return FitData(
        X=X,
        y=np.asarray(y),
        sample_costs=costs,
        spec=spec,
        Xv=Xv,
        y_enc=y_enc,
        classes=classes,
        costs=spec.cost_vector if costs is None else costs,
        max_loss=1.0 if loss_matrix is None else float(loss_matrix.max()),
    )


class StrategyViews(list):
    """The views of a bank (a list, as :func:`split_views` gives), and those of
    each candidate where a many-sensor bank fit built several
    (``by_strategy``: a fit keeps one of them, :func:`views_of` finds its)."""

    by_strategy: CandidateViews
    candidates: StrategyBanks


class CandidateViews:
    """Each candidate's views, made when first asked for (a candidate that
    no point keeps is never grown: ``strategies.PendingBank``); one at a
    time (a sweep's points run in threads)."""

    def __init__(self, views: Callable[[Any], list[StatePredictions]]) -> None:
        self._views = views
        self._made: dict[str, list[StatePredictions]] = {}
        self._lock = threading.Lock()

    def get(self, key: str | None, bank: Any, default: Any) -> Any:
        """The views of candidate ``key`` (its bank ``bank``), or ``default``
        where ``key`` is None."""
        if key is None:
            return default
        with self._lock:
            if key not in self._made:
                self._made[key] = self._views(bank)
            return self._made[key]


def views_of(views: Sequence[StatePredictions], model: Any) -> Any:
    """The views that describe ``model``'s own bank (its strategy's)."""
    by_strategy = getattr(views, "by_strategy", None)
    if by_strategy is None:
        return views
    key = views.candidates.key_of(model.bank_)
    return by_strategy.get(key, model.bank_, views)


def split_views(
    template: BudgetDAGClassifier,
    bank: ClassifierBank,
    data: FitData,
    evals: Mapping[str, tuple[pd.DataFrame, Any, Any]],
) -> list[StatePredictions]:
    """Out-of-fold "train" view, then one view per evaluation split (a
    :class:`StrategyViews` when a many-sensor bank fit built several
    strategies' DAGs: the first candidate's views, and each candidate's)."""
    if isinstance(bank, StrategyBanks) and len(bank) > 1:
        by_strategy = CandidateViews(
            functools.partial(_bank_views, template, data=data, evals=evals)
        )
        first = next(iter(bank))
        out = StrategyViews(by_strategy.get(first, bank[first], None))
        out.by_strategy = by_strategy
        out.candidates = bank
        return out
    if isinstance(bank, StrategyBanks):
        bank = bank.default
    return _bank_views(template, bank, data, evals)


def _bank_views(
    template: BudgetDAGClassifier,
    bank: ClassifierBank,
    data: FitData,
    evals: Mapping[str, tuple[pd.DataFrame, Any, Any]],
) -> list[StatePredictions]:
    spec = data.spec
    # The bank's DAG: its own subsets, not a second selection.
    plan = template.fit_plan(spec, len(data.Xv))
    dag, _ = plan.bank_dag(bank, TrainingData(spec, data.Xv, data.y_enc, {}))
    if not hasattr(bank, "oof_proba_") and hasattr(bank, "state_oof_proba"):
        # A sparse DAG's bank scores its states out of fold on demand: the
        # views read them from a copy (the caller's bank stays as it was).
        bank = copy.copy(bank)
        bank.oof_proba_ = bank.state_oof_proba(data.Xv)
    conf = template.policy_features
    lm = check_loss_matrix(template.loss_matrix, len(data.classes))
    views = [
        bank_state_predictions(
            bank,
            data.Xv,
            data.y_enc,
            dag,
            data.costs,
            out_of_fold=True,
            with_confidence=conf,
            split="train",
            loss_matrix=lm,
        )
    ]
    for name, (X, y, sample_costs) in evals.items():
        Xv = check_features(X, spec)
        labels = check_labels(align_rows(X, y, "y"), len(Xv), None)
        sample_costs = align_rows(X, sample_costs, "sample_costs")
        costs = check_sample_costs(sample_costs, spec, len(Xv))
        views.append(
            bank_state_predictions(
                bank,
                Xv,
                encode_labels(labels, data.classes),
                dag,
                spec.cost_vector if costs is None else costs,
                out_of_fold=False,
                with_confidence=conf,
                split=name,
                loss_matrix=lm,
            )
        )
    return views


def held_out_kept(bank: Any) -> contextlib.AbstractContextManager[Any]:
    """The context of fits that share ``bank`` (a sweep's points): a
    ``StrategyBanks`` keeps its held-out growths' probabilities until it
    ends (``keeping_held_out``); other banks have none."""
    keep = getattr(bank, "keeping_held_out", None)
    return contextlib.nullcontext() if keep is None else keep()


def kept_by_fitted_neighbours(
    bank: Any, fitted: Mapping[float, Any], scales: Sequence[float]
) -> dict[float, tuple[str, tuple[float, float]]]:
    """The ``scales`` to fit between two fitted ones (``fitted``: scale ->
    model) that kept the same candidate of ``bank`` (a ``StrategyBanks`` of
    several), each with that candidate and the two scales
    (``strategies.kept_by_neighbours``): :func:`fit_point`'s ``kept``. A
    model whose bank is not one of ``bank``'s (a copy back from a worker
    process) keeps nothing for its neighbours."""
    if not isinstance(bank, StrategyBanks) or len(bank) < 2:
        return {}
    keys = {s: bank.key_of(model.bank_) for s, model in fitted.items()}
    out = {}
    for scale in scales:
        found = kept_by_neighbours(keys, scale)
        if found is not None and found[0] is not None:
            out[scale] = found
    return out


def fit_point(
    template: BudgetDAGClassifier,
    data: FitData,
    bank: ClassifierBank,
    cost_scale: float,
    views: Sequence[StatePredictions],
    inner_n_jobs: int | None,
    kept: tuple[str, tuple[float, float]] | None = None,
) -> tuple[BudgetDAGClassifier, list[dict[str, Any]]]:
    """Learn the policies at one cost scale and evaluate them on every view.

    ``kept``: (candidate key, the two neighbouring scales) of
    ``strategies.kept_by_neighbours``: the point fits that candidate of
    ``bank`` (a ``StrategyBanks``) without a choice of its own; its model
    still holds every candidate (``strategy_banks_``), and its
    ``strategy_choice_`` names the neighbours (``kept_between``).
    """
    model = clone(template).set_params(
        cost_scale=float(cost_scale), n_jobs=inner_n_jobs
    )
    given = bank if kept is None else bank.only(kept[0])
    # The sweep reports its points: a point's own fit draws no bar (verbose).
    model.fit(
        data.X, data.y, sample_costs=data.sample_costs, bank=given, progress=_quiet
    )
    if kept is not None:
        model.strategy_banks_ = bank
        choice = StrategyChoice(kept[0], kept_between=kept[1])
        model.strategy_validation_ = choice.to_dict()
    rows = [
        {"split": v.split, "cost_scale": float(cost_scale), **dag_point(model, v)}
        for v in views_of(views, model)
    ]
    model.set_params(n_jobs=template.n_jobs)
    return model, rows
