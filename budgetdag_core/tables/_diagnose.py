"""What stands between a table and training, column by column and row by row.

:func:`diagnose` lists it as :class:`Problem` records (errors first) with the
fixes of :mod:`._clean` that apply; the app shows one box per problem with a
button per fix, the command line and :meth:`Table.check` refuse on errors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd

from .._bounded_io import short_repr
from ..validation import MAX_ABS_VALUE, MAX_FULL_DAG_SENSORS
from ._leaks import copy_reason, id_reason, strong_columns

MAX_ROWS_NAMED = 5  # rows named per column in a message, then "and N more"
RowNames = Callable[[list[Any]], list[str]]
"""How messages name rows: index labels -> names (see :func:`file_rows`)."""


# ------------------------------------------------------------------- summaries
def is_numeric(series: pd.Series) -> bool:
    """Numeric or boolean dtype (what the estimator accepts as features)."""
    return bool(
        pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)
    )


def missing_mask(series: pd.Series) -> pd.Series:
    """Missing, infinite or too large values (training rejects those three)."""
    mask = series.isna()
    if pd.api.types.is_float_dtype(series):
        values = np.abs(series.to_numpy(dtype=float, na_value=np.nan))
        mask |= np.isinf(values) | (values >= MAX_ABS_VALUE)
    return mask


def column_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per column: dtype, numeric, missing count, distinct values, example."""
    rows = []
    for col in frame.columns:
        s = frame[col]
        present = s.dropna()
        rows.append(
            {
                "column": str(col),
                "type": str(s.dtype),
                "numeric": is_numeric(s),
                "missing": int(missing_mask(s).sum()),
                "distinct": int(present.nunique()),
                "example": str(present.iloc[0]) if len(present) else "",
            }
        )
    return pd.DataFrame(rows)


def class_balance(y: pd.Series) -> pd.DataFrame:
    """Rows and share per class, largest first."""
    counts = y.value_counts(dropna=True)
    return pd.DataFrame(
        {
            "class": counts.index.astype(str),
            "rows": counts.to_numpy(),
            "share": (counts / max(counts.sum(), 1)).to_numpy(),
        }
    )


# ------------------------------------------------------------------- diagnosis
@dataclass(frozen=True)
class Problem:
    """Something to fix (``severity="error"``) or to know before training.

    ``fixes`` names the :func:`apply_fix` operations that address it, applied to
    ``columns``.
    """

    kind: str
    severity: str  # "error" blocks training; "warning" and "info" do not
    message: str
    columns: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()


def listing(items: Iterable[str], limit: int = 8, *, quote: bool = True) -> str:
    """``'a', 'b' and 3 more``: the first ``limit`` items (quoted)."""
    items = list(items)
    shown = ", ".join(repr(i) if quote else str(i) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def diagnose(
    frame: pd.DataFrame,
    label: str | None,
    *,
    cv: int = 5,
    max_sensors: int | None = MAX_FULL_DAG_SENSORS,
    features: Sequence[str] | None = None,
    row_names: RowNames | None = None,
    task: str = "classification",
) -> list[Problem]:
    """What stands between ``frame`` and training with ``label`` as the target.

    Parameters
    ----------
    frame : DataFrame
        The table: the label column and feature columns.
    label : str or None
        The label column; None for a table of features only (no label checks).
    cv : int
        Cross-validation folds planned for training (each class needs ``cv`` rows).
    max_sensors : int or None
        Largest number of sensors for a full DAG; more feature columns than
        this get a note (not a problem: the estimator's default trains them)
        on what one sensor per column makes, and on grouping columns into
        sensors. None: no such note (e.g. where the sensors are set later).
    features : sequence of str, optional
        The feature columns to check (default: every column but the label).
    row_names : callable, optional
        How messages name rows: index labels -> names (default
        :func:`file_rows`: the row of the file, the header being row 1).
        Called with the few rows a message names only.
    task : {"classification", "regression"}
        What the label is (:func:`guess_task` guesses it): classes (one
        class, many classes and rare classes are checked) or a number (it
        must be numeric and vary; no class checks).

    Returns
    -------
    list of Problem
        Errors first, then warnings, then notes. Empty when all is well.
    """
    if isinstance(cv, bool) or not isinstance(cv, Integral) or cv < 1:
        raise ValueError(f"cv must be a positive integer; got {short_repr(cv)}.")
    if task not in ("classification", "regression"):
        raise ValueError(
            f"task must be 'classification' or 'regression'; got {short_repr(task)}."
        )
    if label is not None and label not in frame.columns:
        return [
            Problem(
                "no_label",
                "error",
                f"There is no column {short_repr(label)} in the table.",
            )
        ]
    if features is None:
        features = [str(c) for c in frame.columns if c != label]
    else:
        features = [str(c) for c in features if c in frame.columns and c != label]
    if row_names is None:
        row_names = file_rows
    out: list[Problem] = []
    if not features:
        out.append(
            Problem(
                "no_features",
                "error",
                "The table has no feature columns besides the label.",
            )
        )
    if label is not None:
        out += (
            _target_problems(frame[label], label, row_names)
            if task == "regression"
            else _label_problems(frame[label], label, cv, row_names)
        )
    non_numeric = [c for c in features if not is_numeric(frame[c])]
    if non_numeric:
        out.append(_non_numeric_problem(frame, non_numeric, row_names))
    missing = _missing_problem(frame, features, row_names)
    out += [missing] if missing is not None else []
    out += _size_problems(frame, features, cv, max_sensors)
    constant = [
        c
        for c in features
        if c not in non_numeric and frame[c].nunique(dropna=True) <= 1
    ]
    if constant:
        out.append(
            Problem(
                "constant",
                "info",
                f"Column(s) {listing(constant)} hold a single value and carry no "
                "information; you may drop them.",
                tuple(constant),
                ("drop_columns",),
            )
        )
    out += leak_problems(frame, label, features)
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda p: order[p.severity])


