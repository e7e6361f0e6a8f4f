"""What the Teaching page draws at a step: pending nodes and the rows arriving."""

from __future__ import annotations

import numpy as np
import pytest

from budgetdag_core import BudgetDAGClassifier, toy_dataset
from budgetdag_core.plotting import dag_figure
from budgetdag_core.teaching import graph_reduce_steps, pending_states


@pytest.fixture(scope="module")
def walk():
    demo = toy_dataset(300, 50)
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    model.fit(demo.X_train, demo.y_train)
    steps = graph_reduce_steps(model, demo.X_train, demo.y_train, rows=4)
    return model, demo, steps


def test_the_rows_arriving_are_those_the_policy_routes_there(walk):
    model, demo, steps = walk
    path = model.route(demo.X_train).path
    for step in steps:
        arriving = int((path == step.state).any(axis=1).sum())
        assert step.arrived == arriving
        assert len(step.arrivals) == min(4, arriving)
        summary = step.action_summary
        assert summary["picked"].sum() == arriving == summary["cheapest"].sum()
        assert list(summary["picked"]) == sorted(summary["picked"], reverse=True)
        if len(step.arrivals):
            row = step.arrivals.iloc[0]
            assert row["cheapest_cost"] <= row["picked_cost"] + 1e-12
            assert row["cheapest_cost"] <= row["stop"] + 1e-12
            assert set(step.arrivals["picked"]) <= set(step.actions)
    assert steps[-1].arrived == len(demo.X_train)  # every row reaches the root


def test_pending_nodes_are_grey_and_carry_no_flow(walk):
    model, demo, steps = walk
    pending = pending_states(steps, 3)
    assert pending == {s.state for s in steps[4:]} and 0 in pending
    fig = dag_figure(model, demo.X_test, demo.y_test, pending=pending)
    nodes = next(t for t in fig.data if t.name == "states")
    for c, colour, text in zip(
        nodes.customdata, nodes.marker.color, nodes.hovertext, strict=True
    ):
        if int(c[0]) in pending:
            assert isinstance(colour, str) and "not reduced yet" in text
    pos = {int(c[0]): (x, y) for c, x, y in zip(nodes.customdata, nodes.x, nodes.y)}
    starts = set()
    for t in fig.data:
        if t.meta and t.meta.get("kind") in ("acquire", "stop"):
            xs, ys = list(t.x), list(t.y)
            starts |= {(xs[i], ys[i]) for i in range(0, len(xs), 3)}
    assert not any(pos[k] in starts for k in pending if k in pos)
    # Without pending states the same figure draws the root's flow.
    full = dag_figure(model, demo.X_test, demo.y_test)
    drawn = [t for t in full.data if t.meta and t.meta.get("kind") == "acquire"]
    assert any(np.isclose(t.x[0], pos[0][0]) for t in drawn)
