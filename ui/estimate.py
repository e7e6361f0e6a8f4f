"""How long the app's long work takes: before it starts, and while it runs.

No Streamlit. :func:`training_seconds` is the Train page's estimate of a
training job as a worker process runs it (:mod:`ui.jobs`): the library's
:func:`budgetdag_core.estimates.estimate_fit_seconds_for` for the fit (rows, columns,
states, classes, bank kind, the worker's threads, the compilation of a first
fit after an install, the fixed cost of a worker's first fit), plus the
test-set evaluation and the result's way to the page, stretched by how busy
the machine's cores are. The fit's
first steps run here once per data and settings (:func:`fit_probe`): the
subset selection (Alg. 2), so that the DAG's states are counted, not bounded,
and a masked bank's first fold, so that its early stopping's rounds are the
data's.
:class:`TimeLeft` turns a running job's progress into the sidebar's "about
N s left": it starts from the estimate, leans on the measured pace as the
bar fills, and never counts up without saying so.
"""

from __future__ import annotations

import math
import os
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

import budgetdag_core
from budgetdag_core import Dataset, SensorSpec
from budgetdag_core.estimates import estimate_fit_seconds_for
from budgetdag_core.tradeoff import (
    FitProbe,
    dag_states_at_most,
    estimate_policy_seconds,
    probe_fit,
)

from .training import (
    MAX_EVALUATED_STATES,
    Settings,
    TrainSettings,
    app_n_jobs,
    app_workers,
    estimate_params,
)

#: Seconds per (test row x DAG state) of the evaluation after a fit (the
#: policy's metrics and every fixed subset's), in a warm process: 4-8e-6 on
#: pima, the toy, cube_nm6 and spam (129 states), 1.8e-5 on landsat (its
#: 2 000 test rows take 0.58 s). The most measured: an evaluation estimated
#: short gives the progress bar's end too early.
EVALUATE_SECONDS_PER_ROW_STATE = 1.8e-5
#: Seconds from the worker's end of a training to its result on the page:
#: the result's return, the sidebar's next look at the job
#: (:data:`ui.widgets.FAST_POLL_SECONDS`), the session's save for reloads
#: and the page's drawing. The save took 0.6 s on landsat and 1.1-1.3 s on
#: digits (``bench_app_timings.py``).
RESULT_SECONDS = 1.0
#: Cost-scale trials of a budget fit (a bisection of at most 20 steps; the
#: searches of the demos stop after 6 to 12).
BUDGET_TRIALS = 10
#: The share of the training rows a budget fit's bank is fitted on.
BUDGET_FIT_SHARE = 0.75


#: Work of this many idle seconds or more stretches by the full
#: :func:`busy_factor`; shorter work by a proportional part of it. Measured
#: (``bench_cold_start.py --part app`` at a load of 12 on 2 cores): trainings
#: of 0.3-2 s ran at about their idle speed, of 36 s 6.4x slower, as the
#: load says.
STRETCH_SECONDS = 10.0


def stretched(seconds: float, busy: float) -> float:
    """``seconds`` of work on idle cores, on a machine as busy as ``busy``."""
    return seconds * (1 + (busy - 1) * min(1.0, seconds / STRETCH_SECONDS))


#: The time constant of the kernel's 1-minute load average (an exponential
#: average of the runnable tasks), in seconds.
LOAD_AVERAGE_SECONDS = 60.0
#: The server's work that has ended: (start, end, threads), monotonic seconds.
_ENDED: deque[tuple[float, float, int]] = deque(maxlen=32)
#: The pool's live worker processes (ids) that have run a job: their next fit
#: is not their process's first, which loads the kernels and LightGBM.
_WARM_WORKERS: set[int] = set()
#: The app pool's running jobs, each with its threads.
_RUNNING: list[int] = []


def work_started(threads: int) -> None:
    """Record that a job of the app's pool started on ``threads`` threads
    (:mod:`ui.jobs` calls it)."""
    _RUNNING.append(threads)


def work_ended(
    start: float, end: float, threads: int, worker: int | None = None
) -> None:
    """Record that work of the app's pool ran from ``start`` to ``end``
    (:func:`time.monotonic`) on ``threads`` threads, in the worker process
    ``worker`` (:mod:`ui.jobs` calls it)."""
    _ENDED.append((start, end, threads))
    if threads in _RUNNING:
        _RUNNING.remove(threads)
    if worker is not None:
        _WARM_WORKERS.add(worker)


def worker_ended(worker: int) -> None:
    """Record that the pool ended worker process ``worker`` (a new one starts
    cold)."""
    _WARM_WORKERS.discard(worker)


def workers_warm() -> bool:
    """Whether every worker of the app's pool has run a job already, so that
    the next training is not its process's first fit."""
    return len(_WARM_WORKERS) >= app_workers()


