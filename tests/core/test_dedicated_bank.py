"""The any-subset bank with a dedicated all-sensor model (issue 55)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from budgetdag_core.bank import SPARSE_FIT_PAIRS, AutoMaskedBank, DedicatedMaskedBank
from budgetdag_core.bank._dedicated import BLEND_WEIGHTS

N_SENSORS = 5


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(240, N_SENSORS))
    # An interaction of every sensor: the all-sensor state is worth a model.
    y = ((X[:, 0] * X[:, 1] + X[:, 2] - X[:, 3] * X[:, 4]) > 0).astype(int)
    return X, y, [np.array([c]) for c in range(N_SENSORS)]


def fitted(data, **settings) -> DedicatedMaskedBank:
    X, y, cols = data
    bank = DedicatedMaskedBank(cv=3, random_state=0, candidates=["masked"], **settings)
    return bank.fit_models(X, y, cols, 2)


@pytest.fixture(scope="module")
def bank(data) -> DedicatedMaskedBank:
    return fitted(data)


ALL = np.ones((1, N_SENSORS), dtype=bool)
SOME = np.array([[True, True, False, False, False], [False, True, True, True, False]])


def test_the_weight_is_the_least_out_of_fold_log_loss(bank):
    scores = bank.full_validation_
    assert set(scores) == {str(w) for w in BLEND_WEIGHTS}
    best = min(BLEND_WEIGHTS, key=lambda w: scores[str(w)]["log_loss"])
    assert bank.full_weight_ == best
    assert len(bank.dedicated_models_) == len(bank.fold_models_) == 3


def test_each_row_is_scored_by_its_own_folds_dedicated_model(data, bank):
    X, _, _ = data
    saved = bank.full_weight_
    try:
        bank.full_weight_ = 1.0
        oof = bank.oof_at(X, np.arange(len(X)), ALL)[:, 0]
        for f, model in enumerate(bank.dedicated_models_):
            rows = np.flatnonzero(bank.fold_of_ == f)
            np.testing.assert_allclose(oof[rows], model.predict_proba(X[rows]))
        served = bank.predict_proba_subsets(X[:20], ALL)[:, 0]
        mean = np.mean([m.predict_proba(X[:20]) for m in bank.dedicated_models_], 0)
        np.testing.assert_allclose(served, mean)
    finally:
        bank.full_weight_ = saved


def test_the_weight_moves_only_the_all_sensor_subset(data, bank):
    X, _, _ = data
    saved = bank.full_weight_
    try:
        out = {}
        for w in (0.0, 1.0):
            bank.full_weight_ = w
            out[w] = bank.predict_proba_subsets(X[:30], np.vstack([SOME, ALL]))
    finally:
        bank.full_weight_ = saved
    np.testing.assert_array_equal(out[0.0][:, :2], out[1.0][:, :2])
    assert not np.allclose(out[0.0][:, 2], out[1.0][:, 2])
    np.testing.assert_allclose(out[1.0].sum(axis=2), 1.0)


def test_without_its_designs_it_is_the_auto_bank(data):
    X, y, cols = data
    plain = fitted(data, dedicated=False)
    auto = AutoMaskedBank(cv=3, random_state=0, candidates=["masked"])
    auto.fit_models(X, y, cols, 2)
    subsets = np.vstack([SOME, ALL])
    np.testing.assert_array_equal(
        plain.oof_at(X, np.arange(len(X)), subsets),
        auto.oof_at(X, np.arange(len(X)), subsets),
    )
    assert plain.full_weight_ == 0.0 and plain.dedicated_models_ == []


def test_full_masks_put_every_sensor_in_each_rows_first_subset(data):
    X, y, cols = data
    bank = DedicatedMaskedBank(cv=3, random_state=0, full_masks=True)
    _, rows, _, masks, _, _ = bank._plan(X, y, cols, 2, "test")
    first = np.r_[True, rows[1:] != rows[:-1]]
    assert first.sum() == len(X)
    assert masks[first].all()
    assert not masks[~first].all(axis=1).all()


def test_a_long_table_gets_fewer_random_subsets_per_row():
    rng = np.random.default_rng(0)
    n = SPARSE_FIT_PAIRS // 10  # ten subsets per row instead of sixteen
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int)
    cols = [np.array([c]) for c in range(3)]
    bank = DedicatedMaskedBank(cv=3, random_state=0)
    rows = bank._plan(X, y, cols, 2, "test")[1]
    assert len(rows) == SPARSE_FIT_PAIRS
    assert (np.bincount(rows) == 10).all()
    short = bank._plan(X[:1000], y[:1000], cols, 2, "test")[1]
    assert (np.bincount(short) == bank.masks_per_row).all()


def test_the_same_seed_gives_the_same_bank(data, bank):
    X, _, _ = data
    again = fitted(data)
    assert again.full_weight_ == bank.full_weight_
    np.testing.assert_array_equal(
        again.oof_at(X, np.arange(len(X)), ALL), bank.oof_at(X, np.arange(len(X)), ALL)
    )


def test_the_default_many_sensor_fit_serves_the_blend_at_every_path():
    from budgetdag_core import BudgetDAGClassifier, SensorSpec

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 14))
    y = (X[:, :7].sum(axis=1) * X[:, 7] > 0).astype(int)
    names = [f"s{i:02d}" for i in range(14)]
    frame = pd.DataFrame(X, columns=names)
    model = BudgetDAGClassifier(SensorSpec.per_column(names), cv=3, random_state=0)
    model.fit(frame, y)
    bank = model.bank_
    assert isinstance(bank, DedicatedMaskedBank)
    full = np.flatnonzero(bank.column_masks_.all(axis=1))
    assert full.size == 1  # the grown DAG ends at the all-sensor state
    bank.full_weight_ = 1.0  # the blend where it shows most
    states = bank.predict_proba_states(X[:25])
    for k in range(bank.n_states):
        np.testing.assert_allclose(states[:, k], bank.predict_proba(X[:25], k))
    raw = bank._raw_proba(X[:25], int(full[0]))
    mean = np.mean([m.predict_proba(X[:25]) for m in bank.dedicated_models_], 0)
    np.testing.assert_allclose(raw, mean)
