"""Hypothesis fuzzing of specs, data and parameters (the hardening issue).

Whatever is drawn, ``fit`` either succeeds or raises a ValueError/TypeError with
a message: never another exception from deep inside numpy or scikit-learn. A
model that fits keeps the invariants: trace cost = sum of the acquired sensors'
costs; acquired sensors are in the spec and never repeated; a session reaches
the batch trace's prediction, sensors and cost; predictions are seen classes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor, SensorSpec

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

#: Values injected into the data, the costs and the labels.
BAD_VALUES = [np.nan, np.inf, -np.inf, 1e200, -3e154, 5e-324]
BAD_COSTS = [-1.0, np.inf, np.nan, 1e-320, 1e308, 0.0]


@st.composite
def problems(draw):
    """A random problem: spec, data, labels, parameters and costs, some bad.

    Hypothesis draws a seed and the sizes; the many categorical choices come
    from a generator seeded by it (uniform coverage, reproducible by seed).
    """
    seed = draw(st.integers(0, 2**16))
    n_rows = draw(st.integers(12, 60))
    # Hypothesis favours small seeds: mixing in the size spreads the streams.
    rng = np.random.default_rng([seed, n_rows])

    def pick(*options):
        return options[int(rng.integers(len(options)))]

    # At most one fault per problem, so that half of them fit and the
    # invariants of fitted models get exercised too.
    fault = pick(
        *[None] * 10,
        "cost",
        "one_class",
        "mixed",
        "float",
        "rare",
        "value",
        "text",
        "constant",
        "int",
        "drop",
        "broken",
        "sample_cost",
    )

    n_subsets = pick(None, None, 1, 2, 3)
    n_sensors = int(rng.integers(1, 4 if n_subsets is None else 6))
    names = [f"s{m}" for m in range(n_sensors)]
    groups = {n: [f"{n}_{j}" for j in range(rng.integers(1, 3))] for n in names}
    costs = {n: float(rng.uniform(0, 3)) for n in names}
    if fault == "cost":
        costs[names[0]] = pick(*BAD_COSTS)

    n_classes = 1 if fault == "one_class" else pick(2, 2, 3, 4)
    y = rng.permutation(np.arange(n_rows) % n_classes)
    if fault == "rare":
        y[0] = n_classes  # a class of one row, fewer than the folds
    label_kind = fault if fault in ("mixed", "float") else pick("int", "int", "str")
    if label_kind == "str":
        y = np.array([f"c{v}" for v in y])
    elif label_kind == "mixed":
        y = np.array([v if v % 2 else f"c{v}" for v in y], dtype=object)
    elif label_kind == "float":
        y = rng.normal(size=n_rows)

    columns = [c for cols in groups.values() for c in cols]
    X = pd.DataFrame(rng.normal(size=(n_rows, len(columns))), columns=columns)
    X.iloc[:, 0] += np.asarray(pd.factorize(pd.Series(y).astype(str))[0])
    if fault == "value":
        X.iat[int(rng.integers(n_rows)), 0] = pick(*BAD_VALUES)
    elif fault == "text":
        X[columns[-1]] = X[columns[-1]].astype(object)
        X.iat[0, len(columns) - 1] = "n/a"
    elif fault == "constant":
        X[columns[-1]] = 1.0
    elif fault == "int":
        X[columns[-1]] = rng.integers(0, 3, size=n_rows)
    elif fault == "drop":
        X = X.drop(columns=columns[-1])

    spec_form = "broken" if fault == "broken" else pick("spec", "dict", "json")
    spec: object
    if spec_form == "broken":  # two sensors of one name, columns as one string
        spec = {"sensors": [{"name": names[0], "columns": columns[0]}] * 2}
    else:
        try:
            made = SensorSpec(groups, costs)
        except ValueError as exc:  # bad costs are refused when the spec is made
            assert str(exc)
            made = None
        if made is None:
            spec = {"groups": groups, "costs": costs}
        elif spec_form == "dict":
            spec = made.to_dict()
        elif spec_form == "json":
            spec = made.to_json()
        else:
            spec = made

    params = {
        "cv": pick(2, 2, 3, 4),
        "cost_scale": pick(0.0, 0.01, 0.05, 0.2, 1.0),
        "bank_kind": pick("auto", "per_subset", "hgb", "masked"),
        "policy_degree": pick(1, 2),
        "policy_learner": pick("filter_tree", "cost_regression"),
        "policy_features": pick("sensors", "sensors+confidence"),
        "n_subsets": n_subsets,
        "include_all": pick(False, True),
        "random_state": seed,
    }
    sample_costs = None
    if rng.random() < 0.4:
        sample_costs = rng.uniform(0, 2, size=(n_rows, n_sensors))
        if fault == "sample_cost":
            sample_costs[0, 0] = pick(*BAD_COSTS)
    return X, y, spec, params, sample_costs


#: Where a refusal may come from: the library's own checks, or scikit-learn's
#: parameter and input validation (messages that name the parameter).
CHECK_MODULES = (
    "budgetdag_core",
    "sklearn/utils/_param_validation.py",
    "sklearn/utils/validation.py",
)


def _assert_raised_by_a_check(exc: BaseException) -> None:
    """The error was raised by a check, not deep inside numpy or scikit-learn
    (e.g. "Input X contains NaN" from a scaler, "'<' not supported" from
    np.unique): those used to pass as a ValueError/TypeError too."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = tb.tb_frame.f_code.co_filename if tb is not None else ""
    assert any(m in where.replace("\\", "/") for m in CHECK_MODULES), (
        f"{type(exc).__name__} raised in {where}: {exc}"
    )


