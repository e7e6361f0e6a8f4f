"""Classifier banks: every kind fits, predicts every state, and is out-of-fold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from budgetdag_core import (
    BudgetDAGClassifier,
    SensorDAG,
    SensorSpec,
    load_policy,
    save_policy,
)
from budgetdag_core.bank import (
    BANK_KINDS,
    ClassifierBank,
    MaskedBank,
    make_bank,
    resolve_bank_kind,
)
from budgetdag_core.bank._base import single_threaded
from budgetdag_core.bank._calibration import apply_temperature, fit_temperature

N_SENSORS, COLS_PER_SENSOR, N_CLASSES = 3, 2, 3


def make_data(n: int = 240, seed: int = 0, random_labels: bool = False):
    """Three sensors of two columns; the class depends on sensors 0 and 1."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_SENSORS * COLS_PER_SENSOR))
    if random_labels:
        y = rng.integers(0, N_CLASSES, size=n)
    else:
        score = X[:, 0] + 0.8 * X[:, 2] + 0.3 * rng.normal(size=n)
        y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    sensor_columns = [
        np.arange(m * COLS_PER_SENSOR, (m + 1) * COLS_PER_SENSOR)
        for m in range(N_SENSORS)
    ]
    dag = SensorDAG([f"s{m}" for m in range(N_SENSORS)])
    return X, y, dag, sensor_columns


def fit_bank(bank, data):
    X, y, dag, cols = data
    return bank.fit(X, y, dag, cols, N_CLASSES)


@pytest.fixture(scope="module")
def data():
    return make_data()


@pytest.fixture(scope="module")
def fitted(data):
    return {
        kind: fit_bank(make_bank(kind, cv=3, random_state=0), data)
        for kind in BANK_KINDS
    }


@pytest.mark.parametrize("kind", BANK_KINDS)
def test_each_kind_fits_and_predicts_every_state(kind, data, fitted):
    X, y, dag, _ = data
    bank = fitted[kind]
    K = dag.n_states
    assert bank.oof_proba_.shape == (len(X), K, N_CLASSES)
    np.testing.assert_allclose(bank.oof_proba_.sum(axis=2), 1.0, atol=1e-5)
    losses = bank.oof_losses(y)
    assert losses.shape == (len(X), K)
    assert set(np.unique(losses)) <= {0.0, 1.0}
    assert bank.oof_predictions().shape == (len(X), K)
    assert len(bank.models_) == bank.n_states == K
    assert len(bank.state_columns_) == K
    assert list(bank.calibration_["state"]) == list(range(K))
    errors = []
    for k in range(K):
        proba = bank.predict_proba(X, k)
        assert proba.shape == (len(X), N_CLASSES)
        assert np.isfinite(proba).all()
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
        errors.append((proba.argmax(axis=1) != y).mean())
    # The empty state knows only priors; the informative states must beat it.
    full = K - 1
    assert errors[full] < errors[0] - 0.3
    assert losses[:, full].mean() < losses[:, 0].mean() - 0.2


@pytest.mark.parametrize(
    ("kind", "memoriser"),
    [
        ("per_subset", KNeighborsClassifier(n_neighbors=1)),
        ("masked", DecisionTreeClassifier(random_state=0)),
    ],
)
def test_oof_is_out_of_fold_with_a_memorising_classifier(kind, memoriser):
    X, y, dag, cols = data = make_data(random_labels=True)
    bank = fit_bank(make_bank(kind, memoriser, cv=3, random_state=0), data)
    full = dag.n_states - 1
    in_sample = (bank.predict_proba(X, full).argmax(axis=1) != y).mean()
    oof = bank.oof_losses(y)[:, full].mean()
    assert in_sample == 0.0  # it memorised the random labels
    assert oof > 0.5  # but out of fold it is at chance (2/3 for 3 classes)


