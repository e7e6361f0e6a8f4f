"""Human-readable tables of a fitted model (ui.reports)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, SensorSpec
from ui.reports import (
    NO_SENSOR,
    baseline_table,
    edge_table,
    escape_formulas,
    flow_table,
    path_table,
    to_csv_safe,
    trace_for_export,
)


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    n = 240
    X = pd.DataFrame({"cheap": rng.normal(size=n), "pricey": rng.normal(size=n)})
    y = np.where(X["cheap"] + 0.3 * X["pricey"] > 0, "pos", "neg")
    flip = rng.random(n) < 0.1
    y[flip] = np.where(y[flip] == "pos", "neg", "pos")
    spec = SensorSpec(
        {"cheap": ["cheap"], "pricey": ["pricey"]}, {"cheap": 1, "pricey": 3}
    )
    # Linear data: the logistic bank makes the policy adaptive here.
    model = BudgetDAGClassifier(
        spec, cost_scale=0.02, cv=3, random_state=0, bank_kind="per_subset"
    )
    return model.fit(X, y), X, y


def test_flow_table_counts(fitted):
    model, X, y = fitted
    table = flow_table(model.flow(X, y))
    assert len(table) == 4
    root = table[table["state"] == 0].iloc[0]
    assert root["sensors"] == NO_SENSOR and root["arrived"] == len(X)
    assert table["stopped"].sum() == len(X)
    wrong = int((model.predict(X) != y).sum())
    assert table["errors"].sum() == wrong
    arrived = table["arrived"].replace(0, np.nan)
    assert np.allclose(table["stop_share"], table["stopped"] / arrived, equal_nan=True)
    assert table["n_sensors"].is_monotonic_increasing


def test_edge_table_matches_flow(fitted):
    model, X, _ = fitted
    graph = model.flow(X)
    edges = edge_table(graph)
    assert edges["examples"].sum() == sum(c for *_, c in graph.edges(data="count"))
    assert (edges["examples"] > 0).all()
    nodes = flow_table(graph).set_index("sensors")
    into = edges.groupby("to")["examples"].sum()
    for name, count in into.items():
        assert nodes.loc[name, "arrived"] == count


def test_path_table_matches_trace(fitted):
    model, X, y = fitted
    trace = model.trace(X)
    paths = path_table(trace, y)
    assert len(paths) >= 2  # the policy is adaptive on this data
    assert paths["examples"].sum() == len(X)
    assert paths["share"].sum() == pytest.approx(1.0)
    assert paths["examples"].is_monotonic_decreasing
    for row in paths.itertuples():
        seq = tuple(row.sequence.split(" > ")) if row.sequence != NO_SENSOR else ()
        rows = trace["acquired"].map(tuple) == seq
        assert rows.sum() == row.examples
        assert trace.loc[rows, "cost"].mean() == pytest.approx(row.cost)
        wrong = trace.loc[rows, "prediction"].to_numpy() != y[rows.to_numpy()]
        assert wrong.mean() == pytest.approx(row.error)


def test_baseline_table_dominance():
    states = pd.DataFrame(
        {
            "state": [0, 1, 2, 3],
            "sensors": [(), ("a",), ("b",), ("a", "b")],
            "n_sensors": [0, 1, 1, 2],
            "avg_cost": [0.0, 1.0, 3.0, 4.0],
            "error": [0.5, 0.2, 0.3, 0.1],
        }
    )
    table = baseline_table({"error": 0.2, "avg_cost": 1.0}, states)
    assert table["avg_cost"].is_monotonic_increasing
    flags = dict(zip(table["sensors"], table["policy_dominates"], strict=True))
    # Same cost and error as {a}: not better; {b} costs more and errs more.
    assert flags == {
        NO_SENSOR: False,
        "a": False,
        "adaptive": False,
        "b": True,
        "a + b": False,
    }
    assert (table["kind"] == "policy").sum() == 1


def test_trace_for_export(fitted):
    model, X, y = fitted
    out = trace_for_export(model.trace(X), y)
    assert list(out.columns[:4]) == ["row", "prediction", "label", "correct"]
    assert out["row"].tolist() == X.index.tolist()  # each line's example
    assert out["correct"].tolist() == (model.predict(X) == y).tolist()
    assert all(isinstance(a, str) for a in out["acquired"])
    csv = out.to_csv(index=False)
    assert "(" not in csv.splitlines()[1]


# ------------------------------------------------------- spreadsheet safety
@pytest.mark.parametrize(
    ("cell", "escaped"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("+A1", "'+A1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-1.5", "-1.5"),  # a plain number, even as a string
        ("+2e-3", "+2e-3"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_escape_formulas_cells(cell, escaped):
    frame = pd.DataFrame({"x": [cell]})
    assert escape_formulas(frame)["x"].tolist() == [escaped]


def test_escape_formulas_keeps_numbers_and_the_input():
    frame = pd.DataFrame(
        {
            "cost": [-1.0, 2.5],
            "n": [-3, 4],
            "ok": [True, False],
            "=bad": pd.Categorical(["@x", "fine"]),
        }
    )
    out = escape_formulas(frame)
    assert list(out.columns) == ["cost", "n", "ok", "'=bad"]
    assert out["cost"].tolist() == [-1.0, 2.5] and out["n"].dtype == frame["n"].dtype
    assert out["'=bad"].tolist() == ["'@x", "fine"]
    assert list(frame.columns)[-1] == "=bad"  # the caller's frame is left alone
    lines = to_csv_safe(frame).splitlines()
    assert lines == ["cost,n,ok,'=bad", "-1.0,-3,True,'@x", "2.5,4,False,fine"]


def test_trace_csv_escapes_formula_labels_and_sensor_names():
    rng = np.random.default_rng(1)
    n = 120
    X = pd.DataFrame({"=evil": rng.normal(size=n), "b": rng.normal(size=n)})
    y = np.where(X["=evil"] > 0, "=cmd|' /C calc'!A0", "@SUM(1)")
    spec = SensorSpec({"=evil": ["=evil"], "b": ["b"]}, {"=evil": 1, "b": 2})
    model = BudgetDAGClassifier(spec, cost_scale=0.01, cv=2, random_state=0)
    model.fit(X, y)
    csv = to_csv_safe(trace_for_export(model.trace(X), y))
    parsed = pd.read_csv(io.StringIO(csv))
    cells = [str(v) for v in parsed.to_numpy().ravel()] + list(parsed.columns)
    assert not [c for c in cells if c.startswith(("=", "+", "@"))]
    assert set(parsed["label"]) == {"'=cmd|' /C calc'!A0", "'@SUM(1)"}
    assert (parsed["cost"] >= 0).all()  # numbers stay numbers
