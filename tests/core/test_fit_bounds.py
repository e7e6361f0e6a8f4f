"""Every many-sensor fit is bounded (issue 58, item 4): the DAG growth ends
for any costs (zero, equal, tiny) within its stated maxima of states, a free
sensor does not multiply a fit's work, and too many sensors are refused
before any work."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor, SensorSpec
from budgetdag_core.strategies._choice import chain_growth, cross_entropy
from budgetdag_core.strategies._growth import (
    MAX_SPARSE_STATES,
    GrowthSettings,
    grow_sparse_dag,
)
from budgetdag_core.strategies._routed import routed_growth
from budgetdag_core.validation import MAX_SENSORS, check_sensor_count


class LogitBank:
    """A stand-in for the any-mask bank, cheap and exact: the probability
    of class 1 at a sensor set is the logistic of the set's weighted values.
    Sensors of weight 0 say nothing: with cost 0 their gain per unit cost
    is 0 / 0, the case that once left the growth adding a state to itself."""

    def __init__(self, weights: np.ndarray) -> None:
        self.weights = np.asarray(weights, dtype=float)
        self.prior_ = np.array([0.5, 0.5])

    def oof_at(self, X, rows, masks, *_):
        masks = np.atleast_2d(np.asarray(masks, dtype=bool))
        z = (X[rows][:, None, :] * (masks * self.weights)[None]).sum(axis=2)
        p1 = 1.0 / (1.0 + np.exp(-z))
        return np.stack([1.0 - p1, p1], axis=-1)


def problem(n_sensors: int, n_rows: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_sensors))
    weights = np.where(rng.random(n_sensors) < 0.4, 0.0, rng.normal(size=n_sensors))
    y = (X @ weights + rng.normal(size=n_rows) > 0).astype(int)
    return X, y, LogitBank(weights)


def states_per_size(dag) -> np.ndarray:
    return np.bincount([m.bit_count() for m in dag.states])


#: Costs a user may give: free, tiny (1e-300, and below float64's normal
#: range), equal, and ordinary positive ones.
COSTS = st.one_of(
    st.sampled_from([0.0, 1e-300, 5e-324, 1.0]),
    st.floats(min_value=1e-3, max_value=1e3),
)


def grow(bank, X, costs, s: GrowthSettings, seed: int = 0):
    names = [f"s{j}" for j in range(X.shape[1])]
    cols = [np.array([j]) for j in range(X.shape[1])]
    growth = grow_sparse_dag(bank, X, names, cols, costs, s, random_state=seed)
    growth.dag.check_integrity("grown", names)  # every edge adds its sensor
    return growth


@pytest.mark.parametrize("costs", [np.zeros(8), np.r_[np.ones(7), 0.0]])
def test_free_sensors_that_gain_nothing_end_the_growth(costs):
    """Past s0, no sensor gains: free ones gained 0 / 0 = NaN per unit cost,
    every row then "favoured" sensor 0, held already, and the state was
    made its own child, round after round (issue 58: 14 minutes and on)."""
    X, _, _ = problem(8, 100, 0)
    bank = LogitBank(np.r_[3.0, np.zeros(7)])
    growth = grow(bank, X, costs, GrowthSettings(min_rows=10))
    assert growth.dag.n_states <= GrowthSettings().most_states(8)[1]
    # s0, free or not, is the one that helps: it comes first (0 / 0 = NaN
    # gains once outranked it, as NumPy's argmax takes NaN for the largest).
    assert 0 in [sensor for sensor, _ in growth.dag.children[0]]


@settings(max_examples=20, deadline=None)
@given(
    n_sensors=st.integers(3, 12),
    costs=st.lists(COSTS, min_size=12, max_size=12),
    max_states=st.integers(2, 60),
    seed=st.integers(0, 3),
)
def test_growth_ends_within_its_stated_maxima_for_any_costs(
    n_sensors, costs, max_states, seed
):
    X, _, bank = problem(n_sensors, 80, seed)
    s = GrowthSettings(max_states=max_states, min_rows=10)
    growth = grow(bank, X, np.array(costs[:n_sensors]), s, seed)
    per_size, total = s.most_states(n_sensors)
    assert growth.dag.n_states <= total
    assert states_per_size(growth.dag).max() <= per_size


@pytest.fixture(scope="module")
def twenty():
    """20 sensors, 8 of them saying nothing, and the unit-cost growth."""
    X, _, bank = problem(20, 150, 0)
    return X, bank, grow(bank, X, np.ones(20), GrowthSettings(max_states=300))


@pytest.mark.parametrize("costs", ["one free", "all free", "all tiny"])
def test_free_sensors_grow_no_more_states_than_unit_costs(twenty, costs):
    """Ranked by gain per unit cost, a free sensor once ranked NaN or +inf;
    now it comes first if it helps, and sensors all free (or all tiny) rank
    as equal ones: the growth does the unit-cost growth's work (within 2x)."""
    X, bank, unit = twenty
    given_costs = {
        "one free": np.r_[np.ones(5), 0.0, np.ones(14)],  # s5 says nothing
        "all free": np.zeros(20),
        "all tiny": np.full(20, 1e-300),
    }[costs]
    s = GrowthSettings(max_states=300)
    free = grow(bank, X, given_costs, s)
    assert free.dag.n_states <= 2 * unit.dag.n_states
    assert free.dag.n_states <= s.most_states(20)[1]
    if costs != "one free":  # equal costs, whatever their size: the same DAG
        assert free.dag.states == unit.dag.states


