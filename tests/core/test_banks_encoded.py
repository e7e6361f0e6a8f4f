"""Mask-encoded banks (issue 37, item 3): the network and logistic models on
the mask encoding, their any-subset banks on a sparse DAG, and ``"auto"``'s
choice among the masked kinds on validation rows."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import (
    BudgetDAGClassifier,
    SensorSpec,
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
)
from budgetdag_core.bank import (
    MASKED_KINDS,
    AutoMaskedBank,
    DedicatedMaskedBank,
    MaskEncodedClassifier,
    SparseMaskedBank,
    make_sparse_bank,
)
from budgetdag_core.bank._encoded import compressed_values

N_SENSORS = 14


def make_data(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """14 one-column sensors: s0 says which of s1, s2 carries the class."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        rng.normal(size=(n, N_SENSORS)), columns=[f"s{i}" for i in range(N_SENSORS)]
    )
    y = np.where(X.s0 > 0, X.s1 > 0, X.s2 > 0).astype(int)
    return X, y


SPEC = SensorSpec.per_column([f"s{i}" for i in range(N_SENSORS)])


def fit(kind: str, n: int = 300, **params) -> BudgetDAGClassifier:
    X, y = make_data(n, 0)
    params = {"cost_scale": 0.02, "cv": 3, "random_state": 0} | params
    return BudgetDAGClassifier(SPEC, bank_kind=kind, **params).fit(X, y)


@pytest.fixture(scope="module")
def models() -> dict[str, BudgetDAGClassifier]:
    kinds = ("masked_mlp", "masked_logistic", "masked_auto")
    return {kind: fit(kind) for kind in kinds}


@pytest.fixture(scope="module")
def test_rows() -> pd.DataFrame:
    return make_data(200, 1)[0]


def masked_rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a linear two-class problem with 30 % of the values missing."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan
    return X, y


# ------------------------------------------------------------------ the model
def test_the_network_stops_on_the_given_rows_and_keeps_its_best_epoch():
    X, y = masked_rows(600, 0)
    Xv, yv = masked_rows(200, 1)
    model = MaskEncodedClassifier(random_state=0, max_iter=300).fit(X, y, Xv, yv)
    assert 1 <= model.n_iter_ < 300
    # The kept weights are those of the best validation epoch.
    proba = model.predict_proba(Xv)
    loss = -np.mean(np.log(proba[np.arange(len(yv)), yv]))
    assert loss == pytest.approx(model.validation_loss_)
    assert (model.predict(Xv) != yv).mean() < 0.25


def test_the_same_seed_gives_the_same_weights():
    X, y = masked_rows(300, 0)
    one = MaskEncodedClassifier(random_state=3).fit(X, y)
    two = MaskEncodedClassifier(random_state=3).fit(X, y)
    for a, b in zip(one.coefs_ + one.intercepts_, two.coefs_ + two.intercepts_):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("model", ["mlp", "logistic"])
def test_the_encoding_reads_no_value_of_a_missing_column(model):
    X, y = masked_rows(300, 0)
    fitted = MaskEncodedClassifier(model, random_state=0).fit(X, y)
    # The mask encodes "missing": a missing value is not the column's mean.
    rows = np.full((2, 5), np.nan)
    rows[1, 0] = fitted.center_[0]
    p = fitted.predict_proba(rows)
    assert not np.allclose(p[0], p[1])
    assert fitted.predict_proba(rows).shape == (2, 2)


def test_one_class_predicts_it_with_certainty():
    X, _ = masked_rows(50, 0)
    model = MaskEncodedClassifier(random_state=0).fit(X, np.zeros(50, int))
    np.testing.assert_array_equal(model.predict_proba(X[:3]), np.ones((3, 1)))
    model.check_integrity()


def test_check_integrity_names_a_broken_layer():
    X, y = masked_rows(200, 0)
    model = MaskEncodedClassifier(random_state=0, max_iter=5).fit(X, y)
    model.check_integrity()
    bad = copy.deepcopy(model)
    bad.coefs_[1] = bad.coefs_[1][:-1]
    with pytest.raises(ValueError, match=r"coefs_\[1\]"):
        bad.check_integrity()
    bad = copy.deepcopy(model)
    bad.intercepts_[0][0] = np.inf
    with pytest.raises(ValueError, match=r"intercepts_\[0\].*infinite"):
        bad.check_integrity()
    bad = copy.deepcopy(model)
    bad.scale_ = -bad.scale_
    with pytest.raises(ValueError, match="scale_"):
        bad.check_integrity()


