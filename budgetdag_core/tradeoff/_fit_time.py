"""A rough estimate of how long ``BudgetDAGClassifier.fit`` takes, before fitting.

The app shows it on the Train page. The constants are measured on this
project's 2-core benchmark machine (``benchmarks/bench_cold_start.py`` prints
each estimate beside the actual time); they say "seconds or minutes", not a
promise: expect a factor of two either way, and more on a busy machine.
"""

from __future__ import annotations

import copy
import math
import os
import pickle
import time
import zlib
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
from joblib import effective_n_jobs

from .._compiled import kernels_loaded as _kernels_loaded
from .._compiled import kernels_ready as _kernels_ready
from ..bank import (
    AUTO_MASKED_MIN_STATES,
    AUTO_NEURAL_MAX_ROWS,
    MAX_ROUNDS,
    MAX_STACK_ROWS,
    resolve_bank_kind,
    subsets_per_row,
)
from ..strategies import (
    CHAIN_SCORE_ROWS,
    CHOICE_MAX_ROWS,
    MAX_ROUTES,
    POSTERIOR_DEPTH,
    ROUTE_SCORE_ROWS,
    VALIDATION_SHARE,
    route_floor,
    tail_length,
)
from ..validation import check_params, int_in, real_in

#: Seconds per (training row x tree x boosting round) of one LightGBM fit,
#: whatever the columns (gradients, row partitions) ...
BOOST_SECONDS_PER_ROW_TREE = 4e-8
#: ... and per column the fit reads on top (a histogram per column). Measured
#: (benchmarks/bench_cold_start.py): about 1.3e-7 s in all on landsat's states
#: (19 columns on average), 2.6e-7 s on digits' (32) and its masked bank (64).
BOOST_SECONDS_PER_ROW_TREE_COLUMN = 5e-9
#: The masked bank's stacked rows lack about half their columns (missing
#: values, cheap to bin): 2.6e-7 s per row and tree on digits' 64 columns,
#: as the per-state bank on 32.
MASKED_COLUMN_SHARE = 0.5
#: The columns a state reads when the caller does not say (landsat's mean).
TYPICAL_STATE_COLUMNS = 19
#: Boosting rounds a bank fit typically runs before early stopping, at
#: ``REFERENCE_ROWS`` training rows or fewer: the per-state bank's fits ran 16
#: (pima, 576 rows), 30 (landsat), 31 (toy, 600) and 53 (digits, 1 347) rounds
#: at the median, the masked bank's 41 (digits) and 51 (spam): fewer rows do
#: not stop earlier.
TYPICAL_ROUNDS = {"hgb": 35, "masked": 45}
#: Above this many rows early stopping ends later: letter's all-sensor fits
#: ran 77 rounds on 4 435 of its rows and 150 on all 16 000 (about the square
#: root of the rows), so the estimate scales the rounds by
#: ``sqrt(rows / 4 435)``, up to the round cap.
REFERENCE_ROWS = 4435
#: Seconds per (row x state x fold) of a logistic-regression bank.
LOGISTIC_SECONDS_PER_ROW_STATE = 2e-6
#: Fixed seconds per model fit (data set construction, early-stopping checks),
#: and per column (binning it): the toy's one-column fits took 5 ms each.
SECONDS_PER_FIT = 0.004
SECONDS_PER_FIT_COLUMN = 0.001
#: Fixed seconds per call of ``fit`` (checks, the DAG, the policies' set-up)
#: in a process that has fitted before: a warm refit of pima's or the toy's
#: policies on their bank took 6 ms.
SECONDS_PER_CALL = 0.01
#: What a process's first fit adds (loading the kernels from numba's cache
#: and LightGBM's library, the fit's lazy imports): the toy's first fit in a
#: fresh process took 0.74 s, its second 0.24 s.
FIRST_FIT_SECONDS = 0.4
#: What each parallel worker after the first adds: landsat's bank ran 1.45x,
#: letter's 1.8x faster on two cores than on one.
PARALLEL_EFFICIENCY = 0.75
#: A masked bank's fit takes this many times its fold models' fits: each
#: fold's held-out rows are also scored at every state, and each state
#: calibrated. Measured (one fold's fit timed, then the bank on 2 threads at
#: the parallel efficiency below): CUBE-NM's (13 states) 1.30x, spam's
#: (129) 1.11x, digits by image rows' (256) 1.16x.
MASKED_SCORING_SHARE = 1.2
#: ... and per DAG state (each fold's held-out rows scored there, the
#: state's calibration): wine's full DAG of 11 and 12 sensors (2 048 and
#: 4 096 states, 133 rows) spent 1.5 s and 2.7 s of CPU in its masked bank
#: (the fit less a refit of its policies on the fitted bank), about 0.6 ms
#: a state beyond its fold fits.
MASKED_SECONDS_PER_STATE = 6e-4
#: Seconds per (row x state) of one Graph-Reduce (the policies at one cost
#: scale; ``cost_scale="auto"`` runs ``AUTO_SCALE_TRIALS``) ...
POLICY_SECONDS_PER_ROW_STATE = 5e-7
#: ... per state whatever its rows (a node's learner set up, its inputs
#: gathered) ...
POLICY_SECONDS_PER_STATE = 2.5e-4
#: ... and per action of a state (a child's costs-to-go and its rows).
#: Measured one thread at ``cost_scale="auto"``, per state and Graph-Reduce:
#: 0.5 ms on breast cancer's chain and routed DAG (426 rows, about one child
#: a state), 1 ms on digits' (1 347 rows), 0.57 ms on wine's full DAG of 11
#: sensors (133 rows, 5.5 children a state); issue 53.
POLICY_SECONDS_PER_ACTION = 5e-5
#: While the compiled kernels are not in numba's cache (a fresh install), a
#: first fit compiles the scoring kernels itself (seconds of CPU) ...
OWN_COMPILE_SECONDS = 1.6
#: ... and the warm-up's child compiles the rest meanwhile (from its start,
#: with its imports), which a fit whose bank is done sooner waits for.
CHILD_COMPILE_SECONDS = 8.0


def boosting_rounds(n_rows: int, kind: str = "hgb") -> float:
    """Typical boosting rounds of one bank fit on ``n_rows`` rows."""
    scale = math.sqrt(max(n_rows, REFERENCE_ROWS) / REFERENCE_ROWS)
    return min(TYPICAL_ROUNDS[kind] * scale, MAX_ROUNDS)


