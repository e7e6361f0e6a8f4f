"""Bundled demos: the Spambase many-sensor demo."""

from __future__ import annotations

import pytest

from budgetdag_core import DEMOS, load_demo


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
