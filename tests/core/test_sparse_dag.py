"""The sparse DAG (issue 30): the default beyond 12 sensors, and what every
fitted model promises (determinism, no peeking, round trips, sessions)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from budgetdag_core import (
    BudgetDAGClassifier,
    SensorSpec,
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
    path_of,
    tradeoff_curve,
)
from budgetdag_core.dag import SensorDAG
from budgetdag_core.estimator._inputs import GrowthStateInputs
from budgetdag_core.plotting import dag_figure
from budgetdag_core.strategies._growth import (
    MAX_SPARSE_STATES,
    RowTable,
    SparseSensorDAG,
    beam_states,
    nearest_rows,
    neighbour_pick_gain,
    oof_tables,
    pair_blocks,
    pick_gains,
    state_mask,
)

N_SENSORS = 16


def make_data(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """16 one-column sensors: s0 says which of s1, s2 carries the class."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        rng.normal(size=(n, N_SENSORS)), columns=[f"s{i}" for i in range(N_SENSORS)]
    )
    y = np.where(X.s0 > 0, X.s1 > 0, X.s2 > 0).astype(int)
    return X, y


SPEC = SensorSpec.per_column(
    [f"s{i}" for i in range(N_SENSORS)],
    cost={f"s{i}": 1.0 + i % 3 for i in range(N_SENSORS)},
)


def fit(n: int = 500, seed: int = 0, **params) -> BudgetDAGClassifier:
    X, y = make_data(n, seed)
    params = {"cost_scale": 0.02, "cv": 3, "random_state": 0} | params
    return BudgetDAGClassifier(SPEC, **params).fit(X, y)


@pytest.fixture(scope="module")
def model() -> BudgetDAGClassifier:
    return fit(dag="sparse")  # the grown DAG (``"auto"`` may keep the chain)


ANY_MODELS = {
    "sparse": {"dag": "sparse"},
    "chain": {"dag": "chain"},
    "routed": {"dag": "routed"},
    "auto": {},
    # Each any-subset bank kind ("auto" above: the kind kept on validation).
    "chain-boosting": {"dag": "chain", "bank_kind": "masked"},
    "chain-network": {"dag": "chain", "bank_kind": "masked_mlp"},
    "chain-logistic": {"dag": "chain", "bank_kind": "masked_logistic"},
}


@pytest.fixture(scope="module", params=list(ANY_MODELS))
def any_model(request) -> BudgetDAGClassifier:
    """A model of each many-sensor strategy (``"auto"``: the one kept) and
    of each any-subset bank kind."""
    return fit(**ANY_MODELS[request.param])


@pytest.fixture(scope="module")
def test_rows() -> pd.DataFrame:
    return make_data(300, 1)[0]


def test_auto_grows_a_sparse_dag_beyond_twelve_sensors(model):
    assert isinstance(model.sensor_dag_, SparseSensorDAG)
    assert 2 < model.sensor_dag_.n_states <= model.max_states
    assert model.subset_selection_ is None
    # Every edge adds one sensor.
    dag = model.sensor_dag_
    for k, kids in enumerate(dag.children):
        for sensor, child in kids:
            assert dag.states[child] == dag.states[k] | 1 << sensor


def test_twelve_sensors_keep_the_full_dag_where_its_work_fits():
    X, y = make_data(200, 0)
    spec = SensorSpec.per_column(list(X.columns[:12]))
    model = BudgetDAGClassifier(
        spec, cv=2, random_state=0, policy_learner="cost_regression"
    )
    # 4 096 states of policies on 200 rows is past the full DAG's time
    # budget (estimator._dag_choice): "auto" builds one-sensor additions.
    assert model.builds_sparse_dag(spec, len(X))
    # dag="full" keeps the full DAG, and so does "auto" on 7 sensors.
    assert not model.set_params(dag="full").builds_sparse_dag(spec, len(X))
    few = SensorSpec.per_column(list(X.columns[:7]))
    model.set_params(sensors=few, dag="auto").fit(X[few.columns], y)
    assert type(model.sensor_dag_) is SensorDAG


def test_sparse_and_subsets_are_exclusive():
    X, y = make_data(100, 0)
    with pytest.raises(ValueError, match="n_subsets=None"):
        BudgetDAGClassifier(SPEC, dag="sparse", n_subsets=4).fit(X, y)