def test_hgb_oof_equals_a_model_fitted_without_the_fold(data):
    # Cross-fitting (the "hgb" default since the fast-bank issue): each fold's
    # model is fitted without its fold and early-stops on the fold's rows.
    X, y, dag, cols = data
    bank = fit_bank(make_bank("hgb", cv=3, random_state=0, calibrate=False), data)
    assert bank.cross_fit
    state = dag.n_states - 1
    c = bank.state_columns_[state]
    for f, (train, test) in enumerate(bank._folds(X, y)):
        with single_threaded():
            alone = clone(bank.template()).fit(
                X[train][:, c], y[train], X_val=X[test][:, c], y_val=y[test]
            )
        np.testing.assert_allclose(
            bank.oof_proba_[test, state], alone.predict_proba(X[test][:, c]), rtol=1e-5
        )
        assert bank.models_[state][f].n_iter_ == alone.n_iter_
    in_sample = (bank.predict_proba(X, state).argmax(axis=1) != y).mean()
    assert bank.oof_losses(y)[:, state].mean() > in_sample


@pytest.mark.parametrize("kind", ["hgb", "masked"])
def test_cross_fitted_probabilities_are_the_fold_models_average(kind, data):
    X, y, dag, cols = data
    bank = fit_bank(make_bank(kind, cv=3, random_state=0, calibrate=False), data)
    assert bank.cross_fit
    folds = bank.models_[1] if kind == "hgb" else bank.model_
    assert isinstance(folds, list) and len(folds) == 3
    rng = np.random.default_rng(5)
    X_new = rng.normal(size=(50, X.shape[1]))
    for k in range(1, dag.n_states):
        c = bank.state_columns_[k]
        if kind == "hgb":
            fold_proba = [m.predict_proba(X_new[:, c]) for m in bank.models_[k]]
        else:
            blanked = X_new.copy()
            blanked[:, ~bank.column_masks_[k]] = np.nan
            fold_proba = [m.predict_proba(blanked) for m in bank.model_]
        np.testing.assert_allclose(
            bank.predict_proba(X_new, k), np.mean(fold_proba, axis=0), rtol=1e-6
        )
    # Averaging is not picking one model: the folds disagree somewhere.
    assert not np.allclose(fold_proba[0], fold_proba[1])


@pytest.mark.parametrize("kind", ["hgb", "masked"])
def test_refit_serving_refits_with_the_fold_models_mean_rounds(kind, data):
    # serve="refit": the same fold models give the out-of-fold probabilities,
    # and one model per state, refit on all rows for the folds' mean number of
    # rounds (no early stopping), gives the probabilities at predict time.
    X, y, dag, cols = data
    folds = fit_bank(make_bank(kind, cv=3, random_state=0, calibrate=False), data)
    refit = fit_bank(
        make_bank(kind, cv=3, random_state=0, calibrate=False, serve="refit"), data
    )
    np.testing.assert_array_equal(refit.oof_proba_, folds.oof_proba_)
    state = dag.n_states - 1
    fold_models = folds.models_[state] if kind == "hgb" else folds.model_
    served = refit.models_[state]
    assert not isinstance(served, list)
    rounds = round(np.mean([m.n_iter_ for m in fold_models]))
    assert served.get_params()["early_stopping"] is False
    assert served.get_params()["max_iter"] == served.n_iter_ == rounds
    if kind == "hgb":
        c = refit.state_columns_[state]
        with single_threaded():
            alone = clone(served).fit(X[:, c], y)
        np.testing.assert_allclose(
            refit.predict_proba(X, state), alone.predict_proba(X[:, c]), rtol=1e-6
        )
    assert not np.allclose(refit.predict_proba(X, state), folds.predict_proba(X, state))


