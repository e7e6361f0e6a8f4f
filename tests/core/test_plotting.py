"""Figures, paths, node details and the Graph-Reduce walk, checked on ``fig.data``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from sklearn.naive_bayes import GaussianNB

from budgetdag_core import (
    BudgetDAGClassifier,
    SensorDAG,
    SensorSpec,
    load_demo,
    path_of,
    toy_dataset,
)
from budgetdag_core.decisions import stop_losses
from budgetdag_core.explain import node_details
from budgetdag_core.plotting import (
    clicked_states,
    dag_figure,
    decision_regions_figure,
    lower_hull,
    tradeoff_figure,
)
from budgetdag_core.plotting._dag_layout import (
    Box,
    abbreviate,
    label_box,
    node_label,
    place_labels,
    segments_hit,
)
from budgetdag_core.teaching import cost_tables, graph_reduce_steps
from budgetdag_core.tradeoff._baselines import state_predictions


# ----------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def landsat2():
    """4 states: landsat with 2 bands, a small sample."""
    demo = load_demo("landsat")
    spec = demo.spec.subset(["band1", "band2"])
    train = demo.train.sample(600, random_state=0)
    test = demo.test.sample(300, random_state=0)
    model = BudgetDAGClassifier(spec, cost_scale=0.02, cv=3, random_state=0)
    model.fit(train[spec.columns], train["label"])
    return model, test[spec.columns], test["label"]


@pytest.fixture(scope="module")
def toy():
    demo = toy_dataset(300, 150)
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    model.fit(demo.X_train, demo.y_train)
    return model, demo


@pytest.fixture(scope="module")
def big():
    """256 states: 8 one-column sensors with long names, cheap learners."""
    rng = np.random.default_rng(0)
    n = 240
    y = rng.integers(0, 2, n)
    X = pd.DataFrame(
        {f"sensor_{i}": y * (0.3 + 0.2 * i) + rng.normal(size=n) for i in range(8)}
    )
    spec = SensorSpec.per_column(
        list(X.columns), cost={c: 1.0 + i for i, c in enumerate(X.columns)}
    )
    model = BudgetDAGClassifier(
        spec,
        cost_scale=0.01,
        cv=3,
        random_state=0,
        policy_degree=1,
        classifier=GaussianNB(),
    ).fit(X, y)
    return model, X, y


def trace_named(fig: go.Figure, name: str):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, [t.name for t in fig.data]
    return found[0]


def node_positions(fig: go.Figure) -> dict[int, tuple[float, float]]:
    nodes = trace_named(fig, "states")
    return {
        int(c[0]): (x, y)
        for c, x, y in zip(nodes.customdata, nodes.x, nodes.y, strict=True)
    }


def segments(trace) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    xs, ys = list(trace.x), list(trace.y)
    out = []
    for i in range(0, len(xs), 3):
        out.append(((xs[i], ys[i]), (xs[i + 1], ys[i + 1])))
        assert xs[i + 2] is None and ys[i + 2] is None
    return out


def _on_segment(p, a, b, tol: float = 0.2) -> bool:
    """Whether point ``p`` lies within ``tol`` of the axis-parallel segment a-b."""
    (x0, y0), (x1, y1) = a, b
    return (
        min(x0, x1) - tol <= p[0] <= max(x0, x1) + tol
        and min(y0, y1) - tol <= p[1] <= max(y0, y1) + tol
    )


# ------------------------------------------------------------- DAG figure
def test_nodes_match_flow_counts(landsat2) -> None:
    model, X, y = landsat2
    flow = model.flow(X, y)
    fig = dag_figure(model, X, y, hide_unvisited=False)
    nodes = trace_named(fig, "states")
    assert len(nodes.x) == 4
    custom = np.asarray(nodes.customdata)
    for state, arrived, stopped, moved, errors in custom:
        attrs = flow.nodes[int(state)]
        assert arrived == attrs["arrived"]
        assert stopped == attrs["stopped"]
        assert moved == attrs["arrived"] - attrs["stopped"]
        assert errors == attrs["errors"]
    # Marker size grows with the examples arriving.
    arrived, sizes = custom[:, 1], np.asarray(nodes.marker.size)
    order = np.argsort(arrived, kind="stable")
    assert np.all(np.diff(sizes[order]) >= 0)
    assert sizes[arrived.argmax()] > sizes[arrived.argmin()] or np.ptp(arrived) == 0
    # Colour = share stopping, for visited nodes.
    for c, colour in zip(custom, nodes.marker.color, strict=True):
        if c[1] > 0:
            assert colour == pytest.approx(c[2] / c[1])
    # Hover shows exact counts and the cost so far.
    root_hover = nodes.hovertext[list(custom[:, 0]).index(0)]
    assert f"arrived: {flow.nodes[0]['arrived']}" in root_hover
    assert "cost so far: 0" in root_hover


def test_edges_follow_flow(landsat2) -> None:
    model, X, y = landsat2
    flow = model.flow(X, y)
    fig = dag_figure(model, X, y)
    pos = node_positions(fig)
    at = {xy: k for k, xy in pos.items()}
    sink = trace_named(fig, "classify")
    sinks = set(zip(sink.x, sink.y, strict=True))
    width_of: dict[tuple[int, int], float] = {}
    stop_width: dict[int, float] = {}
    for t in fig.data:
        if not (t.meta and t.meta.get("kind")):
            continue
        parts = segments(t)
        if t.meta["kind"] == "acquire":
            for a, b in parts:
                width_of[(at[a], at[b])] = t.line.width
            continue
        # A stop edge: right from its node to a lane between the layers, down
        # to the row of sinks; no part passes another node.
        assert t.line.dash == "dot"
        # and along the bottom row to the sink.
        for (a, c1), (c2, c3), (c4, b) in zip(
            parts[::3], parts[1::3], parts[2::3], strict=True
        ):
            assert c1 == c2 and c3 == c4 and a[1] == c1[1] and c2[0] == c3[0]
            assert b in sinks and c3[1] == b[1] and 0 < c1[0] - a[0] < 0.5
            assert not any(
                (k != at[a] and _on_segment(p, a, c1))
                or _on_segment(p, c2, c3)
                or _on_segment(p, c4, b)
                for k, p in pos.items()
            )
            stop_width[at[a]] = t.line.width
    used = {(u, v) for u, v, c in flow.edges(data="count") if c > 0}
    assert set(width_of) == used
    assert set(stop_width) == {k for k, s in flow.nodes(data="stopped") if s > 0}
    # A wider line never carries fewer examples.
    edges = sorted(width_of, key=lambda e: flow.edges[e]["count"])
    widths = [width_of[e] for e in edges]
    assert widths == sorted(widths)
    # Hidden (unvisited) states are not drawn; the note says how many.
    visited = {k for k, a in flow.nodes(data="arrived") if a > 0}
    assert set(pos) == visited
    hidden = 4 - len(visited)
    notes = [a.text for a in fig.layout.annotations]
    assert any(f"{hidden} of 4 states hidden" in n for n in notes) == (hidden > 0)


def test_error_colour_and_graph_input(landsat2) -> None:
    model, X, y = landsat2
    flow = model.flow(X, y)
    fig = dag_figure(model, X, y, color="error")
    nodes = trace_named(fig, "states")
    for c, colour in zip(nodes.customdata, nodes.marker.color, strict=True):
        attrs = flow.nodes[int(c[0])]
        if attrs["stopped"]:
            assert colour == pytest.approx(attrs["errors"] / attrs["stopped"])
        else:
            assert isinstance(colour, str)  # grey: no error rate without stops
    assert "error" in nodes.marker.colorbar.title.text
    # The same figure from the flow graph (as a notebook user might pass it).
    costs = dict(model.spec_.costs)
    from_graph = dag_figure(flow, color="error", costs=costs)
    np.testing.assert_array_equal(
        trace_named(from_graph, "states").customdata, nodes.customdata
    )
    assert trace_named(from_graph, "states").hovertext == nodes.hovertext


def test_bare_dag_without_data() -> None:
    g = SensorDAG(["a", "b", "c"]).to_networkx()
    fig = dag_figure(g)
    nodes = trace_named(fig, "states")
    assert sorted(int(c[0]) for c in nodes.customdata) == list(range(8))
    acquire = [t for t in fig.data if t.meta and t.meta["kind"] == "acquire"]
    assert sum(len(segments(t)) for t in acquire) == g.number_of_edges()
    assert not [t for t in fig.data if t.meta and t.meta["kind"] == "stop"]
    assert "start" in nodes.text and "all" in nodes.text


def test_unit_dag_layers_by_real_sensors() -> None:
    # A DAG over sensor subsets (units): x is the number of real sensors held.
    dag = SensorDAG(["a", "b", "c", "d", "e"], units=[[0, 1], [2], [1, 3], [4]])
    fig = dag_figure(dag.to_networkx())
    nodes = trace_named(fig, "states")
    assert len(nodes.x) == dag.n_states
    for c, x in zip(nodes.customdata, nodes.x, strict=True):
        assert x == len(dag.sensors_in(int(c[0])))


def test_bad_arguments(landsat2) -> None:
    model, X, y = landsat2
    with pytest.raises(ValueError, match="color must be one of"):
        dag_figure(model, X, y, color="cost")
    with pytest.raises(ValueError, match="needs the flow with labels"):
        dag_figure(model, X, color="error")
    with pytest.raises(ValueError, match="State 9 is not in the DAG"):
        dag_figure(model, X, y, highlight_path=[0, 9])
    with pytest.raises(ValueError, match="y was given without X"):
        dag_figure(model, None, y)
    with pytest.raises(ValueError, match="fitted"):
        dag_figure(BudgetDAGClassifier(model.spec_))


def test_256_states_readable(big) -> None:
    model, X, y = big
    flow = model.flow(X, y)
    visited = {k for k, a in flow.nodes(data="arrived") if a > 0}
    fig = dag_figure(model, X, y)
    nodes = trace_named(fig, "states")
    assert {int(c[0]) for c in nodes.customdata} == visited
    # Short codes with a key; every label short enough for its column.
    notes = " ".join(a.text for a in fig.layout.annotations)
    assert "sensor_0" in notes and f"{256 - len(visited)} of 256 states" in notes
    labels = [t for t in nodes.text if t]
    assert labels and max(map(len, labels)) <= 16
    assert all("sensor_" not in t for t in labels)
    # Labels of one layer never sit closer than a line of text.
    by_layer: dict[float, list[float]] = {}
    for x, yy, t in zip(nodes.x, nodes.y, nodes.text, strict=True):
        if t:
            by_layer.setdefault(x, []).append(yy)
    px_per_y = (fig.layout.height - fig.layout.margin.t - fig.layout.margin.b) / (
        fig.layout.yaxis.range[1] - fig.layout.yaxis.range[0]
    )
    for ys in by_layer.values():
        gaps = np.diff(sorted(ys)) * px_per_y
        assert np.all(gaps >= 13.9)
    # All 256 drawn when asked, the unvisited ones faded and unlabelled.
    full = trace_named(dag_figure(model, X, y, hide_unvisited=False), "states")
    assert len(full.x) == 256
    for c, opacity, text in zip(
        full.customdata, full.marker.opacity, full.text, strict=True
    ):
        if c[1] == 0:
            assert opacity < 1 and text == ""
    # Hiding rare states as well.
    few = dag_figure(model, X, y, min_arrived=20)
    custom = trace_named(few, "states").customdata
    kept = {int(c[0]) for c in custom if c[0] >= 0}
    assert kept == {k for k in visited if flow.nodes[k]["arrived"] >= 20} | {0}
    # ... merged per depth into one "other" node each (negative ids), so
    # that every drawn node but the start keeps an incoming edge.
    pos = node_positions(few)
    merged = [k for k in pos if k < 0]
    assert merged and len({pos[k][0] for k in merged}) == len(merged)
    rare = [k for k in visited if flow.nodes[k]["arrived"] < 20 and k != 0]
    assert sum(int(c[1]) for c in custom if c[0] < 0) == sum(
        flow.nodes[k]["arrived"] for k in rare
    )
    ends = {
        b
        for t in few.data
        if t.meta and t.meta.get("kind") == "acquire"
        for _, b in segments(t)
    }
    assert all(p in ends for k, p in pos.items() if k != 0)
    # No depth is left off the axis.
    ticks = list(few.layout.xaxis.tickvals)
    assert ticks == list(range(len(ticks)))


def test_highlighted_path_matches_trace(landsat2, big) -> None:
    for model, X, _ in (landsat2, big):
        tr = model.trace(X.iloc[:15])
        for i in range(15):
            result = path_of(model, X.iloc[[i]])
            assert result.states[0] == 0
            assert result.states[-1] == tr["stop_state"].iloc[i]
            assert result.acquired == tuple(tr["acquired"].iloc[i])
            assert result.prediction == tr["prediction"].iloc[i]
            assert result.cost == pytest.approx(tr["cost"].iloc[i])
            d = result.decisions
            assert list(d["action"]) == ["acquire"] * (len(d) - 1) + ["stop"]
            assert list(d["state"]) == result.states
            assert d["cost_so_far"].iloc[-1] == pytest.approx(result.cost)
            assert sum(map(len, d["acquired"])) == len(result.acquired)
        fig = dag_figure(model, X, highlight_path=result.states, selected=0)
        pos = node_positions(fig)
        path = trace_named(fig, "path")
        assert [int(c[0]) for c in path.customdata] == result.states
        assert list(zip(path.x, path.y, strict=True)) == [pos[s] for s in result.states]
        stop = trace_named(fig, "path stop")
        sink = trace_named(fig, "classify")
        assert (stop.x[-1], stop.y[-1]) in set(zip(sink.x, sink.y, strict=True))
        assert int(trace_named(fig, "selected").customdata[0][0]) == 0


def test_path_of_input_checks(landsat2) -> None:
    model, X, _ = landsat2
    with pytest.raises(ValueError, match="one row"):
        path_of(model, X.iloc[:2])
    row = X.iloc[0].to_dict()
    result = path_of(model, row)
    assert result.states[-1] == model.trace(X.iloc[[0]])["stop_state"].iloc[0]
    del row[model.spec_.columns[0]]
    with pytest.raises(ValueError, match="lacks column"):
        path_of(model, row)


def test_clicked_states() -> None:
    event = {
        "selection": {
            "points": [
                {"customdata": [2, 10, 3]},
                {"curve_number": 4},  # an edge-info point has no customdata
                {"customdata": [-1]},
                {"customdata": [2, 10, 3]},
            ]
        }
    }
    assert clicked_states(event) == [2]
    assert clicked_states(None) == []
    assert clicked_states([{"customdata": 5}]) == [5]


def test_clicked_states_reads_what_the_browser_sends() -> None:
    # Streamlit's frontend serialises a numeric customdata row (a typed array
    # in plotly.js) as an object with string indices; this is a real event.
    event = {
        "selection": {
            "points": [
                {
                    "curve_number": 7,
                    "point_number": 1,
                    "customdata": {"0": 1, "1": 400, "2": 166, "3": 234, "4": 13},
                }
            ],
            "point_indices": [1],
        }
    }
    assert clicked_states(event) == [1]


# ------------------------------------------------------------ node details
def test_node_details_match_flow(landsat2) -> None:
    model, X, y = landsat2
    flow = model.flow(X, y)
    for state in range(4):
        d = node_details(model, X, y, state)
        attrs = flow.nodes[state]
        assert d["arrived"] == attrs["arrived"]
        assert d["stopped"] == attrs["stopped"]
        actions = d["actions"].set_index("child")
        assert actions["count"].sum() == attrs["arrived"]
        assert actions.loc[-1, "count"] == attrs["stopped"]
        for _, child in flow.out_edges(state):
            assert actions.loc[child, "count"] == flow.edges[state, child]["count"]
        assert d["classes"]["arrived"].sum() == attrs["arrived"]
        if attrs["stopped"]:
            assert d["error_of_stops"] == pytest.approx(
                attrs["errors"] / attrs["stopped"]
            )
    # At the root every example arrives: the error if stopped there is the
    # error of the no-sensor classifier on all rows.
    root = node_details(model, X, y, 0)
    base = model.evaluate_states(X, y).set_index("state")
    assert root["error_if_stopped"] == pytest.approx(base.loc[0, "error"])
    with pytest.raises(ValueError, match="state must be"):
        node_details(model, X, y, 4)
    assert node_details(model, X, None, 0)["classes"] is None


def test_node_details_of_a_regressor_give_its_loss_and_targets() -> None:
    from budgetdag_core import BudgetDAGRegressor

    demo = toy_dataset(200, 80)
    y, y_test = 2 * demo.X_train["precise"], 2 * demo.X_test["precise"]
    model = BudgetDAGRegressor(demo.spec, regressor="ridge", cost_scale=0.01, cv=3)
    model.fit(demo.X_train, y.to_numpy())
    flow = model.flow(demo.X_test, y_test)
    base = model.evaluate_states(demo.X_test, y_test).set_index("state")
    root = node_details(model, demo.X_test, y_test, 0)
    # At the root every example arrives: the loss if stopped is the mean
    # predictor's MSE; its targets are all of y.
    assert root["classes"] is None
    assert root["error_if_stopped"] == pytest.approx(base.loc[0, "mse"])
    targets = root["targets"].iloc[0]
    assert targets["mean"] == pytest.approx(y_test.mean())
    assert targets["max"] == pytest.approx(y_test.max())
    for state in flow.nodes:
        attrs = flow.nodes[state]
        d = node_details(model, demo.X_test, y_test, state)
        assert d["arrived"] == attrs["arrived"]
        if attrs["stopped"]:  # the flow's summed loss over the stops
            assert d["error_of_stops"] == pytest.approx(
                attrs["loss"] / attrs["stopped"]
            )
    with pytest.raises(ValueError, match="80 rows but y has 3"):
        node_details(model, demo.X_test, [1.0, 2.0, 3.0], 0)


# ---------------------------------------------------------------- teaching
def test_cost_tables_reproduce_graph_reduce(toy) -> None:
    model, demo = toy
    tables, ctg, actions = cost_tables(model, demo.X_train, demo.y_train)
    np.testing.assert_allclose(ctg[:, 0], model.train_cost_to_go_)
    # The learned actions route the training rows exactly as the model does on
    # the inputs it learned from (out-of-fold probabilities with the default
    # policy_features="proba"; the refit bank would give others on these rows).
    oof = state_predictions(model, demo.X_train, demo.y_train, out_of_fold=True)
    stops = model._route(oof.Xv, state_proba=oof.proba).stop_state
    tr = pd.DataFrame({"stop_state": stops})
    state = np.zeros(len(tr), dtype=int)
    for _ in range(model.sensor_dag_.n_sensors + 1):
        act = actions[np.arange(len(tr)), state]
        child = np.array(
            [
                -1 if a == 0 else model.policies_[s].children[a - 1][1]
                for s, a in zip(state, act, strict=True)
            ]
        )
        state = np.where(child >= 0, child, state)
    np.testing.assert_array_equal(state, tr["stop_state"])
    with pytest.raises(ValueError, match="training data"):
        cost_tables(model, demo.X_test, demo.y_test)


def test_graph_reduce_steps(toy) -> None:
    model, demo = toy
    steps = graph_reduce_steps(model, demo.X_train, demo.y_train, rows=4)
    dag = model.sensor_dag_
    order = [s.state for s in steps]
    assert sorted(order) == list(range(dag.n_states)) and order[-1] == 0
    seen: set[int] = set()
    for step in steps:  # children are reduced before their parent
        assert all(child in seen for _, child in dag.children[step.state])
        seen.add(step.state)
    y = np.asarray(demo.y_train)
    oof = model.bank_.oof_predictions()
    for step in steps:
        frame = step.costs
        assert len(frame) == 4 and step.actions[0] == "stop"
        assert list(frame.columns[: len(step.actions)]) == step.actions
        rows = frame.index.to_numpy()
        # Stop costs the model's out-of-fold stop loss (by default the expected
        # loss of the calibrated probabilities; with policy_features="sensors"
        # the 0/1 loss of oof[rows]); the policy's pick on its training inputs
        # is reported.
        np.testing.assert_allclose(
            frame["stop"],
            stop_losses(
                model.bank_.oof_proba_[rows, step.state],
                np.searchsorted(model.classes_, y[rows]),
                kind=model.stop_loss_,
            ),
            rtol=1e-6,
        )
        if model.stop_loss_ == "zero_one":
            assert (frame["stop"] == (oof[rows, step.state] != y[rows])).all()
        inputs = model.inputs_.training(
            model._features(demo.X_train), model.bank_.oof_proba_
        )
        picked = model.policies_[step.state].predict(inputs(step.state)[rows])
        assert list(frame["picked"]) == [step.actions[a] for a in picked]
        values = frame[step.actions].to_numpy()
        np.testing.assert_allclose(
            frame["cost_to_go"], values[np.arange(len(rows)), picked]
        )
        assert 0 <= step.agreement <= 1
        assert sum(step.action_shares.values()) == pytest.approx(1.0)
    chosen = graph_reduce_steps(model, demo.X_train, demo.y_train, rows=[0, 5])
    assert list(chosen[0].costs.index) == [0, 5]
    with pytest.raises(ValueError, match="outside"):
        graph_reduce_steps(model, demo.X_train, demo.y_train, rows=[10_000])


def test_toy_dataset() -> None:
    a, b = toy_dataset(200, 50, random_state=3), toy_dataset(200, 50, random_state=3)
    pd.testing.assert_frame_equal(a.train, b.train)
    assert a.X_train.shape == (200, 3) and a.X_test.shape == (50, 3)
    assert a.spec.costs["precise"] > a.spec.costs["cheap_a"] == a.spec.costs["cheap_b"]
    full = pd.concat([a.train, a.test])
    corr = full[list(a.spec.names)].corrwith(full["label"])
    assert corr["precise"] > corr["cheap_a"] and corr["precise"] > corr["cheap_b"]
    assert load_demo("toy").name == "toy"
    with pytest.raises(ValueError, match="n_train"):
        toy_dataset(5, 5)


def test_decision_regions(toy) -> None:
    model, demo = toy
    dag = model.sensor_dag_
    two = dag.index[0b011]  # cheap_a + cheap_b
    fig = decision_regions_figure(model, two, demo.X_train, demo.y_train, grid=40)
    heat = trace_named(fig, "policy")
    z = np.asarray(heat.z)
    assert z.shape == (40, 40)
    gx, gy = np.meshgrid(heat.x, heat.y)
    # The policy's action at each grid point, from the inputs it sees there (the
    # state classifier's probabilities with the default policy_features).
    grid_points = np.column_stack([gx.ravel(), gy.ravel()])
    expected = model.policies_[two].predict(model.inputs_at(grid_points, two))
    np.testing.assert_array_equal(z.ravel(), expected)
    assert list(heat.colorbar.ticktext) == ["stop", "acquire precise"]
    flow = model.flow(demo.X_train)
    n_points = sum(len(t.x) for t in fig.data if t.type == "scatter")
    assert n_points == flow.nodes[two]["arrived"]
    one = dag.index[0b001]  # cheap_a
    fig1 = decision_regions_figure(model, one, demo.X_train, demo.y_train, grid=30)
    z1 = np.asarray(trace_named(fig1, "policy").z)
    assert z1.shape == (2, 30) and np.array_equal(z1[0], z1[1])
    # Root (no inputs) and the leaf: one action for everyone.
    assert decision_regions_figure(model, 0).data[0].type == "bar"
    leaf = decision_regions_figure(model, dag.n_states - 1, demo.X_train)
    assert list(leaf.data[0].y) == ["stop"]
    with pytest.raises(ValueError, match="Give X or ranges"):
        decision_regions_figure(model, two)
    ranged = decision_regions_figure(
        model, two, grid=10, ranges={"cheap_a": (-2, 2), "cheap_b": (-1, 1)}
    )
    assert trace_named(ranged, "policy").x[0] == -2


# --------------------------------------------------------------- trade-off
@pytest.fixture
def frame() -> pd.DataFrame:
    rows = []
    for split, shift in (("train", -0.02), ("test", 0.0)):
        for cs, cost, err in ((0.0, 3.0, 0.10), (0.05, 1.5, 0.14), (0.5, 0.4, 0.3)):
            rows.append(("dag", cs, cost, cost / 1.5, err + shift, split, None))
        for names, cost, err in (
            (("a",), 1.0, 0.4),
            (("b",), 1.0, 0.5),
            (("a", "b"), 2.0, 0.2),
            ((), 0.0, 0.6),
        ):
            rows.append(("fixed", None, cost, len(names), err + shift, split, names))
        rows.append(("all_sensors", None, 3.0, 3, 0.12 + shift, split, ("a", "b", "c")))
        rows.append(("oracle", None, 0.7, 0.5, 0.05 + shift, split, None))
    return pd.DataFrame(
        rows,
        columns=[
            "method",
            "cost_scale",
            "avg_cost",
            "avg_sensors",
            "error",
            "split",
            "sensors",
        ],
    )


def test_tradeoff_figure(frame) -> None:
    fig = tradeoff_figure(frame, hull=True, highlight=4)
    names = [t.name for t in fig.data]
    assert names == [
        "DAG policy",
        "fixed subsets",
        "all sensors",
        "oracle bound",
        "fixed-subset hull",
        "selected",
    ]
    dag = trace_named(fig, "DAG policy")
    test_dag = frame[(frame["method"] == "dag") & (frame["split"] == "test")]
    assert sorted(int(c[0]) for c in dag.customdata) == list(test_dag.index)
    assert list(dag.x) == sorted(dag.x) and "lines" in dag.mode
    for label, x, err in zip(dag.customdata[:, 0], dag.x, dag.y, strict=True):
        assert frame.loc[label, "avg_cost"] == x and frame.loc[label, "error"] == err
    fixed = trace_named(fig, "fixed subsets")
    assert fixed.mode == "markers"
    assert any("sensors bought: a, b" in h for h in fixed.hovertext)
    assert any("sensors bought: none" in h for h in fixed.hovertext)
    # Hovers in words: no "None" sensors on the DAG, no raw column names.
    for h in dag.hovertext:
        assert "sensors bought: " in h and "on average" in h and "cost scale " in h
        assert "None" not in h and "cost_scale" not in h and "avg_" not in h
        assert "average cost: " in h and "error: " in h
    hull = trace_named(fig, "fixed-subset hull")
    assert hull.line.dash == "dash"
    # The hull lies on or below every fixed point it spans.
    for x, err in zip(fixed.x, fixed.y, strict=True):
        if hull.x[0] <= x <= hull.x[-1]:
            assert err >= np.interp(x, hull.x, hull.y) - 1e-12
    assert fig.layout.xaxis.title.text.startswith("average acquisition cost")
    assert fig.layout.yaxis.tickformat == ".0%"
    sel = trace_named(fig, "selected")
    assert sel.customdata[0][0] == 4


def test_tradeoff_options(frame) -> None:
    both = tradeoff_figure(frame, split=None, x="avg_sensors")
    names = [t.name for t in both.data]
    assert "DAG policy (train)" in names and "DAG policy (test)" in names
    train = trace_named(both, "DAG policy (train)")
    assert train.line.dash == "dot"
    assert list(train.x) == sorted(
        frame.loc[(frame.method == "dag") & (frame.split == "train"), "avg_sensors"]
    )
    assert "number of sensors" in both.layout.xaxis.title.text
    frame2 = pd.concat(
        [
            frame,
            pd.DataFrame(
                [
                    {
                        "method": "greedy",
                        "avg_cost": 1.0,
                        "error": 0.2,
                        "split": "test",
                        "avg_sensors": 1,
                    }
                ]
            ),
        ],
        ignore_index=True,
    )
    assert "greedy" in [t.name for t in tradeoff_figure(frame2).data]
    assert "fixed-subset hull" not in [t.name for t in tradeoff_figure(frame).data]
    with pytest.raises(ValueError, match="lacks column"):
        tradeoff_figure(frame.drop(columns="error"))
    with pytest.raises(ValueError, match="No rows with split"):
        tradeoff_figure(frame, split="validation")
    with pytest.raises(ValueError, match="x must be one of"):
        tradeoff_figure(frame, x="cost")
    with pytest.raises(ValueError, match="not in the frame"):
        tradeoff_figure(frame, highlight=999)


def test_lower_hull() -> None:
    x = [0.0, 1.0, 1.0, 2.0, 3.0, 4.0]
    y = [0.6, 0.35, 0.5, 0.2, 0.19, 0.25]
    idx = lower_hull(x, y)
    assert idx == [0, 1, 3, 4]
    hx, hy = np.array(x)[idx], np.array(y)[idx]
    slopes = np.diff(hy) / np.diff(hx)
    assert np.all(np.diff(slopes) >= 0)  # convex


# ----------------------------------------------------------------- labels
def test_abbreviate_and_labels() -> None:
    for names in (
        ["band1", "band2", "band3"],
        ["moments_x", "moments_y", "edges_x", "edges_y"],
        [f"sensor_{i}" for i in range(12)],
        ["a", "b"],
        ["aaaaaa1", "aaaaaa1x"],
    ):
        short = abbreviate(names, 4)
        assert set(short) == set(names)
        assert len(set(short.values())) == len(names)
        assert all(0 < len(s) <= 4 or s.startswith("s") for s in short.values())
    assert abbreviate(["band1", "band2"], 3) == {"band1": "b1", "band2": "b2"}
    names = ["aa", "bb", "cc", "dd"]
    short = {n: n for n in names}
    assert node_label((), names, short) == "start"
    assert node_label(tuple(names), names, short) == "all"
    assert node_label(("aa", "bb", "cc"), names, short) == "all−dd"
    assert node_label(("aa", "bb"), names, short) == "aa+bb"
    plus = node_label(("aa", "bb", "cc"), names, short, allow_minus=False)
    assert plus == "aa+bb+cc"


def test_segments_hit_a_box() -> None:
    box = Box(0, 0, 10, 10)
    segs = np.array(
        [
            (-5, 5, 15, 5, 0),  # straight through
            (-5, -5, -1, -1, 0),  # short of it
            (-5, -5, -1, -1, 2),  # ... but wide enough to touch
            (20, -5, 20, 15, 1),  # beside it
            (-5, 12, 15, 12, 1),  # under it
            (-3, -3, 13, 13, 0),  # the diagonal
        ],
        dtype=float,
    )
    assert segments_hit(box, segs).tolist() == [True, False, True, False, False, True]


def test_place_labels_avoids_lines_markers_and_each_other() -> None:
    # Three nodes 20 px apart on a horizontal edge: labels wider than the
    # gap are staggered in rows above (the edge forbids beside, a block below).
    nodes = [(k, 50.0 + 20 * k, 100.0, 5.0, f"+s{k}0") for k in range(3)]
    edge = np.array([(0, 100, 200, 100, 3)], dtype=float)
    below = [Box(0, 106, 200, 200)]
    placed = place_labels(nodes, edge, below, Box(0, 0, 200, 200), rows=3)
    assert set(placed) == {0, 1, 2}
    boxes = [label_box(*placed[k], f"+s{k}0") for k in range(3)]
    for i, a in enumerate(boxes):
        assert a.bottom <= 100 - 5 and not segments_hit(a, edge).any()
        assert all(not a.overlaps(b) for b in boxes[i + 1 :])
    assert len({round(b.top) for b in boxes}) > 1  # staggered
    # No room at all: no label rather than one on the edge.
    assert place_labels(nodes, edge, below, Box(0, 95, 200, 200), rows=3) == {}


def test_a_narrower_drawing_gets_smaller_nodes_and_no_longer_labels() -> None:
    names = ["temperature", "pressure", "humidity", "wind_speed", "rainfall"]
    g = SensorDAG(names).to_networkx()
    wide = trace_named(dag_figure(g, width=1400), "states")
    narrow = trace_named(dag_figure(g, width=600), "states")
    assert max(narrow.marker.size) < max(wide.marker.size)
    assert max(map(len, narrow.text)) <= max(map(len, wide.text))
    # The layout says the width it was laid out for (write_image uses it).
    fig = dag_figure(g, width=600)
    assert fig.layout.width == fig.layout.meta["width_px"] == 600


def label_room(fig, width: int) -> float:
    """Pixels between two layers of a dag_figure drawn ``width`` px wide."""
    x0, x1 = fig.layout.xaxis.range
    return (width - fig.layout.margin.l - fig.layout.margin.r) / (x1 - x0)


@pytest.mark.parametrize("width", [820, 600, 420])
def test_quadrant_labels_fit_between_layers_with_full_names_on_hover(width) -> None:
    from budgetdag_core.plotting._dag_layout import CHAR_PX

    names = ["top-left", "top-right", "bottom-left", "bottom-right"]
    fig = dag_figure(SensorDAG(names).to_networkx(), width=width)
    nodes = trace_named(fig, "states")
    labels = [t for t in nodes.text if t]
    assert len(labels) >= 8
    # No label reaches the labels of the next layer: it fits the layer spacing.
    assert max(len(t) for t in labels) * CHAR_PX <= label_room(fig, width)
    # Codes, not "top-left+top-right", spelled out in a key under the figure.
    notes = " ".join(a.text for a in fig.layout.annotations)
    codes = {
        name: code
        for a in fig.layout.annotations
        if " = " in a.text  # the code key's lines (not the "+x" note)
        for code, name in (item.split(" = ") for item in a.text.split("  ·  "))
    }
    assert sorted(codes) == sorted(names)
    assert f"{codes['top-left']}+{codes['top-right']}" in labels
    assert not any("top-left" in t for t in labels) and "bottom-right" in notes
    # The hover names every sensor in full.
    assert any("<b>top-left, top-right</b>" in h for h in nodes.hovertext)


def test_short_names_stay_whole_and_a_long_key_wraps() -> None:
    fig = dag_figure(SensorDAG(["mean", "error", "worst"]).to_networkx(), width=820)
    assert "mean+error" in trace_named(fig, "states").text
    assert not fig.layout.annotations  # no key needed
    names = [f"measurement_number_{i}" for i in range(12)]
    g = SensorDAG(names).to_networkx()
    fig = dag_figure(g, width=600)
    key = [a.text for a in fig.layout.annotations if "measurement_number_0" in a.text]
    assert key  # the key is there, on as many lines as it needs
    lines = [a.text for a in fig.layout.annotations if " = measurement" in a.text]
    assert len(lines) > 1 and all(len(t) <= 600 / 6.2 for t in lines)
    assert "measurement_number_11" in " ".join(lines)


def test_a_deep_chain_fits_its_width_with_staggered_unique_labels() -> None:
    import networkx as nx

    names = tuple(f"r{i // 8}c{i % 8}" for i in range(30))
    g = nx.DiGraph(sensor_names=names)
    n = 1000
    for d in range(31):
        g.add_node(d, sensors=names[:d], arrived=n - 20 * d, stopped=20, errors=2)
    for d in range(30):
        g.add_edge(d, d + 1, count=n - 20 * (d + 1), added=(names[d],))
    fig = dag_figure(g, width=820)
    assert fig.layout.meta["width_px"] == 820  # fits, the page does not scroll
    labels = trace_named(fig, "labels")
    assert len(labels.text) == 31 and len(set(labels.text)) == 31
    assert labels.text[0] == "start" and labels.text[5] == "+r0c4"
    # Layers closer than a label is wide: labels in several rows, each
    # centred over its node.
    assert len(set(labels.y)) > 1
    assert np.allclose(labels.x, trace_named(fig, "states").x)
    assert fig.layout.width == fig.layout.meta["width_px"]
    assert list(fig.layout.xaxis.tickvals) == list(range(31))


def test_region_and_tradeoff_titles_sit_below_plotlys_tool_bar(toy, frame) -> None:
    """The mode bar covers a figure's top 30 px on hover (issue 56): the
    decision-region heatmaps' and the trade-off's titles start under it."""
    from budgetdag_core.plotting._style import MODEBAR_PX

    model, demo = toy
    two = model.sensor_dag_.index[0b011]  # cheap_a + cheap_b
    for fig in (
        decision_regions_figure(model, two, demo.X_train, demo.y_train, grid=20),
        decision_regions_figure(model, 0),
        tradeoff_figure(frame, hull=True, title="Error against cost"),
    ):
        title = fig.layout.title
        assert title.text and title.yref == "container"
        assert title.pad.t >= MODEBAR_PX
        assert fig.layout.margin.t >= MODEBAR_PX + 40, title.text
