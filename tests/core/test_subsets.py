"""Greedy sensor-subset selection (Alg. 2) and its cost-benefit variant."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.naive_bayes import GaussianNB

from budgetdag_core import SensorSpec, select_subsets
from budgetdag_core.strategies._subsets import RidgeReward


def _groups_problem(n: int = 600, n_groups: int = 3, n_noise: int = 3, seed: int = 0):
    """Rows fall in hidden groups; in group g only sensor ``s<g>`` shows the label.

    Elsewhere that sensor is noise. The known optimum with t = n_groups subsets
    and budget n_groups is one singleton subset per informative sensor: together
    they classify every row correctly; noise sensors never help.
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    group = rng.integers(0, n_groups, n)
    data = {}
    for g in range(n_groups):
        signal = (2 * y - 1) + rng.normal(scale=0.1, size=n)
        data[f"s{g}"] = np.where(group == g, signal, rng.normal(size=n))
    for j in range(n_noise):
        data[f"noise{j}"] = rng.normal(size=n)
    return pd.DataFrame(data), y


def test_finds_known_optimal_subsets():
    X, y = _groups_problem()
    spec = SensorSpec.per_column(list(X.columns))
    sel = select_subsets(X, y, spec, n_subsets=3, subset_budget=3, random_state=0)
    assert sorted(sel.subsets) == [("s0",), ("s1",), ("s2",)]
    assert sel.reward > 0.97
    assert sel.budget_used == 3


def test_two_sensors_both_needed_for_sum_label():
    # y = [a + b > 0]: "a" alone is right whenever |a| > |b| and "b" otherwise,
    # so the two singletons classify every row: G's optimum with budget 2.
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=list("abcd"))
    y = (X["a"] + X["b"] > 0).astype(int)
    spec = SensorSpec.per_column(list(X.columns))
    sel = select_subsets(X, y, spec, n_subsets=2, subset_budget=2, random_state=0)
    assert sorted(sel.subsets) == [("a",), ("b",)]
    assert sel.reward == pytest.approx(1.0, abs=0.01)


def _random_problem(seed: int = 0):
    X, y = make_classification(
        n_samples=500,
        n_features=12,
        n_informative=6,
        n_classes=3,
        n_clusters_per_class=1,
        random_state=seed,
    )
    cols = [f"x{i}" for i in range(12)]
    return pd.DataFrame(X, columns=cols), y, cols


def test_reward_is_monotone_over_greedy_steps():
    X, y, cols = _random_problem()
    spec = SensorSpec.per_column(cols)
    sel = select_subsets(X, y, spec, n_subsets=4, subset_budget=10, random_state=0)
    G = sel.history["G"].to_numpy()
    assert len(G) >= 3
    assert np.all(np.diff(G) > 0)
    assert np.all(sel.history["gain"] > 0)
    assert sel.reward == pytest.approx(G[-1] / sel.n_rows)


@pytest.mark.parametrize("budget", [1.0, 2.5, 4.0, 7.0])
def test_budget_is_never_exceeded(budget):
    X, y, cols = _random_problem(seed=2)
    costs = dict(zip(cols, np.linspace(0.2, 3.0, len(cols)), strict=True))
    spec = SensorSpec.per_column(cols, cost=costs)
    sel = select_subsets(X, y, spec, n_subsets=3, subset_budget=budget, random_state=0)
    cost_units = budget * spec.cost_vector.mean()
    spent = sum(spec.costs[s] for subset in sel.subsets for s in subset)
    assert sel.budget == pytest.approx(cost_units)
    assert spent == pytest.approx(sel.budget_used)
    assert spent <= cost_units + 1e-9


def test_uniform_budget_counts_sensors():
    X, y, cols = _random_problem(seed=3)
    spec = SensorSpec.per_column(cols, cost=0.25)
    sel = select_subsets(X, y, spec, n_subsets=3, subset_budget=5, random_state=0)
    assert sum(len(s) for s in sel.subsets) <= 5