@pytest.mark.parametrize("kind", ["hgb", "masked"])
def test_refit_serving_scores_row_blocks_in_threads_identically(kind, data):
    from budgetdag_core.bank._base import PARALLEL_PREDICT_ROWS

    bank = fit_bank(make_bank(kind, cv=3, random_state=0, serve="refit"), data)
    X_big = np.random.default_rng(1).normal(
        size=(2 * PARALLEL_PREDICT_ROWS + 7, data[0].shape[1])
    )
    state = data[2].n_states - 1
    bank.n_jobs = 1
    alone = bank.predict_proba(X_big, state)
    bank.n_jobs = 2
    np.testing.assert_array_equal(bank.predict_proba(X_big, state), alone)


@pytest.mark.parametrize(
    ("kind", "serve"),
    [("masked", "folds"), ("masked", "refit"), ("hgb", "folds"), ("per_subset", "")],
)
def test_all_states_at_once_equal_each_state(kind, serve, data, monkeypatch):
    """predict_proba_states (the masked bank: one walk per row and tree for all
    states, in row blocks and threads) gives predict_proba's numbers exactly."""
    from budgetdag_core.bank import _masked as masked_bank

    monkeypatch.setattr(masked_bank, "PREDICT_CHUNK_ROWS", 80)  # blocks of 10 rows
    options = {"serve": serve} if serve else {}
    bank = fit_bank(make_bank(kind, cv=3, random_state=0, **options), data)
    X = np.random.default_rng(2).normal(size=(95, data[0].shape[1]))
    if kind != "per_subset":  # trees: missing values take their missing side
        X[::7, 1] = np.nan
    expected = np.stack(
        [bank.predict_proba(X, k) for k in range(bank.n_states)], axis=1
    )
    for n_jobs in (1, 2):
        bank.n_jobs = n_jobs
        np.testing.assert_array_equal(bank.predict_proba_states(X), expected)


def test_fold_models_share_one_walk_order_and_still_average_exactly(
    fitted, data, monkeypatch
):
    """A state's fold models walk a large batch in one shared similarity
    order; the probabilities stay the plain mean of each fold model's own,
    row for row."""
    from budgetdag_core.bank import _row_order
    from budgetdag_core.bank._lgbm_trees import shared_walk_order

    monkeypatch.setattr(_row_order, "SORT_FROM_TREES", 0)
    monkeypatch.setattr(_row_order, "SORT_FROM_TREES_PER_COLUMN", 0.0)
    bank = fitted["hgb"]
    state = data[2].n_states - 1
    models, cols = bank.models_[state], bank.state_columns_[state]
    X = np.random.default_rng(5).normal(size=(5000, data[0].shape[1]))
    X[::11, cols[0]] = np.nan
    Xs = X[:, cols]
    assert shared_walk_order(models, Xs) is not None  # the shared path runs
    expected = np.mean(
        [m.predict_proba(np.ascontiguousarray(Xs), sort_rows=False) for m in models],
        axis=0,
    )
    monkeypatch.setattr(bank, "n_jobs", 1)
    np.testing.assert_array_equal(bank._raw_proba(X, state), expected)


def test_masked_out_of_fold_scores_do_not_depend_on_the_row_blocks(data, monkeypatch):
    """The fit scores its held-out rows at every state in row blocks: one row
    per block gives the numbers of one block for all rows, bit for bit."""
    from budgetdag_core.bank import _masked as masked_bank

    whole = fit_bank(make_bank("masked", cv=3, random_state=0), data)
    monkeypatch.setattr(masked_bank, "PREDICT_CHUNK_ROWS", 1)
    blocked = fit_bank(make_bank("masked", cv=3, random_state=0), data)
    np.testing.assert_array_equal(blocked.oof_proba_, whole.oof_proba_)


@pytest.mark.parametrize("kind", ["hgb", "masked"])
def test_threaded_fits_leave_the_blas_threads_as_they_were(kind, data):
    # The fits run in threads, each limiting OpenMP/BLAS to one thread; the
    # process's limits must come back (restored from a pool thread, OpenBLAS
    # stayed at one thread after the fit).
    from threadpoolctl import threadpool_info

    def limits():
        return sorted((i["filepath"], i["num_threads"]) for i in threadpool_info())

    before = limits()
    bank = fit_bank(make_bank(kind, cv=3, random_state=0, n_jobs=2), data)
    bank.predict_proba(np.zeros((5000, data[0].shape[1])), data[2].n_states - 1)
    assert limits() == before


