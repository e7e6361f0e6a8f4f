"""Policy options beyond the paper: node learners with ``estimator=``, soft and
expected stop losses, the state classifier's output as policy inputs, and the
paper configuration reproducing the policies of the code before these options."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from budgetdag_core import BudgetDAGClassifier, LossTablePolicy, SensorSpec
from budgetdag_core.decisions import stop_losses
from budgetdag_core.estimator._inputs import model_inputs, policy_inputs
from budgetdag_core.estimator._policy import make_learner
from budgetdag_core.reductions import CostRegression, FilterTree
from budgetdag_core.tradeoff._baselines import dag_point, state_predictions
from tests.core.tradeoff_problems import make_problem

ESTIMATOR_LEARNERS = [
    FilterTree(degree=1, estimator=DecisionTreeClassifier(max_depth=3, random_state=0)),
    CostRegression(degree=1, estimator=DecisionTreeRegressor(max_depth=3)),
    make_learner("boosted", 1, 1000),
]


def _regions(n: int = 400, k: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    z = rng.uniform(0, k, size=n)
    best = np.floor(z).astype(int)
    C = np.ones((n, k))
    C[np.arange(n), best] = 0.0
    return z.reshape(-1, 1), C, best


# ------------------------------------------------------------------ learners
@pytest.mark.parametrize("learner", ESTIMATOR_LEARNERS, ids=lambda x: repr(x)[:40])
def test_estimator_learners_learn_regions_deterministically(learner) -> None:
    Z, C, best = _regions()
    a = clone(learner).fit(Z, C).predict(Z)
    b = clone(learner).fit(Z, C).predict(Z)
    assert a.shape == (len(Z),) and a.dtype == np.intp
    assert (a == best).mean() > 0.95
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("learner", ESTIMATOR_LEARNERS, ids=lambda x: repr(x)[:40])
def test_estimator_learners_constant_and_two_action_nodes(learner) -> None:
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(200, 2))
    # One action only, or no inputs: a constant.
    assert set(clone(learner).fit(Z, np.ones((200, 1))).predict(Z)) == {0}
    C = np.column_stack([np.full(200, 2.0), np.full(200, 1.0)])
    assert set(clone(learner).fit(np.zeros((200, 0)), C).predict(Z[:, :0])) == {1}
    # Two actions, one always better (a node whose rows are all one class).
    one_sided = np.column_stack([np.zeros(200), np.ones(200)])
    assert set(clone(learner).fit(Z, one_sided).predict(Z)) == {0}
    # Two actions that depend on the inputs.
    two = np.column_stack([(Z[:, 0] > 0), (Z[:, 0] <= 0)]).astype(float)
    pred = clone(learner).fit(Z, two).predict(Z)
    assert (pred == (Z[:, 0] > 0)).mean() > 0.9


def test_cost_regression_constant_action_column_needs_no_model() -> None:
    Z, C, _ = _regions(k=2)
    C = np.column_stack([C, np.full(len(C), 0.5)])  # a flat third action
    model = CostRegression(degree=1, estimator=DecisionTreeRegressor(max_depth=2))
    model.fit(Z, C)
    assert model.model_[2] == 0.5
    chosen = model.predict(Z)
    assert C[np.arange(len(C)), chosen].mean() < 0.1


def test_filter_tree_default_estimator_is_the_paper_logistic() -> None:
    Z, C, _ = _regions(k=4)
    ft = FilterTree(degree=2).fit(Z, C)
    explicit = FilterTree(
        degree=2, estimator=LogisticRegression(C=1.0, solver="newton-cholesky")
    ).fit(Z, C)
    np.testing.assert_array_equal(ft.predict(Z), explicit.predict(Z))


# --------------------------------------------------------------- stop losses
def test_stop_losses_match_their_definitions() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=(50, 4))  # (n, states, classes)
    y = rng.integers(0, 3, size=50)
    zero_one = stop_losses(p, y)
    assert zero_one.shape == (50, 4)
    np.testing.assert_array_equal(zero_one, p.argmax(-1) != y[:, None])
    soft = stop_losses(p, y, kind="soft")
    np.testing.assert_allclose(soft, 1 - p[np.arange(50), :, y])
    expected = stop_losses(p, y, kind="expected")
    np.testing.assert_allclose(expected, 1 - p.max(-1))
    # The expected loss does not look at the label.
    np.testing.assert_array_equal(
        expected, stop_losses(p, (y + 1) % 3, kind="expected")
    )


def test_stop_losses_with_a_loss_matrix() -> None:
    lm = np.array([[0.0, 1.0], [5.0, 0.0]])  # missing class 1 costs 5
    p = np.array([[0.7, 0.3], [0.9, 0.1]])
    y = np.array([1, 0])
    # Decisions: row 0 -> class 1 (0.7 * 1 < 0.3 * 5), row 1 -> class 0.
    np.testing.assert_allclose(stop_losses(p, y, lm), [0.0, 0.0])
    np.testing.assert_allclose(stop_losses(p, y, lm, kind="soft"), [3.5, 0.1])
    np.testing.assert_allclose(stop_losses(p, y, lm, kind="expected"), [0.7, 0.5])
    with pytest.raises(ValueError, match="stop_loss"):
        stop_losses(p, y, kind="hinge")


# ----------------------------------------------------- estimator integration
@pytest.fixture(scope="module")
def problem():
    X, y, spec = make_problem(300, 0)
    Xt, yt, _ = make_problem(150, 1)
    return X, y, spec, Xt, yt


@pytest.fixture(scope="module")
def bank(problem):
    X, y, spec, _, _ = problem
    return BudgetDAGClassifier(
        spec, cv=3, random_state=0, classifier=LogisticRegression()
    ).fit_bank(X, y)


def _fit(problem, bank, **params):
    X, y, spec, _, _ = problem
    return BudgetDAGClassifier(
        spec,
        cost_scale=0.03,
        cv=3,
        random_state=0,
        classifier=LogisticRegression(),
        **params,
    ).fit(X, y, bank=bank)


@pytest.mark.parametrize("stop_loss", ["soft", "expected"])
def test_stop_loss_option_is_what_the_policies_learn_from(problem, bank, stop_loss):
    _, y, _, _, _ = problem
    model = _fit(problem, bank, stop_loss=stop_loss)
    losses = model._stop_losses(bank, np.unique(y, return_inverse=True)[1])
    expected = stop_losses(
        bank.oof_proba_, np.unique(y, return_inverse=True)[1], kind=stop_loss
    )
    np.testing.assert_allclose(losses, expected, rtol=1e-6)
    assert ((losses > 0) & (losses < 1)).mean() > 0.5  # soft, not 0/1
    # The root's training cost-to-go is in these loss units.
    assert model.train_cost_to_go_.shape == (len(y),)


@pytest.mark.parametrize(
    ("mode", "width"), [("confidence", lambda c: 3), ("proba", lambda c: c + 3)]
)
def test_model_input_policies_see_only_the_classifier(problem, bank, mode, width):
    X, _, _, Xt, yt = problem
    model = _fit(problem, bank, policy_features=mode)
    n_classes = len(model.classes_)
    for k, policy in enumerate(model.policies_):
        if k == 0:
            assert policy.n_features == 0  # the root: the same for every row
        elif policy.learner is not None:
            assert policy.n_features == width(n_classes)
    # Batch routing, precomputed inputs and one-row sessions agree.
    sp = state_predictions(model, Xt, yt)
    conf = sp.model_inputs()
    assert conf.shape[-1] == width(n_classes)
    Xv = model._features(Xt)
    routed = model._route(Xv, conf=conf).stop_state
    np.testing.assert_array_equal(routed, model.predict_state(Xt))
    # Inputs computed per state from the kept probabilities: the same route.
    lazily = model._route(Xv, state_proba=sp.proba).stop_state
    np.testing.assert_array_equal(lazily, routed)
    np.testing.assert_allclose(
        dag_point(model, sp)["error"], 1 - model.score(Xt, yt), atol=1e-12
    )
    trace = model.trace(Xt.iloc[:15])
    for i in range(15):
        session = model.start()
        session.run(Xt.iloc[i])
        assert tuple(session.acquired) == trace["acquired"].iloc[i]


def test_model_inputs_kinds() -> None:
    p = np.array([[0.2, 0.8], [0.5, 0.5]])
    assert model_inputs(p, "sensors") is None
    assert model_inputs(p, "confidence").shape == (2, 3)
    np.testing.assert_array_equal(model_inputs(p, "proba")[:, :2], p)
    feats = np.ones((2, 4))
    assert policy_inputs(feats, model_inputs(p, "proba"), "proba").shape == (2, 5)
    assert policy_inputs(feats, model_inputs(p, "confidence")).shape == (2, 7)
    assert policy_inputs(feats, None, "proba") is feats


def test_new_options_are_deterministic(problem, bank):
    X, _, _, Xt, _ = problem
    params = {"policy_features": "proba", "stop_loss": "expected"}
    a = _fit(problem, bank, **params).predict_state(Xt)
    b = _fit(problem, bank, **params).predict_state(Xt)
    np.testing.assert_array_equal(a, b)
    params = {"policy_learner": "boosted", "policy_features": "proba"}
    a = _fit(problem, bank, **params).predict_state(Xt)
    b = _fit(problem, bank, **params).predict_state(Xt)
    np.testing.assert_array_equal(a, b)


def test_bad_option_values_are_named(problem, bank):
    with pytest.raises(ValueError, match="stop_loss"):
        _fit(problem, bank, stop_loss="hinge")
    with pytest.raises(ValueError, match="policy_features"):
        _fit(problem, bank, policy_features="posterior")


# ------------------------------------------------- the paper configuration
def _loss_table_problem():
    rng = np.random.default_rng(7)
    n = 300
    Z = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    spec = SensorSpec.per_column(["a", "b", "c"], {"a": 0.05, "b": 0.1, "c": 0.2})
    labels = LossTablePolicy(spec).state_labels()
    z = Z.to_numpy()
    loss = np.empty((n, len(labels)))
    for k, names in enumerate(labels):
        p = 0.45
        for m in names:
            p -= 0.14 * (z[:, "abc".index(m)] > 0) + 0.03
        loss[:, k] = (rng.random(n) < np.clip(p, 0.02, 1)).astype(float)
    return Z, loss, spec


@pytest.mark.parametrize(
    ("scale", "counts", "cost_to_go", "weighted"),
    [
        (0.3, [0, 22, 0, 0, 0, 0, 0, 278], 77.52, 294870),
        (1.0, [0, 100, 0, 0, 192, 0, 0, 8], 114.6, 135783),
        (3.0, [300, 0, 0, 0, 0, 0, 0, 0], 131.0, 0),
    ],
)
def test_paper_configuration_reproduces_the_earlier_policies(
    scale, counts, cost_to_go, weighted
):
    """Values computed with the code before the new options (commit 6f58714):
    the filter tree on sensor values with 0/1 losses learns the same policies."""
    Z, loss, spec = _loss_table_problem()
    model = LossTablePolicy(spec, cost_scale=scale).fit(Z, loss)
    stops = model.trace(Z)["stop_state"].to_numpy()
    assert np.bincount(stops, minlength=8).tolist() == counts
    assert int((stops * np.arange(len(stops))).sum()) == weighted
    assert model.train_cost_to_go_.sum() == pytest.approx(cost_to_go, abs=1e-9)


def test_defaults_resolve_to_the_measured_configuration(problem, bank):
    model = _fit(problem, bank)
    assert model.policy_features_ == "auto"
    assert (model.stop_loss_, model.policy_degree_) == ("expected", 1)
    # Every state's classifier is informative here: "auto" is "proba".
    assert not model.value_states_.any()
    proba = _fit(problem, bank, policy_features="proba")
    np.testing.assert_array_equal(
        model.predict_state(problem[3]), proba.predict_state(problem[3])
    )
    paper = _fit(problem, bank, policy_features="sensors")
    assert (paper.stop_loss_, paper.policy_degree_) == ("zero_one", 2)
    explicit = _fit(problem, bank, policy_features="sensors", policy_degree=2)
    np.testing.assert_array_equal(
        paper.predict_state(problem[3]), explicit.predict_state(problem[3])
    )
    both = _fit(problem, bank, policy_features="sensors+confidence")
    assert (both.stop_loss_, both.policy_degree_) == ("zero_one", 2)
    conf = _fit(problem, bank, policy_features="confidence")
    assert (conf.stop_loss_, conf.policy_degree_) == ("expected", 1)
    values = _fit(problem, bank, policy_features="sensors+proba")
    assert (values.stop_loss_, values.policy_degree_) == ("expected", 1)


def test_prediction_reuses_the_routing_probabilities(problem, bank, monkeypatch):
    # With probability inputs, the routing already asked the bank at each row's
    # stop state: predict_proba takes those instead of asking again, and gives
    # exactly what the stop states' classifiers say.
    _, _, _, Xt, _ = problem
    model = _fit(problem, bank, policy_features="proba")
    Xv = model._features(Xt)
    stops = model.route(Xt).stop_state
    assert len(np.unique(stops)) > 1
    expected = np.zeros((len(Xt), len(model.classes_)))
    for k in np.unique(stops):
        rows = stops == k
        expected[rows] = model.bank_.predict_proba(Xv[rows], int(k))
    calls = []
    original = type(model.bank_).predict_proba

    def counting(self, X, state, rows=None):
        calls.append(state)
        return original(self, X, state, rows=rows)

    monkeypatch.setattr(type(model.bank_), "predict_proba", counting)
    np.testing.assert_allclose(model.predict_proba(Xt), expected, rtol=1e-12)
    visited = {int(k) for k in np.unique(model.route(Xt).path) if k > 0}
    calls.clear()
    model.predict_proba(Xt)
    # once per visited state with columns (the root's prior needs no call)
    assert sorted(calls) == sorted(visited | ({0} if (stops == 0).any() else set()))
