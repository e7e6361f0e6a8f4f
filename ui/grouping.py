"""Group feature columns into sensors by their names or as an image (no Streamlit).

The Sensors page previews a :class:`Grouping` live while the user types and
turns it into a :class:`SensorSpec` on "Apply". Four ways:

- a shared **word** anywhere in the name (``mean radius``, ``radius error``,
  ``worst radius``: words ``mean``, ``error``, ``worst`` shared by 10 columns
  each make 3 sensors);
- the name's **prefix** or **suffix** (first or last word);
- a **pattern** (regular expression) the user types: columns with the same
  match (or first capture group) form one sensor;
- an **image grid**: columns that form an h x w image (``pixel_0_0 ..
  pixel_7_7``, ``pixel_0 .. pixel_63``, or a square number of columns in
  row-major order) cut into blocks x blocks rectangles (2: the 4 quadrants).

Columns a rule does not place become one sensor each, and the grouping says
which (:attr:`Grouping.leftover`): nothing is dropped silently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from budgetdag_core import SensorSpec

GROUP_MODES = {
    "word": "Shared word",
    "prefix": "Prefix",
    "suffix": "Suffix",
    "pattern": "Pattern (regex)",
    "grid": "Image grid",
}
"""Grouping modes and their labels on the Sensors page."""

_ANY_SEPARATOR = re.compile(r"[\W_]+")
_TWO_INDICES = re.compile(r"^(.*?)(\d+)\D+(\d+)$")
_ONE_INDEX = re.compile(r"^(.*?)(\d+)$")
_QUADRANTS = ("top-left", "top-right", "bottom-left", "bottom-right")


@dataclass
class Grouping:
    """Sensors (name -> columns) proposed by a rule, in column order.

    ``leftover`` lists the columns the rule did not place; each is a sensor of
    its own (named by the column) in ``groups``.
    """

    groups: dict[str, list[str]]
    leftover: list[str] = field(default_factory=list)

    @property
    def n_sensors(self) -> int:
        return len(self.groups)

    def to_spec(self, cost: float = 1.0) -> SensorSpec:
        """The grouping as a spec where every sensor costs ``cost``."""
        return SensorSpec(self.groups, dict.fromkeys(self.groups, float(cost)))


def words(name: str, separator: str = "") -> list[str]:
    """The words of a column name, split at ``separator``.

    An empty separator splits at any run of spaces, punctuation and
    underscores.

    Examples
    --------
    >>> words("mean fractal dimension")
    ['mean', 'fractal', 'dimension']
    >>> words("band1_x"), words("a.b_c", ".")
    (['band1', 'x'], ['a', 'b_c'])
    """
    parts = name.split(separator) if separator else _ANY_SEPARATOR.split(name)
    return [p for p in parts if p]


def group_by_name(
    columns: Sequence[str],
    mode: str = "word",
    *,
    separator: str = "",
    pattern: str = "",
) -> Grouping:
    """Group columns by a shared token of their names.

    Parameters
    ----------
    columns : sequence of str
        The feature columns, in order.
    mode : {"word", "prefix", "suffix", "pattern"}
        ``"word"``: repeatedly take the word (case-insensitive) shared by the
        most columns not yet placed; ``"prefix"``/``"suffix"``: the first/last
        word; ``"pattern"``: the first match of the regular expression
        ``pattern`` (its first capture group if it has one).
    separator : str
        Where words split (empty: any space, punctuation or underscore).
    pattern : str
        The regular expression of ``mode="pattern"``.

    Returns
    -------
    Grouping

    Raises
    ------
    ValueError
        For an unknown mode, no columns, or an empty or invalid pattern.

    Examples
    --------
    >>> cols = ["mean radius", "mean area", "radius error", "area error"]
    >>> group_by_name(cols).groups
    {'mean': ['mean radius', 'mean area'], 'error': ['radius error', 'area error']}
    >>> group_by_name(cols, "pattern", pattern="(mean|error)").n_sensors
    2
    """
    columns = [str(c) for c in columns]
    if not columns:
        raise ValueError("There are no columns to group.")
    if mode == "word":
        keys = _shared_words(columns, separator)
    elif mode in ("prefix", "suffix"):
        at = 0 if mode == "prefix" else -1
        keys = [(words(c, separator) or [c])[at] for c in columns]
    elif mode == "pattern":
        keys = _pattern_keys(columns, pattern)
    else:
        raise ValueError(
            f"Unknown grouping mode {mode!r}; use one of "
            f"{[m for m in GROUP_MODES if m != 'grid']}."
        )
    return _from_keys(columns, keys)


def _shared_words(
    columns: list[str], separator: str, *, skip_numbers: bool = False
) -> list[str | None]:
    """Greedy cover: the word in most unplaced columns names their sensor
    (``skip_numbers``: not a word of digits only, as indices are)."""
    col_words = [
        [w for w in words(c, separator) if not (skip_numbers and w.isdigit())]
        for c in columns
    ]
    lowered = [{w.lower() for w in ws} for ws in col_words]
    spelling: dict[str, str] = {}
    for ws in col_words:
        for w in ws:
            spelling.setdefault(w.lower(), w)
    order = list(spelling)  # ties go to the word met first
    keys: list[str | None] = [None] * len(columns)
    open_rows = set(range(len(columns)))
    while open_rows:
        counts = dict.fromkeys(order, 0)
        for i in open_rows:
            for w in lowered[i]:
                counts[w] += 1
        best = max(order, key=lambda w: counts[w])  # max keeps the first of ties
        if counts[best] < 2:
            break  # no word is shared any more: the rest are sensors of their own
        for i in sorted(open_rows):
            if best in lowered[i]:
                keys[i] = spelling[best]
                open_rows.discard(i)
    return keys


def _pattern_keys(columns: list[str], pattern: str) -> list[str | None]:
    if not pattern:
        raise ValueError("Type a pattern (regular expression), e.g. (mean|error).")
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ValueError(
            f"The pattern {pattern!r} is not a valid regular expression: {exc}."
        ) from None
    keys: list[str | None] = []
    for col in columns:
        found = regex.search(col)
        if found is None:
            keys.append(None)
            continue
        key = next((g for g in found.groups() if g), None) if regex.groups else None
        keys.append(key or found.group(0) or None)
    return keys


def _from_keys(columns: list[str], keys: Sequence[str | None]) -> Grouping:
    """Sensors from one key per column; a column without a key stands alone."""
    groups: dict[str, list[str]] = {}
    for col, key in zip(columns, keys, strict=True):
        if key is not None:
            groups.setdefault(key, []).append(col)
    leftover = [c for c, k in zip(columns, keys, strict=True) if k is None]
    for col in leftover:
        groups[_free_name(col, groups)] = [col]
    return Grouping(_in_column_order(groups, columns), leftover)


def _free_name(name: str, taken: dict[str, list[str]]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name} ({n})" in taken:
        n += 1
    return f"{name} ({n})"


def _in_column_order(
    groups: dict[str, list[str]], columns: list[str]
) -> dict[str, list[str]]:
    """Sensors ordered by their first column, as the data lists them."""
    position = {c: i for i, c in enumerate(columns)}
    return dict(sorted(groups.items(), key=lambda kv: position[kv[1][0]]))


def image_positions(columns: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The columns that form an image, as an h x w array of names, and the rest.

    Tried in turn: names ending in two numbers (``pixel_3_5``: row 3, column
    5) that fill a full rectangle; names ending in one number (``pixel_29``)
    numbered 0..n-1 or 1..n with n a square, row-major; else all columns in
    order when their number is a square.

    Raises
    ------
    ValueError
        When no columns form an image.

    Examples
    --------
    >>> grid, rest = image_positions([f"px{i}" for i in range(4)] + ["id"])
    >>> grid.tolist(), rest
    ([['px0', 'px1'], ['px2', 'px3']], ['id'])
    """
    columns = [str(c) for c in columns]
    for finder in (_two_index_grid, _one_index_grid):
        found = finder(columns)
        if found is not None:
            used = set(found.ravel().tolist())
            return found, [c for c in columns if c not in used]
    side = math.isqrt(len(columns))
    if len(columns) >= 4 and side * side == len(columns):
        return np.array(columns, dtype=object).reshape(side, side), []
    raise ValueError(
        f"The {len(columns)} columns do not form an image: name them like "
        "pixel_0_0 .. pixel_7_7 (row, column) or pixel_0 .. pixel_63, or use a "
        "square number of columns (e.g. 64 for 8 x 8) in row-major order."
    )


