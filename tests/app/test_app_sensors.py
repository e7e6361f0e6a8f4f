"""Sensors page: presets, inline validation of the edited table, JSON in and out."""

from __future__ import annotations

import json

import pytest
from app_helpers import assert_clean, download_data, page, prefill, texts

from budgetdag_core import SensorSpec
from ui import state


def sensors(app, dataset=None):
    at = app if dataset is None else prefill(app, dataset)
    return at.switch_page(page("sensors")).run()


def edit(at, edited_rows=None, added_rows=None, deleted_rows=None):
    """Apply cell edits as the browser's data editor would."""
    key = at.data_editor[0].key
    at.session_state[key] = {
        "edited_rows": edited_rows or {},
        "added_rows": added_rows or [],
        "deleted_rows": deleted_rows or [],
    }
    return at.run()


def test_demo_spec_is_valid(app):
    at = sensors(app)
    assert_clean(at)
    assert at.data_editor[0].value["sensor"].tolist() == [
        f"band{b}" for b in range(1, 5)
    ]
    (ready,) = texts(at, "success")
    assert ready.startswith(
        "4 sensors, 16 DAG states (the full DAG: one per combination of "
        "sensors), total cost 4. Ready to train: roughly "
    )


def test_inline_validation_messages(app, pima):
    at = sensors(app, pima)
    # patient shares 'age' with glucose; insulin gets a negative cost
    at = edit(
        at,
        edited_rows={1: {"columns": ["glucose", "age"]}, 2: {"cost": -3.0}},
    )
    assert_clean(at)
    errors = texts(at, "error")
    assert any(
        "Column 'age' is in two sensors: 'patient' and 'glucose'" in e for e in errors
    )
    assert any("Sensor 'insulin' has a negative cost (-3)" in e for e in errors)
    assert at.download_button(key=f"{state.W_DOWNLOAD}spec_json").disabled
    assert "table has problems" in " ".join(c.value for c in at.sidebar.caption)
    at.switch_page(page("train")).run()
    assert_clean(at)
    assert any("fix them on the Sensors page" in w for w in texts(at, "warning"))
    assert not [b for b in at.button if b.key == state.W_TRAIN]  # page stopped


def test_unassigned_columns_are_ignored_with_a_note(app, pima):
    at = sensors(app, pima)
    at = edit(at, deleted_rows=[2])  # remove the insulin sensor
    assert not at.error
    assert any(
        "1 column(s) are in no sensor and will be ignored: 'insulin'" in t
        for t in texts(at, "info")
    )
    spec = at.session_state[state.SPEC_TABLE]
    assert spec["sensor"].tolist() == ["patient", "glucose"]


def test_added_row_and_edits_survive_a_page_switch(app, pima):
    at = sensors(app, pima)
    at = edit(
        at,
        edited_rows={0: {"columns": ["pregnancies", "age"]}},
        added_rows=[
            {
                "sensor": "exam",
                "columns": ["blood_pressure", "skin_thickness", "bmi", "pedigree"],
                "cost": 2.5,
            }
        ],
    )
    assert "4 sensors, 16 DAG states" in " ".join(texts(at, "success"))
    at.switch_page(page("train")).run()
    at.switch_page(page("sensors")).run()
    assert_clean(at)
    table = at.data_editor[0].value
    assert table["sensor"].tolist() == ["patient", "glucose", "insulin", "exam"]
    assert table.loc[3, "cost"] == 2.5


def test_presets(app):
    at = sensors(app)
    at.button(key=f"{state.W_PRESET}per_column").click().run()
    assert_clean(at)
    assert len(at.data_editor[0].value) == 36
    # More sensors than a full DAG allows: the library's default trains them.
    assert not at.error
    ready = " ".join(texts(at, "success"))
    # The probe knows the rows: landsat has too many for a grown DAG.
    assert "36 sensors, a chain of 37 states or a routed DAG of at most 1020" in ready
    assert "Alg. 2" not in ready and "n_subsets" not in " ".join(texts(at))
    at.number_input(key=state.W_BLOCKS).set_value(3).run()
    at.number_input(key=state.W_PRESET_COST).set_value(2.0).run()
    at.button(key=f"{state.W_PRESET}blocks").click().run()
    table = at.data_editor[0].value
    assert table["sensor"].tolist() == ["block1", "block2", "block3"]
    assert table["cost"].tolist() == [2.0, 2.0, 2.0]
    at.radio(key=state.W_GROUP_MODE).set_value("prefix").run()
    at.text_input(key=state.W_PREFIX_SEP).set_value("x").run()
    at.button(key=f"{state.W_PRESET}name").click().run()
    assert len(at.data_editor[0].value) == 36  # landsat names have no prefix
    at.button(key=f"{state.W_PRESET}default").click().run()
    assert at.data_editor[0].value["sensor"].tolist()[0] == "band1"
    assert not at.error


