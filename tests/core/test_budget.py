"""fit_for_budget: bisection on cost_scale against a held-out average cost."""

from __future__ import annotations

import numpy as np
import pytest

from budgetdag_core import BudgetDAGClassifier, fit_for_budget
from tests.core.tradeoff_problems import make_problem


@pytest.fixture(scope="module")
def problem():
    return make_problem(600, 0)


@pytest.fixture(scope="module")
def small():
    return make_problem(300, 0)


@pytest.mark.parametrize("target", [2.0, 3.0])
def test_meets_the_target_within_tolerance(problem, target):
    X, y, spec = problem
    calls: list[str] = []
    model = fit_for_budget(
        X,
        y,
        spec,
        target,
        tolerance=0.1,
        cv=3,
        random_state=0,
        progress=lambda stage, *_: calls.append(stage),
    )
    report = model.budget_report_
    assert report.met
    assert abs(report.validation_avg_cost - target) <= 0.1
    assert model.cost_scale == report.cost_scale > 0
    assert report.n_train + report.n_validation == len(X)
    assert report.n_validation == 150
    # The bank is fitted once (cv=3 fold fits per state: cross-fitted since
    # issue 13, no refit), then only policies per bisection step.
    assert calls.count("bank") == model.bank_.n_states * 3
    # the search's start (0 of max_iter), then each trial
    assert calls.count("budget") == len(report.history) + 1
    chosen = report.history.set_index("cost_scale").loc[report.cost_scale]
    assert chosen["validation_avg_cost"] == report.validation_avg_cost
    assert 0 < report.train_avg_cost < spec.total_cost
    assert set(model.predict(X)) <= {0, 1}
    # The rows the model was fitted on: Graph-Reduce replays on them.
    rows = report.train_rows
    assert len(rows) == report.n_train and len(set(rows)) == len(rows)
    record = model.graph_reduce_record(X.iloc[rows], y.iloc[rows])
    np.testing.assert_allclose(record.cost_to_go[:, 0], model.train_cost_to_go_)


def test_generous_budget_gives_scale_zero(small):
    X, y, spec = small
    model = fit_for_budget(X, y, spec, 100.0, cv=3, random_state=0)
    report = model.budget_report_
    assert report.cost_scale == 0.0 and report.met
    assert len(report.history) == 1


def test_zero_budget_buys_nothing(small):
    X, y, spec = small
    model = fit_for_budget(X, y, spec, 0.0, cv=3, random_state=0, max_iter=8)
    report = model.budget_report_
    assert report.validation_avg_cost <= report.tolerance
    assert model.evaluate(X, y)["avg_cost"] <= 1.0


def test_refit_uses_all_rows(small):
    X, y, spec = small
    model = fit_for_budget(
        X, y, spec, 3.0, tolerance=0.1, refit=True, cv=3, random_state=0
    )
    report = model.budget_report_
    assert report.refit
    assert model.bank_.oof_proba_.shape[0] == len(X)
    # The bank's fingerprint only matches a bank fitted on exactly (X, y).
    direct = BudgetDAGClassifier(
        spec, cost_scale=report.cost_scale, cv=3, random_state=0
    ).fit(X, y, bank=model.bank_)
    np.testing.assert_array_equal(model.predict(X), direct.predict(X))


def test_bad_arguments(small):
    X, y, spec = small
    with pytest.raises(ValueError, match="target_avg_cost"):
        fit_for_budget(X, y, spec, -1.0)
    with pytest.raises(ValueError, match="validation_fraction"):
        fit_for_budget(X, y, spec, 1.0, validation_fraction=1.5)
    with pytest.raises(ValueError, match="max_iter"):
        fit_for_budget(X, y, spec, 1.0, max_iter=0)
