"""The Trade-off page's data: the cost-error sweep and models picked from it.

No Streamlit here. The sweep (``budgetdag_core.tradeoff_curve``) learns the
policies of many cost scales on one classifier bank; :func:`sweep_key` names
everything it depends on so the page can keep it in the session and reuse it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits

from budgetdag_core import Dataset, Progress, SensorSpec, TradeoffResult, tradeoff_curve
from budgetdag_core.tradeoff import DominanceSummary, baseline_points

from .training import (
    TrainedRun,
    bank_key,
    estimator_params,
    evaluate,
    model_params,
    reusable_bank,
)

METHOD_NAMES = {
    "dag": "DAG policy",
    "fixed": "fixed subset",
    "hull": "fixed-subset hull",
    "hull_oof": "fixed-subset hull (subsets chosen on training rows)",
    "no_sensors": "no sensor",
    "all_sensors": "all sensors",
    "oracle": "oracle bound",
    "cascade": "confidence cascade",
}


def sweep_key(
    dataset: Dataset, spec: SensorSpec, params: Mapping[str, Any], n_points: int
) -> tuple:
    """Everything a sweep depends on (not the cost scale: the sweep spans it).

    ``params`` are the current model's (``run.params``): a sweep re-runs that
    model, bank kind, policy features and loss matrix included.
    """
    rest = sorted(
        (name, repr(value))
        for name, value in estimator_params(params).items()
        if name != "n_jobs"
    )
    return (*bank_key(dataset, spec, params), tuple(rest), int(n_points))


def compute_sweep(
    dataset: Dataset,
    spec: SensorSpec,
    params: Mapping[str, Any],
    n_points: int,
    previous: TrainedRun | None = None,
    progress: Progress | None = None,
) -> TradeoffResult:
    """The trade-off curve on the train and test splits, with every baseline.

    ``params`` are the estimator parameters of the model to sweep (its
    ``run.params``); reuses ``previous``'s classifier bank when it was fitted
    with the same data and parameters (then only the policies are learned).
    """
    bank = reusable_bank(previous, dataset, spec, params)
    # The current model's own scale is traced too: it is a point of its curve.
    own = [] if previous is None else [float(previous.model.cost_scale_)]
    with threadpool_limits(limits=1):  # see ui.training.train
        return tradeoff_curve(
            dataset.X("train", spec),
            dataset.y("train"),
            spec,
            n_points=int(n_points),
            include_scales=own,
            X_test=dataset.X("test", spec),
            y_test=dataset.y("test"),
            bank=bank,
            progress=progress,
            # The model's own, so its bank and subsets are reused (fit checks
            # that the bank's DAG matches).
            **estimator_params(params),
        )


def run_from_sweep(result: TradeoffResult, point: int, dataset: Dataset) -> TrainedRun:
    """The sweep's model number ``point`` (``result.models[point]``) as the
    app's current run (:func:`curve_point` finds it again)."""
    model = result.models[int(point)]
    metrics, states = evaluate(model, dataset)
    return TrainedRun(
        model,
        dataset.token,
        "trade-off curve",
        bank_key=bank_key(dataset, model.spec_, model_params(model)),
        metrics=metrics,
        states=states,
        note=f"Picked on the trade-off curve (cost scale {model.cost_scale_:.3g}).",
    )


def curve_point(run: TrainedRun, result: TradeoffResult | None) -> int | None:
    """The index of the run's model on the curve ``result``, or None."""
    if result is None:
        return None
    # By identity: a run picked on the curve holds the sweep's model object.
    same = next((i for i, m in enumerate(result.models) if m is run.model), None)
    if same is not None or run.bank_key is None:
        return same
    # A run trained on the whole training split with the sweep's parameters
    # (the page keys sweeps by them) is the sweep's model of its scale: fits
    # are deterministic. Not a model fitted for a budget (bank_key None): it
    # saw part of the rows only.
    scales = [float(m.cost_scale_) for m in result.models]
    scale = float(run.model.cost_scale_)
    return scales.index(scale) if scale in scales else None


def policy_point(run: TrainedRun, method: str, index: Any = None) -> pd.DataFrame:
    """The current model's test point as one row of a trade-off frame
    (``method`` "dag" before a sweep, "this model" off the curve)."""
    metrics = run.metrics or {}
    return pd.DataFrame(
        [
            {
                "method": method,
                "split": "test",
                "cost_scale": float(run.model.cost_scale_),
                "avg_cost": metrics.get("avg_cost"),
                "avg_sensors": metrics.get("avg_sensors"),
                "error": metrics.get("error"),
                "state": pd.NA,
                "sensors": None,
            }
        ],
        index=None if index is None else [index],
    )


