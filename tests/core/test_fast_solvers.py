"""The NumPy solvers behind policy learning and calibration give the same
optimum as the scikit-learn / SciPy routines they replace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from budgetdag_core.bank import _calibration
from budgetdag_core.bank._calibration import (
    EPS,
    LOG_T_BOUNDS,
    apply_temperatures,
    expected_calibration_error,
    expected_calibration_errors,
    fit_temperatures,
)
from budgetdag_core.reductions._base import column_mean_var, fitted_scaler
from budgetdag_core.reductions._filter_tree import FilterTree
from budgetdag_core.reductions._logistic import fit_logistic
from budgetdag_core.reductions._tournament import numpy_mean, tournament_layout


def _problem(seed: int, n: int = 400, d: int = 4, noise: float = 0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + noise * rng.normal(size=n) > 0
    w = rng.exponential(size=n)
    return X, y, w


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_logistic_matches_scikit_learn(seed: int, C: float) -> None:
    X, y, w = _problem(seed)
    ours = fit_logistic(X, y, w, C=C)
    ref = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-10).fit(
        X, y, sample_weight=w
    )
    # Both stop at a small gradient, not at the exact optimum.
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-3, atol=1e-3)
    assert (ours.predict(X) != ref.predict(X)).mean() <= 0.01


def test_zero_weight_rows_are_dropped_rows() -> None:
    X, y, w = _problem(3)
    w[::3] = 0.0
    keep = w > 0
    a = fit_logistic(X, y, w)
    b = fit_logistic(X[keep], y[keep], w[keep])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-9)
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-9)


def test_separable_data_stays_finite_and_separates() -> None:
    x = np.linspace(-1, 1, 50).reshape(-1, 1)
    model = fit_logistic(x, x[:, 0] > 0, np.ones(50), C=1e6)
    assert np.isfinite(model.coef_).all() and model.coef_[0, 0] > 10
    np.testing.assert_array_equal(model.predict(x), x[:, 0] > 0)


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(2, 60),
    d=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
)
def test_logistic_never_worse_than_its_start(n, d, seed, scale) -> None:
    """Property: on any data with both labels the solver ends finite and at an
    objective no worse than the best constant (its starting point)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    y = rng.random(n) < 0.5
    y[0], y[-1] = True, False
    w = rng.exponential(size=n) + 1e-3
    model = fit_logistic(X, y, w)
    z = X @ model.coef_[0] + model.intercept_[0]

    def objective(z: np.ndarray, coef: np.ndarray) -> float:
        return float(w @ (np.logaddexp(0, z) - y * z) + 0.5 * coef @ coef)

    p = (w @ y) / w.sum()
    start = np.full(n, np.log(p / (1 - p)))
    assert np.isfinite(model.coef_).all() and np.isfinite(model.intercept_).all()
    assert objective(z, model.coef_[0]) <= objective(start, np.zeros(d)) + 1e-9


def test_fitted_scaler_matches_standard_scaler() -> None:
    rng = np.random.default_rng(0)
    Z = np.column_stack([rng.normal(size=80), np.full(80, 3.3), np.arange(80.0)])
    ours, ref = fitted_scaler(Z), StandardScaler().fit(Z)
    for name in ("mean_", "var_", "scale_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), atol=1e-20)
    np.testing.assert_allclose(ours.transform(Z), ref.transform(Z))


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 3_000),
    d=st.integers(1, 30),
    seed=st.integers(0, 2**16),
    log_scale=st.floats(-8, 8),
    offset=st.floats(0, 100),
    rounded=st.booleans(),
)
def test_compiled_column_mean_var_is_numpys_bit_for_bit(
    n: int, d: int, seed: int, log_scale: float, offset: float, rounded: bool
) -> None:
    rng = np.random.default_rng(seed)
    scale = 10.0**log_scale
    Z = rng.normal(size=(n, d)) * scale + rng.normal(size=d) * scale * offset
    if rounded:  # ties and constant columns
        Z = np.round(Z)
    mean, var = column_mean_var(Z)
    np.testing.assert_array_equal(mean, Z.mean(axis=0))
    np.testing.assert_array_equal(var, Z.var(axis=0))
    mean_f, var_f = column_mean_var(np.asfortranarray(Z))  # NumPy's own path
    np.testing.assert_array_equal(mean_f, np.asfortranarray(Z).mean(axis=0))
    np.testing.assert_array_equal(var_f, np.asfortranarray(Z).var(axis=0))


