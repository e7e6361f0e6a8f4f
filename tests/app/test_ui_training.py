"""The app's training glue (ui.training), without Streamlit."""

from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

from budgetdag_core import Dataset, SensorSpec
from budgetdag_core.tradeoff import AUTO_SCALE_TRIALS
from ui.reports import comparison_table
from ui.training import (
    CLASSIFIERS,
    SPARSE_SHARES,
    ProgressReporter,
    TrainSettings,
    app_n_jobs,
    app_workers,
    bank_key,
    bank_kind_of,
    describe_model,
    estimator_params,
    make_classifier,
    make_model,
    rescaled_only,
    reusable_bank,
    run_from_model,
    train,
)


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(1)
    n = 150
    frame = pd.DataFrame({"u": rng.normal(size=n), "v": rng.normal(size=n)})
    frame["label"] = np.where(frame["u"] - frame["v"] > 0, "a", "b")
    spec = SensorSpec.per_column(["u", "v"], cost=1.0)
    return Dataset(
        "toy", frame[:100], frame[100:].reset_index(drop=True), "label", spec,
        kind="upload",
    )  # fmt: skip


def test_progress_reporter_maps_stages_onto_one_bar():
    seen = []
    report = ProgressReporter(lambda f, t: seen.append((f, t)), bank_reused=False)
    for done in range(1, 11):
        report("bank", done, 10)
    for done in range(1, 5):
        report("policies", done, 4)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions)
    assert fractions[9] == pytest.approx(0.8) and fractions[-1] == pytest.approx(1.0)
    assert seen[0][1] == "Fitting the classifier bank: 1 of 10 fits"
    assert seen[-1][1] == "Learning node policies: 4 of 4 nodes"


def test_progress_reporter_with_reused_bank_and_throttling():
    seen = []
    report = ProgressReporter(
        lambda f, t: seen.append(f), bank_reused=True, min_step=0.1
    )
    for done in range(1, 1001):
        report("policies", done, 1000)
    assert seen[0] == pytest.approx(0.001) and seen[-1] == 1.0  # first, last shown
    assert len(seen) <= 11  # throttled, but the end is always reported


def test_progress_reporter_gives_the_scale_search_the_policies_last_part():
    # cost_scale="auto": the first scale's nodes take one trial's share of
    # the policies' part, the other trials the rest, up to the fit's end.
    seen = []
    report = ProgressReporter(
        lambda f, t: seen.append((f, t)), bank_reused=True, scale_search=True
    )
    report("policies", 4, 4)
    assert seen[-1][0] == pytest.approx(1 / AUTO_SCALE_TRIALS)
    report("cost scale", 1, 10)
    assert seen[-1][1].startswith("Choosing the cost scale on the training rows")
    report("cost scale", 10, 10)
    assert seen[-1] == (1.0, "Chose the cost scale on the training rows")


def test_progress_reporter_says_each_stage_when_it_starts():
    # The evaluation's start does not move the bar, but its words show.
    seen = []
    report = ProgressReporter(
        lambda f, t: seen.append((f, t)),
        bank_reused=True,
        evaluate_share=0.2,
        result_share=0.1,
    )
    report("policies", 4, 4)
    assert seen[-1] == (pytest.approx(0.7), "Learning node policies: 4 of 4 nodes")
    report("evaluate", 0, 1)
    assert seen[-1][0] == pytest.approx(0.7)
    assert seen[-1][1].startswith("Evaluating on the test set")
    report("evaluate", 1, 1)
    # The result's way to the page keeps the bar's last share.
    assert seen[-1] == (
        pytest.approx(0.9),
        "Evaluated on the test set: returning the result",
    )


def test_make_classifier():
    assert make_classifier("logistic", 0) is None  # the core's default
    forest = make_classifier("random_forest", 3)
    assert isinstance(forest, RandomForestClassifier) and forest.random_state == 3
    with pytest.raises(ValueError, match="Unknown classifier 'svm'"):
        make_classifier("svm", 0)
    # The boosting options are core bank kinds with their own tuned boosters.
    assert make_classifier("hist_gradient_boosting", 3) is None
    assert make_classifier("masked_boosting", 0) is None
    assert bank_kind_of("hist_gradient_boosting") == "hgb"
    assert bank_kind_of("masked_boosting") == "masked"
    assert bank_kind_of("logistic") == bank_kind_of("random_forest") == "per_subset"