#: The kinds of :class:`Problem` that name columns giving the answer away
#: (row numbers, identifiers, copies of the label): the command line refuses
#: to train on them unless told to keep them.
SUSPECT_KINDS = ("leak",)


def leak_problems(
    frame: pd.DataFrame, label: str | None, features: Sequence[str]
) -> list[Problem]:
    """Row numbers, identifiers and copies of the label among ``features``
    (one ``"leak"`` warning naming each), and columns that predict the label
    alone (a ``"strong_column"`` warning: a strong sensor can be real); each
    with the fix that leaves the columns out."""
    reasons: dict[str, str] = {}
    for col in features:
        why = id_reason(frame[col])
        if why is None and label is not None:
            why = copy_reason(frame[col], frame[label])
            why = (
                None if why is None else why.replace("the label", short_repr(label), 1)
            )
        if why is not None:
            reasons[col] = why
    out = []
    if reasons:
        named = "; ".join(
            f"{short_repr(c)} {why}" for c, why in list(reasons.items())[:8]
        )
        more = f"; and {len(reasons) - 8} more" if len(reasons) > 8 else ""
        out.append(
            Problem(
                "leak",
                "warning",
                f"Column(s) that give the answer away: {named}{more}. A model "
                "that buys them learns the rows or the label itself, not "
                "something that holds for new examples: leave them out (keep "
                "one only if it is a real measurement).",
                tuple(reasons),
                ("leave_out",),
            )
        )
    if label is not None:
        numeric = [c for c in features if c not in reasons and is_numeric(frame[c])]
        strong = strong_columns(frame, label, numeric)
        if strong:
            named = ", ".join(
                f"{short_repr(c)} ({acc:.1%})" for c, acc, _ in strong[:8]
            )
            more = f" and {len(strong) - 8} more" if len(strong) > 8 else ""
            out.append(
                Problem(
                    "strong_column",
                    "warning",
                    f"Column(s) {named}{more} alone predict the label "
                    f"{short_repr(label)} in that share of held-out rows, where always "
                    f"answering the largest class is right in {strong[0][2]:.0%}. A "
                    "strong sensor can be real; check that it is measured before the "
                    "label is known, else leave it out.",
                    tuple(c for c, _, _ in strong),
                    ("leave_out",),
                )
            )
    return out


def file_rows(labels: list[Any]) -> list[str]:
    """Rows named by their number in the file: ``index + 2`` (the header is
    row 1; :func:`~budgetdag_core.read_table` numbers data rows from 0)."""
    return [f"{i + 2}" if isinstance(i, Integral) else str(i) for i in labels]


def where(mask: pd.Series, row_names: RowNames) -> str:
    """``row 3`` or ``rows 3, 4, 7, 9, 12 and 5 more``: the rows of ``mask``."""
    labels = mask.index[mask.to_numpy(dtype=bool)]
    shown = ", ".join(row_names(labels[:MAX_ROWS_NAMED].tolist()))
    left = len(labels) - MAX_ROWS_NAMED
    more = f" and {left} more" if left > 0 else ""
    return ("row " if len(labels) == 1 else "rows ") + shown + more