def _modelled_bank_seconds(
    kind: str,
    n_rows: int,
    n_states: int,
    trees: int,
    cv: int,
    n_columns: int | None,
    masks_per_row: int,
) -> float:
    """One thread's seconds of a bank's fits, modelled from their sizes (the
    boosting rounds as :func:`boosting_rounds`); arguments as for
    :func:`estimate_fit_seconds`, ``trees`` per boosting round."""
    fold_rows = n_rows * (cv - 1) / cv
    non_empty = max(n_states - 1, 1)
    if kind == "per_subset":
        return LOGISTIC_SECONDS_PER_ROW_STATE * n_rows * non_empty * cv * trees
    if kind == "hgb":
        columns = TYPICAL_STATE_COLUMNS if n_columns is None else n_columns / 2
        per_row_tree = BOOST_SECONDS_PER_ROW_TREE + (
            BOOST_SECONDS_PER_ROW_TREE_COLUMN * columns
        )
        per_fit = SECONDS_PER_FIT + SECONDS_PER_FIT_COLUMN * columns
        per_fit += per_row_tree * fold_rows * trees * boosting_rounds(n_rows)
        return per_fit * non_empty * cv
    columns = 2 * TYPICAL_STATE_COLUMNS if n_columns is None else n_columns
    per_row = min(masks_per_row, non_empty, max(1, MAX_STACK_ROWS // n_rows))
    per_row_tree = BOOST_SECONDS_PER_ROW_TREE + (
        BOOST_SECONDS_PER_ROW_TREE_COLUMN * MASKED_COLUMN_SHARE * columns
    )
    per_fit = SECONDS_PER_FIT + SECONDS_PER_FIT_COLUMN * columns
    per_fit += (
        per_row_tree * fold_rows * per_row * trees * boosting_rounds(n_rows, kind)
    )
    return cv * per_fit


#: What :func:`estimate_fit_seconds` accepts (scikit-learn's vocabulary).
ESTIMATE_CONSTRAINTS: dict[str, list] = {
    "n_rows": [int_in(1)],
    "n_states": [int_in(1)],
    "n_classes": [int_in(2)],
    "cv": [int_in(2)],
    "n_jobs": [Integral],
    "masks_per_row": [int_in(1)],
    "n_columns": [int_in(1), None],
    "kernels_ready": ["boolean", None],
    "n_cores": [int_in(1), None],
    "first_fit": ["boolean", None],
    "fold_seconds": [real_in(0.0), None],
    "fits": [int_in(1), None],
    "state_seconds": [real_in(0.0), None],
    "policy_fits": [real_in(1.0)],
}


def estimate_fit_seconds(
    n_rows: int,
    n_states: int,
    n_classes: int,
    kind: str = "auto",
    *,
    cv: int = 5,
    n_jobs: int = 1,
    masks_per_row: int = 16,
    n_columns: int | None = None,
    kernels_ready: bool | None = None,
    n_cores: int | None = None,
    first_fit: bool | None = None,
    fold_seconds: float | None = None,
    fits: int | None = None,
    state_seconds: float | None = None,
    policy_fits: float = 1.0,
) -> float:
    """Estimated wall-clock seconds of a default fit: bank plus policies.

    Parameters
    ----------
    n_rows : int
        Training rows.
    n_states : int
        States of the sensor DAG (``2 ** n_sensors`` for the full DAG).
    n_classes : int
        Classes of the target.
    kind : {"auto", "hgb", "masked", "per_subset"}
        The bank kind (``"auto"`` resolves as the estimator does without a
        ``classifier``; ``"per_subset"`` means the logistic bank).
    cv : int, default=5
        Folds of the bank.
    n_jobs : int, default=1
        Parallel bank fits (the estimate divides the bank's time by them, up
        to the number of fits, ``cv`` for the masked bank, and the cores).
    masks_per_row : int, default=16
        The masked bank's masks per training row.
    n_columns : int, optional
        The table's columns (all sensors'). A per-state model reads its
        state's columns, on average half of them; the masked bank's model all.
        Default: a landsat-like width.
    kernels_ready : bool, optional
        Whether the compiled kernels are ready
        (:func:`~budgetdag_core.kernels_ready`, which is asked when this is
        None); if not, the first fit compiles them.
    n_cores : int, optional
        The machine's cores (default ``os.cpu_count()``): workers beyond them
        wait.
    first_fit : bool, optional
        Whether the fit is the first of its process, which loads the kernels
        and LightGBM first (default: whether this process has not fitted yet).
    fold_seconds : float, optional
        The masked bank only: the CPU seconds its first fold's fit took on
        the data (:func:`probe_fit`), which replace the modelled fold fit
        (early stopping's rounds are the data's: CUBE-NM's folds stop after
        a few, digits' after dozens).
    fits : int, optional
        With ``fold_seconds``: the bank's fits of that size (default ``cv``);
        with ``state_seconds``: the fits per state.
    state_seconds : float, optional
        A per-state bank (``"hgb"``, ``"per_subset"``): the CPU seconds of
        one state's fold fit measured on the data (:func:`probe_fit`), which
        replace the modelled fit: each non-empty state fits ``fits`` models.
    policy_fits : float, default=1.0
        Graph-Reduces on the bank: ``cost_scale="auto"`` learns policies at
        several scales (``policy_fits``, ``AUTO_SCALE_TRIALS``).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(estimate_fit_seconds(4435, 16, 6, "hgb", kernels_ready=True,
    ...                            first_fit=False))
    9
    """
    check_params(
        "estimate_fit_seconds", ESTIMATE_CONSTRAINTS, n_rows=n_rows,
        n_states=n_states, n_classes=n_classes, cv=cv, n_jobs=n_jobs,
        masks_per_row=masks_per_row, n_columns=n_columns,
        kernels_ready=kernels_ready, n_cores=n_cores, first_fit=first_fit,
        fold_seconds=fold_seconds, fits=fits, state_seconds=state_seconds,
        policy_fits=policy_fits,
    )  # fmt: skip
    if kind == "auto":
        kind = "masked" if n_states >= AUTO_MASKED_MIN_STATES else "hgb"
    if kind not in ("hgb", "masked", "per_subset"):
        raise ValueError(
            f"Unknown bank kind {kind!r}; choose from "
            "['auto', 'hgb', 'masked', 'per_subset']."
        )
    trees = 1 if n_classes == 2 else n_classes
    if kind == "masked" and fold_seconds is not None:
        bank = MASKED_SCORING_SHARE * (cv if fits is None else fits) * fold_seconds
    elif kind != "masked" and state_seconds is not None:
        bank = state_seconds * max(n_states - 1, 1) * (cv if fits is None else fits)
    else:
        bank = _modelled_bank_seconds(
            kind, n_rows, n_states, trees, cv, n_columns, masks_per_row
        )
    if kind == "masked":
        bank += MASKED_SECONDS_PER_STATE * n_states
    policies = policy_fits * _policy_seconds(n_rows, n_states)
    # The masked bank has one fit per fold: more workers than folds wait, and
    # workers beyond the cores wait too.
    parallel = cv if kind == "masked" else max(n_states - 1, 1) * cv
    cores = (os.cpu_count() or 1) if n_cores is None else n_cores
    workers = max(1, min(effective_n_jobs(n_jobs), parallel, cores))
    bank /= 1 + PARALLEL_EFFICIENCY * (workers - 1)
    start, _ = _start_seconds(bank, kernels_ready, first_fit)
    return bank + policies + start


def _policy_seconds(n_rows: int, n_states: int, children: float | None = None) -> float:
    """Seconds of Graph-Reduce's policies over ``n_states`` states with
    ``children`` actions each besides stopping on average (default: a DAG of
    sensor subsets, as many as the sensors left, half of
    ``log2(n_states)``; one for a DAG of one-sensor additions)."""
    if children is None:
        children = max(1.0, math.log2(max(n_states, 1)) / 2)
    per_state = POLICY_SECONDS_PER_STATE + POLICY_SECONDS_PER_ACTION * children
    return n_states * (per_state + POLICY_SECONDS_PER_ROW_STATE * n_rows)


def _start_seconds(
    bank: float, kernels_ready: bool | None, first_fit: bool | None
) -> tuple[float, bool]:
    """The seconds a fit spends besides its work (compiling kernels not yet
    cached, the call and a first fit's loading), and whether it is a
    process's first fit (``None``: asked of the running process)."""
    if kernels_ready is None:
        kernels_ready = _kernels_ready()
    cold = 0.0
    if not kernels_ready:
        cold = OWN_COMPILE_SECONDS + max(0.0, CHILD_COMPILE_SECONDS - bank)
    if first_fit is None:
        first_fit = not _kernels_loaded()
    return cold + SECONDS_PER_CALL + (
        FIRST_FIT_SECONDS if first_fit else 0.0
    ), first_fit


def dag_states_at_most(
    n_sensors: int, n_subsets: int | None = None, *, include_all: bool = False
) -> int:
    """The most states the estimator's sensor DAG can have.

    The full DAG has ``2 ** n_sensors``. Over ``n_subsets`` selected subsets
    (Alg. 2) it has the distinct unions of the subsets, at most ``2 **
    n_subsets``; with ``include_all`` the last subset is every sensor, so any
    union holding it is the full state: at most ``2 ** (n_subsets - 1) + 1``.
    Overlapping subsets give fewer, known only once they are selected.

    Parameters
    ----------
    n_sensors : int
        Sensors of the spec.
    n_subsets : int, optional
        The estimator's ``n_subsets`` (None or 0: the full DAG).
    include_all : bool, default=False
        The estimator's ``include_all``.

    Returns
    -------
    int

    Examples
    --------
    >>> dag_states_at_most(4), dag_states_at_most(57, 8)
    (16, 256)
    >>> dag_states_at_most(57, 8, include_all=True)
    129
    """
    if not n_subsets:
        return 2**n_sensors
    return 2 ** (n_subsets - 1) + 1 if include_all else 2**n_subsets


def estimate_policy_seconds(
    n_rows: int, n_states: int, *, fit_call: bool = True, children: float | None = None
) -> float:
    """Estimated seconds of learning the policies alone, on a fitted bank.

    A refit that reuses the bank (a new cost scale, policy learner or
    degree) costs this; so does each trial of a budget search.

    Parameters
    ----------
    n_rows : int
        Training rows.
    n_states : int
        States of the sensor DAG.
    fit_call : bool, default=True
        Count the fixed cost of a call of ``fit`` (checks, the DAG); a trial
        inside a search has none of its own.
    children : float, optional
        The actions of a state besides stopping, on average: 1 for a DAG of
        one-sensor additions (many sensors); default a DAG of sensor subsets'
        (as many as the sensors left).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> round(estimate_policy_seconds(4435, 16, fit_call=False), 2)
    0.04
    """
    policies = _policy_seconds(n_rows, n_states, children)
    return policies + (SECONDS_PER_CALL if fit_call else 0.0)


#: The subset selection's ridge scores cost about this many seconds per
#: (sensor^2 x scored row): spam (57 sensors, 3 450 rows) 0.87 s, cube_nm
#: (51, 600) 0.2 s.
SELECTION_SECONDS_PER_SENSOR2_ROW = 1e-7


#: A probe times the masked bank's first fold only when that fit should take
#: at most this long (by the modelled rounds).
PROBE_FOLD_MAX_SECONDS = 2.0


@dataclass(frozen=True)
class FitProbe:
    """What a fit's first steps measured on the data, for an estimate.

    Attributes
    ----------
    n_states : int
        The states of the DAG the fit builds.
    select_seconds : float
        Seconds of the fit's first step: the subset selection (Alg. 2,
        wall-clock), or a sparse DAG's ``"auto"`` bank choosing its kind on
        validation rows (CPU; its chosen kind's fit there is the bank's
        first fold), 0 when there is neither.
    fold_seconds : float or None
        CPU seconds of the masked bank's first fold fit (None: another bank,
        or a fold predicted longer than ``PROBE_FOLD_MAX_SECONDS``).
    fits : int
        The bank's model fits of that fold's size (its folds, and the refit
        on all rows of a bank that does not cross-fit).
    n_subsets : int or None
        The subsets Alg. 2 selected (at most ``n_subsets``; None without).
    strategies : dict
        A fit beyond the full DAG without ``n_subsets``: each DAG of
        one-sensor additions it builds (``"chain"``, ``"routed"``,
        ``"grown"``) and the most states that DAG can have (``n_states`` is
        the largest); empty otherwise.
    trees : float or None
        The boosting trees of a masked bank's fold model (rounds x trees per
        round), counted on the timed fold, else modelled; scoring a sparse
        DAG's candidates costs in proportion. None for other banks.
    kind : str or None
        A sparse DAG's ``"auto"`` bank: the masked kind it chose on
        validation rows (``"masked"``, ``"masked_mlp"``,
        ``"masked_logistic"``), chosen even where its fold is too long to
        time; else None.
    state_seconds : float or None
        A per-state bank: the mean CPU seconds of one state's first-fold
        fit (its held-out rows scored), over ``PROBE_STATES`` states drawn
        at random (early stopping runs more rounds at wider states); None
        for other banks or when not timed.
    model_bytes : float or None
        The compressed bytes (zlib level 1, as a pickle) of one fitted
        model the bank keeps: the mean of those states' fold models, or the
        masked bank's timed fold model; None when nothing was fitted.
    rival : str or None
        A sparse DAG's ``"auto"`` bank: the kind whose bank the fit also
        fits for its routed DAG (``AutoMaskedBank.rival_kind``), else None.

    Examples
    --------
    >>> from budgetdag_core import load_demo
    >>> from budgetdag_core.estimates import probe_fit
    >>> demo = load_demo("pima")
    >>> probe = probe_fit(demo.spec, demo.X_train, demo.y_train)  # per state
    >>> probe.n_states, probe.fits, probe.state_seconds > 0, probe.model_bytes > 0
    (8, 5, True, True)
    """

    n_states: int
    select_seconds: float = 0.0
    fold_seconds: float | None = None
    fits: int = 0
    n_subsets: int | None = None
    strategies: dict[str, int] = field(default_factory=dict)
    trees: float | None = None
    kind: str | None = None
    state_seconds: float | None = None
    model_bytes: float | None = None
    rival: str | None = None


#: What :func:`probe_fit` accepts besides the estimator's parameters.
PROBE_CONSTRAINTS: dict[str, list] = {
    "max_seconds": [real_in(0.0), None],
    "fold_max_seconds": [real_in(0.0)],
    "n_jobs": [Integral, None],
}


def probe_fit(
    sensors: Any,
    X: Any,
    y: Any,
    *,
    n_jobs: int | None = 1,
    max_seconds: float | None = None,
    fold_max_seconds: float = PROBE_FOLD_MAX_SECONDS,
    **params: Any,
) -> FitProbe | None:
    """Run a fit's first steps on the data and time them, for an estimate.

    With ``n_subsets`` a fit first selects sensor subsets (Alg. 2) and builds
    the DAG over their unions. Overlapping subsets have far fewer distinct
    unions than ``dag_states_at_most()`` allows (CUBE-NM's 8 subsets: 13
    states, not 129), and the bank, the policies and the evaluation scale
    with the states. A masked bank's time depends on how many rounds early
    stopping runs, which only the data says (a few on CUBE-NM's 600 rows,
    dozens on digits). This runs the selection as the fit would and fits
    the masked bank's first fold (a per-state bank's: a few states' first
    folds), on one thread, so that :func:`estimate_fit_seconds_for` counts
    states and rounds measured rather than modelled.

    Parameters
    ----------
    sensors, X, y, n_jobs, **params
        As for :func:`estimate_fit_seconds_for`.
    max_seconds : float, optional
        Select only when the selection should take at most this long (by
        ``SELECTION_SECONDS_PER_SENSOR2_ROW``, on the rows it scores);
        else None.
    fold_max_seconds : float, default=PROBE_FOLD_MAX_SECONDS
        Fit the masked bank's first fold only when it should take at most
        this long (by the modelled rounds); else ``fold_seconds`` is None.
        A per-state bank's states: until their fits took this long.

    A fit that grows DAGs of one-sensor additions: the probe names the
    strategies and their most states, and times the any-subset bank's
    first fold (its trees set the cost of scoring the candidates).

    Returns
    -------
    FitProbe or None
        None for a selection predicted longer than ``max_seconds``.

    Examples
    --------
    >>> from budgetdag_core import load_demo
    >>> demo = load_demo("cube_nm")
    >>> probe = probe_fit(demo.spec, demo.X_train, demo.y_train, n_subsets=8,
    ...                   include_all=True, bank_kind="masked")
    >>> 8 <= probe.n_states <= dag_states_at_most(51, 8, include_all=True)
    True
    >>> probe.fold_seconds > 0, probe.fits
    (True, 5)
    >>> probe_fit(demo.spec, demo.X_train, demo.y_train, n_subsets=8,
    ...           max_seconds=0.01) is None  # the selection would take longer
    True
    >>> sparse = probe_fit(demo.spec, demo.X_train, demo.y_train)  # 51 sensors
    >>> sparse.strategies, sparse.n_states, sparse.trees > 0
    ({'chain': 52, 'routed': 1347}, 1347, True)
    """
    from ..bank import ClassifierBank, MaskedBank
    from ..estimator import BudgetDAGClassifier, TrainingData
    from ..validation import as_spec

    check_params("probe_fit", PROBE_CONSTRAINTS, max_seconds=max_seconds,
                 fold_max_seconds=fold_max_seconds, n_jobs=n_jobs)  # fmt: skip
    spec = as_spec(sensors)
    if _selection_too_long(spec, len(X), max_seconds, params.get("n_subsets")):
        return None
    model = BudgetDAGClassifier(spec, n_jobs=n_jobs, **params).check_params()
    start = time.perf_counter()
    spec, Xv, y_fit, _ = model.check_fit_data(X, y)
    plan = model.fit_plan(spec, len(X))
    strategies = plan.strategies()
    if plan.grows_states:
        dag, found = None, {"strategies": strategies}
        n_states, select_seconds = max(strategies.values()), 0.0
        bank = plan.new_bank()
    else:
        dag, selection = plan.build_dag(TrainingData(spec, Xv, y_fit, {}))
        n_states = dag.n_states
        select_seconds = 0.0 if selection is None else time.perf_counter() - start
        found = {} if selection is None else {"n_subsets": len(selection.subsets)}
        bank = plan.new_bank(dag)
    if isinstance(bank, ClassifierBank) and dag is not None:
        cols, most = spec.column_indices(), fold_max_seconds
        timed = _time_states(bank, Xv, y_fit, dag, cols, most)
        return FitProbe(n_states, select_seconds, **found, **timed)
    if not isinstance(bank, MaskedBank):
        return FitProbe(n_states, select_seconds, **found)
    return _probe_masked(bank, spec, Xv, y_fit, dag, n_states, select_seconds,
                         found, fold_max_seconds)  # fmt: skip


def _probe_masked(
    bank: Any,
    spec: Any,
    Xv: Any,
    y_fit: Any,
    dag: Any,
    n_states: int,
    select_seconds: float,
    found: dict[str, Any],
    fold_max_seconds: float,
) -> FitProbe:
    """:func:`probe_fit` of a masked bank: its kind chosen (``"auto"``), its
    first fold timed where it should take at most ``fold_max_seconds``."""
    strategies = found.get("strategies")
    n_classes = int(y_fit.max()) + 1
    per_round = 1 if n_classes == 2 else n_classes
    # A sparse DAG's bank stacks its random subsets per row whatever the
    # states (fewer per row on a long table).
    masks = subsets_per_row(bank.masks_per_row, len(Xv))
    modelled = _modelled_bank_seconds(
        "masked",
        len(Xv),
        max(n_states, masks + 1) if strategies else n_states,
        per_round,
        bank.cv,
        Xv.shape[1],
        masks if strategies else bank.masks_per_row,
    )
    if modelled / bank.cv > fold_max_seconds:
        # The kind still decides what scoring the strategies' candidates
        # costs (a network's scores are far cheaper than hundreds of trees'),
        # and its choice is bounded: each kind learns from at most
        # ``TRIAL_PAIRS`` pairs.
        kind, choosing = None, 0.0
        if strategies and hasattr(bank, "choose_kind"):
            cols = spec.column_indices()
            choosing = _time_kind_choice(bank, Xv, y_fit, cols, n_classes)
            kind = bank.kind_
        rounds = boosting_rounds(len(Xv), "masked")
        return FitProbe(n_states, select_seconds + choosing,
                        trees=rounds * per_round, kind=kind,
                        rival=_rival_of(bank), **found)  # fmt: skip
    choosing, seconds, fold = _time_first_fold(
        bank, Xv, y_fit, dag, spec.column_indices(), n_classes
    )
    select_seconds += choosing
    fits = bank.cv + (0 if bank.cross_fit else 1)
    return FitProbe(n_states, select_seconds, seconds, fits, trees=_trees_of(fold),
                    kind=getattr(bank, "kind_", None), rival=_rival_of(bank),
                    model_bytes=float(stored_bytes(fold)), **found)  # fmt: skip


def _rival_of(bank: Any) -> str | None:
    """The rival kind an ``"auto"`` bank's choice left (None for others)."""
    rival = getattr(bank, "rival_kind", None)
    return None if rival is None else rival()


#: States a probe fits (first fold each) of a per-state bank, at most (and
#: within ``fold_max_seconds``): early stopping makes some states' fits
#: several times longer than the median, so a few states' mean swings. On
#: wine's full DAGs of 11 and 12 sensors (2 048 and 4 096 states) the mean
#: of 6 states was 1.4x and 1.05x the bank's per-fit CPU, of 24 states
#: 1.07x and 1.03x (its bytes: 1.18x and 1.15x) ...
PROBE_STATES = 24
#: ... but beyond this many states only while they took less than
#: ``PROBE_MORE_SECONDS`` of CPU in all (landsat's 15 states would double
#: its probe's 0.8 s).
PROBE_MIN_STATES = 6
PROBE_MORE_SECONDS = 0.5


def stored_bytes(obj: Any) -> int:
    """``obj``'s compressed size (zlib level 1 of its pickle): what a
    fitted model adds to a stored model, as the app's session store keeps
    it (the skops file is about as large)."""
    return len(zlib.compress(pickle.dumps(obj, protocol=5), 1))


def _time_states(
    bank: Any,
    Xv: Any,
    y_fit: Any,
    dag: Any,
    sensor_columns: list,
    max_seconds: float,
) -> dict[str, Any]:
    """A per-state bank's first-fold fits at up to ``PROBE_STATES`` states
    drawn at random (seeded), until ``max_seconds`` of CPU (beyond
    ``PROBE_MIN_STATES``, ``PROBE_MORE_SECONDS``): their mean CPU
    seconds and compressed bytes (empty when the DAG has no non-empty
    state or the first fit alone exceeds the time)."""
    n_classes = int(y_fit.max()) + 1
    rng = np.random.default_rng(0)
    states = rng.permutation(np.arange(1, dag.n_states))[:PROBE_STATES]
    if len(states):  # untimed: a process's first fit loads the libraries
        bank.fit_state_fold(Xv, y_fit, dag, sensor_columns, n_classes, 1)
    seconds, sizes = [], []
    for state in states:
        start = time.thread_time()
        model = bank.fit_state_fold(
            Xv, y_fit, dag, sensor_columns, n_classes, int(state)
        )
        seconds.append(time.thread_time() - start)
        sizes.append(stored_bytes(model))
        spent = sum(seconds)
        if spent > max_seconds or (
            len(seconds) >= PROBE_MIN_STATES and spent > PROBE_MORE_SECONDS
        ):
            break
    if not seconds:
        return {}
    return {
        "state_seconds": float(np.mean(seconds)),
        "model_bytes": float(np.mean(sizes)),
        "fits": bank.cv + (0 if bank.cross_fit else 1),
    }


def _time_first_fold(
    bank: Any,
    Xv: Any,
    y_fit: Any,
    dag: Any,
    sensor_columns: list,
    n_classes: int,
) -> tuple[float, float, Any]:
    """Fit a masked bank's first fold as its fit would, timed: the CPU
    seconds of an ``"auto"`` bank's choice of kind (each kind fitted once),
    the fold's CPU seconds (of the chosen kind), and the fold model."""
    choosing = 0.0
    if hasattr(bank, "choose_kind"):  # "auto": the kind chosen on validation rows
        choosing = _time_kind_choice(bank, Xv, y_fit, sensor_columns, n_classes)
    if not _kernels_loaded():
        # A process's first fit loads the kernels and LightGBM's library
        # (about 0.1 s, which the fit-time estimate counts once): loaded here
        # by a fit on a few rows of each class, so that the fold's time is
        # its own and not counted once per fold (breast cancer's first fold
        # took 0.16 s cold, 0.035 s warm).
        few = np.sort(
            np.concatenate(
                [
                    np.flatnonzero(y_fit == c)[:WARM_ROWS_PER_CLASS]
                    for c in range(n_classes)
                ]
            )
        )
        copy.deepcopy(bank).fit_first_fold(
            Xv[few], y_fit[few], dag, sensor_columns, n_classes
        )
    start = time.thread_time()  # the fold fits on this thread (single-threaded)
    fold = bank.fit_first_fold(Xv, y_fit, dag, sensor_columns, n_classes)
    return choosing, time.thread_time() - start, fold


#: Rows of each class the warm-up fit before a timed fold learns from.
WARM_ROWS_PER_CLASS = 10


def _time_kind_choice(
    bank: Any, Xv: Any, y_fit: Any, sensor_columns: list, n_classes: int
) -> float:
    """An ``"auto"`` bank's choice of kind on validation rows (``kind_``
    set), in CPU seconds, as the fold's: what a busy machine's other work
    leaves out (the estimate is of one thread's work)."""
    start = time.process_time()
    bank.choose_kind(Xv, y_fit, sensor_columns, n_classes)
    return time.process_time() - start


def _selection_too_long(
    spec: Any, n_rows: int, max_seconds: float | None, n_subsets: Any
) -> bool:
    """Whether Alg. 2's selection should take longer than ``max_seconds``
    (by ``SELECTION_SECONDS_PER_SENSOR2_ROW`` on the rows it scores)."""
    from ..estimator import SUBSET_MAX_ROWS

    if max_seconds is None or not n_subsets:
        return False
    scored = min(n_rows, SUBSET_MAX_ROWS) * spec.n_sensors**2
    return scored * SELECTION_SECONDS_PER_SENSOR2_ROW > max_seconds


def _trees_of(model: Any) -> float | None:
    """The boosting trees of a fitted fold model (None: not a booster)."""
    rounds = getattr(model, "n_iter_", None)
    per_round = getattr(model, "n_trees_per_iteration_", 1)
    return None if rounds is None else float(max(1, int(rounds)) * int(per_round))


def selected_dag_states(
    sensors: Any,
    X: Any,
    y: Any,
    *,
    n_jobs: int | None = 1,
    max_seconds: float | None = None,
    **params: Any,
) -> tuple[int, float] | None:
    """The states of the DAG a fit would build over selected subsets, and
    the seconds selecting them took (:func:`probe_fit` without the fold).

    Parameters
    ----------
    sensors, X, y, n_jobs, max_seconds, **params
        As for :func:`probe_fit`.

    Returns
    -------
    (int, float) or None
        The DAG's states and the selection's wall-clock seconds; None when
        the fit selects no subsets (no ``n_subsets``, or a sparse DAG) or
        the selection would take longer than ``max_seconds``.

    Examples
    --------
    >>> from budgetdag_core import load_demo
    >>> demo = load_demo("cube_nm")
    >>> states, seconds = selected_dag_states(
    ...     demo.spec, demo.X_train, demo.y_train, n_subsets=8, include_all=True)
    >>> 8 <= states <= dag_states_at_most(demo.spec.n_sensors, 8, include_all=True)
    True
    >>> selected_dag_states(demo.spec, demo.X_train, demo.y_train, n_subsets=None)
    """
    if not params.get("n_subsets"):
        return None
    probe = probe_fit(
        sensors,
        X,
        y,
        n_jobs=n_jobs,
        max_seconds=max_seconds,
        fold_max_seconds=0.0,
        **params,
    )
    return None if probe is None else (probe.n_states, probe.select_seconds)


#: Seconds per (row x sensor subset x boosting tree) of scoring a sparse
#: DAG's candidates with the any-subset bank's compiled trees (single
#: threaded). Measured (chain and grown, 2-core machine): 5.4e-9 to 5.9e-9
#: on digits (64 sensors, 342 trees a fold), 7e-9 to 1e-8 on spam and CUBE-NM.
SECONDS_PER_TREE_SCORE = 7e-9
#: Fixed seconds per scoring call (a chain step, a grown state): 0.35 ms.
SECONDS_PER_SCORING_CALL = 3.5e-4
#: The grown DAG scores about this many (row, subset) pairs per training row
#: and sensor: 37 (spam) to 88 (breast cancer), 48 on digits.
GROWN_SCORES_PER_ROW_SENSOR = 50
#: Small tables grow fewer states than ``max_states`` (a state needs rows):
#: about this many per training row (wine's 133 rows grew 145, breast
#: cancer's 426 grew 875).
GROWN_STATES_PER_ROW = 2
#: Graph-Reduce on a grown DAG rolls the rows its policies send off their
#: flow out under the policies below (the bank asked at each state they
#: reach): this many times a chain's or routed DAG's seconds per state
#: (1.4 on breast cancer, 1.6 on digits; issue 53).
GROWN_ROLLOUT_FACTOR = 1.5
#: ``cost_scale="auto"`` (the default) learns the policies at this many
#: scales on the one bank (at most ``AUTO_MAX_TRIALS``): 5 or 6 on wine's
#: full DAG, breast cancer's and digits' strategies (issue 53: the grown
#: DAG's time was estimated at one Graph-Reduce, a third of its fit).
AUTO_SCALE_TRIALS = 5.5


#: ``dag="auto"`` with this many classes or more: the routed DAG's posterior
#: tree or a route usually stands clear, and the choice grows it and judges
#: it against the chain (dna, CUBE, CUBE-NM, digits, shuttle); with two
#: classes it seldom does (breast cancer, spam: the chain kept unjudged) ...
JUDGED_MIN_CLASSES = 3
#: ... in this many held-out parts on average: one in most fits, and
#: ``VALIDATION_FOLDS`` in a close call (1 of the 11 judged default fits of
#: ``bench_afa.py``'s tables at seeds 0 and 1; the 64 pixels of digits in
#: ``bench_cold_start.py``; shuttle at seed 0), whose choice then takes most
#: of the fit: with two, both kinds stay within 1.5x of the estimate ...
JUDGED_PARTS = 2.0
#: ... and the routed DAG is kept (then grown on every row, and its policies
#: learned) in this share of those fits (7 of those 11).
ROUTED_KEPT_SHARE = 0.5


#: Seconds per (row x sensor subset) of scoring a sparse DAG's candidates
#: with a mask-encoded bank's model (it has no trees), besides
#: ``SECONDS_PER_SCORING_CALL``: digits' network (64 sensors, 1 347 rows, 10
#: classes) grew its chain (2.9 M pairs the model above counts) in 1.4 s and
#: its routed DAG (7.3 M) in 5.4 s, breast cancer's (30 sensors, 2 classes)
#: its chain (0.21 M) in 0.1 s and its routed DAG (0.9 M) in 0.48 s; wine's
#: logistic regression's growth was nearly all calls.
ENCODED_SECONDS_PER_SCORE = {"masked_mlp": 6e-7, "masked_logistic": 2e-7}
#: A mask-encoded kind's folds fit in worker processes (no threads): a
#: process's first parallel fit starts them (wine, 2 workers: 4.5 s first,
#: 0.4 s second fit).
WORKER_PROCESSES_START_SECONDS = 3.5


def policy_fits(params: dict[str, Any]) -> float:
    """Graph-Reduces a fit with estimator parameters ``params`` runs on its
    bank: ``AUTO_SCALE_TRIALS`` for ``cost_scale="auto"`` (the default),
    else one."""
    return AUTO_SCALE_TRIALS if params.get("cost_scale", "auto") == "auto" else 1.0


def strategy_states(
    strategies: dict[str, int], n_rows: int, n_sensors: int, n_classes: int = 2
) -> dict[str, int]:
    """The states each strategy's DAG of one-sensor additions typically has,
    simplest first: what the fit-time and storage estimates count.

    A chain has every sensor's state and the empty one; the grown DAG as
    many as the rows make (``GROWN_STATES_PER_ROW``); the routed DAG the
    chain's, a route's ``MAX_ROUTES`` group orders and, with
    ``JUDGED_MIN_CLASSES`` classes or more, the posterior tree's leaves'
    orders (``routed_states``); each at most what the strategy can
    grow. The first is the simplest strategy (the validation choice's
    default among several).

    Parameters
    ----------
    strategies : dict of str to int
        Each strategy a fit builds and the most states its DAG can have
        (``FitProbe.strategies``, a fit plan's ``strategies()``).
    n_rows : int
        Training rows.
    n_sensors : int
        Sensors of the spec.
    n_classes : int, default=2
        Classes of the target (a regressor: 2, it has no posterior tree).

    Returns
    -------
    dict of str to int

    Examples
    --------
    >>> strategy_states({"grown": 1000, "chain": 31}, 426, 30)
    {'chain': 31, 'grown': 852}
    >>> strategy_states({"chain": 65, "routed": 1347}, 1347, 64, n_classes=10)
    {'chain': 65, 'routed': 853}
    """
    from ..strategies import SIMPLEST_FIRST

    check_params(
        "strategy_states",
        {"n_rows": [int_in(1)], "n_sensors": [int_in(1)], "n_classes": [int_in(2)]},
        n_rows=n_rows,
        n_sensors=n_sensors,
        n_classes=n_classes,
    )
    typical = {
        "grown": GROWN_STATES_PER_ROW * n_rows,
        "routed": routed_states(n_rows, n_sensors, n_classes),
    }
    order = [n for n in SIMPLEST_FIRST if n in strategies]
    order += [n for n in strategies if n not in order]
    states = {}
    for name in order:
        most = int(strategies[name])
        states[name] = max(1, min(most, int(typical.get(name, n_sensors + 1))))
    return states


def routed_states(n_rows: int, n_sensors: int, n_classes: int) -> int:
    """The routed DAG's typical states: the chain's, ``MAX_ROUTES`` groups'
    orders of ``tail_length`` sensors, and with ``JUDGED_MIN_CLASSES``
    classes or more the posterior tree: a leaf per two floors of rows (at
    most ``2 ** POSTERIOR_DEPTH``), each with its splits and its order.
    Measured: breast cancer (30 sensors, 426 rows, 2 classes) 85, digits'
    pixels (64, 1 347, 10) 697, CUBE-NM (51, 600, 8) 833; this gives 87, 853
    and 688.

    Examples
    --------
    >>> routed_states(426, 30, 2), routed_states(1347, 64, 10)
    (87, 853)
    """
    tail = tail_length(n_sensors)
    states = n_sensors + 1 + MAX_ROUTES * tail
    if n_classes >= JUDGED_MIN_CLASSES:
        floor = route_floor(n_rows)
        leaves = min(2**POSTERIOR_DEPTH, n_rows // (2 * floor))
        states += leaves * (tail + POSTERIOR_DEPTH)
    return states


def _growth_seconds(
    n_rows: int,
    M: int,
    strategies: dict[str, int],
    states: dict[str, int],
    *,
    tests_only: bool = False,
    trees: bool = False,
) -> tuple[float, int]:
    """Scores and scoring calls of growing each strategy's DAG (with
    ``tests_only``, the routed DAG's tests alone: its routing sensor's
    search and its posterior tree's first split, which find nothing to grow
    on a table where it does not stand clear; with ``trees``, a tree bank's,
    which the routing search asks for each pair of sensors once)."""
    scores, calls = 0.0, 0
    chain = M * (M + 1) / 2 * min(n_rows, CHAIN_SCORE_ROWS) + M * n_rows
    if "chain" in strategies:  # each step scores the sensors left, then a table
        scores += chain
        calls += 2 * M
    if "routed" in strategies:  # each candidate route's pairs, its tree's root
        pairs = M * (M + 1) / 2 if trees else M * M
        scores += pairs * min(n_rows, ROUTE_SCORE_ROWS)
        scores += M * min(n_rows, CHAIN_SCORE_ROWS)
        calls += 2 * M
    if "routed" in strategies and not tests_only:
        # each group's order (the groups share the rows: about one more
        # chain), the tree's later splits and its leaves' orders: about every
        # row at each
        scores += chain + (POSTERIOR_DEPTH + tail_length(M)) * M * n_rows
        calls += states["routed"]
    if "grown" in strategies:
        scores += GROWN_SCORES_PER_ROW_SENSOR * n_rows * M
        calls += 2 * states["grown"]
    return scores, calls


def sparse_fit_parts(
    spec: Any,
    n_rows: int,
    n_classes: int,
    strategies: dict[str, int],
    *,
    cv: int,
    n_jobs: int,
    probe: FitProbe | None,
    masks: int,
    kinds: int = 1,
    trials: float = 1.0,
) -> dict[str, float]:
    """The parts of :func:`estimate_fit_seconds_for` for a fit that builds
    DAGs of one-sensor additions (its start aside): ``"choice"``, the bank
    kind's choice (``kinds`` tried, each fitted once on validation-carved
    rows; timed by the probe); ``"bank"``, the any-subset bank's folds
    (``masks`` random subsets per row); ``"growth"``, the kept strategy's
    scoring of candidates on every row (one thread); ``"choose"``, the
    validation choice among several strategies (each one's DAG grown again
    on the fit rows of a held-out part, and its policies at one scale);
    ``"policies"``, ``trials`` Graph-Reduces of the kept strategy.

    With several strategies and ``JUDGED_MIN_CLASSES`` classes or more, the
    choice judges them in ``JUDGED_PARTS`` held-out parts and keeps the
    routed DAG in ``ROUTED_KEPT_SHARE`` of the fits (the kept parts count
    its share of each); with fewer, the routed DAG's tests find nothing and
    the simplest strategy (:func:`strategy_states`' first) is kept unjudged.
    """
    per_round = 1 if n_classes == 2 else n_classes
    M = spec.n_sensors
    timed = probe is not None and probe.fold_seconds is not None
    if timed:
        # An "auto" bank's choice of kind (timed with it) fitted the chosen
        # kind's first fold, which the bank keeps: one fit fewer.
        fits = (probe.fits or cv) - (1 if probe.kind is not None else 0)
        bank = max(fits, 1) * probe.fold_seconds
        choice = probe.select_seconds  # the bank kind chosen on validation rows
    else:
        per_row = subsets_per_row(masks, n_rows)  # fewer on a long table
        bank = _modelled_bank_seconds(
            "masked", n_rows, per_row + 1, per_round, cv, len(spec.columns), per_row
        )
        choice = kinds * bank / cv  # each kind tried: about one fold's fit
        if probe is not None and probe.kind is not None:
            choice = probe.select_seconds  # the kind's choice, timed alone
    cores = os.cpu_count() or 1
    workers = max(1, min(n_jobs, cv, cores))
    bank /= 1 + PARALLEL_EFFICIENCY * (workers - 1)
    trees = probe.trees if timed and probe.trees else None
    if trees is None:
        trees = boosting_rounds(n_rows, "masked") * per_round

    def seconds(kind: str | None, scores: float, calls: int) -> float:
        """Seconds of scoring ``scores`` pairs in ``calls`` with ``kind``."""
        per_score = ENCODED_SECONDS_PER_SCORE.get(kind, trees * SECONDS_PER_TREE_SCORE)
        return scores * per_score + calls * SECONDS_PER_SCORING_CALL

    kind = probe.kind if probe is not None else None
    tree_bank = kind not in ENCODED_SECONDS_PER_SCORE
    states = strategy_states(strategies, n_rows, M, n_classes)
    simplest = next(iter(states))
    rollout = {"grown": GROWN_ROLLOUT_FACTOR}

    def reduce_on(rows: int) -> dict[str, float]:
        """Each strategy's Graph-Reduce seconds on ``rows`` rows."""
        return {
            name: _policy_seconds(rows, k, children=1.0) * rollout.get(name, 1.0)
            for name, k in states.items()
        }

    reduce = reduce_on(n_rows)
    judged = len(states) > 1 and n_classes >= JUDGED_MIN_CLASSES
    # The share of fits that keep each strategy: the simplest, or with a
    # judged choice the routed DAG in ROUTED_KEPT_SHARE of them.
    kept = {simplest: 1.0}
    if judged and "routed" in states and simplest != "routed":
        kept = {simplest: 1.0 - ROUTED_KEPT_SHARE, "routed": ROUTED_KEPT_SHARE}
    # On every row, the kept strategy's DAG only (the others wait until a
    # fit keeps them: ``strategies.PendingBank``).
    growth = sum(
        share
        * seconds(kind, *_growth_seconds(n_rows, M, {name: 0}, states, trees=tree_bank))
        for name, share in kept.items()
    )
    policies = trials * sum(share * reduce[name] for name, share in kept.items())
    choose = 0.0
    if len(states) > 1:
        # The choice grows and judges on at most CHOICE_MAX_ROWS rows.
        choice_rows = min(n_rows, CHOICE_MAX_ROWS)
        fit_rows = int(math.ceil((1.0 - VALIDATION_SHARE) * choice_rows))
        judging = reduce_on(choice_rows)
        grown = _growth_seconds(
            fit_rows, M, strategies, states, tests_only=not judged, trees=tree_bank
        )
        choose = seconds(kind, *grown)
        rival = probe.rival if probe is not None and "routed" in states else None
        if rival is not None:
            # The rival kind's bank (about as long as the chosen kind's), and
            # its routed DAG grown and judged beside the others.
            bank *= 2
            routed = _growth_seconds(
                fit_rows, M, {"routed": 0}, states,
                trees=rival not in ENCODED_SECONDS_PER_SCORE,
            )  # fmt: skip
            choose += seconds(rival, *routed) + judging["routed"]
        if judged:
            choose = JUDGED_PARTS * (choose + sum(judging.values()))
    return {
        "choice": choice,
        "bank": bank,
        "growth": growth,
        "choose": choose,
        "policies": policies,
    }


def _sparse_fit_seconds(
    spec: Any,
    n_rows: int,
    n_classes: int,
    strategies: dict[str, int],
    *,
    cv: int,
    n_jobs: int,
    first_fit: bool | None,
    probe: FitProbe | None,
    masks: int,
    kinds: int = 1,
    trials: float = 1.0,
) -> float:
    """Seconds of a fit that builds DAGs of one-sensor additions: the sum of
    :func:`sparse_fit_parts` and the fit's start."""
    parts = sparse_fit_parts(
        spec, n_rows, n_classes, strategies, cv=cv, n_jobs=n_jobs, probe=probe,
        masks=masks, kinds=kinds, trials=trials,
    )  # fmt: skip
    start, first_fit = _start_seconds(parts["bank"], None, first_fit)
    encoded = probe.kind if probe is not None else None
    workers = max(1, min(n_jobs, cv, os.cpu_count() or 1))
    if encoded in ENCODED_SECONDS_PER_SCORE and workers > 1 and first_fit:
        start += WORKER_PROCESSES_START_SECONDS  # its folds fit in processes
    return sum(parts.values()) + start


def estimate_fit_seconds_for(
    sensors: Any,
    X: Any,
    y: Any,
    *,
    n_jobs: int | None = 1,
    selected: tuple[int, float] | None = None,
    first_fit: bool | None = None,
    probe: FitProbe | None = None,
    **params: Any,
) -> float:
    """:func:`estimate_fit_seconds` for fitting ``BudgetDAGClassifier(sensors,
    n_jobs=n_jobs, **params)`` on ``X``, ``y``, or ``BudgetDAGRegressor``
    where ``y`` is continuous (a regressor per state and fold: its own
    measured costs).

    Parameters
    ----------
    sensors : SensorSpec, dict or JSON
        The estimator's sensors.
    X, y : the training table and target.
    n_jobs : int or None, default=1
        The estimator's ``n_jobs``.
    selected : (int, float), optional
        ``selected_dag_states()`` of the same fit: its states replace the
        most the DAG can have, and its seconds (the fit's first step) count.
    first_fit : bool, optional
        As for :func:`estimate_fit_seconds` (whether the fit is its process's
        first; default: whether this process has not fitted yet).
    probe : FitProbe, optional
        :func:`probe_fit` of the same fit: its states and selection seconds
        as ``selected``, and its timed fold for a masked bank.
    **params
        Other estimator parameters; ``n_subsets``, ``bank_kind``,
        ``classifier`` and ``cv`` change the estimate.

    Returns
    -------
    float
        Seconds, from the rows, the states (``dag_states_at_most()``),
        classes, columns, bank kind, folds and cores, counting the
        compilation of a first fit after an install.

    Examples
    --------
    >>> from budgetdag_core import load_demo
    >>> demo = load_demo("landsat")
    >>> estimate_fit_seconds_for(demo.spec, demo.X_train, demo.y_train) > 1
    True

    A continuous target is the regressor's (with ``dag="full"``, 1 024
    states x 6 fits; ``dag="auto"`` leaves so long a full DAG):

    >>> import numpy as np
    >>> from budgetdag_core import SensorSpec
    >>> rng = np.random.default_rng(0)
    >>> X10 = rng.normal(size=(309, 10))
    >>> spec10 = SensorSpec.per_column([f"x{i}" for i in range(10)])
    >>> estimate_fit_seconds_for(spec10, X10, X10.sum(axis=1), dag="full") > 60
    True
    >>> estimate_fit_seconds_for(spec10, X10, X10.sum(axis=1)) < 10
    True
    """
    import pandas as pd
    from sklearn.utils.multiclass import type_of_target

    from ..estimator import BudgetDAGClassifier
    from ..validation import as_spec

    spec = as_spec(sensors)
    if type_of_target(np.asarray(y)) == "continuous":
        # A continuous target is fitted by BudgetDAGRegressor (its values are
        # no classes): its own bank and DAG choice.
        return _regressor_fit_seconds(spec, X, n_jobs, first_fit, params)
    # The estimator's own checks name a bad parameter (cv, n_subsets, ...).
    model = BudgetDAGClassifier(spec, n_jobs=n_jobs, **params).check_params()
    plan = model.fit_plan(spec, len(X))
    strategies = plan.strategies()
    if plan.grows_states:
        bank = plan.new_bank()
        return _sparse_fit_seconds(
            spec, len(X), max(2, int(pd.Series(y).nunique())), strategies,
            cv=int(params.get("cv", 5)), n_jobs=effective_n_jobs(n_jobs),
            first_fit=first_fit, probe=probe,
            masks=bank.masks_per_row, kinds=_kinds_tried(bank, len(X)),
            trials=policy_fits(params),
        )  # fmt: skip
    n_states = dag_states_at_most(
        spec.n_sensors,
        params.get("n_subsets"),
        include_all=bool(params.get("include_all", False)),
    )
    selecting = 0.0
    if probe is not None:
        selected = (probe.n_states, probe.select_seconds)
    if selected is not None:
        states, seconds = _checked_selected(selected)
        n_states, selecting = min(n_states, states), seconds
    timed = probe is not None and probe.fold_seconds is not None
    per_state = probe is not None and probe.state_seconds is not None
    kind = resolve_bank_kind(
        params.get("bank_kind", "auto"), params.get("classifier"), n_states
    )
    return selecting + estimate_fit_seconds(
        len(X),
        n_states,
        max(2, int(pd.Series(y).nunique())),
        kind,
        cv=int(params.get("cv", 5)),
        n_jobs=effective_n_jobs(n_jobs),
        n_columns=len(spec.columns),
        first_fit=first_fit,
        fold_seconds=probe.fold_seconds if timed else None,
        fits=probe.fits if timed or per_state else None,
        state_seconds=probe.state_seconds if per_state else None,
        policy_fits=policy_fits(params),
    )


#: Seconds of one per-state regressor fit of ``BudgetDAGRegressor``'s bank
#: (``cv`` out-of-fold fits and one on every row per non-empty state): fixed,
#: and per training row. Its boosting model is scikit-learn's early-stopped
#: ``HistGradientBoostingRegressor`` (at least ``n_iter_no_change`` rounds,
#: a validation score each), far slower per fit than the classifier's
#: LightGBM: 10 sensors' full DAG on 309 rows (1 023 states x 6 fits) took
#: 157 s, about 25 ms a fit, and 13.9 s with ``regressor="ridge"``.
REGRESSOR_SECONDS_PER_FIT = {"boosting": 0.02, "ridge": 0.002}
REGRESSOR_SECONDS_PER_FIT_ROW = {"boosting": 2e-5, "ridge": 1e-6}


def _regressor_fit_seconds(
    spec: Any, X: Any, n_jobs: int | None, first_fit: bool | None, params: dict
) -> float:
    """:func:`estimate_fit_seconds_for` of ``BudgetDAGRegressor(spec,
    n_jobs=n_jobs, **params)``: a regressor per state and fold on the full
    DAG (or the DAG over Alg. 2's subsets), else the classifier's model of a
    many-sensor fit with one tree per boosting round."""
    from ..estimator import BudgetDAGRegressor

    model = BudgetDAGRegressor(spec, n_jobs=n_jobs, **params).check_params()
    n_rows, cv = len(X), int(params.get("cv", 5))
    workers = effective_n_jobs(n_jobs)
    plan = model.fit_plan(spec, n_rows)
    strategies = plan.strategies()
    if plan.grows_states:
        bank = plan.new_bank()
        tried = [k for k in bank.candidates() if k != "masked_mlp"]
        return _sparse_fit_seconds(
            spec, n_rows, 2, strategies, cv=cv, n_jobs=workers,
            first_fit=first_fit, probe=None, masks=bank.masks_per_row,
            kinds=len(tried) if len(tried) > 1 else 0, trials=policy_fits(params),
        )  # fmt: skip
    n_states = dag_states_at_most(
        spec.n_sensors,
        params.get("n_subsets"),
        include_all=bool(params.get("include_all", False)),
    )
    regressor = params.get("regressor")
    kind = "ridge" if regressor == "ridge" else "boosting"  # others: as boosting
    per_fit = REGRESSOR_SECONDS_PER_FIT[kind]
    per_fit += REGRESSOR_SECONDS_PER_FIT_ROW[kind] * n_rows
    parallel = max(n_states - 1, 1) * (cv + 1)
    bank = per_fit * parallel
    cores = os.cpu_count() or 1
    bank /= 1 + PARALLEL_EFFICIENCY * (max(1, min(workers, parallel, cores)) - 1)
    policies = policy_fits(params) * _policy_seconds(n_rows, n_states)
    start, _ = _start_seconds(bank, None, first_fit)
    return bank + policies + start


def _kinds_tried(bank: Any, n_rows: int) -> int:
    """The bank kinds an ``"auto"`` sparse bank fits once each to choose one
    (the network only up to ``AUTO_NEURAL_MAX_ROWS`` rows; one left: none)."""
    tried = [
        kind
        for kind in getattr(bank, "candidates", ())
        if kind != "masked_mlp" or n_rows <= AUTO_NEURAL_MAX_ROWS
    ]
    return len(tried) if len(tried) > 1 else 0


def _checked_selected(selected: Any) -> tuple[int, float]:
    """``estimate_fit_seconds_for``'s ``selected`` (states, seconds), checked."""
    try:
        states, seconds = selected
    except (TypeError, ValueError):
        raise ValueError(
            f"selected must be a pair (states, seconds); got {selected!r:.60}."
        ) from None
    check_params(
        "estimate_fit_seconds_for",
        {"selected[0]": [int_in(1)], "selected[1]": [real_in(0.0)]},
        **{"selected[0]": states, "selected[1]": seconds},
    )
    return int(states), float(seconds)
