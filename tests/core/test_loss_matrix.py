"""The classifier's optional misclassification cost matrix (``loss_matrix``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from budgetdag_core import BudgetDAGClassifier, SensorSpec
from budgetdag_core.decisions import decide


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 400
    y = (rng.random(n) < 0.3).astype(int)  # class 1 is rare
    X = pd.DataFrame(
        {
            "cheap": (2 * y - 1) * 0.6 + rng.normal(size=n),
            "lab": (2 * y - 1) * 1.5 + rng.normal(scale=0.5, size=n),
        }
    )
    spec = SensorSpec.per_column(list(X.columns), cost={"cheap": 0.01, "lab": 0.1})
    return X, y, spec


def _fit(spec, X, y, **kw):
    # Linear data, tuned for the logistic bank (with boosting the plain model
    # already buys the lab test for everyone, leaving nothing to compare).
    params = {"policy_degree": 1, "cv": 3, "random_state": 0, "bank_kind": "per_subset"}
    return BudgetDAGClassifier(spec, **{**params, **kw}).fit(X, y)


def test_scaled_zero_one_matrix_equals_scaled_cost(data):
    # Multiplying every loss by 10 and cost_scale by 10 multiplies the whole
    # cost-sensitive problem by 10: the same policies.
    X, y, spec = data
    base = _fit(spec, X, y, cost_scale=0.5)
    scaled = _fit(spec, X, y, cost_scale=5.0, loss_matrix=10 * (1 - np.eye(2)))
    pd.testing.assert_frame_equal(base.trace(X), scaled.trace(X))


def test_costly_missed_positives_buy_more_sensors(data):
    X, y, spec = data
    plain = _fit(spec, X, y, cost_scale=1.0)
    missed = _fit(spec, X, y, cost_scale=1.0, loss_matrix=[[0, 1], [8, 0]])
    assert missed.evaluate(X, y)["avg_cost"] > plain.evaluate(X, y)["avg_cost"]


def test_avg_loss_uses_the_matrix(data):
    X, y, spec = data
    lm = np.array([[0.0, 1.0], [8.0, 0.0]])
    model = _fit(spec, X, y, cost_scale=1.0, loss_matrix=lm)
    tr = model.trace(X)
    result = model.evaluate(X, y)
    expected = lm[y, tr["prediction"].to_numpy()].mean() + tr["cost"].mean()
    assert result["avg_loss"] == pytest.approx(expected)
    assert result["error"] == pytest.approx(np.mean(tr["prediction"] != y))
    _, y_enc = np.unique(y, return_inverse=True)
    pred = model.bank_.oof_predictions(lm)
    np.testing.assert_array_equal(
        model.bank_.oof_losses(y_enc, lm), lm[y_enc[:, None], pred]
    )


def test_bad_matrix_raises(data):
    X, y, spec = data
    with pytest.raises(ValueError, match="loss_matrix must be 2x2"):
        _fit(spec, X, y, loss_matrix=np.ones((3, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        _fit(spec, X, y, loss_matrix=[[0, -1], [1, 0]])


def _draw(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    X = pd.DataFrame(
        {
            "cheap": (2 * y - 1) * 0.6 + rng.normal(size=n),
            "lab": (2 * y - 1) * 1.5 + rng.normal(scale=0.5, size=n),
        }
    )
    return X, y


MISSES = np.array([[0.0, 1.0], [8.0, 0.0]])  # a missed positive costs 8


@pytest.fixture(scope="module")
def misses_model(data):
    X, y, spec = data
    return _fit(spec, X, y, cost_scale=1.0, loss_matrix=MISSES)


def test_predictions_are_the_least_expected_loss_class(misses_model):
    model, lm = misses_model, MISSES
    X_new, _ = _draw(500, seed=1)
    proba = model.predict_proba(X_new)
    expected = model.classes_[(proba @ lm).argmin(axis=1)]
    np.testing.assert_array_equal(model.predict(X_new), expected)
    np.testing.assert_array_equal(model.trace(X_new)["prediction"], expected)
    session = model.start()
    for sensor in iter(session.next_sensor, None):
        session.observe(sensor, X_new.iloc[0][sensor])
    assert session.predict() == expected[0]
    # Costly misses make the rare class predicted where it is merely plausible:
    # with the cheap sensor alone many rows change.
    (cheap,) = model.state_indices([["cheap"]])
    cheap_proba = model.bank_.predict_proba(X_new.to_numpy(float), cheap)
    shifted = model.labels_from_proba(cheap_proba)
    assert (shifted == 1).mean() > (cheap_proba.argmax(axis=1) == 1).mean() + 0.1


def test_decisions_lower_the_held_out_matrix_loss(misses_model):
    model, lm = misses_model, MISSES
    X_new, y_new = _draw(4000, seed=2)
    proba = model.predict_proba(X_new)
    decided = lm[y_new, np.searchsorted(model.classes_, model.predict(X_new))]
    most_probable = lm[y_new, proba.argmax(axis=1)]
    assert decided.mean() < most_probable.mean()


@given(
    arrays(float, (6, 4), elements=st.floats(0.01, 1.0)),
    st.floats(0.1, 10.0),
)
def test_decide_is_argmax_under_scaled_zero_one_loss(weights, scale):
    proba = weights / weights.sum(axis=1, keepdims=True)
    # Skip exact ties, where both rules are right but may pick different classes.
    top2 = np.sort(proba, axis=1)[:, -2:]
    rows = top2[:, 1] - top2[:, 0] > 1e-9
    lm = scale * (1 - np.eye(4))
    np.testing.assert_array_equal(decide(proba, lm)[rows], proba.argmax(axis=1)[rows])


@given(
    arrays(float, (5, 3), elements=st.floats(0.0, 1.0)),
    arrays(float, (3, 3), elements=st.floats(0.0, 20.0)),
)
def test_decide_minimises_expected_loss(proba, lm):
    expected = proba @ lm
    chosen = expected[np.arange(5), decide(proba, lm)]
    assert np.all(chosen <= expected.min(axis=1) + 1e-12)


def test_tradeoff_frame_reports_the_matrix_loss(data):
    from budgetdag_core import tradeoff_curve
    from budgetdag_core.tradeoff import lower_convex_hull

    X, y, spec = data
    X_test, y_test = _draw(600, seed=3)
    params = {"policy_degree": 1, "cv": 3, "random_state": 0, "bank_kind": "per_subset"}
    res = tradeoff_curve(
        X,
        y,
        spec,
        n_points=4,
        X_test=X_test,
        y_test=y_test,
        loss_matrix=MISSES,
        **params,
    )
    test = res.frame[res.frame["split"] == "test"]
    for scale, model in zip(res.cost_scales, res.models, strict=True):
        row = test[(test["method"] == "dag") & (test["cost_scale"] == scale)].iloc[0]
        pred = np.searchsorted(model.classes_, model.predict(X_test))
        assert row["loss"] == pytest.approx(MISSES[y_test, pred].mean())
        assert row["error"] == pytest.approx((model.predict(X_test) != y_test).mean())
    fixed = test[test["method"] == "fixed"]
    for _, row in fixed.iterrows():
        proba = res.models[0].bank_.predict_proba(X_test.to_numpy(float), row["state"])
        decided = (proba @ MISSES).argmin(axis=1)
        assert row["loss"] == pytest.approx(MISSES[y_test, decided].mean())
    assert test.loc[test["method"] == "oracle", "loss"].isna().all()
    # The non-adaptive bound on the matrix loss, from the frame.
    hull = lower_convex_hull(fixed["avg_cost"], fixed["loss"])
    assert fixed["loss"].iloc[hull[-1]] == fixed["loss"].min()
