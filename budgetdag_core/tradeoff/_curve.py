"""The cost-error trade-off: one bank, Graph-Reduce per cost scale, and baselines.

``tradeoff_curve`` fits the classifier bank once (it does not depend on costs),
learns policies for many ``cost_scale`` values (in parallel through joblib, so a
Dask or Ray backend spreads them over a cluster), and evaluates each policy and
every baseline with the same cost accounting (see
:mod:`budgetdag_core.tradeoff._baselines`).

The training split ("train") uses the bank's out-of-fold predictions: each training
row is classified by a bank model that did not see it, as in the losses Graph-Reduce
learns from. The policies were learned on those rows, though, so the train curve is
optimistic; judge on a test split.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils.parallel import Parallel, delayed

from .._bounded_io import short_repr
from .._progress import Progress
from ..bank import ClassifierBank
from ..decisions import check_loss_matrix
from ..estimator import BudgetDAGClassifier
from ..strategies import StrategyBanks
from ..validation import check_index, check_params, int_in, real_in
from ._baselines import (
    FRAME_COLUMNS,
    baseline_frame,
    curve_at,
    lower_convex_hull,
    train_chosen_hull,
)
from ._budget import BudgetReport, fit_for_budget
from ._cascade import (
    DEFAULT_N_THRESHOLDS,
    ConfidenceCascade,
    cascade_from_view,
    check_n_thresholds,
)
from ._sweep import (
    check_fit_data,
    fit_point,
    held_out_kept,
    kept_by_fitted_neighbours,
    make_template,
    split_views,
)

__all__ = [
    "BudgetReport",
    "DominanceSummary",
    "TradeoffResult",
    "dominance_summary",
    "fit_for_budget",
    "tradeoff_curve",
]


#: Most points of a curve (``n_points``, or the scales given): each point
#: learns the policies once on the shared bank (seconds on a large DAG), and
#: 100 points resolve the cost axis finer than any figure of it shows.
MAX_CURVE_POINTS = 100


# ------------------------------------------------------------ choosing scales
def initial_scales(n_points: int, low: float, high: float) -> list[float]:
    """0, ``high`` and a third of the rest spread geometrically in between.

    The other points go where the curve turns out to move (:func:`refine_scales`).
    """
    n_inner = min(max(n_points - 2, 0), max(1, (n_points - 2) // 3))
    inner = np.geomspace(low, high, n_inner + 1)[:-1] if n_inner else []
    return sorted({0.0, float(high), *map(float, inner)})


def refine_scales(
    scales: Sequence[float],
    costs: Sequence[float],
    n_new: int,
    errors: Sequence[float] | None = None,
) -> list[float]:
    """Scales splitting the ``n_new`` widest gaps between neighbouring points.

    A gap's width is its span of average cost or, with ``errors``, the length
    of the curve segment with cost and error each scaled to their range: a
    stretch where the error drops steeply is split before a flat one of the
    same cost span, since reading the curve there (e.g. at a budget) depends
    on it most. A new scale is the geometric mean of its neighbours (or a
    tenth of the upper one next to 0). Left alone: gaps whose scales are within
    2% of each other or of zero cost span (the curve does not resolve finer),
    and a jump already located, i.e. a gap between two flat stretches (all
    examples buy a sensor at once: splitting it again only finds the same two
    costs).
    """
    order = np.argsort(scales)
    s = np.asarray(scales, dtype=float)[order]
    c = np.asarray(costs, dtype=float)[order]
    e = np.zeros_like(c) if errors is None else np.asarray(errors, float)[order]
    c_span = float(np.ptp(c)) or 1.0
    e_span = float(np.ptp(e)) or 1.0
    gaps = []
    for i, (a, b) in enumerate(zip(s[:-1], s[1:], strict=True)):
        if a == 0:
            mid = b / 10
        elif b / a > 1.02:
            mid = math.sqrt(a * b)
        else:
            continue
        dc, de = abs(c[i + 1] - c[i]), abs(e[i + 1] - e[i])
        located_jump = 0 < i < len(c) - 2 and c[i - 1] == c[i] and c[i + 1] == c[i + 2]
        if dc > 0 and not located_jump:
            gaps.append((math.hypot(dc / c_span, de / e_span), mid))
    gaps.sort(key=lambda g: -g[0])
    return [mid for _, mid in gaps[:n_new]]


# ---------------------------------------------------------------- the summary
@dataclass
class DominanceSummary:
    """How the DAG compares with the non-adaptive hull (and the confidence
    cascade) on one split.

    Attributes
    ----------
    split : str
    cost_range : (float, float)
        Common average-cost range of the DAG curve and the fixed-subset hull.
    area : float
        Integral over ``cost_range`` of hull error minus DAG error (error x cost
        units); positive when the DAG is below (better than) the hull. Both
        curves are lower convex hulls (random mixes of their points), flat past
        their lowest error.
    mean_gap : float
        ``area`` divided by the range width: the average error advantage.
    all_sensor_error, all_sensor_cost : float
        The all-sensor baseline.
    tolerance : float
        Slack on the all-sensor error for the two cost fractions.
    dag_cost_fraction : float
        Average cost of the cheapest DAG point (an actual policy, no mixing) with
        error at most ``all_sensor_error + tolerance``, over the all-sensor cost;
        NaN if no DAG point gets there.
    hull_cost_fraction : float
        The same for the fixed-subset hull (mixing allowed).
    cascade_cost_range, cascade_area, cascade_mean_gap : (float, float), float
        As ``cost_range``, ``area`` and ``mean_gap``, against the lower convex
        hull of the confidence cascade's points (positive: the DAG errs less);
        NaN when the frame has no ``cascade`` rows.
    cascade_cost_fraction : float
        As ``hull_cost_fraction``, for the confidence cascade's hull.

    Examples
    --------
    >>> from budgetdag_core import toy_dataset, tradeoff_curve
    >>> demo = toy_dataset(200, 100)
    >>> res = tradeoff_curve(demo.X_train, demo.y_train, demo.spec, n_points=6,
    ...                      X_test=demo.X_test, y_test=demo.y_test, cv=3,
    ...                      random_state=0)
    >>> summary = res.summary
    >>> summary.split, summary.all_sensor_cost
    ('test', 6.0)
    >>> bool(summary.mean_gap > 0)  # the DAG errs less than the fixed subsets
    True
    >>> print(summary.describe())  # doctest: +ELLIPSIS
    [test] Between average costs 0 and 4.1, the DAG curve lies ... below ...
    """

    split: str
    cost_range: tuple[float, float]
    area: float
    mean_gap: float
    all_sensor_error: float
    all_sensor_cost: float
    tolerance: float
    dag_cost_fraction: float
    hull_cost_fraction: float
    cascade_cost_range: tuple[float, float] = (math.nan, math.nan)
    cascade_area: float = math.nan
    cascade_mean_gap: float = math.nan
    cascade_cost_fraction: float = math.nan

    @property
    def has_cascade(self) -> bool:
        """Whether the frame had confidence-cascade rows for this split."""
        return not math.isnan(self.cascade_cost_range[0])

    def _cascade_words(self, target: str) -> str:
        if not self.has_cascade:
            return ""
        lo, hi = self.cascade_cost_range
        if math.isfinite(self.cascade_mean_gap):
            side = "below" if self.cascade_mean_gap >= 0 else "above"
            words = (
                f" Against the confidence cascade (sensors bought in one fixed "
                f"order, stopping once the classifier is sure enough), between "
                f"costs {lo:.3g} and {hi:.3g} the DAG curve lies "
                f"{abs(self.cascade_mean_gap) * 100:.2f} error points {side} it on "
                f"average (area {self.cascade_area:.4g})"
            )
        else:
            words = " The DAG curve and the confidence cascade share no cost range"
        if math.isfinite(self.cascade_cost_fraction):
            return (
                f"{words}; the cascade reaches the {target} at "
                f"{self.cascade_cost_fraction * 100:.1f}% of the all-sensor cost."
            )
        return f"{words}; the cascade never reaches the {target}."

    def describe(self) -> str:
        """The summary in words."""
        lo, hi = self.cost_range
        if not math.isfinite(self.mean_gap):
            gap = "The DAG curve and the fixed-subset hull share no cost range."
        else:
            side = "below" if self.mean_gap >= 0 else "above"
            gap = (
                f"Between average costs {lo:.3g} and {hi:.3g}, the DAG curve lies "
                f"{abs(self.mean_gap) * 100:.2f} error points {side} the best mix "
                f"of fixed sensor subsets on average (area {self.area:.4g})."
            )
        target = f"all-sensor error {self.all_sensor_error:.4f} + {self.tolerance:.3g}"
        if math.isfinite(self.dag_cost_fraction):
            match = (
                f"The DAG reaches the {target} at "
                f"{self.dag_cost_fraction * 100:.1f}% of the all-sensor cost"
            )
        else:
            match = f"No DAG point reaches the {target}"
        hull = (
            f"; fixed subsets need {self.hull_cost_fraction * 100:.1f}%."
            if math.isfinite(self.hull_cost_fraction)
            else "."
        )
        cascade = self._cascade_words(target)
        return f"[{self.split}] {gap} {match}{hull}{cascade}"


def _check_scales(scales: Sequence[float], name: str) -> list[float]:
    """Sorted distinct cost scales; ValueError naming ``name`` for a bad one."""
    try:
        values = [float(s) for s in scales]
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a sequence of numbers; got {short_repr(scales)}."
        ) from None
    if any(not math.isfinite(s) or s < 0 for s in values):
        raise ValueError(f"{name} must be finite and non-negative; got {list(scales)}.")
    if len(set(values)) > MAX_CURVE_POINTS:
        raise ValueError(
            f"{name} holds {len(set(values))} distinct scales; a curve has at most "
            f"{MAX_CURVE_POINTS} points (each learns the policies once)."
        )
    return sorted(set(values))


def _cheapest_reaching(cost: np.ndarray, error: np.ndarray, target: float) -> float:
    """Smallest cost at which a piecewise-linear decreasing curve is <= target."""
    if error[0] <= target:
        return float(cost[0])
    for i in range(1, len(cost)):
        if error[i] <= target:
            e0, e1 = error[i - 1], error[i]
            t = (e0 - target) / (e0 - e1) if e0 != e1 else 1.0
            return float(cost[i - 1] + t * (cost[i] - cost[i - 1]))
    return math.nan


def _hull_of(part: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    c, e = part["avg_cost"].to_numpy(float), part["error"].to_numpy(float)
    idx = lower_convex_hull(c, e)
    return c[idx], e[idx]


def _gap_between(
    dag: pd.DataFrame,
    dc: np.ndarray,
    de: np.ndarray,
    other: pd.DataFrame,
    oc: np.ndarray,
    oe: np.ndarray,
) -> tuple[tuple[float, float], float, float]:
    """Common cost range, area and mean gap of ``other``'s hull above the DAG's."""
    lo = max(float(dag["avg_cost"].min()), float(other["avg_cost"].min()))
    hi = min(float(dag["avg_cost"].max()), float(other["avg_cost"].max()))
    if hi <= lo:
        return (lo, hi), 0.0, math.nan
    grid = np.unique(np.concatenate([[lo, hi], dc, oc]))
    grid = grid[(grid >= lo) & (grid <= hi)]
    diff = curve_at(oc, oe, grid) - curve_at(dc, de, grid)
    area = float(np.sum((diff[1:] + diff[:-1]) / 2 * np.diff(grid)))
    return (lo, hi), area, area / (hi - lo)


def dominance_summary(
    frame: pd.DataFrame, split: str = "test", tolerance: float = 0.005
) -> DominanceSummary:
    """Compare the DAG rows of a trade-off frame with its fixed-subset rows
    and, when there are ``cascade`` rows, with the confidence cascade.

    Parameters
    ----------
    frame : DataFrame
        Rows with ``method`` "dag", "fixed" and "all_sensors", optionally
        "cascade" (as made by :func:`~budgetdag_core.tradeoff_curve`).
    split : str
        Which split's rows to compare.
    tolerance : float
        Allowed excess over the all-sensor error for the cost fractions.

    Examples
    --------
    >>> from budgetdag_core import toy_dataset, tradeoff_curve
    >>> from budgetdag_core.tradeoff import dominance_summary
    >>> demo = toy_dataset(200, 100)
    >>> res = tradeoff_curve(demo.X_train, demo.y_train, demo.spec,
    ...                      cost_scales=[0.0, 0.03, 0.3], cv=3, random_state=0)
    >>> summary = dominance_summary(res.frame, split="train", tolerance=0.01)
    >>> summary.split, summary.tolerance
    ('train', 0.01)
    """
    check_params(
        "dominance_summary", {"tolerance": [real_in(0.0, 1.0)]}, tolerance=tolerance
    )
    rows = frame[frame["split"] == split]
    dag = rows[rows["method"] == "dag"]
    fixed = rows[rows["method"] == "fixed"]
    if dag.empty or fixed.empty:
        raise ValueError(
            f"The frame has no DAG or fixed-subset rows for {short_repr(split)}."
        )
    all_row = rows[rows["method"] == "all_sensors"].iloc[0]
    all_err, all_cost = float(all_row["error"]), float(all_row["avg_cost"])
    dc, de = _hull_of(dag)
    hc, he = _hull_of(fixed)
    (lo, hi), area, mean_gap = _gap_between(dag, dc, de, fixed, hc, he)
    target = all_err + tolerance
    reaching = dag[dag["error"] <= target + 1e-12]
    dag_cost = float(reaching["avg_cost"].min()) if len(reaching) else math.nan
    hull_cost = _cheapest_reaching(hc, he, target + 1e-12)
    cascade = rows[rows["method"] == "cascade"]
    extra: dict[str, Any] = {}
    if len(cascade):
        cc, ce = _hull_of(cascade)
        c_range, c_area, c_gap = _gap_between(dag, dc, de, cascade, cc, ce)
        c_cost = _cheapest_reaching(cc, ce, target + 1e-12)
        extra = {
            "cascade_cost_range": c_range,
            "cascade_area": c_area,
            "cascade_mean_gap": c_gap,
            "cascade_cost_fraction": c_cost / all_cost if all_cost > 0 else math.nan,
        }
    return DominanceSummary(
        split=split,
        cost_range=(lo, hi),
        area=area,
        mean_gap=mean_gap,
        all_sensor_error=all_err,
        all_sensor_cost=all_cost,
        tolerance=tolerance,
        dag_cost_fraction=dag_cost / all_cost if all_cost > 0 else math.nan,
        hull_cost_fraction=hull_cost / all_cost if all_cost > 0 else math.nan,
        **extra,
    )


# ----------------------------------------------------------------- the result
@dataclass
class TradeoffResult:
    """What :func:`~budgetdag_core.tradeoff_curve` returns.

    Attributes
    ----------
    frame : DataFrame
        Tidy rows ``method, split, cost_scale, avg_cost, avg_sensors, error,
        loss, state, sensors``. Methods: ``dag`` (one row per cost scale and
        split), ``fixed``, ``hull`` (its subsets chosen on the split itself:
        optimistic on a test split), ``hull_oof`` (on splits other than
        ``"train"``: the hull of the subsets on the out-of-fold training
        hull, see ``train_chosen_hull``), ``no_sensors``, ``all_sensors``,
        ``oracle``, ``cascade`` (the confidence cascade, one row per
        threshold: its tau in ``threshold``, its acquisition order in
        ``sensors``; see
        ``budgetdag_core.tradeoff._cascade``) and any named extra subsets.
        ``threshold`` is NaN for the other methods. ``loss`` is the mean stop
        loss under the estimator's ``loss_matrix`` (equal to ``error`` without
        one; NaN for the oracle with one); the hulls and summaries are drawn on
        ``error``, and ``lower_convex_hull(fixed.avg_cost, fixed.loss)`` gives
        the non-adaptive bound on the matrix loss.
    cost_scales : ndarray
        The scales of the DAG points, ascending.
    models : list of BudgetDAGClassifier
        The fitted model of each scale (same order); they share one bank.
    bank : ClassifierBank or StrategyBanks
        The bank (many sensors: every strategy's DAG, each point's model
        bound to the one it kept).
    summaries : dict split -> DominanceSummary
    cascade : ConfidenceCascade or None
        The confidence cascade of the frame's ``cascade`` rows (same bank),
        ready to deploy: ``result.cascade.for_budget(c).predict(X)``.
    row_models : dict row label -> int
        The index in ``models`` of each DAG row of ``frame`` (see
        :meth:`model_index`).

    Examples
    --------
    >>> from budgetdag_core import toy_dataset, tradeoff_curve
    >>> demo = toy_dataset(200, 100)
    >>> res = tradeoff_curve(demo.X_train, demo.y_train, demo.spec,
    ...                      cost_scales=[0.0, 0.03, 0.3], X_test=demo.X_test,
    ...                      y_test=demo.y_test, cv=3, random_state=0)
    >>> sorted(res.frame["method"].unique())  # doctest: +NORMALIZE_WHITESPACE
    ['all_sensors', 'cascade', 'dag', 'fixed', 'hull', 'hull_oof',
     'no_sensors', 'oracle']
    >>> len(res.models), res.models[0].bank_ is res.bank
    (3, True)
    >>> res.model_for_budget(2.0).cost_scale  # the most accurate within budget
    0.3
    """

    frame: pd.DataFrame
    cost_scales: np.ndarray
    models: list[BudgetDAGClassifier]
    bank: ClassifierBank | StrategyBanks
    summaries: dict[str, DominanceSummary] = field(default_factory=dict)
    cascade: ConfidenceCascade | None = None
    row_models: dict[Any, int] = field(default_factory=dict)

    def model_index(self, label: Any) -> int:
        """The index in ``models`` of the DAG row ``label`` of ``frame``.

        Raises ``KeyError`` naming the label when it is not a DAG row.
        """
        try:
            return self.row_models[label]
        except KeyError:
            raise KeyError(
                f"Row {short_repr(label)} is not a DAG point of the curve."
            ) from None

    def model_rows(self, index: int) -> list[Any]:
        """The labels of the DAG rows (one per split) of model ``index``."""
        check_index("TradeoffResult.model_rows", "index", index, len(self.models))
        return [label for label, i in self.row_models.items() if i == index]

    @property
    def dag(self) -> pd.DataFrame:
        """The DAG rows of ``frame``."""
        return self.frame[self.frame["method"] == "dag"]

    @property
    def baselines(self) -> pd.DataFrame:
        """The non-DAG rows of ``frame``."""
        return self.frame[self.frame["method"] != "dag"]

    @property
    def summary(self) -> DominanceSummary:
        """The dominance summary on the test split (train if there is none)."""
        return self.summaries["test" if "test" in self.summaries else "train"]

    def model_at(self, cost_scale: float) -> BudgetDAGClassifier:
        """The model whose cost scale is nearest to ``cost_scale``."""
        check_params(
            "TradeoffResult.model_at",
            {"cost_scale": [real_in(0.0)]},
            cost_scale=cost_scale,
        )
        return self.models[int(np.argmin(np.abs(self.cost_scales - cost_scale)))]

    def model_for_budget(
        self, avg_cost: float, split: str = "train"
    ) -> BudgetDAGClassifier:
        """The most accurate model whose average cost on ``split`` is <= ``avg_cost``.

        Choose on "train" (out of fold) to keep the test split for reporting.
        """
        return self.models[self.index_for_budget(avg_cost, split)]

    def index_for_budget(self, avg_cost: float, split: str = "train") -> int:
        """The index in ``models`` of :meth:`model_for_budget`'s model."""
        check_params(
            "TradeoffResult.index_for_budget",
            {"avg_cost": [real_in(None, closed="neither")]},  # below all: said below
            avg_cost=avg_cost,
        )
        dag = self.dag[self.dag["split"] == split]
        if dag.empty:
            raise ValueError(f"No DAG rows for split {short_repr(split)}.")
        ok = dag[dag["avg_cost"] <= avg_cost + 1e-12]
        if ok.empty:
            raise ValueError(
                f"No model has an average cost <= avg_cost={avg_cost} on "
                f"{short_repr(split)}; the cheapest costs {dag['avg_cost'].min():.4g}."
            )
        best = ok.sort_values(["error", "avg_cost"]).index[0]
        return self.model_index(best)


