"""``dag="auto"`` with at most 12 sensors: the full DAG where its bank's
estimated fit is short, else the many-sensor strategies.

The full DAG has a state per sensor subset (2^n). The classifier's default
bank fits one masked model for all of them beyond 32 states (its cost grows
with the rows, hardly with the states), so its full DAG stays. A regressor's
bank fits one model per state and fold: 1 024 states x 5 folds of boosting on
309 rows took 157 s (1 506 fits of one gradient boosting), where the chain and
routed DAGs on the any-subset bank take seconds. So a regressor whose bank
kind the strategies accept (``regressor`` None, ``"boosting"`` or
``"ridge"``) builds the full DAG only when
``n_states x cv x (fixed + per-row seconds)`` is at most
``FULL_DAG_MAX_SECONDS``; DAGs of at most ``ALWAYS_FULL_STATES`` states stay
full (a chain is no simpler there). With a given regressor estimator the full
DAG stays (the strategies' any-subset bank refuses it).
"""

from __future__ import annotations

from typing import Any

from ..validation import MAX_FULL_DAG_SENSORS

#: Seconds of one per-state bank fit, (fixed, per training row), from the
#: issue's measurements on the 2-core benchmark machine: boosting 14 ms on 40
#: rows and 31 ms on 309 (5 120 fits in 72.5 s and 157 s), ridge 2.7 ms.
PER_STATE_FIT_SECONDS = {"boosting": (0.012, 6e-5), "ridge": (0.0027, 2e-6)}
#: The longest estimated full-DAG bank fit ``dag="auto"`` builds (about five
#: one-thread gradient boostings on a few hundred rows: the many-sensor
#: strategies' any-subset bank costs about that).
FULL_DAG_MAX_SECONDS = 5.0
#: DAGs of at most this many states (3 sensors) are always full.
ALWAYS_FULL_STATES = 8


def full_dag_seconds(kind: str, n_states: int, n_rows: int, cv: int) -> float:
    """Estimated seconds of a per-state bank's fit on the full DAG.

    Examples
    --------
    >>> round(full_dag_seconds("boosting", 1024, 300, 5), 1)
    153.6
    """
    fixed, per_row = PER_STATE_FIT_SECONDS[kind]
    return n_states * cv * (fixed + per_row * n_rows)


def full_dag_too_slow(est: Any, n_sensors: int, n_rows: int | None) -> bool:
    """Whether ``dag="auto"`` should leave the full DAG of ``n_sensors`` for
    the many-sensor strategies on ``n_rows`` training rows (None: unknown,
    the full DAG stays)."""
    n_states = 2**n_sensors
    if n_rows is None or n_states <= ALWAYS_FULL_STATES:
        return False
    if not hasattr(est, "regressor"):  # a classifier's bank: see the module
        return False
    kind = "boosting" if est.regressor is None else est.regressor
    if not isinstance(kind, str) or kind not in PER_STATE_FIT_SECONDS:
        return False
    return full_dag_seconds(kind, n_states, n_rows, est.cv) > FULL_DAG_MAX_SECONDS


def few_sensor_strategies(strategies: tuple[str, ...], n_sensors: int) -> tuple:
    """The strategies a fit that left the full DAG of at most 12 sensors
    builds: not the grown DAG where it has others to choose from (on 10
    sensors it took as long as the bank, and a chain, or a routed DAG, of
    so few sensors leaves it little to add).

    Examples
    --------
    >>> few_sensor_strategies(("chain", "routed", "grown"), 10)
    ('chain', 'routed')
    >>> few_sensor_strategies(("grown",), 10)
    ('grown',)
    >>> few_sensor_strategies(("chain", "grown"), 20)
    ('chain', 'grown')
    """
    if len(strategies) > 1 and n_sensors <= MAX_FULL_DAG_SENSORS:
        return tuple(name for name in strategies if name != "grown")
    return tuple(strategies)