def test_the_same_seed_gives_the_same_model(any_model, test_rows):
    model = any_model
    again = clone(model).fit(*make_data(500, 0))
    pd.testing.assert_frame_equal(model.trace(test_rows), again.trace(test_rows))
    assert again.sensor_dag_.states == model.sensor_dag_.states
    assert again.sensor_dag_.children == model.sensor_dag_.children
    assert again.strategy_ == model.strategy_


def test_unacquired_values_are_never_read(any_model, test_rows):
    model = any_model
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
    np.testing.assert_array_equal(
        model.predict_proba(spoiled), model.predict_proba(test_rows)
    )


def test_a_session_acquires_one_sensor_at_a_time_as_the_trace(any_model, test_rows):
    model = any_model
    trace = model.trace(test_rows.iloc[:25])
    for i, (_, row) in enumerate(test_rows.iloc[:25].iterrows()):
        session = model.start()
        while (sensor := session.next_sensor()) is not None:
            session.observe(sensor, {c: row[c] for c in SPEC.groups[sensor]})
        assert tuple(session.acquired) == trace["acquired"].iloc[i]
        assert session.predict() == trace["prediction"].iloc[i]
        assert path_of(model, row).acquired == tuple(session.acquired)


@pytest.mark.parametrize("slim", [True, False])
def test_pickle_and_skops_round_trips(any_model, test_rows, slim):
    model = any_model
    trace = model.trace(test_rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for loaded in (
            loads_policy(dumps_policy(model, slim=slim)),
            loads_policy_skops(dumps_policy_skops(model, slim=slim)),
        ):
            pd.testing.assert_frame_equal(loaded.trace(test_rows), trace)
            assert isinstance(loaded.sensor_dag_, SparseSensorDAG)
            assert loaded.strategy_ == model.strategy_
            assert loaded.strategy_validation_ == model.strategy_validation_
    # The model itself keeps what learning new policies needs.
    assert hasattr(model.bank_, "sparse_growth_")


def test_new_cost_scales_reuse_the_grown_bank(model):
    X, y = make_data(500, 0)
    cheaper = BudgetDAGClassifier(SPEC, cost_scale=0.2, cv=3, random_state=0)
    cheaper.fit(X, y, bank=model.bank_)
    assert cheaper.bank_ is model.bank_
    assert cheaper.evaluate(X, y)["avg_cost"] < model.evaluate(X, y)["avg_cost"]
    refit = model.refit_policies(X, y, 0.2)
    assert refit.bank_ is model.bank_
    pd.testing.assert_frame_equal(refit.trace(X), cheaper.trace(X))
    slim = loads_policy(dumps_policy(model))
    with pytest.raises(ValueError, match="refit"):
        BudgetDAGClassifier(SPEC, cost_scale=0.2, cv=3, random_state=0).fit(
            X, y, bank=slim.bank_
        )
    with pytest.raises(ValueError, match="refit"):
        tradeoff_curve(X, y, SPEC, n_points=3, bank=slim.bank_, cv=3, random_state=0)


def _unused(dag: SparseSensorDAG) -> int:
    """A sensor the root has no edge for."""
    return min(set(range(dag.n_sensors)) - {u for u, _ in dag.children[0]})


def _forged(model, edit) -> bytes:
    forged = pickle.loads(pickle.dumps(model))
    edit(forged.sensor_dag_)
    return dumps_policy(forged)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d.children[0].append((_unused(d), len(d.states) - 1)), "add its"),
        (lambda d: d.states.__setitem__(1, 1 << 40), "not a set of the sensors"),
        (lambda d: d.states.extend([0] * MAX_SPARSE_STATES), "states"),
        (lambda d: d.children[0].append((0, d.children[0][0][1])), "twice"),
        (lambda d: d.unit_masks.__setitem__(0, 3), "one unit per sensor"),
    ],
)
def test_a_forged_sparse_dag_is_refused_on_load(model, edit, match):
    with pytest.raises(ValueError, match=match):
        loads_policy(_forged(model, edit))


def test_the_dag_figure_draws_a_sparse_dag(model, test_rows):
    figure = dag_figure(model, test_rows.iloc[:50])
    assert len(figure.data) > 0


