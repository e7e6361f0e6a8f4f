"""Compiled scoring of boosted trees with LightGBM's decision rules (numba).

The banks score their trees far more often than they train them: the policies
read a bank's probabilities at every state a row visits, and the masked bank's
out-of-fold predictions cover every (row, state) pair. LightGBM's own predictor
spends about 50 ns per tree and row here (as does scikit-learn's); these
kernels walk the same arrays in about 12 ns, and give the same sums in the same
order, so the raw scores are equal to LightGBM's bit for bit.

Decision rule of a numerical split (LightGBM's ``NumericalDecision``): a
missing value (NaN, or a column the state has not acquired) goes to the
node's missing side; with missing type "zero" a value of (almost) zero goes
to the default side too; otherwise ``x <= threshold`` goes left.

The kernels trust their arrays: :meth:`LightGBMTrees.check_integrity` must
have accepted them (children, leaves and features in range) before any call,
as numba does not check indices.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: LightGBM's kZeroThreshold: |x| at most this counts as zero.
ZERO_THRESHOLD = 1e-35


@njit(nogil=True, cache=True)
def _tree_children(present, feature, left, right, missing_left):
    """One tree's children (local node indices) with absent columns resolved:
    a node on a column the rows lack sends every row to its missing side."""
    l2 = left.copy()
    r2 = right.copy()
    for j in range(len(feature)):
        if not present[feature[j]]:
            child = l2[j] if missing_left[j] else r2[j]
            l2[j] = child
            r2[j] = child
    return l2, r2


@njit(nogil=True, cache=True)
def _tree_leaves(X, start, stop, f, th, l2, r2, ml, zm, general, leaves):
    """``leaves[i - start]``: the leaf rows ``start:stop`` of ``X`` reach in
    one tree (its split columns ``f``, thresholds ``th``, children
    ``l2``/``r2``)."""
    if general:
        for i in range(start, stop):
            node = 0
            while node >= 0:
                x = X[i, f[node]]
                if np.isnan(x) or (zm[node] and abs(x) <= ZERO_THRESHOLD):
                    node = l2[node] if ml[node] else r2[node]
                elif x <= th[node]:
                    node = l2[node]
                else:
                    node = r2[node]
            leaves[i - start] = ~node
    else:
        for i in range(start, stop):
            node = 0
            while node >= 0:
                node = l2[node] if X[i, f[node]] <= th[node] else r2[node]
            leaves[i - start] = ~node


@njit(nogil=True, cache=True)
def add_scores(
    X,
    present,
    general,
    feature,
    threshold,
    left,
    right,
    missing_left,
    zero_missing,
    leaf_value,
    node_offsets,
    leaf_offsets,
    tree_output,
    out,
):
    """``out[i, tree_output[t]] += leaf value of row i in tree t``, tree by tree.

    ``present[f]`` is False for a column the rows lack (scored as missing);
    ``general`` enables the NaN and zero-as-missing checks (not needed when
    ``X`` has no NaN and no node treats zero as missing).
    """
    n = X.shape[0]
    n_trees = len(node_offsets) - 1
    # Children with the absent columns resolved, for every tree at once.
    l2 = left.copy()
    r2 = right.copy()
    for j in range(len(feature)):
        if not present[feature[j]]:
            child = left[j] if missing_left[j] else right[j]
            l2[j] = child
            r2[j] = child
    leaves = np.empty(n, dtype=np.int64)
    for t in range(n_trees):
        a, b = node_offsets[t], node_offsets[t + 1]
        lv = leaf_value[leaf_offsets[t] : leaf_offsets[t + 1]]
        c = tree_output[t]
        if b == a:
            for i in range(n):
                out[i, c] += lv[0]
            continue
        _tree_leaves(
            X,
            0,
            n,
            feature[a:b],
            threshold[a:b],
            l2[a:b],
            r2[a:b],
            missing_left[a:b],
            zero_missing[a:b],
            general,
            leaves,
        )
        for i in range(n):
            out[i, c] += lv[leaves[i]]


@njit(nogil=True, cache=True)
def add_state_scores(
    X,
    state_present,
    general,
    feature,
    threshold,
    left,
    right,
    missing_left,
    zero_missing,
    leaf_value,
    node_offsets,
    leaf_offsets,
    tree_output,
    out,
):
    """The masked bank's scores of every row at every state at once.

    ``state_present`` (K, d) says which columns each state has;
    ``out[k, c, i]`` accumulates state k's raw score of output c for row i.
    A tree reads only a few columns, so states that agree on those columns
    reach the same leaves: each tree is walked once per distinct pattern of
    its columns, not once per state.
    """
    n = X.shape[0]
    K = state_present.shape[0]
    leaves = np.empty(n, dtype=np.int64)
    keys = np.empty(K, dtype=np.int64)
    for t in range(len(node_offsets) - 1):
        a, b = node_offsets[t], node_offsets[t + 1]
        lv = leaf_value[leaf_offsets[t] : leaf_offsets[t + 1]]
        c = tree_output[t]
        if b == a:
            for k in range(K):
                for i in range(n):
                    out[k, c, i] += lv[0]
            continue
        f = feature[a:b]
        ml = missing_left[a:b]
        columns = np.unique(f)
        if len(columns) <= 62:
            for k in range(K):
                key = 0
                for q in range(len(columns)):
                    if state_present[k, columns[q]]:
                        key |= 1 << q
                keys[k] = key
        else:  # too many columns for a bit key: every state on its own
            for k in range(K):
                keys[k] = k
        order = np.argsort(keys, kind="mergesort")
        g0 = 0
        while g0 < K:
            g1 = g0 + 1
            while g1 < K and keys[order[g1]] == keys[order[g0]]:
                g1 += 1
            l2, r2 = _tree_children(
                state_present[order[g0]], f, left[a:b], right[a:b], ml
            )
            _tree_leaves(
                X,
                0,
                n,
                f,
                threshold[a:b],
                l2,
                r2,
                ml,
                zero_missing[a:b],
                general,
                leaves,
            )
            for q in range(g0, g1):
                k = order[q]
                for i in range(n):
                    out[k, c, i] += lv[leaves[i]]
            g0 = g1


@njit(nogil=True, cache=True)
def softmax_rows(raw):
    """Row-wise softmax of ``raw`` (n, C), one pass per row (NumPy's
    reductions along a short last axis cost more than the exponentials)."""
    n, C = raw.shape
    out = np.empty((n, C))
    for i in range(n):
        top = raw[i, 0]
        for c in range(1, C):
            top = max(top, raw[i, c])
        total = 0.0
        for c in range(C):
            out[i, c] = np.exp(raw[i, c] - top)
            total += out[i, c]
        for c in range(C):
            out[i, c] /= total
    return out