def _stem_groups(
    columns: list[str], regex: re.Pattern[str]
) -> dict[str, list[tuple[str, tuple[int, ...]]]]:
    """Columns matching ``regex`` by name stem, with their numbers."""
    stems: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for col in columns:
        found = regex.match(col)
        if found is not None:
            numbers = tuple(int(g) for g in found.groups()[1:])
            stems.setdefault(found.group(1), []).append((col, numbers))
    return stems


def _two_index_grid(columns: list[str]) -> np.ndarray | None:
    for members in sorted(
        _stem_groups(columns, _TWO_INDICES).values(), key=len, reverse=True
    ):
        rows = sorted({r for _, (r, _c) in members})
        cols = sorted({c for _, (_r, c) in members})
        cells = {rc: name for name, rc in members}
        if len(rows) * len(cols) == len(cells) == len(members) >= 4:
            r_at = {r: i for i, r in enumerate(rows)}
            c_at = {c: j for j, c in enumerate(cols)}
            grid = np.empty((len(rows), len(cols)), dtype=object)
            for (r, c), name in cells.items():
                grid[r_at[r], c_at[c]] = name
            return grid
    return None


def _one_index_grid(columns: list[str]) -> np.ndarray | None:
    for members in sorted(
        _stem_groups(columns, _ONE_INDEX).values(), key=len, reverse=True
    ):
        n = len(members)
        side = math.isqrt(n)
        numbers = sorted(k for _, (k,) in members)
        first = numbers[0] if numbers else 0
        if n >= 4 and side * side == n and numbers == list(range(first, first + n)):
            by_number = {k: name for name, (k,) in members}
            ordered = [by_number[first + i] for i in range(n)]
            return np.array(ordered, dtype=object).reshape(side, side)
    return None


