"""Cleaning fixes for the problems :func:`diagnose` finds, and train/test splits.

A cleaning recipe is a list of :class:`Fix`, replayed on the raw table by
:func:`apply_fixes`, so a second (test) file gets exactly the same treatment.
Every fix keeps the row index (rows are tracked by it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._bounded_io import short_repr
from ._diagnose import Problem, is_numeric, listing, missing_mask

MANY_CATEGORIES = 50
"""Most categories :func:`one_hot` encodes in one column."""


FIXES = {
    "drop_columns": "Drop the columns",
    "leave_out": "Leave them out of training",
    "one_hot": "One-hot encode (one 0/1 column per category)",
    "to_numeric": "Convert to numbers (non-numbers become missing)",
    "drop_missing_rows": "Drop rows with missing values",
    "impute": "Fill in missing values (median, or most frequent value)",
    "drop_missing_label": "Drop rows without a label",
    "drop_rare_classes": "Drop rows of the rare classes",
}


@dataclass(frozen=True)
class Fix:
    """One cleaning step: an operation of :data:`FIXES` on some columns."""

    op: str
    columns: tuple[str, ...] = ()
    label: str | None = None
    min_count: int = 0

    def describe(self) -> str:
        what = FIXES.get(self.op, self.op)
        cols = f": {listing(self.columns, 5)}" if self.columns else ""
        if self.op == "drop_rare_classes":
            cols = f" (fewer than {self.min_count} rows)"
        if self.op == "leave_out":
            what = "Leave out of training"
        return what + cols


def one_hot(
    frame: pd.DataFrame,
    columns: Sequence[str],
    *,
    max_categories: int = MANY_CATEGORIES,
) -> pd.DataFrame:
    """Replace each column by 0/1 columns ``<column>_<category>``.

    Missing values get all zeros. Raises ``ValueError`` for a column with more than
    ``max_categories`` distinct values (likely an identifier: drop it instead).
    """
    for col in columns:
        k = frame[col].nunique(dropna=True)
        if k > max_categories:
            raise ValueError(
                f"Column {short_repr(col)} has {k} distinct values: one-hot "
                f"encoding would add {k} columns (limit {max_categories}). It is "
                "probably an identifier or free text: drop it instead."
            )
    encoded = pd.get_dummies(
        frame[list(columns)].astype("string"), prefix_sep="_", dtype=float
    )
    clash = [c for c in encoded.columns if c in frame.columns]
    if clash:
        raise ValueError(
            f"One-hot encoding would create column(s) {listing(clash)} that already "
            "exist: rename them first."
        )
    out = frame.drop(columns=list(columns))
    return pd.concat([out, encoded], axis=1)


def impute(
    frame: pd.DataFrame, columns: Sequence[str], *, fit_rows: pd.Series | None = None
) -> pd.DataFrame:
    """Fill missing (and infinite or huge) values: median of numeric columns, most
    frequent value otherwise, computed on ``fit_rows`` (a boolean mask; default all
    rows)."""
    out = frame.copy()
    for col in columns:
        s = out[col]
        if pd.api.types.is_float_dtype(s):
            s = s.mask(missing_mask(s))
        ref = s if fit_rows is None else s[fit_rows.reindex(s.index, fill_value=False)]
        ref = ref.dropna()
        if not len(ref):
            raise ValueError(
                f"Column {short_repr(col)} has no values to impute from: drop the "
                "column."
            )
        fill = ref.median() if is_numeric(s) else ref.mode().iloc[0]
        out[col] = s.fillna(fill)
    return out


def drop_missing_rows(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Rows with a missing, infinite or huge value in any of ``columns`` removed."""
    if not columns:
        return frame
    mask = pd.concat([missing_mask(frame[c]) for c in columns], axis=1).any(axis=1)
    return frame[~mask]


def drop_rare_classes(frame: pd.DataFrame, label: str, min_count: int) -> pd.DataFrame:
    """Rows whose class has fewer than ``min_count`` rows removed."""
    counts = frame[label].value_counts()
    keep = counts[counts >= min_count].index
    return frame[frame[label].isin(keep)]