def _rows_note(row_names: RowNames) -> str:
    return " (the header is row 1)" if row_names is file_rows else ""


#: Distinct values per row above which a whole-number label is read as a
#: number to predict (a count, a score) rather than classes: diabetes'
#: progression has 214 values in 442 rows; letter's 26 classes in 20 000.
REGRESSION_DISTINCT_SHARE = 0.05
#: ... and at least this many distinct values (a 1-to-10 grade stays classes).
REGRESSION_MIN_DISTINCT = 20


def guess_task(y: pd.Series) -> str:
    """``"regression"`` or ``"classification"``: what the label ``y`` looks like.

    A number with a fractional part (some value not whole), or whole numbers
    with many distinct values (at least ``REGRESSION_MIN_DISTINCT`` and more
    than ``REGRESSION_DISTINCT_SHARE`` of the rows), is a regression target;
    text, booleans and few whole numbers are classes. A guess: the app says
    it and lets the user switch.

    Examples
    --------
    >>> import pandas as pd
    >>> guess_task(pd.Series([0.5, 1.25, 3.0]))
    'regression'
    >>> guess_task(pd.Series(["cat", "dog", "cat"]))
    'classification'
    >>> guess_task(pd.Series(list(range(100)) * 2))  # 100 values in 200 rows
    'regression'
    >>> guess_task(pd.Series([1, 2, 3] * 100))
    'classification'
    """
    values = y.dropna()
    if values.empty or not is_numeric(values) or values.dtype == bool:
        return "classification"
    numbers = pd.to_numeric(values, errors="coerce").astype(float)
    if not np.all(np.isfinite(numbers)):
        return "classification"
    if not np.all(numbers == np.round(numbers)):
        return "regression"
    distinct = numbers.nunique()
    many = distinct >= REGRESSION_MIN_DISTINCT
    return (
        "regression"
        if many and distinct > REGRESSION_DISTINCT_SHARE * len(numbers)
        else "classification"
    )


def _target_problems(y: pd.Series, label: str, row_names: RowNames) -> list[Problem]:
    """A regression target: missing values, text, a single value."""
    out = []
    if y.isna().any():
        out.append(
            Problem(
                "label_missing",
                "error",
                f"{int(y.isna().sum())} row(s) have no value in the target column "
                f"{label!r}: {where(y.isna(), row_names)}{_rows_note(row_names)}.",
                (label,),
                ("drop_missing_label",),
            )
        )
    values = y.dropna()
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.isna().any() or values.dtype == bool:
        bad = values[numbers.isna()]
        example = f" (e.g. {bad.iloc[0]!r})" if len(bad) else ""
        out.append(
            Problem(
                "target_not_numeric",
                "error",
                f"The target column {label!r} holds values that are not numbers"
                f"{example}: regression predicts a number. Choose classification, "
                "or another column.",
                (label,),
            )
        )
    elif values.nunique() == 1:
        out.append(
            Problem(
                "one_class",
                "error",
                f"The target column {label!r} has a single value ({values.iloc[0]!r}):"
                " there is nothing to predict. Choose another column.",
                (label,),
            )
        )
    return out