def test_serve_must_be_a_known_mode(data):
    with pytest.raises(ValueError, match="serve must be one of"):
        fit_bank(make_bank("hgb", cv=3, serve="average"), data)


@pytest.mark.parametrize("kind", BANK_KINDS)
def test_bank_does_not_depend_on_n_jobs(kind, data):
    one = fit_bank(make_bank(kind, cv=3, random_state=0, n_jobs=1), data)
    two = fit_bank(make_bank(kind, cv=3, random_state=0, n_jobs=2), data)
    np.testing.assert_array_equal(one.oof_proba_, two.oof_proba_)
    X = data[0]
    for k in range(one.n_states):
        np.testing.assert_array_equal(one.predict_proba(X, k), two.predict_proba(X, k))


@pytest.mark.parametrize("kind", ["hgb", "masked"])
def test_threaded_fold_average_equals_the_sequential_one(kind, fitted, monkeypatch):
    # Large batches score the fold models in threads when n_jobs > 1 (the
    # boosting banks in row blocks of at least PARALLEL_PREDICT_ROWS rows).
    import copy

    from budgetdag_core import _threads
    from budgetdag_core.bank._base import PARALLEL_PREDICT_ROWS

    pools = []

    class CountingPool(_threads.ThreadPoolExecutor):
        def __init__(self, max_workers):
            pools.append(max_workers)
            super().__init__(max_workers=max_workers)

    monkeypatch.setattr(_threads, "ThreadPoolExecutor", CountingPool)

    one = copy.deepcopy(fitted[kind])
    one.n_jobs = 1
    two = copy.deepcopy(one)
    two.n_jobs = 2
    rng = np.random.default_rng(7)
    X_new = rng.normal(
        size=(2 * PARALLEL_PREDICT_ROWS + 1, N_SENSORS * COLS_PER_SENSOR)
    )
    X_new[rng.random(X_new.shape) < 0.05] = np.nan
    for k in range(one.n_states):
        expected = one.predict_proba(X_new, k)
        np.testing.assert_array_equal(two.predict_proba(X_new, k), expected)
        np.testing.assert_allclose(expected.sum(axis=1), 1.0)
    # Threads at every state with fold models (the masked bank's empty state is
    # the class prior).
    assert set(pools) == {2} and len(pools) >= one.n_states - 1


@pytest.mark.parametrize("kind", BANK_KINDS)
def test_check_integrity_passes_on_a_fitted_bank(kind, fitted):
    fitted[kind].check_integrity()


def _corrupt_hgb_child(bank):
    """A deep copy of ``bank`` with one tree's child index past its node array."""
    import copy

    bad = copy.deepcopy(bank)
    models = bad.models_[-1] if isinstance(bad, ClassifierBank) else bad.model_
    model = models[0] if isinstance(models, list) else models
    model.left_child_[0] = model.node_offsets_[1] + 7  # past the first tree
    return bad


@pytest.mark.parametrize("kind", ["hgb", "masked"])
def test_check_integrity_refuses_a_child_index_past_the_nodes(kind, fitted):
    with pytest.raises(ValueError, match="left_child node index out of range"):
        _corrupt_hgb_child(fitted[kind]).check_integrity()


def test_check_integrity_names_inconsistent_arrays(fitted):
    import copy

    bank = copy.deepcopy(fitted["hgb"])
    bank.state_columns_[3] = np.array([0, 99])
    with pytest.raises(ValueError, match=r"state_columns_\[3\].*out of range"):
        bank.check_integrity()
    bank = copy.deepcopy(fitted["per_subset"])
    bank.temperatures_ = bank.temperatures_[:-1]
    with pytest.raises(ValueError, match="temperatures_"):
        bank.check_integrity()
    bank = copy.deepcopy(fitted["masked"])
    bank.column_masks_ = bank.column_masks_[:, :-1]
    with pytest.raises(ValueError, match="column_masks_"):
        bank.check_integrity()
    bank = copy.deepcopy(fitted["per_subset"])
    bank.models_ = bank.models_[:-1]
    with pytest.raises(ValueError, match="models_"):
        bank.check_integrity()


