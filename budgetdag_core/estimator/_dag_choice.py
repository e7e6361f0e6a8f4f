"""``dag="auto"`` with at most 12 sensors: the full DAG where its estimated
fit is short, else the many-sensor strategies.

The full DAG has a state per sensor subset (2^n). Two parts of its fit grow
with the states: a regressor's bank, one model per state and fold (1 024
states x 5 folds of boosting on 309 rows took 157 s, 1 506 times one
gradient boosting; the classifier's default bank fits one masked model for
all states beyond 32, whose cost hardly grows with them), and the policies,
one cost-sensitive learner per state whose actions grow with the sensors
(``cost_scale="auto"`` learns them at several scales: ``AUTO_TRIALS``,
counted at every scale so that one bank serves a sweep's clones). So
``dag="auto"`` builds the full DAG only when

    bank seconds + trials x n_states x n_sensors x max(rows, POLICY_MIN_ROWS)
    x POLICY_SECONDS

is at most ``FULL_DAG_MAX_SECONDS`` and the bank's part at most
``FULL_DAG_MAX_BANK_SECONDS`` (a per-state regressor bank loses to the
strategies' any-subset bank from a few states on: on iris, 4 sensors, the
full DAG's fit took 9.5 s and the chain's 0.7 s), else the chain and routed DAGs on the
any-subset bank (seconds); DAGs of at most ``ALWAYS_FULL_STATES`` states stay
full (a chain is no simpler there), and so does a fit whose bank the
strategies refuse (a given ``classifier``, a ``bank_kind`` other than
``"auto"``, a regressor estimator). The bundled demos of at most 6 sensors
keep their full DAG (landsat: 0.6 s of policies, 3.4 s counting six fits).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._bounded_io import short_repr

#: Seconds of one per-state bank fit, (fixed, per training row), from the
#: issue's measurements on the 2-core benchmark machine: boosting 14 ms on 40
#: rows and 31 ms on 309 (5 120 fits in 72.5 s and 157 s), ridge 2.7 ms.
PER_STATE_FIT_SECONDS = {"boosting": (0.012, 6e-5), "ridge": (0.0027, 2e-6)}
#: Seconds of policy learning per (state x sensor x row): the filter tree's
#: logistic regressions at a state grow with its actions (measured: 256
#: states x 8 sensors x 569 rows in about 2 s, 1 024 x 10 x 40 in 1.5 s).
POLICY_SECONDS = 2e-6
#: Fewer rows cost as much as this many (the learners' fixed costs).
POLICY_MIN_ROWS = 200
#: Policy fits of ``cost_scale="auto"`` (its search's usual number).
AUTO_TRIALS = 6
#: The longest estimated full-DAG fit ``dag="auto"`` builds (about what the
#: many-sensor strategies' any-subset bank costs on a few hundred rows).
FULL_DAG_MAX_SECONDS = 5.0
#: The longest estimated per-state bank fit of a full DAG ``dag="auto"``
#: builds (a regressor's: about 80 boosting fits on a few dozen rows).
FULL_DAG_MAX_BANK_SECONDS = 1.0
#: DAGs of at most this many states (3 sensors) are always full.
ALWAYS_FULL_STATES = 8


def full_dag_seconds(
    est: Any, n_sensors: int, n_rows: int, *, bank_only: bool = False
) -> float | None:
    """Estimated seconds of ``est``'s fit on the full DAG of ``n_sensors``
    (bank and policies, or with ``bank_only`` its per-state bank's); None
    where the strategies refuse its bank.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor
    >>> round(full_dag_seconds(BudgetDAGRegressor(cost_scale=1.0), 10, 300))
    190
    >>> round(full_dag_seconds(BudgetDAGClassifier(cost_scale=1.0), 4, 4435), 1)
    3.4
    """
    n_states = 2**n_sensors
    if hasattr(est, "regressor"):
        kind = "boosting" if est.regressor is None else est.regressor
        if not isinstance(kind, str) or kind not in PER_STATE_FIT_SECONDS:
            return None
        fixed, per_row = PER_STATE_FIT_SECONDS[kind]
        bank = n_states * est.cv * (fixed + per_row * n_rows)
    else:
        if getattr(est, "classifier", None) is not None or est.bank_kind != "auto":
            return None
        bank = 0.0
    if bank_only:
        return bank
    # As many policy fits as cost_scale="auto" runs, whatever the cost scale:
    # a bank fitted by one estimator serves its clones at other scales (sweeps).
    rows = max(n_rows, POLICY_MIN_ROWS)
    return bank + AUTO_TRIALS * n_states * n_sensors * rows * POLICY_SECONDS


def check_n_rows(n_rows: Any) -> None:
    """``ValueError`` unless ``n_rows`` is a non-negative integer or None."""
    if n_rows is not None and (
        isinstance(n_rows, bool)
        or not isinstance(n_rows, int | np.integer)
        or n_rows < 0
    ):
        raise ValueError(
            f"n_rows must be a non-negative integer or None; got {short_repr(n_rows)}."
        )


def full_dag_too_slow(est: Any, n_sensors: int, n_rows: int | None) -> bool:
    """Whether ``dag="auto"`` should leave the full DAG of ``n_sensors`` for
    the many-sensor strategies on ``n_rows`` training rows (None: unknown,
    the full DAG stays).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGRegressor
    >>> full_dag_too_slow(BudgetDAGRegressor(), 10, 300)
    True
    >>> full_dag_too_slow(BudgetDAGRegressor(), 3, 300)
    False
    """
    if n_rows is None or 2**n_sensors <= ALWAYS_FULL_STATES:
        return False
    seconds = full_dag_seconds(est, n_sensors, n_rows)
    if seconds is None:
        return False
    bank = full_dag_seconds(est, n_sensors, n_rows, bank_only=True)
    return seconds > FULL_DAG_MAX_SECONDS or bank > FULL_DAG_MAX_BANK_SECONDS
