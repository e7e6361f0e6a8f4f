"""Bundled demos: Spambase, AFABench's CUBE and CUBE-NM, and the digits."""

from __future__ import annotations

import numpy as np
import pytest

from budgetdag_core import load_demo
from budgetdag_core.datasets import (
    DEMOS,
    cube_dataset,
    cube_nm_block_spec,
    cube_nm_columns,
    cube_nm_dataset,
    digits_dataset,
)


@pytest.fixture(scope="module")
def spam():
    return load_demo("spam")


def test_spam_demo_shape_split_and_spec(spam):
    assert "spam" in DEMOS and spam.description == DEMOS["spam"]
    assert spam.label == "label"
    # 4601 rows split 75/25; 57 features, each its own sensor of cost 1.
    assert (len(spam.train), len(spam.test)) == (3450, 1151)
    assert spam.X_train.shape == (3450, 57) and spam.X_test.shape == (1151, 57)
    assert spam.spec.n_sensors == 57
    assert all(list(spam.spec.groups[n]) == [n] for n in spam.spec.names)
    assert set(spam.spec.costs.values()) == {1.0}
    assert spam.spec.names[:2] == ("word_freq_make", "word_freq_address")
    assert spam.spec.names[-1] == "capital_run_length_total"
    # UCI: 1813 spam of 4601; the split keeps the rate in both parts (stratified),
    # although the file lists every spam row first.
    assert int(spam.y_train.sum() + spam.y_test.sum()) == 1813
    for part in (spam.y_train, spam.y_test):
        assert part.mean() == pytest.approx(1813 / 4601, abs=0.002)


def test_spam_split_is_seeded(spam):
    assert load_demo("spam").train.equals(spam.train)
    other = load_demo("spam", random_state=1)
    assert (len(other.train), len(other.test)) == (3450, 1151)
    assert not other.train.equals(spam.train)
    half = load_demo("spam", test_fraction=0.5)
    assert (len(half.train), len(half.test)) == (2300, 2301)


def test_unknown_demo_names_the_choices():
    with pytest.raises(ValueError, match="spam"):
        load_demo("nope")


# ------------------------------------------------- AFABench's synthetic data + digits
def _accuracy(X_train, y_train, X_test, y_test) -> float:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(max_iter=500).fit(X_train, y_train)
    return float((model.predict(X_test) == y_test).mean())


def test_cube_shapes_spec_and_seed():
    demo = cube_dataset(300, 100, random_state=3)
    assert demo.X_train.shape == (300, 20) and demo.X_test.shape == (100, 20)
    assert demo.spec.n_sensors == 20 and demo.spec.total_cost == 20.0
    assert set(demo.y_train) <= set(range(8))
    again = cube_dataset(300, 100, random_state=3)
    assert again.train.equals(demo.train) and again.test.equals(demo.test)
    assert not cube_dataset(300, 100, random_state=4).train.equals(demo.train)


def test_cube_signal_sits_in_the_class_columns():
    demo = cube_dataset(4000, 10, informative_std=0.0, noise_std=0.0)
    X, y = demo.X_train.to_numpy(), demo.y_train.to_numpy()
    for label in range(8):
        rows = X[y == label]
        bits = [(label >> j) & 1 for j in range(3)]
        assert np.allclose(rows[:, label : label + 3], bits)
        others = np.delete(rows, [label, label + 1, label + 2], axis=1)
        assert np.allclose(others, 0.5)  # the noise mean, without noise


def test_cube_nm_shapes_sensors_and_seed():
    demo = cube_nm_dataset(200, 50, random_state=1)
    assert demo.X_train.shape == (200, 55) and demo.X_test.shape == (50, 55)
    assert demo.spec.n_sensors == 51 and demo.spec.total_cost == 51.0
    assert demo.spec.groups["context"] == [f"ctx{k}" for k in range(5)]
    assert demo.spec.costs["context"] == 1.0 and demo.spec.costs["b3_7"] == 1.0
    again = cube_nm_dataset(200, 50, random_state=1)
    assert again.train.equals(demo.train)
    blocks = cube_nm_dataset(200, 50, random_state=1, grouping="blocks")
    assert blocks.train.equals(demo.train)  # same rows, other sensors
    assert blocks.spec == cube_nm_block_spec()
    assert blocks.spec.costs == {
        "context": 1.0,
        **{f"block{k}": 10.0 for k in range(5)},
    }
    with pytest.raises(ValueError, match="grouping"):
        cube_nm_dataset(grouping="pixels")