@pytest.mark.parametrize("kind", BANK_KINDS)
def test_predictions_ignore_unacquired_sensors(kind, data, fitted):
    X, _, dag, _ = data
    bank = fitted[kind]
    rng = np.random.default_rng(1)
    for k in range(dag.n_states):
        changed = X.copy()
        outside = np.setdiff1d(np.arange(X.shape[1]), bank.state_columns_[k])
        changed[:, outside] = rng.normal(scale=5.0, size=(len(X), len(outside)))
        np.testing.assert_array_equal(
            bank.predict_proba(X, k), bank.predict_proba(changed, k)
        )
        nan_outside = X.copy()
        nan_outside[:, outside] = np.nan
        np.testing.assert_array_equal(
            bank.predict_proba(X, k), bank.predict_proba(nan_outside, k)
        )


def test_masked_bank_is_one_model_per_fold(fitted):
    bank = fitted["masked"]
    assert isinstance(bank, MaskedBank)
    assert all(m is bank.model_ for m in bank.models_[1:])


def test_masked_bank_samples_masks_when_the_dag_is_large():
    rng = np.random.default_rng(0)
    n, M = 200, 6
    X = rng.normal(size=(n, M))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    dag = SensorDAG([f"s{m}" for m in range(M)])
    cols = [np.array([m]) for m in range(M)]
    bank = MaskedBank(cv=3, random_state=0, masks_per_row=4)
    rows, states = bank.mask_pairs(dag, n, np.random.default_rng(0))
    assert len(rows) == len(states) == n * 4
    assert states.min() >= 1 and states.max() < dag.n_states
    per_state = np.bincount(states, minlength=dag.n_states)
    sizes = np.array([s.bit_count() for s in dag.states])
    # Uniform over sizes: each single sensor is drawn far more often than each
    # of the twenty 3-sensor states.
    assert per_state[sizes == 1].mean() > 2 * per_state[sizes == 3].mean()
    fitted = bank.fit(X, y, dag, cols, 2)
    again = MaskedBank(cv=3, random_state=0, masks_per_row=4).fit(X, y, dag, cols, 2)
    np.testing.assert_array_equal(fitted.oof_proba_, again.oof_proba_)
    assert fitted.oof_proba_.shape == (n, 64, 2)
    full = dag.n_states - 1
    assert fitted.oof_losses(y)[:, full].mean() < 0.25


def test_masked_bank_rejects_a_classifier_without_nan_support(data):
    with pytest.raises(ValueError, match="missing values"):
        fit_bank(MaskedBank(LogisticRegression(), cv=3), data)


def test_make_bank_checks_its_arguments():
    with pytest.raises(ValueError, match="Unknown bank kind 'forest'"):
        make_bank("forest")
    with pytest.raises(ValueError, match="classifier"):
        make_bank("hgb", LogisticRegression())
    assert isinstance(make_bank("per_subset"), ClassifierBank)
    assert resolve_bank_kind("auto", LogisticRegression()) == "per_subset"
    assert resolve_bank_kind("auto", None, n_states=256) == "masked"
    assert resolve_bank_kind("masked", LogisticRegression()) == "masked"


def test_temperature_scaling_fixes_over_and_under_confidence():
    rng = np.random.default_rng(0)
    n = 4000
    y = rng.integers(0, 2, size=n)
    p_true = np.clip(0.7 + 0.2 * rng.normal(size=n), 0.55, 0.99)
    right = rng.random(n) < p_true
    pred = np.where(right, y, 1 - y)
    conf = p_true**0.25  # the model claims more than it has
    over = np.where(pred[:, None] == np.arange(2), conf[:, None], 1 - conf[:, None])
    assert fit_temperature(over, y) > 1.5
    under = apply_temperature(over, 8.0)  # squashed towards 0.5
    assert fit_temperature(under, y) < 1.0
    scaled = apply_temperature(over, 3.0)
    np.testing.assert_array_equal(scaled.argmax(axis=1), over.argmax(axis=1))


