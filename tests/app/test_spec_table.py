"""The sensor spec as an editable table (ui.spec_table)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import SensorSpec, load_demo
from ui.spec_table import (
    check_spec_table,
    spec_in_blocks,
    spec_to_table,
    suggest_spec,
    suggested_cost_scale,
)

COLUMNS = ["a", "b", "c", "d"]


def table(*rows):
    return pd.DataFrame(rows, columns=["sensor", "columns", "cost"])


def test_round_trip_of_a_demo_spec():
    spec = load_demo("pima").spec
    check = check_spec_table(spec_to_table(spec), spec.columns)
    assert check.ok and check.errors == [] and check.unassigned == []
    assert check.spec == spec


def test_columns_as_text_and_unassigned_note():
    check = check_spec_table(table(("s1", "a, b", 2), ("s2", ["c"], 0.5)), COLUMNS)
    assert check.spec.groups == {"s1": ["a", "b"], "s2": ["c"]}
    assert check.spec.costs == {"s1": 2.0, "s2": 0.5}
    assert check.unassigned == ["d"]
    assert any("in no sensor and will be ignored: 'd'" in n for n in check.notes)


def test_blank_rows_are_skipped():
    check = check_spec_table(
        table(("s1", ["a"], 1), (None, None, None), ("", [], np.nan)), COLUMNS
    )
    assert check.ok and check.spec.names == ("s1",)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [("s1", ["a", "b"], 1), ("s2", ["b"], 1)],
            "Column 'b' is in two sensors: 's1' and 's2'",
        ),
        ([("s1", ["a"], -2)], "Sensor 's1' has a negative cost (-2)"),
        ([("s1", ["a"], None)], "Sensor 's1' has no valid cost"),
        ([("s1", ["a"], "cheap")], "Sensor 's1' has no valid cost"),
        ([("s1", ["zz"], 1)], "Sensor 's1' uses column 'zz', which is not in the data"),
        ([("s1", ["label"], 1)], "which is the label column"),
        ([(None, ["a"], 1)], "Row 1 has no sensor name"),
        ([("s1", ["a"], 1), ("s1", ["b"], 1)], "Two sensors are named 's1'"),
        ([("s1", [], 1)], "Sensor 's1' has no columns"),
        ([], "There are no sensors"),
    ],
)
def test_errors_name_the_problem(rows, message):
    check = check_spec_table(table(*rows), COLUMNS, label="label")
    assert not check.ok and check.spec is None
    assert any(message in e for e in check.errors), check.errors


def test_too_many_sensors_explains_subset_selection():
    cols = [f"x{i}" for i in range(13)]
    check = check_spec_table(spec_to_table(SensorSpec.per_column(cols)), cols)
    assert not check.ok
    assert "13 sensors" in check.errors[0]
    assert "subset selection (n_subsets=t)" in check.errors[0]


def test_notes_for_slow_dags_and_free_sensors():
    cols = [f"x{i}" for i in range(10)]
    check = check_spec_table(spec_to_table(SensorSpec.per_column(cols, cost=0)), cols)
    assert check.ok
    assert any("2^10 = 1024 states" in n for n in check.notes)
    assert any("All costs are 0" in n for n in check.notes)


def test_missing_table_columns():
    check = check_spec_table(pd.DataFrame({"sensor": ["s"]}), COLUMNS)
    assert not check.ok and "lacks column(s)" in check.errors[0]


def test_blocks():
    spec = spec_in_blocks(list("abcdefg"), 3, cost=2)
    assert [len(v) for v in spec.groups.values()] == [3, 2, 2]
    assert spec.columns == list("abcdefg")
    assert set(spec.costs.values()) == {2.0}
    assert spec_in_blocks(["a", "b"], 5).n_sensors == 2
    with pytest.raises(ValueError, match="no columns"):
        spec_in_blocks([], 2)


def test_suggest_spec():
    assert suggest_spec(COLUMNS).groups == {c: [c] for c in COLUMNS}
    prefixed = [f"band{b}_{p}" for b in range(3) for p in range(4)]
    assert suggest_spec(prefixed).names == ("band0", "band1", "band2")
    plain = [f"x{i}" for i in range(20)]
    assert suggest_spec(plain).n_sensors == 8
    together = suggest_spec(["age", "c_r", "c_g"], together={"c": ["c_r", "c_g"]})
    assert together.groups == {"age": ["age"], "c": ["c_r", "c_g"]}


def test_suggested_cost_scale():
    assert suggested_cost_scale(SensorSpec.per_column(COLUMNS)) == 0.05
    assert suggested_cost_scale(load_demo("pima").spec) == pytest.approx(0.0043)
    assert suggested_cost_scale(SensorSpec.per_column(COLUMNS, cost=0)) == 1.0


def test_many_sensors_need_subsets_and_are_fine_with_them():
    cols = [f"c{i}" for i in range(14)]
    table = spec_to_table(SensorSpec.per_column(cols))
    blocked = check_spec_table(table, cols)
    assert not blocked.ok and blocked.needs_subsets
    assert "14 sensors" in blocked.errors[0] and "n_subsets" in blocked.errors[0]
    allowed = check_spec_table(table, cols, n_subsets=6)
    assert allowed.ok and allowed.needs_subsets and not allowed.errors
    assert allowed.spec.n_sensors == 14
    note = next(n for n in allowed.notes if "14 sensors" in n)
    assert "6 sensor subsets" in note and "2^6 = 64" in note
    few = check_spec_table(table.iloc[:4], cols, n_subsets=6)
    assert few.ok and not few.needs_subsets
    assert not any("subsets" in n for n in few.notes if "in no sensor" not in n)
