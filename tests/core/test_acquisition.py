"""Acquisition pictures from traces, and the candidates' scores along a path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

from budgetdag_core import BudgetDAGClassifier, SensorSpec, path_of, toy_dataset
from budgetdag_core.datasets import digits_dataset
from budgetdag_core.plotting import (
    acquisition_frequency,
    acquisition_grid_figure,
    acquisition_heatmap_figure,
    acquisition_paths_figure,
    acquisition_steps_figure,
    sensor_cells,
)

GRID = np.array([[f"r{r}c{c}" for c in range(3)] for r in range(2)], dtype=object)
GROUPS = {name: [name] for name in GRID.ravel()}


def _trace(*paths: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({"acquired": list(paths)})


def test_the_grid_numbers_the_bought_cells_in_order():
    values = {name: float(i) for i, name in enumerate(GRID.ravel())}
    fig = acquisition_grid_figure(values, ["r1c2", "r0c0", "ctx"], GRID, GROUPS)
    order = next(t for t in fig.data if t.name == "order")
    assert list(order.text) == ["1", "2"]
    assert (order.x[0], order.y[0]) == (2, 1) and (order.x[1], order.y[1]) == (0, 0)
    heat = next(t for t in fig.data if t.name == "values")
    assert heat.z[1][2] == 5.0 and heat.z[0][1] == 1.0
    # A sensor without a cell is named in a note, with its step.
    assert "3: ctx" in fig.layout.annotations[0].text


def test_a_block_sensor_is_numbered_once_at_its_centre_and_steps_share_numbers():
    groups = {"top": ["r0c0", "r0c1", "r0c2"], "a": ["r1c0"], "b": ["r1c1"]}
    fig = acquisition_grid_figure({}, ["top", ("a", "b")], GRID, groups)
    order = next(t for t in fig.data if t.name == "order")
    assert list(order.text) == ["1", "2", "2"]
    assert (order.x[0], order.y[0]) == (1.0, 0.0)


def test_heatmap_says_how_often_and_how_early_each_cell_is_bought():
    trace = _trace(("r0c1", "r0c0"), ("r0c1",), ())
    fig = acquisition_heatmap_figure(trace, GRID, GROUPS)
    often, early = fig.data
    assert often.z[0][1] == pytest.approx(2 / 3) and often.z[0][0] == pytest.approx(
        1 / 3
    )
    assert often.z[1][0] == 0.0 and np.isnan(early.z[1][0])
    assert early.z[0][1] == 1.0 and early.z[0][0] == 2.0


def test_frequency_counts_each_sensor():
    table = acquisition_frequency(_trace(("a", "b"), ("b",)), ["a", "b", "c"])
    assert table["n"].tolist() == [1, 2, 0]
    assert table["mean_step"].tolist()[:2] == [1.0, 1.5]


def test_the_step_chart_merges_rare_sensors_and_late_steps():
    names = [f"s{i}" for i in range(64)]
    rng = np.random.default_rng(0)
    paths = [
        tuple(rng.choice(names, size=rng.integers(0, 20), replace=False))
        for _ in range(200)
    ]
    fig = acquisition_steps_figure(_trace(*paths), names, max_sensors=30, max_steps=10)
    heat = fig.data[0]
    assert list(heat.y[-2:]) == ["other", "stop"] and len(heat.y) == 32
    assert list(heat.x)[-1] == "10+" and len(heat.x) == 10
    # Each step column is a distribution: sensors bought then plus stops (the
    # last column also holds the later steps).
    z = np.nan_to_num(np.asarray(heat.z, dtype=float))
    assert z[:, 0].sum() == pytest.approx(1.0)
    assert fig.layout.height >= 32 * 16


def test_the_paths_sankey_keeps_the_common_first_steps():
    trace = _trace(("a", "b"), ("a", "c"), ("a",), ("d",), ("e",), ())
    fig = acquisition_paths_figure(trace, depth=2, max_per_step=2)
    sankey = fig.data[0]
    labels = list(sankey.node.label)
    assert "1: a" in labels and "1: other" in labels and "1: stop" in labels
    a = labels.index("1: a")
    out_of_a = sum(v for s, v in zip(sankey.link.source, sankey.link.value) if s == a)
    assert out_of_a == 3  # b, c and a stop after one sensor


def test_sensor_cells_rejects_a_flat_grid():
    with pytest.raises(ValueError, match="2-D"):
        sensor_cells({"a": ["a"]}, ["a", "b"])


def test_digits_trace_draws_on_its_grid():
    demo = digits_dataset()
    grid = np.array(demo.spec.columns, dtype=object).reshape(8, 8)
    assert sensor_cells(demo.spec.groups, grid)["r2c5"] == [(2, 5)]
    trace = _trace(("r3c4", "r0c0"))
    fig = acquisition_heatmap_figure(trace, grid, demo.spec.groups)
    assert fig.data[0].z[3][4] == 1.0


@pytest.mark.parametrize("learner", ["filter_tree", "cost_regression"])
def test_path_of_records_the_candidates_scores_at_each_step(learner):
    demo = toy_dataset(300, 20)
    model = BudgetDAGClassifier(
        demo.spec, cost_scale=0.03, cv=3, random_state=0, policy_learner=learner
    ).fit(demo.X_train, demo.y_train)
    for i in range(5):
        result = path_of(model, demo.X_test.iloc[i])
        assert len(result.scores) == len(result.decisions)
        for scores, (_, row) in zip(result.scores, result.decisions.iterrows()):
            assert scores.index[0] == "stop" and len(scores) >= 1
            chosen = (
                "stop"
                if row["action"] == "stop"
                else "acquire " + ", ".join(row["acquired"])
            )
            best = scores.idxmin() if "lower is better" in scores.name else None
            if best is not None:
                assert best == chosen
            else:
                assert scores.sum() == pytest.approx(1.0)
                assert scores[chosen] > 0  # the winner won each of its matches


def test_a_session_without_scores_gives_none():
    spec = SensorSpec({"a": ["a"]}, {"a": 1.0})
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60)})
    y = (X["a"] > 0).astype(int)

    class Blind(BaseEstimator):
        def fit(self, Z, C):
            self.n_ = C.shape[1]
            return self

        def predict(self, Z):
            return np.zeros(len(Z), dtype=int)

    model = BudgetDAGClassifier(spec, cv=2, policy_learner=Blind()).fit(X, y)
    result = path_of(model, X.iloc[0])
    assert result.scores == [None]


def test_steps_that_buy_several_sensors_count_once():
    trace = _trace((("r0c0", "r0c1"), "r1c1"), (("r0c0", "r0c1"),))
    freq = acquisition_frequency(trace, ["r0c0", "r0c1", "r1c1"])
    assert freq["mean_step"].tolist() == [1.0, 1.0, 2.0]
    steps = acquisition_steps_figure(trace, ["r0c0", "r0c1", "r1c1"]).data[0]
    assert list(steps.x) == ["1", "2", "3"] and steps.z[0][0] == 1.0
    sankey = acquisition_paths_figure(trace, depth=2).data[0]
    assert "1: r0c0 +1" in list(sankey.node.label)


@pytest.mark.parametrize("title", [None, "What the policy buys"])
def test_titles_sit_below_plotlys_tool_bar(title):
    """The mode bar (tool bar) covers a figure's top 30 px on hover: titles
    and subplot titles start under it."""
    from budgetdag_core.plotting._style import MODEBAR_PX

    trace = _trace(("r0c1", "r0c0"), ("r0c1",), ())
    for fig in (
        acquisition_heatmap_figure(trace, GRID, GROUPS, title=title),
        acquisition_paths_figure(trace, depth=2, title=title),
        acquisition_steps_figure(trace, list(GROUPS), title=title),
    ):
        top = fig.layout.margin.t
        # Subplot titles sit on the plot area's top edge, one line high.
        assert top - 20 * bool(fig.layout.annotations) >= MODEBAR_PX
        if title:
            assert fig.layout.title.text == title
            assert fig.layout.title.yref == "container"
            assert fig.layout.title.pad.t >= MODEBAR_PX
            assert top >= MODEBAR_PX + 40  # the title's line, then the plot
