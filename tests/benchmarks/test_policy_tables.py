"""The policy benchmark's choice tables on small frames with known answers."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_policy_configs import (  # noqa: E402
    DEFAULT_CONFIG,
    paired_with_default,
    validation_ranks,
)


def frame(errors: dict[str, list[float]], role: str = "val") -> pd.DataFrame:
    """One row per (method, split): the error at 25/50/75 % is ``errors[m][i]``
    on split i of one dataset (``"d"``)."""
    rows = [
        {"dataset": "d", "role": role, "seed": i, "method": m}
        | dict.fromkeys(("e25", "e50", "e75"), e)
        for m, per_split in errors.items()
        for i, e in enumerate(per_split)
    ]
    return pd.DataFrame(rows)


def test_paired_differences_are_per_split_and_count_wins():
    f = frame(
        {
            DEFAULT_CONFIG: [0.10, 0.20, 0.30],
            "better": [0.09, 0.19, 0.31],
            "worse": [0.12, 0.22, 0.32],
            "hull": [0.2, 0.3, 0.4],
        }
    )
    table = paired_with_default(f)
    assert list(table.index) == ["better", "worse", "hull"]  # by mean difference
    assert table.loc["better", "mean difference"] == pytest.approx(-0.01 / 3)
    assert (table.loc["better", "lower"], table.loc["better", "higher"]) == (2, 1)
    assert table.loc["worse", "mean difference"] == pytest.approx(0.02)
    assert table.loc["worse", "standard error"] == pytest.approx(0.0, abs=1e-12)
    assert table.loc["worse", "splits"] == 3
    assert DEFAULT_CONFIG not in table.index


def test_test_rows_do_not_enter_the_choice():
    val = frame({DEFAULT_CONFIG: [0.1, 0.1], "other": [0.2, 0.2]})
    test = frame({DEFAULT_CONFIG: [0.9, 0.9], "other": [0.0, 0.0]}, role="test")
    both = pd.concat([val, test], ignore_index=True)
    assert paired_with_default(both).loc["other", "mean difference"] == pytest.approx(
        0.1
    )
    ranks = validation_ranks(both)
    assert ranks.loc[DEFAULT_CONFIG, "mean rank"] == 1.0


def test_paired_differences_do_not_depend_on_the_other_candidates():
    base = {DEFAULT_CONFIG: [0.10, 0.30], "a": [0.12, 0.20]}
    alone = paired_with_default(frame(base))
    with_more = paired_with_default(frame(base | {"b": [0.11, 0.31]}))
    assert with_more.loc["a"].equals(alone.loc["a"])
    assert alone.loc["a", "mean difference"] == pytest.approx(-0.04)
