from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.preprocessing import PolynomialFeatures

from budgetdag_core.reductions import (
    CostRegression,
    CostSensitiveLearner,
    FilterTree,
    effective_degree,
)
from budgetdag_core.reductions._base import (
    FOLD_LIMIT,
    PolicyFeatures,
    fitted_expansion,
    polynomial_terms,
)

LEARNERS = [FilterTree(degree=2), CostRegression(degree=2)]


def _region_problem(n: int = 600, k: int = 4, seed: int = 0):
    """Action j is free in region j of the line and costs 1 elsewhere."""
    rng = np.random.default_rng(seed)
    z = rng.uniform(0, k, size=n)
    best = np.floor(z).astype(int)
    C = np.ones((n, k))
    C[np.arange(n), best] = 0.0
    return z.reshape(-1, 1), C, best


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda x: type(x).__name__)
def test_learns_region_policy(learner) -> None:
    Z, C, best = _region_problem(k=2)
    model = clone(learner).fit(Z, C)
    assert isinstance(model, CostSensitiveLearner)
    assert (model.predict(Z) == best).mean() > 0.95


def test_filter_tree_many_actions_low_cost() -> None:
    Z, C, best = _region_problem(k=4)
    Z2 = np.hstack([Z, Z**2, Z**3])
    model = FilterTree(degree=2, C=100.0).fit(Z2, C)
    chosen = model.predict(Z2)
    assert C[np.arange(len(C)), chosen].mean() < 0.15


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda x: type(x).__name__)
def test_one_action_and_no_features_are_constant(learner) -> None:
    C = np.column_stack([np.full(10, 2.0), np.full(10, 1.0)])
    model = clone(learner).fit(np.zeros((10, 0)), C)
    assert list(model.predict(np.zeros((3, 0)))) == [1, 1, 1]
    model = clone(learner).fit(np.ones((10, 2)), C[:, :1])
    assert list(model.predict(np.ones((2, 2)))) == [0, 0]


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda x: type(x).__name__)
def test_equal_costs_and_one_sided_problems(learner) -> None:
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(50, 2))
    equal = np.ones((50, 3))
    assert clone(learner).fit(Z, equal).predict(Z).shape == (50,)
    one_sided = np.column_stack([np.zeros(50), np.ones(50), np.full(50, 2.0)])
    assert set(clone(learner).fit(Z, one_sided).predict(Z)) == {0}


def test_filter_tree_drops_zero_weight_rows() -> None:
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(200, 1))
    # Half the rows are ties (zero weight) and carry no signal at all.
    C = np.column_stack([(Z[:, 0] > 0).astype(float), (Z[:, 0] <= 0).astype(float)])
    C[:100] = 0.5
    model = FilterTree(degree=1).fit(Z, C)
    pred = model.predict(Z[100:])
    assert (pred == (Z[100:, 0] > 0)).mean() > 0.95  # action 1 is free for z > 0


def test_effective_degree_caps_expansion() -> None:
    assert effective_degree(5, 2, 1000) == 2
    assert effective_degree(50, 2, 1000) == 1  # 1325 features > 1000
    assert effective_degree(10, 3, 1000) == 3  # 285
    assert effective_degree(20, 3, 1000) == 2  # 1770 > 1000 >= 230


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    d=st.integers(1, 9),
    seed=st.integers(0, 2**16),
)
def test_policy_features_expand_as_scikit_learn_does(n: int, d: int, seed: int) -> None:
    # The degree-2 map is written without scikit-learn's validation: the same
    # columns, bit for bit, and the folded quadratic form reads them right.
    Z = np.random.default_rng(seed).normal(size=(n, d)) * 10.0
    poly = fitted_expansion(d, 2)
    reference = PolynomialFeatures(2, include_bias=False).fit(Z)
    assert np.array_equal(polynomial_terms(Z, poly), reference.transform(Z))
    assert poly.n_output_features_ == reference.n_output_features_
    features = PolicyFeatures(degree=2)
    F = features.fit_transform(Z)
    coef = np.random.default_rng(seed + 1).normal(size=F.shape[1])
    folded_map = features.fold(coef, 0.5)
    outer = features.outer_
    conditioned = np.all(np.abs(outer.mean_) + 1.0 <= FOLD_LIMIT * outer.scale_)
    assert (folded_map is not None) == conditioned
    if folded_map is not None:
        a, U, b = folded_map
        Zs = features.scale_inputs(Z)
        folded = b + Zs @ a + np.einsum("ij,ij->i", Zs @ U, Zs)
        np.testing.assert_allclose(folded, F @ coef + 0.5, rtol=1e-9, atol=1e-9)


def test_policy_features_do_not_fold_a_square_constant_up_to_rounding() -> None:
    # Two rows standardise to +-1 (each a few roundings off): the square's
    # column is constant in exact arithmetic, and folding it would lose the
    # decision to cancellation (this example was off by 0.017).
    Z = np.random.default_rng(8).normal(size=(2, 1)) * 10.0
    features = PolicyFeatures(degree=2)
    features.fit_transform(Z)
    assert features.outer_.scale_[1] < 1e-12
    assert features.fold(np.array([0.3, -1.1]), 0.5) is None


def test_policy_features_refuse_inputs_of_another_width() -> None:
    with pytest.raises(ValueError, match="have 4 columns; its feature map"):
        polynomial_terms(np.zeros((3, 4)), fitted_expansion(3, 2))


def test_filter_tree_on_an_evenly_split_two_valued_input_predicts_as_trained() -> None:
    # The square of such an input is constant up to rounding: the tournament
    # must then decide on the expanded features it was trained on.
    rng = np.random.default_rng(3)
    Z = np.column_stack([np.repeat([3.712, 3.828], 20), rng.normal(size=40)])
    C = np.column_stack([(Z[:, 0] > 3.75) + 0.1 * rng.random(40), np.full(40, 0.5)])
    tree = FilterTree(degree=2).fit(Z, C)
    assert tree.features_.outer_.scale_[2] < 1e-9
    expanded = tree._predict_node(tree.tree_, tree.features_.transform(Z))
    np.testing.assert_array_equal(tree.predict(Z), expanded)
    chances = np.zeros((len(Z), 2))
    tree._chances(tree.tree_, tree.features_.transform(Z), False, np.ones(40), chances)
    # Folded, these chances were 2.3e-4 off.
    np.testing.assert_allclose(tree.action_scores(Z), chances, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(tree.predict(Z), np.argmin(C, axis=1))
