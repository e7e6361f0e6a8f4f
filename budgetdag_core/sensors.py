"""Sensor specifications: named groups of feature columns with acquisition costs."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from numbers import Real
from pathlib import Path

import numpy as np

from ._bounded_io import (
    atomic_write,
    decode_utf8,
    json_depth,
    read_regular_file,
    short_repr,
)

#: Largest sensor spec accepted as JSON, in characters (text) or bytes (a file):
#: a spec of thousands of sensors and columns takes a few hundred KB.
MAX_SPEC_JSON_CHARS = 1_000_000
#: Deepest nesting of arrays and objects in a spec's JSON: the format needs 3
#: (``{"sensors": [{"columns": [...]}]}``).
MAX_SPEC_JSON_DEPTH = 8
#: Longest integer literal read as an integer: longer ones are read as floats
#: (infinite, so refused by name) where Python's ``int`` would refuse more than
#: 4 300 digits with an error about its own limit.
_MAX_INT_DIGITS = 4000


def _check_text_names(keys: Iterable[object]) -> None:
    """Refuse two sensor names that are the same once written as text (1, "1")."""
    seen: dict[str, object] = {}
    for key in keys:
        name = str(key)
        if name in seen:
            raise ValueError(
                f"Sensor names {short_repr(seen[name])} and {short_repr(key)} are the "
                "same once written as text: rename one."
            )
        seen[name] = key


def _column_list(sensor: object, columns: object) -> list[str]:
    """A sensor's columns as names; one string is one column (not its letters)."""
    if isinstance(columns, str):
        return [columns]
    if not isinstance(columns, Iterable) or isinstance(columns, Mapping | bytes):
        raise ValueError(
            f"The columns of sensor {short_repr(sensor)} must be a list of column "
            f"names; got {type(columns).__name__} {short_repr(columns)}."
        )
    columns = list(columns)
    for c in columns:
        if c is None or isinstance(c, Mapping | list | set | bytes):
            raise ValueError(
                f"Sensor {short_repr(sensor)} lists a column that is not a name: "
                f"{short_repr(c)}."
            )
    return [str(c) for c in columns]


