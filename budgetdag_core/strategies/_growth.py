"""Many sensors, one at a time: a sparse DAG of one-sensor additions grown from
the data, and Graph-Reduce on it.

States are sensor subsets, as in the paper, but only those that training rows
reach when they acquire one sensor at a time: the full DAG's 2^M states are out
of reach beyond a dozen sensors, and Alg. 2's unions of a few subsets leave a
policy little to adapt. Growing (:func:`grow_sparse_dag`, breadth first from
the empty set):

- at a state, a sample of its rows scores every unacquired sensor by the
  out-of-fold drop of the expected loss per unit cost that the any-mask bank
  gives with the row's own value of that sensor;
- its children add ONE sensor each: the best sensors on average, the
  favourites of at least ``min_rows`` rows, and a *routing* sensor: one whose
  value tells which sensor is best next (a row's neighbours on the state's
  values plus that sensor agree on their best next sensor better than the
  rows do on a fixed one: CUBE-NM's context, which alone says nothing about
  the class and is invisible to any one-step score);
- each row moves on to the child it gains most from (a seeded fraction also to
  its second best, and every row to a routing child); children reached by the
  same set merge (a DAG, not a tree); a state with fewer than ``min_rows``
  rows is a leaf; growth stops at ``max_states``;
- of the states of one size, only the ``max_width`` that most rows reached
  grow children (default ``max_states // n_sensors``, at least 8): the state
  budget then reaches deep (many sensors per row) instead of spreading wide
  over the first few sensors. On the validation rows of bench_afa's digits
  and CUBE-NM splits this lowered the error at 10 and 50 % of the
  all-sensor cost and left 25 % as it was.

Graph-Reduce (:func:`~budgetdag_core.graph_reduce.graph_reduce`, the one
walk of every DAG) then runs leaf to root exactly as on a full DAG, each
state's policy fitted on the rows that reached it (:class:`SparseRollout`
is its walk), with the action costs of the paper: the stop loss, or the
sensor's cost plus the child's cost-to-go. A row a child never saw is
rolled out under the child's (already fitted) policies, so its cost-to-go is
the one the learned policies give it, as in Alg. 1.
"""

from __future__ import annotations

import copy
import functools
import heapq
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._integrity import check_int, fail
from .._threads import task_map
from ..dag import SensorDAG, bits_of, mask_of
from ..graph_reduce import STOP, GraphReduceResult, NodePolicy

#: Most states a sparse DAG may hold (a loaded model is refused beyond it).
MAX_SPARSE_STATES = 20_000
#: The least cost, as a share of the largest, that a sensor's gain is
#: divided by when the strategies rank sensors by gain per unit cost
#: (:func:`ranking_costs`): a free sensor (cost 0) would rank at +inf, or
#: NaN where it gains nothing (NaN gains once left the grown DAG adding a
#: state to itself, round after round, without end).
MIN_RANKING_COST = 1e-12


def ranking_costs(costs: np.ndarray) -> np.ndarray:
    """The costs the strategies divide gains by: ``costs`` as given where
    every one is at least ``MIN_RANKING_COST`` times the largest (and the
    largest at least ``MIN_RANKING_COST``); else shares of the largest,
    floored at ``MIN_RANKING_COST``, so a free sensor that helps comes first
    and ratios stay finite; costs all zero rank as equal ones.

    Examples
    --------
    >>> ranking_costs(np.array([2.0, 0.5])).tolist()
    [2.0, 0.5]
    >>> ranking_costs(np.array([0.0, 4.0])).tolist()
    [1e-12, 1.0]
    >>> ranking_costs(np.zeros(2)).tolist()
    [1.0, 1.0]
    >>> ranking_costs(np.array([1e-300, 1e-300])).tolist()
    [1.0, 1.0]
    """
    costs = np.asarray(costs, dtype=float)
    top = float(costs.max(initial=0.0))
    if top <= 0.0:
        return np.ones_like(costs)
    if top >= MIN_RANKING_COST and costs.min() >= MIN_RANKING_COST * top:
        return costs  # ordinary costs: the ranking as it always was
    return np.maximum(costs / top, MIN_RANKING_COST)


class SparseSensorDAG(SensorDAG):
    """A sensor DAG whose states and children are given: each child adds one
    sensor (the unit of sensor m is m itself).

    Parameters
    ----------
    sensor_names : sequence of str
    states : sequence of int
        Sensor bitmasks, the empty set first, in order of size then value.
    children : sequence of sequence of (sensor, child_state)

    Examples
    --------
    >>> dag = SparseSensorDAG(["a", "b", "c"], [0, 0b001, 0b101],
    ...                       [[(0, 1)], [(2, 2)], []])
    >>> dag.n_states, dag.state_names(2), dag.added_sensors(1, 2)
    (3, ('a', 'c'), [2])
    """

    def __init__(
        self,
        sensor_names: Sequence[str],
        states: Sequence[int],
        children: Sequence[Sequence[tuple[int, int]]],
    ) -> None:
        self.sensor_names = tuple(sensor_names)
        self.units = [(i,) for i in range(len(self.sensor_names))]
        self.unit_masks = [1 << i for i in range(len(self.sensor_names))]
        self.states = [int(s) for s in states]
        self.index = {m: k for k, m in enumerate(self.states)}
        self.children = [[(int(u), int(c)) for u, c in kids] for kids in children]

    def __repr__(self) -> str:
        return (
            f"SparseSensorDAG({len(self.sensor_names)} sensors, {self.n_states} states)"
        )

    def check_integrity(self, where: str, sensor_names: Sequence[str]) -> None:
        """Raise ``ValueError`` unless states and children form a sparse DAG over
        ``sensor_names``: distinct sets in size order from the empty one, every
        edge adding one sensor, every state reachable."""
        names = list(sensor_names)
        if list(self.sensor_names) != names:
            raise fail(f"{where}.sensor_names", "differ from the sensor spec's names")
        M = len(names)
        states, children = self.states, self.children
        if not isinstance(states, list) or not 1 <= len(states) <= MAX_SPARSE_STATES:
            raise fail(f"{where}.states", f"expected 1 to {MAX_SPARSE_STATES} states")
        if not isinstance(children, list) or len(children) != len(states):
            raise fail(f"{where}.children", "expected one list per state")
        for k, mask in enumerate(states):
            if not isinstance(mask, int) or not 0 <= mask < (1 << M):
                raise fail(f"{where}.states[{k}]", "not a set of the sensors")
        if states[0] != 0:
            raise fail(f"{where}.states[0]", "must be the empty set")
        keys = [(m.bit_count(), m) for m in states]
        if any(a >= b for a, b in zip(keys, keys[1:], strict=False)):
            raise fail(f"{where}.states", "not distinct and in order of size")
        reached = np.zeros(len(states), dtype=bool)
        reached[0] = True
        for k, kids in enumerate(children):
            if not isinstance(kids, list) or len(kids) > M:
                raise fail(f"{where}.children[{k}]", f"expected at most {M} edges")
            if not all(isinstance(e, tuple) and len(e) == 2 for e in kids):
                raise fail(f"{where}.children[{k}]", "expected (sensor, state) pairs")
            if len({unit for unit, _ in kids}) != len(kids):
                raise fail(f"{where}.children[{k}]", "a sensor is added twice")
            for unit, child in kids:
                check_int(unit, f"{where}.children[{k}]", 0, M)
                check_int(child, f"{where}.children[{k}]", 0, len(states))
                if states[k] >> unit & 1 or states[child] != states[k] | 1 << unit:
                    raise fail(f"{where}.children[{k}]", "an edge must add its sensor")
                reached[child] = True
        if not reached.all():
            raise fail(f"{where}.states", "a state no edge reaches")
        if self.index != {m: k for k, m in enumerate(states)}:
            raise fail(where, "its state index is inconsistent")
        if list(self.units) != [(i,) for i in range(M)] or list(
            getattr(self, "unit_masks", [])
        ) != [1 << i for i in range(M)]:
            raise fail(f"{where}.units", "expected one unit per sensor")


