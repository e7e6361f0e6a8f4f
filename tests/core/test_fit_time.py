"""estimate_fit_seconds: grows with the work, follows the bank kind, checks input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from budgetdag_core.estimates import estimate_fit_seconds as estimate_with_probe
from budgetdag_core.tradeoff import estimate_policy_seconds
from budgetdag_core.tradeoff._fit_time import AUTO_SCALE_TRIALS


def estimate_fit_seconds(*args, **kwargs):
    """The estimate for a machine of 8 cores whose kernels are compiled
    (unless a test says otherwise): independent of where the tests run."""
    kwargs = {"kernels_ready": True, "n_cores": 8, **kwargs}
    return estimate_with_probe(*args, **kwargs)


def test_estimate_grows_with_rows_states_and_classes():
    base = estimate_fit_seconds(4000, 16, 6, "hgb")
    assert estimate_fit_seconds(8000, 16, 6, "hgb") > 1.8 * base
    assert estimate_fit_seconds(4000, 32, 6, "hgb") > 1.8 * base
    assert estimate_fit_seconds(4000, 16, 26, "hgb") > 3 * base
    # Two classes need one tree per round, three need three.
    assert estimate_fit_seconds(4000, 16, 3, "hgb") > estimate_fit_seconds(
        4000, 16, 2, "hgb"
    )
    assert estimate_fit_seconds(4000, 16, 6, "hgb", n_jobs=2) < base


def test_auto_follows_the_estimator_and_the_masked_bank_scales_with_masks():
    assert estimate_fit_seconds(4000, 16, 6) == estimate_fit_seconds(4000, 16, 6, "hgb")
    assert estimate_fit_seconds(4000, 512, 6) == estimate_fit_seconds(
        4000, 512, 6, "masked"
    )
    few = estimate_fit_seconds(4000, 512, 6, "masked", masks_per_row=4)
    assert few < estimate_fit_seconds(4000, 512, 6, "masked", masks_per_row=16)
    # The logistic bank is the cheap one.
    assert estimate_fit_seconds(4000, 16, 6, "per_subset") < estimate_fit_seconds(
        4000, 16, 6, "hgb"
    )


def test_landsat_estimate_is_in_the_measured_range():
    # grid of bank settings on a quiet 2-core machine (learning rate 0.25, 63
    # bins, patience 5): the bank takes about 6 CPU s, the policies 0.2 s.
    assert 3 < estimate_fit_seconds(4435, 16, 6) < 12


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0, 16, 6), "n_rows"),
        ((100, 0, 6), "n_states"),
        ((100, 16, 1), "n_classes"),
        ((100, 16, 3, "forest"), "Unknown bank kind 'forest'"),
    ],
)
def test_bad_arguments_are_named(args, message):
    with pytest.raises(ValueError, match=message):
        estimate_fit_seconds(*args)


def test_more_workers_than_masked_folds_do_not_shorten_the_estimate():
    five = estimate_fit_seconds(20_000, 512, 7, "masked", cv=5, n_jobs=5)
    assert estimate_fit_seconds(20_000, 512, 7, "masked", cv=5, n_jobs=8) == five
    assert estimate_fit_seconds(20_000, 512, 7, "masked", cv=5, n_jobs=2) > five
    # The per-state bank has a fit per state and fold: eight workers share them.
    assert estimate_fit_seconds(4000, 16, 6, "hgb", n_jobs=8) < estimate_fit_seconds(
        4000, 16, 6, "hgb", n_jobs=5
    )


def test_letter_estimate_follows_its_longer_fits():
    # letter (16 000 rows, 26 classes, 8 states) fitted in 56.5 s on 2 cores
    # (benchmarks/bench_fit_predict_speed.py): its fits stop later than landsat's,
    # which the rows scaling of the rounds accounts for (within the factor of two).
    estimate = estimate_fit_seconds(16000, 8, 26, "hgb", n_jobs=2)
    assert 56.5 / 2 < estimate < 56.5 * 2


def test_rounds_grow_like_the_square_root_of_the_rows():
    from budgetdag_core.bank._models import MAX_ROUNDS
    from budgetdag_core.tradeoff._fit_time import (
        REFERENCE_ROWS,
        TYPICAL_ROUNDS,
        boosting_rounds,
    )

    assert boosting_rounds(REFERENCE_ROWS) == TYPICAL_ROUNDS["hgb"]
    # fewer rows do not stop earlier (pima, toy, digits: measured)
    assert boosting_rounds(500) == TYPICAL_ROUNDS["hgb"]
    assert boosting_rounds(500, "masked") == TYPICAL_ROUNDS["masked"]
    four_times = boosting_rounds(4 * REFERENCE_ROWS)
    assert four_times == pytest.approx(2 * TYPICAL_ROUNDS["hgb"])
    # early stopping never runs past the cap
    assert boosting_rounds(10**9) == MAX_ROUNDS


def test_cores_cap_the_workers_and_a_cold_start_adds_the_compilation():
    two_cores = estimate_fit_seconds(4000, 16, 6, "hgb", n_jobs=8, n_cores=2)
    assert two_cores == estimate_fit_seconds(4000, 16, 6, "hgb", n_jobs=2)
    assert two_cores > estimate_fit_seconds(4000, 16, 6, "hgb", n_jobs=8)
    cold = estimate_fit_seconds(4000, 16, 6, "hgb", kernels_ready=False)
    assert cold > estimate_fit_seconds(4000, 16, 6, "hgb") + 1


def test_wider_tables_take_longer():
    narrow = estimate_fit_seconds(1347, 16, 10, "hgb", n_columns=8)
    assert estimate_fit_seconds(1347, 16, 10, "hgb", n_columns=64) > 1.5 * narrow
    masked = estimate_fit_seconds(1347, 256, 10, "masked", n_columns=8)
    assert estimate_fit_seconds(1347, 256, 10, "masked", n_columns=64) > masked


def test_estimate_for_reads_the_data_and_settings():
    from budgetdag_core import load_demo
    from budgetdag_core.estimates import estimate_fit_seconds_for

    demo = load_demo("landsat")
    # cost_scale="auto" (the default) learns the policies at several scales.
    auto = {"policy_fits": AUTO_SCALE_TRIALS}
    expected = estimate_with_probe(4435, 16, 6, "hgb", n_columns=36, n_jobs=2, **auto)
    landsat = estimate_fit_seconds_for(demo.spec, demo.X_train, demo.y_train, n_jobs=2)
    assert landsat == expected
    fixed = estimate_fit_seconds_for(
        demo.spec, demo.X_train, demo.y_train, n_jobs=2, cost_scale=0.01
    )
    assert fixed == estimate_with_probe(4435, 16, 6, "hgb", n_columns=36, n_jobs=2)
    assert fixed < landsat
    spam = load_demo("spam")
    subsets = estimate_fit_seconds_for(
        spam.spec, spam.X_train, spam.y_train, n_subsets=8
    )
    assert subsets == estimate_with_probe(3450, 256, 2, "masked", n_columns=57, **auto)
    # All sensors as the last subset: any union holding it is the full state.
    with_all = estimate_fit_seconds_for(
        spam.spec, spam.X_train, spam.y_train, n_subsets=8, include_all=True
    )
    assert with_all == estimate_with_probe(3450, 129, 2, "masked", n_columns=57, **auto)
    assert with_all < subsets


def test_auto_scale_counts_each_trials_graph_reduce():
    """Issue 53: ``cost_scale="auto"`` runs a Graph-Reduce per scale tried,
    on every DAG: the policies' share of the estimate is that many times
    one's (a 2 048-state full DAG's fit was mostly its policies)."""
    one = estimate_fit_seconds(133, 2048, 3, "masked", first_fit=False)
    auto = estimate_fit_seconds(
        133, 2048, 3, "masked", first_fit=False, policy_fits=AUTO_SCALE_TRIALS
    )
    policies = estimate_policy_seconds(133, 2048, fit_call=False)
    assert auto - one == pytest.approx((AUTO_SCALE_TRIALS - 1) * policies)
    with pytest.raises(ValueError, match="policy_fits"):
        estimate_fit_seconds(133, 2048, 3, policy_fits=0.5)


def test_a_processs_first_fit_adds_its_fixed_cost():
    from budgetdag_core.tradeoff._fit_time import FIRST_FIT_SECONDS

    warm = estimate_fit_seconds(4000, 16, 6, "hgb", first_fit=False)
    first = estimate_fit_seconds(4000, 16, 6, "hgb", first_fit=True)
    assert first == pytest.approx(warm + FIRST_FIT_SECONDS)


def test_selected_states_are_the_fits_and_replace_the_most_states():
    from budgetdag_core import BudgetDAGClassifier, load_demo
    from budgetdag_core._compiled import kernels_loaded
    from budgetdag_core.estimates import estimate_fit_seconds_for
    from budgetdag_core.tradeoff import dag_states_at_most, selected_dag_states

    cube = load_demo("cube_nm")
    params = {"n_subsets": 8, "include_all": True, "bank_kind": "masked", "cv": 2}
    params["random_state"] = 0
    X, y = cube.X_train, cube.y_train
    states, seconds = selected_dag_states(cube.spec, X, y, **params)
    model = BudgetDAGClassifier(cube.spec, **params)
    model.fit(cube.X_train, cube.y_train)
    # The selection runs as the fit's does: the same DAG.
    assert states == model.sensor_dag_.n_states
    assert states < dag_states_at_most(cube.spec.n_sensors, 8, include_all=True)
    assert seconds >= 0
    assert kernels_loaded()  # this process has fitted
    # The estimate counts the selected states and the selection's seconds.
    n_rows, n_columns = len(cube.X_train), len(cube.spec.columns)
    counted = estimate_fit_seconds_for(
        cube.spec,
        cube.X_train,
        cube.y_train,
        selected=(13, 0.5),
        first_fit=False,
        **params,
    )
    expected = estimate_with_probe(
        n_rows, 13, 8, "masked", cv=2, n_columns=n_columns, first_fit=False,
        policy_fits=AUTO_SCALE_TRIALS,
    )  # fmt: skip
    assert counted == pytest.approx(0.5 + expected)
    at_most = estimate_fit_seconds_for(
        cube.spec, cube.X_train, cube.y_train, first_fit=False, **params
    )
    assert at_most > expected
    # Without n_subsets the fit selects nothing.
    assert selected_dag_states(cube.spec, cube.X_train, cube.y_train) is None


def test_a_selection_that_would_take_too_long_is_skipped():
    from budgetdag_core import load_demo
    from budgetdag_core.tradeoff import selected_dag_states

    spam = load_demo("spam")
    # 57 sensors x 3 450 rows: about a second of ridge scores, more than 0.1 s.
    args = (spam.spec, spam.X_train, spam.y_train)
    assert selected_dag_states(*args, n_subsets=8, max_seconds=0.1) is None


def test_the_probes_fold_is_the_fits_first_fold_and_scales_the_estimate():
    from budgetdag_core import BudgetDAGClassifier, load_demo
    from budgetdag_core.estimates import estimate_fit_seconds_for
    from budgetdag_core.tradeoff import FitProbe, probe_fit
    from budgetdag_core.tradeoff._fit_time import MASKED_SCORING_SHARE

    cube = load_demo("cube_nm")
    params = {"n_subsets": 8, "include_all": True, "bank_kind": "masked", "cv": 3}
    params["random_state"] = 0
    X, y = cube.X_train, cube.y_train
    probe = probe_fit(cube.spec, X, y, **params)
    model = BudgetDAGClassifier(cube.spec, **params).fit(X, y)
    assert probe.n_states == model.sensor_dag_.n_states
    assert probe.fits == 3 and probe.fold_seconds > 0
    # The probe fits exactly the model the fit fits first (same stack, seed,
    # early stopping): its rounds are the fit's.
    bank = model._new_bank(model.sensor_dag_)
    spec, Xv, y_fit, _ = model.check_fit_data(X, y)
    first = bank.fit_first_fold(
        Xv, y_fit, model.sensor_dag_, spec.column_indices(), len(model.classes_)
    )
    fitted = model.bank_.model_[0]
    assert first.n_iter_ == fitted.n_iter_
    np.testing.assert_array_equal(first.leaf_value_, fitted.leaf_value_)

    # The estimate's bank grows with the timed fold, linearly (long enough
    # that a fresh install's compilation overlaps none of it).
    def estimate(seconds):
        timed = FitProbe(probe.n_states, 0.0, seconds, 3)
        return estimate_fit_seconds_for(
            cube.spec, X, y, probe=timed, first_fit=False, n_jobs=1, **params
        )

    assert estimate(20.0) - estimate(10.0) == pytest.approx(
        MASKED_SCORING_SHARE * 3 * 10.0
    )
    # A fold predicted too long is not fitted: the estimate models it.
    skipped = probe_fit(cube.spec, X, y, fold_max_seconds=0.0, **params)
    assert skipped.fold_seconds is None and skipped.n_states == probe.n_states


def test_a_many_sensor_fit_is_probed_and_estimated_as_the_library_fits_it():
    from budgetdag_core import BudgetDAGClassifier, SensorSpec
    from budgetdag_core.estimates import estimate_fit_seconds_for, probe_fit

    # 14 one-column sensors, beyond the full DAG; the label from three.
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 14)), columns=[f"x{i}" for i in range(14)])
    y = pd.Series((X["x0"] + X["x1"] - X["x2"] > 0).astype(int))
    spec = SensorSpec.per_column(list(X.columns))
    params = {"cv": 3, "random_state": 0}
    probe = probe_fit(spec, X, y, **params)
    model = BudgetDAGClassifier(spec, **params).fit(X, y)
    # The strategies and their most states are the library's own.
    assert probe.strategies == model.fit_plan(spec).strategies()
    assert probe.strategies["chain"] == spec.n_sensors + 1
    kept = probe.strategies[model.strategy_]
    assert model.sensor_dag_.n_states <= kept
    # The bank's kind was chosen on validation rows (timed, as the fit's
    # first step), and the timed fold is of the kind the fit chose.
    fitted = model.bank_.fold_models_[0]
    again = model.fit_plan(spec).new_bank()
    assert again.choose_kind(
        X.to_numpy(), y.to_numpy(),
        spec.column_indices(), 2,
    ) == model.bank_.kind_  # fmt: skip
    assert type(again.template()) is type(fitted)
    assert probe.select_seconds > 0
    assert probe.fits == 3 and probe.fold_seconds > 0

    # The estimate counts the strategies the fit builds: the chain alone is
    # cheaper than the chain and the routed DAG; the routed DAG alone, kept
    # at every scale the search tries, costlier than the chain.
    def estimate(**extra):
        return estimate_fit_seconds_for(
            spec, X, y, probe=probe, first_fit=False, n_jobs=1, **params, **extra
        )

    assert 0 < estimate(dag="chain") < estimate()
    assert estimate(dag="chain") < estimate(dag="routed")
    # ... and the seconds the choice of kind took.
    unchosen = dataclasses.replace(probe, select_seconds=0.0)
    assert estimate() - estimate_fit_seconds_for(
        spec, X, y, probe=unchosen, first_fit=False, n_jobs=1, **params
    ) == pytest.approx(probe.select_seconds)
    # Not the 2^14 states of a full DAG: seconds, as the fit.
    assert estimate() < 60
    # A fold too long to time is modelled, but the kind is still chosen:
    # it decides what scoring the strategies' candidates costs.
    untimed = probe_fit(spec, X, y, fold_max_seconds=0.0, **params)
    assert untimed.fold_seconds is None and untimed.kind == model.bank_.kind_
    assert untimed.select_seconds > 0
    kindless = dataclasses.replace(untimed, kind=None, select_seconds=0.0)
    assert estimate_fit_seconds_for(
        spec, X, y, probe=untimed, first_fit=False, n_jobs=1, **params
    ) != estimate_fit_seconds_for(
        spec, X, y, probe=kindless, first_fit=False, n_jobs=1, **params
    )


def test_the_probe_counts_the_strategies_the_fit_builds():
    from budgetdag_core import BudgetDAGClassifier, SensorSpec
    from budgetdag_core.estimates import probe_fit

    n = 300
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(n, 14)), columns=[f"x{i}" for i in range(14)])
    y = pd.Series((X["x0"] - X["x1"] > 0).astype(int))
    spec = SensorSpec.per_column(list(X.columns))
    # dag="auto" grows no grown DAG, so the probe (which the estimate and
    # the app's plan words follow) must not count one; asked for, it does.
    for dag, built in (("auto", {"chain", "routed"}), ("sparse", {"grown"})):
        model = BudgetDAGClassifier(spec, dag=dag, cv=3, random_state=0)
        assert set(model.fit_plan(spec).strategies()) == built
        assert set(model.fit_plan(spec, n).strategies()) == built
    probe = probe_fit(spec, X, y, cv=3, random_state=0)
    assert set(probe.strategies) == {"chain", "routed"}


def test_a_continuous_target_is_estimated_as_the_regressor_fits_it():
    # A continuous target goes to BudgetDAGRegressor: a regressor per state
    # and fold (cv + 1 fits each), not a masked classifier bank over its
    # distinct values taken as classes.
    from budgetdag_core import SensorSpec
    from budgetdag_core.estimates import estimate_fit_seconds_for

    rng = np.random.default_rng(0)
    X = rng.normal(size=(309, 10))
    spec = SensorSpec.per_column([f"x{i}" for i in range(10)])
    y = X @ rng.normal(size=10)
    full = {"dag": "full", "first_fit": False}
    boosting = estimate_fit_seconds_for(spec, X, y, **full)
    ridge = estimate_fit_seconds_for(spec, X, y, regressor="ridge", **full)
    assert boosting > 60 and ridge < boosting / 5
    # Twice the states (a sensor more): about twice the regressor fits.
    X11 = np.c_[X, rng.normal(size=309)]
    spec11 = SensorSpec.per_column([f"x{i}" for i in range(11)])
    assert estimate_fit_seconds_for(spec11, X11, y, **full) > 1.8 * boosting
    # Integer labels stay a classification.
    labels = (y > 0).astype(int)
    assert estimate_fit_seconds_for(spec, X, labels, **full) < boosting
    # dag="auto" leaves so long a full DAG (estimator._dag_choice): its
    # estimate is the chain's and routed DAG's.
    assert estimate_fit_seconds_for(spec, X, y, first_fit=False) < boosting / 20


def test_a_per_state_banks_probe_fits_states_as_the_bank_does():
    """The probe's per-state fits are the bank's own first-fold models; the
    estimate's bank is their measured seconds x non-empty states x fits."""
    from budgetdag_core import BudgetDAGClassifier, load_demo
    from budgetdag_core.estimates import estimate_fit_seconds_for
    from budgetdag_core.tradeoff import FitProbe, probe_fit

    pima = load_demo("pima")
    X, y = pima.X_train.iloc[:200], pima.y_train.iloc[:200]
    params = {"bank_kind": "hgb", "cv": 3, "random_state": 0, "cost_scale": 0.01}
    probe = probe_fit(pima.spec, X, y, **params)
    assert probe.n_states == 8 and probe.fits == 3
    assert probe.state_seconds > 0 and probe.model_bytes > 0
    model = BudgetDAGClassifier(pima.spec, **params).fit(X, y)
    spec, Xv, y_fit, _ = model.check_fit_data(X, y)
    bank = model._new_bank(model.sensor_dag_)
    for state in (1, 7):
        first = bank.fit_state_fold(
            Xv, y_fit, model.sensor_dag_, spec.column_indices(), 2, state
        )
        fitted = model.bank_.models_[state][0]
        assert first.n_iter_ == fitted.n_iter_
        np.testing.assert_array_equal(first.leaf_value_, fitted.leaf_value_)
    with pytest.raises(ValueError, match="state"):
        bank.fit_state_fold(Xv, y_fit, model.sensor_dag_, spec.column_indices(), 2, 8)

    def estimate(seconds):
        timed = dataclasses.replace(probe, state_seconds=seconds)
        return estimate_fit_seconds_for(
            pima.spec, X, y, probe=timed, first_fit=False, n_jobs=1, **params
        )

    assert estimate(0.2) - estimate(0.1) == pytest.approx(0.1 * 7 * 3)
    assert isinstance(probe, FitProbe)