def test_prefix_preset_groups_by_name(app, pima):
    from budgetdag_core import Dataset

    frame = pima.train.rename(columns={"glucose": "lab_glucose", "insulin": "lab_ins"})
    dataset = Dataset(
        "renamed",
        frame,
        pima.test.rename(columns={"glucose": "lab_glucose", "insulin": "lab_ins"}),
        "label",
        SensorSpec.per_column([c for c in frame.columns if c != "label"]),
        kind="upload",
    )
    at = sensors(app, dataset)
    at.radio(key=state.W_GROUP_MODE).set_value("prefix").run()
    at.button(key=f"{state.W_PRESET}name").click().run()
    groups = dict(
        zip(
            at.data_editor[0].value["sensor"],
            at.data_editor[0].value["columns"],
            strict=True,
        )
    )
    assert list(groups["lab"]) == ["lab_glucose", "lab_ins"]
    assert not at.error


def test_spec_json_download_and_upload(app, pima, media):
    at = sensors(app, pima)
    data = download_data(at, media, f"{state.W_DOWNLOAD}spec_json")
    assert SensorSpec.from_json(data.decode()) == pima.spec
    changed = json.loads(data)
    changed["sensors"][1]["cost"] = 99
    at.file_uploader(key=state.W_SPEC_JSON).set_value(
        ("mine.json", json.dumps(changed).encode(), "application/json")
    ).run()
    assert_clean(at)
    assert at.data_editor[0].value["cost"].tolist() == [6.0, 99.0, 22.78]
    assert "Loaded the sensors from mine.json." in texts(at, "success")


def test_bad_spec_json_gets_a_message(app, pima):
    at = sensors(app, pima)
    bad = {"sensors": [{"name": "x", "columns": ["nope"], "cost": 1}]}
    at.file_uploader(key=state.W_SPEC_JSON).set_value(
        ("bad.json", json.dumps(bad).encode(), "application/json")
    ).run()
    assert_clean(at)
    assert any("['nope'] that are not in the data" in e for e in texts(at, "error"))
    at.file_uploader(key=state.W_SPEC_JSON).set_value(
        ("broken.json", b"{not json", "application/json")
    ).run()
    assert any("not valid JSON" in e for e in texts(at, "error"))
    assert at.data_editor[0].value["sensor"].tolist() == [
        "patient",
        "glucose",
        "insulin",
    ]


def test_uploaded_spec_text_is_never_a_server_path(app, pima):
    # Issue 28, case 1: main read text not starting with "{" as a file name
    # (IsADirectoryError for "/etc", FileNotFoundError probing files) and a
    # BOM, a top-level array or deep nesting ended in "Something unexpected".
    at = sensors(app, pima)
    spec = pima.spec.to_json().encode()
    cases = {
        "etc.json": (b"/etc", "does not start with '{'"),
        "probe.json": (b"/no/such/file", "does not start with '{'"),
        "zero.json": (b"/dev/zero", "does not start with '{'"),
        "array.json": (b"[" + spec + b"]", "is a JSON array"),
        "deep.json": (b'{"a":' * 5000 + b"1" + b"}" * 5000, "nested 5000 levels"),
        "groups.json": (b'{"groups": [["a", ["b"]]]}', "'groups' must be an object"),
    }
    for name, (content, message) in cases.items():
        at.file_uploader(key=state.W_SPEC_JSON).set_value(
            (name, content, "application/json")
        ).run()
        assert_clean(at)
        errors = texts(at, "error")
        assert any(message in e and name in e for e in errors), (name, errors)
        assert not any("Something unexpected" in e or "Errno" in e for e in errors)
    at.file_uploader(key=state.W_SPEC_JSON).set_value(
        ("bom.json", b"\xef\xbb\xbf" + spec, "application/json")
    ).run()
    assert_clean(at)
    assert "Loaded the sensors from bom.json." in texts(at, "success")


