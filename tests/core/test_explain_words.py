"""The one wording of states and actions: state_label, subsets_in, action_names."""

from __future__ import annotations

import pytest

from budgetdag_core import BudgetDAGClassifier, toy_dataset
from budgetdag_core.explain import action_names, state_label, subsets_in


@pytest.fixture(scope="module")
def demo():
    return toy_dataset(120, 10, random_state=2)


@pytest.fixture(scope="module")
def full(demo):
    return BudgetDAGClassifier(demo.spec, cv=2).fit(demo.X_train, demo.y_train)


@pytest.fixture(scope="module")
def over_subsets(demo):
    model = BudgetDAGClassifier(demo.spec, cv=2, n_subsets=2, random_state=0)
    return model.fit(demo.X_train, demo.y_train)


def test_a_full_dag_names_states_and_actions_by_sensors(full):
    last = full.sensor_dag_.n_states - 1
    assert state_label(full, 0) == "start (no sensors)"
    assert state_label(full, last) == " + ".join(full.sensor_dag_.state_names(last))
    assert subsets_in(full, last) == []
    long, short = action_names(full, 0), action_names(full, 0, short=True)
    assert long[0] == short[0] == "stop"
    assert [s.removeprefix("buy ") for s in short[1:]] == [
        s.removeprefix("acquire ") for s in long[1:]
    ]


def test_a_dag_over_subsets_buys_subsets(over_subsets):
    dag = over_subsets.sensor_dag_
    chosen = over_subsets.subset_selection_.subsets
    for k in range(dag.n_states):
        held = set(dag.state_names(k))
        assert all(set(chosen[j - 1]) <= held for j in subsets_in(over_subsets, k))
    short = action_names(over_subsets, 0, short=True)
    units = [unit for unit, _ in over_subsets.policies_[0].children]
    assert short == ["stop"] + [f"buy S{u + 1}" for u in units]


@pytest.mark.parametrize("bad", [-1, 99, 1.0, "0", True, float("nan")])
def test_a_state_that_is_not_an_index_is_refused_by_name(full, bad):
    for words in (state_label, subsets_in, action_names):
        with pytest.raises(ValueError, match="state must be a state index in 0..7"):
            words(full, bad)
