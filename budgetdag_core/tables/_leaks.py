"""Columns that make a model look better than it will be: row numbers and
identifiers, copies of the label, one column that predicts the label alone.

Plain findings (column, words) for :func:`~budgetdag_core.tables.diagnose`,
which turns them into problems, and for the label guess of
:func:`~budgetdag_core.tables.suggest_label` (never an identifier).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

#: Fewest rows with a value before a column of distinct values counts as an
#: identifier or a column as a copy of the label: in a handful of rows
#: distinct or matching values happen by chance.
MIN_SUSPECT_ROWS = 20
#: Share of rows in which a column and the label must match one to one
#: (each value of one goes with one value of the other) to count as a copy.
COPY_AGREEMENT = 0.99
#: A numeric label with many values: a feature this correlated is a copy.
COPY_CORRELATION = 0.999
#: One column predicting this share of held-out rows alone is worth a
#: warning (a strong sensor can be real) ...
STRONG_ACCURACY = 0.99
#: ... when the largest class holds at most this share of the rows (a column
#: that beats always answering it by far).
STRONG_MAX_MAJORITY = 0.9
#: Most classes of a label for the strong-column check (beyond: a
#: measurement, not a class).
STRONG_MAX_CLASSES = 20
#: The strong-column check's work is bounded: at most this many rows (a
#: seeded sample) ...
STRONG_MAX_ROWS = 2000
#: ... and the first this many numeric feature columns (a tree for each whose
#: sorted values change class rarely).
STRONG_MAX_COLUMNS = 1000
#: Depth of the one-column tree: up to 16 intervals of the column's values.
STRONG_DEPTH = 4
#: Whole numbers in this range are read as years, never guessed as a label.
YEARS = (1800, 2100)


def _integral(values: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))


def id_reason(series: pd.Series) -> str | None:
    """Why ``series`` looks like row numbers or an identifier, or None.

    A different value in every row (of at least :data:`MIN_SUSPECT_ROWS`
    with a value): whole numbers (row numbers when they run ``lo .. lo + n
    - 1``, in file order or shuffled) or text. Distinct decimals are
    ordinary measurements and are not flagged.
    """
    present = series.dropna()
    n = len(present)
    if n < MIN_SUSPECT_ROWS or present.nunique() < n:
        return None
    if pd.api.types.is_bool_dtype(present):
        return None
    if pd.api.types.is_numeric_dtype(present):
        values = present.to_numpy(dtype=float)
        if not _integral(values):
            return None
        low, high = int(values.min()), int(values.max())
        if high - low + 1 == n:
            if bool(np.all(np.diff(values) > 0)):
                first = f"{low}, {low + 1}, {low + 2}"
                return f"numbers the rows ({first}, … in file order)"
            return f"holds each whole number from {low} to {high} once (row numbers)"
        # Distinct whole numbers with gaps can be a real measurement (an
        # income, a count on few rows): an identifier only where they grow
        # row after row or the column is named like one.
        if bool(np.all(np.diff(values) > 0)) or id_like_name(series.name):
            return "holds a different whole number in every row (an identifier)"
        return None
    return "holds a different text in every row (an identifier)"


#: Column names (lower case, without ``_``, ``-``, ``.`` and spaces) that
#: name an identifier.
ID_NAMES = frozenset(
    {"id", "index", "idx", "key", "rowid", "rownames", "rowname", "rownumber",
     "row", "unnamed0", "uuid", "guid", "recordid", "sampleid", "patientid"}
)  # fmt: skip


def id_like_name(name: object) -> bool:
    """Whether a column's name says it is an identifier (``id``,
    ``patient_id``, ``Unnamed: 0``, ...).

    Examples
    --------
    >>> id_like_name("Patient_ID"), id_like_name("Unnamed: 0"), id_like_name("acid")
    (True, True, False)
    >>> id_like_name("sampleId"), id_like_name("width")
    (True, False)
    """
    text = str(name)
    if re.sub(r"[\s_.:\-]", "", text.lower()) in ID_NAMES:
        return True
    # The last word is "id": "patient_id", "PatientID", "sample id" (not "acid").
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", text)
    return bool(words) and words[-1].lower() == "id"


def _codes(series: pd.Series) -> np.ndarray:
    """Category codes of ``series``' values (numbers and their text alike)."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        return pd.factorize(series.to_numpy(dtype=float))[0]
    return pd.factorize(series.astype(str).str.strip())[0]


