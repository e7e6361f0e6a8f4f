"""Graph-Reduce (Alg. 1): learn node policies leaf to root from a loss table.

This is the one implementation of policy learning: the estimators call it with
their out-of-fold losses, and users can call it with a loss table of their own
(losses of a human or an external model per sensor subset), without any bank.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import has_fit_parameter

from ._integrity import check_int, fail
from ._progress import Progress
from ._threads import on_cluster, single_threaded
from .dag import SensorDAG
from .reductions import CostRegression, FilterTree
from .validation import check_params, check_sample_weight, real_in

STOP = 0  # action index of stop-and-classify at every node


@dataclass
class NodePolicy:
    """The decision function of one DAG state.

    Action 0 is stop-and-classify; action a >= 1 moves to ``children[a - 1]``
    (a ``(unit, child_state)`` pair of the DAG).
    """

    state: int
    children: list[tuple[int, int]]
    learner: Any | None  # None: a node with the stop action only
    n_features: int

    def predict(self, Z: np.ndarray) -> np.ndarray:
        n = len(Z)
        if self.learner is None:
            return np.zeros(n, dtype=np.intp)
        return np.asarray(self.learner.predict(Z.reshape(n, -1)), dtype=np.intp)

    def action_scores(self, Z: np.ndarray) -> tuple[np.ndarray, str] | None:
        """The learner's score of every action, (n, n_actions), and what the
        score measures; None when the learner gives none (a user's own
        learner without ``action_scores``)."""
        n = len(Z)
        if self.learner is None:
            return np.ones((n, 1)), "only action"
        scores = getattr(self.learner, "action_scores", None)
        if scores is None:
            return None
        name = getattr(self.learner, "score_name", "score")
        return np.asarray(scores(Z.reshape(n, -1)), dtype=float), str(name)

    def child_of(self, actions: np.ndarray) -> np.ndarray:
        """Child state per action (-1 for stop)."""
        lookup = np.array([-1] + [c for _, c in self.children], dtype=np.intp)
        return lookup[actions]

    def check_integrity(
        self,
        where: str,
        state: int,
        children: Sequence[tuple[int, int]],
        n_inputs: int,
    ) -> None:
        """Raise ``ValueError`` unless this is the policy of ``state`` with the
        DAG's ``children``, reading ``n_inputs`` inputs (a loaded model)."""
        if self.state != state:
            raise fail(f"{where}.state", f"{self.state}, expected {state}")
        if [tuple(c) for c in self.children] != list(children):
            raise fail(f"{where}.children", "differ from the DAG's")
        n_actions = 1 + len(children)
        if self.learner is None:
            if children:
                raise fail(where, "a node with children has no learned policy")
            return
        if self.n_features != n_inputs:
            raise fail(f"{where}.n_features", f"{self.n_features}, expected {n_inputs}")
        # A user's own learner (pickles only) keeps its internals to itself.
        if isinstance(self.learner, ConstantAction | FilterTree | CostRegression):
            self.learner.check_integrity(f"{where}.learner", n_actions, n_inputs)


@dataclass
class GraphReduceResult:
    """What :func:`graph_reduce` learned, and what it saw with ``record=True``."""

    policies: list[NodePolicy]
    cost_to_go: np.ndarray  # (n_samples, n_states), in loss units
    actions: np.ndarray  # (n_samples, n_states): action each state picks per row
    #: With ``record=True``: per state, the (n_samples, 1 + n_children) action
    #: cost table its policy was fitted on (stop first, then each child).
    tables: list[np.ndarray] | None = None
    #: Over a grown DAG with ``record=True``: per state, the training rows of
    #: its table (the rows that reached it); None: every row at every state.
    rows: list[np.ndarray] | None = None

    def root_cost_to_go(self) -> np.ndarray:
        """Each row's cost-to-go from the root, as an array of its own (a view
        would keep the whole rows x states table alive with whoever keeps it)."""
        return self.cost_to_go[:, 0].copy()


def edge_costs(
    dag: SensorDAG, acquisition_costs: np.ndarray, n_samples: int
) -> Callable[[int, int], np.ndarray]:
    """Per-example cost of the edge state -> child.

    ``acquisition_costs`` is (n_sensors,) for fixed costs or (n_samples,
    n_sensors) for example-dependent costs (eq. 9 of the paper).
    """
    costs = np.asarray(acquisition_costs, dtype=float)

    def cost(state: int, child: int) -> np.ndarray:
        added = dag.added_sensors(state, child)
        if costs.ndim == 1:
            return np.full(n_samples, costs[added].sum())
        return costs[:, added].sum(axis=1)

    return cost


