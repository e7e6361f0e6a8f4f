"""Reading, diagnosing and cleaning uploaded tables (budgetdag_core.tables)."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetdag_core.tables import (
    Fix,
    Problem,
    apply_fix,
    apply_fixes,
    class_balance,
    column_summary,
    combine_train_test,
    detect_delimiter,
    diagnose,
    fix_for,
    has_errors,
    impute,
    one_hot,
    one_hot_groups,
    read_table,
    split_train_test,
    suggest_label,
)


# ---------------------------------------------------------------- reading
@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_read_detects_delimiter(sep):
    text = (
        sep.join(["a", "b", "label"])
        + "\n"
        + "\n".join(sep.join([str(i), str(2 * i), "xy"[i % 2]]) for i in range(6))
    )
    table = read_table(text.encode())
    assert table.delimiter == sep
    assert list(table.frame.columns) == ["a", "b", "label"]
    assert table.frame["b"].tolist() == [0, 2, 4, 6, 8, 10]


def test_read_quoted_delimiters_do_not_split():
    data = b'name,value,label\n"Smith, J",1.5,a\n"Doe, A",2.5,b\n'
    table = read_table(data)
    assert table.delimiter == ","
    assert table.frame["name"].tolist() == ["Smith, J", "Doe, A"]


def test_read_decimal_comma_with_semicolons():
    table = read_table(b"x;y;label\n1,5;-2,25;a\n3,0;4,5;b\n")
    assert (table.delimiter, table.decimal) == (";", ",")
    assert table.frame["y"].tolist() == [-2.25, 4.5]
    assert "decimal comma" in table.description


def test_read_encodings():
    text = "caf\u00e9,temp\u00e9rature,label\n1,2,a\n3,4,b\n"
    bom = read_table(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert bom.encoding == "utf-8" and bom.frame.columns[0] == "caf\u00e9"
    latin = read_table(text.encode("cp1252"))
    assert latin.encoding == "cp1252" and latin.frame.columns[1] == "temp\u00e9rature"
    wide = read_table(text.encode("utf-16"))
    assert wide.encoding == "utf-16" and wide.frame.shape == (2, 3)


def test_read_gzip_and_question_marks_as_missing():
    data = gzip.compress(b"a,b,label\n1,?,x\n2,3,y\n")
    table = read_table(data)
    assert table.compressed
    assert table.frame["b"].isna().tolist() == [True, False]
    assert pd.api.types.is_numeric_dtype(table.frame["b"])


def test_read_strips_column_names():
    table = read_table(b" a , b ,label\n1,2,x\n")
    assert list(table.frame.columns) == ["a", "b", "label"]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"", "empty (0 bytes)"),
        (b"  \n\n ", "empty (no text)"),
        (b"a,b,label\n", "no data rows"),
        (b"value\n1\n2\n3\n", "only one column"),
        (b"a,b,a,label\n1,2,3,x\n", "duplicate column names: 'a' (columns 1, 3)"),
        (b"PK\x03\x04rest-of-zip", "Excel workbook"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1", "old-style Excel"),
        (b"%PDF-1.7 ...", "PDF"),
        (b"a,b\x00\x01\x02,c\n", "binary file"),
        (b"a,b,label\n1,2,x\n1,2,3,4,5\n", "as many fields as the header"),
        (b"\x1f\x8b\x08\x00garbage", "damaged"),
    ],
)
def test_read_refuses_bad_files_with_a_message(data, words):
    with pytest.raises(ValueError, match="The upload") as info:
        read_table(data, name="The upload")
    assert words in str(info.value)


def test_read_size_limit():
    with pytest.raises(ValueError, match="larger than 1 MB"):
        read_table(b"a,b\n" + b"1,2\n" * 400_000, max_bytes=2**20)
    big = gzip.compress(b"a,b\n" + b"1,2\n" * 400_000)
    with pytest.raises(ValueError, match="once decompressed"):
        read_table(big, max_bytes=2**20)


def test_gzip_bomb_is_refused_at_the_cap_with_how_to_raise_it(monkeypatch):
    # 150 MB of CSV in a ~150 KB gzip: refused at the default cap (100 MB)
    # without holding the whole expansion in memory.
    row = b"1,2,3\n"
    bomb = gzip.compress(b"a,b,label\n" + row * (150 * 2**20 // len(row)), 9)
    assert len(bomb) < 2**20
    with pytest.raises(ValueError, match="once decompressed") as info:
        read_table(bomb, name="The file 'bomb.csv.gz'")
    message = str(info.value)
    assert "'bomb.csv.gz'" in message and "100 MB" in message
    assert "BUDGETDAG_MAX_TABLE_MB" in message and "max_bytes" in message
    # The operator raises (here lowers) the cap with the environment variable.
    monkeypatch.setenv("BUDGETDAG_MAX_TABLE_MB", "0.5")
    small = gzip.compress(b"a,b\n" + b"1,2\n" * 200_000)
    with pytest.raises(ValueError, match="larger than 0.5 MB once decompressed"):
        read_table(small)
    with pytest.raises(ValueError, match="larger than 0.5 MB, the cap"):
        read_table(b"a,b\n" + b"1,2\n" * 200_000)
    # A value that is no size: a warning, and the default cap.
    monkeypatch.setenv("BUDGETDAG_MAX_TABLE_MB", "lots")
    with pytest.warns(UserWarning, match="BUDGETDAG_MAX_TABLE_MB='lots' is not a"):
        assert len(read_table(b"a,b\n" + b"1,2\n" * 200_000).frame) == 200_000


TEXT = "caf\u00e9,temp\u00e9rature,label\n1,2,a\n3,4,b\n"


@pytest.mark.parametrize(
    ("codec", "bom", "encoding"),
    [
        ("utf-16-le", b"", "utf-16"),
        ("utf-16-be", b"", "utf-16"),
        ("utf-16-le", b"\xff\xfe", "utf-16"),
        ("utf-32-le", b"", "utf-32"),
        ("utf-32-be", b"", "utf-32"),
        ("utf-32-le", b"\xff\xfe\x00\x00", "utf-32"),
        ("utf-32-be", b"\x00\x00\xfe\xff", "utf-32"),
    ],
)
def test_read_wide_encodings_with_and_without_bom(codec, bom, encoding):
    table = read_table(bom + TEXT.encode(codec))
    assert table.encoding == encoding
    assert list(table.frame.columns) == ["caf\u00e9", "temp\u00e9rature", "label"]
    assert table.frame["label"].tolist() == ["a", "b"]


def test_read_refuses_wide_text_that_does_not_decode():
    # A UTF-32 byte-order mark on a body that is not UTF-32.
    data = b"\xff\xfe\x00\x00" + b"a\x00b\x00c\x00\x00\x00\xff\xff\xff\xff"
    with pytest.raises(ValueError, match="UTF-32") as info:
        read_table(data, name="The upload")
    assert "The upload" in str(info.value) and "\x00" not in str(info.value)
    # UTF-16 (BOM) whose text holds NULs: refused, not read as NUL-filled names.
    data = "a\x00,b\x00,label\n1,2,x\n".encode("utf-16")
    with pytest.raises(ValueError, match="UTF-16 with NUL characters"):
        read_table(data, name="The upload")


def test_detect_delimiter_prefers_consistent_header():
    # Commas inside numbers split data rows 3 ways but the header once.
    assert detect_delimiter("a;b\n1,5;2,5\n3,5;4,5\n") == ";"


@settings(max_examples=30, deadline=None)
@given(
    sep=st.sampled_from([",", ";", "\t", "|"]),
    values=st.lists(
        st.tuples(
            st.integers(-1000, 1000),
            st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: round(v, 3)),
            st.sampled_from(["red", "green", "dark blue", "x,y", "p|q"]),
        ),
        min_size=1,
        max_size=12,
    ),
)
def test_read_round_trips_pandas_csv(sep, values):
    frame = pd.DataFrame(values, columns=["count", "size", "color"])
    data = frame.to_csv(sep=sep, index=False).encode()
    table = read_table(data)
    assert table.delimiter == sep
    pd.testing.assert_frame_equal(
        table.frame, frame, check_dtype=False, check_exact=False, atol=1e-9
    )


# -------------------------------------------------------------- summaries
def test_summaries():
    frame = pd.DataFrame(
        {"a": [1.0, np.nan, 3.0], "kind": ["p", "q", "p"], "Class": ["x", "y", "x"]}
    )
    summary = column_summary(frame).set_index("column")
    assert summary.loc["a", "missing"] == 1 and summary.loc["a", "numeric"]
    assert not summary.loc["kind", "numeric"] and summary.loc["kind", "distinct"] == 2
    balance = class_balance(frame["Class"])
    assert balance["class"].tolist() == ["x", "y"]
    assert balance["share"].tolist() == pytest.approx([2 / 3, 1 / 3])
    assert suggest_label(frame.columns) == "Class"
    assert suggest_label(["u", "v"]) == "v"


# -------------------------------------------------------------- diagnosis
def _clean(n=40):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "label": np.array(["x", "y"])[np.arange(n) % 2],
        }
    )


def kinds(problems):
    return {p.kind: p for p in problems}


def test_diagnose_clean_table_has_no_problems():
    assert diagnose(_clean(), "label") == []


def test_diagnose_one_class_and_missing_label_column():
    frame = _clean().assign(label="x")
    found = kinds(diagnose(frame, "label"))
    assert found["one_class"].severity == "error"
    assert "single value ('x')" in found["one_class"].message
    assert kinds(diagnose(frame, "nope"))["no_label"].severity == "error"


def test_diagnose_non_numeric_offers_fixes():
    frame = _clean().assign(color="red", amount="5")
    frame.loc[3, "amount"] = "n/a"
    p = kinds(diagnose(frame, "label"))["non_numeric"]
    assert p.severity == "error"
    assert set(p.columns) == {"color", "amount"}
    assert set(p.fixes) == {"drop_columns", "one_hot", "to_numeric"}
    assert "'amount' (e.g. 'n/a')" in p.message


def test_diagnose_missing_values_counts_rows():
    frame = _clean()
    frame.loc[[1, 2], "a"] = np.nan
    frame.loc[[2, 5], "b"] = np.inf
    p = kinds(diagnose(frame, "label"))["missing"]
    assert p.message.startswith("3 row(s)")
    assert "'a' (2), 'b' (2)" in p.message
    assert p.fixes == ("drop_missing_rows", "impute")


def test_diagnose_label_problems():
    frame = _clean()
    frame.loc[0, "label"] = None
    frame.loc[1, "label"] = "rare"
    found = kinds(diagnose(frame, "label", cv=5))
    assert found["label_missing"].fixes == ("drop_missing_label",)
    assert "'rare'" in found["rare_classes"].message
    assert "fewer than 5 rows" in found["rare_classes"].message


def test_diagnose_notes_that_do_not_block():
    frame = _clean().assign(const=1.0)
    for i in range(14):
        frame[f"extra{i}"] = np.arange(len(frame)) * i
    found = kinds(diagnose(frame, "label"))
    # Beyond 12 columns the default trains them: a note, not about n_subsets.
    assert found["many_columns"].severity == "info"
    assert "one sensor per step" in found["many_columns"].message
    assert "n_subsets" not in found["many_columns"].message
    assert "many_columns" not in kinds(diagnose(frame, "label", max_sensors=None))
    assert set(found["constant"].columns) == {"const", "extra0"}
    assert not has_errors(found.values())
    ids = _clean(60).assign(label=[f"id{i}" for i in range(60)])
    assert kinds(diagnose(ids, "label", cv=1))["many_classes"].severity == "warning"


def test_diagnose_errors_come_first():
    frame = _clean().assign(const=0.0, color="c")
    severities = [p.severity for p in diagnose(frame, "label")]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)


# ------------------------------------------------------------------ fixes
def test_one_hot():
    frame = pd.DataFrame({"c": ["r", "g", None, "r"], "v": [1, 2, 3, 4]})
    out = one_hot(frame, ["c"])
    assert sorted(out.columns) == ["c_g", "c_r", "v"]
    assert out["c_r"].tolist() == [1.0, 0.0, 0.0, 1.0]
    assert out.loc[2, ["c_g", "c_r"]].sum() == 0
    assert one_hot_groups([Fix("one_hot", ("c",))], out.columns) == {
        "c": ["c_g", "c_r"]
    }
    with pytest.raises(ValueError, match="'id' has 60 distinct values"):
        one_hot(pd.DataFrame({"id": [str(i) for i in range(60)]}), ["id"])


def test_impute_learns_from_fit_rows_only():
    frame = pd.DataFrame(
        {"a": [1.0, 3.0, np.nan, 100.0], "t": ["p", None, "p", "q"]}, index=[5, 6, 7, 8]
    )
    fit_rows = pd.Series([True, True, True, False], index=frame.index)
    out = impute(frame, ["a", "t"], fit_rows=fit_rows)
    assert out.loc[7, "a"] == 2.0  # median of 1 and 3, not of 100
    assert out.loc[6, "t"] == "p"
    with pytest.raises(ValueError, match="no values to impute"):
        impute(pd.DataFrame({"a": [np.nan, np.nan]}), ["a"])


def test_apply_fix_operations():
    frame = pd.DataFrame(
        {
            "a": [1.0, np.nan, 3.0, 4.0],
            "s": ["1", "x", "3", "4"],
            "label": ["p", "p", "q", None],
        }
    )
    assert list(apply_fix(frame, Fix("drop_columns", ("s",))).columns) == ["a", "label"]
    assert apply_fix(frame, Fix("to_numeric", ("s",)))["s"].isna().tolist() == [
        False,
        True,
        False,
        False,
    ]
    assert apply_fix(frame, Fix("drop_missing_rows", ("a",))).index.tolist() == [
        0,
        2,
        3,
    ]
    assert len(apply_fix(frame, Fix("drop_missing_label", label="label"))) == 3
    kept = apply_fix(frame, Fix("drop_rare_classes", label="label", min_count=2))
    assert kept["label"].tolist() == ["p", "p"]
    with pytest.raises(ValueError, match="'zz'"):
        apply_fix(frame, Fix("drop_columns", ("zz",)))
    with pytest.raises(ValueError, match="Unknown fix"):
        apply_fix(frame, Fix("shuffle"))
    with pytest.raises(ValueError, match="No rows are left"):
        apply_fixes(frame, [Fix("drop_rare_classes", label="label", min_count=9)])


def test_fix_for_builds_the_matching_fix():
    problem = Problem("missing", "error", "", ("a", "b"), ("impute",))
    assert fix_for(problem, "impute", "label") == Fix("impute", ("a", "b"))
    assert fix_for(problem, "drop_rare_classes", "y", cv=3) == Fix(
        "drop_rare_classes", label="y", min_count=3
    )
    assert (
        "Drop rows of the rare classes"
        in fix_for(problem, "drop_rare_classes", "y").describe()
    )


def test_cleaning_resolves_diagnosed_problems():
    frame = _clean().assign(color=["r", "r", "g", "g"] * 10)
    frame.loc[[3, 4], "a"] = np.nan
    label = "label"
    fixes = [
        fix_for(p, p.fixes[1], label)
        for p in diagnose(frame, label)
        if p.kind in ("non_numeric", "missing")
    ]
    assert [f.op for f in fixes] == ["one_hot", "impute"]
    assert diagnose(apply_fixes(frame, fixes), label) == []


# -------------------------------------------------------------- splitting
def test_split_is_stratified_and_seeded():
    frame = _clean(100)
    frame.loc[:19, "label"] = "z"
    train, test = split_train_test(frame, "label", test_fraction=0.25, random_state=3)
    assert len(test) == 25 and len(train) == 75
    assert (test["label"] == "z").sum() == 5
    again, _ = split_train_test(frame, "label", test_fraction=0.25, random_state=3)
    pd.testing.assert_frame_equal(train, again)
    with pytest.raises(ValueError, match="between 0 and 1"):
        split_train_test(frame, "label", test_fraction=1.5)


def test_combine_train_test():
    train = pd.DataFrame({"a": [1, 2], "label": ["x", "y"]})
    both, is_train = combine_train_test(train, train[["label", "a"]].iloc[:1])
    assert list(both.columns) == ["a", "label"]
    assert is_train.tolist() == [True, True, False]
    with pytest.raises(ValueError, match="lacks column\\(s\\) 'a'.*extra column"):
        combine_train_test(train, pd.DataFrame({"label": ["x"], "b": [1]}))