def _copies_problem(cheap_noise: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 600
    y = rng.integers(0, 2, n)
    signal = (2 * y - 1) * 0.8 + rng.normal(size=n)
    X = pd.DataFrame(
        {
            "expensive": signal,
            "cheap": signal + rng.normal(scale=cheap_noise, size=n),
            "noise": rng.normal(size=n),
        }
    )
    spec = SensorSpec.per_column(
        list(X.columns), cost={"expensive": 10.0, "cheap": 1.0, "noise": 1.0}
    )
    return X, y, spec


@pytest.mark.parametrize("strategy", ["cost_benefit", "auto"])
def test_cost_benefit_prefers_cheap_equally_good_sensor(strategy):
    X, y, spec = _copies_problem(cheap_noise=0.0)  # identical columns
    sel = select_subsets(
        X, y, spec, n_subsets=1, subset_budget=3, strategy=strategy, random_state=0
    )
    assert sel.subsets[0][0] == "cheap"
    assert "expensive" not in sel.subsets[0]


def test_cost_benefit_takes_cheap_nearly_as_good_sensor_plain_greedy_does_not():
    X, y, spec = _copies_problem(cheap_noise=0.3)  # cheap one slightly worse
    kwargs = {"n_subsets": 1, "subset_budget": 3, "random_state": 0}
    plain = select_subsets(X, y, spec, strategy="greedy", **kwargs)
    ratio = select_subsets(X, y, spec, strategy="cost_benefit", **kwargs)
    assert plain.history["sensor"].iloc[0] == "expensive"
    assert ratio.history["sensor"].iloc[0] == "cheap"
    assert ratio.method == "cost_benefit" and plain.method == "greedy"


def test_auto_keeps_the_better_of_plain_and_cost_benefit_runs():
    # Leskovec et al.: cost-benefit alone can be arbitrarily bad. A tiny cheap
    # sensor of weak signal has the best ratio, then the budget cannot pay for
    # the strong one; plain greedy buys the strong one and wins.
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 2, n)
    X = pd.DataFrame(
        {
            "strong": (2 * y - 1) + rng.normal(scale=0.3, size=n),
            "weak": (2 * y - 1) * 0.3 + rng.normal(size=n),
        }
    )
    spec = SensorSpec.per_column(list(X.columns), cost={"strong": 10.0, "weak": 0.1})
    budget = 10.0 / spec.cost_vector.mean()  # 10 cost units
    sel = select_subsets(X, y, spec, n_subsets=2, subset_budget=budget, random_state=0)
    assert set(sel.runs) == {"greedy", "cost_benefit"}
    assert sel.runs["greedy"] > sel.runs["cost_benefit"]
    assert sel.method == "greedy"
    assert sel.subsets == [("strong",)]


def test_include_all_adds_the_full_subset_last():
    X, y, cols = _random_problem()
    spec = SensorSpec.per_column(cols)
    sel = select_subsets(
        X, y, spec, n_subsets=3, subset_budget=4, include_all=True, random_state=0
    )
    assert sel.subsets[-1] == tuple(cols)
    assert len(sel.subsets) <= 3
    assert sum(len(s) for s in sel.subsets[:-1]) <= 4


def test_multi_column_sensors_and_progress():
    X, y, cols = _random_problem()
    groups = {f"g{i}": cols[2 * i : 2 * i + 2] for i in range(6)}
    spec = SensorSpec(groups, dict.fromkeys(groups, 1.0))
    calls = []
    sel = select_subsets(
        X,
        y,
        spec,
        n_subsets=2,
        subset_budget=3,
        random_state=0,
        progress=lambda *a: calls.append(a),
    )
    assert all(set(s) <= set(groups) for s in sel.subsets)
    assert calls and all(stage == "subsets" for stage, _, _ in calls)
    assert calls[-1][1] == calls[-1][2]
    assert [c[1] for c in calls] == sorted(c[1] for c in calls)