@pytest.mark.parametrize(
    "name", ["logistic", "random_forest", "hist_gradient_boosting", "masked_boosting"]
)
def test_train_with_bank_classifiers(toy, name):
    settings = TrainSettings(cost_scale=0.01, classifier=name, cv=2, random_state=0)
    run = train(toy, toy.spec, settings)
    assert run.model.bank_kind == bank_kind_of(name)
    assert run.metrics["n_samples"] == 50
    assert run.metrics["error"] < run.states.iloc[0]["error"]
    assert run.bank_key == bank_key(toy, toy.spec, settings)
    # The run's settings are read back from the model: the form's, exactly.
    assert run.settings == settings
    assert CLASSIFIERS[name] in describe_model(run.model)
    assert bank_key(toy, toy.spec, run.params) == run.bank_key
    table = comparison_table(run.metrics, run.states, run.spec.n_sensors)
    assert table.loc["All sensors", "avg cost"] == 2.0
    assert table.loc["BudgetDAG policy", "cost vs all sensors"] == pytest.approx(
        run.metrics["avg_cost"] / 2.0
    )


def test_bank_reuse_rules(toy):
    settings = TrainSettings(cost_scale=0.01, cv=2, random_state=0)
    run = train(toy, toy.spec, settings)
    same_bank = TrainSettings(cost_scale=0.5, policy_degree=1, cv=2, random_state=0)
    assert reusable_bank(run, toy, toy.spec, same_bank) is run.model.bank_
    for other in (
        TrainSettings(cv=3, random_state=0),
        TrainSettings(cv=2, random_state=1),
        TrainSettings(cv=2, random_state=0, classifier="random_forest"),
    ):
        assert reusable_bank(run, toy, toy.spec, other) is None
    cheaper = SensorSpec.per_column(["u", "v"], cost=0.5)
    assert reusable_bank(run, toy, cheaper, same_bank) is None
    again = train(toy, toy.spec, same_bank, run)
    assert again.bank_reused and again.model.bank_ is run.model.bank_
    assert again.model.policy_degree == 1


def test_a_many_sensor_run_reuses_its_candidates(tmp_path):
    """Beyond the full DAG, a new cost scale reuses every candidate DAG of
    the previous fit (chosen among again, as refit_policies does) instead of
    fitting the bank again; a slim saved model's bank cannot teach."""
    from budgetdag_core import load_policy, save_policy
    from budgetdag_core.estimator import fitted_plan
    from ui.state import MANY_SENSOR_CLASSIFIER

    rng = np.random.default_rng(0)
    names = [f"s{i}" for i in range(14)]
    frame = pd.DataFrame(rng.normal(size=(160, 14)), columns=names)
    frame["label"] = np.where(frame["s0"] + frame["s3"] > 0, "a", "b")
    data = Dataset(
        "many", frame[:120], frame[120:].reset_index(drop=True), "label",
        SensorSpec.per_column(names, cost=1.0), kind="upload",
    )  # fmt: skip
    first = TrainSettings(
        cost_scale=0.01, classifier=MANY_SENSOR_CLASSIFIER, cv=2, random_state=0
    )
    run = train(data, data.spec, first)
    candidates = run.model.strategy_banks_
    other = TrainSettings(
        cost_scale=0.05, classifier=MANY_SENSOR_CLASSIFIER, cv=2, random_state=0
    )
    assert reusable_bank(run, data, data.spec, other) is candidates
    # Only the cost scale changed: a what-if, refit as refit_policies does.
    assert rescaled_only(run.model, make_model(data.spec, other))
    assert not rescaled_only(run.model, make_model(data.spec, replace(other, cv=3)))
    again = train(data, data.spec, other, run)
    assert again.bank_reused and again.model.strategy_banks_ is candidates
    X, y = data.X("train", data.spec), data.y("train")
    refit = run.model.refit_policies(X, y, 0.05)
    assert again.model.strategy_ == refit.strategy_
    Xt = data.X("test", data.spec)
    np.testing.assert_array_equal(
        again.model.predict_proba(Xt), refit.predict_proba(Xt)
    )
    # A worker's result brings the choice's held-out DAGs back (the next
    # refit reuses them), apart from the rest; a saved model leaves them out.
    from ui.worker import attach_held_out, dumps_result, loads_result

    sent, apart = dumps_result(again, ())
    back, waiting = loads_result(sent, ())
    assert candidates._held_out and len(apart) == 1
    assert not back.model.strategy_banks_._held_out
    assert list(waiting.values()) == [back.model.strategy_banks_]
    attach_held_out(waiting, pickle.dumps(apart))
    assert back.model.strategy_banks_._held_out.keys() == candidates._held_out.keys()
    path = save_policy(run.model, tmp_path / "slim.pkl")
    slim = load_policy(path)
    assert fitted_plan(slim).reusable_bank(slim) is None
    assert fitted_plan(run.model).reusable_bank(run.model) is candidates
    loaded = run_from_model(slim, data, "loaded")
    assert reusable_bank(loaded, data, data.spec, loaded.settings) is None