def uploaded(name, frame, label="label"):
    """A Dataset as if ``frame`` had been uploaded (every column its own sensor)."""
    from budgetdag_core import Dataset

    half = len(frame) // 2
    features = [c for c in frame.columns if c != label]
    return Dataset(
        name,
        frame.iloc[:half],
        frame.iloc[half:],
        label,
        SensorSpec.per_column(features),
        kind="upload",
    )


@pytest.fixture(scope="module")
def breast_cancer():
    from sklearn.datasets import load_breast_cancer

    frame = load_breast_cancer(as_frame=True).frame.rename(columns={"target": "label"})
    return uploaded("breast_cancer", frame)


@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits

    frame = load_digits(as_frame=True).frame.rename(columns={"target": "label"})
    return uploaded("digits", frame)


def sensor_groups(at):
    table = at.data_editor[0].value
    return {s: list(c) for s, c in zip(table["sensor"], table["columns"], strict=True)}


def test_breast_cancer_names_group_by_pattern_in_three_interactions(app, breast_cancer):
    at = sensors(app, breast_cancer)
    assert len(at.data_editor[0].value) == 30
    at.radio(key=state.W_GROUP_MODE).set_value("pattern").run()  # 1
    at.text_input(key=state.W_GROUP_PATTERN).set_value("(mean|error|worst)").run()  # 2
    assert_clean(at)
    preview = " ".join(c.value for c in at.caption)
    assert "Preview: 3 sensors" in preview and "`worst` (10)" in preview
    assert len(at.data_editor[0].value) == 30  # a preview, not applied yet
    at.button(key=f"{state.W_PRESET}name").click().run()  # 3
    assert_clean(at)
    groups = sensor_groups(at)
    assert list(groups) == ["mean", "error", "worst"]
    assert groups["error"][0] == "radius error" and len(groups["error"]) == 10
    assert all(len(cols) == 10 for cols in groups.values())
    assert "3 sensors, 8 DAG states" in " ".join(texts(at, "success"))


def test_breast_cancer_shared_word_is_one_click(app, breast_cancer):
    at = sensors(app, breast_cancer)
    at.button(key=f"{state.W_PRESET}name").click().run()  # "Shared word" is default
    assert_clean(at)
    assert {k: len(v) for k, v in sensor_groups(at).items()} == {
        "mean": 10,
        "error": 10,
        "worst": 10,
    }


def test_suffix_grouping_previews_the_error_sensor(app, breast_cancer):
    at = sensors(app, breast_cancer)
    at.radio(key=state.W_GROUP_MODE).set_value("suffix").run()
    at.button(key=f"{state.W_PRESET}name").click().run()
    groups = sensor_groups(at)
    assert len(groups["error"]) == 10 and groups["radius"] == [
        "mean radius",
        "worst radius",
    ]


def test_bad_pattern_is_a_message_and_cannot_be_applied(app, breast_cancer):
    at = sensors(app, breast_cancer)
    at.radio(key=state.W_GROUP_MODE).set_value("pattern").run()
    at.text_input(key=state.W_GROUP_PATTERN).set_value("(mean|").run()
    assert_clean(at)
    assert any("not a valid regular expression" in w for w in texts(at, "warning"))
    assert at.button(key=f"{state.W_PRESET}name").disabled


def test_digits_grid_into_four_quadrants(app, digits):
    at = sensors(app, digits)
    # 64 one-pixel sensors: the library's default, subsets only on request.
    assert any("a chain of 65 states" in t for t in texts(at, "success"))
    assert not at.toggle(key=state.W_SUBSETS_ON).value
    at.radio(key=state.W_GROUP_MODE).set_value("grid").run()
    assert "Preview: 4 sensors" in " ".join(c.value for c in at.caption)
    at.button(key=f"{state.W_PRESET}name").click().run()
    assert_clean(at)
    groups = sensor_groups(at)
    assert list(groups) == ["top-left", "top-right", "bottom-left", "bottom-right"]
    assert all(len(cols) == 16 for cols in groups.values())
    assert groups["top-right"][:2] == ["pixel_0_4", "pixel_0_5"]
    assert groups["bottom-left"][-1] == "pixel_7_3"
    assert "4 sensors, 16 DAG states" in " ".join(texts(at, "success"))
    # Four sensors: the full DAG, no word of the many-sensor DAGs any more.
    assert not any("chain" in t for t in texts(at))