def test_estimator_scorer_and_parallel_scoring_agree_with_themselves():
    X, y, cols = _random_problem()
    spec = SensorSpec.per_column(cols)
    kwargs = {"n_subsets": 2, "subset_budget": 3, "random_state": 0}
    serial = select_subsets(X, y, spec, scorer=GaussianNB(), **kwargs)
    threaded = select_subsets(X, y, spec, scorer=GaussianNB(), n_jobs=2, **kwargs)
    assert serial.subsets == threaded.subsets
    assert serial.reward == threaded.reward


def test_ridge_reward_matches_sklearn_ridge_classifier_fold_by_fold():
    from sklearn.linear_model import RidgeClassifier
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    X, y, _ = _random_problem()
    reward = RidgeReward(X.to_numpy(), y, task="classification", cv=3, random_state=0)
    cols = np.array([0, 3, 5])
    Xs = StandardScaler().fit_transform(X.to_numpy())[:, cols]
    expected = np.empty(len(y), dtype=bool)
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(Xs, y):
        # RidgeClassifier fits {-1, 1} targets; one-hot {0, 1} targets differ by
        # an affine map, which leaves the argmax unchanged at equal alpha.
        model = RidgeClassifier(alpha=1e-3 * len(train)).fit(Xs[train], y[train])
        expected[test] = model.predict(Xs[test]) == y[test]
    assert np.array_equal(reward(cols), expected)


def test_regression_task_selects_informative_sensors():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 6)), columns=list("abcdef"))
    y = 3 * X["a"] - 2 * X["c"] + rng.normal(scale=0.1, size=400)
    spec = SensorSpec.per_column(list(X.columns))
    sel = select_subsets(
        X, y, spec, n_subsets=1, subset_budget=2, task="regression", random_state=0
    )
    assert sel.subsets == [("a", "c")]
    assert 0.9 < sel.reward <= 1.0


def test_bad_arguments_raise_value_errors():
    X, y, cols = _random_problem()
    spec = SensorSpec.per_column(cols)
    with pytest.raises(ValueError, match="n_subsets"):
        select_subsets(X, y, spec, n_subsets=0)
    with pytest.raises(ValueError, match="subset_budget"):
        select_subsets(X, y, spec, n_subsets=2, subset_budget=-1)
    with pytest.raises(ValueError, match="strategy"):
        select_subsets(X, y, spec, n_subsets=2, strategy="best")
    with pytest.raises(ValueError, match="rows"):
        select_subsets(X, y[:10], spec, n_subsets=2)


def test_free_sensors_do_not_use_budget_and_come_first():
    X, y, spec = _copies_problem(cheap_noise=0.3)
    free = SensorSpec.per_column(
        list(X.columns), cost={"expensive": 10.0, "cheap": 0.0, "noise": 1.0}
    )
    sel = select_subsets(
        X, y, free, n_subsets=1, subset_budget=0.01, strategy="cost_benefit"
    )
    assert sel.subsets == [("cheap",)] and sel.budget_used == 0.0
    everything_free = SensorSpec.per_column(list(X.columns), cost=0.0)
    sel = select_subsets(X, y, everything_free, n_subsets=2, subset_budget=1)
    assert sum(len(s) for s in sel.subsets) == 1  # all free: the budget counts


