"""A sensor spec as an editable table (sensor, columns, cost), with checks.

The app's Sensors page edits this table; :func:`check_spec_table` turns it back
into a :class:`SensorSpec` and lists, in words, everything that prevents it or
that the user should know (unassigned columns are ignored, many states, ...).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from budgetdag_core.sensors import SensorSpec
from budgetdag_core.validation import MAX_FULL_DAG_SENSORS

TABLE_COLUMNS = ("sensor", "columns", "cost")
DEFAULT_MAX_SENSORS = 8
"""Sensors of a full DAG that trains in about a minute (2^8 = 256 states)."""


def spec_to_table(spec: SensorSpec) -> pd.DataFrame:
    """One row per sensor: ``sensor`` (name), ``columns`` (list of str), ``cost``."""
    return pd.DataFrame(
        {
            "sensor": list(spec.names),
            "columns": [list(spec.groups[n]) for n in spec.names],
            "cost": [float(spec.costs[n]) for n in spec.names],
        },
        columns=list(TABLE_COLUMNS),
    )


def _as_columns(value: object) -> list[str]:
    """A cell of the ``columns`` column: a list, or text separated by commas."""
    if value is None:
        return []
    if isinstance(value, str):
        return [c.strip() for c in value.split(",") if c.strip()]
    if isinstance(value, float) and math.isnan(value):
        return []
    try:
        return [str(c).strip() for c in value if str(c).strip()]  # type: ignore[union-attr]
    except TypeError:
        return [str(value).strip()]


def _is_blank(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


@dataclass
class SpecCheck:
    """The result of :func:`check_spec_table`.

    ``spec`` is None when there are ``errors``; ``notes`` never block training.
    """

    spec: SensorSpec | None
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unassigned: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.spec is not None


def check_spec_table(
    table: pd.DataFrame,
    available: Sequence[str],
    *,
    label: str | None = None,
    max_sensors: int = MAX_FULL_DAG_SENSORS,
) -> SpecCheck:
    """Validate an edited sensor table against the data's feature columns.

    Parameters
    ----------
    table : DataFrame
        Columns ``sensor``, ``columns`` (list of names or comma-separated text),
        ``cost``. Entirely empty rows are skipped.
    available : sequence of str
        The feature columns of the data.
    label : str, optional
        The label column (named in the message if a sensor uses it).
    max_sensors : int
        Most sensors a full DAG allows: beyond, the library's default builds
        DAGs of one-sensor additions (the Train page says which).

    Returns
    -------
    SpecCheck
        The spec (or None) with error messages and notes in plain words.

    Examples
    --------
    >>> t = pd.DataFrame({"sensor": ["s"], "columns": [["a"]], "cost": [1.0]})
    >>> check = check_spec_table(t, ["a", "b"])
    >>> check.spec.names, check.unassigned
    (('s',), ['b'])
    """
    missing_cols = [c for c in TABLE_COLUMNS if c not in table.columns]
    if missing_cols:
        return SpecCheck(None, [f"The sensor table lacks column(s) {missing_cols}."])
    available = [str(c) for c in available]
    groups, costs, owner, errors = _read_rows(table, set(available), label)
    notes: list[str] = []
    if not groups and not errors:
        errors.append("There are no sensors: add at least one row.")
    unassigned = [c for c in available if c not in owner]
    if unassigned and groups:
        shown = ", ".join(repr(c) for c in unassigned[:10])
        more = f" and {len(unassigned) - 10} more" if len(unassigned) > 10 else ""
        notes.append(
            f"{len(unassigned)} column(s) are in no sensor and will be ignored: "
            f"{shown}{more}."
        )
    if DEFAULT_MAX_SENSORS < len(groups) <= max_sensors:
        n = len(groups)
        notes.append(
            f"{n} sensors make a full DAG of 2^{n} = {2**n} states: training fits "
            "a classifier for each (its estimated time is below). Grouping "
            "columns into fewer sensors, or sensor subsets (Alg. 2), is faster."
        )
    if groups and all(c == 0 for c in costs.values() if math.isfinite(c)):
        notes.append(
            "All costs are 0: the policy will acquire every sensor that helps."
        )
    if errors:
        return SpecCheck(None, errors, notes, unassigned)
    try:
        spec = SensorSpec(groups, costs)
    except ValueError as exc:  # pragma: no cover - the checks above come first
        return SpecCheck(None, [str(exc)], notes, unassigned)
    return SpecCheck(spec, [], notes, unassigned)


def _read_rows(
    table: pd.DataFrame, known: set[str], label: str | None
) -> tuple[dict[str, list[str]], dict[str, float], dict[str, str], list[str]]:
    """The sensors' columns and costs from the table's rows, which sensor owns
    each column, and what is wrong with the rows."""
    errors: list[str] = []
    groups: dict[str, list[str]] = {}
    costs: dict[str, float] = {}
    owner: dict[str, str] = {}
    for i, row in enumerate(table.itertuples(index=False), start=1):
        name_cell, cols_cell, cost_cell = row.sensor, row.columns, row.cost
        cols = _as_columns(cols_cell)
        if _is_blank(name_cell) and not cols and _is_blank(cost_cell):
            continue
        name = "" if _is_blank(name_cell) else str(name_cell).strip()
        where = f"Sensor {name!r}" if name else f"Row {i}"
        if not name:
            errors.append(f"Row {i} has no sensor name.")
        elif name in groups:
            errors.append(f"Two sensors are named {name!r}: names must be unique.")
            continue
        if not cols:
            errors.append(f"{where} has no columns: pick at least one.")
        for col in cols:
            if col == label:
                errors.append(
                    f"{where} uses {col!r}, which is the label column, as a feature."
                )
            elif col not in known:
                errors.append(f"{where} uses column {col!r}, which is not in the data.")
            elif col in owner:
                other = name or f"row {i}"
                errors.append(
                    f"Column {col!r} is in two sensors: {owner[col]!r} and "
                    f"{other!r}. Each column may belong to one sensor only."
                )
            else:
                owner[col] = name or f"row {i}"
        cost = _row_cost(cost_cell, where, errors)
        if name:
            groups[name] = cols
            costs[name] = cost
    return groups, costs, owner, errors


def _row_cost(cost_cell: Any, where: str, errors: list[str]) -> float:
    """The row's cost (NaN when unreadable), noting a missing or negative one."""
    try:
        cost = float(cost_cell)
    except (TypeError, ValueError):
        cost = math.nan
    if _is_blank(cost_cell) or not math.isfinite(cost):
        errors.append(f"{where} has no valid cost: enter a number (0 or more).")
    elif cost < 0:
        errors.append(
            f"{where} has a negative cost ({cost:g}): costs must be 0 or more."
        )
    return cost


