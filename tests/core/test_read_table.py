"""read_table's sources, labels and findings; the one dataset type.

The corpus test (tests/app/test_one_reader.py) checks that every front end
reads a file alike; these check what the reader itself promises.
"""

from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import Dataset, SensorSpec, Table, load_demo, read_table
from budgetdag_core.datasets import Demo
from budgetdag_core.tables import diagnose

TEXT = b"a;b;class\n1,5;2;x\n3,0;;y\n-2,25;7;x\n"


def test_a_path_bytes_and_open_files_read_alike(tmp_path):
    path = tmp_path / "m.csv"
    path.write_bytes(TEXT)
    readings = [
        read_table(path),
        read_table(str(path)),
        read_table(TEXT, name="The file 'm.csv'"),
        read_table(io.BytesIO(TEXT), name="The file 'm.csv'"),
        read_table(io.StringIO(TEXT.decode()), name="The file 'm.csv'"),
    ]
    with path.open("rb") as fh:
        readings.append(read_table(fh))
    for table in readings:
        pd.testing.assert_frame_equal(table.frame, readings[0].frame)
        assert table.name == "The file 'm.csv'"
        assert (table.delimiter, table.decimal, table.label) == (";", ",", "class")
    assert readings[0].frame["a"].tolist() == [1.5, 3.0, -2.25]


def test_the_label_is_named_or_guessed():
    table = read_table(b"u,v,w\n1,2,p\n3,4,q\n")
    assert (table.label, table.label_guessed) == ("w", True)
    assert table.X.columns.tolist() == ["u", "v"]
    named = read_table(b"u,v,w\n1,2,p\n3,4,q\n", label="u")
    assert (named.label, named.label_guessed) == ("u", False)
    assert named.y.tolist() == [1, 3]
    with pytest.raises(ValueError, match="Label column 'nope' is not in the file"):
        read_table(b"u,v,w\n1,2,p\n", label="nope")


def test_features_only_reads_one_column_without_a_label():
    with pytest.raises(ValueError, match="has only one column"):
        read_table(b"v\n1\n2\n")
    table = read_table(b"v\n1\n2\n", features_only=True)
    assert table.label is None and table.frame["v"].tolist() == [1, 2]
    with pytest.raises(ValueError, match="without a label column"):
        table.y  # noqa: B018
    with pytest.raises(ValueError, match="without a label column"):
        table.to_dataset()


def test_a_path_is_read_only_as_a_regular_file_within_the_cap(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        read_table(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        read_table(tmp_path / "missing.csv")
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.csv"
        os.mkfifo(fifo)
        with pytest.raises(ValueError, match="not a regular file"):
            read_table(fifo)
    big = tmp_path / "big.csv"
    big.write_bytes(b"a,b\n" + b"1,2\n" * 1000)
    cap = "larger than 0.000953674 MB, the cap on tables"
    with pytest.raises(ValueError, match=f"The file 'big.csv' is {cap}"):
        read_table(big, max_bytes=1000)
    with pytest.raises(ValueError, match=f"The file is {cap}"):
        read_table(io.BytesIO(big.read_bytes()), max_bytes=1000)
    with pytest.raises(TypeError, match="a path, bytes or an open file"):
        read_table(123)


def test_rows_longer_than_the_header_are_refused_not_shifted():
    # pandas alone would read the first column as the index, shifting every
    # value one column left: silently wrong.
    with pytest.raises(ValueError, match="more fields than the header's 3"):
        read_table(b"a,b,label\n1,2,x,5\n3,4,y,6\n")
    # An empty field after a trailing separator is no data: dropped.
    table = read_table(b"a,b,label\n1,2,x,\n3,4,y,\n")
    assert table.frame.columns.tolist() == ["a", "b", "label"]
    assert table.frame["a"].tolist() == [1, 3]


def test_findings_name_columns_and_rows():
    table = read_table(b"a,b,label\n1,,x\n2,oops,y\nn/a,4,\n")
    found = {p.kind: p.message for p in table.findings(cv=1)}
    assert "'b' (e.g. 'oops') in row 3" in found["non_numeric"]
    assert "'a' row 4; 'b' row 2 (the header is row 1)" in found["missing"]
    assert "have no value in the label column 'label': row 4" in found["label_missing"]
    # Only the columns asked for are checked (a spec's columns).
    kinds = {p.kind for p in table.findings(cv=1, columns=["a"])}
    assert "non_numeric" not in kinds and "missing" in kinds
    with pytest.raises(ValueError, match="The file: .*not numeric"):
        table.check(cv=1)


def test_many_bad_rows_are_counted_not_all_named():
    rows = b"".join(b"%d,,%d\n" % (i, i % 2) for i in range(30))
    problems = diagnose(read_table(b"a,b,label\n" + rows).frame, "label")
    message = next(p.message for p in problems if p.kind == "missing")
    assert "'b' rows 2, 3, 4, 5, 6 and 25 more" in message


def test_row_names_can_say_which_file():
    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0], "label": ["x", "y", "x"]})
    problems = diagnose(
        frame, "label", cv=1, row_names=lambda rows: [f"{r} of t.csv" for r in rows]
    )
    message = next(p.message for p in problems if p.kind == "missing")
    assert "'a' row 1 of t.csv." in message and "header" not in message