def current_frame(run: TrainedRun, dataset: Dataset) -> pd.DataFrame:
    """Before a sweep: the current policy and every baseline, on the test split."""
    X, y = dataset.X("test", run.spec), dataset.y("test")
    base = baseline_points(run.model, X, y, split="test")
    frame = pd.concat([policy_point(run, "dag"), base], ignore_index=True)
    frame["state"] = frame["state"].astype("Int64")
    return frame


CURRENT = "current"  # row label of the current model when it is not on the curve


def figure_frame(frame: pd.DataFrame, run: TrainedRun, rows: list[Any]) -> pd.DataFrame:
    """The rows to draw: without the no-sensor row (the empty fixed subset is
    the same point), plus the current model's test point when it is not on the
    curve (``rows``, its DAG rows, is empty: e.g. a model fitted for a budget)."""
    drawn = frame[frame["method"] != "no_sensors"]
    if rows or run.metrics is None:
        return drawn
    return pd.concat([drawn, policy_point(run, "this model", CURRENT)])


def current_rows(
    frame: pd.DataFrame, run: TrainedRun, result: TradeoffResult | None
) -> list[Any]:
    """Labels of the current model's rows in ``frame``: its DAG rows when it is
    a point of the curve ``result``, else the frame's current-model rows (the
    DAG row of the frame before a sweep, or :func:`figure_frame`'s extra
    point)."""
    point = curve_point(run, result)
    if point is not None:
        return result.model_rows(point)
    if CURRENT in frame.index:
        return [CURRENT]
    if result is None:  # before a sweep, the frame's DAG row is the current model
        return list(frame.index[frame["method"] == "dag"])
    return []


def _points(gap: float) -> str:
    """A difference of two error rates, as the Train page says it: in points
    (9.7% against 9.4% is 0.3 points, not 0.3%)."""
    n = abs(100 * gap)
    if round(n, 1) == 0:
        return "less than 0.1 error points"
    return f"{n:.1f} error point{'' if round(n, 1) == 1 else 's'}"


def summary_words(summary: DominanceSummary) -> str:
    """One split's :class:`~budgetdag_core.tradeoff.DominanceSummary` in plain
    percentages: error points and shares of the all-sensor cost."""
    lo, hi = summary.cost_range
    if math.isfinite(summary.mean_gap):
        side = "below" if summary.mean_gap >= 0 else "above"
        text = (
            f"Between average costs {lo:.3g} and {hi:.3g}, the DAG curve lies "
            f"{_points(summary.mean_gap)} {side} the best mix of fixed sensor "
            "subsets on average (in error)."
        )
    else:
        text = "The DAG curve and the fixed-subset hull share no cost range."
    target = (
        f"the all-sensor error ({summary.all_sensor_error:.1%}, give or take "
        f"{_points(summary.tolerance)})"
    )
    reach = {
        "the DAG": summary.dag_cost_fraction,
        "fixed subsets": summary.hull_cost_fraction,
    }
    if summary.has_cascade:
        reach["the confidence cascade"] = summary.cascade_cost_fraction
    parts = [
        f"{who} needs {share:.0%} of the all-sensor cost"
        if math.isfinite(share)
        else f"{who} never gets there"
        for who, share in reach.items()
    ]
    text += f" To reach {target}: " + "; ".join(parts) + "."
    if summary.has_cascade and math.isfinite(summary.cascade_mean_gap):
        side = "below" if summary.cascade_mean_gap >= 0 else "above"
        text += (
            " Against the confidence cascade, the DAG curve lies "
            f"{_points(summary.cascade_mean_gap)} {side} it on average."
        )
    return text


def table(frame: pd.DataFrame, split: str) -> pd.DataFrame:
    """The frame's rows of one split, in words, for a table."""
    part = frame[frame["split"] == split]
    return pd.DataFrame(
        {
            "method": part["method"].map(METHOD_NAMES).fillna(part["method"]),
            "sensors": [
                ", ".join(s) if isinstance(s, tuple | list) else ""
                for s in part["sensors"]
            ],
            "cost scale": part["cost_scale"],
            "avg cost": part["avg_cost"],
            "avg sensors": part["avg_sensors"],
            "error": part["error"],
        }
    )
