"""Sensor specifications: named groups of feature columns with acquisition costs."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


def _check_text_names(keys: Iterable[object]) -> None:
    """Refuse two sensor names that are the same once written as text (1, "1")."""
    seen: dict[str, object] = {}
    for key in keys:
        name = str(key)
        if name in seen:
            raise ValueError(
                f"Sensor names {seen[name]!r} and {key!r} are the same once written "
                "as text: rename one."
            )
        seen[name] = key


def _column_list(sensor: object, columns: object) -> list[str]:
    """A sensor's columns as names; one string is one column (not its letters)."""
    if isinstance(columns, str):
        return [columns]
    if not isinstance(columns, Iterable) or isinstance(columns, Mapping | bytes):
        raise ValueError(
            f"The columns of sensor {sensor!r} must be a list of column names; got "
            f"{type(columns).__name__} {columns!r}."
        )
    return [str(c) for c in columns]


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads`` hook: a key given twice in one JSON object is an error (the
    default keeps the last silently, e.g. one of two same-named sensors)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(
                f"The sensor spec JSON gives the key {key!r} twice in one object: "
                "names must be unique."
            )
        out[key] = value
    return out


@dataclass(frozen=True)
class SensorSpec:
    """Named sensors, each a list of feature columns and an acquisition cost.

    Parameters
    ----------
    groups : dict[str, list[str]]
        Sensor name -> the feature columns that acquiring the sensor reveals.
        The order of the dict is the sensor order used everywhere.
    costs : dict[str, float]
        Sensor name -> acquisition cost (finite, non-negative).

    Examples
    --------
    >>> spec = SensorSpec({"cheap": ["a"], "lab": ["b", "c"]}, {"cheap": 1, "lab": 5})
    >>> spec.names
    ('cheap', 'lab')
    >>> spec.total_cost
    6.0
    """

    groups: dict[str, list[str]]
    costs: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_text_names(self.groups)
        _check_text_names(self.costs)
        groups = {str(k): _column_list(k, v) for k, v in dict(self.groups).items()}
        costs = {str(k): v for k, v in dict(self.costs).items()}
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "costs", costs)
        self.check()

    # ------------------------------------------------------------------ checks
    def check(self) -> None:
        """Raise ``ValueError`` naming the problem if the spec is inconsistent."""
        if not self.groups:
            raise ValueError("The sensor spec has no sensors.")
        owner: dict[str, str] = {}
        for name, columns in self.groups.items():
            if not name:
                raise ValueError("A sensor has an empty name.")
            if not columns:
                raise ValueError(f"Sensor {name!r} has no columns.")
            for col in columns:
                if col in owner and owner[col] != name:
                    raise ValueError(
                        f"Column {col!r} is in two sensors: {owner[col]!r} and "
                        f"{name!r}. Each column may belong to one sensor only."
                    )
                if col in owner:
                    raise ValueError(f"Column {col!r} is listed twice in {name!r}.")
                owner[col] = name
        missing = [n for n in self.groups if n not in self.costs]
        if missing:
            raise ValueError(f"No cost given for sensor(s) {missing}.")
        extra = [n for n in self.costs if n not in self.groups]
        if extra:
            raise ValueError(f"Costs given for unknown sensor(s) {extra}.")
        for name, cost in self.costs.items():
            try:
                value = float(cost)
            except (TypeError, ValueError):
                raise ValueError(
                    f"Cost of sensor {name!r} is not a number: {cost!r}."
                ) from None
            if not math.isfinite(value):
                raise ValueError(f"Cost of sensor {name!r} is not finite: {cost!r}.")
            if value < 0:
                raise ValueError(f"Cost of sensor {name!r} is negative: {value}.")
        total = sum(float(c) for c in self.costs.values())
        if not math.isfinite(total):
            raise ValueError(
                "The sensor costs sum to more than float64 can hold (infinity): "
                "rescale them (e.g. other units)."
            )

    def check_columns(self, columns: Iterable[str]) -> None:
        """Raise ``ValueError`` if a spec column is missing from ``columns``."""
        available = set(map(str, columns))
        for name, cols in self.groups.items():
            absent = [c for c in cols if c not in available]
            if absent:
                raise ValueError(
                    f"Sensor {name!r} uses column(s) {absent} that are not in the data."
                )

    # ------------------------------------------------------------- properties
    @property
    def names(self) -> tuple[str, ...]:
        """Sensor names in spec order."""
        return tuple(self.groups)

    @property
    def n_sensors(self) -> int:
        return len(self.groups)

    @property
    def columns(self) -> list[str]:
        """All feature columns, sensor by sensor, in spec order."""
        return [c for cols in self.groups.values() for c in cols]

    @property
    def cost_vector(self) -> np.ndarray:
        """Acquisition costs as a float array in sensor order."""
        return np.array([float(self.costs[n]) for n in self.names], dtype=float)

    @property
    def total_cost(self) -> float:
        return float(self.cost_vector.sum())

    def column_indices(self) -> list[np.ndarray]:
        """For each sensor, the positions of its columns in :attr:`columns`."""
        out, start = [], 0
        for cols in self.groups.values():
            out.append(np.arange(start, start + len(cols)))
            start += len(cols)
        return out

    def sensor_of(self, column: str) -> str:
        for name, cols in self.groups.items():
            if column in cols:
                return name
        raise KeyError(column)

    # ----------------------------------------------------------- constructors
    @classmethod
    def per_column(
        cls, columns: Sequence[str], cost: float | Mapping[str, float] = 1.0
    ) -> SensorSpec:
        """One sensor per column, named after the column.

        ``cost`` is one cost for all, or a mapping column -> cost.
        """
        columns = [str(c) for c in columns]
        if isinstance(cost, Mapping):
            costs = {c: float(cost[c]) for c in columns}
        else:
            costs = {c: float(cost) for c in columns}
        return cls({c: [c] for c in columns}, costs)

    @classmethod
    def by_prefix(
        cls, columns: Sequence[str], separator: str = "_", cost: float = 1.0
    ) -> SensorSpec:
        """Group columns by the part of their name before ``separator``."""
        groups: dict[str, list[str]] = {}
        for col in map(str, columns):
            groups.setdefault(col.split(separator, 1)[0], []).append(col)
        return cls(groups, {name: float(cost) for name in groups})

    def to_dict(self) -> dict:
        return {
            "sensors": [
                {"name": n, "columns": list(self.groups[n]), "cost": self.costs[n]}
                for n in self.names
            ]
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> SensorSpec:
        if "sensors" in data:
            items = data["sensors"]
            if not isinstance(items, list):
                raise ValueError("'sensors' must be a list of {name, columns, cost}.")
            groups, costs, entry = {}, {}, {}
            for i, item in enumerate(items):
                try:
                    name = str(item["name"])
                    columns = item["columns"]
                    cost = item.get("cost", 1.0)
                except (KeyError, TypeError, AttributeError):
                    raise ValueError(
                        f"Sensor entry {i} must have 'name' and 'columns'."
                    ) from None
                if name in entry:
                    raise ValueError(
                        f"Sensor name {name!r} is used by entries {entry[name]} and "
                        f"{i}: sensor names must be unique."
                    )
                entry[name] = i
                groups[name] = _column_list(name, columns)
                costs[name] = cost
            return cls(groups, costs)
        if "groups" in data:
            return cls(dict(data["groups"]), dict(data.get("costs", {})))
        raise ValueError("A sensor spec needs a 'sensors' (or 'groups') entry.")

    def to_json(self, path: str | Path | None = None) -> str:
        """Serialise to JSON; also write to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            Path(path).write_text(text)
        return text

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> SensorSpec:
        """Read a spec from a JSON string or a path to a JSON file."""
        text = str(text_or_path)
        if isinstance(text_or_path, Path) or not text.lstrip().startswith("{"):
            text = Path(text_or_path).read_text()
        try:
            data = json.loads(text, object_pairs_hook=_unique_keys)
        except json.JSONDecodeError as exc:
            raise ValueError(f"The sensor spec is not valid JSON: {exc}") from None
        return cls.from_dict(data)

    def subset(self, names: Iterable[str]) -> SensorSpec:
        names = list(names)
        return SensorSpec(
            {n: self.groups[n] for n in names}, {n: self.costs[n] for n in names}
        )
