"""The routed DAG (``dag="routed"``): the cascade's chain, plus a routing
sensor and one greedy order per group of its values, and a tree of routes by
the bank's posterior.

Some sensors are worth nothing alone but say *where to look*: CUBE-NM's
context names the block of sensors that carries a row's class, and no
one-step score sees it. The routed DAG offers each example two ways from the
empty set: the common chain (``strategies.chain_growth``)
or the routing sensor, then the order of its group of values
(``strategies.greedy_order`` on that group's rows).
Graph-Reduce learns, per example and from its values, which way to go, when
to stop, and (at the routing sensor's state) which group's order to follow.

The routing sensor is found on held-out picks (:func:`routing_scores`): for
each candidate and grouping of its values (:func:`route_groupings`), half the
scored rows pick each group's best next sensor and the other half is scored
by how much more it gains from its group's pick than from one pick for all.
A sensor informative alone scores about zero; none is kept unless it stands
clear of the noise (:func:`routed_growth`).

Elsewhere which sensor helps next depends on what the sensors bought so far
said about the class (digits: the next pixel worth reading depends on the
digit the first ones suggest), which greedy per-example acquisition exploits
and one order per group of one sensor's values cannot. The *posterior tree*
(:func:`posterior_tree_paths`) gives each example that choice at a few
hundred states: from the chain's first sensor, the rows split in two by
their most probable class (the classes whose rows gain from the same next
sensor together, :func:`class_halves`), each half buys its own best next
sensor, six times over, then each leaf follows its own greedy order a while;
Graph-Reduce learns per example, from the probabilities its acquired values
give, which branch to take. It is built where its first split gains on
held-out picks (:func:`held_out_pick_gain`, :func:`tree_stands_clear`), and
kept where the validation choice finds it better than the chain. On bench_afa's
digits and CUBE at 10 % of the all-sensor cost it lowered the test error the
most of the designs measured (routes by the posterior at one chain prefix
into 2 to 8 groups, each with a full greedy order, erred more; so did
halving the rows by 2-means of their probabilities, by k-means into three,
or by each row's own smoothed gains).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.cluster import KMeans

from .._threads import task_map
from ..dag import bits_of, mask_of
from ._choice import (
    CHAIN_SCORE_ROWS,
    MAX_ROUTES,
    POSTERIOR_DEPTH,
    chain_growth,
    chain_order,
    cross_entropy,
    greedy_order,
    tail_length,
)
from ._growth import (
    RowLoss,
    RowTable,
    SparseGrowth,
    SparseSensorDAG,
    growth_rows,
    oof_pair_tables,
    oof_tables,
    ranking_costs,
)
from ._memo import block_losses

#: Training rows that score the candidate routing sensors.
ROUTE_SCORE_ROWS = 600
#: Training rows of a route's group scored while its order is chosen (at most
#: the common chain's ``max_rows``): each group's order is a greedy order of
#: its own (most of a routed DAG's time on spam), and only the rows that buy
#: the routing sensor follow it.
ROUTE_ORDER_ROWS = 1000
#: Training rows from which a route group's own order stops after
#: ``strategies.tail_length`` sensors and joins the
#: chain's (:func:`routed_growth`). Its greedy steps score up to
#: ``ROUTE_ORDER_ROWS`` rows per candidate: on long tables they were most of
#: the routed growth (spam, 3 450 rows: the fit about 10 % faster, as good on
#: spam, dna and CUBE-NM with 5 000 rows); on short tables they are cheap, and
#: a group's own order beyond its first sensors still paid (cube_03, 600
#: rows, at half the all-sensor cost).
ROUTE_TAIL_MIN_ROWS = 1500
#: Standard errors a routing score must exceed (see :func:`routed_growth`).
ROUTE_MIN_SE = 3.0
#: Share of the common pick's gain a routing score must exceed.
ROUTE_MIN_SHARE = 0.1
#: Standard errors the posterior tree's first split must exceed where it
#: splits by the probabilities (two classes; :func:`tree_stands_clear`): one
#: grouping is tested, not one per sensor and grouping as for a routing sensor.
POSTERIOR_MIN_SE = 2.0
#: Random halvings of the scored rows the tree's first split is judged on
#: (one halving's verdict on digits' seeds swung from 1.9 to 2.5 SE).
ROOT_HALVINGS = 5
#: Most bytes of the table of row losses at every pair of candidates that
#: :func:`routing_scores` keeps (else it asks each candidate's block alone).
PAIR_LOSS_BYTES = 64 * 2**20
#: Subsets per bank call of :func:`pair_losses`.
PAIR_BLOCK = 256
#: How many groups of a routing sensor's values are tried (each scored on
#: held-out rows: a few hundred rows support fewer, larger groups).
ROUTE_GROUP_COUNTS = (2, 3, 5, 8)


#: A routing sensor's values with the missing ones below the others, how many
#: distinct value patterns they hold, and each row's pattern
#: (:func:`value_patterns`).
Patterns = tuple[np.ndarray, int, np.ndarray]


def value_patterns(values: np.ndarray) -> Patterns:
    """What :func:`route_groups` groups whatever the number of groups: the
    values (n_rows, n_columns) with a missing value below the others, the
    count of distinct value patterns, and each row's pattern."""
    values = np.asarray(values, dtype=float)
    finite = np.where(np.isfinite(values), values, np.nan)
    low = np.nan_to_num(
        np.nanmin(np.vstack([finite, np.zeros((1, values.shape[1]))]), axis=0)
    )
    filled = np.where(np.isnan(finite), low - 1.0, finite)
    patterns, groups = np.unique(filled, axis=0, return_inverse=True)
    return filled, len(patterns), groups.ravel()