def _check_fitted(model, X, sample_costs) -> None:
    spec = model.spec_
    trace = model.trace(X, sample_costs=sample_costs)
    costs = (
        np.tile(spec.cost_vector, (len(X), 1))
        if sample_costs is None
        else np.asarray(sample_costs, dtype=float)
    )
    position = {name: m for m, name in enumerate(spec.names)}
    for i, (acquired, cost) in enumerate(zip(trace["acquired"], trace["cost"])):
        assert set(acquired) <= set(spec.names)
        assert len(set(acquired)) == len(acquired)
        paid = sum(costs[i, position[s]] for s in acquired)
        assert cost == pytest.approx(paid, rel=1e-9, abs=1e-12)
    if hasattr(model, "classes_"):
        assert set(trace["prediction"]) <= set(model.classes_.tolist())
    # A session walks an example exactly as the batch trace does.
    for i in range(min(len(X), 3)):
        row_costs = None
        if sample_costs is not None:
            row_costs = dict(zip(spec.names, costs[i].tolist()))
        session = model.start(row_costs)
        prediction = session.run(X.iloc[i][spec.columns].to_dict())
        assert prediction == pytest.approx(trace["prediction"].iloc[i])
        assert tuple(session.acquired) == tuple(trace["acquired"].iloc[i])
        assert session.cost == pytest.approx(trace["cost"].iloc[i], rel=1e-9)


@FUZZ
@given(problems())
def test_fuzzed_inputs_fit_or_fail_clearly(problem) -> None:
    X, y, spec, params, sample_costs = problem
    _fit_or_fail_clearly(BudgetDAGClassifier(spec, **params), X, y, sample_costs)


def _fit_or_fail_clearly(estimator, X, y, sample_costs) -> None:
    """Fit, then check the fitted model; or fail with a checked, named error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = estimator.fit(X, y, sample_costs=sample_costs)
        except (ValueError, TypeError) as exc:
            assert str(exc).strip(), f"{type(exc).__name__} without a message"
            _assert_raised_by_a_check(exc)
            event(f"refused: {str(exc)[:40]}")
            return
        event("fitted")
        _check_fitted(model, X, sample_costs)


#: Classifier-only parameters the regressor does not take.
CLASSIFIER_ONLY = ("bank_kind", "policy_features")


@settings(FUZZ, max_examples=25)
@given(problems())
def test_fuzzed_regressor_inputs_fit_or_fail_clearly(problem) -> None:
    X, y, spec, params, sample_costs = problem
    params = {k: v for k, v in params.items() if k not in CLASSIFIER_ONLY}
    if y.dtype.kind in "iu":  # numeric class codes as a target with noise
        y = y + np.random.default_rng(0).normal(scale=0.1, size=len(y))
    _fit_or_fail_clearly(BudgetDAGRegressor(spec, **params), X, y, sample_costs)
