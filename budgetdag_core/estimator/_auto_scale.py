"""``cost_scale="auto"``: the cost scale chosen on the training rows' out-of-fold
predictions, and the warning of a policy that buys nothing although a sensor
helps.

The rule (the estimators' default): fit the bank once, learn the policies at a
few cost scales on it (the machinery of ``refit_policies`` and the sweeps:
one bank, policies per scale), and measure each on the training rows with the
bank's out-of-fold predictions (a row's prediction at any state comes from
models that did not see it; never a test row). The *reference* is the
out-of-fold error of the richest state (all sensors on a full DAG); the *bar*
is the least error seen, the reference's or, where a policy tried errs less
(more sensors can hurt: an any-subset bank on many noisy sensors), that
policy's. The kept scale is the one of least out-of-fold average cost whose
error is within a margin of the bar: ``AUTO_MARGIN`` (one point of 0/1
error, or of the ``loss_matrix``'s largest loss) for a classifier,
``AUTO_RELATIVE_MARGIN`` (10 % of the reference's squared or absolute error)
for a regressor. When no scale tried meets it (the richest state errs less
than every policy) the least error is kept (least cost among ties).

The scales tried: a first one from the costs and the target's spread (it
fits the bank), then the gain per unit cost of buying every sensor
(reference against the no-sensor error) times powers of ``AUTO_STEP``, up
while the error stays within the margin of the bar and something is bought,
down until it does; then ``AUTO_REFINE`` halvings of the log-interval
between the last scale that failed and the first that met it. At most
``AUTO_MAX_TRIALS`` policy fits.

The policies' numbers on the rows they were learned from flatter them (the
bank's part is out of fold; the policies, and a many-sensor DAG's order or
routes, were learned on those rows). On most tables the margin absorbs it; on
small ones (wine's 133 rows), and where a routed DAG's routes fit the
training rows (digits), the kept policy errs more on test rows than the
margin allows: ``benchmarks/bench_defaults.py`` prints where.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from sklearn.base import clone

from ..validation import check_sample_costs
from ._plans import fitted_plan

#: A classifier's margin over the reference error: one point (times the
#: ``loss_matrix``'s largest loss).
AUTO_MARGIN = 0.01
#: A regressor's margin: this share of the reference's loss.
AUTO_RELATIVE_MARGIN = 0.10
#: Factor between neighbouring scales of the coarse search.
AUTO_STEP = 4.0
#: Bisections of the log-interval around the kept scale after the coarse search.
AUTO_REFINE = 2
#: Most policy fits of one search (each is a Graph-Reduce on the one bank).
AUTO_MAX_TRIALS = 10


class NothingBoughtWarning(UserWarning):
    """A fitted policy buys no sensor although one lowers the out-of-fold
    error: the cost scale makes every sensor too dear.

    Raised by ``fit`` (the estimators' own fits, not the sweeps' policies on a
    given bank, which buy nothing at high scales by design). Lower
    ``cost_scale`` or use ``cost_scale="auto"``; silence it with
    ``warnings.filterwarnings("ignore", category=NothingBoughtWarning)``.

    Examples
    --------
    >>> import warnings
    >>> from budgetdag_core import NothingBoughtWarning
    >>> issubclass(NothingBoughtWarning, UserWarning)
    True
    """


class OutOfFold:
    """A fitted model's policies and states on its training rows, with the
    bank's out-of-fold outputs: per-row judged loss (0/1 or the
    ``loss_matrix``'s for a classifier; the regressor's ``loss``) and cost,
    their means weighing row i ``weight[i]`` times (the fit's
    ``sample_weight``; None: each row once)."""

    def __init__(
        self,
        model: Any,
        Xv: np.ndarray,
        y_fit: np.ndarray,
        costs: Any,
        weight: np.ndarray | None = None,
    ):
        self.model = model
        self.weight = weight
        self.Xv, self.y = Xv, y_fit
        self.rows = np.arange(len(Xv))
        self.costs = model.spec_.cost_vector if costs is None else costs
        self.judged = model._oof_judge(y_fit)
        self.plan = fitted_plan(model)

    def state_losses(self, k: int) -> np.ndarray:
        """Judged loss of each row stopped at state ``k``."""
        outputs = self.plan.oof_outputs(self.model, k, self.rows)
        return np.asarray(self.judged(self.rows, outputs), dtype=float)

    def state_loss(self, k: int) -> float:
        """Mean judged loss of stopping every row at state ``k``."""
        return self.mean(self.state_losses(k))

    def mean(self, values: np.ndarray) -> float:
        """The rows' mean of ``values`` (weighted by ``weight``)."""
        return float(np.average(values, weights=self.weight))

    def policy(self) -> tuple[float, float]:
        """Mean judged loss and mean cost of the policies on the rows."""
        return self.plan.oof_policy(
            self.model, self.Xv, self.judged, self.costs, self.weight
        )

    def richest_state(self) -> int:
        """The state with the most sensors (all of them on a full DAG)."""
        dag = self.model.sensor_dag_
        sizes = [len(dag.sensors_in(k)) for k in range(dag.n_states)]
        return int(np.argmax(sizes))

    def best_first_sensor(self) -> tuple[str, float, float] | None:
        """The root's child of least judged loss: (its sensors, its mean
        loss, the standard error of its rows' paired gain over the root)."""
        dag = self.model.sensor_dag_
        kids = [child for _, child in dag.children[0]]
        if not kids:
            return None
        losses = {child: self.state_losses(child) for child in kids}
        best = min(losses, key=lambda k: losses[k].mean())
        gain = self.state_losses(0) - losses[best]
        se = float(gain.std(ddof=1) / np.sqrt(len(gain))) if len(gain) > 1 else 0.0
        return ", ".join(dag.state_names(best)), float(losses[best].mean()), se