# --------------------------------------------------------------------- tables
@functools.lru_cache(maxsize=4096)
def state_mask(state: int, n_sensors: int) -> np.ndarray:
    """The sensor subset (1, n_sensors) of bool of the state of bitmask
    ``state``: what a walk asks the bank at (read-only, kept: a sweep asks
    at the same states thousands of times).

    Examples
    --------
    >>> state_mask(0b101, 4).tolist()
    [[True, False, True, False]]
    """
    mask = np.zeros((1, n_sensors), dtype=bool)
    mask[0, bits_of(state)] = True
    mask.flags.writeable = False
    return mask


class RowTable:
    """Values (e.g. probabilities) of some rows at one state, by row number.

    ``rows`` (sorted) and ``values`` hold them. Inside, rows are kept in the
    order they were added (in buffers that double as they fill: a walk adds
    a few rows at a time, thousands of times) and ``at[row]`` is a row's
    place there, -1 where absent, with a last -1 that every larger row
    number clips to: looking rows up is one gather, not a search, and
    adding rows moves no others. Adding holds the table's lock (a sweep's
    points may share it from threads); a reader sees a row once its value
    is written. ``derived``: tables of values computed from these, by row,
    under a key that names the computation (:meth:`SparseGrowth.inputs_at`;
    not saved, dropped when ``values`` is set).
    """

    def __init__(self, width: int, capacity: int = 0) -> None:
        self._fill(np.zeros(0, dtype=np.intp), np.zeros((0, width)))
        if capacity > 0:  # buffers for that many rows before any doubling
            self._rows = np.empty(capacity, dtype=np.intp)
            self._values = np.empty((capacity, width))

    @classmethod
    def like(cls, values: np.ndarray) -> RowTable:
        """An empty table for values of the shape (past the rows) and dtype
        of ``values``."""
        table = cls(0)
        table._fill(table._rows, np.zeros((0, *values.shape[1:]), values.dtype))
        return table

    @property
    def rows(self) -> np.ndarray:
        return np.sort(self._rows[: self._n])

    @property
    def values(self) -> np.ndarray:
        return self._values[self.at[self.rows]]

    @values.setter
    def values(self, values: np.ndarray) -> None:
        """New values of the rows (in ``rows`` order); derived tables go."""
        self._fill(self.rows, np.asarray(values))

    def _fill(self, rows: np.ndarray, values: np.ndarray) -> None:
        self._rows, self._values, self._n = rows, values, len(rows)
        top = int(rows.max()) + 1 if len(rows) else 0
        self.at = np.full(top + 1, -1, dtype=np.intp)
        self.at[rows] = np.arange(len(rows))
        self.derived: dict[Any, Any] = {}
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """The bytes this table holds: its buffers, its row index and its
        derived tables."""
        own = self._rows.nbytes + self._values.nbytes + self.at.nbytes
        return own + sum(table.nbytes for table in list(self.derived.values()))

    def trim(self) -> None:
        """Free the buffers' room for rows not added yet (a table no longer
        growing)."""
        with self._lock:
            if len(self._rows) > self._n:
                self._rows = self._rows[: self._n].copy()
                self._values = self._values[: self._n].copy()

    def _places(self, rows: np.ndarray) -> np.ndarray:
        return self.at.take(rows, mode="clip")

    def missing(self, rows: np.ndarray) -> np.ndarray:
        return _absent(rows, self._places(rows))

    def lookup(self, rows: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, bool]:
        """:meth:`get` and :meth:`missing` in one lookup: ``(values,
        rows, False)`` where every one of ``rows`` is known, else ``(None,
        missing, exact)``, ``exact`` where the missing rows are ``rows``
        themselves, in order (none known, ascending, no repeats): a caller
        that then adds them all (:meth:`add`) may use its own values as
        :meth:`get` would give them (a walk asks thousands of times)."""
        places = self._places(rows)
        if not len(places) or places.min() >= 0:
            return self._values[places], rows, False
        out = _absent(rows, places)
        exact = len(out) == len(rows) and bool((out == rows).all())
        return None, out, exact

    def add(self, rows: np.ndarray, values: np.ndarray) -> bool:
        """Add the rows not known yet with their ``values``; True where all
        were new and the table now holds ``values`` as given (same dtype,
        C-contiguous): then :meth:`get` of ``rows`` would give a copy of
        ``values``."""
        rows = np.asarray(rows, dtype=np.intp)
        values = np.asarray(values)
        with self._lock:
            places = self._places(rows)
            if len(places) and places.max() < 0:  # all new
                self._append(rows, values)
                return values.dtype == self._values.dtype and values.flags.c_contiguous
            new = places < 0
            if new.any():
                self._append(rows[new], values[new])
            return False

    def _append(self, rows: np.ndarray, values: np.ndarray) -> None:
        n, end = self._n, self._n + len(rows)
        if end > len(self._rows):  # double the buffers
            size = max(end, 2 * len(self._rows), 16)
            grown = np.empty(size, dtype=np.intp)
            grown[:n] = self._rows[:n]
            more = np.empty((size, *self._values.shape[1:]), self._values.dtype)
            more[:n] = self._values[:n]
            self._rows, self._values = grown, more
        top = int(rows.max()) + 2
        if top > len(self.at):  # room for the new rows and a last -1
            at = np.full(max(top, 2 * len(self.at)), -1, dtype=np.intp)
            at[: len(self.at)] = self.at
            self.at = at
        self._rows[n:end] = rows
        self._values[n:end] = values
        self.at[rows] = np.arange(n, end)
        self._n = end

    def get(self, rows: np.ndarray) -> np.ndarray:
        return self._values[self._places(rows)]

    def __getstate__(self) -> dict[str, Any]:
        # Sorted rows and their values: what a saved model has always held.
        return {"rows": self.rows, "values": self.values}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._fill(np.asarray(state["rows"]), np.asarray(state["values"]))


def _absent(rows: np.ndarray, places: np.ndarray) -> np.ndarray:
    """The rows whose ``places`` are -1, ascending and without repeats."""
    return _ascending_unique(rows[places < 0])


def _ascending_unique(rows: np.ndarray) -> np.ndarray:
    """``np.unique(rows)``; ``rows`` itself where they are ascending without
    repeats already (a walk's rows mostly are: checking is far cheaper)."""
    if len(rows) > 1 and not (rows[1:] > rows[:-1]).all():
        return np.unique(rows)
    return rows