def test_cube_nm_context_says_which_block_holds_the_signal():
    demo = cube_nm_dataset(3000, 1500, random_state=0)
    context_cols, block_cols = cube_nm_columns()

    def by_context(frame, shift):
        # Each row's block number (context + shift) mod 5, its 10 columns.
        context = frame[context_cols].to_numpy().argmax(axis=1)
        values = np.stack([frame[cols].to_numpy() for cols in block_cols], axis=1)
        return values[np.arange(len(frame)), (context + shift) % 5]

    y_tr, y_te = demo.y_train.to_numpy(), demo.y_test.to_numpy()
    right = _accuracy(by_context(demo.train, 0), y_tr, by_context(demo.test, 0), y_te)
    wrong = _accuracy(by_context(demo.train, 1), y_tr, by_context(demo.test, 1), y_te)
    assert right > 0.7 and wrong < 0.25  # 8 classes: chance is 0.125
    # Alone, the context says nothing about the class; one fixed block is right
    # for a fifth of the rows only.
    ctx = _accuracy(demo.X_train[context_cols], y_tr, demo.X_test[context_cols], y_te)
    block0 = _accuracy(
        demo.X_train[block_cols[0]], y_tr, demo.X_test[block_cols[0]], y_te
    )
    assert ctx < 0.2 and block0 < 0.4


def test_cube_refuses_bad_parameters():
    with pytest.raises(ValueError, match="n_train"):
        cube_dataset(0, 10)
    with pytest.raises(ValueError, match="noise_std"):
        cube_dataset(noise_std=-1.0)
    with pytest.raises(ValueError, match="n_contexts"):
        cube_nm_columns(1)


def test_cube_nm_is_a_demo():
    assert "cube_nm" in DEMOS
    demo = load_demo("cube_nm", random_state=2)
    assert demo.train.equals(cube_nm_dataset(random_state=2).train)


def test_digits_one_sensor_per_pixel_and_seeded_split():
    demo = digits_dataset()
    assert demo.X_train.shape == (1347, 64) and demo.X_test.shape == (450, 64)
    assert demo.spec.n_sensors == 64 and set(demo.spec.costs.values()) == {1.0}
    assert demo.spec.names[:2] == ("r0c0", "r0c1") and demo.spec.names[-1] == "r7c7"
    assert sorted(set(demo.y_train)) == list(range(10))
    assert digits_dataset().train.equals(demo.train)
    assert not digits_dataset(random_state=1).train.equals(demo.train)


def test_digits_and_cube_nm_blocks_are_demos_with_hints():
    from budgetdag_core.datasets import DEMO_HINTS

    digits = load_demo("digits")
    assert digits.spec.n_sensors == 64 and digits.spec.names[9] == "r1c1"
    assert digits.description == DEMOS["digits"]
    blocks = load_demo("cube_nm6")
    assert blocks.spec.names == ("context", *(f"block{k}" for k in range(5)))
    assert blocks.description == DEMOS["cube_nm6"]
    # Every demo says what to look for, in two lines.
    assert set(DEMO_HINTS) == set(DEMOS)
    assert all(len(hint.splitlines()) == 2 for hint in DEMO_HINTS.values())


# ------------------------------------------------------------ a regression demo
def test_diabetes_demo_is_regression_with_grouped_sensors():
    import pickle

    from budgetdag_core import BudgetDAGRegressor
    from budgetdag_core.datasets import diabetes_dataset

    demo = load_demo("diabetes")
    assert demo.task == "regression" and demo.description == DEMOS["diabetes"]
    assert (len(demo.train), len(demo.test)) == (331, 111)
    # Every column is in one sensor; the target is the progression (a number).
    columns = [c for cols in demo.spec.groups.values() for c in cols]
    assert sorted(columns) == sorted(demo.features) and len(columns) == 10
    assert demo.spec.costs["exam"] < demo.spec.costs["cholesterol"]
    y = np.concatenate([demo.y_train, demo.y_test])
    assert y.min() == 25 and y.max() == 346 and len(np.unique(y)) > 200
    assert demo.token.endswith(":regression")
    # Seeded; a pickle keeps the task.
    assert diabetes_dataset(random_state=0).train.equals(demo.train)
    assert not diabetes_dataset(random_state=1).train.equals(demo.train)
    assert pickle.loads(pickle.dumps(demo)).task == "regression"
    # The sensors carry signal: all of them beat the mean on the test rows.
    model = BudgetDAGRegressor(demo.spec, regressor="ridge", cv=3, random_state=0)
    model.fit(demo.X_train, demo.y_train)
    states = model.evaluate_states(demo.X_test, demo.y_test)
    assert states["mse"].iloc[-1] < 0.8 * states["mse"].iloc[0]


def test_dataset_task_is_checked_and_old_pickles_are_classification():
    from budgetdag_core import Dataset

    demo = load_demo("toy")
    with pytest.raises(ValueError, match="task must be one of"):
        Dataset("t", demo.train, demo.test, "label", demo.spec, task="ranking")
    same = Dataset("t", demo.train, demo.test, "label", demo.spec)
    numeric = Dataset("t", demo.train, demo.test, "label", demo.spec, task="regression")
    assert same.task == "classification" and numeric.token == same.token + ":regression"
    state = {k: v for k, v in vars(same).items() if k != "task"}
    old = Dataset.__new__(Dataset)
    old.__setstate__(state)
    assert old.task == "classification"