def fit_layers(dag: SensorDAG) -> list[list[int]]:
    """States grouped by height (the longest path down to a leaf), lowest first.

    Every child of a state is in an earlier group, so a group's node problems
    are independent and Graph-Reduce fits them together. Grouping by number of
    sensors would also be a valid order, but a DAG over subset unions has many
    more distinct sizes than heights (spam's 256 states: 32 sizes, 9 heights),
    and each group is a barrier for the threads.
    """
    height = np.zeros(dag.n_states, dtype=int)
    for layer in reversed(dag.layers()):  # children have more sensors
        for k in layer:
            kids = [child for _, child in dag.children[k]]
            height[k] = 1 + height[kids].max() if kids else 0
    return [np.flatnonzero(height == h).tolist() for h in range(height.max() + 1)]


@dataclass
class ConstantAction:
    """A node policy that always takes one action."""

    action: int
    n_actions: int

    score_name = "fixed action (1 = taken)"

    def predict(self, Z: np.ndarray) -> np.ndarray:
        return np.full(len(Z), self.action, dtype=np.intp)

    def action_scores(self, Z: np.ndarray) -> np.ndarray:
        """1 for the fixed action, 0 for the others."""
        out = np.zeros((len(Z), self.n_actions))
        out[:, self.action] = 1.0
        return out

    def check_integrity(self, where: str, n_actions: int, n_inputs: int) -> None:
        """Raise ``ValueError`` unless the action is one of ``n_actions``."""
        check_int(self.action, f"{where}.action", 0, n_actions)
        if self.n_actions != n_actions:
            raise fail(f"{where}.n_actions", f"{self.n_actions}, expected {n_actions}")


def _fit_weighted(learner: Any, Z: np.ndarray, C: np.ndarray, w: np.ndarray) -> Any:
    """``learner.fit`` where row i counts ``w[i]`` (> 0) times: through its
    ``sample_weight`` where its ``fit`` takes one, else emulated by
    multiplying each row's costs by its weight (the same problem for any
    learner whose objective is a sum over rows of terms linear in the costs,
    as cost-sensitive reductions are)."""
    if has_fit_parameter(learner, "sample_weight"):
        return learner.fit(Z, C, sample_weight=w)
    return learner.fit(Z, C * w[:, None])


def fit_node(
    learner: Any,
    Z: np.ndarray,
    C: np.ndarray,
    sample_weight: np.ndarray | None = None,
) -> tuple[Any, np.ndarray]:
    """Fit a node's learner; fall back to the best single action if that is better.

    The fallback makes a node never worse on its training rows than its best
    constant action, so at ``cost_scale=0`` the root's training loss cannot exceed
    that of always acquiring every sensor (approximate learners can otherwise
    lose a little at each node).

    ``sample_weight`` (n_samples,), >= 0: row i's action costs count
    ``sample_weight[i]`` times, in the learner's fit and in the fallback's
    totals; rows of weight 0 are left out of the fit (their actions are
    still predicted). Integer weights give the node of the duplicated rows.
    """
    if sample_weight is not None:
        return _fit_node_weighted(learner, Z, C, np.asarray(sample_weight, float))
    # Node problems are small: OpenMP/BLAS threads only add overhead (and
    # spin-waiting on a busy machine), and nodes run in parallel via n_jobs.
    with single_threaded():
        fitted = clone(learner).fit(Z, C)
        actions = np.asarray(fitted.predict(Z), dtype=np.intp)
    totals = C.sum(axis=0)
    best = int(np.argmin(totals))
    learned = C[np.arange(len(C)), actions].sum()
    if totals[best] < learned - 1e-9 * max(1.0, abs(learned)):
        return ConstantAction(best, C.shape[1]), np.full(len(C), best, dtype=np.intp)
    return fitted, actions