def _many_classes_problem(
    n: int = 1500, n_sensors: int = 20, n_classes: int = 3, seed: int = 0
):
    """Each sensor a weak noisy view of one entry of the label's one-hot code."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    code = np.eye(n_classes)[y]
    data = {
        f"s{j:02d}": code[:, j % n_classes] + rng.normal(scale=2.0, size=n)
        for j in range(n_sensors)
    }
    return pd.DataFrame(data), y


def test_soft_reward_keeps_growing_subsets_where_zero_one_saturates():
    X, y = _many_classes_problem()
    spec = SensorSpec.per_column(list(X.columns))
    hard = select_subsets(X, y, spec, n_subsets=7, reward="correct", random_state=0)
    soft = select_subsets(X, y, spec, n_subsets=7, reward="soft", random_state=0)
    # Weak small subsets are each right on different rows: their 0/1 coverage
    # is nearly complete, so the greedy stops with budget left and no subset
    # that classifies well on its own.
    assert hard.reward > 0.99
    assert hard.budget_used < 0.75 * len(spec.names)
    assert soft.budget_used > hard.budget_used
    assert max(map(len, soft.subsets)) > 2 * max(map(len, hard.subsets))
    assert 0 < soft.reward <= 1
    assert soft.history["G"].is_monotonic_increasing


def test_soft_reward_with_an_estimator_scorer():
    from sklearn.linear_model import LogisticRegression, RidgeClassifier

    X, y = _many_classes_problem(n=600, n_sensors=6)
    spec = SensorSpec.per_column(list(X.columns))
    sel = select_subsets(
        X,
        y,
        spec,
        n_subsets=2,
        reward="soft",
        scorer=LogisticRegression(),
        random_state=0,
    )
    assert sel.subsets and 0 < sel.reward <= 1
    with pytest.raises(ValueError, match="needs a scorer with predict_proba"):
        select_subsets(X, y, spec, n_subsets=2, reward="soft", scorer=RidgeClassifier())
    with pytest.raises(ValueError, match="reward must be 'correct' or 'soft'"):
        select_subsets(X, y, spec, n_subsets=2, reward="probability")


def test_soft_ridge_reward_is_the_clipped_true_class_score():
    X, y = _many_classes_problem(n=400, n_sensors=4)
    cols = np.arange(4)
    hard = RidgeReward(X.to_numpy(), y, task="classification", random_state=0)
    soft = RidgeReward(
        X.to_numpy(), y, task="classification", random_state=0, reward="soft"
    )
    r = soft(cols)
    assert r.dtype == np.float32 and r.min() >= 0 and r.max() <= 1
    # Rows the least-squares classifier gets right have a higher true-class score.
    right = hard(cols)
    assert r[right].mean() > r[~right].mean()


def test_estimator_passes_its_subset_reward():
    from sklearn.utils._param_validation import InvalidParameterError

    from budgetdag_core import BudgetDAGClassifier

    X, y = _many_classes_problem(n=600, n_sensors=14)
    spec = SensorSpec.per_column(list(X.columns))
    params = {"n_subsets": 3, "cv": 3, "random_state": 0, "bank_kind": "per_subset"}
    model = BudgetDAGClassifier(spec, **params).fit(X, y)
    expected = select_subsets(
        X, y, spec, 3, reward="soft", cv=3, random_state=0
    ).subsets
    assert model.subset_selection_.subsets == expected
    with pytest.raises(InvalidParameterError, match="subset_reward"):
        BudgetDAGClassifier(spec, subset_reward="probability", **params).fit(X, y)


@pytest.mark.parametrize(
    ("task", "reward"),
    [("classification", "soft"), ("classification", "correct"), ("regression", "")],
)
def test_grown_rewards_equal_the_rewards_of_the_grown_subsets(task, reward):
    """RidgeReward.grow (bordered solves from the base's factorisation) gives
    the same rewards as scoring each grown subset on its own."""
    X, y = make_classification(300, 9, n_informative=5, n_classes=3, random_state=0)
    target = y if task == "classification" else X[:, 0] + X[:, 1] ** 2
    options = {"reward": reward} if reward else {}
    scorer = RidgeReward(X, target, task=task, random_state=0, **options)
    blocks = [np.array([2]), np.array([5, 6]), np.array([7]), np.array([3, 8])]
    for base in (np.zeros(0, dtype=int), np.array([0, 4]), np.array([1])):
        grown = scorer.grow(base, blocks)
        for block, rewards in zip(blocks, grown, strict=True):
            alone = scorer(np.concatenate([base, block]))
            if reward == "correct":
                assert (rewards != alone).mean() <= 0.01  # argmax ties may round
            else:
                np.testing.assert_allclose(rewards, alone, rtol=1e-5, atol=1e-5)