def _label_problems(
    y: pd.Series, label: str, cv: int, row_names: RowNames
) -> list[Problem]:
    """Missing labels, a single class, too many classes, classes too rare."""
    out = []
    n_missing_label = int(y.isna().sum())
    if n_missing_label:
        out.append(
            Problem(
                "label_missing",
                "error",
                f"{n_missing_label} row(s) have no value in the label column "
                f"{short_repr(label)}: "
                f"{where(y.isna(), row_names)}{_rows_note(row_names)}.",
                (label,),
                ("drop_missing_label",),
            )
        )
    counts = y.value_counts(dropna=True)
    if len(counts) == 1:
        out.append(
            Problem(
                "one_class",
                "error",
                f"The label column {short_repr(label)} has a single value "
                f"({short_repr(counts.index[0])}): "
                "a classifier needs at least two classes. Choose another label column.",
                (label,),
            )
        )
    elif len(counts) > 1:
        if len(counts) > max(20, len(y) // 2):
            out.append(
                Problem(
                    "many_classes",
                    "warning",
                    f"The label {short_repr(label)} has {len(counts)} distinct values "
                    f"in {len(y)} rows: it looks like a measurement or an identifier, "
                    "not a class. A number to predict is regression: choose that task.",
                    (label,),
                )
            )
        rare = counts[counts < cv]
        if len(rare):
            out.append(
                Problem(
                    "rare_classes",
                    "error",
                    f"Class(es) {listing(map(str, rare.index))} have fewer than {cv} "
                    f"rows (smallest: {int(rare.min())}); training with {cv} "
                    "cross-validation folds needs at least that many rows per class. "
                    "Drop those rows, or train with fewer folds (cv).",
                    (label,),
                    ("drop_rare_classes",),
                )
            )
    return out


def _non_numeric_problem(
    frame: pd.DataFrame, non_numeric: list[str], row_names: RowNames
) -> Problem:
    """Feature columns that are not numbers, with an example value each and
    the rows of the cells that are not numbers."""
    examples = []
    for c in non_numeric[:8]:
        column = frame[c]
        bad = column.notna() & pd.to_numeric(column, errors="coerce").isna()
        present = column.dropna()
        example = (
            column[bad].iloc[0]
            if bad.any()
            else (present.iloc[0] if len(present) else "")
        )
        at = f" in {where(bad, row_names)}" if bad.any() else ""
        examples.append(f"{short_repr(c)} (e.g. {short_repr(str(example))}){at}")
    more = f" and {len(non_numeric) - 8} more" if len(non_numeric) > 8 else ""
    fixes = ["drop_columns", "one_hot"]
    if any(_mostly_numeric(frame[c]) for c in non_numeric):
        fixes.append("to_numeric")
    return Problem(
        "non_numeric",
        "error",
        f"Feature column(s) {', '.join(examples)}{more} are not numeric"
        f"{_rows_note(row_names)}. "
        "Drop them, or one-hot encode them (one 0/1 column per category)"
        + (
            ", or convert them to numbers (values that are not numbers become missing)."
            if "to_numeric" in fixes
            else "."
        ),
        tuple(non_numeric),
        tuple(fixes),
    )


def _missing_problem(
    frame: pd.DataFrame, features: list[str], row_names: RowNames
) -> Problem | None:
    """Rows with missing, infinite or huge feature values, if any, by column
    and row."""
    masks = {c: missing_mask(frame[c]) for c in features}
    masks = {c: m for c, m in masks.items() if m.any()}
    if not masks:
        return None
    missing = {c: int(m.sum()) for c, m in masks.items()}
    rows = int(pd.concat(list(masks.values()), axis=1).any(axis=1).sum())
    listed = ", ".join(f"{short_repr(c)} ({k})" for c, k in list(missing.items())[:8])
    more = f" and {len(missing) - 8} more columns" if len(missing) > 8 else ""
    located = "; ".join(
        f"{short_repr(c)} {where(m, row_names)}" for c, m in list(masks.items())[:8]
    )
    return Problem(
        "missing",
        "error",
        f"{rows} row(s) have missing, infinite or huge (>= "
        f"{MAX_ABS_VALUE:g}) values, in column(s) "
        f"{listed}{more}: {located}{_rows_note(row_names)}. Drop those rows, or "
        "fill them in (median of the "
        "column; most frequent value for text columns).",
        tuple(missing),
        ("drop_missing_rows", "impute"),
    )


def _size_problems(
    frame: pd.DataFrame, features: list[str], cv: int, max_sensors: int | None
) -> list[Problem]:
    """Too few rows to train reliably; more columns than a full DAG's sensors."""
    out = []
    if 0 < len(frame) < 4 * cv:
        out.append(
            Problem(
                "few_rows",
                "warning",
                f"Only {len(frame)} rows: the classifiers and policies will be "
                "unreliable; results will vary a lot with the random seed.",
            )
        )
    if max_sensors is not None and len(features) > max_sensors:
        out.append(
            Problem(
                "many_columns",
                "info",
                f"{len(features)} feature columns: one sensor per column is more "
                f"than the {max_sensors} sensors of a full DAG, so the default "
                "builds DAGs that buy one sensor per step (a chain, or a DAG "
                "grown where rows gain most). Columns measured together belong "
                "in one sensor (by a shared word in their names, a pattern or "
                "an image grid: the app's Sensors page does it).",
                tuple(features),
            )
        )
    return out


def _mostly_numeric(series: pd.Series, share: float = 0.8) -> bool:
    present = series.dropna()
    if not len(present):
        return False
    return float(pd.to_numeric(present, errors="coerce").notna().mean()) >= share


def has_errors(problems: Iterable[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)
