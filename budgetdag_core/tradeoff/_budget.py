"""Budget targeting: the ``cost_scale`` whose policy spends a given average cost.

The paper states the problem under an expected budget: minimise error subject to
an average acquisition cost. ``cost_scale`` is its Lagrange multiplier. We hold out
part of the training data, fit the bank once on the rest, and bisect the scale
(on a log axis) until the held-out average cost meets the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from .._progress import Progress
from ..estimator import BudgetDAGClassifier
from ..validation import align_rows, check_params, int_in, int_seed, real_in
from ._sweep import (
    check_fit_data,
    fit_point,
    held_out_kept,
    kept_by_fitted_neighbours,
    make_template,
    split_views,
)

#: Most bisection steps of :func:`fit_for_budget` (``max_iter``): each learns
#: the policies once, and 60 halvings exhaust float64's precision on any
#: cost-scale interval.
MAX_BUDGET_ITER = 60


@dataclass
class BudgetReport:
    """What :func:`fit_for_budget` found.

    Attributes
    ----------
    target_avg_cost, tolerance : float
    cost_scale : float
        The chosen scale.
    met : bool
        The validation average cost is within ``tolerance`` of the target, or
        below it at ``cost_scale=0`` (the policy then buys all that helps and a
        larger budget would stay unspent). When False the policy's cost jumps
        over the target between neighbouring scales and the chosen model is the
        closest one not above ``target + tolerance``.
    train_avg_cost, train_error : float
        On the rows the model was fitted on, out of fold (the bank models that
        classify a row did not see it).
    validation_avg_cost, validation_error : float
        On the held-out rows, with the model's refit bank.
    n_train, n_validation : int
    refit : bool
        The returned model was refit on all rows at ``cost_scale`` (its costs
        then are those of the split model, measured before the refit).
    history : DataFrame
        Every scale tried, in order, with its costs and errors.
    train_rows : ndarray of int or None
        Positions in ``X`` of the rows the returned model was fitted on, in
        the order it saw them (all rows after a refit): its out-of-fold
        predictions are theirs, e.g. to replay Graph-Reduce
        (:func:`~budgetdag_core.teaching.graph_reduce_steps`) on
        ``X.iloc[train_rows]``. None in reports made before it was recorded.

    Examples
    --------
    >>> from budgetdag_core import fit_for_budget, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = fit_for_budget(demo.X_train, demo.y_train, demo.spec, 2.0, cv=3,
    ...                        random_state=0)
    >>> report = model.budget_report_
    >>> report.met, abs(report.validation_avg_cost - 2.0) <= report.tolerance
    (True, True)
    >>> list(report.history.columns)[:3]
    ['cost_scale', 'train_avg_cost', 'train_error']
    """

    target_avg_cost: float
    tolerance: float
    cost_scale: float
    met: bool
    train_avg_cost: float
    train_error: float
    validation_avg_cost: float
    validation_error: float
    n_train: int
    n_validation: int
    refit: bool
    history: pd.DataFrame
    train_rows: np.ndarray | None = None


def _take(rows: np.ndarray, values: Any) -> Any:
    if values is None:
        return None
    if isinstance(values, pd.DataFrame | pd.Series):
        return values.iloc[rows]
    return np.asarray(values)[rows]


def fit_for_budget(
    X: pd.DataFrame,
    y: Any,
    spec: Any,
    target_avg_cost: float,
    *,
    validation_fraction: float = 0.25,
    tolerance: float | None = None,
    max_iter: int = 20,
    sample_costs: Any = None,
    refit: bool = False,
    n_jobs: int | None = None,
    progress: Progress | None = None,
    **estimator_params: Any,
) -> BudgetDAGClassifier:
    """Fit the policy whose held-out average cost meets ``target_avg_cost``.

    Parameters
    ----------
    X, y : training data and labels.
    spec : SensorSpec, dict or BudgetDAGClassifier (an unfitted template).
    target_avg_cost : float
        The average acquisition cost per example to spend (spec cost units).
    validation_fraction : float, default=0.25
        Share of rows held out (stratified) to measure the cost.
    tolerance : float, optional
        Accepted distance to the target; default 1% of the average cost of all
        sensors.
    max_iter : int, default=20
        Most bisection steps (each learns policies once; the bank is reused),
        at most ``MAX_BUDGET_ITER`` (60). With many sensors a step between two
        tried scales that kept the same strategy keeps it
        (``strategy_choice_.kept_between``); the others choose.
    sample_costs : DataFrame (rows x sensors), optional
        Example-dependent costs.
    refit : bool, default=False
        Refit on all rows at the chosen scale (new bank). The default returns
        the model whose held-out cost was measured.
    n_jobs : int, optional
        Parallel bank fits and node fits (joblib).
    progress : callable(stage, done, total), optional
        Stages "bank" then "budget" (one call per bisection step).
    **estimator_params
        Passed to :class:`BudgetDAGClassifier`; its ``random_state`` also seeds
        the split.

    Returns
    -------
    BudgetDAGClassifier
        Fitted, with the report in ``budget_report_`` (:class:`BudgetReport`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from budgetdag_core import SensorSpec
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(400, 2)), columns=["a", "b"])
    >>> y = (X["a"] + X["b"] > 0).astype(int)
    >>> spec = SensorSpec({"a": ["a"], "b": ["b"]}, {"a": 1.0, "b": 1.0})
    >>> model = fit_for_budget(X, y, spec, 1.0, cv=3, random_state=0)
    >>> model.budget_report_.validation_avg_cost <= 1.0 + model.budget_report_.tolerance
    True
    """
    target = _check_arguments(target_avg_cost, validation_fraction, tolerance, max_iter)
    template = make_template(spec, estimator_params, n_jobs)
    # By label, once: the held-out split below takes rows by position.
    y = align_rows(X, y, "y")
    sample_costs = align_rows(X, sample_costs, "sample_costs")
    full = check_fit_data(template, X, y, sample_costs)
    tol = 0.01 * full.mean_total_cost if tolerance is None else float(tolerance)
    search = _ScaleSearch.on_held_out_rows(
        template, X, full.y, sample_costs, validation_fraction, max_iter, progress
    )
    with held_out_kept(search.bank):
        _bisect(search, target, tol)
    history = pd.DataFrame([rec for _, rec in search.tried.values()])
    ok = history[history["validation_avg_cost"] <= target + tol]
    best = ok.sort_values(
        ["validation_avg_cost", "validation_error"], ascending=[False, True]
    ).iloc[0]
    model = search.tried[float(best["cost_scale"])][0]
    if refit:
        model = make_template(template, {"cost_scale": float(best["cost_scale"])}, None)
        model.fit(X, y, sample_costs=sample_costs)
    model.budget_report_ = BudgetReport(
        target_avg_cost=target,
        tolerance=tol,
        cost_scale=float(best["cost_scale"]),
        met=bool(
            abs(best["validation_avg_cost"] - target) <= tol
            or (best["cost_scale"] == 0 and best["validation_avg_cost"] <= target)
        ),
        train_avg_cost=float(best["train_avg_cost"]),
        train_error=float(best["train_error"]),
        validation_avg_cost=float(best["validation_avg_cost"]),
        validation_error=float(best["validation_error"]),
        n_train=search.n_train,
        n_validation=search.n_validation,
        refit=refit,
        history=history,
        train_rows=np.arange(len(full.y)) if refit else search.fit_rows,
    )
    return model


def _check_arguments(
    target_avg_cost: float,
    validation_fraction: float,
    tolerance: float | None,
    max_iter: int,
) -> float:
    """The target as a float, after checking the search's arguments."""
    check_params(
        "fit_for_budget",
        {
            "target_avg_cost": [real_in(0.0)],
            "validation_fraction": [real_in(0.0, 1.0, closed="neither")],
            "tolerance": [real_in(0.0), None],
            "max_iter": [int_in(1, MAX_BUDGET_ITER)],
        },
        target_avg_cost=target_avg_cost,
        validation_fraction=validation_fraction,
        tolerance=tolerance,
        max_iter=max_iter,
    )
    return float(target_avg_cost)


