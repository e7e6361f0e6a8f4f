"""The sensor spec as an editable table (ui.spec_table)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import SensorSpec, load_demo
from ui.spec_table import (
    check_spec_table,
    spec_costs,
    spec_in_blocks,
    spec_to_table,
    suggested_cost_scale,
    typed_costs,
    with_typed_costs,
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


def test_suggested_cost_scale():
    assert suggested_cost_scale(SensorSpec.per_column(COLUMNS)) == 0.05
    assert suggested_cost_scale(load_demo("pima").spec) == pytest.approx(0.0043)
    assert suggested_cost_scale(SensorSpec.per_column(COLUMNS, cost=0)) == 1.0


def test_many_sensors_are_fine_and_a_full_dag_of_many_says_so():
    cols = [f"c{i}" for i in range(14)]
    table = spec_to_table(SensorSpec.per_column(cols))
    # Beyond 12 sensors the library's default trains them: no error, no note.
    many = check_spec_table(table, cols)
    assert many.ok and not many.errors and many.spec.n_sensors == 14
    assert not [n for n in many.notes if "14 sensors" in n]
    # 9 to 12 sensors make a full DAG of 2^n states: a note says it is slow.
    nine = check_spec_table(table.iloc[:9], cols)
    assert nine.ok
    assert any("2^9 = 512 states" in n for n in nine.notes)
    few = check_spec_table(table.iloc[:4], cols)
    assert few.ok and not [n for n in few.notes if "in no sensor" not in n]


def test_typed_costs_survive_a_regrouping():
    per_column = spec_to_table(SensorSpec.per_column(["a", "b", "c"]))
    edited = per_column.assign(cost=[4.0, 1.0, 2.5])
    typed = typed_costs(per_column, edited)
    assert typed == {("a",): 4.0, ("c",): 2.5}  # b kept the preset's cost
    # Grouped by some rule, then per column again: the typed costs are back.
    spec, kept = with_typed_costs(SensorSpec.per_column(["a", "b", "c"]), typed)
    assert spec.costs == {"a": 4.0, "b": 1.0, "c": 2.5} and kept == 2
    # A sensor of typed columns costs their sum; one with an untyped column,
    # the preset's cost.
    grouped = SensorSpec({"ac": ["a", "c"], "b": ["b"]}, {"ac": 1.0, "b": 1.0})
    spec, kept = with_typed_costs(grouped, typed)
    assert spec.costs == {"ac": 6.5, "b": 1.0} and kept == 1
    mixed = SensorSpec({"ab": ["a", "b"], "c": ["c"]}, {"ab": 1.0, "c": 1.0})
    assert with_typed_costs(mixed, typed)[0].costs == {"ab": 1.0, "c": 2.5}
    # A loaded spec's costs count as typed, by their columns.
    assert spec_costs(grouped) == {("a", "c"): 1.0, ("b",): 1.0}
    # A new row is typed; an unreadable or negative cost is not.
    more = pd.concat([edited, table(("d", ["d"], "x"), ("e", ["e"], -1.0))])
    assert set(typed_costs(per_column, more)) == {("a",), ("c",)}