def _fit_node_weighted(
    learner: Any, Z: np.ndarray, C: np.ndarray, w: np.ndarray
) -> tuple[Any, np.ndarray]:
    """:func:`fit_node` with row weights (a node whose rows all weigh 0
    stops: as a state no row reached)."""
    keep = w > 0
    if not keep.any():
        return ConstantAction(STOP, C.shape[1]), np.zeros(len(C), dtype=np.intp)
    with single_threaded():
        fitted = _fit_weighted(clone(learner), Z[keep], C[keep], w[keep])
        actions = np.asarray(fitted.predict(Z), dtype=np.intp)
    totals = w @ C
    best = int(np.argmin(totals))
    learned = float(w @ C[np.arange(len(C)), actions])
    if totals[best] < learned - 1e-9 * max(1.0, abs(learned)):
        return ConstantAction(best, C.shape[1]), np.full(len(C), best, dtype=np.intp)
    return fitted, actions


def _replay_node(
    policy: NodePolicy, Z: np.ndarray, C: np.ndarray, sample_weight: Any = None
) -> tuple[Any, np.ndarray]:
    """A node of :func:`graph_reduce` with ``replay``: the given policy's
    decisions instead of a fit."""
    return policy.learner, policy.predict(Z)


def _action_costs(
    k: int,
    dag: SensorDAG,
    stop_by_state: np.ndarray,
    cost: Callable[[int, int], np.ndarray],
    cost_to_go: np.ndarray,
    cost_scale: float,
) -> np.ndarray:
    """The cost-sensitive problem of state ``k`` (rows x actions): stopping,
    then each child's edge cost plus its cost-to-go (children are done)."""
    kids = dag.children[k]
    C = np.empty((stop_by_state.shape[1], 1 + len(kids)))
    C[:, STOP] = stop_by_state[k]
    for a, (_, child) in enumerate(kids, start=1):
        C[:, a] = cost_scale * cost(k, child) + cost_to_go[child]
    return C


def _fit_layer(
    parallel: Parallel | None,
    to_fit: list[tuple[int, np.ndarray]],
    state_inputs: Callable[[int], np.ndarray],
    node_fit: Callable[..., tuple[Any, np.ndarray]],
    learner: Any,
    replay: Sequence[NodePolicy] | None,
    weights_of: Callable[[int], np.ndarray] | None = None,
) -> list[tuple[Any, np.ndarray, int]]:
    """The nodes of one layer fitted (or replayed) in ``parallel`` (None:
    one after another in this thread, in the order a sequential joblib
    run takes them, without its per-task wrapper: a sweep fits tens of
    thousands of small nodes): per problem, the model, its actions and
    the width of its inputs (``weights_of(k)``: the weights of state k's
    rows, None: unweighted)."""
    widths: dict[int, int] = {}

    def task(k: int, C: np.ndarray) -> tuple[Any, ...]:
        Z = state_inputs(k)
        widths[k] = Z.shape[1]
        model = learner if replay is None else replay[k]
        if weights_of is None:
            return (model, Z, C)
        return (model, Z, C, weights_of(k))

    if parallel is None:
        fitted = [node_fit(*task(k, C)) for k, C in to_fit]
    else:
        fitted = parallel(delayed(node_fit)(*task(k, C)) for k, C in to_fit)
    return [
        (model, act, widths[k])
        for (k, _), (model, act) in zip(to_fit, fitted, strict=True)
    ]


#: Rows x states below which Graph-Reduce fits its nodes in the calling thread:
#: below it a layer's fits are too short to gain from a second thread. A
#: joblib backend chosen with ``parallel_config`` (a Dask cluster) gets them
#: as its tasks whatever the size (``_threads.on_cluster``).
PARALLEL_POLICY_WORK = 200_000


