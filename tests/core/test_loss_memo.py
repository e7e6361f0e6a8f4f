"""The row losses a many-sensor fit keeps between its growths
(``strategies.LossMemo``): the same numbers as asking the bank, bounded,
never saved, forgotten when the fit ends."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from budgetdag_core import BudgetDAGClassifier
from budgetdag_core.strategies import (
    LossMemo,
    block_losses,
    cross_entropy,
)

from .test_sparse_dag import SPEC, make_data


@pytest.fixture(scope="module")
def fitted_bank():
    X, y = make_data(300, 1)
    banks = BudgetDAGClassifier(SPEC, cost_scale=0.01, cv=3, random_state=0).fit_bank(
        X, y
    )
    return banks, X.to_numpy(dtype=float), y


def some_block(n_sensors: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    held = rng.random(n_sensors) < 0.3
    cand = np.flatnonzero(~held)
    trial = np.repeat(held[None], len(cand), axis=0)
    trial[np.arange(len(cand)), cand] = True
    return trial


def test_kept_losses_equal_the_banks_for_any_rows(fitted_bank):
    """Rows asked in overlapping sets, some kept and some not: each row's
    losses are those of asking the bank for exactly those rows."""
    banks, X, y = fitted_bank
    bank = banks.default
    loss = cross_entropy(y)
    memo = LossMemo()
    kept = memo.kept(loss, "xent")
    trial = some_block(bank.sensor_matrix_.shape[0], 0)
    rng = np.random.default_rng(0)
    for n in (40, 120, 300, 60):
        rows = np.sort(rng.choice(len(X), n, replace=False))
        expected = loss(rows, bank.oof_at(X, rows, trial))
        np.testing.assert_array_equal(
            block_losses(bank, X, rows, trial, kept), expected
        )
    assert memo.n_bytes > 0
    # A second loss under another key: its own table.
    other = memo.kept(lambda rows, p: 2 * loss(rows, p), "twice")
    rows = np.arange(50)
    np.testing.assert_array_equal(
        block_losses(bank, X, rows, trial, other),
        2 * block_losses(bank, X, rows, trial, kept),
    )


def test_a_full_memo_answers_without_keeping(fitted_bank):
    banks, X, y = fitted_bank
    bank = banks.default
    loss = cross_entropy(y)
    memo = LossMemo(max_bytes=0)
    trial = some_block(bank.sensor_matrix_.shape[0], 1)
    rows = np.array([5, 3, 3, 9])  # unsorted, repeated
    got = block_losses(bank, X, rows, trial, memo.kept(loss, "xent"))
    np.testing.assert_array_equal(got, loss(rows, bank.oof_at(X, rows, trial)))
    assert memo.n_bytes == 0


def test_a_memo_is_never_saved(fitted_bank):
    banks, X, y = fitted_bank
    memo = LossMemo(max_bytes=1234)
    block_losses(
        banks.default, X, np.arange(10), some_block(16, 2),
        memo.kept(cross_entropy(y), "xent"),
    )  # fmt: skip
    assert memo.n_bytes > 0
    loaded = pickle.loads(pickle.dumps(memo))
    assert loaded.n_bytes == 0 and loaded.max_bytes == 1234
    assert pickle.loads(pickle.dumps(banks)).loss_memo.n_bytes == 0


def test_a_fit_uses_the_kept_losses_then_forgets_them():
    """``fit_bank`` keeps its growths' losses for the choice's growths on
    its fit rows; the fit then empties the memo, and a fit whose memo was
    emptied first gives the same model."""
    X, y = make_data(300, 1)
    params = {"cost_scale": 0.01, "cv": 3, "random_state": 0}
    banks = BudgetDAGClassifier(SPEC, **params).fit_bank(X, y)
    assert len(banks) > 1 and banks.loss_memo.n_bytes > 0
    model = BudgetDAGClassifier(SPEC, **params).fit(X, y, bank=banks)
    assert banks.loss_memo.n_bytes == 0
    fresh = BudgetDAGClassifier(SPEC, **params).fit_bank(X, y)
    fresh.loss_memo.clear()
    again = BudgetDAGClassifier(SPEC, **params).fit(X, y, bank=fresh)
    assert again.strategy_validation_ == model.strategy_validation_
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))
