"""DAG strategies for many sensors, and the choice among them on validation rows.

With more sensors than a full DAG can hold, the states come from a *strategy*
run on the any-mask bank's out-of-fold probabilities, each yielding a sparse
DAG of one-sensor additions and the training rows that reach each state (a
``strategies.SparseGrowth``); Graph-Reduce then learns
the policies on it as on any DAG:

- ``"grown"``: ``strategies.grow_sparse_dag``, states
  grown where rows gain most (per-row branching);
- ``"chain"``: :func:`chain_growth`, the confidence cascade's order as a chain
  (every row may stop after each sensor of one greedy order): few states, each
  with every row, so its policies are learned from all the data;
- ``"routed"``: ``strategies.routed_growth``, the chain
  plus a per-example route: a *routing* sensor whose value tells which sensor
  helps next (CUBE-NM's context, worthless alone), then one greedy order per
  group of its values; and a tree of routes by the bank's posterior (from
  the chain's first sensor the rows split by their class probabilities, each
  part buying its own next sensor: per-example choice where what the first
  sensors said decides which helps next, as on digits).
  Graph-Reduce learns, per example and from its values, whether to buy the
  routing sensor, which order or branch to follow; it exists only where some
  sensor's value, or the posterior, measurably changes the best next sensor
  on held-out rows.

``dag="auto"`` does not trust any blindly: the bank is bound to the DAG of
each of ``AUTO_STRATEGIES`` (the chain and the routed DAG, sharing its fold
models; the grown DAG only when asked for by name), and each fit, at its
own cost scale, grows each strategy's DAG again on part of the training
rows and learns its policies there, compares their losses (stop loss +
``cost_scale`` x cost) on the others (:func:`choose_strategy`: rows that
chose none of the DAG's orders, routes or splits) and keeps the simplest (chain, then
routed, then grown) whose loss is within one standard error of the paired
per-row difference from the least: a few hundred held-out rows cannot tell
close strategies apart, and the chain's policies, each learned from every
row, are the safer guess. Where that rule decides (a simpler strategy kept though
another's loss is less), the call is judged again on every training row,
each held out in turn (``VALIDATION_FOLDS`` parts): a quarter of the rows
is a noisy judge of a close call (on dna, four splits of the same rows
disagreed at most low-budget scales), and a clear call keeps the one
split's cost. On small tables the chain usually wins (the other states hold
too few rows for their policies); where rows need different sensors (a
context that says where to look) the routed DAG can.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedShuffleSplit

from .._weighted import weighted_mean_se
from ..graph_reduce import graph_reduce
from ..validation import int_seed
from ._growth import (
    RowLoss,
    SparseGrowth,
    SparseRollout,
    SparseSensorDAG,
    growth_rows,
    oof_tables,
    ranking_costs,
)
from ._memo import block_losses

#: The strategies of a many-sensor fit (``dag="auto"`` chooses among them).
STRATEGIES = ("grown", "chain", "routed")
#: ``dag="auto"``'s order of preference: the first strategy whose held-out
#: loss is within one standard error of the best is kept.
SIMPLEST_FIRST = ("chain", "routed", "grown")
#: The strategies ``dag="auto"`` builds and chooses between. Not the grown
#: DAG (``dag="sparse"``): on ``bench_afa.py``'s tables it was kept at a few
#: cost scales of small tables only, and leaving it out left the test errors
#: as they were, while growing it and judging its hundreds of states took most
#: of a fit's and a curve's time (BENCHMARKS.md, "What each change bought").
AUTO_STRATEGIES = ("chain", "routed")
#: Training rows scored per candidate while the chain's order is chosen.
CHAIN_SCORE_ROWS = 2000
#: Most groups a routing sensor's values split the rows into (``"routed"``,
#: ``budgetdag_core.strategies``).
MAX_ROUTES = 8
#: Sensors bought by the splits of the routed DAG's posterior tree (after
#: the chain's first; ``strategies.posterior_tree_paths``).
#: On digits (64 pixels, split seed 0, the routed DAG alone) depth 6 with
#: leaves' orders of M // 4 sensors erred least at 10 % of the all-sensor
#: cost of depths 5 to 7 and orders of 6 to 16 sensors tried, and shorter
#: orders erred more at 25 %.
POSTERIOR_DEPTH = 6
#: Share of the training rows held out to compare strategies.
VALIDATION_SHARE = 0.25
#: Most training rows a strategy choice grows its held-out DAGs on and
#: judges (:func:`validation_folds`; beyond, a seeded stratified share):
#: growing every candidate again on each part's rows and learning its
#: policies there took most of a 20 000-row fit (shuttle) on 9 sensors.
CHOICE_MAX_ROWS = 5000
#: Parts the training rows are held out in, in turn, on a close call
#: (:func:`choose_strategy`): every row once, each part's policies learned
#: on the others (as many rows as the first split's).
VALIDATION_FOLDS = 4


def tail_length(n_sensors: int) -> int:
    """Sensors of a greedy order grown for a part of the rows (a posterior
    leaf's, a route group's) before it stops or joins the chain's order:
    ``max(POSTERIOR_DEPTH, n_sensors // 4)``.

    Examples
    --------
    >>> tail_length(64), tail_length(13)
    (16, 6)
    """
    return max(POSTERIOR_DEPTH, n_sensors // 4)


def cross_entropy(y: np.ndarray) -> RowLoss:
    """The ``strategies.RowLoss`` of class labels ``y``
    (indices): each row's negative log probability of its label, at any
    number of states (``proba``: rows x ... x classes)."""

    def row_loss(rows: np.ndarray, proba: np.ndarray) -> np.ndarray:
        labels = y[rows].reshape((-1,) + (1,) * (proba.ndim - 1))
        picked = np.take_along_axis(proba, labels, axis=-1)[..., 0]
        return -np.log(np.clip(picked, 1e-12, None))

    return row_loss


def chain_growth(
    bank: Any,
    X: np.ndarray,
    y: np.ndarray,
    sensor_names: Sequence[str],
    costs: np.ndarray,
    *,
    max_rows: int = CHAIN_SCORE_ROWS,
    random_state: int | None = 0,
    row_loss: RowLoss | None = None,
    rows: np.ndarray | None = None,
) -> SparseGrowth:
    """The chain DAG of one greedy acquisition order, every row at every state.

    The order is the confidence cascade's, on the any-mask bank: from the
    current prefix, the sensor whose addition lowers the out-of-fold
    cross-entropy of the (at most ``max_rows``, seeded) scored rows the most
    per unit of mean cost comes next (cross-entropy rather than 0/1 error:
    smooth on a few hundred rows).

    Parameters
    ----------
    bank : SparseMaskedBank
        With fitted fold models (``bank.oof_at``).
    X : ndarray (n_samples, n_columns)
    y : ndarray (n_samples,) of class indices
    sensor_names : sequence of str
    costs : ndarray (n_sensors,)
        Mean acquisition cost of each sensor.
    max_rows : int, default=2000
    random_state : int or None, default=0
    row_loss : callable(rows, values) -> ndarray, optional
        Each scored row's loss at the bank's out-of-fold outputs (a
        ``strategies.RowLoss``); default the
        cross-entropy of ``y`` (a regressor's: its squared or absolute error).
    rows : ndarray of int, optional
        The training rows (sorted) the order is chosen on and that flow;
        default every row (:func:`choose_strategy` grows a DAG on its fit
        rows alone, so that the rows it holds out judge it unseen).

    Returns
    -------
    SparseGrowth
        States ``{}, {o1}, {o1, o2}, ...`` (each with one child), all rows
        flowing through every state.
    """
    M = len(sensor_names)
    costs = ranking_costs(costs)  # free or tiny costs: finite ratios
    rng = np.random.default_rng(random_state)
    rows = growth_rows(len(X), rows)
    scored = rows if len(rows) <= max_rows else np.sort(
        rng.choice(rows, max_rows, replace=False)
    )  # fmt: skip
    held = np.zeros(M, dtype=bool)
    if row_loss is None:
        row_loss = cross_entropy(y)

    current = row_loss(scored, np.tile(bank.prior_, (len(scored), 1))).mean()
    order = greedy_order(bank, X, scored, held, costs, row_loss, current)
    masks = [0]
    for j in order:
        masks.append(masks[-1] | 1 << j)
    children = [[(j, k + 1)] for k, j in enumerate(order)] + [[]]
    dag = SparseSensorDAG(sensor_names, masks, children)
    prefixes = np.tril(np.ones((M, M), dtype=bool))[:, np.argsort(order)]
    # The empty set, then every prefix (in blocks of states, one call each).
    subsets = np.vstack([np.zeros((1, M), dtype=bool), prefixes])
    tables = oof_tables(bank, X, rows, subsets)
    return SparseGrowth(dag, [rows] * len(masks), tables, bank, X, strategy="chain")


def greedy_order(
    bank: Any,
    X: np.ndarray,
    scored: np.ndarray,
    held: np.ndarray,
    costs: np.ndarray,
    row_loss: RowLoss,
    current: float,
    most: int | None = None,
) -> list[int]:
    """The cascade's order of the sensors not in ``held`` (bool, n_sensors):
    from the held ones, the sensor whose addition lowers the mean
    ``row_loss`` of the ``scored`` rows the most per unit cost comes next;
    ``current`` is their mean loss at ``held``. With ``most``, only the
    first ``most`` sensors of the order."""
    held = held.copy()
    order: list[int] = []
    while not held.all() and (most is None or len(order) < most):
        cand = np.flatnonzero(~held)
        trial = np.repeat(held[None], len(cand), axis=0)
        trial[np.arange(len(cand)), cand] = True
        # Every candidate at once, each one's row losses contiguous: each
        # mean sums as a candidate's own 1-D array would.
        losses = block_losses(bank, X, scored, trial, row_loss)
        after = np.ascontiguousarray(losses.T).mean(axis=1)
        best = int(np.argmax((current - after) / np.maximum(costs[cand], 1e-12)))
        order.append(int(cand[best]))
        held[cand[best]] = True
        current = after[best]
    return order


def chain_order(dag: SparseSensorDAG) -> list[int]:
    """The sensors of a chain DAG (:func:`chain_growth`'s) in their order."""
    return [dag.children[k][0][0] for k in range(dag.n_states - 1)]


def restricted(growth: SparseGrowth, rows: np.ndarray) -> SparseGrowth:
    """The same DAG and probabilities, with only ``rows`` flowing (sorted)."""
    keep = np.zeros(len(growth.X), dtype=bool)
    keep[rows] = True
    flow = [f[keep[f]] for f in growth.flow]  # each flow is sorted already
    return replace(growth, flow=flow)


@dataclass
class StrategyChoice:
    """Which strategy a many-sensor fit kept, and the validation behind it.

    ``scores[name]`` lists, per validation cost scale (``cost_scales``), the
    held-out rows' mean stop loss, mean cost and loss (stop loss +
    cost scale x cost) under that strategy's policies, and ``excess_se``: the
    standard error of the paired per-row excess of its loss over the
    strategy of least mean loss (0 for that one).

    ``kept_between``: where no choice was made at this scale because a
    trade-off curve's fitted neighbours on both sides kept this strategy
    (:func:`kept_by_neighbours`), their two cost scales (``scores`` then
    empty).

    ``kept_incumbent``: a refit's close call on the first split kept the
    refitted model's own strategy, within one standard error of the least
    mean loss there (:func:`choose_strategy`'s ``incumbent``).
    """

    strategy: str
    cost_scales: list[float] = field(default_factory=list)
    scores: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    #: Held-out parts judged (1: the first split; more on a close call).
    folds: int = 1
    kept_between: tuple[float, float] | None = None
    kept_incumbent: bool = False
    #: The strategies within one standard error of the least mean loss on
    #: the rows judged (not saved).
    within: list[str] = field(default_factory=list, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain types (a skops file keeps them); :meth:`from_dict` inverts."""
        out: dict[str, Any] = {
            "strategy": self.strategy,
            "cost_scales": [float(c) for c in self.cost_scales],
            "folds": int(self.folds),
            "scores": {
                name: [{k: float(v) for k, v in row.items()} for row in rows]
                for name, rows in self.scores.items()
            },
        }
        if self.kept_between is not None:
            out["kept_between"] = [float(c) for c in self.kept_between]
        if self.kept_incumbent:
            out["kept_incumbent"] = True
        return out

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> StrategyChoice:
        between = saved.get("kept_between")
        return cls(
            str(saved["strategy"]),
            list(saved.get("cost_scales", [])),
            dict(saved.get("scores", {})),
            int(saved.get("folds", 1)),
            None if between is None else (float(between[0]), float(between[1])),
            kept_incumbent=bool(saved.get("kept_incumbent", False)),
        )

    def table(self) -> pd.DataFrame:
        """The validation numbers as a frame: one row per strategy and cost
        scale (``stop_loss``, ``cost``, ``loss``), and ``chosen``. Without
        validation (one strategy built), one row: the strategy, its numbers
        NaN.

        Examples
        --------
        >>> StrategyChoice("chain").table()[["strategy", "loss", "chosen"]]
          strategy  loss  chosen
        0    chain   NaN    True
        """
        rows = [
            {"strategy": name, "cost_scale": scale, **row}
            for name, part in self.scores.items()
            for scale, row in zip(self.cost_scales, part, strict=True)
        ]
        if not rows:
            nan = float("nan")
            rows = [
                {"strategy": self.strategy, "cost_scale": nan}
                | {"stop_loss": nan, "cost": nan, "loss": nan, "excess_se": nan}
            ]
        frame = pd.DataFrame(rows)
        frame["chosen"] = frame["strategy"] == self.strategy
        return frame

    def mean_loss(self, name: str) -> float:
        """Mean held-out loss of strategy ``name`` over the cost scales,
        each scale's losses divided by the best strategy's there (so that
        every scale counts alike)."""
        per_scale = []
        for i in range(len(self.cost_scales)):
            best = min(s[i]["loss"] for s in self.scores.values())
            per_scale.append(self.scores[name][i]["loss"] / max(best, 1e-12))
        return float(np.mean(per_scale))


def choose_strategy(
    growths: dict[str, SparseGrowth | None],
    y: np.ndarray,
    inputs_for: Callable[[SparseGrowth], Callable[..., np.ndarray]],
    stop_loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
    judged_loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
    costs: np.ndarray,
    learner: Any,
    cost_scales: Sequence[float],
    *,
    random_state: int | None = 0,
    progress: Callable[[str, int, int], None] | None = None,
    sample_weight: np.ndarray | None = None,
    grow_on: Callable[[str, np.ndarray], SparseGrowth | None] | None = None,
    incumbent: str | None = None,
) -> StrategyChoice:
    """Compare strategies on held-out training rows (see the module docstring).

    Each strategy's policies are learned (Graph-Reduce) on
    ``1 - VALIDATION_SHARE`` of the rows (of at most ``CHOICE_MAX_ROWS``:
    :func:`validation_folds`), a seeded stratified split, at each
    of ``cost_scales`` (a fit: its own); the held-out rows are then rolled
    out under them, with their out-of-fold probabilities. Each row's losses
    are divided, per scale, by the best strategy's mean loss there and
    averaged over the scales; the first strategy in ``growths`` (put the
    simplest first) whose mean is within one standard error of the paired
    per-row difference from the least mean is kept.

    A *close call* (a simpler strategy kept although another's mean loss is
    less) is judged again on every training row: the rows not yet held out
    are held out in turn, in ``VALIDATION_FOLDS - 1`` more stratified parts,
    each part's rows rolled out under policies learned on the other rows
    (``folds`` in the result). With ``incumbent`` (a refit: the refitted
    model's own candidate), a close call keeps the incumbent instead where
    it is within one standard error on the first split (``kept_incumbent``
    in the result): judging every row would grow each candidate on three
    more splits (most of a refit's time) to choose between near equals.

    ``inputs_for(growth)`` gives the ``state_inputs(k, rows, proba)`` of the
    policies on that growth's DAG. The policies learn from ``stop_loss``
    (e.g. the expected losses); the held-out rows are judged by
    ``judged_loss`` (e.g. the 0/1 loss of the prediction against the label:
    what a test reports). ``progress`` (a ``Progress`` callback) is told
    ``("choice", done, 2 x strategies)`` per held-out part, as each
    strategy's DAG is grown on its fit rows and as it is judged (a growth
    can take seconds).
    ``sample_weight`` (one per row of ``y``): row i counts that many times,
    in the policies' Graph-Reduce and in the held-out means and standard
    errors.

    ``grow_on(name, fit_rows)``: strategy ``name``'s DAG grown again on
    ``fit_rows`` alone (its flows those rows), or None where the strategy
    finds nothing to grow there (it is then judged as the first strategy:
    on those rows it would not exist; where no other strategy grows on the
    first split's fit rows, the first is kept unjudged). A DAG grown on
    every row has chosen its orders, routes and splits on the held-out rows
    too, which flatters the strategies with more choices (the routed DAG's
    posterior tree); without ``grow_on``, each growth with only the fit rows
    flowing (with ``grow_on``, ``growths``' values are not read: None will
    do).
    """
    names = list(growths)
    if len(names) == 1:
        return StrategyChoice(names[0])
    scales = [float(c) for c in cost_scales]
    # parts[name][i]: per held-out part, its rows' (stop loss, cost) at scale i
    parts: dict[str, list[list[np.ndarray]]] = {n: [[] for _ in scales] for n in names}
    inputs = {} if grow_on else {name: inputs_for(g) for name, g in growths.items()}
    steps = 2 * len(names)  # each candidate grown, then each judged
    for fold, (fit_rows, val_rows) in enumerate(validation_folds(y, random_state)):
        judged: dict[str, list[np.ndarray]] = {}
        grown: dict[str, SparseGrowth | None] = {}
        for done, (name, growth) in enumerate(growths.items()):
            if progress is not None:  # each held-out part: one more count
                progress("choice", done, steps)
            if grow_on is None:
                grown[name] = restricted(growth, fit_rows)
            else:
                grown[name] = grow_on(name, fit_rows)
        if fold == 0 and all(grown[name] is None for name in names[1:]):
            return StrategyChoice(names[0])  # judged alike: the first kept
        for done, (name, part) in enumerate(grown.items(), start=len(names)):
            if progress is not None:
                progress("choice", done, steps)
            if grow_on is None:
                state_inputs = inputs[name]
            else:
                state_inputs = None if part is None else inputs_for(part)
            if part is None:  # not there on these rows: as the simplest
                judged[name] = judged[names[0]]
            else:
                judged[name] = held_out_parts(
                    part, val_rows, state_inputs, stop_loss, judged_loss,
                    costs, learner, scales, sample_weight,
                )  # fmt: skip
            for i, p in enumerate(judged[name]):
                parts[name][i].append(p)
        if progress is not None:
            progress("choice", steps, steps)
        choice = judged_choice(names, scales, parts, sample_weight)
        choice.folds = fold + 1
        if fold == 0 and choice.strategy == min(names, key=choice.mean_loss):
            break  # not a close call: one split is enough
        if fold == 0 and incumbent in choice.within:
            choice.strategy, choice.kept_incumbent = incumbent, True
            break
    return choice


def kept_by_neighbours(
    kept: Mapping[float, str], scale: float
) -> tuple[str, tuple[float, float]] | None:
    """The strategy (candidate key) a new ``scale`` of a trade-off curve keeps
    without a choice of its own: the one the nearest fitted scales below and
    above it both kept (``kept``: fitted scale -> key), and those two
    scales; None where ``scale`` has no neighbour on a side or they differ.

    A choice judges the strategies at one cost scale on held-out rows (each
    candidate grown again and its policies learned there: most of a curve's
    time on many sensors); between two scales that kept the same one, it
    would mostly be made again only to agree. Every scale with differing
    neighbours still chooses on its own, so the curve keeps its points where
    the choice changes.

    Examples
    --------
    >>> kept = {0.0: "chain", 0.01: "routed", 0.04: "routed"}
    >>> kept_by_neighbours(kept, 0.02)
    ('routed', (0.01, 0.04))
    >>> kept_by_neighbours(kept, 0.005) is None  # chain below, routed above
    True
    >>> kept_by_neighbours(kept, 0.08) is None  # nothing above
    True
    """
    below = [s for s in kept if s < scale]
    above = [s for s in kept if s > scale]
    if not below or not above:
        return None
    low, high = max(below), min(above)
    if kept[low] != kept[high]:
        return None
    return kept[low], (float(low), float(high))


def validation_folds(
    y: np.ndarray, random_state: int | None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(fit rows, held-out rows) of :func:`choose_strategy`, sorted: first a
    seeded stratified split holding out ``VALIDATION_SHARE`` of the rows,
    then ``VALIDATION_FOLDS - 1`` parts of the other rows, each held out in
    turn (together every row once). Beyond ``CHOICE_MAX_ROWS`` rows, the
    same of a seeded stratified draw of that many. Classes are strata when
    each has two rows or more and both sides of the split can hold every
    class (a regression's targets: none)."""
    n = len(y)
    if n > CHOICE_MAX_ROWS:  # a seeded share of the rows, as stratified
        chosen = np.sort(_stratified_rows(y, CHOICE_MAX_ROWS, random_state))
        for fit_rows, val_rows in validation_folds(y[chosen], random_state):
            yield chosen[fit_rows], chosen[val_rows]
        return
    stratify = np.zeros(n, dtype=int)
    n_held = int(np.ceil(VALIDATION_SHARE * n))
    if _can_stratify(y, n_held, n - n_held):
        stratify = y
    split = StratifiedShuffleSplit(
        1, test_size=VALIDATION_SHARE, random_state=random_state
    )
    fit_rows, val_rows = next(split.split(np.zeros((n, 1)), stratify))
    fit_rows, val_rows = np.sort(fit_rows), np.sort(val_rows)
    yield fit_rows, val_rows
    # The rest in parts dealt round-robin within each stratum, in a seeded
    # random order: stratified, whatever a class's count.
    rng = np.random.default_rng([int_seed(random_state) or 0, 41])
    rest = fit_rows[np.lexsort((rng.random(len(fit_rows)), stratify[fit_rows]))]
    part = np.arange(len(rest)) % (VALIDATION_FOLDS - 1)
    for k in range(VALIDATION_FOLDS - 1):
        held = np.sort(rest[part == k])
        if len(held):
            yield np.setdiff1d(np.arange(n), held), held


def _can_stratify(y: np.ndarray, n_one: int, n_other: int) -> bool:
    """Whether a split of ``y``'s rows into ``n_one`` and ``n_other`` can take
    its classes as strata: labels (not a regression's targets), every class
    of two rows or more, and room on both sides for every class."""
    if np.asarray(y).dtype.kind not in "iub":
        return False
    counts = np.bincount(y)
    counts = counts[counts > 0]
    return counts.min() >= 2 and min(n_one, n_other) >= len(counts)


def _stratified_rows(
    y: np.ndarray, n_rows: int, random_state: int | None
) -> np.ndarray:
    """``n_rows`` of ``y``'s rows, drawn seeded, stratified by class where
    :func:`_can_stratify` allows (else at random)."""
    seed = int(np.random.default_rng([int_seed(random_state) or 0, 43]).integers(2**31))
    if _can_stratify(y, n_rows, len(y) - n_rows):
        split = StratifiedShuffleSplit(1, train_size=n_rows, random_state=seed)
        return next(split.split(np.zeros((len(y), 1)), y))[0]
    return np.random.default_rng(seed).choice(len(y), n_rows, replace=False)


def held_out_parts(
    part: SparseGrowth,
    val_rows: np.ndarray,
    state_inputs: Callable[..., np.ndarray],
    stop_loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
    judged_loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
    costs: np.ndarray,
    learner: Any,
    scales: list[float],
    sample_weight: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Per cost scale, ``val_rows``' (judged stop loss, cost) columns under
    policies learned (Graph-Reduce) on the rows flowing in ``part``, and
    with ``sample_weight`` a third column: the rows' weights."""
    held = []
    for scale in scales:
        learned = graph_reduce(
            state_inputs, stop_loss, costs, part, learner, cost_scale=scale,
            sample_weight=_fit_weights(sample_weight, part),
        )  # fmt: skip
        judge = SparseRollout(part, state_inputs, judged_loss, costs, scale)
        judge.policies = learned.policies
        judged = judge.parts(0, val_rows)
        if sample_weight is not None:
            judged = np.column_stack([judged, sample_weight[val_rows]])
        held.append(judged)
    return held


def _fit_weights(
    sample_weight: np.ndarray | None, part: SparseGrowth
) -> np.ndarray | None:
    """The weights Graph-Reduce learns ``part``'s policies with: the rows
    held out weigh 0 (they reach no state of ``part``); None without
    weights, or where no row flowing in ``part`` weighs more than 0 (its
    states then fit as unweighted ones would)."""
    if sample_weight is None:
        return None
    w = np.zeros(len(sample_weight))
    rows = part.flow[0]
    w[rows] = sample_weight[rows]
    return w if w.any() else None


def judged_choice(
    names: list[str],
    scales: list[float],
    parts: dict[str, list[list[np.ndarray]]],
    sample_weight: np.ndarray | None = None,
) -> StrategyChoice:
    """The :class:`StrategyChoice` of the held-out rows so far (``parts``, as
    :func:`choose_strategy` gathers them; with ``sample_weight`` their third
    column weighs the rows)."""
    choice = StrategyChoice(names[0], scales, {})
    per_row: dict[str, list[np.ndarray]] = {}
    weight = None
    for name in names:
        rows, losses = [], []
        for scale, held in zip(scales, parts[name], strict=True):
            p = np.concatenate(held)
            weight = None if sample_weight is None else p[:, 2]
            losses.append(p[:, 0] + scale * p[:, 1])
            loss = float(np.average(p[:, 0], weights=weight))
            cost = float(np.average(p[:, 1], weights=weight))
            rows.append({"stop_loss": loss, "cost": cost, "loss": loss + scale * cost})
        choice.scores[name], per_row[name] = rows, losses
    choice.within = within_one_se(names, per_row, choice, weight)
    choice.strategy = choice.within[0]
    return choice


def keep_within_one_se(
    names: list[str],
    per_row: dict[str, list[np.ndarray]],
    choice: StrategyChoice,
    weight: np.ndarray | None = None,
) -> str:
    """The first of ``names`` whose mean relative loss is within one standard
    error (of the paired per-row difference) of the least; sets each
    strategy's ``excess_se`` in ``choice.scores`` (``weight``: the rows'
    weights, a row of weight w as w copies)."""
    return within_one_se(names, per_row, choice, weight)[0]


def within_one_se(
    names: list[str],
    per_row: dict[str, list[np.ndarray]],
    choice: StrategyChoice,
    weight: np.ndarray | None = None,
) -> list[str]:
    """The ``names`` (in their order) whose mean relative loss is within one
    standard error of the least, as :func:`keep_within_one_se` reads them."""
    n_scales = len(choice.cost_scales)
    best_at = [
        max(min(choice.scores[name][i]["loss"] for name in names), 1e-12)
        for i in range(n_scales)
    ]
    relative = {
        name: np.mean([per_row[name][i] / best_at[i] for i in range(n_scales)], axis=0)
        for name in names
    }
    best = min(names, key=choice.mean_loss)  # the least mean relative loss
    within = []
    for name in names:
        excess = relative[name] - relative[best]
        if weight is not None:
            mean, se = weighted_mean_se(excess, weight)
        else:
            mean = excess.mean()
            se = (
                float(excess.std(ddof=1) / np.sqrt(len(excess)))
                if len(excess) > 1
                else 0.0
            )
        for row in choice.scores[name]:
            row["excess_se"] = se * float(np.mean(best_at))
        if mean <= se:
            within.append(name)
    return within


__all__ = [
    "AUTO_STRATEGIES",
    "CHAIN_SCORE_ROWS",
    "CHOICE_MAX_ROWS",
    "MAX_ROUTES",
    "POSTERIOR_DEPTH",
    "SIMPLEST_FIRST",
    "STRATEGIES",
    "VALIDATION_FOLDS",
    "StrategyChoice",
    "chain_growth",
    "chain_order",
    "choose_strategy",
    "cross_entropy",
    "greedy_order",
    "keep_within_one_se",
    "kept_by_neighbours",
    "restricted",
    "tail_length",
    "validation_folds",
]
