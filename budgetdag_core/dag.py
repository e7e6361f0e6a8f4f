"""The sensor DAG: states are sets of acquired sensors, edges acquire one more unit.

A *unit* is what one acquire-action buys: a single sensor in the full DAG, or a
selected sensor subset ("super-sensor") when the DAG is built over unions of subsets
(section 3 of the paper). States are the distinct unions of units, stored as
bitmasks over the real sensors; inside, everything is integer indices.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from ._integrity import check_int, fail
from .validation import MAX_FULL_DAG_SENSORS, MAX_N_SUBSETS, check_index

if TYPE_CHECKING:
    from .sensors import SensorSpec

#: Most acquire-actions (units) of a DAG the estimators build: one per sensor
#: of a full DAG, or one per selected subset. A loaded DAG's units are counted
#: before it is rebuilt, which takes up to 2^units states.
MAX_DAG_UNITS = max(MAX_FULL_DAG_SENSORS, MAX_N_SUBSETS)


def mask_of(indices: Sequence[int]) -> int:
    mask = 0
    for i in indices:
        mask |= 1 << int(i)
    return mask


def bits_of(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending."""
    out, i = [], 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


@dataclass
class SensorDAG:
    """States, actions and children of a sensor-acquisition DAG.

    Parameters
    ----------
    sensor_names : sequence of str
        The real sensors.
    units : sequence of sequence of int, optional
        Sensor indices bought by each acquire-action. Default: one unit per sensor,
        which gives the full lattice of 2^M states.

    Attributes
    ----------
    states : list[int]
        Sensor bitmasks, ordered by number of sensors then value (a topological
        order: every child comes after its parent). ``states[0]`` is the empty set.
    children : list[list[tuple[int, int]]]
        For each state, ``(unit, child_state)`` pairs; units that add nothing are
        left out and two units that reach the same child keep the first.

    Examples
    --------
    >>> dag = SensorDAG(["a", "b", "c"])
    >>> dag.n_states, dag.state_names(dag.n_states - 1)
    (8, ('a', 'b', 'c'))
    >>> [(unit, dag.state_names(child)) for unit, child in dag.children[0]]
    [(0, ('a',)), (1, ('b',)), (2, ('c',))]

    Over sensor subsets (units), as with ``n_subsets``:

    >>> SensorDAG(["a", "b", "c"], units=[[0], [1, 2]]).n_states
    4
    """

    sensor_names: Sequence[str]
    units: Sequence[Sequence[int]] | None = None
    states: list[int] = field(init=False)
    children: list[list[tuple[int, int]]] = field(init=False)

    def __post_init__(self) -> None:
        self.sensor_names = tuple(self.sensor_names)
        if self.units is None:
            self.units = [[i] for i in range(len(self.sensor_names))]
        self.units = [self._checked_unit(u) for u in self.units]
        if len(self.units) > MAX_DAG_UNITS:
            raise ValueError(
                f"SensorDAG: {len(self.units)} units (sensors, or units=) make up "
                f"to 2^{len(self.units)} states; at most {MAX_DAG_UNITS} (use "
                "subsets, as n_subsets does, or a sparse DAG)."
            )
        self.unit_masks = [mask_of(u) for u in self.units]
        reachable = {0}
        frontier = [0]
        while frontier:
            nxt = []
            for s in frontier:
                for um in self.unit_masks:
                    c = s | um
                    if c != s and c not in reachable:
                        reachable.add(c)
                        nxt.append(c)
            frontier = nxt
        self.states = sorted(reachable, key=lambda m: (m.bit_count(), m))
        self.index = {m: k for k, m in enumerate(self.states)}
        self.children = []
        for s in self.states:
            seen: dict[int, int] = {}
            for j, um in enumerate(self.unit_masks):
                c = s | um
                if c != s and c not in seen:
                    seen[c] = j
            self.children.append([(j, self.index[c]) for c, j in seen.items()])

    def _checked_unit(self, unit: Sequence[int]) -> tuple[int, ...]:
        """A unit of ``units`` as sorted distinct sensor indices, or an error
        naming the bad index."""
        n = len(self.sensor_names)
        try:
            indices = sorted({operator.index(i) for i in unit})
        except TypeError:
            raise TypeError(
                f"SensorDAG: units must hold sensor indices (ints); got {unit!r:.60}."
            ) from None
        outside = [i for i in indices if not 0 <= i < n]
        if outside:
            raise ValueError(
                f"SensorDAG: units name sensor index {outside[0]}, outside "
                f"0..{n - 1} ({n} sensors)."
            )
        return tuple(indices)

    @property
    def n_states(self) -> int:
        return len(self.states)

    @property
    def n_sensors(self) -> int:
        return len(self.sensor_names)

    def sensors_in(self, state: int) -> list[int]:
        """Real sensor indices held in state number ``state``."""
        state = check_index("SensorDAG.sensors_in", "state", state, self.n_states)
        return bits_of(self.states[state])

    def added_sensors(self, state: int, child: int) -> list[int]:
        """Real sensors bought on the edge ``state -> child``."""
        state = check_index("SensorDAG.added_sensors", "state", state, self.n_states)
        child = check_index("SensorDAG.added_sensors", "child", child, self.n_states)
        return bits_of(self.states[child] & ~self.states[state])

    def state_names(self, state: int) -> tuple[str, ...]:
        """Names of the sensors held in state number ``state``."""
        state = check_index("SensorDAG.state_names", "state", state, self.n_states)
        return tuple(self.sensor_names[i] for i in self.sensors_in(state))

    def layers(self) -> list[list[int]]:
        """State indices grouped by number of sensors, from the empty set up."""
        out: dict[int, list[int]] = {}
        for k, m in enumerate(self.states):
            out.setdefault(m.bit_count(), []).append(k)
        return [out[size] for size in sorted(out)]

    def state_columns(self, sensor_columns: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Per state, the positions of the columns of its sensors (spec order)."""
        return [self.columns_of(k, sensor_columns) for k in range(self.n_states)]

    def columns_of(
        self, state: int, sensor_columns: Sequence[np.ndarray]
    ) -> np.ndarray:
        """The positions of the columns of state number ``state``'s sensors
        (spec order)."""
        state = check_index("SensorDAG.columns_of", "state", state, self.n_states)
        held = bits_of(self.states[state])
        if not held:
            return np.array([], dtype=int)
        return np.concatenate([sensor_columns[m] for m in held]).astype(int)

    def membership(self, states: Sequence[int] | None = None) -> np.ndarray:
        """Boolean (n_states, n_sensors) matrix: sensor m is in state k.

        ``states``: only these state numbers' rows, in their order, repeats
        allowed (each row's stop state: each distinct state is read once; the
        whole matrix of a grown DAG's states was most of an evaluation's time).
        """
        index = None
        if states is None:
            masks = self.states
        else:
            asked = np.asarray(states, dtype=np.int64).ravel()
            distinct, index = np.unique(asked, return_inverse=True)
            masks = [
                self.states[
                    check_index("SensorDAG.membership", "state", k, len(self.states))
                ]
                for k in distinct
            ]
        width = max(1, -(-self.n_sensors // 8))  # bytes of a state's bit mask
        raw = b"".join(int(mask).to_bytes(width, "little") for mask in masks)
        bits = np.unpackbits(
            np.frombuffer(raw, dtype=np.uint8).reshape(len(masks), width),
            axis=1,
            bitorder="little",
        )
        member = bits[:, : self.n_sensors].astype(bool)
        return member if index is None else member[index.ravel()]

    def check_integrity(self, where: str, sensor_names: Sequence[str]) -> None:
        """Raise ``ValueError`` unless this is the DAG of its units over
        ``sensor_names`` (a loaded model: states, children and index are
        rebuilt from the units and compared)."""
        names = list(sensor_names)
        if list(self.sensor_names) != names:
            raise fail(f"{where}.sensor_names", "differ from the sensor spec's names")
        units = self.units
        if not isinstance(units, list | tuple) or not units:
            raise fail(f"{where}.units", "expected a non-empty list")
        if len(units) > MAX_DAG_UNITS:
            raise fail(
                f"{where}.units",
                f"{len(units)} units, at most {MAX_DAG_UNITS} "
                f"(2^{MAX_DAG_UNITS} states)",
            )
        for j, unit in enumerate(units):
            if not isinstance(unit, list | tuple) or not unit:
                raise fail(f"{where}.units[{j}]", "expected a non-empty tuple")
            for i in unit:
                check_int(i, f"{where}.units[{j}]", 0, len(names))
        fresh = SensorDAG(names, [list(u) for u in units])
        if list(self.states) != fresh.states:
            raise fail(f"{where}.states", "do not match the DAG of its units")
        if [list(map(tuple, c)) for c in self.children] != [
            list(c) for c in fresh.children
        ]:
            raise fail(f"{where}.children", "do not match the DAG of its units")
        if getattr(self, "index", None) != fresh.index or list(
            getattr(self, "unit_masks", [])
        ) != list(fresh.unit_masks):
            raise fail(where, "its state index or unit masks are inconsistent")

    def to_networkx(self) -> nx.DiGraph:
        """The DAG as a ``networkx.DiGraph``.

        Nodes are state indices with attributes ``sensors`` (tuple of names),
        ``n_sensors`` and ``label``; edges carry ``unit`` and ``added`` (names).
        """
        g = nx.DiGraph()
        for k in range(self.n_states):
            names = self.state_names(k)
            g.add_node(
                k,
                sensors=names,
                n_sensors=len(names),
                label="{" + ", ".join(names) + "}" if names else "{}",
            )
        for k, kids in enumerate(self.children):
            for unit, c in kids:
                added = tuple(self.sensor_names[i] for i in self.added_sensors(k, c))
                g.add_edge(k, c, unit=unit, added=added)
        return g


def build_dag(spec: SensorSpec, units: Sequence[Sequence[int]] | None) -> SensorDAG:
    """The full sensor DAG, or the DAG over unions of ``units`` (sensor subsets)."""
    if units is None and spec.n_sensors > MAX_FULL_DAG_SENSORS:
        raise ValueError(
            f"The spec has {spec.n_sensors} sensors: a full DAG would have "
            f"2^{spec.n_sensors} states. Group columns into at most "
            f"{MAX_FULL_DAG_SENSORS} sensors, or use subset selection "
            "(n_subsets=t) to build the DAG over t selected sensor subsets."
        )
    return SensorDAG(spec.names, units=units)