def image_grid(columns: Sequence[str], blocks: int = 2) -> Grouping:
    """Cut the image the columns form into ``blocks`` x ``blocks`` sensors.

    Blocks are near-equal rectangles (an 8 x 8 image with ``blocks=3`` gets
    rows 3, 3, 2); ``blocks=2`` names them by quadrant (``top-left``, ...),
    else ``r0c0``, ``r0c1``, ... (row and column of the block, from 0 like
    the columns' own indices). Columns outside the image are sensors of
    their own.

    Raises
    ------
    ValueError
        When the columns form no image, or ``blocks`` is not between 1 and the
        image's smaller side.

    Examples
    --------
    >>> cols = [f"pixel_{r}_{c}" for r in range(4) for c in range(4)]
    >>> g = image_grid(cols, 2)
    >>> list(g.groups), g.groups["top-left"]
    (['top-left', 'top-right', 'bottom-left', 'bottom-right'], \
['pixel_0_0', 'pixel_0_1', 'pixel_1_0', 'pixel_1_1'])
    """
    grid, rest = image_positions(columns)
    h, w = grid.shape
    if isinstance(blocks, bool) or not isinstance(blocks, int | np.integer):
        raise TypeError(f"blocks must be an integer; got {blocks!r}.")
    if not 1 <= blocks <= min(h, w):
        raise ValueError(
            f"blocks must be between 1 and {min(h, w)} for a {h} x {w} image; "
            f"got {blocks}."
        )
    row_parts = np.array_split(np.arange(h), blocks)
    col_parts = np.array_split(np.arange(w), blocks)
    groups: dict[str, list[str]] = {}
    for i, rows in enumerate(row_parts):
        for j, cols in enumerate(col_parts):
            name = _QUADRANTS[2 * i + j] if blocks == 2 else f"r{i}c{j}"
            groups[name] = grid[np.ix_(rows, cols)].ravel().tolist()
    for col in rest:
        groups[_free_name(col, groups)] = [col]
    return Grouping(groups, list(rest))


def propose(
    columns: Sequence[str],
    mode: str,
    *,
    separator: str = "",
    pattern: str = "",
    blocks: int = 2,
) -> Grouping:
    """The grouping of ``mode`` (a key of :data:`GROUP_MODES`) for ``columns``."""
    if mode == "grid":
        return image_grid(columns, int(blocks))
    return group_by_name(columns, mode, separator=separator, pattern=pattern)


#: Most sensors of a suggested spec: the library's many-sensor default trains
#: 64 one-pixel sensors (digits, 1 347 rows) in about 20 s on 2 cores.
MAX_SUGGESTED_SENSORS = 64
#: A named image grid is suggested from this many cells (4 x 4) on.
MIN_IMAGE_CELLS = 16
#: A name grouping is suggested when at most this share of the columns is
#: left over as sensors of their own (else the names share words by chance:
#: wine's "ash" and "alcalinity of ash").
MAX_LEFTOVER_SHARE = 0.1
_PIXEL_STEM = re.compile(r"pix|px", re.IGNORECASE)


@dataclass(frozen=True)
class Suggestion:
    """A suggested spec (every sensor of cost 1) and how it was made, in words."""

    spec: SensorSpec
    how: str


def _named_image(columns: list[str]) -> np.ndarray | None:
    """The image named columns form (``pixel_3_5``, or ``pixel_29`` with a
    pixel-like stem), or None: a square number of plain columns is no image."""
    grid = _two_index_grid(columns)
    if grid is None:
        grid = _one_index_grid(columns)
        stem = _ONE_INDEX.match(str(grid.flat[0])).group(1) if grid is not None else ""
        if grid is not None and not _PIXEL_STEM.search(stem):
            grid = None
    return grid