class AutoScaleMixin:
    """The estimators' side of the search (``_fit_auto_scale``) and of the
    warning (``_warn_if_nothing_bought``): what a search reads of a fitted
    trial model."""

    def _fit_trial(self, X: Any, y: Any, **fit_kwargs: Any) -> Any:
        """One trial of the search: the fit at this clone's number."""
        return self._fit(X, y, **fit_kwargs)

    def _oof_judge(self, y_fit: np.ndarray) -> Any:
        """``judged(rows, outputs)``: the loss a test reports (0/1, the
        ``loss_matrix``'s, or the regressor's ``loss``)."""
        return self._sparse_stop_loss(self.bank_, y_fit, kind="zero_one")

    def _auto_margin(self, reference: float) -> float:
        """The error the rule tolerates above the reference (see the module)."""
        if hasattr(self, "classes_"):
            lm = self._check_loss_matrix(len(self.classes_))
            return AUTO_MARGIN * (1.0 if lm is None else float(np.max(lm)))
        return AUTO_RELATIVE_MARGIN * max(reference, 0.0)

    def _fit_auto_scale(self, X: Any, y: Any, **fit_kwargs: Any) -> Any:
        return fit_auto_scale(self, X, y, **fit_kwargs)

    def _warn_if_nothing_bought(self, X: Any, y: Any, sample_costs: Any) -> None:
        warn_if_nothing_bought(self, X, y, sample_costs)


def _first_scale(est: Any, y_fit: np.ndarray, costs: np.ndarray) -> float:
    """A scale from costs and the target's spread alone (it fits the bank):
    a tenth of the no-sensor loss per average all-sensor cost."""
    total = float(np.sum(costs, axis=-1).mean())
    if hasattr(est, "_check_loss_matrix"):  # a classifier: losses of at most 1
        spread = 1.0
    elif getattr(est, "loss", "squared") == "squared":
        spread = float(np.var(y_fit))
    else:
        spread = float(np.mean(np.abs(y_fit - np.median(y_fit))))
    return 0.1 * max(spread, 1e-12) / max(total, 1e-12)


