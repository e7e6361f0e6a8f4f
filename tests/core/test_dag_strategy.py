"""Many-sensor DAG strategies: the cascade order as a chain, and ``dag="auto"``
keeping the strategy that does better on validation rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from budgetdag_core import BudgetDAGClassifier, SensorSpec, tradeoff_curve
from budgetdag_core.dag_strategy import (
    SIMPLEST_FIRST,
    STRATEGIES,
    StrategyChoice,
    chain_growth,
    keep_within_one_se,
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
    assert model.strategy_ == "chain" and model.strategy_choice_ is None
    assert dag.n_states == SPEC.n_sensors + 1
    for k in range(dag.n_states - 1):
        ((sensor, child),) = dag.children[k]
        assert child == k + 1 and dag.states[child] == dag.states[k] | 1 << sensor
    assert dag.children[-1] == []
    growth = model.bank_.sparse_growth_
    assert all(len(rows) == len(growth.flow[0]) for rows in growth.flow)


def test_the_chain_buys_the_informative_sensors_first():
    X, y = independent_data(600, 0)
    spec = SensorSpec.per_column(list(X.columns))
    model = BudgetDAGClassifier(spec, dag="chain", cv=3, random_state=0).fit(X, y)
    first = {model.spec_.names[u] for u, _ in model.sensor_dag_.children[0]}
    second = {model.spec_.names[u] for u, _ in model.sensor_dag_.children[1]}
    assert first | second <= {"s0", "s1", "s2", "s3"}


def test_auto_keeps_the_grown_dag_where_rows_need_different_sensors():
    # s0 says which of s1, s2 carries the class: the chain must buy all three.
    model = fit()
    assert model.strategy_ == "grown"
    table = model.strategy_choice_.table()
    assert set(table["strategy"]) == set(STRATEGIES)
    assert table.loc[table["chosen"], "loss"].min() == table["loss"].min()
    X, y = make_data(2000, 5)
    chain = fit(dag="chain").evaluate(X, y)
    assert model.evaluate(X, y)["avg_loss"] < chain["avg_loss"]


def test_auto_keeps_the_strategy_of_least_held_out_loss():
    X, y = independent_data(300, 1)
    spec = SensorSpec.per_column(list(X.columns))
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
        for simpler in SIMPLEST_FIRST[: SIMPLEST_FIRST.index(kept)]:
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
    banks = result.bank.strategy_banks_
    assert set(banks) == set(STRATEGIES)
    for model in result.models:
        assert model.bank_ is banks[model.strategy_]
    dag = result.frame.query("method == 'dag' and split == 'test'")
    for model, (_, row) in zip(result.models, dag.iterrows(), strict=True):
        assert row["avg_cost"] == pytest.approx(model.evaluate(Xt, yt)["avg_cost"])
    # The cascade reads the sweep's bank (the chain's states), whichever
    # strategy its first point kept.
    assert "grown" in {m.strategy_ for m in result.models}
    assert result.bank.strategy_ == "chain"
    assert result.cascade.dag is result.bank.sparse_growth_.dag
    # A fit with the same settings keeps what the sweep's point kept.
    alone = fit(cost_scale=0.02)
    pd.testing.assert_frame_equal(alone.trace(Xt), result.models[1].trace(Xt))


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