def test_tradeoff_curve_sweeps_one_grown_bank(model):
    X, y = make_data(500, 0)
    Xt, yt = make_data(300, 1)
    result = tradeoff_curve(
        X, y, SPEC, cost_scales=[0.005, 0.02, 0.2], X_test=Xt, y_test=yt,
        cv=3, random_state=0, dag="sparse",
    )  # fmt: skip
    # One strategy's DAG: the bank fit's one candidate, every point's bank.
    assert list(result.bank) == ["grown"]
    assert all(m.bank_ is result.bank["grown"] for m in result.models)
    assert isinstance(result.models[0].sensor_dag_, SparseSensorDAG)
    dag = result.frame.query("method == 'dag' and split == 'test'")
    assert dag["avg_cost"].is_monotonic_decreasing
    # The middle point is the module's model: the same bank, the same policies.
    pd.testing.assert_frame_equal(result.models[1].trace(Xt), model.trace(Xt))
    assert {"fixed", "cascade", "hull"} <= set(result.frame["method"])


def test_pick_gains_equal_neighbour_pick_gain_per_candidate():
    rng = np.random.default_rng(3)
    n, k, cand = 40, 15, np.array([1, 2, 4, 5, 7])
    gains = np.full((n, 8), np.nan)
    gains[:, cand] = rng.normal(size=(n, len(cand)))
    nb = np.stack([nearest_rows(rng.normal(size=(n, 3)), k) for _ in cand])
    allowed = cand[:, None] != cand[None, :]
    batched = pick_gains(nb, gains[:, cand], allowed)
    per_table = rng.normal(size=(len(cand), n, 3))  # one gain table each
    ahead = np.array([2, 5, 7])
    later = pick_gains(nb, per_table, cand[:, None] != ahead[None, :])
    for i, j in enumerate(cand):
        one = gains.copy()
        one[:, j] = np.nan
        assert batched[i] == neighbour_pick_gain(nb[i], one)
        full = np.full((n, 8), np.nan)
        full[:, ahead] = per_table[i]
        full[:, j] = np.nan
        assert later[i] == neighbour_pick_gain(nb[i], full)
    nobody = pick_gains(nb[:1], gains[:, cand], np.zeros((1, len(cand)), bool))
    assert nobody[0] == -np.inf


def test_each_row_goes_to_the_states_of_its_least_proposals():
    rng = np.random.default_rng(0)
    proposals = []
    for _ in range(6):  # (score, row, state), with repeats of (row, state)
        size = 30
        proposals.append(
            (
                rng.integers(-3, 1, size).astype(float),
                rng.integers(0, 12, size),
                rng.integers(0, 5, size),
            )
        )
    per_row: dict[int, list] = {}
    for score, row, state in proposals:
        for s_, r, c in zip(score, row, state, strict=True):
            per_row.setdefault(int(r), []).append((float(s_), int(c)))
    expected: dict[int, set] = {}
    for r, entries in per_row.items():
        for _, c in sorted(entries)[:2]:
            expected.setdefault(c, set()).add(r)
    got = beam_states(proposals, 2)
    assert {c: set(rows.tolist()) for c, rows in got.items()} == expected
    assert all((np.diff(rows) > 0).all() for rows in got.values())
    assert beam_states([], 2) == {}


def test_a_tree_bank_gives_each_state_alike_asked_alone_or_in_blocks():
    from budgetdag_core.bank import SparseMaskedBank

    X, y = make_data(300, 0)
    Xv, columns = X.to_numpy(float), [np.array([i]) for i in range(N_SENSORS)]
    bank = SparseMaskedBank(cv=3, random_state=0).fit_models(Xv, y, columns, 2)
    assert bank.exact_in_blocks  # LightGBM fold models
    rows = np.arange(0, 300, 2)
    subsets = np.random.default_rng(1).random((9, N_SENSORS)) < 0.4
    subsets[4] = False  # the empty set: the prior
    tables = oof_tables(bank, Xv, rows, subsets)
    for k, table in enumerate(tables):
        alone = (
            np.tile(bank.prior_, (len(rows), 1))
            if not subsets[k].any()
            else bank.oof_at(Xv, rows, subsets[k : k + 1])[:, 0]
        )
        np.testing.assert_array_equal(table.get(rows), alone)


#: Batches of distinct row numbers added to a RowTable, and rows asked of it.
ROW_BATCHES = st.lists(
    st.lists(st.integers(0, 60), min_size=0, max_size=12, unique=True),
    min_size=1,
    max_size=6,
)
ASKED_ROWS = st.lists(st.integers(0, 80), min_size=0, max_size=20)


