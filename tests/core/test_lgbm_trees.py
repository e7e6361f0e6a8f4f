"""LightGBMTrees: LightGBM's predictions (compiled kernels) from arrays that are
checked before use."""

from __future__ import annotations

import copy
import pickle

import lightgbm as lgb
import numpy as np
import pytest

from budgetdag_core.bank._lgbm_trees import LightGBMTrees
from budgetdag_core.bank._row_order import (
    SORT_FROM_ROWS,
    rows_in_order,
    similar_rows_order,
    worth_sorting,
)


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


def _booster_like_default_trees(X, y, rounds: int) -> lgb.Booster:
    """LightGBM trained as LightGBMTrees trains by default (3 classes)."""
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
    return lgb.train(params, lgb.Dataset(X, y), num_boost_round=rounds)


def test_predictions_equal_lightgbm_own_booster(data, fitted):
    X, y = data
    booster = _booster_like_default_trees(X, y, 20)
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


def test_pickle_keeps_arrays_not_the_compiled_cache(data, fitted):
    X, _ = data
    fitted.predict_proba(X[:5])  # builds the cached kernel arrays
    assert "_compiled_cache" in fitted.__dict__
    state = fitted.__getstate__()
    assert "_compiled_cache" not in state
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))


def _corrupted(fitted, attr, index, value):
    bad = copy.deepcopy(fitted)
    bad.__dict__.pop("_compiled_cache", None)
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
def test_corrupted_arrays_are_refused_before_the_kernels_read_them(
    data, fitted, attr, value, message
):
    bad = _corrupted(fitted, attr, 0, value)
    with pytest.raises(ValueError, match=message):
        bad.check_integrity()
    with pytest.raises(ValueError, match=message):
        bad.predict_proba(data[0][:2])  # checked before the kernels index them


def test_trees_per_round_must_match_the_classes(data, fitted):
    """Each tree writes one raw score: a count that disagrees with the classes
    would make the kernels write outside their output."""
    bad = copy.deepcopy(fitted)
    bad.__dict__.pop("_compiled_cache", None)
    bad.n_trees_per_iteration_ = 4
    with pytest.raises(ValueError, match="4 trees per round for 3 classes"):
        bad.predict_proba(data[0][:2])


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


def test_present_columns_score_as_missing(data, fitted):
    """``present`` scores the other columns as LightGBM scores NaN there,
    whatever they hold."""
    X, _ = data
    present = np.array([True, False, True, True, False])
    blanked = X.copy()
    blanked[:, ~present] = np.nan
    garbage = X.copy()
    garbage[:, ~present] = 1e9
    expected = fitted.decision_function(blanked)
    np.testing.assert_array_equal(fitted.decision_function(garbage, present), expected)
    np.testing.assert_array_equal(fitted.decision_function(X, present), expected)
    few = fitted.decision_function(X[:9], present)  # the few-row walk
    np.testing.assert_array_equal(few, expected[:9])
    np.testing.assert_array_equal(
        fitted.decision_function(X[:9]), fitted.decision_function(X)[:9]
    )


@pytest.mark.parametrize("with_nan", [True, False])
def test_scores_do_not_depend_on_the_memory_layout(data, fitted, with_nan):
    """Row-major, column-major, strided views and float32 input all give
    LightGBM's raw scores (the kernel reads large batches by column)."""
    X, _ = data
    if not with_nan:
        X = np.nan_to_num(X, nan=0.5)
    expected = fitted.decision_function(np.ascontiguousarray(X))
    wide = np.asfortranarray(np.hstack([X, X]))
    layouts = {
        "fortran": np.asfortranarray(X),
        "column view of a wider table": wide[:, : X.shape[1]],
        "row slice of a column-major table": np.asfortranarray(np.vstack([X, X]))[
            : len(X)
        ],
        "every other row": np.repeat(X, 2, axis=0)[::2],
        "reversed columns twice": X[:, ::-1][:, ::-1],
    }
    for name, layout in layouts.items():
        np.testing.assert_array_equal(
            fitted.decision_function(layout), expected, err_msg=name
        )
    np.testing.assert_array_equal(
        fitted.decision_function(X.astype(np.float32)),
        fitted.decision_function(X.astype(np.float32).astype(np.float64)),
    )


def test_state_scores_equal_one_state_at_a_time(data, fitted):
    X, _ = data
    rng = np.random.default_rng(1)
    states = rng.random((12, X.shape[1])) < 0.5
    states[0] = True
    raw = fitted.state_decision_function(X[:300], states)
    assert raw.shape == (300, 12, 3)
    for k, present in enumerate(states):
        np.testing.assert_array_equal(
            raw[:, k], fitted.decision_function(X[:300], present)
        )


