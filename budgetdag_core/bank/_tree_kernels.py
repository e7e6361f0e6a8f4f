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
to the default side too; otherwise ``x <= threshold`` goes left. Each kernel
writes the rule out in its own loop: a shared compiled helper for it made
scoring with missing values 12x slower here.

The kernels trust their arrays: :meth:`LightGBMTrees.check_integrity` must
have accepted them (children, leaves and features in range) before any call,
as numba does not check indices.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: LightGBM's kZeroThreshold: |x| at most this counts as zero.
ZERO_THRESHOLD = 1e-35
#: Below this many rows a call walks the trees through offsets into the flat
#: arrays (no per-tree slices: their set-up outweighs a few walks).
SMALL_BATCH = 64


@njit(nogil=True, cache=True)
def _resolve_absent(
    present, feature, threshold, left, right, missing_left, node_offsets, chains
):
    """Thresholds and children with absent columns resolved: a node on a column
    the rows lack sends every row to its missing side (both children are that
    side, and its threshold is +inf so that the comparison, always true, costs
    no mispredicted branch), and every child pointer skips the chain of such
    nodes below it (a walk then visits the root and the nodes on present
    columns only: the same leaves in fewer steps) when ``chains`` (worth it
    for many rows: a few rows walk fewer nodes than skipping costs)."""
    th2 = threshold.copy()
    l2 = left.copy()
    r2 = right.copy()
    for t in range(len(node_offsets) - 1):
        a = node_offsets[t]
        for j in range(a, node_offsets[t + 1] if chains else a):
            for side in range(2):
                child = l2[j] if side == 0 else r2[j]
                while child >= 0 and not present[feature[a + child]]:
                    k = a + child
                    child = left[k] if missing_left[k] else right[k]
                if side == 0:
                    l2[j] = child
                else:
                    r2[j] = child
        for j in range(a, node_offsets[t + 1]):
            if not present[feature[j]]:
                th2[j] = np.inf
                child = l2[j] if missing_left[j] else r2[j]
                l2[j] = child
                r2[j] = child
    return th2, l2, r2


@njit(nogil=True, cache=True)
def _tree_leaves(Xt, f, th, l2, r2, ml, zm, general, leaves):
    """``leaves[i]``: the leaf each row ``Xt[:, i]`` reaches in one tree (its
    split columns ``f``, thresholds ``th``, children ``l2``/``r2``)."""
    if general:
        for i in range(Xt.shape[1]):
            node = 0
            while node >= 0:
                x = Xt[f[node], i]
                if np.isnan(x) or (zm[node] and abs(x) <= ZERO_THRESHOLD):
                    node = l2[node] if ml[node] else r2[node]
                elif x <= th[node]:
                    node = l2[node]
                else:
                    node = r2[node]
            leaves[i] = ~node
    else:
        for i in range(Xt.shape[1]):
            node = 0
            while node >= 0:
                node = l2[node] if Xt[f[node], i] <= th[node] else r2[node]
            leaves[i] = ~node


