"""Many-sensor DAG strategies: the cascade order as a chain, and ``dag="auto"``
keeping the strategy that does better on validation rows."""

from __future__ import annotations

import contextlib
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

from budgetdag_core import (
    BudgetDAGClassifier,
    SensorSpec,
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
    tradeoff_curve,
)
from budgetdag_core.strategies import _candidates
from budgetdag_core.strategies._candidates import (
    StrategyBanks,
    strategy_key,
    strategy_name,
)
from budgetdag_core.strategies._choice import (
    AUTO_STRATEGIES,
    SIMPLEST_FIRST,
    STRATEGIES,
    VALIDATION_FOLDS,
    VALIDATION_SHARE,
    StrategyChoice,
    chain_growth,
    chain_order,
    choose_strategy,
    keep_within_one_se,
    tail_length,
    validation_folds,
)
from budgetdag_core.strategies._kinds import most_states
from budgetdag_core.strategies._routed import (
    ROUTE_MIN_SE,
    ROUTE_TAIL_MIN_ROWS,
    class_halves,
    held_out_pick_gain,
    route_groupings,
    route_groups,
    routed_growth,
    routing_scores,
    tree_stands_clear,
)

from .test_sparse_dag import SPEC, fit, make_data


def independent_data(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """16 sensors, the class a noisy sum of the first four (nothing to route)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 16)), columns=[f"s{i}" for i in range(16)])
    score = X[["s0", "s1", "s2", "s3"]].to_numpy() @ np.array([2.0, 1.0, 0.5, 0.25])
    y = (score + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return X, y


def test_the_chain_holds_every_sensor_in_one_order():
    model = fit(dag="chain")
    dag = model.sensor_dag_
    assert model.strategy_ == "chain" and model.strategy_choice_.scores == {}
    # One strategy built: its choice still reads as a one-row table.
    table = model.strategy_choice_.table()
    assert list(table["strategy"]) == ["chain"] and table["chosen"].all()
    assert dag.n_states == SPEC.n_sensors + 1
    for k in range(dag.n_states - 1):
        ((sensor, child),) = dag.children[k]
        assert child == k + 1 and dag.states[child] == dag.states[k] | 1 << sensor
    assert dag.children[-1] == []
    order = chain_order(dag)
    assert sorted(order) == list(range(SPEC.n_sensors))
    assert [dag.states[k + 1] ^ dag.states[k] for k in range(len(order))] == [
        1 << j for j in order
    ]
    growth = model.bank_.sparse_growth_
    assert all(len(rows) == len(growth.flow[0]) for rows in growth.flow)


def test_the_chain_buys_the_informative_sensors_first():
    X, y = independent_data(600, 0)
    spec = SensorSpec.per_column(list(X.columns))
    model = BudgetDAGClassifier(spec, dag="chain", cv=3, random_state=0).fit(X, y)
    first = {model.spec_.names[u] for u, _ in model.sensor_dag_.children[0]}
    second = {model.spec_.names[u] for u, _ in model.sensor_dag_.children[1]}
    assert first | second <= {"s0", "s1", "s2", "s3"}


def test_auto_keeps_a_routing_dag_where_rows_need_different_sensors():
    # s0 says which of s1, s2 carries the class: the chain must buy all three.
    model = fit()
    assert model.strategy_ == "routed"
    table = model.strategy_choice_.table()
    assert set(table["strategy"]) == set(AUTO_STRATEGIES)
    kept = table[table["chosen"]].iloc[0]
    assert kept["loss"] - table["loss"].min() <= kept["excess_se"] + 1e-12
    chain = table[table["strategy"] == "chain"].iloc[0]
    assert chain["loss"] - table["loss"].min() > chain["excess_se"]
    X, y = make_data(2000, 5)
    chain = fit(dag="chain").evaluate(X, y)
    assert model.evaluate(X, y)["avg_loss"] < chain["avg_loss"]


def test_auto_keeps_the_strategy_of_least_held_out_loss():
    X, y = make_data(300, 1)  # a routing sensor: both strategies are built
    spec = SPEC
    for scale in (0.002, 0.05):
        model = BudgetDAGClassifier(spec, cost_scale=scale, cv=3, random_state=0).fit(
            X, y
        )
        choice = model.strategy_choice_
        assert choice.strategy == model.strategy_
        losses = {name: choice.scores[name][0]["loss"] for name in choice.scores}
        excess_se = {n: choice.scores[n][0]["excess_se"] for n in choice.scores}
        # Kept: the simplest within one standard error of the least loss.
        kept = model.strategy_
        assert losses[kept] - min(losses.values()) <= excess_se[kept] + 1e-12
        built = [name for name in SIMPLEST_FIRST if name in losses]
        for simpler in built[: built.index(kept)]:
            assert losses[simpler] - min(losses.values()) > excess_se[simpler]
        assert model.strategy_validation_ == choice.to_dict()


def test_a_close_call_keeps_the_simpler_strategy():
    """Per-row held-out losses: a 0.01 edge on 200 noisy rows is within one
    standard error (the chain is kept), a 0.2 edge is not."""
    rng = np.random.default_rng(0)
    base = rng.random(200)
    noise = rng.normal(0, 0.3, 200)
    noise -= noise.mean()  # the edge alone moves the mean
    for edge, kept in ((0.01, "chain"), (0.2, "grown")):
        noisy = base - edge + noise
        per_row = {"chain": [base], "grown": [noisy]}
        choice = StrategyChoice("chain", [0.1], {
            name: [{"loss": float(v[0].mean())}] for name, v in per_row.items()
        })  # fmt: skip
        assert keep_within_one_se(["chain", "grown"], per_row, choice) == kept
        assert choice.scores[kept][0]["excess_se"] >= 0.0
    assert choice.scores["grown"][0]["excess_se"] == 0.0  # the least loss


@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.integers(2, 30), min_size=1, max_size=4),
    seed=st.integers(0, 2**31 - 1),
)
def test_validation_folds_hold_out_every_row_once(counts, seed):
    y = np.repeat(np.arange(len(counts)), counts)
    folds = list(validation_folds(y, seed))
    held0 = int(np.ceil(VALIDATION_SHARE * len(y)))
    # The first split, then as many more parts as the other rows fill.
    assert len(folds) == 1 + min(VALIDATION_FOLDS - 1, len(y) - held0)
    held = np.concatenate([val for _, val in folds])
    assert np.array_equal(np.sort(held), np.arange(len(y)))  # each row once
    for fit_rows, val in folds:
        assert np.array_equal(np.union1d(fit_rows, val), np.arange(len(y)))
        assert not np.intersect1d(fit_rows, val).size
    # The first split is the one a clear call is judged on alone (classes as
    # strata where both sides can hold every class).
    assert len(folds[0][1]) == held0
    if min(held0, len(y) - held0) >= len(counts):
        first = StratifiedShuffleSplit(1, test_size=VALIDATION_SHARE, random_state=seed)
        _, val0 = next(first.split(np.zeros((len(y), 1)), y))
        assert np.array_equal(folds[0][1], np.sort(val0))
        # The later parts are stratified: a class's rows differ by one at most.
        later = [np.bincount(y[v], minlength=len(counts)) for _, v in folds[1:]]
        assert (np.ptp(later, axis=0) <= 1).all()


def test_validation_folds_of_a_long_table_hold_out_a_stratified_draw(monkeypatch):
    """Beyond CHOICE_MAX_ROWS rows, the choice's parts are those of a seeded
    stratified draw of that many rows (each drawn row held out once, the
    others never used), the same for the same seed."""
    from budgetdag_core.strategies import _choice

    monkeypatch.setattr(_choice, "CHOICE_MAX_ROWS", 200)
    y = np.repeat([0, 1, 2], [700, 280, 20])
    folds = list(validation_folds(y, 3))
    drawn = np.union1d(folds[0][0], folds[0][1])
    assert len(drawn) == 200 and len(folds) == VALIDATION_FOLDS
    held = np.concatenate([val for _, val in folds])
    assert np.array_equal(np.sort(held), drawn)  # each drawn row once
    for fit_rows, val in folds:
        assert np.array_equal(np.union1d(fit_rows, val), drawn)
        assert np.all(np.diff(fit_rows) > 0) and np.all(np.diff(val) > 0)
    # Stratified: the classes' shares as in y (700 / 280 / 20 of 1 000).
    assert np.bincount(y[drawn]).tolist() == [140, 56, 4]
    again = list(validation_folds(y, 3))
    assert all(np.array_equal(a, b) for f, g in zip(folds, again) for a, b in zip(f, g))
    assert not np.array_equal(drawn, np.union1d(*next(validation_folds(y, 4))))


def test_validation_folds_just_beyond_the_row_cap_draw_without_failing(monkeypatch):
    """A table a few rows longer than CHOICE_MAX_ROWS leaves too few rows
    out of the draw to hold every class: the draw is then at random (a
    stratified one raised), still each drawn row held out once."""
    from budgetdag_core.strategies import _choice

    monkeypatch.setattr(_choice, "CHOICE_MAX_ROWS", 200)
    y = np.arange(201) % 3
    folds = list(validation_folds(y, 0))
    drawn = np.union1d(folds[0][0], folds[0][1])
    assert len(drawn) == 200 and len(folds) == VALIDATION_FOLDS
    held = np.concatenate([val for _, val in folds])
    assert np.array_equal(np.sort(held), drawn)


#: Rows of :func:`chosen_on_row_losses`'s two-class table.
ROW_LOSS_ROWS = 240


def chosen_on_row_losses(monkeypatch, edge: float, **options):
    """``choose_strategy`` between the chain and the routed DAG on per-row
    held-out losses: the routed DAG's ``edge`` below the chain's plus
    noise. Returns the choice, each one's held-out rows as judged and each
    row's base loss."""
    from budgetdag_core.strategies import _choice as dag_strategy

    n = ROW_LOSS_ROWS
    y = np.repeat([0, 1], n // 2)
    rng = np.random.default_rng(0)
    base, noise = rng.random(n), rng.normal(0.0, 0.3, n)
    noise -= noise.mean()
    judged: dict[str, list[np.ndarray]] = {"chain": [], "routed": []}

    def held_out_parts(name, val_rows, *_):
        judged[name].append(val_rows)
        loss = base[val_rows] - (edge + noise[val_rows] if name == "routed" else 0)
        return [np.column_stack([loss, np.zeros(len(val_rows))])]

    monkeypatch.setattr(dag_strategy, "restricted", lambda growth, rows: growth)
    monkeypatch.setattr(dag_strategy, "held_out_parts", held_out_parts)
    growths = {"chain": "chain", "routed": "routed"}
    choice = choose_strategy(
        growths, y, lambda g: None, None, None, np.ones(2), None, [0.1], **options
    )
    return choice, judged, base


@pytest.mark.parametrize(
    ("edge", "folds", "kept"),
    [(0.01, VALIDATION_FOLDS, "chain"), (0.3, 1, "routed"), (-0.3, 1, "chain")],
)
def test_a_close_call_is_judged_on_every_training_row(monkeypatch, edge, folds, kept):
    """Within one standard error (a close call the chain wins by the rule)
    every row is held out once; a clear call is one split's."""
    choice, judged, base = chosen_on_row_losses(monkeypatch, edge)
    n = ROW_LOSS_ROWS
    assert (choice.strategy, choice.folds) == (kept, folds)
    for parts in judged.values():
        assert len(parts) == folds
        rows = np.concatenate(parts)
        assert len(rows) == len(np.unique(rows)) == (n if folds > 1 else n // 4)
    # The numbers are those of every judged row.
    losses = {m: choice.scores[m][0]["loss"] for m in judged}
    rows = np.concatenate(judged["routed"])
    assert losses["chain"] == pytest.approx(base[rows].mean())
    assert StrategyChoice.from_dict(choice.to_dict()).folds == folds


@pytest.mark.parametrize(
    ("edge", "incumbent", "folds", "kept"),
    [
        (0.01, "routed", 1, "routed"),  # a close call: the incumbent stays
        (0.01, "chain", 1, "chain"),
        (0.01, "grown", VALIDATION_FOLDS, "chain"),  # not a candidate here
        (0.3, "chain", 1, "routed"),  # a clear call overrides the incumbent
    ],
)
def test_a_refits_close_call_keeps_its_incumbent(
    monkeypatch, edge, incumbent, folds, kept
):
    """With ``incumbent`` (a refit's own strategy) a close call on the
    first split keeps it where it is within one standard error there,
    without judging the other parts; a clear call is made as before."""
    choice, judged, _ = chosen_on_row_losses(monkeypatch, edge, incumbent=incumbent)
    assert (choice.strategy, choice.folds) == (kept, folds)
    assert [len(parts) for parts in judged.values()] == [folds, folds]
    assert choice.kept_incumbent == (folds == 1 and edge < 0.1)
    back = StrategyChoice.from_dict(choice.to_dict())
    assert (back.strategy, back.kept_incumbent) == (kept, choice.kept_incumbent)


def test_auto_chooses_between_the_chain_and_the_routed_dag_only():
    model = fit(300)
    assert set(model.strategy_banks_) == set(AUTO_STRATEGIES) == {"chain", "routed"}
    assert set(model.strategy_choice_.scores) == set(AUTO_STRATEGIES)
    # Asked for by name, the grown DAG is grown.
    assert fit(300, dag="sparse").strategy_ == "grown"


def test_a_bank_of_one_strategy_refuses_another():
    model = fit(dag="chain")
    X, y = make_data(500, 0)
    with pytest.raises(ValueError, match="grown"):
        BudgetDAGClassifier(SPEC, dag="sparse", cv=3, random_state=0).fit(
            X, y, bank=model.bank_
        )


def test_a_sweep_keeps_a_strategy_per_point_on_one_bank():
    X, y = make_data(500, 0)
    Xt, yt = make_data(300, 1)
    result = tradeoff_curve(
        X, y, SPEC, cost_scales=[0.002, 0.02, 0.2], X_test=Xt, y_test=yt,
        cv=3, random_state=0,
    )  # fmt: skip
    banks = result.bank
    assert isinstance(banks, StrategyBanks) and set(banks) == set(AUTO_STRATEGIES)
    for model in result.models:
        assert model.bank_ is banks[model.strategy_]
    dag = result.frame.query("method == 'dag' and split == 'test'")
    for model, (_, row) in zip(result.models, dag.iterrows(), strict=True):
        assert row["avg_cost"] == pytest.approx(model.evaluate(Xt, yt)["avg_cost"])
    # The cascade reads the sweep's bank (the chain's states), whichever
    # strategy its first point kept.
    assert {m.strategy_ for m in result.models} - {"chain"}
    assert banks.default.sparse_growth_.strategy == "chain"
    assert result.cascade.dag is banks.default.sparse_growth_.dag
    # A fit with the same settings keeps what the sweep's point kept.
    alone = fit(cost_scale=0.02)
    pd.testing.assert_frame_equal(alone.trace(Xt), result.models[1].trace(Xt))


def test_a_sweep_on_one_bank_gives_what_each_point_gives_alone():
    # The sweep's walks keep rows' policy inputs (and probabilities) on the
    # bank between points; each point alone starts from the bank as fitted.
    X, y = make_data(400, 0)
    Xt, yt = make_data(200, 1)
    scales = [0.002, 0.02, 0.2]
    bank = BudgetDAGClassifier(SPEC, cv=3, random_state=0).fit_bank(X, y)
    as_fitted = pickle.dumps(bank)
    sweep = tradeoff_curve(
        X, y, SPEC, cost_scales=scales, X_test=Xt, y_test=yt, bank=bank,
        cv=3, random_state=0,
    )  # fmt: skip
    assert len({m.strategy_ for m in sweep.models}) > 1  # both DAGs walked
    assert any(t.derived for one in bank.values() for t in one.sparse_growth_.proba)
    # The points shared the choice's held-out DAGs; once the sweep ended,
    # those keep their DAGs, rows and probabilities, not their derived tables.
    held = [g for g in bank._held_out.values() if g is not None]
    assert held and not any(t.derived for g in held for t in g.proba)
    for scale, model in zip(scales, sweep.models, strict=True):
        alone = tradeoff_curve(
            X, y, SPEC, cost_scales=[scale], X_test=Xt, y_test=yt,
            bank=pickle.loads(as_fitted), cv=3, random_state=0,
        )  # fmt: skip
        pd.testing.assert_frame_equal(
            sweep.frame[sweep.frame["cost_scale"] == scale].reset_index(drop=True),
            alone.frame[alone.frame["cost_scale"] == scale].reset_index(drop=True),
        )
        (point,) = alone.models
        assert point.strategy_ == model.strategy_
        np.testing.assert_array_equal(point.train_cost_to_go_, model.train_cost_to_go_)
        pd.testing.assert_frame_equal(point.trace(Xt), model.trace(Xt))


@pytest.fixture
def chose_at(monkeypatch) -> list[float]:
    """The cost scales every strategy choice of the test judges, in order."""
    from budgetdag_core.estimator import _plans

    scales: list[float] = []
    choose = _plans.choose_strategy

    def counted(*args, **kwargs):
        scales.extend(args[7])  # the cost scales judged
        return choose(*args, **kwargs)

    monkeypatch.setattr(_plans, "choose_strategy", counted)
    return scales


def test_a_refined_point_between_two_that_kept_one_strategy_keeps_it(chose_at):
    """A curve's refined scale whose fitted neighbours kept the same candidate
    keeps it without judging the strategies again; every other scale
    chooses; the point's model is the fit of that candidate alone, holding
    every candidate."""
    X, y = make_data(400, 0)
    Xt, yt = make_data(200, 1)
    bank = BudgetDAGClassifier(SPEC, cv=3, random_state=0).fit_bank(X, y)
    sweep = tradeoff_curve(
        X, y, SPEC, n_points=10, X_test=Xt, y_test=yt, bank=bank, cv=3,
        random_state=0,
    )  # fmt: skip
    kept = {
        scale: model.strategy_choice_.kept_between
        for scale, model in zip(sweep.cost_scales, sweep.models, strict=True)
    }
    between = {s: pair for s, pair in kept.items() if pair is not None}
    assert between  # the test exercises the shortcut
    assert set(chose_at) == set(kept) - set(between)
    key_at = {
        s: bank.key_of(m.bank_)
        for s, m in zip(sweep.cost_scales, sweep.models, strict=True)
    }
    for scale, (low, high) in between.items():
        assert low < scale < high and key_at[low] == key_at[high] == key_at[scale]
        model = sweep.models[list(sweep.cost_scales).index(scale)]
        assert model.strategy_banks_ is bank
        assert model.strategy_choice_.strategy == key_at[scale]
        alone = BudgetDAGClassifier(SPEC, cost_scale=scale, cv=3, random_state=0)
        alone.fit(X, y, bank=bank.only(key_at[scale]))
        pd.testing.assert_frame_equal(alone.trace(Xt), model.trace(Xt))
        # The neighbours travel with a saved model.
        loaded = loads_policy_skops(dumps_policy_skops(model))
        assert loaded.strategy_choice_.kept_between == (low, high)


def test_a_budget_step_between_two_that_kept_one_strategy_keeps_it(chose_at):
    """fit_for_budget's bisection: a step between two tried scales that kept
    the same candidate keeps it without judging the strategies again."""
    from budgetdag_core import fit_for_budget

    X, y = make_data(400, 0)
    model = fit_for_budget(X, y, SPEC, 4.5, cv=3, random_state=0, max_iter=10)
    history = model.budget_report_.history
    tried = list(history["cost_scale"])
    assert len(tried) > len(chose_at)  # some steps kept their neighbours'
    assert set(chose_at) < set(tried)
    # The step kept spends the most within the target: one of those.
    low, high = model.strategy_choice_.kept_between
    assert low < model.cost_scale_ < high and {low, high} <= set(tried)


# ------------------------------------------------------------ the routed DAG
def test_the_routed_dag_buys_the_routing_sensor_then_the_sensor_it_names():
    """s0 says which of s1, s2 carries the class: the routed DAG's routing
    sensor is s0, each group's order starts with the sensor its sign names,
    and the fitted policy buys s0 first, then that sensor, per example."""
    model = fit(n=800, dag="routed")
    assert model.strategy_ == "routed"
    dag, names = model.sensor_dag_, model.spec_.names
    assert dag.n_states <= most_states("routed", SPEC.n_sensors, 1000)
    assert "s0" in {names[u] for u, _ in dag.children[0]}
    # The policy choosing among s0's routes reads s0's value, whatever the
    # probabilities at {s0} say (they may vary a little by chance).
    route_state = dag.index[1 << names.index("s0")]
    assert model.inputs_.kind_at(route_state).startswith("sensors")
    Xt, _ = make_data(400, 3)
    acquired = model.trace(Xt)["acquired"]
    first_two = [a[:2] for a in acquired]
    named = np.where(Xt.s0 > 0, "s1", "s2")
    hits = [a == ("s0", want) for a, want in zip(first_two, named, strict=True)]
    assert np.mean(hits) > 0.85, first_two[:10]


def test_the_routing_state_sees_the_routing_sensors_values(monkeypatch):
    """The routed DAG marks its routing sensor's state, and with the auto
    inputs its policy sees that sensor's values there beside the
    probabilities even where the posterior spreads (an any-subset network's
    can, with noise) and no state is a value state: with the spread rule
    marking none, the policy still buys s0, then the sensor its sign names,
    per example."""
    import budgetdag_core.estimator._plans as base

    monkeypatch.setattr(base, "CONSTANT_STATE_SPREAD", 0.0)
    model = fit(n=800, dag="routed")
    growth = model.bank_.sparse_growth_
    names = model.spec_.names
    (route,) = growth.route_states
    assert growth.dag.states[route] == 1 << names.index("s0")
    assert not model.value_states_.any()
    assert np.flatnonzero(model.route_states_).tolist() == [route]
    assert model.inputs_.kind_at(route) == "sensors+proba"
    Xt, _ = make_data(400, 3)
    first_two = [a[:2] for a in model.trace(Xt)["acquired"]]
    named = np.where(Xt.s0 > 0, "s1", "s2")
    hits = [a == ("s0", want) for a, want in zip(first_two, named, strict=True)]
    assert np.mean(hits) > 0.85, first_two[:10]
    # The round trip keeps what each state's policy sees.
    again = loads_policy(dumps_policy(model))
    pd.testing.assert_frame_equal(again.trace(Xt), model.trace(Xt))
    assert np.array_equal(again.route_states_, model.route_states_)


def test_no_routed_dag_where_no_value_says_where_to_look():
    """The class a sum of four sensors: every row gains from the same sensor
    next, whatever any value says. No routing sensor stands clear of the
    noise, so
    ``dag="auto"`` grows no routed DAG (its validation has no such row, and
    the candidate, asked for, leaves the candidates); ``dag="routed"`` on
    those candidates says so and asks for a refit, never keeping the chain
    in its place; forced from the start, the routed DAG still routes by the
    best-scored sensor."""
    X, y = independent_data(600, 2)
    spec = SensorSpec.per_column(list(X.columns))
    model = BudgetDAGClassifier(spec, cv=3, random_state=0).fit(X, y)
    assert model.strategy_ == "chain"
    assert "routed" not in set(model.strategy_choice_.table()["strategy"])
    assert not model.strategy_banks_.is_grown("routed")
    forced_on_it = BudgetDAGClassifier(spec, dag="routed", cv=3, random_state=0)
    with pytest.raises(ValueError, match="routed DAG finds nothing.*refit the bank"):
        forced_on_it.fit(X, y, bank=model.strategy_banks_)
    assert "routed" not in model.strategy_banks_  # grown: nothing, it left
    forced = BudgetDAGClassifier(spec, dag="routed", cv=3, random_state=0).fit(X, y)
    assert forced.strategy_ == "routed"


def _fold_bank(X: np.ndarray, y: np.ndarray):
    """A stand-in any-subset bank: a row's out-of-fold probabilities at a
    subset from a nearest-class-mean rule on the subset's columns, fitted on
    the other folds (``oof_at``'s contract, no model to train)."""

    class Bank:
        prior_ = np.bincount(y) / len(y)

        def oof_at(self, X_, rows, subsets, state=None):
            subsets = np.atleast_2d(subsets)
            out = np.empty((len(rows), len(subsets), len(self.prior_)))
            for fit_rows, judged in StratifiedKFold(3).split(X, y):
                pick = np.isin(rows, judged)
                if not pick.any():
                    continue
                means = np.stack(
                    [X[fit_rows][y[fit_rows] == c].mean(0) for c in (0, 1)]
                )
                for m, mask in enumerate(subsets):
                    d = (
                        (X_[rows[pick]][:, None, mask] - means[None, :, mask]) ** 2
                    ).sum(-1)
                    logits = -d
                    p = np.exp(logits - logits.max(1, keepdims=True))
                    out[pick, m] = p / p.sum(1, keepdims=True)
            return out

    return Bank()


def test_routing_scores_rank_the_sensor_that_says_where_to_look_first():
    X, y = make_data(900, 4)
    Xv = X.to_numpy()
    bank = _fold_bank(Xv, y)
    costs = np.ones(SPEC.n_sensors)
    groups = {r: [route_groups(Xv[:, [r]], 8, 10)] for r in range(SPEC.n_sensors)}

    def row_loss(rows, proba):
        picked = np.take_along_axis(
            proba, y[rows].reshape((-1,) + (1,) * (proba.ndim - 1)), axis=-1
        )
        return -np.log(np.clip(picked, 1e-12, None))[..., 0]

    rows = np.arange(300)
    scores = routing_scores(
        bank, Xv, rows, groups, costs, row_loss, np.random.default_rng(0)
    )
    means = {key: value[0] for key, value in scores.items()}
    assert max(means, key=means.get) == (0, 0), scores
    assert scores[0, 0][0] > ROUTE_MIN_SE * scores[0, 0][1]
    # A coin (s5 .. s15) is worth little: its picks are judged on other rows.
    assert max(means[r, 0] for r in range(5, 16)) < means[0, 0] / 3
    # Of s0's groupings, two groups (its sign) serve best: finer ones split
    # the same two picks over fewer rows each.
    (fine,) = [route_groups(Xv[:, [0]], 8, 10)]
    options = {0: [route_groups(Xv[:, [0]], 2, 10), fine]}
    by_count = routing_scores(
        bank, Xv, rows, options, costs, row_loss, np.random.default_rng(0)
    )
    assert by_count[0, 0][0] >= by_count[0, 1][0], by_count
    growth = routed_growth(
        bank, Xv, y, SPEC.names, SPEC.column_indices(), costs, random_state=0
    )
    dag = growth.dag
    (route_state,) = [c for u, c in dag.children[0] if u == 0]
    firsts = {dag.sensor_names[u] for u, _ in dag.children[route_state]}
    assert {"s1", "s2"} <= firsts, firsts
    assert all(len(rows) for rows in growth.flow)
    # The routing state is marked: its policy reads s0's values.
    assert growth.route_states == (route_state,)


def test_a_tree_banks_routing_scores_ask_each_pair_of_sensors_once(monkeypatch):
    """r then j and j then r reach one subset: where the bank's outputs do
    not depend on the block asked (a tree bank), routing_scores asks each
    subset once and scores every candidate as it would alone."""
    from budgetdag_core.strategies import _routed as routed_dag
    from budgetdag_core.strategies import cross_entropy

    X, y = make_data(600, 4)
    Xv = X.to_numpy()
    inner = _fold_bank(Xv, y)
    asked = []

    class TreeLike:  # each subset's outputs its own: exact in blocks
        prior_ = inner.prior_
        exact_in_blocks = True

        def oof_at(self, X_, rows, subsets, state=None):
            asked.extend(map(bytes, np.atleast_2d(subsets)))
            return inner.oof_at(X_, rows, subsets)

    costs = np.linspace(1.0, 2.0, SPEC.n_sensors)
    groups = {r: [route_groups(Xv[:, [r]], 8, 10)] for r in range(SPEC.n_sensors)}
    held = np.zeros(SPEC.n_sensors, dtype=bool)
    held[3] = True  # from a state: its sensor is never a candidate

    def scores(limit: int) -> dict:
        monkeypatch.setattr(routed_dag, "PAIR_LOSS_BYTES", limit)
        asked.clear()
        candidates = {r: g for r, g in groups.items() if r != 3}
        return routing_scores(
            TreeLike(), Xv, np.arange(200), candidates, costs, cross_entropy(y),
            np.random.default_rng(0), held=held,
        )  # fmt: skip

    alone = scores(0)
    each_alone = list(asked)
    paired = scores(2**40)
    assert paired == alone
    assert len(asked) == len(set(asked)) == len(set(each_alone))
    assert len(each_alone) > 1.8 * len(asked)


def test_long_tables_join_a_route_groups_order_to_the_chains(monkeypatch):
    """From ROUTE_TAIL_MIN_ROWS rows on, a route group's own greedy order
    stops after tail_length sensors and follows the chain's order for the
    rest; shorter tables keep the group's whole greedy order."""
    from budgetdag_core.strategies import _routed as routed_dag

    X, y = make_data(900, 4)
    Xv = X.to_numpy()
    costs = np.ones(SPEC.n_sensors)

    def paths_of_growth() -> list:
        seen = []
        real = routed_dag._growth_of_paths

        def keep(bank, X_, names, paths, route_masks=(), rows=None):
            seen.extend(paths)
            return real(bank, X_, names, paths, route_masks, rows)

        monkeypatch.setattr(routed_dag, "_growth_of_paths", keep)
        routed_growth(
            _fold_bank(Xv, y), Xv, y, SPEC.names, SPEC.column_indices(), costs,
            random_state=0,
        )  # fmt: skip
        common = seen[0][1]
        route_paths = [p for p in seen if p[0] and len(p[1]) > 1]
        return common, route_paths

    assert len(Xv) < ROUTE_TAIL_MIN_ROWS
    common, whole = paths_of_growth()
    monkeypatch.setattr(routed_dag, "ROUTE_TAIL_MIN_ROWS", len(Xv))
    _, joined = paths_of_growth()
    tail = tail_length(SPEC.n_sensors)
    assert len(whole) == len(joined) >= 2
    for (start, own, rows), (start_j, order, rows_j) in zip(whole, joined, strict=True):
        assert start == start_j and np.array_equal(rows, rows_j)
        (route,) = [j for j in range(SPEC.n_sensors) if start >> j & 1]
        assert (
            sorted([route, *own])
            == sorted([route, *order])
            == list(range(SPEC.n_sensors))
        )
        assert order[:tail] == own[:tail]
        bought = {route, *own[:tail]}
        assert order[tail:] == [j for j in common if j not in bought]
    assert any(o[tail:] != j[tail:] for (_, o, _), (_, j, _) in zip(whole, joined))


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.integers(-3, 3).map(float), st.just(float("nan"))),
        min_size=1, max_size=80,
    ),
    max_groups=st.integers(2, 6),
    floor=st.integers(1, 10),
)  # fmt: skip
def test_route_groups_keep_groups_of_enough_rows(values, max_groups, floor):
    column = np.array(values)[:, None]
    groups = route_groups(column, max_groups, floor, random_state=0)
    assert groups.shape == (len(values),)
    kept = groups[groups >= 0]
    assert set(kept.tolist()) == set(range(len(np.unique(kept))))
    assert len(np.unique(kept)) <= max_groups
    counts = np.bincount(kept) if len(kept) else np.zeros(0)
    assert (counts >= floor).all()
    # Rows of one value share a group (a missing value is a value too).
    key = np.nan_to_num(column[:, 0], nan=-99.0)
    for v in np.unique(key):
        assert len(set(groups[key == v].tolist())) == 1