class _Search:
    """Policies at trial scales on one bank, each measured out of fold."""

    def __init__(self, est: Any, X: Any, y: Any, fit_kwargs: dict) -> None:
        # The inputs are checked once (``fit_kwargs["data"]``, by the fit):
        # every trial fits on them.
        data = fit_kwargs["data"]
        self.est, self.X, self.y, self.kwargs = est, X, y, fit_kwargs
        self.Xv, self.y_fit, self.costs = data.Xv, data.y_fit, data.costs
        # The fit's weights weigh the rows' out-of-fold errors and costs too.
        self.weight = data.sample_weight
        self.mean_costs = data.acquisition_costs
        self.models: dict[float, Any] = {}
        self.points: list[dict[str, float]] = []
        self.oof: OutOfFold | None = None
        self.first: Any = None
        # The first trial reports its own stages (the bank, its policies);
        # each trial then counts as a step of "cost scale", of at most
        # AUTO_MAX_TRIALS (the others run without a callback).
        self.progress = fit_kwargs.get("progress")

    def at(self, scale: float) -> dict[str, float]:
        """Learn the policies at ``scale`` (the first call fits the bank) and
        measure them out of fold."""
        scale = float(scale)
        for point in self.points:
            if point["cost_scale"] == scale:
                return point
        model = clone(self.est).set_params(cost_scale=scale)
        model._fit_trial(self.X, self.y, **self.kwargs)
        if self.oof is None:  # the first fit made the bank: reuse it
            self.first = model
            reused = fitted_plan(model).reused_by_refits(model)
            self.kwargs = {**self.kwargs, **reused, "progress": None}
        self.oof = OutOfFold(model, self.Xv, self.y_fit, self.costs, self.weight)
        error, cost = self.oof.policy()
        self.models[scale] = model
        point = {"cost_scale": scale, "error": error, "avg_cost": cost}
        self.points.append(point)
        self.report(len(self.points))
        return point

    def report(self, done: int) -> None:
        """Progress ``("cost scale", done, AUTO_MAX_TRIALS)``."""
        if self.progress is not None:
            self.progress("cost scale", done, AUTO_MAX_TRIALS)

    @property
    def exhausted(self) -> bool:
        return len(self.points) >= AUTO_MAX_TRIALS


def fit_auto_scale(est: Any, X: Any, y: Any, **fit_kwargs: Any) -> Any:
    """Fit ``est`` (``cost_scale="auto"``) at the scale the module's rule
    keeps: its fitted attributes are those of the kept trial, with
    ``cost_scale_`` and ``cost_scale_search_`` (the rule, the reference, the
    margin, every scale tried and the reason in words)."""
    search = _Search(est, X, y, fit_kwargs)
    costs = search.mean_costs
    search.at(_first_scale(est, search.y_fit, costs))
    oof = search.oof
    richest = oof.richest_state()
    reference = oof.state_loss(richest)
    root = oof.state_loss(0)
    margin = oof.model._auto_margin(reference)
    best = lambda: least_error(reference, search.points)  # noqa: E731
    ok = lambda p: p["error"] <= best() + margin  # noqa: E731
    total = float(np.sum(costs, axis=-1).mean())
    gain = max(root - reference, margin) / max(total, 1e-12)
    passed, failed = _coarse(search, gain, ok)
    _refine(search, passed, failed, ok)
    kept = kept_point(search.points, best(), margin)
    search.report(AUTO_MAX_TRIALS)  # the search is over: fewer trials did
    model = search.models[kept["cost_scale"]]
    first = search.first
    if model is not first:
        fitted_plan(first).restore_choice(model, first)
    params = set(est.get_params(deep=False))
    for name, value in vars(model).items():
        if name not in params:
            setattr(est, name, value)
    est.cost_scale_search_ = {
        "rule": (
            "least out-of-fold average cost whose out-of-fold error is within "
            "the margin of the least error seen: the richest state's, or a "
            "policy's where that is less"
        ),
        "reference_state": list(oof.model.sensor_dag_.state_names(richest)),
        "reference_error": float(reference),
        "best_error": float(best()),
        "no_sensor_error": float(root),
        "margin": float(margin),
        "met": any(p["error"] <= reference + margin for p in search.points),
        "tried": [{k: float(v) for k, v in p.items()} for p in search.points],
        "reason": _reason(kept, reference, best(), margin, ok(kept)),
    }
    return est


def least_error(reference: float, points: list[dict[str, float]]) -> float:
    """The bar of the rule: the least out-of-fold error seen, the richest
    state's (``reference``) or a policy's where one errs less (more sensors
    can hurt: an any-subset bank on many noisy sensors).

    Examples
    --------
    >>> least_error(0.59, [{"error": 0.36}, {"error": 0.85}])
    0.36
    """
    return min([reference] + [p["error"] for p in points])


def kept_point(
    points: list[dict[str, float]], bar: float, margin: float
) -> dict[str, float]:
    """The point of least ``avg_cost`` whose ``error`` is within ``margin``
    of ``bar`` (ties: the higher ``cost_scale``); where none is (the bar is
    the richest state's, below every policy's), the point of least error
    (least cost among ties).

    Examples
    --------
    >>> points = [
    ...     {"cost_scale": 0.005, "error": 0.36, "avg_cost": 15.0},
    ...     {"cost_scale": 0.02, "error": 0.39, "avg_cost": 8.0},
    ...     {"cost_scale": 0.06, "error": 0.58, "avg_cost": 4.0},
    ... ]
    >>> kept_point(points, least_error(0.59, points), 0.01)["cost_scale"]
    0.005
    >>> kept_point(points, least_error(0.30, points), 0.01)["cost_scale"]
    0.005
    """
    meeting = [p for p in points if p["error"] <= bar + margin]
    if not meeting:
        return min(points, key=lambda p: (p["error"], p["avg_cost"]))
    return min(meeting, key=lambda p: (p["avg_cost"], -p["cost_scale"]))