@njit(nogil=True, cache=True)
def add_scores(
    Xt,
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

    ``Xt`` holds the rows as columns, C-contiguous (the transpose of a
    column-major table: each split column's values adjacent); one layout for
    every batch, so one compiled version serves all. ``present[f]`` is False
    for a column the rows lack (scored as missing);
    ``general`` enables the NaN and zero-as-missing checks (not needed when
    ``Xt`` has no NaN and no node treats zero as missing).
    """
    n = Xt.shape[1]
    n_trees = len(node_offsets) - 1
    everything = True
    for f in range(len(present)):
        if not present[f]:
            everything = False
            break
    if everything:
        th2, l2, r2 = threshold, left, right
    else:
        th2, l2, r2 = _resolve_absent(
            present, feature, threshold, left, right, missing_left, node_offsets,
            n >= SMALL_BATCH,
        )  # fmt: skip
    if n < SMALL_BATCH:
        _add_scores_few(
            Xt,
            general,
            feature,
            th2,
            l2,
            r2,
            missing_left,
            zero_missing,
            leaf_value,
            node_offsets,
            leaf_offsets,
            tree_output,
            out,
        )
        return
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
            Xt,
            feature[a:b],
            th2[a:b],
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
def _add_scores_few(
    Xt,
    general,
    feature,
    threshold,
    l2,
    r2,
    missing_left,
    zero_missing,
    leaf_value,
    node_offsets,
    leaf_offsets,
    tree_output,
    out,
):
    """:func:`add_scores` for a few rows: the same walk, indexing the flat
    arrays by offset (slicing each tree's arrays costs more than a few walks)."""
    for t in range(len(node_offsets) - 1):
        a = node_offsets[t]
        lo = leaf_offsets[t]
        c = tree_output[t]
        for i in range(Xt.shape[1]):
            if node_offsets[t + 1] == a:
                out[i, c] += leaf_value[lo]
                continue
            node = 0
            while node >= 0:
                j = a + node
                x = Xt[feature[j], i]
                if general and (
                    np.isnan(x) or (zero_missing[j] and abs(x) <= ZERO_THRESHOLD)
                ):
                    node = l2[j] if missing_left[j] else r2[j]
                elif x <= threshold[j]:
                    node = l2[j]
                else:
                    node = r2[j]
            out[i, c] += leaf_value[lo + ~node]


_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.array(
    [
        0, 47, 1, 56, 48, 27, 2, 60, 57, 49, 41, 37, 28, 16, 3, 61,
        54, 58, 35, 52, 50, 42, 21, 44, 38, 32, 29, 23, 17, 11, 4, 62,
        46, 55, 26, 59, 40, 36, 15, 53, 34, 51, 20, 43, 31, 22, 10, 45,
        25, 39, 14, 33, 19, 30, 9, 24, 13, 18, 8, 12, 7, 6, 5, 63,
    ],
    dtype=np.int64,
)  # fmt: skip


@njit(nogil=True, cache=True)
def _lowest_bit(word, table):
    """Index of the lowest set bit of a nonzero uint64 (de Bruijn lookup)."""
    return table[((word ^ (word - np.uint64(1))) * _DEBRUIJN) >> np.uint64(58)]


@njit(nogil=True, cache=True)
def _set_bits(word):
    """How many bits of a uint64 are set (SWAR count)."""
    word = word - ((word >> np.uint64(1)) & np.uint64(0x5555555555555555))
    pairs = np.uint64(0x3333333333333333)
    word = (word & pairs) + ((word >> np.uint64(2)) & pairs)
    word = (word + (word >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (word * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(nogil=True, cache=True, inline="always")
def _add_to_states(out, i, c, v, bits, everyone):
    """Add a leaf's value ``v`` to ``out[i, c, k]`` for each state k in ``bits``.

    A word of most states adds to each state of the word, zero to those that
    did not reach the leaf: adding 0.0 (or -0.0) leaves any sum but -0.0
    unchanged, so each sum equals the state's own walk bit for bit (a greedy
    step scores every candidate at once this way, and picking the states out
    one bit at a time cost more than the walks). Inlined: a call per leaf
    costs more than the adds it makes.
    """
    one = np.uint64(1)
    K = out.shape[2]
    for w in range(len(bits)):
        word = bits[w]
        first = w * 64
        last = min(K, first + 64)
        if word == everyone[w]:
            for k in range(first, last):
                out[i, c, k] += v
        elif _set_bits(word) > 16:
            for k in range(first, last):
                out[i, c, k] += v * ((word >> np.uint64(k - first)) & one)
        else:
            while word:
                out[i, c, first + _lowest_bit(word, _DEBRUIJN_INDEX)] += v
                word &= word - one


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
    ``out[i, c, k]`` accumulates state k's raw score of output c for row i
    (``out`` must hold no -0.0: a zeroed array, as the callers pass).
    Each row walks each tree once with the set of states as a bitset: at a
    node the states that have its column follow the split, the others its
    missing side, and a leaf adds its value to the states that reach it. States
    that agree on the columns of a path share the walk.
    Columns no state has are not read (their nodes send every state to the
    missing side), nor are the states' bits consulted on columns every state
    has; leaves add as :func:`_add_to_states` says.
    """
    n = X.shape[0]
    K, d = state_present.shape
    W = (K + 63) // 64
    one = np.uint64(1)
    has = np.zeros((d, W), dtype=np.uint64)  # states having each column
    holders = np.zeros(d, dtype=np.int64)  # how many states have each column
    for k in range(K):
        for f in range(d):
            if state_present[k, f]:
                has[f, k >> 6] |= one << np.uint64(k & 63)
                holders[f] += 1
    everyone = np.zeros(W, dtype=np.uint64)
    for k in range(K):
        everyone[k >> 6] |= one << np.uint64(k & 63)
    n_trees = len(node_offsets) - 1
    largest = 1
    for t in range(n_trees):
        largest = max(largest, node_offsets[t + 1] - node_offsets[t] + 1)
    stack_node = np.empty(largest + 1, dtype=np.int64)
    stack_bits = np.empty((largest + 1, W), dtype=np.uint64)
    bits = np.empty(W, dtype=np.uint64)
    for i in range(n):
        for t in range(n_trees):
            a = node_offsets[t]
            lo = leaf_offsets[t]
            c = tree_output[t]
            if node_offsets[t + 1] == a:
                for k in range(K):
                    out[i, c, k] += leaf_value[lo]
                continue
            top = 0
            stack_node[0] = 0
            # Element loops, not slice assignments: those compile numba's shape
            # checks and their formatted messages (seconds on a fresh install).
            for w in range(W):
                stack_bits[0, w] = everyone[w]
            while top >= 0:
                node = stack_node[top]
                for w in range(W):
                    bits[w] = stack_bits[top, w]
                top -= 1
                while node >= 0:  # follow one side, push the other if needed
                    j = a + node
                    f = feature[j]
                    held_by = holders[f]
                    if held_by == 0:  # every state goes to the missing side
                        node = left[j] if missing_left[j] else right[j]
                        continue
                    x = X[i, f]
                    if general and (
                        np.isnan(x) or (zero_missing[j] and abs(x) <= ZERO_THRESHOLD)
                    ):
                        split_left = missing_left[j]
                    else:
                        split_left = x <= threshold[j]
                    if held_by == K or split_left == missing_left[j]:
                        node = left[j] if split_left else right[j]  # one way
                        continue
                    # States with column f follow the split, the others go to
                    # the missing side (the opposite one here).
                    any_with = False
                    any_without = False
                    for w in range(W):
                        if bits[w] & has[f, w]:
                            any_with = True
                        if bits[w] & ~has[f, w]:
                            any_without = True
                    with_child = left[j] if split_left else right[j]
                    without_child = right[j] if split_left else left[j]
                    if any_with and any_without:
                        top += 1
                        stack_node[top] = without_child
                        for w in range(W):
                            stack_bits[top, w] = bits[w] & ~has[f, w]
                            bits[w] &= has[f, w]
                        node = with_child
                    elif any_with:
                        node = with_child
                    else:
                        node = without_child
                _add_to_states(out, i, c, leaf_value[lo + ~node], bits, everyone)


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


def example_calls() -> dict[str, tuple]:
    """A tiny call of each kernel above that the library calls from Python,
    with the argument types it passes (:mod:`budgetdag_core._compiled`
    compiles them ahead of a fit): one tree of one split."""
    tree = (
        np.zeros(1, dtype=np.int32),  # feature
        np.zeros(1),  # threshold
        np.array([-1], dtype=np.int32),  # left child: leaf 0
        np.array([-2], dtype=np.int32),  # right child: leaf 1
        np.ones(1, dtype=bool),  # missing_left
        np.zeros(1, dtype=bool),  # zero_missing
        np.zeros(2),  # leaf_value
        np.array([0, 1], dtype=np.int64),  # node_offsets
        np.array([0, 2], dtype=np.int64),  # leaf_offsets
        np.zeros(1, dtype=np.int32),  # tree_output
    )
    present = np.ones((2, 2), dtype=bool)  # 2 states (or columns) of 2 columns
    rows = np.zeros((3, 2))
    return {
        "add_scores": (rows.T.copy(), present[0], False, *tree, np.zeros((3, 1))),
        "add_state_scores": (rows, present, False, *tree, np.zeros((3, 1, 2))),
        "softmax_rows": (np.zeros((3, 2)),),
    }