def _scalar_temperature(proba: np.ndarray, y: np.ndarray) -> float:
    """The search the vectorised fit replaced (bounded scalar minimisation)."""
    logp = np.log(np.maximum(proba, EPS))
    picked = logp[np.arange(len(y)), y]

    def nll(log_t: float) -> float:
        z = logp / np.exp(log_t)
        zmax = z.max(axis=1)
        lse = zmax + np.log(np.exp(z - zmax[:, None]).sum(axis=1))
        return float(np.mean(lse - picked / np.exp(log_t)))

    res = minimize_scalar(nll, bounds=LOG_T_BOUNDS, method="bounded")
    return 1.0 if nll(0.0) - res.fun < 1e-4 else float(np.exp(res.x))


def _states(seed: int = 0, n: int = 1500, n_states: int = 12, n_classes: int = 4):
    rng = np.random.default_rng(seed)
    sharp = rng.uniform(0.1, 8.0, size=(1, n_states, 1))
    logits = rng.normal(size=(n, n_states, n_classes)) * sharp
    y = logits[:, 0].argmax(axis=1)
    flip = rng.random(n) < 0.3
    y[flip] = rng.integers(0, n_classes, flip.sum())
    proba = np.exp(logits)
    return proba / proba.sum(axis=2, keepdims=True), y


def test_temperatures_match_the_scalar_search() -> None:
    proba, y = _states()
    proba[:, 3] = 1.0 / proba.shape[2]  # no ranking: temperature 1
    ours = fit_temperatures(proba, y)
    ref = np.array([_scalar_temperature(proba[:, k], y) for k in range(proba.shape[1])])
    np.testing.assert_allclose(ours, ref, rtol=1e-4)
    assert ours[3] == 1.0


def test_apply_temperatures_and_ece_per_state() -> None:
    proba, y = _states(1)
    temperatures = fit_temperatures(proba, y)
    scaled = proba.copy()
    apply_temperatures(scaled, temperatures)
    np.testing.assert_array_equal(scaled.argmax(axis=2), proba.argmax(axis=2))
    for k in range(proba.shape[1]):
        p, t = proba[:, k], temperatures[k]
        logits = np.log(np.maximum(p, EPS)) / t
        expected = np.exp(logits - logits.max(axis=1, keepdims=True))
        expected /= expected.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(scaled[:, k], expected, rtol=1e-10)
    per_state = expected_calibration_errors(proba, y)
    for k in range(proba.shape[1]):
        conf = proba[:, k].max(axis=1)
        correct = proba[:, k].argmax(axis=1) == y
        bins = np.minimum((conf * 15).astype(int), 14)
        gap = sum(
            abs(correct[bins == b].sum() - conf[bins == b].sum()) for b in range(15)
        )
        assert per_state[k] == pytest.approx(gap / len(y))
        assert expected_calibration_error(proba[:, k], y) == pytest.approx(gap / len(y))


def test_calibration_in_threads_equals_one_thread() -> None:
    """States fitted and rescaled in groups, in threads, get the numbers of
    one pass over all states (each state's arithmetic is its own)."""
    proba, y = _states(2, n=2_500, n_states=60)
    assert proba.size >= _calibration.PARALLEL_CALIBRATION_VALUES  # work to share
    assert len(_calibration._state_chunks(proba, np.arange(60), n_jobs=2)) == 2
    alone = fit_temperatures(proba, y, np.random.default_rng(0), n_jobs=1)
    shared = fit_temperatures(proba, y, np.random.default_rng(0), n_jobs=2)
    np.testing.assert_array_equal(alone, shared)
    assert (alone != 1.0).sum() > 40
    one, two = proba.copy(), proba.copy()
    apply_temperatures(one, alone, n_jobs=1)
    apply_temperatures(two, alone, n_jobs=2)
    np.testing.assert_array_equal(one, two)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 20_000),
    seed=st.integers(0, 2**16),
    spread=st.floats(1e-3, 1e6),
)
def test_compiled_mean_is_numpys_bit_for_bit(n: int, seed: int, spread: float) -> None:
    """The filter tree's compiled weight normalisation sums as NumPy does
    (pairwise), so its node weights equal the NumPy path's exactly."""
    a = np.abs(np.random.default_rng(seed).standard_cauchy(n)) * spread
    assert numpy_mean(a) == a.mean()


def _tree_signature(node) -> list:
    """A filter tree's structure, constants and exact model parameters."""
    if isinstance(node, int):
        return [("action", node)]
    own = (
        ("constant", node.constant)
        if node.model is None
        else (
            "model",
            node.model.coef_.tobytes(),
            node.model.intercept_.tobytes(),
            int(node.model.n_iter_[0]),
        )
    )
    return [*_tree_signature(node.left), *_tree_signature(node.right), own]


