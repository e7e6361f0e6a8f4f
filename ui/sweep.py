"""The Trade-off page's data: the cost-error sweep and models picked from it.

No Streamlit here. The sweep (``budgetdag_core.tradeoff_curve``) learns the
policies of many cost scales on one classifier bank; :func:`sweep_key` names
everything it depends on so the page can keep it in the session and reuse it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits

from budgetdag_core import SensorSpec, TradeoffResult, tradeoff_curve
from budgetdag_core.baselines import baseline_points

from .data import Dataset
from .training import (
    TrainedRun,
    TrainSettings,
    bank_key,
    estimator_params,
    evaluate,
    reusable_bank,
)

METHOD_NAMES = {
    "dag": "DAG policy",
    "fixed": "fixed subset",
    "hull": "fixed-subset hull",
    "no_sensors": "no sensor",
    "all_sensors": "all sensors",
    "oracle": "oracle bound",
    "cascade": "confidence cascade",
}


def sweep_settings(run: TrainedRun | None, fallback: TrainSettings) -> TrainSettings:
    """The current model's settings (a sweep varies only the cost scale)."""
    settings = run.settings if run is not None else None
    if settings is None or "custom" in (settings.classifier, settings.policy_learner):
        settings = fallback
    return replace(settings, target_budget=None)


def sweep_key(
    dataset: Dataset, spec: SensorSpec, settings: TrainSettings, n_points: int
) -> tuple:
    """Everything a sweep depends on (not the cost scale: the sweep spans it)."""
    return (
        *bank_key(dataset, spec, settings),
        settings.policy_learner,
        settings.policy_degree,
        int(n_points),
    )


def compute_sweep(
    dataset: Dataset,
    spec: SensorSpec,
    settings: TrainSettings,
    n_points: int,
    previous: TrainedRun | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> TradeoffResult:
    """The trade-off curve on the train and test splits, with every baseline.

    Reuses ``previous``'s classifier bank when it was fitted with the same data
    and settings (then only the policies are learned).
    """
    bank = reusable_bank(previous, dataset, spec, settings)
    with threadpool_limits(limits=1):  # see ui.training.train
        return tradeoff_curve(
            dataset.X("train", spec),
            dataset.y("train"),
            spec,
            n_points=int(n_points),
            X_test=dataset.X("test", spec),
            y_test=dataset.y("test"),
            bank=bank,
            progress=progress,
            # As make_model's, so the bank and its subsets are reused (fit
            # checks that the bank's DAG matches).
            **estimator_params(settings),
        )


def run_from_sweep(
    result: TradeoffResult,
    cost_scale: float,
    dataset: Dataset,
    settings: TrainSettings,
) -> TrainedRun:
    """The sweep's model at ``cost_scale`` as the app's current run."""
    model = result.model_at(cost_scale)
    chosen = replace(settings, cost_scale=float(model.cost_scale), target_budget=None)
    metrics, states = evaluate(model, dataset)
    return TrainedRun(
        model,
        dataset.token,
        "trade-off curve",
        settings=chosen,
        bank_key=bank_key(dataset, model.spec_, chosen),
        metrics=metrics,
        states=states,
        note=f"Picked on the trade-off curve (cost scale {model.cost_scale:.3g}).",
    )


def current_frame(run: TrainedRun, dataset: Dataset) -> pd.DataFrame:
    """Before a sweep: the current policy and every baseline, on the test split."""
    X, y = dataset.X("test", run.spec), dataset.y("test")
    base = baseline_points(run.model, X, y, split="test")
    metrics = run.metrics or {}
    cost_scale = run.settings.cost_scale if run.settings is not None else float("nan")
    policy = pd.DataFrame(
        [
            {
                "method": "dag",
                "split": "test",
                "cost_scale": cost_scale,
                "avg_cost": metrics.get("avg_cost"),
                "avg_sensors": metrics.get("avg_sensors"),
                "error": metrics.get("error"),
                "state": pd.NA,
                "sensors": None,
            }
        ]
    )
    frame = pd.concat([policy, base], ignore_index=True)
    frame["state"] = frame["state"].astype("Int64")
    return frame


CURRENT = "current"  # row label of the current model when it is not on the curve


def figure_frame(
    frame: pd.DataFrame, run: TrainedRun, cost_scale: float | None
) -> pd.DataFrame:
    """The rows to draw: without the no-sensor row (the empty fixed subset is
    the same point), plus the current model's test point when the curve does
    not pass through it (e.g. a model fitted for a budget)."""
    drawn = frame[frame["method"] != "no_sensors"]
    on_curve = [label for label in current_rows(drawn, cost_scale) if label != CURRENT]
    if on_curve or run.metrics is None:
        return drawn
    point = pd.DataFrame(
        [
            {
                "method": "this model",
                "split": "test",
                "cost_scale": cost_scale,
                "avg_cost": run.metrics["avg_cost"],
                "avg_sensors": run.metrics["avg_sensors"],
                "error": run.metrics["error"],
                "state": pd.NA,
                "sensors": None,
            }
        ],
        index=[CURRENT],
    )
    return pd.concat([drawn, point])


def current_rows(frame: pd.DataFrame, cost_scale: float | None) -> list[Any]:
    """Labels of the rows of the current model: DAG rows at ``cost_scale``, or
    the extra point of :func:`figure_frame`."""
    if CURRENT in frame.index:
        return [CURRENT]
    if cost_scale is None:
        return []
    dag = frame[frame["method"] == "dag"]
    close = (dag["cost_scale"] - cost_scale).abs() <= 1e-9 * max(1.0, cost_scale)
    return list(dag.index[close.fillna(False)])


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
