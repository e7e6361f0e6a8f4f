"""Regression tests of the hardening issue (items 4-10): inputs the library used
to accept and then crash on deep inside numpy/scikit-learn, or answer silently
wrong. Each ends in correct behaviour or a ValueError/TypeError naming the
problem."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge
from sklearn.svm import SVC

from budgetdag_core import (
    BudgetDAGClassifier,
    SensorSpec,
    load_policy,
    loads_policy,
    save_policy,
)
from budgetdag_core.bank import MaskedBank
from budgetdag_core.tables import diagnose, drop_missing_rows, impute


def _wide(n: int = 240, m: int = 20, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, m)), columns=[f"c{i}" for i in range(m)])
    y = (X["c0"] + X["c1"] > 0).astype(int).to_numpy()
    return X, y, SensorSpec.per_column(list(X.columns), 1.0)


def _small(n: int = 120, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    y = (X["a"] + 0.5 * X["b"] > 0).astype(int).to_numpy()
    return X, y, SensorSpec.per_column(["a", "b", "c"], 0.01)


# ------------------------------------------------------ item 4: all-NaN columns
def test_masked_bank_with_sensors_outside_every_subset() -> None:
    X, y, spec = _wide()
    model = BudgetDAGClassifier(
        spec, n_subsets=6, bank_kind="masked", cv=3, random_state=0, cost_scale=0.01
    ).fit(X, y)
    chosen = {s for subset in model.subset_selection_.subsets for s in subset}
    assert len(chosen) < spec.n_sensors  # the case that crashed: unused sensors
    bank = model.bank_
    # The default masked bank is cross-fitted: one model (and column set) per fold.
    models = bank.model_ if isinstance(bank.model_, list) else [bank.model_]
    columns = bank.model_columns_
    columns = columns if isinstance(columns, list) else [columns]
    wanted = {c for s in chosen for c in spec.groups[s]}
    for fold_model, cols in zip(models, columns, strict=True):
        used = set(np.asarray(spec.columns)[cols])
        assert used == wanted
        assert fold_model.n_features_in_ == len(used)
    # Predictions at a state read that state's columns only: the others (the
    # unused ones included) may hold anything.
    Xv = X.to_numpy(dtype=float)
    k = model.sensor_dag_.n_states - 1
    noisy = Xv.copy()
    noisy[:, ~bank.column_masks_[k]] = 1e6
    np.testing.assert_allclose(bank.predict_proba(noisy, k), bank.predict_proba(Xv, k))
    assert set(model.predict(X)) <= {0, 1}
    assert model.score(X, y) > 0.8


def test_masked_bank_state_predictions_match_fold_stack() -> None:
    """The fold models on their kept columns predict what the bank reports
    (the default masked bank is cross-fitted: their average)."""
    X, y, spec = _wide(n=150, m=8)
    model = BudgetDAGClassifier(
        spec, n_subsets=3, subset_budget=3, bank_kind="masked", cv=2, random_state=0
    ).fit(X, y)
    bank = model.bank_
    assert isinstance(bank, MaskedBank)
    Xv = X.to_numpy(dtype=float)
    assert isinstance(bank.model_, list) and len(bank.model_) == 2
    for k in range(1, bank.n_states):
        raw = []
        for fold_model, cols in zip(bank.model_, bank.model_columns_, strict=True):
            Xm = Xv[:, cols].copy()
            Xm[:, ~bank.column_masks_[k, cols]] = np.nan
            raw.append(fold_model.predict_proba(Xm))
        np.testing.assert_allclose(bank._raw_proba(Xv, k), np.mean(raw, axis=0))


# ------------------------------------------------- item 5: one subset + all sensors
def test_one_subset_with_include_all() -> None:
    X, y, spec = _wide(m=14)
    model = BudgetDAGClassifier(
        spec, n_subsets=1, include_all=True, cv=3, random_state=0
    ).fit(X, y)
    assert model.subset_selection_.subsets == [tuple(spec.names)]
    assert model.sensor_dag_.n_states == 2
    assert model.subset_selection_.reward == 0.0


# ------------------------------------------------------------ item 6: huge values
def test_huge_values_refused_naming_column_and_row() -> None:
    X, y, spec = _small()
    X.loc[7, "b"] = -3e154
    with pytest.raises(ValueError, match=r"Column 'b' has 1 value.*first at row 7"):
        BudgetDAGClassifier(spec, cv=3).fit(X, y)


def test_data_page_flags_what_fit_refuses() -> None:
    X, y, _ = _small()
    frame = X.assign(label=y)
    frame.loc[3, "a"] = 1e160
    problems = diagnose(frame, "label")
    missing = [p for p in problems if p.kind == "missing"]
    assert missing and missing[0].severity == "error"
    assert "'a'" in missing[0].message and "huge" in missing[0].message
    assert 3 not in drop_missing_rows(frame, ["a"]).index
    filled = impute(frame, ["a"])
    assert filled.loc[3, "a"] == frame["a"].drop(index=3).median()


def test_session_refuses_huge_value() -> None:
    X, y, spec = _small()
    model = BudgetDAGClassifier(spec, cv=3, random_state=0, cost_scale=0).fit(X, y)
    session = model.start()
    sensor = session.next_sensor()
    assert sensor is not None
    with pytest.raises(ValueError, match="too large"):
        session.observe(sensor, 1e200)


# ------------------------------------------------------- item 7: tiny classes
def test_cv2_with_a_class_of_three_rows() -> None:
    X, y, spec = _small(200)
    y = y.copy()
    y[:3] = 2
    for kind in ("hgb", "masked"):
        model = BudgetDAGClassifier(spec, cv=2, bank_kind=kind, random_state=0)
        model.fit(X, y)
        assert list(model.classes_) == [0, 1, 2]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_masked_bank_on_a_tiny_table(seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(8, 3)), columns=["a", "b", "c"])
    y = np.array([2, 2, 0, 1, 0, 1, 0, 1])
    spec = SensorSpec.per_column(["a", "b", "c"], 0.01)
    model = BudgetDAGClassifier(spec, cv=2, bank_kind="masked", random_state=seed)
    model.fit(X, y)
    assert set(model.predict(X)) <= {0, 1, 2}


# --------------------------------------------------------------------- item 8
def test_subnormal_cost_with_subsets() -> None:
    X, y, _ = _wide(m=14)
    costs = dict.fromkeys(X.columns, 1.0) | {"c3": 1e-320}
    spec = SensorSpec.per_column(list(X.columns), costs)
    model = BudgetDAGClassifier(spec, n_subsets=3, cv=3, random_state=0).fit(X, y)
    assert model.sensor_dag_.n_states >= 2


def test_mixed_int_and_str_labels_refused() -> None:
    X, y, spec = _small()
    mixed = np.array([1 if v else "b" for v in y], dtype=object)
    with pytest.raises(ValueError, match="mix text and numbers"):
        BudgetDAGClassifier(spec, cv=3).fit(X, mixed)


@pytest.mark.parametrize("bad", [Ridge(), SVC()])
def test_classifier_without_predict_proba_refused(bad) -> None:
    X, y, spec = _small()
    with pytest.raises((TypeError, ValueError), match="'classifier' parameter"):
        BudgetDAGClassifier(spec, classifier=bad, cv=3).fit(X, y)


def test_truncated_pickle_names_the_file(tmp_path) -> None:
    X, y, spec = _small()
    model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    path = tmp_path / "model.pkl"
    save_policy(model, path)
    data = path.read_bytes()
    cut = tmp_path / "cut.pkl"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="cut.pkl.*truncated or corrupt"):
        load_policy(cut)
    with pytest.raises(ValueError, match="truncated or corrupt"):
        loads_policy(data[:100])
    with pytest.raises(ValueError, match="truncated or corrupt"):
        loads_policy(b"")
    assert isinstance(pickle.loads(data), dict | BudgetDAGClassifier)


def test_continuous_target_refused_like_sklearn() -> None:
    X, _, spec = _small(200)
    y = np.random.default_rng(0).normal(size=200)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        BudgetDAGClassifier(spec, cv=2).fit(X, y)
    # Integer-valued floats are classes, as in scikit-learn.
    ok = (X["a"] > 0).astype(float).to_numpy()
    model = BudgetDAGClassifier(spec, cv=2, random_state=0).fit(X, ok)
    assert list(model.classes_) == [0.0, 1.0]


# ------------------------------------------------------------ item 9: specs
def test_duplicate_sensor_names_in_json_and_dict() -> None:
    text = (
        '{"sensors": [{"name": "a", "columns": ["x"], "cost": 1},'
        ' {"name": "a", "columns": ["y"], "cost": 2}]}'
    )
    with pytest.raises(ValueError, match="'a' is used by entries 0 and 1"):
        SensorSpec.from_json(text)
    with pytest.raises(ValueError, match="key 'a' twice"):
        SensorSpec.from_json('{"groups": {"a": ["x"], "a": ["y"]}, "costs": {"a": 1}}')
    with pytest.raises(ValueError, match="'a' is used by entries 0 and 1"):
        SensorSpec.from_dict(
            {"sensors": [{"name": "a", "columns": ["x"]}, {"name": "a", "columns": []}]}
        )


def test_single_string_of_columns_is_one_column() -> None:
    spec = SensorSpec.from_dict(
        {"sensors": [{"name": "lab", "columns": "glucose", "cost": 2}]}
    )
    assert spec.groups == {"lab": ["glucose"]}
    assert SensorSpec({"lab": "glucose"}, {"lab": 1}).columns == ["glucose"]
    with pytest.raises(ValueError, match="must be a list of column names"):
        SensorSpec({"lab": 5}, {"lab": 1})


def test_names_equal_as_text_collide() -> None:
    with pytest.raises(ValueError, match="1 and '1' are the same"):
        SensorSpec({1: ["a"], "1": ["b"]}, {1: 1.0, "1": 2.0})


# ----------------------------------------------------------- item 10: costs
@pytest.mark.parametrize("cost", [-1.0, float("inf"), float("nan"), "cheap"])
def test_session_refuses_bad_costs(cost) -> None:
    X, y, spec = _small()
    model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="sample_costs of sensor 'a'"):
        model.start({"a": cost})


def test_evaluate_warns_on_unseen_labels() -> None:
    X, y, spec = _small()
    model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    y_new = np.where(np.arange(len(y)) < 10, 7, y)
    with pytest.warns(UserWarning, match=r"\['7'\] were not seen"):
        report = model.evaluate(X, y_new)
    expected = float((model.predict(X) != y_new).mean())
    assert report["error"] == pytest.approx(expected)
    # one class only (a subset of the test rows) is a valid evaluation
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = model.evaluate(X[y == 1], y[y == 1])
    assert one["error"] == pytest.approx(float((model.predict(X[y == 1]) != 1).mean()))


def test_costs_that_overflow_refused() -> None:
    with pytest.raises(ValueError, match="sum to more than float64"):
        SensorSpec.per_column(["a", "b", "c"], 1e308)
    X, y, spec = _small()
    big = np.full((len(X), 3), 1e308)
    with pytest.raises(ValueError, match="row 0 sum to infinity"):
        BudgetDAGClassifier(spec, cv=3).fit(X, y, sample_costs=big)
    one = SensorSpec.per_column(["a"], 1e308)
    with pytest.raises(ValueError, match="cost_scale=10.0 times"):
        BudgetDAGClassifier(one, cv=3, cost_scale=10.0).fit(X[["a"]], y)
    # large but representable costs give finite averages
    model = BudgetDAGClassifier(one, cv=3, cost_scale=0.0, random_state=0)
    report = model.fit(X[["a"]], y).evaluate(X[["a"]], y)
    assert np.isfinite(report["avg_cost"]) and np.isfinite(report["avg_loss"])
    assert report["avg_cost"] == pytest.approx(1e308)


# ------------------------------------------------------ scikit-learn: arrays
def test_numpy_array_read_by_column_position() -> None:
    X, y, spec = _small()
    model = BudgetDAGClassifier(spec, cv=3, random_state=0, cost_scale=0.001)
    model.fit(X.to_numpy(), y)
    frame_model = BudgetDAGClassifier(spec, cv=3, random_state=0, cost_scale=0.001)
    frame_model.fit(X, y)
    np.testing.assert_array_equal(model.predict(X.to_numpy()), frame_model.predict(X))
    np.testing.assert_allclose(
        model.predict_proba(X.to_numpy()), frame_model.predict_proba(X)
    )
    traces = model.trace(X.to_numpy())
    pd.testing.assert_frame_equal(
        traces.reset_index(drop=True), frame_model.trace(X).reset_index(drop=True)
    )
    with pytest.raises(ValueError, match="X has 2 features, but BudgetDAGClassifier"):
        model.predict(X.to_numpy()[:, :2])
    with pytest.raises(ValueError, match="must be 2-d"):
        model.predict(X.to_numpy()[:, 0])
    with pytest.raises(TypeError, match="DataFrame"):
        model.predict("a,b,c")


def test_no_spec_means_one_unit_cost_sensor_per_column() -> None:
    X, y, _ = _small()
    model = BudgetDAGClassifier(cv=3, random_state=0, cost_scale=0.001).fit(X, y)
    assert model.spec_.names == ("a", "b", "c")
    assert list(model.spec_.cost_vector) == [1.0, 1.0, 1.0]
    on_array = BudgetDAGClassifier(cv=3, random_state=0, cost_scale=0.001)
    on_array.fit(X.to_numpy(), y)
    assert on_array.spec_.names == ("x0", "x1", "x2")
    np.testing.assert_array_equal(on_array.predict(X.to_numpy()), model.predict(X))
    with pytest.raises(ValueError, match="0 feature"):
        BudgetDAGClassifier(cv=3).fit(np.zeros((10, 0)), np.arange(10) % 2)
    with pytest.raises(TypeError, match="Sparse input is not supported"):
        from scipy import sparse

        BudgetDAGClassifier(cv=3).fit(sparse.csr_matrix(X.to_numpy()), y)


def test_library_settings_warn_and_fall_back_alike(monkeypatch, tmp_path):
    """Every environment variable is read by one helper: a value it cannot
    use gives a warning naming it and the default, never an error."""
    from budgetdag_core import datasets
    from budgetdag_core.tables import MAX_TABLE_BYTES, max_table_bytes

    for value in ["-5", "0", "abc"]:
        monkeypatch.setenv("BUDGETDAG_MAX_TABLE_MB", value)
        with pytest.warns(UserWarning, match=f"BUDGETDAG_MAX_TABLE_MB='{value}'"):
            assert max_table_bytes() == MAX_TABLE_BYTES
    monkeypatch.setenv("BUDGETDAG_DATA", str(tmp_path / "missing"))
    with pytest.warns(UserWarning, match="BUDGETDAG_DATA=.* is not an existing"):
        assert tmp_path / "missing" not in datasets.data_dirs()
    monkeypatch.setenv("BUDGETDAG_DATA", str(tmp_path))
    assert datasets.data_dirs()[0] == tmp_path
