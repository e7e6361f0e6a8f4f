"""A filter tree's tournament of logistic regressions, trained in one compiled call.

:class:`~budgetdag_core.reductions.FilterTree` with its built-in logistic
regression spent a sixth of a node's time between the solves: per tournament
node it gathered the two sub-winners' costs, dropped the rows of zero weight and
copied the rest, in NumPy calls that each held the GIL while Graph-Reduce fitted
a layer's nodes in threads. Here the whole tournament runs in one call that
releases the GIL, with the same arithmetic: the same rows, the same weights
(their mean summed pairwise, as NumPy sums), the same Newton solver, so the
trees are equal bit for bit (``benchmarks/bench_policy_speed.py`` times both).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from ._logistic import GRADIENT_TOL, SAFE_STEP, newton

#: Tournament node kinds: a constant "left wins", a constant "right wins", a model.
LEFT, RIGHT, MODEL = 0, 1, 2


@functools.cache
def tournament_layout(n_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """The internal nodes of the filter tree over ``n_actions`` in post-order.

    ``left[i]``/``right[i]`` name node i's subtrees: an internal node's index
    (earlier in the order), or ``-(a + 1)`` for the leaf of action ``a``. The
    actions split as :meth:`FilterTree._train` splits them (the first half
    rounded up on the left), and the last node is the root.
    """
    left: list[int] = []
    right: list[int] = []

    def build(lo: int, hi: int) -> int:
        if hi - lo == 1:
            return -(lo + 1)
        half = (hi - lo + 1) // 2
        sub_left = build(lo, lo + half)
        sub_right = build(lo + half, hi)
        left.append(sub_left)
        right.append(sub_right)
        return len(left) - 1

    build(0, n_actions)
    return np.array(left, dtype=np.intp), np.array(right, dtype=np.intp)


@njit(nogil=True, cache=True)
def _block_sum(a, start, n):
    """NumPy's sum of at most 128 values: 8 accumulators, then the rest."""
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += a[i]
        return total
    r = np.empty(8)
    for j in range(8):
        r[j] = a[start + j]
    i = 8
    while i < n - (n % 8):
        for j in range(8):
            r[j] += a[start + i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        total += a[start + i]
        i += 1
    return total


@njit(nogil=True, cache=True)
def _pairwise_sum(a, start, n):
    """``a[start:start + n].sum()`` in NumPy's order: blocks of at most 128
    values, halves (cut at a multiple of 8) above. NumPy recurses; here the
    halves are walked with an explicit stack (cached compiled code cannot
    recurse)."""
    starts = np.empty(64, dtype=np.int64)
    lengths = np.empty(64, dtype=np.int64)
    left_done = np.zeros(64, dtype=np.bool_)
    left_sums = np.empty(64)
    top = 0
    starts[0], lengths[0] = start, n
    value = 0.0
    have_value = False
    while True:
        if not have_value:  # evaluate the frame on top
            if lengths[top] <= 128:
                value = _block_sum(a, starts[top], lengths[top])
                have_value = True
                top -= 1
            else:  # its left half first
                half = lengths[top] // 2
                half -= half % 8
                left_done[top] = False
                starts[top + 1], lengths[top + 1] = starts[top], half
                top += 1
        elif top < 0:
            return value
        elif not left_done[top]:  # value is the left half's: the right half next
            half = lengths[top] // 2
            half -= half % 8
            left_sums[top] = value
            left_done[top] = True
            starts[top + 1] = starts[top] + half
            lengths[top + 1] = lengths[top] - half
            top += 1
            have_value = False
        else:  # value is the right half's
            value = left_sums[top] + value
            top -= 1


@njit(nogil=True, cache=True)
def numpy_mean(a):
    """``np.mean(a)`` of a non-empty contiguous float64 vector, bit for bit."""
    return _pairwise_sum(a, 0, a.shape[0]) / a.shape[0]


@njit(nogil=True, cache=True)
def _winners(node, winners, n):
    """The actions a subtree's tournament picks per row (a leaf: its action)."""
    if node >= 0:
        return winners[node]
    return np.full(n, -node - 1, dtype=np.intp)


@njit(nogil=True, cache=True)
def train_tournament(
    F, C, row_weight, left, right, penalty, max_iter, safe_step=SAFE_STEP
):
    """Fit every tournament node of one filter tree, leaves to root.

    At each node the two sub-winners of every row play: the label is whether
    the right one costs less, the weight the cost difference (normalised to
    mean 1 over the rows that count), rows of zero weight are dropped, and a
    node whose rows all go one way is a constant. ``row_weight`` (n,) counts
    row i ``row_weight[i]`` times: its weight is multiplied by it and the
    mean is over the rows' counts, so that integer weights give the problem
    of the duplicated rows (all ones: the unweighted tree, bit for bit, as
    the counts' pairwise sum is then exactly the number of rows).

    Returns per node (in :func:`tournament_layout` order) its kind (``LEFT``,
    ``RIGHT`` or ``MODEL``), coefficients, intercept and Newton steps, and
    the root's winner per row.
    """
    n, d = F.shape
    m = left.shape[0]
    winners = np.empty((m, n), dtype=np.intp)
    kinds = np.empty(m, dtype=np.int8)
    coefs = np.zeros((m, d))
    intercepts = np.zeros(m)
    steps = np.zeros(m, dtype=np.int64)
    label = np.empty(n, dtype=np.bool_)
    weight = np.empty(n)
    for i in range(n):
        if row_weight[i] < 0.0 or not np.isfinite(row_weight[i]):
            raise ValueError("row_weight must be finite and >= 0")
    for node in range(m):
        win_left = _winners(left[node], winners, n)
        win_right = _winners(right[node], winners, n)
        kept = 0
        positives = 0
        for i in range(n):
            cost_left = C[i, win_left[i]]
            cost_right = C[i, win_right[i]]
            label[i] = cost_right < cost_left
            weight[i] = abs(cost_left - cost_right) * row_weight[i]
            if weight[i] > 0:
                kept += 1
                positives += label[i]
        if kept == 0 or positives == 0 or positives == kept:
            right_wins = kept > 0 and positives == kept
            kinds[node] = RIGHT if right_wins else LEFT
            for i in range(n):
                winners[node, i] = win_right[i] if right_wins else win_left[i]
            continue
        Fk = np.empty((kept, d))
        yk = np.empty(kept)
        wk = np.empty(kept)
        counts = np.empty(kept)
        j = 0
        for i in range(n):
            if weight[i] > 0:
                for k in range(d):  # (no slice assignment: see newton)
                    Fk[j, k] = F[i, k]
                yk[j] = 1.0 if label[i] else 0.0
                wk[j] = weight[i]
                counts[j] = row_weight[i]
                j += 1
        # The mean weight per counted row (``numpy_mean`` without weights).
        wk /= _pairwise_sum(wk, 0, kept) / _pairwise_sum(counts, 0, kept)
        coef, intercept, taken = newton(
            Fk, yk, wk, penalty, max_iter, GRADIENT_TOL, safe_step
        )
        kinds[node] = MODEL
        for k in range(d):
            coefs[node, k] = coef[k]
        intercepts[node] = intercept
        steps[node] = taken
        decision = F @ coef
        for i in range(n):
            right_wins = decision[i] + intercept > 0
            winners[node, i] = win_right[i] if right_wins else win_left[i]
    return kinds, coefs, intercepts, steps, winners[m - 1]


def example_calls() -> dict[str, tuple]:
    """A tiny call of the compiled tournament with the argument types the
    filter tree passes (see :mod:`budgetdag_core._compiled`)."""
    rng = np.random.default_rng(0)
    left, right = tournament_layout(3)
    F, C = rng.normal(size=(8, 2)), rng.random((8, 3))
    return {"train_tournament": (F, C, np.ones(8), left, right, 1.0, 100, SAFE_STEP)}