def with_sensor(
    table: pd.DataFrame, name: str, columns: Sequence[str], cost: float
) -> pd.DataFrame:
    """``table`` with one sensor ``name`` that reveals ``columns`` at ``cost``.

    The columns leave the sensors that had them; a sensor left without a
    column goes, and a sensor already called ``name`` is replaced (in its
    place). Custom groups are made this way in the app, one sensor at a time.

    Examples
    --------
    >>> t = spec_to_table(SensorSpec.per_column(["a", "b", "c"]))
    >>> out = with_sensor(t, "ab", ["a", "b"], 2.0)
    >>> out["sensor"].tolist(), out["columns"].tolist(), out["cost"].tolist()
    (['ab', 'c'], [['a', 'b'], ['c']], [2.0, 1.0])
    """
    name, chosen = str(name).strip(), [str(c) for c in columns]
    if not name:
        raise ValueError("Give the new sensor a name.")
    if not chosen:
        raise ValueError("Choose at least one column for the new sensor.")
    if not math.isfinite(float(cost)) or float(cost) < 0:
        raise ValueError(f"The cost must be 0 or more; got {cost!r}.")
    taken = set(chosen)
    rows: list[tuple[Any, list[str], Any]] = []
    at = None  # where the new sensor goes: its first column's old place
    for sensor, cells, old_cost in zip(
        table["sensor"], table["columns"], table["cost"], strict=True
    ):
        held = _as_columns(cells)
        if at is None and (str(sensor).strip() == name or taken & set(held)):
            at = len(rows)
        if str(sensor).strip() == name:
            continue
        kept = [c for c in held if c not in taken]
        if kept or not held:  # a row without columns yet: the user's to finish
            rows.append((sensor, kept, old_cost))
    rows.insert(len(rows) if at is None else at, (name, chosen, float(cost)))
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def spec_in_blocks(
    columns: Sequence[str], n_blocks: int, cost: float = 1.0
) -> SensorSpec:
    """Consecutive columns in ``n_blocks`` sensors of near-equal size."""
    columns = [str(c) for c in columns]
    if not columns:
        raise ValueError("There are no columns to group.")
    n_blocks = max(1, min(int(n_blocks), len(columns)))
    size, extra = divmod(len(columns), n_blocks)
    groups, start = {}, 0
    for b in range(n_blocks):
        stop = start + size + (b < extra)
        groups[f"block{b + 1}"] = columns[start:stop]
        start = stop
    return SensorSpec(groups, dict.fromkeys(groups, float(cost)))


