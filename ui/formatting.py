"""One percentage format for every page: text, metrics and table columns.

Shares and error rates are fractions in the code (0.162) and percentages with
one decimal on screen (16.2%), whether written in a sentence (:func:`pct`) or
shown in a table column (:func:`percent_column`). Importing this module does
not import Streamlit.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

PERCENT_DECIMALS = 1
PERCENT_STEP = 10.0 ** -(PERCENT_DECIMALS + 2)
"""A table column's ``step``: with ``format="percent"`` it sets the decimals."""


def pct(value: float | None, *, signed: bool = False) -> str:
    """A fraction as a percentage with one decimal; ``–`` when unknown.

    Examples
    --------
    >>> pct(0.1623), pct(1), pct(-0.25, signed=True), pct(float("nan"))
    ('16.2%', '100.0%', '-25.0%', '–')
    """
    if value is None or not math.isfinite(float(value)):
        return "–"
    sign = "+" if signed else ""
    return f"{float(value):{sign}.{PERCENT_DECIMALS}%}"


def percent_column(
    label: str | None = None,
    *,
    progress: bool = False,
    help: str | None = None,
    width: Any = None,
) -> Any:
    """A table column of fractions shown as :func:`pct` writes them.

    ``progress`` draws a bar from 0 to 100%.
    """
    import streamlit as st  # here: pct() serves modules without Streamlit

    if progress:
        return st.column_config.ProgressColumn(
            label,
            format="percent",
            step=PERCENT_STEP,
            min_value=0.0,
            max_value=1.0,
            help=help,
            width=width,
        )
    return st.column_config.NumberColumn(
        label, format="percent", step=PERCENT_STEP, help=help, width=width
    )


def error_column(scoring: Any, label: str | None = None, **kwargs: Any) -> Any:
    """A table column of a model's test metric as ``scoring`` says it
    (:class:`ui.training.Scoring`): an error rate in percent, a
    regressor's MSE or MAE as a number."""
    if not scoring.regression:
        return percent_column(label, **kwargs)
    import streamlit as st  # here: pct() serves modules without Streamlit

    kwargs.pop("progress", None)
    return st.column_config.NumberColumn(label, format="%.4g", **kwargs)


def percent_table(frame: pd.DataFrame, column_config: dict[str, Any]) -> pd.DataFrame:
    """``frame`` with the columns shown by a number :func:`percent_column` rounded
    as :func:`pct` rounds them.

    Streamlit cuts a number column's extra decimals off instead of rounding
    (0.0495 shows as 4.9%, where the text says 5.0%); a value rounded to the
    column's step first shows as the text does. Progress columns round
    themselves and are left as they are.
    """
    out = frame.copy()
    for name, config in column_config.items():
        kind = config.get("type_config", {}) if isinstance(config, dict) else {}
        if (
            kind.get("type") == "number"
            and kind.get("format") == "percent"
            and name in out.columns
            and pd.api.types.is_numeric_dtype(out[name])
        ):
            out[name] = out[name].round(PERCENT_DECIMALS + 2)
    return out
