from __future__ import annotations

import json

import pytest

from budgetdag_core import SensorSpec


def test_per_column_and_properties() -> None:
    spec = SensorSpec.per_column(["a", "b", "c"], cost=2.0)
    assert spec.names == ("a", "b", "c")
    assert spec.columns == ["a", "b", "c"]
    assert spec.total_cost == 6.0
    assert [list(ix) for ix in spec.column_indices()] == [[0], [1], [2]]


def test_per_column_cost_mapping() -> None:
    spec = SensorSpec.per_column(["a", "b"], cost={"a": 1, "b": 3})
    assert list(spec.cost_vector) == [1.0, 3.0]


def test_by_prefix_groups_columns() -> None:
    spec = SensorSpec.by_prefix(["band1_x", "band1_y", "band2_x"])
    assert spec.groups == {"band1": ["band1_x", "band1_y"], "band2": ["band2_x"]}


def test_json_round_trip(tmp_path) -> None:
    spec = SensorSpec({"s": ["a", "b"], "t": ["c"]}, {"s": 1.5, "t": 0})
    assert SensorSpec.from_json(spec.to_json()) == spec
    path = tmp_path / "spec.json"
    spec.to_json(path)
    assert SensorSpec.from_file(path) == spec
    assert json.loads(path.read_text())["sensors"][0]["name"] == "s"


@pytest.mark.parametrize(
    ("groups", "costs", "message"),
    [
        ({"s": ["a"], "t": ["a"]}, {"s": 1, "t": 1}, "'a' is in two sensors"),
        ({"s": ["a"]}, {"s": -1}, "negative"),
        ({"s": ["a"]}, {"s": float("nan")}, "not finite"),
        ({"s": ["a"]}, {"s": float("inf")}, "not finite"),
        ({"s": ["a"]}, {"s": "x"}, "the text 'x', not a number"),
        ({"s": ["a"]}, {}, "No cost"),
        ({"s": []}, {"s": 1}, "no columns"),
        ({}, {}, "no sensors"),
    ],
)
def test_bad_specs_name_the_problem(groups, costs, message) -> None:
    with pytest.raises(ValueError, match=message):
        SensorSpec(groups, costs)


def test_bad_json() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        SensorSpec.from_json("{not json")
    with pytest.raises(ValueError, match="'sensors'"):
        SensorSpec.from_json('{"foo": 1}')


def test_check_columns_names_missing_column() -> None:
    spec = SensorSpec({"s": ["a", "zz"]}, {"s": 1})
    with pytest.raises(ValueError, match="'zz'"):
        spec.check_columns(["a", "b"])