def test_a_table_becomes_a_dataset():
    rows = b"".join(b"%d,%d,%s\n" % (i, i % 3, b"xy"[i % 2 :][:1]) for i in range(40))
    table = read_table(rows.join([b"u,v,label\n", b""]), name="The file 'd.csv'")
    data = table.to_dataset(test_fraction=0.25, random_state=1)
    assert isinstance(data, Dataset) and data.kind == "table"
    assert (len(data.train), len(data.test), data.name) == (30, 10, "d.csv")
    assert data.spec.names == ("u", "v") and data.X_train.columns.tolist() == ["u", "v"]
    assert data.y("test").isin(["x", "y"]).all()
    with pytest.raises(ValueError, match="not numeric"):
        read_table(b"u,v,label\n1,a,x\n2,b,y\n").to_dataset()


def test_demo_is_the_dataset_type_and_a_recipe_pickles_small():
    assert Demo is Dataset
    demo = load_demo("pima")
    assert isinstance(demo, Dataset) and demo.kind == "demo"
    assert demo.X("train").equals(demo.X_train)
    assert sorted(demo.features) == sorted(demo.spec.columns)
    assert len(pickle.dumps(demo)) > 20_000  # rows and all
    kept = Dataset(**{**vars(demo), "recipe": {"name": "pima"}})
    data = pickle.dumps(kept)
    assert len(data) < 2_000
    back = pickle.loads(data)
    assert back.train.equals(demo.train) and back.token == kept.token
    assert back.recipe == {"name": "pima"}
    with pytest.raises(ValueError, match="part must be"):
        demo.X("validation")


def test_equal_rows_give_equal_tokens():
    frame = pd.DataFrame({"a": [1.0, 2.0], "label": [0, 1]})
    spec = SensorSpec.per_column(["a"])
    one = Dataset("t", frame, frame.copy(), "label", spec, kind="table")
    two = Dataset("t", frame.copy(), frame.copy(), "label", spec, kind="table")
    changed = frame.assign(a=[1.0, 3.0])
    other = Dataset("t", frame, changed, "label", spec, kind="table")
    assert one.token == two.token != other.token
    assert isinstance(read_table(b"a,label\n1,0\n"), Table)


def test_hostile_headers_get_short_messages():
    repeated = r"'1' \(columns 1, 2, .* and 199992 more\)"
    with pytest.raises(ValueError, match=repeated) as info:
        read_table(b"1," * 200_000 + b"\n")
    assert len(str(info.value)) < 300
    many = b",".join(b"c%d,c%d" % (i, i) for i in range(20)) + b"\n"
    with pytest.raises(ValueError, match="and 15 more names") as info:
        read_table(many)
    # A name longer than the csv module's field limit (128 KB) is read.
    table = read_table(b"a" * 300_000 + b",b,label\n1,2,x\n")
    assert table.frame.columns[1:].tolist() == ["b", "label"]


def test_old_mac_line_ends_read_as_any_other():
    table = read_table(b"a;b;label\r1,5;2;x\r3,5;4;y\r")
    assert table.frame["a"].tolist() == [1.5, 3.5] and table.decimal == ","


@pytest.mark.parametrize("bad", [float("nan"), -1, 0, "1000", True])
def test_numeric_parameters_are_checked_by_name(bad):
    with pytest.raises(ValueError, match="max_bytes must be a positive integer"):
        read_table(b"a,b\n1,2\n", max_bytes=bad)
    with pytest.raises(ValueError, match="cv must be a positive integer"):
        read_table(b"a,b\n1,2\n").findings(cv=bad)