def test_strategy_states_are_the_typical_dags_simplest_first():
    from budgetdag_core.estimates import strategy_states
    from budgetdag_core.tradeoff._fit_time import (
        GROWN_STATES_PER_ROW,
        MAX_ROUTES,
        routed_states,
    )

    most = {"grown": 1000, "routed": 838, "chain": 31}
    states = strategy_states(most, 426, 30)
    assert list(states) == ["chain", "routed", "grown"]  # the simplest first
    assert states["chain"] == 31
    assert states["grown"] == min(1000, int(GROWN_STATES_PER_ROW * 426))
    # Two classes: the chain and a route's group orders (7 sensors each).
    assert states["routed"] == routed_states(426, 30, 2) == 31 + MAX_ROUTES * 7
    # Three classes or more add the posterior tree's leaves, as rows allow.
    many = strategy_states(most, 426, 30, n_classes=3)["routed"]
    assert states["routed"] < many <= 838
    assert routed_states(300, 30, 3) < routed_states(3000, 30, 3)
    # At most what the strategy can grow.
    assert strategy_states(most, 100_000, 30) == {
        "chain": 31,
        "routed": 87,
        "grown": 1000,
    }
    assert strategy_states({"routed": 50}, 3000, 30, n_classes=5) == {"routed": 50}
    with pytest.raises(ValueError, match="n_rows"):
        strategy_states(most, 0, 30)


