from __future__ import annotations

import json

import pandas as pd
import pytest

from budgetdag_core import load_policy
from budgetdag_core.cli import main
from tests.conftest import SYNTH_SPEC, make_synthetic


@pytest.fixture
def files(tmp_path):
    X, y = make_synthetic(300)
    data = X.assign(target=y)
    data.iloc[:200].to_csv(tmp_path / "train.csv", index=False)
    data.iloc[200:].to_csv(tmp_path / "test.csv", index=False)
    SYNTH_SPEC.to_json(tmp_path / "spec.json")
    return tmp_path


def test_train_evaluate_predict(files, capsys) -> None:
    out = files / "m.pkl"
    code = main(
        [
            "train",
            str(files / "train.csv"),
            "--label",
            "target",
            "--sensors",
            str(files / "spec.json"),
            "--cost-scale",
            "0.05",
            "--cv",
            "3",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    train_report = json.loads(capsys.readouterr().out)["train"]
    assert 0 <= train_report["error"] < 0.5
    model = load_policy(out)
    code = main(["evaluate", str(out), str(files / "test.csv")])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    test = pd.read_csv(files / "test.csv")
    assert report == model.evaluate(test.drop(columns="target"), test["target"])
    code = main(
        [
            "predict",
            str(out),
            str(files / "test.csv"),
            "--out",
            str(files / "traces.csv"),
        ]
    )
    assert code == 0
    traces = pd.read_csv(files / "traces.csv")
    assert len(traces) == 100
    assert list(traces["prediction"]) == list(model.predict(test))


def test_clear_errors(files, capsys) -> None:
    code = main(
        [
            "train",
            str(files / "train.csv"),
            "--label",
            "nope",
            "--sensors",
            str(files / "spec.json"),
            "--out",
            str(files / "m.pkl"),
        ]
    )
    assert code == 2
    assert "Label column 'nope'" in capsys.readouterr().err
    assert main(["evaluate", str(files / "missing.pkl"), "x.csv"]) == 2
    assert "Model file not found" in capsys.readouterr().err


def test_help_explains_options(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    for option in ("--cost-scale", "--budget", "--sensors", "--policy-degree"):
        assert option in text
