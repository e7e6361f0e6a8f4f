"""Issue 56: row numbers, identifiers and label copies flagged before training;
a column that predicts the label alone warned about; a better label guess."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetdag_core.datasets import DEMOS, load_demo
from budgetdag_core.tables import (
    SUSPECT_KINDS,
    Fix,
    apply_fix,
    diagnose,
    has_errors,
    read_table,
    suggest_label,
)

TABLES = Path(__file__).resolve().parents[1] / "data" / "tables"
LEAK_KINDS = (*SUSPECT_KINDS, "strong_column")


def _features(n: int, seed: int = 0) -> pd.DataFrame:
    """Ordinary features: decimals, small whole numbers, a 0/1 flag, with a
    noisy three-class label."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    return pd.DataFrame(
        {
            "length": rng.normal(size=n) + 0.5 * y,
            "count": rng.integers(0, 6, size=n),
            "flag": rng.integers(0, 2, size=n),
            "width": rng.gamma(2.0, size=n),
            "species": np.array(["adelie", "gentoo", "chinstrap"])[y],
        }
    )


def _kinds(problems) -> dict[str, tuple[str, ...]]:
    return {p.kind: p.columns for p in problems}


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(20, 300),
    offset=st.integers(-5, 10_000),
    seed=st.integers(0, 2**16),
    name=st.text("abcdefgh_", min_size=1, max_size=8),
)
def test_any_shuffled_integer_id_column_is_flagged(n, offset, seed, name):
    frame = _features(n, seed)
    ids = np.random.default_rng(seed).permutation(n) + offset
    frame.insert(seed % 5, f"{name}_id_", ids)
    found = diagnose(frame, "species", max_sensors=None)
    assert _kinds(found)["leak"] == (f"{name}_id_",)
    leak = next(p for p in found if p.kind == "leak")
    assert leak.severity == "warning" and leak.fixes == ("leave_out",)
    assert f"'{name}_id_'" in leak.message


@settings(max_examples=20, deadline=None)
@given(n=st.integers(20, 200), seed=st.integers(0, 2**16))
def test_unique_whole_numbers_and_texts_are_identifiers(n, seed):
    rng = np.random.default_rng(seed)
    frame = _features(n, seed).assign(
        patient_id=rng.choice(10**9, size=n, replace=False),
        code=[f"P-{v}" for v in rng.choice(10**6, size=n, replace=False)],
    )
    found = diagnose(frame, "species", max_sensors=None)
    assert set(_kinds(found)["leak"]) == {"patient_id", "code"}
    message = next(p.message for p in found if p.kind == "leak")
    assert "'patient_id' holds a different whole number in every row" in message
    assert "'code' holds a different text in every row" in message


@settings(max_examples=20, deadline=None)
@given(n=st.integers(20, 200), seed=st.integers(0, 2**16))
def test_distinct_whole_numbers_with_gaps_can_be_a_measurement(n, seed):
    # An income or a count on few rows: distinct whole numbers, not in file
    # order, not named like an identifier.
    rng = np.random.default_rng(seed)
    values = rng.choice(10**6, size=n, replace=False)
    if np.all(np.diff(values) > 0):  # sorted by chance: grows row after row
        values = values[::-1]
    frame = _features(n, seed).assign(income=values)
    found = diagnose(frame, "species", max_sensors=None)
    assert "income" not in _kinds(found).get("leak", ())


def test_row_numbers_in_file_order_say_so():
    frame = _features(50)
    frame.insert(0, "rownames", range(1, 51))
    (leak,) = [p for p in diagnose(frame, "species") if p.kind == "leak"]
    assert "'rownames' numbers the rows (1, 2, 3, … in file order)" in leak.message


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(20, 300),
    seed=st.integers(0, 2**16),
    name=st.text("xyzuvw", min_size=1, max_size=6),
    as_text=st.booleans(),
    noisy=st.booleans(),
)
def test_a_label_copy_under_renaming_is_flagged(n, seed, name, as_text, noisy):
    frame = _features(n, seed)
    classes = ["adelie", "gentoo", "chinstrap"]
    new = np.random.default_rng(seed).permutation(3)
    names = [f"k{i}" for i in new] if as_text else [int(i) * 7 for i in new]
    copy = frame["species"].map(dict(zip(classes, names, strict=True)))
    if noisy and n >= 100:  # one row in a hundred or fewer differs
        copy.iloc[0] = names[(names.index(copy.iloc[0]) + 1) % 3]
    frame[name] = copy
    kinds = _kinds(diagnose(frame, "species", max_sensors=None))
    assert kinds["leak"] == (name,)


def test_an_equal_copy_says_it_equals_the_label():
    frame = _features(60).assign(answer=lambda f: f["species"])
    (leak,) = [p for p in diagnose(frame, "species") if p.kind == "leak"]
    assert "'answer' equals 'species' in 100% of rows" in leak.message