def test_a_many_sensor_estimate_counts_the_kept_strategys_graph_reduces():
    """Issue 53: the grown DAG's fit was estimated at a third of its time:
    its Graph-Reduces (one per scale the auto cost scale tries, rolling
    rows out over up to 1 000 states) were counted once, at a chain's
    cost per state. The choice among several strategies fits each one's
    policies once; the kept one (the simplest) is reduced per trial."""
    from budgetdag_core import SensorSpec
    from budgetdag_core.tradeoff._fit_time import (
        GROWN_ROLLOUT_FACTOR,
        estimate_policy_seconds,
        sparse_fit_parts,
    )

    spec = SensorSpec.per_column([f"x{i}" for i in range(30)])

    def parts(strategies, trials=1.0):
        return sparse_fit_parts(
            spec, 426, 2, strategies, cv=5, n_jobs=1, probe=None, masks=16,
            trials=trials,
        )  # fmt: skip

    grown, chain = parts({"grown": 1000}), parts({"chain": 31})
    assert grown["choose"] == chain["choose"] == 0.0  # one strategy: no choice
    assert grown["policies"] == pytest.approx(
        GROWN_ROLLOUT_FACTOR
        * estimate_policy_seconds(426, 852, fit_call=False, children=1.0)
    )
    assert parts({"grown": 1000}, 5.5)["policies"] == pytest.approx(
        5.5 * grown["policies"]
    )
    assert grown["bank"] == chain["bank"]  # one any-subset bank
    both = parts({"grown": 1000, "chain": 31}, 5.5)
    assert both["policies"] == pytest.approx(5.5 * chain["policies"])
    # The choice grows each DAG again on the first split's fit rows (fewer
    # rows: less than each one's growth on every row), then learns each
    # one's policies; on every row, only the kept (the first) is grown.
    regrowth = both["choose"] - (grown["policies"] + chain["policies"])
    assert 0.0 < regrowth < grown["growth"] + chain["growth"]
    assert both["growth"] == pytest.approx(chain["growth"])
    assert grown["growth"] > chain["growth"]