def copy_reason(feature: pd.Series, label: pd.Series) -> str | None:
    """Why ``feature`` looks like a copy of ``label``, or None.

    Their values match one to one (each value of one goes with a single
    value of the other: equal, or the classes renamed) in at least
    :data:`COPY_AGREEMENT` of the rows where both have a value; or, for a
    numeric label with many values, a correlation of at least
    :data:`COPY_CORRELATION`.
    """
    both = feature.notna() & label.notna()
    n = int(both.sum())
    if n < MIN_SUSPECT_ROWS:
        return None
    x, y = feature[both], label[both]
    if y.nunique() < 2:
        return None
    numeric = all(
        pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        for s in (x, y)
    )
    if numeric:
        equal = float((x.to_numpy(dtype=float) == y.to_numpy(dtype=float)).mean())
    else:
        equal = float((x.astype(str).str.strip() == y.astype(str).str.strip()).mean())
    if equal >= COPY_AGREEMENT:
        return f"equals the label in {equal:.0%} of rows"
    xc, yc = _codes(x), _codes(y)
    n_x, n_y = int(xc.max()) + 1, int(yc.max()) + 1
    if max(n_x, n_y) <= n // 2:  # values repeat: a renaming can be told apart
        table = np.bincount(xc * n_y + yc, minlength=n_x * n_y).reshape(n_x, n_y)
        agreement = min(table.max(axis=1).sum(), table.max(axis=0).sum()) / n
        if agreement >= COPY_AGREEMENT:
            return (
                f"is the label under other names (one value per class in "
                f"{agreement:.0%} of rows)"
            )
    if numeric and n_y > STRONG_MAX_CLASSES:
        xv, yv = x.to_numpy(dtype=float), y.to_numpy(dtype=float)
        if np.all(np.isfinite(xv)) and xv.std() > 0 and yv.std() > 0:
            r = float(np.corrcoef(xv, yv)[0, 1])
            if abs(r) >= COPY_CORRELATION:
                return f"follows the label almost exactly (correlation {r:.4f})"
    return None


def strong_columns(
    frame: pd.DataFrame, label: str, features: Sequence[str]
) -> list[tuple[str, float, float]]:
    """Numeric feature columns that predict ``label`` alone: (column,
    held-out accuracy, largest class's share).

    A tree of depth :data:`STRONG_DEPTH` on the one column is fitted on a
    seeded half of the rows (at most :data:`STRONG_MAX_ROWS`) and scored on
    the other half; a column is listed when it reaches
    :data:`STRONG_ACCURACY` while the largest class holds at most
    :data:`STRONG_MAX_MAJORITY` of the rows. Deterministic.
    """
    from sklearn.tree import DecisionTreeClassifier

    y_all = frame[label]
    present = y_all.notna()
    counts = y_all[present].value_counts()
    if not 2 <= len(counts) <= STRONG_MAX_CLASSES or present.sum() < 2 * (
        MIN_SUSPECT_ROWS
    ):
        return []
    majority = float(counts.iloc[0] / counts.sum())
    if majority > STRONG_MAX_MAJORITY:
        return []
    rng = np.random.default_rng(0)
    rows = rng.permutation(np.flatnonzero(present.to_numpy()))[:STRONG_MAX_ROWS]
    half = len(rows) // 2
    y = _codes(y_all.iloc[rows]).astype(int)
    numeric = [c for c in features if is_number(frame[c])][:STRONG_MAX_COLUMNS]
    if not numeric:
        return []
    X = frame[numeric].iloc[rows].to_numpy(dtype=float, na_value=np.nan)
    out = []
    for j in np.flatnonzero(_few_changes(X[:half], y[:half])):
        x = X[:, j]
        # The tree reads float32: beyond its range a finite value is no use.
        usable = np.isfinite(x) & (np.abs(x) <= np.finfo(np.float32).max)
        fit, test = usable[:half], usable[half:]
        if fit.sum() < MIN_SUSPECT_ROWS or test.sum() < MIN_SUSPECT_ROWS:
            continue
        tree = DecisionTreeClassifier(max_depth=STRONG_DEPTH, random_state=0)
        tree.fit(x[:half][fit].reshape(-1, 1), y[:half][fit])
        guess = tree.predict(x[half:][test].reshape(-1, 1))
        accuracy = float((guess == y[half:][test]).mean())
        if accuracy >= STRONG_ACCURACY:
            out.append((str(numeric[j]), accuracy, majority))
    return out


def is_number(series: pd.Series) -> bool:
    """A numeric or boolean column (what a tree can split)."""
    return bool(pd.api.types.is_numeric_dtype(series))


def _few_changes(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Columns of ``X`` along whose sorted values the label ``y`` changes
    rarely enough that a tree of :data:`STRONG_DEPTH` may be nearly always
    right (at most its leaves' boundaries, and two per row it gets wrong
    when 2 % of rows are): the strong-column check fits trees on those only.
    Ties are ordered by label (the fewest changes)."""
    by_label = np.argsort(y, kind="stable")
    Xs, ys = X[by_label], y[by_label]
    order = np.argsort(Xs, axis=0, kind="stable")
    changes = (np.diff(ys[order], axis=0) != 0).sum(axis=0)
    allowed = 2**STRONG_DEPTH + 2 * int(np.ceil(0.02 * len(y)))
    return (changes <= allowed) | np.isnan(X).any(axis=0)


def year_like(series: pd.Series) -> bool:
    """Whole numbers, all within :data:`YEARS`: a year, not a class."""
    present = series.dropna()
    if not len(present) or not pd.api.types.is_numeric_dtype(present):
        return False
    if pd.api.types.is_bool_dtype(present):
        return False
    values = present.to_numpy(dtype=float)
    return _integral(values) and bool(
        values.min() >= YEARS[0] and values.max() <= YEARS[1]
    )
