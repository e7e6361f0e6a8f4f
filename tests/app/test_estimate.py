"""The app's time estimates: a training's seconds, the queue, the time left."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ui import estimate, jobs
from ui.data import demo_dataset, load_app_demo
from ui.estimate import TimeLeft, training_seconds
from ui.training import TrainSettings


@pytest.fixture(scope="module")
def landsat():
    return demo_dataset(load_app_demo("landsat"))


def test_training_seconds_counts_the_work(landsat):
    spec = landsat.spec
    full = training_seconds(landsat, spec, TrainSettings(), busy=1.0)
    reused = training_seconds(
        landsat, spec, TrainSettings(), bank_reused=True, busy=1.0
    )
    budget = training_seconds(landsat, spec, TrainSettings(target_budget=2.0), busy=1.0)
    result = estimate.RESULT_SECONDS  # showing the result: the same for both
    assert 0 < reused - result < (full - result) / 5  # policies only
    assert budget > reused
    # Fewer sensors: fewer states, fewer columns.
    small = spec.subset(spec.names[:2])
    assert training_seconds(landsat, small, TrainSettings(), busy=1.0) < full
    # A busy machine stretches long work by its factor, short work less.
    assert training_seconds(landsat, spec, TrainSettings(), busy=3.0) > full
    assert estimate.stretched(60.0, 3.0) == pytest.approx(180.0)
    assert estimate.stretched(1.0, 3.0) == pytest.approx(1.2)


def test_the_bar_shares_evaluation_and_result_by_their_seconds(landsat):
    spec, settings = landsat.spec, TrainSettings()
    fit, evaluation = estimate.training_parts(landsat, spec, settings)
    per = estimate.EVALUATE_SECONDS_PER_ROW_STATE
    assert evaluation == pytest.approx(per * len(landsat.test) * 16)  # 16 states
    total = fit + evaluation + estimate.RESULT_SECONDS
    assert training_seconds(landsat, spec, settings, busy=1.0) == pytest.approx(total)
    shares = estimate.progress_shares(fit, evaluation)
    assert shares == {
        "evaluate_share": pytest.approx(evaluation / total),
        "result_share": pytest.approx(estimate.RESULT_SECONDS / total),
    }


def test_busy_factor_is_at_least_one():
    assert estimate.busy_factor() >= 1.0


def test_the_apps_ended_work_is_not_counted_as_competition(monkeypatch):
    # Where the system has no count of runnable tasks, the load average: a
    # minute of 2-thread work that just ended adds 2 (1 - 1/e) = 1.26 to it;
    # two minutes later 1.26 / e^2 = 0.17.
    ended = [(0.0, 60.0, 2)]
    assert estimate.lingering_load(ended, now=60.0) == pytest.approx(1.264, abs=1e-3)
    assert estimate.lingering_load(ended, now=180.0) == pytest.approx(0.171, abs=1e-3)
    monkeypatch.setattr(estimate, "runnable_now", lambda: None)
    monkeypatch.setattr(estimate.os, "getloadavg", lambda: (3.0, 3.0, 3.0))
    monkeypatch.setattr(estimate.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(estimate, "_ENDED", type(estimate._ENDED)(maxlen=32))
    monkeypatch.setattr(estimate, "_RUNNING", [])
    monkeypatch.setattr(estimate, "kernels_compiling", lambda: False)
    assert estimate.busy_factor(1) == pytest.approx(2.0)  # (3 + 1) / 2
    now = estimate.time.monotonic()
    estimate.work_ended(now - 600, now, 2)  # ten minutes of 2 threads, just ended
    assert estimate.busy_factor(1) == pytest.approx((3 - 2 + 1) / 2, abs=1e-3)


def test_busy_counts_other_work_but_not_the_jobs_it_waits_for(
    monkeypatch,
):
    monkeypatch.setattr(estimate, "runnable_now", lambda: 3.0)
    monkeypatch.setattr(estimate.os, "getloadavg", lambda: (5.0, 5.0, 5.0))
    monkeypatch.setattr(estimate.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(estimate, "app_workers", lambda: 1)
    monkeypatch.setattr(estimate, "_RUNNING", [])
    monkeypatch.setattr(estimate, "_ENDED", type(estimate._ENDED)(maxlen=32))
    monkeypatch.setattr(estimate, "kernels_compiling", lambda: False)
    # The smaller count: the load average still counts work that just ended.
    assert estimate.busy_factor(1) == pytest.approx(2.0)  # (3 + 1) / 2
    monkeypatch.setattr(estimate.os, "getloadavg", lambda: (1.0, 1.0, 1.0))
    # ... and the runnable tasks include bursts that end within seconds.
    assert estimate.busy_factor(1) == pytest.approx(1.0)  # (1 + 1) / 2
    monkeypatch.setattr(estimate.os, "getloadavg", lambda: (5.0, 5.0, 5.0))
    # The pool's one worker runs a 2-thread job: new work waits for it (the
    # queue's wait counts it), so its threads are not competition.
    estimate.work_started(2)
    assert estimate.busy_factor(1) == pytest.approx(1.0)  # (3 - 2 + 1) / 2
    estimate.work_ended(0.0, 1.0, 2)
    assert estimate._RUNNING == []
    # With a worker free, new work runs beside the running job: it counts.
    monkeypatch.setattr(estimate, "app_workers", lambda: 2)
    estimate.work_started(2)
    assert estimate.busy_factor(1) == pytest.approx(2.0)
    # After an install the kernels' compiling child runs: the estimate
    # counts its compiling itself.
    monkeypatch.setattr(estimate, "kernels_compiling", lambda: True)
    assert estimate.busy_factor(1) == pytest.approx(1.5)  # (3 - 1 + 1) / 2


@pytest.mark.skipif(
    not Path("/proc/loadavg").exists(),
    reason="no kernel count of runnable tasks outside Linux: runnable_now() is "
    "None there and busy_factor uses the load average (tested above)",
)
def test_runnable_now_sees_work_that_just_started():
    before = estimate.runnable_now()
    assert before is not None and before >= 0
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        # Runnable from its first instant (running or waiting for a core);
        # the load average would take a minute to count it fully.
        time.sleep(0.2)
        assert estimate.runnable_now(samples=20) >= 0.9
    finally:
        spinner.kill()
        spinner.wait()


def test_time_left_counts_down_and_says_when_it_goes_up():
    left = TimeLeft(estimate=100.0)
    shown = [left.update(t, f) for t, f in [(0, 0.0), (10, 0.1), (20, 0.2)]]
    assert shown[0] == pytest.approx(100.0)
    assert all(b <= a for a, b in zip(shown, shown[1:], strict=False))
    assert not left.revised
    # The pace says much slower than estimated: revised up, and flagged.
    late = left.update(60, 0.25)
    assert late > shown[-1] and left.revised


def test_time_left_is_monotone_under_noisy_progress():
    rng = np.random.default_rng(0)
    left = TimeLeft(estimate=50.0)
    fraction, previous = 0.0, None
    for t in np.arange(0, 60, 1.0):
        # Uneven steps, as the bank's fits end in bursts.
        fraction = min(1.0, fraction + rng.choice([0.0, 0.0, 0.01, 0.05]))
        shown = left.update(float(t), fraction)
        if previous is not None and not left.revised:
            assert shown <= previous + 1e-9
        previous = shown


def test_time_left_without_estimate_waits_for_progress():
    left = TimeLeft()
    assert left.update(1.0, 0.0) is None
    assert left.update(10.0, 0.5) == pytest.approx(10.0)


def test_queue_wait_replays_the_running_and_waiting_jobs():
    pool = jobs.Pool(1)

    class Slot:  # a slot running a job with 30 s left
        def __init__(self, job):
            self.job = job

    running = jobs.Job("train", "a", lambda progress: None, estimate=30.0)
    pool._slots.append(Slot(running))
    waiting = jobs.Job("train", "b", lambda progress: None, estimate=20.0)
    pool._queue.append(waiting)
    assert pool.wait_seconds(waiting) == pytest.approx(30.0)
    assert pool.wait_seconds() == pytest.approx(50.0)  # a job submitted now
    pool._slots.clear()


def test_a_workers_first_fit_is_counted_until_each_worker_has_run_a_job(
    landsat, monkeypatch
):
    from budgetdag_core.tradeoff._fit_time import FIRST_FIT_SECONDS

    monkeypatch.setattr(estimate, "_WARM_WORKERS", set())
    monkeypatch.setattr(estimate, "app_workers", lambda: 2)
    spec, chosen = landsat.spec, TrainSettings()
    cold = training_seconds(landsat, spec, chosen, busy=1.0)
    assert cold == training_seconds(landsat, spec, chosen, busy=1.0, first_fit=True)
    warm = training_seconds(landsat, spec, chosen, busy=1.0, first_fit=False)
    assert cold == pytest.approx(warm + FIRST_FIT_SECONDS)
    estimate.work_ended(0.0, 1.0, 1, worker=101)
    assert not estimate.workers_warm()  # the other worker has not fitted yet
    estimate.work_ended(1.0, 2.0, 1, worker=102)
    estimate.work_ended(2.0, 3.0, 1)  # work whose worker was ended meanwhile
    assert estimate.workers_warm()
    assert training_seconds(landsat, spec, chosen, busy=1.0) == pytest.approx(warm)
    estimate.worker_ended(102)  # e.g. stopped: its replacement starts cold
    assert not estimate.workers_warm()


def test_a_subset_dag_counts_the_states_and_rounds_its_probe_measures(monkeypatch):
    from budgetdag_core.tradeoff import dag_states_at_most

    cube = demo_dataset(load_app_demo("cube_nm"))
    spec = cube.spec
    chosen = TrainSettings(classifier="masked_boosting", n_subsets=8)
    calls = []
    real = estimate.probe_fit

    def counted(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(estimate, "probe_fit", counted)
    monkeypatch.setattr(estimate, "_PROBES", {})
    seconds = training_seconds(cube, spec, chosen, busy=1.0, first_fit=False)
    again = training_seconds(cube, spec, chosen, busy=1.0, first_fit=False)
    assert len(calls) == 1  # the page's reruns reuse the probe
    # ... and so does a change of the policies' settings alone.
    other_policies = TrainSettings(
        classifier="masked_boosting", n_subsets=8, policy_degree=2
    )
    training_seconds(cube, spec, other_policies, busy=1.0, first_fit=False)
    assert len(calls) == 1
    params = estimate.estimate_params(chosen)
    params.pop("n_jobs")
    probe = estimate.fit_probe(cube, spec, params, len(cube.train))
    assert probe.n_states < dag_states_at_most(spec.n_sensors, 8, include_all=True)
    assert probe.fold_seconds > 0  # a small masked bank: its first fold is timed
    # Without the probe the estimate counts the most states the DAG could
    # have and models the rounds; it still answers. (Not compared with the
    # probed one in seconds: the probe's are measured, and a loaded machine
    # stretches them past the model's.)
    monkeypatch.setattr(estimate, "_PROBES", {})
    monkeypatch.setattr(estimate, "probe_fit", lambda *a, **k: None)
    at_most = training_seconds(cube, spec, chosen, busy=1.0, first_fit=False)
    assert seconds == again and 0 < at_most < float("inf")
    # A setting the fit rejects: no probe, and the estimate still answers.
    monkeypatch.setattr(estimate, "_PROBES", {})
    monkeypatch.setattr(estimate, "probe_fit", real)
    rejected = {**params, "cv": 1}
    assert estimate.fit_probe(cube, spec, rejected, len(cube.train)) is None
    # The per-state bank of landsat: the states, nothing timed.
    landsat = demo_dataset(load_app_demo("landsat"))
    probe = estimate.fit_probe(landsat, landsat.spec, {}, len(landsat.train))
    assert (probe.n_states, probe.fold_seconds) == (16, None)


def test_the_stored_size_counts_the_models_the_probe_measured(landsat):
    """Issue 53: the bank's models at their measured size (each non-empty
    state's folds), each grown strategy's kept probabilities in full only."""
    import dataclasses

    from budgetdag_core.estimates import FitProbe
    from ui import footprint

    settings = TrainSettings(classifier="hist_gradient_boosting")
    small = FitProbe(16, fits=5, state_seconds=0.1, model_bytes=1000.0)
    big = dataclasses.replace(small, model_bytes=2000.0)
    one = footprint.estimate(landsat, settings, 16, probe=small)
    two = footprint.estimate(landsat, settings, 16, probe=big)
    assert two.full - one.full == pytest.approx(1000.0 * 5 * 15)
    assert two.slim - one.slim == pytest.approx(1000.0 * 5 * 15)
    assert one.full > one.slim  # the out-of-fold probabilities
    chain = footprint.estimate(
        landsat, settings, 5, probe=small, strategies={"chain": 5}
    )
    both = footprint.estimate(
        landsat, settings, 5, probe=small, strategies={"chain": 5, "grown": 99}
    )
    # The chain kept: the grown DAG waits ungrown (nothing stored of it).
    assert both.full == chain.full and both.slim == chain.slim


def test_a_many_sensor_snapshots_parts_are_what_the_store_keeps(landsat):
    """Issue 53: full, the kept strategy's growth beside the shared fold
    models (once) and the training rows (the other candidates wait
    ungrown); slim (``ui.store``), the kept strategy's policies and the
    fold models alone: the kept one is the simplest (the validation
    choice's default)."""
    from budgetdag_core.estimates import FitProbe, strategy_states
    from ui import footprint

    settings = TrainSettings(classifier="auto")
    probe = FitProbe(1000, fits=5, fold_seconds=0.1, model_bytes=1000.0)
    spec, rows = landsat.spec, len(landsat.train)

    def size(strategies):
        return footprint.estimate(
            landsat, settings, 1, probe=probe, strategies=strategies
        )

    def parts(strategies):
        return footprint.grown_parts(rows, spec, strategies, 1000.0, probe, 6, 6)

    chain, grown = {"chain": 5}, {"grown": 1000}
    both = {"grown": 1000, "chain": 5}
    assert parts(chain)["models"] == parts(both)["models"]  # shared, once
    assert parts(both)["growth"] == parts(chain)["growth"]  # the chain kept
    assert parts(grown)["growth"] > parts(chain)["growth"]
    assert parts(both)["states"] == parts(chain)["states"]
    kept = strategy_states(grown, rows, spec.n_sensors)["grown"]
    assert parts(grown)["states"] == pytest.approx(kept * parts(chain)["states"] / 5)
    for strategies in (chain, grown, both):
        whole, one = size(strategies), parts(strategies)
        assert whole.full == pytest.approx(sum(one.values()))
        assert whole.slim == pytest.approx(one["models"] + one["states"])