def test_calibration_keeps_predictions_and_lowers_log_loss(data):
    X, y, dag, cols = data
    raw = fit_bank(make_bank("hgb", cv=3, random_state=0, calibrate=False), data)
    cal = fit_bank(make_bank("hgb", cv=3, random_state=0), data)
    np.testing.assert_array_equal(raw.oof_predictions(), cal.oof_predictions())
    rows = np.arange(len(y))
    for k in range(1, dag.n_states):
        nll_raw, nll_cal = (
            -np.log(b.oof_proba_[rows, k, y] + 1e-9).mean() for b in (raw, cal)
        )
        assert nll_cal <= nll_raw + 1e-6
        np.testing.assert_array_equal(
            raw.predict_proba(X, k).argmax(axis=1), cal.predict_proba(X, k).argmax(1)
        )


# ------------------------------------------------------------- estimator level
@pytest.fixture(scope="module")
def frame():
    X, y, _, _ = make_data(n=300, seed=3)
    columns = [f"c{j}" for j in range(X.shape[1])]
    groups = {
        f"s{m}": columns[m * COLS_PER_SENSOR : (m + 1) * COLS_PER_SENSOR]
        for m in range(N_SENSORS)
    }
    spec = SensorSpec(groups, {"s0": 0.02, "s1": 0.05, "s2": 0.01})
    return (
        pd.DataFrame(X, columns=columns),
        pd.Series(y).map(dict(enumerate("abc"))),
        spec,
    )


@pytest.fixture(scope="module")
def models(frame):
    X, y, spec = frame
    fitted = {
        kind: BudgetDAGClassifier(
            spec, bank_kind=kind, cv=3, random_state=0, cost_scale=0.5
        ).fit(X, y)
        for kind in BANK_KINDS
    }
    for kind in ("hgb", "masked"):  # one model per state refit on all rows
        fitted[f"{kind}-refit"] = BudgetDAGClassifier(
            spec,
            bank_kind=kind,
            bank_serve="refit",
            cv=3,
            random_state=0,
            cost_scale=0.5,
        ).fit(X, y)
    return fitted


@pytest.mark.parametrize("kind", BANK_KINDS)
def test_persistence_round_trip_with_every_bank_kind(kind, frame, models, tmp_path):
    X, _, _ = frame
    model = models[kind]
    loaded = load_policy(save_policy(model, tmp_path / "policy.pkl"))
    assert loaded.bank_.kind == model.bank_.kind
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    pd.testing.assert_frame_equal(loaded.trace(X), model.trace(X))


@pytest.mark.parametrize("kind", BANK_KINDS)
def test_session_equals_batch_trace_with_every_bank_kind(kind, frame, models):
    X, _, _ = frame
    model = models[kind]
    trace = model.trace(X)
    assert trace["n_sensors"].between(0, N_SENSORS).all()
    for i in range(0, len(X), 37):
        session = model.start()
        prediction = session.run(X.iloc[i].to_dict())
        assert prediction == trace["prediction"].iloc[i]
        assert tuple(session.acquired) == tuple(trace["acquired"].iloc[i])
        proba = session.predict_proba()
        assert max(proba.values()) == pytest.approx(trace["confidence"].iloc[i])


