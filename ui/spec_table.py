"""A sensor spec as an editable table (sensor, columns, cost), with checks.

The app's Sensors page edits this table; :func:`check_spec_table` turns it back
into a :class:`SensorSpec` and lists, in words, everything that prevents it or
that the user should know (unassigned columns are ignored, many states, ...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from budgetdag_core.sensors import SensorSpec
from budgetdag_core.validation import MAX_FULL_DAG_SENSORS

TABLE_COLUMNS = ("sensor", "columns", "cost")
DEFAULT_MAX_SENSORS = 8
"""Sensors of a suggested spec: 2^8 = 256 DAG states train in about a minute."""


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
    ``needs_subsets`` is True when the spec has more sensors than a full DAG
    allows, so it can only be trained with sensor-subset selection (Alg. 2).
    """

    spec: SensorSpec | None
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unassigned: list[str] = field(default_factory=list)
    needs_subsets: bool = False

    @property
    def ok(self) -> bool:
        return self.spec is not None


def check_spec_table(
    table: pd.DataFrame,
    available: Sequence[str],
    *,
    label: str | None = None,
    max_sensors: int = MAX_FULL_DAG_SENSORS,
    n_subsets: int | None = None,
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
        Most sensors a full DAG allows.
    n_subsets : int, optional
        The number of sensor subsets (Alg. 2) training will select when the
        spec has more than ``max_sensors`` sensors: such a spec is then fine
        (a note explains the subsets) instead of an error.

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
    needs_subsets = len(groups) > max_sensors
    _check_size(len(groups), max_sensors, n_subsets, errors, notes)
    if groups and all(c == 0 for c in costs.values() if math.isfinite(c)):
        notes.append(
            "All costs are 0: the policy will acquire every sensor that helps."
        )
    if errors:
        return SpecCheck(None, errors, notes, unassigned, needs_subsets)
    try:
        spec = SensorSpec(groups, costs)
    except ValueError as exc:  # pragma: no cover - the checks above come first
        return SpecCheck(None, [str(exc)], notes, unassigned, needs_subsets)
    return SpecCheck(spec, [], notes, unassigned, needs_subsets)


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


def _check_size(
    n: int,
    max_sensors: int,
    n_subsets: int | None,
    errors: list[str],
    notes: list[str],
) -> None:
    """A note or an error when ``n`` sensors make a large or too large DAG."""
    if n > max_sensors and n_subsets is not None:
        notes.append(
            f"The spec has {n} sensors, too many for a full DAG (2^{n} states): "
            f"training selects {n_subsets} sensor subsets (Alg. 2) and builds the "
            f"DAG over their unions, at most 2^{n_subsets} = {2**n_subsets} states. "
            "Each policy step buys a whole subset."
        )
    elif n > max_sensors:
        errors.append(
            f"The spec has {n} sensors: a full DAG would have 2^{n} states. Group "
            f"columns into at most {max_sensors} sensors, or use subset selection "
            "(n_subsets=t) to build the DAG over t selected sensor subsets."
        )
    elif n > DEFAULT_MAX_SENSORS:
        notes.append(
            f"{n} sensors make a DAG of 2^{n} = {2**n} states: training fits one "
            "classifier per state and fold, which can take many minutes. Grouping "
            "columns into fewer sensors"
            + (", or sensor subsets," if n_subsets is not None else "")
            + " is faster."
        )


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


def suggest_spec(
    columns: Sequence[str],
    max_sensors: int = DEFAULT_MAX_SENSORS,
    *,
    together: Mapping[str, Sequence[str]] | None = None,
) -> SensorSpec:
    """A starting spec for new data, at most ``max_sensors`` sensors of cost 1.

    One sensor per column when that is few enough (the columns of each entry of
    ``together``, e.g. the 0/1 columns one-hot encoding made from one column,
    form one sensor named by its key); else the name-prefix groups when they are
    2..``max_sensors``; else consecutive blocks.

    Examples
    --------
    >>> suggest_spec(["age", "color_red", "color_blue"],
    ...              together={"color": ["color_red", "color_blue"]}).groups
    {'age': ['age'], 'color': ['color_red', 'color_blue']}
    """
    columns = [str(c) for c in columns]
    groups: dict[str, list[str]] = {}
    grouped = {str(c): str(k) for k, cols in (together or {}).items() for c in cols}
    for col in columns:
        name = grouped.get(col, col)
        if name != col and name in columns:  # the group's name is taken by a column
            name = col
        groups.setdefault(name, []).append(col)
    if len(groups) <= max_sensors:
        return SensorSpec(groups, dict.fromkeys(groups, 1.0))
    by_prefix = SensorSpec.by_prefix(columns)
    if 2 <= by_prefix.n_sensors <= max_sensors:
        return by_prefix
    return spec_in_blocks(columns, max_sensors)


def suggested_cost_scale(spec: SensorSpec) -> float:
    """A ``cost_scale`` where buying every sensor costs 0.2 misclassifications.

    A starting point on the interesting part of the trade-off: the policy buys
    sensors for hard examples and skips them for easy ones. Rounded to 2
    significant digits; 1.0 when all costs are 0.
    """
    total = spec.total_cost
    if total <= 0:
        return 1.0
    return float(f"{0.2 / total:.2g}")