def lingering_load(ended: Iterable[tuple[float, float, int]], now: float) -> float:
    """What work that has ended still adds to the 1-minute load average.

    The average follows the runnable tasks with a 60 s time constant: work
    of ``threads`` threads lasting ``d`` seconds raised it by ``threads x (1 -
    exp(-d / 60))``, which then decays by ``exp(-t / 60)``. Right after a
    training, the load average still counts it for a minute: it is not
    competition for the next one.

    Examples
    --------
    >>> round(lingering_load([(0.0, 60.0, 2)], now=60.0), 2)
    1.26
    >>> round(lingering_load([(0.0, 60.0, 2)], now=180.0), 2)
    0.17
    """
    return sum(
        threads
        * (1 - math.exp(-(end - start) / LOAD_AVERAGE_SECONDS))
        * math.exp(-max(0.0, now - end) / LOAD_AVERAGE_SECONDS)
        for start, end, threads in ended
    )


#: A busy factor averages this many samples of the runnable tasks, this many
#: seconds apart (a few milliseconds of the page's time).
RUNNABLE_SAMPLES = 8
RUNNABLE_SPACING = 0.003


def runnable_now(
    samples: int = RUNNABLE_SAMPLES, spacing: float = RUNNABLE_SPACING
) -> float | None:
    """The tasks runnable on the machine now besides the caller: the mean of
    a few readings of the kernel's count (Linux's ``/proc/loadavg``); None
    where there is none.

    Unlike the load average, which follows the count with a minute's lag,
    it sees work that has just started or just ended: a training right
    after another job's end is not estimated as slowed by it.
    """
    counts = []
    try:
        for i in range(samples):
            if i:
                time.sleep(spacing)
            with open("/proc/loadavg", encoding="ascii") as loadavg:
                fields = loadavg.read().split()
            counts.append(int(fields[3].partition("/")[0]))
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, sum(counts) / len(counts) - 1)


def busy_factor(threads: int = 1) -> float:
    """How much longer long work takes on this machine now than on idle cores.

    Other work on the machine, plus the work's own ``threads``, shared by
    the cores; at least 1. Other work is the smaller of two counts, as each
    errs one way: the last minute's load average, less what the app's own
    ended work still adds to it (:func:`lingering_load`), lags a minute
    behind (it still counts heavy work that has just ended), and the tasks
    runnable now (:func:`runnable_now`) include short bursts that end within
    seconds (a worker's imports, the kernels' compiling child at a first
    visit). The smaller errs only when lasting work has just started; the
    sidebar's time left then revises and says so. When every worker of the
    app's pool is busy, new work waits for their jobs (the queue's wait
    counts them) rather than running beside them: their threads are not
    competition; nor is the kernels' compiling child after an install,
    whose time the estimate counts itself.
    """
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # not on every platform
        load = None
    counts = [runnable_now()]
    if load is not None:
        counts.append(max(0.0, load - lingering_load(_ENDED, time.monotonic())))
    known = [count for count in counts if count is not None]
    if not known:
        return 1.0
    others = min(known)
    if len(_RUNNING) >= app_workers():
        others = max(0.0, others - sum(_RUNNING))
    if kernels_compiling():
        others = max(0.0, others - 1)
    return max(1.0, (others + threads) / cores)


def training_seconds(
    dataset: Dataset,
    spec: SensorSpec,
    settings: Settings,
    *,
    bank_reused: bool = False,
    target_budget: float | None = None,
    busy: float | None = None,
    first_fit: bool | None = None,
) -> float:
    """Estimated wall-clock seconds of :func:`ui.training.train` in a worker,
    and of showing its result (:data:`RESULT_SECONDS`): from pressing Train
    to the result.

    ``settings`` as for ``train``; ``bank_reused``: only the policies are
    learned; ``target_budget`` (else the form's): a budget fit, whose bank
    is fitted on part of the rows and whose policies are learned once per
    trial scale. ``busy``: the :func:`busy_factor` to count (default: now).
    ``first_fit``: whether the worker has not fitted before (default: not
    :func:`workers_warm`). The fit's first steps run here once per data and
    settings (:func:`fit_probe`).
    """
    fit, evaluation = training_parts(
        dataset,
        spec,
        settings,
        bank_reused=bank_reused,
        target_budget=target_budget,
        first_fit=first_fit,
    )
    return press_to_result(fit, evaluation, busy)


def press_to_result(fit: float, evaluation: float, busy: float | None = None) -> float:
    """:func:`training_seconds` of the parts :func:`training_parts` gives."""
    seconds = fit + evaluation + RESULT_SECONDS
    return stretched(seconds, busy_factor(app_n_jobs()) if busy is None else busy)