def apply_fix(
    frame: pd.DataFrame, fix: Fix, *, fit_rows: pd.Series | None = None
) -> pd.DataFrame:
    """Apply one :class:`Fix`; the row index is kept (rows are tracked by it)."""
    missing_cols = [c for c in fix.columns if c not in frame.columns]
    if missing_cols:
        raise ValueError(
            f"Cannot {fix.describe().lower()}: column(s) {listing(missing_cols)} are "
            "not in the table."
        )
    cols = list(fix.columns)
    if fix.op in ("drop_columns", "leave_out"):
        return frame.drop(columns=cols)
    if fix.op == "one_hot":
        return one_hot(frame, cols)
    if fix.op == "to_numeric":
        out = frame.copy()
        for c in cols:
            out[c] = pd.to_numeric(out[c], errors="coerce")
        return out
    if fix.op == "drop_missing_rows":
        return drop_missing_rows(frame, cols)
    if fix.op == "impute":
        return impute(frame, cols, fit_rows=fit_rows)
    if fix.op == "drop_missing_label":
        return frame[frame[fix.label].notna()]
    if fix.op == "drop_rare_classes":
        return drop_rare_classes(frame, fix.label, fix.min_count)
    raise ValueError(f"Unknown fix {short_repr(fix.op)}; choose from {sorted(FIXES)}.")


def apply_fixes(
    frame: pd.DataFrame,
    fixes: Sequence[Fix],
    *,
    fit_rows: pd.Series | None = None,
) -> pd.DataFrame:
    """Replay a cleaning recipe on a raw table."""
    for fix in fixes:
        frame = apply_fix(frame, fix, fit_rows=fit_rows)
    if len(frame) == 0:
        raise ValueError("No rows are left after cleaning: undo the last step.")
    return frame


def one_hot_groups(
    fixes: Sequence[Fix], columns: Sequence[str]
) -> dict[str, list[str]]:
    """For each one-hot encoded column, the 0/1 columns it became (in ``columns``).

    Used to suggest one sensor per original column.
    """
    out: dict[str, list[str]] = {}
    for fix in fixes:
        if fix.op != "one_hot":
            continue
        for col in fix.columns:
            made = [c for c in columns if str(c).startswith(f"{col}_")]
            if made:
                out[col] = made
    return out


def fix_for(problem: Problem, op: str, label: str, cv: int = 5) -> Fix:
    """The :class:`Fix` that applies ``op`` to ``problem``."""
    if op == "drop_missing_label":
        return Fix(op, label=label)
    if op == "drop_rare_classes":
        return Fix(op, label=label, min_count=cv)
    return Fix(op, tuple(problem.columns))


# ----------------------------------------------------------------- splitting
def combine_train_test(
    train: pd.DataFrame, test: pd.DataFrame, *, name: str = "The test file"
) -> tuple[pd.DataFrame, pd.Series]:
    """Stack a train and a test table with the same columns.

    Returns the stacked frame (fresh 0..n-1 index) and a boolean Series, True for
    training rows, aligned on that index. Raises ``ValueError`` naming missing or
    extra columns.
    """
    missing = [c for c in train.columns if c not in test.columns]
    extra = [c for c in test.columns if c not in train.columns]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"lacks column(s) {listing(missing)}")
        if extra:
            parts.append(f"has extra column(s) {listing(extra)}")
        raise ValueError(
            f"{name} {' and '.join(parts)}: the test table needs the same columns "
            "as the training table."
        )
    both = pd.concat([train, test[list(train.columns)]], ignore_index=True)
    is_train = pd.Series(np.arange(len(both)) < len(train), index=both.index)
    return both, is_train


def split_train_test(
    frame: pd.DataFrame,
    label: str,
    *,
    test_fraction: float = 0.25,
    random_state: int | None = 0,
    stratify: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random train/test split, stratified by ``label`` when every class allows it.

    Both parts get a fresh 0..n-1 index. ``stratify=False``: not stratified
    (a regression's target is a number, not classes).
    """
    from sklearn.model_selection import train_test_split

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be between 0 and 1; got {test_fraction}.")
    n_test = int(np.ceil(test_fraction * len(frame)))
    if n_test < 1 or len(frame) - n_test < 2:
        raise ValueError(
            f"{len(frame)} rows are too few for a {test_fraction:.0%} test split."
        )
    counts = frame[label].value_counts()
    strata = frame[label] if counts.min() >= 2 and n_test >= len(counts) else None
    train, test = train_test_split(
        frame,
        test_size=test_fraction,
        random_state=random_state,
        stratify=strata if stratify else None,
    )
    return train.reset_index(drop=True), test.reset_index(drop=True)