class DenseWalk:
    """Graph-Reduce's node problems where every training row reaches every
    state (the full DAG, the DAG over Alg. 2's unions, a user's loss table):
    a stop-loss table over all rows and states, each state's cost-to-go a
    row of a dense table.

    A walk gives :func:`graph_reduce` what differs between DAGs: ``dag``,
    ``work`` (row-state pairs, for the threads' threshold), ``layers()``
    (groups of independent states, leaves first), ``problem(k)`` (the action
    cost table of the rows at state k, None for a state without rows),
    ``inputs(k)`` (their policy inputs), ``policies`` (filled as the walk
    goes), ``settle(k, C, act)`` (the state's cost-to-go once its policy's
    actions are known; None: it only stops) and ``result(...)``.
    ``strategies.SparseRollout`` is the walk of a grown
    DAG, whose states each hold some of the rows.
    """

    def __init__(
        self,
        state_inputs: Callable[[int], np.ndarray],
        stop_loss: np.ndarray,
        acquisition_costs: np.ndarray,
        dag: SensorDAG,
        cost_scale: float,
    ) -> None:
        stop_loss = np.asarray(stop_loss, dtype=float)
        n, K = stop_loss.shape
        if K != dag.n_states:
            raise ValueError(
                f"The loss table has {K} state columns; the DAG has {dag.n_states}."
            )
        self.dag, self.n, self.work = dag, n, n * K
        self.inputs = state_inputs
        self.cost_scale = cost_scale
        self.edge_cost = edge_costs(dag, acquisition_costs, n)
        # State-major tables (a state's column is one contiguous row here): the
        # node tables read and write whole states, and on large DAGs a column of
        # an (n, K) table is n scattered reads.
        self.stop_by_state = np.ascontiguousarray(stop_loss.T)
        self.cost_to_go = np.zeros((K, n))
        self.actions = np.zeros((K, n), dtype=np.intp)
        self.policies: list[NodePolicy | None] = [None] * K

    def layers(self) -> list[list[int]]:
        return fit_layers(self.dag)

    def prepare(self, layer: Sequence[int]) -> None:
        """Nothing: every state's table is at hand."""

    def problem(self, k: int) -> np.ndarray:
        return _action_costs(
            k, self.dag, self.stop_by_state, self.edge_cost, self.cost_to_go,
            self.cost_scale,
        )  # fmt: skip

    def settle(self, k: int, C: np.ndarray | None, act: np.ndarray | None) -> None:
        if act is None:
            self.cost_to_go[k] = C[:, STOP]
            return
        self.actions[k] = act
        self.cost_to_go[k] = C[np.arange(self.n), act]

    def result(
        self, policies: list[NodePolicy], tables: list[np.ndarray] | None
    ) -> GraphReduceResult:
        # (n_samples, n_states) views of the state-major tables.
        return GraphReduceResult(policies, self.cost_to_go.T, self.actions.T, tables)