@settings(max_examples=60, deadline=None)
@given(batches=ROW_BATCHES, asked=ASKED_ROWS)
def test_a_row_table_keeps_the_first_values_added_per_row(batches, asked):
    table, known = RowTable(2), {}
    for b, rows in enumerate(batches):
        values = np.array([[r, b] for r in rows], dtype=float).reshape(-1, 2)
        table.add(np.array(rows, dtype=np.intp), values)
        for r in rows:
            known.setdefault(r, [r, b])
    asked = np.array(asked, dtype=np.intp)
    absent = sorted({int(r) for r in asked if int(r) not in known})
    assert table.missing(asked).tolist() == absent
    present = np.array(sorted(known), dtype=np.intp)
    assert table.rows.tolist() == present.tolist()
    assert table.get(present).tolist() == [known[int(r)] for r in present]
    assert table.values.tolist() == [known[int(r)] for r in present]
    again = pickle.loads(pickle.dumps(table))  # the index is rebuilt
    assert again.missing(asked).tolist() == absent
    assert np.array_equal(again.get(present), table.get(present))
    assert again.rows.tolist() == present.tolist()
    # New values (a bank's temperatures) replace the old, in ``rows`` order,
    # and drop what was derived from the old.
    table.derived["twice"] = RowTable(2)
    table.values = 2 * table.values
    doubled = [[2 * v for v in known[int(r)]] for r in present]
    assert table.get(present).tolist() == doubled
    assert table.derived == {}


@settings(max_examples=60, deadline=None)
@given(batches=ROW_BATCHES, asked=ASKED_ROWS)
def test_a_row_table_lookup_says_what_get_and_missing_say(batches, asked):
    """lookup: the values where every row is known, else the rows missing
    and whether they are the rows asked (in order); add: whether every row
    was new and its values are held as given."""
    table, known = RowTable(2), {}
    for b, rows in enumerate(batches):
        values = np.array([[r, b] for r in rows], dtype=float).reshape(-1, 2)
        all_new = bool(rows) and all(r not in known for r in rows)
        assert table.add(np.array(rows, dtype=np.intp), values) is all_new
        for r in rows:
            known.setdefault(r, [r, b])
    asked = np.array(asked, dtype=np.intp)
    absent = sorted({int(r) for r in asked if int(r) not in known})
    values, missing, exact = table.lookup(asked)
    if absent:
        assert values is None
        assert missing.tolist() == absent == table.missing(asked).tolist()
        assert exact is (asked.tolist() == absent)
    else:
        assert values.tolist() == [known[int(r)] for r in asked]
        assert not exact
    # Values not held as given (another dtype, a strided view): not "as given".
    fresh = np.array([1000, 1001], dtype=np.intp)
    assert not table.add(fresh[:1], np.ones((1, 2), dtype=np.float32))
    assert not table.add(fresh[1:], np.ones((1, 4))[:, ::2])
    assert table.get(fresh).tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_a_state_mask_holds_the_states_sensors_and_is_read_only():
    mask = state_mask(0b1010, 5)
    assert mask.tolist() == [[False, True, False, True, False]]
    assert state_mask(0b1010, 5) is mask  # kept: a walk asks it again and again
    with pytest.raises(ValueError, match="read-only"):
        mask[0, 0] = True


def test_a_walk_keeps_each_rows_policy_inputs_beside_its_probabilities(model):
    growth = model.bank_.sparse_growth_
    state_inputs = GrowthStateInputs(model.inputs_, growth.X)
    kept = 0
    for k, table in enumerate(growth.proba):
        inputs = table.derived.get(state_inputs.cache_key)
        if inputs is None:
            continue
        rows = inputs.rows
        assert set(rows.tolist()) <= set(table.rows.tolist())
        # What a new call gives, whatever batch the rows were kept in.
        np.testing.assert_array_equal(
            inputs.get(rows), state_inputs(k, rows, growth.proba_at(k, rows))
        )
        kept += 1
    assert kept > growth.dag.n_states // 2
    # Other values are other inputs: another key.
    other = GrowthStateInputs(model.inputs_, growth.X + 1.0)
    assert other.cache_key != state_inputs.cache_key