@dataclass
class _ScaleSearch:
    """Policies learned at trial cost scales on one bank, measured on held-out
    rows (``tried``: scale -> (model, record), in the order tried)."""

    template: BudgetDAGClassifier
    data: Any
    bank: Any
    views: list[Any]
    max_iter: int
    progress: Progress | None
    n_train: int
    n_validation: int
    fit_rows: np.ndarray
    scale_range: tuple[float, float]
    tried: dict[float, tuple[BudgetDAGClassifier, dict[str, float]]]

    @classmethod
    def on_held_out_rows(
        cls,
        template: BudgetDAGClassifier,
        X: pd.DataFrame,
        y: np.ndarray,
        sample_costs: Any,
        validation_fraction: float,
        max_iter: int,
        progress: Progress | None,
    ) -> _ScaleSearch:
        """Hold out a stratified share of the rows; fit the bank on the rest."""
        fit_rows, val_rows = train_test_split(
            np.arange(len(y)),
            test_size=validation_fraction,
            stratify=y,
            random_state=int_seed(template.random_state),
        )
        X_fit, y_fit = X.iloc[fit_rows], y[fit_rows]
        data = check_fit_data(template, X_fit, y_fit, _take(fit_rows, sample_costs))
        bank = template.fit_bank(X_fit, y_fit, progress=progress)
        if progress is not None:
            progress("budget", 0, max_iter)
        held_out = (X.iloc[val_rows], y[val_rows], _take(val_rows, sample_costs))
        views = split_views(template, bank, data, {"validation": held_out})
        return cls(
            template,
            data,
            bank,
            views,
            max_iter,
            progress,
            len(fit_rows),
            len(val_rows),
            fit_rows,
            data.scale_range(),
            {},
        )

    @property
    def done(self) -> bool:
        return len(self.tried) >= self.max_iter

    def cost_at(self, scale: float) -> float:
        """Learn the policies at ``scale``; their held-out average cost. A
        scale between two tried ones that kept the same many-sensor strategy
        keeps it (``kept_by_fitted_neighbours``): the bisection's steps
        between two such ends judge the strategies no more."""
        tried = {s: model for s, (model, _) in self.tried.items()}
        kept = kept_by_fitted_neighbours(self.bank, tried, [scale]).get(scale)
        model, (train, val) = fit_point(
            self.template, self.data, self.bank, scale, self.views,
            self.template.n_jobs, kept,
        )  # fmt: skip
        self.tried[scale] = (
            model,
            {
                "cost_scale": scale,
                "train_avg_cost": train["avg_cost"],
                "train_error": train["error"],
                "validation_avg_cost": val["avg_cost"],
                "validation_error": val["error"],
            },
        )
        if self.progress is not None:
            self.progress("budget", len(self.tried), self.max_iter)
        return val["avg_cost"]


def _bisect(search: _ScaleSearch, target: float, tol: float) -> None:
    """Try cost scales until one spends ``target`` (within ``tol``) or the
    search runs out of steps.

    Bisection on a log axis between a (spends more than the target) and b (at
    most the target); at the high end of the scale range nothing is bought, so
    b starts there.
    """
    if search.cost_at(0.0) <= target + tol:
        return
    low, high = search.scale_range
    a, b, scale = None, high, low
    while not search.done:
        cost = search.cost_at(scale)
        if abs(cost - target) <= tol:
            break
        if cost > target:
            a = scale
            break
        b, scale = scale, scale / 10
    while a is not None and not search.done and b / a > 1.001:
        mid = math.sqrt(a * b)
        cost = search.cost_at(mid)
        if abs(cost - target) <= tol:
            break
        a, b = (mid, b) if cost > target else (a, mid)
    spent = [r["validation_avg_cost"] for _, r in search.tried.values()]
    if not any(c <= target + tol for c in spent):
        search.cost_at(b)  # max_iter ran out above the target: take the safe end