# ------------------------------------------------------------------ the sweep
def tradeoff_curve(
    X: pd.DataFrame,
    y: Any,
    spec: Any,
    *,
    cost_scales: Sequence[float] | None = None,
    n_points: int | None = None,
    include_scales: Sequence[float] = (),
    X_test: pd.DataFrame | None = None,
    y_test: Any = None,
    sample_costs: Any = None,
    test_sample_costs: Any = None,
    bank: ClassifierBank | None = None,
    baseline_subsets: Mapping[str, Sequence[Any]] | None = None,
    tolerance: float = 0.005,
    cascade: bool = True,
    cascade_thresholds: int = DEFAULT_N_THRESHOLDS,
    n_jobs: int | None = None,
    progress: Progress | None = None,
    **estimator_params: Any,
) -> TradeoffResult:
    """Trace the DAG's cost-error curve with its baselines, fitting the bank once.

    Parameters
    ----------
    X, y : training data (a DataFrame with the spec's columns) and labels.
    spec : SensorSpec, dict or BudgetDAGClassifier
        The sensors, or an unfitted estimator used as a template.
    cost_scales : sequence of float, optional
        The scales to fit. Give either these or ``n_points``.
    n_points : int, optional
        Number of scales chosen automatically (default 10, at least 2, at most
        ``MAX_CURVE_POINTS``, 100): 0, the scale above which nothing is
        bought, and scales in between placed where the training average cost
        changes most, so the points spread over the cost axis. Fewer are fitted
        when the curve has no gaps left to split.
    include_scales : sequence of float, default=()
        Scales fitted in addition to the automatic ones (``n_points``), e.g.
        the cost scale of a model already in use, so that it is a point of its
        own curve. Not with ``cost_scales`` (put them there).
    X_test, y_test : optional
        A test split, evaluated with the refit bank (split "test").
    sample_costs, test_sample_costs : DataFrame (rows x sensors), optional
        Example-dependent costs of the training and test rows.
    bank : ClassifierBank or StrategyBanks, optional
        A bank already fitted on ``X, y`` with the same settings (e.g.
        ``estimator.fit_bank(X, y)``, or a fitted model's ``bank_``; many
        sensors: its ``strategy_banks_``, among which each cost scale
        chooses, or its ``bank_``, the strategy it kept). A scale added
        between two fitted ones that kept the same strategy keeps it
        (``strategies.kept_by_neighbours``).
    baseline_subsets : dict name -> list of sensor subsets, optional
        Extra fixed baselines (e.g. ``{"greedy": subsets}``); each subset must be
        a state of the DAG.
    tolerance : float, default=0.005
        Error slack of the dominance summary's cost fractions.
    cascade : bool, default=True
        Add the confidence cascade (method ``cascade``, see
        ``budgetdag_core.tradeoff._cascade``): the same bank, units bought
        in a greedy order, each row stopping once its top-class probability
        reaches a threshold; order and thresholds chosen on the out-of-fold
        training predictions.
    cascade_thresholds : int, default=20
        Quantiles of the out-of-fold confidences swept as thresholds (at most
        ``MAX_N_THRESHOLDS``, 1000).
    n_jobs : int, optional
        Parallel bank fits and sweep points through joblib; any active joblib
        backend (``joblib.parallel_config(backend="dask")``) is honoured. Results
        do not depend on it.
    progress : callable(stage, done, total), optional
        Called with stage "bank" while the bank is fitted, then "sweep" after
        each point.
    **estimator_params
        Passed to :class:`BudgetDAGClassifier` (``random_state``, ``cv``,
        ``policy_features``, ...).

    Returns
    -------
    TradeoffResult

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from budgetdag_core import SensorSpec
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(300, 2)), columns=["a", "b"])
    >>> y = (X["a"] + 0.5 * X["b"] > 0).astype(int)
    >>> spec = SensorSpec({"a": ["a"], "b": ["b"]}, {"a": 1.0, "b": 2.0})
    >>> res = tradeoff_curve(X, y, spec, n_points=4, cv=3, random_state=0)
    >>> sorted(res.frame["method"].unique())[:4]
    ['all_sensors', 'cascade', 'dag', 'fixed']
    >>> len(res.models) == len(res.cost_scales)
    True
    """
    extra = _check_arguments(
        cost_scales,
        n_points,
        include_scales,
        X_test,
        y_test,
        tolerance,
        cascade,
        cascade_thresholds,
    )
    template = make_template(spec, estimator_params, n_jobs)
    data = check_fit_data(template, X, y, sample_costs)
    scales, n_total = _first_scales(cost_scales, n_points, extra, *data.scale_range())
    if bank is None:
        bank = template.fit_bank(X, y, progress=progress)
    if progress is not None:  # the first point also chooses a strategy
        progress("sweep", 0, n_total)
    evals = {} if X_test is None else {"test": (X_test, y_test, test_sample_costs)}
    views = split_views(template, bank, data, evals)
    sweep = _Sweep(template, data, bank, views, n_total, progress)
    with held_out_kept(bank):
        sweep.run(scales)
        if cost_scales is None:
            sweep.refine()
    return _result(sweep, baseline_subsets, cascade, cascade_thresholds, tolerance)