@pytest.mark.parametrize("seed", range(12))
def test_compiled_tournament_equals_the_python_tournament(seed: int) -> None:
    """One compiled call trains the same tournament as the node-by-node code
    (which ``FilterTree(estimator=...)`` still uses): same constants, same
    coefficients bit for bit, same winners."""
    rng = np.random.default_rng(seed)
    n, n_actions, d = int(rng.integers(5, 2500)), int(rng.integers(2, 10)), 3
    Z = rng.normal(size=(n, d))
    C = rng.random((n, n_actions)) * (rng.random((n, n_actions)) < 0.7)
    C += 0.3 * Z[:, :1] * np.arange(n_actions)  # learnable structure
    if seed % 3 == 0:
        C[:, 1] = C[:, 0]  # a node with nothing to learn (all weights zero)
    if seed % 4 == 0:
        C = np.round(C, 1)  # ties
    tree = FilterTree(degree=1 + seed % 2, C=[0.1, 1.0, 10.0][seed % 3]).fit(Z, C)
    F = tree.features_.transform(Z)
    reference, winners = tree._train(F, C, np.arange(n_actions))
    assert _tree_signature(tree.tree_) == _tree_signature(reference)
    assert np.array_equal(tree._predict_node(tree.tree_, F), winners)


def test_tournament_layout_splits_as_the_filter_tree() -> None:
    left, right = tournament_layout(5)
    # actions 0..4: ((0, 1), 2) against (3, 4), nodes in post-order
    assert left.tolist() == [-1, 0, -4, 1]
    assert right.tolist() == [-2, -3, -5, 2]


@pytest.mark.parametrize("seed", range(8))
def test_skipping_the_objective_on_safe_steps_changes_nothing(seed: int) -> None:
    """Full Newton steps the self-concordance bound proves sufficient are taken
    without evaluating the objective: the same iterates as a line search that
    evaluates it at every step (bit for bit), on easy and separable problems."""
    X, y, w = _problem(
        seed, n=300 + 200 * seed, d=1 + seed % 5, noise=[0.0, 0.5][seed % 2]
    )
    looked = fit_logistic(X, y, w, C=10.0, safe_step=0.0)
    skipped = fit_logistic(X, y, w, C=10.0)
    assert np.array_equal(looked.coef_, skipped.coef_)
    assert np.array_equal(looked.intercept_, skipped.intercept_)
    assert looked.n_iter_[0] == skipped.n_iter_[0]


def _ece_numpy(proba: np.ndarray, y: np.ndarray, n_bins: int = 15) -> np.ndarray:
    """The NumPy top-label ECE per state that the compiled pass replaced."""
    n = proba.shape[0]
    conf = proba[..., 0].astype(float)
    top = np.zeros(conf.shape, dtype=np.intp)
    for c in range(1, proba.shape[2]):
        higher = proba[..., c] > conf
        conf = np.where(higher, proba[..., c], conf)
        top[higher] = c
    correct = (top == np.asarray(y)[:, None]).astype(float)
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    n_states = proba.shape[1]
    cell = (bins + n_bins * np.arange(n_states)[None, :]).ravel()
    size = n_states * n_bins
    gap = np.bincount(cell, correct.ravel(), size) - np.bincount(
        cell, conf.ravel(), size
    )
    return np.abs(gap).reshape(n_states, n_bins).sum(axis=1) / n


@pytest.mark.parametrize("n_classes", [1, 2, 7, 26])
def test_compiled_ece_equals_numpy_bit_for_bit(n_classes: int) -> None:
    rng = np.random.default_rng(n_classes)
    proba = rng.dirichlet(np.full(n_classes, 0.4), size=(700, 9)).astype(np.float32)
    proba[:50] = np.round(proba[:50], 1)  # ties between classes and bin edges
    y = rng.integers(0, n_classes, 700)
    for n_bins in (15, 4):
        expected = _ece_numpy(proba, y, n_bins)
        assert np.array_equal(expected_calibration_errors(proba, y, n_bins), expected)
        doubles = proba.astype(float)
        assert np.array_equal(
            expected_calibration_errors(doubles, y, n_bins),
            _ece_numpy(doubles, y, n_bins),
        )


@pytest.mark.parametrize("bad", [np.nan, -0.5])
def test_ece_refuses_probabilities_it_cannot_bin(bad: float) -> None:
    proba = np.full((4, 2, 2), 0.5, dtype=np.float32)
    proba[2, 1] = [bad, bad - 0.2]  # no class with a number >= 0 on top
    with pytest.raises(ValueError, match="probabilities"):
        expected_calibration_errors(proba, np.zeros(4, dtype=int))