@pytest.mark.parametrize(
    "kind", ["greedy trials", "a column no state has", "many states, two words"]
)
def test_state_scores_equal_one_state_at_a_time_in_every_walk(data, fitted, kind):
    """The kernel's shortcuts (columns no state or every state has, leaves
    reached by most states of a word) give each state its own walk's sums,
    bit for bit."""
    X, _ = data
    d = X.shape[1]
    rng = np.random.default_rng(2)
    if kind == "greedy trials":  # a held set plus one candidate each
        held = np.array([True, False, True, False, False])
        states = np.repeat(held[None], d, axis=0) | np.eye(d, dtype=bool)
    elif kind == "a column no state has":
        states = rng.random((9, d)) < 0.6
        states[:, 3] = False
    else:  # 70 states: a full word, then one of 6; most share each leaf
        states = np.repeat(np.eye(d, dtype=bool)[[0, 1, 1, 2, 4]], 14, axis=0)
        states[::9] |= rng.random((8, d)) < 0.5
    raw = fitted.state_decision_function(X[:200], states)
    for k, present in enumerate(states):
        np.testing.assert_array_equal(
            raw[:, k], fitted.decision_function(X[:200], present), err_msg=str(k)
        )


def test_zero_as_missing_trees_score_like_lightgbm():
    """Trees whose missing type is "zero" (never trained by the bank, but
    valid in a model's arrays) follow LightGBM's rule too."""
    from budgetdag_core.bank._lgbm_trees import _parse_trees

    rng = np.random.default_rng(3)
    X = rng.normal(size=(800, 4))
    X[rng.random(X.shape) < 0.3] = 0.0
    y = (X[:, 0] + (X[:, 1] == 0) > 0.2).astype(int)
    params = {"objective": "binary", "zero_as_missing": True, "verbose": -1}
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=15)
    trees = LightGBMTrees()
    trees.classes_ = np.array([0, 1])
    trees.n_features_in_ = 4
    trees.n_trees_per_iteration_ = 1
    trees._store_trees(_parse_trees(booster.model_to_string()))
    assert ((trees.decision_type_ >> 2) & 3 == 1).any()
    X_new = rng.normal(size=(500, 4))
    X_new[rng.random(X_new.shape) < 0.3] = 0.0
    X_new[rng.random(X_new.shape) < 0.1] = np.nan
    expected = booster.predict(X_new, raw_score=True)
    for rows in (slice(None), slice(0, 7)):  # the many- and few-row walks
        np.testing.assert_allclose(
            trees.decision_function(X_new[rows]), expected[rows], rtol=1e-12, atol=1e-12
        )


def test_wrong_width_is_refused(fitted):
    with pytest.raises(ValueError, match="5 columns"):
        fitted.decision_function(np.zeros((3, 4)))


def test_large_batches_walked_in_sorted_order_score_like_lightgbm():
    """Large batches of many trees are walked in a similarity order and
    put back: the scores stay LightGBM's, row for row, with NaN, absent
    columns, constant and all-missing columns."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 6))
    y = (X[:, 0] - X[:, 3] > 0).astype(int) + (X[:, 1] > 0.5)
    X[rng.random(X.shape) < 0.15] = np.nan
    X[:, 5] = 1.0  # never split on: the sorted copy skips it
    model = LightGBMTrees(random_state=0, early_stopping=False, max_iter=15).fit(X, y)
    read = np.flatnonzero(model._compiled()["split_counts"])
    assert 5 not in read
    assert worth_sorting(len(X), len(model.num_leaves_), len(read))
    booster_scores = _booster_like_default_trees(X, y, 15).predict(X, raw_score=True)
    np.testing.assert_array_equal(model.decision_function(X), booster_scores)

    def in_small_batches(X, present=None):  # below SORT_FROM_ROWS: unsorted
        return np.vstack(
            [
                model.decision_function(X[a : a + 1000], present)
                for a in range(0, len(X), 1000)
            ]
        )

    np.testing.assert_array_equal(in_small_batches(X), booster_scores)
    present = np.array([True, False, True, True, False, False])
    blanked = X.copy()
    blanked[:, ~present] = np.nan
    np.testing.assert_array_equal(
        model.decision_function(X, present), in_small_batches(blanked)
    )
    np.testing.assert_array_equal(
        model.decision_function(X, present), in_small_batches(X, present)
    )
    odd = X.copy()
    odd[:, 2] = 7.0  # constant
    odd[:, 4] = np.nan  # never observed
    np.testing.assert_array_equal(model.decision_function(odd), in_small_batches(odd))


def test_similar_rows_order_is_a_permutation():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(5000, 4))
    X[:, 1] = np.nan
    X[::7, 0] = np.inf
    X[:, 3] = 2.0
    counts = np.array([3.0, 5.0, 0.0, 2.0])
    order = similar_rows_order(X, counts)
    np.testing.assert_array_equal(np.sort(order), np.arange(len(X)))
    finite = np.isfinite(X[:, 0])
    assert (np.diff(X[order][finite[order], 0]) >= 0).all()  # the one usable column
    np.testing.assert_array_equal(similar_rows_order(X, np.zeros(4)), np.arange(len(X)))
    sorted_rows = rows_in_order(X, order)
    assert sorted_rows.flags.f_contiguous
    np.testing.assert_array_equal(sorted_rows, X[order])
    some = rows_in_order(X, order, np.array([0, 3]))
    np.testing.assert_array_equal(some[:, [0, 3]], X[order][:, [0, 3]])
    assert not worth_sorting(SORT_FROM_ROWS - 1, 1000, 1)
    assert not worth_sorting(10**6, 100, 70)  # few trees over many columns
    assert not worth_sorting(10**6, 15, 1)  # a handful of trees
    assert worth_sorting(10**6, 400, 9)