def _result(
    sweep: _Sweep,
    baseline_subsets: Mapping[str, Sequence[Any]] | None,
    cascade: bool,
    cascade_thresholds: int,
    tolerance: float,
) -> TradeoffResult:
    """The sweep's points, the baselines and the cascade on every view."""
    fitted, bank, views = sweep.fitted, sweep.bank, sweep.views
    done = sorted(fitted)
    dag_rows = [
        {**row, "method": "dag", "state": pd.NA, "sensors": None}
        for s in done
        for row in fitted[s][1]
    ]
    # The DAG rows come first in the frame (labels 0, 1, ...), point by point.
    row_models = dict(enumerate(i for i, s in enumerate(done) for _ in fitted[s][1]))
    models = [fitted[s][0] for s in done]
    # The baselines read the given bank's states (many sensors: the first
    # candidate's, the chain's): a model on that bank (a many-sensor sweep's
    # points may keep another strategy's).
    shown = bank.default if isinstance(bank, StrategyBanks) else bank
    reference = next((m for m in models if m.bank_ is shown), models[0])
    growth = getattr(shown, "sparse_growth_", None)
    dag = reference.sensor_dag_ if growth is None else growth.dag
    subsets = None
    if baseline_subsets:
        subsets = {
            name: reference.state_indices(s) for name, s in baseline_subsets.items()
        }
    fitted_cascade, cascade_rows = None, []
    if cascade:
        fitted_cascade, cascade_rows = _cascade(
            shown, reference, dag, views, cascade_thresholds
        )
    baselines = pd.concat([baseline_frame(v, subsets) for v in views])
    frame = pd.concat(
        [pd.DataFrame(dag_rows, columns=FRAME_COLUMNS)]
        + [baselines, train_chosen_hull(baselines)]
        + cascade_rows,
        ignore_index=True,
    )
    frame["state"] = frame["state"].astype("Int64")
    summaries = {v.split: dominance_summary(frame, v.split, tolerance) for v in views}
    return TradeoffResult(
        frame=frame,
        cost_scales=np.asarray(done),
        models=models,
        bank=bank,
        summaries=summaries,
        cascade=fitted_cascade,
        row_models=row_models,
    )