@pytest.mark.parametrize("model", ["mlp", "logistic"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_scores_under_masks_equal_the_masked_rows_scores(model, n_classes):
    """proba_under_masks (no NaN stack, float32) gives predict_proba's
    numbers on the rows with each mask's other columns blanked: masks that
    add one or two columns to shared ones, unrelated masks, and rows with
    their own missing values."""
    rng = np.random.default_rng(n_classes)
    X = rng.normal(size=(300, 8))
    X[:, 2] *= 30  # outliers, compressed by the encoding
    y = rng.integers(0, n_classes, size=300)
    X[rng.random(X.shape) < 0.3] = np.nan
    fitted = MaskEncodedClassifier(model, random_state=0, max_iter=30).fit(X, y)
    rows = rng.normal(size=(40, 8))
    held = rng.random(8) < 0.4
    added = np.repeat(held[None], 12, axis=0)
    for k in range(12):
        added[k, rng.choice(8, size=1 + k % 2)] = True
    unrelated = rng.random((12, 8)) < 0.5
    gappy = rows.copy()
    gappy[rng.random(rows.shape) < 0.2] = np.nan
    for X_rows, masks in ((rows, added), (rows, unrelated), (gappy, added)):
        got = fitted.proba_under_masks(X_rows, masks)
        stack = np.tile(X_rows, (len(masks), 1))
        stack[~np.repeat(masks, len(X_rows), axis=0)] = np.nan
        want = fitted.predict_proba(stack).reshape(len(masks), len(X_rows), -1)
        np.testing.assert_allclose(got, want.swapaxes(0, 1), atol=1e-5)


def _many_mask_scores(fitted, X, masks):
    """proba_under_masks' general arithmetic where the masks add no columns
    to those they share (one mask): every column standardised, the shared
    columns' float32 product, each mask's own term."""
    coefs, intercepts = fitted._single_precision()
    d = X.shape[1]
    z = compressed_values(X, fitted.center_, fitted.scale_).astype(np.float32)
    top, bottom = coefs[0][:d], coefs[0][d:]
    mask_term = masks.astype(np.float32) @ bottom + intercepts[0]
    common = masks.all(axis=0)
    pre = (z[:, common] @ top[common])[:, None, :] + mask_term[None, :, :]
    head = fitted._head(pre.reshape(-1, top.shape[1]), coefs[1:], intercepts[1:])
    return head.reshape(len(X), len(masks), -1)


@pytest.mark.parametrize("model", ["mlp", "logistic"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_one_mask_scores_exactly_as_the_many_mask_arithmetic(model, n_classes):
    """One mask (a rollout's call: its own path, its terms kept, only its
    columns standardised) gives the general path's float32 numbers bit for
    bit, with outliers, for the empty, full and a partial mask, asked
    again (kept terms) or after a refit (new terms)."""
    rng = np.random.default_rng(20 + n_classes)
    X = rng.normal(size=(200, 8))
    X[:, 2] *= 30  # outliers, compressed by the encoding
    y = rng.integers(0, n_classes, size=200)
    fitted = MaskEncodedClassifier(model, random_state=0, max_iter=20).fit(X, y)
    rows = rng.normal(size=(30, 8))
    rows[:, 2] *= 30
    for mask in (np.zeros(8, bool), np.ones(8, bool), rng.random(8) < 0.5):
        want = _many_mask_scores(fitted, rows, mask[None])
        np.testing.assert_array_equal(fitted.proba_under_masks(rows, mask), want)
        np.testing.assert_array_equal(fitted.proba_under_masks(rows, mask), want)
        one = fitted.proba_under_masks(rows[:1], mask[None])
        np.testing.assert_array_equal(
            one, _many_mask_scores(fitted, rows[:1], mask[None])
        )
    fitted.fit(X[::-1], y[::-1])  # new weights: the kept terms go
    mask = rng.random(8) < 0.5
    np.testing.assert_array_equal(
        fitted.proba_under_masks(rows, mask[None]),
        _many_mask_scores(fitted, rows, mask[None]),
    )


@pytest.mark.parametrize("n_classes", [2, 3])
def test_weights_below_float32s_normal_range_score_as_zeros(n_classes):
    """A weight the penalty drove below float32's smallest normal number is
    zero in the float32 products (subnormal operands are slow): the scores
    are those of the network with that weight zero, bit for bit."""
    rng = np.random.default_rng(5 + n_classes)
    X = rng.normal(size=(150, 6))
    y = rng.integers(0, n_classes, size=150)
    fitted = MaskEncodedClassifier("mlp", random_state=0, max_iter=10).fit(X, y)
    masks = rng.random((5, 6)) < 0.5
    rows = rng.normal(size=(40, 6))
    tiny = copy.deepcopy(fitted)
    zero = copy.deepcopy(fitted)
    for i, W in enumerate(fitted.coefs_):
        dead = rng.random(W.shape) < 0.2
        tiny.coefs_[i] = np.where(dead, 1e-40, W)
        zero.coefs_[i] = np.where(dead, 0.0, W)
    np.testing.assert_array_equal(
        tiny.proba_under_masks(rows, masks), zero.proba_under_masks(rows, masks)
    )
    assert tiny.proba_under_masks(rows, masks).shape == (40, 5, max(n_classes, 2))


@pytest.mark.parametrize("model", ["mlp", "logistic"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_scores_of_the_present_columns_equal_the_masked_rows_scores(model, n_classes):
    """proba_of_columns (the bank's predict path: only a state's columns
    multiplied) gives predict_proba's numbers on the rows with the other
    columns blanked, in float64: for empty, partial and full subsets, with
    and without a row's own gaps; a wrong width is refused."""
    rng = np.random.default_rng(10 + n_classes)
    X = rng.normal(size=(300, 8))
    X[:, 2] *= 30
    y = rng.integers(0, n_classes, size=300)
    X[rng.random(X.shape) < 0.3] = np.nan
    fitted = MaskEncodedClassifier(model, random_state=0, max_iter=30).fit(X, y)
    rows = rng.normal(size=(40, 8))
    gappy = rows.copy()
    gappy[rng.random(rows.shape) < 0.2] = np.nan
    subsets = [np.zeros(8, bool), np.ones(8, bool), rng.random(8) < 0.4]
    for X_rows in (rows, gappy):
        for present in subsets:
            blanked = X_rows.copy()
            blanked[:, ~present] = np.nan
            got = fitted.proba_of_columns(X_rows[:, present], present)
            want = fitted.predict_proba(blanked)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="columns"):
        fitted.proba_of_columns(rows, subsets[2])


def test_an_unknown_model_is_refused():
    X, y = masked_rows(50, 0)
    with pytest.raises(ValueError, match="model must be one of"):
        MaskEncodedClassifier("forest").fit(X, y)


# -------------------------------------------------------- banks of sparse DAGs
def test_each_kind_builds_its_bank(models):
    assert type(models["masked_mlp"].bank_) is SparseMaskedBank
    # "auto" builds the AutoMaskedBank with a dedicated all-sensor model.
    assert type(models["masked_auto"].bank_) is DedicatedMaskedBank
    assert isinstance(models["masked_auto"].bank_, AutoMaskedBank)
    for kind, inner in (("masked_mlp", "mlp"), ("masked_logistic", "logistic")):
        bank = models[kind].bank_
        fold_models = bank.fold_models_
        assert all(isinstance(m, MaskEncodedClassifier) for m in fold_models)
        assert {m.model for m in fold_models} == {inner}
        bank.check_integrity()


def test_auto_records_its_choice_and_the_numbers_behind_it(models):
    bank = models["masked_auto"].bank_
    numbers = {k: v for k, v in bank.validation_.items() if k != "rows"}
    assert set(numbers) == set(MASKED_KINDS)
    assert bank.kind_ == min(numbers, key=lambda k: numbers[k]["log_loss"])
    for values in numbers.values():
        assert 0 <= values["error"] <= 1 and values["log_loss"] > 0
        assert values["log_loss"] <= values["log_loss_raw"] + 1e-9
    rows = bank.validation_["rows"]
    assert rows["fit"] + rows["validation"] == 300
    # The chosen kind's model serves.
    served = bank.fold_models_[0]
    if bank.kind_ == "masked":
        assert not isinstance(served, MaskEncodedClassifier)
    else:
        assert isinstance(served, MaskEncodedClassifier)


def test_auto_is_deterministic_and_its_bank_is_reused(models, test_rows):
    again = fit("masked_auto")
    assert again.bank_.kind_ == models["masked_auto"].bank_.kind_
    assert again.bank_.validation_ == models["masked_auto"].bank_.validation_
    pd.testing.assert_frame_equal(
        again.trace(test_rows), models["masked_auto"].trace(test_rows)
    )
    X, y = make_data(300, 0)
    cheaper = BudgetDAGClassifier(
        SPEC, cost_scale=0.2, cv=3, random_state=0, bank_kind="masked_auto"
    ).fit(X, y, bank=models["masked_auto"].strategy_banks_)
    # The same fitted bank: one of its strategies' (each fit keeps its own).
    banks = models["masked_auto"].strategy_banks_
    assert any(cheaper.bank_ is one for one in banks.values())


@pytest.mark.parametrize("fraction", [None, 0.25])
def test_auto_banks_equal_the_chosen_kinds_bank(fraction):
    """An ``"auto"`` bank is the chosen kind's bank: the same fold models,
    but with the default ``validation_fraction=None`` the first fold's,
    which is the choice's model of the chosen kind (fitted on the same
    rows and subsets, stopped early on a share of them)."""
    X, y = make_data(240, 3)
    Xv, columns = X.to_numpy(float), [np.array([i]) for i in range(N_SENSORS)]
    auto = AutoMaskedBank(cv=3, random_state=0, validation_fraction=fraction)
    auto.fit_models(Xv, y, columns, 2)
    assert auto.validation_["rows"]["pairs"] > 0
    own = make_sparse_bank(auto.kind_, cv=3, random_state=0)
    own.fit_models(Xv, y, columns, 2)
    subsets = np.random.default_rng(0).random((20, N_SENSORS)) < 0.5
    np.testing.assert_array_equal(auto.fold_of_, own.fold_of_)
    rows = np.arange(len(Xv))
    if fraction is None:
        rows = np.flatnonzero(auto.fold_of_ > 0)
        assert type(auto.fold_models_[0]) is type(own.fold_models_[0])
        assert auto.validation_["rows"]["validation"] == np.sum(auto.fold_of_ == 0)
    np.testing.assert_array_equal(
        auto.oof_at(Xv, rows, subsets), own.oof_at(Xv, rows, subsets)
    )


@pytest.mark.parametrize("fraction", [None, 0.25])
def test_auto_kind_trials_in_threads_give_the_same_choice(fraction):
    """With ``n_jobs=2`` the kinds' trials run in threads, each its own
    seeded fit: the same numbers, the same kind, the same first fold, and
    ``"bank kind"`` told each trial in order."""
    X, y = make_data(240, 3)
    Xv, columns = X.to_numpy(float), [np.array([i]) for i in range(N_SENSORS)]
    told = {1: [], 2: []}
    banks = {}
    for n_jobs in (1, 2):
        banks[n_jobs] = AutoMaskedBank(
            cv=3, random_state=0, validation_fraction=fraction, n_jobs=n_jobs
        )
        banks[n_jobs].fit_models(
            Xv, y, columns, 2, progress=lambda *a, n=n_jobs: told[n].append(a)
        )
    one, two = banks[1], banks[2]
    assert one.kind_ == two.kind_ and one.validation_ == two.validation_
    subsets = np.random.default_rng(0).random((20, N_SENSORS)) < 0.5
    rows = np.arange(len(Xv))
    np.testing.assert_array_equal(
        one.oof_at(Xv, rows, subsets), two.oof_at(Xv, rows, subsets)
    )
    kinds = [a for a in told[2] if a[0] == "bank kind"]
    assert kinds == [a for a in told[1] if a[0] == "bank kind"]
    assert [done for _, done, _ in kinds] == list(range(len(kinds)))


def test_auto_leaves_the_network_out_on_long_tables(monkeypatch):
    from budgetdag_core.bank import _auto

    monkeypatch.setattr(_auto, "AUTO_NEURAL_MAX_ROWS", 100)
    bank = fit("masked_auto", n=200).bank_
    assert "masked_mlp" not in bank.validation_
    assert bank.kind_ in ("masked", "masked_logistic")


def test_auto_trials_learn_from_fewer_subsets_per_row_on_long_tables(monkeypatch):
    from budgetdag_core.bank import _auto

    X, y = make_data(200, 0)
    Xv, columns = X.to_numpy(float), [np.array([i]) for i in range(N_SENSORS)]
    counts, default = {}, _auto.TRIAL_PAIRS
    for cap in (default, 600):
        monkeypatch.setattr(_auto, "TRIAL_PAIRS", cap)
        bank = AutoMaskedBank(cv=3, random_state=0)
        bank.fit_models(Xv, y, columns, 2)
        counts[cap] = bank.validation_["rows"]
    fit_rows = counts[600]["fit"]
    # 200 rows: 16 subsets each by default, 600 // 200 = 3 under the cap.
    assert counts[default]["fit_pairs"] == 16 * fit_rows
    assert counts[600]["fit_pairs"] == 3 * fit_rows <= 600
    # The validation pairs do not shrink with the trials.
    assert counts[600]["pairs"] == counts[default]["pairs"]


def test_auto_penalises_the_network_less_on_long_tables(monkeypatch):
    """From ``LARGE_TABLE_ROWS`` training rows on, ``"auto"``'s network (its
    trial and its fold models) takes the weaker penalty and more patience;
    below, the small-table defaults."""
    from budgetdag_core.bank import _encoded

    X, y = make_data(200, 0)
    Xv, columns = X.to_numpy(float), [np.array([i]) for i in range(N_SENSORS)]
    default = MaskEncodedClassifier()
    for limit, alpha, patience in (
        (len(Xv) + 1, default.alpha, default.n_iter_no_change),
        (len(Xv), _encoded.LARGE_TABLE_ALPHA, _encoded.LARGE_TABLE_PATIENCE),
    ):
        monkeypatch.setattr(_encoded, "LARGE_TABLE_ROWS", limit)
        bank = AutoMaskedBank(candidates=("masked_mlp",), cv=3, random_state=0)
        bank.fit_models(Xv, y, columns, 2)
        assert bank.n_fit_rows_ == len(Xv)
        for model in (bank.template(), *bank.fold_models_):
            assert (model.alpha, model.n_iter_no_change) == (alpha, patience)


@pytest.mark.parametrize("kind", ["masked_mlp", "masked_logistic", "masked_auto"])
def test_unacquired_values_are_never_read(models, test_rows, kind):
    model = models[kind]
    trace = model.trace(test_rows)
    spoiled = test_rows.copy()
    rng = np.random.default_rng(7)
    for i, acquired in enumerate(trace["acquired"]):
        for column in spoiled.columns:
            if column not in acquired:
                spoiled.iloc[i, spoiled.columns.get_loc(column)] = rng.choice(
                    [1e6, -1e6, 0.0]
                )
    pd.testing.assert_frame_equal(model.trace(spoiled), trace)


@pytest.mark.parametrize("kind", ["masked_mlp", "masked_logistic", "masked_auto"])
@pytest.mark.parametrize("slim", [True, False])
def test_pickle_and_skops_round_trips(models, test_rows, kind, slim):
    model = models[kind]
    trace = model.trace(test_rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for loaded in (
            loads_policy(dumps_policy(model, slim=slim)),
            loads_policy_skops(dumps_policy_skops(model, slim=slim)),
        ):
            pd.testing.assert_frame_equal(loaded.trace(test_rows), trace)
            np.testing.assert_array_equal(
                loaded.predict_proba(test_rows), model.predict_proba(test_rows)
            )
    if kind == "masked_auto":
        loaded = loads_policy_skops(dumps_policy_skops(model))
        assert loaded.bank_.kind_ == model.bank_.kind_
        assert loaded.bank_.validation_ == model.bank_.validation_


def test_a_forged_network_is_refused_on_load(models):
    model = copy.deepcopy(models["masked_mlp"])
    served = model.bank_.model_
    served[0].coefs_[0] = served[0].coefs_[0][:, :3]
    for data, loads in (
        (dumps_policy_skops(model), loads_policy_skops),
        (dumps_policy(model), loads_policy),
    ):
        with pytest.raises(ValueError, match=r"bank_\.model_\[0\].*intercepts_"):
            loads(data)


def test_a_forged_auto_choice_is_refused(models):
    bank = copy.deepcopy(models["masked_auto"].bank_)
    bank.check_integrity()
    bank.kind_ = "os.system"
    with pytest.raises(ValueError, match="kind_"):
        bank.check_integrity()


def test_predict_proba_subsets_scores_any_subset(models, test_rows):
    bank = models["masked_logistic"].bank_
    X = test_rows[SPEC.columns].to_numpy(float)
    subsets = np.zeros((3, N_SENSORS), dtype=bool)
    subsets[1, :3] = True
    subsets[2] = True
    proba = bank.predict_proba_subsets(X, subsets)
    assert proba.shape == (len(X), 3, 2)
    np.testing.assert_allclose(proba.sum(axis=2), 1.0)
    np.testing.assert_allclose(proba[:, 0], np.tile(bank.prior_, (len(X), 1)))
    # Three sensors carry the class: the bank is sure far more often there.
    assert (proba[:, 1].max(axis=1) > 0.8).mean() > (proba[:, 0].max(1) > 0.8).mean()


def test_a_sparse_dag_refuses_a_per_state_bank_kind():
    X, y = make_data(100, 0)
    with pytest.raises(ValueError, match="any-subset masked bank"):
        BudgetDAGClassifier(SPEC, bank_kind="hgb", cv=3).fit(X, y)
    with pytest.raises(ValueError, match="bank_kind must be one of"):
        make_sparse_bank("per_subset")


def test_a_rival_kind_is_one_that_learns_interactions_close_to_an_additive_pick():
    from budgetdag_core.bank._auto import RIVAL_MAX_SE

    def numbers(loss: float, excess: float, se: float) -> dict[str, float]:
        return {"log_loss": loss, "excess": excess, "excess_se": se}

    bank = AutoMaskedBank()
    assert bank.rival_kind() is None  # not fitted: no choice, no rival
    bank.kind_ = "masked_logistic"
    close = 0.9 * RIVAL_MAX_SE * 0.02
    bank.validation_ = {
        "masked_logistic": numbers(1.0, 0.0, 0.0),
        "masked_mlp": numbers(1.0 + close, close, 0.02),
        "masked": numbers(1.5, 0.5, 0.02),
    }
    assert bank.rival_kind() == "masked_mlp"  # the closer of the two
    bank.validation_["masked_mlp"]["excess"] = 1.1 * RIVAL_MAX_SE * 0.02
    assert bank.rival_kind() is None  # beyond the standard errors
    # A winner that learns interactions has no rival, however close.
    bank.kind_ = "masked_mlp"
    bank.validation_["masked_logistic"] = numbers(1.0, 0.0, 0.02)
    assert bank.rival_kind() is None


def test_the_rival_bank_shares_the_folds_and_fingerprint():
    X, y = make_data(240, 3)
    Xv, columns = X.to_numpy(float), [np.array([i]) for i in range(N_SENSORS)]
    auto = AutoMaskedBank(cv=3, random_state=0)
    auto.fit_models(Xv, y, columns, 2)
    auto.kind_ = "masked_logistic"
    auto.validation_ = {
        "masked_logistic": {"log_loss": 0.5, "excess": 0.0, "excess_se": 0.0},
        "masked_mlp": {"log_loss": 0.51, "excess": 0.01, "excess_se": 0.01},
    }
    rival = auto.fit_rival(Xv, y, columns, 2)
    assert rival.kind_ == "masked_mlp" and auto.kind_ == "masked_logistic"
    assert {m.model for m in rival.fold_models_} == {"mlp"}
    np.testing.assert_array_equal(rival.fold_of_, auto.fold_of_)
    own = make_sparse_bank("masked_mlp", cv=3, random_state=0)
    own.fit_models(Xv, y, columns, 2)
    subsets = np.random.default_rng(0).random((20, N_SENSORS)) < 0.5
    rows = np.arange(len(Xv))
    np.testing.assert_array_equal(
        rival.oof_at(Xv, rows, subsets), own.oof_at(Xv, rows, subsets)
    )