def route_groups(
    values: np.ndarray,
    max_groups: int,
    floor: int,
    random_state: int | None = 0,
    *,
    patterns: Patterns | None = None,
) -> np.ndarray:
    """Each row's group by its values of a routing sensor (n_rows, n_columns):
    one group per distinct value pattern when there are at most
    ``max_groups``; else, for one column, its quantile bins (at most
    ``max_groups``), and for several, ``max_groups`` k-means clusters of the
    standardised values. A missing value counts as a value below the others.
    Groups of fewer than ``floor`` rows are -1: their rows keep the common
    order. ``patterns``: the values' :func:`value_patterns`, if known (a
    sensor's groupings into several counts share them).

    Examples
    --------
    >>> route_groups(np.array([[0.0], [1.0], [1.0], [2.0]]), 8, 2).tolist()
    [-1, 0, 0, -1]
    """
    filled, n_patterns, groups = (
        value_patterns(values) if patterns is None else patterns
    )
    if n_patterns > max_groups and filled.shape[1] == 1:
        inner = np.linspace(0, 1, max_groups + 1)[1:-1]
        edges = np.unique(np.quantile(filled[:, 0], inner))
        groups = np.searchsorted(edges, filled[:, 0], side="right")
    elif n_patterns > max_groups:
        spread = filled.std(axis=0)
        Z = (filled - filled.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
        groups = KMeans(max_groups, n_init=3, random_state=random_state).fit_predict(Z)
    counts = np.bincount(groups, minlength=1)
    small = counts[groups] < floor
    groups = np.where(small, -1, groups)
    # Number the kept groups 0, 1, ... in the order of their labels.
    kept = np.unique(groups[groups >= 0])
    renumber = np.full(int(groups.max(initial=0)) + 1, -1)
    renumber[kept] = np.arange(len(kept))
    return np.where(groups >= 0, renumber[np.maximum(groups, 0)], -1)


def routing_scores(
    bank: Any,
    X: np.ndarray,
    scored: np.ndarray,
    groupings: dict[int, list[np.ndarray]],
    costs: np.ndarray,
    row_loss: RowLoss,
    rng: np.random.Generator,
    held: np.ndarray | None = None,
) -> dict[tuple[int, int], tuple[float, float, float]]:
    """What knowing sensor r's group is worth for choosing the next sensor,
    per unit of r's cost, for each candidate r and each of its groupings
    ``groupings[r][i]`` (each row's group, :func:`route_groups`), keyed
    ``(r, i)``: the mean over the scored rows, its standard error, and the
    mean gain of the common pick (per unit cost) it adds to.

    At the state ``held`` (bool, n_sensors; default the empty set) plus r,
    each scored row's gain of every sensor j not there is the
    drop of its out-of-fold ``row_loss`` per unit of j's cost. Half the
    scored rows pick, per group, the sensor of most mean gain in that group,
    and one sensor for all; the other half is scored by how much more its
    rows gain from their group's pick than from the common one, and the
    halves swap (picks are not scored on the rows that made them, so many
    small groups earn nothing by chance, and a grouping too fine for its
    rows scores less than a coarser one). Zero in expectation when r's
    value says nothing about which sensor helps a row, as for any sensor
    informative alone; CUBE-NM's context, which says where to look, scores
    high.

    A bank whose outputs do not depend on the subsets asked together
    (``exact_in_blocks``: trees) is asked for each pair of candidates once
    (:func:`pair_losses`, within ``PAIR_LOSS_BYTES``); others for each
    candidate's subsets together, as a candidate alone would be.
    """
    M = len(costs)
    before = np.zeros(M, dtype=bool) if held is None else np.asarray(held, bool)
    halves = np.array_split(rng.permutation(len(scored)), 2)
    out: dict[tuple[int, int], tuple[float, float, float]] = {}
    if not groupings:
        return out
    n_jobs = getattr(bank, "n_jobs", None)
    shared = (bank, X, scored, costs, row_loss, halves, before)
    if getattr(bank, "exact_in_blocks", False) and (
        len(scored) * M * M * 8 <= PAIR_LOSS_BYTES
    ):
        # r then j and j then r reach the same subset: each pair is asked
        # once (a tree bank's outputs do not depend on the block).
        pairs = pair_losses(
            bank, X, scored, before, sorted(groupings), row_loss, n_jobs
        )
        for r, options in groupings.items():
            out.update(_candidate_scores(*shared, r, options, pairs))
        return out
    # One candidate's scores: a pure task (on a cluster: the bank and the
    # data sent once, see task_map), in order here.
    with task_map(_candidate_scores, shared, n_jobs) as run:
        for scores in run(list(groupings.items())):
            out.update(scores)
    return out


def pair_losses(
    bank: Any,
    X: np.ndarray,
    scored: np.ndarray,
    before: np.ndarray,
    routes: Sequence[int],
    row_loss: RowLoss,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Each scored row's ``row_loss`` at ``before`` plus r (``[:, r, r]``)
    and plus r and j (``[:, r, j]`` and ``[:, j, r]``), for each r of
    ``routes`` and each j not in ``before`` (rows x sensors x sensors, NaN
    elsewhere): every subset asked once, in blocks of ``PAIR_BLOCK``
    subsets (tasks as :func:`routing_scores`' candidates)."""
    M = len(before)
    free = np.flatnonzero(~before)
    pairs = sorted(
        {(min(r, j), max(r, j)) for r in routes for j in free}
    )  # (r, r): the state of r alone
    trial = np.repeat(before[None], len(pairs), axis=0)
    firsts, seconds = np.array(pairs).T
    trial[np.arange(len(pairs)), firsts] = True
    trial[np.arange(len(pairs)), seconds] = True
    blocks = [(trial[i : i + PAIR_BLOCK],) for i in range(0, len(pairs), PAIR_BLOCK)]
    with task_map(_block_task, (bank, X, scored, row_loss), n_jobs) as run:
        values = np.concatenate(run(blocks), axis=1)
    out = np.full((len(scored), M, M), np.nan)
    out[:, firsts, seconds] = values
    out[:, seconds, firsts] = values
    return out


def _block_task(
    bank: Any, X: np.ndarray, scored: np.ndarray, row_loss: RowLoss, trial: np.ndarray
) -> np.ndarray:
    """:func:`block_losses` as a task of :func:`pair_losses` (the block last)."""
    return block_losses(bank, X, scored, trial, row_loss)


def _candidate_scores(
    bank: Any,
    X: np.ndarray,
    scored: np.ndarray,
    costs: np.ndarray,
    row_loss: RowLoss,
    halves: list[np.ndarray],
    before: np.ndarray,
    r: int,
    options: list[np.ndarray],
    pairs: np.ndarray | None = None,
) -> dict[tuple[int, int], tuple[float, float, float]]:
    """:func:`routing_scores` of the candidate ``r`` (its groupings
    ``options``), keyed ``(r, i)``; none where ``r`` completes the state.
    The row losses from ``pairs`` (:func:`pair_losses`' table) if given,
    else from the bank."""
    state = before.copy()
    state[r] = True
    cand = np.flatnonzero(~state)
    if not len(cand):
        return {}
    if pairs is not None:
        base, after = pairs[:, r, r], pairs[:, r, cand]
    else:  # the state itself first, then it plus each candidate: one call
        trial = np.repeat(state[None], 1 + len(cand), axis=0)
        trial[np.arange(1, 1 + len(cand)), cand] = True
        both = block_losses(bank, X, scored, trial, row_loss)
        base, after = both[:, 0], both[:, 1:]
    gain = (base[:, None] - after) / np.maximum(costs[cand], 1e-12)
    return {
        (int(r), i): held_out_pick_gain(
            gain, row_groups[scored], halves, float(costs[r])
        )
        for i, row_groups in enumerate(options)
    }


def held_out_pick_gain(
    gain: np.ndarray, groups: np.ndarray, halves: Sequence[np.ndarray], cost: float
) -> tuple[float, float, float]:
    """What a per-group pick of the next sensor gains over one pick for all,
    on held-out rows: ``gain`` (rows x candidates) each row's gain of each
    candidate, ``groups`` each row's group (-1: none, the common pick),
    ``halves`` two halves of the rows (each picks, the other is judged; see
    :func:`routing_scores`). Returns the mean of the judged rows' excess gain
    divided by ``cost`` (what knowing the group cost), its standard error,
    and the mean gain of the common pick.

    Examples
    --------
    >>> gain = np.array([[1.0, 0.0]] * 4 + [[0.0, 1.0]] * 4)
    >>> halves = [np.arange(0, 8, 2), np.arange(1, 8, 2)]
    >>> held_out_pick_gain(gain, np.repeat([0, 1], 4), halves, 1.0)
    (0.5, 0.1889822365046136, 0.5)
    """
    per_row, base_gain = [], []
    for pick_rows, judged in ((halves[0], halves[1]), (halves[1], halves[0])):
        common = int(gain[pick_rows].mean(axis=0).argmax())
        pick = np.full(len(judged), common)
        for group in np.unique(groups[judged]):
            mine = pick_rows[groups[pick_rows] == group]
            if group >= 0 and len(mine):
                chosen = int(gain[mine].mean(axis=0).argmax())
                pick[groups[judged] == group] = chosen
        per_row.append(gain[judged, pick] - gain[judged, common])
        base_gain.append(gain[judged, common])
    own = np.concatenate(per_row) / max(cost, 1e-12)
    se = float(own.std(ddof=1) / np.sqrt(len(own))) if len(own) > 1 else 0.0
    return float(own.mean()), se, float(np.concatenate(base_gain).mean())


def route_groupings(
    values: np.ndarray, max_routes: int, floor: int, random_state: int | None = 0
) -> list[np.ndarray]:
    """The candidate groupings of the rows by a sensor's values: its
    :func:`route_groups` into each of ``ROUTE_GROUP_COUNTS`` (at most
    ``max_routes``) groups, without repeats and without those of fewer than
    two groups."""
    out: list[np.ndarray] = []
    patterns = value_patterns(values)  # the same whatever the count
    for count in sorted({min(c, max_routes) for c in ROUTE_GROUP_COUNTS}):
        groups = route_groups(values, count, floor, random_state, patterns=patterns)
        if groups.max() >= 1 and not any(np.array_equal(groups, g) for g in out):
            out.append(groups)
    return out


def routed_growth(
    bank: Any,
    X: np.ndarray,
    y: np.ndarray,
    sensor_names: Sequence[str],
    sensor_columns: Sequence[np.ndarray],
    costs: np.ndarray,
    *,
    max_routes: int = MAX_ROUTES,
    max_rows: int = CHAIN_SCORE_ROWS,
    random_state: int | None = 0,
    row_loss: RowLoss | None = None,
    common_order: Sequence[int] | None = None,
    require: bool = False,
    rows: np.ndarray | None = None,
) -> SparseGrowth | None:
    """The cascade's chain plus, after a *routing* sensor, one chain per group
    of its values: each example may buy the routing sensor and then follow
    the order its group needs (CUBE-NM: the context, then its block's
    sensors), or keep the common order; Graph-Reduce learns which, per
    example, from the example's values. Plus, from the chain's first sensor,
    the posterior tree (:func:`posterior_tree_paths`, depth
    ``POSTERIOR_DEPTH``, leaves' orders of :func:`tail_length` sensors)
    where its first split passes :func:`tree_stands_clear`.

    The routing sensor and the grouping of its values are those of highest
    :func:`routing_scores` (each candidate's groupings from
    :func:`route_groupings`, at most ``max_routes`` groups); each group's
    order is :func:`greedy_order` from the routing sensor on that group's
    rows (from ``ROUTE_TAIL_MIN_ROWS`` training rows on, for
    ``strategies.tail_length`` sensors, then the common
    chain's order). None when neither any sensor's values nor the posterior
    tell which sensor helps next (no score above ``ROUTE_MIN_SE`` standard
    errors and ``ROUTE_MIN_SHARE`` of the common pick's gain, and no first
    split of the tree passing :func:`tree_stands_clear`; with ``require``, the
    best sensor all the same).

    Parameters
    ----------
    bank, X, y, sensor_names, costs, max_rows, random_state, row_loss
        As :func:`chain_growth` (a group's order scores at most
        ``ROUTE_ORDER_ROWS`` of its rows).
    sensor_columns : sequence of ndarray
        The columns of each sensor (its values group the rows).
    max_routes : int, default=MAX_ROUTES
    common_order : sequence of int, optional
        The common chain's order (:func:`chain_growth`'s), if already known.
    require : bool, default=False
        Route by the best-scored sensor even where none stands clear
        (``dag="routed"`` asks for this DAG).
    rows : ndarray of int, optional
        As :func:`chain_growth`'s: the rows the DAG is grown on (default
        every row).

    Returns
    -------
    SparseGrowth or None
        Root -> the common chain and root -> {r} -> each group's chain, and
        the tree's branches from the chain's first state; the common chain's
        states and {r} with every row flowing, a group's or branch's states
        with its rows.
    """
    M = len(sensor_names)
    costs = ranking_costs(costs)  # free or tiny costs: finite ratios
    rng = np.random.default_rng(random_state)
    rows = growth_rows(len(X), rows)
    n = len(rows)
    if row_loss is None:
        row_loss = cross_entropy(y)

    held = np.zeros(M, dtype=bool)
    floor = route_floor(n)
    found = find_route(
        bank, X, rows, held, sensor_columns, costs, row_loss, rng,
        max_routes=max_routes, floor=floor, random_state=random_state,
    )  # fmt: skip
    if common_order is None:
        common = chain_growth(
            bank, X, y, sensor_names, costs, max_rows=max_rows,
            random_state=random_state, row_loss=row_loss, rows=rows,
        )  # fmt: skip
        common_order = chain_order(common.dag)
    tree = []
    # From the chain's first sensor (see docstring); a class posterior only
    # (a regressor's bank has no class probabilities to split rows by).
    if len(common_order) > 2 and int(getattr(bank, "n_classes_", 0)) > 1:
        at = np.zeros(M, dtype=bool)
        at[common_order[0]] = True
        tree = posterior_tree_paths(
            bank, X, rows, at, costs, row_loss, rng,
            depth=POSTERIOR_DEPTH, tail=tail_length(M),
            floor=floor, root=True,
        )  # fmt: skip
    if found is None and not tree and require:
        found = find_route(
            bank, X, rows, held, sensor_columns, costs, row_loss, rng,
            max_routes=max_routes, floor=floor, random_state=random_state,
            require=True,
        )  # fmt: skip
    if found is None and not tree:
        return None
    paths = [(0, list(common_order), rows)] + tree
    route_masks = []
    if found is not None:
        paths += _route_paths(
            bank, X, rows, held, found, costs, row_loss, rng,
            min(max_rows, ROUTE_ORDER_ROWS), common_order,
            tail_length(M) if n >= ROUTE_TAIL_MIN_ROWS else None,
        )  # fmt: skip
        route_masks.append(mask_of([*np.flatnonzero(held), found[0]]))
    return _growth_of_paths(bank, X, sensor_names, paths, route_masks, rows)


def route_floor(n_rows: int) -> int:
    """Fewest rows a route's group or a posterior tree's half of ``n_rows``
    keeps (smaller ones keep the common order or are not split).

    Examples
    --------
    >>> route_floor(426), route_floor(1347)
    (10, 22)
    """
    return max(10, n_rows // 60)


def find_route(
    bank: Any,
    X: np.ndarray,
    rows: np.ndarray,
    held: np.ndarray,
    sensor_columns: Sequence[np.ndarray],
    costs: np.ndarray,
    row_loss: RowLoss,
    rng: np.random.Generator,
    *,
    max_routes: int,
    floor: int,
    random_state: int | None,
    require: bool = False,
) -> tuple[int, np.ndarray] | None:
    """The routing sensor for ``rows`` at the state ``held`` and each row's
    group by its values, or None where none stands clear (see
    :func:`routed_growth`)."""
    scored = rows if len(rows) <= ROUTE_SCORE_ROWS else np.sort(
        rng.choice(rows, ROUTE_SCORE_ROWS, replace=False)
    )  # fmt: skip
    # Groups are numbered over `rows`; routing_scores reads them by row.
    groupings: dict[int, list[np.ndarray]] = {}
    X_rows = X[rows]
    for r, cols in enumerate(sensor_columns):
        if held[r]:
            continue
        options = route_groupings(X_rows[:, cols], max_routes, floor, random_state)
        if options:
            groupings[r] = [_by_row(g, rows, len(X)) for g in options]
    if not groupings:
        return None
    scores = routing_scores(bank, X, scored, groupings, costs, row_loss, rng, held=held)
    if not scores:
        return None
    # Many sensors and groupings are tried: a route must stand clear of the
    # noise (ROUTE_MIN_SE standard errors) and be worth a share of what the
    # common pick gains (not a sliver of it) before a strategy is built on it.
    clear = {
        key: (mean, se, common)
        for key, (mean, se, common) in scores.items()
        if mean > ROUTE_MIN_SE * se and mean > ROUTE_MIN_SHARE * max(common, 0.0)
    }
    if not clear and not require:
        return None
    pool = clear or scores
    best = max(pool, key=lambda key: (pool[key][0], -key[0], -key[1]))
    return best[0], groupings[best[0]][best[1]][rows]


def two_means(values: np.ndarray, floor: int, iterations: int = 30) -> np.ndarray:
    """Each row's half (0 or 1) by 2-means of its ``values``
    (n_rows, n_columns): Lloyd's steps from the split along the principal
    axis (deterministic, no restarts: the posterior tree splits many times;
    k-means with restarts took most of its time on digits). All 0 when
    either half would hold fewer than ``floor`` rows or the rows do not
    differ.

    Examples
    --------
    >>> two_means(np.array([[0.0], [0.1], [0.9], [1.0]]), 1).tolist()
    [0, 0, 1, 1]
    >>> two_means(np.ones((4, 2)), 1).tolist()
    [0, 0, 0, 0]
    """
    Z = np.asarray(values, dtype=float)
    Z = Z - Z.mean(axis=0)
    # Start from the sign along the principal axis (the widest split), then
    # Lloyd's steps; the half holding the first row's sign is numbered 0.
    axis = np.linalg.svd(Z, full_matrices=False)[2][0]
    halves = (Z @ axis > 0).astype(np.intp)
    for _ in range(iterations):
        if halves.min() == halves.max():
            return np.zeros(len(Z), dtype=np.intp)
        centres = np.stack([Z[halves == h].mean(axis=0) for h in (0, 1)])
        near = ((Z[:, None, :] - centres[None]) ** 2).sum(axis=2).argmin(axis=1)
        if np.array_equal(near, halves):
            break
        halves = near
    halves = halves if halves[0] == 0 else 1 - halves
    counts = np.bincount(halves, minlength=2)
    return halves if counts.min() >= floor else np.zeros(len(Z), dtype=np.intp)


def posterior_tree_paths(
    bank: Any,
    X: np.ndarray,
    rows: np.ndarray,
    held: np.ndarray,
    costs: np.ndarray,
    row_loss: RowLoss,
    rng: np.random.Generator,
    *,
    depth: int,
    tail: int,
    floor: int,
    root: bool = False,
) -> list[tuple[int, list[int], np.ndarray]]:
    """Paths of a tree of routes by the bank's posterior from the state
    ``held`` (bool, n_sensors), for ``rows``.

    The rows are split in two by their most probable class at ``held``
    (out of fold; :func:`class_halves`, or with two classes or where fewer
    than two lead, :func:`two_means` of the probabilities), each half buys the
    sensor of
    most mean gain per unit cost on its rows, and so on ``depth`` times
    (halves of fewer than ``floor`` rows are not split; halves that pick the
    same sensor go on together); each leaf's rows then follow their
    :func:`greedy_order` for ``tail`` more sensors. Which pixel helps next
    depends on what the first said about the class (digits): greedy
    per-example acquisition wins there, and this tree is its form on a few
    hundred states. With ``root``, none unless the split at ``held`` gains
    on held-out picks (:func:`held_out_pick_gain` on up to
    ``CHAIN_SCORE_ROWS`` rows, judged by :func:`tree_stands_clear`).
    Graph-Reduce learns per example, from its values and the probabilities,
    which child to take; the policies read only acquired values.
    """
    start = mask_of(np.flatnonzero(held))
    cand = np.flatnonzero(~held)
    if not len(cand):
        return []
    # The root's test scores more rows (one test: its power matters).
    most = CHAIN_SCORE_ROWS if root else ROUTE_SCORE_ROWS
    scored = rows if len(rows) <= most else np.sort(
        rng.choice(rows, most, replace=False)
    )  # fmt: skip
    at_scored = np.searchsorted(rows, scored)
    proba = bank.oof_at(X, rows, held[None])[:, 0]
    if depth <= 0:
        current = float(row_loss(scored, proba[at_scored]).mean())
        order = greedy_order(bank, X, scored, held, costs, row_loss, current, tail)
        return [(start, order, rows)] if order else []
    trial = np.repeat(held[None], len(cand), axis=0)
    trial[np.arange(len(cand)), cand] = True
    after = block_losses(bank, X, scored, trial, row_loss)
    gain = (row_loss(scored, proba[at_scored])[:, None] - after) / np.maximum(
        costs[cand], 1e-12
    )
    halves = np.zeros(len(rows), dtype=np.intp)
    split = None
    if len(rows) >= 2 * floor:
        split = class_halves(proba, at_scored, gain, floor)
        # Else by the probabilities in Hellinger geometry: standardising would
        # blow up the classes of near-zero probability (noise) over the ones
        # that tell rows apart.
        halves = two_means(np.sqrt(proba), floor) if split is None else split
    if root:  # averaged over a few random halvings: a steadier verdict
        mean, se, common = np.mean(
            [
                held_out_pick_gain(
                    gain, halves[at_scored],
                    np.array_split(rng.permutation(len(scored)), 2), 1.0,
                )
                for _ in range(ROOT_HALVINGS)
            ],
            axis=0,
        )  # fmt: skip
        if not tree_stands_clear(mean, se, common, by_class=split is not None):
            return []
    picks: dict[int, list[np.ndarray]] = {}
    for half in np.unique(halves):
        mine = halves[at_scored] == half
        if half < 0 or not mine.any():  # too few rows: the common pick
            mine = np.ones(len(scored), dtype=bool)
        pick = int(cand[gain[mine].mean(axis=0).argmax()])
        picks.setdefault(pick, []).append(rows[halves == half])
    paths = []
    for pick, parts in sorted(picks.items()):
        members = np.sort(np.concatenate(parts))
        paths.append((start, [pick], members))
        below = held.copy()
        below[pick] = True
        paths += posterior_tree_paths(
            bank, X, members, below, costs, row_loss, rng, depth=depth - 1,
            tail=tail, floor=floor,
        )  # fmt: skip
    return paths


def tree_stands_clear(mean: float, se: float, common: float, *, by_class: bool) -> bool:
    """Whether the posterior tree is built, from its first split's
    :func:`held_out_pick_gain` (``mean``, ``se``, ``common``).

    Split by groups of classes (``by_class``, :func:`class_halves`), any
    held-out gain: the grouping is fixed by the classes, not searched, and
    its worth grows with the levels below the first, which this test does
    not see; the estimator's validation choice
    (``strategies.choose_strategy``, which keeps the
    chain unless the routed DAG does better by a standard error) judges the
    whole tree. Split by the probabilities (two classes), ``POSTERIOR_MIN_SE``
    standard errors and ``ROUTE_MIN_SHARE`` of the common pick's gain: there
    the halves are a threshold on one probability, which the policies can
    read without a tree.

    Examples
    --------
    >>> tree_stands_clear(0.01, 0.008, 0.2, by_class=True)
    True
    >>> tree_stands_clear(0.01, 0.008, 0.2, by_class=False)
    False
    >>> tree_stands_clear(-0.01, 0.008, 0.2, by_class=True)
    False
    """
    if by_class:
        return mean > 0
    return mean > POSTERIOR_MIN_SE * se and mean > ROUTE_MIN_SHARE * max(common, 0)


def class_halves(
    proba: np.ndarray, at_scored: np.ndarray, gain: np.ndarray, floor: int
) -> np.ndarray | None:
    """Each row's half (0 or 1) by its most probable class: the classes are
    split in two by :func:`two_means` of the mean ``gain`` (scored rows x
    candidate sensors) of the scored rows (``at_scored``, positions in the
    rows of ``proba``) each class leads, so that the classes whose rows gain
    from the same sensors go together (which pixel helps next depends on
    which digits are still in play), and a policy reading the probabilities
    can tell the halves apart. None with two classes (each would be its
    own group, so grouping adds nothing to the probabilities' own split),
    when fewer than two classes lead the scored rows, or when a half would
    hold fewer than ``floor`` rows. A class no scored row leads joins half 0.

    Examples
    --------
    >>> proba = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]] * 2)
    >>> gain = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]] * 2)
    >>> class_halves(proba, np.arange(6), gain, 1).tolist()
    [0, 0, 1, 0, 0, 1]
    >>> class_halves(proba, np.arange(6), gain, 3) is None
    True
    """
    if proba.shape[1] < 3:
        return None
    top = proba.argmax(axis=1)
    leading = top[at_scored]
    classes = np.unique(leading)
    if len(classes) < 2:
        return None
    means = np.stack([gain[leading == c].mean(axis=0) for c in classes])
    side = two_means(means, 1)
    if side.min() == side.max():
        return None
    of_class = np.zeros(proba.shape[1], dtype=np.intp)
    of_class[classes] = side
    halves = of_class[top]
    if np.bincount(halves, minlength=2).min() < floor:
        return None
    return halves if halves[0] == 0 else 1 - halves


def _by_row(groups: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Groups of ``rows`` spread to an array over all ``n`` rows (-1 elsewhere)."""
    out = np.full(n, -1, dtype=np.intp)
    out[rows] = groups
    return out


def _route_paths(
    bank: Any,
    X: np.ndarray,
    rows: np.ndarray,
    held: np.ndarray,
    found: tuple[int, np.ndarray],
    costs: np.ndarray,
    row_loss: RowLoss,
    rng: np.random.Generator,
    max_rows: int,
    common_order: Sequence[int],
    tail: int | None,
) -> list[tuple[int, list[int], np.ndarray]]:
    """Paths of a route: ``held`` -> + the routing sensor -> each group's
    greedy order from there, on the group's rows; with ``tail``, the group's
    order stops after ``tail`` sensors and goes on with the sensors of
    ``common_order`` (the chain's) it has not bought, in that order (see
    ``ROUTE_TAIL_MIN_ROWS``). One level only: a second route within a group
    would be found on that group's fewer rows (on digits it erred more)."""
    route, groups = found
    start = mask_of(np.flatnonzero(held))
    paths = [(start, [route], rows)]
    after = held.copy()
    after[route] = True
    for group in range(int(groups.max()) + 1):
        members = rows[groups == group]
        if not len(members):
            continue
        sub = members if len(members) <= max_rows else np.sort(
            rng.choice(members, max_rows, replace=False)
        )  # fmt: skip
        current = float(row_loss(sub, bank.oof_at(X, sub, after)[:, 0]).mean())
        order = greedy_order(bank, X, sub, after, costs, row_loss, current, tail)
        if tail is not None:
            bought = {*order, *np.flatnonzero(after).tolist()}  # held + route
            order += [j for j in common_order if j not in bought]
        paths.append((start | 1 << route, order, members))
    return paths


def _growth_of_paths(
    bank: Any,
    X: np.ndarray,
    sensor_names: Sequence[str],
    paths: list[tuple[int, list[int], np.ndarray]],
    route_masks: Sequence[int],
    rows: np.ndarray,
) -> SparseGrowth:
    """The DAG of some paths of one-sensor additions, each (start mask,
    sensors in order, the rows that follow it); a state's rows are those of
    every path through it, its probabilities their out-of-fold ones. The
    states of ``route_masks`` (sensor sets) are its ``route_states``;
    ``rows`` flow at the root."""
    M = len(sensor_names)
    index: dict[int, int] = {0: 0}
    masks, kids = [0], [set()]
    flow: list[list[np.ndarray]] = [[rows]]

    def state_of(mask: int) -> int:
        if mask not in index:
            index[mask] = len(masks)
            masks.append(mask)
            kids.append(set())
            flow.append([])
        return index[mask]

    for start, order, rows in paths:
        k = state_of(start)
        for j in order:
            child = state_of(masks[k] | 1 << j)
            kids[k].add((j, child))
            flow[child].append(rows)
            k = child
    order = sorted(range(len(masks)), key=lambda k: (masks[k].bit_count(), masks[k]))
    new = np.empty(len(masks), dtype=np.intp)
    new[order] = np.arange(len(order))
    dag = SparseSensorDAG(
        sensor_names,
        [masks[k] for k in order],
        [sorted((j, int(new[c])) for j, c in kids[k]) for k in order],
    )
    flows = [np.unique(np.concatenate(flow[k])) for k in order]
    # The states of one set of rows (a path's, or the common chain's) are
    # asked of the bank together where that changes no output (a tree bank),
    # else every state's own rows in calls of many (row, state) pairs.
    subsets = np.zeros((len(order), M), dtype=bool)
    for i, k in enumerate(order):
        subsets[i, bits_of(masks[k])] = True
    if getattr(bank, "exact_in_blocks", False):
        same_rows: dict[bytes, list[int]] = {}
        for i, rows in enumerate(flows):
            same_rows.setdefault(rows.tobytes(), []).append(i)
        tables: dict[int, RowTable] = {}
        for states in same_rows.values():
            for i, table in zip(
                states,
                oof_tables(bank, X, flows[states[0]], subsets[states]),
                strict=True,
            ):
                tables[i] = table
        kept = [tables[i] for i in range(len(order))]
    else:
        kept = oof_pair_tables(bank, X, flows, subsets)
    routes = tuple(int(new[index[mask]]) for mask in route_masks)
    return SparseGrowth(dag, flows, kept, bank, X, routes, "routed")


__all__ = [
    "PAIR_BLOCK",
    "PAIR_LOSS_BYTES",
    "POSTERIOR_MIN_SE",
    "ROOT_HALVINGS",
    "ROUTE_GROUP_COUNTS",
    "ROUTE_MIN_SE",
    "ROUTE_MIN_SHARE",
    "ROUTE_ORDER_ROWS",
    "ROUTE_SCORE_ROWS",
    "ROUTE_TAIL_MIN_ROWS",
    "class_halves",
    "find_route",
    "held_out_pick_gain",
    "pair_losses",
    "posterior_tree_paths",
    "route_floor",
    "route_groupings",
    "route_groups",
    "routed_growth",
    "routing_scores",
    "tree_stands_clear",
    "two_means",
    "value_patterns",
]
