"""BENCHMARKS.md averages a dataset's seeded splits, each read off its own hulls.

Small synthetic result frames with hulls whose readings are known by hand: the
mean, the min-max range and the n/a rules of the report, and how run_all merges
the summaries of the splits.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import split_seeds  # noqa: E402
from _report import (  # noqa: E402
    METHODS,
    acceptance_row,
    dataset_label,
    dataset_table,
    headline_row,
    per_split_table,
    split_stats,
    spread_table,
)
from run_all import combine_splits  # noqa: E402

DAG, CASCADE, HULL = METHODS["dag"], METHODS["cascade"], METHODS["hull"]


def _rows(seed: int | None, method: str, points: list[tuple[float, float]]):
    return [
        {"seed": seed, "method": method, "split": "test", "avg_cost": c, "error": e}
        for c, e in points
    ]


def _curve() -> pd.DataFrame:
    """Two splits; all sensors cost 4. Budgets 25/50/75 % are costs 1, 2, 3."""
    rows = [
        # seed 0: DAG error 0.5 - 0.1 c; all sensors err 0.2.
        *_rows(0, "dag", [(0, 0.5), (4, 0.1)]),
        *_rows(0, "cascade", [(0, 0.6), (4, 0.2)]),
        *_rows(0, "hull", [(0, 0.5), (2, 0.3), (4, 0.2)]),
        *_rows(0, "all_sensors", [(4, 0.2)]),
        # seed 1: DAG error 0.3 - 0.05 c; the cascade cannot spend under 2.
        *_rows(1, "dag", [(0, 0.3), (4, 0.1)]),
        *_rows(1, "cascade", [(2, 0.2), (4, 0.1)]),
        *_rows(1, "hull", [(0, 0.4), (4, 0.2)]),
        *_rows(1, "all_sensors", [(4, 0.15)]),
    ]
    return pd.DataFrame(rows)


def test_mean_and_range_over_splits_from_each_splits_own_hull():
    stats = split_stats(_curve())
    assert stats.seeds == [0, 1] and stats.all_errors == [0.2, 0.15]
    mean = stats.mean.set_index("method")
    low, high = stats.low.set_index("method"), stats.high.set_index("method")
    np.testing.assert_allclose(
        mean.loc[DAG, ["error @ 25% cost", "error @ 50% cost", "error @ 75% cost"]],
        [(0.4 + 0.25) / 2, (0.3 + 0.2) / 2, (0.2 + 0.15) / 2],
    )
    assert low.at[DAG, "error @ 50% cost"] == pytest.approx(0.2)
    assert high.at[DAG, "error @ 50% cost"] == pytest.approx(0.3)
    # Cost to each split's own all-sensor error + 0.5 pt, as a fraction of 4:
    # 0.5 - 0.1 c = 0.205 -> c = 2.95; 0.3 - 0.05 c = 0.155 -> c = 2.9.
    assert mean.at[DAG, "cost to all-sensor error + 0.5 pt"] == pytest.approx(
        (2.95 + 2.9) / 2 / 4
    )
    # The cascade is n/a at 25 % in split 1: its mean is n/a, not split 0's.
    assert np.isnan(mean.at[CASCADE, "error @ 25% cost"])
    assert stats.n_missing.set_index("method").at[CASCADE, "error @ 25% cost"] == 1

    text = spread_table(stats).set_index("method")
    assert text.at[DAG, "error @ 50% cost"] == "0.2500 (0.2000–0.3000)"
    assert text.at[DAG, "cost to all-sensor error + 0.5 pt"] == "73.1% (72.5%–73.8%)"
    assert text.at[CASCADE, "error @ 25% cost"] == "n/a (1 of 2 splits n/a)"
    assert text.at[DAG, "points"] == "2" and text.at[HULL, "points"] == "2–3"

    each = per_split_table(stats)
    assert list(each["split seed"]) == [0, 0, 0, 1, 1, 1]
    row = each[(each["split seed"] == 1) & (each["method"] == DAG)].iloc[0]
    assert row["error @ 25% cost"] == pytest.approx(0.25)


def test_summary_row_and_label_use_the_mean():
    stats = split_stats(_curve())
    label = dataset_label("pima", stats)
    assert label == "pima (mean of 2 seeded splits)"
    seconds = {"fit (bank + one policy)": 1.0, "sweep (bank reused)": 2.0}
    row = headline_row(label, stats, seconds)
    # all-sensor error (0.2 + 0.15) / 2, then the DAG's mean at 50 %.
    assert row.startswith("| pima (mean of 2 seeded splits) | 0.1750 | 0.2500 |")


def test_a_curve_without_seeds_is_one_split_read_as_before():
    curve = _curve()
    one = curve[curve["seed"] == 0].drop(columns="seed")
    stats = split_stats(one)
    assert stats.seeds == [None] and dataset_label("letter", stats) == "letter"
    table = dataset_table(one)[0]
    pd.testing.assert_frame_equal(stats.mean, table, check_dtype=False)


def test_acceptance_row_counts_ties_within_0_3_points():
    def table(dag: float) -> pd.DataFrame:
        cols = {f"error @ {f:.0%} cost": 0.0 for f in (0.25, 0.5, 0.75)}
        rows = [
            {"method": DAG, **cols, "error @ 50% cost": dag},
            {"method": CASCADE, **cols, "error @ 50% cost": 0.100},
            {"method": HULL, **cols, "error @ 50% cost": 0.120},
        ]
        return pd.DataFrame(rows)

    assert acceptance_row("d", table(0.1029)).endswith("| yes |")
    assert acceptance_row("d", table(0.1000 + 0.003)).endswith("| yes |")
    lost = acceptance_row("d", table(0.1040))
    assert "no: 50% vs confidence cascade +0.40 pt" in lost
    assert "fixed-subset hull" not in lost


def test_pima_runs_five_seeded_splits_fixed_splits_run_once():
    assert split_seeds("pima") == (0, 1, 2, 3, 4)
    assert split_seeds("spam") == (0,) and split_seeds("spam", 3) == (0, 1, 2)
    assert split_seeds("letter", 5) == (0,) and split_seeds("dna") == (0,)
    with pytest.raises(ValueError, match="n_splits must be at least 1"):
        split_seeds("pima", 0)


def test_combine_splits_keeps_shared_facts_once_and_averages_seconds():
    def summary(seed: int, degree: int, fit_s: float) -> dict:
        return {
            "name": "pima",
            "description": "Pima.",
            "n_train": 576,
            "n_test": 192,
            "n_sensors": 3,
            "n_states": 8,
            "bank_kind": "hgb",
            "params": {"random_state": 0, "cv": 5, "policy_degree": degree},
            "notes": [
                f"random stratified 75/25 split, seed {seed}",
                f"degree -> {degree}",
            ],
            "degree_scores": {"1": 0.2, "2": 0.21},
            "n_points": 20,
            "seconds": {"bank fit": fit_s},
            "predict_rows_per_s": 1000.0 * (seed + 1),
        }

    out = combine_splits([(0, summary(0, 2, 1.0)), (1, summary(1, 1, 3.0))])
    assert out["split_seeds"] == [0, 1]
    assert out["params"] == {"random_state": 0, "cv": 5}  # the degree differs
    assert out["notes"][1:] == [
        "random stratified 75/25 split",
        "seed 0: degree -> 2",
        "seed 1: degree -> 1",
    ]
    assert out["notes"][0].startswith("mean of 2 seeded splits (seeds 0, 1)")
    assert out["seconds"] == {"bank fit": 2.0}
    assert out["predict_rows_per_s"] == 1500.0
    assert [s["params"]["policy_degree"] for s in out["splits"]] == [2, 1]
    single = combine_splits([(0, summary(0, 2, 1.0))])
    assert single["split_seeds"] == [0] and single["seconds"] == {"bank fit": 1.0}


def test_partial_runs_are_recorded_and_the_report_names_each(tmp_path):
    from run_all import record_run, runs_behind

    info = tmp_path / "run.json"
    info.write_text('{"commit": "old", "total_s": 60}')  # before runs were listed
    record_run(info, ["letter", "landsat"], "aaa", 600.0)
    record_run(info, ["pima"], "bbb", 12.0)
    record_run(info, ["pima"], "ccc", 13.0)  # replaces the pima run on bbb
    saved = json.loads(info.read_text())
    assert saved["commit"] == "ccc" and saved["total_s"] == 13.0
    assert [r["commit"] for r in saved["runs"]] == ["old", "aaa", "ccc"]
    used = runs_behind(info, ["letter", "pima", "landsat", "dna"])
    assert [r["commit"] for r in used] == ["aaa", "ccc", "old"]