def test_the_chain_and_routed_orders_take_every_sensor_once_when_free():
    X, y, bank = problem(14, 200, 1)
    names = [f"s{j}" for j in range(14)]
    cols = [np.array([j]) for j in range(14)]
    for costs in (np.zeros(14), np.r_[0.0, np.ones(13)], np.full(14, 1e-300)):
        chain = chain_growth(bank, X, y, names, costs, row_loss=cross_entropy(y))
        assert chain.dag.n_states == 15
        chain.dag.check_integrity("chain", names)
        routed = routed_growth(
            bank, X, y, names, cols, costs, row_loss=cross_entropy(y)
        )
        if routed is not None:  # None: no sensor's value says where to look
            routed.dag.check_integrity("routed", names)
            assert routed.dag.n_states <= MAX_SPARSE_STATES


def test_most_states_bounds_the_last_state_s_children_too():
    s = GrowthSettings(max_states=MAX_SPARSE_STATES)
    assert s.most_states(1000)[1] == MAX_SPARSE_STATES
    assert GrowthSettings(max_states=10, max_width=None).most_states(20) == (14, 14)


def small_table(n_rows: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(20)]
    X = pd.DataFrame(rng.normal(size=(n_rows, 20)), columns=names)
    y = (X.s0 + X.s1 - X.s2 + rng.normal(size=n_rows) > 0).astype(int).to_numpy()
    return X, y


def test_zero_cost_fits_do_the_unit_cost_fit_s_work_within_2x():
    """The acceptance's fits (one sensor of cost 0 among 20, and all 20 at
    0) end, growing at most twice the unit-cost fit's states and fitting at
    most twice its node policies (timings: benchmarks/bench_fit_bounds.py)."""
    X, y = small_table(100)
    cols = list(X.columns)
    work = {}
    for name, cost in {
        "unit": dict.fromkeys(cols, 1.0),
        "one free": {**dict.fromkeys(cols, 1.0), "s3": 0.0},
        "all free": dict.fromkeys(cols, 0.0),
    }.items():
        spec = SensorSpec({c: [c] for c in cols}, cost)
        model = BudgetDAGClassifier(
            spec, dag="sparse", bank_kind="masked_logistic", cv=2,
            max_states=200, random_state=0,
        ).fit(X, y)  # fmt: skip
        fitted = sum(p.learner is not None for p in model.policies_)
        work[name] = (model.sensor_dag_.n_states, fitted)
    for name in ("one free", "all free"):
        assert work[name][0] <= 2 * work["unit"][0], work
        assert work[name][1] <= 2 * work["unit"][1], work


def test_too_many_sensors_are_refused_before_any_work():
    n = MAX_SENSORS + 1
    X = pd.DataFrame(np.zeros((3, n)), columns=[f"c{i}" for i in range(n)])
    y = np.array([0, 1, 0])
    match = f"{n} sensors.*at most {MAX_SENSORS}"
    with pytest.raises(ValueError, match=match):
        BudgetDAGClassifier().fit(X, y)  # 3 rows: no other check came first
    with pytest.raises(ValueError, match=match):
        BudgetDAGRegressor(SensorSpec.per_column(list(X.columns))).fit(X, [0.0, 1, 2])
    with pytest.raises(ValueError, match=match):
        BudgetDAGClassifier(n_subsets=4).check_fit_data(X, y)


@pytest.mark.parametrize("n", [1, 13, MAX_SENSORS])
def test_up_to_max_sensors_pass_the_check(n):
    check_sensor_count(n)


def test_the_1000_sensors_of_issue_58_are_refused():
    assert MAX_SENSORS < 1000
    with pytest.raises(ValueError, match="1000 sensors"):
        check_sensor_count(1000)