@dataclass
class SparseGrowth:
    """A grown sparse DAG and what growing it learned of the training rows.

    ``flow[k]``: the training rows that reached state k (its policy's rows);
    ``proba[k]``: the out-of-fold (calibrated) probabilities known at state k,
    by row (the flow rows, the rows of its parents, and any rolled out there);
    ``route_states``: the states whose children are the routes of a routing
    sensor's values (the routed DAG's state of that sensor): their policies
    choose by the values, so with ``policy_features="auto"`` they see them
    whatever the state classifier's spread; ``strategy``: the name of the
    strategy that grew it (``strategies.REGISTRY``).
    """

    dag: SparseSensorDAG
    flow: list[np.ndarray]
    proba: list[RowTable]
    bank: Any = field(repr=False)
    X: np.ndarray = field(repr=False)
    route_states: tuple[int, ...] = ()
    strategy: str = "grown"

    def replica(self) -> SparseGrowth:
        """This growth with copies of its probability tables: a replay's
        rollouts fill those, not the bank's."""
        return replace(self, proba=[copy.deepcopy(table) for table in self.proba])

    def walk(
        self,
        state_inputs: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
        stop_loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
        acquisition_costs: np.ndarray,
        cost_scale: float,
    ) -> SparseRollout:
        """Graph-Reduce's walk of this growth (what
        :func:`~budgetdag_core.graph_reduce.graph_reduce` reduces)."""
        return SparseRollout(
            self, state_inputs, stop_loss, acquisition_costs, cost_scale
        )

    @property
    def table_bytes(self) -> int:
        """The bytes of its states' probability tables (their derived
        tables included): what :meth:`forget_probabilities` frees."""
        return sum(table.nbytes for table in self.proba)

    def forget_derived(self) -> None:
        """Empty every state's derived tables (:meth:`inputs_at`,
        :meth:`stop_at`), keeping the probabilities they are computed from
        (their buffers trimmed to the rows they hold)."""
        for table in self.proba:
            table.derived = {}
            table.trim()

    def forget_probabilities(self) -> None:
        """Empty every state's probability table: :meth:`proba_at` asks the
        bank again for the rows it is asked (under the bound temperatures),
        and the growth meanwhile holds its DAG and rows only."""
        # (the buffers' first zero rows: their shape and dtype, no copy)
        self.proba = [RowTable.like(table._values[:0]) for table in self.proba]

    def proba_at(self, k: int, rows: np.ndarray) -> np.ndarray:
        """Out-of-fold probabilities of ``rows`` at state k (asked of the bank
        for rows not known there yet)."""
        table = self.proba[k]
        known, missing, exact = table.lookup(rows)
        if known is not None:
            return known
        mask = state_mask(self.dag.states[k], self.dag.n_sensors)
        proba = self.bank.oof_at(self.X, missing, mask, k)[:, 0]
        if table.add(missing, proba) and exact:
            return proba  # what get(rows) would copy
        return table.get(rows)

    def fill(self, asked: dict[int, np.ndarray]) -> None:
        """Table the probabilities of the rows ``asked`` at each state (rows
        not known there yet), many states to a bank call where the bank
        takes (row, subset) pairs (``oof_pairs``, :func:`pair_blocks`); else
        state by state (:meth:`proba_at`)."""
        lacking = [(k, self.proba[k].missing(rows)) for k, rows in asked.items()]
        lacking = [(k, rows) for k, rows in lacking if len(rows)]
        pairs = getattr(self.bank, "oof_pairs", None)
        if pairs is None or len(lacking) < 2:
            for k, rows in lacking:
                self.proba_at(k, rows)
            return
        M = self.dag.n_sensors

        def ask(states: list[int], rows: np.ndarray, which: np.ndarray) -> np.ndarray:
            member = np.vstack([state_mask(self.dag.states[k], M) for k in states])
            return pairs(self.X, rows, member, which, np.asarray(states, np.intp))

        for k, rows, values in pair_blocks(lacking, ask):
            self.proba[k].add(rows, values)

    def inputs_at(
        self,
        k: int,
        rows: np.ndarray,
        state_inputs: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
        proba: np.ndarray | None = None,
    ) -> np.ndarray:
        """``state_inputs(k, rows, proba)`` at the probabilities of ``rows``
        at state k (``proba``: those, where known).

        Where ``state_inputs`` has a ``cache_key`` (e.g.
        ``estimator.GrowthStateInputs``: a pure function of a row's
        probabilities and the key), each row's inputs are computed once and
        kept beside state k's probabilities under that key: a sweep's points
        and a fit's held-out parts roll the same rows through the same
        states at every cost scale, and the inputs do not depend on it.
        The inputs are computed row by row (the same numbers in any batch),
        so a kept row's are those a new call would give.
        """
        key = getattr(state_inputs, "cache_key", None)
        if key is None or not len(rows):
            if proba is None:
                proba = self.proba_at(k, rows)
            return state_inputs(k, rows, proba)
        return self._kept(k, rows, key, lambda r, p: state_inputs(k, r, p), proba)

    def stop_at(
        self,
        k: int,
        rows: np.ndarray,
        stop_loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
        proba: np.ndarray | None = None,
    ) -> np.ndarray:
        """``stop_loss(rows, proba)``, ``proba`` the probabilities of ``rows``
        at state k (None: asked where needed): kept beside them as
        :meth:`inputs_at` keeps inputs where ``stop_loss`` has a
        ``cache_key`` (a pure function of a row's label and probabilities,
        computed row by row)."""
        key = getattr(stop_loss, "cache_key", None)
        if key is None or not len(rows):
            if proba is None:
                proba = self.proba_at(k, rows)
            return stop_loss(rows, proba)
        return self._kept(k, rows, ("stop", key), stop_loss, proba)

    def _kept(
        self,
        k: int,
        rows: np.ndarray,
        key: Any,
        compute: Callable[[np.ndarray, np.ndarray], np.ndarray],
        proba: np.ndarray | None = None,
    ) -> np.ndarray:
        """``compute(rows, proba of rows)`` from the table kept under ``key``
        beside state k's probabilities, computed for the rows it lacks
        (``rows`` not empty; ``proba``: the probabilities of ``rows`` at
        state k, where known).

        A kept row's probabilities are known (computing its values asked
        for them), so the rows whose probabilities are asked of the bank,
        if any, are those a call of ``proba_at(k, rows)`` would ask: a
        caller may leave ``proba`` to this, and the bank is asked only
        where some row's values are lacking, with the same rows.
        """
        derived = self.proba[k].derived
        table = derived.get(key)
        if table is None:
            missing = _ascending_unique(rows)
            exact = missing is rows or (
                len(missing) == len(rows) and bool((missing == rows).all())
            )
        else:
            known, missing, exact = table.lookup(rows)
            if known is not None:
                return known
        # The rows' own probabilities where they are the rows lacking: the
        # table's, as proba_at would give them.
        values = compute(
            missing, proba if exact and proba is not None else self.proba_at(k, missing)
        )
        if table is None:  # (another thread's table, if it came first)
            table = derived.setdefault(key, RowTable.like(values))
        if table.add(missing, values) and exact:
            return values  # what get(rows) would copy
        return table.get(rows)


#: Most (row, state) pairs of one bank call when many states' outputs are
#: tabled at once (:func:`oof_tables`; bounds memory).
TABLE_PAIRS = 500_000