def graph_reduce(
    state_inputs: Callable[..., np.ndarray],
    stop_loss: Any,
    acquisition_costs: np.ndarray,
    dag: Any,
    learner: Any,
    *,
    cost_scale: float = 1.0,
    n_jobs: int | None = None,
    progress: Progress | None = None,
    record: bool = False,
    replay: Sequence[NodePolicy] | None = None,
    sample_weight: Any = None,
) -> GraphReduceResult:
    """Learn one cost-sensitive policy per DAG state, from the leaves to the root.

    One implementation for every DAG: over a :class:`SensorDAG` every
    training row reaches every state (the full DAG, Alg. 2's unions, a loss
    table); over a grown DAG (a
    ``strategies.SparseGrowth``, whatever the strategy
    that grew it) each state's policy learns from the rows that reached it,
    and a row a child never saw is rolled out under the child's fitted
    policies. Both walk the states in groups of independent states (threads),
    record and replay alike.

    Parameters
    ----------
    state_inputs : callable
        ``state_inputs(k)`` gives the policy inputs (n_samples, d_k) at state k:
        only what is known there (the features of its sensors). Over a
        growth, ``state_inputs(k, rows, proba)``: the inputs of ``rows`` given
        their probabilities at state k.
    stop_loss : ndarray (n_samples, n_states), or callable over a growth
        Loss of stopping and classifying at each state (e.g. out-of-fold 0/1);
        over a growth ``stop_loss(rows, proba)``, each row's loss of stopping
        with those probabilities.
    acquisition_costs : ndarray (n_sensors,) or (n_samples, n_sensors)
        Cost of each real sensor, fixed or per example.
    dag : SensorDAG or SparseGrowth
    learner : cost-sensitive learner
        Cloned per node; ``fit(Z, C)`` / ``predict(Z)``.
    cost_scale : float
        Multiplies acquisition costs relative to the stop loss.
    n_jobs : int or None
        Threads for the independent states of one group (``fit_layers()``;
        over a growth, the states of one size), from
        ``PARALLEL_POLICY_WORK`` rows x states on; under a joblib backend
        chosen with ``joblib.parallel_config`` (Dask) each node fit is one of
        its tasks whatever the size.
    progress : callable(stage, done, total), optional
        Called with stage "policies" after each group of states.
    record : bool, default=False
        Keep each state's action cost table in the result's ``tables``.
    replay : list of NodePolicy, optional
        Fitted policies (e.g. a model's ``policies_``) that decide instead of
        new ones: on their training inputs the walk reproduces their tables.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative, finite weights: row i's action costs count
        ``sample_weight[i]`` times at every node it reaches (its learner's
        ``sample_weight``, see ``fit_node``), as that many copies of the
        row would. None: every row once.

    Returns
    -------
    GraphReduceResult
        Policies per state, each example's cost-to-go at every state (stop loss
        + ``cost_scale`` x acquisition cost), each node's actions, the tables
        (over a growth see ``strategies.SparseRollout.result``).

    Examples
    --------
    ``a`` (cost 0.1) tells the class when positive, ``b`` (cost 0.3) always:
    stopping costs 0.5 at ``{}``, 1 at ``{a}`` when ``a < 0``, 0 once ``b`` is held.

    >>> import numpy as np
    >>> from budgetdag_core import SensorDAG
    >>> from budgetdag_core.reductions import FilterTree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2))
    >>> dag = SensorDAG(["a", "b"])
    >>> a_wrong = (X[:, 0] < 0).astype(float)
    >>> stop_loss = np.column_stack([np.full(400, 0.5), a_wrong, np.zeros((400, 2))])
    >>> result = graph_reduce(lambda k: X[:, dag.sensors_in(k)], stop_loss,
    ...                       np.array([0.1, 0.3]), dag, FilterTree(degree=1, C=100.0))
    >>> round(float(result.cost_to_go[:, 0].mean()), 2)  # 0.1 + 0.3 P(a < 0)
    0.26
    """
    check_params(
        "graph_reduce",
        {"cost_scale": [real_in(0.0)], "n_jobs": [Integral, None]},
        cost_scale=cost_scale,
        n_jobs=n_jobs,
    )
    if isinstance(dag, SensorDAG):
        walk: Any = DenseWalk(
            state_inputs, stop_loss, acquisition_costs, dag, cost_scale
        )
        n_rows = walk.n
    else:  # a growth: the states hold the rows that reached them
        walk = dag.walk(state_inputs, stop_loss, acquisition_costs, cost_scale)
        n_rows = len(dag.X)
    w = check_sample_weight(sample_weight, n_rows)
    weights_of = None
    if w is not None:
        flow = getattr(walk, "growth", None)
        weights_of = (lambda k: w) if flow is None else (lambda k: w[flow.flow[k]])
    return reduce_walk(walk, learner, n_jobs, progress, record, replay, weights_of)


def reduce_walk(
    walk: Any,
    learner: Any,
    n_jobs: int | None = None,
    progress: Progress | None = None,
    record: bool = False,
    replay: Sequence[NodePolicy] | None = None,
    weights_of: Callable[[int], np.ndarray] | None = None,
) -> GraphReduceResult:
    """Alg. 1 over a walk (see :class:`DenseWalk`): the states' policies
    group by group, leaves first, each group's node fits in threads
    (``weights_of(k)``: the row weights of state k's problem)."""
    dag = walk.dag
    K = dag.n_states
    policies = walk.policies  # filled as the walk goes: rollouts read them
    tables: list[np.ndarray] | None = [np.empty(0)] * K if record else None
    node_fit = fit_node if replay is None else _replay_node
    local = walk.work < PARALLEL_POLICY_WORK and not on_cluster()
    if local:
        n_jobs = 1  # on a cluster the user asked for: its tasks, whatever the size
    done = 0
    # Threads: the node solvers are compiled and release the GIL, and threads
    # need no copies of the node inputs (a backend set with
    # joblib.parallel_config still wins). One pool serves every layer, and
    # pool threads nest in this thread's limits. Only the fits run in the
    # pool: a walk's tables and caches are filled in this thread, in order.
    with single_threaded(), Parallel(n_jobs=n_jobs, prefer="threads") as parallel:
        for layer in walk.layers():
            walk.prepare(layer)
            problems = [(k, walk.problem(k)) for k in layer]
            if tables is not None:
                for k, C in problems:
                    tables[k] = np.empty((0, 1)) if C is None else C
            trivial = [(k, C) for k, C in problems if C is None or C.shape[1] == 1]
            to_fit = [(k, C) for k, C in problems if C is not None and C.shape[1] > 1]
            fitted = _fit_layer(
                None if local else parallel, to_fit, walk.inputs, node_fit,
                learner, replay, weights_of,
            )  # fmt: skip
            for k, C in trivial:
                policies[k] = NodePolicy(k, dag.children[k], None, 0)
                walk.settle(k, C, None)
            for (k, C), (model, act, width) in zip(to_fit, fitted, strict=True):
                policies[k] = NodePolicy(k, dag.children[k], model, width)
                walk.settle(k, C, act)
            done += len(layer)
            if progress is not None:
                progress("policies", done, K)
    return walk.result(policies, tables)  # type: ignore[arg-type]