def _check_arguments(
    cost_scales: Sequence[float] | None,
    n_points: int | None,
    include_scales: Sequence[float],
    X_test: Any,
    y_test: Any,
    tolerance: float,
    cascade: Any,
    cascade_thresholds: Any,
) -> list[float]:
    """:func:`tradeoff_curve`'s argument checks; the checked ``include_scales``."""
    if cost_scales is not None and n_points is not None:
        raise ValueError("Give either cost_scales or n_points, not both.")
    if (X_test is None) != (y_test is None):
        raise ValueError("Give both X_test and y_test, or neither.")
    check_params(
        "tradeoff_curve",
        {
            "n_points": [int_in(2, MAX_CURVE_POINTS), None],
            "tolerance": [real_in(0.0, 1.0)],
            "cascade": ["boolean"],
        },
        n_points=n_points,
        tolerance=tolerance,
        cascade=cascade,
    )
    check_n_thresholds(cascade_thresholds, "cascade_thresholds", "tradeoff_curve")
    extra = _check_scales(include_scales, "include_scales")
    if cost_scales is not None and extra:
        raise ValueError("Give include_scales with n_points, not with cost_scales.")
    if n_points is not None and n_points + len(extra) > MAX_CURVE_POINTS:
        raise ValueError(
            f"n_points={n_points} and {len(extra)} include_scales make more than "
            f"{MAX_CURVE_POINTS} points (MAX_CURVE_POINTS)."
        )
    return extra