def oof_tables(
    bank: Any, X: np.ndarray, rows: np.ndarray, subsets: np.ndarray
) -> list[RowTable]:
    """One :class:`RowTable` per sensor subset (bool, n_subsets x n_sensors):
    the bank's out-of-fold outputs of ``rows`` there (the empty set: the
    bank's ``prior_``).

    The non-empty subsets are asked in order, in blocks of about
    ``TABLE_PAIRS`` pairs, each block in one call: the bank then walks each
    row's trees once per block, not once per state (a call per state cost
    a routed DAG more than its whole search for the orders).
    """
    rows = np.asarray(rows, dtype=np.intp)
    subsets = np.asarray(subsets, dtype=bool)
    width = len(bank.prior_)
    tables = [RowTable(width) for _ in range(len(subsets))]
    given = np.flatnonzero(subsets.any(axis=1))
    for k in np.flatnonzero(~subsets.any(axis=1)):
        tables[k].add(rows, np.tile(bank.prior_, (len(rows), 1)))
    step = max(1, TABLE_PAIRS // max(len(rows), 1))
    for start in range(0, len(given), step):
        block = given[start : start + step]
        P = bank.oof_at(X, rows, subsets[block])
        for a, k in enumerate(block):
            tables[k].add(rows, P[:, a])
    return tables


def pair_blocks(
    parts: Sequence[tuple[int, np.ndarray]],
    ask: Callable[[list[int], np.ndarray, np.ndarray], np.ndarray],
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(key, rows, values)`` of each of ``parts`` (``(key, rows)``), asked
    in blocks of about ``TABLE_PAIRS`` (row, key) pairs (a part larger than
    that alone): ``ask(keys, rows, which)`` gives the values of each of a
    block's ``rows`` at its key ``keys[which[i]]`` (the pairs' copies of the
    rows bound the memory, as ``TABLE_PAIRS`` bounds :func:`oof_tables`)."""
    start = 0
    while start < len(parts):
        end, size = start, 0
        while end < len(parts) and (end == start or size < TABLE_PAIRS):
            size += len(parts[end][1])
            end += 1
        block = parts[start:end]
        sizes = [len(rows) for _, rows in block]
        which = np.repeat(np.arange(len(block)), sizes)
        values = ask(
            [key for key, _ in block], np.concatenate([r for _, r in block]), which
        )
        at = 0
        for (key, rows), n in zip(block, sizes, strict=True):
            yield key, rows, values[at : at + n]
            at += n
        start = end


def oof_pair_tables(
    bank: Any, X: np.ndarray, flows: Sequence[np.ndarray], subsets: np.ndarray
) -> list[RowTable]:
    """One :class:`RowTable` per sensor subset (bool, n_subsets x n_sensors):
    the bank's out-of-fold outputs of that subset's own rows ``flows[i]``
    there (the empty set: the bank's ``prior_``, as :func:`oof_tables`), in
    calls of many subsets (``bank.oof_pairs``, :func:`pair_blocks`), else
    one call per subset."""
    subsets = np.asarray(subsets, dtype=bool)
    if not hasattr(bank, "oof_pairs"):
        return [
            oof_tables(bank, X, rows, subsets[i : i + 1])[0]
            for i, rows in enumerate(flows)
        ]
    tables = [RowTable(len(bank.prior_)) for _ in range(len(subsets))]
    for k in np.flatnonzero(~subsets.any(axis=1)):
        rows = np.asarray(flows[k], dtype=np.intp)
        tables[k].add(rows, np.tile(bank.prior_, (len(rows), 1)))
    given = [
        (i, np.asarray(flows[i], dtype=np.intp))
        for i in range(len(subsets))
        if subsets[i].any() and len(flows[i])
    ]

    def ask(keys: list[int], rows: np.ndarray, which: np.ndarray) -> np.ndarray:
        return bank.oof_pairs(X, rows, subsets[keys], which)

    for i, rows, values in pair_blocks(given, ask):
        tables[i].add(rows, values)
    return tables


#: ``row_loss(rows, values)``: the loss of training ``rows`` (the first axis
#: of ``values``) given the bank's out-of-fold outputs ``values`` (rows x ...
#: x width) at some states, one number per row and state.
RowLoss = Callable[[np.ndarray, np.ndarray], np.ndarray]


def expected_loss(rows: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """A classifier bank's expected 0/1 loss at its probabilities (one minus
    the top one): what the growth ranks sensors by without a ``row_loss``."""
    # The classes' running maximum: NumPy's max along a short last axis
    # costs far more per element (a growth calls this thousands of times).
    proba = np.asarray(proba)
    top = proba[..., 0].copy()
    for c in range(1, proba.shape[-1]):
        np.maximum(top, proba[..., c], out=top)
    return 1.0 - top


@dataclass
class GrowthSettings:
    """How :func:`grow_sparse_dag` grows (see the module docstring)."""

    max_states: int = 1000
    min_rows: int | None = None  # None: max(10, n_rows // 60)
    n_best: int = 2
    n_favourites: int = 2
    n_routing: int = 1
    routing_threshold: float = 0.3
    explore: float = 0.1
    beam: int = 2
    score_rows: int = 96
    k_neighbors: int = 15
    n_lookahead: int = 8
    max_width: int | None = 0  # 0: max(8, max_states // n_sensors); None: no cap

    def width(self, n_sensors: int) -> int | None:
        """Most states of one size that grow children (None: no cap)."""
        if self.max_width is None:
            return None
        if self.max_width == 0:
            return max(8, self.max_states // max(n_sensors, 1))
        return int(self.max_width)

    def children_per_state(self, n_sensors: int) -> int:
        """Most children one state grows: its ``n_best`` and ``n_favourites``
        sensors and ``n_routing`` routing sensors, each one it lacks."""
        return min(n_sensors, self.n_best + self.n_favourites + self.n_routing)

    def most_states(self, n_sensors: int) -> tuple[int, int]:
        """The most states a growth over ``n_sensors`` sensors holds of one
        size, and in all, whatever the costs (zero, equal or tiny).

        Of one size: at most :meth:`width` states grow children, each at
        most :meth:`children_per_state` (without a width cap, the total).
        In all: a state grows children only while fewer than ``max_states``
        exist, so the last one may add its children beyond it, never past
        ``MAX_SPARSE_STATES`` (what a loaded model may hold).

        Examples
        --------
        >>> GrowthSettings().most_states(20)
        (250, 1004)
        >>> GrowthSettings(max_states=20_000).most_states(1000)
        (100, 20000)
        """
        per_state = self.children_per_state(n_sensors)
        total = min(self.max_states + max(per_state - 1, 0), MAX_SPARSE_STATES)
        width = self.width(n_sensors)
        per_size = total if width is None else min(total, width * per_state)
        return per_size, total

    def rows_floor(self, n_rows: int) -> int:
        if self.min_rows is not None:
            return int(self.min_rows)
        return max(10, n_rows // 60)


def nearest_rows(Z: np.ndarray, k_neighbors: int) -> np.ndarray | None:
    """Each row's ``k_neighbors`` nearest rows on the columns ``Z`` (itself
    left out), (n, k); None with fewer than 4 rows."""
    n = len(Z)
    k = min(k_neighbors, n - 1)
    if k < 3:
        return None
    sq = (Z * Z).sum(axis=1)
    D = sq[:, None] + sq[None, :] - 2 * Z @ Z.T
    np.fill_diagonal(D, np.inf)
    return np.argpartition(D, k, axis=1)[:, :k]


def neighbour_pick_gain(nb: np.ndarray | None, gains: np.ndarray) -> float:
    """How much better rows pick their next sensor from their neighbours
    (``nb``: :func:`nearest_rows`) than all rows pick one fixed sensor.

    Each row takes the sensor its nearest rows gain most from on average,
    and scores its own gain there (``gains``: rows x sensors, NaN where not
    a candidate); the mean of that minus the best fixed sensor's mean gain.
    Zero in expectation when the neighbours say nothing about which sensor
    helps a row.
    """
    usable = ~np.isnan(gains).all(axis=0)
    if nb is None or not usable.any():
        return -np.inf
    n = len(gains)
    G = gains[:, usable]
    filled = np.where(np.isnan(G), 0.0, G)
    counted = (~np.isnan(G)).astype(float)
    total = filled[nb].sum(axis=1)
    if counted.all():  # the usual case: every neighbour counts, exactly k
        seen = np.full(total.shape, float(nb.shape[1]))
    else:
        seen = counted[nb].sum(axis=1)
    estimate = np.where(seen > 0, total / np.maximum(seen, 1), -np.inf)
    pick = estimate.argmax(axis=1)
    own = filled[np.arange(n), pick]
    fixed = np.where(counted.sum(axis=0) > 0, filled.sum(axis=0), -np.inf)
    fixed = fixed / np.maximum(counted.sum(axis=0), 1)
    return float(own.mean() - fixed.max())


def routing_values(
    bank: Any,
    X: np.ndarray,
    sub: np.ndarray,
    held: np.ndarray,
    sensor_matrix: np.ndarray,
    costs: np.ndarray,
    loss_after: np.ndarray,
    gains: np.ndarray,
    settings: GrowthSettings,
    *,
    row_loss: RowLoss | None = None,
) -> np.ndarray:
    """Per candidate sensor j, what knowing x_j is worth for choosing the next
    sensor (per unit of j's cost): :func:`neighbour_pick_gain` on the state's
    values plus x_j, of the one-step ``gains`` at this state and of the gains
    at the state plus j of the ``n_lookahead`` best sensors here (a context
    whose targets help only once it is known shows there only).

    ``loss_after`` (rows x sensors): each row's expected loss at the state
    plus each candidate (NaN elsewhere); ``row_loss`` as in
    :func:`grow_sparse_dag`."""
    M = len(held)
    cand = np.flatnonzero(~held)
    out = np.full(M, -np.inf)
    Xs = X[sub]
    Z = (Xs - Xs.mean(axis=0)) / (Xs.std(axis=0) + 1e-12)
    state_cols = sensor_matrix[held].any(axis=0)
    mean_gain = np.where(np.isnan(gains), -np.inf, gains).mean(axis=0)
    ahead = cand[np.argsort(-mean_gain[cand], kind="stable")][: settings.n_lookahead]
    pairs = [(j, t) for j in cand for t in ahead if t != j]
    two_step = None
    if pairs:
        masks = np.repeat(held[None], len(pairs), axis=0)
        first, then = np.array(pairs).T
        masks[np.arange(len(pairs)), first] = True
        masks[np.arange(len(pairs)), then] = True
        two_step = (row_loss or expected_loss)(sub, bank.oof_at(X, sub, masks))
    # The same neighbours score both the one-step and the later gains.
    nbs = [
        nearest_rows(Z[:, state_cols | sensor_matrix[j]], settings.k_neighbors)
        for j in cand
    ]
    later = None
    if two_step is not None:
        # later[i, :, c]: the gain of ahead[c] after cand[i] (NaN where equal),
        # columns in sensor order, as `gains` has them.
        ahead = np.sort(ahead)
        column = np.full((len(cand), len(ahead)), -1)
        index = {(j, t): p for p, (j, t) in enumerate(pairs)}
        for i, j in enumerate(cand):
            for c, t in enumerate(ahead):
                column[i, c] = index.get((j, t), -1)
        diff = loss_after[:, cand][:, :, None] - two_step[:, np.maximum(column, 0)]
        later = np.ascontiguousarray(np.moveaxis(diff / costs[ahead], 1, 0))
        later[np.broadcast_to((column < 0)[:, None, :], later.shape)] = np.nan
    if all(nb is not None for nb in nbs) and np.isfinite(gains[:, cand]).all():
        nb_all = np.stack(nbs)
        best = pick_gains(nb_all, gains[:, cand], cand[:, None] != cand[None, :])
        if later is not None:
            best = np.maximum(
                best, pick_gains(nb_all, later, cand[:, None] != ahead[None, :])
            )
        out[cand] = best / costs[cand]
        return out
    for i, j in enumerate(cand):  # rows too few for neighbours, or gaps
        one = gains.copy()
        one[:, j] = np.nan
        best = neighbour_pick_gain(nbs[i], one)
        if later is not None:
            full = np.full((len(sub), M), np.nan)
            full[:, ahead] = later[i]
            best = max(best, neighbour_pick_gain(nbs[i], full))
        out[j] = best / costs[j]
    return out


def pick_gains(nb: np.ndarray, gains: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """:func:`neighbour_pick_gain` for many candidates at once, without gaps.

    ``nb`` (J, n, k): each candidate's neighbours (:func:`nearest_rows`);
    ``gains`` (n, m), or (J, n, m) one table per candidate, finite where
    ``allowed`` (J, m) (the columns each candidate's rows may pick); returns
    (J,), ``-inf`` for a candidate allowed none.
    """
    J, n, k = nb.shape
    if gains.ndim == 2:
        flat, index = gains, nb
    else:  # candidate j's rows are rows j * n ... of the stacked tables
        flat = gains.reshape(J * n, -1)
        index = nb + (np.arange(J) * n)[:, None, None]
    # Neighbour by neighbour: the sums add in the neighbours' order, as
    # neighbour_pick_gain's do, without a (J, n, k, m) array.
    total = np.take(flat, index[:, :, 0], axis=0)
    for h in range(1, k):
        total += np.take(flat, index[:, :, h], axis=0)
    estimate = np.where(allowed[:, None, :], total / k, -np.inf)
    pick = estimate.argmax(axis=2)
    if gains.ndim == 2:
        own = gains[np.arange(n), pick]
    else:
        own = np.take_along_axis(gains, pick[:, :, None], axis=2)[..., 0]
    # Each mean sums one contiguous run of rows (a column of the gains
    # neighbour_pick_gain selects is one), so the sums match its own.
    own = np.ascontiguousarray(own)
    means = np.ascontiguousarray(np.swapaxes(gains, -1, -2)).sum(axis=-1) / n
    fixed = np.where(allowed, means, -np.inf).max(axis=1)
    return np.where(allowed.any(axis=1), own.mean(axis=1) - fixed, -np.inf)


def growth_rows(n_rows: int, rows: np.ndarray | None) -> np.ndarray:
    """The training rows a growth looks at: ``rows`` as row numbers, or all
    ``n_rows`` of them."""
    return np.arange(n_rows) if rows is None else np.asarray(rows, dtype=np.intp)


def grow_sparse_dag(
    bank: Any,
    X: np.ndarray,
    sensor_names: Sequence[str],
    sensor_columns: Sequence[np.ndarray],
    costs: np.ndarray,
    settings: GrowthSettings | None = None,
    *,
    random_state: int | None = 0,
    row_loss: RowLoss | None = None,
    progress: Callable[[int, int], None] | None = None,
    rows: np.ndarray | None = None,
) -> SparseGrowth:
    """Grow the sparse DAG of one-sensor additions from the training rows ``X``.

    ``bank`` gives out-of-fold probabilities of any (row, sensor set):
    ``bank.oof_at(X, rows, sensor_masks)`` (rows x masks x classes), and
    ``bank.prior_`` at the empty set. The states' probabilities are its raw
    (uncalibrated) ones here: the growth only ranks gains. ``row_loss``
    (:data:`RowLoss`) scores them; default :func:`expected_loss` (a
    regressor's bank gives predictions, scored by their out-of-fold error).
    ``progress(states, max_states)`` is told the states grown after each
    layer. ``rows`` (sorted): the rows it is grown on, default every row.
    """
    s = settings or GrowthSettings()
    rows = growth_rows(len(X), rows)
    n, M = len(rows), len(sensor_names)
    costs = ranking_costs(costs)
    rng = np.random.default_rng(random_state)
    floor = s.rows_floor(n)
    S = np.zeros((M, X.shape[1]), dtype=bool)
    for m, cols in enumerate(sensor_columns):
        S[m, cols] = True
    masks: list[int] = [0]
    index = {0: 0}
    kids: list[list[tuple[int, int]]] = [[]]
    flow: list[np.ndarray] = [rows]
    n_classes = len(bank.prior_)  # the width of the bank's outputs
    loss = row_loss or expected_loss
    tables = [RowTable(n_classes)]
    tables[0].add(rows, np.tile(bank.prior_, (n, 1)))

    def state_of(mask: int) -> int:
        k = index.get(mask)
        if k is None:
            k = index[mask] = len(masks)
            masks.append(mask)
            kids.append([])
            flow.append(np.zeros(0, dtype=np.intp))
            tables.append(RowTable(n_classes))
        return k

    def bool_mask(mask: int) -> np.ndarray:
        out = np.zeros(M, dtype=bool)
        out[bits_of(mask)] = True
        return out

    frontier = [0]
    width = s.width(M)
    per_state = s.children_per_state(M)
    # The rounds' scoring tasks share the bank and the data: a cluster
    # receives them once for the growth (task_map), not with every task.
    shared = (bank, X, S, costs, s, floor, loss)
    with task_map(_score_state, shared, getattr(bank, "n_jobs", None)) as run:
        # Each round's states hold one sensor more than the last's (every
        # child adds one its parent lacks): at most M + 1 rounds.
        for _size in range(M + 1):
            if not frontier:
                break
            if width is not None and len(frontier) > width:
                # The states most rows reached grow; the others are leaves, so
                # that the state budget reaches deep instead of wide.
                by_rows = sorted(frontier, key=lambda k: (-len(flow[k]), masks[k]))
                frontier = sorted(by_rows[:width])
            proposals = _grow_round(
                frontier, run, flow, masks, kids, tables, state_of, M, per_state, s,
                floor, rng, loss,
            )  # fmt: skip
            reached = beam_states(proposals, s.beam)
            for child, rows in reached.items():
                flow[child] = rows
            frontier = sorted(reached)
            if progress is not None:
                progress(min(len(masks), s.max_states), s.max_states)
    # A state no row reached has no policy to learn: a leaf. States only it led
    # to go.
    for k in range(len(masks)):
        if not len(flow[k]):
            kids[k] = []
    alive = np.zeros(len(masks), dtype=bool)
    alive[0] = True
    for k in sorted(range(len(masks)), key=lambda k: masks[k].bit_count()):
        if alive[k]:
            for _, child in kids[k]:
                alive[child] = True
    # Canonical order: by size, then bitmask (a topological order).
    order = sorted(
        np.flatnonzero(alive).tolist(),
        key=lambda k: (masks[k].bit_count(), masks[k]),
    )
    new = np.full(len(masks), -1, dtype=np.intp)
    new[order] = np.arange(len(order))
    dag = SparseSensorDAG(
        sensor_names,
        [masks[k] for k in order],
        [sorted((u, int(new[c])) for u, c in kids[k]) for k in order],
    )
    return SparseGrowth(
        dag, [flow[k] for k in order], [tables[k] for k in order], bank, X
    )


def _grow_round(
    frontier, run, flow, masks, kids, tables, state_of, M, per_state, s, floor,
    rng, loss,
):  # fmt: skip
    """One round of :func:`grow_sparse_dag`: the children of the
    ``frontier``'s states and their rows' proposals. The states that surely
    grow before the state budget ends (each adds at most ``per_state``
    states) are scored together, by ``run`` (tasks on a cluster, else in
    order here: :func:`~budgetdag_core._threads.task_map`), then take
    their children in frontier order, as one state after another would."""
    proposals: list[Proposal] = []
    # A state that holds every sensor or too few rows never grows; once the
    # state budget stops one state, it stops every later one (it only
    # fills), so the states that grow are a prefix of ``pending``.
    pending = [
        k for k in frontier if masks[k].bit_count() < M and len(flow[k]) >= floor
    ]
    while pending:
        n_states = len(masks)
        sure = 0
        while (
            sure < len(pending)
            and n_states + sure * per_state < s.max_states
            and n_states + (sure + 1) * per_state <= MAX_SPARSE_STATES
        ):
            sure += 1
        if not sure:
            break  # no room left: the rest of the round are leaves
        batch, pending = pending[:sure], pending[sure:]
        # The random draws in the order of a state-by-state growth: a
        # state's score rows, then its exploring rows.
        draws = [_draws(flow[k], s, rng) for k in batch]
        calls = []
        for k, (sub, _) in zip(batch, draws, strict=True):
            held = np.zeros(M, dtype=bool)
            held[bits_of(masks[k])] = True
            rows = flow[k]
            base_sub = loss(sub, tables[k].get(sub))
            calls.append((rows, sub, held, base_sub, loss(rows, tables[k].get(rows))))
        for k, (_, explore), scored in zip(batch, draws, run(calls), strict=True):
            _expand(
                k, flow[k], scored, explore, masks, kids, tables, state_of, proposals
            )
    return proposals


def _draws(
    rows: np.ndarray, s: GrowthSettings, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A growing state's random draws: the rows that score its candidates
    (all, or ``score_rows`` of them), and which rows explore."""
    sub = rows
    if len(rows) > s.score_rows:
        sub = np.sort(rng.choice(rows, s.score_rows, replace=False))
    return sub, rng.random(len(rows)) < s.explore


@dataclass
class _Scored:
    """What :func:`_score_state` found at a state: its kept children's
    sensors with the rows' gains there and outputs (rows x sensors x
    width), and its routing sensors with the rows' outputs there."""

    sensors: list[int]
    gains: np.ndarray
    outputs: np.ndarray
    routing: list[int]
    routing_outputs: np.ndarray | None


def _score_state(
    bank, X, S, costs, s, floor, loss, rows, sub, held, base_sub, base_rows
):  # fmt: skip
    """Which children a state grows and what its rows gain there (see
    :func:`grow_sparse_dag`): the growth's heavy part, a pure function of
    its arguments (a task on a cluster). ``base_sub`` and ``base_rows``:
    the loss of ``sub`` and ``rows`` at the state."""
    cand = np.flatnonzero(~held)
    trial = np.repeat(held[None], len(cand), axis=0)
    trial[np.arange(len(cand)), cand] = True
    P = bank.oof_at(X, sub, trial)
    M = len(held)
    G = np.full((len(sub), M), np.nan)
    G[:, cand] = (base_sub[:, None] - loss(sub, P)) / costs[cand]
    mean_gain = np.full(M, -np.inf)
    mean_gain[cand] = G[:, cand].mean(axis=0)
    chosen = set(cand[np.argsort(-mean_gain[cand], kind="stable")][: s.n_best].tolist())
    favourite = np.argmax(np.where(np.isnan(G), -np.inf, G), axis=1)
    support = np.bincount(favourite, minlength=M) * len(rows) / len(sub)
    support[held] = 0  # a row whose gains are all NaN "favours" sensor 0
    for j in np.argsort(-support, kind="stable")[: s.n_favourites]:
        if support[j] >= floor:
            chosen.add(int(j))
    routing: list[int] = []
    if s.n_routing and len(sub) > 8 and len(rows) >= 2 * floor:
        after = np.full((len(sub), M), np.nan)
        after[:, cand] = loss(sub, P)
        value = routing_values(bank, X, sub, held, S, costs, after, G, s, row_loss=loss)
        scale = max(float(mean_gain[cand].max()), 1e-9)
        for j in np.argsort(-value, kind="stable")[: s.n_routing]:
            if value[j] > s.routing_threshold * scale and int(j) not in chosen:
                routing.append(int(j))
    chosen_list = sorted(chosen)
    P_all = _rows_at_additions(bank, X, rows, held, chosen_list, sub, cand, P)
    gains = (base_rows[:, None] - loss(rows, P_all)) / costs[chosen_list]
    alive = np.ones(len(chosen_list), dtype=bool)
    while alive.sum() > 1:  # drop children that too few rows prefer
        best = np.where(alive, gains, -np.inf).argmax(axis=1)
        backing = np.bincount(best, minlength=len(chosen_list))
        weak = alive & (backing < floor)
        if not weak.any():
            break
        alive[np.flatnonzero(weak)[np.argmin(backing[weak])]] = False
    keep = np.flatnonzero(alive)
    P_route = None
    if routing:
        P_route = _rows_at_additions(bank, X, rows, held, routing, sub, cand, P)
    return _Scored(
        [chosen_list[a] for a in keep], gains[:, keep], P_all[:, keep], routing,
        P_route,
    )  # fmt: skip


def _expand(k, rows, scored, explore, masks, kids, tables, state_of, proposals):
    """State k's children (:func:`_score_state` scored them) and where its
    rows go (see :func:`grow_sparse_dag`)."""
    g = scored.gains
    ranked = np.argsort(-g, axis=1, kind="stable")
    children = []
    for a, j in enumerate(scored.sensors):
        child = state_of(masks[k] | 1 << j)
        children.append((j, child))
        tables[child].add(rows, scored.outputs[:, a])
    # Each row proposes its best child, an exploring row its second best too.
    child_of = np.array([child for _, child in children], dtype=np.intp)
    n_proposed = np.where(explore, 2, 1)
    for rank in range(min(2, len(scored.sensors))):
        go = rank < n_proposed
        a = ranked[go, rank]
        proposals.append((-g[go, a], rows[go], child_of[a]))
    for a, j in enumerate(scored.routing):
        child = state_of(masks[k] | 1 << j)
        children.append((j, child))
        tables[child].add(rows, scored.routing_outputs[:, a])
        # Every row proposes it, after the children it gains from: a
        # routing child must not crowd the rows out of those (their
        # states would be left without rows, hence without policies).
        proposals.append(
            (np.zeros(len(rows)), rows, np.full(len(rows), child, dtype=np.intp))
        )
    kids[k] = children


#: One state's proposals of next states: (score, row, child state) arrays,
#: each row to go to the children of its least scores (see :func:`beam_states`).
Proposal = tuple[np.ndarray, np.ndarray, np.ndarray]


def beam_states(proposals: list[Proposal], beam: int) -> dict[int, np.ndarray]:
    """The rows each proposed state receives (sorted): each row goes to the
    states of its ``beam`` least (score, state) proposals (a state proposed
    twice to a row counts twice)."""
    if not proposals:
        return {}
    score, row, child = (np.concatenate(part) for part in zip(*proposals))
    order = np.lexsort((child, score, row))
    row, child = row[order], child[order]
    first = np.r_[0, np.flatnonzero(np.diff(row)) + 1]
    rank = np.arange(len(row)) - np.repeat(first, np.diff(np.r_[first, len(row)]))
    pairs = np.unique(np.stack([child[rank < beam], row[rank < beam]]), axis=1)
    bounds = np.flatnonzero(np.diff(pairs[0])) + 1
    return {
        int(part[0, 0]): part[1].astype(np.intp)
        for part in np.split(pairs, bounds, axis=1)
    }


def _rows_at_additions(
    bank: Any,
    X: np.ndarray,
    rows: np.ndarray,
    held: np.ndarray,
    added: Sequence[int],
    sub: np.ndarray,
    cand: np.ndarray,
    P: np.ndarray,
) -> np.ndarray:
    """Out-of-fold outputs of ``rows`` at ``held`` plus each sensor of
    ``added`` (rows x added x width): those of the scored rows ``sub`` (a
    sorted subset of the sorted ``rows``) taken from ``P``, their outputs at
    ``held`` plus each of ``cand``; only the other rows are asked of the bank."""
    have = P[:, np.searchsorted(cand, added)]
    if len(sub) == len(rows):
        return have
    out = np.empty((len(rows), *have.shape[1:]))
    at = np.searchsorted(rows, sub)
    out[at] = have
    rest = np.ones(len(rows), dtype=bool)
    rest[at] = False
    trial = np.repeat(held[None], len(added), axis=0)
    trial[np.arange(len(added)), added] = True
    out[rest] = bank.oof_at(X, rows[rest], trial)
    return out


# ------------------------------------------------------------- Graph-Reduce
class SparseRollout:
    """What rows cost from states of a sparse DAG under its fitted policies,
    and Graph-Reduce's walk of the DAG (see
    :class:`~budgetdag_core.graph_reduce.DenseWalk`).

    A row's cost-to-go at a state is the stop loss where the policies stop it
    plus ``cost_scale`` times what it pays on the way, kept apart
    (:meth:`parts`) so that a validation can report error and cost. Rows a
    state's policy was fitted on are recorded with the action it picked
    (:meth:`record`); any other row is rolled out under the policies.

    As a walk, each state's problem is that of its ``growth.flow`` rows (a
    state without rows or children only stops), the states of one size
    (independent: an edge adds one sensor) one group, largest first and in
    descending order within a group: the order in which the rollouts fill
    their tables does not depend on the threads.

    Parameters
    ----------
    growth : SparseGrowth
    state_inputs : callable(k, rows, proba) -> ndarray
    stop_loss : callable(rows, proba) -> ndarray
    acquisition_costs : ndarray (n_sensors,) or (n_samples, n_sensors)
    cost_scale : float
    """

    def __init__(
        self,
        growth: SparseGrowth,
        state_inputs: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
        stop_loss: Callable[[np.ndarray, np.ndarray], np.ndarray],
        acquisition_costs: np.ndarray,
        cost_scale: float,
    ) -> None:
        self.growth = growth
        self.dag = growth.dag
        self.state_inputs = state_inputs
        self.stop_loss = stop_loss
        self.costs = np.asarray(acquisition_costs, dtype=float)
        self.cost_scale = float(cost_scale)
        K = growth.dag.n_states
        self.policies: list[NodePolicy | None] = [None] * K
        # Room for each state's own rows and as many rolled out (a table
        # that grows by doubling copies itself a few times per walk).
        self.tables = [RowTable(2, 2 * len(rows)) for rows in growth.flow]
        self.work = sum(len(rows) for rows in growth.flow)
        # The walk's state: per state being reduced, its rows' probabilities
        # and action cost parts; the root's actions.
        self._pending: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.root_actions = np.zeros(len(growth.flow[0]), dtype=np.intp)

    def edge_cost(self, rows: np.ndarray, sensor: int) -> np.ndarray | float:
        """What ``rows`` pay for ``sensor``: one number for costs per sensor
        (it adds to an array as its repeats would), else each row's."""
        if self.costs.ndim == 1:
            return self.costs[sensor]
        return self.costs[rows, sensor]

    def value(self, k: int, rows: np.ndarray) -> np.ndarray:
        """Cost-to-go of ``rows`` at state k (loss units)."""
        p = self.parts(k, rows)
        return p[:, 0] + self.cost_scale * p[:, 1]

    def parts(self, k: int, rows: np.ndarray) -> np.ndarray:
        """(n, 2): the stop loss each row of ``rows`` ends with from state k,
        and the acquisition cost it pays on the way."""
        known, missing, _ = self.tables[k].lookup(rows)
        if known is not None:
            return known
        self.roll_out({k: [missing]})
        return self.tables[k].get(rows)

    def roll_out(self, requests: dict[int, list[np.ndarray]]) -> None:
        """Table the parts (:meth:`parts`) of the rows ``requests`` names at
        each state, rolling rows out under the fitted policies.

        Breadth first, one size of state at a time (an edge adds one
        sensor): each state's rows from every parent in one batch, and the
        bank asked once for all states of a size (:meth:`SparseGrowth.fill`),
        not once per state and path (a rollout reaches thousands of states
        with a dozen rows each); then the parts are summed back from the
        largest states down.
        """
        growth, dag, tables = self.growth, self.dag, self.tables
        pending = {k: list(parts) for k, parts in requests.items()}
        heap = sorted(pending)
        # Per state reached: its new rows, their stop losses, and each action
        # some of them took with the rows that took it.
        visited: list[tuple[int, np.ndarray, np.ndarray, list]] = []
        while heap:
            size = dag.states[heap[0]].bit_count()
            level: dict[int, np.ndarray] = {}
            while heap and dag.states[heap[0]].bit_count() == size:
                k = heapq.heappop(heap)
                asked = pending.pop(k)
                rows = asked[0] if len(asked) == 1 else np.concatenate(asked)
                missing = tables[k].missing(rows)
                if len(missing):
                    level[k] = missing
            # The rows whose probabilities a state lacks: a state's kept stop
            # losses and inputs are of rows whose probabilities it keeps.
            growth.fill(level)
            for k, missing in level.items():
                stop = growth.stop_at(k, missing, self.stop_loss)
                policy = self.policies[k]
                moves = []
                if policy is not None and policy.learner is not None:
                    inputs = growth.inputs_at(k, missing, self.state_inputs)
                    act = policy.predict(inputs)
                    kids = dag.children[k]
                    # Only the actions some row took (a batch mostly takes few).
                    taken = np.bincount(act, minlength=1)[1 : len(kids) + 1]
                    for a in np.flatnonzero(taken) + 1:
                        go = act == a
                        child = kids[a - 1][1]
                        if child not in pending:
                            pending[child] = []
                            heapq.heappush(heap, child)
                        pending[child].append(missing[go])
                        moves.append((kids[a - 1], go))
                visited.append((k, missing, stop, moves))
        for k, missing, stop, moves in reversed(visited):
            out = np.zeros((len(missing), 2))
            out[:, 0] = stop
            for (sensor, child), go in moves:
                moved = missing[go]
                after = tables[child].get(moved)
                out[go, 0] = after[:, 0]
                out[go, 1] = self.edge_cost(moved, sensor) + after[:, 1]
            tables[k].add(missing, out)

    def prepare(self, layer: Sequence[int]) -> None:
        """Roll the flow rows of the states of ``layer`` out from each of
        their children at once (what their :meth:`problem` tables read)."""
        requests: dict[int, list[np.ndarray]] = {}
        for k in layer:
            rows = self.growth.flow[k]
            if len(rows):
                for _, child in self.dag.children[k]:
                    requests.setdefault(child, []).append(rows)
        self.roll_out(requests)

    def action_costs(self, k: int, rows: np.ndarray, proba: np.ndarray):
        """The action cost table of ``rows`` at state k (stop first, then each
        child: its edge cost plus its cost-to-go), and the same split into
        (loss, cost) parts, (n, 1 + n_children, 2)."""
        kids = self.growth.dag.children[k]
        P = np.zeros((len(rows), 1 + len(kids), 2))
        P[:, STOP, 0] = self.growth.stop_at(k, rows, self.stop_loss, proba)
        for a, (sensor, child) in enumerate(kids, start=1):
            after = self.parts(child, rows)
            P[:, a, 0] = after[:, 0]
            P[:, a, 1] = self.edge_cost(rows, sensor) + after[:, 1]
        return P[:, :, 0] + self.cost_scale * P[:, :, 1], P

    def record(self, k: int, rows: np.ndarray, parts: np.ndarray) -> None:
        self.tables[k].add(rows, parts)

    # --------------------------------------------- the walk of graph_reduce
    def layers(self) -> list[list[int]]:
        """The states by size, largest first, each size in descending order."""
        return [sorted(layer, reverse=True) for layer in reversed(self.dag.layers())]

    def problem(self, k: int) -> np.ndarray | None:
        """The action cost table of state k's flow rows; None for a state
        without rows or children (it only stops: rows that reach it later
        are rolled out)."""
        rows = self.growth.flow[k]
        if not self.dag.children[k] or not len(rows):
            return None
        proba = self.growth.proba_at(k, rows)
        C, parts = self.action_costs(k, rows, proba)
        self._pending[k] = (proba, parts)
        return C

    def inputs(self, k: int) -> np.ndarray:
        rows = self.growth.flow[k]
        return self.growth.inputs_at(k, rows, self.state_inputs, self._pending[k][0])

    def settle(self, k: int, C: np.ndarray | None, act: np.ndarray | None) -> None:
        if act is None:
            return
        rows = self.growth.flow[k]
        parts = self._pending.pop(k)[1]
        self.record(k, rows, parts[np.arange(len(rows)), act])
        if k == 0:
            self.root_actions = act

    def result(
        self, policies: list[NodePolicy], tables: list[np.ndarray] | None
    ) -> GraphReduceResult:
        """The walk's :class:`~budgetdag_core.graph_reduce.GraphReduceResult`:
        ``cost_to_go`` and ``actions`` hold the root's column only (n, 1) for
        its flow rows; with ``tables`` (``record=True``) every state's column
        over all rows of the growth (NaN and -1 where a row did not reach
        the state), each table over its state's flow rows (``rows``)."""
        self._pending.clear()
        flow = self.growth.flow
        if tables is None:
            root = self.value(0, flow[0])
            return GraphReduceResult(
                policies, root[:, None], self.root_actions[:, None]
            )
        n, K = len(self.growth.X), self.dag.n_states
        cost_to_go = np.full((n, K), np.nan)
        actions = np.full((n, K), -1, dtype=np.intp)
        for k, rows in enumerate(flow):
            if not len(rows):
                tables[k] = np.empty((0, 1 + len(self.dag.children[k])))
            elif not self.dag.children[k]:  # a leaf: its rows only stop
                tables[k] = self.value(k, rows)[:, None]
            if len(rows):
                cost_to_go[rows, k] = self.value(k, rows)
                policy = policies[k]
                actions[rows, k] = (
                    0
                    if policy.learner is None
                    else policy.predict(
                        self.growth.inputs_at(k, rows, self.state_inputs)
                    )
                )
        return GraphReduceResult(
            policies, cost_to_go, actions, tables, [np.asarray(r) for r in flow]
        )


def state_spreads(growth: SparseGrowth) -> np.ndarray:
    """Per state, the mean total-variation distance of its flow rows'
    probabilities from their mean (NaN where no row arrived)."""
    out = np.full(growth.dag.n_states, np.nan)
    for k, rows in enumerate(growth.flow):
        if len(rows):
            # Kept beside the probabilities: every fit on a sweep's bank asks
            # again, of the same rows (new values of a state drop it).
            derived = growth.proba[k].derived
            key = ("spread", rows.tobytes())
            if key not in derived:
                p = growth.proba_at(k, rows)
                derived[key] = (np.abs(p - p.mean(axis=0)).sum(axis=1) / 2).mean()
            out[k] = derived[key]
    return out


__all__ = [
    "GrowthSettings",
    "RowTable",
    "SparseGrowth",
    "SparseRollout",
    "SparseSensorDAG",
    "beam_states",
    "expected_loss",
    "grow_sparse_dag",
    "mask_of",
    "pick_gains",
    "ranking_costs",
    "state_spreads",
]