def test_each_sensor_lists_its_column_count_and_all_columns(app, digits):
    at = sensors(app, digits)
    at.radio(key=state.W_GROUP_MODE).set_value("grid").run()
    at.button(key=f"{state.W_PRESET}name").click().run()
    (expander,) = [e for e in at.expander if "Columns of each sensor" in e.label]
    assert "4 sensors" in expander.label
    lines = [m.value for m in expander.markdown]
    assert len(lines) == 4
    assert lines[3].startswith("**`bottom-right`** · 16 column(s)")
    assert "`pixel_7_7`" in lines[3]  # the last column is listed, not cut off


def test_a_pattern_that_matches_nothing_says_so(app, breast_cancer):
    at = sensors(app, breast_cancer)
    at.radio(key=state.W_GROUP_MODE).set_value("pattern").run()
    at.text_input(key=state.W_GROUP_PATTERN).set_value("^pixel").run()
    captions = " ".join(c.value for c in at.caption)
    assert "Preview: 30 sensors" in captions and "and 18 more" in captions
    assert "No two columns share a group under this rule" in captions
    at.text_input(key=state.W_GROUP_PATTERN).set_value("^(mean)").run()
    captions = " ".join(c.value for c in at.caption)
    assert "Preview: 21 sensors" in captions
    assert "20 column(s) match no group and become sensors of their own" in captions


def test_custom_groups_one_sensor_at_a_time(app, pima):
    """Custom groups without a JSON file: choose columns, name them, click."""
    at = sensors(app, pima)
    at.button(key=f"{state.W_PRESET}per_column").click().run()
    assert len(at.data_editor[0].value) == 8
    groups = {
        "body": ["bmi", "skin_thickness", "blood_pressure"],
        "history": ["pregnancies", "pedigree", "age"],
        "blood": ["glucose", "insulin"],
    }
    for name, columns in groups.items():
        at.multiselect(key=state.W_NEW_SENSOR_COLUMNS).set_value(columns)
        at.text_input(key=state.W_NEW_SENSOR).set_value(f" {name} ")
        at.number_input(key=state.W_NEW_SENSOR_COST).set_value(2.0)
        at.button(key=state.W_NEW_SENSOR_MAKE).click().run()
        assert_clean(at)
        # Cleared for the next one.
        assert at.multiselect(key=state.W_NEW_SENSOR_COLUMNS).value == []
    table = at.data_editor[0].value
    assert dict(zip(table["sensor"], map(list, table["columns"]), strict=True)) == (
        groups
    )
    assert table["cost"].tolist() == [2.0] * 3
    ready = " ".join(texts(at, "success"))
    assert "3 sensors, 8 DAG states (the full DAG" in ready
    assert "total cost 6. Ready to train: roughly" in ready
    # Nothing chosen: said in words, the table stays.
    at.text_input(key=state.W_NEW_SENSOR).set_value("empty")
    at.button(key=state.W_NEW_SENSOR_MAKE).click().run()
    assert any("at least one column" in t for t in texts(at, "error"))
    assert len(at.data_editor[0].value) == 3


def test_a_one_sensor_preview_says_sensor(app, digits):
    at = sensors(app, digits)
    at.radio(key=state.W_GROUP_MODE).set_value("grid").run()
    at.number_input(key=state.W_GRID_BLOCKS).set_value(1).run()
    preview = " ".join(c.value for c in at.caption)
    assert "Preview: 1 sensor (columns each)" in preview
    assert "1 sensors" not in preview


def test_the_sensors_and_train_pages_say_the_same_dag_and_time(app, monkeypatch):
    """Issue 56: a grouping that makes a full DAG of 2^11 states was 'many
    minutes' on Sensors and 'about 1 s' on Train. One function says both."""
    import ui.widgets

    monkeypatch.setattr(ui.widgets, "busy_factor", lambda threads=1: 1.0)
    at = sensors(app)
    (ready,) = texts(at, "success")
    dag = "16 DAG states (the full DAG: one per combination of sensors)"
    assert dag in ready
    time = ready.split("Ready to train: ")[1].rstrip(".")
    assert time.startswith("roughly ")
    at.switch_page(page("train")).run()
    assert_clean(at)
    captions = [c.value for c in at.caption]
    assert any(dag in c for c in captions)
    assert any(f"({time})" in c for c in captions), (time, captions)
    assert not any("many minutes" in t for t in texts(at))