@pytest.mark.parametrize("kind", ["masked", "masked_mlp", "masked_logistic"])
def test_pairs_give_each_row_its_subsets_out_of_fold_outputs(kind):
    from budgetdag_core.bank import make_sparse_bank

    X, y = make_data(300, 0)
    Xv, columns = X.to_numpy(float), [np.array([i]) for i in range(N_SENSORS)]
    bank = make_sparse_bank(kind, cv=3, random_state=0)
    bank.fit_models(Xv, y, columns, 2)
    rng = np.random.default_rng(2)
    subsets = rng.random((6, N_SENSORS)) < 0.4
    subsets[2] = False  # the empty set: each fold's prior, as oof_at gives it
    subsets[4] = True  # every sensor
    rows = rng.integers(0, 300, size=200)
    which = rng.integers(0, len(subsets), size=200)
    bank.temperatures_ = np.array([1.0, 1.3, 0.8, 1.0, 2.0, 0.7])  # one per state
    got = bank.oof_pairs(Xv, rows, subsets, which, states=np.arange(6))
    for s in range(len(subsets)):
        at = np.flatnonzero(which == s)
        alone = bank.oof_at(Xv, rows[at], subsets[s : s + 1], s)[:, 0]
        if kind == "masked":  # trees: the same sums, exactly
            np.testing.assert_array_equal(got[at], alone)
        else:  # float32 products, summed in another order
            np.testing.assert_allclose(got[at], alone, rtol=1e-4, atol=1e-6)


def test_pairs_blend_the_dedicated_model_at_the_all_sensor_subset():
    from budgetdag_core.bank import make_sparse_bank

    X, y = make_data(300, 0)
    Xv, columns = X.to_numpy(float), [np.array([i]) for i in range(N_SENSORS)]
    bank = make_sparse_bank("auto", cv=3, random_state=0)
    bank.fit_models(Xv, y, columns, 2)
    bank.full_weight_ = 0.5  # blended whatever the validation chose
    subsets = np.zeros((2, N_SENSORS), dtype=bool)
    subsets[0, :3] = True
    subsets[1] = True
    rows = np.arange(0, 300, 3)
    which = np.arange(len(rows)) % 2
    got = bank.oof_pairs(Xv, rows, subsets, which)
    for s in range(2):
        at = np.flatnonzero(which == s)
        alone = bank.oof_at(Xv, rows[at], subsets[s : s + 1])[:, 0]
        np.testing.assert_allclose(got[at], alone, rtol=1e-4, atol=1e-6)


def test_a_rollout_gives_each_row_the_parts_it_gets_alone(model):
    """The breadth-first rollout (all rows, every state of a size at once)
    gives each row the loss and cost it gets rolled out by itself (the
    fixture's bank is LightGBM's: the same outputs in any batch)."""
    growth = model.bank_.sparse_growth_.replica()
    X, y = make_data(500, 0)
    state_inputs = GrowthStateInputs(model.inputs_, growth.X)
    stop_loss = model._sparse_stop_loss(model.bank_, y)
    costs = SPEC.cost_vector

    def walk():
        w = growth.walk(state_inputs, stop_loss, costs, model.cost_scale_)
        w.policies = list(model.policies_)
        return w

    rows = np.arange(0, 500, 7)
    together = walk().parts(0, rows)
    for i in range(20):
        alone = walk().parts(0, rows[i : i + 1])
        np.testing.assert_array_equal(alone[0], together[i])
    # Rows asked in any order and with repeats: the same parts.
    shuffled = np.random.default_rng(0).permutation(np.r_[rows, rows[:5]])
    np.testing.assert_array_equal(
        walk().parts(0, shuffled), together[np.searchsorted(rows, shuffled)]
    )
    assert (together[:, 1] > 0).any()  # some rows acquire sensors


def test_pair_blocks_bound_each_call_and_give_each_part_its_values(monkeypatch):
    from budgetdag_core.strategies import _growth

    monkeypatch.setattr(_growth, "TABLE_PAIRS", 10)
    rng = np.random.default_rng(0)
    parts = [(k, rng.integers(0, 100, size=n)) for k, n in enumerate([4, 7, 25, 0, 3])]
    calls = []

    def ask(keys, rows, which):
        calls.append((list(keys), len(rows)))
        return np.column_stack([rows, np.asarray(keys)[which]])

    got = list(pair_blocks(parts, ask))
    assert [key for key, _, _ in got] == [0, 1, 2, 3, 4]
    for (key, rows), (_, same, values) in zip(parts, got, strict=True):
        assert same is rows
        expected = np.column_stack([rows, [key] * len(rows)])
        np.testing.assert_array_equal(values, expected)
    # A call stops once it holds TABLE_PAIRS pairs; a larger part goes alone.
    assert calls == [([0, 1], 11), ([2], 25), ([3, 4], 3)]
