"""Data page: demos, CSV upload, a message for every bad input, cleaning fixes."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest
from app_helpers import assert_clean, finish_jobs, page, prefill, texts

from ui import state


def small_csv(n: int = 40, seed: int = 0, **extra) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 70, n),
            "lab_a": rng.normal(size=n).round(3),
            "lab_b": rng.normal(size=n).round(3),
            "label": np.array(["sick", "healthy"])[np.arange(n) % 2],
        }
    )
    return frame.assign(**extra)


def upload(at, data: bytes, name: str = "data.csv"):
    if at.session_state[state.W_SOURCE] != "upload":
        at.radio(key=state.W_SOURCE).set_value("upload").run()
    at.file_uploader(key=state.W_UPLOAD).set_value((name, data, "text/csv")).run()
    assert_clean(at)
    return at


def use_button(at):
    return at.button(key=state.W_USE_UPLOAD)


def test_demo_choice_loads_the_demo_and_resets_sensors(app):
    at = app.run()
    at.selectbox(key=state.W_DEMO).set_value("letter").run()
    assert_clean(at)
    dataset = at.session_state[state.DATASET]
    assert dataset.name == "letter"
    assert dataset.spec.names == ("box", "moments", "edges")
    assert at.session_state[state.SPEC_TABLE]["sensor"].tolist() == [
        "box",
        "moments",
        "edges",
    ]
    said = texts(at, "success")
    assert len(said) == 1 and said[0].startswith("Loaded the letter demo."), said


def test_upload_a_small_csv_and_use_it(app):
    at = upload(app.run(), small_csv().to_csv(index=False).encode())
    assert any("ready for training" in t for t in texts(at, "success"))
    assert at.selectbox(key=state.W_LABEL).value == "label"
    assert "comma-separated" in " ".join(c.value for c in at.caption)
    use_button(at).click().run()
    assert_clean(at)
    dataset = at.session_state[state.DATASET]
    assert (dataset.name, dataset.kind, dataset.label) == (
        "data.csv",
        "upload",
        "label",
    )
    assert len(dataset.train) == 30 and len(dataset.test) == 10
    assert dataset.features == ["age", "lab_a", "lab_b"]
    assert dataset.spec.names == ("age", "lab_a", "lab_b")
    assert any("Now using data.csv" in t for t in texts(at, "success"))


def test_uploaded_data_trains_end_to_end(app):
    at = upload(app.run(), small_csv(60).to_csv(index=False).encode())
    use_button(at).click().run()
    at.switch_page("pages/train.py").run()
    at.number_input(key=state.W_CV).set_value(3).run()
    at.button(key=state.W_TRAIN).click().run()
    finish_jobs(at)
    assert_clean(at)
    assert not at.error, texts(at, "error")
    run = at.session_state[state.RUN]
    assert run.metrics["n_samples"] == 15
    assert run.model.spec_.names == ("age", "lab_a", "lab_b")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b"PK\x03\x04\x14\x00\x06\x00",
            "is an Excel workbook (.xlsx) or a ZIP archive",
        ),
        (b"\x00\x01\x02\x03binary", "is a binary file, not a CSV text file"),
        (b"", "is empty (0 bytes)"),
        (b"age,lab_a,label\n", "has a header but no data rows"),
        (b"only\n1\n2\n3\n", "has only one column"),
        (b"a,b,a,label\n1,2,3,x\n4,5,6,y\n", "duplicate column names: 'a'"),
        (b"a,b,label\n1,2,x\n1,2,3,y\n", "as many fields as the header"),
    ],
    ids=[
        "xlsx",
        "binary",
        "empty",
        "header-only",
        "one-column",
        "duplicates",
        "ragged",
    ],
)
def test_unreadable_files_get_a_message(app, data, message):
    at = upload(app.run(), data, "bad.csv")
    errors = texts(at, "error")
    assert any(message in e and "'bad.csv'" in e for e in errors), errors
    assert any("What to do" in e for e in errors)
    assert at.session_state[state.DATASET].name == "landsat"  # nothing replaced
    at.run()  # the refused file is remembered, not re-read, and still explained
    assert_clean(at)
    assert any(message in e for e in texts(at, "error"))


def test_label_with_one_class(app):
    frame = small_csv().assign(label="sick")
    at = upload(app.run(), frame.to_csv(index=False).encode())
    assert any("single value ('sick')" in e for e in texts(at, "error"))
    assert use_button(at).disabled
    at.selectbox(key=state.W_LABEL).set_value("age").run()
    assert_clean(at)
    assert not any("single value" in e for e in texts(at, "error"))


@pytest.mark.parametrize("fix", ["one_hot", "drop_columns"])
def test_non_numeric_columns_are_dropped_or_one_hot_encoded(app, fix):
    frame = small_csv(smoker=["yes", "no", "no", "yes"] * 10)
    at = upload(app.run(), frame.to_csv(index=False).encode())
    assert any("'smoker' (e.g. 'yes')" in e for e in texts(at, "error"))
    assert use_button(at).disabled
    at.button(key=f"{state.W_FIX}non_numeric_{fix}").click().run()
    assert_clean(at)
    assert not at.error
    work = at.session_state[state.UPLOAD].work
    expected = {"one_hot": {"smoker_no", "smoker_yes"}, "drop_columns": set()}[fix]
    assert {c for c in work.columns if c.startswith("smoker")} == expected
    use_button(at).click().run()
    spec = at.session_state[state.DATASET].spec
    if fix == "one_hot":  # the 0/1 columns of one original column form one sensor
        assert spec.groups["smoker"] == ["smoker_no", "smoker_yes"]


def test_missing_values_are_imputed_or_dropped(app):
    frame = small_csv()
    frame.loc[[2, 5, 7], "lab_a"] = np.nan
    data = frame.to_csv(index=False).encode()
    at = upload(app.run(), data)
    assert any(e.startswith("3 row(s) have missing") for e in texts(at, "error"))
    at.button(key=f"{state.W_FIX}missing_impute").click().run()
    assert_clean(at)
    assert not at.error
    work = at.session_state[state.UPLOAD].work
    assert len(work) == 40 and work["lab_a"].notna().all()
    at.button(key=state.W_UNDO_ALL).click().run()
    at.button(key=f"{state.W_FIX}missing_drop_missing_rows").click().run()
    assert len(at.session_state[state.UPLOAD].work) == 37
    assert "Drop rows with missing values: 'lab_a'" in " ".join(
        m.value for m in at.markdown
    )


def test_missing_labels_and_rare_classes(app):
    frame = small_csv()
    frame.loc[0, "label"] = None
    frame.loc[[1, 3], "label"] = "rare"
    at = upload(app.run(), frame.to_csv(index=False).encode())
    errors = " ".join(texts(at, "error"))
    assert "1 row(s) have no value in the label column" in errors
    assert "Class(es) 'rare' have fewer than 5 rows" in errors
    at.button(key=f"{state.W_FIX}label_missing_drop_missing_label").click().run()
    at.button(key=f"{state.W_FIX}rare_classes_drop_rare_classes").click().run()
    assert_clean(at)
    assert not at.error
    assert set(at.session_state[state.UPLOAD].work["label"]) == {"sick", "healthy"}


def test_many_columns_train_the_library_default_without_a_warning(app):
    wide = {f"px{i}": np.arange(40) % (i + 2) for i in range(16)}
    at = upload(app.run(), small_csv(**wide).to_csv(index=False).encode())
    words = " ".join(texts(at))
    assert "19 feature columns" not in words and "n_subsets" not in words
    assert not use_button(at).disabled
    use_button(at).click().run()
    # 16 pixel columns form a 4 x 4 image: one sensor per pixel, and the
    # other columns one each; never blocks of neighbouring columns.
    spec = at.session_state[state.DATASET].spec
    assert spec.n_sensors == 19 and spec.groups["r0c0"] == ["px0"]


def test_drop_selected_columns_and_undo(app):
    at = upload(app.run(), small_csv().to_csv(index=False).encode())
    at.multiselect(key=state.W_DROP_COLUMNS).set_value(["age"]).run()
    at.button(key=state.W_DROP_SELECTED).click().run()
    assert "age" not in at.session_state[state.UPLOAD].work.columns
    at.button(key=state.W_UNDO_LAST).click().run()
    assert_clean(at)
    assert "age" in at.session_state[state.UPLOAD].work.columns


def test_semicolons_decimal_commas_and_gzip(app):
    text = small_csv().to_csv(index=False, sep=";", decimal=",")
    at = upload(app.run(), gzip.compress(text.encode("cp1252")), "data.csv.gz")
    caption = " ".join(c.value for c in at.caption)
    assert "semicolon-separated" in caption and "decimal comma" in caption
    assert "gzip" in caption
    assert any("ready for training" in t for t in texts(at, "success"))


def test_second_file_as_test_set(app):
    train, test = small_csv(40, seed=0), small_csv(12, seed=1)
    train.loc[3, "lab_b"] = np.nan
    at = upload(app.run(), train.to_csv(index=False).encode(), "train.csv")
    at.radio(key=state.W_SPLIT).set_value("file").run()
    assert use_button(at).disabled  # no test file yet
    at.file_uploader(key=state.W_UPLOAD_TEST).set_value(
        ("test.csv", test.to_csv(index=False).encode(), "text/csv")
    ).run()
    assert_clean(at)
    at.button(key=f"{state.W_FIX}missing_impute").click().run()
    use_button(at).click().run()
    assert_clean(at)
    dataset = at.session_state[state.DATASET]
    assert len(dataset.train) == 40 and len(dataset.test) == 12
    pd.testing.assert_frame_equal(dataset.test, test, check_dtype=False)


def test_test_file_with_other_columns_is_refused(app):
    at = upload(app.run(), small_csv().to_csv(index=False).encode())
    at.radio(key=state.W_SPLIT).set_value("file").run()
    other = small_csv(10).drop(columns=["lab_b"])
    at.file_uploader(key=state.W_UPLOAD_TEST).set_value(
        ("other.csv", other.to_csv(index=False).encode(), "text/csv")
    ).run()
    assert_clean(at)
    assert any("lacks column(s) 'lab_b'" in e for e in texts(at, "error"))
    assert at.session_state[state.UPLOAD].raw_test is None


def test_an_unexpected_error_in_a_fix_is_a_message(app, monkeypatch):
    from budgetdag_core.tables import _clean

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(_clean, "one_hot", broken)
    frame = small_csv(smoker=["yes", "no"] * 20)
    at = upload(app.run(), frame.to_csv(index=False).encode())
    at.button(key=f"{state.W_FIX}non_numeric_one_hot").click().run()
    assert_clean(at)
    assert any(
        "while cleaning the table: RuntimeError: boom" in e for e in texts(at, "error")
    )
    assert at.session_state[state.UPLOAD].fixes == []  # the recipe is unchanged
    at.button(key=f"{state.W_FIX}non_numeric_drop_columns").click().run()
    assert not at.error
    assert "smoker" not in at.session_state[state.UPLOAD].work.columns


def test_the_page_says_which_table_is_in_use(app):
    at = app.run()
    assert any(
        "In use for training:** landsat (bundled demo)" in t for t in texts(at, "info")
    )
    assert not at.warning
    at.radio(key=state.W_SOURCE).set_value("upload").run()
    assert not at.warning  # nothing uploaded: landsat stays in use, nothing pending
    at = upload(at, small_csv().to_csv(index=False).encode(), name="mine.csv")
    (pending,) = [w for w in texts(at, "warning") if "In use for training" in w]
    assert "landsat (bundled demo)" in pending and "not in use yet" in pending
    use_button(at).click().run()
    assert any(
        "In use for training:** mine.csv (uploaded table)" in t
        for t in texts(at, "info")
    )
    assert not any("not in use yet" in w for w in texts(at, "warning"))
    assert "In use for training: mine.csv (uploaded table)" in [
        h.value for h in at.subheader
    ]


def test_the_first_screen_trains_in_one_click(app):
    at = app.run()  # opens on Data, with the landsat demo
    assert_clean(at)
    at.button(key=state.W_QUICK_TRAIN).click().run()
    assert_clean(at)
    at = finish_jobs(at)
    run = at.session_state[state.RUN]
    assert (
        run is not None
        and run.model.spec_.names == at.session_state[state.DATASET].spec.names
    )
    assert any("Trained in" in t for t in texts(at, "success"))


def test_switching_demos_asks_before_dropping_the_model(app, pima, pima_run):
    at = prefill(app, pima, pima_run).switch_page(page("data")).run()
    at.selectbox(key=state.W_DEMO).set_value("toy").run()
    assert at.session_state[state.DATASET].name == "pima"  # not yet
    assert any("drops the model" in t for t in texts(at, "warning"))
    at.button(key=state.W_REPLACE_NO).click().run()
    assert at.session_state[state.W_DEMO] == "pima"  # the choice shows it again
    assert at.session_state[state.RUN] is pima_run
    at.selectbox(key=state.W_DEMO).set_value("toy").run()
    at.button(key=state.W_REPLACE_YES).click().run()
    assert_clean(at)
    assert at.session_state[state.DATASET].name == "toy"
    assert at.session_state[state.RUN] is None


# ------------------------------- issue 56: leaks flagged before training
def leaky_csv(n: int = 60) -> pd.DataFrame:
    """A row-number column first (as R writes them) and a copy of the label."""
    frame = small_csv(n)
    frame.insert(0, "rownames", range(1, n + 1))
    return frame.assign(answer=frame["label"].map({"sick": 1, "healthy": 0}))


def test_row_numbers_and_a_label_copy_are_left_out_in_one_click(app):
    at = upload(app.run(), leaky_csv().to_csv(index=False).encode())
    assert at.selectbox(key=state.W_LABEL).value == "label"
    (leak,) = [w for w in texts(at, "warning") if "give the answer away" in w]
    assert "'rownames' numbers the rows (1, 2, 3, … in file order)" in leak
    assert "'answer' is 'label' under other names" in leak
    assert not any("ready for training" in t for t in texts(at, "success"))
    at.button(key=f"{state.W_FIX}leak_leave_out").click().run()
    assert_clean(at)
    work = at.session_state[state.UPLOAD].work
    assert list(work.columns) == ["age", "lab_a", "lab_b", "label"]
    assert not any("give the answer away" in w for w in texts(at, "warning"))
    assert any("ready for training" in t for t in texts(at, "success"))
    steps = " ".join(m.value for m in at.markdown)
    assert "Leave out of training: 'rownames', 'answer'" in steps
    use_button(at).click().run()
    assert at.session_state[state.DATASET].features == ["age", "lab_a", "lab_b"]


def test_one_flagged_column_can_be_kept(app):
    at = upload(app.run(), leaky_csv().to_csv(index=False).encode())
    at.multiselect(key=f"{state.W_FIX_COLUMNS}leak").set_value(["answer"]).run()
    at.button(key=f"{state.W_FIX}leak_leave_out").click().run()
    work = at.session_state[state.UPLOAD].work
    assert "rownames" in work and "answer" not in work


def test_the_label_guess_skips_row_numbers_and_years(app):
    rng = np.random.default_rng(0)
    n = 60
    frame = pd.DataFrame(
        {
            "rownames": range(1, n + 1),
            "kind": np.array(["adelie", "gentoo", "chinstrap"])[np.arange(n) % 3],
            "mass": rng.normal(size=n).round(3),
            "year": 2007 + np.arange(n) % 3,
        }
    )
    at = upload(app.run(), frame.to_csv(index=False).encode())
    assert at.selectbox(key=state.W_LABEL).value == "kind"


def test_switching_tables_asks_next_to_the_button(app, pima, pima_run):
    at = prefill(app, pima, pima_run).switch_page(page("data")).run()
    at = upload(at, small_csv().to_csv(index=False).encode())
    use_button(at).click().run()
    assert at.session_state[state.DATASET].name == "pima"  # not yet
    assert any("drops the model" in t for t in texts(at, "warning"))
    keys = [b.key for b in at.button]
    # The question right below the button that asked, not at the page's top.
    at_button = keys.index(state.W_USE_UPLOAD)
    assert keys[at_button + 1 : at_button + 3] == [
        state.W_REPLACE_YES,
        state.W_REPLACE_NO,
    ]
    at.button(key=state.W_REPLACE_YES).click().run()
    assert_clean(at)
    assert at.session_state[state.DATASET].name == "data.csv"


def test_switching_demos_asks_below_the_demo_choice(app, pima, pima_run):
    at = prefill(app, pima, pima_run).switch_page(page("data")).run()
    at.selectbox(key=state.W_DEMO).set_value("toy").run()
    keys = [b.key for b in at.button]
    assert keys.index(state.W_REPLACE_YES) > keys.index(state.W_USE_DEMO)


def test_an_upload_kept_over_a_reload_explains_the_empty_file_box(app):
    at = upload(app.run(), small_csv().to_csv(index=False).encode())
    at.file_uploader(key=state.W_UPLOAD).set_value(None).run()
    captions = " ".join(c.value for c in at.caption)
    assert "**data.csv**: read as" in captions
    assert "The file box above is empty because the page was reloaded" in captions