def test_a_regression_trains_with_the_automatic_scale(toy):
    # "auto", the Train page's default, reaches a regressor as it is (a
    # float of it broke the page on regression data).
    frame = toy.train.assign(label=toy.train["u"] * 2 + toy.train["v"])
    test = toy.test.assign(label=toy.test["u"] * 2 + toy.test["v"])
    data = Dataset(
        "toy_reg", frame, test, "label", toy.spec, task="regression", kind="upload"
    )
    settings = TrainSettings(
        task="regression", classifier="ridge", cost_scale="auto", cv=2, random_state=0
    )
    assert settings.params()["cost_scale"] == "auto"
    run = train(data, data.spec, settings)
    assert run.model.cost_scale == "auto" and run.settings.cost_scale == "auto"
    assert run.metrics["avg_sensors"] > 0


def test_run_from_model(toy):
    run = train(toy, toy.spec, TrainSettings(cost_scale=0.01, cv=2))
    loaded = run_from_model(run.model, toy, "loaded from x.pkl")
    assert loaded.metrics == run.metrics
    assert loaded.settings.cost_scale == 0.01 and loaded.settings.cv == 2
    assert reusable_bank(loaded, toy, toy.spec, loaded.settings) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3", 3), (" 1 ", 1), ("0", None), ("-2", None), ("many", None), ("", None)],
)
def test_app_threads_come_from_the_environment(monkeypatch, value, expected):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setenv("BUDGETDAG_N_JOBS", value)
    # Not a positive integer: every core (2 here), never an error in the app,
    # and a warning for the server log that names the setting.
    if expected is None and value:
        with pytest.warns(UserWarning, match="BUDGETDAG_N_JOBS=.*positive integer"):
            assert app_n_jobs() == 2
    else:
        assert app_n_jobs() == (2 if expected is None else expected)


def test_workers_share_the_cores(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    monkeypatch.delenv("BUDGETDAG_N_JOBS", raising=False)
    monkeypatch.delenv("BUDGETDAG_WORKERS", raising=False)
    assert (app_workers(), app_n_jobs()) == (4, 2)  # half the cores, 2 threads each
    monkeypatch.setenv("BUDGETDAG_WORKERS", "1")
    assert (app_workers(), app_n_jobs()) == (1, 8)
    monkeypatch.setenv("BUDGETDAG_WORKERS", "lots")
    with pytest.warns(UserWarning, match="BUDGETDAG_WORKERS='lots'"):
        assert app_workers() == 4
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    monkeypatch.delenv("BUDGETDAG_WORKERS")
    assert (app_workers(), app_n_jobs()) == (1, 1)


def test_app_fits_and_sweeps_use_the_app_threads(toy, monkeypatch):
    monkeypatch.setenv("BUDGETDAG_N_JOBS", "2")
    settings = TrainSettings(cost_scale=0.01, cv=2, random_state=0)
    assert make_model(toy.spec, settings).n_jobs == 2
    assert estimator_params(settings)["n_jobs"] == 2
    monkeypatch.setenv("BUDGETDAG_N_JOBS", "1")
    one = train(toy, toy.spec, settings)
    monkeypatch.setenv("BUDGETDAG_N_JOBS", "2")
    two = train(toy, toy.spec, settings)
    assert (one.model.n_jobs, two.model.n_jobs) == (1, 2)
    # A model's own n_jobs (a loaded one's) gives way to the app's.
    assert make_model(toy.spec, {**one.params, "n_jobs": 7}).n_jobs == 2
    assert one.metrics == two.metrics  # threads change the time only
    assert bank_key(toy, toy.spec, one.params) == bank_key(toy, toy.spec, two.params)


def test_progress_reporter_shares_a_many_sensor_fit_by_its_stages():
    # The bank's kind, its folds, the DAGs, the choice among them (a close
    # call counts it again), a rival kind's folds, then the policies.
    seen = []
    report = ProgressReporter(
        lambda f, t: seen.append((f, t)), bank_reused=False, sparse=True, min_step=0
    )

    def steps(stage: str, total: int) -> list[tuple[str, int, int]]:
        return [(stage, done, total) for done in range(total + 1)]

    calls = steps("bank kind", 1) + steps("bank", 5) + steps("strategies", 2)
    calls += steps("choice", 4) + steps("choice", 12)  # a close call
    calls += steps("bank", 5) + steps("policies", 9)  # a rival kind's folds
    ends = {}
    for stage, done, total in calls:
        report(stage, done, total)
        ends[stage] = seen[-1][0]
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    shares = list(SPARSE_SHARES.values())
    assert ends["bank kind"] == pytest.approx(shares[0])
    assert ends["strategies"] == pytest.approx(sum(shares[:3]))
    assert ends["choice"] == pytest.approx(sum(shares))
    assert any(t.startswith("Comparing the DAGs' policies") for _, t in seen)
    # A reused bank: the choice and the policies share the whole bar.
    seen.clear()
    again = ProgressReporter(
        lambda f, t: seen.append((f, t)), bank_reused=True, sparse=True
    )
    again("choice", 4, 4)
    left = shares[3] + 1 - sum(shares)
    assert seen[-1][0] == pytest.approx(shares[3] / left)
