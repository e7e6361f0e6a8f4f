"""The app's data is the library's Dataset: a demo kept as its recipe, an
upload as its rows, and session files of the app's older type still load."""

from __future__ import annotations

import pickle

import pandas as pd

from budgetdag_core import Dataset, SensorSpec
from ui.data import DEMO_SPLIT, Upload, demo_dataset, load_app_demo


def test_an_app_demo_is_kept_as_its_recipe():
    demo = demo_dataset(load_app_demo("toy"))
    assert isinstance(demo, Dataset) and demo.token == "demo:toy"
    assert demo.recipe == {"name": "toy", **DEMO_SPLIT}
    data = pickle.dumps(demo)
    assert len(data) < 1_000
    back = pickle.loads(data)
    assert back.train.equals(demo.train) and back.test.equals(demo.test)
    assert (back.token, back.recipe, back.spec) == (demo.token, demo.recipe, demo.spec)


def test_an_upload_becomes_a_dataset_with_its_rows():
    frame = pd.DataFrame({"a": range(20), "label": ["x", "y"] * 10})
    dataset = Upload("u.csv", frame, "read as ...").to_dataset("label")
    assert isinstance(dataset, Dataset) and dataset.kind == "upload"
    assert dataset.recipe is None and dataset.token.startswith("upload:u.csv:")
    back = pickle.loads(pickle.dumps(dataset))
    assert back.train.equals(dataset.train) and back.token == dataset.token


class _OldDemo:
    """Pickles as the app's demo datasets did before they were the library's."""

    def __reduce__(self):
        from ui import data

        return (data._demo_from_name, ("toy", dict(DEMO_SPLIT)))


def test_session_files_of_the_older_dataset_type_load():
    back = pickle.loads(pickle.dumps(_OldDemo()))
    assert isinstance(back, Dataset) and back.token == "demo:toy"
    # An upload: the older ui.data.Dataset's fields, "default_spec" for "spec".
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "label": ["x", "y"] * 2})
    old = object.__new__(Dataset)
    vars(old).update(
        name="u.csv",
        kind="upload",
        train=frame[:2],
        test=frame[2:],
        label="label",
        default_spec=SensorSpec.per_column(["a"]),
        description="Uploaded table u.csv.",
        token="upload:u.csv:0123",
    )
    data = pickle.dumps(old, protocol=0)
    data = data.replace(b"cbudgetdag_core.datasets\nDataset\n", b"cui.data\nDataset\n")
    assert b"ui.data\nDataset" in data  # as the older app wrote it
    back = pickle.loads(data)
    assert back.spec.names == ("a",) and back.recipe is None
    assert back.X_train["a"].tolist() == [1.0, 2.0] and back.kind == "upload"


def test_findings_of_two_stacked_files_say_which_file():
    from budgetdag_core.tables import diagnose

    train = pd.DataFrame({"a": [1.0, None, 3.0, 4.0], "label": ["x", "y"] * 2})
    test = pd.DataFrame({"a": [5.0, 6.0, None], "label": ["x", "y", "x"]})
    upload = Upload("train.csv", train, "read as ...")
    assert upload.row_names is None  # one file: the reader's own row numbers
    upload.set_test("test.csv", test)
    problems = diagnose(upload.work, "label", cv=1, row_names=upload.row_names)
    missing = next(p.message for p in problems if p.kind == "missing")
    assert "'a' rows 3 of train.csv, 4 of test.csv." in missing