def suggested_cost_scale(spec: SensorSpec, unit: float = 1.0) -> float:
    """A ``cost_scale`` where buying every sensor costs 0.2 misclassifications
    (0.2 ``unit`` of loss: a regression's is its target's variance, the
    squared error of predicting the mean).

    A starting point on the interesting part of the trade-off: the policy buys
    sensors for hard examples and skips them for easy ones. Rounded to 2
    significant digits; 1.0 when all costs are 0.
    """
    total = spec.total_cost
    if total <= 0:
        return 1.0
    return float(f"{0.2 * unit / total:.2g}")


#: Costs the user gave, by the sensor's columns (sorted): what a regrouping keeps.
TypedCosts = dict[tuple[str, ...], float]


def typed_costs(base: pd.DataFrame, edited: pd.DataFrame) -> TypedCosts:
    """The costs ``edited`` gives that ``base`` (the editor's input) did not:
    each row whose cost or columns changed, by its columns.

    Examples
    --------
    >>> base = spec_to_table(SensorSpec.per_column(["a", "b"]))
    >>> edited = base.assign(cost=[1.0, 7.0])
    >>> typed_costs(base, edited)
    {('b',): 7.0}
    """
    before = {
        tuple(sorted(_as_columns(cols))): cost
        for cols, cost in zip(base["columns"], base["cost"], strict=True)
    }
    typed: TypedCosts = {}
    for cols, cost in zip(edited["columns"], edited["cost"], strict=True):
        key = tuple(sorted(_as_columns(cols)))
        try:
            value = float(cost)
        except (TypeError, ValueError):
            continue
        if key and math.isfinite(value) and value >= 0 and before.get(key) != value:
            typed[key] = value
    return typed


def spec_costs(spec: SensorSpec) -> TypedCosts:
    """Every sensor's cost by its columns (a spec the user loaded or made)."""
    return {
        tuple(sorted(spec.groups[name])): float(spec.costs[name]) for name in spec.names
    }


def with_typed_costs(spec: SensorSpec, typed: TypedCosts) -> tuple[SensorSpec, int]:
    """``spec`` with the costs the user typed for the same columns, and how
    many sensors kept one: a sensor of exactly the columns of a typed one
    takes its cost; a sensor that is a union of typed sensors, their sum
    (buying them together costs what buying each did).

    Examples
    --------
    >>> per_column = SensorSpec.per_column(["a", "b", "c"])
    >>> typed = {("a",): 5.0, ("b",): 2.0}
    >>> spec, kept = with_typed_costs(per_column, typed)
    >>> spec.costs["a"], spec.costs["b"], spec.costs["c"], kept
    (5.0, 2.0, 1.0, 2)
    >>> pair = SensorSpec({"ab": ["a", "b"], "c": ["c"]}, {"ab": 1.0, "c": 1.0})
    >>> with_typed_costs(pair, typed)[0].costs["ab"]
    7.0
    """
    holder = {col: key for key in typed for col in key}
    costs, kept = {}, 0
    for name in spec.names:
        key = tuple(sorted(spec.groups[name]))
        parts = {holder.get(col) for col in key}
        if key in typed:
            costs[name], kept = typed[key], kept + 1
        elif None not in parts and set().union(*parts) == set(key):
            costs[name], kept = float(sum(typed[p] for p in parts)), kept + 1
        else:
            costs[name] = float(spec.costs[name])
    return SensorSpec(dict(spec.groups), costs), kept