def progress_shares(fit: float, evaluation: float) -> dict[str, float]:
    """The shares of a training's time (its :func:`training_parts`, the
    fit's and the evaluation's seconds) spent evaluating on the test set and
    showing the result (the progress bar's last parts), as
    :class:`ui.training.ProgressReporter`'s ``evaluate_share`` and
    ``result_share``."""
    total = max(fit + evaluation + RESULT_SECONDS, 1e-9)
    return {
        "evaluate_share": evaluation / total,
        "result_share": RESULT_SECONDS / total,
    }


#: Seconds per (test row x state x boosting tree) of evaluating a DAG of
#: one-sensor additions on the test set (the any-subset bank's fold models
#: averaged): digits' chain, 450 rows x 65 states x 342 trees, took 0.28 s,
#: and its routed DAG at cost scale 0.05 (95 of 634 states evaluated) 0.41 s.
EVALUATE_SECONDS_PER_ROW_STATE_TREE = 3e-8


def training_parts(
    dataset: Dataset,
    spec: SensorSpec,
    settings: Settings,
    *,
    bank_reused: bool = False,
    target_budget: float | None = None,
    first_fit: bool | None = None,
) -> tuple[float, float]:
    """The idle seconds of a training's fit and of its test-set evaluation
    (arguments as for :func:`training_seconds`)."""
    if target_budget is None and isinstance(settings, TrainSettings):
        target_budget = settings.target_budget
    params = estimate_params(settings)
    params.pop("n_jobs")
    threads = app_n_jobs()
    first = not workers_warm() if first_fit is None else first_fit
    X, y = dataset.X("train", spec), estimate_target(dataset)
    rows = len(X)
    if target_budget is not None and not bank_reused:
        rows = max(2, math.ceil(BUDGET_FIT_SHARE * len(X)))
    probe = fit_probe(dataset, spec, params, rows)
    n_states = dag_states_at_most(
        spec.n_sensors,
        params.get("n_subsets"),
        include_all=bool(params.get("include_all", False)),
    )
    n_states = n_states if probe is None else min(n_states, probe.n_states)
    strategies = {} if probe is None else probe.strategies
    children = 1.0 if strategies else None  # DAGs of one-sensor additions
    policies = estimate_policy_seconds(
        len(X), n_states, fit_call=False, children=children
    )
    if bank_reused:
        seconds = estimate_policy_seconds(len(X), n_states, children=children)
    else:
        seconds = estimate_fit_seconds_for(
            spec,
            X.iloc[:rows],
            y.iloc[:rows],
            n_jobs=threads,
            probe=probe,
            first_fit=first,
            **params,
        )
    if target_budget is not None and not bank_reused:
        seconds += (BUDGET_TRIALS - 1) * BUDGET_FIT_SHARE * policies
    if strategies and probe.trees:  # the kept DAG's states, at most so many
        evaluated = max(min(n, MAX_EVALUATED_STATES) for n in strategies.values())
        evaluation = EVALUATE_SECONDS_PER_ROW_STATE_TREE * probe.trees
        evaluation *= len(dataset.test) * evaluated
    else:
        evaluation = EVALUATE_SECONDS_PER_ROW_STATE * len(dataset.test) * n_states
    return seconds, evaluation


def estimate_target(dataset: Dataset) -> pd.Series:
    """The training labels the estimates time a fit on: a regression's
    target as two classes (above its median or not), since the estimates
    model the classifier banks (:func:`ui.training.estimate_params`)."""
    y = dataset.y("train")
    if dataset.task != "regression":
        return y
    return (y > y.median()).astype(int)


#: The last probes (:func:`fit_probe`), by data and settings.
_PROBES: dict[tuple, FitProbe | None] = {}
#: Settings of the policies alone: the selection and the bank do not depend
#: on them, so a change of one does not probe again.
POLICY_ONLY_PARAMS = frozenset({"policy_learner", "policy_degree"})
PROBES_KEPT = 16
#: The probe runs in the server process while the page renders, so the
#: selection only when it should take at most this long (else the estimate
#: counts the most states the DAG can have) ...
SELECTION_MAX_SECONDS = 3.0
#: ... and a masked bank's fold only when it should take at most this long
#: (else the estimate models its rounds).
PAGE_FOLD_MAX_SECONDS = 1.5


