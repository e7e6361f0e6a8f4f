"""Pure helpers of the app's pages (no Streamlit run needed)."""

from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest

from budgetdag_core import SensorSpec
from ui.dag_view import auto_min_arrived
from ui.whatif import decisions_table, edited_values, editor_table, probability_table


def flow_graph(arrived: list[int]) -> nx.DiGraph:
    g = nx.DiGraph()
    for k, n in enumerate(arrived):
        g.add_node(k, arrived=n)
    return g


def test_auto_threshold_keeps_big_graphs_readable():
    # 256 states: a few busy ones, many with a handful of examples, most empty.
    arrived = [200, 150, 90] + list(range(60, 0, -1)) + [0] * 193
    threshold = auto_min_arrived(flow_graph(arrived), max_nodes=30)
    shown = sum(n >= threshold for n in arrived)
    assert shown <= 30
    assert sum(n >= threshold - 1 for n in arrived) > 30  # the smallest such
    assert auto_min_arrived(flow_graph([5, 3, 0, 1]), max_nodes=30) == 1


def test_editor_table_and_edits():
    spec = SensorSpec({"a": ["x", "y"], "b": ["z"]}, {"a": 1.0, "b": 2.0})
    table = editor_table(spec, pd.Series({"x": 1.0, "y": 2.0, "z": 3.0, "w": 9.0}))
    assert table["column"].tolist() == ["x", "y", "z"]
    assert table["sensor"].tolist() == ["a", "a", "b"]
    table.loc[1, "value"] = 5.0
    values, changed = edited_values(table)
    assert values == {"x": 1.0, "y": 5.0, "z": 3.0} and changed == ["y"]
    table.loc[2, "value"] = None
    with pytest.raises(ValueError, match="'z'"):
        edited_values(table)


def test_decisions_and_probabilities_in_words():
    decisions = pd.DataFrame(
        {
            "step": [1, 2],
            "state": [0, 1],
            "sensors_held": [(), ("a",)],
            "action": ["acquire", "stop"],
            "acquired": [("a",), ()],
            "cost_so_far": [1.0, 1.0],
            "prediction": [0, 1],
            "confidence": [0.6, 0.9],
        }
    )
    table = decisions_table(decisions)
    assert table["decision"].tolist() == ["buy a", "stop and classify"]
    # Each line: the cost after its decision beside the prediction after it.
    assert table["cost so far"].tolist() == [1.0, 1.0]
    assert table["predicts now"].tolist() == ["1", "1"]
    assert table["confidence"].tolist() == [0.9, 0.9]
    probs = probability_table({f"c{i}": p for i, p in enumerate([0.1] * 4 + [0.6])})
    assert len(probs) == 5 and probs["class"].iloc[0] == "c4"


def test_tradeoff_summary_speaks_of_error_gaps_in_points():
    from budgetdag_core.tradeoff import DominanceSummary
    from ui.sweep import summary_words

    summary = DominanceSummary(
        split="test",
        cost_range=(0.0, 2.5),
        area=0.035,
        mean_gap=0.014,
        all_sensor_error=0.094,
        all_sensor_cost=4.0,
        tolerance=0.005,
        dag_cost_fraction=0.51,
        hull_cost_fraction=0.67,
        cascade_cost_range=(0.0, 2.5),
        cascade_area=-0.025,
        cascade_mean_gap=-0.01,
        cascade_cost_fraction=0.59,
    )
    words = summary_words(summary)
    # Gaps between error rates are points; rates and cost shares are percentages.
    assert "lies 1.4 error points below the best mix" in words
    assert "(9.4%, give or take 0.5 error points)" in words
    assert "the DAG curve lies 1.0 error point above it" in words
    assert "the DAG needs 51% of the all-sensor cost" in words
    assert "1.4%" not in words
    # A gap that rounds to nothing is not "0.0 error points".
    from dataclasses import replace

    tiny = summary_words(replace(summary, cascade_mean_gap=-0.0003))
    assert "lies less than 0.1 error points above it" in tiny and "0.0" not in tiny


def test_a_change_shown_as_zero_has_no_colour_or_arrow():
    from ui.widgets import lower_is_better

    assert lower_is_better(0.0) == {"delta_color": "off", "delta_arrow": "off"}
    assert lower_is_better(float("nan"))["delta_arrow"] == "off"
    assert lower_is_better(0.4) == lower_is_better(-0.4) == {"delta_color": "inverse"}