@dataclass
class Routing:
    """Where each example goes under a set of policies."""

    stop_state: np.ndarray  # (n,) state index where each example stops
    path: np.ndarray  # (n, depth+1) state indices visited, -1 padded
    # (n, n_classes) class probabilities at the stop state where the routing
    # already computed them (policy inputs), NaN rows elsewhere; None if unknown.
    stop_proba: np.ndarray | None = None


def route(
    policies: Sequence[NodePolicy],
    state_inputs: Callable[[int, np.ndarray], np.ndarray],
    n_samples: int,
    max_depth: int,
) -> Routing:
    """Send all examples through the DAG at once, node by node.

    States are in topological order, so visiting the lowest state that holds
    rows next visits each node after all of its parents, with every row that
    reaches it (in row order); ``state_inputs(k, rows)`` gives the inputs of
    rows at node k. Only the states rows reach are visited: a sparse DAG of
    hundreds of states is routed in a few dozen steps.
    """
    current = np.zeros(n_samples, dtype=np.intp)
    stop_state = np.full(n_samples, -1, dtype=np.intp)
    path = np.full((n_samples, max_depth + 1), -1, dtype=np.intp)
    path[:, 0] = 0
    depth = np.zeros(n_samples, dtype=np.intp)
    active = np.arange(n_samples)  # rows still moving, in row order
    while active.size:
        at = current[active]
        k = int(at.min())
        rows = active[at == k]
        policy = policies[k]
        act = policy.predict(state_inputs(k, rows))
        stops = act == STOP
        stop_state[rows[stops]] = k
        movers = rows[~stops]
        current[movers] = policy.child_of(act[~stops])
        if (current[movers] <= k).any():
            raise ValueError(f"The policy at state {k} moves rows to an earlier state.")
        depth[movers] += 1
        path[movers, depth[movers]] = current[movers]
        if stops.any():
            active = active[stop_state[active] < 0]
    return Routing(stop_state, path)


def learn_policies_from_losses(
    Z: np.ndarray,
    losses: np.ndarray,
    dag: SensorDAG,
    acquisition_costs: np.ndarray,
    sensor_columns: Sequence[np.ndarray],
    learner: Any,
    *,
    cost_scale: float = 1.0,
    n_jobs: int | None = None,
) -> GraphReduceResult:
    """Learn DAG policies from a user-given loss table only (section 2.4).

    ``Z`` holds the sensor measurements (n_samples, n_columns);
    ``sensor_columns[m]`` are the columns of sensor m; ``losses[i, k]`` is the
    loss of stopping example i at state k (no labels or classifiers needed).

    Examples
    --------
    >>> import numpy as np
    >>> from budgetdag_core import SensorDAG
    >>> from budgetdag_core.reductions import FilterTree
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(400, 2))  # column 0: sensor a, column 1: sensor b
    >>> a_wrong = (Z[:, 0] < 0).astype(float)
    >>> losses = np.column_stack([np.full(400, 0.5), a_wrong, np.zeros((400, 2))])
    >>> result = learn_policies_from_losses(
    ...     Z, losses, SensorDAG(["a", "b"]), np.array([0.1, 0.3]),
    ...     [np.array([0]), np.array([1])], FilterTree(degree=1, C=100.0))
    >>> round(float(result.cost_to_go[:, 0].mean()), 2)
    0.26
    """
    Z = np.asarray(Z, dtype=float)
    state_cols = dag.state_columns(sensor_columns)
    return graph_reduce(
        lambda k: Z[:, state_cols[k]],
        losses,
        acquisition_costs,
        dag,
        learner,
        cost_scale=cost_scale,
        n_jobs=n_jobs,
    )