def _coarse(search: _Search, gain: float, ok: Any) -> tuple[float | None, float | None]:
    """Steps of ``AUTO_STEP`` from ``gain``: up while the error stays within
    the margin and something is bought, else down until it does. Returns
    (the passing scale of least cost found, the failing scale next to it)."""
    point = search.at(gain)
    if ok(point):
        scale = gain
        while point["avg_cost"] > 0 and not search.exhausted:
            up = search.at(scale * AUTO_STEP)
            if not ok(up):
                return scale, scale * AUTO_STEP
            scale, point = scale * AUTO_STEP, up
        return scale, None
    scale = gain
    while not search.exhausted:
        scale /= AUTO_STEP
        if ok(search.at(scale)):
            return scale, scale * AUTO_STEP
    return None, None


def _refine(search: _Search, passed: float | None, failed: float | None, ok) -> None:
    """Bisect (log axis) between a failing and a passing scale."""
    if passed is None or failed is None:
        return
    for _ in range(AUTO_REFINE):
        if search.exhausted:
            return
        mid = math.sqrt(passed * failed)
        if ok(search.at(mid)):
            passed = mid
        else:
            failed = mid


def _reason(kept: dict, reference: float, best: float, margin: float, met: bool) -> str:
    scale, error, cost = kept["cost_scale"], kept["error"], kept["avg_cost"]
    if not met:
        return (
            f"cost_scale={scale:.4g}: no scale tried came within {margin:.4g} of "
            f"the richest state's out-of-fold error ({reference:.4g}); kept the "
            f"least error ({error:.4g}, average cost {cost:.4g})"
        )
    if best < reference:
        bar = (
            f"the least error seen ({best:.4g}, a policy's; the richest state "
            f"errs {reference:.4g})"
        )
    else:
        bar = f"the richest state's ({reference:.4g})"
    return (
        f"cost_scale={scale:.4g}: the least average cost ({cost:.4g}) whose "
        f"out-of-fold error ({error:.4g}) is within {margin:.4g} of {bar}"
    )


def warn_if_nothing_bought(model: Any, X: Any, y: Any, sample_costs: Any) -> None:
    """:class:`NothingBoughtWarning` when ``model``'s policies buy nothing on
    its training rows while a first sensor lowers the out-of-fold error by
    more than the auto rule's margin and two standard errors of the rows'
    paired gain."""
    search = getattr(model, "cost_scale_search_", None)
    if search is not None and search["tried"]:
        kept = [p for p in search["tried"] if p["cost_scale"] == model.cost_scale_]
        if kept and kept[0]["avg_cost"] > 0:
            return
    if _root_buys(model):
        return
    same_folds = getattr(model, "cv_", model.cv) == model.cv
    checker = model if same_folds else clone(model).set_params(cv=model.cv_)
    spec, Xv, y_fit, _ = checker.check_fit_data(X, y)
    oof = OutOfFold(model, Xv, y_fit, check_sample_costs(sample_costs, spec, len(Xv)))
    if oof.policy()[1] > 0:
        return
    best = oof.best_first_sensor()
    root = oof.state_loss(0)
    # A gain the noise explains (two standard errors) is no reason to warn.
    if best is None or root - best[1] <= max(model._auto_margin(root), 2 * best[2]):
        return
    warnings.warn(
        f"The fitted policy buys no sensor at cost_scale={model.cost_scale_:g}, "
        f"although {best[0]!r} lowers the out-of-fold error from {root:.4g} to "
        f"{best[1]:.4g}: every sensor costs more than it saves at this scale. "
        "Lower cost_scale, or use cost_scale='auto' (chosen on the training "
        "rows' out-of-fold predictions).",
        NothingBoughtWarning,
        stacklevel=4,
    )


def _root_buys(model: Any) -> bool:
    """Whether the root's policy is a fixed move to a child (then something
    is bought; a learner is judged on the rows)."""
    policy = model.policies_[0]
    learner = getattr(policy, "learner", None)
    action = getattr(learner, "action", None)
    return action is not None and int(action) != 0
