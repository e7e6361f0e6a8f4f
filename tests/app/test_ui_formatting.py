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


def test_percent_tables_are_rounded_as_the_text_is():
    # Streamlit cuts a number column's extra decimals: 0.049522 would show as
    # 4.9% beside a "5.0%" written by pct. Rounded first, it shows as 5.0%.
    import pandas as pd

    from ui.formatting import percent_table

    frame = pd.DataFrame(
        {"error": [0.049522, 1.00499999, 0.034752], "share": [0.049522] * 3}
    )
    frame["name"] = ["a", "b", "c"]
    config = {
        "error": percent_column("error"),
        "share": percent_column("share", progress=True),
        "name": None,
        "absent": percent_column(),
    }
    out = percent_table(frame, config)
    assert out["error"].tolist() == [0.05, 1.005, 0.035]
    assert [pct(v) for v in out["error"]] == [pct(v) for v in frame["error"]]
    assert out["share"].equals(frame["share"])  # progress bars round themselves
    assert frame["error"].iloc[0] == 0.049522  # the input is not changed