def test_a_huge_cell_label_or_name_is_quoted_cut(tmp_path):
    """Messages quote user values cut short (short_repr), never whole."""
    from budgetdag_core import BudgetDAGClassifier
    from budgetdag_core.cli import main

    huge = "x" * 10**6
    rows = "\n".join(f"{i % 7},{i % 3},{'ab'[i % 2]}" for i in range(40))
    path = tmp_path / "t.csv"
    path.write_text(f"a,b,label\n{huge},1,a\n{rows}\n")
    with pytest.raises(ValueError, match="'xxx.*\\.\\.\\.") as info:
        read_table(path, label="label").check(cv=2)
    assert len(str(info.value)) < 1000
    findings = read_table(path, label="label").findings(cv=2)
    assert all(len(p.message) < 1000 for p in findings)
    frame = pd.DataFrame({"a": [huge] + [1.0] * 9, "b": np.arange(10.0)})
    y = pd.Series([0, 1] * 5)
    for X, target in [
        (frame, y),  # a huge cell
        (frame.assign(a=1.0), y.astype(object).where(y == 0, huge)),  # label
        (frame.rename(columns={"a": huge}), y),  # a huge column name
    ]:
        with pytest.raises(ValueError) as info:
            BudgetDAGClassifier(cv=2).fit(X, target)
        assert len(str(info.value)) < 1000, str(info.value)[:200]
    SensorSpec({"a": ["a"]}, {"a": 1}).to_json(tmp_path / "s.json")
    out = str(tmp_path / "m.pkl")
    args = [
        "train",
        str(path),
        "--label",
        "label",
        "--sensors",
        str(tmp_path / "s.json"),
    ]
    assert main([*args, "--out", out]) == 2


@pytest.mark.parametrize(
    ("encoding", "text", "named"),
    [
        ("shift_jis", "温度,湿度,ラベル\n1.5,2,あり\n3,4,なし\n", "Shift-JIS"),
        ("shift_jis", "温度,湿度,label\n1.5,2,a\n3,4,b\n", "Shift-JIS"),
        ("gbk", "温度,湿度,标签\n1.5,2,是\n3,4,否\n", "GBK"),
        ("euc_kr", "온도,습도,라벨\n1.5,2,예\n3,4,아니\n", "EUC-KR"),
    ],
)
def test_east_asian_encodings_are_refused_naming_the_encoding(encoding, text, named):
    """Not UTF-8, and gibberish as Windows-1252: refused, naming the encoding
    problem rather than the columns it would garble."""
    with pytest.raises(ValueError, match="not UTF-8, and its encoding cannot") as info:
        read_table(text.encode(encoding), name="The file 'j.csv'")
    assert named in str(info.value) and "Save it as UTF-8" in str(info.value)


@pytest.mark.parametrize(
    "header",
    [
        "précision;durée;classe",
        "ação;informação;classe",
        "Größe;Übergröße;classe",
        "año;¿señal?;classe",
        "prix €;“temp” °C;classe",
        "cœur;naïve – dash…;classe",
    ],
)
def test_western_8bit_text_still_reads_as_windows_1252(header):
    data = f"{header}\n1,5;2;oui\n3,0;4;non\n".encode("cp1252")
    table = read_table(data)
    assert table.encoding == "cp1252"
    assert list(table.frame.columns) == header.split(";")
    assert table.frame.iloc[:, 0].tolist() == [1.5, 3.0]


# ------------------------------------------------------- a number to predict
def test_guess_task_reads_numbers_as_regression_and_codes_as_classes():
    from budgetdag_core.tables import guess_task

    diabetes = load_demo("diabetes")
    assert guess_task(diabetes.train[diabetes.label]) == "regression"
    for name in ("pima", "landsat", "toy"):  # whole-number or 0/1 classes
        demo = load_demo(name)
        assert guess_task(demo.train[demo.label]) == "classification", name
    assert guess_task(pd.Series([True, False] * 30)) == "classification"
    assert guess_task(pd.Series(["a", "b"] * 30)) == "classification"
    assert guess_task(pd.Series([np.nan, 1.5, 2.0])) == "regression"
    assert guess_task(pd.Series([], dtype=float)) == "classification"


def test_a_regression_target_gets_no_class_checks_and_no_rare_class_fix():
    diabetes = load_demo("diabetes")
    frame = diabetes.train
    as_classes = {p.kind for p in diagnose(frame, "progression", cv=5)}
    assert {"many_classes", "rare_classes"} <= as_classes
    assert diagnose(frame, "progression", cv=5, task="regression") == []
    # What regression refuses: text, a constant, missing targets.
    words = frame.assign(progression=["x"] + [1.0] * (len(frame) - 1))
    [problem] = diagnose(words, "progression", task="regression")
    assert problem.kind == "target_not_numeric" and "'x'" in problem.message
    flat = frame.assign(progression=3.0)
    assert [p.kind for p in diagnose(flat, "progression", task="regression")] == [
        "one_class"
    ]
    holes = frame.assign(progression=[np.nan] + [1.0, 2.0] * 165)
    [problem] = diagnose(holes, "progression", task="regression")
    assert problem.kind == "label_missing" and problem.fixes == ("drop_missing_label",)
    with pytest.raises(ValueError, match="task must be"):
        diagnose(frame, "progression", task="ranking")