def test_route_groupings_offer_each_distinct_grouping_once():
    rng = np.random.default_rng(0)
    column = rng.normal(size=(400, 1))
    options = route_groupings(column, 8, 10)
    assert [g.max() + 1 for g in options] == [2, 3, 5, 8]
    two_values = (column > 0).astype(float)  # two patterns: one grouping
    (only,) = route_groupings(two_values, 8, 10)
    assert set(only.tolist()) == {0, 1}
    assert route_groupings(np.ones((50, 1)), 8, 10) == []  # one group: none


def test_the_chain_holds_the_banks_probabilities_at_each_prefix():
    # The chain asks the bank for all its states at once: each state's rows
    # must hold what the bank gives at that state alone.
    model = fit(dag="chain")
    bank = model.bank_
    X, y = make_data(500, 0)
    Xv = X.to_numpy(float)
    growth = chain_growth(bank, Xv, y, SPEC.names, SPEC.cost_vector)
    assert growth.dag.states == model.sensor_dag_.states
    rows = growth.flow[0]
    for k in range(1, growth.dag.n_states):
        mask = np.zeros((1, SPEC.n_sensors), dtype=bool)
        mask[0, growth.dag.sensors_in(k)] = True
        alone = bank.oof_at(Xv, rows, mask)[:, 0]
        np.testing.assert_allclose(growth.proba[k].get(rows), alone, rtol=0, atol=1e-6)


