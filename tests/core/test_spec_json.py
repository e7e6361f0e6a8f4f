"""Sensor specs from untrusted JSON (issue 28, case 1): text is never a path,
every malformed spec is a ValueError naming the problem, in bounded time."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, SensorSpec
from budgetdag_core.sensors import MAX_SPEC_JSON_CHARS

GOOD = {"sensors": [{"name": "a", "columns": ["x"], "cost": 2}]}


def _spec_with_cost(cost: str) -> str:
    return '{"sensors": [{"name": "a", "columns": ["x"], "cost": ' + cost + "}]}"


@pytest.mark.parametrize("text", ["/etc", "/no/such/file", "/dev/zero", "spec.json"])
def test_text_is_never_opened_as_a_path(text) -> None:
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"from_file\(path\)") as info:
        SensorSpec.from_json(text)
    assert time.perf_counter() - start < 1
    message = str(info.value)
    assert "not start with '{'" in message
    assert "Errno" not in message and "directory" not in message


def test_a_path_object_is_pointed_to_from_file(tmp_path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(GOOD))
    with pytest.raises(ValueError, match=r"not a path: use SensorSpec.from_file"):
        SensorSpec.from_json(path)
    assert SensorSpec.from_file(path).costs == {"a": 2.0}


@pytest.mark.parametrize("prefix", ["\ufeff", "\ufeff \n", "  \r\n"])
def test_byte_order_mark_and_white_space_are_ignored(prefix, tmp_path) -> None:
    text = prefix + json.dumps(GOOD)
    assert SensorSpec.from_json(text).names == ("a",)
    assert SensorSpec.from_json(text.encode("utf-8")).names == ("a",)
    path = tmp_path / "excel.json"
    path.write_bytes(text.encode("utf-8"))  # as Notepad/Excel save UTF-8 with BOM
    assert SensorSpec.from_file(path).names == ("a",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"name": "a", "columns": ["x"]}]', "is a JSON array; expected an object"),
        ("", "empty"),
        ("{" * 100_000, "nested 100000 levels deep"),
        ('{"a":' * 50_000 + "1" + "}" * 50_000, "nested 50000 levels deep"),
        ('{"groups": [["a", ["x"]]], "costs": {"a": 1}}', "'groups' must be an object"),
        ('{"groups": {"a": ["x"]}, "costs": [1]}', "'costs' must be an object"),
        ('{"sensors": {"a": ["x"]}}', "'sensors' must be a list"),
        ('{"sensors": ["a"]}', "entry 0 must have 'name' and 'columns'"),
        ('{"sensors": [{"name": [1], "columns": ["x"]}]}', "name of sensor entry 0"),
        ('{"sensors": [{"name": "a", "columns": [["x"]]}]}', "not a name: \\['x'\\]"),
        (_spec_with_cost('"1"'), "sensor 'a' is the text '1', not a number"),
        (_spec_with_cost("true"), "sensor 'a' is not a number: True"),
        (_spec_with_cost("1" + "0" * 400), "sensor 'a' is too large for a float64"),
        (_spec_with_cost("1" + "0" * 5000), "sensor 'a' is not finite"),
        (_spec_with_cost("1e400"), "sensor 'a' is not finite"),
        (_spec_with_cost("NaN"), "sensor 'a' is not finite"),
        ("{not json", "not valid JSON"),
        (" " * (MAX_SPEC_JSON_CHARS + 1), "too large"),
    ],
)
def test_malformed_specs_name_the_problem(text, message) -> None:
    start = time.perf_counter()
    with pytest.raises(ValueError, match=message):
        SensorSpec.from_json(text)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("kind", ["directory", "missing", "fifo", "device", "big"])
def test_from_file_reads_regular_files_only(kind, tmp_path) -> None:
    path = {"directory": tmp_path, "device": Path("/dev/zero")}.get(
        kind, tmp_path / "spec.json"
    )
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading would block without a writer
    elif kind == "big":
        path.write_bytes(b" " * (MAX_SPEC_JSON_CHARS + 1))
    expected = {
        "directory": "is a directory",
        "missing": "does not exist",
        "fifo": "not a regular file",
        "device": "not a regular file",
        "big": "larger than",
    }[kind]
    start = time.perf_counter()
    with pytest.raises(ValueError, match=expected) as info:
        SensorSpec.from_file(path)
    assert time.perf_counter() - start < 5
    assert str(path) in str(info.value)


def test_from_file_names_the_file_in_content_errors(tmp_path) -> None:
    path = tmp_path / "array.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"array\.json.*JSON array"):
        SensorSpec.from_file(path)
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ValueError, match="not UTF-8"):
        SensorSpec.from_file(path)


@pytest.mark.parametrize(
    "cost", ["1", b"1", True, None, [1], 10**400, float("inf"), complex(1, 0)]
)
def test_constructor_refuses_costs_that_are_not_finite_numbers(cost) -> None:
    with pytest.raises(ValueError, match="sensor 'a'"):
        SensorSpec({"a": ["x"]}, {"a": cost})


def test_costs_are_floats_after_validation() -> None:
    spec = SensorSpec({"a": ["x"], "b": ["y"]}, {"a": 1, "b": np.int64(3)})
    assert spec.costs == {"a": 1.0, "b": 3.0}
    assert all(type(c) is float for c in spec.costs.values())
    per_column = SensorSpec.per_column(["x"], {"x": np.float32(0.5)})
    assert type(per_column.costs["x"]) is float
    with pytest.raises(ValueError, match="the text '2'"):
        SensorSpec.per_column(["x"], "2")


def test_estimator_reads_json_text_not_paths(tmp_path) -> None:
    X = pd.DataFrame({"x": np.arange(20.0)})
    y = np.arange(20) % 2
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(GOOD))
    with pytest.raises(ValueError, match=r"from_file\(path\)"):
        BudgetDAGClassifier(str(path), cv=2).fit(X, y)
    model = BudgetDAGClassifier(json.dumps(GOOD), cv=2, random_state=0).fit(X, y)
    assert model.spec_.costs == {"a": 2.0}


def test_cost_given_as_text_is_refused_before_a_session_could_crash() -> None:
    # Main accepted "1", fitted, saved and loaded it; session.observe then
    # raised TypeError adding text to a float.
    with pytest.raises(ValueError, match="the text '1'"):
        SensorSpec.from_dict({"groups": {"a": ["x"]}, "costs": {"a": "1"}})
