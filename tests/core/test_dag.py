from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetdag_core import SensorDAG
from budgetdag_core.graph_reduce import fit_layers
from budgetdag_core.strategies import SparseSensorDAG


@pytest.mark.parametrize("m", [1, 2, 3, 4, 6])
def test_full_dag_is_the_subset_lattice(m: int) -> None:
    dag = SensorDAG([f"s{i}" for i in range(m)])
    assert dag.n_states == 2**m
    assert dag.states[0] == 0
    g = dag.to_networkx()
    assert nx.is_directed_acyclic_graph(g)
    assert g.number_of_edges() == m * 2 ** (m - 1)
    for k in range(dag.n_states):
        # children are one-sensor supersets, and come later in the order
        for _, c in dag.children[k]:
            assert c > k
            assert len(dag.added_sensors(k, c)) == 1
        assert len(dag.children[k]) == m - len(dag.sensors_in(k))


def test_layers_group_by_size() -> None:
    dag = SensorDAG(["a", "b", "c"])
    assert [len(layer) for layer in dag.layers()] == [1, 3, 3, 1]


def test_networkx_attributes() -> None:
    g = SensorDAG(["a", "b"]).to_networkx()
    assert g.nodes[0]["sensors"] == ()
    assert g.nodes[3]["sensors"] == ("a", "b")
    assert g.edges[1, 3]["added"] == ("b",)


def test_units_make_states_distinct_unions() -> None:
    # units {0,1}, {1,2}, {3}: unions -> {}, 01, 12, 3, 012, 013, 123, 0123
    dag = SensorDAG(["a", "b", "c", "d"], units=[[0, 1], [1, 2], [3]])
    assert dag.n_states == 8
    # from {0,1}, unit {1,2} adds only sensor 2
    k01 = dag.index[0b0011]
    k012 = dag.index[0b0111]
    assert (1, k012) in dag.children[k01]
    assert dag.added_sensors(k01, k012) == [2]


def test_membership_matches_states() -> None:
    dag = SensorDAG(["a", "b", "c"])
    mat = dag.membership()
    for k in range(dag.n_states):
        assert list(mat[k].nonzero()[0]) == dag.sensors_in(k)


@settings(max_examples=50, deadline=None)
@given(
    n_sensors=st.integers(1, 130),
    order=st.randoms(use_true_random=False),
    picks=st.lists(st.integers(0, 200), max_size=12),
)
def test_membership_of_wide_states_and_of_some(n_sensors, order, picks) -> None:
    """A chain over many sensors (bit masks past 64 bits): every row, and
    rows asked for by state number (repeats, any order), match the states."""
    sensors = list(range(n_sensors))
    order.shuffle(sensors)
    masks = [0]
    for m in sensors:
        masks.append(masks[-1] | 1 << m)
    children = [[(m, k + 1)] for k, m in enumerate(sensors)] + [[]]
    dag = SparseSensorDAG([f"s{i}" for i in range(n_sensors)], masks, children)
    mat = dag.membership()
    assert mat.shape == (n_sensors + 1, n_sensors) and mat.dtype == bool
    for k in range(dag.n_states):
        assert list(mat[k].nonzero()[0]) == dag.sensors_in(k)
    some = [k % dag.n_states for k in picks]
    np.testing.assert_array_equal(
        dag.membership(some), mat[some].reshape(-1, n_sensors)
    )
    with pytest.raises(ValueError):
        dag.membership([dag.n_states])


@pytest.mark.parametrize(
    "units",
    [None, [[0, 1], [1, 2], [3]], [[0], [1, 2], [0, 1, 2], [3], [2, 3]]],
)
def test_fit_layers_put_every_child_in_an_earlier_layer(units) -> None:
    dag = SensorDAG(["a", "b", "c", "d"], units=units)
    layers = fit_layers(dag)
    where = {k: i for i, layer in enumerate(layers) for k in layer}
    assert sorted(where) == list(range(dag.n_states))  # each state exactly once
    for k in range(dag.n_states):
        kids = [c for _, c in dag.children[k]]
        assert all(where[c] < where[k] for c in kids)
        # and a state waits no longer than its deepest child requires
        assert where[k] == (1 + max(where[c] for c in kids) if kids else 0)
    assert layers[-1] == [0]  # the root is fitted last


def test_fit_layers_are_fewer_than_state_sizes_over_unions() -> None:
    # units {a,b} and {c,d,e}: sizes 0, 2, 3, 5 but heights 0, 1, 2
    dag = SensorDAG(list("abcde"), units=[[0, 1], [2, 3, 4]])
    assert len(dag.layers()) == 4
    assert [sorted(layer) for layer in fit_layers(dag)] == [
        [dag.index[0b11111]],
        sorted([dag.index[0b00011], dag.index[0b11100]]),
        [0],
    ]
