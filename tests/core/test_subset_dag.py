"""The DAG over unions of selected sensor subsets, end to end in the estimator."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from budgetdag_core import (
    BudgetDAGClassifier,
    SensorDAG,
    SensorSpec,
    dumps_policy,
    loads_policy,
)
from budgetdag_core.graph_reduce import ConstantAction, edge_costs
from budgetdag_core.strategies._choice import STRATEGIES


@pytest.fixture(scope="module")
def many():
    """14 single-column sensors of unequal cost, 3 classes."""
    X, y = make_classification(
        n_samples=360,
        n_features=14,
        n_informative=7,
        n_classes=3,
        n_clusters_per_class=1,
        class_sep=1.5,
        random_state=0,
    )
    cols = [f"x{i:02d}" for i in range(14)]
    costs = dict(zip(cols, np.round(np.linspace(0.01, 0.05, 14), 3), strict=True))
    return pd.DataFrame(X, columns=cols), y, SensorSpec.per_column(cols, cost=costs)


@pytest.fixture(scope="module")
def model(many):
    X, y, spec = many
    return BudgetDAGClassifier(
        spec,
        cost_scale=0.5,
        n_subsets=4,
        subset_budget=9,
        include_all=True,
        policy_degree=1,
        cv=3,
        random_state=0,
    ).fit(X, y)


def _distinct_unions(units):
    out = set()
    for r in range(len(units) + 1):
        for combo in combinations(units, r):
            out.add(frozenset().union(*map(frozenset, combo)))
    return out


def test_full_dag_limit_points_to_n_subsets(many):
    X, y, spec = many
    with pytest.raises(ValueError, match="n_subsets"):
        BudgetDAGClassifier(spec, dag="full").fit(X, y)


def test_number_of_states_is_number_of_distinct_unions(model):
    units = model.subset_selection_.units
    assert len(units) >= 2
    expected = _distinct_unions(units)
    dag = model.sensor_dag_
    got = {frozenset(dag.sensors_in(k)) for k in range(dag.n_states)}
    assert got == expected
    assert dag.n_states == len(expected) == model.dag_.number_of_nodes()


def test_overlapping_units_give_distinct_unions_and_edge_costs():
    names = list("abcd")
    units = [[0, 1], [1, 2], [0, 1, 2], [3]]
    dag = SensorDAG(names, units=units)
    assert dag.n_states == len(_distinct_unions(units))  # {a,b}∪{b,c} = {a,b,c}
    costs = np.array([1.0, 2.0, 4.0, 8.0])
    cost = edge_costs(dag, costs, n_samples=2)
    ab = dag.index[0b0011]
    abc = dag.index[0b0111]
    assert cost(ab, abc).tolist() == [4.0, 4.0]  # only c is new
    per_row = np.array([[1.0, 2.0, 4.0, 8.0], [1.0, 2.0, 0.0, 8.0]])
    assert edge_costs(dag, per_row, 2)(ab, abc).tolist() == [4.0, 0.0]


def test_paths_acquire_only_sensors_of_selected_subsets(model, many):
    X, _, spec = many
    tr = model.trace(X)
    sel = model.subset_selection_
    unions = {frozenset(spec.names[m] for m in u) for u in _distinct_unions(sel.units)}
    assert tr["n_sensors"].max() > 0  # the policy does acquire
    for acquired in tr["acquired"]:
        assert len(set(acquired)) == len(acquired)  # no sensor bought twice
        assert frozenset(acquired) in unions


def test_trace_costs_are_sums_of_real_sensor_costs(model, many):
    X, _, spec = many
    tr = model.trace(X)
    expected = [sum(spec.costs[s] for s in acq) for acq in tr["acquired"]]
    np.testing.assert_allclose(tr["cost"].to_numpy(), expected)
    dag = model.sensor_dag_
    stops = [set(dag.state_names(k)) for k in tr["stop_state"]]
    assert all(set(a) == s for a, s in zip(tr["acquired"], stops, strict=True))


def test_session_asks_sensors_of_a_unit_one_at_a_time(model, many):
    X, _, spec = many
    tr = model.trace(X)
    multi = [i for i, a in enumerate(tr["acquired"]) if len(a) >= 2]
    assert multi, "expected some rows to buy a multi-sensor subset"
    for i in multi[:10]:
        row = X.iloc[i]
        session = model.start()
        asked = []
        while (sensor := session.next_sensor()) is not None:
            assert session.next_sensor() == sensor  # asking again repeats it
            asked.append(sensor)
            session.observe(sensor, {c: row[c] for c in spec.groups[sensor]})
        assert tuple(asked) == tr["acquired"].iloc[i]
        assert session.predict() == tr["prediction"].iloc[i]
        assert session.cost == pytest.approx(tr["cost"].iloc[i])
        units = [d["sensors"] for d in session.decisions if d["action"] == "acquire"]
        assert sum(len(u) for u in units) == len(asked)


def test_refit_policies_reuses_subsets_and_bank(model, many):
    X, y, _ = many
    other = model.refit_policies(X, y, cost_scale=0.0)
    assert other.sensor_dag_.states == model.sensor_dag_.states
    assert other.bank_ is model.bank_
    assert other.subset_selection_ is model.subset_selection_
    cheap = model.evaluate(X, y)["avg_sensors"]
    assert other.evaluate(X, y)["avg_sensors"] >= cheap


def test_given_bank_from_same_subsets_is_accepted(model, many):
    X, y, _ = many
    again = clone(model).set_params(cost_scale=0.1).fit(X, y, bank=model.bank_)
    assert again.sensor_dag_.states == model.sensor_dag_.states
    fresh = clone(model).set_params(n_subsets=2)
    with pytest.raises(ValueError, match="sensor subsets"):
        fresh.fit(X, y, bank=model.bank_)


def test_fit_with_a_bank_reuses_its_subsets(model, many, monkeypatch):
    X, y, _ = many
    template = clone(model).set_params(cost_scale=0.1)
    bank = template.fit_bank(X, y)
    assert bank.subset_selection_.subsets == model.subset_selection_.subsets
    fresh = clone(template).fit(X, y)

    def no_selection(*args, **kwargs):
        raise AssertionError("the bank's subsets should be reused")

    monkeypatch.setattr("budgetdag_core.strategies._kinds.select_subsets", no_selection)
    reused = clone(template).fit(X, y, bank=bank)
    assert reused.subset_selection_ is bank.subset_selection_
    pd.testing.assert_frame_equal(reused.trace(X), fresh.trace(X))
    # Other selection settings select anew (and then the bank does not fit).
    with pytest.raises(AssertionError, match="should be reused"):
        clone(template).set_params(subset_reward="correct").fit(X, y, bank=bank)


def test_progress_reports_subsets_stage_first(many):
    X, y, spec = many
    stages = []
    BudgetDAGClassifier(
        spec, n_subsets=2, subset_budget=3, policy_degree=1, cv=3, random_state=0
    ).fit(X, y, progress=lambda stage, done, total: stages.append(stage))
    assert list(dict.fromkeys(stages)) == ["subsets", "bank", "policies", "cost scale"]


def test_persistence_keeps_the_subset_dag(model, many):
    X, _, _ = many
    loaded = loads_policy(dumps_policy(model))
    assert loaded.metadata_["task"] == "classification"
    pd.testing.assert_frame_equal(loaded.trace(X), model.trace(X))


def test_policy_feature_expansion_stays_bounded_on_wide_states(model):
    # 14 columns at degree 2 give C(16, 2) - 1 = 119 features; cap at 50 must
    # drop the widest nodes to degree 1 and keep every node within the cap
    # (or linear, the floor).
    capped = clone(model).set_params(policy_degree=2, max_policy_features=50)
    X, y = make_classification(
        n_samples=360, n_features=14, n_classes=3, n_informative=7, random_state=0
    )
    X = pd.DataFrame(X, columns=list(model.spec_.columns))
    capped.fit(X, y)
    for policy in capped.policies_:
        learner = policy.learner
        constant = getattr(learner, "constant_", None) is not None
        if learner is None or constant or isinstance(learner, ConstantAction):
            continue  # no feature map: one action for every row
        feats = policy.learner.features_
        width = feats.outer_.n_features_in_
        assert width <= 50 or feats.degree_ == 1
        if policy.n_features > 9:  # C(9 + 2, 2) - 1 = 65 > 50
            assert feats.degree_ == 1


def test_long_tables_lower_the_policy_feature_cap(model, many, monkeypatch):
    from budgetdag_core.estimator import _policy as policy

    assert policy.policy_feature_cap(1000, 10_000) == 1000
    assert policy.policy_feature_cap(1000, 104_000) == 2**25 // 104_000 == 322
    assert policy.policy_feature_cap(1000, 10**9) == 1
    X, y, _ = many
    # Pretend the table is long: 360 rows x 20 features fill the budget.
    monkeypatch.setattr(policy, "MAX_POLICY_VALUES", 360 * 20)
    capped = clone(model).set_params(policy_degree=2).fit(X, y)
    for p in capped.policies_:
        learner = p.learner
        constant = getattr(learner, "constant_", None) is not None
        if learner is None or constant or isinstance(learner, ConstantAction):
            continue  # no feature map: one action for every row
        # C(5 + 2, 2) - 1 = 20: degree 2 only up to 5 columns.
        assert learner.features_.degree_ == (2 if p.n_features <= 5 else 1)


def test_cli_trains_with_n_subsets(many, tmp_path, capsys):
    from budgetdag_core import load_policy
    from budgetdag_core.cli import main

    X, y, spec = many
    X.assign(target=y).to_csv(tmp_path / "train.csv", index=False)
    spec.to_json(tmp_path / "spec.json")
    args = ["train", str(tmp_path / "train.csv"), "--label", "target"]
    args += ["--sensors", str(tmp_path / "spec.json"), "--out", str(tmp_path / "m")]
    # 14 sensors: too many for a full DAG, so the CLI trains the library's
    # default (one sensor at a time), subsets only when asked for.
    full = [*args[:-2], "--out", str(tmp_path / "full.pkl"), "--cv", "3"]
    assert main([*full, "--policy-degree", "1"]) == 0
    default = load_policy(tmp_path / "full.pkl")
    assert default.n_subsets is None and default.strategy_ in STRATEGIES
    code = main([*args, "--n-subsets", "3", "--cv", "3", "--policy-degree", "1"])
    assert code == 0
    model = load_policy(tmp_path / "m")
    assert model.sensor_dag_.n_states <= 2**3
    assert len(model.subset_selection_.subsets) <= 3
    assert model.subset_reward == "soft"
    paper = [*args[:-1], str(tmp_path / "paper"), "--n-subsets", "3", "--cv", "3"]
    assert main([*paper, "--policy-degree", "1", "--subset-reward", "correct"]) == 0
    assert load_policy(tmp_path / "paper").subset_reward == "correct"
