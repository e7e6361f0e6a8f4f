"""One percentage format for every page: text, metrics and table columns.

Shares and error rates are fractions in the code (0.162) and percentages with
one decimal on screen (16.2%), whether written in a sentence (:func:`pct`) or
shown in a table column (:func:`percent_column`). Importing this module does
not import Streamlit.
"""

from __future__ import annotations

import math
from typing import Any

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