def fit_probe(
    dataset: Dataset, spec: SensorSpec, params: dict[str, Any], rows: int
) -> FitProbe | None:
    """:func:`budgetdag_core.tradeoff.probe_fit` of a fit on the first
    ``rows`` training rows: the DAG's states, the selection's seconds and a
    masked bank's first fold timed. Remembered per data, spec and settings,
    as the Train page asks on every rerun; a probe that fails (e.g. a
    setting the fit will reject) or would keep the page waiting
    (:data:`SELECTION_MAX_SECONDS`) counts as unknown (None)."""
    key = _probe_key(dataset, spec, params, rows)
    if key not in _PROBES:
        X, y = dataset.X("train", spec), estimate_target(dataset)
        try:
            found = probe_fit(
                spec,
                X.iloc[:rows],
                y.iloc[:rows],
                n_jobs=app_n_jobs(),
                max_seconds=SELECTION_MAX_SECONDS,
                fold_max_seconds=PAGE_FOLD_MAX_SECONDS,
                **params,
            )
        except ValueError:
            found = None
        while len(_PROBES) >= PROBES_KEPT:
            _PROBES.pop(next(iter(_PROBES)))
        _PROBES[key] = found
    return _PROBES[key]


def _probe_key(
    dataset: Dataset, spec: SensorSpec, params: dict[str, Any], rows: int
) -> tuple:
    probed = {k: v for k, v in params.items() if k not in POLICY_ONLY_PARAMS}
    return (dataset.token, spec.to_json(), repr(sorted(probed.items())), rows)


def settings_probe(
    dataset: Dataset, spec: SensorSpec, settings: Settings
) -> FitProbe | None:
    """:func:`fit_probe` of a training with ``settings`` on all training rows
    (run once per data and settings; None when it failed)."""
    params = estimate_params(settings)
    params.pop("n_jobs")
    return fit_probe(dataset, spec, params, len(dataset.train))


def known_probe(
    dataset: Dataset, spec: SensorSpec, settings: Settings
) -> FitProbe | None:
    """The probe of :func:`settings_probe` if a page has run it already
    (None otherwise): texts drawn on every page read it without probing."""
    params = estimate_params(settings)
    params.pop("n_jobs")
    return _PROBES.get(_probe_key(dataset, spec, params, len(dataset.train)))


def kernels_compiling() -> bool:
    """Whether a first fit would still compile kernels (a fresh install)."""
    ready: Any = getattr(budgetdag_core, "kernels_ready", None)
    return ready is not None and not ready()


def roughly(seconds: float) -> str:
    """A duration in words for an estimate: ``"20 s"``, ``"3 min"``."""
    if seconds < 10:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 90:
        return f"{round(seconds, -1 if seconds >= 30 else 0):.0f} s"
    return f"{seconds / 60:.0f} min"


#: While the bar is below this share, the estimate weighs more than the pace.
TRUST_PACE_AT = 0.5
#: A revision upwards is shown only when the new figure exceeds the old one by
#: more than this share of it, and by more than :data:`REVISE_MIN_SECONDS`.
REVISE_SHARE = 0.3
REVISE_MIN_SECONDS = 5.0


@dataclass
class TimeLeft:
    """The sidebar's "about N s left" of one running job.

    Each :meth:`update` blends two guesses of the seconds left: the
    estimate's share still to go (``estimate x (1 - fraction)``) and the
    measured pace (``elapsed x (1 - fraction) / fraction``), weighing the
    pace more as the bar fills (fully from :data:`TRUST_PACE_AT`). The shown
    figure counts down with the clock and never goes up, except when the
    blend exceeds it clearly (:data:`REVISE_SHARE`); :attr:`revised` then
    says so, for the sidebar to tell ("slower than estimated").
    """

    estimate: float | None = None
    shown: float | None = None
    at: float = 0.0  # elapsed seconds when ``shown`` was set
    revised: bool = False

    def blend(self, elapsed: float, fraction: float) -> float | None:
        """The seconds left by estimate and pace (None: nothing to go on yet)."""
        fraction = min(max(fraction, 0.0), 1.0)
        pace = elapsed * (1 - fraction) / fraction if fraction >= 0.02 else None
        guess = None if self.estimate is None else self.estimate * (1 - fraction)
        if guess is not None and elapsed > self.estimate:
            # Past the estimate: the estimate was short by at least this much.
            guess *= elapsed / self.estimate
        if pace is None or guess is None:
            return pace if guess is None else guess
        weight = min(1.0, fraction / TRUST_PACE_AT)
        return weight * pace + (1 - weight) * guess

    def update(self, elapsed: float, fraction: float) -> float | None:
        """The seconds left to show at ``elapsed`` seconds and ``fraction`` done."""
        raw = self.blend(elapsed, fraction)
        if raw is None:
            return self.shown
        if self.shown is None:
            self.shown, self.at = raw, elapsed
            return raw
        counted = max(0.0, self.shown - (elapsed - self.at))
        if raw > counted * (1 + REVISE_SHARE) and raw > counted + REVISE_MIN_SECONDS:
            self.revised = True
            self.shown, self.at = raw, elapsed
        elif raw < counted:
            self.shown, self.at = raw, elapsed
        else:
            self.shown, self.at = counted, elapsed
        return self.shown