def test_a_numeric_label_copy_with_many_values_is_flagged():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=200), "y": rng.normal(size=200)})
    frame["y_scaled"] = frame["y"] * 3 + 1e-6 * rng.normal(size=200)
    assert _kinds(diagnose(frame, "y"))["leak"] == ("y_scaled",)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 400), seed=st.integers(0, 2**16))
def test_ordinary_features_are_not_flagged(n, seed):
    frame = _features(n, seed)
    assert not set(_kinds(diagnose(frame, "species"))) & set(LEAK_KINDS)


def test_a_strong_column_is_a_warning_only_and_a_weak_one_is_not_flagged():
    frame = _features(400)
    y = frame["species"].map({"adelie": 0.0, "gentoo": 1.0, "chinstrap": 2.0})
    noise = np.random.default_rng(1).normal(size=len(frame))
    frame["assay"] = y * 4 + 0.3 * noise  # nearly perfect, not a copy
    frame["weak"] = y + 2 * noise
    found = diagnose(frame, "species")
    assert not has_errors(found)
    (strong,) = [p for p in found if p.kind == "strong_column"]
    assert strong.severity == "warning" and strong.columns == ("assay",)
    assert "alone predict the label 'species'" in strong.message
    assert "largest class is right in 3" in strong.message
    assert strong.fixes == ("leave_out",)
    assert "leak" not in _kinds(found)


def test_no_strong_warning_when_one_class_dominates():
    """Always answering the largest class is right in 95 %: a column right in
    99 % is not far better."""
    rng = np.random.default_rng(0)
    y = np.where(np.arange(400) % 20 == 0, "rare", "common")
    frame = pd.DataFrame({"x": (y == "rare") * 3.0 + rng.normal(size=400) * 0.1})
    assert "strong_column" not in _kinds(diagnose(frame.assign(y=y), "y"))


def test_leave_out_removes_the_flagged_columns_in_one_step():
    frame = _features(80)
    frame.insert(0, "rownames", range(1, 81))
    frame["answer"] = frame["species"].str.upper()
    (leak,) = [p for p in diagnose(frame, "species") if p.kind == "leak"]
    assert leak.columns == ("rownames", "answer")
    fix = Fix("leave_out", leak.columns)
    assert fix.describe() == "Leave out of training: 'rownames', 'answer'"
    cleaned = apply_fix(frame, fix)
    assert "rownames" not in cleaned and "answer" not in cleaned
    assert not set(_kinds(diagnose(cleaned, "species"))) & set(LEAK_KINDS)


def test_the_checks_are_deterministic():
    frame = _features(300)
    frame["assay"] = frame["length"] * 0 + frame["species"].factorize()[0] * 2.0
    assert diagnose(frame, "species") == diagnose(frame, "species")


@pytest.mark.parametrize("name", list(DEMOS))
def test_the_demos_have_no_false_positives(name):
    demo = load_demo(name)
    frame = pd.concat([demo.train, demo.test], ignore_index=True)
    found = diagnose(frame, demo.label, max_sensors=None)
    assert not set(_kinds(found)) & set(LEAK_KINDS), [p.message for p in found]
    assert suggest_label(frame) == demo.label


@pytest.mark.parametrize("path", sorted(TABLES.glob("*.*")), ids=lambda p: p.name)
def test_the_shipped_tables_have_no_false_positives(path):
    if path.suffix == ".py":
        return
    try:
        table = read_table(path)
    except ValueError:
        return  # a file made to be refused
    found = diagnose(table.frame, table.label, cv=1, max_sensors=None)
    assert not set(_kinds(found)) & set(LEAK_KINDS), [p.message for p in found]


# ----------------------------------------------------------------- the label
def _penguins(n: int = 60) -> pd.DataFrame:
    """As the R data package writes them: row names first, the year last."""
    frame = _features(n).rename(columns={"species": "kind"})
    frame.insert(0, "rownames", range(1, n + 1))
    frame["island"] = np.array(["biscoe", "dream"])[np.arange(n) % 2]
    frame["year"] = 2007 + np.arange(n) % 3
    return frame


def test_the_label_guess_never_takes_an_id_or_a_year():
    frame = _penguins()
    assert suggest_label(frame) == "island"  # the last text column
    assert suggest_label(frame.rename(columns={"kind": "species"})) == "species"
    assert suggest_label(frame.rename(columns={"kind": "Target_Class"})) == (
        "Target_Class"
    )
    numeric = frame.drop(columns=["kind", "island"])
    assert suggest_label(numeric) == "width"  # not 'year', not 'rownames'
    assert suggest_label(list(numeric.columns)) == "year"  # names only: last


def test_read_table_guesses_species_over_year(tmp_path):
    frame = _penguins().rename(columns={"kind": "species"})
    frame.to_csv(tmp_path / "penguins.csv", index=False)
    table = read_table(tmp_path / "penguins.csv")
    assert (table.label, table.label_guessed) == ("species", True)
    assert read_table(tmp_path / "penguins.csv", label="year").label == "year"
