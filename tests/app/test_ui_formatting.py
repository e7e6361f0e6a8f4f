"""One percentage format: text (pct) and table columns (percent_column) agree."""

from __future__ import annotations

import math

from ui.formatting import PERCENT_STEP, pct, percent_column


def test_pct_writes_one_decimal_and_a_dash_when_unknown():
    assert pct(0.16234) == "16.2%"
    assert pct(0.5) == "50.0%"
    assert pct(0.031, signed=True) == "+3.1%"
    assert pct(-0.4, signed=True) == "-40.0%"
    assert pct(None) == "–" and pct(math.nan) == "–" and pct(math.inf) == "–"


def test_table_columns_use_the_same_precision():
    number = percent_column("error")
    bar = percent_column("share", progress=True)
    assert number["type_config"]["format"] == "percent"
    assert number["type_config"]["step"] == PERCENT_STEP == 0.001
    assert bar["type_config"]["type"] == "progress"
    assert bar["type_config"]["step"] == PERCENT_STEP
    assert (bar["type_config"]["min_value"], bar["type_config"]["max_value"]) == (
        0.0,
        1.0,
    )