def test_estimator_bank_kind_and_bank_reuse(frame, models):
    X, y, spec = frame
    assert isinstance(models["masked"].bank_, MaskedBank)
    # "hgb" is LightGBM boosting since the fast-bank issue (issue 13).
    assert models["hgb"].bank_.template().__class__.__name__ == "LightGBMTrees"
    other = models["masked"].refit_policies(X, y, cost_scale=0.0)
    assert other.bank_ is models["masked"].bank_
    with pytest.raises(ValueError, match="bank kind"):
        BudgetDAGClassifier(spec, bank_kind="hgb", cv=3, random_state=0).fit(
            X, y, bank=models["masked"].bank_
        )
    with pytest.raises(ValueError, match="bank_kind"):
        BudgetDAGClassifier(spec, bank_kind="forest").fit(X, y)


@pytest.mark.parametrize("kind", BANK_KINDS)
def test_tiny_tables_fit_with_every_bank_kind(kind):
    # 16 rows, cv=2: too few for the boosting's early-stopping split, which the
    # bank then skips instead of failing.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=16), "b": rng.normal(size=16)})
    y = ["x", "y"] * 8
    spec = SensorSpec.per_column(["a", "b"])
    model = BudgetDAGClassifier(spec, cv=2, bank_kind=kind, random_state=0)
    assert len(model.fit(X, y).predict(X)) == 16


def test_round_cap_is_a_bound_and_tiny_tables_keep_the_unstopped_rounds():
    from sklearn.ensemble import HistGradientBoostingClassifier

    from budgetdag_core.bank._models import (
        MAX_ROUNDS,
        UNSTOPPED_ROUNDS,
        boosting_classifier,
        fit_ready,
        masked_classifier,
    )

    # Early stopping decides the rounds of both default templates.
    for template in (boosting_classifier(0), masked_classifier(0)):
        assert template.get_params()["early_stopping"] is True
        assert template.get_params()["max_iter"] == MAX_ROUNDS > UNSTOPPED_ROUNDS
    # Enough rows to validate on: the template itself.
    template = boosting_classifier(0)
    assert fit_ready(template, 1000, 2) is template
    # Too few: no stop, and then the rounds regularise (the old cap of 100).
    tiny = fit_ready(template, 16, 2)
    assert tiny.get_params()["early_stopping"] is False
    assert tiny.get_params()["max_iter"] == UNSTOPPED_ROUNDS
    assert template.get_params()["max_iter"] == MAX_ROUNDS  # not changed in place
    # A user's classifier keeps its own round count.
    user = HistGradientBoostingClassifier(max_iter=400, early_stopping=True)
    assert fit_ready(user, 16, 2).get_params()["max_iter"] == 400


@pytest.mark.parametrize("kind", BANK_KINDS)
def test_banks_are_storable_by_skops(kind, frame, models):
    # skops (the safe model format) stores no pandas objects: banks keep plain
    # arrays and build ``calibration_`` on demand.
    import skops.io as sio

    X, _, _ = frame
    bank = models[kind].bank_
    data = sio.dumps(bank)
    loaded = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    for k in range(bank.n_states):
        np.testing.assert_array_equal(
            loaded.predict_proba(X.to_numpy(), k), bank.predict_proba(X.to_numpy(), k)
        )
    pd.testing.assert_frame_equal(loaded.calibration_, bank.calibration_)


@pytest.mark.parametrize("kind", [*BANK_KINDS, "hgb-refit", "masked-refit"])
def test_saved_model_round_trips_with_identical_predictions(kind, frame, models):
    # Pickle and skops; the skops file holds only allow-listed types, and the
    # loaded bank passes its integrity check.
    import pickle

    import skops.io as sio

    from budgetdag_core import dumps_policy_skops, loads_policy_skops
    from budgetdag_core.persist import SKOPS_TRUSTED_TYPES

    X, _, _ = frame
    model = models[kind]
    data = dumps_policy_skops(model)
    assert set(sio.get_untrusted_types(data=data)) <= set(SKOPS_TRUSTED_TYPES)
    for loaded in (loads_policy_skops(data), pickle.loads(pickle.dumps(model))):
        loaded.bank_.check_integrity()
        assert loaded.bank_.cross_fit == model.bank_.cross_fit
        np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