def _image_suggestion(columns: list[str]) -> Suggestion | None:
    grid = _named_image(columns)
    # Most columns are the image's; the others (an id, an age) stand alone.
    if grid is None or grid.size < max(MIN_IMAGE_CELLS, len(columns) / 2):
        return None
    h, w = grid.shape
    blocks = min(h, w, math.isqrt(MAX_SUGGESTED_SENSORS))
    found = image_grid(columns, blocks)
    return Suggestion(found.to_spec(), _image_words(h, w, blocks))


def _image_words(h: int, w: int, blocks: int) -> str:
    if blocks == h == w:
        return f"one sensor per pixel of the {h} x {w} image"
    return f"the {h} x {w} image cut into {blocks} x {blocks} blocks"


def _name_suggestion(
    columns: list[str], together: dict[str, list[str]]
) -> Suggestion | None:
    keys = _shared_words(columns, "", skip_numbers=True)
    found = _from_keys(columns, keys)
    groups = found.groups
    if not 2 <= found.n_sensors <= MAX_SUGGESTED_SENSORS:
        return None
    if len(found.leftover) > MAX_LEFTOVER_SHARE * len(columns):
        return None
    owner = {col: name for name, cols in groups.items() for col in cols}
    if any(len({owner[c] for c in cols}) > 1 for cols in together.values()):
        return None  # it would split a one-hot encoded column
    named = [name for name, cols in groups.items() if name not in found.leftover]
    shown = ", ".join(named[:6]) + (", ..." if len(named) > 6 else "")
    return Suggestion(found.to_spec(), f"grouped by a word the names share ({shown})")


def suggest_spec(
    columns: Sequence[str], *, together: dict[str, list[str]] | None = None
) -> Suggestion:
    """The sensors a person would pick for new data, every one of cost 1.

    First a named image (``pixel_0_0 .. pixel_7_7``) of most columns: its
    pixels, or blocks of them when there are more than
    :data:`MAX_SUGGESTED_SENSORS`, the other columns one sensor each; then a
    word most column names share (``mean radius``, ``radius error``,
    ``worst radius``: mean, error, worst) when it places nearly every column
    and keeps each ``together`` group (the 0/1 columns one-hot encoding made
    from one column) whole; else one sensor per column, each ``together``
    group one sensor named by its key. Never arbitrary blocks of columns.

    Examples
    --------
    >>> suggest_spec(["age", "color_red", "color_blue"],
    ...              together={"color": ["color_red", "color_blue"]}).spec.groups
    {'age': ['age'], 'color': ['color_red', 'color_blue']}
    >>> cols = [f"{w} {f}" for w in ("mean", "error") for f in ("radius", "area")]
    >>> suggest_spec(cols).how
    'grouped by a word the names share (mean, error)'
    """
    columns = [str(c) for c in columns]
    if not columns:
        raise ValueError("There are no columns to group.")
    together = {str(k): [str(c) for c in v] for k, v in (together or {}).items()}
    found = _image_suggestion(columns) or _name_suggestion(columns, together)
    if found is not None:
        return found
    groups: dict[str, list[str]] = {}
    grouped = {c: k for k, cols in together.items() for c in cols}
    for col in columns:
        name = grouped.get(col, col)
        if name != col and name in columns:  # the group's name is taken by a column
            name = col
        groups.setdefault(name, []).append(col)
    how = "one sensor per column" + (
        " (one-hot encoded columns together)"
        if any(len(cols) > 1 for cols in groups.values())
        else ""
    )
    return Suggestion(SensorSpec(groups, dict.fromkeys(groups, 1.0)), how)


def describe_grouping(spec: SensorSpec, columns: Sequence[str]) -> str | None:
    """How ``spec`` groups ``columns``, when it is a grouping this module
    makes (one sensor per column, an image's pixels or blocks, a shared
    word); None for any other (e.g. the user's own)."""
    columns = [str(c) for c in columns]
    groups = {name: list(cols) for name, cols in spec.groups.items()}
    if all(len(cols) == 1 for cols in groups.values()):
        return "one sensor per column"
    grid = _named_image(columns)
    if grid is not None:
        h, w = grid.shape
        for blocks in range(1, min(h, w) + 1):
            if image_grid(columns, blocks).groups == groups:
                return _image_words(h, w, blocks)
    named = _name_suggestion(columns, {})
    if named is not None and dict(named.spec.groups) == groups:
        return named.how
    return None