def checked_cost(
    sensor: object, cost: object, what: str = "Cost", *, subject: str | None = None
) -> float:
    """A sensor's cost as a finite, non-negative float, or a ``ValueError``
    naming the sensor (or ``subject``, e.g. the parameter of a cost shared by
    every sensor).

    Numbers (Python or numpy) are accepted; text such as ``"1"`` and booleans
    are refused rather than guessed at, so a cost is a number wherever it is
    read (sessions, traces, saved files).
    """
    subject = f"{what} of sensor {short_repr(sensor)}" if subject is None else subject
    if isinstance(cost, str | bytes):
        raise ValueError(
            f"{subject} is the text {short_repr(cost)}, not a number: write it without "
            "quotes."
        )
    if isinstance(cost, bool | np.bool_) or not isinstance(cost, Real | Decimal):
        raise ValueError(f"{subject} is not a number: {short_repr(cost)}.")
    try:
        value = float(cost)
    except OverflowError:
        raise ValueError(
            f"{subject} is too large for a float64 "
            f"({short_repr(cost)}): rescale the costs (e.g. other units)."
        ) from None
    if not math.isfinite(value):
        raise ValueError(f"{subject} is not finite: {short_repr(cost)}.")
    if value < 0:
        raise ValueError(f"{subject} is negative: {value}.")
    return value


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads`` hook: a key given twice in one JSON object is an error (the
    default keeps the last silently, e.g. one of two same-named sensors)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(
                f"The sensor spec JSON gives the key {short_repr(key)} twice in one "
                "object: names must be unique."
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
        Sensor name -> acquisition cost: a finite, non-negative number (stored
        as a float; text such as ``"1"`` is refused).

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
        if not isinstance(self.groups, Mapping):
            raise ValueError(
                "The sensor groups must be a mapping of sensor name -> columns; got "
                f"{type(self.groups).__name__}."
            )
        if not isinstance(self.costs, Mapping):
            raise ValueError(
                "The sensor costs must be a mapping of sensor name -> cost; got "
                f"{type(self.costs).__name__}."
            )
        groups = {str(k): _column_list(k, v) for k, v in dict(self.groups).items()}
        costs = {str(k): checked_cost(k, v) for k, v in dict(self.costs).items()}
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
                raise ValueError(f"Sensor {short_repr(name)} has no columns.")
            for col in columns:
                if col in owner and owner[col] != name:
                    raise ValueError(
                        f"Column {short_repr(col)} is in two sensors: "
                        f"{short_repr(owner[col])} and {short_repr(name)}. Each column "
                        "may belong to one sensor only."
                    )
                if col in owner:
                    raise ValueError(
                        f"Column {short_repr(col)} is listed twice in "
                        f"{short_repr(name)}."
                    )
                owner[col] = name
        missing = [n for n in self.groups if n not in self.costs]
        if missing:
            raise ValueError(f"No cost given for sensor(s) {missing}.")
        extra = [n for n in self.costs if n not in self.groups]
        if extra:
            raise ValueError(f"Costs given for unknown sensor(s) {extra}.")
        total = sum(checked_cost(name, cost) for name, cost in self.costs.items())
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
                    f"Sensor {short_repr(name)} uses column(s) {absent} that are not "
                    "in the data."
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
            costs = {c: cost[c] for c in columns if c in cost}
        else:
            subject = "The 'cost' parameter of SensorSpec.per_column"
            costs = dict.fromkeys(columns, checked_cost(None, cost, subject=subject))
        return cls({c: [c] for c in columns}, costs)

    @classmethod
    def by_prefix(
        cls, columns: Sequence[str], separator: str = "_", cost: float = 1.0
    ) -> SensorSpec:
        """Group columns by the part of their name before ``separator``."""
        subject = "The 'cost' parameter of SensorSpec.by_prefix"
        cost = checked_cost(None, cost, subject=subject)
        groups: dict[str, list[str]] = {}
        for col in map(str, columns):
            groups.setdefault(col.split(separator, 1)[0], []).append(col)
        return cls(groups, dict.fromkeys(groups, cost))

    def to_dict(self) -> dict:
        return {
            "sensors": [
                {"name": n, "columns": list(self.groups[n]), "cost": self.costs[n]}
                for n in self.names
            ]
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> SensorSpec:
        """A spec from ``{"sensors": [{"name", "columns", "cost"}, ...]}`` (the
        format :meth:`~budgetdag_core.SensorSpec.to_json` writes; a missing cost is
        1) or from
        ``{"groups": {name: columns}, "costs": {name: cost}}``.

        Raises ``ValueError`` naming the entry that is not of the expected type.
        """
        if not isinstance(data, Mapping):
            raise ValueError(
                'A sensor spec must be an object {"sensors": [...]}; got '
                f"{_kind(data)}."
            )
        if "sensors" in data:
            return cls._from_entries(data["sensors"])
        if "groups" in data:
            groups, costs = data["groups"], data.get("costs", {})
            if not isinstance(groups, Mapping):
                raise ValueError(
                    "'groups' must be an object of sensor name -> list of columns; "
                    f"got {_kind(groups)}."
                )
            if not isinstance(costs, Mapping):
                raise ValueError(
                    "'costs' must be an object of sensor name -> cost; got "
                    f"{_kind(costs)}."
                )
            return cls(dict(groups), dict(costs))
        raise ValueError("A sensor spec needs a 'sensors' (or 'groups') entry.")

    @classmethod
    def _from_entries(cls, items: object) -> SensorSpec:
        """The spec of a list of ``{"name", "columns", "cost"}`` entries."""
        if not isinstance(items, list):
            raise ValueError(
                "'sensors' must be a list of {name, columns, cost}; got "
                f"{_kind(items)}."
            )
        groups, costs, entry = {}, {}, {}
        for i, item in enumerate(items):
            if (
                not isinstance(item, Mapping)
                or "name" not in item
                or ("columns" not in item)
            ):
                raise ValueError(f"Sensor entry {i} must have 'name' and 'columns'.")
            name = item["name"]
            if isinstance(name, bool) or not isinstance(name, str | int):
                raise ValueError(
                    f"The name of sensor entry {i} must be text; got "
                    f"{short_repr(name)}."
                )
            name = str(name)
            if name in entry:
                raise ValueError(
                    f"Sensor name {short_repr(name)} is used by entries {entry[name]} "
                    f"and {i}: sensor names must be unique."
                )
            entry[name] = i
            groups[name] = _column_list(name, item["columns"])
            costs[name] = item.get("cost", 1.0)
        return cls(groups, costs)

    def to_json(self, path: str | Path | None = None) -> str:
        """Serialise to JSON; also write to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            with atomic_write(path, "w") as fh:
                fh.write(text)
        return text

    @classmethod
    def from_json(cls, text: str | bytes) -> SensorSpec:
        """A spec from JSON text (as :meth:`to_json` writes it).

        The text is never used as a path: to read a file use :meth:`from_file`.
        A leading byte-order mark and white space are ignored; bytes are read
        as UTF-8.

        Raises
        ------
        ValueError
            Naming the problem: text that is not a JSON object (an array, a
            file name, ...), larger than ``MAX_SPEC_JSON_CHARS``, nested
            deeper than ``MAX_SPEC_JSON_DEPTH``, not valid JSON, or a spec
            with entries of the wrong type or costs that are not finite,
            non-negative numbers.
        """
        if isinstance(text, os.PathLike):
            raise ValueError(
                "SensorSpec.from_json reads JSON text, not a path: use "
                "SensorSpec.from_file(path) to read a file."
            )
        if isinstance(text, bytes | bytearray):
            if len(text) > 4 * MAX_SPEC_JSON_CHARS:
                _too_large(len(text), "bytes")
            text = decode_utf8(bytes(text), "sensor spec")
        if not isinstance(text, str):
            raise ValueError(
                f"SensorSpec.from_json reads JSON text; got {type(text).__name__}."
            )
        return cls.from_dict(_parse_spec_json(text))

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> SensorSpec:
        """A spec from a JSON file (UTF-8, as :meth:`to_json` writes it).

        Only a regular file is read (a directory, FIFO or device is refused),
        and at most ``MAX_SPEC_JSON_CHARS`` bytes of it; its content is
        checked as in :meth:`from_json`. Errors are ``ValueError`` naming the
        file.
        """
        data = read_regular_file(path, MAX_SPEC_JSON_CHARS, "sensor spec file")
        try:
            return cls.from_json(data)
        except ValueError as exc:
            raise ValueError(f"The sensor spec file {str(path)!r}: {exc}") from None

    def subset(self, names: Iterable[str]) -> SensorSpec:
        names = list(names)
        return SensorSpec(
            {n: self.groups[n] for n in names}, {n: self.costs[n] for n in names}
        )


def _kind(value: object) -> str:
    """What a JSON value is, in words (for messages)."""
    names = {list: "an array", dict: "an object", str: "text", bool: "true/false"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return f"{name} {short_repr(value)}"
    if value is None:
        return "null"
    return f"{type(value).__name__} {short_repr(value)}"


def _too_large(size: int, unit: str) -> None:
    raise ValueError(
        f"The sensor spec is too large ({size:,} {unit}; at most "
        f"{MAX_SPEC_JSON_CHARS:,} accepted)."
    )


def _parse_int(digits: str) -> int | float:
    """JSON integers, with very long ones read as floats (see _MAX_INT_DIGITS)."""
    return int(digits) if len(digits) <= _MAX_INT_DIGITS else float(digits)


def _parse_spec_json(text: str) -> dict:
    """The JSON object of a sensor spec's text, checked before it is parsed."""
    if len(text) > MAX_SPEC_JSON_CHARS:
        _too_large(len(text), "characters")
    body = text.lstrip("\ufeff \t\r\n")
    if not body:
        raise ValueError("The sensor spec is empty: expected a JSON object.")
    if not body.startswith("{"):
        if body.startswith("["):
            raise ValueError(
                "The sensor spec is a JSON array; expected an object "
                '{"sensors": [{"name", "columns", "cost"}, ...]}.'
            )
        raise ValueError(
            f"The sensor spec does not start with '{{' (it starts with "
            f"{short_repr(body[:20])}): expected a JSON object. SensorSpec.from_json "
            "reads JSON text; to read a file use SensorSpec.from_file(path)."
        )
    depth = json_depth(body)
    if depth > MAX_SPEC_JSON_DEPTH:
        raise ValueError(
            f"The sensor spec JSON is nested {depth} levels deep; a spec needs 3 "
            f"(at most {MAX_SPEC_JSON_DEPTH} accepted)."
        )
    try:
        return json.loads(body, object_pairs_hook=_unique_keys, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise ValueError(f"The sensor spec is not valid JSON: {exc}") from None
