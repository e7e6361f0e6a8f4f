"""LightGBMTrees: LightGBM's predictions from arrays that are checked before use."""

from __future__ import annotations

import copy
import pickle

import lightgbm as lgb
import numpy as np
import pytest

from budgetdag_core._lgbm_trees import LightGBMTrees


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 5))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    X[rng.random(X.shape) < 0.2] = np.nan  # missing values route like LightGBM's
    return X, y


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return LightGBMTrees(random_state=0, early_stopping=False, max_iter=20).fit(X, y)


def test_predictions_equal_lightgbm_own_booster(data, fitted):
    X, y = data
    params = {
        "objective": "multiclass",
        "num_class": 3,
        "learning_rate": 0.2,
        "lambda_l2": 1.0,
        "num_threads": 1,
        "deterministic": True,
        "force_row_wise": True,
        "seed": 0,
        "verbose": -1,
    }
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=20)
    np.testing.assert_array_equal(
        fitted.decision_function(X), booster.predict(X, raw_score=True)
    )
    np.testing.assert_allclose(fitted.predict_proba(X), booster.predict(X), rtol=1e-9)
    assert (fitted.predict(X) != y).mean() < 0.2


def test_binary_and_single_class_targets(data):
    X, y = data
    binary = LightGBMTrees(random_state=0).fit(
        X[:1000], y[:1000] > 0, X[1000:], y[1000:] > 0
    )
    proba = binary.predict_proba(X)
    assert proba.shape == (len(X), 2) and list(binary.classes_) == [False, True]
    assert 1 <= binary.n_iter_ <= binary.max_iter
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    single = LightGBMTrees().fit(X[:50], np.zeros(50, dtype=int))
    np.testing.assert_array_equal(single.predict_proba(X[:3]), np.ones((3, 1)))


def test_pickle_keeps_arrays_not_the_booster(data, fitted):
    X, _ = data
    fitted.predict_proba(X[:5])  # builds the cached booster
    state = fitted.__getstate__()
    assert "_booster_cache" not in state
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))


def _corrupted(fitted, attr, index, value):
    bad = copy.deepcopy(fitted)
    bad.__dict__.pop("_booster_cache", None)
    getattr(bad, attr)[index] = value
    return bad


@pytest.mark.parametrize(
    ("attr", "value", "message"),
    [
        ("left_child_", 10_000, "left_child node index out of range"),
        ("right_child_", 0, "right_child node index out of range"),  # a cycle
        ("left_child_", -10_000, "left_child leaf index out of range"),
        ("split_feature_", 5, r"split feature index out of range \[0, 5\)"),
        ("decision_type_", 1, "decision type"),
        ("threshold_", np.nan, "NaN threshold"),
        ("leaf_value_", np.inf, "non-finite leaf value"),
    ],
)
def test_corrupted_arrays_are_refused_before_lightgbm_sees_them(
    data, fitted, attr, value, message
):
    bad = _corrupted(fitted, attr, 0, value)
    with pytest.raises(ValueError, match=message):
        bad.check_integrity()
    with pytest.raises(ValueError, match=message):
        bad.predict_proba(data[0][:2])  # checked before the model text is built


def test_offsets_must_match_leaf_counts(fitted):
    bad = copy.deepcopy(fitted)
    bad.num_leaves_ = bad.num_leaves_.copy()
    bad.num_leaves_[0] += 1
    with pytest.raises(ValueError, match="offsets do not match"):
        bad.check_integrity()
    bad = copy.deepcopy(fitted)
    bad.leaf_value_ = bad.leaf_value_[:-1]
    with pytest.raises(ValueError, match="offsets|leaf_value_"):
        bad.check_integrity()
