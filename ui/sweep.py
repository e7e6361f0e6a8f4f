"""The Trade-off page's data: the cost-error sweep and models picked from it.

No Streamlit here. The sweep (``budgetdag_core.tradeoff_curve``) learns the
policies of many cost scales on one classifier bank; :func:`sweep_key` names
everything it depends on so the page can keep it in the session and reuse it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from budgetdag_core import Dataset, Progress, SensorSpec, TradeoffResult, tradeoff_curve
from budgetdag_core.tradeoff import (
    FRAME_COLUMNS,
    DominanceSummary,
    baseline_points,
    fit_spread_cascade,
    regression_baseline_frame,
    regression_cascade_points,
    regression_view,
    train_chosen_hull,
)

from .training import (
    TrainedRun,
    bank_key,
    estimator_params,
    evaluate,
    evaluated_states,
    make_model,
    model_params,
    params_task,
    reusable_bank,
    scoring_of,
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
#: A regressor's cascade stops on the error expected from its prediction.
REGRESSION_CASCADE = "expected-error cascade"


def method_name(method: str, regression: bool = False) -> str:
    """A frame's method in words (a regressor's cascade named as such)."""
    if regression and method == "cascade":
        return REGRESSION_CASCADE
    return METHOD_NAMES.get(method, method)


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


@dataclass(frozen=True)
class SweepSetup:
    """What every sweep starts from: the splits, the bank it reuses (the
    previous run's when it was fitted on the same data and parameters) and
    the previous model's own cost scale (traced too: a point of its curve)."""

    X: pd.DataFrame
    y: pd.Series
    X_test: pd.DataFrame
    y_test: pd.Series
    bank: Any
    own: float | None

    @classmethod
    def of(
        cls,
        dataset: Dataset,
        spec: SensorSpec,
        params: Mapping[str, Any],
        previous: TrainedRun | None,
    ) -> SweepSetup:
        return cls(
            dataset.X("train", spec),
            dataset.y("train"),
            dataset.X("test", spec),
            dataset.y("test"),
            reusable_bank(previous, dataset, spec, params),
            None if previous is None else float(previous.model.cost_scale_),
        )


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
    setup = SweepSetup.of(dataset, spec, params, previous)
    if params_task(params) == "regression":
        return regression_sweep(setup, spec, params, n_points, progress)
    with threadpool_limits(limits=1):  # see ui.training.train
        return tradeoff_curve(
            setup.X,
            setup.y,
            spec,
            n_points=int(n_points),
            include_scales=[] if setup.own is None else [setup.own],
            X_test=setup.X_test,
            y_test=setup.y_test,
            bank=setup.bank,
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
    if run.task == "regression":  # the states of the run's evaluation
        chosen = evaluated_states(run.model, X)
        view = regression_view(run.model, X, y, states=chosen, split="test")
        base = regression_baseline_frame(view)
    else:
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


def table(frame: pd.DataFrame, split: str, regression: bool = False) -> pd.DataFrame:
    """The frame's rows of one split, in words, for a table."""
    part = frame[frame["split"] == split]
    return pd.DataFrame(
        {
            "method": [method_name(m, regression) for m in part["method"]],
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


# ------------------------------------------------------------- regression
# ``tradeoff_curve`` is written for classifiers. A regressor's curve is
# traced here on the same terms: its policies learned at several cost scales
# on one regressor bank, each evaluated on the test rows and, out of fold, on
# the training rows, next to the library's regression baselines
# (``budgetdag_core.tradeoff._regression``): every fixed sensor subset and
# their lower convex hull (as picked on each split, and as picked on the
# training rows: ``hull_oof``), no sensor, all sensors, the oracle bound and
# the spread cascade (stop once the expected loss of stopping is small).


def regression_scales(
    y: pd.Series, spec: SensorSpec, n_points: int, own: float | None
) -> list[float]:
    """``n_points`` cost scales for a regressor's curve (and ``own``): 0, and
    a geometric grid from where every sensor is worth 1% of the target's
    variance (the mean predictor's squared error) to where the cheapest
    sensor costs twice that variance (nothing is bought)."""
    unit = float(y.astype(float).var()) or 1.0
    costs = np.asarray(spec.cost_vector, dtype=float)
    positive = costs[costs > 0]
    if positive.size == 0:
        raise ValueError(
            "Every sensor costs 0: acquiring is free at every cost scale, so "
            "there is no trade-off to trace. Give the sensors costs."
        )
    low, high = 0.01 * unit / costs.sum(), 2.0 * unit / positive.min()
    grid = np.geomspace(low, high, max(int(n_points) - 1, 1))
    scales = {0.0, *(float(f"{v:.3g}") for v in grid)}
    if own is not None:
        scales.add(float(own))
    return sorted(scales)


def _row(method: str, split: str, **values: Any) -> dict[str, Any]:
    base = dict.fromkeys(("cost_scale", "threshold", "loss"), np.nan)
    return {
        "method": method,
        "split": split,
        "state": pd.NA,
        "sensors": None,
        **base,
        **values,
    }


def _train_view(model: Any, X: pd.DataFrame, y: pd.Series) -> Any:
    """The bank's out-of-fold view of every state on the training rows (an
    any-subset bank's fold models at each grown state's sensors, as the
    classifier's sweep reads them)."""
    return regression_view(model, X, y, out_of_fold=True)


def _dag_rows(models: list, setup: SweepSetup, train: Any, key: str) -> tuple:
    """Each model's test point and its out-of-fold training point (``train``:
    the bank's out-of-fold view); and the index of the model of each row."""
    rows: list[dict[str, Any]] = []
    row_models: dict[int, int] = {}
    for i, model in enumerate(models):
        metrics = model.evaluate(setup.X_test, setup.y_test)
        row_models[len(rows)] = i
        rows.append(
            _row(
                "dag",
                "test",
                cost_scale=float(model.cost_scale),
                avg_cost=metrics["avg_cost"],
                avg_sensors=metrics["avg_sensors"],
                error=metrics[key],
                loss=metrics["avg_loss"],
            )
        )
        trace = model.trace(setup.X)
        stop = trace["stop_state"].to_numpy(dtype=int)
        error = float(train.loss[np.arange(len(stop)), stop].mean())
        row_models[len(rows)] = i
        rows.append(
            _row(
                "dag",
                "train",
                cost_scale=float(model.cost_scale),
                avg_cost=float(trace["cost"].mean()),
                avg_sensors=float(trace["n_sensors"].mean()),
                error=error,
                loss=error,
            )
        )
    return rows, row_models


def regression_sweep(
    setup: SweepSetup,
    spec: SensorSpec,
    params: Mapping[str, Any],
    n_points: int,
    progress: Progress | None = None,
) -> TradeoffResult:
    """A regressor's trade-off curve (see the comment above) as a
    :class:`~budgetdag_core.TradeoffResult`: its ``error`` column holds the
    model's loss (MSE or MAE, :func:`ui.training.scoring_of`); no dominance
    summary."""
    bank = setup.bank
    scales = regression_scales(setup.y, spec, n_points, setup.own)
    models = []
    with threadpool_limits(limits=1):  # see ui.training.train
        for i, scale in enumerate(scales):
            model = make_model(spec, {**params, "cost_scale": scale})
            model.fit(
                setup.X, setup.y, bank=bank, progress=progress if bank is None else None
            )
            # Every strategy's DAG, where a many-sensor fit built several:
            # each scale chooses among them as the first did.
            bank = model.strategy_banks_ or model.bank_
            models.append(model)
            if progress is not None:
                progress("sweep", i + 1, len(scales))
    first = models[0]
    train = _train_view(first, setup.X, setup.y)
    rows, row_models = _dag_rows(models, setup, train, scoring_of(first).key)
    chosen = evaluated_states(first, setup.X_test)
    test = regression_view(first, setup.X_test, setup.y_test, states=chosen)
    cascade = fit_spread_cascade(first, train)
    parts = [
        pd.DataFrame(rows),
        regression_baseline_frame(test),
        regression_baseline_frame(train),
        cascade.train_points,
        regression_cascade_points(first, cascade, setup.X_test, setup.y_test),
    ]
    frame = pd.concat(parts, ignore_index=True)
    frame = pd.concat([frame, train_chosen_hull(frame)], ignore_index=True)
    frame["state"] = frame["state"].astype("Int64")
    return TradeoffResult(
        frame=frame[FRAME_COLUMNS],
        cost_scales=np.asarray([float(m.cost_scale) for m in models]),
        models=models,
        bank=bank,
        row_models=row_models,
    )


def loss_axis(fig: Any, frame: pd.DataFrame, scoring: Any) -> Any:
    """A trade-off figure of a regressor: its y axis and hover boxes say the
    loss (``scoring``: MSE or MAE, as a number) where the library's figure
    says an error rate."""
    fig.update_yaxes(title_text=scoring.long, tickformat="~s")
    cascade = METHOD_NAMES["cascade"]
    for trace in fig.data:
        for part in ("name", "legendgroup"):
            if cascade in (trace[part] or ""):
                trace[part] = trace[part].replace(cascade, REGRESSION_CASCADE)
        if trace.hovertext is None or trace.customdata is None:
            continue
        hover = []
        for text, row in zip(trace.hovertext, trace.customdata, strict=True):
            lines = str(text).split("<br>")
            if lines and lines[-1].startswith("error: ") and row[0] in frame.index:
                value = frame.loc[row[0], "error"]
                lines[-1] = f"{scoring.name}: {scoring.fmt(float(value))}"
            lines = [line.replace(cascade, REGRESSION_CASCADE) for line in lines]
            hover.append("<br>".join(lines))
        trace.hovertext = hover
    return fig
