"""An order of rows in which tree walks predict their branches well.

A tree walk costs a few nanoseconds per level when the CPU guesses its
branches, and about three times that when it cannot. Walking rows in random
order, the guesses fail; walking rows that resemble their predecessors, the
same branches repeat. Sorting the rows by one projection that follows the
trees' own splits (each column weighted by how often the trees split on it,
on a standardised scale) makes boosted trees walk shuffled rows several times
faster (``benchmarks/bench_fit_predict_speed.py``). Scores are per row, so the order
never changes a number: the
caller walks the sorted rows and puts the results back in place.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

#: From this many rows on, sorting can pay for itself (a sort and two copies).
SORT_FROM_ROWS = 2048
#: Sort only for at least SORT_FROM_TREES trees plus this many per column the
#: trees read: the sort and its passes over the columns must be small against
#: the walks it speeds up (a few ns per tree and row). Few trees reading many
#: columns (a masked bank on a wide table) or states of a handful of trees
#: walk slower sorted.
SORT_FROM_TREES = 24
SORT_FROM_TREES_PER_COLUMN = 2.0
#: Rows sampled to estimate each column's spread.
_SPREAD_SAMPLE = 4096


def worth_sorting(n_rows: int, n_trees: float, n_columns_read: int) -> bool:
    """Whether walking ``n_rows`` in a similarity order should beat the given
    order, for trees that read ``n_columns_read`` columns."""
    return (
        n_rows >= SORT_FROM_ROWS
        and n_trees >= SORT_FROM_TREES + SORT_FROM_TREES_PER_COLUMN * n_columns_read
    )


def similar_rows_order(X: np.ndarray, split_counts: np.ndarray) -> np.ndarray:
    """Row indices sorted by ``X``'s standardised columns weighted by
    ``split_counts`` (NaN counts as the column's centre).

    Deterministic for a given ``X``; which order comes out never affects a
    tree's scores, only how fast they are computed.
    """
    step = max(len(X) // _SPREAD_SAMPLE, 1)
    sample = X[::step]
    sample = np.where(np.isfinite(sample), sample, np.nan)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN sample columns
        centre = np.nanmean(sample, axis=0)
        spread = np.nanstd(sample, axis=0)
    usable = np.isfinite(spread) & (spread > 0) & (split_counts > 0)
    if not usable.any():
        return np.arange(len(X))
    projection = np.zeros(len(X))
    for col in np.flatnonzero(usable):  # a column at a time: no big temporary
        values = X[:, col]
        values = np.where(np.isfinite(values), values, centre[col])
        projection += (split_counts[col] / spread[col]) * values
    return np.argsort(projection, kind="stable")


def rows_in_order(
    X: np.ndarray, order: np.ndarray, columns: np.ndarray | None = None
) -> np.ndarray:
    """``X[order]`` laid out by column (the kernels' preferred layout); with
    ``columns``, only those are copied and the others are zero (for trees
    that never read them)."""
    shape = (len(order), X.shape[1])
    out = np.empty(shape, order="F") if columns is None else np.zeros(shape, order="F")
    for col in range(X.shape[1]) if columns is None else columns:
        np.take(X[:, col], order, out=out[:, col])
    return out


def scored_in_order(
    score: Callable[[np.ndarray], np.ndarray],
    X: np.ndarray,
    walk: tuple[np.ndarray, np.ndarray] | None,
) -> np.ndarray:
    """``score(X)``, computed on the rows in the order of ``walk`` (``(order,
    X's rows in that order)``; None: as given) and put back in place."""
    if walk is None:
        return score(X)
    order, in_order = walk
    walked = score(in_order)
    out = np.empty_like(walked)
    out[order] = walked
    return out