def _first_scales(
    cost_scales: Sequence[float] | None,
    n_points: int | None,
    extra: list[float],
    low: float,
    high: float,
) -> tuple[list[float], int]:
    """The scales fitted first, and how many the sweep fits in all."""
    if cost_scales is not None:
        scales = _check_scales(cost_scales, "cost_scales")
        if not scales:
            raise ValueError("cost_scales must hold at least one scale; got none.")
        return scales, len(scales)
    n_total = 10 if n_points is None else int(n_points)
    scales = initial_scales(n_total, low, high)
    added = [s for s in extra if s not in scales]
    return sorted(set(scales) | set(added)), n_total + len(added)


@dataclass
class _Sweep:
    """Policies fitted on one bank, scale by scale (``fitted``: scale ->
    (model, one row of points per view))."""

    template: BudgetDAGClassifier
    data: Any
    bank: ClassifierBank
    views: Sequence[Any]
    n_total: int
    progress: Progress | None
    fitted: dict[float, tuple[BudgetDAGClassifier, list[dict[str, Any]]]] = field(
        default_factory=dict
    )

    def run(
        self,
        batch: Sequence[float],
        kept: Mapping[float, tuple[str, tuple[float, float]]] | None = None,
    ) -> None:
        """Fit the points of ``batch`` (``kept``: scale -> the strategy it
        keeps without a choice, :func:`fit_point`)."""
        kept = {} if kept is None else kept
        # Threads: policy learning is compiled and releases the GIL, and
        # threads share the bank (worker processes would copy it and load the
        # compiled kernels again); a joblib.parallel_config backend still wins.
        jobs = Parallel(
            n_jobs=self.template.n_jobs, return_as="generator", prefer="threads"
        )(
            delayed(fit_point)(
                self.template, self.data, self.bank, s, self.views, 1, kept.get(s)
            )
            for s in batch
        )
        for s, result in zip(batch, jobs, strict=True):
            self.fitted[s] = result
            if self.progress is not None:
                self.progress("sweep", len(self.fitted), self.n_total)

    def refine(self) -> None:
        """Fit scales where the training curve has its largest gaps, half of
        the remaining ones at a time, until ``n_total`` or no gap is left."""
        fitted = self.fitted
        while len(fitted) < self.n_total:
            done = sorted(fitted)
            train_cost = [fitted[s][1][0]["avg_cost"] for s in done]
            train_error = [fitted[s][1][0]["error"] for s in done]
            remaining = self.n_total - len(fitted)
            batch = refine_scales(
                done, train_cost, max(1, (remaining + 1) // 2), errors=train_error
            )
            batch = [s for s in batch if s not in fitted]
            if not batch:
                break
            # Many sensors: a scale between two that kept the same strategy
            # keeps it without judging the strategies again.
            models = {s: model for s, (model, _) in fitted.items()}
            self.run(batch, kept_by_fitted_neighbours(self.bank, models, batch))


def _cascade(
    bank: ClassifierBank,
    model: BudgetDAGClassifier,
    dag: Any,
    views: Sequence[Any],
    n_thresholds: int,
) -> tuple[ConfidenceCascade, list[pd.DataFrame]]:
    """The confidence cascade on ``dag`` (the bank's) chosen on the
    out-of-fold view, and its points on every view."""
    fitted_cascade = cascade_from_view(
        bank,
        dag,
        model.spec_,
        model.classes_,
        views[0],
        loss_matrix=check_loss_matrix(model.loss_matrix, len(model.classes_)),
        n_thresholds=n_thresholds,
    )
    rows = [fitted_cascade.train_points] + [fitted_cascade.curve(v) for v in views[1:]]
    return fitted_cascade, rows
