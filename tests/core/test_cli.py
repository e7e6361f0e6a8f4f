from __future__ import annotations

import io
import json
import os

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, SensorSpec, load_policy
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


def test_train_many_sensors_trains_the_library_default(tmp_path, capsys) -> None:
    data, spec = _wide_files(tmp_path)
    out = tmp_path / "m.pkl"
    args = ["train", str(data), "--label", "label", "--sensors", str(spec)]
    code = main([*args, "--cv", "3", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    model = load_policy(out)
    assert model.n_subsets is None and model.subset_selection_ is None
    assert model.strategy_ in ("chain", "routed")
    # The same model as the library's default with the CLI's settings.
    frame = pd.read_csv(data)
    library = BudgetDAGClassifier(
        SensorSpec.from_file(spec), cv=3, cost_scale=model.cost_scale,
        random_state=model.random_state,
    ).fit(frame.drop(columns="label"), frame["label"])  # fmt: skip
    assert library.strategy_ == model.strategy_
    pd.testing.assert_frame_equal(
        library.trace(frame.drop(columns="label")),
        model.trace(frame.drop(columns="label")),
    )
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


# ------------------------------------------- issue 28: mistakes, one line each
def _one_line_error(capsys, argv: list[str]) -> str:
    """The one stderr line of a refused command (exit code 2, nothing trained)."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own checks
        code = exc.code
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2, captured.err
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err and "trained in" not in captured.err
    return lines[0]


def _train_args(files, **changes: str) -> list[str]:
    args = {
        "data": str(files / "train.csv"),
        "--label": "target",
        "--sensors": str(files / "spec.json"),
        "--out": str(files / "m.pkl"),
        "--cv": "3",
    }
    args.update(changes)
    out = ["train", args.pop("data")]
    for key, value in args.items():
        out += [key, value]
    return out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--out": "{dir}"}, "output file (--out) '{dir}' is a directory"),
        ({"data": "{dir}"}, "data file '{dir}' is a directory"),
        ({"--sensors": "{dir}"}, "sensor spec file '{dir}' is a directory"),
        ({"--out": "/dev/full"}, "'/dev/full' is not a regular file"),
        ({"data": "/dev/zero"}, "'/dev/zero' is not a regular file"),
        ({"--out": "{dir}/no/such/m.pkl"}, "folder of the output file"),
        ({"data": "{dir}/missing.csv"}, "data file '{dir}/missing.csv' does not exist"),
        ({"--n-subsets": "0"}, "argument --n-subsets: '0' is not an integer from 1"),
        ({"--cv": "1"}, "argument --cv: '1' is not an integer of at least 2"),
        ({"--cost-scale": "nan"}, "argument --cost-scale: 'nan' is not a finite"),
        ({"--budget": "0"}, "argument --budget: '0' is not a finite number above 0"),
        ({"--n-jobs": "0"}, "argument --n-jobs: '0' is not a non-zero integer"),
        ({"--policy-degree": "9"}, "argument --policy-degree: '9' is not an integer"),
    ],
)
def test_train_mistakes_are_refused_before_training(files, capsys, change, message):
    change = {k: v.format(dir=files) for k, v in change.items()}
    line = _one_line_error(capsys, _train_args(files, **change))
    assert line.startswith("budgetdag train: error:")
    assert message.format(dir=files) in line


def test_empty_and_header_only_csv_are_refused(files, capsys):
    (files / "empty.csv").write_text("")
    line = _one_line_error(capsys, _train_args(files, data=str(files / "empty.csv")))
    assert "is empty" in line
    (files / "header.csv").write_text("a,b,target\n")
    line = _one_line_error(capsys, _train_args(files, data=str(files / "header.csv")))
    assert "has a header but no data rows" in line  # the reader's wording


def test_a_fifo_is_refused_without_blocking(files, capsys):
    fifo = files / "pipe.csv"
    os.mkfifo(fifo)
    line = _one_line_error(capsys, _train_args(files, data=str(fifo)))
    assert "not a regular file" in line


def test_csv_with_a_byte_order_mark_reads_as_without(files, capsys):
    text = (files / "train.csv").read_text()
    (files / "excel.csv").write_text(text, encoding="utf-8-sig")  # as Excel saves
    code = main(
        _train_args(files, data=str(files / "excel.csv"), **{"--cost-scale": "0.05"})
    )
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["evaluate", str(files / "m.pkl"), str(files / "excel.csv")]) == 0
    from_bom = json.loads(capsys.readouterr().out)
    assert main(["evaluate", str(files / "m.pkl"), str(files / "test.csv")]) == 0
    assert from_bom["n_samples"] == 200


def test_a_one_column_csv_is_one_column(tmp_path, capsys):
    X, y = make_synthetic(200)
    values = X[["s1"]].rename(columns={"s1": "value"}).round(3)
    values.assign(target=y).to_csv(tmp_path / "train.csv", index=False)
    SensorSpec({"s": ["value"]}, {"s": 1}).to_json(tmp_path / "spec.json")
    # Python's sniffer split this file on the letter 'v' of its header.
    values.to_csv(tmp_path / "one.csv", index=False)
    model = str(tmp_path / "m.pkl")
    args = ["train", str(tmp_path / "train.csv"), "--label", "target"]
    args += ["--sensors", str(tmp_path / "spec.json"), "--cv", "3", "--out", model]
    assert main(args) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["predict", model, str(tmp_path / "one.csv")]) == 0
    traces = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert len(traces) == 200


def test_predict_and_evaluate_paths_are_checked(files, capsys):
    line = _one_line_error(capsys, ["evaluate", str(files), str(files / "test.csv")])
    assert "model file" in line and "is a directory" in line
    assert main(_train_args(files, **{"--cost-scale": "0.05"})) == 0
    capsys.readouterr()
    argv = ["predict", str(files / "m.pkl"), str(files / "test.csv"), "--out"]
    assert "is a directory" in _one_line_error(capsys, [*argv, str(files)])
    assert "not a regular file" in _one_line_error(capsys, [*argv, "/dev/full"])


def test_sweep_checks_test_file_and_scales_first(files, capsys):
    argv = ["sweep", str(files / "train.csv"), "--label", "target", "--sensors"]
    argv += [str(files / "spec.json"), "--out", str(files / "c.csv")]
    line = _one_line_error(capsys, [*argv, "--test", str(files)])
    assert "test file" in line and "is a directory" in line
    line = _one_line_error(capsys, [*argv, "--cost-scales", "0,x"])
    assert "argument --cost-scales: 'x' is not a finite number" in line


def test_train_refuses_blank_and_text_cells_by_column_and_row(files, capsys):
    data = pd.read_csv(files / "train.csv")
    column = SYNTH_SPEC.columns[0]
    data[column] = data[column].astype(object)
    data.loc[4, column] = None
    data.loc[6, column] = "n.a."
    data["notes"] = "free text"  # not in the spec: not checked
    data.to_csv(files / "gaps.csv", index=False)
    line = _one_line_error(capsys, _train_args(files, data=str(files / "gaps.csv")))
    assert f"'{column}' (e.g. 'n.a.') in row 8 are not numeric" in line
    assert f"'{column}' row 6 (the header is row 1)" in line
    assert "'notes'" not in line


def test_check_reports_how_a_file_reads(files, capsys):
    (files / "semi.csv").write_text("a;b;label\n1,5;2;x\n3,5;;y\n")
    assert main(["check", str(files / "semi.csv"), "--cv", "2"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["read_as"].endswith("semicolon-separated, decimal comma")
    assert (report["label"], report["label_guessed"]) == ("label", True)
    assert report["dtypes"][:2] == ["float64", "float64"]
    kinds = {f["kind"]: f["severity"] for f in report["findings"]}
    assert kinds["missing"] == "error" and kinds["rare_classes"] == "error"
    assert main(["check", str(files / "train.csv"), "--label", "target"]) == 0
    # The synthetic's expensive sensor is nearly perfect: a warning only.
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["kind"], f["severity"]) for f in findings] == [
        ("strong_column", "warning")
    ]


# ------------------------------- issue 56: columns that give the answer away
def _suspect_files(files, **extra: object):
    """train.csv with ``extra`` columns, and a spec with one sensor each."""
    data = pd.read_csv(files / "train.csv").assign(**extra)
    data.to_csv(files / "suspect.csv", index=False)
    groups = {**SYNTH_SPEC.groups, **{c: [c] for c in extra}}
    costs = {**SYNTH_SPEC.costs, **dict.fromkeys(extra, 1.0)}
    SensorSpec(groups, costs).to_json(files / "suspect.json")
    return _train_args(
        files,
        data=str(files / "suspect.csv"),
        **{"--sensors": str(files / "suspect.json"), "--cv": "2"},
    )


def test_train_refuses_row_numbers_and_label_copies_naming_them(files, capsys):
    data = pd.read_csv(files / "train.csv")
    argv = _suspect_files(
        files,
        rownames=range(1, len(data) + 1),
        answer=data["target"].map({0: 10, 1: 30, 2: 20}),
    )
    line = _one_line_error(capsys, argv)
    assert "'rownames' numbers the rows (1, 2, 3, … in file order)" in line
    assert "'answer' is 'target' under other names" in line
    assert "--keep-suspect-columns" in line
    assert not (files / "m.pkl").exists()


def test_keep_suspect_columns_trains_with_a_warning_line(files, capsys):
    data = pd.read_csv(files / "train.csv")
    argv = _suspect_files(files, copy=data["target"])
    assert main([*argv, "--keep-suspect-columns"]) == 0
    err = capsys.readouterr().err
    assert "warning: Column(s) that give the answer away: 'copy' equals" in err
    assert (files / "m.pkl").exists()


def test_a_column_that_predicts_alone_is_a_warning_and_training_goes_on(files, capsys):
    data = pd.read_csv(files / "train.csv")
    noise = np.random.default_rng(0).normal(scale=0.1, size=len(data))
    argv = _suspect_files(files, assay=data["target"] * 5.0 + noise)
    assert main(argv) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if "warning:" in line]
    assert len(warnings) == 1
    assert "'assay' (100.0%)" in warnings[0]
    assert "alone predict the label 'target'" in warnings[0]
    assert json.loads(captured.out)["model"] == str(files / "m.pkl")


def test_check_lists_leaks_as_warnings(files, capsys):
    data = pd.read_csv(files / "train.csv")
    data.insert(0, "id", [f"P{i:04d}" for i in range(len(data))])
    data.to_csv(files / "ids.csv", index=False)
    assert main(["check", str(files / "ids.csv"), "--label", "target"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    kinds = {f["kind"]: f["severity"] for f in findings}
    assert kinds["leak"] == "warning" and kinds["non_numeric"] == "error"
    leak = next(f for f in findings if f["kind"] == "leak")
    assert "'id' holds a different text in every row" in leak["message"]


def _train_to(files, out) -> list[str]:
    return [
        "train",
        str(files / "train.csv"),
        "--label",
        "target",
        "--sensors",
        str(files / "spec.json"),
        "--cv",
        "3",
        "--out",
        str(out),
    ]


@pytest.mark.parametrize("name", ["train.csv", "spec.json"])
def test_train_refuses_to_write_over_an_input(files, capsys, name):
    before = (files / name).read_bytes()
    assert main(_train_to(files, files / name)) == 2
    err = capsys.readouterr().err
    assert "would destroy an input" in err and name in err
    assert (files / name).read_bytes() == before


def test_an_input_reached_through_a_link_is_refused(files, capsys):
    os.symlink(files / "train.csv", files / "alias.csv")
    os.link(files / "train.csv", files / "hard.csv")
    # Another spelling of the same path, a symbolic link, a hard link.
    for out in [files / "sub" / ".." / "train.csv", files / "alias.csv"]:
        (files / "sub").mkdir(exist_ok=True)
        assert main(_train_to(files, out)) == 2
        assert "would destroy an input" in capsys.readouterr().err
    assert main(_train_to(files, files / "hard.csv")) == 2
    assert "would destroy an input" in capsys.readouterr().err


def test_predict_and_sweep_refuse_to_write_over_an_input(files, capsys):
    model = files / "m.pkl"
    assert main(_train_to(files, model)) == 0
    capsys.readouterr()
    kept = model.read_bytes()
    for out in [model, files / "test.csv"]:
        args = ["predict", str(model), str(files / "test.csv"), "--out", str(out)]
        assert main(args) == 2
        assert "would destroy an input" in capsys.readouterr().err
    assert model.read_bytes() == kept
    sweep = ["sweep", str(files / "train.csv"), "--label", "target"]
    sweep += ["--sensors", str(files / "spec.json"), "--test", str(files / "test.csv")]
    assert main([*sweep, "--out", str(files / "test.csv")]) == 2
    assert "the test file" in capsys.readouterr().err