# ------------------------------------------------- the policies judge a rival
def additive_routing_data(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """16 sensors: s0 says which of s1, s2 carries most of the class, and
    s3..s15 each add a little. At random subsets the additive part rules
    the log loss (the logistic bank wins it); a routed policy needs the
    s0 x (s1, s2) interaction, which only a network or boosting learns."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 16)), columns=[f"s{i}" for i in range(16)])
    routed = np.where(X.s0 > 0, X.s1, X.s2)
    additive = 0.5 * X[[f"s{i}" for i in range(3, 16)]].sum(axis=1).to_numpy()
    y = (3 * routed + additive + rng.normal(0, 0.5, n) > 0).astype(int)
    return X, y


ADDITIVE_ROUTING = SensorSpec.per_column([f"s{i}" for i in range(16)])


@pytest.fixture(scope="module")
def rival_model() -> BudgetDAGClassifier:
    X, y = additive_routing_data(400, 0)
    return BudgetDAGClassifier(
        ADDITIVE_ROUTING, cost_scale=0.02, cv=3, random_state=0
    ).fit(X, y)


def test_the_policies_judge_a_close_rival_bank_kind(rival_model):
    """The logistic bank wins the log loss at random subsets, the network is
    close: its bank is fitted too, and the policies on it, better on
    held-out rows by more than a standard error, are kept; on new rows
    they beat the policies on the logistic bank."""
    bank = rival_model.bank_
    numbers = bank.validation_
    assert numbers["masked_logistic"]["excess"] == 0.0  # the log loss's pick
    banks = rival_model.strategy_banks_
    # Only the rival's routed DAG: where the interaction it learns pays.
    rivals = [key for key in banks if "@" in key]
    assert rivals == [strategy_key("routed", "masked_mlp")]
    assert {banks[key].kind_ for key in rivals} == {"masked_mlp"}
    own = {banks[key].kind_ for key in banks if "@" not in key}
    assert own == {"masked_logistic"}
    choice = rival_model.strategy_choice_
    assert choice.strategy == strategy_key(rival_model.strategy_, "masked_mlp")
    assert bank is banks[choice.strategy] and bank.kind_ == "masked_mlp"
    losses = {name: rows[0]["loss"] for name, rows in choice.scores.items()}
    excess_se = {name: rows[0]["excess_se"] for name, rows in choice.scores.items()}
    least = min(losses.values())
    assert losses[choice.strategy] - least <= excess_se[choice.strategy] + 1e-12
    for own in (name for name in losses if "@" not in name):
        assert losses[own] - least > excess_se[own]
    X, y = additive_routing_data(400, 0)
    logistic = BudgetDAGClassifier(
        ADDITIVE_ROUTING, cost_scale=0.02, cv=3, random_state=0,
        bank_kind="masked_logistic",
    ).fit(X, y)  # fmt: skip
    Xt, yt = additive_routing_data(2000, 1)
    kept = rival_model.evaluate(Xt, yt)["avg_loss"]
    assert kept < logistic.evaluate(Xt, yt)["avg_loss"] - 0.02


def test_the_choice_of_kind_is_deterministic_and_reused(rival_model):
    X, y = additive_routing_data(400, 0)
    Xt, _ = additive_routing_data(300, 1)
    again = clone(rival_model).fit(X, y)
    assert again.strategy_validation_ == rival_model.strategy_validation_
    pd.testing.assert_frame_equal(again.trace(Xt), rival_model.trace(Xt))
    # Another cost scale on the same bank chooses among both kinds again.
    frugal = rival_model.refit_policies(X, y, cost_scale=0.2)
    assert set(frugal.strategy_choice_.scores) == set(
        rival_model.strategy_choice_.scores
    )
    banks = rival_model.strategy_banks_
    assert any(frugal.bank_ is one for one in banks.values())


def test_a_sweep_reads_each_point_on_its_own_kinds_bank(rival_model):
    X, y = additive_routing_data(400, 0)
    Xt, yt = additive_routing_data(300, 1)
    result = tradeoff_curve(
        X, y, ADDITIVE_ROUTING, cost_scales=[0.02], X_test=Xt, y_test=yt,
        cv=3, random_state=0, bank=rival_model.strategy_banks_,
    )  # fmt: skip
    (model,) = result.models
    row = result.frame.query("method == 'dag' and split == 'test'").iloc[0]
    scores = model.evaluate(Xt, yt)
    assert row["error"] == pytest.approx(scores["error"])
    assert row["avg_cost"] == pytest.approx(scores["avg_cost"])


@pytest.mark.parametrize("slim", [True, False])
def test_a_rival_kinds_model_round_trips(rival_model, slim):
    Xt, _ = additive_routing_data(200, 2)
    trace = rival_model.trace(Xt)
    for loaded in (
        loads_policy(dumps_policy(rival_model, slim=slim)),
        loads_policy_skops(dumps_policy_skops(rival_model, slim=slim)),
    ):
        pd.testing.assert_frame_equal(loaded.trace(Xt), trace)
        assert loaded.bank_.kind_ == "masked_mlp"
        assert loaded.strategy_validation_ == rival_model.strategy_validation_


# ------------------------------------------------ routes by the posterior
def twenty_questions(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Eight classes, 16 sensors asked as in twenty questions: s0 halves the
    classes, then s1 (classes 0-3) or s2 (4-7) halves them again, then one of
    s3..s6 names the class; a sensor asked of the other classes is noise.
    Which sensor helps next depends on what the ones bought said: no single
    sensor's value routes beyond the second."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 8, size=n)
    X = rng.normal(size=(n, 16))
    sign = lambda bit: 2.0 * bit - 1.0  # noqa: E731
    X[:, 0] = sign(y >= 4) + rng.normal(scale=0.3, size=n)
    for group, sensor in ((0, 1), (1, 2)):
        mine = y // 4 == group
        X[mine, sensor] = sign(y[mine] % 4 >= 2) + rng.normal(
            scale=0.3, size=mine.sum()
        )
    for pair in range(4):
        mine = y // 2 == pair
        X[mine, 3 + pair] = sign(y[mine] % 2 == 1) + rng.normal(
            scale=0.3, size=mine.sum()
        )
    return pd.DataFrame(X, columns=[f"q{i}" for i in range(16)]), y


QUESTIONS = SensorSpec.per_column([f"q{i}" for i in range(16)])


@pytest.fixture(scope="module")
def questions_model() -> BudgetDAGClassifier:
    X, y = twenty_questions(1200, 0)
    return BudgetDAGClassifier(
        QUESTIONS, dag="routed", cost_scale=0.02, cv=3, random_state=0
    ).fit(X, y)


def test_the_posterior_tree_asks_each_example_its_own_next_question(
    questions_model,
):
    """The routed DAG's posterior tree splits the rows by what the bought
    sensors said: after q0 its halves ask q1 or q2, and after those, the
    rows of each pair of classes ask their own of q3..q6; the fitted policy
    follows that path per example (no one order, nor a route by one
    sensor's value, gets the third question right for every class)."""
    model = questions_model
    dag, names = model.sensor_dag_, model.spec_.names
    assert model.strategy_ == "routed"
    assert dag.n_states <= most_states("routed", QUESTIONS.n_sensors, 1000)
    after_q0 = dag.index[1 << names.index("q0")]
    assert {"q1", "q2"} <= {names[u] for u, _ in dag.children[after_q0]}
    X, y = twenty_questions(400, 1)
    acquired = model.trace(X)["acquired"]
    wanted = [("q0", "q1" if c < 4 else "q2", f"q{3 + c // 2}") for c in y.tolist()]
    hits = [a[:3] == w for a, w in zip(acquired, wanted, strict=True)]
    assert np.mean(hits) > 0.8, list(acquired[:8])
    assert model.score(X, y) > 0.85


def test_the_posterior_tree_reads_only_acquired_values_and_round_trips(
    questions_model,
):
    model = questions_model
    X, y = twenty_questions(200, 2)
    trace = model.trace(X)
    spoiled = X.copy()
    rng = np.random.default_rng(3)
    for i, acquired in enumerate(trace["acquired"]):
        for column in spoiled.columns:
            if column not in acquired:
                spoiled.iloc[i, spoiled.columns.get_loc(column)] = rng.choice(
                    [1e6, -1e6, 0.0]
                )
    pd.testing.assert_frame_equal(model.trace(spoiled), trace)
    for loaded in (
        loads_policy(dumps_policy(model)),
        loads_policy_skops(dumps_policy_skops(model)),
    ):
        pd.testing.assert_frame_equal(loaded.trace(X), trace)
        assert loaded.sensor_dag_.states == model.sensor_dag_.states
    again = clone(model).fit(*twenty_questions(1200, 0))
    assert again.sensor_dag_.states == model.sensor_dag_.states
    assert again.sensor_dag_.children == model.sensor_dag_.children
    pd.testing.assert_frame_equal(again.trace(X), trace)


def test_held_out_pick_gain_is_zero_where_groups_agree():
    rng = np.random.default_rng(0)
    gain = np.tile([1.0, 0.2, 0.0], (200, 1)) + rng.normal(scale=0.05, size=(200, 3))
    groups = rng.integers(0, 2, size=200)
    halves = np.array_split(rng.permutation(200), 2)
    mean, se, common = held_out_pick_gain(gain, groups, halves, 1.0)
    assert mean == 0.0 and se == 0.0 and common == pytest.approx(1.0, abs=0.02)
    # Groups that need different sensors gain what their own pick adds.
    gain[groups == 1] = gain[groups == 1][:, ::-1]
    mean, se, _ = held_out_pick_gain(gain, groups, halves, 2.0)
    assert mean == pytest.approx(0.5 * 0.5, abs=0.05) and mean > ROUTE_MIN_SE * se


def test_class_halves_keep_each_leading_class_whole():
    """The posterior tree's split puts every row a class leads on one side,
    and classes whose rows gain from the same sensor together."""
    rng = np.random.default_rng(0)
    n, C = 300, 4
    top = rng.integers(0, C, size=n)
    proba = np.full((n, C), 0.1)
    proba[np.arange(n), top] = 0.7
    # Classes 0 and 2 gain from sensor 0, classes 1 and 3 from sensor 1.
    gain = np.where((top % 2 == 0)[:, None], [1.0, 0.0], [0.0, 1.0])
    gain = gain + rng.normal(scale=0.05, size=(n, 2))
    halves = class_halves(proba, np.arange(0, n, 2), gain[::2], 10)
    assert halves is not None and halves[0] == 0
    for c in range(C):
        assert len(np.unique(halves[top == c])) == 1
    assert (halves[top == 0] == halves[top == 2][0]).all()
    assert (halves[top == 1] != halves[top == 0][0]).all()
    one_class = np.tile([0.9, 0.05, 0.05, 0.0], (n, 1))
    assert class_halves(one_class, np.arange(n), gain, 10) is None
    two_classes = np.column_stack([proba[:, 0], 1 - proba[:, 0]])
    assert class_halves(two_classes, np.arange(n), gain, 10) is None


def test_the_class_split_tree_needs_only_a_held_out_gain():
    """Split by groups of classes, the tree is built on any held-out gain of
    its first split (the validation choice judges the whole tree); split by
    the probabilities (two classes) it must stand clear of the noise."""
    weak = (0.01, 0.008, 0.2)  # 1.25 standard errors, 5 % of the common gain
    assert tree_stands_clear(*weak, by_class=True)
    assert not tree_stands_clear(*weak, by_class=False)
    strong = (0.05, 0.01, 0.2)
    assert tree_stands_clear(*strong, by_class=False)
    for by_class in (True, False):
        assert not tree_stands_clear(0.0, 0.008, 0.2, by_class=by_class)
        assert not tree_stands_clear(-0.01, 0.0, 0.2, by_class=by_class)


def test_every_registered_strategy_grows_a_dag_graph_reduce_reduces():
    """The strategies are objects of one protocol, registered in one place:
    each grows, from the same inputs, a DAG within its most states whose
    flow rows Graph-Reduce reduces (the one walk of every DAG)."""
    import copy

    from budgetdag_core import graph_reduce
    from budgetdag_core.reductions import FilterTree
    from budgetdag_core.strategies import (
        REGISTRY,
        GrowthInputs,
        GrowthSettings,
        SparseGrowth,
        grow_strategy,
    )

    assert tuple(REGISTRY) == STRATEGIES
    model = fit(300, dag="chain")
    X, y = make_data(300, 0)
    Xv = X.to_numpy(dtype=float)
    bank = model.bank_
    given = GrowthInputs(
        bank, Xv, y, SPEC.names, SPEC.column_indices(), SPEC.cost_vector,
        GrowthSettings(max_states=60), random_state=0,
    )  # fmt: skip
    for name in SIMPLEST_FIRST:  # the routed DAG after the chain, as a fit
        growth = grow_strategy(name, given)
        assert isinstance(growth, SparseGrowth), name
        assert given.grown[name] is growth and growth.strategy == name
        # (the grown DAG's last expansion may add its children past the cap)
        most = REGISTRY[name].most_states(SPEC.n_sensors, 60) + SPEC.n_sensors
        assert growth.dag.n_states <= most
        assert len(growth.flow[0]) == len(Xv)  # every row starts at the root
        growth.bank = copy.copy(bank).bind(growth, Xv, y)  # as a fit binds it
        result = graph_reduce(
            lambda k, rows, proba: Xv[np.ix_(rows, growth.dag.sensors_in(k))],
            lambda rows, proba: 1.0 - proba.max(axis=1),
            SPEC.cost_vector,
            growth,
            FilterTree(degree=1),
            cost_scale=0.02,
        )
        assert len(result.policies) == growth.dag.n_states
        assert np.isfinite(result.root_cost_to_go()).all()


def test_every_row_strategies_build_the_dag_a_fit_keeps():
    """The paper's DAGs are strategies of the same registry: ``"full"``
    builds every subset, ``"subsets"`` the unions of Alg. 2's subsets; a
    fit with the same settings keeps that very DAG and says which."""
    from budgetdag_core.dag import build_dag
    from budgetdag_core.strategies import (
        ALL_STRATEGIES,
        EVERY_ROW,
        REGISTRY,
        EveryRowInputs,
        select_subsets,
    )

    assert ALL_STRATEGIES == (*EVERY_ROW, *REGISTRY) == ("full", "subsets", *STRATEGIES)
    spec = SensorSpec.per_column([f"s{i}" for i in range(5)])
    X, y = make_data(200, 0)
    X = X[list(spec.columns)]
    Xv = X.to_numpy(dtype=float)
    full, selection = EVERY_ROW["full"].build(EveryRowInputs(spec))
    assert selection is None
    assert full.n_states == 2**spec.n_sensors
    assert full.n_states <= EVERY_ROW["full"].most_states(spec.n_sensors, 0)
    model = BudgetDAGClassifier(spec, cost_scale=0.02, cv=2, random_state=0).fit(X, y)
    assert model.strategy_ == "full"
    assert model.sensor_dag_.states == full.states
    settings = {"n_subsets": 3, "cv": 2, "random_state": 0}
    dag, selection = EVERY_ROW["subsets"].build(EveryRowInputs(spec, Xv, y, settings))
    assert selection.subsets == select_subsets(X, y, spec, **settings).subsets
    assert dag.n_states <= EVERY_ROW["subsets"].most_states(spec.n_sensors, 0)
    subsets = BudgetDAGClassifier(
        spec, n_subsets=3, cost_scale=0.02, cv=2, random_state=0
    ).fit(X, y)
    assert subsets.strategy_ == "subsets"
    kept = build_dag(spec, subsets.subset_selection_.units)
    assert subsets.sensor_dag_.states == kept.states


def test_a_file_from_before_the_candidates_left_the_bank_loads():
    """Files written when the bank carried ``strategy_``, ``strategy_key_``
    and ``strategy_banks_`` load with them on the model: the strategy, the
    candidates (each growth knowing its strategy), the same predictions."""
    import pickle

    from budgetdag_core.persist._compat import upgrade_model

    model = fit(300)
    Xt, _ = make_data(100, 1)
    old = pickle.loads(pickle.dumps(model))
    banks = dict(old.strategy_banks_)
    for key, one in banks.items():  # as an older version kept them
        one.strategy_ = key.split("@")[0]
        one.sparse_growth_.__dict__.pop("strategy", None)  # the field was new
        one.strategy_banks_ = banks
    del old.strategy_, old.strategy_banks_
    assert upgrade_model(old)[-2:] == ["strategy_", "strategy_banks_"]
    assert old.strategy_ == model.strategy_
    assert isinstance(old.strategy_banks_, StrategyBanks)
    assert list(old.strategy_banks_) == list(model.strategy_banks_)
    for key, one in old.strategy_banks_.items():
        assert not hasattr(one, "strategy_") and not hasattr(one, "strategy_banks_")
        assert one.sparse_growth_.strategy == key
    old.check_integrity()
    pd.testing.assert_frame_equal(old.trace(Xt), model.trace(Xt))


@pytest.fixture(scope="module")
def chain_bank():
    """A fitted any-subset bank and its training rows (routing data)."""
    X, y = make_data(300, 0)
    return fit(300, dag="chain").bank_, X.to_numpy(dtype=float), y


@pytest.mark.parametrize("name", SIMPLEST_FIRST)
def test_a_dag_grown_on_some_rows_never_reads_the_others(chain_bank, name):
    """``choose_strategy`` judges DAGs grown on its fit rows alone: the
    other rows' values and labels change nothing of such a DAG, and only
    the rows it was grown on flow in it."""
    from budgetdag_core.strategies import GrowthInputs, GrowthSettings, grow_strategy

    bank, Xv, y = chain_bank
    rows = np.sort(np.random.default_rng(1).choice(len(y), 200, replace=False))
    others = np.setdiff1d(np.arange(len(y)), rows)
    X2, y2 = Xv.copy(), y.copy()
    X2[others] = np.random.default_rng(2).normal(size=(len(others), Xv.shape[1]))
    y2[others] = 1 - y2[others]
    growths = []
    for X_, y_ in ((Xv, y), (X2, y2)):
        given = GrowthInputs(
            bank, X_, y_, SPEC.names, SPEC.column_indices(), SPEC.cost_vector,
            GrowthSettings(max_states=60), random_state=0, rows=rows,
            required=True,
        )  # fmt: skip
        growths.append(grow_strategy(name, given))
    first, second = growths
    assert first.dag.states == second.dag.states
    assert first.dag.children == second.dag.children
    for k, (a, b) in enumerate(zip(first.flow, second.flow, strict=True)):
        assert np.array_equal(a, b)
        assert np.isin(a, rows).all()
        np.testing.assert_array_equal(first.proba_at(k, a), second.proba_at(k, a))
    assert np.array_equal(first.flow[0], rows)


def test_a_dag_grown_on_every_row_is_the_one_grown_by_default(chain_bank):
    bank, Xv, y = chain_bank
    every = chain_growth(bank, Xv, y, SPEC.names, SPEC.cost_vector)
    given = chain_growth(
        bank, Xv, y, SPEC.names, SPEC.cost_vector, rows=np.arange(len(y))
    )
    assert every.dag.states == given.dag.states
    assert all(np.array_equal(a, b) for a, b in zip(every.flow, given.flow))


def test_the_choice_judges_dags_grown_without_its_held_out_rows(monkeypatch):
    """``grow_on`` is asked for each strategy's DAG on each part's fit rows,
    never with a held-out row; a strategy that finds nothing to grow there
    is judged as the simplest (the numbers of the chain); where no strategy
    but the simplest grows, the simplest is kept unjudged."""
    from budgetdag_core.strategies import _choice as dag_strategy

    n = 240
    y = np.repeat([0, 1], n // 2)
    rng = np.random.default_rng(0)
    base = rng.random(n)
    asked: list[tuple[str, np.ndarray]] = []
    judged: list[tuple[str, np.ndarray]] = []

    def grow_on(name, fit_rows):
        asked.append((name, fit_rows))
        return None if name == "routed" else name

    def held_out_parts(part, val_rows, *_):
        judged.append((part, val_rows))
        return [np.column_stack([base[val_rows], np.zeros(len(val_rows))])]

    monkeypatch.setattr(dag_strategy, "held_out_parts", held_out_parts)
    choice = choose_strategy(
        dict.fromkeys(["chain", "routed", "grown"]), y, lambda g: None,
        None, None, np.ones(2), None, [0.1], grow_on=grow_on,
    )  # fmt: skip
    assert [name for name, _ in asked] == ["chain", "routed", "grown"]
    fit_rows, val_rows = next(validation_folds(y, 0))
    for _, rows in asked:
        assert np.array_equal(rows, fit_rows)
    assert [part for part, _ in judged] == ["chain", "grown"]  # routed: as the chain
    assert not np.intersect1d(judged[0][1], fit_rows).size
    assert choice.scores["routed"] == choice.scores["chain"]
    assert (choice.strategy, choice.folds) == ("chain", 1)

    asked.clear()
    judged.clear()
    alone = choose_strategy(
        dict.fromkeys(["chain", "routed"]), y, lambda g: None,
        None, None, np.ones(2), None, [0.1], grow_on=grow_on,
    )  # fmt: skip
    assert [name for name, _ in asked] == ["chain", "routed"]
    assert judged == [] and alone == StrategyChoice("chain")


def test_held_out_growths_are_grown_once_and_never_saved():
    grown: list[str] = []

    def grow(key):
        def run():
            grown.append(key)
            return f"{key} growth"

        return run

    banks = StrategyBanks({"chain": "bank c", "routed": "bank r"})
    rows = np.arange(10)
    for _ in range(2):
        assert banks.held_out_growth("chain", rows, grow("chain")) == "chain growth"
        assert banks.held_out_growth("routed", rows, grow("routed")) == "routed growth"
    banks.held_out_growth("chain", rows[1:], grow("chain"))
    assert grown == ["chain", "routed", "chain"]
    loaded = pickle.loads(pickle.dumps(banks))
    assert dict(loaded) == dict(banks) and not loaded._held_out
    loaded.held_out_growth("chain", rows, grow("chain"))
    assert grown[-1] == "chain" and len(grown) == 4


class _Pending:
    """A stand-in ``PendingBank``: grows ``grown`` (None: nothing)."""

    def __init__(self, bank, grown, calls):
        self.bank, self.grown, self.calls = bank, grown, calls

    def grow(self, loss_memo):
        self.calls.append(self.bank)
        return self.grown


def test_a_pending_candidate_is_grown_once_when_asked_for():
    """Iterating, ``in`` and ``len`` grow nothing; ``banks[key]`` grows a
    pending candidate once; one that finds nothing to grow leaves the
    candidates; ``items`` grows them all and skips it; the simplest is
    never pending; a pickle keeps what is pending."""
    calls: list[str] = []
    banks = StrategyBanks({
        "chain": "bank c",
        "routed": _Pending("folds r", "bank r", calls),
        "routed@kind": _Pending("folds k", None, calls),
    })  # fmt: skip
    assert list(banks) == ["chain", "routed", "routed@kind"] and len(banks) == 3
    assert "routed" in banks and calls == []
    assert banks.fold_bank("routed") == "folds r"
    assert banks.fold_bank("chain") == "bank c"
    assert banks.grown() == {"chain": "bank c"} and banks.key_of("bank r") is None
    loaded = pickle.loads(pickle.dumps(banks))
    assert not loaded.is_grown("routed") and loaded["routed"] == "bank r"
    calls.clear()
    assert banks["routed"] == "bank r" and banks["routed"] == "bank r"
    assert calls == ["folds r"] and banks.is_grown("routed")
    assert banks.key_of("bank r") == "routed"
    assert banks.items() == [("chain", "bank c"), ("routed", "bank r")]
    assert "routed@kind" not in banks and len(banks) == 2
    with pytest.raises(KeyError):
        banks["routed@kind"]  # it left when items() grew it
    pending = StrategyBanks({"chain": "c", "routed": _Pending("f", None, calls)})
    with pytest.raises(KeyError, match="nothing to grow"):
        pending["routed"]
    with pytest.raises(ValueError, match="simplest"):
        StrategyBanks({"routed": _Pending("folds", "bank", calls)})


def test_a_fit_grows_on_every_row_only_the_strategy_it_keeps():
    X, y = make_data(300, 1)
    model = BudgetDAGClassifier(SPEC, cost_scale=0.01, cv=3, random_state=0).fit(X, y)
    banks = model.strategy_banks_
    assert banks.is_grown("chain") and banks.is_grown(model.strategy_)
    kept = banks.key_of(model.bank_)
    assert set(banks.grown()) <= {"chain", kept}
    # What the bank fit would have grown: a refit keeping it is the same model.
    for key in banks:
        if not banks.is_grown(key):
            with contextlib.suppress(KeyError):
                one = banks[key]
                assert one.sparse_growth_.strategy == strategy_name(key)


@pytest.mark.parametrize("budget", [0, None])
def test_a_fitted_model_keeps_its_held_out_probabilities_within_a_budget(
    monkeypatch, budget
):
    """The held-out growths keep their DAGs and rows once the fit is done,
    without their derived tables; their probabilities stay within
    ``HELD_OUT_BYTES`` (here none, or the default), and a refit on the
    candidates asks the bank only for those forgotten: the same model either
    way, and a refit strips the tables as a fit does."""
    if budget is not None:
        monkeypatch.setattr(_candidates, "HELD_OUT_BYTES", budget)
    X, y = make_data(300, 1)
    model = BudgetDAGClassifier(SPEC, cost_scale=0.01, cv=3, random_state=0).fit(X, y)
    held = [g for g in model.strategy_banks_._held_out.values() if g is not None]
    assert held  # the choice grew the candidates again on its fit rows
    for growth in held:
        assert all(not table.derived for table in growth.proba)
        assert len(growth.flow[0]) > 0 and growth.dag.n_states > 1
        kept = sum(len(table.rows) for table in growth.proba)
        assert (kept == 0) == (budget == 0)
    if budget is None:  # (an empty table still holds a few bytes)
        assert sum(g.table_bytes for g in held) <= _candidates.HELD_OUT_BYTES
    again = BudgetDAGClassifier(SPEC, cost_scale=0.01, cv=3, random_state=0).fit(
        X, y, bank=model.strategy_banks_
    )
    assert again.strategy_ == model.strategy_
    assert again.strategy_validation_ == model.strategy_validation_
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))
    other = model.refit_policies(X, y, 0.02)
    for growth in held:
        assert all(not table.derived for table in growth.proba)
    assert other.strategy_banks_ is model.strategy_banks_


def test_held_out_growths_travel_only_when_asked():
    """A pickled StrategyBanks leaves its held-out growths out (a saved
    model), and keeps them within ``held_out_pickled`` (a copy sent to the
    app's worker): a refit there then grows nothing again, and gives the
    same model as on the original."""
    X, y = make_data(300, 1)
    model = BudgetDAGClassifier(SPEC, cost_scale=0.01, cv=3, random_state=0).fit(X, y)
    held = dict(model.strategy_banks_._held_out)
    assert held
    assert not pickle.loads(pickle.dumps(model)).strategy_banks_._held_out
    with _candidates.held_out_pickled():
        sent = pickle.loads(pickle.dumps(model))
    assert not pickle.loads(pickle.dumps(model)).strategy_banks_._held_out
    copies = sent.strategy_banks_._held_out
    assert copies.keys() == held.keys()
    for token, growth in held.items():
        if growth is not None:
            assert list(copies[token].dag.states) == list(growth.dag.states)
            rows = [len(table.rows) for table in growth.proba]
            assert [len(table.rows) for table in copies[token].proba] == rows
    before = dict(copies)
    refit = sent.refit_policies(X, y, 0.02)
    assert all(copies[token] is growth for token, growth in before.items())
    np.testing.assert_array_equal(
        refit.predict_proba(X), model.refit_policies(X, y, 0.02).predict_proba(X)
    )


def test_held_out_growths_can_travel_apart():
    """Within ``held_out_apart`` the growths leave the model's pickle for a
    list of their own; ``held_out_slots`` and ``restore_held_out`` give them
    back to the unpickled candidates, and a refit there grows nothing."""
    X, y = make_data(300, 1)
    model = BudgetDAGClassifier(SPEC, cost_scale=0.01, cv=3, random_state=0).fit(X, y)
    held = model.strategy_banks_._held_out
    with _candidates.held_out_apart() as apart:
        sent = pickle.dumps(model)
    assert len(apart) == 1 and apart[0].keys() == held.keys()
    with _candidates.held_out_slots() as waiting:
        back = pickle.loads(sent)
    assert list(waiting.values()) == [back.strategy_banks_]
    assert not back.strategy_banks_._held_out
    _candidates.restore_held_out(waiting, pickle.loads(pickle.dumps(apart)))
    copies = back.strategy_banks_._held_out
    assert copies.keys() == held.keys()
    before = dict(copies)
    refit = back.refit_policies(X, y, 0.02)
    assert all(copies[token] is growth for token, growth in before.items())
    np.testing.assert_array_equal(
        refit.predict_proba(X), model.refit_policies(X, y, 0.02).predict_proba(X)
    )


def test_held_out_probabilities_are_kept_in_the_order_grown(monkeypatch):
    """Past the budget, the growths grown last forget their probabilities
    (a choice judges its first parts first)."""

    class Growth:
        def __init__(self, size):
            self.table_bytes, self.derived_left = size, True

        def forget_derived(self):
            self.derived_left = False

        def forget_probabilities(self):
            self.table_bytes = 0

    monkeypatch.setattr(_candidates, "HELD_OUT_BYTES", 10)
    banks = StrategyBanks({"chain": "bank"})
    sizes = [4, 5, 3, 1]
    growths = [
        banks.held_out_growth("chain", np.arange(i + 1), lambda s=s: Growth(s))
        for i, s in enumerate(sizes)
    ]
    banks.strip_held_out()
    assert [g.table_bytes for g in growths] == [4, 5, 0, 1]
    assert not any(g.derived_left for g in growths)


def test_a_sweep_keeps_the_held_out_tables_until_it_ends():
    class Growth:
        forgotten = 0
        table_bytes = _candidates.HELD_OUT_BYTES + 1  # beyond the budget

        def forget_derived(self):
            pass

        def forget_probabilities(self):
            self.forgotten += 1

    banks = StrategyBanks({"chain": "bank"})
    growth = banks.held_out_growth("chain", np.arange(4), Growth)
    with banks.keeping_held_out():
        with banks.keeping_held_out():
            banks.strip_held_out()  # a point's fit ends: kept
        banks.strip_held_out()
        assert growth.forgotten == 0
    assert growth.forgotten == 1  # the sweep ended
    banks.strip_held_out()
    assert growth.forgotten == 2
