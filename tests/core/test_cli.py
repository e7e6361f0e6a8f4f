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


def test_sweep_writes_curve_with_baselines(files, capsys) -> None:
    out = files / "curve.csv"
    code = main(
        [
            "sweep",
            str(files / "train.csv"),
            "--label",
            "target",
            "--sensors",
            str(files / "spec.json"),
            "--test",
            str(files / "test.csv"),
            "--cost-scales",
            "0,0.05,100",
            "--cv",
            "3",
            "--bank-kind",
            "per_subset",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    curve = pd.read_csv(out)
    assert {"dag", "all_sensors", "hull", "oracle", "cascade"} <= set(curve["method"])
    cascade = curve[curve["method"] == "cascade"]
    assert set(cascade["split"]) == {"train", "test"}
    assert cascade["threshold"].between(0, 1).all()
    assert "confidence cascade" in capsys.readouterr().err
    assert set(curve["split"]) == {"train", "test"}
    dag = curve[(curve["method"] == "dag") & (curve["split"] == "test")]
    assert sorted(dag["cost_scale"]) == [0.0, 0.05, 100.0]
    # A prohibitive cost scale buys nothing; free sensors buy something.
    by_scale = dag.set_index("cost_scale")["avg_cost"]
    assert by_scale[100.0] == 0.0
    assert by_scale[0.0] > 0.0


def test_train_with_budget_meets_target(files, capsys) -> None:
    out = files / "b.pkl"
    code = main(
        [
            "train",
            str(files / "train.csv"),
            "--label",
            "target",
            "--sensors",
            str(files / "spec.json"),
            "--budget",
            "2.0",
            "--cv",
            "3",
            "--bank-kind",
            "per_subset",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    model = load_policy(out)
    report = model.budget_report_
    assert report.target_avg_cost == 2.0
    # The strong sensor alone costs 2.0: the search finds a policy spending it
    # on held-out rows, and the saved model is the one at the reported scale.
    assert report.met
    assert abs(report.validation_avg_cost - 2.0) <= report.tolerance
    assert model.cost_scale == report.cost_scale


def test_help_explains_every_option(capsys) -> None:
    from budgetdag_core.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        for action in p._actions:
            if action.dest == "help":
                continue
            assert action.help, f"{name} {action.option_strings or action.dest}"


def _wide_files(tmp_path, n_sensors: int = 14):
    import numpy as np

    from budgetdag_core import SensorSpec

    rng = np.random.default_rng(0)
    cols = [f"f{i}" for i in range(n_sensors)]
    X = pd.DataFrame(rng.normal(size=(240, n_sensors)), columns=cols)
    X.assign(label=(X["f0"] + X["f1"] > 0).astype(int)).to_csv(
        tmp_path / "wide.csv", index=False
    )
    SensorSpec.per_column(cols, 0.01).to_json(tmp_path / "wide.json")
    return tmp_path / "wide.csv", tmp_path / "wide.json"


def test_train_many_sensors_picks_subsets_by_default(tmp_path, capsys) -> None:
    data, spec = _wide_files(tmp_path)
    out = tmp_path / "m.pkl"
    args = ["train", str(data), "--label", "label", "--sensors", str(spec)]
    code = main([*args, "--cv", "3", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "14 sensors" in captured.err and "selecting 8 sensor subsets" in captured.err
    model = load_policy(out)
    assert model.n_subsets == 8
    assert model.subset_selection_ is not None
    assert json.loads(captured.out)["train"]["error"] < 0.3


def test_train_passes_subset_and_bank_options(tmp_path, capsys) -> None:
    data, spec = _wide_files(tmp_path)
    out = tmp_path / "m.pkl"
    code = main(
        [
            "train",
            str(data),
            "--label",
            "label",
            "--sensors",
            str(spec),
            "--cv",
            "2",
            "--n-subsets",
            "3",
            "--subset-budget",
            "4",
            "--include-all",
            "--bank-kind",
            "masked",
            "--max-policy-features",
            "50",
            "--policy-features",
            "sensors+confidence",
            "--out",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "selecting" not in captured.err  # --n-subsets given: no default
    model = load_policy(out)
    params = model.get_params()
    assert params["n_subsets"] == 3 and params["subset_budget"] == 4.0
    assert params["include_all"] is True and params["bank_kind"] == "masked"
    assert params["max_policy_features"] == 50
    assert params["policy_features"] == "sensors+confidence"
    assert model.subset_selection_.subsets[-1] == tuple(model.spec_.names)
    assert type(model.bank_).__name__ == "MaskedBank"


def test_subset_options_need_subset_selection(files, capsys) -> None:
    code = main(
        [
            "train",
            str(files / "train.csv"),
            "--label",
            "target",
            "--sensors",
            str(files / "spec.json"),
            "--include-all",
            "--out",
            str(files / "m.pkl"),
        ]
    )
    assert code == 2
    assert "--n-subsets" in capsys.readouterr().err


def test_train_warns_when_policy_buys_nothing(files, capsys) -> None:
    code = main(
        [
            "train",
            str(files / "train.csv"),
            "--label",
            "target",
            "--sensors",
            str(files / "spec.json"),
            "--cost-scale",
            "100",
            "--cv",
            "2",
            "--out",
            str(files / "m.pkl"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert json.loads(captured.out)["train"]["avg_sensors"] == 0
    assert "acquires no sensor" in captured.err
