"""A rough estimate of how long ``BudgetDAGClassifier.fit`` takes, before fitting.

The app shows it on the Train page. The constants are measured on this
project's 2-core benchmark machine (``benchmarks/bench_fast_model.py``); they
say "seconds or minutes", not a promise: expect a factor of two either way, and
more on a busy machine.
"""

from __future__ import annotations

import math

from ..bank._masked import MAX_STACK_ROWS
from ..bank._models import MAX_ROUNDS
from ..bank._per_state import AUTO_MASKED_MIN_STATES

#: Seconds per (training row x tree x boosting round) of one LightGBM fit.
BOOST_SECONDS_PER_ROW_TREE = 1.2e-7
#: Boosting rounds a bank fit typically runs before early stopping (the
#: per-state ``"hgb"`` bank at ``REFERENCE_ROWS`` training rows).
TYPICAL_ROUNDS = {"hgb": 35, "masked": 80}
#: Rows at which the per-state bank's rounds were measured (landsat). Its
#: early stopping ends later on more rows: letter's all-sensor fits ran 77
#: rounds on 4 435 of its rows and 150 on all 16 000 (about the square root
#: of the rows), so the estimate scales the rounds by ``sqrt(rows / 4 435)``,
#: up to the round cap.
REFERENCE_ROWS = 4435
#: Seconds per (row x state x fold) of a logistic-regression bank.
LOGISTIC_SECONDS_PER_ROW_STATE = 2e-6
#: Fixed seconds per model fit (data set construction, early-stopping checks).
SECONDS_PER_FIT = 0.01
#: Seconds per (row x state) of policy learning (Graph-Reduce over all nodes).
POLICY_SECONDS_PER_ROW_STATE = 3e-6


def hgb_rounds(n_rows: int) -> float:
    """Typical boosting rounds of one per-state bank fit on ``n_rows`` rows."""
    return min(TYPICAL_ROUNDS["hgb"] * math.sqrt(n_rows / REFERENCE_ROWS), MAX_ROUNDS)


def estimate_fit_seconds(
    n_rows: int,
    n_states: int,
    n_classes: int,
    kind: str = "auto",
    *,
    cv: int = 5,
    n_jobs: int = 1,
    masks_per_row: int = 16,
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
        to the number of fits: ``cv`` for the masked bank).
    masks_per_row : int, default=16
        The masked bank's masks per training row.

    Returns
    -------
    float
        Seconds (at least 0.1).

    Examples
    --------
    >>> round(estimate_fit_seconds(4435, 16, 6, "hgb"))  # landsat: seconds
    8
    """
    for name, value in (("n_rows", n_rows), ("n_states", n_states)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1; got {value}.")
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2; got {n_classes}.")
    if kind == "auto":
        kind = "masked" if n_states >= AUTO_MASKED_MIN_STATES else "hgb"
    if kind not in ("hgb", "masked", "per_subset"):
        raise ValueError(
            f"Unknown bank kind {kind!r}; choose from "
            "['auto', 'hgb', 'masked', 'per_subset']."
        )
    fold_rows = n_rows * (cv - 1) / cv
    trees = 1 if n_classes == 2 else n_classes
    non_empty = max(n_states - 1, 1)
    if kind == "per_subset":
        bank = LOGISTIC_SECONDS_PER_ROW_STATE * n_rows * non_empty * cv * trees
    elif kind == "hgb":
        per_fit = SECONDS_PER_FIT + (
            BOOST_SECONDS_PER_ROW_TREE * fold_rows * trees * hgb_rounds(n_rows)
        )
        bank = per_fit * non_empty * cv
    else:
        per_row = min(masks_per_row, non_empty, max(1, MAX_STACK_ROWS // n_rows))
        rows = fold_rows * per_row
        bank = cv * (
            SECONDS_PER_FIT
            + BOOST_SECONDS_PER_ROW_TREE * rows * trees * TYPICAL_ROUNDS["masked"]
        )
    policies = POLICY_SECONDS_PER_ROW_STATE * n_rows * n_states
    # The masked bank has one fit per fold: more workers than folds wait.
    fits = cv if kind == "masked" else non_empty * cv
    return max(0.1, bank / max(1, min(n_jobs, fits)) + policies)
